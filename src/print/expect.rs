//! Reports of a table of expectations (`rulebench test PAGE --expect FILE`): text (the
//! failed rows, each with what differs and why), JUnit XML (one test case per row), and
//! the table `--pin-to` writes (CSV, TSV or JSON Lines).

use std::io::Write;

use crate::app::text::sanitize;
use crate::app::types::{ExpectReport, PINNED_COLUMNS, Pinned, RowOutcome};

/// `source label × target label` (or the keys, when the labels are them).
fn pair(r: &RowOutcome) -> String {
    format!(
        "{} × {}",
        sanitize(&r.source_label),
        sanitize(&r.target_label)
    )
}

/// The text report: the failed rows, then the count.
pub fn text(report: &ExpectReport, stored: bool) -> String {
    let at = if stored {
        format!("revision {}", report.revision)
    } else {
        "page file, in memory".to_owned()
    };
    let n = report.results.len();
    let mut out = format!(
        "{} ({at}): {}, {n} expectation{}\n",
        sanitize(&report.page_id),
        sanitize(&report.file),
        if n == 1 { "" } else { "s" }
    );
    for r in report.results.iter().filter(|r| !r.passed) {
        out.push_str(&format!("FAIL  {}  {}\n", sanitize(&r.at), pair(r)));
        let differs: Vec<String> = r
            .mismatches
            .iter()
            .map(|m| {
                format!(
                    "{}: expected {}, got {}",
                    sanitize(&m.what),
                    sanitize(&m.expected),
                    sanitize(&m.actual)
                )
            })
            .collect();
        out.push_str(&format!("      {}\n", differs.join(" · ")));
        if let Some(why) = &r.why {
            out.push_str(&format!("      why: {}\n", sanitize(why)));
        }
        if !r.failing_rules.is_empty() {
            let ids: Vec<String> = r.failing_rules.iter().map(|i| sanitize(i)).collect();
            out.push_str(&format!("      failing rules: {}\n", ids.join(", ")));
        }
    }
    if !report.ignored_columns.is_empty() {
        let names: Vec<String> = report
            .ignored_columns
            .iter()
            .map(|c| format!("`{}`", sanitize(c)))
            .collect();
        out.push_str(&format!(
            "ignored columns: {} (hint: a rule's outcome is a `rule.ID` column)\n",
            names.join(", ")
        ));
    }
    out.push_str(&format!(
        "{n} expectation{}: {} passed, {} failed\n",
        if n == 1 { "" } else { "s" },
        report.passed,
        report.failed
    ));
    out
}

/// The JUnit XML report: one `testsuite` for the table, one `testcase` per row, named
/// by its place in the file and its pair.
pub fn junit(report: &ExpectReport) -> String {
    let n = report.results.len();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rulebench\" tests=\"{n}\" failures=\"{f}\" errors=\"0\">\n{}</testsuites>\n",
        junit_suite(report),
        f = report.failed,
    )
}

/// The table's `testsuite` element.
pub fn junit_suite(report: &ExpectReport) -> String {
    let xml = super::xml::xml;
    let suite = xml(&format!("{} · {}", report.page_id, report.file));
    let n = report.results.len();
    let mut out = format!(
        "  <testsuite name=\"{suite}\" tests=\"{n}\" failures=\"{f}\" errors=\"0\" skipped=\"0\">\n    \
         <properties>\n      <property name=\"revision\" value=\"{rev}\"/>\n    </properties>\n",
        f = report.failed,
        rev = report.revision,
    );
    for r in &report.results {
        let name = format!("{}: {} × {}", r.at, r.source_label, r.target_label);
        out.push_str(&format!(
            "    <testcase classname=\"{suite}\" name=\"{}\"",
            xml(&name)
        ));
        if r.passed {
            out.push_str("/>\n");
            continue;
        }
        let message: Vec<String> = r
            .mismatches
            .iter()
            .map(|m| format!("{}: expected {}, got {}", m.what, m.expected, m.actual))
            .collect();
        let mut body = format!("source {}\ntarget {}", r.source, r.target);
        if let Some(why) = &r.why {
            body.push_str(&format!("\nwhy: {why}"));
        }
        if !r.failing_rules.is_empty() {
            body.push_str(&format!("\nfailing rules: {}", r.failing_rules.join(", ")));
        }
        out.push_str(&format!(
            ">\n      <failure type=\"expectation\" message=\"{}\">{}</failure>\n    </testcase>\n",
            xml(&message.join(" · ")),
            xml(&body)
        ));
    }
    out.push_str("  </testsuite>\n");
    out
}

/// A linked table's run as text (`rulebench test PAGE`): its report, or why it could
/// not be read.
pub fn linked_text(run: &crate::app::expectations::LinkedRun, stored: bool) -> String {
    match (&run.report, &run.error) {
        (Some(r), _) => format!("\n{}", text(r, stored)),
        (None, error) => format!(
            "\nlinked table {}: {}\n",
            sanitize(&run.file),
            sanitize(error.as_deref().unwrap_or("cannot be read"))
        ),
    }
}

/// The formats `--pin-to` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Csv,
    Tsv,
    JsonLines,
}

impl TableFormat {
    /// The format a file's extension names (`.csv`, `.tsv` / `.tab`, `.jsonl` /
    /// `.ndjson`); stdout (`-`) is CSV.
    pub fn of(path: &std::path::Path) -> Option<TableFormat> {
        if path == std::path::Path::new("-") {
            return Some(TableFormat::Csv);
        }
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(TableFormat::Csv),
            "tsv" | "tab" => Some(TableFormat::Tsv),
            "jsonl" | "ndjson" => Some(TableFormat::JsonLines),
            _ => None,
        }
    }
}

/// Writes pinned outcomes as a table of expectations: CSV or TSV with a header (text a
/// spreadsheet would run as a formula guarded with a leading `'`, which reading the
/// table again takes off), or one JSON object per line.
pub fn table(pins: &[Pinned], format: TableFormat, out: &mut impl Write) -> std::io::Result<()> {
    match format {
        TableFormat::JsonLines => {
            for p in pins {
                serde_json::to_writer(&mut *out, p).map_err(super::json_io)?;
                out.write_all(b"\n")?;
            }
        }
        TableFormat::Csv | TableFormat::Tsv => {
            let mut w = super::csv_writer(&mut *out, format == TableFormat::Tsv);
            w.write_record(PINNED_COLUMNS).map_err(super::csv_io)?;
            for p in pins {
                let cells = p.cells().map(|c| super::csv_text(&c, true));
                w.write_record(&cells).map_err(super::csv_io)?;
            }
            w.flush()?;
        }
    }
    Ok(())
}

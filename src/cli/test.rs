//! `rulebench test PAGE|FILE [--format text|json|junit] [--pin [--select KEY]]`: runs a
//! page's verdict assertions. Exit 0 when every one passes, 1 when one fails, 2 on bad
//! input (an invalid assertion is reported with its pointer).

use std::path::Path;

use clap::ValueEnum;

use super::{Exit, Failure, pretty, usage, write_json, write_text};
use crate::app::App;
use crate::app::types::Report;
use crate::app::types::sanitize;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFormat {
    Text,
    Json,
    Junit,
}

/// Runs the command. `target` is a page file when such a file exists, else a page id.
pub fn run(
    db: &super::Db,
    target: &str,
    format: TestFormat,
    pin: bool,
    select: Option<&str>,
) -> Result<Exit, Failure> {
    let path = Path::new(target);
    let (report, stored) = if target == "-" || path.is_file() {
        if pin {
            return Err(usage(format!(
                "{target}: --pin writes to a stored page (hint: `rulebench import {target}` first)"
            )));
        }
        let (text, origin) = super::read_arg(target, super::MAX_PAGE_BYTES)?;
        (App::test_text(&text, &origin)?, false)
    } else {
        let mut app = db.open()?;
        if pin {
            let p = app.pin_assertions(target, select)?;
            if p.changed {
                eprintln!(
                    "pinned {} selection(s) of {}: {} new, {} replaced (revision {})",
                    p.selections,
                    sanitize(target),
                    p.added,
                    p.replaced,
                    p.revision
                );
            } else {
                eprintln!(
                    "pinned {} selection(s) of {}: already pinned, nothing changed (revision {})",
                    p.selections,
                    sanitize(target),
                    p.revision
                );
            }
        }
        (app.run_assertions(target)?, true)
    };
    if report.results.is_empty() {
        eprintln!(
            "{}: no assertions (hint: `rulebench test PAGE --pin` pins the current verdicts)",
            sanitize(target)
        );
    }
    match format {
        TestFormat::Text => write_text(&text(&report, stored))?,
        TestFormat::Json => write_json(&pretty(&report))?,
        TestFormat::Junit => write_text(&junit(&report))?,
    }
    Ok(if report.all_passed() {
        Exit::Ok
    } else {
        Exit::Problems
    })
}

/// The text report: one PASS / FAIL line per assertion with its claim or message.
pub fn text(report: &Report, stored: bool) -> String {
    let mut out = String::new();
    let at = if stored {
        format!("revision {}", report.revision)
    } else {
        "page file, in memory".to_owned()
    };
    out.push_str(&format!(
        "{} ({at}): {} assertion{}\n",
        sanitize(&report.page_id),
        report.results.len(),
        if report.results.len() == 1 { "" } else { "s" }
    ));
    for r in &report.results {
        let status = if r.passed { "PASS" } else { "FAIL" };
        let mut head = format!("{status}  {}", sanitize(&r.assertion_id));
        if let Some(d) = &r.description {
            head.push_str(&format!(" — {}", sanitize(d)));
        }
        out.push_str(&head);
        out.push('\n');
        let detail = match (&r.message, r.passed) {
            (Some(m), false) => m,
            _ => &r.claim,
        };
        out.push_str(&format!("      {}\n", sanitize(detail)));
        if let (true, Some(sha)) = (r.truncated, &r.actual_sha256) {
            out.push_str(&format!(
                "      actual samples truncated (sha256 of the full value: {sha})\n"
            ));
        }
    }
    out.push_str(&format!(
        "{} assertions: {} passed, {} failed\n",
        report.results.len(),
        report.passed,
        report.failed
    ));
    out
}

/// The JUnit XML report: one `testsuite` for the page, one `testcase` per assertion.
pub fn junit(report: &Report) -> String {
    let page = xml(&report.page_id);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"rulebench\" tests=\"{n}\" failures=\"{f}\" errors=\"0\">\n  \
         <testsuite name=\"{page}\" tests=\"{n}\" failures=\"{f}\" errors=\"0\" skipped=\"0\" timestamp=\"{at}\">\n    \
         <properties>\n      <property name=\"revision\" value=\"{rev}\"/>\n    </properties>\n",
        n = report.results.len(),
        f = report.failed,
        at = xml(&report.run_at),
        rev = report.revision,
    ));
    for r in &report.results {
        let name = match &r.description {
            Some(d) => format!("{}: {d}", r.assertion_id),
            None => r.assertion_id.clone(),
        };
        out.push_str(&format!(
            "    <testcase classname=\"{page}\" name=\"{}\"",
            xml(&name)
        ));
        match (&r.message, r.passed) {
            (Some(m), false) => {
                out.push_str(&format!(
                    ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(&r.matcher),
                    xml(m),
                    xml(&format!("select {}\n{}", r.select, r.claim))
                ));
            }
            _ => out.push_str("/>\n"),
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Escapes text for XML attributes and content; characters XML 1.0 cannot hold and
/// those that must not reach a terminal raw (bidi, zero-width) are written escaped
/// (`\u{1b}`).
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if crate::app::types::is_unsafe(c) || matches!(c, '\u{fffe}' | '\u{ffff}') => {
                out.extend(c.escape_default())
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_controls() {
        assert_eq!(
            xml("a<b & \"c\" 'd'\u{1b}[31m\u{202e}\n"),
            "a&lt;b &amp; &quot;c&quot; 'd'\\u{1b}[31m\\u{202e}&#10;"
        );
    }
}

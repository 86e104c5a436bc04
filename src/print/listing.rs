//! Text renderings: glyphs and aligned tables (results stream through `print`).

use crate::app::PageSummary;
use serde_json::Value;

/// Glyph of a verdict: ● full, ◐ partial, ○ none.
pub fn glyph(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Full => "●",
        Verdict::Partial => "◐",
        Verdict::None => "○",
    }
}

pub use crate::app::text::sanitize;
use crate::app::types::Verdict;

pub use crate::print::render_table;

pub fn pages_table(pages: &[PageSummary]) -> String {
    let header: Vec<String> = [
        "ID", "NAME", "RULES", "SOURCES", "TARGETS", "REVISION", "UPDATED",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = pages
        .iter()
        .map(|p| {
            vec![
                sanitize(&p.id),
                sanitize(&p.name),
                p.rules.to_string(),
                p.sources.to_string(),
                p.targets.to_string(),
                p.revision.to_string(),
                p.updated_at.clone(),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

/// `rulebench page log`: one line per revision, newest first.
pub fn revisions_table(log: &[crate::app::history::RevisionEntry]) -> String {
    let header: Vec<String> = ["REVISION", "WHEN", "WHO", "CHANGE"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = log
        .iter()
        .map(|r| {
            vec![
                r.revision.to_string(),
                sanitize(&r.at),
                sanitize(r.author.as_deref().unwrap_or("-")),
                sanitize(&r.change),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

/// `rulebench db`: where the database is, its version and size, then its pages.
pub fn db_info(info: &crate::app::DbInfo) -> String {
    let mut out = format!(
        "database  {}\nschema    version {}\nsize      {:.1} KiB{}\npages     {}\n",
        sanitize(&info.path.display().to_string()),
        info.schema_version,
        info.bytes as f64 / 1024.0,
        if info.read_only { " (read-only)" } else { "" },
        info.pages.len()
    );
    if !info.pages.is_empty() {
        out.push('\n');
        out.push_str(&pages_table(&info.pages));
    }
    out
}

/// `rulebench assertion list`: one line per assertion.
pub fn assertions_table(list: &[crate::app::types::Assertion]) -> String {
    let header: Vec<String> = ["ID", "SELECT", "PATH", "MATCHER", "EXPECTED", "DESCRIPTION"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|a| {
            let matcher = format!(
                "{}{}{}",
                if a.not { "not " } else { "" },
                a.matcher,
                if a.path_match == crate::app::types::PathMatch::All {
                    " (all)"
                } else {
                    ""
                }
            );
            vec![
                sanitize(&a.id),
                sanitize(&a.select),
                sanitize(&a.path),
                sanitize(&matcher),
                a.expected
                    .as_ref()
                    .map_or(String::new(), |v| sanitize(&v.to_string())),
                sanitize(a.description.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

/// How a listing is printed: the one `--format` vocabulary of the commands that list
/// things (`pages`, `dataset schema`, `page log`, `assertion list`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    /// Aligned columns, for people
    #[value(alias = "text")]
    Table,
    /// The JSON document
    Json,
    /// One JSON object per line
    Jsonl,
    /// A header, then one record per item (text cells guarded against spreadsheet
    /// formulas)
    Csv,
    /// As csv, tab-separated
    Tsv,
    /// A Markdown table
    #[value(alias = "markdown")]
    Md,
    /// Apache Parquet, typed columns (to -o FILE or a pipe)
    Parquet,
}

/// The columns of a list of JSON objects: `known` (so an empty list has them too), then
/// every other key, in order of first appearance.
fn columns_of(known: &[&str], items: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = known.iter().map(|k| (*k).to_owned()).collect();
    for item in items {
        if let Value::Object(m) = item {
            for k in m.keys() {
                if !out.contains(k) {
                    out.push(k.clone());
                }
            }
        }
    }
    out
}

/// A value as a cell of text: strings bare, anything else as JSON.
fn cell_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// Writes a listing to `w`: `table` (made only when asked for) for people, `doc` as the
/// JSON document, `items` (JSON objects) as the rows of every other format.
pub fn emit<W: std::io::Write + Send>(
    w: &mut W,
    format: ListFormat,
    table: impl FnOnce() -> String,
    doc: &Value,
    (columns, items): (&[&str], &[Value]),
) -> std::io::Result<()> {
    match format {
        ListFormat::Table => w.write_all(crate::app::text::sanitize_lines(&table()).as_bytes()),
        ListFormat::Json => {
            let text = serde_json::to_string_pretty(doc).map_err(crate::print::json_io)?;
            w.write_all(crate::app::text::json_safe(&text).as_bytes())?;
            w.write_all(b"\n")
        }
        ListFormat::Jsonl => {
            for item in items {
                let text = serde_json::to_string(item).map_err(crate::print::json_io)?;
                w.write_all(crate::app::text::json_safe(&text).as_bytes())?;
                w.write_all(b"\n")?;
            }
            Ok(())
        }
        ListFormat::Csv | ListFormat::Tsv => {
            let header = columns_of(columns, items);
            let mut csv = crate::print::csv_writer(&mut *w, format == ListFormat::Tsv);
            csv.write_record(header.iter().map(|h| crate::print::csv_text(h, true)))
                .map_err(crate::print::csv_io)?;
            for item in items {
                csv.write_record(
                    header
                        .iter()
                        .map(|h| crate::print::csv_text(&cell_text(item.get(h)), true)),
                )
                .map_err(crate::print::csv_io)?;
            }
            csv.flush()
        }
        ListFormat::Md => {
            let header = columns_of(columns, items);
            let esc = |s: &str| sanitize(s).replace('|', "\\|").replace('\n', " ");
            let mut out = format!(
                "| {} |\n|{}\n",
                header
                    .iter()
                    .map(|h| esc(h))
                    .collect::<Vec<_>>()
                    .join(" | "),
                "---|".repeat(header.len())
            );
            for item in items {
                out.push_str(&format!(
                    "| {} |\n",
                    header
                        .iter()
                        .map(|h| esc(&cell_text(item.get(h))))
                        .collect::<Vec<_>>()
                        .join(" | ")
                ));
            }
            w.write_all(out.as_bytes())
        }
        ListFormat::Parquet => {
            let header = columns_of(columns, items);
            let rows: Vec<Vec<Value>> = items
                .iter()
                .map(|item| {
                    header
                        .iter()
                        .map(|h| match item.get(h) {
                            Some(v @ (Value::Array(_) | Value::Object(_))) => {
                                Value::String(v.to_string())
                            }
                            Some(v) => v.clone(),
                            None => Value::Null,
                        })
                        .collect()
                })
                .collect();
            crate::print::result::parquet_values(w, &header, &rows)
        }
    }
}

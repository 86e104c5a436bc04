//! Text renderings of pages and results: tables, CSV, Markdown.

use serde_json::Value;

use crate::core::model::Page;
use crate::store::PageSummary;

/// Glyph of a verdict: ● full, ◐ partial, ○ none.
pub fn glyph(verdict: u64) -> &'static str {
    match verdict {
        2 => "●",
        1 => "◐",
        _ => "○",
    }
}

pub use crate::core::text::sanitize;

pub(super) fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s: String = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}", w = *w))
            .collect::<Vec<_>>()
            .join("  ");
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = line(header);
    out.push_str(&line(
        &widths.iter().map(|w| "─".repeat(*w)).collect::<Vec<_>>(),
    ));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

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

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => sanitize(s),
        Value::Null => String::new(),
        other => sanitize(&other.to_string()),
    }
}

/// One selection as a table: a line per target, failing rules named.
pub fn result_table(result: &Value) -> String {
    let mut out = format!(
        "{} {}  selection verdict {}  recommended {}  (revision {}, cache {})\n\n",
        text(&result["pageId"]),
        text(&result["selectionKey"]),
        result["selectionVerdict"],
        match &result["recommendedTargetId"] {
            Value::Null => "none".to_owned(),
            v => text(v),
        },
        result["revisionId"],
        text(&result["cache"]),
    );
    let header: Vec<String> = ["", "TARGET", "VERDICT", "SCORE", "REASON", "FAILING RULES"]
        .map(String::from)
        .to_vec();
    // Compared after escaping, like the ids in the rows.
    let recommended = result["recommendedTargetId"].as_str().map(sanitize);
    let rows: Vec<Vec<String>> = result["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let verdict = t["verdict"].as_u64().unwrap_or(0);
            let failing: Vec<String> = t["rules"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, v)| v == &&Value::Bool(false))
                .map(|(k, _)| sanitize(k))
                .collect();
            let id = text(&t["id"]);
            vec![
                if recommended.as_deref() == Some(id.as_str()) {
                    "★".into()
                } else {
                    String::new()
                },
                id,
                format!("{} {verdict}", glyph(verdict)),
                format!("{:.2}", t["score"].as_f64().unwrap_or(0.0)),
                text(&t["reason"]),
                failing.join(", "),
            ]
        })
        .collect();
    out.push_str(&render_table(&header, &rows));
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Every selection × target as CSV.
pub fn results_csv(results: &[Value]) -> String {
    let mut out = String::from(
        "selectionKey,selectionVerdict,recommended,targetId,verdict,score,reason,failingRules\n",
    );
    for r in results {
        for t in r["targets"].as_array().into_iter().flatten() {
            let failing: Vec<&str> = t["rules"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, v)| v == &&Value::Bool(false))
                .map(|(k, _)| k.as_str())
                .collect();
            let id = t["id"].as_str().unwrap_or_default();
            let fields = [
                r["selectionKey"].as_str().unwrap_or_default().to_owned(),
                r["selectionVerdict"].to_string(),
                (r["recommendedTargetId"].as_str() == Some(id)).to_string(),
                id.to_owned(),
                t["verdict"].to_string(),
                t["score"].to_string(),
                t["reason"].as_str().unwrap_or_default().to_owned(),
                failing.join(" "),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out
}

fn md_cell(s: &str) -> String {
    sanitize(s).replace('|', "\\|")
}

/// Every selection × target as a Markdown table of verdict glyphs.
pub fn results_markdown(page: &Page, results: &[Value]) -> String {
    let mut out = format!("# {}\n\n", md_cell(&page.name));
    let ids: Vec<String> = page
        .target
        .rows
        .iter()
        .map(|r| page.target.row_id(r))
        .collect();
    out.push_str(&format!(
        "| {} | selection | recommended | {} |\n",
        md_cell(&page.source.name),
        ids.iter()
            .map(|i| md_cell(i))
            .collect::<Vec<_>>()
            .join(" | ")
    ));
    out.push_str(&format!("|---|---|---|{}\n", "---|".repeat(ids.len())));
    for r in results {
        let cells: Vec<String> = r["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let v = t["verdict"].as_u64().unwrap_or(0);
                format!("{} {:.2}", glyph(v), t["score"].as_f64().unwrap_or(0.0))
            })
            .collect();
        let verdict = r["selectionVerdict"].as_u64().unwrap_or(0);
        out.push_str(&format!(
            "| {} | {} {verdict} | {} | {} |\n",
            md_cell(r["selectionKey"].as_str().unwrap_or_default()),
            glyph(verdict),
            md_cell(r["recommendedTargetId"].as_str().unwrap_or("—")),
            cells.join(" | ")
        ));
    }
    out.push_str(
        "\n● full (2) · ◐ partial (1) · ○ incompatible (0); cells show verdict and score.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_when_needed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}

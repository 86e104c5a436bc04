//! Printers: write a typed [`SelectionResult`] to a writer, streaming, in every output
//! format of `evaluate`. None builds a JSON tree of a result: the JSON printer writes the
//! result JSON byte for byte as `serde_json`'s pretty printer would, from precomputed
//! fragments (the rule ids and target ids are escaped once per page, not once per cell).

use std::io::{self, Write};

use serde_json::Value;

use super::listing::{glyph, render_table, sanitize};
use crate::app::types::PASS;
use crate::app::types::{FeatureKeys, Names, SelectionResult};
pub use crate::print::{csv_text, csv_writer};

/// Escaped pieces of JSON shared by every selection of one page.
pub struct Fragments {
    /// Per rule: `\n<indent>"id": ` at the depth of a target's `rules` object.
    rule_keys: Vec<Vec<u8>>,
    /// Per rule: its name as a JSON string.
    rule_names: Vec<Vec<u8>>,
    /// Per shown field: `"field": `.
    shown_keys: Vec<Vec<u8>>,
    /// Keys of a `features[]` entry: (`\n<indent>"id": `, target).
    feature_keys: Vec<(Vec<u8>, usize)>,
    features: FeatureKeys,
    /// `None`: compact, on one line.
    indent: Option<String>,
    /// By depth (0–8): a line break and the indent plus `depth` spaces; empty compact.
    breaks: Vec<Vec<u8>>,
}

fn json_string(s: &str) -> Vec<u8> {
    let text = serde_json::to_string(s).expect("strings serialize");
    crate::app::types::json_safe(&text)
        .into_owned()
        .into_bytes()
}

/// Writes a JSON string, escaped, terminal controls included (see `json_safe`).
fn write_str<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    if s.chars().any(crate::app::types::is_unsafe) {
        return w.write_all(&json_string(s));
    }
    serde_json::to_writer(&mut *w, s).map_err(io::Error::other)
}

impl Fragments {
    /// The fragments of a page's results written pretty at `indent` spaces, or compact
    /// on one line when `indent` is `None`.
    pub fn new(names: &Names, indent: Option<usize>) -> Fragments {
        let pad = indent.map(|n| " ".repeat(n));
        let key = |depth: usize, s: &str| {
            let mut out = match &pad {
                Some(pad) => format!("\n{pad}{}", " ".repeat(depth)).into_bytes(),
                None => Vec::new(),
            };
            out.extend(json_string(s));
            out.extend(if pad.is_some() { &b": "[..] } else { &b":"[..] });
            out
        };
        let features = names.feature_keys();
        Fragments {
            rule_keys: names.rules.iter().map(|r| key(8, &r.id)).collect(),
            rule_names: names.rules.iter().map(|r| json_string(&r.name)).collect(),
            shown_keys: names.shown.iter().map(|f| key(6, f)).collect(),
            feature_keys: features
                .targets
                .iter()
                .map(|(id, t)| (key(6, id), *t))
                .collect(),
            features,
            breaks: (0..=10)
                .map(|depth| match &pad {
                    Some(pad) => format!("\n{pad}{}", " ".repeat(depth)).into_bytes(),
                    None => Vec::new(),
                })
                .collect(),
            indent: pad,
        }
    }

    /// A line break and `depth` more spaces than the result's indent (nothing compact).
    fn nl<W: Write>(&self, w: &mut W, depth: usize) -> io::Result<()> {
        w.write_all(&self.breaks[depth])
    }

    /// `"key": ` (pretty) or `"key":` (compact), after a line break at `depth`.
    fn key<W: Write>(&self, w: &mut W, depth: usize, key: &str) -> io::Result<()> {
        self.nl(w, depth)?;
        write_str(w, key)?;
        w.write_all(if self.indent.is_some() { b": " } else { b":" })
    }
}

fn bool_text(b: bool) -> &'static [u8] {
    if b { b"true" } else { b"false" }
}

/// A value as `serde_json`'s pretty printer writes it at `indent` spaces (compact when
/// `indent` is `None`).
fn write_value<W: Write>(w: &mut W, value: &Value, indent: Option<&str>) -> io::Result<()> {
    match (value, indent) {
        (Value::Array(_) | Value::Object(_), Some(indent)) => {
            let text = serde_json::to_string_pretty(value).expect("values serialize");
            let text = crate::app::types::json_safe(&text);
            let mut first = true;
            for line in text.split('\n') {
                if !first {
                    w.write_all(b"\n")?;
                    w.write_all(indent.as_bytes())?;
                }
                first = false;
                w.write_all(line.as_bytes())?;
            }
            Ok(())
        }
        _ => {
            let text = serde_json::to_string(value).expect("values serialize");
            w.write_all(crate::app::types::json_safe(&text).as_bytes())
        }
    }
}

fn number<W: Write>(w: &mut W, score: f64) -> io::Result<()> {
    serde_json::to_writer(&mut *w, &score).map_err(io::Error::other)
}

/// The result JSON of one selection: pretty (2 spaces) at the fragments' indent, or
/// compact. Ends without a newline.
pub fn json<W: Write>(w: &mut W, r: &SelectionResult, f: &Fragments) -> io::Result<()> {
    let string = |w: &mut W, depth: usize, key: &str, value: &str| -> io::Result<()> {
        f.key(w, depth, key)?;
        write_str(w, value)
    };
    let comma = |w: &mut W| w.write_all(b",");
    w.write_all(b"{")?;
    string(w, 2, "pageId", r.page_id())?;
    comma(w)?;
    f.key(w, 2, "revisionId")?;
    write!(w, "{},", r.revision)?;
    string(w, 2, "cache", r.cache.as_str())?;
    comma(w)?;
    string(w, 2, "selectionKey", &r.selection_key)?;
    comma(w)?;
    f.key(w, 2, "selectionVerdict")?;
    write!(w, "{},", r.selection_verdict())?;
    match r.recommended_id() {
        Some(id) => string(w, 2, "recommendedTargetId", id)?,
        None => {
            f.key(w, 2, "recommendedTargetId")?;
            w.write_all(b"null")?;
        }
    }
    comma(w)?;
    f.key(w, 2, "targets")?;
    w.write_all(b"[")?;
    let n = r.target_count();
    let deep = f.indent.as_ref().map(|i| format!("{i}      "));
    for t in 0..n {
        if t > 0 {
            comma(w)?;
        }
        f.nl(w, 4)?;
        w.write_all(b"{")?;
        let name = &r.names.targets[t];
        string(w, 6, "id", &name.id)?;
        for (key, value) in f.shown_keys.iter().zip(&name.shown) {
            comma(w)?;
            w.write_all(key)?;
            write_value(w, value, deep.as_deref())?;
        }
        let d = r.device(t);
        comma(w)?;
        f.key(w, 6, "verdict")?;
        write!(w, "{},", d.verdict)?;
        f.key(w, 6, "score")?;
        number(w, d.score)?;
        comma(w)?;
        string(w, 6, "reason", d.reason.as_str())?;
        comma(w)?;
        f.key(w, 6, "rules")?;
        w.write_all(b"{")?;
        for (k, key) in f.rule_keys.iter().enumerate() {
            if k > 0 {
                comma(w)?;
            }
            w.write_all(key)?;
            w.write_all(bool_text(r.passed(k, t)))?;
        }
        if !f.rule_keys.is_empty() {
            f.nl(w, 6)?;
        }
        w.write_all(b"}")?;
        if let Some((value, note)) = r.override_of(t) {
            comma(w)?;
            f.key(w, 6, "override")?;
            w.write_all(b"{")?;
            f.key(w, 8, "value")?;
            w.write_all(bool_text(value))?;
            if let Some(note) = note {
                comma(w)?;
                string(w, 8, "note", note)?;
            }
            f.nl(w, 6)?;
            w.write_all(b"}")?;
        }
        let warnings = r.warnings(t);
        if !warnings.is_empty() {
            comma(w)?;
            f.key(w, 6, "warnings")?;
            w.write_all(b"[")?;
            for (i, (kind, detail)) in warnings.iter().enumerate() {
                if i > 0 {
                    comma(w)?;
                }
                f.nl(w, 8)?;
                w.write_all(b"{")?;
                string(w, 10, "kind", kind)?;
                comma(w)?;
                string(w, 10, "detail", detail)?;
                f.nl(w, 8)?;
                w.write_all(b"}")?;
            }
            f.nl(w, 6)?;
            w.write_all(b"]")?;
        }
        f.nl(w, 4)?;
        w.write_all(b"}")?;
    }
    if n > 0 {
        f.nl(w, 2)?;
    }
    w.write_all(b"],")?;
    f.key(w, 2, "features")?;
    w.write_all(b"[")?;
    for (k, rule_name) in f.rule_names.iter().enumerate() {
        if k > 0 {
            comma(w)?;
        }
        f.nl(w, 4)?;
        w.write_all(b"{")?;
        f.key(w, 6, "name")?;
        match f.features.name_target {
            Some(t) => w.write_all(bool_text(r.passed(k, t)))?,
            None => w.write_all(rule_name)?,
        }
        for (key, t) in &f.feature_keys {
            comma(w)?;
            w.write_all(key)?;
            w.write_all(bool_text(r.passed(k, *t)))?;
        }
        f.nl(w, 4)?;
        w.write_all(b"}")?;
    }
    if !f.rule_names.is_empty() {
        f.nl(w, 2)?;
    }
    w.write_all(b"],")?;
    let warnings = r.selection_warnings();
    if !warnings.is_empty() {
        f.key(w, 2, "warnings")?;
        w.write_all(b"[")?;
        for (i, (kind, detail)) in warnings.iter().enumerate() {
            if i > 0 {
                comma(w)?;
            }
            f.nl(w, 4)?;
            w.write_all(b"{")?;
            string(w, 6, "kind", kind)?;
            comma(w)?;
            string(w, 6, "detail", detail)?;
            f.nl(w, 4)?;
            w.write_all(b"}")?;
        }
        f.nl(w, 2)?;
        w.write_all(b"],")?;
    }
    string(w, 2, "evaluatedAt", &r.evaluated_at)?;
    f.nl(w, 0)?;
    w.write_all(b"}")
}

/// One selection as one line of compact JSON (the whole result), for `--all --format jsonl`.
pub fn json_line<W: Write>(w: &mut W, r: &SelectionResult, f: &Fragments) -> io::Result<()> {
    json(w, r, f)?;
    w.write_all(b"\n")
}

/// One line of compact JSON per target: the selection key, then the target's entry of
/// `targets[]` (`--select … --format jsonl`).
pub fn target_lines<W: Write>(w: &mut W, r: &SelectionResult) -> io::Result<()> {
    let all = crate::app::types::Needs::all();
    for t in 0..r.target_count() {
        let mut entry = serde_json::Map::new();
        entry.insert("selectionKey".into(), Value::from(r.selection_key.clone()));
        entry.extend(r.target_value(t, &all));
        let text = serde_json::to_string(&entry).map_err(io::Error::other)?;
        w.write_all(crate::app::types::json_safe(&text).as_bytes())?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// The summary of one selection as compact JSON: the header and, per target, its id,
/// verdict, score, reason and failing rule ids (one target per line).
pub fn summary<W: Write>(w: &mut W, r: &SelectionResult, one_line: bool) -> io::Result<()> {
    let rule_ids: Vec<Vec<u8>> = r.names.rules.iter().map(|x| json_string(&x.id)).collect();
    let columns: Vec<&[u8]> = r.eval.columns.iter().map(|c| &c.outcome[..]).collect();
    let nl: &[u8] = if one_line { b"" } else { b"\n" };
    let mut head = serde_json::Map::new();
    head.insert("pageId".into(), Value::from(r.page_id()));
    head.insert("revisionId".into(), Value::from(r.revision));
    head.insert("cache".into(), Value::from(r.cache.as_str()));
    head.insert("selectionKey".into(), Value::from(r.selection_key.clone()));
    head.insert(
        "selectionVerdict".into(),
        Value::from(r.selection_verdict()),
    );
    head.insert(
        "recommendedTargetId".into(),
        r.recommended_id().map_or(Value::Null, Value::from),
    );
    head.insert("evaluatedAt".into(), Value::from(r.evaluated_at.clone()));
    let text = serde_json::to_string(&head).map_err(io::Error::other)?;
    let text = crate::app::types::json_safe(&text).into_owned();
    // `{…}` → `{…,"targets":[`
    w.write_all(&text.as_bytes()[..text.len() - 1])?;
    w.write_all(b",\"targets\":[")?;
    for t in 0..r.target_count() {
        if t > 0 {
            w.write_all(b",")?;
        }
        w.write_all(nl)?;
        let d = r.device(t);
        w.write_all(b"{\"id\":")?;
        write_str(w, &r.names.targets[t].id)?;
        write!(w, ",\"verdict\":{},\"score\":", d.verdict)?;
        number(w, d.score)?;
        write!(w, ",\"reason\":\"{}\",\"failing\":[", d.reason.as_str())?;
        let mut first = true;
        for (id, column) in rule_ids.iter().zip(&columns) {
            if column[t] != PASS {
                if !first {
                    w.write_all(b",")?;
                }
                first = false;
                w.write_all(id)?;
            }
        }
        w.write_all(b"]}")?;
    }
    w.write_all(nl)?;
    w.write_all(b"]}\n")
}

/// One selection as a table: a line per target, failing rules named.
pub fn table<W: Write>(w: &mut W, r: &SelectionResult) -> io::Result<()> {
    write!(
        w,
        "{} {}  selection verdict {}  recommended {}  (revision {}, cache {})\n\n",
        sanitize(r.page_id()),
        sanitize(&r.selection_key),
        r.selection_verdict(),
        r.recommended_id()
            .map_or_else(|| "none".to_owned(), sanitize),
        r.revision,
        r.cache.as_str(),
    )?;
    let header: Vec<String> = ["", "TARGET", "VERDICT", "SCORE", "REASON", "FAILING RULES"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = (0..r.target_count())
        .map(|t| {
            let d = r.device(t);
            let failing: Vec<String> = r.failing_rules(t).map(sanitize).collect();
            vec![
                if r.eval.recommended == Some(t) {
                    "★".into()
                } else {
                    String::new()
                },
                sanitize(&r.names.targets[t].id),
                format!("{} {}", glyph(u64::from(d.verdict)), d.verdict),
                format!("{:.2}", d.score),
                d.reason.as_str().to_owned(),
                failing.join(", "),
            ]
        })
        .collect();
    w.write_all(render_table(&header, &rows).as_bytes())
}

/// The CSV header of [`csv_rows`].
pub const CSV_HEADER: [&str; 8] = [
    "selectionKey",
    "selectionVerdict",
    "recommended",
    "targetId",
    "verdict",
    "score",
    "reason",
    "failingRules",
];

/// One CSV record per target of a selection. CSV is read by people and spreadsheets:
/// stored strings are shown with terminal controls escaped, as in tables, and guarded
/// against formulas unless `guard` is off ([`csv_text`]).
pub fn csv_rows<W: Write>(
    w: &mut csv::Writer<W>,
    r: &SelectionResult,
    guard: bool,
) -> csv::Result<()> {
    let verdict = r.selection_verdict().to_string();
    let key = csv_text(&r.selection_key, guard);
    for t in 0..r.target_count() {
        let d = r.device(t);
        let failing: Vec<String> = r.failing_rules(t).map(|id| csv_text(id, guard)).collect();
        w.write_record([
            key.as_str(),
            verdict.as_str(),
            if r.eval.recommended == Some(t) {
                "true"
            } else {
                "false"
            },
            csv_text(&r.names.targets[t].id, guard).as_str(),
            d.verdict.to_string().as_str(),
            serde_json::to_string(&d.score)
                .expect("numbers serialize")
                .as_str(),
            d.reason.as_str(),
            failing.join(" ").as_str(),
        ])?;
    }
    Ok(())
}

fn md_cell(s: &str) -> String {
    sanitize(s).replace('|', "\\|")
}

/// The head of the Markdown table of every selection × target (`--all --format md`).
pub fn markdown_head<W: Write>(
    w: &mut W,
    page_name: &str,
    source_name: &str,
    names: &Names,
) -> io::Result<()> {
    write!(w, "# {}\n\n", md_cell(page_name))?;
    let ids: Vec<String> = names.targets.iter().map(|t| md_cell(&t.id)).collect();
    writeln!(
        w,
        "| {} | selection | recommended | {} |",
        md_cell(source_name),
        ids.join(" | ")
    )?;
    writeln!(w, "|---|---|---|{}", "---|".repeat(ids.len()))
}

/// One selection as a row of the Markdown table.
pub fn markdown_row<W: Write>(w: &mut W, r: &SelectionResult) -> io::Result<()> {
    let v = r.selection_verdict();
    write!(
        w,
        "| {} | {} {v} | {} |",
        md_cell(&r.selection_key),
        glyph(u64::from(v)),
        md_cell(r.recommended_id().unwrap_or("—")),
    )?;
    for t in 0..r.target_count() {
        let d = r.device(t);
        write!(w, " {} {:.2} |", glyph(u64::from(d.verdict)), d.score)?;
    }
    w.write_all(b"\n")
}

/// The legend under the Markdown table.
pub fn markdown_foot<W: Write>(w: &mut W) -> io::Result<()> {
    w.write_all(
        "\n● full (2) · ◐ partial (1) · ○ incompatible (0); cells show verdict and score.\n"
            .as_bytes(),
    )
}

//! `rulebench matrix PAGE --select KEY`: the rule × target grid of one selection as the
//! workbench shows it (rules as rows with their category, targets as columns with
//! their shown fields, then the verdict and score rows), as a table, CSV/TSV, Markdown
//! or JSON. The grid comes from the one typed result ([`SelectionResult`]).

use std::io::{self, Write};

use clap::ValueEnum;
use serde_json::{Value, json};

use super::{csv_io, csv_text, csv_writer, render_table};
use crate::app::text::{fmt_value, sanitize};
use crate::app::types::{Outcome, Rule, SelectionResult};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixFormat {
    /// Aligned columns: ✓ pass, ✗ fail, ! error
    Table,
    /// One record per rule (its name, category and whether it is required), a column per target (pass, fail, error), then verdict
    /// and score records
    Csv,
    /// As csv, tab-separated
    Tsv,
    /// A Markdown table (✓ ✗ !), ready for a pull request or a wiki
    #[value(alias = "markdown")]
    Md,
    /// The grid as JSON: targets, rules with their outcomes, verdicts, scores
    Json,
}

impl MatrixFormat {
    /// The format a file name asks for: `.csv`, `.tsv`, `.md`/`.markdown`, `.json`,
    /// else an aligned table.
    pub fn for_path(path: &std::path::Path) -> Self {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("csv") => Self::Csv,
            Some("tsv") => Self::Tsv,
            Some("md" | "markdown") => Self::Md,
            Some("json") => Self::Json,
            _ => Self::Table,
        }
    }
}

fn outcome_glyph(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "✓",
        Outcome::Error => "!",
        Outcome::Fail => "✗",
        Outcome::NotApplicable => "–",
    }
}

/// The grid's text rows: the shown-field rows, a row per rule, then verdict and score.
/// `cell` renders one outcome; the first two columns are the row's name and category.
fn grid(
    r: &SelectionResult,
    rules: &[Rule],
    cell: impl Fn(Outcome) -> String,
    text: impl Fn(&str) -> String,
    grouped: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    // Delimited text marks required rules in a column of their own (a glyph in a rule's
    // name is not data); the other grids with `■`.
    let required_column = !grouped;
    let n = r.target_count();
    let mut header = vec!["rule".to_owned(), "category".to_owned()];
    if required_column {
        header.push("required".to_owned());
    }
    header.extend(r.names.targets.iter().map(|t| text(&t.id)));
    let mut rows = Vec::new();
    let blank = if required_column { 2 } else { 1 };
    for (i, field) in r.names.shown.iter().enumerate() {
        let mut row = vec![text(field)];
        row.extend(std::iter::repeat_n(String::new(), blank));
        row.extend(r.names.targets.iter().map(|t| match &t.shown[i] {
            Value::String(v) => text(v),
            Value::Null => String::new(),
            v => text(&fmt_value(v)),
        }));
        rows.push(row);
    }
    for (i, rule) in r.names.rules.iter().enumerate() {
        let meta = rules.iter().find(|m| m.id == rule.id);
        let required = meta.is_some_and(|m| m.required);
        let member = meta.and_then(|m| m.family.as_ref()).filter(|_| grouped);
        // A rule family: a row of its own before its members (each target's passes of
        // the members that apply), its members indented under it.
        if let Some(m) = member.filter(|m| m.index == 0) {
            // Its members as the grid has them (found by family, wherever they are).
            let members: Vec<usize> = r
                .names
                .rules
                .iter()
                .enumerate()
                .filter(|(_, n)| {
                    rules
                        .iter()
                        .find(|x| x.id == n.id)
                        .and_then(|x| x.family.as_ref())
                        .is_some_and(|f| f.family.id == m.family.id)
                })
                .map(|(j, _)| j)
                .collect();
            let mut head = vec![
                text(&format!(
                    "{} ({} rules)",
                    m.family
                        .written
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or(&m.family.id),
                    m.family.members
                )),
                text(meta.map_or("", |m| m.category.as_str())),
            ];
            head.extend((0..n).map(|t| {
                let outcomes = members.iter().map(|&j| r.eval.columns[j].outcome[t]);
                let applies = outcomes
                    .clone()
                    .filter(|&o| o != Outcome::NotApplicable)
                    .count();
                let passes = outcomes.filter(|&o| o == Outcome::Pass).count();
                if applies == 0 {
                    cell(Outcome::NotApplicable)
                } else {
                    format!("{passes}/{applies}")
                }
            }));
            rows.push(head);
        }
        let mut row = vec![
            text(&format!(
                "{}{}{}",
                if member.is_some() { "  " } else { "" },
                if required && !required_column {
                    "■ "
                } else {
                    ""
                },
                rule.name
            )),
            text(meta.map_or("", |m| m.category.as_str())),
        ];
        if required_column {
            row.push(required.to_string());
        }
        row.extend((0..n).map(|t| cell(r.eval.columns[i].outcome[t])));
        rows.push(row);
    }
    let mut verdict = vec!["verdict".to_owned()];
    verdict.extend(std::iter::repeat_n(String::new(), blank));
    verdict.extend((0..n).map(|t| {
        let d = r.device(t);
        format!(
            "{}{}{}",
            d.verdict,
            if r.eval.overrides.get(t).is_some() {
                " ⚑"
            } else {
                ""
            },
            if r.eval.recommended == Some(t) {
                " ★"
            } else {
                ""
            }
        )
    }));
    rows.push(verdict);
    let mut score = vec!["score".to_owned()];
    score.extend(std::iter::repeat_n(String::new(), blank));
    score.extend((0..n).map(|t| format!("{:.2}", r.device(t).score)));
    rows.push(score);
    (header, rows)
}

/// Writes the grid of one selection.
/// A grid turned on its side: its first column becomes the header, each other column
/// a row (targets as rows, rules as columns).
fn transpose(header: Vec<String>, rows: Vec<Vec<String>>) -> (Vec<String>, Vec<Vec<String>>) {
    let width = header.len();
    let column = |j: usize| -> Vec<String> {
        std::iter::once(header[j].clone())
            .chain(rows.iter().map(|r| r.get(j).cloned().unwrap_or_default()))
            .collect()
    };
    let new_header = column(0);
    let new_rows = (1..width).map(column).collect();
    (new_header, new_rows)
}

/// The grid transposed (as the workbench's `t` shows it: a row per target, a column per
/// rule), as a table or Markdown; the other formats are written as [`write`] writes
/// them (delimited text and JSON are read by programs, which turn them as they need).
pub fn write_transposed<W: Write>(
    w: &mut W,
    r: &SelectionResult,
    rules: &[Rule],
    format: MatrixFormat,
    guard: bool,
) -> io::Result<()> {
    write_as(w, r, rules, format, guard, true)
}

pub fn write<W: Write>(
    w: &mut W,
    r: &SelectionResult,
    rules: &[Rule],
    format: MatrixFormat,
    guard: bool,
) -> io::Result<()> {
    write_as(w, r, rules, format, guard, false)
}

/// [`write`], the table and Markdown grids turned on their side when `transposed`.
fn write_as<W: Write>(
    w: &mut W,
    r: &SelectionResult,
    rules: &[Rule],
    format: MatrixFormat,
    guard: bool,
    transposed: bool,
) -> io::Result<()> {
    let turn = |(header, rows): (Vec<String>, Vec<Vec<String>>)| {
        if transposed {
            transpose(header, rows)
        } else {
            (header, rows)
        }
    };
    match format {
        MatrixFormat::Table => {
            writeln!(
                w,
                "{} {}  selection verdict {}  recommended {}  (revision {})\n",
                sanitize(r.page_id()),
                sanitize(&r.selection_key),
                r.selection_verdict(),
                r.recommended_id()
                    .map_or_else(|| "none".to_owned(), sanitize),
                r.revision
            )?;
            let (header, rows) = turn(grid(
                r,
                rules,
                |o| outcome_glyph(o).to_owned(),
                sanitize,
                true,
            ));
            w.write_all(render_table(&header, &rows).as_bytes())?;
            w.write_all(
                "\n✓ pass  ✗ fail  ! error (fails)  – n/a  ■ required  ⚑ override  ★ recommended\n"
                    .as_bytes(),
            )
        }
        MatrixFormat::Csv | MatrixFormat::Tsv => {
            let (header, rows) = grid(
                r,
                rules,
                |o: Outcome| o.word().to_owned(),
                |s| csv_text(s, guard),
                false,
            );
            let mut csv = csv_writer(w, format == MatrixFormat::Tsv);
            csv.write_record(&header).map_err(csv_io)?;
            for row in rows {
                csv.write_record(&row).map_err(csv_io)?;
            }
            csv.flush()
        }
        MatrixFormat::Md => {
            let md = |s: &str| sanitize(s).replace('|', "\\|");
            writeln!(
                w,
                "**{}** · selection `{}` · verdict {} · recommended {}\n",
                md(r.page_id()),
                md(&r.selection_key),
                r.selection_verdict(),
                r.recommended_id().map_or_else(|| "none".to_owned(), md)
            )?;
            let (header, rows) = turn(grid(r, rules, |o| outcome_glyph(o).to_owned(), md, true));
            writeln!(w, "| {} |", header.join(" | "))?;
            writeln!(w, "|{}", "---|".repeat(header.len()))?;
            for row in rows {
                writeln!(w, "| {} |", row.join(" | "))?;
            }
            Ok(())
        }
        MatrixFormat::Json => {
            let n = r.target_count();
            let targets: Vec<Value> = r
                .names
                .targets
                .iter()
                .map(|t| {
                    let mut o = serde_json::Map::new();
                    o.insert("id".into(), json!(t.id));
                    for (f, v) in r.names.shown.iter().zip(&t.shown) {
                        o.entry(f.clone()).or_insert_with(|| v.clone());
                    }
                    Value::Object(o)
                })
                .collect();
            let rule_rows: Vec<Value> = r
                .names
                .rules
                .iter()
                .enumerate()
                .map(|(i, rule)| {
                    let meta = rules.iter().find(|m| m.id == rule.id);
                    let mut row = json!({
                        "id": rule.id,
                        "name": rule.name,
                        "category": meta.map(|m| m.category.as_str()),
                        "required": meta.map(|m| m.required),
                        "weight": meta.map(|m| m.weight),
                        "outcomes": (0..n)
                            .map(|t| r.eval.columns[i].outcome[t].word())
                            .collect::<Vec<_>>(),
                    });
                    // A family's member names its family.
                    if let Some(m) = meta.and_then(|m| m.family.as_ref()) {
                        row["family"] = json!(m.family.id);
                    }
                    row
                })
                .collect();
            let doc = json!({
                "page": r.page_id(),
                "selection": r.selection_key,
                "revision": r.revision,
                "selectionVerdict": r.selection_verdict(),
                "recommended": r.recommended_id(),
                "targets": targets,
                "rules": rule_rows,
                "verdicts": (0..n).map(|t| r.device(t).verdict).collect::<Vec<_>>(),
                "scores": (0..n).map(|t| r.device(t).score).collect::<Vec<_>>(),
                "overrides": r.eval.overrides.values(r.target_count()),
            });
            let text = serde_json::to_string_pretty(&doc).expect("serializable");
            w.write_all(crate::app::text::json_safe(&text).as_bytes())?;
            w.write_all(b"\n")
        }
    }
}

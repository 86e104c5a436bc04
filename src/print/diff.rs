//! `rulebench diff OLD NEW`: what changed between two versions of a page (page files or
//! stored pages) and what the change does to outcomes, as text, Markdown (ready for a
//! pull-request comment) or JSON.

use std::fmt::Write as _;

use clap::ValueEnum;
use serde_json::json;

use crate::app::text::sanitize;
use crate::app::types::{Flip, ItemChanges, Moved, PageDiff, Verdict};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffFormat {
    /// Plain text: the definition's changes, then each selection that moved
    #[value(alias = "text")]
    Table,
    /// Markdown, ready for a pull-request comment
    #[value(alias = "markdown")]
    Md,
    /// The diff as JSON
    Json,
}

/// How many items a list shows before "… and N more".
const SHOWN: usize = 20;

fn list(items: &[String], fmt: impl Fn(&str) -> String) -> String {
    let mut out: Vec<String> = items.iter().take(SHOWN).map(|s| fmt(s)).collect();
    if items.len() > SHOWN {
        out.push(format!("… and {} more", items.len() - SHOWN));
    }
    out.join(", ")
}

fn items_lines(what: &str, c: &ItemChanges, code: &impl Fn(&str) -> String) -> Vec<String> {
    let mut out = Vec::new();
    if !c.added.is_empty() {
        out.push(format!(
            "{what} added ({}): {}",
            c.added.len(),
            list(&c.added, code)
        ));
    }
    if !c.removed.is_empty() {
        out.push(format!(
            "{what} removed ({}): {}",
            c.removed.len(),
            list(&c.removed, code)
        ));
    }
    if !c.changed.is_empty() {
        let shown: Vec<String> = c
            .changed
            .iter()
            .map(|(k, fields)| format!("{} ({})", code(k), sanitize(&fields.join(", "))))
            .collect();
        out.push(format!(
            "{what} changed ({}): {}",
            c.changed.len(),
            list(&shown, |s| s.to_owned())
        ));
    }
    out
}

fn definition_lines(d: &PageDiff, code: impl Fn(&str) -> String) -> Vec<String> {
    let mut out = items_lines("rules", &d.rules, &code);
    for (name, Moved { old, new }) in &d.policies {
        out.push(format!(
            "policy {}: {} → {}",
            code(name),
            sanitize(&old.to_string()),
            sanitize(&new.to_string())
        ));
    }
    out.extend(items_lines("overrides", &d.overrides, &code));
    out.extend(items_lines("assertions", &d.assertions, &code));
    out.extend(items_lines("linked tables", &d.expectations, &code));
    out.extend(items_lines("source rows", &d.source_rows, &code));
    out.extend(items_lines("target rows", &d.target_rows, &code));
    out
}

fn flip(f: &Flip) -> String {
    format!(
        "{} {} → {}",
        sanitize(&f.rule),
        f.old.unwrap_or("absent"),
        f.new.unwrap_or("absent")
    )
}

fn verdict(v: Verdict) -> String {
    format!("{} {v}", super::listing::glyph(v))
}

fn recommended(r: &Option<String>) -> String {
    r.as_deref().map_or_else(|| "none".to_owned(), sanitize)
}

/// The diff as text.
pub fn text(d: &PageDiff, old: &str, new: &str) -> String {
    let mut out = format!("diff {} → {}\n", sanitize(old), sanitize(new));
    let def = definition_lines(d, sanitize);
    if def.is_empty() {
        out.push_str("definition: no change\n");
    }
    for line in def {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "outcomes: {} of {} selections moved{}",
        d.selections.len(),
        d.selections_compared,
        if d.verdicts_moved() {
            " (verdicts moved)"
        } else {
            ""
        }
    );
    for s in &d.selections {
        let _ = write!(out, "  {}:", sanitize(&s.selection));
        if s.selection_verdict.old != s.selection_verdict.new {
            let _ = write!(
                out,
                " selection verdict {} → {};",
                verdict(s.selection_verdict.old),
                verdict(s.selection_verdict.new)
            );
        }
        if s.recommended.old != s.recommended.new {
            let _ = write!(
                out,
                " recommended {} → {};",
                recommended(&s.recommended.old),
                recommended(&s.recommended.new)
            );
        }
        let _ = writeln!(out, " {} targets moved", s.targets.len());
        for t in &s.targets {
            let _ = write!(out, "    {}: ", sanitize(&t.target));
            if t.verdict.old != t.verdict.new {
                let _ = write!(
                    out,
                    "verdict {} → {}, ",
                    verdict(t.verdict.old),
                    verdict(t.verdict.new)
                );
            }
            let _ = write!(out, "score {:.2} → {:.2}", t.score.old, t.score.new);
            if !t.flips.is_empty() {
                let flips: Vec<String> = t.flips.iter().map(flip).collect();
                let _ = write!(out, "; {}", flips.join(", "));
            }
            out.push('\n');
        }
    }
    out
}

/// The diff as Markdown: a summary, the definition's changes, then a table per
/// selection that moved.
pub fn markdown(d: &PageDiff, old: &str, new: &str) -> String {
    // Text a Markdown renderer (GitHub) would read as markup is escaped: HTML, emphasis,
    // table pipes, code ticks.
    let md = |s: &str| {
        sanitize(s)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('|', "\\|")
            .replace('`', "'")
            .replace('*', "\\*")
            .replace('_', "\\_")
    };
    // Inside a code span only ticks (and a table's pipes) need care.
    let code = |s: &str| format!("`{}`", sanitize(s).replace('`', "'").replace('|', "\\|"));
    let mut out = format!("### rulebench diff: {} → {}\n\n", code(old), code(new));
    let moved: usize = d.selections.iter().filter(|s| s.verdicts_moved()).count();
    let _ = writeln!(
        out,
        "**{}** of {} selections changed; verdicts moved in **{moved}**.\n",
        d.selections.len(),
        d.selections_compared
    );
    let def = definition_lines(d, code);
    if def.is_empty() {
        out.push_str("The definition did not change.\n\n");
    } else {
        out.push_str("#### What changed\n\n");
        for line in def {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
    }
    for s in &d.selections {
        let _ = write!(out, "#### Selection {}", code(&s.selection));
        if s.selection_verdict.old != s.selection_verdict.new {
            let _ = write!(
                out,
                " · verdict {} → {}",
                verdict(s.selection_verdict.old),
                verdict(s.selection_verdict.new)
            );
        }
        if s.recommended.old != s.recommended.new {
            let _ = write!(
                out,
                " · recommended {} → {}",
                code(&recommended(&s.recommended.old)),
                code(&recommended(&s.recommended.new))
            );
        }
        out.push_str("\n\n");
        if s.targets.is_empty() {
            continue;
        }
        out.push_str("| target | verdict | score | cells that flip |\n|---|---|---|---|\n");
        for t in &s.targets {
            let v = if t.verdict.old == t.verdict.new {
                verdict(t.verdict.new)
            } else {
                format!(
                    "{} → **{}**",
                    verdict(t.verdict.old),
                    verdict(t.verdict.new)
                )
            };
            let flips: Vec<String> = t.flips.iter().map(|f| md(&flip(f))).collect();
            let _ = writeln!(
                out,
                "| {} | {v} | {:.2} → {:.2} | {} |",
                code(&t.target),
                t.score.old,
                t.score.new,
                flips.join("<br>")
            );
        }
        out.push('\n');
    }
    out
}

/// The diff as JSON (strings kept exactly, as `\u` escapes where needed).
pub fn json(d: &PageDiff, old: &str, new: &str) -> String {
    let doc = json!({
        "old": old,
        "new": new,
        "verdictsMoved": d.verdicts_moved(),
        "diff": d,
    });
    let mut text =
        crate::app::text::json_safe(&serde_json::to_string_pretty(&doc).expect("diffs serialize"))
            .into_owned();
    text.push('\n');
    text
}

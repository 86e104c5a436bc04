//! `rulebench explain PAGE --select KEY --target ID [--rule RULE] [--format text|json]
//! [--tree]`: why a target got its verdict for a selection, and why each rule passed or
//! failed for the pair.

use clap::ValueEnum;

use super::listing::glyph;
use crate::app::explain::{CellExplanation, RuleReport};
use crate::app::text::fmt_value;
use crate::app::text::sanitize;
use crate::app::types::{Kind, Node, WhyNot, WhyNotReport};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExplainFormat {
    #[value(alias = "table")]
    Text,
    Json,
}

/// The explanation as text: the verdict and why, then one paragraph per rule.
pub fn text(e: &CellExplanation, tree: bool) -> String {
    let t = &e.target;
    let mut out = String::new();
    let who = if t.label != t.id {
        format!("{} ({})", t.id, t.label)
    } else {
        t.id.clone()
    };
    line(
        &mut out,
        0,
        &format!(
            "{who} for {}: {} {} {}",
            e.selection_key,
            glyph(t.verdict),
            t.verdict,
            t.why
        ),
    );
    for r in &e.rules {
        rule(&mut out, r, tree);
    }
    out
}

fn rule(out: &mut String, r: &RuleReport, tree: bool) {
    let mark = match (r.passed, &r.error) {
        (_, Some(_)) => "!",
        _ if r.applies == Some(false) => "–",
        (true, None) => "✓",
        (false, None) => "✗",
    };
    let kind = if r.required {
        "required".to_owned()
    } else {
        format!("optional, weight {}", r.weight)
    };
    line(
        out,
        0,
        &format!("{mark} {} ({kind}): {}", r.name, r.sentence),
    );
    if !r.fields.is_empty() {
        let fields: Vec<String> = r
            .fields
            .iter()
            .map(|(path, value)| {
                if r.missing.contains(path) {
                    format!("{path} (missing)")
                } else {
                    format!("{path} = {}", fmt_value(value))
                }
            })
            .collect();
        line(out, 4, &format!("fields: {}", fields.join(", ")));
    }
    if let Some(w) = &r.warning {
        line(out, 4, &format!("⚠ warning {}: {}", w.kind, w.detail));
    }
    for d in &r.lint {
        let hint = d
            .hint
            .as_ref()
            .map(|h| format!(" (hint: {h})"))
            .unwrap_or_default();
        line(out, 4, &format!("⚠ {}: {}{hint}", d.code, d.message));
    }
    if tree {
        let logic = match crate::app::expr::to_infix(&r.logic) {
            Ok(text) => text,
            Err(_) => r.logic.to_string(),
        };
        line(out, 4, &format!("rule: {logic}"));
        if let Some(condition) = &r.condition {
            line(out, 4, "applies when:");
            node_lines(out, condition);
        }
        line(out, 4, "tree (✓ truthy, ✗ falsy, · not evaluated):");
        node_lines(out, &r.tree);
    }
}

fn node_lines(out: &mut String, tree: &Node) {
    for (depth, n) in tree.walk() {
        let indent = 6 + 2 * depth;
        let mark = match (n.kind, n.evaluated, n.pass) {
            (Kind::ItemScope, _, _) => "∀",
            (Kind::Literal, true, _) => " ",
            (_, false, _) => "·",
            (_, true, Some(true)) => "✓",
            (_, true, Some(false)) => "✗",
            (_, true, None) => "!",
        };
        let mut text = format!("{mark} {}", n.label);
        match (&n.value, &n.error) {
            _ if matches!(n.kind, Kind::Literal | Kind::ItemScope) => {}
            (Some(value), _) => text.push_str(&format!(" → {}", fmt_value(value))),
            (None, Some(err)) => text.push_str(&format!(" → error: {err}")),
            (None, None) => {}
        }
        if !n.evaluated && n.kind != Kind::Literal {
            text.push_str(" (not evaluated)");
        }
        line(out, indent, &text);
        if let Some(s) = n.sentence.as_ref().filter(|_| n.kind != Kind::Field) {
            line(out, indent + 4, s);
        }
    }
}

/// One line, indented; dataset strings are untrusted, so control characters are
/// written escaped.
fn line(out: &mut String, indent: usize, text: &str) {
    out.push_str(&" ".repeat(indent));
    out.push_str(&sanitize(text));
    out.push('\n');
}

/// The counterfactuals as text (`explain … --why-not V`): the smallest sets of rule
/// outcomes that move the target to the asked verdict, the threshold values past which
/// its verdict changes, and the single edits that change the selection's
/// recommendation.
pub fn why_not(r: &WhyNotReport) -> String {
    let w = &r.why;
    let mut out = String::new();
    let who = |id: &str, label: &str| {
        if id == label {
            sanitize(id)
        } else {
            format!("{} ({})", sanitize(id), sanitize(label))
        }
    };
    out.push_str(&format!(
        "{} for {}: {} {} ({}), score {:.2}; asked: {}\n",
        who(&r.target, &r.target_label),
        sanitize(&r.selection_label),
        glyph(w.verdict),
        w.verdict,
        w.reason.as_str(),
        w.score,
        w.asked
    ));
    for l in why_not_lines(w).into_iter().chain(threshold_lines(w)) {
        out.push_str(&format!("  {l}\n"));
    }
    let recommended = r.recommended.as_deref().map_or("none".to_owned(), sanitize);
    if r.recommendation_moves.is_empty() {
        out.push_str(&format!(
            "  the selection's recommendation ({recommended}): no single rule edit or threshold changes it\n"
        ));
    } else {
        out.push_str(&format!(
            "  the selection's recommendation ({recommended}) changes with:\n"
        ));
        for m in &r.recommendation_moves {
            let edit = match (&m.rule, m.comparison, m.value) {
                (Some(rule), _, _) if m.edit == "without rule" => {
                    format!("without rule {}", sanitize(rule))
                }
                (Some(rule), _, _) => format!("rule {} {}", sanitize(rule), m.edit),
                (None, Some(c), Some(v)) => {
                    format!(
                        "{} {} {}",
                        m.edit,
                        if c == "<=" { "≤" } else { "≥" },
                        threshold(v)
                    )
                }
                _ => m.edit.to_owned(),
            };
            let to = m
                .recommended
                .as_deref()
                .map_or("no recommendation".to_owned(), sanitize);
            out.push_str(&format!(
                "    {edit}  ⇒ {to} (selection {})\n",
                m.selection_verdict
            ));
        }
    }
    out
}

/// What would move one target to the asked verdict, as lines (without indent or
/// newline): the override, the smallest sets of rule outcomes. The command's text and
/// the workbench's Explanation pane both show these.
pub fn why_not_lines(w: &WhyNot) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(value) = w.overridden {
        out.push(format!(
            "an override forces it ({}): no rule outcome moves it; without the override:",
            if value { "compatible" } else { "incompatible" }
        ));
    }
    let rules_give = w.without_override.unwrap_or(w.verdict);
    match (w.changes_needed, w.sets.is_empty()) {
        _ if rules_give == w.asked => out.push("it has that verdict already".to_owned()),
        (Some(k), false) => {
            let n = w.sets.len() + w.more_sets;
            out.push(format!(
                "the smallest changes: {k} rule outcome{} ({n} way{}):",
                if k == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" }
            ));
            for set in &w.sets {
                let changes: Vec<String> = set
                    .changes
                    .iter()
                    .map(|c| {
                        let kind = if c.required {
                            "required".to_owned()
                        } else {
                            format!("weight {}", c.weight)
                        };
                        format!("{} ({kind}) {} → {}", sanitize(&c.rule), c.from, c.to)
                    })
                    .collect();
                out.push(format!(
                    "  {}  ⇒ {} · {}",
                    changes.join(", "),
                    set.verdict,
                    set.arithmetic
                ));
            }
            if w.more_sets > 0 {
                out.push(format!("  … and {} more", w.more_sets));
            }
        }
        _ if w.incomplete => out.push(
            "unknown: the search stopped before trying every set of rule outcomes".to_owned(),
        ),
        _ => out.push(format!(
            "no set of up to {} rule outcomes moves it to {}",
            crate::app::types::MAX_CHANGES,
            w.asked
        )),
    }
    out
}

/// The threshold values past which a target's verdict changes, as lines.
pub fn threshold_lines(w: &WhyNot) -> Vec<String> {
    let mut out = Vec::new();
    if !w.thresholds.is_empty() {
        out.push("thresholds (this target):".to_owned());
        for t in &w.thresholds {
            out.push(format!(
                "  {} {} {} (score {}) ⇒ {}",
                t.threshold,
                if t.comparison == "<=" { "≤" } else { "≥" },
                threshold(t.value),
                t.exact,
                t.verdict
            ));
        }
    }
    out
}

/// A threshold as a user types it: up to nine decimal places, no trailing zeros.
fn threshold(v: f64) -> String {
    let text = format!("{v:.9}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

//! Coverage reports (`rulebench test PAGE --coverage`): text and Markdown — the
//! conditions of each rule over the pairs the assertions look at, then the mutants that
//! survived, each with the pair to pin.

use crate::app::assertions::CoverageReport;
use crate::app::text::sanitize;
use crate::app::types::{ConditionCoverage, Fate, Mutant};

fn condition_line(c: &ConditionCoverage) -> String {
    let missing = c.gap().map(|g| format!("  ({g})")).unwrap_or_default();
    format!(
        "{} {}   evaluated {} · true {} · false {} · decisive {}{missing}",
        if c.covered() { "✓" } else { "✗" },
        sanitize(&c.text),
        c.evaluated,
        c.truthy,
        c.falsy,
        c.decisive
    )
}

/// A mutant no assertion notices, in a line: what changed and the pair that shows it
/// (`None` for a killed or equivalent one). The text report and the Tests pane list
/// these.
pub fn survivor(m: &Mutant) -> Option<String> {
    let what = format!("{} {} `{}`", sanitize(&m.rule), m.kind, sanitize(&m.change));
    match &m.fate {
        Fate::Survived {
            source,
            target,
            outcome,
            mutant_outcome,
            verdict,
            mutant_verdict,
        } => {
            let verdict = if verdict == mutant_verdict {
                format!(
                    "verdict stays {verdict}: expect the rule's outcome (`rule.{}`)",
                    sanitize(&m.rule)
                )
            } else {
                format!("verdict {verdict} → {mutant_verdict}: pin it")
            };
            Some(format!(
                "{what}: changes {} × {} ({outcome} → {mutant_outcome}, {verdict})",
                sanitize(source),
                sanitize(target)
            ))
        }
        Fate::Unshown { searched } => Some(format!(
            "{what}: no pair of the first {searched} sources shows a change"
        )),
        Fate::Killed { .. } | Fate::Equivalent => None,
    }
}

fn head(r: &CoverageReport) -> Vec<String> {
    let c = &r.coverage;
    let mut out = vec![format!(
        "{} (revision {}): coverage by {} assertion{} over {} selection{} ({} pairs), {:.0} ms",
        sanitize(&r.page_id),
        r.revision,
        c.assertions,
        if c.assertions == 1 { "" } else { "s" },
        c.selections,
        if c.selections == 1 { "" } else { "s" },
        c.pairs,
        r.took_ms
    )];
    if c.failing_assertions > 0 {
        out.push(format!(
            "{} assertion(s) fail on the page itself and notice no mutant (hint: `rulebench test` shows them)",
            c.failing_assertions
        ));
    }
    out
}

fn mutants_line(r: &CoverageReport) -> String {
    let c = &r.coverage;
    format!(
        "mutants: {} killed, {} survived, {} equivalent here — mutation score {:.1}%",
        c.killed, c.survived, c.equivalent, c.mutation_score
    )
}

pub fn text(r: &CoverageReport) -> String {
    let c = &r.coverage;
    let mut out: Vec<String> = head(r);
    out.push(format!(
        "conditions: {} of {} covered (both outcomes, decisive on a pair)",
        c.conditions_covered, c.conditions
    ));
    for rule in &c.rules {
        out.push(format!(
            "  rule {} (applies on {} pairs, passes on {})",
            sanitize(&rule.rule),
            rule.applies,
            rule.passes
        ));
        for cond in &rule.conditions {
            out.push(format!("    {}", condition_line(cond)));
        }
    }
    out.push(mutants_line(r));
    for m in &c.mutants {
        if let Some(line) = survivor(m) {
            out.push(format!("  survived {line}"));
        }
    }
    out.join("\n") + "\n"
}

pub fn md(r: &CoverageReport) -> String {
    let c = &r.coverage;
    let cell = |s: &str| sanitize(s).replace('|', "\\|");
    let mut out: Vec<String> = head(r).into_iter().map(|l| format!("{l}\n")).collect();
    out.push(format!(
        "\n**Conditions:** {} of {} covered (both outcomes, decisive on a pair)\n\n| rule | condition | evaluated | true | false | decisive | covered |\n|---|---|---:|---:|---:|---:|---|",
        c.conditions_covered, c.conditions
    ));
    for rule in &c.rules {
        for cond in &rule.conditions {
            out.push(format!(
                "| {} | `{}` | {} | {} | {} | {} | {} |",
                cell(&rule.rule),
                cell(&cond.text),
                cond.evaluated,
                cond.truthy,
                cond.falsy,
                cond.decisive,
                if cond.covered() { "✓" } else { "✗" }
            ));
        }
    }
    out.push(format!("\n**{}**\n", mutants_line(r)));
    let survivors: Vec<String> = c.mutants.iter().filter_map(survivor).collect();
    if !survivors.is_empty() {
        out.push("| survived |\n|---|".to_owned());
        for s in survivors {
            out.push(format!("| {} |", cell(&s)));
        }
    }
    out.join("\n") + "\n"
}

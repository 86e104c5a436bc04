//! Explaining one cell: why a target got its verdict for a selection, and why each rule
//! passed or failed for the pair, in words. `rulebench explain` prints it; its JSON
//! form is stable for scripts (README, "rulebench explain").

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{App, AppError, Result};
use rulebench_core::diag::did_you_mean;
use rulebench_core::explain::{self, Node};
use rulebench_core::matrix::{ERROR, Matrix};
use rulebench_core::model::{Page, Side};
use rulebench_core::predicates::{self, PredicateList};
use rulebench_core::verdict::Verdict;
use rulebench_core::whatif::{self, WhyNotReport};

/// Why one (selection, target) cell is what it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CellExplanation {
    pub page_id: String,
    pub revision_id: i64,
    pub selection_key: String,
    pub target: TargetReport,
    /// Failing rules first, then passing ones, each group in page order.
    pub rules: Vec<RuleReport>,
}

/// The target's verdict and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetReport {
    pub id: String,
    pub label: String,
    pub key: String,
    pub verdict: Verdict,
    pub score: f64,
    /// `override`, `required-fail`, `full`, `partial` or `low-score`.
    pub reason: String,
    /// The reason in words.
    pub why: String,
    /// Ids of the required rules that fail.
    pub failed_required: Vec<String>,
    #[serde(rename = "override", skip_serializing_if = "Option::is_none")]
    pub override_: Option<OverrideReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideReport {
    pub value: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One rule's outcome for the pair, with its reasons.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleReport {
    pub id: String,
    pub name: String,
    pub required: bool,
    #[serde(serialize_with = "whole")]
    pub weight: f64,
    /// Whether the rule passed (false where it does not apply: see `applies`).
    pub passed: bool,
    /// Whether the rule applies to the pair, when it has an `appliesWhen`: `false`
    /// means its outcome is n/a (left out of the score).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applies: Option<bool>,
    /// The `appliesWhen` condition as a tree with every node's value, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<Node>,
    /// The rule's value (`null` when the engine raised an error).
    pub value: Option<Value>,
    pub error: Option<String>,
    /// Every failing condition of a failing rule; a short reason for a passing one.
    pub sentence: String,
    /// Every field the rule reads with its value for the pair, in reading order.
    pub fields: Map<String, Value>,
    /// The fields of `fields` absent from the pair (read as null).
    pub missing: Vec<String>,
    /// The rule as a predicate list, while its logic still is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicates: Option<PredicateList>,
    /// The rule as a tree with every node's value.
    pub tree: Node,
    /// The type-aware lint's warnings on the rule (coercion traps in this page's data).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lint: Vec<rulebench_core::diag::Diagnostic>,
    /// The rule's structured warning, emitted because it fails for this pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<WarningReport>,
    /// The rule's index in the page.
    #[serde(skip)]
    pub index: usize,
    /// The rule's logic.
    #[serde(skip)]
    pub logic: Value,
}

/// `2`, not `2.0`.
fn whole<S: Serializer>(value: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        s.serialize_i64(*value as i64)
    } else {
        s.serialize_f64(*value)
    }
}

/// Finds a rule by id, or by name (any case).
pub fn find_rule(page: &Page, needle: &str) -> Result<usize> {
    if let Some((i, _)) = page.rule(needle) {
        return Ok(i);
    }
    if let Some(i) = page
        .rules
        .iter()
        .position(|r| r.name.eq_ignore_ascii_case(needle.trim()))
    {
        return Ok(i);
    }
    let ids: Vec<&str> = page.rules.iter().map(|r| r.id.as_str()).collect();
    let hint = did_you_mean(needle, ids.iter().copied())
        .map(|s| format!("did you mean `{s}`?"))
        .or_else(|| Some(super::some_of("rules", &ids)));
    Err(AppError::NotFound {
        what: "rule",
        id: needle.to_owned(),
        hint,
    })
}

/// Explains the cell (selection `s`, target `t`) of an evaluated page; `only` limits
/// the rules to one.
/// A rule's structured warning as emitted for a pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarningReport {
    pub kind: String,
    pub detail: String,
}

/// Rule `rule`'s warning for (selection `eval`, target `t`) when the rule fails for
/// the pair and has one, its detail filled in.
pub fn cell_warning(
    page: &Page,
    eval: &rulebench_core::matrix::SelectionEval,
    rule: usize,
    t: usize,
) -> Option<WarningReport> {
    let r = page.rules.get(rule)?;
    let w = r.warning.as_ref()?;
    let passed = eval
        .columns
        .get(rule)
        .is_none_or(|c| c.outcome[t].counted() != Some(false));
    if passed {
        return None;
    }
    let d = &page.target;
    let row = d.effective_row(&d.rows[t]);
    // The fields a result shows (label and summary): the same detail as in the result.
    let shown = |f: &str| d.label.as_deref() == Some(f) || d.summary.iter().any(|s| s == f);
    let field = |f: &str| -> Option<String> {
        row.get(f)
            .filter(|_| shown(f))
            .map(rulebench_core::result::value_text)
    };
    let label = d.label.as_deref().and_then(field);
    let id = d.row_id(&d.rows[t]);
    let source_key = page.source.row_key(&page.source.rows[eval.selection]);
    Some(WarningReport {
        kind: w.kind.clone(),
        detail: rulebench_core::result::render_warning(
            &w.detail,
            &rulebench_core::result::WarningContext {
                rule_id: &r.id,
                rule_name: &r.name,
                target_id: &id,
                target_label: label.as_deref(),
                source_key: &source_key,
                field: &field,
            },
        ),
    })
}

pub fn explain_cell(
    page: &Page,
    revision: i64,
    eval: &rulebench_core::matrix::SelectionEval,
    t: usize,
    only: Option<usize>,
) -> CellExplanation {
    let s = eval.selection;
    // Rows as the matrix evaluates them: dataset defaults filled in.
    let source = Value::Object(page.source.effective_row(&page.source.rows[s]).into_owned());
    let target = Value::Object(page.target.effective_row(&page.target.rows[t]).into_owned());
    let why = explain::target_why(page, eval, t);
    let row = &page.target.rows[t];
    let override_ = why.override_value.map(|value| OverrideReport {
        value,
        note: why.override_note.clone(),
    });
    let target_report = TargetReport {
        id: page.target.row_id(row),
        label: page.target.row_label(row),
        key: page.target.row_key(row),
        verdict: why.verdict,
        score: why.score,
        reason: why.reason.as_str().to_owned(),
        failed_required: why
            .failed_required
            .iter()
            .map(|&i| page.rules[i].id.clone())
            .collect(),
        why: why.text,
        override_,
    };
    let schema = rulebench_core::validate::Schema::of(page);
    let mut rules: Vec<RuleReport> = page
        .rules
        .iter()
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o == *i))
        .map(|(i, rule)| {
            let e = explain::explain(rule, &source, &target);
            let outcome = eval.columns.get(i).map(|c| c.outcome[t]);
            RuleReport {
                id: rule.id.clone(),
                name: rule.name.clone(),
                required: rule.required,
                weight: rule.weight,
                // The matrix decided the verdict; the explanation agrees with it.
                passed: outcome.map_or(e.passed, |o| o == rulebench_core::matrix::PASS),
                applies: match outcome {
                    Some(o) if rule.applies_when.is_some() => {
                        Some(o != rulebench_core::matrix::NOT_APPLICABLE)
                    }
                    _ => e.applies,
                },
                condition: e.condition,
                value: e.value,
                error: e.error.or_else(|| {
                    (outcome == Some(ERROR)).then(|| "the engine raised an error".to_owned())
                }),
                sentence: e.sentence,
                fields: e.fields.into_iter().collect(),
                missing: e.missing,
                predicates: predicates::from_logic(&rule.logic),
                tree: e.tree,
                lint: rulebench_core::lint::lint_rule(
                    &rule.logic,
                    rule.applies_when.as_ref().map(|c| &c.logic),
                    &schema,
                ),
                warning: cell_warning(page, eval, i, t),
                index: i,
                logic: rule.logic.clone(),
            }
        })
        .collect();
    // Failing first, then passing, then those that do not apply; page order within
    // each (a stable sort).
    rules.sort_by_key(|r| (r.applies == Some(false), r.passed));
    CellExplanation {
        page_id: page.id.clone(),
        revision_id: revision,
        selection_key: page.source.row_key(&page.source.rows[s]),
        target: target_report,
        rules,
    }
}

impl App {
    /// Why `target` got its verdict for `selection` on page `page_id`, and why each rule
    /// (or only `rule`, by id or name) passed or failed for the pair. Rows are named as
    /// everywhere (key, keyHash, id, a unique key value or label).
    pub fn explain(
        &self,
        page_id: &str,
        selection: &str,
        target: &str,
        rule: Option<&str>,
    ) -> Result<CellExplanation> {
        let (page, revision) = self.page(page_id)?;
        let s = Self::find_row(&page, Side::Source, selection)?;
        let t = Self::find_row(&page, Side::Target, target)?;
        let only = rule.map(|r| find_rule(&page, r)).transpose()?;
        let mut matrix = Matrix::new(&page)?;
        let eval = matrix.evaluate(s);
        Ok(explain_cell(&page, revision, &eval, t, only))
    }

    /// What would move `target` to the verdict `asked` for `selection`: the smallest
    /// sets of rule outcomes, the threshold values past which its verdict changes, and
    /// which single rule edit or threshold value changes the selection's
    /// recommendation.
    pub fn why_not(
        &self,
        page_id: &str,
        selection: &str,
        target: &str,
        asked: Verdict,
    ) -> Result<WhyNotReport> {
        let (page, revision) = self.page(page_id)?;
        let s = Self::find_row(&page, Side::Source, selection)?;
        let t = Self::find_row(&page, Side::Target, target)?;
        let mut matrix = Matrix::new(&page)?;
        let eval = matrix.evaluate(s);
        let why = whatif::why_not(&page, &eval, t, asked);
        let recommendation_moves = whatif::recommendation_moves(&page, &mut matrix, s);
        let (source_row, target_row) = (&page.source.rows[s], &page.target.rows[t]);
        Ok(WhyNotReport {
            page_id: page.id.clone(),
            revision,
            selection_key: page.source.row_key(source_row),
            selection_label: page.source.row_label(source_row),
            target: page.target.row_id(target_row),
            target_label: page.target.row_label(target_row),
            why,
            recommended: eval.recommended.map(|r| matrix.target_ids()[r].clone()),
            recommendation_moves,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(&dir.path().join("e.db")).unwrap();
        (dir, app)
    }

    #[test]
    fn failing_rules_come_first_and_the_verdict_is_explained() {
        let (_dir, app) = app();
        let e = app
            .explain("llm-chat-clients", "t3-chat", "llama-3.3-70b", None)
            .unwrap();
        assert_eq!(e.selection_key, "clientType=web|id=t3-chat");
        assert_eq!(
            (e.target.verdict.number(), e.target.reason.as_str()),
            (0, "low-score")
        );
        assert_eq!(
            e.target.why,
            "low-score · score 0.33 = 2 / 6 optional weight (full ≥ 1, partial ≥ 0.4)"
        );
        // Failing first, then passing, then the rules that do not apply.
        let group = |r: &crate::explain::RuleReport| match (r.applies, r.passed) {
            (Some(false), _) => 2,
            (_, false) => 0,
            (_, true) => 1,
        };
        let groups: Vec<u8> = e.rules.iter().map(group).collect();
        assert_eq!(groups, [0, 0, 1, 1, 1, 2, 2, 2, 2], "{groups:?}");
        let ids: Vec<&str> = e.rules.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(&ids[..2], ["tool-calling", "structured-outputs"]);
        // Within each group, page order.
        let passing: Vec<usize> = e
            .rules
            .iter()
            .filter(|r| r.passed)
            .map(|r| r.index)
            .collect();
        assert!(passing.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn one_rule_unknown_names_and_overrides() {
        let (_dir, app) = app();
        let e = app
            .explain(
                "llm-chat-clients",
                "opencode",
                "llama-3.3-70b",
                Some("Streaming Support"),
            )
            .unwrap();
        assert_eq!(e.rules.len(), 1);
        assert_eq!(e.rules[0].id, "streaming");
        let o = e.target.override_.as_ref().unwrap();
        assert!(o.value);
        assert!(
            e.target
                .why
                .starts_with("override: forced compatible (2) — Verified")
        );
        let err = app
            .explain(
                "llm-chat-clients",
                "t3-chat",
                "llama-3.3-70b",
                Some("streeming"),
            )
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "rule `streeming` not found (hint: did you mean `streaming`?)"
        );
        let err = app
            .explain("llm-chat-clients", "t3-chat", "llama-3.3-71b", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean `llama-3.3-70b`?"), "{err}");
    }

    #[test]
    fn the_workspace_and_the_use_case_agree() {
        let (_dir, app) = app();
        let mut ws = super::super::workspace::Session::open(&app, "loan-eligibility").unwrap();
        ws.select(0);
        for t in 0..ws.page.target.rows.len() {
            let id = ws.page.target.row_id(&ws.page.target.rows[t]);
            let e = app
                .explain("loan-eligibility", "app-001", &id, None)
                .unwrap();
            assert_eq!(e.target.why, ws.target_why(t));
            assert_eq!(e.target.verdict, ws.eval.devices[t].verdict);
        }
    }
}

//! Checking a rule or a page, as every edge does: validation (structure, operators,
//! fields, limits: `validate`) and then, on logic that validates and reads data, the
//! type-aware lint (`lint`). Neither of those calls the other; this composes them.

use serde_json::Value;

use crate::diag::Diagnostic;
use crate::lint;
use crate::model::Page;
use crate::schema::{RowFacts, Schema};
use crate::validate;

/// One rule's logic checked against a page's schema: its validation diagnostics, then
/// the lint's warnings when it validates and reads data. Pointers are relative to the
/// logic.
pub fn logic(logic: &Value, schema: &Schema) -> Vec<Diagnostic> {
    rule_logic(logic, None, schema)
}

/// As [`logic`], for the logic of a rule that carries the `appliesWhen` condition
/// `condition` (the lint judges what the whole rule reads).
pub fn rule_logic(logic: &Value, condition: Option<&Value>, schema: &Schema) -> Vec<Diagnostic> {
    let (mut out, reads_data) = validate::validate_logic_reads(logic, schema);
    // A field only some rows have, read where the condition holds it present, is read
    // only where it is there.
    if let Some(c) = condition {
        let present = crate::engine::present_when_true(c);
        out.retain(|d| {
            d.code != crate::diag::Code::PartialField
                || !crate::engine::reads_one_of(logic, &d.pointer, &present)
        });
    }
    if reads_data && !out.iter().any(Diagnostic::is_error) {
        out.extend(lint::lint_rule(logic, condition, schema));
    }
    out
}

/// A page checked: validated, each rule's logic checked by [`logic`].
pub fn page(page: &Page) -> Vec<Diagnostic> {
    page_with(page, None)
}

/// As [`page`], one side's rows described by `facts` (a dataset import of rows kept as
/// stored texts).
pub fn page_with(page: &Page, facts: Option<&RowFacts<'_>>) -> Vec<Diagnostic> {
    validate::validate_page_with(page, facts, &rule_logic)
}

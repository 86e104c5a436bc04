//! A page's rules and policies compiled to one SQL query, for four dialects.
//!
//! The query runs over a source table and a target table whose columns are the
//! datasets' fields, crosses them, and yields per pair every rule's outcome (one boolean
//! column per rule), the score, the verdict and the reason exactly as the engine computes
//! them (required modes, thresholds, overrides by key); with the selection columns also
//! each source's selection verdict and recommended target, by window functions.
//!
//! Rules are translated with json-logic-js semantics, typed by the page's datasets: each
//! field has the one JSON type its values have (or is absent/null). Where a construct has
//! no faithful translation (an operator SQL lacks, a field holding several types, a
//! string whose number JavaScript reads otherwise than a cast), compilation fails with
//! an [`SqlError`] that names the rule, the place in its logic, the operator and why —
//! never a query that means something else on the page's rows. (A string field made a
//! number is checked on the strings the page holds; other text in a warehouse's table,
//! such as `" 5"` or `"0x10"`, is NaN to the query.) See `docs/sql.md` for the whole
//! mapping.

mod dialect;
mod expr;
mod types;

use std::fmt::Write as _;

use serde_json::Value;

pub use dialect::Dialect;
use expr::Compiler;
pub use types::{Kind, Schema, SqlError};

use super::model::{AggregateMode, Dataset, ElseMode, Page, RequiredMode, Side, key_hash};
use super::text::sanitize;
use super::verdict::{RuleWeight, Scoring, Tally};

/// What to compile and how to name the tables.
#[derive(Debug, Clone)]
pub struct Options {
    pub dialect: Dialect,
    /// Only this source row (its key).
    pub select: Option<String>,
    /// Add each source's selection verdict and recommended target.
    pub selection: bool,
    pub source_table: String,
    pub target_table: String,
    /// The overrides table; `None` leaves overrides out (a page without any).
    pub overrides_table: Option<String>,
    /// Where the query came from, for its header: the page's revision and the
    /// compiler's version (`None`: not said).
    pub provenance: Option<(i64, String)>,
    /// The long shape: a row per (source, target, rule) with the rule's outcome, whose
    /// columns do not move when rules are added or renamed (see [`LONG_COLUMNS`]).
    pub long: bool,
    /// The tables' own column names for the page's fields (`--map side.field=column`);
    /// a field not named here is its own column.
    pub columns: std::collections::HashMap<(Side, String), String>,
    /// Partial compilation: a rule that does not translate becomes a NULL column (its
    /// reason in a comment), and the score, verdict, reason and selection are NULL where
    /// such a rule could change them. Problems of the page itself (its keys, priority,
    /// names) still fail.
    pub partial: bool,
    /// How the overrides table names its pairs.
    pub override_keys: OverrideKeys,
    /// Table names are written as given, unquoted: the caller's text stands for a table
    /// (a dbt model's `{{ source('wh', 'clients') }}`).
    pub verbatim_tables: bool,
    /// The thresholds bound as query parameters instead of literals: the SQL text of
    /// each placeholder, `fullThreshold`'s then `partialThreshold`'s ([`PARAMS`]).
    pub params: Option<[String; 2]>,
}

/// The query parameters of `--params`: the policy value and the parameter's name.
pub const PARAMS: [(&str, &str); 2] = [
    ("fullThreshold", "full_threshold"),
    ("partialThreshold", "partial_threshold"),
];

/// How the overrides table names a pair: by rulebench's key strings, or by the rows'
/// key fields themselves (a column per key field and side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::VariantArray, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum OverrideKeys {
    /// `source_key`, `target_key`: the engine's key strings (`site=BER|patientNo=1`).
    #[default]
    Strings,
    /// `source_<field>`, …, `target_<field>`, …: the key fields' values, typed as the
    /// datasets' tables type them; NULL matches NULL.
    Fields,
}

impl OverrideKeys {
    /// The overrides table's column for a side's key field (`source_site`).
    pub fn column(side: Side, field: &str) -> String {
        format!("{}_{field}", side.name())
    }
}

/// A compiled query, and the rules it leaves out (partial compilation only).
#[derive(Debug, Clone)]
pub struct Compiled {
    pub sql: String,
    /// Why each rule left out does not translate, in the page's order.
    pub refused: Vec<SqlError>,
}

/// The long shape's columns.
pub const LONG_COLUMNS: &[&str] = &["source_key", "target_key", "target_id", "rule_id", "passed"];

impl Options {
    /// A table's name in the query: quoted part by part, or as given.
    fn table(&self, name: &str) -> String {
        if self.verbatim_tables {
            name.to_owned()
        } else {
            self.dialect.table_ident(name)
        }
    }

    /// Whether the query has the selection columns (`--all`, or one source).
    fn with_selection(&self) -> bool {
        self.selection || self.select.is_some()
    }

    pub fn new(dialect: Dialect) -> Options {
        Options {
            dialect,
            select: None,
            selection: false,
            source_table: "source".into(),
            target_table: "target".into(),
            overrides_table: Some("overrides".into()),
            provenance: None,
            long: false,
            columns: Default::default(),
            partial: false,
            override_keys: OverrideKeys::Strings,
            verbatim_tables: false,
            params: None,
        }
    }
}

/// The output columns the query adds besides one per rule.
pub const PAIR_COLUMNS: &[&str] = &["source_key", "target_key", "target_id"];
pub const VERDICT_COLUMNS: &[&str] = &["score", "verdict", "reason"];
pub const SELECTION_COLUMNS: &[&str] = &["selection_verdict", "recommended_target"];

/// The thresholds bound as parameters, and how the engine meets them: `rb_full`,
/// `rb_partial` as bound; when the weights have units (`total_units`: the scored rules'
/// total), `rb_exact` where both thresholds have at most [`EXACT_PLACES`] decimal places
/// and every product stays below 2^53 — as [`Scoring`] decides — with `rb_scale` (10^t,
/// t their places) and the thresholds in its units.
///
/// [`EXACT_PLACES`]: crate::verdict::EXACT_PLACES
fn policy_cte(d: Dialect, o: &Options, total_units: Option<f64>) -> String {
    let params = o.params.as_ref().expect("bound thresholds");
    let bound = format!(
        "SELECT {} AS rb_full, {} AS rb_partial",
        d.to_double(&params[0]),
        d.to_double(&params[1])
    );
    let Some(total) = total_units else {
        return format!(
            "rb_policy AS (\n  SELECT rb_full, rb_partial, FALSE AS rb_exact\n  FROM ({bound}) AS rb_bound\n),\n"
        );
    };
    // A number's decimal places, as its shortest decimal has them (10: more than 9, or
    // negative).
    let places = |x: &str| {
        let mut cases = format!("CASE WHEN {x} < 0 THEN 10");
        for p in 0..=crate::verdict::EXACT_PLACES {
            let scale = d.double(10f64.powi(p as i32));
            let _ = write!(cases, " WHEN round({x} * {scale}) / {scale} = {x} THEN {p}");
        }
        cases.push_str(" ELSE 10 END");
        cases
    };
    let mut scale = String::from(
        "CASE CASE WHEN rb_full_places > rb_partial_places THEN rb_full_places ELSE rb_partial_places END",
    );
    for p in 0..=crate::verdict::EXACT_PLACES {
        let _ = write!(scale, " WHEN {p} THEN {}", d.double(10f64.powi(p as i32)));
    }
    scale.push_str(" END");
    let bound_limit = d.double(crate::verdict::EXACT_BOUND);
    let total = d.double(total);
    format!(
        "rb_policy AS (\n  SELECT\n    rb_full,\n    rb_partial,\n    rb_scale,\n    rb_full_units,\n    rb_partial_units,\n    COALESCE(rb_scale IS NOT NULL\n      AND {total} * rb_scale < {bound_limit}\n      AND {total} * rb_full_units < {bound_limit}\n      AND {total} * rb_partial_units < {bound_limit}, FALSE) AS rb_exact\n  FROM (\n    SELECT rb_full, rb_partial, rb_scale, round(rb_full * rb_scale) AS rb_full_units, round(rb_partial * rb_scale) AS rb_partial_units\n    FROM (\n      SELECT rb_full, rb_partial, {scale} AS rb_scale\n      FROM (SELECT rb_full, rb_partial, {} AS rb_full_places, {} AS rb_partial_places FROM ({bound}) AS rb_bound) AS rb_places\n    ) AS rb_scaled\n  ) AS rb_units\n),\n",
        places("rb_full"),
        places("rb_partial"),
    )
}

/// The page's policies as the query's header says them: `requiredMode=…, fullThreshold=…`
/// (without the thresholds when they are bound as parameters).
fn policies_note(page: &Page, params: bool) -> String {
    let mut parts = Vec::new();
    let values = [
        serde_json::to_value(&page.device_policy).unwrap_or_default(),
        serde_json::to_value(&page.selection_policy).unwrap_or_default(),
    ];
    for v in values {
        let mut flat = Vec::new();
        flatten_note(&v, &mut flat);
        parts.extend(flat.into_iter().filter(|p| {
            !(params
                && PARAMS
                    .iter()
                    .any(|(name, _)| p.starts_with(&format!("{name}="))))
        }));
    }
    sanitize(&parts.join(", "))
}

/// The leaves of a policy object as `name=value` (nested objects by their leaves).
fn flatten_note(v: &serde_json::Value, out: &mut Vec<String>) {
    if let serde_json::Value::Object(o) = v {
        for (k, v) in o {
            match v {
                serde_json::Value::Object(_) => flatten_note(v, out),
                serde_json::Value::String(s) => out.push(format!("{k}={s}")),
                other => out.push(format!("{k}={other}")),
            }
        }
    }
}

/// Compiles a page to one query. The page must be valid. Fails with every reason it
/// does not compile (with [`Options::partial`], only the page's own).
pub fn query(page: &Page, options: &Options) -> Result<Compiled, Vec<SqlError>> {
    compile(page, options)
}

/// Every reason the page does not compile, one per rule at most (for `check --sql`).
pub fn problems(page: &Page, dialect: Dialect) -> Vec<SqlError> {
    match compile(page, &Options::new(dialect)) {
        Ok(compiled) => compiled.refused,
        Err(errors) => errors,
    }
}

/// The rules that compile and those that do not (rule id → error).
pub fn rule_report(page: &Page, dialect: Dialect) -> Vec<(String, Option<SqlError>)> {
    let errors = problems(page, dialect);
    page.rules
        .iter()
        .map(|r| {
            let e = errors
                .iter()
                .find(|e| e.rule.as_deref() == Some(r.id.as_str()))
                .cloned();
            (r.id.clone(), e)
        })
        .collect()
}

fn compile(page: &Page, o: &Options) -> Result<Compiled, Vec<SqlError>> {
    let d = o.dialect;
    let mut errors = Vec::new();
    // Partial compilation: the rules left out, by index.
    let mut refused: Vec<SqlError> = Vec::new();
    let mut left_out = vec![false; page.rules.len()];
    let src_schema = Schema::of(&page.source, true);
    let tgt_schema = Schema::of(&page.target, true);
    let src_raw = Schema::of(&page.source, false);
    let tgt_raw = Schema::of(&page.target, false);

    // Rules first: their fields decide the row projections.
    let mut compiler = Compiler::new(d, &src_schema, &tgt_schema, page);
    let mut rule_sql = Vec::new();
    for (i, rule) in page.rules.iter().enumerate() {
        let logic = compiler.rule(&rule.logic, &format!("/rules/{i}/logic"));
        // A rule with `appliesWhen` is NULL where it does not apply (n/a).
        let condition = rule
            .applies_when
            .as_ref()
            .map(|c| compiler.rule(&c.logic, &format!("/rules/{i}/appliesWhen")))
            .transpose();
        let sql = match (logic, condition) {
            (Ok(logic), Ok(None)) => Ok(logic),
            (Ok(logic), Ok(Some(applies))) => Ok(format!(
                "CASE WHEN {} THEN {} END",
                indent(&applies, 2),
                indent(&logic, 2)
            )),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        match sql {
            Ok(sql) => rule_sql.push(sql),
            Err(mut e) => {
                e.rule = Some(rule.id.clone());
                if o.partial {
                    refused.push(e);
                    left_out[i] = true;
                    rule_sql.push(d.null_bool().to_owned());
                } else {
                    errors.push(e);
                    rule_sql.push(String::new());
                }
            }
        }
    }
    // Output column names: one per rule, beside the query's own.
    let mut names: Vec<String> = PAIR_COLUMNS
        .iter()
        .chain(VERDICT_COLUMNS)
        .chain(if o.with_selection() {
            SELECTION_COLUMNS
        } else {
            &[]
        })
        .map(|n| (*n).to_owned())
        .collect();
    for (i, rule) in page.rules.iter().enumerate() {
        let folded = d.fold_ident(&rule.id);
        let clash = |why: String| SqlError {
            rule: Some(rule.id.clone()),
            pointer: format!("/rules/{i}/id"),
            operator: None,
            why,
            hint: Some("give the rule another id".into()),
        };
        if let Some(other) = names.iter().find(|n| d.fold_ident(n) == folded) {
            errors.push(clash(format!(
                "its column would have the same name as the column `{other}` in {}",
                d.name()
            )));
        }
        if rule.id.starts_with("rb_") {
            errors.push(clash(
                "ids starting with `rb_` are the query's own columns".into(),
            ));
        }
        names.push(rule.id.clone());
    }
    // The query's own columns start with `rb_`: a field so named would be read in
    // their place.
    for side in [Side::Source, Side::Target] {
        for field in compiler.fields(side) {
            if field.starts_with("rb_") {
                errors.push(SqlError::page(
                    format!("/{}", side.name()),
                    format!(
                        "field `{field}`: names starting with `rb_` are the query's own columns (hint: rename the field in the page)"
                    ),
                ));
            }
        }
    }
    for name in &names {
        if let Err(why) = d.check_ident(name) {
            errors.push(SqlError::page("/rules", format!("column `{name}`: {why}")));
        }
    }

    let source_cte = rows_cte(
        page,
        Side::Source,
        &src_raw,
        &src_schema,
        compiler.fields(Side::Source),
        o,
    );
    let target_cte = rows_cte(
        page,
        Side::Target,
        &tgt_raw,
        &tgt_schema,
        compiler.fields(Side::Target),
        o,
    );
    let (source_cte, target_cte) = match (source_cte, target_cte) {
        (Ok(s), Ok(t)) => (s, t),
        (s, t) => {
            errors.extend(s.err());
            errors.extend(t.err());
            return Err(errors);
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }

    let ident = |n: &str| d.ident(n);
    let mut q = String::new();
    let revision_note = format!(
        "-- rulebench: page {}{} compiled to {} SQL{}.\n-- Per pair: one boolean column per rule, the score, the verdict and its reason{}.\n-- Policies (as literals): {}.\n",
        sanitize(&page.id),
        o.provenance
            .as_ref()
            .map_or_else(String::new, |(rev, _)| format!(" at revision {rev}")),
        d.name(),
        o.provenance
            .as_ref()
            .map_or_else(String::new, |(_, version)| format!(
                " by rulebench {}",
                sanitize(version)
            )),
        if o.long {
            " — here in the long shape: a row per (source, target, rule) with the rule's outcome"
        } else if o.with_selection() {
            "; per source: the selection verdict and the recommended target"
        } else {
            ""
        },
        policies_note(page, o.params.is_some())
    );
    q.push_str(&revision_note);
    if let Some(params) = &o.params {
        let bound: Vec<String> = PARAMS
            .iter()
            .zip(params)
            .map(|((policy, _), placeholder)| {
                let value = match *policy {
                    "fullThreshold" => page.device_policy.full_threshold,
                    _ => page.device_policy.partial_threshold,
                };
                format!("{policy} as {} (the page's {value})", sanitize(placeholder))
            })
            .collect();
        let _ = writeln!(
            q,
            "-- Bound as parameters (doubles): {}; a threshold of at most {} decimal places is met exactly, as the engine meets it.",
            bound.join(", "),
            crate::verdict::EXACT_PLACES
        );
    }
    if !refused.is_empty() {
        let _ = writeln!(
            q,
            "-- Not translated ({} of {} rules: NULL columns; the score, verdict, reason and selection are NULL where they could change):",
            refused.len(),
            page.rules.len()
        );
        for e in &refused {
            let _ = writeln!(q, "--   {}", sanitize(&e.to_string()).replace('\n', " "));
        }
    }
    q.push_str("WITH\n");
    let _ = writeln!(q, "source_rows AS (\n{source_cte}\n),");
    let _ = writeln!(q, "target_rows AS (\n{target_cte}\n),");

    // Every rule's outcome per pair.
    let mut outcome_columns = String::new();
    for (i, (rule, sql)) in page.rules.iter().zip(&rule_sql).enumerate() {
        let why = if left_out[i] {
            "\n    -- not translated: see the header"
        } else {
            ""
        };
        let _ = write!(
            outcome_columns,
            ",\n    -- {}{why}\n    {} AS {}",
            sanitize(&rule.name).replace('\n', " "),
            indent(sql, 4),
            ident(&rule.id)
        );
    }
    let by_fields = o.override_keys == OverrideKeys::Fields && o.overrides_table.is_some();
    if by_fields {
        for (side, alias) in [(Side::Source, "s"), (Side::Target, "t")] {
            for i in 0..page.dataset(side).key.len() {
                let _ = write!(outcome_columns, ",\n    {alias}.rb_k{i} AS rb_{alias}k{i}");
            }
        }
    }

    // The tally: passes counted per distinct weight, then Σ weight × count (the engine's
    // own order of floating-point operations, so scores are equal to the last bit). In
    // exact scoring the weights are whole units (integers) and every sum is exact.
    let policy = &page.device_policy;
    let weights = RuleWeight::of_rules(&page.rules);
    let scoring = Scoring::new(policy, &weights);
    // With the thresholds bound at run time, exactness is decided there: the weights'
    // units for exact scores and, where they differ from the weights, the weights
    // themselves for scores in double precision (tallied as `rb_passed_w`, `rb_total_w`).
    let bound_units = o
        .params
        .as_ref()
        .and_then(|_| Scoring::weight_units(policy, &weights));
    let raw: Vec<f64> = weights.iter().map(|w| w.weight).collect();
    let weight_sets: Vec<(&str, Vec<f64>)> = match (&o.params, &bound_units) {
        (None, _) => vec![("", scoring.rules.iter().map(|r| r.weight).collect())],
        (Some(_), Some((_, units, _))) if *units != raw => {
            vec![("", units.clone()), ("_w", raw.clone())]
        }
        (Some(_), _) => vec![("", raw.clone())],
    };
    let by_weight_of = |ws: &[f64]| -> Vec<(f64, Vec<usize>)> {
        let mut by_weight: Vec<(f64, Vec<usize>)> = Vec::new();
        for (i, w) in weights.iter().enumerate() {
            if Tally::scores(policy, *w) {
                match by_weight.iter_mut().find(|(x, _)| *x == ws[i]) {
                    Some((_, rules)) => rules.push(i),
                    None => by_weight.push((ws[i], vec![i])),
                }
            }
        }
        by_weight
    };
    let pass = |i: usize| format!("o.{}", ident(&page.rules[i].id));
    let partial_query = !refused.is_empty();
    let applies_somewhere = page.rules.iter().any(|r| r.applies_when.is_some());
    // Per set of weights: (passed, passed with the rules left out passing, total).
    let sums = |by_weight: &[(f64, Vec<usize>)]| -> (String, String, String) {
        // Σ weight × count over the weights, in the engine's order.
        let weighted = |count: &dyn Fn(usize) -> String| -> String {
            let mut sum = String::new();
            for (k, (w, rules)) in by_weight.iter().enumerate() {
                let counted = rules
                    .iter()
                    .map(|&i| count(i))
                    .collect::<Vec<_>>()
                    .join(" + ");
                let term = format!("{} * ({counted})", d.double(*w));
                sum = if k == 0 {
                    format!("({term})")
                } else {
                    format!("({sum}\n      + {term})")
                };
            }
            sum
        };
        // A rule left out counts as failed in the low bound (its NULL is no pass) and as
        // passed in the high one; it always counts in the total (it may apply).
        if by_weight.is_empty() {
            return (d.double(0.0), d.double(0.0), d.double(0.0));
        }
        (
            weighted(&|i| format!("CASE WHEN {} THEN 1 ELSE 0 END", pass(i))),
            weighted(&|i| {
                if left_out[i] {
                    "1".to_owned()
                } else {
                    format!("CASE WHEN {} THEN 1 ELSE 0 END", pass(i))
                }
            }),
            if applies_somewhere {
                // Σ weight × the rules that apply (a rule is NULL where it does not).
                weighted(&|i| {
                    if page.rules[i].applies_when.is_some() && !left_out[i] {
                        format!("CASE WHEN {} IS NULL THEN 0 ELSE 1 END", pass(i))
                    } else {
                        "1".to_owned()
                    }
                })
            } else {
                d.double(
                    by_weight
                        .iter()
                        .map(|(w, rules)| w * rules.len() as f64)
                        .sum(),
                )
            },
        )
    };
    // Whether a required rule fails: in the low bound a required rule left out fails,
    // in the high one it passes.
    let required_failed_in = |high: bool| -> String {
        let terms: Vec<String> = weights
            .iter()
            .enumerate()
            .filter(|(i, w)| w.required && !(high && left_out[*i]))
            .map(|(i, _)| {
                if left_out[i] {
                    "TRUE".to_owned()
                } else if page.rules[i].applies_when.is_some() {
                    // n/a (NULL) is never a required failure.
                    format!("COALESCE(NOT {}, FALSE)", pass(i))
                } else {
                    format!("NOT {}", pass(i))
                }
            })
            .collect();
        if terms.is_empty() {
            "FALSE".to_owned()
        } else {
            terms.join(" OR ")
        }
    };
    let mut sum_columns = String::new();
    for (suffix, ws) in &weight_sets {
        let (passed, passed_hi, total) = sums(&by_weight_of(ws));
        let _ = write!(
            sum_columns,
            ",\n    {passed} AS rb_passed{suffix},\n    {total} AS rb_total{suffix}"
        );
        if partial_query {
            let _ = write!(sum_columns, ",\n    {passed_hi} AS rb_passed_hi{suffix}");
        }
    }
    let bounds_columns = if partial_query {
        format!(
            ",\n    {} AS rb_required_failed_hi",
            required_failed_in(true)
        )
    } else {
        String::new()
    };
    if o.params.is_some() {
        q.push_str(&policy_cte(
            d,
            o,
            bound_units.as_ref().map(|(_, _, total)| *total),
        ));
    }
    let tallies_select = format!(
        "  SELECT\n    o.*{sum_columns},\n    {} AS rb_required_failed{bounds_columns},\n    {} AS rb_override\n",
        required_failed_in(false),
        if o.overrides_table.is_some() {
            "ov.value"
        } else {
            d.null_bool()
        }
    );
    let mut overrides_join = String::new();
    if let Some(table) = &o.overrides_table {
        let on = if by_fields {
            // Each key field's value, NULL matching NULL (an absent key field is part
            // of the key, as in the engine).
            let mut terms = Vec::new();
            for (side, alias) in [(Side::Source, "s"), (Side::Target, "t")] {
                for (i, field) in page.dataset(side).key.iter().enumerate() {
                    terms.push(d.same(
                        &format!("ov.{}", d.ident(&OverrideKeys::column(side, field))),
                        &format!("o.rb_{alias}k{i}"),
                    ));
                }
            }
            terms.join("\n      AND ")
        } else {
            "ov.source_key = o.rb_source AND ov.target_key = o.rb_target".to_owned()
        };
        let _ = writeln!(
            overrides_join,
            "  LEFT JOIN {} AS ov\n    ON {on}",
            o.table(table)
        );
    }

    // The score, the verdict and the reason of a tally (`hi`: the high bound's, `_hi`),
    // as SQL expressions.
    let two_sets = weight_sets.len() == 2;
    let verdict_of = |hi: &str| -> (String, String, String) {
        let required_failed = format!("rb_required_failed{hi}");
        let required_failed = required_failed.as_str();
        // The score: passed / total weight, 1 when no scored rule applies.
        let score_of = |set: &str| {
            format!(
                "(CASE WHEN rb_total{set} > 0 THEN rb_passed{hi}{set} / rb_total{set} ELSE {} END)",
                d.double(1.0)
            )
        };
        let passed = format!("rb_passed{hi}");
        // The device policy: a score meets a threshold as the engine's scoring says, by
        // exact comparison of units (`passed × 10^t ≥ total × threshold units`) or in
        // double precision; with bound thresholds, whichever the engine would choose for
        // the values bound (`p.rb_exact`).
        let (score, full, partial) = match (&o.params, scoring.exact()) {
            (None, Some(e)) => (
                score_of(""),
                format!(
                    "{passed} * {} >= rb_total * {}",
                    d.double(e.scale),
                    d.double(e.full)
                ),
                format!(
                    "{passed} * {} >= rb_total * {}",
                    d.double(e.scale),
                    d.double(e.partial)
                ),
            ),
            (None, None) => {
                let score = score_of("");
                (
                    score.clone(),
                    format!("{score} >= {}", d.double(policy.full_threshold)),
                    format!("{score} >= {}", d.double(policy.partial_threshold)),
                )
            }
            (Some(_), _) => {
                let double = score_of(if two_sets { "_w" } else { "" });
                let score = if two_sets {
                    format!(
                        "CASE WHEN p.rb_exact THEN {} ELSE {double} END",
                        score_of("")
                    )
                } else {
                    double.clone()
                };
                let meets = |threshold: &str| {
                    if bound_units.is_some() {
                        format!(
                            "CASE WHEN p.rb_exact THEN {passed} * p.rb_scale >= rb_total * p.rb_{threshold}_units ELSE {double} >= p.rb_{threshold} END"
                        )
                    } else {
                        format!("{double} >= p.rb_{threshold}")
                    }
                };
                (score, meets("full"), meets("partial"))
            }
        };
        let by_score = |v: bool| {
            if v {
                format!("WHEN {full} THEN 2\n      WHEN {partial} THEN 1\n      ELSE 0")
            } else {
                format!(
                    "WHEN {full} THEN 'full'\n      WHEN {partial} THEN 'partial'\n      ELSE 'low-score'"
                )
            }
        };
        let (required_verdict, required_reason) = match policy.required_mode {
            RequiredMode::AnyRequiredFailIs0 => (
                format!("WHEN {required_failed} THEN 0\n      "),
                format!("WHEN {required_failed} THEN 'required-fail'\n      "),
            ),
            RequiredMode::AnyRequiredFailCapsAtPartial => (
                format!(
                    "WHEN {required_failed} THEN CASE WHEN {partial} THEN 1 ELSE 0 END\n      "
                ),
                format!(
                    "WHEN {required_failed} THEN CASE WHEN {partial} THEN 'required-fail' ELSE 'low-score' END\n      "
                ),
            ),
            RequiredMode::IgnoreRequired => (String::new(), String::new()),
        };
        (
            score,
            format!(
                "CASE\n      WHEN rb_override IS NOT NULL THEN CASE WHEN rb_override THEN 2 ELSE 0 END\n      {required_verdict}{}\n    END",
                by_score(true)
            ),
            format!(
                "CASE\n      WHEN rb_override IS NOT NULL THEN 'override'\n      {required_reason}{}\n    END",
                by_score(false)
            ),
        )
    };
    let (score, verdict, reason) = verdict_of("");
    let policy_join = if o.params.is_some() {
        "\n  CROSS JOIN rb_policy AS p"
    } else {
        ""
    };
    let bounds = partial_query.then(|| {
        // The bounds: every rule left out failing, and every one passing. The verdict
        // only grows with a rule's outcome (fail, n/a, pass), so where the two agree no
        // outcome of the rules left out changes it; elsewhere it is NULL.
        let (score_hi, verdict_hi, reason_hi) = verdict_of("_hi");
        format!(
            "{score} AS rb_score_lo,\n    {score_hi} AS rb_score_hi,\n    {verdict} AS rb_verdict_lo,\n    {verdict_hi} AS rb_verdict_hi,\n    {reason} AS rb_reason_lo,\n    {reason_hi} AS rb_reason_hi"
        )
    });
    // The steps from rows to verdicts, their names prefixed with `p` (`p_outcomes`, …),
    // over the rows named `rows` as `s`, carrying the columns `carry` of those rows.
    let steps = |p: &str, rows: &str, carry: &str| -> String {
        let mut out = format!(
            "{p}outcomes AS (\n  SELECT\n    s.rb_key AS rb_source,\n    t.rb_key AS rb_target,\n    t.rb_id,\n    t.rb_priority{carry}{outcome_columns}\n  FROM {rows} AS s\n  CROSS JOIN target_rows AS t\n),\n{p}tallies AS (\n{tallies_select}  FROM {p}outcomes AS o\n{overrides_join}),\n"
        );
        match &bounds {
            Some(bounds) => {
                let _ = write!(
                    out,
                    "{p}bounds AS (\n  SELECT\n    {p}tallies.*,\n    {bounds}\n  FROM {p}tallies{policy_join}\n),\n{p}verdicts AS (\n  SELECT\n    {p}bounds.*,\n    CASE WHEN rb_score_lo = rb_score_hi THEN rb_score_lo END AS rb_score,\n    CASE WHEN rb_verdict_lo = rb_verdict_hi THEN rb_verdict_lo END AS rb_verdict,\n    CASE WHEN rb_reason_lo = rb_reason_hi THEN rb_reason_lo END AS rb_reason\n  FROM {p}bounds\n)"
                );
            }
            None => {
                let _ = write!(
                    out,
                    "{p}verdicts AS (\n  SELECT\n    {p}tallies.*,\n    {score} AS rb_score,\n    {verdict} AS rb_verdict,\n    {reason} AS rb_reason\n  FROM {p}tallies{policy_join}\n)"
                );
            }
        }
        out
    };

    let rule_columns: String = page
        .rules
        .iter()
        .map(|r| format!(",\n  v.{}", ident(&r.id)))
        .collect();
    let pair_columns =
        "  v.rb_source AS source_key,\n  v.rb_target AS target_key,\n  v.rb_id AS target_id";
    let verdict_columns =
        ",\n  v.rb_score AS score,\n  v.rb_verdict AS verdict,\n  v.rb_reason AS reason";
    if o.long {
        // A row per (pair, rule): one branch per rule over the pairs' outcomes, each
        // reading its rule's column alone.
        // Rules left out have no outcome: no rows.
        q.push_str(&steps("", "source_rows", ""));
        let branches: Vec<String> = page
            .rules
            .iter()
            .zip(&left_out)
            .filter(|(_, out)| !**out)
            .map(|(r, _)| {
                format!(
                    "SELECT\n  o.rb_source AS source_key,\n  o.rb_target AS target_key,\n  o.rb_id AS target_id,\n  {} AS rule_id,\n  o.{} AS passed\nFROM outcomes AS o",
                    d.string(&r.id),
                    ident(&r.id)
                )
            })
            .collect();
        q.push('\n');
        if branches.is_empty() {
            // No rule: no row, the same columns.
            q.push_str("SELECT\n  o.rb_source AS source_key,\n  o.rb_target AS target_key,\n  o.rb_id AS target_id,\n  NULL AS rule_id,\n  NULL AS passed\nFROM outcomes AS o\nWHERE 1 = 0");
        } else {
            q.push_str(&branches.join("\nUNION ALL\n"));
        }
    } else if o.with_selection() {
        // The selection policy over each source's targets, and the recommendation: the
        // engine's total order (verdict, score, priority, then the smallest id).
        let sp = &page.selection_policy;
        // The selection verdict of the per-source best and worst verdicts (`suffix`:
        // of the bounds' columns, in partial compilation).
        let selection_of = |suffix: &str| {
            let full_when = match sp.aggregate.mode {
                AggregateMode::AnyDeviceFullIsCompatible => format!("rb_best{suffix} = 2"),
                AggregateMode::AllDevicesFullIsCompatible => format!("rb_worst{suffix} = 2"),
            };
            let partial_when = match sp.aggregate.else_mode {
                ElseMode::AnyDevicePartialIsPartial => {
                    format!("\n      WHEN rb_best{suffix} >= 1 THEN 1")
                }
                ElseMode::None => String::new(),
            };
            format!("CASE\n      WHEN {full_when} THEN 2{partial_when}\n      ELSE 0\n    END")
        };
        let verdict_extremes = |suffix: &str, of: &str| {
            format!(",\n      MAX({of}) AS rb_best{suffix},\n      MIN({of}) AS rb_worst{suffix}")
        };
        // In partial compilation: the selection of each bound (equal: no rule left out
        // changes it), and whether a pair is open (its verdict or score NULL), which
        // leaves the recommendation NULL.
        let (group_bounds, extremes, selection, open) = if partial_query {
            (
                ", rb_verdict_lo, rb_verdict_hi",
                format!(
                    "{}{},\n      MAX(CASE WHEN rb_verdict IS NULL OR rb_score IS NULL THEN 1 ELSE 0 END) AS rb_open",
                    verdict_extremes("_lo", "rb_verdict_lo"),
                    verdict_extremes("_hi", "rb_verdict_hi")
                ),
                format!(
                    "CASE WHEN {lo} = {hi} THEN {lo} END",
                    lo = indent(&selection_of("_lo"), 2),
                    hi = indent(&selection_of("_hi"), 2)
                ),
                ",\n    rb_open",
            )
        } else {
            ("", verdict_extremes("", "rb_verdict"), selection_of(""), "")
        };
        // Where the recommendation is given, over the selection columns of `sel`.
        let recommend_when = |sel: &str| {
            if partial_query {
                format!("{sel}.rb_selection > 0 AND {sel}.rb_open = 0")
            } else {
                format!("{sel}.rb_selection > 0")
            }
        };
        // The selection CTEs over the verdicts `{p}verdicts`, named `{p}selections`:
        // DuckDB and Spark take the first target in one aggregate per source, the
        // smallest by (-verdict, -score, -priority, id) — 14% faster than ranking groups
        // at 100M pairs in DuckDB (27.9 s against 32.4 s). Elsewhere the pairs are
        // first grouped by what orders them (verdict, score, priority: few distinct
        // values), keeping each group's smallest id, and the window ranks those groups,
        // not every pair.
        let selection_ctes = |p: &str| -> String {
            match d
                .min_by(
                    "rb_id",
                    &["-rb_verdict", "-rb_score", "-rb_priority", "rb_id"],
                )
                .filter(|_| !partial_query)
            {
                Some(first) => format!(
                    ",\n{p}selections AS (\n  SELECT\n    rb_source,\n    {selection} AS rb_selection,\n    rb_first\n  FROM (\n    SELECT\n      rb_source{extremes},\n      CASE WHEN MAX(rb_verdict) > 0 THEN {first} END AS rb_first\n    FROM {p}verdicts\n    GROUP BY rb_source\n  ) AS per_source\n)"
                ),
                None => format!(
                    ",\ngroups AS (\n  SELECT\n    rb_source,\n    rb_verdict,\n    rb_score,\n    rb_priority{group_bounds},\n    MIN({id}) AS rb_id\n  FROM {p}verdicts\n  GROUP BY rb_source, rb_verdict, rb_score, rb_priority{group_bounds}\n),\nranked AS (\n  SELECT\n    groups.*,\n    ROW_NUMBER() OVER (\n      PARTITION BY rb_source\n      ORDER BY rb_verdict DESC, rb_score DESC, rb_priority DESC, {id} ASC\n    ) AS rb_rank\n  FROM groups\n),\n{p}selections AS (\n  SELECT\n    rb_source,\n    {selection} AS rb_selection,\n    rb_first{open}\n  FROM (\n    SELECT\n      rb_source{extremes},\n      MAX(CASE WHEN rb_rank = 1 AND rb_verdict > 0 THEN rb_id END) AS rb_first\n    FROM ranked\n    GROUP BY rb_source\n  ) AS per_source\n)",
                    id = d.binary_order("rb_id"),
                ),
            }
        };
        let select_columns = |sel: &str| {
            format!(
                "\nSELECT\n{pair_columns}{rule_columns}{verdict_columns},\n  {sel}.rb_selection AS selection_verdict,\n  CASE WHEN {} THEN {sel}.rb_first END AS recommended_target",
                recommend_when(sel)
            )
        };
        if o.select.is_some() {
            // One source: its pairs, then its selection joined to them.
            q.push_str(&steps("", "source_rows", ""));
            q.push_str(&selection_ctes(""));
            let _ = write!(
                q,
                "{}\nFROM verdicts AS v\nJOIN selections AS sel ON sel.rb_source = v.rb_source\nORDER BY {}",
                select_columns("sel"),
                d.binary_order("v.rb_id")
            );
        } else {
            // Sources that read the same values have the same verdicts: the selection
            // is made once per profile (the values of the fields the rules read, and
            // the source's own key where overrides name it), over the pairs of the
            // profile's first source, and each source's rows carry it into its pairs —
            // so the pairs are never joined to anything. At 100,000 sources of 9,062
            // profiles in DuckDB: 15.1 s → 4.0 s, the selection step alone 0.4 s.
            // Text under the binary collation: values the engine tells apart (`a`,
            // `A`) are two profiles whatever the column's collation.
            let mut partition: Vec<String> = compiler
                .fields(Side::Source)
                .iter()
                .map(|f| match (d, src_schema.kind(f)) {
                    (Dialect::Sqlite, _) | (_, Kind::Text) => d.binary_text(&ident(f)),
                    _ => ident(f),
                })
                .collect();
            // The rows grouped: with overrides, through the sources they name (each
            // its own profile, `rb_own`).
            let rows = match &o.overrides_table {
                None => "source_rows".to_owned(),
                Some(table) => {
                    let (keys, on) = if by_fields {
                        let columns: Vec<String> = page
                            .source
                            .key
                            .iter()
                            .map(|f| ident(&OverrideKeys::column(Side::Source, f)))
                            .collect();
                        let on: Vec<String> = columns
                            .iter()
                            .enumerate()
                            .map(|(i, c)| {
                                d.same(&format!("rb_named.{c}"), &format!("source_rows.rb_k{i}"))
                            })
                            .collect();
                        (columns.join(", "), on.join(" AND "))
                    } else {
                        (
                            "source_key".to_owned(),
                            "rb_named.source_key = source_rows.rb_key".to_owned(),
                        )
                    };
                    partition.push("rb_own".to_owned());
                    format!(
                        "(\n    SELECT\n      source_rows.*,\n      CASE WHEN rb_named.rb_hit IS NULL THEN NULL ELSE source_rows.rb_key END AS rb_own\n    FROM source_rows\n    LEFT JOIN (SELECT DISTINCT {keys}, 1 AS rb_hit FROM {} AS ov) AS rb_named\n      ON {on}\n  ) AS rb_owned",
                        o.table(table)
                    )
                }
            };
            let partition = if partition.is_empty() {
                String::new()
            } else {
                format!("PARTITION BY {}", partition.join(", "))
            };
            let open = if partial_query {
                ",\n    ps.rb_open"
            } else {
                ""
            };
            let _ = write!(
                q,
                "source_groups AS (\n  SELECT\n    *,\n    MIN(rb_key) OVER ({partition}) AS rb_rep\n  FROM {rows}\n),\nprofiles AS (\n  SELECT * FROM source_groups WHERE rb_key = rb_rep\n),\n{}{},\nselected_rows AS (\n  SELECT\n    g.*,\n    ps.rb_selection,\n    ps.rb_first{open}\n  FROM source_groups AS g\n  JOIN p_selections AS ps ON ps.rb_source = g.rb_rep\n),\n{}{}\nFROM verdicts AS v",
                steps("p_", "profiles", ""),
                selection_ctes("p_"),
                steps(
                    "",
                    "selected_rows",
                    &format!(
                        ",\n    s.rb_selection,\n    s.rb_first{}",
                        if partial_query {
                            ",\n    s.rb_open"
                        } else {
                            ""
                        }
                    )
                ),
                select_columns("v"),
            );
        }
    } else {
        q.push_str(&steps("", "source_rows", ""));
        let _ = write!(
            q,
            "\nSELECT\n{pair_columns}{rule_columns}{verdict_columns}\nFROM verdicts AS v"
        );
    }
    q.push('\n');
    if d.not_materialized() {
        // Each step is computed where it is read, never stored: a stored step would
        // hold every pair in memory (10 GB at 100M pairs in DuckDB). With `--select`
        // the source's pairs are read twice (for its selection, then per pair); with
        // the selection columns of every source, each profile's first source's pairs
        // once for the selection and every pair once for the output. Spark inlines its
        // CTEs and has no such clause.
        for name in [
            "source_rows",
            "target_rows",
            "outcomes",
            "tallies",
            "bounds",
            "verdicts",
            "p_outcomes",
            "p_tallies",
            "p_bounds",
            "p_verdicts",
            "groups",
            "ranked",
            "selections",
            "p_selections",
        ] {
            q = q.replace(
                &format!("\n{name} AS (\n"),
                &format!("\n{name} AS NOT MATERIALIZED (\n"),
            );
        }
    }
    Ok(Compiled { sql: q, refused })
}

/// The rows of one side as rules see them: the key (and, for targets, the id and the
/// priority), and every field a rule reads with the dataset's defaults and patches.
fn rows_cte(
    page: &Page,
    side: Side,
    raw: &Schema,
    effective: &Schema,
    fields: Vec<String>,
    o: &Options,
) -> Result<String, SqlError> {
    let d = o.dialect;
    let ds = page.dataset(side);
    let pointer = format!("/{}", side.name());
    let table = match side {
        Side::Source => &o.source_table,
        Side::Target => &o.target_table,
    };
    // A field's column in the table: its own name, or the one the mapping gives.
    let col = |f: &str| {
        d.ident(
            o.columns
                .get(&(side, f.to_owned()))
                .map_or(f, String::as_str),
        )
    };
    // A column read as the engine's type, whatever the warehouse made it: numbers of
    // every numeric type (DECIMAL, NUMERIC, REAL, integers) as doubles, booleans stored
    // as BOOLEAN or as 0/1 integers as booleans, fixed-width strings without padding.
    let read = |f: &str| -> String {
        let c = col(f);
        match raw.kind(f) {
            Kind::Num => d.to_double(&c),
            Kind::Bool => d.to_bool(&c),
            Kind::Text => d.to_text(&c),
            _ => c,
        }
    };
    // The key: `field=value|…`, strings bare, other values as JSON, absent as null.
    let mut key_parts = Vec::new();
    for (i, field) in ds.key.iter().enumerate() {
        let text = match raw.kind(field) {
            Kind::Null => "'null'".to_owned(),
            // With several key fields, `\` and `|` in a string are escaped, as the
            // engine's keys are.
            Kind::Text if raw.columns.contains(field) && ds.key.len() > 1 => format!(
                "COALESCE(REPLACE(REPLACE({}, {}, {}), {}, {}), 'null')",
                read(field),
                d.string("\\"),
                d.string("\\\\"),
                d.string("|"),
                d.string("\\|")
            ),
            Kind::Text if raw.columns.contains(field) => {
                format!("COALESCE({}, 'null')", read(field))
            }
            Kind::Int => format!(
                "COALESCE({}, 'null')",
                d.int_to_text(&d.to_bigint(&col(field)))
            ),
            Kind::Bool => format!(
                "CASE WHEN {c} IS NULL THEN 'null' WHEN {c} THEN 'true' ELSE 'false' END",
                c = read(field)
            ),
            other => {
                return Err(SqlError {
                    rule: None,
                    pointer: format!("{pointer}/key/{i}"),
                    operator: None,
                    why: format!(
                        "key field `{field}` holds {}: its JSON text has no faithful SQL spelling",
                        other.describe()
                    ),
                    hint: Some("key rows by string, integer or boolean fields".into()),
                });
            }
        };
        let prefix = d.string(&format!("{}{field}=", if i == 0 { "" } else { "|" }));
        key_parts.push(prefix);
        key_parts.push(text);
    }
    let key = if key_parts.is_empty() {
        "''".to_owned()
    } else {
        d.concat(&key_parts)
    };
    // Each patch names rows by key (any case, with `keyCase: insensitive`): the keys of
    // the page's rows it names, and its own.
    let patch_keys: Vec<(Vec<String>, &super::model::RowPatch)> = ds
        .patches
        .iter()
        .map(|p| {
            let mut keys = vec![p.key.clone()];
            for r in &ds.rows {
                let k = ds.row_key(r);
                if ds.key_matches(&p.key, &k) && !keys.contains(&k) {
                    keys.push(k);
                }
            }
            (keys, p)
        })
        .collect();
    // A field as rules see it: the column, or the dataset's default where it is null,
    // or the patch of the row's key.
    let effective_value = |field: &str| -> String {
        let field = field.to_owned();
        let kind = effective.kind(&field);
        let base = if raw.columns.contains(&field) {
            match raw.kind(&field) {
                Kind::Int if kind == Kind::Num || kind == Kind::Int => d.to_double(&col(&field)),
                // A column that holds no value is TEXT in the data script: its NULL
                // must not give a default or patch of another type a type error.
                Kind::Null => "NULL".to_owned(),
                Kind::Num | Kind::Bool | Kind::Text if raw.kind(&field) == kind => read(&field),
                _ => col(&field),
            }
        } else {
            "NULL".to_owned()
        };
        let with_default = match ds.defaults.get(&field) {
            Some(v) if !v.is_null() => {
                format!("COALESCE({base}, {})", expr::literal(d, v, &kind))
            }
            _ => base,
        };
        let mut value = with_default;
        let patches: Vec<(&[String], &Value)> = patch_keys
            .iter()
            .filter_map(|(keys, p)| p.set.get(&field).map(|v| (keys.as_slice(), v)))
            .collect();
        if !patches.is_empty() {
            let mut case = String::from("CASE");
            for (keys, v) in patches {
                let keys: Vec<String> = keys.iter().map(|k| d.string(k)).collect();
                let _ = write!(
                    case,
                    " WHEN rb_key_raw IN ({}) THEN {}",
                    keys.join(", "),
                    expr::literal(d, v, &kind)
                );
            }
            let _ = write!(case, " ELSE {value} END");
            value = case;
        }
        value
    };
    let mut out = format!("  SELECT\n    {key} AS rb_key");
    if side == Side::Target {
        let id = match ds.key.as_slice() {
            [single] => match raw.kind(single) {
                Kind::Text => format!("COALESCE({}, 'null')", read(single)),
                _ => {
                    // `field=value` without the `field=`.
                    format!("SUBSTR({key}, {})", single.chars().count() + 2)
                }
            },
            _ => key.clone(),
        };
        let priority = match &ds.priority {
            None => d.double(0.0),
            Some(p)
                if matches!(
                    crate::priority::read(p, &crate::infix::Fields::default()),
                    Ok(crate::priority::Priority::Expression(_)) | Err(_)
                ) =>
            {
                return Err(SqlError::page(
                    format!("{pointer}/priority"),
                    format!(
                        "the priority `{p}` is an expression, which is not translated to SQL yet (hint: compute it into a field of the target table and name the field)"
                    ),
                ));
            }
            // From the rows as rules see them (defaults and patches), as the engine.
            Some(p) => match effective.kind(p) {
                Kind::Int | Kind::Num => {
                    format!("COALESCE({}, {})", effective_value(p), d.double(0.0))
                }
                Kind::Null => d.double(0.0),
                other => {
                    return Err(SqlError::page(
                        format!("{pointer}/priority"),
                        format!(
                            "priority field `{p}` holds {}: the engine reads only numbers",
                            other.describe()
                        ),
                    ));
                }
            },
        };
        let _ = write!(out, ",\n    {id} AS rb_id,\n    {priority} AS rb_priority");
    }
    for field in fields {
        let value = effective_value(&field);
        let _ = write!(out, ",\n    {value} AS {}", d.ident(&field));
    }
    if o.override_keys == OverrideKeys::Fields && o.overrides_table.is_some() {
        // The key fields as stored, for the overrides keyed by them.
        for (i, field) in ds.key.iter().enumerate() {
            let value = match raw.kind(field) {
                _ if !raw.columns.contains(field) => "NULL".to_owned(),
                Kind::Int => d.to_bigint(&col(field)),
                _ => read(field),
            };
            let _ = write!(out, ",\n    {value} AS rb_k{i}");
        }
    }
    let mut from = format!("\n  FROM {}", o.table(table));
    if out.contains("rb_key_raw") {
        // Patches name rows by key: the key is computed once, in a subquery.
        from = format!(
            "\n  FROM (SELECT rb_table.*, {key} AS rb_key_raw FROM {} AS rb_table) AS rb_keyed",
            o.table(table)
        );
    }
    out.push_str(&from);
    if side == Side::Source
        && let Some(select) = &o.select
    {
        let _ = write!(out, "\n  WHERE {key} = {}", d.string(select));
    }
    Ok(out)
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.replace('\n', &format!("\n{pad}"))
}

// ---------------------------------------------------------------------------------------------
// Data: DDL and rows
// ---------------------------------------------------------------------------------------------

/// One table the query reads, typed: what `--data` writes, as a SQL script or as files.
#[derive(Debug, Clone)]
pub struct TableData<'a> {
    /// The table's name (`source`, or `--source-table`'s).
    pub name: String,
    /// What it holds, for a comment above it: `Clients (12 rows)`.
    pub note: String,
    /// The columns, each with its type.
    pub columns: Vec<(String, Kind)>,
    /// The rows, a value per column (`Null` for an absent field).
    pub rows: Vec<Vec<std::borrow::Cow<'a, Value>>>,
    /// Columns whose names the SQL script writes unquoted (the overrides table's own).
    pub plain: &'static [&'static str],
}

/// The tables the query reads: the source rows and the target rows as stored
/// (defaults and patches are the query's), and the overrides (with
/// [`Options::overrides_table`]) keyed as [`Options::override_keys`] says.
pub fn tables<'a>(page: &'a Page, o: &Options) -> Result<Vec<TableData<'a>>, SqlError> {
    use std::borrow::Cow;
    let d = o.dialect;
    let mut out = Vec::new();
    for (side, table) in [
        (Side::Source, &o.source_table),
        (Side::Target, &o.target_table),
    ] {
        let ds = page.dataset(side);
        let schema = Schema::of(ds, false);
        let mut seen = std::collections::HashMap::new();
        for c in &schema.columns {
            if let Err(why) = d.check_ident(c) {
                return Err(SqlError::page(
                    format!("/{}", side.name()),
                    format!("field `{c}`: {why}"),
                ));
            }
            if let Some(other) = seen.insert(d.fold_ident(c), c.clone()) {
                return Err(SqlError::page(
                    format!("/{}", side.name()),
                    format!(
                        "fields `{other}` and `{c}` are one column in {} (its names ignore case)",
                        d.name()
                    ),
                ));
            }
        }
        let null: Cow<'a, Value> = Cow::Owned(Value::Null);
        out.push(TableData {
            name: table.clone(),
            note: format!("{} ({} rows)", ds.name, ds.rows.len()),
            columns: schema
                .columns
                .iter()
                .map(|c| (c.clone(), schema.kind(c)))
                .collect(),
            rows: ds
                .rows
                .iter()
                .map(|row| {
                    schema
                        .columns
                        .iter()
                        .map(|c| row.get(c).map_or_else(|| null.clone(), Cow::Borrowed))
                        .collect()
                })
                .collect(),
            plain: &[],
        });
    }
    if let Some(table) = &o.overrides_table {
        out.push(overrides_table(page, o, table)?);
    }
    Ok(out)
}

/// The overrides table, keyed as [`Options::override_keys`] says.
fn overrides_table<'a>(
    page: &'a Page,
    o: &Options,
    table: &str,
) -> Result<TableData<'a>, SqlError> {
    use std::borrow::Cow;
    let d = o.dialect;
    let rows = override_rows(page);
    let mut columns: Vec<(String, Kind)> = Vec::new();
    let mut values: Vec<Vec<Cow<'a, Value>>> = vec![Vec::new(); rows.len()];
    match o.override_keys {
        OverrideKeys::Strings => {
            columns.push(("source_key".into(), Kind::Text));
            columns.push(("target_key".into(), Kind::Text));
            for ((s, t, _, _), v) in rows.iter().zip(&mut values) {
                v.push(Cow::Owned(Value::String(s.clone())));
                v.push(Cow::Owned(Value::String(t.clone())));
            }
        }
        OverrideKeys::Fields => {
            for (k, side) in [Side::Source, Side::Target].into_iter().enumerate() {
                let ds = page.dataset(side);
                let schema = Schema::of(ds, false);
                let by_key: std::collections::HashMap<String, &'a super::model::Row> =
                    ds.rows.iter().map(|r| (ds.row_key(r), r)).collect();
                for (i, field) in ds.key.iter().enumerate() {
                    let name = OverrideKeys::column(side, field);
                    d.check_ident(&name).map_err(|why| {
                        SqlError::page(
                            format!("/{}/key/{i}", side.name()),
                            format!("column `{name}`: {why}"),
                        )
                    })?;
                    columns.push((name, schema.kind(field)));
                    for (row, v) in rows.iter().zip(&mut values) {
                        let key = if k == 0 { &row.0 } else { &row.1 };
                        v.push(
                            by_key
                                .get(key)
                                .and_then(|r| r.get(field))
                                .map_or(Cow::Owned(Value::Null), Cow::Borrowed),
                        );
                    }
                }
            }
        }
    }
    columns.push(("value".into(), Kind::Bool));
    columns.push(("note".into(), Kind::Text));
    for ((_, _, value, note), v) in rows.iter().zip(&mut values) {
        v.push(Cow::Owned(Value::Bool(*value)));
        v.push(Cow::Owned(note.clone().map_or(Value::Null, Value::String)));
    }
    Ok(TableData {
        name: table.to_owned(),
        note: format!(
            "overrides: one row per (source, target), by {}",
            match o.override_keys {
                OverrideKeys::Strings => "the rows' keys",
                OverrideKeys::Fields => "the rows' key fields",
            }
        ),
        columns,
        rows: values,
        plain: &["source_key", "target_key", "value", "note"],
    })
}

/// A table as SQL: its `CREATE TABLE` and `INSERT`s of 500 rows.
fn table_sql(d: Dialect, t: &TableData<'_>, out: &mut String) {
    let ident = |n: &str| {
        if t.plain.contains(&n) {
            n.to_owned()
        } else {
            d.ident(n)
        }
    };
    let cols: Vec<String> = t
        .columns
        .iter()
        .map(|(c, k)| format!("  {} {}", ident(c), d.column_type(k)))
        .collect();
    let _ = writeln!(
        out,
        "\n-- {}\n{}",
        sanitize(&t.note),
        d.create_table(&t.name, &cols.join(",\n"))
    );
    let names: Vec<String> = t.columns.iter().map(|(c, _)| ident(c)).collect();
    for chunk in t.rows.chunks(500) {
        let rows: Vec<String> = chunk
            .iter()
            .map(|row| {
                let values: Vec<String> = row
                    .iter()
                    .zip(&t.columns)
                    .map(|(v, (_, kind))| match v.as_ref() {
                        Value::Null => "NULL".to_owned(),
                        v => expr::stored(d, v, kind),
                    })
                    .collect();
                format!("  ({})", values.join(", "))
            })
            .collect();
        let _ = writeln!(
            out,
            "INSERT INTO {} ({}) VALUES\n{};",
            d.ident(&t.name),
            names.join(", "),
            rows.join(",\n")
        );
    }
}

/// The DDL and the rows of the page's datasets and overrides, for a dialect: what the
/// query reads, so that a page can be loaded anywhere.
pub fn data(page: &Page, o: &Options) -> Result<String, SqlError> {
    let mut out = format!(
        "-- rulebench: the rows of page {} for {}.\n",
        sanitize(&page.id),
        o.dialect.name()
    );
    for t in tables(page, o)? {
        table_sql(o.dialect, &t, &mut out);
    }
    Ok(out)
}

/// The DDL and the rows of the overrides table alone (`sql --overrides`), keyed as
/// [`Options::override_keys`] says.
pub fn overrides_data(page: &Page, o: &Options) -> Result<String, SqlError> {
    let table = o.overrides_table.as_deref().unwrap_or("overrides");
    let mut out = String::new();
    table_sql(o.dialect, &overrides_table(page, o, table)?, &mut out);
    Ok(out)
}

/// The page's overrides as (source key, target key, value, note), by the rows' own keys,
/// one per pair (the last wins, as in the engine); orphaned ones are left out.
pub fn override_rows(page: &Page) -> Vec<(String, String, bool, Option<String>)> {
    let keys = |d: &Dataset| -> std::collections::HashMap<String, String> {
        d.rows
            .iter()
            .map(|r| {
                let k = d.row_key(r);
                (key_hash(&k), k)
            })
            .collect()
    };
    let (sources, targets) = (keys(&page.source), keys(&page.target));
    let mut out: Vec<(String, String, bool, Option<String>)> = Vec::new();
    for o in &page.overrides {
        let (Some(s), Some(t)) = (
            o.source_hash().and_then(|h| sources.get(&h)),
            o.target_hash().and_then(|h| targets.get(&h)),
        ) else {
            continue;
        };
        out.retain(|(a, b, _, _)| !(a == s && b == t));
        out.push((s.clone(), t.clone(), o.value, o.note.clone()));
    }
    out
}

#[cfg(test)]
mod tests;

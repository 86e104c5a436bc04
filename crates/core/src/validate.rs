//! Validation of rules and pages: operators, argument counts, field references, limits.
//!
//! Errors block saving; warnings do not.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::diag::{Code, Diagnostic, did_you_mean, pointer_token};
use super::engine::{self, item_scoped};
use super::model::{Dataset, Page, Side};

pub use super::diag::{MAX_DEPTH, row_too_deep, value_depth};
pub use super::schema::{DatasetSchema, RowFacts, Schema};

/// The largest weight a rule may have (weights are summed: a bound keeps every score a
/// number).
pub const MAX_WEIGHT: f64 = 1_000_000.0;

/// A rule's name and weight checked (pointers relative to the rule): the name holds a
/// letter or digit (its id is derived from it), the weight is a number from 0 to
/// [`MAX_WEIGHT`].
pub fn rule_fields(name: &str, weight: f64) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if name.trim().is_empty() {
        out.push(Diagnostic::error(
            Code::RuleName,
            "/name",
            "the rule name is empty",
        ));
    } else if !name.chars().any(char::is_alphanumeric) {
        out.push(Diagnostic::error(
            Code::RuleName,
            "/name",
            format!(
                "the rule name `{}` has no letter or digit (its id is made from them)",
                name.trim()
            ),
        ));
    }
    if !(weight.is_finite() && (0.0..=MAX_WEIGHT).contains(&weight)) {
        out.push(Diagnostic::error(
            Code::Weight,
            "/weight",
            format!(
                "weight must be a number from 0 to {MAX_WEIGHT}, got {}",
                // 1e300 reads better than its 301 digits.
                if weight.abs() >= 1e15 {
                    format!("{weight:e}")
                } else {
                    weight.to_string()
                }
            ),
        ));
    }
    out
}

/// The largest a rule's logic may be, serialized.
pub const MAX_RULE_BYTES: usize = 64 * 1024;

/// Argument counts of fixed-arity operators: (min, max).
fn arity(op: &str) -> Option<(usize, usize)> {
    Some(match op {
        "!" | "!!" => (1, 1),
        "==" | "===" | "!=" | "!==" | ">" | ">=" | "in" | "%" | "/" => (2, 2),
        "<" | "<=" => (2, 3),
        "var" => (0, 2),
        "substr" => (2, 3),
        "missing_some" => (2, 2),
        "map" | "filter" | "all" | "some" | "none" => (2, 2),
        "reduce" => (2, 3),
        "-" => (1, 2),
        "starts_with" | "ends_with" => (2, 2),
        "upper" | "lower" | "trim" | "length" | "abs" | "ceil" | "floor" => (1, 1),
        _ => return None,
    })
}

/// Validates one rule's logic against a page's schema, without the lint (this module's
/// tests; every edge calls [`crate::check::logic`]). Pointers are relative to the logic.
#[cfg(test)]
fn validate_logic(logic: &Value, schema: &Schema) -> Vec<Diagnostic> {
    validate_logic_reads(logic, schema).0
}

/// Validates one rule's logic against a page's schema (pointers relative to the logic),
/// and says whether it reads any field: the lint runs on logic that validates and reads
/// data ([`crate::check::logic`]).
pub fn validate_logic_reads(logic: &Value, schema: &Schema) -> (Vec<Diagnostic>, bool) {
    let mut out = Vec::new();
    let size = logic.to_string().len();
    if size > MAX_RULE_BYTES {
        out.push(Diagnostic::error(
            Code::RuleTooLarge,
            "",
            format!("rule is {size} bytes; the limit is {MAX_RULE_BYTES} bytes (64 KB)"),
        ));
        return (out, false);
    }
    let ops: HashSet<&'static str> = engine::operator_names().into_iter().collect();
    let mut v = Validator {
        schema,
        ops: &ops,
        out: &mut out,
        depth_reported: false,
        reads_data: false,
    };
    v.walk(logic, "", 1, false);
    let reads_data = v.reads_data;
    if !out.iter().any(Diagnostic::is_error)
        && let Err(e) = engine::compile(logic)
    {
        out.push(Diagnostic::error(
            Code::Compile,
            "",
            format!("the engine rejects this rule: {e}"),
        ));
    }
    if !out.iter().any(Diagnostic::is_error) && !reads_data {
        out.push(
            Diagnostic::warning(
                Code::ConstantLogic,
                "",
                "this rule reads no field: it has the same outcome for every pair",
            )
            .with_hint(Some(
                "read a field with {\"var\": \"source.FIELD\"} or {\"var\": \"target.FIELD\"}"
                    .into(),
            )),
        );
    }
    (out, reads_data)
}

struct Validator<'a> {
    schema: &'a Schema,
    ops: &'a HashSet<&'static str>,
    out: &'a mut Vec<Diagnostic>,
    depth_reported: bool,
    /// Whether the logic reads the data anywhere (`var`, `missing`, `missing_some`);
    /// logic that does not is constant.
    reads_data: bool,
}

impl Validator<'_> {
    fn walk(&mut self, node: &Value, ptr: &str, depth: usize, item_scope: bool) {
        // Levels are objects and arrays (as `value_depth` counts them): a scalar under
        // 64 of them is within the limit (64 levels were refused as deeper than 64).
        if depth > MAX_DEPTH && (node.is_array() || node.is_object()) {
            if !self.depth_reported {
                self.depth_reported = true;
                self.out.push(Diagnostic::error(
                    Code::TooDeep,
                    ptr,
                    format!("rule nests deeper than the limit of {MAX_DEPTH} levels"),
                ));
            }
            return;
        }
        match node {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.walk(item, &format!("{ptr}/{i}"), depth + 1, item_scope);
                }
            }
            Value::Object(map) if map.len() == 1 => {
                let (op, args) = map.iter().next().expect("one entry");
                let op_ptr = format!("{ptr}/{}", pointer_token(op));
                if !self.ops.contains(op.as_str()) {
                    let hint = did_you_mean(op, self.ops.iter().copied())
                        .map(|s| format!("did you mean `{s}`?"));
                    self.out.push(
                        Diagnostic::error(
                            Code::UnknownOperator,
                            &op_ptr,
                            format!("unknown operator `{op}`"),
                        )
                        .with_hint(hint),
                    );
                    return;
                }
                self.check_arity(op, args, &op_ptr);
                self.reads_data |= matches!(op.as_str(), "var" | "missing" | "missing_some");
                match op.as_str() {
                    "var" if !item_scope => self.check_var(args, &op_ptr),
                    "missing" if !item_scope => self.check_names(args, &op_ptr),
                    "missing_some" if !item_scope => {
                        if let Value::Array(a) = args
                            && let Some(names) = a.get(1)
                        {
                            self.check_names(names, &format!("{op_ptr}/1"));
                        }
                    }
                    _ => {}
                }
                match args {
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            let scope = item_scope || item_scoped(op, i);
                            self.walk(item, &format!("{op_ptr}/{i}"), depth + 1, scope);
                        }
                    }
                    other => self.walk(other, &op_ptr, depth + 1, item_scope),
                }
            }
            Value::Object(map) => {
                if !map.is_empty() {
                    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                    self.out.push(Diagnostic::warning(
                        Code::ObjectLiteral,
                        ptr,
                        format!(
                            "an object with {} keys ({}) is data, not an operation",
                            keys.len(),
                            keys.join(", ")
                        ),
                    ));
                }
                for (k, v) in map {
                    self.walk(
                        v,
                        &format!("{ptr}/{}", pointer_token(k)),
                        depth + 1,
                        item_scope,
                    );
                }
            }
            _ => {}
        }
    }

    fn check_arity(&mut self, op: &str, args: &Value, ptr: &str) {
        let Some((min, max)) = arity(op) else { return };
        let n = match args {
            Value::Array(a) => a.len(),
            // A lone non-array argument is one argument.
            _ => 1,
        };
        if n < min || n > max {
            let want = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            self.out.push(Diagnostic::error(
                Code::Arity,
                ptr,
                format!(
                    "`{op}` takes {want} argument{}, got {n}",
                    if max == 1 { "" } else { "s" }
                ),
            ));
        }
    }

    fn check_var(&mut self, args: &Value, ptr: &str) {
        let (path, path_ptr) = match args {
            Value::Array(a) => (a.first(), format!("{ptr}/0")),
            other => (Some(other), ptr.to_owned()),
        };
        match path {
            Some(Value::String(p)) => self.check_path(p, &path_ptr),
            // A number indexes an array item: only an item (inside map, filter, reduce,
            // all, some, none) is one; here the data is {source, target}. Held to the
            // same rule as a string path, as `{"var": "5"}` is.
            Some(v @ (Value::Number(_) | Value::Bool(_))) => self.out.push(
                Diagnostic::error(
                    Code::VarPrefix,
                    &path_ptr,
                    format!(
                        "variable `{v}` must start with `source.` or `target.` (rules see {{source, target}}; a number indexes an item only inside map, filter, reduce, all, some or none)"
                    ),
                )
                .with_hint(Some(
                    "name a field, such as {\"var\": \"source.FIELD\"}".into(),
                )),
            ),
            _ => {}
        }
    }

    fn check_names(&mut self, names: &Value, ptr: &str) {
        match names {
            Value::Array(a) => {
                for (i, n) in a.iter().enumerate() {
                    if let Value::String(p) = n {
                        self.check_path(p, &format!("{ptr}/{i}"));
                    }
                }
            }
            Value::String(p) => self.check_path(p, ptr),
            _ => {}
        }
    }

    /// A nested path (`target.added.fetch`) under a field that holds objects, which no
    /// row has: an error, with a did-you-mean over the keys beside the first one missing
    /// (said here; `true` when it was). Paths through an array index, and fields whose
    /// paths are too many to keep, are not judged.
    fn nested_unknown(&mut self, side: Side, field: &str, path: &str, ptr: &str) -> bool {
        let rest: Vec<&str> = path.split('.').skip(2).collect();
        if rest.is_empty()
            || rest
                .iter()
                .any(|s| s.is_empty() || s.parse::<usize>().is_ok())
        {
            return false;
        }
        let Some(nested) = self
            .schema
            .side(side)
            .fields
            .get(field)
            .and_then(|f| f.nested.as_ref())
            .filter(|n| !n.overflow)
        else {
            return false;
        };
        // The first segment no row has.
        let Some(missing) =
            (1..=rest.len()).find(|&k| !nested.paths.contains(&rest[..k].join(".")))
        else {
            return false;
        };
        let parent = rest[..missing - 1].join(".");
        let siblings: Vec<&str> = nested
            .paths
            .iter()
            .filter_map(|p| {
                let tail = if parent.is_empty() {
                    p.as_str()
                } else {
                    p.strip_prefix(parent.as_str())?.strip_prefix('.')?
                };
                (!tail.contains('.')).then_some(tail)
            })
            .collect();
        let under = if parent.is_empty() {
            format!("{}.{field}", side.name())
        } else {
            format!("{}.{field}.{parent}", side.name())
        };
        let hint = did_you_mean(rest[missing - 1], siblings.iter().copied())
            .map(|s| format!("did you mean `{under}.{s}`?"))
            .or_else(|| {
                (siblings.len() <= 12 && !siblings.is_empty())
                    .then(|| format!("keys under `{under}`: {}", siblings.join(", ")))
            });
        self.out.push(
            Diagnostic::error(
                Code::UnknownField,
                ptr,
                format!(
                    "no {} row has `{}` under `{under}` (in `{path}`)",
                    side.name(),
                    rest[missing - 1]
                ),
            )
            .with_hint(hint),
        );
        true
    }

    /// A context path must start with `source.` or `target.` and name a known field.
    fn check_path(&mut self, path: &str, ptr: &str) {
        let mut segments = path.split('.');
        let head = segments.next().unwrap_or_default();
        let side = match head {
            "source" => Side::Source,
            "target" => Side::Target,
            _ => {
                let candidates = self.schema.qualified_fields();
                let hint = did_you_mean(path, candidates.iter().map(String::as_str))
                    .or_else(|| {
                        candidates
                            .iter()
                            .find(|c| c.split_once('.').is_some_and(|(_, f)| f == path))
                            .cloned()
                    })
                    .map(|s| format!("did you mean `{s}`?"));
                self.out.push(
                    Diagnostic::error(
                        Code::VarPrefix,
                        ptr,
                        format!(
                            "variable `{path}` must start with `source.` or `target.` (rules see {{source, target}})"
                        ),
                    )
                    .with_hint(hint),
                );
                return;
            }
        };
        let Some(field) = segments.next() else { return };
        let schema = self.schema.side(side);
        match schema.coverage.get(field) {
            None => {
                let hint = did_you_mean(field, schema.coverage.keys().map(String::as_str))
                    .map(|s| format!("did you mean `{}.{s}`?", side.name()));
                self.out.push(
                    Diagnostic::error(
                        Code::UnknownField,
                        ptr,
                        format!("no {} row has a field `{field}` (in `{path}`)", side.name()),
                    )
                    .with_hint(hint),
                );
            }
            Some(_) if self.nested_unknown(side, field, path, ptr) => {}
            Some(&n) if n < schema.rows => self.out.push(Diagnostic::warning(
                Code::PartialField,
                ptr,
                format!(
                    "`{}.{field}` is present in only {n} of {} {} rows; the others read null",
                    side.name(),
                    schema.rows,
                    side.name()
                ),
            )),
            Some(_) => {}
        }
    }
}

/// Validates a whole page: datasets, rules, policies, overrides. Pointers are
/// relative to the page document.
/// The device policy's own checks (thresholds within 0–1, partial ≤ full): what a
/// policy change needs, without the rest of the page.
pub fn validate_device_policy(p: &super::model::DevicePolicy) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (name, value) in [
        ("fullThreshold", p.full_threshold),
        ("partialThreshold", p.partial_threshold),
    ] {
        if !(0.0..=1.0).contains(&value) {
            out.push(Diagnostic::error(
                Code::Threshold,
                format!("/devicePolicy/{name}"),
                format!("{name} must be between 0 and 1, got {value}"),
            ));
        }
    }
    if p.partial_threshold > p.full_threshold {
        out.push(Diagnostic::error(
            Code::Threshold,
            "/devicePolicy/partialThreshold",
            format!(
                "partialThreshold ({}) is above fullThreshold ({})",
                p.partial_threshold, p.full_threshold
            ),
        ));
    }
    out
}

/// The JSON Schema of page files: the one list of the keys each object may have.
pub const PAGE_SCHEMA: &str = include_str!("../../../assets/page.schema.json");

fn page_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(PAGE_SCHEMA).expect("the page schema is JSON"))
}

/// Keys a page file's objects may not have (`"requried": true`), found against the page
/// schema: each an error with its JSON pointer and a did-you-mean. `def` names the
/// schema definition the document is (`None`: a whole page; `Some("rule")`: a rule).
pub fn unknown_keys(doc: &Value, def: Option<&str>) -> Vec<Diagnostic> {
    let root = page_schema();
    let schema = match def {
        None => root,
        Some(name) => &root["$defs"][name],
    };
    let mut out = Vec::new();
    walk_keys(doc, schema, root, String::new(), &mut out);
    out
}

fn walk_keys(value: &Value, schema: &Value, root: &Value, at: String, out: &mut Vec<Diagnostic>) {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => match r.strip_prefix("#/$defs/") {
            Some(name) => &root["$defs"][name],
            None => return,
        },
        None => schema,
    };
    match value {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (key, v) in map {
                let here = format!("{at}/{}", pointer_token(key));
                match props.get(key) {
                    Some(sub) => walk_keys(v, sub, root, here, out),
                    None if closed => out.push(
                        Diagnostic::error(Code::UnknownKey, here, format!("unknown key `{key}`"))
                            .with_hint(
                                did_you_mean(key, props.keys().map(String::as_str))
                                    .map(|k| format!("did you mean `{k}`?"))
                                    .or_else(|| {
                                        Some(format!(
                                            "keys here: {}",
                                            props.keys().cloned().collect::<Vec<_>>().join(", ")
                                        ))
                                    }),
                            ),
                    ),
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk_keys(v, item, root, format!("{at}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

/// A page file's id must be a slug: ids are typed in shells, completed, and named in
/// file names and URLs, and a slug holds nothing a shell or a terminal would read as
/// anything but text. Checked where page files come in (import, `check FILE`), not on
/// stored pages (one stored under another id before stays usable; `page rename` fixes it).
pub fn page_id_slug(id: &str) -> Option<Diagnostic> {
    if id.trim().is_empty() || super::model::is_page_id(id) {
        return None;
    }
    Some(
        Diagnostic::error(
            Code::PageId,
            "/id",
            format!(
                "the page id `{}` is not a slug: lowercase letters, digits and single hyphens",
                super::text::sanitize(id)
            ),
        )
        .with_hint(Some(format!("use `{}`", super::model::slugify(id)))),
    )
}

/// How a page's rule logic is checked: the logic, the rule's `appliesWhen` condition
/// (the lint judges what the whole rule reads) and the page's schema.
pub type RuleCheck = dyn Fn(&Value, Option<&Value>, &Schema) -> Vec<Diagnostic>;

/// A page validated, one side's rows described by `facts` (its `rows` are empty),
/// each rule's logic checked by `rule_check` (validation takes the check to use, so
/// that it never calls the lint itself: [`crate::check::page_with`] passes it in).
pub fn validate_page_with(
    page: &Page,
    facts: Option<&RowFacts<'_>>,
    rule_check: &RuleCheck,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if page.format != super::model::PAGE_FORMAT {
        out.push(Diagnostic::error(
            Code::Format,
            "/format",
            format!(
                "unsupported format `{}`; expected `{}`",
                page.format,
                super::model::PAGE_FORMAT
            ),
        ));
    }
    if page.id.trim().is_empty() {
        out.push(Diagnostic::error(
            Code::PageId,
            "/id",
            "the page id is empty",
        ));
    }
    for side in [Side::Source, Side::Target] {
        validate_dataset(page.dataset(side), side, &mut out);
    }
    // Linked tables of expected outcomes: each names a file, once.
    for (i, t) in page.expectations.iter().enumerate() {
        let at = format!("/expectations/{i}/file");
        if t.file.trim().is_empty() {
            out.push(Diagnostic::error(
                Code::LinkedFile,
                at,
                "a linked table of expected outcomes names no file",
            ));
        } else if page.expectations[..i].iter().any(|o| o.file == t.file) {
            out.push(Diagnostic::error(
                Code::LinkedFile,
                at,
                format!("the table `{}` is linked twice", t.file),
            ));
        }
    }
    let schema = Schema::of_with(page, facts);
    for side in [Side::Source, Side::Target] {
        mixed_types(schema.side(side), side, &mut out);
    }
    if let Some(text) = &page.target.priority {
        priority(text, &schema.target, &mut out);
    }
    let mut ids: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, rule) in page.rules.iter().enumerate() {
        let at = format!("/rules/{i}");
        out.extend(
            rule_fields(&rule.name, rule.weight)
                .into_iter()
                .map(|d| d.under(&at)),
        );
        if let Some(&first) = ids.get(rule.id.as_str()) {
            out.push(
                Diagnostic::error(
                    Code::DuplicateRule,
                    format!("{at}/id"),
                    format!(
                        "rule id `{}` is used twice: by rule {first} (`{}`) and rule {i} (`{}`)",
                        rule.id, page.rules[first].name, rule.name
                    ),
                )
                .with_hint(Some(
                    "give one of them an \"id\" of its own (ids are made from names when absent)"
                        .into(),
                )),
            );
        } else {
            ids.insert(rule.id.as_str(), i);
        }
        let condition = rule.applies_when.as_ref().map(|c| &c.logic);
        out.extend(
            rule_check(&rule.logic, condition, &schema)
                .into_iter()
                .map(|d| d.under(&format!("{at}/logic"))),
        );
        // A condition is checked as logic is; reading one side only is what a
        // condition often does (`source.needsVision`), not a trap.
        if let Some(c) = &rule.applies_when {
            // Nor is testing a field only some rows have for presence.
            let present = super::engine::present_when_true(&c.logic);
            out.extend(
                rule_check(&c.logic, None, &schema)
                    .into_iter()
                    .filter(|d| d.code != Code::OneSided)
                    .filter(|d| {
                        d.code != Code::PartialField
                            || !super::engine::reads_one_of(&c.logic, &d.pointer, &present)
                    })
                    .map(|d| d.under(&format!("{at}/appliesWhen"))),
            );
        }
    }
    if let Some(limit) = page.plan_tier().rule_limit()
        && page.rules.len() > limit
    {
        out.push(
            Diagnostic::error(
                Code::RuleLimit,
                "/rules",
                format!("Rule limit reached ({limit}/{limit})"),
            )
            .with_hint(Some(format!(
                "the page has {} rules; plan tier `{}` allows {limit}",
                page.rules.len(),
                page.plan_tier().as_str()
            ))),
        );
    }
    let policy = validate_device_policy(&page.device_policy);
    if policy.is_empty() {
        inexact_scores(page, &mut out);
    }
    out.extend(policy);
    validate_overrides(page, facts, &mut out);
    for side in [Side::Source, Side::Target] {
        validate_patches(
            page.dataset(side),
            side,
            facts.filter(|f| f.side == side),
            &mut out,
        );
    }
    out.extend(super::assertions::validate(
        page,
        &super::assertions::Limits::default(),
    ));
    out
}

/// A warning when the page's scores cannot be exact (see [`Scoring`]): where a weight
/// or a threshold has more than nine decimal places, else at the rules.
///
/// [`Scoring`]: super::verdict::Scoring
fn inexact_scores(page: &Page, out: &mut Vec<Diagnostic>) {
    use super::verdict::{EXACT_PLACES, RuleWeight, Scoring, Tally, decimal_places};
    let weights = RuleWeight::of_rules(&page.rules);
    let policy = &page.device_policy;
    if Scoring::new(policy, &weights).exact().is_some() {
        return;
    }
    let long = |x: f64| decimal_places(x).is_none_or(|p| p > EXACT_PLACES);
    let (pointer, what) = if let Some(i) = weights
        .iter()
        .position(|w| Tally::scores(policy, *w) && long(w.weight))
    {
        (
            format!("/rules/{i}/weight"),
            format!(
                "weight {} has more than {EXACT_PLACES} decimal places",
                weights[i].weight
            ),
        )
    } else if long(policy.full_threshold) {
        (
            "/devicePolicy/fullThreshold".to_owned(),
            format!(
                "fullThreshold {} has more than {EXACT_PLACES} decimal places",
                policy.full_threshold
            ),
        )
    } else if long(policy.partial_threshold) {
        (
            "/devicePolicy/partialThreshold".to_owned(),
            format!(
                "partialThreshold {} has more than {EXACT_PLACES} decimal places",
                policy.partial_threshold
            ),
        )
    } else {
        (
            "/rules".to_owned(),
            "the weights' sum has too many digits to count exactly".to_owned(),
        )
    };
    out.push(
        Diagnostic::warning(
            Code::InexactScores,
            pointer,
            format!("{what}: scores are summed and compared in double precision, so a score equal to a threshold may miss it"),
        )
        .with_hint(Some(format!(
            "write weights and thresholds with at most {EXACT_PLACES} decimal places (0.2, 0.35, 1.5)"
        ))),
    );
}

/// The target's priority: a field some row has (else a warning: every priority is 0), or
/// an infix expression that reads the target row's fields (else an error, located).
fn priority(text: &str, schema: &DatasetSchema, out: &mut Vec<Diagnostic>) {
    let fields = super::infix::Fields(
        schema
            .fields
            .keys()
            .map(|f| format!("target.{f}"))
            .collect(),
    );
    match super::priority::read(text, &fields) {
        Ok(super::priority::Priority::Field(f)) => {
            if !schema.fields.contains_key(&f) {
                let hint = did_you_mean(&f, schema.fields.keys().map(String::as_str))
                    .map(|s| format!("did you mean `{s}`?"));
                out.push(
                    Diagnostic::warning(
                        Code::UnknownField,
                        "/target/priority",
                        format!(
                            "priority field `{}`: no target row has it, so every target's priority is 0",
                            crate::text::sanitize(&f)
                        ),
                    )
                    .with_hint(hint),
                );
            }
        }
        Ok(super::priority::Priority::Expression(logic)) => {
            let reads = super::engine::Reads::of(&logic);
            if reads.source.as_ref().is_none_or(|s| !s.is_empty()) {
                out.push(Diagnostic::error(
                    Code::InfixSyntax,
                    "/target/priority",
                    format!(
                        "priority `{}` reads the source row: a priority is the target's own (write `target.<field>`)",
                        crate::text::sanitize(text)
                    ),
                ));
            }
        }
        Err(e) => out.push(
            Diagnostic::error(
                Code::InfixSyntax,
                "/target/priority",
                format!(
                    "priority `{}`: {} at {}:{}",
                    crate::text::sanitize(text),
                    e.message,
                    e.line,
                    e.column
                ),
            )
            .with_hint(e.hint.clone()),
        ),
    }
}

/// A field whose rows hold more than one kind of value (numbers in some, text in
/// others): comparisons with it mean different things row by row.
fn mixed_types(schema: &DatasetSchema, side: Side, out: &mut Vec<Diagnostic>) {
    for (field, f) in &schema.fields {
        let kinds = f.kinds();
        if kinds.len() < 2 {
            continue;
        }
        let each: Vec<String> = kinds
            .iter()
            .map(|(kind, n, first)| {
                let row = if first.is_empty() {
                    String::new()
                } else {
                    format!(", first `{}`", crate::text::sanitize(first))
                };
                format!("{kind} in {n} row{}{row}", if *n == 1 { "" } else { "s" })
            })
            .collect();
        out.push(
            Diagnostic::warning(
                Code::MixedTypes,
                format!("/{}/rows", side.name()),
                format!(
                    "{} field `{}` holds values of more than one type: {}",
                    side.name(),
                    crate::text::sanitize(field),
                    each.join("; ")
                ),
            )
            .with_hint(Some(
                "state the type at import (--type FIELD=string|number|integer|boolean|json), or fix the rows"
                    .into(),
            )),
        );
    }
}

fn validate_dataset(d: &Dataset, side: Side, out: &mut Vec<Diagnostic>) {
    let at = format!("/{}", side.name());
    if d.key.is_empty() {
        out.push(Diagnostic::error(
            Code::Key,
            format!("{at}/key"),
            "the key names no field",
        ));
        return;
    }
    for field in d.key.iter().filter(|k| d.defaults.contains_key(*k)) {
        out.push(Diagnostic::error(
            Code::KeyDefault,
            format!("{at}/defaults/{}", pointer_token(field)),
            format!("key field `{field}` cannot have a default (every row names its own key)"),
        ));
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, row) in d.rows.iter().enumerate() {
        if row_too_deep(row) {
            out.push(Diagnostic::error(
                Code::TooDeep,
                format!("{at}/rows/{i}"),
                format!(
                    "{} row {i} nests deeper than the limit of {MAX_DEPTH} levels",
                    side.name()
                ),
            ));
        }
        for field in &d.key {
            if row.get(field).is_none_or(Value::is_null) {
                out.push(Diagnostic::error(
                    Code::KeyField,
                    format!("{at}/rows/{i}"),
                    format!(
                        "{} row {i} has no value for key field `{field}`",
                        side.name()
                    ),
                ));
            }
        }
        // The result JSON's `features[]` entries hold `name` (the rule's) beside one key
        // per target id: a target whose id is `name` would take the rule name's place.
        if side == Side::Target && d.row_id(row) == "name" {
            out.push(
                Diagnostic::warning(
                    Code::ReservedId,
                    format!("{at}/rows/{i}"),
                    "a target id `name` collides with the rule name in the result's `features[]` (that entry shows the target's outcome, not the rule name)",
                )
                .with_hint(Some("give the target another id".into())),
            );
        }
        let key = d.row_key(row);
        if let Some(first) = seen.insert(d.key_case.fold(&key).into_owned(), i) {
            out.push(Diagnostic::error(
                Code::DuplicateKey,
                format!("{at}/rows/{i}"),
                format!(
                    "{} rows {first} and {i} have the same key `{key}`",
                    side.name()
                ),
            ));
        }
    }
}

fn validate_overrides(page: &Page, facts: Option<&RowFacts<'_>>, out: &mut Vec<Diagnostic>) {
    if page.overrides.is_empty() {
        return;
    }
    // One override per pair: two would leave which one counts to chance.
    let mut pairs: std::collections::HashMap<(String, String), usize> =
        std::collections::HashMap::new();
    for (i, o) in page.overrides.iter().enumerate() {
        if let (Some(s), Some(t)) = (o.source_hash(), o.target_hash())
            && let Some(first) = pairs.insert((s, t), i)
        {
            out.push(Diagnostic::error(
                Code::DuplicateOverride,
                format!("/overrides/{i}"),
                format!("overrides {first} and {i} are for the same (source, target) pair"),
            ));
        }
    }
    let hashes = |side: Side| -> HashSet<String> {
        match facts {
            Some(f) if f.side == side => f.hashes.clone(),
            _ => {
                let d = page.dataset(side);
                d.rows
                    .iter()
                    .map(|r| super::model::key_hash(&d.row_key(r)))
                    .collect()
            }
        }
    };
    let (sources, targets) = (hashes(Side::Source), hashes(Side::Target));
    for (i, o) in page.overrides.iter().enumerate() {
        let at = format!("/overrides/{i}");
        // A key and a keyHash that name two rows: which one was meant is not ours to
        // guess.
        for (side, key, hash) in [
            ("source", &o.source_key, &o.source_key_hash),
            ("target", &o.target_key, &o.target_key_hash),
        ] {
            if let (Some(key), Some(hash)) = (key, hash)
                && super::model::key_hash(key) != hash.to_ascii_lowercase()
            {
                out.push(
                    Diagnostic::error(
                        Code::Override,
                        format!("{at}/{side}KeyHash"),
                        format!(
                            "override {i}: {side}Key `{}` and {side}KeyHash `{}` name different rows",
                            crate::text::sanitize(key),
                            crate::text::sanitize(hash)
                        ),
                    )
                    .with_hint(Some(format!(
                        "keep one of them; the keyHash of `{}` is {}",
                        crate::text::sanitize(key),
                        super::model::key_hash(key)
                    ))),
                );
            }
        }
        for (side, hash, known, key) in [
            (
                "source",
                o.source_hash(),
                &sources,
                o.source_key.as_ref().or(o.source_key_hash.as_ref()),
            ),
            (
                "target",
                o.target_hash(),
                &targets,
                o.target_key.as_ref().or(o.target_key_hash.as_ref()),
            ),
        ] {
            match hash {
                None => out.push(Diagnostic::error(
                    Code::Override,
                    &at,
                    format!("override {i} names no {side} (give {side}Key or {side}KeyHash)"),
                )),
                // Kept, inactive: a dataset reload that drops the row is not refused
                // for it, and the override applies again if the row comes back.
                Some(h) if !known.contains(&h) => {
                    let d = page.dataset(if side == "source" {
                        Side::Source
                    } else {
                        Side::Target
                    });
                    let hint = key
                        .and_then(|k| super::diag::did_you_mean_row(d, k))
                        .map(|s| format!("did you mean `{s}`?"))
                        .unwrap_or_else(|| {
                            "name a row the page has (by key, keyHash or id), or remove the override (`rulebench override rm`)"
                                .into()
                        });
                    out.push(
                        Diagnostic::warning(
                            Code::OrphanedOverride,
                            &at,
                            format!(
                                "override {i}: {side} `{}` matches no {side} row{ORPHAN_KEPT}",
                                crate::text::sanitize(key.map_or("?", String::as_str))
                            ),
                        )
                        .with_hint(Some(hint)),
                    )
                }
                Some(_) => {}
            }
        }
    }
}

/// How an orphaned override's warning ends: it stays, inactive, after a dataset change.
pub const ORPHAN_KEPT: &str = ": kept, inactive until a row with that key returns";

/// Row patches are validated like rows: each names a row by key (else it is kept,
/// inactive, with a warning: the row may come back with a reload), sets fields the
/// dataset has (with a did-you-mean), and leaves the key fields alone.
fn validate_patches(
    d: &super::model::Dataset,
    side: Side,
    facts: Option<&RowFacts<'_>>,
    out: &mut Vec<Diagnostic>,
) {
    if d.patches.is_empty() {
        return;
    }
    // The rows, or (while a dataset is imported without loading them) what is known
    // of them: their keyHashes and fields.
    let keys: Vec<String> = d.rows.iter().map(|r| d.row_key(r)).collect();
    let has_row = |key: &str| match facts {
        Some(f) => f.hashes.contains(&super::model::key_hash(key)),
        None => keys.iter().any(|k| d.key_matches(key, k)),
    };
    let known: std::collections::BTreeSet<&str> = match facts {
        Some(f) => f.fields.keys().map(String::as_str).collect::<Vec<_>>(),
        None => d
            .rows
            .iter()
            .flat_map(|r| r.keys().map(String::as_str))
            .collect::<Vec<_>>(),
    }
    .into_iter()
    .chain(d.defaults.keys().map(String::as_str))
    .collect();
    let side_name = side.name();
    for (i, p) in d.patches.iter().enumerate() {
        let at = format!("/{side_name}/patches/{i}");
        if let Some(first) = d.patches[..i]
            .iter()
            .position(|q| d.key_matches(&q.key, &p.key))
        {
            out.push(Diagnostic::error(
                Code::DuplicatePatch,
                format!("{at}/key"),
                format!(
                    "patches {first} and {i} are for the same row `{}`: merge them into one",
                    p.key
                ),
            ));
        }
        if !has_row(&p.key) {
            out.push(Diagnostic::warning(
                Code::OrphanedPatch,
                format!("{at}/key"),
                format!(
                    "patch {i}: no {side_name} row has the key `{}`: kept, inactive until it returns",
                    p.key
                ),
            ));
        }
        for field in p.set.keys() {
            if d.key.contains(field) {
                out.push(Diagnostic::error(
                    Code::PatchKeyField,
                    format!("{at}/set/{}", pointer_token(field)),
                    format!("patch {i} sets the key field `{field}`: a patch names its row by key, it cannot change it"),
                ));
            } else if !known.contains(field.as_str()) {
                // A warning: an upstream file that drops the column must not block
                // its reload; the patch still sets the field.
                out.push(
                    Diagnostic::warning(
                        Code::UnknownField,
                        format!("{at}/set/{}", pointer_token(field)),
                        format!("patch {i} sets `{field}`, a field no {side_name} row has"),
                    )
                    .with_hint(
                        did_you_mean(field, known.iter().copied())
                            .map(|s| format!("did you mean `{s}`?")),
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        let mut s = Schema::default();
        s.source.rows = 2;
        s.source.coverage.insert("needsStreaming".into(), 2);
        s.source.coverage.insert("maxLatencyMs".into(), 1);
        s.target.rows = 2;
        s.target.coverage.insert("supportsStreaming".into(), 2);
        s
    }

    fn codes(logic: Value) -> Vec<(Code, String, Option<String>)> {
        validate_logic(&logic, &schema())
            .into_iter()
            .map(|d| (d.code, d.pointer, d.hint))
            .collect()
    }

    #[test]
    fn unknown_operator_has_did_you_mean() {
        let got = codes(json!({"or": [{"==": [1, 1]}, {"som": [[], true]}]}));
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, Code::UnknownOperator);
        assert_eq!(got[0].1, "/or/1/som");
        assert_eq!(got[0].2.as_deref(), Some("did you mean `some`?"));
    }

    #[test]
    fn var_must_name_a_side_and_a_field() {
        let got = codes(json!({"==": [{"var": "target.supportStreaming"}, true]}));
        assert_eq!(got[0].0, Code::UnknownField);
        assert_eq!(got[0].1, "/==/0/var");
        assert_eq!(
            got[0].2.as_deref(),
            Some("did you mean `target.supportsStreaming`?")
        );
        let got = codes(json!({"var": "needsStreaming"}));
        assert_eq!(got[0].0, Code::VarPrefix);
        assert_eq!(
            got[0].2.as_deref(),
            Some("did you mean `source.needsStreaming`?")
        );
    }

    #[test]
    fn partial_field_is_a_warning() {
        let d = crate::check::logic(&json!({"var": "source.maxLatencyMs"}), &schema());
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].code, Code::PartialField);
        assert!(!d[0].is_error());
        // A rule reading one side only is the lint's (a warning too).
        assert_eq!(d[1].code, Code::OneSided);
        assert!(!d[1].is_error());
    }

    #[test]
    fn item_scope_vars_are_not_fields() {
        let got =
            codes(json!({"some": [{"var": "target.supportsStreaming"}, {"==": [{"var": ""}, 1]}]}));
        assert!(
            got.iter().all(|(code, ..)| *code == Code::OneSided),
            "{got:?}"
        );
    }

    #[test]
    fn arity_errors() {
        let got = codes(json!({"==": [1]}));
        assert_eq!(got[0].0, Code::Arity);
        let got = codes(json!({"!": [1, 2]}));
        assert_eq!(got[0].0, Code::Arity);
        let constant = |logic| codes(logic).iter().all(|c| c.0 == Code::ConstantLogic);
        assert!(constant(json!({"!": true})));
        assert!(constant(json!({"<": [1, 2, 3]})));
    }

    #[test]
    fn var_numbers_follow_the_path_rule() {
        // Outside an item, a number reads nothing: an error, as `{"var": "5"}` is.
        for logic in [
            json!({"var": 5}),
            json!({"var": [0, 1]}),
            json!({"var": true}),
            json!({"var": "5"}),
        ] {
            let got = codes(json!({"==": [logic.clone(), 1]}));
            assert_eq!(got[0].0, Code::VarPrefix, "{logic}: {got:?}");
        }
        // Inside an item, a number indexes it.
        let got = codes(json!({"some": [{"var": "target.pairs"}, {"==": [{"var": 0}, 1]}]}));
        assert!(got.iter().all(|c| c.0 != Code::VarPrefix), "{got:?}");
    }

    #[test]
    fn constant_logic_is_a_warning() {
        for logic in [
            json!(true),
            json!(42),
            json!({"<": [1, 2, 3]}),
            json!({"map": [[1, 2], {"+": [1, 1]}]}),
        ] {
            let got = codes(logic.clone());
            assert_eq!(got.len(), 1, "{logic}: {got:?}");
            assert_eq!(got[0].0, Code::ConstantLogic, "{logic}");
            assert!(got[0].2.as_deref().unwrap().contains("var"), "a hint");
        }
        for logic in [
            json!({"==": [{"var": "target.provider"}, "openai"]}),
            json!({"!": {"missing": ["source.id"]}}),
            json!({"!!": {"missing_some": [1, ["source.id"]]}}),
        ] {
            let got = codes(logic.clone());
            assert!(
                got.iter().all(|c| c.0 != Code::ConstantLogic),
                "{logic}: {got:?}"
            );
        }
        // An error is reported alone: no warning about logic that is wrong anyway.
        assert!(
            codes(json!({"==": [1]}))
                .iter()
                .all(|c| c.0 != Code::ConstantLogic)
        );
    }

    #[test]
    fn depth_and_size_limits_say_where() {
        let mut deep = json!(true);
        for _ in 0..70 {
            deep = json!({"!": [deep]});
        }
        let d = validate_logic(&deep, &schema());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, Code::TooDeep);
        assert!(d[0].pointer.starts_with("/!/0/!/0"), "{}", d[0].pointer);
        // Exactly 64 levels pass; 65 do not.
        let mut at_limit = json!(true);
        for _ in 0..MAX_DEPTH {
            at_limit = json!({"!": at_limit});
        }
        assert_eq!(value_depth(&at_limit), MAX_DEPTH);
        assert!(
            validate_logic(&at_limit, &schema())
                .iter()
                .all(|d| d.code != Code::TooDeep)
        );
        let over = json!({"!": at_limit});
        assert_eq!(value_depth(&over), MAX_DEPTH + 1);
        assert!(
            validate_logic(&over, &schema())
                .iter()
                .any(|d| d.code == Code::TooDeep)
        );
        let big = json!({"in": ["x", "y".repeat(70_000)]});
        let d = validate_logic(&big, &schema());
        assert_eq!(d[0].code, Code::RuleTooLarge);
        assert!(d[0].message.contains("64 KB"));
    }
}

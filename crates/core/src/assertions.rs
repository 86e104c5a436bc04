//! Verdict assertions: Jest-style matchers over a page's evaluation results.
//!
//! An [`Assertion`] names a selection (a source key, or `*` for every source), a JSONPath
//! (RFC 9535) into that selection's evaluation result (docs/result-json.md), a matcher from the
//! [registry](registry) and its expected value. Pure: model types, the matcher registry,
//! path normalisation, validation, evaluation, limits and truncation. No I/O.
//!
//! Semantics: the path resolves to zero or more values; zero values are tested
//! as a single `null`; each value runs through the matcher; the outcomes are aggregated by
//! `pathMatch` (`ANY`, the default: some value passes; `ALL`: every value passes), and `not`
//! inverts the aggregate. With `"select": "*"` the assertion must hold for every source.

use std::collections::{HashMap, HashSet};

use regex::RegexBuilder;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use serde_json_path::JsonPath;
use sha2::{Digest, Sha256};

use super::diag::{Code, Diagnostic, did_you_mean};
use super::matrix::Matrix;
pub use super::model::{Assertion, PathMatch};
use super::model::{Page, slugify};
use super::result::{self, Names, Needs, SelectionResult};

/// `select` value that runs an assertion against every source row.
pub const ALL_SOURCES: &str = "*";

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// The limits of the "Security & Safety" and "Configuration" sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Largest a page's `assertions` may be, serialized (64 KB).
    pub max_assertions_bytes: usize,
    /// Largest an assertion result's actual samples may be, serialized (512 KB); larger
    /// samples keep the whole entries that fit (still an array), `truncated` set, and
    /// the SHA-256 of all of them.
    pub max_details_bytes: usize,
    /// Longest a `toMatch` pattern may be, in characters (1024).
    pub regex_max_source_len: usize,
    /// Longest a string `toMatch` tests, in characters (100,000); longer strings are
    /// tested on their beginning.
    pub regex_max_test_len: usize,
    /// The `toMatch` flags allowed (a subset of `imsu`).
    pub regex_allowed_flags: String,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_assertions_bytes: 64 * 1024,
            max_details_bytes: 512 * 1024,
            regex_max_source_len: 1024,
            regex_max_test_len: 100_000,
            regex_allowed_flags: "imsu".to_owned(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The matcher registry
// ---------------------------------------------------------------------------------------------

/// How many arguments a matcher takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arity {
    /// No `expected` (`toBeNull`).
    None,
    /// One `expected` value.
    One,
}

/// A compiled matcher: tests one resolved value.
pub type Check = Box<dyn Fn(&Value) -> bool + Send + Sync>;

/// Why an `expected` value is unusable: where inside `expected` (a JSON pointer relative
/// to it, `""` for the value itself) and what.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedError {
    pub pointer: &'static str,
    pub message: String,
}

impl ExpectedError {
    fn new(pointer: &'static str, message: impl Into<String>) -> Self {
        ExpectedError {
            pointer,
            message: message.into(),
        }
    }
}

/// One matcher. Adding a matcher is adding one of these to [`REGISTRY`].
pub struct Matcher {
    pub name: &'static str,
    pub arity: Arity,
    /// What `expected` holds, for help texts and editors.
    pub expects: &'static str,
    /// Validates and compiles `expected` (`null` for [`Arity::None`]).
    pub compile: fn(expected: &Value, limits: &Limits) -> Result<Check, ExpectedError>,
    /// The message builder, part 1: the claim (`toEqual 2`, `not toMatch /^a/i`).
    pub describe: fn(expected: &Value, not: bool) -> String,
    /// The message builder, part 2: why one actual value does not match, when there is
    /// more to say than the value itself (`not a string`).
    pub explain: fn(actual: &Value, expected: &Value, limits: &Limits) -> Option<String>,
}

/// Every matcher, in the order help and editors list them.
pub static REGISTRY: &[Matcher] = &[
    Matcher {
        name: "toEqual",
        arity: Arity::One,
        expects: "any JSON value (deep equality: key order ignored, array order respected)",
        compile: compile_equal,
        describe: describe_to_equal,
        explain: no_explanation,
    },
    Matcher {
        name: "toBeNull",
        arity: Arity::None,
        expects: "nothing",
        compile: compile_null,
        describe: describe_to_be_null,
        explain: no_explanation,
    },
    Matcher {
        name: "toContain",
        arity: Arity::One,
        expects: "an element (the value is an array) or a substring (the value is a string)",
        compile: compile_contain,
        describe: describe_to_contain,
        explain: explain_contain,
    },
    Matcher {
        name: "toMatch",
        arity: Arity::One,
        expects: "a regular expression: \"source\" or {\"source\": …, \"flags\": \"imsu\"}",
        compile: compile_match,
        describe: describe_to_match,
        explain: explain_match,
    },
    Matcher {
        name: "toBeOneOf",
        arity: Arity::One,
        expects: "a non-empty array of options",
        compile: compile_one_of,
        describe: describe_to_be_one_of,
        explain: no_explanation,
    },
];

/// The registry, for fronts that list matchers.
pub fn registry() -> &'static [Matcher] {
    REGISTRY
}

/// The matcher with this name.
pub fn matcher(name: &str) -> Option<&'static Matcher> {
    REGISTRY.iter().find(|m| m.name == name)
}

fn claim(name: &str, expected: Option<String>, not: bool) -> String {
    let mut out = String::new();
    if not {
        out.push_str("not ");
    }
    out.push_str(name);
    if let Some(e) = expected {
        out.push(' ');
        out.push_str(&e);
    }
    out
}

fn no_explanation(_: &Value, _: &Value, _: &Limits) -> Option<String> {
    None
}

fn compile_equal(expected: &Value, _: &Limits) -> Result<Check, ExpectedError> {
    let expected = expected.clone();
    Ok(Box::new(move |v| deep_equal(v, &expected)))
}

fn describe_to_equal(expected: &Value, not: bool) -> String {
    claim("toEqual", Some(short(expected)), not)
}

fn compile_null(_: &Value, _: &Limits) -> Result<Check, ExpectedError> {
    Ok(Box::new(Value::is_null))
}

fn describe_to_be_null(_: &Value, not: bool) -> String {
    claim("toBeNull", None, not)
}

fn compile_contain(expected: &Value, _: &Limits) -> Result<Check, ExpectedError> {
    let expected = expected.clone();
    Ok(Box::new(move |v| match (v, &expected) {
        (Value::Array(items), e) => items.iter().any(|item| deep_equal(item, e)),
        (Value::String(s), Value::String(e)) => s.contains(e.as_str()),
        _ => false,
    }))
}

fn describe_to_contain(expected: &Value, not: bool) -> String {
    claim("toContain", Some(short(expected)), not)
}

fn explain_contain(actual: &Value, expected: &Value, _: &Limits) -> Option<String> {
    match (actual, expected) {
        (Value::Array(_), _) | (Value::String(_), Value::String(_)) => None,
        (Value::String(_), _) => Some("a string contains only strings".into()),
        _ => Some("not an array or a string".into()),
    }
}

/// A `toMatch` pattern: `"source"` or `{"source": …, "flags": …}`.
fn pattern(expected: &Value) -> Result<(&str, &str), ExpectedError> {
    match expected {
        Value::String(s) => Ok((s, "")),
        Value::Object(map) => {
            if let Some(k) = map.keys().find(|k| *k != "source" && *k != "flags") {
                return Err(ExpectedError::new(
                    "",
                    format!("unknown key `{k}` in the pattern (keys: source, flags)"),
                ));
            }
            let source = match map.get("source") {
                Some(Value::String(s)) => s.as_str(),
                Some(other) => {
                    return Err(ExpectedError::new(
                        "/source",
                        format!("the pattern source must be a string, got {}", short(other)),
                    ));
                }
                None => return Err(ExpectedError::new("", "the pattern has no `source`")),
            };
            let flags = match map.get("flags") {
                None | Some(Value::Null) => "",
                Some(Value::String(f)) => f.as_str(),
                Some(other) => {
                    return Err(ExpectedError::new(
                        "/flags",
                        format!("flags must be a string, got {}", short(other)),
                    ));
                }
            };
            Ok((source, flags))
        }
        other => Err(ExpectedError::new(
            "",
            format!(
                "toMatch takes a pattern string or {{\"source\", \"flags\"}}, got {}",
                short(other)
            ),
        )),
    }
}

fn compile_match(expected: &Value, limits: &Limits) -> Result<Check, ExpectedError> {
    let (source, flags) = pattern(expected)?;
    let source_ptr = if expected.is_string() { "" } else { "/source" };
    let flags_ptr = "/flags";
    let allowed: Vec<char> = limits
        .regex_allowed_flags
        .chars()
        .filter(|c| "imsu".contains(*c))
        .collect();
    let allowed_text: String = allowed.iter().collect();
    let mut seen = HashSet::new();
    for c in flags.chars() {
        if !allowed.contains(&c) {
            return Err(ExpectedError::new(
                flags_ptr,
                format!(
                    "flag `{}` is not allowed (allowed flags: {allowed_text})",
                    c.escape_default()
                ),
            ));
        }
        if !seen.insert(c) {
            return Err(ExpectedError::new(
                flags_ptr,
                format!("flag `{c}` is given twice"),
            ));
        }
    }
    let len = source.chars().count();
    if len > limits.regex_max_source_len {
        return Err(ExpectedError::new(
            source_ptr,
            format!(
                "the pattern is {len} characters; the limit is {}",
                limits.regex_max_source_len
            ),
        ));
    }
    let regex = RegexBuilder::new(source)
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        // The regex crate is always Unicode-aware: `u` is accepted and changes nothing.
        .unicode(true)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let detail = detail.lines().last().unwrap_or_default().trim().to_owned();
            ExpectedError::new(
                source_ptr,
                format!(
                    "the pattern /{source}/ does not compile: {detail} (linear-time regex syntax: no look-around, no backreferences)"
                ),
            )
        })?;
    let cap = limits.regex_max_test_len;
    Ok(Box::new(move |v| match v {
        Value::String(s) => regex.is_match(head(s, cap)),
        _ => false,
    }))
}

/// The first `chars` characters of a string.
fn head(s: &str, chars: usize) -> &str {
    match s.char_indices().nth(chars) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

fn describe_to_match(expected: &Value, not: bool) -> String {
    let shown = match pattern(expected) {
        Ok((source, flags)) => format!("/{source}/{flags}"),
        Err(_) => short(expected),
    };
    claim("toMatch", Some(shown), not)
}

fn explain_match(actual: &Value, _: &Value, limits: &Limits) -> Option<String> {
    match actual {
        Value::String(s) if s.chars().count() > limits.regex_max_test_len => Some(format!(
            "tested on its first {} characters",
            limits.regex_max_test_len
        )),
        Value::String(_) => None,
        _ => Some("not a string".into()),
    }
}

fn compile_one_of(expected: &Value, _: &Limits) -> Result<Check, ExpectedError> {
    match expected {
        Value::Array(options) if !options.is_empty() => {
            let options = options.clone();
            Ok(Box::new(move |v| options.iter().any(|o| deep_equal(v, o))))
        }
        Value::Array(_) => Err(ExpectedError::new(
            "",
            "toBeOneOf needs a non-empty array of options, got []",
        )),
        other => Err(ExpectedError::new(
            "",
            format!(
                "toBeOneOf needs a non-empty array of options, got {}",
                short(other)
            ),
        )),
    }
}

fn describe_to_be_one_of(expected: &Value, not: bool) -> String {
    claim("toBeOneOf", Some(short(expected)), not)
}

/// Deep equality: object key order is ignored, array order is respected, and numbers
/// compare by value (`1` equals `1.0`).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let int = |n: &serde_json::Number| {
                n.as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
            };
            match (int(x), int(y)) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A value on one line, cut at 120 characters.
pub fn short(value: &Value) -> String {
    const MAX: usize = 120;
    let text = super::text::pretty_json(value, usize::MAX);
    if text.chars().count() > MAX {
        format!("{}…", head(&text, MAX - 1))
    } else {
        text
    }
}

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

/// Normalises `$`-less sugar to JSONPath: `selectionVerdict` → `$.selectionVerdict`,
/// `[0]` → `$[0]`, `targets.0.verdict` → `$.targets[0].verdict`. A path that starts with
/// `$` is taken as written.
pub fn normalize_path(path: &str) -> String {
    let p = path.trim();
    if p.starts_with('$') {
        return p.to_owned();
    }
    let rooted = if p.starts_with('[') || p.starts_with('.') {
        format!("${p}")
    } else {
        format!("$.{p}")
    };
    index_segments(&rooted)
}

/// `.0` → `[0]` outside brackets and quotes (sugar paths only).
fn index_segments(path: &str) -> String {
    let chars: Vec<char> = path.chars().collect();
    let mut out = String::with_capacity(path.len());
    let (mut depth, mut quote) = (0usize, None::<char>);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) => {
                out.push(c);
                if c == '\\' && i + 1 < chars.len() {
                    out.push(chars[i + 1]);
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    out.push(c);
                }
                '[' => {
                    depth += 1;
                    out.push(c);
                }
                ']' => {
                    depth = depth.saturating_sub(1);
                    out.push(c);
                }
                '.' if depth == 0 && chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                    let start = i + 1;
                    let mut end = start;
                    while end < chars.len() && chars[end].is_ascii_digit() {
                        end += 1;
                    }
                    if matches!(chars.get(end), None | Some('.') | Some('[')) {
                        out.push('[');
                        out.extend(&chars[start..end]);
                        out.push(']');
                        i = end;
                        continue;
                    }
                    out.push(c);
                }
                _ => out.push(c),
            },
        }
        i += 1;
    }
    out
}

/// How deep brackets and parentheses may nest in a path (the JSONPath parser recurses
/// once a level: a page file of nested parentheses would overflow the stack).
pub const MAX_PATH_NESTING: usize = 32;
/// How many filters (`?`) a path may hold, and how deep filters may nest in filters
/// (each nested filter runs once for every node its outer filter visits: 24 nested
/// filters in a 97-byte path ran for minutes).
pub const MAX_PATH_FILTERS: usize = 16;
pub const MAX_PATH_FILTER_NESTING: usize = 4;

/// The one guard every path passes before the JSONPath library sees it: nesting and
/// filter limits, with the position (in characters, from 0) where a limit is passed.
pub fn guard_path(path: &str) -> Result<(), String> {
    // Open brackets and parentheses, each with the filter nesting it opened in and the
    // nesting inside it (one more once it holds a filter).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let (mut filters, mut quote) = (0usize, None::<char>);
    let mut chars = path.chars().enumerate();
    while let Some((at, c)) = chars.next() {
        if let Some(q) = quote {
            if c == '\\' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' => {
                let inside = open.last().map_or(0, |&(_, inside)| inside);
                open.push((inside, inside));
                if open.len() > MAX_PATH_NESTING {
                    return Err(format!(
                        "the path nests brackets and parentheses deeper than {MAX_PATH_NESTING} levels (at position {at})"
                    ));
                }
            }
            ']' | ')' => {
                open.pop();
            }
            '?' => {
                filters += 1;
                if filters > MAX_PATH_FILTERS {
                    return Err(format!(
                        "the path holds more than {MAX_PATH_FILTERS} filters (`?`; the one at position {at})"
                    ));
                }
                if let Some((outer, inside)) = open.last_mut() {
                    *inside = *outer + 1;
                    if *inside > MAX_PATH_FILTER_NESTING {
                        return Err(format!(
                            "the path nests filters deeper than {MAX_PATH_FILTER_NESTING} levels (the filter at position {at})"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses a path (after normalisation), behind [`guard_path`].
pub fn parse_path(path: &str) -> Result<(String, JsonPath), String> {
    guard_path(path)?;
    let normalized = normalize_path(path);
    match JsonPath::parse(&normalized) {
        Ok(p) => Ok((normalized, p)),
        Err(e) => Err(format!(
            "`{normalized}` is not a valid JSONPath (RFC 9535): {} at position {}",
            e.message(),
            e.position()
        )),
    }
}

/// Resolves a path over a value (the `resolveJsonPath`).
pub fn resolve<'v>(path: &JsonPath, value: &'v Value) -> Vec<&'v Value> {
    path.query(value).all()
}

/// A JSONPath string literal: `'gpt-4.1'`.
pub fn quote(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

// ---------------------------------------------------------------------------------------------
// Validation and compilation
// ---------------------------------------------------------------------------------------------

/// Which sources an assertion runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    All,
    One(usize),
    /// A row the page does not have (any more: a dataset reload dropped it). The
    /// assertion fails when it runs, saying so; the page stays valid.
    Missing(String),
}

/// A validated, compiled assertion.
pub struct Compiled {
    pub assertion: Assertion,
    /// The normalised path.
    pub path: String,
    pub selection: Selection,
    pub matcher: &'static Matcher,
    query: JsonPath,
    check: Check,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("id", &self.assertion.id)
            .field("path", &self.path)
            .field("matcher", &self.matcher.name)
            .finish()
    }
}

/// Fills missing ids (from the description, else `assertion-N`, unique) and stores each
/// `select` as its row's key. Run on import before validation.
pub fn normalize(page: &mut Page) {
    let mut taken: HashSet<String> = page
        .assertions
        .iter()
        .map(|a| a.id.clone())
        .filter(|id| !id.trim().is_empty())
        .collect();
    for (i, a) in page.assertions.iter_mut().enumerate() {
        if a.id.trim().is_empty() {
            let base = match a.description.as_deref().map(slugify) {
                Some(s) if s != "rule" => s,
                _ => format!("assertion-{}", i + 1),
            };
            let mut id = base.clone();
            let mut n = 2;
            while taken.contains(&id) {
                id = format!("{base}-{n}");
                n += 1;
            }
            taken.insert(id.clone());
            a.id = id;
        }
        let select = a.select.trim();
        if !select.is_empty()
            && select != ALL_SOURCES
            && let Some(row) = page.source.find_row(select)
        {
            a.select = page.source.row_key(&page.source.rows[row]);
        }
    }
}

/// Validates a page's assertions; pointers are relative to the page (`/assertions/2/matcher`).
/// An assertion on a source row the page does not have is a warning (it fails when it
/// runs): a dataset reload that drops the row is not refused for it.
pub fn validate(page: &Page, limits: &Limits) -> Vec<Diagnostic> {
    let mut out = match compile_all(page, limits) {
        Ok(_) => vec![],
        Err(diags) => diags,
    };
    out.extend(orphaned(page));
    out
}

/// How an orphaned assertion's warning ends (a page file's reading makes it an error).
pub const ORPHAN_FAILS: &str = ": it fails when the tests run";

/// Warnings for assertions whose `select` names a source row the page does not have.
pub fn orphaned(page: &Page) -> Vec<Diagnostic> {
    page.assertions
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let select = a.select.trim();
            (!select.is_empty() && select != ALL_SOURCES && page.source.find_row(select).is_none())
                .then(|| {
                    let keys: Vec<String> =
                        page.source.rows.iter().map(|r| page.source.row_key(r)).collect();
                    Diagnostic::warning(
                        Code::AssertionOrphaned,
                        format!("/assertions/{i}/select"),
                        format!(
                            "assertion `{}`: `select` `{select}` matches no source row{ORPHAN_FAILS}",
                            a.id
                        ),
                    )
                    .with_hint(
                        did_you_mean(select, keys.iter().map(String::as_str))
                            .or_else(|| super::diag::did_you_mean_row(&page.source, select))
                            .map(|k| format!("did you mean `{k}`?")),
                    )
                })
        })
        .collect()
}

/// Compiles every assertion of a page, or says what is wrong with which.
pub fn compile_all(page: &Page, limits: &Limits) -> Result<Vec<Compiled>, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    if page.assertions.is_empty() {
        return Ok(vec![]);
    }
    let size = serde_json::to_string(&page.assertions)
        .map(|s| s.len())
        .unwrap_or(0);
    if size > limits.max_assertions_bytes {
        diags.push(too_large(size, limits));
        return Err(diags);
    }
    let mut seen = HashMap::new();
    let mut out = Vec::with_capacity(page.assertions.len());
    for (i, a) in page.assertions.iter().enumerate() {
        if let Some(first) = seen.insert(a.id.as_str(), i)
            && !a.id.trim().is_empty()
        {
            diags.push(Diagnostic::error(
                Code::AssertionId,
                format!("/assertions/{i}/id"),
                format!(
                    "assertion id `{}` is used twice (assertions {first} and {i})",
                    a.id
                ),
            ));
        }
        match compile(page, i, limits) {
            Ok(c) => out.push(c),
            Err(d) => diags.extend(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// Compiles assertion `i` of a page.
pub fn compile(page: &Page, i: usize, limits: &Limits) -> Result<Compiled, Vec<Diagnostic>> {
    let a = &page.assertions[i];
    let at = format!("/assertions/{i}");
    let name = if a.id.trim().is_empty() {
        format!("assertion {i}")
    } else {
        format!("assertion `{}`", a.id)
    };
    let mut diags = Vec::new();
    let mut error = |code, field: &str, message: String, hint: Option<String>| {
        diags.push(
            Diagnostic::error(code, format!("{at}{field}"), format!("{name}: {message}"))
                .with_hint(hint),
        );
    };
    if a.id.trim().is_empty() {
        error(Code::AssertionId, "/id", "the id is empty".into(), None);
    }

    let select = a.select.trim();
    let selection = if select.is_empty() {
        error(
            Code::AssertionSelect,
            "/select",
            "`select` is missing: name a source row by its key, or `*` for every source".into(),
            None,
        );
        None
    } else if select == ALL_SOURCES {
        Some(Selection::All)
    } else if let Some(row) = page.source.find_row(select) {
        Some(Selection::One(row))
    } else {
        // Not an error: the row may come back with the next reload; the assertion fails
        // when it runs, and validation warns ([`orphaned`]).
        Some(Selection::Missing(select.to_owned()))
    };

    let path = if a.path.trim().is_empty() {
        error(
            Code::AssertionPath,
            "/path",
            "`path` is missing (a JSONPath such as `$.selectionVerdict`)".into(),
            None,
        );
        None
    } else {
        match parse_path(&a.path) {
            Ok(p) => Some(p),
            Err(message) => {
                error(
                    Code::AssertionPath,
                    "/path",
                    format!("`path` {message}"),
                    None,
                );
                None
            }
        }
    };

    let names = || {
        REGISTRY
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let matcher = if a.matcher.trim().is_empty() {
        error(
            Code::AssertionMatcher,
            "/matcher",
            format!("`matcher` is missing (matchers: {})", names()),
            None,
        );
        None
    } else if let Some(m) = matcher(&a.matcher) {
        Some(m)
    } else {
        let hint = did_you_mean(&a.matcher, REGISTRY.iter().map(|m| m.name))
            .map(|m| format!("did you mean `{m}`?"));
        error(
            Code::AssertionMatcher,
            "/matcher",
            format!("unknown matcher `{}` (matchers: {})", a.matcher, names()),
            hint,
        );
        None
    };

    // The one nesting limit of data holds for expected values too (the value is
    // level 1, as a row is).
    let max = super::validate::MAX_DEPTH;
    if let Some(e) = &a.expected
        && super::validate::value_depth(e) + 1 > max
    {
        error(
            Code::AssertionExpected,
            "/expected",
            format!("`expected` nests deeper than the limit of {max} levels"),
            None,
        );
    }
    let check = matcher.and_then(|m| match (m.arity, &a.expected) {
        (Arity::One, None) => {
            error(
                Code::AssertionExpected,
                "/expected",
                format!("`expected` is missing: {} needs {}", m.name, m.expects),
                None,
            );
            None
        }
        (Arity::None, Some(_)) => {
            error(
                Code::AssertionExpected,
                "/expected",
                format!("{} takes no `expected` (use `not` to invert it)", m.name),
                None,
            );
            None
        }
        (_, expected) => match (m.compile)(expected.as_ref().unwrap_or(&Value::Null), limits) {
            Ok(check) => Some(check),
            Err(e) => {
                let field = format!("/expected{}", e.pointer);
                error(
                    Code::AssertionExpected,
                    &field,
                    format!("`expected` of {}: {}", m.name, e.message),
                    None,
                );
                None
            }
        },
    });

    match (selection, path, matcher, check) {
        (Some(selection), Some((path, query)), Some(matcher), Some(check)) if diags.is_empty() => {
            Ok(Compiled {
                assertion: a.clone(),
                path,
                selection,
                matcher,
                query,
                check,
            })
        }
        _ => Err(diags),
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

/// The outcome of one assertion on one selection's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub passed: bool,
    /// The values the path resolved to (empty: none — one *undefined* value, which no
    /// matcher matches).
    pub values: Vec<Value>,
    /// Why it failed.
    pub message: Option<String>,
}

impl Compiled {
    /// The claim: `$.selectionVerdict toEqual 2` (`(ALL)` after the path in ALL mode).
    pub fn claim(&self) -> String {
        let expected = self.assertion.expected.clone().unwrap_or(Value::Null);
        let mode = match self.assertion.path_match {
            PathMatch::Any => String::new(),
            PathMatch::All => " (ALL)".to_owned(),
        };
        format!(
            "{}{mode} {}",
            self.path,
            (self.matcher.describe)(&expected, self.assertion.not)
        )
    }

    /// Runs the assertion on one evaluation result (the evaluation semantics).
    pub fn evaluate(&self, result: &Value, limits: &Limits) -> Outcome {
        self.evaluate_found(resolve(&self.query, result), limits)
    }

    /// Runs the assertion on the values its path resolved to.
    pub fn evaluate_found(&self, found: Vec<&Value>, limits: &Limits) -> Outcome {
        let tested: Vec<&Value> = found.clone();
        // Short-circuits: ANY on the first pass, ALL on the first failure. A path that
        // resolves to nothing gives one undefined value, which no matcher matches (not
        // even `toBeNull` or `toEqual null`): it fails, and passes under `not`.
        let (raw, pivot) = match self.assertion.path_match {
            _ if tested.is_empty() => (false, None),
            PathMatch::Any => match tested.iter().position(|v| (self.check)(v)) {
                Some(i) => (true, Some(i)),
                None => (false, None),
            },
            PathMatch::All => match tested.iter().position(|v| !(self.check)(v)) {
                Some(i) => (false, Some(i)),
                None => (true, None),
            },
        };
        let passed = raw != self.assertion.not;
        let values: Vec<Value> = found.into_iter().cloned().collect();
        let message = (!passed).then(|| self.failure(&tested, pivot, values.is_empty(), limits));
        Outcome {
            passed,
            values,
            message,
        }
    }

    /// `<claim>: got <actual>` for a failed evaluation. `pivot` is the value that decided
    /// (ANY: the first passing one; ALL: the first failing one).
    fn failure(
        &self,
        tested: &[&Value],
        pivot: Option<usize>,
        none: bool,
        limits: &Limits,
    ) -> String {
        let expected = self.assertion.expected.clone().unwrap_or(Value::Null);
        let n = tested.len();
        let one = |i: usize| {
            let v = tested[i];
            let mut s = short(v);
            // With `not`, a value fails by matching: nothing more to explain.
            if !self.assertion.not
                && let Some(why) = (self.matcher.explain)(v, &expected, limits)
            {
                s.push_str(&format!(" ({why})"));
            }
            if n > 1 {
                s.push_str(&format!(" (value {} of {n})", i + 1));
            }
            s
        };
        let got = if none {
            "nothing: no value at the path (undefined)".to_owned()
        } else if let Some(i) = pivot {
            one(i)
        } else if n == 1 {
            one(0)
        } else {
            let all: Vec<String> = tested.iter().map(|v| short(v)).collect();
            let mut list = all.join(", ");
            if list.chars().count() > 200 {
                list = format!("{}…", head(&list, 199));
            }
            let which = if self.assertion.not { "all" } else { "none" };
            format!("{n} values, {which} matching: [{list}]")
        };
        format!("{}: got {got}", self.claim())
    }
}

/// One assertion's result over its selection(s) (the `AssertionResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssertionResult {
    pub assertion_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub select: String,
    /// The normalised path.
    pub path: String,
    pub matcher: String,
    pub not: bool,
    pub path_match: PathMatch,
    pub passed: bool,
    /// What the assertion claims: `$.selectionVerdict toEqual 2`.
    pub claim: String,
    /// Why it failed: `$.selectionVerdict toEqual 2: got 0`; with `select: "*"` it names
    /// the first failing source and counts the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `[{"selection": key, "passed": bool, "values": [...]}, …]`; when that is larger
    /// than [`Limits::max_details_bytes`], its first whole entries that fit (an array
    /// still), with `truncated` set.
    pub actual_samples: Value,
    pub truncated: bool,
    /// SHA-256 (hex) of the full samples, when they were truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_sha256: Option<String>,
}

/// A test run over a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub page_id: String,
    pub revision: i64,
    pub run_at: String,
    pub passed: usize,
    pub failed: usize,
    pub results: Vec<AssertionResult>,
}

impl Report {
    pub fn new(page_id: &str, revision: i64, run_at: &str, results: Vec<AssertionResult>) -> Self {
        let passed = results.iter().filter(|r| r.passed).count();
        Report {
            page_id: page_id.to_owned(),
            revision,
            run_at: run_at.to_owned(),
            passed,
            failed: results.len() - passed,
            results,
        }
    }

    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }
}

/// The sources the compiled assertions read, each once, in row order.
pub fn selections(compiled: &[Compiled], page: &Page) -> Vec<usize> {
    let mut wanted = vec![false; page.source.rows.len()];
    for c in compiled {
        match c.selection {
            Selection::All => wanted.iter_mut().for_each(|w| *w = true),
            Selection::One(s) => wanted[s] = true,
            Selection::Missing(_) => {}
        }
    }
    (0..wanted.len()).filter(|&s| wanted[s]).collect()
}

/// Runs compiled assertions. `result(s)` gives the typed evaluation result of source
/// row `s`; it is called once per row the assertions read, in row order, and each result
/// is dropped before the next is asked for. Every assertion reads only what its path
/// needs of a result ([`Needs`]): memory stays bounded by one selection.
pub fn run_compiled<E>(
    compiled: &[Compiled],
    page: &Page,
    limits: &Limits,
    mut result: impl FnMut(usize) -> Result<SelectionResult, E>,
) -> Result<Vec<AssertionResult>, E> {
    let needs: Vec<Needs> = compiled.iter().map(|c| Needs::of_path(&c.path)).collect();
    let direct: Vec<Option<Direct>> = compiled.iter().map(|c| Direct::of(&c.path)).collect();
    let mut samples: Vec<Samples> = compiled.iter().map(|_| Samples::new(limits)).collect();
    // Targets by id, per set of names (shared by every selection of a run).
    let mut index: Option<(*const result::Names, HashMap<String, Vec<usize>>)> = None;
    for s in selections(compiled, page) {
        let applying: Vec<usize> = (0..compiled.len())
            .filter(|&i| match compiled[i].selection {
                Selection::All => true,
                Selection::One(row) => row == s,
                Selection::Missing(_) => false,
            })
            .collect();
        let r = result(s)?;
        if direct
            .iter()
            .any(|d| matches!(d, Some(Direct::TargetField { .. })))
            && index
                .as_ref()
                .is_none_or(|(names, _)| !std::ptr::eq(*names, std::sync::Arc::as_ptr(&r.names)))
        {
            let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
            for (t, name) in r.names.targets.iter().enumerate() {
                by_id.entry(name.id.clone()).or_default().push(t);
            }
            index = Some((std::sync::Arc::as_ptr(&r.names), by_id));
        }
        let empty = HashMap::new();
        let by_id = index.as_ref().map_or(&empty, |(_, m)| m);
        let mut general = Vec::new();
        for &i in &applying {
            match &direct[i] {
                Some(d) => {
                    let values = d.values(&r, by_id);
                    let outcome = compiled[i].evaluate_found(values.iter().collect(), limits);
                    samples[i].push(&r.selection_key, outcome);
                }
                None => general.push(i),
            }
        }
        let applying = general;
        if applying.is_empty() {
            continue;
        }
        let wanted = applying
            .iter()
            .fold(None::<Needs>, |acc, &i| {
                Some(match acc {
                    None => needs[i].clone(),
                    Some(acc) => acc.union(&needs[i]),
                })
            })
            .unwrap_or_else(Needs::all);
        let value = r.to_value(&wanted);
        let mut whole: Option<Value> = None;
        for i in applying {
            let c = &compiled[i];
            let mut outcome = c.evaluate(&value, limits);
            if result::needs_retry(&wanted, &outcome.values.iter().collect::<Vec<_>>()) {
                // The path selected a container that pruning may have emptied.
                let full = whole.get_or_insert_with(|| r.to_value(&Needs::all()));
                outcome = c.evaluate(full, limits);
            }
            samples[i].push(&r.selection_key, outcome);
        }
    }
    // An assertion on a row the page does not have fails, saying so.
    for (c, s) in compiled.iter().zip(samples.iter_mut()) {
        if let Selection::Missing(select) = &c.selection {
            s.push(
                select,
                Outcome {
                    passed: false,
                    values: vec![],
                    message: Some(format!(
                        "`select` `{select}` matches no source row (the dataset no longer has it)"
                    )),
                },
            );
        }
    }
    Ok(compiled
        .iter()
        .zip(samples)
        .map(|(c, s)| s.finish(c, limits))
        .collect())
}

/// A path answered straight from the typed result, without building any JSON: the
/// shapes pins and most hand-written assertions use.
#[derive(Debug, Clone, PartialEq)]
enum Direct {
    SelectionVerdict,
    Recommended,
    /// `$.targets[?@.id=='X'].field`, `field` a scalar of the target entry.
    TargetField {
        id: String,
        field: String,
    },
    /// `$.targets[*].field`: that scalar of every target, in order.
    EveryTarget {
        field: String,
    },
}

impl Direct {
    fn of(path: &str) -> Option<Direct> {
        match path {
            "$.selectionVerdict" => return Some(Direct::SelectionVerdict),
            "$.recommendedTargetId" => return Some(Direct::Recommended),
            _ => {}
        }
        // `rules` and `override` are objects: the general path handles them.
        let simple = |field: &str| {
            !field.is_empty()
                && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !matches!(field, "rules" | "override")
        };
        if let Some(field) = path.strip_prefix("$.targets[*].") {
            return simple(field).then(|| Direct::EveryTarget {
                field: field.to_owned(),
            });
        }
        let rest = path.strip_prefix("$.targets[?@.id==")?;
        let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
        let rest = &rest[1..];
        let end = rest.find(quote)?;
        let id = &rest[..end];
        if id.contains('\\') {
            return None;
        }
        let field = rest[end + 1..].strip_prefix("].")?;
        simple(field).then(|| Direct::TargetField {
            id: id.to_owned(),
            field: field.to_owned(),
        })
    }

    /// The values the path resolves to on `r`; `index` finds targets by id.
    fn values(&self, r: &SelectionResult, index: &HashMap<String, Vec<usize>>) -> Vec<Value> {
        match self {
            Direct::SelectionVerdict => vec![Value::from(r.selection_verdict())],
            Direct::Recommended => vec![r.recommended_id().map_or(Value::Null, Value::from)],
            Direct::TargetField { id, field } => index
                .get(id)
                .into_iter()
                .flatten()
                .filter_map(|&t| target_field(r, t, field))
                .collect(),
            Direct::EveryTarget { field } => (0..r.target_count())
                .filter_map(|t| target_field(r, t, field))
                .collect(),
        }
    }
}

/// Member `field` of target `t`'s entry in the result JSON, if it has one: the verdict,
/// score, reason and id read straight from the result, any other from the entry.
fn target_field(r: &SelectionResult, t: usize, field: &str) -> Option<Value> {
    let d = r.device(t);
    match field {
        "verdict" => Some(Value::from(d.verdict)),
        "score" => Some(Value::from(d.score)),
        "reason" => Some(Value::from(d.reason.as_str())),
        "id" => Some(Value::from(r.names.targets[t].id.as_str())),
        _ => {
            let needs = Needs::of_path(&format!("$.{field}"));
            r.target_value(t, &needs).remove(field)
        }
    }
}

/// The entry of one selection with as many of its first values as fit in `room` bytes,
/// when at least its selection and outcome do.
fn first_values(key: &str, passed: bool, values: &[Value], room: usize) -> Option<String> {
    let empty = serde_json::to_string(&json!({"selection": key, "passed": passed, "values": []}))
        .expect("JSON values serialize");
    let mut len = empty.len();
    if len > room {
        return None;
    }
    let mut kept = 0;
    for v in values {
        let more = serde_json::to_string(v)
            .expect("JSON values serialize")
            .len()
            + usize::from(kept > 0);
        if len + more > room {
            break;
        }
        len += more;
        kept += 1;
    }
    Some(
        serde_json::to_string(
            &json!({"selection": key, "passed": passed, "values": &values[..kept]}),
        )
        .expect("JSON values serialize"),
    )
}

/// One assertion's outcomes over its selections, kept as they stream in: the samples'
/// JSON text up to the details limit with the SHA-256 of all of it, and the first
/// failure.
struct Samples {
    limit: usize,
    prefix: String,
    len: usize,
    hasher: Sha256,
    count: usize,
    failed: usize,
    first_failure: Option<(String, Option<String>)>,
    /// The end in `prefix` of the last whole entry that fits under the limit with the
    /// array's closing `]`: a truncated result keeps these entries (and its type).
    fits_end: usize,
    /// The first entry that did not fit whole, with as many of its first values as fit
    /// after the whole ones (a single selection of many values keeps its first ones).
    partial: Option<String>,
}

impl Samples {
    fn new(limits: &Limits) -> Samples {
        Samples {
            limit: limits.max_details_bytes,
            prefix: String::new(),
            len: 0,
            hasher: Sha256::new(),
            count: 0,
            failed: 0,
            first_failure: None,
            fits_end: 0,
            partial: None,
        }
    }

    fn write(&mut self, text: &str) {
        self.hasher.update(text.as_bytes());
        self.len += text.len();
        let room = (self.limit + 1).saturating_sub(self.prefix.len());
        if room > 0 {
            let mut cut = room.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.prefix.push_str(&text[..cut]);
        }
    }

    fn push(&mut self, key: &str, o: Outcome) {
        let start = self.len;
        self.write(if self.count == 0 { "[" } else { "," });
        let entry = json!({"selection": key, "passed": o.passed, "values": o.values});
        self.write(&serde_json::to_string(&entry).expect("JSON values serialize"));
        if self.len < self.limit {
            self.fits_end = self.len;
        } else if self.partial.is_none() && self.fits_end == start {
            // The separator and the closing `]` take two bytes.
            let room = self.limit.saturating_sub(start + 2);
            self.partial = first_values(key, o.passed, &o.values, room);
        }
        self.count += 1;
        if !o.passed {
            self.failed += 1;
            if self.first_failure.is_none() {
                self.first_failure = Some((key.to_owned(), o.message));
            }
        }
    }

    fn finish(mut self, c: &Compiled, limits: &Limits) -> AssertionResult {
        self.write(if self.count == 0 { "[]" } else { "]" });
        // A `*` assertion over no source row at all has nothing to hold for: it passes.
        let passed = self.failed == 0;
        let message = self.first_failure.as_ref().map(|(key, message)| {
            let mut m = message.clone().unwrap_or_default();
            if c.selection == Selection::All {
                m.push_str(&format!(" for {key}"));
                if self.failed > 1 {
                    m.push_str(&format!(
                        " (and {} more of {} sources)",
                        self.failed - 1,
                        self.count
                    ));
                }
            }
            m
        });
        let (actual_samples, truncated, actual_sha256) = if self.len <= limits.max_details_bytes {
            let value = serde_json::from_str(&self.prefix).expect("the samples' own JSON");
            (value, false, None)
        } else {
            let sha: String = self
                .hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            // The whole entries that fit, then the first values of the next one that
            // fit, still an array, under the limit; `truncated` and the hash of
            // everything say the rest is not there.
            let mut kept = if self.fits_end == 0 {
                "[".to_owned()
            } else {
                self.prefix[..self.fits_end].to_owned()
            };
            if let Some(partial) = &self.partial {
                if self.fits_end != 0 {
                    kept.push(',');
                }
                kept.push_str(partial);
            }
            kept.push(']');
            let value = serde_json::from_str(&kept).expect("whole entries of the samples");
            (value, true, Some(sha))
        };
        let a = &c.assertion;
        AssertionResult {
            assertion_id: a.id.clone(),
            description: a.description.clone(),
            select: a.select.clone(),
            path: c.path.clone(),
            matcher: c.matcher.name.to_owned(),
            not: a.not,
            path_match: a.path_match,
            passed,
            claim: c.claim(),
            message,
            actual_samples,
            truncated,
            actual_sha256,
        }
    }
}

/// Caps a value at `limit` bytes of JSON as an assertion result's samples are capped:
/// within the limit it is returned as is; past it, an array keeps its first whole
/// elements that fit, then (for a samples entry) the first values of the next one that
/// fit (any other value becomes `null`), with `true` and the SHA-256 (hex) of the full
/// JSON. The streamed samples of a run are cut exactly so.
pub fn truncate(value: Value, limit: usize) -> (Value, bool, Option<String>) {
    let text = serde_json::to_string(&value).expect("JSON values serialize");
    if text.len() <= limit {
        return (value, false, None);
    }
    let sha: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let kept = match value {
        Value::Array(items) => {
            let mut used = 2; // `[` and `]`
            let mut kept = Vec::new();
            for item in items {
                let sep = usize::from(!kept.is_empty());
                let len = serde_json::to_string(&item)
                    .expect("JSON values serialize")
                    .len()
                    + sep;
                if used + len > limit {
                    // The first values of the entry that does not fit whole.
                    let partial = match (
                        item["selection"].as_str(),
                        item["passed"].as_bool(),
                        item["values"].as_array(),
                    ) {
                        (Some(key), Some(passed), Some(values)) => {
                            first_values(key, passed, values, limit.saturating_sub(used + sep))
                        }
                        _ => None,
                    };
                    kept.extend(
                        partial.map(|p| serde_json::from_str(&p).expect("the entry's own JSON")),
                    );
                    break;
                }
                used += len;
                kept.push(item);
            }
            Value::Array(kept)
        }
        _ => Value::Null,
    };
    (kept, true, Some(sha))
}

/// Compiles and runs a page's assertions; `result(s)` as in [`run_compiled`].
pub fn run(
    page: &Page,
    limits: &Limits,
    mut result: impl FnMut(usize) -> SelectionResult,
) -> Result<Vec<AssertionResult>, Vec<Diagnostic>> {
    let compiled = compile_all(page, limits)?;
    run_compiled(&compiled, page, limits, |s| Ok(result(s)))
}

/// Evaluates a page in memory (its own matrix, no storage) and runs its assertions:
/// the page-file mode of `rulebench test`, and a live re-run after an edit.
pub fn run_in_memory(
    page: &Page,
    revision: i64,
    at: &str,
    limits: &Limits,
) -> Result<Report, Vec<Diagnostic>> {
    let compiled = compile_all(page, limits)?;
    let mut matrix = if compiled.is_empty() {
        None
    } else {
        Some(
            Matrix::new(page)
                .map_err(|e| vec![Diagnostic::error(Code::Compile, "/rules", e.to_string())])?,
        )
    };
    let names = std::sync::Arc::new(Names::of(page));
    let results = run_compiled(&compiled, page, limits, |s| {
        let m = matrix.as_mut().expect("a matrix when there are assertions");
        Ok::<_, Vec<Diagnostic>>(SelectionResult::new(
            page,
            names.clone(),
            m.evaluate(s),
            revision,
            at,
        ))
    })?;
    Ok(Report::new(&page.id, revision, at, results))
}

// ---------------------------------------------------------------------------------------------
// Pinning ("import from last actual output")
// ---------------------------------------------------------------------------------------------

/// Assertions that pin a selection's current outcome: every target's verdict, the
/// selection verdict and the recommendation. `result` is the selection's evaluation
/// result; ids are `pin-<source>-…`, stable across runs.
pub fn pin(page: &Page, result: &SelectionResult) -> Vec<Assertion> {
    let key = result.selection_key.clone();
    let row = page.source.find_row(&key);
    let (label, slug) = match row {
        Some(r) => {
            let row = &page.source.rows[r];
            let values: Vec<String> = page
                .source
                .key
                .iter()
                .map(|f| match row.get(f) {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                })
                .collect();
            (page.source.row_label(row), slugify(&values.join(" ")))
        }
        None => (key.clone(), slugify(&key)),
    };
    let make =
        |id: String, description: String, path: String, matcher: &str, expected: Option<Value>| {
            Assertion {
                id,
                description: Some(description),
                select: key.clone(),
                path,
                path_match: PathMatch::Any,
                matcher: matcher.to_owned(),
                expected,
                not: false,
            }
        };
    let mut out = Vec::new();
    let mut ids = HashSet::new();
    let mut unique = |base: String| {
        let mut id = base.clone();
        let mut n = 2;
        while !ids.insert(id.clone()) {
            id = format!("{base}-{n}");
            n += 1;
        }
        id
    };
    for (t, name) in result.names.targets.iter().enumerate() {
        let target = name.id.as_str();
        let verdict = Value::from(result.device(t).verdict);
        out.push(make(
            unique(format!("pin-{slug}-{}-verdict", slugify(target))),
            format!("{target} keeps verdict {verdict} for {label}"),
            format!("$.targets[?@.id=={}].verdict", quote(target)),
            "toEqual",
            Some(verdict),
        ));
    }
    let verdict = Value::from(result.selection_verdict());
    out.push(make(
        unique(format!("pin-{slug}-selection-verdict")),
        format!("{label} keeps selection verdict {verdict}"),
        "$.selectionVerdict".into(),
        "toEqual",
        Some(verdict),
    ));
    let id = unique(format!("pin-{slug}-recommendation"));
    match result.recommended_id() {
        None => out.push(make(
            id,
            format!("no target is recommended for {label}"),
            "$.recommendedTargetId".into(),
            "toBeNull",
            None,
        )),
        Some(r) => out.push(make(
            id,
            format!("{r} stays recommended for {label}"),
            "$.recommendedTargetId".into(),
            "toEqual",
            Some(Value::from(r)),
        )),
    }
    out
}

/// Merges pinned assertions into a page's: an existing assertion with the same id is
/// replaced in place, others are appended. Returns (replaced, added).
/// The ids are indexed once: merging the pins of every selection costs what they hold.
pub fn merge(existing: &mut Vec<Assertion>, pins: Vec<Assertion>) -> (usize, usize) {
    let (mut replaced, mut added) = (0, 0);
    // The first assertion with an id is the one replaced.
    let mut at: HashMap<String, usize> = HashMap::with_capacity(existing.len() + pins.len());
    for (i, a) in existing.iter().enumerate() {
        at.entry(a.id.clone()).or_insert(i);
    }
    for p in pins {
        match at.get(&p.id) {
            Some(&i) => {
                if existing[i] != p {
                    existing[i] = p;
                }
                replaced += 1;
            }
            None => {
                at.insert(p.id.clone(), existing.len());
                existing.push(p);
                added += 1;
            }
        }
    }
    (replaced, added)
}

/// The error of assertions whose JSON text is `size` bytes, past the page's limit.
pub fn too_large(size: usize, limits: &Limits) -> Diagnostic {
    Diagnostic::error(
        Code::AssertionsTooLarge,
        "/assertions",
        format!(
            "the assertions are {size} bytes; the limit is {} bytes per page",
            limits.max_assertions_bytes
        ),
    )
    .with_hint(Some(
        "pin fewer selections (`rulebench test PAGE --pin --select KEY`)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(assertions: Value) -> Page {
        let mut page: Page = serde_json::from_value(json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["kind", "id"], "label": "name", "rows": [
                {"kind": "web", "id": "a", "name": "Alpha"},
                {"kind": "cli", "id": "b", "name": "Beta"}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "x"}, {"id": "y"}]},
            "assertions": assertions
        }))
        .expect("page parses");
        normalize(&mut page);
        page
    }

    /// A result of source row `s` of `p` with targets `ids` at `verdicts` (no rules).
    fn result(
        p: &Page,
        s: usize,
        ids: &[&str],
        verdicts: &[u8],
        selection_verdict: u8,
    ) -> SelectionResult {
        use crate::matrix::SelectionEval;
        use crate::verdict::{DeviceVerdict, Reason};
        let names = Names {
            page_id: p.id.clone(),
            targets: ids
                .iter()
                .map(|id| crate::result::TargetName {
                    id: (*id).to_owned(),
                    shown: vec![],
                })
                .collect(),
            ..Names::default()
        };
        let devices: Vec<DeviceVerdict> = verdicts
            .iter()
            .map(|&verdict| DeviceVerdict {
                verdict: crate::verdict::Verdict::from_number(u64::from(verdict)).unwrap(),
                score: 1.0,
                reason: Reason::Full,
            })
            .collect();
        let eval = SelectionEval {
            selection: s,
            columns: vec![],
            verdict_counts: SelectionEval::count_verdicts(&devices),
            devices: devices.into(),
            overrides: Default::default(),
            shared: false,
            selection_verdict: crate::verdict::Verdict::from_number(u64::from(selection_verdict))
                .unwrap(),
            recommended: None,
        };
        SelectionResult::new(p, std::sync::Arc::new(names), eval, 1, "now")
    }

    /// Compiles one assertion (select `a` unless given) or panics with its diagnostics.
    fn compiled(assertion: Value) -> Compiled {
        let mut a = assertion;
        if a.get("select").is_none() {
            a["select"] = json!("a");
        }
        let page = page(json!([a]));
        compile(&page, 0, &Limits::default()).unwrap_or_else(|d| panic!("{d:?}"))
    }

    /// (passed, message) of one assertion over `actual`.
    fn check(assertion: Value, actual: Value) -> (bool, Option<String>) {
        let o = compiled(assertion).evaluate(&actual, &Limits::default());
        (o.passed, o.message)
    }

    fn passes(assertion: Value, actual: Value) -> bool {
        check(assertion, actual).0
    }

    /// The same assertion with `not`, which must give the opposite outcome.
    fn both(mut assertion: Value, actual: Value, expected: bool) {
        assert_eq!(
            passes(assertion.clone(), actual.clone()),
            expected,
            "{assertion} on {actual}"
        );
        assertion["not"] = json!(true);
        assert_eq!(
            passes(assertion.clone(), actual.clone()),
            !expected,
            "{assertion} on {actual}"
        );
    }

    fn errors(assertions: Value) -> Vec<(Code, String, String)> {
        validate(&page(assertions), &Limits::default())
            .into_iter()
            .map(|d| (d.code, d.pointer, d.message))
            .collect()
    }

    #[test]
    fn to_equal_is_deep_equality() {
        let a = |e: Value| json!({"path": "$.v", "matcher": "toEqual", "expected": e});
        both(a(json!(2)), json!({"v": 2}), true);
        both(a(json!(2)), json!({"v": 1}), false);
        both(a(json!(1)), json!({"v": 1.0}), true);
        both(
            a(json!({"a": 1, "b": [1, 2]})),
            json!({"v": {"b": [1, 2], "a": 1}}),
            true,
        );
        both(a(json!([1, 2])), json!({"v": [2, 1]}), false);
        both(a(json!({"a": 1})), json!({"v": {"a": 1, "b": null}}), false);
        both(a(json!("2")), json!({"v": 2}), false);
        both(a(json!(null)), json!({"v": null}), true);
        // A path that resolves to nothing is undefined, not null (seed 002's
        // `[undefined]`): `toEqual null` fails and `not toEqual null` passes.
        both(a(json!(null)), json!({}), false);
    }

    #[test]
    fn to_be_null_and_zero_results() {
        let a = json!({"path": "$.v", "matcher": "toBeNull"});
        both(a.clone(), json!({"v": null}), true);
        // Nothing at the path is undefined: `toBeNull` fails, `not toBeNull` passes.
        both(a.clone(), json!({}), false);
        both(a.clone(), json!({"v": 0}), false);
        both(a, json!({"v": false}), false);
    }

    #[test]
    fn to_contain_arrays_and_strings() {
        let a = |e: Value| json!({"path": "$.v", "matcher": "toContain", "expected": e});
        both(
            a(json!({"id": 123, "qty": 1})),
            json!({"v": [{"qty": 1, "id": 123}, 2]}),
            true,
        );
        both(
            a(json!({"id": 123})),
            json!({"v": [{"qty": 1, "id": 123}]}),
            false,
        );
        both(a(json!("lo w")), json!({"v": "hello world"}), true);
        both(a(json!("Hello")), json!({"v": "hello world"}), false);
        both(a(json!(1)), json!({"v": "a1"}), false);
        both(a(json!(1)), json!({"v": 1}), false);
        let (_, m) = check(a(json!(1)), json!({"v": 7}));
        assert_eq!(
            m.unwrap(),
            "$.v toContain 1: got 7 (not an array or a string)"
        );
    }

    #[test]
    fn to_match_patterns_and_flags() {
        let a = |e: Value| json!({"path": "$.v", "matcher": "toMatch", "expected": e});
        both(a(json!("^[A-Z][a-z]+$")), json!({"v": "Bob"}), true);
        both(a(json!("^[A-Z][a-z]+$")), json!({"v": "bob"}), false);
        both(
            a(json!({"source": "^b", "flags": "i"})),
            json!({"v": "Bob"}),
            true,
        );
        both(a(json!({"source": "^b"})), json!({"v": "Bob"}), false);
        both(
            a(json!({"source": "^two$", "flags": "m"})),
            json!({"v": "one\ntwo"}),
            true,
        );
        both(
            a(json!({"source": "^two$"})),
            json!({"v": "one\ntwo"}),
            false,
        );
        both(
            a(json!({"source": "a.b", "flags": "s"})),
            json!({"v": "a\nb"}),
            true,
        );
        both(a(json!({"source": "a.b"})), json!({"v": "a\nb"}), false);
        both(
            a(json!({"source": "^\\p{Lu}", "flags": "u"})),
            json!({"v": "Élan"}),
            true,
        );
        both(a(json!("1")), json!({"v": 1}), false);
        let (_, m) = check(a(json!("^[A-Z][a-z]+$")), json!({"v": "bob"}));
        assert_eq!(m.unwrap(), "$.v toMatch /^[A-Z][a-z]+$/: got \"bob\"");
        let (_, m) = check(a(json!({"source": "x", "flags": "im"})), json!({"v": 1}));
        assert_eq!(m.unwrap(), "$.v toMatch /x/im: got 1 (not a string)");
    }

    #[test]
    fn to_be_one_of_options() {
        let a = |e: Value| json!({"path": "$.v", "matcher": "toBeOneOf", "expected": e});
        both(a(json!(["A", "B", "C"])), json!({"v": "B"}), true);
        both(a(json!(["A", "B", "C"])), json!({"v": "D"}), false);
        both(a(json!([{"a": [1]}, 2])), json!({"v": {"a": [1]}}), true);
        both(a(json!([null])), json!({"v": null}), true);
        // Undefined is none of the options, not even null.
        both(a(json!([null])), json!({}), false);
    }

    #[test]
    fn any_and_all_aggregate_before_not() {
        let any = json!({"path": "$.items[*].status", "matcher": "toEqual", "expected": "READY"});
        let mut all = any.clone();
        all["pathMatch"] = json!("ALL");
        let mixed = json!({"items": [{"status": "READY"}, {"status": "PENDING"}]});
        let ready = json!({"items": [{"status": "READY"}, {"status": "READY"}]});
        both(any.clone(), mixed.clone(), true);
        both(all.clone(), mixed.clone(), false);
        both(all.clone(), ready.clone(), true);
        both(any.clone(), json!({"items": []}), false);
        let (_, m) = check(all.clone(), mixed.clone());
        assert_eq!(
            m.unwrap(),
            "$.items[*].status (ALL) toEqual \"READY\": got \"PENDING\" (value 2 of 2)"
        );
        let none = json!({"items": [{"status": "A"}, {"status": "B"}]});
        let (_, m) = check(any.clone(), none);
        assert_eq!(
            m.unwrap(),
            "$.items[*].status toEqual \"READY\": got 2 values, none matching: [\"A\", \"B\"]"
        );
        let mut not_any = any.clone();
        not_any["not"] = json!(true);
        let (_, m) = check(not_any, mixed);
        assert_eq!(
            m.unwrap(),
            "$.items[*].status not toEqual \"READY\": got \"READY\" (value 1 of 2)"
        );
        let (_, m) = check(any, json!({}));
        assert_eq!(
            m.unwrap(),
            "$.items[*].status toEqual \"READY\": got nothing: no value at the path (undefined)"
        );
    }

    #[test]
    fn seed_002_examples() {
        let one_of = json!({"path": "$", "matcher": "toBeOneOf", "expected": ["A", "B", "C"]});
        assert!(passes(one_of.clone(), json!("A")));
        assert!(!passes(one_of, json!("D")));
        let name = json!({"path": "$.user.name", "matcher": "toMatch",
            "expected": {"source": "^[A-Z][a-z]+$", "flags": "u"}});
        assert!(passes(name.clone(), json!({"user": {"name": "Bob"}})));
        assert!(!passes(name, json!({"user": {"name": "bob"}})));
        let contains =
            json!({"path": "$.items", "matcher": "toContain", "expected": {"id": 123, "qty": 1}});
        assert!(passes(
            contains,
            json!({"items": [{"id": 1, "qty": 1}, {"qty": 1, "id": 123}]})
        ));
        let avatar = json!({"path": "$.profile.avatarUrl", "matcher": "toBeNull", "not": true});
        assert!(passes(
            avatar.clone(),
            json!({"profile": {"avatarUrl": "https://x/a.png"}})
        ));
        assert!(!passes(
            avatar.clone(),
            json!({"profile": {"avatarUrl": null}})
        ));
        // No avatar at all is undefined, which is not null: `not toBeNull` passes.
        assert!(passes(avatar, json!({"profile": {}})));
        let statuses = json!({"path": "$.items[*].status", "pathMatch": "ALL",
            "matcher": "toBeOneOf", "expected": ["READY", "PENDING"]});
        assert!(passes(
            statuses.clone(),
            json!({"items": [{"status": "READY"}, {"status": "PENDING"}]})
        ));
        assert!(!passes(
            statuses,
            json!({"items": [{"status": "READY"}, {"status": "DONE"}]})
        ));
        // Sugar without `$`.
        let sugar = json!({"path": "user.name", "matcher": "toEqual", "expected": "Bob"});
        assert!(passes(sugar, json!({"user": {"name": "Bob"}})));
    }

    #[test]
    fn the_issue_message() {
        let a = json!({"path": "$.targets[?@.id=='gpt-4.1'].verdict", "matcher": "toEqual", "expected": 2});
        let (passed, m) = check(
            a,
            json!({"targets": [{"id": "o3", "verdict": 2}, {"id": "gpt-4.1", "verdict": 1}]}),
        );
        assert!(!passed);
        assert_eq!(
            m.unwrap(),
            "$.targets[?@.id=='gpt-4.1'].verdict toEqual 2: got 1"
        );
    }

    #[test]
    fn sugar_paths_are_normalised() {
        assert_eq!(normalize_path("selectionVerdict"), "$.selectionVerdict");
        assert_eq!(
            normalize_path(" targets[0].verdict "),
            "$.targets[0].verdict"
        );
        assert_eq!(normalize_path("targets.0.verdict"), "$.targets[0].verdict");
        assert_eq!(normalize_path("[0]"), "$[0]");
        assert_eq!(normalize_path("..verdict"), "$..verdict");
        assert_eq!(normalize_path("a['x.0'].b"), "$.a['x.0'].b");
        assert_eq!(normalize_path("a.0x"), "$.a.0x");
        assert_eq!(normalize_path("$.a.0"), "$.a.0");
        assert!(parse_path("targets.0.verdict").is_ok());
        assert_eq!(quote("it's \\ ok"), "'it\\'s \\\\ ok'");
        let p = parse_path(&format!("$.t[?@.id=={}]", quote("a'b")))
            .unwrap()
            .1;
        assert_eq!(
            resolve(&p, &json!({"t": [{"id": "a'b"}, {"id": "c"}]})).len(),
            1
        );
    }

    #[test]
    fn invalid_assertions_say_which_and_where() {
        let e = errors(
            json!([{"id": "p", "select": "a", "path": "$.targets[", "matcher": "toBeNull"}]),
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(
            (e[0].0, e[0].1.as_str()),
            (Code::AssertionPath, "/assertions/0/path")
        );
        assert!(
            e[0].2
                .starts_with("assertion `p`: `path` `$.targets[` is not a valid JSONPath"),
            "{}",
            e[0].2
        );

        let e = errors(
            json!([{"id": "r", "select": "a", "path": "$", "matcher": "toMatch", "expected": "(a"}]),
        );
        assert_eq!(
            (e[0].0, e[0].1.as_str()),
            (Code::AssertionExpected, "/assertions/0/expected")
        );
        assert!(
            e[0].2.contains("assertion `r`") && e[0].2.contains("does not compile"),
            "{}",
            e[0].2
        );

        let e = errors(
            json!([{"id": "f", "select": "a", "path": "$", "matcher": "toMatch",
            "expected": {"source": "a", "flags": "gi"}}]),
        );
        assert_eq!(e[0].1, "/assertions/0/expected/flags");
        assert!(
            e[0].2
                .contains("flag `g` is not allowed (allowed flags: imsu)"),
            "{}",
            e[0].2
        );
        let e = errors(
            json!([{"id": "f", "select": "a", "path": "$", "matcher": "toMatch",
            "expected": {"source": "a", "flags": "ii"}}]),
        );
        assert!(e[0].2.contains("flag `i` is given twice"), "{}", e[0].2);

        let e = errors(
            json!([{"id": "m", "select": "a", "path": "$", "matcher": "toEquals", "expected": 1}]),
        );
        assert_eq!(
            (e[0].0, e[0].1.as_str()),
            (Code::AssertionMatcher, "/assertions/0/matcher")
        );
        let d = validate(
            &page(
                json!([{"id": "m", "select": "a", "path": "$", "matcher": "toEquals", "expected": 1}]),
            ),
            &Limits::default(),
        );
        assert_eq!(d[0].hint.as_deref(), Some("did you mean `toEqual`?"));

        let e = errors(json!([{"id": "x", "select": "a", "path": "$", "matcher": "toEqual"}]));
        assert_eq!(
            (e[0].0, e[0].1.as_str()),
            (Code::AssertionExpected, "/assertions/0/expected")
        );
        assert!(
            e[0].2.contains("assertion `x`: `expected` is missing"),
            "{}",
            e[0].2
        );

        let e = errors(
            json!([{"id": "o", "select": "a", "path": "$", "matcher": "toBeOneOf", "expected": []}]),
        );
        assert!(e[0].2.contains("non-empty array"), "{}", e[0].2);
        let e = errors(
            json!([{"id": "o", "select": "a", "path": "$", "matcher": "toBeOneOf", "expected": "A"}]),
        );
        assert!(e[0].2.contains("non-empty array"), "{}", e[0].2);

        let e = errors(
            json!([{"id": "n", "select": "a", "path": "$", "matcher": "toBeNull", "expected": null}]),
        );
        assert!(
            e[0].2.contains("toBeNull takes no `expected`"),
            "{}",
            e[0].2
        );

        // A row the page does not have: a warning (the assertion fails when it runs).
        let p = page(json!([{"id": "s", "select": "nope", "path": "$", "matcher": "toBeNull"}]));
        let e = validate(&p, &Limits::default());
        assert_eq!(
            (e[0].code, e[0].pointer.as_str(), e[0].is_error()),
            (Code::AssertionOrphaned, "/assertions/0/select", false)
        );

        let e = errors(
            json!([{"id": "d", "select": "a", "path": "$", "matcher": "toBeNull"},
            {"id": "d", "select": "*", "path": "", "matcher": ""}]),
        );
        let pointers: Vec<&str> = e.iter().map(|e| e.1.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/assertions/1/id",
                "/assertions/1/path",
                "/assertions/1/matcher"
            ]
        );
    }

    #[test]
    fn regex_and_size_limits() {
        let long = "a".repeat(1025);
        let e = errors(
            json!([{"id": "l", "select": "a", "path": "$", "matcher": "toMatch", "expected": long}]),
        );
        assert!(
            e[0].2.contains("1025 characters; the limit is 1024"),
            "{}",
            e[0].2
        );
        assert!(errors(json!([{"id": "l", "select": "a", "path": "$", "matcher": "toMatch", "expected": "a".repeat(1024)}])).is_empty());

        // Tested strings are capped: a match past the cap is not seen.
        let limits = Limits {
            regex_max_test_len: 10,
            ..Limits::default()
        };
        let p = page(
            json!([{"id": "t", "select": "a", "path": "$", "matcher": "toMatch", "expected": "z"}]),
        );
        let c = compile(&p, 0, &limits).unwrap();
        assert!(c.evaluate(&json!("aaaaaaaaaz"), &limits).passed);
        let o = c.evaluate(&json!("aaaaaaaaaaz"), &limits);
        assert!(!o.passed);
        assert!(
            o.message
                .unwrap()
                .contains("tested on its first 10 characters")
        );

        // 64 KB of assertions per page.
        let many: Vec<Value> = (0..700)
            .map(|i| {
                json!({"id": format!("a{i}"), "select": "a", "path": "$.selectionVerdict",
                "matcher": "toEqual", "expected": "x".repeat(80)})
            })
            .collect();
        let e = errors(Value::Array(many));
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].0, e[0].1.as_str()),
            (Code::AssertionsTooLarge, "/assertions")
        );
        assert!(e[0].2.contains("the limit is 65536 bytes"), "{}", e[0].2);
    }

    #[test]
    fn samples_past_the_limit_are_truncated_and_hashed() {
        // Through a run: a result larger than the details limit.
        let p = page(
            json!([{"id": "w", "select": "a", "path": "$", "matcher": "toBeNull", "not": true}]),
        );
        let limits = Limits {
            max_details_bytes: 100,
            ..Limits::default()
        };
        let results = run(&p, &limits, |s| result(&p, s, &["x", "y"], &[2, 2], 2)).unwrap();
        assert!(results[0].passed && results[0].truncated);
        // Still an array (it used to turn into a string of JSON text, escaped on storing
        // past the cap), of whole entries, under the limit.
        let kept = results[0].actual_samples.as_array().expect("an array");
        let text = serde_json::to_string(&results[0].actual_samples).unwrap();
        assert!(text.len() <= 100, "{text}");
        let full = run(&p, &Limits::default(), |s| {
            result(&p, s, &["x", "y"], &[2, 2], 2)
        })
        .unwrap();
        let all = full[0].actual_samples.as_array().unwrap();
        assert!(!full[0].truncated && kept.len() <= all.len());
        // Whole entries, then the first values of the next one that fit.
        let (last, whole) = kept.split_last().expect("an entry");
        assert_eq!(whole, &all[..whole.len()]);
        let next = &all[whole.len()];
        assert_eq!(
            (&last["selection"], &last["passed"]),
            (&next["selection"], &next["passed"])
        );
        let (some, every) = (
            last["values"].as_array().unwrap(),
            next["values"].as_array().unwrap(),
        );
        assert_eq!(some[..], every[..some.len()]);
        let expected: String = Sha256::digest(serde_json::to_string(&all).unwrap().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(results[0].actual_sha256.as_deref(), Some(expected.as_str()));
    }

    /// One selection of 60 values past the limit keeps its first values that fit (it
    /// kept none: the entry as a whole did not fit).
    #[test]
    fn one_selection_of_many_values_keeps_its_first_ones() {
        let p = page(
            json!([{"id": "ids", "select": "a", "path": "$.targets[*].id",
            "matcher": "toBeNull", "not": true, "pathMatch": "ALL"}]),
        );
        let ids: Vec<String> = (0..60).map(|i| format!("model-{i:02}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let verdicts = vec![2u8; ids.len()];
        let limits = Limits {
            max_details_bytes: 300,
            ..Limits::default()
        };
        let results = run(&p, &limits, |s| result(&p, s, &ids, &verdicts, 2)).unwrap();
        assert!(results[0].passed && results[0].truncated);
        let text = serde_json::to_string(&results[0].actual_samples).unwrap();
        assert!(text.len() <= 300, "{text}");
        let kept = results[0].actual_samples.as_array().unwrap();
        assert_eq!(kept.len(), 1);
        let values = kept[0]["values"].as_array().unwrap();
        assert!(values.len() >= 10 && values.len() < 60, "{text}");
        assert_eq!(values[0], "model-00");
        assert_eq!(
            values[values.len() - 1],
            json!(format!("model-{:02}", values.len() - 1))
        );
    }

    #[test]
    fn serde_keeps_null_expected_and_refuses_unknown_keys() {
        let a: Assertion = serde_json::from_value(json!({"id": "a", "select": "*", "path": "$",
            "matcher": "toEqual", "expected": null}))
        .unwrap();
        assert_eq!(a.expected, Some(Value::Null));
        assert_eq!(serde_json::to_value(&a).unwrap()["expected"], Value::Null);
        let a: Assertion = serde_json::from_value(json!({"id": "a", "select": "*", "path": "$",
            "matcher": "toBeNull"}))
        .unwrap();
        assert_eq!(a.expected, None);
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(
            text,
            r#"{"id":"a","select":"*","path":"$","matcher":"toBeNull"}"#
        );
        assert!(serde_json::from_value::<Assertion>(json!({"id": "a", "Not": true})).is_err());
        assert!(
            serde_json::from_value::<Assertion>(json!({"id": "a", "pathMatch": "SOME"})).is_err()
        );
    }

    #[test]
    fn normalize_fills_ids_and_stores_keys() {
        let p = page(json!([
            {"description": "Alpha is fine", "select": "Alpha", "path": "$", "matcher": "toBeNull"},
            {"select": "b", "path": "$", "matcher": "toBeNull"},
            {"id": "alpha-is-fine-2", "description": "x", "select": "*", "path": "$", "matcher": "toBeNull"},
            {"description": "Alpha is fine", "select": "kind=web|id=a", "path": "$", "matcher": "toBeNull"}
        ]));
        let ids: Vec<&str> = p.assertions.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "alpha-is-fine",
                "assertion-2",
                "alpha-is-fine-2",
                "alpha-is-fine-3"
            ]
        );
        let selects: Vec<&str> = p.assertions.iter().map(|a| a.select.as_str()).collect();
        assert_eq!(
            selects,
            ["kind=web|id=a", "kind=cli|id=b", "*", "kind=web|id=a"]
        );
        assert!(validate(&p, &Limits::default()).is_empty());
    }

    #[test]
    fn every_source_must_hold() {
        let p = page(
            json!([{"id": "w", "select": "*", "path": "$.selectionVerdict", "matcher": "toEqual", "expected": 1}]),
        );
        let pp = &p;
        let at = |v: u8| move |s| result(pp, s, &["x"], &[v], v);
        let ok = run(&p, &Limits::default(), at(1)).unwrap();
        assert!(ok[0].passed);
        assert_eq!(ok[0].actual_samples.as_array().unwrap().len(), 2);
        assert_eq!(
            ok[0].actual_samples,
            json!([
                {"selection": "kind=web|id=a", "passed": true, "values": [1]},
                {"selection": "kind=cli|id=b", "passed": true, "values": [1]}
            ])
        );
        let bad = run(&p, &Limits::default(), |s| {
            result(&p, s, &["x"], &[1], s as u8)
        })
        .unwrap();
        assert!(!bad[0].passed);
        assert_eq!(
            bad[0].message.as_deref(),
            Some("$.selectionVerdict toEqual 1: got 0 for kind=web|id=a")
        );
        let worse = run(&p, &Limits::default(), at(2)).unwrap();
        assert_eq!(
            worse[0].message.as_deref(),
            Some("$.selectionVerdict toEqual 1: got 2 for kind=web|id=a (and 1 more of 2 sources)")
        );
    }

    #[test]
    fn pins_and_merges() {
        let p = page(json!([]));
        let result = result(&p, 0, &["x", "it's"], &[1, 0], 1);
        let pins = pin(&p, &result);
        let ids: Vec<&str> = pins.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "pin-web-a-x-verdict",
                "pin-web-a-it-s-verdict",
                "pin-web-a-selection-verdict",
                "pin-web-a-recommendation"
            ]
        );
        assert_eq!(pins[1].path, "$.targets[?@.id=='it\\'s'].verdict");
        assert_eq!(pins[3].matcher, "toBeNull");
        let mut with = p.clone();
        with.assertions = pins.clone();
        let results = run(&with, &Limits::default(), |_| result.clone()).unwrap();
        assert!(results.iter().all(|r| r.passed), "{results:?}");

        let mut list = vec![pins[0].clone()];
        list[0].expected = Some(json!(2));
        assert_eq!(merge(&mut list, pins.clone()), (1, 3));
        assert_eq!(list, pins);
    }

    #[test]
    fn pin_shaped_paths_are_answered_directly() {
        let field = |id: &str, f: &str| {
            Some(Direct::TargetField {
                id: id.into(),
                field: f.into(),
            })
        };
        assert_eq!(
            Direct::of("$.targets[?@.id=='gpt-4.1'].verdict"),
            field("gpt-4.1", "verdict")
        );
        assert_eq!(
            Direct::of("$.targets[?@.id==\"x\"].label"),
            field("x", "label")
        );
        assert_eq!(
            Direct::of("$.selectionVerdict"),
            Some(Direct::SelectionVerdict)
        );
        assert_eq!(
            Direct::of("$.recommendedTargetId"),
            Some(Direct::Recommended)
        );
        assert_eq!(
            Direct::of("$.targets[*].verdict"),
            Some(Direct::EveryTarget {
                field: "verdict".into()
            })
        );
        for general in [
            "$.targets[*].rules",
            "$.targets[*].override",
            "$.targets[*]",
            "$.targets[?@.id=='a'].rules",
            "$.targets[?@.id=='a'].rules.x",
            "$.targets[?@.id=='it\\'s'].verdict",
            "$.targets[?@.verdict==2].id",
            "$.targets[0].verdict",
            "$..verdict",
        ] {
            assert_eq!(Direct::of(general), None, "{general}");
        }
    }

    #[test]
    fn the_registry_lists_the_matchers() {
        let names: Vec<&str> = registry().iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            ["toEqual", "toBeNull", "toContain", "toMatch", "toBeOneOf"]
        );
        assert_eq!(matcher("toBeNull").unwrap().arity, Arity::None);
        assert!(matcher("toBe").is_none());
    }
}

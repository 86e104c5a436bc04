//! Text for people: the one escaping of untrusted strings before a terminal (every
//! front writes through these), and the short forms of values, names and keys that
//! both fronts show.

use serde_json::Value;

/// Whether `c` must not reach a terminal raw: C0 and C1 controls, DEL, bidirectional
/// controls, zero-width characters.
pub fn is_unsafe(c: char) -> bool {
    rulebench_core::text::is_unsafe(c)
}

/// `text` with every character that must not reach a terminal shown escaped
/// (`\u{1b}`), line breaks included.
pub fn sanitize(text: &str) -> String {
    rulebench_core::text::sanitize(text)
}

/// As [`sanitize`], keeping line breaks.
pub fn sanitize_lines(text: &str) -> String {
    rulebench_core::text::sanitize_lines(text)
}

/// JSON text with those characters as `\uXXXX` escapes: the same JSON to a reader.
pub fn json_safe(text: &str) -> std::borrow::Cow<'_, str> {
    rulebench_core::text::json_safe(text)
}

/// A value as explanations show it (strings quoted, numbers as JavaScript prints them).
pub fn fmt_value(v: &Value) -> String {
    rulebench_core::explain::fmt_value(v)
}

/// The closest of `candidates` to `word`, when one is close enough to be a typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    rulebench_core::diag::did_you_mean(word, candidates)
}

/// An id made from a name: lowercase letters, digits and single hyphens.
pub fn slugify(name: &str) -> String {
    rulebench_core::model::slugify(name)
}

/// The keyHash of a row key (SHA-256, hex): how overrides name their rows.
pub fn key_hash(key: &str) -> String {
    rulebench_core::model::key_hash(key)
}

/// Names as a sentence lists them: `a`, `a or b`, `a, b or c`.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

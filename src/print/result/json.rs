//! The JSON printer: the result JSON of one selection as a pretty object
//! (`evaluate --format json`), or of every selection as a pretty array of them (`--all`).
//!
//! No JSON tree of a result is built: the result is written byte for byte as
//! `serde_json`'s pretty printer would write it, from [`Fragments`] precomputed once per
//! page (the rule ids and target ids are escaped once, not once per cell). The JSON
//! Lines printer writes the same result compact, with the same fragments.

use std::io::{self, Write};

use serde_json::Value;

use super::formatted::Formatted;
use super::sink::ResultSink;
use crate::app::types::{FeatureKeys, Names, SelectionResult};

/// Builds a [`Json`] printer.
#[derive(Clone, Debug, Default)]
pub struct JsonBuilder {
    array: bool,
}

impl JsonBuilder {
    /// A printer of one pretty object per selection, each followed by a newline.
    pub fn new() -> JsonBuilder {
        JsonBuilder::default()
    }

    /// Every selection as an element of one array (`--all`) rather than each as an
    /// object of its own.
    pub fn array(&mut self, yes: bool) -> &mut JsonBuilder {
        self.array = yes;
        self
    }

    /// The printer, writing to `w`.
    pub fn build<W: Write>(&self, w: W) -> Json<W> {
        Json {
            w,
            array: self.array,
            fragments: None,
            count: 0,
        }
    }
}

/// Prints the result JSON, pretty (2 spaces): an object per selection, or one array of
/// every selection ([`JsonBuilder::array`]).
#[derive(Debug)]
pub struct Json<W> {
    w: W,
    array: bool,
    /// The page's fragments, made at [`ResultSink::begin`] (or from the first
    /// selection's names when `begin` was skipped).
    fragments: Option<Fragments>,
    /// Selections written so far.
    count: usize,
}

impl<W: Write> Json<W> {
    /// Where a result's lines start: at 0 alone, 2 spaces in inside the array (its
    /// members sit 2 spaces deeper still).
    fn indent(&self) -> usize {
        if self.array { 2 } else { 0 }
    }
}

impl<W: Write> ResultSink for Json<W> {
    fn begin(&mut self, names: &Names, _page_name: &str, _source_name: &str) -> io::Result<()> {
        self.fragments = Some(Fragments::new(names, Some(self.indent())));
        if self.array {
            self.w.write_all(b"[")?;
        }
        Ok(())
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        let indent = self.indent();
        let f = self
            .fragments
            .get_or_insert_with(|| Fragments::new(&r.names, Some(indent)));
        if self.array {
            self.w
                .write_all(if self.count == 0 { b"\n  " } else { b",\n  " })?;
            write_result(&mut self.w, r, f)?;
        } else {
            write_result(&mut self.w, r, f)?;
            self.w.write_all(b"\n")?;
        }
        self.count += 1;
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.array {
            self.w
                .write_all(if self.count > 0 { b"\n]\n" } else { b"]\n" })?;
        }
        Ok(())
    }
}

/// Escaped pieces of JSON shared by every selection of one page.
#[derive(Debug)]
pub(super) struct Fragments {
    /// Per rule: `\n<indent>"id": ` at the depth of a target's `rules` object.
    rule_keys: Vec<Vec<u8>>,
    /// Per rule: its name as a JSON string.
    rule_names: Vec<Vec<u8>>,
    /// Per shown field: `"field": `.
    shown_keys: Vec<Vec<u8>>,
    /// Keys of a `features[]` entry: (`\n<indent>"id": `, target).
    feature_keys: Vec<(Vec<u8>, usize)>,
    features: FeatureKeys,
    /// `None`: compact, on one line.
    indent: Option<String>,
    /// By depth (0–8): a line break and the indent plus `depth` spaces; empty compact.
    breaks: Vec<Vec<u8>>,
}

pub(super) fn json_string(s: &str) -> Vec<u8> {
    let text = serde_json::to_string(s).expect("strings serialize");
    crate::app::text::json_safe(&text).into_owned().into_bytes()
}

/// Writes a JSON string, escaped, terminal controls included (see `json_safe`).
pub(super) fn write_str<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    if s.chars().any(crate::app::text::is_unsafe) {
        return w.write_all(&json_string(s));
    }
    serde_json::to_writer(&mut *w, s).map_err(crate::print::json_io)
}

impl Fragments {
    /// The fragments of a page's results written pretty at `indent` spaces, or compact
    /// on one line when `indent` is `None`.
    pub(super) fn new(names: &Names, indent: Option<usize>) -> Fragments {
        let pad = indent.map(|n| " ".repeat(n));
        let key = |depth: usize, s: &str| {
            let mut out = match &pad {
                Some(pad) => format!("\n{pad}{}", " ".repeat(depth)).into_bytes(),
                None => Vec::new(),
            };
            out.extend(json_string(s));
            out.extend(if pad.is_some() { &b": "[..] } else { &b":"[..] });
            out
        };
        let features = names.feature_keys();
        Fragments {
            rule_keys: names.rules.iter().map(|r| key(8, &r.id)).collect(),
            rule_names: names.rules.iter().map(|r| json_string(&r.name)).collect(),
            shown_keys: names.shown.iter().map(|f| key(6, f)).collect(),
            feature_keys: features
                .targets
                .iter()
                .map(|(id, t)| (key(6, id), *t))
                .collect(),
            features,
            breaks: (0..=10)
                .map(|depth| match &pad {
                    Some(pad) => format!("\n{pad}{}", " ".repeat(depth)).into_bytes(),
                    None => Vec::new(),
                })
                .collect(),
            indent: pad,
        }
    }

    /// A line break and `depth` more spaces than the result's indent (nothing compact).
    fn nl<W: Write>(&self, w: &mut W, depth: usize) -> io::Result<()> {
        w.write_all(&self.breaks[depth])
    }

    /// `"key": ` (pretty) or `"key":` (compact), after a line break at `depth`.
    fn key<W: Write>(&self, w: &mut W, depth: usize, key: &str) -> io::Result<()> {
        self.nl(w, depth)?;
        write_str(w, key)?;
        w.write_all(if self.indent.is_some() { b": " } else { b":" })
    }
}

/// A rule's outcome as the result JSON writes it: `true`, `false`, or `null` where the
/// rule does not apply.
fn bool_text(outcome: Option<bool>) -> &'static [u8] {
    match outcome {
        Some(true) => b"true",
        Some(false) => b"false",
        None => b"null",
    }
}

/// A value as `serde_json`'s pretty printer writes it at `indent` spaces (compact when
/// `indent` is `None`).
fn write_value<W: Write>(w: &mut W, value: &Value, indent: Option<&str>) -> io::Result<()> {
    match (value, indent) {
        (Value::Array(_) | Value::Object(_), Some(indent)) => {
            let text = serde_json::to_string_pretty(value).expect("values serialize");
            let text = crate::app::text::json_safe(&text);
            let mut first = true;
            for line in text.split('\n') {
                if !first {
                    w.write_all(b"\n")?;
                    w.write_all(indent.as_bytes())?;
                }
                first = false;
                w.write_all(line.as_bytes())?;
            }
            Ok(())
        }
        _ => {
            let text = serde_json::to_string(value).expect("values serialize");
            w.write_all(crate::app::text::json_safe(&text).as_bytes())
        }
    }
}

/// A score as JSON (`null` when not finite), from this thread's [`Scores`].
pub(super) fn number<W: Write>(w: &mut W, score: f64) -> io::Result<()> {
    with_scores(|scores| w.write_all(scores.get(score)))
}

thread_local! {
    static SCORES: std::cell::RefCell<Scores> = std::cell::RefCell::default();
}

/// `f` with this thread's [`Scores`] (one table a thread, whichever printer asks).
pub(super) fn with_scores<R>(f: impl FnOnce(&mut Scores) -> R) -> R {
    SCORES.with_borrow_mut(f)
}

/// The most bytes a score takes as JSON (`-1.2345678901234567e-308` is 24), padded.
pub(super) const SCORE_WIDTH: usize = 32;

/// Scores as JSON (`null` when not finite), each formatted once per distinct value
/// ([`Formatted`]).
pub(super) struct Scores(Formatted<SCORE_WIDTH>);

impl Default for Scores {
    fn default() -> Scores {
        Scores(Formatted::new(1))
    }
}

impl Scores {
    /// `score` as JSON, padded to [`SCORE_WIDTH`] bytes (copied at a constant size),
    /// and its length.
    #[inline]
    pub(super) fn padded(&mut self, score: f64) -> (&[u8; SCORE_WIDTH], usize) {
        self.0
            .get(score.to_bits(), 0, || {
                serde_json::to_string(&score).expect("a double serializes")
            })
            .expect("a double takes 24 bytes at most")
    }

    /// `score` as JSON.
    #[inline]
    pub(super) fn get(&mut self, score: f64) -> &[u8] {
        let (text, len) = self.padded(score);
        &text[..len]
    }
}

/// The result JSON of one selection: pretty (2 spaces) at the fragments' indent, or
/// compact. Ends without a newline.
pub(super) fn write_result<W: Write>(
    w: &mut W,
    r: &SelectionResult,
    f: &Fragments,
) -> io::Result<()> {
    let string = |w: &mut W, depth: usize, key: &str, value: &str| -> io::Result<()> {
        f.key(w, depth, key)?;
        write_str(w, value)
    };
    let comma = |w: &mut W| w.write_all(b",");
    w.write_all(b"{")?;
    string(w, 2, "pageId", r.page_id())?;
    comma(w)?;
    f.key(w, 2, "revisionId")?;
    write!(w, "{},", r.revision)?;
    string(w, 2, "cache", r.cache.as_str())?;
    comma(w)?;
    string(w, 2, "selectionKey", &r.selection_key)?;
    comma(w)?;
    f.key(w, 2, "selectionVerdict")?;
    write!(w, "{},", r.selection_verdict())?;
    match r.recommended_id() {
        Some(id) => string(w, 2, "recommendedTargetId", id)?,
        None => {
            f.key(w, 2, "recommendedTargetId")?;
            w.write_all(b"null")?;
        }
    }
    comma(w)?;
    f.key(w, 2, "targets")?;
    w.write_all(b"[")?;
    let n = r.target_count();
    let deep = f.indent.as_ref().map(|i| format!("{i}      "));
    for t in 0..n {
        if t > 0 {
            comma(w)?;
        }
        f.nl(w, 4)?;
        w.write_all(b"{")?;
        let name = &r.names.targets[t];
        string(w, 6, "id", &name.id)?;
        for (key, value) in f.shown_keys.iter().zip(&name.shown) {
            comma(w)?;
            w.write_all(key)?;
            write_value(w, value, deep.as_deref())?;
        }
        let d = r.device(t);
        comma(w)?;
        f.key(w, 6, "verdict")?;
        write!(w, "{},", d.verdict)?;
        f.key(w, 6, "score")?;
        number(w, d.score)?;
        comma(w)?;
        string(w, 6, "reason", d.reason.as_str())?;
        comma(w)?;
        f.key(w, 6, "rules")?;
        w.write_all(b"{")?;
        for (k, key) in f.rule_keys.iter().enumerate() {
            if k > 0 {
                comma(w)?;
            }
            w.write_all(key)?;
            w.write_all(bool_text(r.outcome(k, t)))?;
        }
        if !f.rule_keys.is_empty() {
            f.nl(w, 6)?;
        }
        w.write_all(b"}")?;
        if let Some((value, note)) = r.override_of(t) {
            comma(w)?;
            f.key(w, 6, "override")?;
            w.write_all(b"{")?;
            f.key(w, 8, "value")?;
            w.write_all(bool_text(Some(value)))?;
            if let Some(note) = note {
                comma(w)?;
                string(w, 8, "note", note)?;
            }
            f.nl(w, 6)?;
            w.write_all(b"}")?;
        }
        let warnings = r.warnings(t);
        if !warnings.is_empty() {
            comma(w)?;
            f.key(w, 6, "warnings")?;
            w.write_all(b"[")?;
            for (i, (kind, detail)) in warnings.iter().enumerate() {
                if i > 0 {
                    comma(w)?;
                }
                f.nl(w, 8)?;
                w.write_all(b"{")?;
                string(w, 10, "kind", kind)?;
                comma(w)?;
                string(w, 10, "detail", detail)?;
                f.nl(w, 8)?;
                w.write_all(b"}")?;
            }
            f.nl(w, 6)?;
            w.write_all(b"]")?;
        }
        f.nl(w, 4)?;
        w.write_all(b"}")?;
    }
    if n > 0 {
        f.nl(w, 2)?;
    }
    w.write_all(b"],")?;
    f.key(w, 2, "features")?;
    w.write_all(b"[")?;
    for (k, rule_name) in f.rule_names.iter().enumerate() {
        if k > 0 {
            comma(w)?;
        }
        f.nl(w, 4)?;
        w.write_all(b"{")?;
        f.key(w, 6, "name")?;
        match f.features.name_target {
            Some(t) => w.write_all(bool_text(r.outcome(k, t)))?,
            None => w.write_all(rule_name)?,
        }
        for (key, t) in &f.feature_keys {
            comma(w)?;
            w.write_all(key)?;
            w.write_all(bool_text(r.outcome(k, *t)))?;
        }
        f.nl(w, 4)?;
        w.write_all(b"}")?;
    }
    if !f.rule_names.is_empty() {
        f.nl(w, 2)?;
    }
    w.write_all(b"],")?;
    let warnings = r.selection_warnings();
    if !warnings.is_empty() {
        f.key(w, 2, "warnings")?;
        w.write_all(b"[")?;
        for (i, (kind, detail)) in warnings.iter().enumerate() {
            if i > 0 {
                comma(w)?;
            }
            f.nl(w, 4)?;
            w.write_all(b"{")?;
            string(w, 6, "kind", kind)?;
            comma(w)?;
            string(w, 6, "detail", detail)?;
            f.nl(w, 4)?;
            w.write_all(b"}")?;
        }
        f.nl(w, 2)?;
        w.write_all(b"],")?;
    }
    string(w, 2, "evaluatedAt", &r.evaluated_at)?;
    f.nl(w, 0)?;
    w.write_all(b"}")
}

#[cfg(test)]
mod tests {
    use super::Scores;

    /// Scores read from the table are serde_json's, whichever slot they share: a
    /// thousand distinct doubles in 256 slots, each asked for twice, the extremes too.
    #[test]
    fn scores_formatted_once_are_serde_json_s() {
        let mut scores = Scores::default();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut values: Vec<f64> = (0..1000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match i % 4 {
                    0 => f64::from_bits(x),
                    1 => (x % 1000) as f64 / 7.0,
                    2 => f64::from(u32::try_from(x % 21).unwrap()) / 20.0,
                    _ => -((x % 100) as f64),
                }
            })
            .collect();
        values.extend([
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            -1.234_567_890_123_456_7e-308,
        ]);
        for round in 0..2 {
            for &v in &values {
                let expected = serde_json::to_string(&v).unwrap();
                assert_eq!(
                    std::str::from_utf8(scores.get(v)).unwrap(),
                    expected,
                    "{v:e}, round {round}"
                );
            }
        }
    }
}

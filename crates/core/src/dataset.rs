//! Datasets beyond the page file: data files (CSV, JSON, JSON Lines) parsed into typed
//! rows, field statistics (inferred types and coverage), field defaults and key case.
//!
//! Pure: bytes in, rows or located errors out. Reading files and storing rows is the
//! app's business (`app::dataset`).
//!
//! CSV typing is decided per column, over all its non-empty cells: a column whose cells
//! are all `true` / `false` (any case) holds booleans; a column whose cells are all
//! JSON numbers without leading zeros (`42`, `-1.5`, `2e3`, not `02134`, `+1` or `.5`)
//! holds numbers; any other column holds strings, every cell kept as written — so a
//! column of zip codes such as `02134` stays strings, and `90210` next to it stays a
//! string too. An empty cell is `null`. Quoting does not change a type (the CSV format
//! does not say what quotes mean). Header names are trimmed; cells are not.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use sha2::Digest;

pub use super::model::{ColumnType, DataFormat, KeyCase, ReadOptions};
use super::model::{Dataset, Page, Row, Side, key_hash};

impl Dataset {
    /// The patch of a row (by its key), when it has one.
    pub fn patch_of(&self, row: &Row) -> Option<&super::model::RowPatch> {
        if self.patches.is_empty() {
            return None;
        }
        let key = self.row_key(row);
        self.patches.iter().find(|p| self.key_matches(&p.key, &key))
    }

    /// The row as rules see it: every field default fills a field the row lacks or
    /// holds as `null`, then the row's patch sets its fields. Borrowed when nothing is
    /// filled or set.
    pub fn effective_row<'a>(&self, row: &'a Row) -> Cow<'a, Row> {
        let lacks = |k: &String| row.get(k).is_none_or(Value::is_null);
        let patch = self.patch_of(row);
        if patch.is_none() && !self.defaults.keys().any(lacks) {
            return Cow::Borrowed(row);
        }
        let mut out = row.clone();
        for (k, v) in &self.defaults {
            match out.get_mut(k) {
                Some(slot) if slot.is_null() => *slot = v.clone(),
                Some(_) => {}
                None => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        // The patch last: it sets what it sets, over defaults too.
        if let Some(p) = patch {
            for (k, v) in &p.set {
                out.insert(k.clone(), v.clone());
            }
        }
        Cow::Owned(out)
    }

    /// Whether two keys (or ids, or key field values) name the same row.
    pub fn key_matches(&self, a: &str, b: &str) -> bool {
        a == b || (!self.key_case.is_sensitive() && self.key_case.fold(a) == self.key_case.fold(b))
    }

    /// The row's key as keys are compared (lower-cased when insensitive).
    pub fn folded_key(&self, row: &Row) -> String {
        let key = self.row_key(row);
        self.key_case.fold(&key).into_owned()
    }
}

/// Rewrites overrides that name a row of a case-insensitive dataset in another case
/// (`id=OpenAI`) to the row's own key, so that they match by keyHash like any other.
/// Returns whether anything changed.
pub fn canonicalize_overrides(page: &mut Page) -> bool {
    let mut changed = false;
    let resolve = |d: &Dataset, key: &mut Option<String>, hash: &mut Option<String>| -> bool {
        if d.key_case.is_sensitive() {
            return false;
        }
        if let Some(k) = key.as_ref() {
            let folded = d.key_case.fold(k).into_owned();
            if d.rows.iter().any(|r| &d.row_key(r) == k) {
                return false;
            }
            if let Some(r) = d.rows.iter().find(|r| d.folded_key(r) == folded) {
                *key = Some(d.row_key(r));
                return true;
            }
        } else if let Some(h) = hash.as_ref() {
            if d.rows.iter().any(|r| &key_hash(&d.row_key(r)) == h) {
                return false;
            }
            if let Some(r) = d.rows.iter().find(|r| &key_hash(&d.folded_key(r)) == h) {
                *hash = Some(key_hash(&d.row_key(r)));
                return true;
            }
        }
        false
    };
    let (source, target) = (&page.source, &page.target);
    for o in &mut page.overrides {
        // A keyHash is hex, stored lower-case (`ABC…` names the row `abc…` does).
        for h in [&mut o.source_key_hash, &mut o.target_key_hash]
            .into_iter()
            .flatten()
        {
            if h.bytes().any(|b| b.is_ascii_uppercase()) {
                *h = h.to_ascii_lowercase();
                changed = true;
            }
        }
        changed |= resolve(source, &mut o.source_key, &mut o.source_key_hash);
        changed |= resolve(target, &mut o.target_key, &mut o.target_key_hash);
    }
    changed
}

/// After one side's rows were replaced: overrides that named a row by a key that now
/// matches no row are pointed at the new row with the same key up to case (for
/// case-insensitive datasets: `id=ollama` re-imported as `OLLAMA`). `old_keys` gives
/// the replaced rows' (key, keyHash) pairs; it is only called when needed. Returns
/// whether anything changed.
pub fn rekey_overrides(
    page: &mut Page,
    side: Side,
    old_keys: impl FnOnce() -> Vec<(String, String)>,
) -> bool {
    let new = page.dataset(side);
    let case = new.key_case;
    if case.is_sensitive() {
        return false;
    }
    // (override, the key it names) on this side.
    let named: Vec<(usize, Option<String>, Option<String>)> = page
        .overrides
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            let (key, hash) = match side {
                Side::Source => (&o.source_key, &o.source_key_hash),
                Side::Target => (&o.target_key, &o.target_key_hash),
            };
            (key.is_some() || hash.is_some()).then(|| (i, key.clone(), hash.clone()))
        })
        .collect();
    if named.is_empty() {
        return false;
    }
    // The key text each override names (a hash-only one: the key of the old row).
    let mut old: Option<HashMap<String, String>> = None;
    let mut old_keys = Some(old_keys);
    let mut wanted: Vec<(usize, bool, String)> = Vec::new();
    for (i, key, hash) in named {
        let by_key = key.is_some();
        let text = match (key, hash) {
            (Some(k), _) => Some(k),
            (None, Some(h)) => old
                .get_or_insert_with(|| {
                    let f = old_keys.take().expect("called once");
                    f().into_iter().map(|(k, h)| (h, k)).collect()
                })
                .get(&h)
                .cloned(),
            (None, None) => None,
        };
        if let Some(text) = text {
            wanted.push((i, by_key, text));
        }
    }
    // One pass over the new rows: which wanted keys still match exactly, and which
    // match up to case.
    let mut exact: HashMap<&str, bool> =
        wanted.iter().map(|(_, _, t)| (t.as_str(), false)).collect();
    let folded_wanted: HashMap<String, ()> = wanted
        .iter()
        .map(|(_, _, t)| (case.fold(t).into_owned(), ()))
        .collect();
    let mut found: HashMap<String, String> = HashMap::new();
    let mut unmatched = exact.len();
    for r in &new.rows {
        if unmatched == 0 {
            break;
        }
        let key = new.row_key(r);
        if let Some(hit) = exact.get_mut(key.as_str()) {
            if !*hit {
                *hit = true;
                unmatched -= 1;
            }
            continue;
        }
        let f = case.fold(&key).into_owned();
        if folded_wanted.contains_key(&f) {
            found.entry(f).or_insert(key);
        }
    }
    let stale: Vec<(usize, bool, String)> = wanted
        .iter()
        .filter(|(_, _, t)| !exact.get(t.as_str()).copied().unwrap_or(false))
        .filter_map(|(i, by_key, t)| {
            found
                .get(case.fold(t).as_ref())
                .map(|now| (*i, *by_key, now.clone()))
        })
        .collect();
    let changed = !stale.is_empty();
    for (i, by_key, now) in stale {
        let o = &mut page.overrides[i];
        let (k, h) = match side {
            Side::Source => (&mut o.source_key, &mut o.source_key_hash),
            Side::Target => (&mut o.target_key, &mut o.target_key_hash),
        };
        if by_key {
            *k = Some(now);
        } else {
            *h = Some(key_hash(&now));
        }
    }
    changed
}

// ---------------------------------------------------------------------------------------------
// Field statistics
// ---------------------------------------------------------------------------------------------

/// One field of a dataset: how many rows hold it, with which types, and its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldSchema {
    /// Rows that have the field as stored (`null` included).
    pub present: usize,
    /// Of those, rows where it is `null`.
    pub nulls: usize,
    /// Non-null values by type (`string`, `integer`, `number`, `boolean`, `array`, `object`).
    pub types: BTreeMap<&'static str, usize>,
    /// The dataset's default for it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The key of the first row holding each type (for the mixed-types warning).
    #[serde(skip)]
    pub first: BTreeMap<&'static str, String>,
    /// Of the strings, those that read as a number or a version (`"120"`, `"16.4"`):
    /// ordered as text, `"9" >= "10"` (the `text-order` lint).
    #[serde(skip)]
    pub numeric_text: usize,
    /// The paths under the field where some row holds an object there (`added.fetch`),
    /// for checking a rule's nested paths; `None` when no row's value is an object.
    #[serde(skip)]
    pub nested: Option<Nested>,
}

/// The paths under an object field: every key path any row has (`a`, `a.b`), up to
/// [`MAX_NESTED_PATHS`] of them and [`MAX_NESTED_DEPTH`] levels (past either, the
/// paths are not known: `overflow`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nested {
    pub paths: std::collections::BTreeSet<String>,
    pub overflow: bool,
}

/// The most paths kept under one object field.
pub const MAX_NESTED_PATHS: usize = 20_000;
/// The deepest path kept under an object field.
pub const MAX_NESTED_DEPTH: usize = 8;

impl Nested {
    /// Adds the key paths of `o` (under `prefix`, a reused buffer).
    fn add(&mut self, o: &Map<String, Value>, prefix: &mut String, depth: usize) {
        if self.overflow {
            return;
        }
        if depth > MAX_NESTED_DEPTH {
            self.overflow = true;
            return;
        }
        for (k, v) in o {
            let len = prefix.len();
            if len > 0 {
                prefix.push('.');
            }
            prefix.push_str(k);
            if !self.paths.contains(prefix.as_str()) {
                if self.paths.len() >= MAX_NESTED_PATHS {
                    self.overflow = true;
                    return;
                }
                self.paths.insert(prefix.clone());
            }
            if let Value::Object(inner) = v {
                self.add(inner, prefix, depth + 1);
            }
            prefix.truncate(len);
        }
    }
}

/// Whether a text reads as a number or a version: digits, with dots between
/// (`120`, `16.4`, `1.2.3`).
pub fn numeric_text(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

impl FieldSchema {
    /// Counts one row's value of the field (`key` names the row, asked only for a type
    /// not seen before).
    fn count(&mut self, v: &Value, key: &dyn Fn() -> String) {
        self.present += 1;
        match v {
            Value::Null => self.nulls += 1,
            v => {
                let t = value_type(v);
                *self.types.entry(t).or_insert(0) += 1;
                if !self.first.contains_key(t) {
                    self.first.insert(t, key());
                }
                match v {
                    Value::String(s) if numeric_text(s) => self.numeric_text += 1,
                    Value::Object(o) => {
                        self.nested.get_or_insert_with(Nested::default).add(
                            o,
                            &mut String::new(),
                            1,
                        );
                    }
                    _ => {}
                }
            }
        }
    }
}

impl FieldSchema {
    /// The kinds of value the field holds, integers and fractions as one (`number`),
    /// each with the key of a row holding it: more than one is a mixed field.
    pub fn kinds(&self) -> Vec<(&'static str, usize, &str)> {
        let mut out: Vec<(&'static str, usize, &str)> = Vec::new();
        for (t, n) in &self.types {
            let kind = if *t == "integer" { "number" } else { *t };
            let first = self.first.get(t).map_or("", String::as_str);
            match out.iter_mut().find(|(k, _, _)| *k == kind) {
                Some(slot) => slot.1 += n,
                None => out.push((kind, *n, first)),
            }
        }
        out
    }
}

impl FieldSchema {
    /// The inferred type: one type name, `number` for integers mixed with fractions,
    /// `null` when no row holds a value, else the types joined by `|`, most common first.
    pub fn type_name(&self) -> String {
        let mut types: Vec<(&str, usize)> = self.types.iter().map(|(t, n)| (*t, *n)).collect();
        if let Some(d) = &self.default
            && !d.is_null()
            && !self.types.contains_key(value_type(d))
        {
            types.push((value_type(d), 0));
        }
        let names: Vec<&str> = types.iter().map(|(t, _)| *t).collect();
        match names.as_slice() {
            [] => "null".to_owned(),
            [one] => (*one).to_owned(),
            ["integer", "number"] => "number".to_owned(),
            _ => {
                types.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
                types.iter().map(|(t, _)| *t).collect::<Vec<_>>().join("|")
            }
        }
    }
}

/// The JSON type of a value, integers apart from other numbers.
pub fn value_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every field of a dataset (those of its rows and of its defaults), sorted by name.
pub fn field_schemas(d: &Dataset) -> BTreeMap<String, FieldSchema> {
    let mut index: HashMap<String, FieldSchema> = HashMap::new();
    for row in &d.rows {
        tally(&mut index, row, &|| d.row_key(row));
    }
    with_defaults(index.into_iter().collect(), d)
}

/// Adds a dataset's defaults to the field schemas of its rows.
pub fn with_defaults(
    mut fields: BTreeMap<String, FieldSchema>,
    d: &Dataset,
) -> BTreeMap<String, FieldSchema> {
    for (k, v) in &d.defaults {
        let f = fields.entry(k.clone()).or_default();
        f.default = Some(v.clone());
        // An object default's keys are there for every row that reads it.
        if let Value::Object(o) = v {
            f.nested
                .get_or_insert_with(Nested::default)
                .add(o, &mut String::new(), 1);
        }
    }
    fields
}

/// Counts one row into the field schemas.
fn tally(index: &mut HashMap<String, FieldSchema>, row: &Row, key: &dyn Fn() -> String) {
    for (k, v) in row {
        // Most rows share one set of fields: allocate a name once.
        let f = match index.get_mut(k.as_str()) {
            Some(f) => f,
            None => index.entry(k.clone()).or_default(),
        };
        f.count(v, key);
    }
}

// ---------------------------------------------------------------------------------------------
// Data files
// ---------------------------------------------------------------------------------------------

impl DataFormat {
    pub fn name(self) -> &'static str {
        match self {
            DataFormat::Csv => "CSV",
            DataFormat::Tsv => "TSV",
            DataFormat::Json => "JSON",
            DataFormat::JsonLines => "JSON Lines",
            DataFormat::Parquet => "Parquet",
            DataFormat::Arrow => "Arrow IPC",
            DataFormat::Excel => "Excel",
        }
    }

    /// The word `--input-format` takes for it (`csv`, `jsonl`, `parquet`, …).
    pub fn word(self) -> &'static str {
        self.into()
    }

    /// Whether the format is binary (decoded by the app's readers, not by [`parse`]).
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            DataFormat::Parquet | DataFormat::Arrow | DataFormat::Excel
        )
    }

    /// The format an extension names: `.csv`, `.tsv` / `.tab`, `.json`, `.jsonl` /
    /// `.ndjson`, `.parquet` / `.pq`, `.arrow` / `.feather` / `.ipc` / `.arrows`,
    /// `.xlsx` / `.xlsm` / `.xlsb` / `.xls` / `.ods`.
    pub fn from_path(path: &Path) -> Option<DataFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(DataFormat::Csv),
            "tsv" | "tab" => Some(DataFormat::Tsv),
            "json" => Some(DataFormat::Json),
            "jsonl" | "ndjson" => Some(DataFormat::JsonLines),
            "parquet" | "pq" => Some(DataFormat::Parquet),
            "arrow" | "feather" | "ipc" | "arrows" => Some(DataFormat::Arrow),
            "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => Some(DataFormat::Excel),
            _ => None,
        }
    }

    /// Guesses from the content: Parquet, Arrow and Excel by their magic bytes; `[`
    /// opens JSON; `{` opens JSON Lines when the first line is a whole object and more
    /// follows it (else one JSON object, keyed rows); else CSV, or TSV when the first
    /// line has tabs and no commas.
    pub fn sniff(bytes: &[u8]) -> DataFormat {
        if bytes.starts_with(b"PAR1") {
            return DataFormat::Parquet;
        }
        if bytes.starts_with(b"ARROW1") || bytes.starts_with(&[0xFF, 0xFF, 0xFF, 0xFF]) {
            return DataFormat::Arrow;
        }
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
            return DataFormat::Excel;
        }
        let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
        let start = bytes
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(bytes.len());
        let bytes = &bytes[start..];
        match bytes.first() {
            Some(b'[') => DataFormat::Json,
            Some(b'{') => {
                let end = bytes
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(bytes.len());
                let Ok(first) = std::str::from_utf8(&bytes[..end]) else {
                    return DataFormat::JsonLines;
                };
                match serde_json::from_str::<Value>(first.trim()) {
                    // A pretty-printed object: its first line is not a whole value.
                    Err(_) => DataFormat::Json,
                    Ok(Value::Object(members)) => {
                        let more = bytes[end..].iter().any(|b| !b.is_ascii_whitespace());
                        // One line, two or more members, all objects: rows keyed by
                        // name (`jq -c` of a keyed file), not one row.
                        if !more && members.len() > 1 && members.values().all(Value::is_object) {
                            DataFormat::Json
                        } else {
                            DataFormat::JsonLines
                        }
                    }
                    Ok(_) => DataFormat::JsonLines,
                }
            }
            _ => {
                let end = bytes
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(bytes.len());
                let first = &bytes[..end];
                if first.contains(&b'\t') && !first.contains(&b',') {
                    DataFormat::Tsv
                } else {
                    DataFormat::Csv
                }
            }
        }
    }

    /// The extension's format, else a guess from the content.
    pub fn detect(path: &Path, bytes: &[u8]) -> DataFormat {
        Self::from_path(path).unwrap_or_else(|| Self::sniff(bytes))
    }
}

/// Where a data file's rows are: lines of text, rows of a table (Parquet, Arrow), or
/// rows of a sheet (Excel).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "sheet")]
pub enum RowPlace {
    #[default]
    Line,
    Row,
    Sheet(String),
}

impl RowPlace {
    /// `file:12`, `file: row 12`, `file: sheet `S` row 12`.
    pub fn at(&self, file: &str, n: usize) -> String {
        match self {
            RowPlace::Line => format!("{file}:{n}"),
            RowPlace::Row => format!("{file}: row {n}"),
            // A sheet's name is the workbook's, untrusted: escaped for a terminal.
            RowPlace::Sheet(sheet) => {
                format!("{file}: sheet `{}` row {n}", crate::text::sanitize(sheet))
            }
        }
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A row of a data file that cannot be imported, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadRow {
    /// 1-based line where the row starts.
    pub line: usize,
    pub message: String,
}

/// Bad rows listed in full in an error message; the rest are counted.
const BAD_ROWS_SHOWN: usize = 20;

/// Why a data file cannot be imported. Every variant names the file and, where there
/// is one, the line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DataError {
    /// The file as a whole does not parse (a JSON syntax error, not UTF-8, …).
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// Something about the whole file (no header, not an array, no key column, …).
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// Some rows are bad; `good` rows are not.
    #[error("{}", render_bad_rows(file, bad, *good, place))]
    BadRows {
        file: String,
        bad: Vec<BadRow>,
        good: usize,
        place: RowPlace,
    },
}

fn render_bad_rows(file: &str, bad: &[BadRow], good: usize, place: &RowPlace) -> String {
    if let [one] = bad {
        return format!("{}: {}", place.at(file, one.line), one.message);
    }
    let mut out = format!("{file}: {} bad rows ({good} good):", bad.len());
    for b in bad.iter().take(BAD_ROWS_SHOWN) {
        out.push_str(&format!("\n  {}: {}", place.at(file, b.line), b.message));
    }
    if bad.len() > BAD_ROWS_SHOWN {
        out.push_str(&format!("\n  … and {} more", bad.len() - BAD_ROWS_SHOWN));
    }
    out
}

/// How to read a data file.
#[derive(Debug, Clone, Copy)]
pub struct ParseOptions<'a> {
    /// The key fields every row must have (non-null, unique).
    pub key: &'a [String],
    pub key_case: KeyCase,
    /// Keep the good rows and report the bad ones instead of refusing the file.
    pub skip_bad: bool,
    /// How the file is read (name field, stated types; format and sheet are the
    /// caller's).
    pub read: &'a ReadOptions,
}

/// Reading as the file says (no name field, sheet or stated types).
pub const READ_AS_IS: &ReadOptions = &ReadOptions {
    format: None,
    name_field: None,
    sheet: None,
    types: BTreeMap::new(),
};

impl ParseOptions<'_> {
    /// The field that takes a keyed JSON object's member names: the stated one, else
    /// the dataset's key when it is one field.
    fn name_field(&self) -> Option<&str> {
        self.read.name_field.as_deref().or(match self.key {
            [one] => Some(one.as_str()),
            _ => None,
        })
    }
}

/// The rows of a data file.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub format: DataFormat,
    pub rows: Vec<Row>,
    /// The 1-based line each row starts on.
    pub lines: Vec<usize>,
    /// Bad rows left out (only with `skip_bad`).
    pub skipped: Vec<BadRow>,
    /// Field names in order of first appearance (CSV: the header).
    pub fields: Vec<String>,
    /// Where rows are (what `lines` and `skipped` count).
    pub place: RowPlace,
}

/// Rows decoded from a binary file (Parquet, Arrow, Excel) by the app's readers, with
/// where each is; [`parse_table`] and [`compact_table`] check them as [`parse`] does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// (1-based row number in `place`, row).
    pub rows: Vec<(usize, Row)>,
    /// Rows that could not be decoded.
    pub bad: Vec<BadRow>,
    /// Column names in order.
    pub fields: Vec<String>,
    pub place: RowPlace,
}

/// Parses a data file into rows, checking that every row has its key and that keys are
/// unique. `progress` is told how many bytes are done, now and then.
pub fn parse(
    bytes: &[u8],
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<Parsed, DataError> {
    let (raw, text_len) = read_raw(bytes, file, format, opts, progress)?;
    progress(text_len);
    parse_raw(raw, file, format, opts)
}

/// Checks rows decoded from a binary file ([`Table`]) as [`parse`] checks a text file's.
pub fn parse_table(
    table: Table,
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
) -> Result<Parsed, DataError> {
    parse_raw(Raw::typed(table, file, opts)?, file, format, opts)
}

fn parse_raw(
    raw: Raw<'_>,
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
) -> Result<Parsed, DataError> {
    let fields = raw.fields.clone();
    let place = raw.place.clone();
    let mut rows = Vec::with_capacity(raw.rows.len());
    let mut lines = Vec::with_capacity(raw.rows.len());
    let skipped = check_rows(raw, file, format, opts, &mut |line, row| {
        rows.push(row);
        lines.push(line);
        true
    })?;
    Ok(Parsed {
        format,
        rows,
        lines,
        skipped,
        fields,
        place,
    })
}

/// Hashes a SHA-256 digest by its first bytes (already uniformly spread).
#[derive(Default)]
struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for (i, b) in bytes.iter().take(8).enumerate() {
            self.0 ^= u64::from(*b) << (8 * i);
        }
    }
}

/// [`parse_compact`] of CSV records with exactly compared keys: each record is written
/// as its row's JSON text straight from its cells (the same text as the typed row's),
/// with no row tree on the way.
fn compact_csv(
    raw: Raw<'_>,
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
    out: &mut dyn FnMut(RowText<'_>) -> bool,
) -> Result<CompactFacts, DataError> {
    let Raw {
        rows: RawRows::Csv {
            header,
            kinds,
            records,
        },
        mut bad,
        fields,
        place,
    } = raw
    else {
        unreachable!("called on CSV records");
    };
    let key_columns: Vec<(usize, &String)> = opts
        .key
        .iter()
        .map(|k| {
            header
                .iter()
                .position(|h| h == k)
                .map(|i| (i, k))
                .ok_or_else(|| DataError::File {
                    file: file.to_owned(),
                    message: format!(
                        "no column `{k}` (a key field); the columns are {}",
                        fields.join(", ")
                    ),
                })
        })
        .collect::<Result<_, _>>()?;
    // `"name":` of every column, escaped once.
    let names: Vec<String> = header
        .iter()
        .map(|h| {
            let mut n = serde_json::to_string(h).expect("strings serialize");
            n.push(':');
            n
        })
        .collect();
    let mut stats: Vec<FieldSchema> = vec![FieldSchema::default(); header.len()];
    // Keys seen, by (the first 128 bits of) their SHA-256, computed for the keyHash
    // anyway, with the line of each: no key is copied.
    let mut seen: HashMap<[u8; 16], u32, std::hash::BuildHasherDefault<DigestHasher>> =
        HashMap::with_capacity_and_hasher(records.good, Default::default());
    let mut rows = 0usize;
    let kinds: Vec<ColumnType> = kinds.into_iter().map(ColumnKind::ty).collect();
    // A cell as its typed value's JSON (or, for a key, as the key writes it); returns
    // the value's type.
    let write_cell = |out: &mut String, cell: &str, ty: ColumnType, bare: bool| {
        if cell.is_empty() {
            out.push_str("null");
            return "null";
        }
        if ty == ColumnType::String {
            if bare {
                out.push_str(cell);
            } else {
                push_json_string(out, cell);
            }
            return "string";
        }
        if ty == ColumnType::Number
            && let Some(n) = number(cell)
        {
            use std::fmt::Write;
            write!(out, "{n}").expect("a String takes any text");
            return if n.is_f64() { "number" } else { "integer" };
        }
        if ty == ColumnType::Boolean
            && let Some(b) = boolean(cell)
        {
            out.push_str(if b { "true" } else { "false" });
            return "boolean";
        }
        let v = convert_cell(cell, ty).expect("checked when the record was read");
        match &v {
            Value::String(s) if bare => out.push_str(s),
            v => out.push_str(&v.to_string()),
        }
        value_type(&v)
    };
    // Non-null values per column by type, in the order of `TYPES` (a count per cell
    // costs an index, not a map lookup); folded into `stats` at the end.
    const TYPES: [&str; 6] = ["boolean", "integer", "number", "string", "array", "object"];
    let mut counts: Vec<[usize; 6]> = vec![[0; 6]; header.len()];
    // One buffer each for a row's key, keyHash and JSON text, reused row after row:
    // `out` copies what it keeps.
    let (mut key, mut json, mut hex) = (String::new(), String::new(), [0u8; 64]);
    records.each(&mut |line, record| {
        if let Some((_, k)) = key_columns.iter().find(|(i, _)| record[*i].is_empty()) {
            bad.push(BadRow {
                line,
                message: format!("no value for key field `{k}`"),
            });
            return true;
        }
        key.clear();
        for (n, (i, k)) in key_columns.iter().enumerate() {
            if n > 0 {
                key.push('|');
            }
            key.push_str(k);
            key.push('=');
            if key_columns.len() > 1 {
                // As `Dataset::row_key` writes a key of several fields: `\` and `|` in
                // a string escaped.
                let mut part = String::new();
                if write_cell(&mut part, &record[*i], kinds[*i], true) == "string"
                    && part.contains(['\\', '|'])
                {
                    part = part.replace('\\', "\\\\").replace('|', "\\|");
                }
                key.push_str(&part);
            } else {
                write_cell(&mut key, &record[*i], kinds[*i], true);
            }
        }
        let digest: [u8; 32] = sha2::Sha256::digest(key.as_bytes()).into();
        let short: [u8; 16] = digest[..16].try_into().expect("16 of 32 bytes");
        if let Some(&first) = seen.get(&short) {
            bad.push(BadRow {
                line,
                message: format!("duplicate key `{key}`: line {first} has it too"),
            });
            return true;
        }
        json.clear();
        json.push('{');
        for (c, cell) in record.iter().enumerate() {
            if c > 0 {
                json.push(',');
            }
            json.push_str(&names[c]);
            let t = write_cell(&mut json, cell, kinds[c], false);
            if t == "null" {
                stats[c].nulls += 1;
                continue;
            }
            if t == "string" && numeric_text(cell) {
                stats[c].numeric_text += 1;
            }
            let i = TYPES.iter().position(|x| *x == t).expect("a JSON type");
            if counts[c][i] == 0 {
                stats[c].first.insert(TYPES[i], key.clone());
            }
            counts[c][i] += 1;
        }
        json.push('}');
        // A text file's lines fit: it is at most 512 MiB.
        seen.insert(short, u32::try_from(line).unwrap_or(u32::MAX));
        rows += 1;
        out(RowText {
            key: &key,
            hash: super::model::hex_into(&digest, &mut hex),
            json: &json,
        })
    });
    for (f, counts) in stats.iter_mut().zip(&counts) {
        f.present = rows;
        for (t, &n) in TYPES.iter().zip(counts) {
            if n > 0 {
                f.types.insert(t, n);
            }
        }
    }
    bad.sort_by_key(|b| b.line);
    if !bad.is_empty() && !opts.skip_bad {
        return Err(DataError::BadRows {
            file: file.to_owned(),
            bad,
            good: rows,
            place,
        });
    }
    let schema = header
        .into_iter()
        .zip(stats)
        .filter(|(_, f)| f.present > 0)
        .collect();
    Ok(CompactFacts {
        format,
        rows,
        skipped: bad,
        fields,
        schema,
        place,
    })
}

/// Reads a file's rows (and its length without a BOM).
fn read_raw<'t>(
    bytes: &'t [u8],
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<(Raw<'t>, u64), DataError> {
    let file_err = |message: String| DataError::File {
        file: file.to_owned(),
        message,
    };
    if format.is_binary() {
        return Err(file_err(format!(
            "{} is read by the app's readers (dataset::parse_table)",
            format.name()
        )));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(file_err(
            "the file is empty (a deleted or half-written file is never read as no rows)"
                .to_owned(),
        ));
    }
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_col(bytes, e.valid_up_to());
        DataError::Syntax {
            file: file.to_owned(),
            line,
            column,
            message: "not UTF-8 text".to_owned(),
        }
    })?;
    let raw = match format {
        DataFormat::Csv => parse_csv(text, file, b',', &opts.read.types, progress)?,
        DataFormat::Tsv => parse_csv(text, file, b'\t', &opts.read.types, progress)?,
        DataFormat::Json => parse_json(text, file, opts.name_field())?.with_types(file, opts)?,
        DataFormat::JsonLines => parse_json_lines(text, progress).with_types(file, opts)?,
        DataFormat::Parquet | DataFormat::Arrow | DataFormat::Excel => unreachable!("refused"),
    };
    Ok((raw, bytes.len() as u64))
}

/// Rows as read, before key checks: (line, row) and the bad ones.
struct Raw<'t> {
    rows: RawRows<'t>,
    bad: Vec<BadRow>,
    fields: Vec<String>,
    place: RowPlace,
}

impl Raw<'_> {
    /// A binary file's decoded rows, with their stated types applied.
    fn typed(table: Table, file: &str, opts: &ParseOptions<'_>) -> Result<Raw<'static>, DataError> {
        Raw {
            rows: RawRows::Rows(table.rows),
            bad: table.bad,
            fields: table.fields,
            place: table.place,
        }
        .with_types(file, opts)
    }

    /// Applies the stated column types to decoded rows: a value that does not convert
    /// makes its row bad. A stated field no row has is an error.
    fn with_types(mut self, file: &str, opts: &ParseOptions<'_>) -> Result<Self, DataError> {
        let types = &opts.read.types;
        if types.is_empty() {
            return Ok(self);
        }
        stated_fields_exist(types, &self.fields, file)?;
        let RawRows::Rows(rows) = std::mem::replace(&mut self.rows, RawRows::Rows(vec![])) else {
            return Ok(self);
        };
        let mut kept = Vec::with_capacity(rows.len());
        for (line, mut row) in rows {
            match apply_types(&mut row, types, line) {
                Ok(()) => kept.push((line, row)),
                Err(bad) => self.bad.push(bad),
            }
        }
        self.rows = RawRows::Rows(kept);
        Ok(self)
    }
}

/// A stated type (`--type`) for a field no row has is an error.
fn stated_fields_exist(
    types: &BTreeMap<String, ColumnType>,
    fields: &[String],
    file: &str,
) -> Result<(), DataError> {
    match types.keys().find(|f| !fields.contains(f)) {
        Some(missing) => Err(DataError::File {
            file: file.to_owned(),
            message: format!(
                "--type {missing}=…: no row has a field `{missing}` (fields: {})",
                fields.join(", ")
            ),
        }),
        None => Ok(()),
    }
}

/// A decoded row's stated types applied: a value that does not convert makes the row
/// bad (at `line`).
fn apply_types(
    row: &mut Row,
    types: &BTreeMap<String, ColumnType>,
    line: usize,
) -> Result<(), BadRow> {
    for (field, ty) in types {
        if let Some(v) = row.get_mut(field) {
            *v = coerce(std::mem::take(v), *ty).map_err(|message| BadRow {
                line,
                message: format!("field `{field}`: {message}"),
            })?;
        }
    }
    Ok(())
}

/// The rows of a file as read. A CSV file's records are not held: the first pass typed
/// its columns and found its bad lines, and each record is read again and typed into a
/// row on its way out, one at a time.
enum RawRows<'t> {
    Rows(Vec<(usize, Row)>),
    Csv {
        header: Vec<String>,
        kinds: Vec<ColumnKind>,
        records: CsvRecords<'t>,
    },
}

impl RawRows<'_> {
    fn len(&self) -> usize {
        match self {
            RawRows::Rows(rows) => rows.len(),
            RawRows::Csv { records, .. } => records.good,
        }
    }

    /// Each (line, row) in file order to `f`, until it says stop.
    fn each_row(self, f: &mut dyn FnMut(usize, Row) -> bool) {
        match self {
            RawRows::Rows(rows) => {
                for (line, row) in rows {
                    if !f(line, row) {
                        return;
                    }
                }
            }
            RawRows::Csv {
                header,
                kinds,
                records,
            } => {
                let types: Vec<ColumnType> = kinds.into_iter().map(ColumnKind::ty).collect();
                records.each(&mut |line, record| {
                    let row: Row = header
                        .iter()
                        .zip(record.iter())
                        .zip(&types)
                        .map(|((h, cell), ty)| (h.clone(), typed(cell, *ty)))
                        .collect();
                    f(line, row)
                });
            }
        }
    }
}

/// A CSV text's good data records, read again on demand: the first pass
/// ([`parse_csv`]) typed the columns and noted the bad lines; none is held.
struct CsvRecords<'t> {
    text: &'t str,
    delimiter: u8,
    columns: usize,
    /// Where the records the first pass found bad start ([`record_start`]), in order:
    /// by place, not line (a lone carriage return ends a record, not a line).
    bad_at: Vec<u64>,
    /// How many records are good.
    good: usize,
}

impl CsvRecords<'_> {
    /// Each good record with its line, in order, into one reused record, until `f`
    /// says stop.
    fn each(&self, f: &mut dyn FnMut(usize, &csv::StringRecord) -> bool) {
        let mut reader = csv_reader(self.text, self.delimiter);
        let mut lines = LineCounter::new(self.text.as_bytes());
        let mut record = csv::StringRecord::new();
        let mut bad = self.bad_at.iter().peekable();
        let mut header = true;
        // The first pass read this text to its end without an error.
        while let Ok(true) = reader.read_record(&mut record) {
            if std::mem::take(&mut header) {
                continue;
            }
            let pos = record.position().expect("records read have a position");
            let line = lines.line_of(pos.byte() as usize);
            if shape(&record, self.columns) == Shape::Blank {
                continue;
            }
            let at = record_start(self.text.as_bytes(), pos.byte());
            while bad.next_if(|&&b| b < at).is_some() {}
            if bad.next_if(|&&b| b == at).is_some() {
                continue;
            }
            if !f(line, &record) {
                return;
            }
        }
    }
}

/// Where a record read at `pos` starts: past the line ends the reader counts in (a
/// record after `\r\n` is read from the `\n`), so both passes and both halves name a
/// record by the same place.
fn record_start(text: &[u8], pos: u64) -> u64 {
    let from = pos as usize;
    let skip = text.get(from..).map_or(0, |rest| {
        rest.iter()
            .take_while(|&&b| matches!(b, b'\r' | b'\n'))
            .count()
    });
    (from + skip) as u64
}

/// A CSV record beside its header.
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    /// As many fields as the header.
    Fits,
    /// A line of nothing but a lone empty field, where the header has more: skipped.
    Blank,
    /// Another number of fields.
    Wrong,
}

fn shape(record: &csv::StringRecord, columns: usize) -> Shape {
    if record.len() == columns {
        Shape::Fits
    } else if record.len() == 1 && record[0].trim().is_empty() {
        Shape::Blank
    } else {
        Shape::Wrong
    }
}

/// The reader every pass over a CSV text uses.
fn csv_reader(text: &str, delimiter: u8) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::Headers)
        .from_reader(text.as_bytes())
}

/// A row ready to store: its key, keyHash and JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRow {
    pub key: String,
    pub hash: String,
    pub json: String,
}

impl StoredRow {
    pub fn text(&self) -> RowText<'_> {
        RowText {
            key: &self.key,
            hash: &self.hash,
            json: &self.json,
        }
    }
}

/// A row ready to store as texts borrowed from whoever made it: rows made one at a
/// time ([`Planned::emit`]) reuse their buffers, and a writer copies what it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowText<'a> {
    pub key: &'a str,
    pub hash: &'a str,
    pub json: &'a str,
}

impl RowText<'_> {
    pub fn to_stored(self) -> StoredRow {
        StoredRow {
            key: self.key.to_owned(),
            hash: self.hash.to_owned(),
            json: self.json.to_owned(),
        }
    }
}

/// What validation needs of a data file's rows made ready to store, without the rows
/// (they went to a writer as they were made: [`Planned::emit`], [`TableCompactor`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactFacts {
    pub format: DataFormat,
    /// How many rows were made.
    pub rows: usize,
    /// Bad rows left out (only with `skip_bad`).
    pub skipped: Vec<BadRow>,
    /// Field names in order of first appearance (CSV: the header).
    pub fields: Vec<String>,
    /// Each field's types and coverage over the rows (no defaults).
    pub schema: BTreeMap<String, FieldSchema>,
    /// Where rows are (what `skipped` counts).
    pub place: RowPlace,
}

/// The rows of a data file in the form they are stored in, with what validation needs
/// of them ([`parse_compact`]): no row is kept as a JSON tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Compact {
    pub format: DataFormat,
    pub rows: Vec<StoredRow>,
    /// Bad rows left out (only with `skip_bad`).
    pub skipped: Vec<BadRow>,
    /// Field names in order of first appearance (CSV: the header).
    pub fields: Vec<String>,
    /// Each field's types and coverage over the rows (no defaults).
    pub schema: BTreeMap<String, FieldSchema>,
    /// Where rows are (what `skipped` counts).
    pub place: RowPlace,
}

impl Compact {
    fn of(facts: CompactFacts, rows: Vec<StoredRow>) -> Compact {
        Compact {
            format: facts.format,
            rows,
            skipped: facts.skipped,
            fields: facts.fields,
            schema: facts.schema,
            place: facts.place,
        }
    }
}

/// Parses a data file into rows ready to store, checking keys as [`parse`] does: the
/// rows collected ([`plan`] and [`Planned::emit`] hand them on one at a time instead).
pub fn parse_compact(
    bytes: &[u8],
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<Compact, DataError> {
    let planned = plan(bytes, file, format, opts, progress)?;
    let mut rows = Vec::with_capacity(planned.rows());
    let facts = planned.emit(opts, &mut |row| {
        rows.push(row.to_stored());
        true
    })?;
    Ok(Compact::of(facts, rows))
}

/// A text data file after its first pass ([`plan`]): a CSV file's header, column types
/// and bad lines (its records are read again by [`Planned::emit`]); a JSON file's rows.
pub struct Planned<'t> {
    raw: Raw<'t>,
    file: String,
    format: DataFormat,
}

/// Reads a text data file as far as its rows can be made one at a time: for CSV and
/// TSV the first of two passes (nothing is held but the text); JSON is parsed whole.
/// `progress` is told how many bytes are done, now and then.
pub fn plan<'t>(
    bytes: &'t [u8],
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<Planned<'t>, DataError> {
    let (raw, text_len) = read_raw(bytes, file, format, opts, progress)?;
    progress(text_len);
    Ok(Planned {
        raw,
        file: file.to_owned(),
        format,
    })
}

impl Planned<'_> {
    /// How many rows are to come, at most (fewer when keys are missing or repeated).
    pub fn rows(&self) -> usize {
        self.raw.rows.len()
    }

    /// The file's fields (CSV: its header).
    pub fn fields(&self) -> &[String] {
        &self.raw.fields
    }

    pub fn format(&self) -> DataFormat {
        self.format
    }

    /// Makes the rows ready to store and hands each to `out` in file order, as it is
    /// made, until `out` says stop (`false`: its writer failed); checks keys as
    /// [`parse`] does. Returns what validation needs of the rows (or why the file is
    /// refused: that is known only once every row was made).
    pub fn emit(
        self,
        opts: &ParseOptions<'_>,
        out: &mut dyn FnMut(RowText<'_>) -> bool,
    ) -> Result<CompactFacts, DataError> {
        let Planned { raw, file, format } = self;
        if matches!(raw.rows, RawRows::Csv { .. }) && opts.key_case.is_sensitive() {
            return compact_csv(raw, &file, format, opts, out);
        }
        let fields = raw.fields.clone();
        let place = raw.place.clone();
        let keyed = Dataset {
            key: opts.key.to_vec(),
            key_case: opts.key_case,
            ..Dataset::default()
        };
        let mut index: HashMap<String, FieldSchema> = HashMap::new();
        let mut rows = 0;
        let skipped = check_rows(raw, &file, format, opts, &mut |_, row| {
            let key = keyed.row_key(&row);
            tally(&mut index, &row, &|| key.clone());
            rows += 1;
            out(RowText {
                hash: &super::model::key_hash(&key),
                key: &key,
                json: &serde_json::to_string(&row).expect("rows serialize"),
            })
        })?;
        Ok(CompactFacts {
            format,
            rows,
            skipped,
            fields,
            schema: index.into_iter().collect(),
            place,
        })
    }
}

/// The per-row checks of a data file's rows, in file order: nesting, the key present and
/// unique (case-aware). Bad rows are kept for the report.
struct RowChecker {
    keyed: Dataset,
    /// Keys seen (folded by the key case), by 128 bits of their SHA-256, with the row
    /// of each: no key is copied.
    seen: HashMap<[u8; 16], u32, std::hash::BuildHasherDefault<DigestHasher>>,
    keyless: bool,
    word: &'static str,
    good: usize,
    bad: Vec<BadRow>,
}

impl RowChecker {
    /// The checks of `opts`' key; the key fields must be among `fields` (a table's
    /// columns; `None` for JSON, whose rows carry their own fields).
    fn new(
        file: &str,
        fields: Option<&[String]>,
        place: &RowPlace,
        opts: &ParseOptions<'_>,
        bad: Vec<BadRow>,
    ) -> Result<RowChecker, DataError> {
        if let Some(fields) = fields
            && let Some(missing) = opts.key.iter().find(|k| !fields.contains(k))
        {
            return Err(DataError::File {
                file: file.to_owned(),
                message: format!(
                    "no column `{missing}` (a key field); the columns are {}",
                    fields.join(", ")
                ),
            });
        }
        Ok(RowChecker {
            keyed: Dataset {
                key: opts.key.to_vec(),
                key_case: opts.key_case,
                ..Dataset::default()
            },
            seen: HashMap::default(),
            keyless: opts.key.is_empty(),
            word: match place {
                RowPlace::Line => "line",
                RowPlace::Row | RowPlace::Sheet(_) => "row",
            },
            good: 0,
            bad,
        })
    }

    /// Whether the row at `line` is good (else it is noted as bad).
    fn check(&mut self, line: usize, row: &Row) -> bool {
        self.checked(line, row).is_some()
    }

    /// The key of the row at `line` and its SHA-256, when the row is good (else it is
    /// noted as bad). A file read without a key gets empty keys.
    fn checked(&mut self, line: usize, row: &Row) -> Option<(String, [u8; 32])> {
        self.checked_by(
            line,
            &|field| row.get(field),
            super::validate::row_too_deep(row),
        )
    }

    /// [`RowChecker::checked`] of a row read through `get`, which `too_deep` says nests
    /// too deep.
    fn checked_by<'v>(
        &mut self,
        line: usize,
        get: &dyn Fn(&str) -> Option<&'v Value>,
        too_deep: bool,
    ) -> Option<(String, [u8; 32])> {
        if too_deep {
            self.bad.push(BadRow {
                line,
                message: format!(
                    "the row nests deeper than the limit of {} levels",
                    super::validate::MAX_DEPTH
                ),
            });
            return None;
        }
        let key = self.keyed.key_from(get);
        let digest: [u8; 32] = sha2::Sha256::digest(key.as_bytes()).into();
        // No key (a file read to infer one): rows are not checked for keys.
        if !self.keyless {
            if let Some(k) = self
                .keyed
                .key
                .iter()
                .find(|k| get(k.as_str()).is_none_or(Value::is_null))
            {
                self.bad.push(BadRow {
                    line,
                    message: format!("no value for key field `{k}`"),
                });
                return None;
            }
            let folded = match self.keyed.key_case.fold(&key) {
                std::borrow::Cow::Borrowed(_) => digest,
                std::borrow::Cow::Owned(f) => sha2::Sha256::digest(f.as_bytes()).into(),
            };
            let short: [u8; 16] = folded[..16].try_into().expect("16 of 32 bytes");
            if let Some(&first) = self.seen.get(&short) {
                self.bad.push(BadRow {
                    line,
                    message: format!("duplicate key `{key}`: {} {first} has it too", self.word),
                });
                return None;
            }
            self.seen
                .insert(short, u32::try_from(line).unwrap_or(u32::MAX));
        }
        self.good += 1;
        Some((key, digest))
    }

    /// The bad rows, sorted; an error unless `skip_bad`.
    fn finish(
        mut self,
        file: &str,
        place: RowPlace,
        skip_bad: bool,
    ) -> Result<Vec<BadRow>, DataError> {
        self.bad.sort_by_key(|b| b.line);
        if !self.bad.is_empty() && !skip_bad {
            return Err(DataError::BadRows {
                file: file.to_owned(),
                bad: self.bad,
                good: self.good,
                place,
            });
        }
        Ok(self.bad)
    }
}

/// Checks every row's key (present, unique) and hands each good row to `keep`, in file
/// order; returns the bad rows left out (an error unless `skip_bad`).
fn check_rows(
    raw: Raw<'_>,
    file: &str,
    format: DataFormat,
    opts: &ParseOptions<'_>,
    keep: &mut dyn FnMut(usize, Row) -> bool,
) -> Result<Vec<BadRow>, DataError> {
    let Raw {
        rows,
        bad,
        fields,
        place,
    } = raw;
    let tabular = matches!(
        format,
        DataFormat::Csv
            | DataFormat::Tsv
            | DataFormat::Parquet
            | DataFormat::Arrow
            | DataFormat::Excel
    );
    let mut checker = RowChecker::new(file, tabular.then_some(&fields[..]), &place, opts, bad)?;
    rows.each_row(&mut |line, row| !checker.check(line, &row) || keep(line, row));
    checker.finish(file, place, opts.skip_bad)
}

/// Where a binary reader puts what it decodes: its columns first, then its rows one by
/// one (a [`Table`] collects them; a [`TableCompactor`] stores each as it comes).
pub trait TableSink {
    /// The file's columns and where its rows are; before any row.
    fn start(&mut self, fields: Vec<String>, place: RowPlace) -> Result<(), DataError>;
    /// One decoded row (1-based `line` in `place`).
    fn row(&mut self, line: usize, row: Row);
    /// One decoded row as its cells in the order of `names` (the columns `start` was
    /// given), taken out of `cells`; by default made a [`Row`] for [`TableSink::row`].
    fn cells(&mut self, line: usize, names: &[String], cells: &mut Vec<Value>) {
        let row: Row = names.iter().cloned().zip(cells.drain(..)).collect();
        self.row(line, row);
    }
    /// A row that could not be decoded.
    fn bad(&mut self, bad: BadRow);
}

impl TableSink for Table {
    fn start(&mut self, fields: Vec<String>, place: RowPlace) -> Result<(), DataError> {
        self.fields = fields;
        self.place = place;
        Ok(())
    }

    fn row(&mut self, line: usize, row: Row) {
        self.rows.push((line, row));
    }

    fn bad(&mut self, bad: BadRow) {
        self.bad.push(bad);
    }
}

/// Rows of a binary file made ready to store as they are decoded (stated types applied,
/// keys checked, field schemas counted) and handed to `out` one at a time: no file's
/// rows are held at once.
pub struct TableCompactor<'a> {
    file: String,
    format: DataFormat,
    opts: ParseOptions<'a>,
    fields: Vec<String>,
    place: RowPlace,
    checker: Option<RowChecker>,
    /// Bad rows before `start` (none from the readers; kept for the checker).
    early: Vec<BadRow>,
    /// An error `start` found (reported by `finish`).
    failed: Option<DataError>,
    out: &'a mut dyn FnMut(RowText<'_>) -> bool,
    rows: usize,
    /// `out` said stop.
    stopped: bool,
    index: HashMap<String, FieldSchema>,
    /// Rows that come as cells ([`TableSink::cells`]): each column's `"name":` as JSON,
    /// the stated types by column (in the order `apply_types` checks them), each
    /// column's schema so far, and the buffer a row's JSON text is written in.
    names: Vec<String>,
    stated: Vec<(usize, ColumnType)>,
    columns: Vec<FieldSchema>,
    json: Vec<u8>,
}

impl<'a> TableCompactor<'a> {
    pub fn new(
        file: &str,
        format: DataFormat,
        opts: &ParseOptions<'a>,
        out: &'a mut dyn FnMut(RowText<'_>) -> bool,
    ) -> TableCompactor<'a> {
        TableCompactor {
            file: file.to_owned(),
            format,
            opts: *opts,
            fields: vec![],
            place: RowPlace::Row,
            checker: None,
            early: vec![],
            failed: None,
            out,
            rows: 0,
            stopped: false,
            index: HashMap::new(),
            names: vec![],
            stated: vec![],
            columns: vec![],
            json: vec![],
        }
    }

    /// What validation needs of the rows, or why the file is refused.
    pub fn finish(self) -> Result<CompactFacts, DataError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let Some(checker) = self.checker else {
            return Err(DataError::File {
                file: self.file,
                message: "no columns were read".into(),
            });
        };
        let skipped = checker.finish(&self.file, self.place.clone(), self.opts.skip_bad)?;
        let mut schema: BTreeMap<String, FieldSchema> = self.index.into_iter().collect();
        for (name, f) in self.fields.iter().zip(self.columns) {
            if f.present > 0 {
                schema.insert(name.clone(), f);
            }
        }
        Ok(CompactFacts {
            format: self.format,
            rows: self.rows,
            skipped,
            fields: self.fields,
            schema,
            place: self.place,
        })
    }
}

impl TableSink for TableCompactor<'_> {
    fn start(&mut self, fields: Vec<String>, place: RowPlace) -> Result<(), DataError> {
        if let Err(e) = stated_fields_exist(&self.opts.read.types, &fields, &self.file) {
            self.failed = Some(e.clone());
            return Err(e);
        }
        match RowChecker::new(
            &self.file,
            Some(&fields),
            &place,
            &self.opts,
            std::mem::take(&mut self.early),
        ) {
            Ok(c) => self.checker = Some(c),
            Err(e) => {
                self.failed = Some(e.clone());
                return Err(e);
            }
        }
        self.names = fields
            .iter()
            .map(|f| format!("{}:", serde_json::to_string(f).expect("strings serialize")))
            .collect();
        self.stated = self
            .opts
            .read
            .types
            .iter()
            .filter_map(|(f, ty)| Some((fields.iter().position(|c| c == f)?, *ty)))
            .collect();
        self.columns = vec![FieldSchema::default(); fields.len()];
        self.fields = fields;
        self.place = place;
        Ok(())
    }

    /// A row made ready to store straight from its cells: no row map is built, each
    /// column's schema is counted by its place, and the JSON text is the one
    /// `serde_json` writes for the row (names in the columns' order).
    fn cells(&mut self, line: usize, names: &[String], cells: &mut Vec<Value>) {
        let Some(checker) = self.checker.as_mut() else {
            return;
        };
        if self.stopped || names.len() != self.columns.len() {
            // (Not the columns `start` was given: the general way.)
            let row: Row = names.iter().cloned().zip(cells.drain(..)).collect();
            return self.row(line, row);
        }
        for &(i, ty) in &self.stated {
            match coerce(std::mem::take(&mut cells[i]), ty) {
                Ok(v) => cells[i] = v,
                Err(message) => {
                    checker.bad.push(BadRow {
                        line,
                        message: format!("field `{}`: {message}", names[i]),
                    });
                    cells.clear();
                    return;
                }
            }
        }
        let too_deep = cells
            .iter()
            .any(|v| super::diag::value_depth(v) + 1 > super::validate::MAX_DEPTH);
        let get = |field: &str| names.iter().position(|n| n == field).map(|i| &cells[i]);
        let Some((key, digest)) = checker.checked_by(line, &get, too_deep) else {
            cells.clear();
            return;
        };
        self.json.clear();
        self.json.push(b'{');
        for (i, v) in cells.iter().enumerate() {
            if i > 0 {
                self.json.push(b',');
            }
            self.json.extend_from_slice(self.names[i].as_bytes());
            serde_json::to_writer(&mut self.json, v).expect("values serialize");
            self.columns[i].count(v, &|| key.clone());
        }
        self.json.push(b'}');
        cells.clear();
        self.rows += 1;
        let mut hex = [0u8; 64];
        self.stopped = !(self.out)(RowText {
            hash: super::model::hex_into(&digest, &mut hex),
            key: &key,
            json: std::str::from_utf8(&self.json).expect("JSON is UTF-8"),
        });
    }

    fn row(&mut self, line: usize, mut row: Row) {
        let Some(checker) = self.checker.as_mut() else {
            return;
        };
        if self.stopped {
            return;
        }
        if let Err(bad) = apply_types(&mut row, &self.opts.read.types, line) {
            checker.bad.push(bad);
            return;
        }
        let Some((key, digest)) = checker.checked(line, &row) else {
            return;
        };
        tally(&mut self.index, &row, &|| key.clone());
        self.rows += 1;
        let mut hex = [0u8; 64];
        self.stopped = !(self.out)(RowText {
            hash: super::model::hex_into(&digest, &mut hex),
            key: &key,
            json: &serde_json::to_string(&row).expect("rows serialize"),
        });
    }

    fn bad(&mut self, bad: BadRow) {
        match self.checker.as_mut() {
            Some(c) => c.bad.push(bad),
            None => self.early.push(bad),
        }
    }
}

/// A key for rows read from a data file: the first field, in the order `id`, `key`,
/// `name` (any case), then the file's own order, that every row holds as a string or
/// a whole number and no two rows share. `None` when no field is one.
pub fn infer_key(rows: &[Row], fields: &[String]) -> Option<String> {
    let preferred = ["id", "key", "name"];
    let mut order: Vec<&String> = Vec::with_capacity(fields.len());
    for p in preferred {
        order.extend(fields.iter().filter(|f| f.eq_ignore_ascii_case(p)));
    }
    order.extend(
        fields
            .iter()
            .filter(|f| !preferred.iter().any(|p| f.eq_ignore_ascii_case(p))),
    );
    order
        .into_iter()
        .find(|field| {
            let mut seen = std::collections::HashSet::with_capacity(rows.len());
            rows.iter().all(|r| match r.get(field.as_str()) {
                Some(Value::String(s)) if !s.is_empty() => seen.insert(s.clone()),
                Some(Value::Number(n)) if n.is_i64() || n.is_u64() => seen.insert(n.to_string()),
                _ => false,
            })
        })
        .cloned()
}

/// A label for rows: the first field, in the order `name`, `displayName`, `title`,
/// `label` (any case), that is not the key and holds text in most rows.
pub fn infer_label(rows: &[Row], fields: &[String], key: &[String]) -> Option<String> {
    ["name", "displayname", "display_name", "title", "label"]
        .iter()
        .find_map(|p| {
            fields
                .iter()
                .find(|f| f.eq_ignore_ascii_case(p) && !key.contains(f))
        })
        .filter(|f| {
            let text = rows
                .iter()
                .filter(|r| matches!(r.get(f.as_str()), Some(Value::String(_))))
                .count();
            text * 2 > rows.len()
        })
        .cloned()
}

/// A name for a JSON object's member names, when none is stated: `id`, else `key`,
/// else `name`, the first that no member holds already.
pub fn infer_name_field(bytes: &[u8]) -> String {
    let holds = |field: &str| {
        let needle = format!("\"{field}\"");
        // A cheap look: a member holding the field mentions it as a key somewhere.
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    };
    ["id", "key", "name"]
        .into_iter()
        .find(|f| !holds(f))
        .unwrap_or("member")
        .to_owned()
}

/// Reads string columns whose every value is a JSON array or object text as JSON
/// (a sheet's `["openai","azure"]` cells), as CSV columns are; a stated type wins.
pub fn json_text_columns(table: &mut Table, read: &ReadOptions) {
    for field in &table.fields {
        if read.types.contains_key(field) {
            continue;
        }
        let mut any = false;
        let all = table.rows.iter().all(|(_, r)| match r.get(field) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => {
                any = true;
                looks_like_json(s)
            }
            Some(_) => false,
        });
        if !(all && any) {
            continue;
        }
        for (_, r) in &mut table.rows {
            if let Some(v) = r.get_mut(field)
                && let Value::String(s) = v
                && let Ok(parsed) = convert_cell(s, ColumnType::Json)
            {
                *v = parsed;
            }
        }
    }
}

/// 1-based line and column of a byte offset.
fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

/// What every non-empty cell of a column can be, or its stated type.
#[derive(Debug, Clone, Copy)]
struct ColumnKind {
    all_bool: bool,
    all_number: bool,
    /// Every cell a JSON array or object (`["openai","azure"]`).
    all_json: bool,
    stated: Option<ColumnType>,
}

impl Default for ColumnKind {
    fn default() -> Self {
        ColumnKind {
            all_bool: true,
            all_number: true,
            all_json: true,
            stated: None,
        }
    }
}

impl ColumnKind {
    /// The type the column's cells are read as.
    fn ty(self) -> ColumnType {
        match self.stated {
            Some(t) => t,
            None if self.all_bool => ColumnType::Boolean,
            None if self.all_number => ColumnType::Number,
            None if self.all_json => ColumnType::Json,
            None => ColumnType::String,
        }
    }

    /// Narrows the inferred type by one non-empty cell.
    fn see(&mut self, cell: &str) {
        if self.all_bool && !is_bool(cell) {
            self.all_bool = false;
        }
        if self.all_number && number(cell).is_none() {
            self.all_number = false;
        }
        if self.all_json && !looks_like_json(cell) {
            self.all_json = false;
        }
    }
}

/// A cell that is a JSON array or object (and parses as one, within the depth limit).
fn looks_like_json(cell: &str) -> bool {
    let t = cell.trim();
    (t.starts_with('[') && t.ends_with(']') || t.starts_with('{') && t.ends_with('}'))
        && super::diag::prescan(t, super::diag::MAX_TEXT_DEPTH).is_none()
        && serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok()
}

/// A cell read as `ty`: the value, or why it is not one. An empty cell is `null`.
pub fn convert_cell(cell: &str, ty: ColumnType) -> Result<Value, String> {
    if cell.is_empty() {
        return Ok(Value::Null);
    }
    let shown = || {
        let short: String = cell.chars().take(40).collect();
        let more = if short.len() < cell.len() { "…" } else { "" };
        format!("{}{more}", crate::text::sanitize(&short))
    };
    match ty {
        ColumnType::String => Ok(Value::String(cell.to_owned())),
        ColumnType::Number => lenient_number(cell)
            .map(Value::Number)
            .ok_or_else(|| format!("`{}` is not a number", shown())),
        ColumnType::Integer => lenient_number(cell)
            .and_then(|n| whole(&n))
            .map(Value::from)
            .ok_or_else(|| format!("`{}` is not a whole number (within ±2^53)", shown())),
        ColumnType::Boolean => boolean(cell)
            .map(Value::Bool)
            .ok_or_else(|| format!("`{}` is not a boolean (true/false, 1/0, yes/no)", shown())),
        ColumnType::Json => {
            let t = cell.trim();
            if let Some((_, _, problem)) = super::diag::prescan(t, super::diag::MAX_TEXT_DEPTH) {
                return Err(format!("`{}` is not JSON: {}", shown(), problem.message()));
            }
            let mut de = serde_json::Deserializer::from_str(t);
            de.disable_recursion_limit();
            StrictValue::deserialize(&mut de)
                .and_then(|v| de.end().map(|_| v.0))
                .map_err(|e| {
                    let m = e.to_string();
                    let m = m
                        .rsplit_once(" at line ")
                        .map_or(m.clone(), |(m, _)| m.to_owned());
                    format!("`{}` is not JSON: {m}", shown())
                })
        }
    }
}

/// A cell read as a boolean: `true`/`false`, `1`/`0`, `yes`/`no` (any case, trimmed).
fn boolean(cell: &str) -> Option<bool> {
    let t = cell.trim();
    let is = |words: [&str; 3]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
    if is(["true", "1", "yes"]) {
        Some(true)
    } else if is(["false", "0", "no"]) {
        Some(false)
    } else {
        None
    }
}

/// `s` as a JSON string, as serde_json writes it (`"`, `\` and control characters
/// escaped), appended to `out`.
fn push_json_string(out: &mut String, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(&serde_json::to_string(s).expect("strings serialize"));
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// A decoded value read as `ty` (`--type` on a JSON, Parquet, Arrow or Excel field):
/// text converts as a cell does, numbers and booleans convert where they can, and
/// `string` writes any value as its text. `null` stays `null`.
pub fn coerce(v: Value, ty: ColumnType) -> Result<Value, String> {
    match (v, ty) {
        (Value::Null, _) => Ok(Value::Null),
        (Value::String(s), ColumnType::String) => Ok(Value::String(s)),
        (Value::String(s), ty) => convert_cell(&s, ty),
        (v, ColumnType::String) => Ok(Value::String(v.to_string())),
        (Value::Number(n), ColumnType::Number) => Ok(Value::Number(n)),
        (Value::Number(n), ColumnType::Integer) => whole(&n)
            .map(Value::from)
            .ok_or_else(|| format!("{n} is not a whole number (within ±2^53)")),
        (Value::Number(n), ColumnType::Boolean) => match n.as_f64() {
            Some(1.0) => Ok(Value::Bool(true)),
            Some(0.0) => Ok(Value::Bool(false)),
            _ => Err(format!("{n} is not a boolean (1 or 0)")),
        },
        (Value::Bool(b), ColumnType::Boolean) => Ok(Value::Bool(b)),
        (Value::Bool(b), ColumnType::Number | ColumnType::Integer) => Ok(Value::from(u8::from(b))),
        (v, ColumnType::Json) => Ok(v),
        (v, ty) => Err(format!(
            "{} is not {}",
            describe(&v),
            match ty {
                ColumnType::Number => "a number",
                ColumnType::Integer => "a whole number",
                ColumnType::Boolean => "a boolean",
                ColumnType::String | ColumnType::Json => unreachable!("converted above"),
            }
        )),
    }
}

/// A number as stated (`--type F=number`): a JSON number, or `+1`, `.5`, `02134`.
fn lenient_number(cell: &str) -> Option<Number> {
    let t = cell.trim();
    if let Some(n) = number(t) {
        return Some(n);
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    if !t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'e' | b'E' | b'+'))
    {
        return None;
    }
    if let Ok(i) = t.parse::<i64>() {
        return (i.unsigned_abs() <= super::diag::MAX_EXACT_INTEGER).then(|| Number::from(i));
    }
    t.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(Number::from_f64)
}

/// A number's whole value, when it is one within ±2^53.
fn whole(n: &Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return (i.unsigned_abs() <= super::diag::MAX_EXACT_INTEGER).then_some(i);
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() <= super::diag::MAX_EXACT_INTEGER as f64).then_some(f as i64)
}

/// Where a CSV text opens a quoted field it never closes, as line:col (RFC 4180: a
/// quote opens a field only at its start, after a delimiter or a line end; `""` inside
/// one is a quote). It jumps from quote to quote inside a field and from delimiter to
/// line end outside one (a byte search, not a step per byte).
#[cfg(test)]
fn unterminated_quote(text: &str, delimiter: u8) -> Option<(usize, usize)> {
    open_quote(text, delimiter, 0).map(|at| line_col(text.as_bytes(), at))
}

/// Where a quoted field opens and is never closed, reading from `from` (a record's
/// start): the offset of its quote.
fn open_quote(text: &str, delimiter: u8, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    loop {
        // At the start of a field.
        if bytes.get(i) == Some(&b'"') {
            let open = i;
            i += 1;
            loop {
                match memchr::memchr(b'"', &bytes[i..]) {
                    None => return Some(open),
                    Some(p) if bytes.get(i + p + 1) == Some(&b'"') => i += p + 2,
                    Some(p) => {
                        i += p + 1;
                        break;
                    }
                }
            }
        }
        match memchr::memchr3(delimiter, b'\n', b'\r', &bytes[i.min(bytes.len())..]) {
            None => return None,
            Some(p) => i += p + 1,
        }
    }
}

/// The first pass over a CSV text: its header, its columns' types (stated or inferred
/// from every cell) and its bad lines. The records are read again when the rows are
/// made ([`CsvRecords`]): a 1M-row file is not held as records.
fn parse_csv<'t>(
    text: &'t str,
    file: &str,
    delimiter: u8,
    types: &BTreeMap<String, ColumnType>,
    progress: &mut dyn FnMut(u64),
) -> Result<Raw<'t>, DataError> {
    // A quoted field never closed takes the rest of the text into the last record
    // read: that record is where to look for one (RFC 4180: a quote opens a field only
    // at its start; `""` inside one is a quote).
    let unclosed = |from: usize| match open_quote(text, delimiter, from) {
        Some(at) => {
            let (line, column) = line_col(text.as_bytes(), at);
            Err(DataError::Syntax {
                file: file.to_owned(),
                line,
                column,
                message: "a quoted field opens here and is never closed (a missing `\"`)".into(),
            })
        }
        None => Ok(()),
    };
    let mut reader = csv_reader(text, delimiter);
    // (`base`: where the stretch read starts in the text.)
    let csv_in = |(e, base): (csv::Error, u64)| {
        let (line, column) = e.position().map_or((1, 1), |p| {
            line_col(text.as_bytes(), (base + p.byte()) as usize)
        });
        DataError::Syntax {
            file: file.to_owned(),
            line,
            column,
            message: format!("invalid CSV: {e}"),
        }
    };
    let csv_err = |e: csv::Error| csv_in((e, 0));
    let mut record = csv::StringRecord::new();
    if !reader.read_record(&mut record).map_err(csv_err)? {
        return Err(DataError::File {
            file: file.to_owned(),
            message: "no header row".to_owned(),
        });
    }
    if reader.position().byte() as usize >= text.len() {
        // The header is all there is (or all it took).
        unclosed(0)?;
    }
    let header: Vec<String> = record.iter().map(|h| h.trim().to_owned()).collect();
    let mut seen = HashMap::new();
    for (i, h) in header.iter().enumerate() {
        if h.is_empty() {
            return Err(DataError::File {
                file: file.to_owned(),
                message: format!("line 1: column {} of the header has no name", i + 1),
            });
        }
        if let Some(first) = seen.insert(h.as_str(), i) {
            return Err(DataError::File {
                file: file.to_owned(),
                message: format!(
                    "line 1: columns {} and {} are both named `{h}`",
                    first + 1,
                    i + 1
                ),
            });
        }
    }
    if let Some(missing) = types.keys().find(|f| !header.contains(f)) {
        return Err(DataError::File {
            file: file.to_owned(),
            message: format!(
                "--type {missing}=…: no column `{missing}` (the columns are {})",
                header.join(", ")
            ),
        });
    }
    let kinds: Vec<ColumnKind> = header
        .iter()
        .map(|h| ColumnKind {
            stated: types.get(h).copied(),
            ..ColumnKind::default()
        })
        .collect();
    // A large text's records are read in two halves at once: the second from the
    // first line end past the middle on (on a thread), the first up to it (this
    // reader, going on past the header). Whether that line end is a record boundary
    // (not inside a quoted field) the first half tells: where it stops.
    // (A reader strips a byte-order mark where it starts: no split before one.)
    let split = (text.len() >= SPLIT_CSV_FROM)
        .then(|| memchr::memchr(b'\n', &text.as_bytes()[text.len() / 2..]))
        .flatten()
        .map(|p| text.len() / 2 + p + 1)
        .filter(|&at| {
            at < text.len()
                && at as u64 > reader.position().byte()
                && !text[at..].starts_with('\u{feff}')
        });
    let rest_from = |at: usize, kinds: Vec<ColumnKind>| {
        let rest = &text[at..];
        let line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count();
        first_pass(
            &mut csv_reader(rest, delimiter),
            text,
            LineCounter::starting_at(rest.as_bytes(), line),
            (at as u64, 0, u64::MAX),
            &header,
            kinds,
            &mut |_| {},
        )
    };
    let (first, second) = std::thread::scope(|scope| {
        let second = split.map(|at| {
            let kinds = kinds.clone();
            scope.spawn(move || rest_from(at, kinds))
        });
        let first = first_pass(
            &mut reader,
            text,
            LineCounter::new(text.as_bytes()),
            (
                0,
                0,
                split.map_or(u64::MAX, |at| record_start(text.as_bytes(), at as u64)),
            ),
            &header,
            kinds,
            progress,
        );
        (
            first,
            second.map(|h| h.join().expect("the first pass does not panic")),
        )
    });
    let mut pass = first.map_err(csv_in)?;
    let second = match (split, pass.stopped) {
        (None, _) | (Some(_), None) => None,
        (Some(at), Some(next)) if next == record_start(text.as_bytes(), at as u64) => second,
        // The line end was inside a quoted field: the rest is read from where the
        // first half stopped (the record after the one over the middle), by a reader
        // from the text's start that passes over the records before.
        (Some(_), Some(next)) => Some(first_pass(
            &mut csv_reader(text, delimiter),
            text,
            LineCounter::new(text.as_bytes()),
            (0, next, u64::MAX),
            &header,
            pass.kinds.clone(),
            &mut |_| {},
        )),
    };
    if let Some(second) = second {
        let more = second.map_err(csv_in)?;
        pass.last = more.last.or(pass.last);
        for (k, m) in pass.kinds.iter_mut().zip(more.kinds) {
            k.all_bool &= m.all_bool;
            k.all_number &= m.all_number;
            k.all_json &= m.all_json;
        }
        pass.bad.extend(more.bad);
        pass.bad_at.extend(more.bad_at);
        pass.good += more.good;
    }
    let FirstPass {
        kinds,
        bad,
        bad_at,
        good,
        last,
        ..
    } = pass;
    unclosed(last.unwrap_or(0) as usize)?;
    let records = CsvRecords {
        text,
        delimiter,
        columns: header.len(),
        bad_at,
        good,
    };
    Ok(Raw {
        rows: RawRows::Csv {
            header: header.clone(),
            kinds,
            records,
        },
        bad,
        fields: header,
        place: RowPlace::Line,
    })
}

/// Texts from this size on have their CSV records read in two halves at once.
const SPLIT_CSV_FROM: usize = 4 << 20;

/// What the first pass over a stretch of a CSV text's records says.
struct FirstPass {
    /// The columns' kinds as its cells narrow them.
    kinds: Vec<ColumnKind>,
    bad: Vec<BadRow>,
    /// Where each bad record starts ([`record_start`]), in the order of `bad`.
    bad_at: Vec<u64>,
    good: usize,
    /// Where its last record starts.
    last: Option<u64>,
    /// Where the record it stopped at (the next stretch's first) starts.
    stopped: Option<u64>,
}

/// The first pass over the records `reader` reads (after the header) of `text`, or of
/// the stretch of it from `base` on, with their lines from `lines`: records that start
/// before `from` are passed over, and it stops at the first that starts at or past
/// `end`. An error comes with `base` (its position is in the stretch).
#[allow(clippy::too_many_arguments)]
fn first_pass(
    reader: &mut csv::Reader<&[u8]>,
    text: &str,
    mut lines: LineCounter<'_>,
    (base, from, end): (u64, u64, u64),
    header: &[String],
    kinds: Vec<ColumnKind>,
    progress: &mut dyn FnMut(u64),
) -> Result<FirstPass, (csv::Error, u64)> {
    let mut record = csv::StringRecord::new();
    let mut pass = FirstPass {
        kinds,
        bad: vec![],
        bad_at: vec![],
        good: 0,
        last: None,
        stopped: None,
    };
    let mut n = 0usize;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err((e, base)),
        }
        let pos = record.position().expect("records read have a position");
        let at = record_start(text.as_bytes(), base + pos.byte());
        if at < from {
            continue;
        }
        if at >= end {
            pass.stopped = Some(at);
            break;
        }
        pass.last = Some(at);
        let line = lines.line_of(pos.byte() as usize);
        n += 1;
        if n.is_multiple_of(4096) {
            progress(at);
        }
        let message =
            match shape(&record, header.len()) {
                Shape::Fits => pass.kinds.iter().zip(record.iter()).zip(header).find_map(
                    |((kind, cell), h)| {
                        let ty = kind.stated?;
                        convert_cell(cell, ty)
                            .err()
                            .map(|e| format!("column `{h}`: {e}"))
                    },
                ),
                Shape::Blank => continue,
                Shape::Wrong => Some(format!(
                    "{} fields where the header has {}",
                    record.len(),
                    header.len()
                )),
            };
        if let Some(message) = message {
            pass.bad.push(BadRow { line, message });
            pass.bad_at.push(at);
            continue;
        }
        for (kind, cell) in pass.kinds.iter_mut().zip(record.iter()) {
            if !cell.is_empty() && kind.stated.is_none() {
                kind.see(cell);
            }
        }
        pass.good += 1;
    }
    Ok(pass)
}

/// Lines of records, counted incrementally. The CSV reader's own line numbers and
/// offsets point at the terminator before a record on CRLF files, so the offset is
/// moved past line terminators first.
struct LineCounter<'a> {
    bytes: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self::starting_at(bytes, 1)
    }

    /// Lines of a stretch of a text whose first line is `line`.
    fn starting_at(bytes: &'a [u8], line: usize) -> Self {
        LineCounter {
            bytes,
            offset: 0,
            line,
        }
    }

    /// The 1-based line of the first byte at or after `offset` that is not a line
    /// terminator (offsets only grow).
    fn line_of(&mut self, mut offset: usize) -> usize {
        while offset < self.bytes.len() && matches!(self.bytes[offset], b'\r' | b'\n') {
            offset += 1;
        }
        let offset = offset.max(self.offset);
        self.line += self.bytes[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.offset = offset;
        self.line
    }
}

fn is_bool(cell: &str) -> bool {
    cell.eq_ignore_ascii_case("true") || cell.eq_ignore_ascii_case("false")
}

/// A cell of a column read as `ty` (checked when the record was read).
fn typed(cell: &str, ty: ColumnType) -> Value {
    convert_cell(cell, ty).expect("checked when the record was read")
}

/// A JSON number without leading zeros, when it converts without loss.
fn number(cell: &str) -> Option<Number> {
    let b = cell.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_len = i - int_start;
    if int_len == 0 || (int_len > 1 && b[int_start] == b'0') {
        return None;
    }
    let mut integer = true;
    if i < b.len() && b[i] == b'.' {
        integer = false;
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        integer = false;
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    if integer {
        // Beyond ±(2^53 − 1) the engine's floats would lose digits: such a cell is text,
        // kept exactly (account numbers, long identifiers).
        return cell
            .parse::<i64>()
            .ok()
            .filter(|n| n.unsigned_abs() <= super::diag::MAX_EXACT_INTEGER)
            .map(Number::from);
    }
    cell.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(Number::from_f64)
}

// ---------------------------------------------------------------------------------------------
// JSON and JSON Lines
// ---------------------------------------------------------------------------------------------

fn syntax(file: &str, e: &serde_json::Error, what: &str) -> DataError {
    let message = e.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.clone(), |(m, _)| m.to_owned());
    DataError::Syntax {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: format!("invalid {what}: {message}"),
    }
}

fn not_an_object(v: &Value) -> String {
    format!("a row must be an object, got {}", describe(v))
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON value read like `serde_json::Value`, except that an object with the same key
/// twice is an error (a data file's row would otherwise keep the last value silently).
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StrictValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StrictValue, E> {
                Ok(StrictValue(
                    Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, v: &str) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::String(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::Null))
            }
            fn visit_none<E>(self) -> Result<StrictValue, E> {
                Ok(StrictValue(Value::Null))
            }
            fn visit_some<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<StrictValue, D::Error> {
                StrictValue::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<StrictValue, A::Error> {
                let mut items = Vec::new();
                while let Some(StrictValue(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(StrictValue(Value::Array(items)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<StrictValue, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate key `{key}` in one object"
                        )));
                    }
                    let StrictValue(v) = map.next_value()?;
                    out.insert(key, v);
                }
                Ok(StrictValue(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

fn parse_json(text: &str, file: &str, name_field: Option<&str>) -> Result<Raw<'static>, DataError> {
    // A guard for the parser's stack before anything is parsed; rows are held to the
    // one nesting limit afterwards (`check_rows`).
    // Integers that would lose digits are refused here too, with their line:col.
    if let Some((line, column, problem)) = super::diag::prescan(text, super::diag::MAX_TEXT_DEPTH) {
        let message = match problem.hint() {
            Some(hint) => format!("{} (hint: {hint})", problem.message()),
            None => problem.message(),
        };
        return Err(DataError::Syntax {
            file: file.to_owned(),
            line,
            column,
            message,
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = StrictValue::deserialize(&mut de)
        .map(|v| v.0)
        .map_err(|e| syntax(file, &e, "JSON"))?;
    de.end().map_err(|e| syntax(file, &e, "JSON"))?;
    let lines = element_lines(text);
    let mut fields = Vec::new();
    let mut known = std::collections::HashSet::new();
    let mut bad = Vec::new();
    let rows = match value {
        Value::Array(items) => {
            let mut rows = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let line = lines.get(i).copied().unwrap_or(1);
                match item {
                    Value::Object(row) => {
                        note_fields(&row, &mut fields, &mut known);
                        rows.push((line, row));
                    }
                    other => bad.push(BadRow {
                        line,
                        message: not_an_object(&other),
                    }),
                }
            }
            rows
        }
        Value::Object(members) => {
            let Some(name_field) = name_field else {
                return Err(DataError::File {
                    file: file.to_owned(),
                    message: format!(
                        "an object of {} members, not an array of rows: to read each member as a row \
                         named by the member's name, say which field takes the name \
                         (hint: --name-field FIELD, or a dataset key of one field)",
                        members.len()
                    ),
                });
            };
            let mut rows = Vec::with_capacity(members.len());
            fields.push(name_field.to_owned());
            known.insert(name_field.to_owned());
            for (i, (name, item)) in members.into_iter().enumerate() {
                let line = lines.get(i).copied().unwrap_or(1);
                let Value::Object(member) = item else {
                    bad.push(BadRow {
                        line,
                        message: format!(
                            "member `{}`: {}",
                            crate::text::sanitize(&name),
                            not_an_object(&item)
                        ),
                    });
                    continue;
                };
                match member.get(name_field) {
                    Some(Value::String(own)) if *own == name => {}
                    None | Some(Value::Null) => {}
                    Some(other) => {
                        bad.push(BadRow {
                            line,
                            message: format!(
                                "member `{}` has `{name_field}` = {} already; the member's name \
                                 would replace it (hint: another --name-field)",
                                crate::text::sanitize(&name),
                                crate::text::sanitize(&other.to_string())
                            ),
                        });
                        continue;
                    }
                }
                let mut row = Row::with_capacity(member.len() + 1);
                row.insert(name_field.to_owned(), Value::String(name));
                for (k, v) in member {
                    if k != name_field {
                        row.insert(k, v);
                    }
                }
                note_fields(&row, &mut fields, &mut known);
                rows.push((line, row));
            }
            rows
        }
        other => {
            return Err(DataError::File {
                file: file.to_owned(),
                message: format!(
                    "expected an array of row objects or an object of rows, got {}",
                    describe(&other)
                ),
            });
        }
    };
    Ok(Raw {
        rows: RawRows::Rows(rows),
        bad,
        fields,
        place: RowPlace::Line,
    })
}

fn note_fields(
    row: &Map<String, Value>,
    fields: &mut Vec<String>,
    known: &mut std::collections::HashSet<String>,
) {
    for k in row.keys() {
        if !known.contains(k) {
            known.insert(k.clone());
            fields.push(k.clone());
        }
    }
}

/// The 1-based line on which each element of the top-level array starts.
fn element_lines(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut line, mut depth) = (1usize, 0usize);
    let (mut in_string, mut escaped, mut expect) = (false, false, false);
    for b in text.bytes() {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if expect && depth == 1 && !b.is_ascii_whitespace() && b != b']' {
            out.push(line);
            expect = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    expect = true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect = true,
            _ => {}
        }
    }
    out
}

fn parse_json_lines(text: &str, progress: &mut dyn FnMut(u64)) -> Raw<'static> {
    let mut rows = Vec::new();
    let mut bad = Vec::new();
    let mut fields = Vec::new();
    let mut known = std::collections::HashSet::new();
    let mut offset = 0u64;
    for (i, line) in text.split('\n').enumerate() {
        offset += line.len() as u64 + 1;
        if i.is_multiple_of(4096) {
            progress(offset);
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let n = i + 1;
        match super::diag::prescan(trimmed, super::diag::MAX_TEXT_DEPTH) {
            Some((_, _, super::diag::TextProblem::TooDeep(_))) => {
                bad.push(BadRow {
                    line: n,
                    message: format!(
                        "the row nests deeper than the limit of {} levels",
                        super::validate::MAX_DEPTH
                    ),
                });
                continue;
            }
            Some((_, column, problem)) => {
                // The column in the line as written (the scan read it trimmed).
                let column = column + (line.len() - line.trim_start().len());
                bad.push(BadRow {
                    line: n,
                    message: format!(
                        "column {column}: {}{}",
                        problem.message(),
                        problem
                            .hint()
                            .map(|h| format!(" (hint: {h})"))
                            .unwrap_or_default()
                    ),
                });
                continue;
            }
            None => {}
        }
        let mut de = serde_json::Deserializer::from_str(trimmed);
        de.disable_recursion_limit();
        let parsed = StrictValue::deserialize(&mut de).and_then(|v| de.end().map(|_| v.0));
        match parsed {
            Ok(Value::Object(row)) => {
                note_fields(&row, &mut fields, &mut known);
                rows.push((n, row));
            }
            Ok(other) => bad.push(BadRow {
                line: n,
                message: not_an_object(&other),
            }),
            Err(e) => {
                let message = e.to_string();
                let message = message
                    .rsplit_once(" at line ")
                    .map_or(message.clone(), |(m, _)| m.to_owned());
                bad.push(BadRow {
                    line: n,
                    message: format!("invalid JSON at column {}: {message}", e.column()),
                });
            }
        }
    }
    Raw {
        rows: RawRows::Rows(rows),
        bad,
        fields,
        place: RowPlace::Line,
    }
}

impl fmt::Display for DataFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> Vec<String> {
        vec!["id".to_owned()]
    }

    fn opts(key: &[String]) -> ParseOptions<'_> {
        ParseOptions {
            key,
            key_case: KeyCase::Sensitive,
            skip_bad: false,
            read: READ_AS_IS,
        }
    }

    /// Reading with one stated column type.
    fn stated(field: &str, ty: ColumnType) -> ReadOptions {
        ReadOptions {
            types: [(field.to_owned(), ty)].into(),
            ..ReadOptions::default()
        }
    }

    fn csv(text: &str) -> Result<Parsed, DataError> {
        parse(
            text.as_bytes(),
            "f.csv",
            DataFormat::Csv,
            &opts(&key()),
            &mut |_| {},
        )
    }

    fn rows(p: &Parsed) -> Value {
        Value::Array(p.rows.iter().cloned().map(Value::Object).collect())
    }

    /// `parse_compact` stores what `parse` reads: the same keys, texts and field schemas.
    #[test]
    fn compact_rows_are_the_parsed_rows_as_stored() {
        let csv = "id,name,n,x,flag,price,note\r\n\
                   a,\"Al, \"\"the\"\" first\",1,007,TRUE,1.50,\u{1b}é\n\
                   b,Bee,-2,x,false,2,\n\
                   c,,3e2,,true,,\"multi\nline\"\n\
                   d,Dee,18446744073709551615,1,false,0.1,\n";
        let jsonl = "{\"id\": \"a\", \"v\": [1, {\"w\": null}]}\n{\"id\": 2, \"v\": \"s\"}\n";
        for (text, format) in [(csv, DataFormat::Csv), (jsonl, DataFormat::JsonLines)] {
            let key = key();
            let o = opts(&key);
            let parsed = parse(text.as_bytes(), "f", format, &o, &mut |_| {}).unwrap();
            let compact = parse_compact(text.as_bytes(), "f", format, &o, &mut |_| {}).unwrap();
            let d = Dataset {
                key: key.clone(),
                rows: parsed.rows.clone(),
                ..Dataset::default()
            };
            let expected: Vec<StoredRow> = parsed
                .rows
                .iter()
                .map(|r| StoredRow {
                    key: d.row_key(r),
                    hash: crate::model::key_hash(&d.row_key(r)),
                    json: serde_json::to_string(r).unwrap(),
                })
                .collect();
            assert_eq!(compact.rows, expected, "{format}");
            assert_eq!(compact.schema, field_schemas(&d), "{format}");
            assert_eq!(compact.fields, parsed.fields);
        }
        // Bad rows are the same too.
        let bad = "id,n\na,1\n,2\na,3\nb,4,5\n";
        let key = key();
        let e1 = parse(
            bad.as_bytes(),
            "f",
            DataFormat::Csv,
            &opts(&key),
            &mut |_| {},
        )
        .unwrap_err();
        let e2 = parse_compact(
            bad.as_bytes(),
            "f",
            DataFormat::Csv,
            &opts(&key),
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(e1, e2);
        let no_key = ["nope".to_owned()];
        let e1 = parse(
            bad.as_bytes(),
            "f",
            DataFormat::Csv,
            &opts(&no_key),
            &mut |_| {},
        );
        let e2 = parse_compact(
            bad.as_bytes(),
            "f",
            DataFormat::Csv,
            &opts(&no_key),
            &mut |_| {},
        );
        assert_eq!(e1.unwrap_err(), e2.unwrap_err());
    }

    /// The quote check's byte search finds what a step per byte finds, on every text
    /// of a small alphabet (quotes, delimiters, line ends, letters) up to 7 bytes.
    #[test]
    fn the_quote_check_matches_a_byte_by_byte_scan() {
        fn by_byte(bytes: &[u8]) -> Option<(usize, usize)> {
            let (mut line, mut col) = (1usize, 0usize);
            let mut open: Option<(usize, usize)> = None;
            let mut field_start = true;
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                col += 1;
                match (open, b) {
                    (Some(_), b'"') if bytes.get(i + 1) == Some(&b'"') => {
                        i += 1;
                        col += 1;
                    }
                    (Some(_), b'"') => open = None,
                    (None, b'"') if field_start => open = Some((line, col)),
                    _ => {}
                }
                if b == b'\n' {
                    line += 1;
                    col = 0;
                }
                field_start = open.is_none() && matches!(b, b',' | b'\n' | b'\r');
                i += 1;
            }
            open
        }
        let alphabet = [b'a', b',', b'"', b'\n', b'\r'];
        for len in 0..=7u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut n = n;
                let text: Vec<u8> = (0..len)
                    .map(|_| {
                        let b = alphabet[n % alphabet.len()];
                        n /= alphabet.len();
                        b
                    })
                    .collect();
                let text = std::str::from_utf8(&text).unwrap();
                assert_eq!(
                    unterminated_quote(text, b','),
                    by_byte(text.as_bytes()),
                    "{text:?}"
                );
            }
        }
    }

    /// A large CSV text's first pass reads two halves at once: the lines of rows and of
    /// bad rows, and the columns' types, are those of one reading (a quoted field that
    /// spans lines near the middle, bad lines and a column that stops being numeric in
    /// the second half).
    #[test]
    fn a_large_csv_read_in_two_halves_reads_as_one() {
        let mut text = String::from("id,n,note\n");
        let (mut line, mut lines, mut bad) = (1usize, vec![], vec![]);
        let rows = 140_000;
        for i in 0..rows {
            line += 1;
            if i % 1000 == 999 {
                text.push_str(&format!("x{i},1,2,3\n"));
                bad.push(line);
                continue;
            }
            lines.push(line);
            let n = if i == rows - 5 {
                "n/a".to_owned()
            } else {
                i.to_string()
            };
            if i % 7 == 0 {
                text.push_str(&format!("r{i},{n},\"two\nlines, \"\"quoted\"\"\"\n"));
                line += 1;
            } else {
                text.push_str(&format!("r{i},{n},plain note {i}\n"));
            }
        }
        assert!(text.len() >= SPLIT_CSV_FROM, "{}", text.len());
        let key = key();
        let o = ParseOptions {
            skip_bad: true,
            ..opts(&key)
        };
        let parsed = parse(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(parsed.lines, lines);
        let skipped: Vec<usize> = parsed.skipped.iter().map(|b| b.line).collect();
        assert_eq!(skipped, bad);
        // One `n/a` near the end makes the column strings.
        assert_eq!(parsed.rows[3]["n"], json!("3"));
        assert_eq!(parsed.rows[7]["note"], json!("two\nlines, \"quoted\""));
        let compact =
            parse_compact(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(compact.rows.len(), lines.len());
        assert_eq!(compact.skipped, parsed.skipped);
    }

    /// A binary reader's rows handed over as cells make what the same rows handed over
    /// as row maps make: texts, keys, schemas, bad rows (a stated type that does not
    /// convert, a missing or repeated key, a row nested too deep) and their messages.
    #[test]
    fn rows_as_cells_store_as_rows_do() {
        let names: Vec<String> = ["id", "n", "tags", "flag"].map(String::from).to_vec();
        let mut deep = json!(1);
        for _ in 0..70 {
            deep = json!([deep]);
        }
        let rows: Vec<Vec<Value>> = vec![
            vec![json!("a"), json!(1), json!(["x"]), json!("yes")],
            vec![json!("b"), Value::Null, json!({"k": "\"q\""}), json!(false)],
            vec![json!("c"), json!(2.5), Value::Null, json!("maybe")],
            vec![Value::Null, json!(3), json!([]), json!(true)],
            vec![json!("a"), json!(4), json!([]), json!(true)],
            vec![json!("d"), deep, json!([]), json!(true)],
            vec![json!("é|\\"), json!(-7), json!("s"), json!("0")],
        ];
        let key = key();
        let read = stated("flag", ColumnType::Boolean);
        let o = ParseOptions {
            skip_bad: true,
            read: &read,
            ..opts(&key)
        };
        let run = |as_cells: bool| {
            let mut made = vec![];
            let mut out = |r: RowText<'_>| {
                made.push(r.to_stored());
                true
            };
            let mut sink = TableCompactor::new("f", DataFormat::Parquet, &o, &mut out);
            sink.start(names.clone(), RowPlace::Row).unwrap();
            for (i, cells) in rows.iter().enumerate() {
                if as_cells {
                    sink.cells(i + 1, &names, &mut cells.clone());
                } else {
                    sink.row(i + 1, names.iter().cloned().zip(cells.clone()).collect());
                }
            }
            let facts = sink.finish().unwrap();
            (facts, made)
        };
        let (by_row, rows_made) = run(false);
        let (by_cells, cells_made) = run(true);
        assert_eq!(cells_made, rows_made);
        assert_eq!(by_cells, by_row);
        assert_eq!(by_cells.rows, 3);
        let lines: Vec<usize> = by_cells.skipped.iter().map(|b| b.line).collect();
        assert_eq!(lines, [3, 4, 5, 6]);
        assert_eq!(
            cells_made[1].json,
            r#"{"id":"b","n":null,"tags":{"k":"\"q\""},"flag":false}"#
        );
    }

    /// The middle line end of a large CSV text inside a quoted field (the halves' split
    /// would cut a record): the rest is read from the record after; and a quote never
    /// closed in the first half, which takes the rest of the text, is named where it
    /// opened.
    #[test]
    fn a_large_csv_split_inside_a_quoted_field_or_an_open_quote() {
        let key = key();
        let o = opts(&key);
        let mut text = String::from("id,note\n");
        let mut expected = 0;
        while text.len() < SPLIT_CSV_FROM / 2 - 1000 {
            text.push_str(&format!("r{expected},short\n"));
            expected += 1;
        }
        // One field of 20,000 lines around the middle.
        text.push_str(&format!("r{expected},\""));
        expected += 1;
        let long_line = "x".repeat(200);
        for _ in 0..20_000 {
            text.push_str(&long_line);
            text.push('\n');
        }
        text.push_str("\"\n");
        let after = text.lines().count() + 1;
        for i in 0..1000 {
            text.push_str(&format!("s{i},after\n"));
            expected += 1;
        }
        assert!(text.len() >= SPLIT_CSV_FROM);
        let mid = text.len() / 2;
        assert!(
            text[..mid].rfind('"') > text[..mid].rfind("r"),
            "the middle is quoted"
        );
        let parsed = parse(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(parsed.rows.len(), expected);
        assert_eq!(parsed.lines.iter().rev().nth(999), Some(&after));
        // A quote opened in the first half and never closed.
        let mut open = String::from("id,note\n");
        for i in 0..30_000 {
            open.push_str(&format!("r{i},note {i}\n"));
        }
        open.push_str("q,\"never closed\n");
        let line = open.lines().count();
        while open.len() < SPLIT_CSV_FROM {
            open.push_str("t,more text after the quote\n");
        }
        let e = parse(open.as_bytes(), "f.csv", DataFormat::Csv, &o, &mut |_| {}).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "f.csv:{line}:3: a quoted field opens here and is never closed (a missing `\"`)"
            )
        );
    }

    /// A lone carriage return ends a record but not a line: records that share a line
    /// number are told apart by place, so the second pass leaves out the bad one, not
    /// its neighbour (it kept the bad record and dropped the good one, and then a
    /// stated type's conversion panicked).
    #[test]
    fn records_on_one_line_are_told_apart_by_place() {
        let key = key();
        let read = stated("n", ColumnType::Integer);
        for (text, read, kept) in [
            ("id,n\r1,5\r2,x\r3,7\r", &read, [1, 3]),
            ("id,n\r1,a\r2,b,x\r3,c\r", READ_AS_IS, [1, 3]),
        ] {
            let o = ParseOptions {
                skip_bad: true,
                read,
                ..opts(&key)
            };
            let parsed = parse(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
            let ids: Vec<&Value> = parsed.rows.iter().map(|r| &r["id"]).collect();
            assert_eq!(
                ids,
                kept.map(|k| json!(k)).iter().collect::<Vec<_>>(),
                "{text:?}"
            );
            assert_eq!(parsed.skipped.len(), 1, "{text:?}");
            let compact =
                parse_compact(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
            let texts: Vec<String> = parsed
                .rows
                .iter()
                .map(|r| serde_json::to_string(r).unwrap())
                .collect();
            let stored: Vec<String> = compact.rows.iter().map(|r| r.json.clone()).collect();
            assert_eq!(stored, texts, "{text:?}");
            let strict = ParseOptions {
                skip_bad: false,
                ..o
            };
            assert!(matches!(
                parse_compact(text.as_bytes(), "f", DataFormat::Csv, &strict, &mut |_| {}),
                Err(DataError::BadRows { .. })
            ));
        }
        // What fuzzing found (`fuzz/seeds/dataset_parse/records-on-one-line`): both
        // readers, both ways, agree and do not panic.
        let found = include_bytes!("../../../fuzz/seeds/dataset_parse/records-on-one-line");
        for format in [DataFormat::Csv, DataFormat::Tsv] {
            for skip_bad in [false, true] {
                let o = ParseOptions {
                    skip_bad,
                    ..opts(&key)
                };
                let a = parse(found, "f", format, &o, &mut |_| {});
                let b = parse_compact(found, "f", format, &o, &mut |_| {});
                assert_eq!(a.is_ok(), b.is_ok(), "{format}");
            }
        }
    }

    /// A large CSV with CRLF line ends reads in two halves as in one (the record after
    /// the split is read from its `\n`), and one whose line past the middle starts with
    /// a byte-order mark is not split there (a new reader would strip it): the types
    /// agree between the passes.
    #[test]
    fn a_large_csv_with_crlf_or_a_mark_at_the_middle_reads_as_one() {
        let key = key();
        let o = ParseOptions {
            skip_bad: true,
            ..opts(&key)
        };
        let mut crlf = String::from("id,n\r\n");
        let mut lines = vec![];
        for i in 0..400_000 {
            crlf.push_str(&format!("r{i},{i}\r\n"));
            lines.push(i + 2);
        }
        assert!(crlf.len() >= SPLIT_CSV_FROM);
        let parsed = parse(crlf.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(parsed.lines, lines);
        assert_eq!(parsed.rows[399_999]["n"], json!(399_999));
        let long = "y".repeat(90);
        let mut marked = String::from("id,n,pad\n");
        let mut i = 0;
        while marked.len() < SPLIT_CSV_FROM + 100_000 {
            marked.push_str(&format!("r{i},{i},{long}\n"));
            i += 1;
        }
        let mid = marked.len() / 2;
        let at = mid + marked[mid..].find('\n').unwrap() + 1;
        marked.insert(at, '\u{feff}');
        let mid = marked.len() / 2;
        assert_eq!(
            mid + marked[mid..].find('\n').unwrap() + 1,
            at,
            "the mark is at the split"
        );
        let parsed = parse(marked.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        let compact =
            parse_compact(marked.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(compact.rows.len(), parsed.rows.len());
        assert_eq!(compact.rows.len(), i);
    }

    /// A CSV file's rows are made in a second pass over its text: it skips exactly the
    /// lines the first pass found blank or bad, so lines, rows and stated types come
    /// out as a parse reads them.
    #[test]
    fn the_second_csv_pass_keeps_lines_and_types() {
        let text = "id,ok,tags,n\n\na,yes,\"[1, 2]\",1\nb,2,,x\n\nc,NO,\"{\"\"k\"\": true}\",3\n\
                    d,0,[],4,extra\ne,1,[],5\n";
        let key = key();
        let read = stated("ok", ColumnType::Boolean);
        let o = ParseOptions {
            skip_bad: true,
            read: &read,
            ..opts(&key)
        };
        let parsed = parse(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(parsed.lines, [3, 6, 8]);
        let skipped: Vec<usize> = parsed.skipped.iter().map(|b| b.line).collect();
        assert_eq!(skipped, [4, 7]);
        let compact =
            parse_compact(text.as_bytes(), "f", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        let texts: Vec<String> = parsed
            .rows
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        let stored: Vec<&String> = compact.rows.iter().map(|r| &r.json).collect();
        assert_eq!(stored, texts.iter().collect::<Vec<_>>());
        assert_eq!(texts[1], r#"{"id":"c","ok":false,"tags":{"k":true},"n":3}"#);
        assert_eq!(compact.skipped, parsed.skipped);
    }

    /// An unterminated quote is named with the line it opened on (it used to surface as
    /// a field count on some later line).
    #[test]
    fn csv_unterminated_quote_names_where_it_opened() {
        let key = key();
        let text = "id,name\na,\"Al\nb,\"Bob \"\"the\"\" bold\"\nc,\"open\nd,x\n";
        let e = parse(
            text.as_bytes(),
            "f.csv",
            DataFormat::Csv,
            &opts(&key),
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.csv:4:3: a quoted field opens here and is never closed (a missing `\"`)"
        );
        // Quoted newlines, commas and doubled quotes are fine.
        let fine = "id,name\na,\"multi\nline, with \"\"quotes\"\"\"\nb,5\"\n";
        assert!(
            parse(
                fine.as_bytes(),
                "f.csv",
                DataFormat::Csv,
                &opts(&key),
                &mut |_| {}
            )
            .is_ok()
        );
    }

    #[test]
    fn csv_types_columns_and_keeps_leading_zeros() {
        let p = csv("id,zip,n,x,ok,note\na,02134,1,1.5,TRUE,\nb,90210,-2,2e3,false,hi\n").unwrap();
        assert_eq!(
            rows(&p),
            json!([
                {"id": "a", "zip": "02134", "n": 1, "x": 1.5, "ok": true, "note": null},
                {"id": "b", "zip": "90210", "n": -2, "x": 2000.0, "ok": false, "note": "hi"}
            ])
        );
        assert_eq!(p.lines, vec![2, 3]);
    }

    #[test]
    fn csv_quotes_newlines_bom_crlf() {
        let text = "\u{feff}id,text,n\r\n\"a\",\"say \"\"hi\"\"\",1\r\nb,\"two\r\nlines\",2\r\nc,\"x,y\",3\r\n";
        let p = csv(text).unwrap();
        assert_eq!(
            rows(&p),
            json!([
                {"id": "a", "text": "say \"hi\"", "n": 1},
                {"id": "b", "text": "two\r\nlines", "n": 2},
                {"id": "c", "text": "x,y", "n": 3}
            ])
        );
        assert_eq!(p.lines, vec![2, 3, 5]);
        assert_eq!(p.fields, ["id", "text", "n"]);
    }

    #[test]
    fn csv_bad_rows_and_duplicates_name_lines() {
        let err = csv("id,n\na,1\nb\na,3\n,4\n").unwrap_err();
        let DataError::BadRows { bad, good, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*good, 1);
        assert_eq!(
            bad.iter().map(|b| b.line).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        assert!(bad[0].message.contains("1 fields where the header has 2"));
        assert_eq!(bad[1].message, "duplicate key `id=a`: line 2 has it too");
        assert!(bad[2].message.contains("key field `id`"));
        let text = err.to_string();
        assert!(text.contains("f.csv:4: duplicate key"), "{text}");
        let k = key();
        let mut o = opts(&k);
        o.skip_bad = true;
        let p = parse(b"id,n\na,1\nb\n", "f.csv", DataFormat::Csv, &o, &mut |_| {}).unwrap();
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.skipped.len(), 1);
    }

    #[test]
    fn csv_file_errors() {
        assert!(matches!(csv(""), Err(DataError::File { .. })));
        let e = csv("name,n\na,1\n").unwrap_err().to_string();
        assert!(e.contains("no column `id`"), "{e}");
        let e = csv("id,n,n\na,1,2\n").unwrap_err().to_string();
        assert!(e.contains("both named `n`"), "{e}");
        let e = parse(
            b"id\n\xff\n",
            "f.csv",
            DataFormat::Csv,
            &opts(&key()),
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "f.csv:2:1: not UTF-8 text");
    }

    #[test]
    fn numbers_are_strict() {
        for good in ["0", "-0", "42", "-1.5", "2e3", "1E-2", "0.25"] {
            assert!(number(good).is_some(), "{good}");
        }
        for bad in [
            "02134",
            "+1",
            ".5",
            "1.",
            "1e",
            "NaN",
            "inf",
            "1,000",
            " 1",
            "0x10",
            "99999999999999999999",
        ] {
            assert!(number(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn json_array_rows_and_lines() {
        let text = "[\n  {\"id\": \"a\", \"n\": 1},\n  {\"id\": \"b\",\n   \"s\": \"[,]\"},\n  7,\n  {\"id\": \"a\"}\n]";
        let err = parse(
            text.as_bytes(),
            "f.json",
            DataFormat::Json,
            &opts(&key()),
            &mut |_| {},
        )
        .unwrap_err();
        let DataError::BadRows { bad, .. } = err else {
            panic!()
        };
        assert_eq!(bad[0].line, 5);
        assert!(bad[0].message.contains("got a number"));
        assert_eq!(
            bad[1],
            BadRow {
                line: 6,
                message: "duplicate key `id=a`: line 2 has it too".into()
            }
        );
        let e = parse(
            b"[{\"id\": 1},",
            "f.json",
            DataFormat::Json,
            &opts(&key()),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(e, DataError::Syntax { line: 1, .. }), "{e}");
        let e = parse(
            b"{\"id\": 1}",
            "f.json",
            DataFormat::Json,
            &opts(&key()),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("member `id`: a row must be an object, got a number"),
            "{e}"
        );
        let e = parse(b"7", "f.json", DataFormat::Json, &opts(&key()), &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("expected an array"), "{e}");
    }

    #[test]
    fn json_lines_rows() {
        let text = "{\"id\": \"a\"}\n\n{\"id\": \"b\", \"n\": [1]}\r\n{oops\n";
        let k = key();
        let mut o = opts(&k);
        o.skip_bad = true;
        let p = parse(
            text.as_bytes(),
            "f.jsonl",
            DataFormat::JsonLines,
            &o,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(rows(&p), json!([{"id": "a"}, {"id": "b", "n": [1]}]));
        assert_eq!(p.lines, vec![1, 3]);
        assert_eq!(p.skipped[0].line, 4);
    }

    #[test]
    fn formats_by_extension_or_content() {
        assert_eq!(
            DataFormat::from_path(Path::new("a.NDJSON")),
            Some(DataFormat::JsonLines)
        );
        assert_eq!(DataFormat::sniff(b" \n[{}]"), DataFormat::Json);
        assert_eq!(
            DataFormat::sniff(b"\xEF\xBB\xBF{\"a\":1}"),
            DataFormat::JsonLines
        );
        assert_eq!(DataFormat::sniff(b"id,n"), DataFormat::Csv);
    }

    #[test]
    fn insensitive_keys_collide_and_match() {
        let o = ParseOptions {
            key: &key(),
            key_case: KeyCase::Insensitive,
            skip_bad: false,
            read: READ_AS_IS,
        };
        let e = parse(
            b"id\nOpenAI\nopenai\n",
            "f.csv",
            DataFormat::Csv,
            &o,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("line 2 has it too"), "{e}");
        let d = Dataset {
            key: key(),
            key_case: KeyCase::Insensitive,
            rows: vec![json!({"id": "openai"}).as_object().unwrap().clone()],
            ..Dataset::default()
        };
        assert_eq!(d.find_row("OPENAI"), Some(0));
        assert_eq!(d.find_row("id=OpenAi"), Some(0));
        let sensitive = Dataset {
            key_case: KeyCase::Sensitive,
            ..d
        };
        assert_eq!(sensitive.find_row("OPENAI"), None);
    }

    #[test]
    fn defaults_fill_absent_and_null_fields() {
        let d = Dataset {
            key: key(),
            defaults: json!({"s": false, "t": 1}).as_object().unwrap().clone(),
            ..Dataset::default()
        };
        let full = json!({"id": "a", "s": true, "t": 2})
            .as_object()
            .unwrap()
            .clone();
        assert!(matches!(d.effective_row(&full), Cow::Borrowed(_)));
        let partial = json!({"id": "a", "s": null}).as_object().unwrap().clone();
        assert_eq!(
            Value::Object(d.effective_row(&partial).into_owned()),
            json!({"id": "a", "s": false, "t": 1})
        );
    }

    #[test]
    fn field_schemas_count_types_nulls_and_defaults() {
        let d = Dataset {
            key: key(),
            defaults: json!({"s": false}).as_object().unwrap().clone(),
            rows: [
                json!({"id": "a", "n": 1, "s": true}),
                json!({"id": "b", "n": 1.5, "s": null}),
            ]
            .iter()
            .map(|v| v.as_object().unwrap().clone())
            .collect(),
            ..Dataset::default()
        };
        let f = field_schemas(&d);
        assert_eq!(f["n"].type_name(), "number");
        assert_eq!(f["n"].present, 2);
        assert_eq!(f["s"].nulls, 1);
        assert_eq!(f["s"].default, Some(json!(false)));
        assert_eq!(f["s"].type_name(), "boolean");
        assert_eq!(f["id"].type_name(), "string");
    }

    #[test]
    fn overrides_by_key_are_canonicalized_for_insensitive_datasets() {
        let mut page: Page = serde_json::from_value(json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "a"}]},
            "target": {"name": "T", "key": ["id"], "keyCase": "insensitive", "rows": [{"id": "openai"}]},
            "overrides": [{"sourceKey": "id=a", "targetKey": "id=OpenAI", "value": true},
                          {"sourceKey": "id=a", "targetKeyHash": key_hash("id=openai"), "value": false}]
        }))
        .unwrap();
        assert!(canonicalize_overrides(&mut page));
        assert_eq!(page.overrides[0].target_key.as_deref(), Some("id=openai"));
        assert!(!canonicalize_overrides(&mut page));
    }
}

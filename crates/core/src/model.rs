//! The page model: two datasets, feature rules, policies and overrides.
//!
//! Serde maps it one to one onto the page file (`rulebench.page/v1`, docs/page-format.md).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The only page file format this build reads and writes.
pub const PAGE_FORMAT: &str = "rulebench.page/v1";

/// A JSON object: one dataset row.
pub type Row = Map<String, Value>;

/// A compatibility page: source rows × target rows judged by rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// Always [`PAGE_FORMAT`].
    pub format: String,
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<Organization>,
    pub source: Dataset,
    pub target: Dataset,
    /// Every rule, a family's members in its place (see [`crate::family`]); written with
    /// each family as written.
    #[serde(
        default,
        deserialize_with = "read_rules",
        serialize_with = "write_rules"
    )]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub device_policy: DevicePolicy,
    #[serde(default)]
    pub selection_policy: SelectionPolicy,
    #[serde(default)]
    pub overrides: Vec<Override>,
    /// Extension: verdict assertions over the evaluation results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<Assertion>,
    /// Extension: tables of expected outcomes linked to the page, checked with the
    /// assertions (see [`crate::expect`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationTable>,
}

/// A table of expected outcomes linked to a page: its file (stored absolute) and how
/// it is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectationTable {
    pub file: String,
    #[serde(default, skip_serializing_if = "ReadOptions::is_default")]
    pub read: ReadOptions,
}

impl Page {
    /// The organization's plan tier (`team` for the local organization).
    pub fn plan_tier(&self) -> PlanTier {
        self.organization
            .as_ref()
            .map_or(PlanTier::Team, |o| o.plan_tier)
    }

    /// The rule with this id, with its index.
    pub fn rule(&self, id: &str) -> Option<(usize, &Rule)> {
        self.rules.iter().enumerate().find(|(_, r)| r.id == id)
    }

    /// One side of the page.
    pub fn dataset_mut(&mut self, side: Side) -> &mut Dataset {
        match side {
            Side::Source => &mut self.source,
            Side::Target => &mut self.target,
        }
    }

    pub fn dataset(&self, side: Side) -> &Dataset {
        match side {
            Side::Source => &self.source,
            Side::Target => &self.target,
        }
    }
}

/// Which dataset of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    Source,
    Target,
}

impl Side {
    /// The prefix rules use for this side (`source` / `target`).
    pub fn name(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "target",
        }
    }
}

/// The owner of a page and its plan tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub plan_tier: PlanTier,
}

/// Plan tiers and their rule limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanTier {
    Personal,
    #[default]
    Team,
    Enterprise,
}

impl PlanTier {
    /// How many rules a page may hold; `None` is unlimited.
    pub fn rule_limit(self) -> Option<usize> {
        match self {
            PlanTier::Personal => Some(10),
            PlanTier::Team => Some(100),
            PlanTier::Enterprise => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PlanTier::Personal => "personal",
            PlanTier::Team => "team",
            PlanTier::Enterprise => "enterprise",
        }
    }
}

/// A dataset: named rows identified by their key fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dataset {
    pub name: String,
    pub key: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
    /// Extension: a numeric field that breaks recommendation ties (higher wins),
    /// after verdict and score and before the id (the tiebreaker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// Extension: values for fields a row lacks (absent or null), applied wherever rows
    /// are evaluated and counted as present by validation ([`Dataset::effective_row`]).
    #[serde(default, skip_serializing_if = "Row::is_empty")]
    pub defaults: Row,
    /// Extension: `insensitive` makes key lookups ignore case (see [`super::dataset`]).
    #[serde(default, skip_serializing_if = "KeyCase::is_sensitive")]
    pub key_case: KeyCase,
    /// Extension: a linked data file (CSV, JSON or JSON Lines) the rows are read from;
    /// stored absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Extension: how the dataset's data file is read (its format, the field that takes
    /// the member names of a JSON object, the Excel sheet, stated column types); a
    /// linked file is reloaded the same way.
    #[serde(default, skip_serializing_if = "ReadOptions::is_default")]
    pub read: ReadOptions,
    /// Extension: row patches, per-page field values layered over the rows they name by
    /// key (one deployment of a provider that supports citations, say). They are kept
    /// across dataset imports and linked-file reloads, and applied wherever rows are
    /// evaluated ([`Dataset::effective_row`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<RowPatch>,
    #[serde(default)]
    pub rows: Vec<Row>,
}

/// How a data file is read: `rulebench dataset import` and `page init` flags, kept with a
/// linked dataset so that a reload reads its file the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadOptions {
    /// The format, when not told by the file's extension or content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<DataFormat>,
    /// A JSON object whose members are rows: the field that takes each member's name
    /// (else the dataset's key field, when it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_field: Option<String>,
    /// An Excel workbook's sheet, by name or 1-based index (else the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// Stated column types (else inferred), by field.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub types: std::collections::BTreeMap<String, ColumnType>,
}

impl ReadOptions {
    pub fn is_default(&self) -> bool {
        *self == ReadOptions::default()
    }
}

/// The formats a data file can have.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
pub enum DataFormat {
    /// A header row, then one row per record, comma-separated.
    Csv,
    /// As CSV, tab-separated.
    Tsv,
    /// An array of row objects, or an object whose members are rows.
    Json,
    /// One object per line.
    #[strum(serialize = "jsonl", serialize = "jsonlines", serialize = "ndjson")]
    #[serde(alias = "jsonl")]
    JsonLines,
    /// Apache Parquet.
    Parquet,
    /// Apache Arrow IPC, file or stream (Feather v2).
    #[strum(serialize = "arrow", serialize = "feather", serialize = "ipc")]
    Arrow,
    /// An Excel workbook (`.xlsx`, `.xlsm`, `.xls`, `.xlsb`) or an OpenDocument sheet.
    #[strum(serialize = "excel", serialize = "xlsx")]
    Excel,
}

/// A column's stated type (`--type FIELD=TYPE`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
pub enum ColumnType {
    /// The text as written.
    String,
    /// A JSON number.
    Number,
    /// A whole number (within ±2^53).
    Integer,
    /// `true`/`false` (any case), `1`/`0`, `yes`/`no`.
    Boolean,
    /// JSON text (an array, an object, any value).
    Json,
}

/// A row patch: the row's key, the fields it sets (over the row's own values), and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RowPatch {
    pub key: String,
    pub set: Row,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Dataset {
    /// The dataset without its rows (its metadata), copied without touching the rows:
    /// `Dataset { rows: vec![], ..d.clone() }` would copy every row first.
    pub fn without_rows(&self) -> Dataset {
        let Dataset {
            name,
            key,
            label,
            summary,
            priority,
            defaults,
            key_case,
            file,
            read,
            patches,
            rows: _,
        } = self;
        Dataset {
            name: name.clone(),
            key: key.clone(),
            label: label.clone(),
            summary: summary.clone(),
            priority: priority.clone(),
            defaults: defaults.clone(),
            key_case: *key_case,
            file: file.clone(),
            read: read.clone(),
            patches: patches.clone(),
            rows: vec![],
        }
    }

    /// The row's key: `field=value` for each key field, joined by `|`.
    /// Strings are written bare, other values as JSON; a missing field as `null`.
    ///
    /// With several key fields, a string value's `\\` and `|` are escaped (`\\\\`, `\\|`):
    /// `("x|b=y", "z")` and `("x", "y|b=z")` made the same key. A single-field key is
    /// written as it is (no other key can collide with it).
    pub fn row_key(&self, row: &Row) -> String {
        self.key_from(&|field| row.get(field))
    }

    /// [`Dataset::row_key`] of a row read through `get` (a field's value, if it has it).
    pub fn key_from<'v>(&self, get: &dyn Fn(&str) -> Option<&'v Value>) -> String {
        let several = self.key.len() > 1;
        self.key
            .iter()
            .map(|field| {
                let value = match get(field) {
                    Some(Value::String(s)) if several && s.contains(['\\', '|']) => {
                        s.replace('\\', "\\\\").replace('|', "\\|")
                    }
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => "null".to_owned(),
                };
                format!("{field}={value}")
            })
            .collect::<Vec<_>>()
            .join("|")
    }

    /// The row's id: its single key field's value, or its key when the key has several fields.
    pub fn row_id(&self, row: &Row) -> String {
        match self.key.as_slice() {
            [single] => match row.get(single) {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => "null".to_owned(),
            },
            _ => self.row_key(row),
        }
    }

    /// The row's label for display: the label field, else its id.
    pub fn row_label(&self, row: &Row) -> String {
        match self.label.as_ref().and_then(|l| row.get(l)) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => self.row_id(row),
            Some(v) => v.to_string(),
        }
    }

    /// Finds a row by key, keyHash or id; failing those, by the value of one key
    /// field or the label, when exactly one row has it (`t3-chat`, `t3.chat`). Keys, ids
    /// and key field values ignore case when `keyCase` is `insensitive`.
    pub fn find_row(&self, needle: &str) -> Option<usize> {
        let by = |f: &dyn Fn(&Row) -> String| {
            self.rows
                .iter()
                .position(|r| self.key_matches(&f(r), needle))
        };
        let unique = |f: &dyn Fn(&Row) -> bool| {
            let mut hits = self.rows.iter().enumerate().filter(|(_, r)| f(r));
            match (hits.next(), hits.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        };
        by(&|r| self.row_key(r))
            .or_else(|| {
                // A keyHash is hex: any case names it.
                self.rows
                    .iter()
                    .position(|r| key_hash(&self.row_key(r)).eq_ignore_ascii_case(needle))
            })
            .or_else(|| {
                // The key's fields in another order, or as a JSON object
                // (`{"clientType": "web", "id": "t3-chat"}`).
                let key = self.key_of_fields(needle)?;
                self.rows
                    .iter()
                    .position(|r| self.key_matches(&self.row_key(r), &key))
            })
            .or_else(|| by(&|r| self.row_id(r)))
            .or_else(|| {
                unique(&|r| {
                    self.key.iter().any(|k| {
                        r.get(k)
                            .and_then(Value::as_str)
                            .is_some_and(|v| self.key_matches(v, needle))
                    })
                })
            })
            .or_else(|| unique(&|r| self.row_label(r) == needle))
    }

    /// The key a needle names by its key fields in any order (`id=a|kind=b` for the key
    /// `kind, id`) or as a JSON object of them (`{"kind": "b", "id": "a"}`, values of any
    /// type): `None` when it names other fields, or not every key field.
    fn key_of_fields(&self, needle: &str) -> Option<String> {
        let fields: Map<String, Value> = if needle.trim_start().starts_with('{') {
            serde_json::from_str(needle).ok()?
        } else if needle.contains('=') && !needle.contains('\\') {
            needle
                .split('|')
                .map(|part| {
                    let (f, v) = part.split_once('=')?;
                    Some((f.trim().to_owned(), Value::String(v.to_owned())))
                })
                .collect::<Option<_>>()?
        } else {
            return None;
        };
        let named =
            fields.len() == self.key.len() && self.key.iter().all(|k| fields.contains_key(k));
        named.then(|| self.row_key(&fields))
    }

    /// The rows a name matches by a key field's value or by label, when it names more
    /// than one (so [`Dataset::find_row`] found none): for an "ambiguous" message.
    pub fn rows_named(&self, needle: &str) -> Vec<usize> {
        let by_field: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                self.key.iter().any(|k| {
                    self.rows[i]
                        .get(k)
                        .and_then(Value::as_str)
                        .is_some_and(|v| self.key_matches(v, needle))
                })
            })
            .collect();
        if by_field.len() > 1 {
            return by_field;
        }
        (0..self.rows.len())
            .filter(|&i| self.row_label(&self.rows[i]) == needle)
            .collect()
    }

    /// Every field name that appears in some row, sorted.
    pub fn field_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .rows
            .iter()
            .flat_map(|r| r.keys().cloned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        names.sort();
        names
    }
}

/// Lowercase hex SHA-256 of a text (a row key's keyHash, a selection hash).
pub fn key_hash(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// A row key's keyHash as its 32 bytes: what the matrix indexes rows by to place
/// overrides (no text to allocate, hash or compare).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyHash(pub [u8; 32]);

impl KeyHash {
    /// The keyHash of a row key ([`key_hash`], as bytes).
    pub fn of_key(key: &str) -> KeyHash {
        KeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// A stored row's keyHash from its text, or from its key when the text is not a
    /// keyHash (the store always writes one: this only keeps a hand-edited row placed).
    pub fn of_stored(key: &str, hash: &str) -> KeyHash {
        KeyHash::from_hex(hash).unwrap_or_else(|| KeyHash::of_key(key))
    }

    /// A keyHash from its 64 hex digits (either case); `None` for any other text.
    pub fn from_hex(text: &str) -> Option<KeyHash> {
        /// Each byte's digit value, or `BAD` for a byte that is no hex digit.
        const BAD: u8 = 0x80;
        const DIGITS: [u8; 256] = {
            let mut t = [BAD; 256];
            let mut c = 0;
            while c < 10 {
                t[b'0' as usize + c] = c as u8;
                c += 1;
            }
            let mut c = 0;
            while c < 6 {
                t[b'a' as usize + c] = 10 + c as u8;
                t[b'A' as usize + c] = 10 + c as u8;
                c += 1;
            }
            t
        };
        let text: &[u8; 64] = text.as_bytes().try_into().ok()?;
        let mut out = [0u8; 32];
        // No branch per digit: a bad one is noticed once, at the end (the store's
        // 100,000 keyHashes are read in 4 ms, not 37).
        let mut bad = 0;
        for (o, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
            let (high, low) = (DIGITS[usize::from(pair[0])], DIGITS[usize::from(pair[1])]);
            bad |= high | low;
            *o = (high << 4) | low;
        }
        (bad & BAD == 0).then_some(KeyHash(out))
    }
}

impl std::hash::Hash for KeyHash {
    /// A digest's bytes are uniform already: its first eight are hash enough.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        h.write_u64(u64::from_le_bytes(first));
    }
}

/// A SHA-256 digest as lowercase hex, written into `out` (no allocation).
pub fn hex_into<'o>(digest: &[u8; 32], out: &'o mut [u8; 64]) -> &'o str {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, &b) in digest.iter().enumerate() {
        out[2 * i] = HEX[usize::from(b >> 4)];
        out[2 * i + 1] = HEX[usize::from(b & 15)];
    }
    std::str::from_utf8(out).expect("hex digits are ASCII")
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// A feature rule. Read with its logic as JSONLogic (`logic`) or as a predicate list
/// (`predicates` + `logical_operator`, see [`super::predicates`]); always written with
/// `logic`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "RuleInput")]
pub struct Rule {
    /// Unique within a page; derived from the name when absent.
    #[serde(default)]
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default = "default_weight", serialize_with = "ser_number")]
    pub weight: f64,
    #[serde(default = "default_category")]
    pub category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub logic: Value,
    /// The rule as authored in infix, when it was (`logic` is derived from it): kept so
    /// that the editor shows it as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// A structured warning emitted for each target the rule fails for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<RuleWarning>,
    /// Where the rule applies: a condition on the pair. Where it is falsy the rule's
    /// outcome is *n/a*: left out of the passed and the total weight, never a required
    /// failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_when: Option<Condition>,
    /// The family the rule is a member of, when it was written as one (with `each`):
    /// not a key of its own, the family is written in the rule's place.
    #[serde(skip)]
    pub family: Option<Member>,
}

/// A rule family (a rule written with `each`): its id, the rule as written (`each`
/// included: stored and exported so), and how many members it has.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Its `id` as written (it may name parameters: `feature-{feature}`), else the slug of
    /// its name as written.
    pub id: String,
    pub written: Map<String, Value>,
    pub members: usize,
}

/// A rule's place in its family: which member, with which parameter values.
#[derive(Debug, Clone)]
pub struct Member {
    pub family: std::sync::Arc<Family>,
    pub index: usize,
    /// Each parameter with its value, in the order `each` names them.
    pub binding: Vec<(String, Value)>,
}

impl PartialEq for Member {
    fn eq(&self, other: &Member) -> bool {
        self.index == other.index && self.family == other.family
    }
}

impl Member {
    /// The member's values as text, `, ` between them (`fetch`, `webgpu, 16`).
    pub fn label(&self) -> String {
        self.binding
            .iter()
            .map(|(_, v)| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A family's members, read from the family as written (`TryFrom` is in
/// [`crate::family`]).
pub(crate) struct Expanded(pub(crate) Vec<Rule>);

/// One element of a page file's `rules`: a rule, or a family (with `each`) as its
/// members. A key written twice is refused, as the typed parse of a rule does.
pub(crate) struct RuleItem(pub(crate) Vec<Rule>);

impl<'de> Deserialize<'de> for RuleItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RuleItem, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RuleItem;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a rule (an object)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<RuleItem, A::Error> {
                use serde::de::Error;
                let mut map = Map::new();
                while let Some(key) = m.next_key::<String>()? {
                    let value: Value = m.next_value()?;
                    if map.contains_key(&key) {
                        return Err(A::Error::custom(format!("duplicate field `{key}`")));
                    }
                    map.insert(key, value);
                }
                if map.contains_key("each") {
                    Expanded::try_from(map)
                        .map(|e| RuleItem(e.0))
                        .map_err(A::Error::custom)
                } else {
                    serde_json::from_value::<Rule>(Value::Object(map))
                        .map(|r| RuleItem(vec![r]))
                        .map_err(A::Error::custom)
                }
            }
        }
        d.deserialize_map(Visit)
    }
}

fn read_rules<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Rule>, D::Error> {
    let items = Vec::<RuleItem>::deserialize(d)?;
    Ok(items.into_iter().flat_map(|i| i.0).collect())
}

/// The rules as a page file writes them: a family once, as written, in its first
/// member's place.
fn write_rules<S: serde::Serializer>(rules: &[Rule], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(None)?;
    let mut families: Vec<&std::sync::Arc<Family>> = Vec::new();
    for r in rules {
        match &r.family {
            Some(m) => {
                if !families
                    .iter()
                    .any(|f| std::sync::Arc::ptr_eq(f, &m.family))
                {
                    families.push(&m.family);
                    seq.serialize_element(&m.family.written)?;
                }
            }
            None => seq.serialize_element(r)?,
        }
    }
    seq.end()
}

/// A condition on a pair (a rule's `appliesWhen`): JSONLogic, kept with the infix text
/// it was written as, when it was. A page file writes it as that text, else as the
/// JSONLogic (a predicate list is read as JSONLogic, as a rule's is).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub logic: Value,
    pub expression: Option<String>,
}

impl Condition {
    /// A condition given as JSONLogic.
    pub fn logic(logic: Value) -> Condition {
        Condition {
            logic,
            expression: None,
        }
    }

    /// The condition as a page file writes it.
    pub fn as_written(&self) -> Value {
        match &self.expression {
            Some(text) => Value::String(text.clone()),
            None => self.logic.clone(),
        }
    }
}

impl Serialize for Condition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_written().serialize(s)
    }
}

/// A rule's structured warning: a `kind` for scripts and a `detail` for people, whose
/// `{target.label}`, `{target.id}`, `{target.FIELD}` (a shown field), `{source.key}`,
/// `{rule.id}` and `{rule.name}` are filled in per target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleWarning {
    pub kind: String,
    pub detail: String,
}

/// A rule as page files and `rule add` write it: `logic`, or `predicates`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RuleInput {
    #[serde(default)]
    pub(crate) id: String,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) required: bool,
    #[serde(default = "default_weight")]
    pub(crate) weight: f64,
    #[serde(default = "default_category")]
    pub(crate) category: String,
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// `Some(null)` when written as `null` (a valid, always-failing rule).
    #[serde(default, deserialize_with = "present")]
    pub(crate) logic: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) predicates: Option<Value>,
    #[serde(default, rename = "logical_operator", alias = "logicalOperator")]
    pub(crate) logical_operator: Option<Value>,
    #[serde(default)]
    pub(crate) expression: Option<String>,
    #[serde(default)]
    pub(crate) warning: Option<RuleWarning>,
    /// As written: JSONLogic, an infix text, or `{"predicates": […]}`.
    #[serde(default)]
    pub(crate) applies_when: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn default_weight() -> f64 {
    1.0
}

fn default_category() -> String {
    "General".to_owned()
}

/// Writes whole numbers without a fraction (`1`, not `1.0`).
fn ser_number<S: serde::Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        s.serialize_i64(*value as i64)
    } else {
        s.serialize_f64(*value)
    }
}

impl Rule {
    /// Fills a missing id from the name: lowercase, words joined by `-`.
    pub fn ensure_id(&mut self) {
        if self.id.trim().is_empty() {
            self.id = slugify(&self.name);
        }
    }
}

/// Whether `id` is a page id: a slug as [`slugify`] makes them (lowercase letters,
/// digits, single hyphens), at most [`MAX_PAGE_ID`] bytes.
pub fn is_page_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_PAGE_ID && slugify(id) == id
}

/// The longest page id, in bytes.
pub const MAX_PAGE_ID: usize = 128;

/// `Tool Calling Support` → `tool-calling-support`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "rule".to_owned()
    } else {
        out
    }
}

/// How one target's verdict is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevicePolicy {
    #[serde(default)]
    pub required_mode: RequiredMode,
    #[serde(default = "default_full", serialize_with = "ser_number")]
    pub full_threshold: f64,
    #[serde(default = "default_partial", serialize_with = "ser_number")]
    pub partial_threshold: f64,
}

fn default_full() -> f64 {
    1.0
}

fn default_partial() -> f64 {
    0.4
}

impl Default for DevicePolicy {
    fn default() -> Self {
        DevicePolicy {
            required_mode: RequiredMode::default(),
            full_threshold: default_full(),
            partial_threshold: default_partial(),
        }
    }
}

/// A policy value by name, as the page file, `rulebench policy set` and the workbench's
/// Policy pane call it (`fullThreshold`, `mode`, …): one list, by derive, in the order
/// the pane shows them; a new one does not build until every match on it says what it
/// does.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
pub enum PolicyField {
    #[strum(serialize = "requiredMode")]
    RequiredMode,
    #[strum(serialize = "fullThreshold")]
    FullThreshold,
    #[strum(serialize = "partialThreshold")]
    PartialThreshold,
    /// The selection's aggregate mode (`selectionPolicy.aggregate.mode`).
    #[strum(serialize = "mode")]
    AggregateMode,
    #[strum(serialize = "elseMode")]
    ElseMode,
    #[strum(serialize = "strategy")]
    Strategy,
}

impl PolicyField {
    /// Every policy value, in the order the workbench shows them.
    pub const ALL: &'static [PolicyField] = <PolicyField as strum::VariantArray>::VARIANTS;

    /// The name, as in the page file and `policy set`.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What a failing required rule does to a target's verdict.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE", ascii_case_insensitive)]
pub enum RequiredMode {
    /// Any failing required rule gives verdict 0 (README, Verdicts).
    #[default]
    #[serde(rename = "ANY_REQUIRED_FAIL_IS_0")]
    #[strum(serialize = "ANY_REQUIRED_FAIL_IS_0")]
    AnyRequiredFailIs0,
    /// Extension: a failing required rule caps the verdict at 1 (partial).
    AnyRequiredFailCapsAtPartial,
    /// Extension: required rules count like optional ones (weighted into the score).
    IgnoreRequired,
}

/// How the targets' verdicts combine into one selection verdict.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionPolicy {
    #[serde(default)]
    pub aggregate: Aggregate,
    #[serde(default)]
    pub recommendation: Recommendation,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Aggregate {
    #[serde(default)]
    pub mode: AggregateMode,
    #[serde(default)]
    pub else_mode: ElseMode,
}

/// When the selection is fully compatible (verdict 2).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE", ascii_case_insensitive)]
pub enum AggregateMode {
    /// Some target has verdict 2.
    #[default]
    AnyDeviceFullIsCompatible,
    /// Extension: every target has verdict 2.
    AllDevicesFullIsCompatible,
}

/// When a selection that is not fully compatible is partial (verdict 1).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE", ascii_case_insensitive)]
pub enum ElseMode {
    /// Some target has verdict 1 (or 2).
    #[default]
    AnyDevicePartialIsPartial,
    /// Extension: never partial; the selection is 2 or 0.
    None,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recommendation {
    #[serde(default)]
    pub strategy: RecommendationStrategy,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE", ascii_case_insensitive)]
pub enum RecommendationStrategy {
    /// Highest verdict, then score, then priority (extension), then smallest id.
    #[default]
    HighestVerdictThenScore,
}

/// An override as the store keeps it for the matrix: its pair by keyHash, its value
/// and its note; no key. A keyHash that is not 64 hex digits is `None` (it names no
/// row).
#[derive(Debug, Clone, PartialEq)]
pub struct HashedOverride {
    pub source_hash: Option<KeyHash>,
    pub target_hash: Option<KeyHash>,
    pub value: bool,
    pub note: Option<String>,
}

/// A manual verdict for one (source, target) pair, decided before any rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Override {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_key_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_key_hash: Option<String>,
    pub value: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Override {
    /// The pair as messages name it: `source key × target key` (a keyHash where the
    /// override names its row by hash).
    pub fn pair_label(&self) -> String {
        format!(
            "{} × {}",
            self.source_key
                .clone()
                .or_else(|| self.source_hash())
                .unwrap_or_default(),
            self.target_key
                .clone()
                .or_else(|| self.target_hash())
                .unwrap_or_default()
        )
    }

    /// The source key hash, computed from the key when only the key is given.
    /// (A keyHash is hex: matched whatever its case.)
    pub fn source_hash(&self) -> Option<String> {
        self.source_key_hash
            .as_deref()
            .map(str::to_ascii_lowercase)
            .or_else(|| self.source_key.as_deref().map(key_hash))
    }

    /// The target key hash, computed from the key when only the key is given.
    pub fn target_hash(&self) -> Option<String> {
        self.target_key_hash
            .as_deref()
            .map(str::to_ascii_lowercase)
            .or_else(|| self.target_key.as_deref().map(key_hash))
    }
}

// --- assertion and key types (the page file's vocabulary; their behaviour lives in
// `assertions` and `dataset`) ---

/// One check on the evaluation result of a selection (page file `"assertions": [...]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Assertion {
    /// Unique within a page; derived from the description (else `assertion-N`) when absent.
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A source row (anything [`super::model::Dataset::find_row`] accepts; stored as its key),
    /// or `*` for every source row.
    #[serde(default)]
    pub select: String,
    /// A JSONPath over the selection's evaluation result; `$`-less sugar is accepted
    /// (`selectionVerdict`, `targets[0].verdict`, `targets.0.verdict`).
    #[serde(default)]
    pub path: String,
    #[serde(default, skip_serializing_if = "PathMatch::is_any")]
    pub path_match: PathMatch,
    /// A matcher name from the [registry](registry): `toEqual`, `toBeNull`, …
    #[serde(default)]
    pub matcher: String,
    /// The matcher's argument (absent for `toBeNull`; `null` is a value).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub expected: Option<Value>,
    /// Inverts the aggregated outcome.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not: bool,
}

/// How the values a path resolves to are aggregated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PathMatch {
    /// Passes when some value passes (the default).
    #[default]
    Any,
    /// Passes only when every value passes.
    All,
}

impl PathMatch {
    pub fn is_any(&self) -> bool {
        *self == PathMatch::Any
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PathMatch::Any => "ANY",
            PathMatch::All => "ALL",
        }
    }
}

/// Whether key lookups (`--select`, `--source`, `--target`, overrides by key,
/// [`Dataset::find_row`]) respect case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyCase {
    #[default]
    Sensitive,
    /// Keys compare lower-cased (the provider tokens: `OPENAI` is `openai`).
    Insensitive,
}

impl KeyCase {
    pub fn is_sensitive(&self) -> bool {
        *self == KeyCase::Sensitive
    }

    /// The text keys compare by: lower-cased when insensitive.
    pub fn fold<'a>(self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match self {
            KeyCase::Insensitive if text.chars().any(char::is_uppercase) => {
                std::borrow::Cow::Owned(text.to_lowercase())
            }
            _ => std::borrow::Cow::Borrowed(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_is_named_the_same_by_serde_and_by_its_variant_list() {
        fn check<T>()
        where
            T: strum::VariantArray + Copy + Into<&'static str> + Serialize + std::str::FromStr,
            T: PartialEq + std::fmt::Debug,
        {
            for v in T::VARIANTS {
                let name: &'static str = (*v).into();
                assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!(name));
                assert_eq!(name.to_lowercase().parse::<T>().ok(), Some(*v));
            }
        }
        check::<RequiredMode>();
        check::<AggregateMode>();
        check::<ElseMode>();
        check::<RecommendationStrategy>();
    }
    use serde_json::json;

    fn dataset(key: &[&str]) -> Dataset {
        Dataset {
            name: "d".into(),
            key: key.iter().map(|s| s.to_string()).collect(),
            label: Some("displayName".into()),
            summary: vec![],
            priority: None,
            rows: vec![],
            ..Dataset::default()
        }
    }

    #[test]
    fn row_key_joins_fields_in_key_order() {
        let d = dataset(&["clientType", "id"]);
        let row = json!({"id": "t3-chat", "clientType": "web", "n": 1});
        let row = row.as_object().unwrap();
        assert_eq!(d.row_key(row), "clientType=web|id=t3-chat");
        assert_eq!(d.row_id(row), "clientType=web|id=t3-chat");
        let d = dataset(&["n", "id"]);
        assert_eq!(d.row_key(row), "n=1|id=t3-chat");
    }

    #[test]
    fn key_hash_is_sha256_hex() {
        assert_eq!(
            key_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn key_hashes_as_bytes_are_the_hex_keyhashes() {
        let hex = key_hash("model=gpt-4o");
        let bytes = KeyHash::of_key("model=gpt-4o");
        assert_eq!(KeyHash::from_hex(&hex), Some(bytes));
        assert_eq!(KeyHash::from_hex(&hex.to_uppercase()), Some(bytes));
        assert_ne!(KeyHash::from_hex(&key_hash("model=gpt-4")), Some(bytes));
        // Anything but 64 hex digits names no row.
        for bad in [
            &hex[1..],
            &format!("{hex}0"),
            &format!("g{}", &hex[1..]),
            "",
        ] {
            assert_eq!(KeyHash::from_hex(bad), None, "{bad}");
        }
        // A stored row's text that is no keyHash: the key's own is used.
        assert_eq!(KeyHash::of_stored("model=gpt-4o", "x"), bytes);
        assert_eq!(
            KeyHash::of_stored("model=other", &hex),
            bytes,
            "a keyHash as stored is read, not recomputed"
        );
    }

    #[test]
    fn slugify_derives_ids() {
        assert_eq!(slugify("Tool Calling Support"), "tool-calling-support");
        assert_eq!(slugify("  GPT-4.1 (beta)! "), "gpt-4-1-beta");
        assert_eq!(slugify("!!"), "rule");
    }
}

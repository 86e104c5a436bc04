//! The vocabulary of SQL compilation: the SQL kind of a field, a dataset's columns, and
//! why a page does not compile.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::diag::{Code, Diagnostic};
use crate::model::{Dataset, Row};

/// The type of a field over a dataset's rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// No row holds a value.
    Null,
    Text,
    Int,
    Num,
    Bool,
    /// Arrays whose items are all strings.
    TextArray,
    /// Values of several types (`string|integer`).
    Mixed(String),
    /// Objects, or arrays of other items.
    Other(&'static str),
}

impl Kind {
    pub fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => Kind::Int,
            Value::Number(_) => Kind::Num,
            Value::String(_) => Kind::Text,
            Value::Array(items) if items.iter().all(Value::is_string) => Kind::TextArray,
            Value::Array(_) => Kind::Other("arrays of other items than strings"),
            Value::Object(_) => Kind::Other("objects"),
        }
    }

    fn name(&self) -> String {
        match self {
            Kind::Null => "null".into(),
            Kind::Text => "string".into(),
            Kind::Int => "integer".into(),
            Kind::Num => "number".into(),
            Kind::Bool => "boolean".into(),
            Kind::TextArray => "array".into(),
            Kind::Mixed(m) => m.clone(),
            Kind::Other(o) => (*o).into(),
        }
    }

    /// The type with another row's.
    pub fn join(self, other: Kind) -> Kind {
        match (self, other) {
            (Kind::Null, k) | (k, Kind::Null) => k,
            (a, b) if a == b => a,
            (Kind::Int, Kind::Num) | (Kind::Num, Kind::Int) => Kind::Num,
            (Kind::Other(o), _) | (_, Kind::Other(o)) => Kind::Other(o),
            (a, b) => {
                let mut names: Vec<String> = a
                    .name()
                    .split('|')
                    .chain(b.name().split('|'))
                    .map(str::to_owned)
                    .collect();
                names.sort();
                names.dedup();
                Kind::Mixed(names.join("|"))
            }
        }
    }

    /// The type in words, for messages.
    pub fn describe(&self) -> String {
        match self {
            Kind::Null => "no value".into(),
            Kind::Mixed(m) => format!("values of several types ({m})"),
            Kind::Other(o) => (*o).to_owned(),
            k => format!("{} values", k.name()),
        }
    }
}

/// Why a page does not compile to SQL, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {why}", .rule.as_ref().map(|r| format!("rule `{r}`")).unwrap_or_else(|| "page".into()), .operator.as_ref().map(|o| format!(", operator `{o}`")).unwrap_or_default())]
pub struct SqlError {
    /// The rule, when a rule is the cause.
    pub rule: Option<String>,
    /// JSON pointer into the page (`/rules/2/logic/or/0`).
    pub pointer: String,
    /// The operator that does not translate, when one is the cause.
    pub operator: Option<String>,
    /// Why, in a sentence.
    pub why: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl SqlError {
    pub(crate) fn page(pointer: impl Into<String>, why: impl Into<String>) -> SqlError {
        SqlError {
            rule: None,
            pointer: pointer.into(),
            operator: None,
            why: why.into(),
            hint: None,
        }
    }

    /// Whether the problem is in a rule's logic, which partial compilation leaves out
    /// (a clash of a rule's id with another column is the page's: no rule can be left
    /// out to mend it).
    pub fn in_rule_logic(&self) -> bool {
        self.rule.is_some() && !self.pointer.ends_with("/id")
    }

    /// A rule left out of a partial compilation, as a warning (code
    /// `sql-untranslatable`).
    pub fn left_out(&self) -> Diagnostic {
        Diagnostic::warning(
            Code::SqlUntranslatable,
            self.pointer.clone(),
            format!("{} (left out: its column is NULL)", self),
        )
        .with_hint(self.hint.clone())
    }

    /// The error as a diagnostic (code `sql-untranslatable`), for `check --sql`.
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(
            Code::SqlUntranslatable,
            self.pointer.clone(),
            self.to_string(),
        )
        .with_hint(self.hint.clone())
    }
}

/// The columns of one dataset's table, as the page's rows type them.
#[derive(Debug, Clone)]
pub struct Schema {
    pub fields: BTreeMap<String, Kind>,
    /// Fields whose rows hold them (the table's columns), in first-seen order.
    pub columns: Vec<String>,
}

impl Schema {
    /// The schema of a dataset's rows as stored (`effective`: as rules see them, with
    /// defaults and patches applied).
    pub fn of(d: &Dataset, effective: bool) -> Schema {
        let mut fields: BTreeMap<String, Kind> = BTreeMap::new();
        let mut columns = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for row in &d.rows {
            let row: std::borrow::Cow<'_, Row> = if effective {
                d.effective_row(row)
            } else {
                std::borrow::Cow::Borrowed(row)
            };
            for (k, v) in row.iter() {
                if !effective && seen.insert(k.clone()) {
                    columns.push(k.clone());
                }
                let kind = Kind::of(v);
                let slot = fields.entry(k.clone()).or_insert(Kind::Null);
                *slot = std::mem::replace(slot, Kind::Null).join(kind);
            }
        }
        if effective {
            // A field only defaults or patches give.
            for (k, v) in d
                .defaults
                .iter()
                .chain(d.patches.iter().flat_map(|p| p.set.iter()))
            {
                let slot = fields.entry(k.clone()).or_insert(Kind::Null);
                *slot = std::mem::replace(slot, Kind::Null).join(Kind::of(v));
            }
        }
        Schema { fields, columns }
    }

    pub fn kind(&self, field: &str) -> Kind {
        self.fields.get(field).cloned().unwrap_or(Kind::Null)
    }
}

//! What a page's datasets hold: the fields of each side, how many rows carry each,
//! their inferred types and defaults. Validation, lint and infix completion read it.

use std::collections::{BTreeMap, HashSet};

use crate::dataset::FieldSchema;
use crate::model::{Dataset, Page, Side};

/// The fields of a page's two datasets and how many rows carry each.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub source: DatasetSchema,
    pub target: DatasetSchema,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DatasetSchema {
    pub rows: usize,
    /// field → number of rows that have it (`null` included). A field with a default
    /// counts for every row.
    pub coverage: BTreeMap<String, usize>,
    /// field → its inferred types, how many rows hold it as stored, and its default.
    pub fields: BTreeMap<String, FieldSchema>,
}

impl DatasetSchema {
    pub fn of(dataset: &Dataset) -> Self {
        Self::from_fields(dataset.rows.len(), super::dataset::field_schemas(dataset))
    }

    /// The schema of `rows` rows whose fields (defaults included) are `fields`.
    pub fn from_fields(rows: usize, fields: BTreeMap<String, FieldSchema>) -> Self {
        let coverage = fields
            .iter()
            .map(|(k, f)| {
                (
                    k.clone(),
                    if f.default.is_some() { rows } else { f.present },
                )
            })
            .collect();
        DatasetSchema {
            rows,
            coverage,
            fields,
        }
    }
}

impl Schema {
    pub fn of(page: &Page) -> Self {
        Self::of_with(page, None)
    }

    /// The schema of a page, one side's rows described by `facts` instead.
    pub fn of_with(page: &Page, facts: Option<&RowFacts<'_>>) -> Self {
        let side = |side: Side| match facts {
            Some(f) if f.side == side => DatasetSchema::from_fields(
                f.rows,
                crate::dataset::with_defaults(f.fields.clone(), page.dataset(side)),
            ),
            _ => DatasetSchema::of(page.dataset(side)),
        };
        Schema {
            source: side(Side::Source),
            target: side(Side::Target),
        }
    }

    pub(crate) fn side(&self, side: Side) -> &DatasetSchema {
        match side {
            Side::Source => &self.source,
            Side::Target => &self.target,
        }
    }

    /// `source.x` / `target.y` for every known field: did-you-mean candidates.
    pub(crate) fn qualified_fields(&self) -> Vec<String> {
        [Side::Source, Side::Target]
            .iter()
            .flat_map(|&s| {
                self.side(s)
                    .coverage
                    .keys()
                    .map(move |f| format!("{}.{f}", s.name()))
            })
            .collect()
    }
}

/// What validation needs of one side's rows when they are not held as trees (a dataset
/// import of rows kept as stored texts): how many, their fields, their keyHashes. Their
/// keys were checked (present, unique) while they were read.
pub struct RowFacts<'a> {
    pub side: Side,
    pub rows: usize,
    pub fields: &'a BTreeMap<String, FieldSchema>,
    pub hashes: HashSet<String>,
}

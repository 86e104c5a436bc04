//! `page init`: a page made from two data files. Each file is read as `dataset import`
//! reads it; the key (a field unique in every row, preferring `id`, `key`, `name`; or a
//! JSON object's member names) and the label are inferred unless stated, every choice
//! is reported, and the page gets the default policies and no rules.

use std::path::{Path, PathBuf};

use rulebench_core::dataset::{self, DataFormat, ReadOptions};
use rulebench_core::diag::Diagnostic;
use rulebench_core::model::{Dataset, Page, Side};

use crate::dataset::{DataInput, Progress, Reading, absolute, read_bytes_of, read_rows};
use crate::{App, AppError, Result};

/// One side of `page init`: its file and what the user stated about it.
#[derive(Debug, Clone, Default)]
pub struct SideInit {
    pub file: PathBuf,
    pub key: Option<Vec<String>>,
    pub label: Option<String>,
    /// How to read the file (flags that do not apply to it are left out).
    pub read: ReadOptions,
}

/// What `page init` is asked for.
#[derive(Debug, Clone, Default)]
pub struct PageInit {
    pub page_id: String,
    /// The page's name [default: the id].
    pub name: Option<String>,
    pub source: SideInit,
    pub target: SideInit,
    /// Link both datasets to their files (`rulebench watch` reloads them).
    pub link: bool,
    /// Replace a page with this id.
    pub replace: bool,
}

/// What `page init` made.
#[derive(Debug, Clone)]
pub struct PageMade {
    pub page_id: String,
    pub revision: i64,
    /// Each choice made, in words ("source key: id (unique in every row)").
    pub choices: Vec<String>,
    pub warnings: Vec<Diagnostic>,
    pub rows: (usize, usize),
}

/// The read options that apply to a file of this format: a name field to JSON, a
/// sheet to Excel, stated types to the fields the file has (`fields`).
fn applicable(read: &ReadOptions, format: DataFormat, fields: Option<&[String]>) -> ReadOptions {
    ReadOptions {
        format: read.format,
        name_field: read
            .name_field
            .clone()
            .filter(|_| format == DataFormat::Json),
        sheet: read.sheet.clone().filter(|_| format == DataFormat::Excel),
        types: read
            .types
            .iter()
            .filter(|(f, _)| fields.is_none_or(|fields| fields.contains(f)))
            .map(|(f, t)| (f.clone(), *t))
            .collect(),
    }
}

/// A dataset name from a file name: `clients.parquet` → `clients`.
fn name_of(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("rows")
        .to_owned()
}

impl App {
    /// Makes a page from two data files (`rulebench page init`): nothing is stored
    /// unless both files read and the page validates.
    pub fn init_page(&mut self, spec: &PageInit) -> Result<PageMade> {
        let id = spec.page_id.trim();
        if id.is_empty() {
            return Err(AppError::Usage("the page id is empty".into()));
        }
        if !spec.replace && self.store.revision(id)?.is_some() {
            return Err(AppError::PageExists(id.to_owned()));
        }
        let mut choices = Vec::new();
        let mut fields = Vec::new();
        let source = self.init_side(
            Side::Source,
            &spec.source,
            spec.link,
            &mut choices,
            &mut fields,
        )?;
        let target = self.init_side(
            Side::Target,
            &spec.target,
            spec.link,
            &mut choices,
            &mut fields,
        )?;
        for stated in spec
            .source
            .read
            .types
            .keys()
            .chain(spec.target.read.types.keys())
        {
            if !fields.contains(stated) {
                return Err(AppError::Usage(format!(
                    "--type {stated}=…: neither file has a field `{stated}`"
                )));
            }
        }
        let page = Page {
            format: rulebench_core::model::PAGE_FORMAT.to_owned(),
            id: id.to_owned(),
            name: spec.name.clone().unwrap_or_else(|| id.to_owned()),
            description: None,
            organization: None,
            source,
            target,
            rules: vec![],
            device_policy: Default::default(),
            selection_policy: Default::default(),
            overrides: vec![],
            assertions: vec![],
            expectations: vec![],
        };
        let diags = rulebench_core::check::page(&page);
        if diags.iter().any(Diagnostic::is_error) {
            return Err(AppError::Invalid {
                origin: format!("page `{id}` from its data files"),
                diagnostics: diags,
            });
        }
        let rows = (page.source.rows.len(), page.target.rows.len());
        let revision = self.store.insert_page(&page, spec.replace)?;
        Ok(PageMade {
            page_id: id.to_owned(),
            revision,
            choices,
            warnings: diags,
            rows,
        })
    }

    fn init_side(
        &self,
        side: Side,
        spec: &SideInit,
        link: bool,
        choices: &mut Vec<String>,
        fields: &mut Vec<String>,
    ) -> Result<Dataset> {
        self.refuse_database_file(&spec.file)?;
        let shown = spec.file.display().to_string();
        let bytes = read_bytes_of(DataInput::File(&spec.file))?;
        let format = spec
            .read
            .format
            .unwrap_or_else(|| DataFormat::detect(&spec.file, &bytes));
        let mut read = applicable(&spec.read, format, None);
        let what = side.name();
        // A keyed JSON object: the member names are the key.
        let keyed_object = format == DataFormat::Json
            && bytes
                .iter()
                .find(|b| !b.is_ascii_whitespace() && **b != 0xEF && **b != 0xBB && **b != 0xBF)
                == Some(&b'{');
        if keyed_object && read.name_field.is_none() {
            let field = spec
                .key
                .as_ref()
                .and_then(|k| (k.len() == 1).then(|| k[0].clone()))
                .unwrap_or_else(|| dataset::infer_name_field(&bytes));
            choices.push(format!(
                "{what} name field: `{field}` takes each member's name (--name-field overrides)"
            ));
            read.name_field = Some(field);
        }
        // First read: every row, no key, for the inference (and the fields the stated
        // types may name).
        let probe = read_rows(
            DataInput::Bytes {
                name: &shown,
                bytes: &bytes,
            },
            &Reading {
                key: &[],
                key_case: Default::default(),
                read: &ReadOptions {
                    types: Default::default(),
                    format: Some(format),
                    ..read.clone()
                },
                skip_bad: false,
            },
            &mut |_: Progress| {},
        )?;
        read = ReadOptions {
            types: applicable(&spec.read, format, Some(&probe.fields)).types,
            ..read
        };
        fields.extend(probe.fields.iter().cloned());
        let key = match &spec.key {
            Some(k) => k.clone(),
            None => {
                if let Some(field) = read.name_field.clone().filter(|_| keyed_object) {
                    vec![field]
                } else {
                    let Some(field) = dataset::infer_key(&probe.rows, &probe.fields) else {
                        return Err(AppError::Usage(format!(
                            "{}: no field is unique in every row, so no key could be chosen for the {what} rows (hint: --{what}-key F1,F2 names the key fields; the fields are {})",
                            rulebench_core::text::sanitize(&shown),
                            probe.fields.join(", ")
                        )));
                    };
                    choices.push(format!(
                        "{what} key: `{field}` (unique in every row; --{what}-key overrides)"
                    ));
                    vec![field]
                }
            }
        };
        if keyed_object && spec.key.is_none() {
            choices.push(format!("{what} key: `{}` (the member names)", key[0]));
        }
        let label = match &spec.label {
            Some(l) => {
                if !probe.fields.contains(l) {
                    return Err(AppError::Usage(format!(
                        "--{what}-label `{l}`: {} has no field `{l}` (fields: {})",
                        rulebench_core::text::sanitize(&shown),
                        probe.fields.join(", ")
                    )));
                }
                Some(l.clone())
            }
            None => {
                let l = dataset::infer_label(&probe.rows, &probe.fields, &key);
                match &l {
                    Some(l) => choices.push(format!(
                        "{what} label: `{l}` (--{what}-label overrides)"
                    )),
                    None => choices.push(format!(
                        "{what} label: none, rows are named by their key (--{what}-label names a field)"
                    )),
                }
                l
            }
        };
        drop(probe);
        // Second read: with the key, checked as an import checks it.
        let mut d = Dataset {
            name: name_of(&spec.file),
            key,
            label,
            read: ReadOptions {
                format: spec.read.format,
                ..read.clone()
            },
            ..Dataset::default()
        };
        let parsed = read_rows(
            DataInput::Bytes {
                name: &shown,
                bytes: &bytes,
            },
            &Reading {
                key: &d.key,
                key_case: d.key_case,
                read: &ReadOptions {
                    format: Some(format),
                    ..read
                },
                skip_bad: false,
            },
            &mut |_| {},
        )?;
        d.rows = parsed.rows;
        if link {
            d.file = Some(absolute(&spec.file).display().to_string());
        }
        choices.push(format!(
            "{what} rows: {} from {} ({})",
            d.rows.len(),
            rulebench_core::text::sanitize(&shown),
            format.name()
        ));
        Ok(d)
    }
}

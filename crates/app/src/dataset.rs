//! Dataset use cases: import a data file (CSV, JSON, JSON Lines) into one side of a page,
//! describe a dataset's fields, and keep linked files in step (read at page import,
//! reloaded by [`super::watch::Watcher`]).
//!
//! Every change is validated as a whole page first (rules that read fields the new rows
//! lack, overrides and assertions that name rows no longer there) and then stored in
//! one transaction as one new revision; an invalid file changes nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{App, AppError, Imported, Result};
use rulebench_core::dataset::{
    self, BadRow, DataFormat, KeyCase, ParseOptions, Parsed, ReadOptions, RowPlace, RowText,
};
use rulebench_core::diag::{Code, Diagnostic};
use rulebench_core::model::{Dataset, Page, Side};
use rulebench_core::validate::{self, DatasetSchema};
use rulebench_store as store;

/// How far a dataset import is, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Parsing the file: bytes done of its size.
    Parsing { done: u64, total: u64 },
    /// Validating the page with the new rows.
    Validating,
    /// Writing rows to the database.
    Writing { done: u64, total: u64 },
}

/// Options of `dataset import`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportOptions {
    /// New key fields (else the dataset's).
    pub key: Option<Vec<String>>,
    /// New label field (else the dataset's).
    pub label: Option<String>,
    /// Link the dataset to the file (the watcher reloads it on change).
    pub link: bool,
    /// Import the good rows and report the bad ones instead of refusing the file.
    pub skip_bad: bool,
    /// How to read the file (format, name field, sheet, stated types). When none is
    /// given and the file is the dataset's linked one, the dataset's own are used.
    pub read: ReadOptions,
}

/// What a dataset import did.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetImported {
    pub page_id: String,
    pub side: Side,
    /// The file, absolute.
    pub file: PathBuf,
    pub format: DataFormat,
    pub revision: i64,
    pub rows: usize,
    /// Bad rows left out (`--skip-bad`).
    pub skipped: Vec<BadRow>,
    /// Where the bad rows are (lines, table rows, sheet rows).
    pub place: RowPlace,
    /// Validation warnings of the page with the new rows.
    pub warnings: Vec<Diagnostic>,
    /// The dataset's link after the import.
    pub linked: Option<String>,
    /// A link to another file that this import removed (its rows no longer come from it).
    pub unlinked: Option<String>,
}

/// A dataset's description and schema: its fields with inferred types, coverage and
/// defaults (`dataset schema`, the workbench's dataset pane).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DatasetView {
    pub page_id: String,
    pub revision: i64,
    #[serde(serialize_with = "side_name")]
    pub side: Side,
    pub name: String,
    pub key: Vec<String>,
    pub label: Option<String>,
    pub key_case: KeyCase,
    pub file: Option<String>,
    pub schema: DatasetSchema,
}

fn side_name<S: serde::Serializer>(side: &Side, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(side.name())
}

/// A reload of a linked file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reloaded {
    /// The file's rows differ from the stored ones: stored as a new revision.
    Changed { revision: i64, rows: usize },
    /// The file holds the stored rows already: nothing to do.
    Unchanged { rows: usize },
}

pub(crate) fn dataset_mut(page: &mut Page, side: Side) -> &mut Dataset {
    match side {
        Side::Source => &mut page.source,
        Side::Target => &mut page.target,
    }
}

/// An absolute form of a path (symlinks resolved when the file exists).
pub fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_owned())
}

/// A linked file's path as it is stored and compared: the file itself made canonical
/// when it exists, else its directory made canonical and its name joined (a table
/// deleted, or not made yet, still compares equal to the one linked).
pub fn link_path(path: &Path) -> String {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p.display().to_string();
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name).display().to_string(),
        _ => absolute(path).display().to_string(),
    }
}

/// Where a page file's relative links point from: the directory of `origin` when it
/// names a file, else the current directory.
pub fn link_base(origin: &str) -> PathBuf {
    let p = Path::new(origin);
    let dir = match p.parent() {
        Some(d) if p.is_file() && !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    absolute(&dir)
}

/// Rows made ready to store, handed from the worker that makes them to the writer:
/// their texts in one buffer (no allocation per row).
#[derive(Default)]
struct RowBatch {
    text: String,
    /// Per row, where its key, keyHash and JSON text end in `text`.
    ends: Vec<[usize; 3]>,
}

impl RowBatch {
    fn push(&mut self, row: RowText<'_>) {
        let mut end = |s: &str| {
            self.text.push_str(s);
            self.text.len()
        };
        let ends = [end(row.key), end(row.hash), end(row.json)];
        self.ends.push(ends);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn rows(&self) -> impl Iterator<Item = RowText<'_>> {
        let mut start = 0;
        self.ends.iter().map(move |&[key, hash, json]| {
            let row = RowText {
                key: &self.text[start..key],
                hash: &self.text[key..hash],
                json: &self.text[hash..json],
            };
            start = json;
            row
        })
    }
}

/// Where a data file's bytes come from: a file, or bytes read already (stdin).
#[derive(Debug, Clone, Copy)]
pub enum DataInput<'a> {
    File(&'a Path),
    /// A linked file, reloaded unattended: a regular file only, checked on the file
    /// opened (without blocking), so nothing put in its place can hold the reader.
    Linked(&'a Path),
    /// `name` is what messages call it (`<stdin>`); the format is told by the content.
    Bytes {
        name: &'a str,
        bytes: &'a [u8],
    },
}

impl DataInput<'_> {
    pub(crate) fn shown(&self) -> String {
        match self {
            DataInput::File(p) | DataInput::Linked(p) => p.display().to_string(),
            DataInput::Bytes { name, .. } => (*name).to_owned(),
        }
    }
}

/// The largest data file read (`dataset import`, a linked file's reload).
pub const MAX_DATA_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// A data file's bytes: a regular file only (a FIFO put in a linked file's place would
/// block the reader, and the watcher with it, for good; a device never ends) of at most
/// [`MAX_DATA_FILE_BYTES`].
pub fn read_data_file(path: &Path, shown: &str) -> Result<Vec<u8>> {
    read_data_file_as(path, shown, false)
}

/// [`read_data_file`]; `regular_only` (a linked file): the file is opened without
/// blocking and must be a regular file, as the opened file says (no window between a
/// look at the path and the open for a FIFO to slip in).
pub fn read_data_file_as(path: &Path, shown: &str, regular_only: bool) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |source| AppError::Io {
        path: shown.to_owned(),
        source,
    };
    if regular_only {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK);
        }
        let file = options.open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(AppError::Usage(format!(
                "{}: not a regular file (a linked dataset file is reloaded from a regular file only)",
                rulebench_core::text::sanitize(shown)
            )));
        }
        if meta.len() > MAX_DATA_FILE_BYTES {
            return Err(AppError::Usage(format!(
                "{}: larger than the limit of {} MiB for a data file",
                rulebench_core::text::sanitize(shown),
                MAX_DATA_FILE_BYTES / (1024 * 1024)
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_DATA_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        return Ok(bytes);
    }
    let meta = std::fs::metadata(path).map_err(io)?;
    // A regular file, or a pipe (`<(curl …)`, read up to the limit); not a device
    // (`/dev/zero` never ends) nor a directory.
    #[cfg(unix)]
    let readable = {
        use std::os::unix::fs::FileTypeExt;
        meta.is_file() || meta.file_type().is_fifo()
    };
    #[cfg(not(unix))]
    let readable = meta.is_file();
    if !readable {
        return Err(AppError::Usage(format!(
            "{}: not a data file (a regular file or a pipe; not a device or a directory)",
            rulebench_core::text::sanitize(shown)
        )));
    }
    let too_big = || {
        AppError::Usage(format!(
            "{}: larger than the limit of {} MiB for a data file",
            rulebench_core::text::sanitize(shown),
            MAX_DATA_FILE_BYTES / (1024 * 1024)
        ))
    };
    if meta.len() > MAX_DATA_FILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_DATA_FILE_BYTES) as usize);
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_DATA_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_DATA_FILE_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// A data file's bytes (a linked file: a regular file only).
pub(crate) fn read_bytes_of(input: DataInput<'_>) -> Result<Vec<u8>> {
    let shown = input.shown();
    match input {
        DataInput::File(path) => read_data_file(path, &shown),
        DataInput::Linked(path) => read_data_file_as(path, &shown, true),
        DataInput::Bytes { bytes, .. } => Ok(bytes.to_vec()),
    }
}

/// A data file's bytes: read (a file) or as given (stdin).
fn input_bytes(input: DataInput<'_>) -> Result<std::borrow::Cow<'_, [u8]>> {
    Ok(match input {
        DataInput::File(_) | DataInput::Linked(_) => read_bytes_of(input)?.into(),
        DataInput::Bytes { bytes, .. } => bytes.into(),
    })
}

/// The format a data file is read as (stated, else told by its name or content), with
/// the flags that only fit one format checked against it.
fn format_of(
    input: DataInput<'_>,
    bytes: &[u8],
    how: &Reading<'_>,
    shown: &str,
) -> Result<DataFormat> {
    let path = match input {
        DataInput::File(path) | DataInput::Linked(path) => path,
        DataInput::Bytes { .. } => Path::new(""),
    };
    let format = how
        .read
        .format
        .unwrap_or_else(|| DataFormat::detect(path, bytes));
    if how.read.sheet.is_some() && format != DataFormat::Excel {
        return Err(AppError::Usage(format!(
            "--sheet: {} is {}, not a workbook",
            rulebench_core::text::sanitize(shown),
            format.name()
        )));
    }
    if how.read.name_field.is_some() && format != DataFormat::Json {
        return Err(AppError::Usage(format!(
            "--name-field: {} is {}, not a JSON object of rows",
            rulebench_core::text::sanitize(shown),
            format.name()
        )));
    }
    Ok(format)
}

/// How to read a data file: the dataset's key and key case, how the file is read, and
/// whether bad rows are left out.
#[derive(Clone, Copy)]
pub(crate) struct Reading<'a> {
    pub(crate) key: &'a [String],
    pub(crate) key_case: KeyCase,
    pub(crate) read: &'a ReadOptions,
    pub(crate) skip_bad: bool,
}

impl<'a> Reading<'a> {
    fn of(d: &'a Dataset, read: &'a ReadOptions, skip_bad: bool) -> Self {
        Reading {
            key: &d.key,
            key_case: d.key_case,
            read,
            skip_bad,
        }
    }
}

/// Reads and parses a data file with a dataset's key into rows as trees (rows in their
/// stored form stream instead: [`App::import_dataset_from`]).
pub(crate) fn read_rows(
    input: DataInput<'_>,
    how: &Reading<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Parsed> {
    let shown = input.shown();
    let bytes = input_bytes(input)?;
    let total = bytes.len() as u64;
    progress(Progress::Parsing { done: 0, total });
    let format = format_of(input, &bytes, how, &shown)?;
    let opts = ParseOptions {
        key: how.key,
        key_case: how.key_case,
        skip_bad: how.skip_bad,
        read: how.read,
    };
    if format.is_binary() {
        let table = crate::readers::decode(&bytes, &shown, format, opts.read)?;
        let parsed = dataset::parse_table(table, &shown, format, &opts)?;
        progress(Progress::Parsing { done: total, total });
        return Ok(parsed);
    }
    Ok(dataset::parse(
        &bytes,
        &shown,
        format,
        &opts,
        &mut |done| progress(Progress::Parsing { done, total }),
    )?)
}

/// Validates a page whose `side` rows replaced those of `old`; errors refuse the change,
/// naming the file. Also says whether overrides had to follow keys that changed case.
fn revalidate(
    page: &mut Page,
    side: Side,
    old_keys: impl FnOnce() -> Vec<(String, String)>,
    file: &str,
) -> Result<(Vec<Diagnostic>, bool)> {
    let overrides_changed = dataset::rekey_overrides(page, side, old_keys);
    let diags = refuse_if_invalid(rulebench_core::check::page(page), page, side, file)?;
    Ok((diags, overrides_changed))
}

/// A page's diagnostics with `file`'s rows as its `side` rows: an error among them
/// refuses the file.
fn refuse_if_invalid(
    diags: Vec<Diagnostic>,
    page: &Page,
    side: Side,
    file: &str,
) -> Result<Vec<Diagnostic>> {
    if diags.iter().any(Diagnostic::is_error) {
        return Err(AppError::Invalid {
            origin: format!(
                "{file} refused: with its rows as {} rows, page `{}` is invalid",
                side.name(),
                page.id
            ),
            diagnostics: diags,
        });
    }
    Ok(diags)
}

/// What an import or a reload changes of a dataset's settings: the rest (its name,
/// summary, priority, defaults, patches; its label unless `--label` was given) is kept
/// as stored *inside* the change, so a `dataset set` made while a big file was read is
/// not undone by a copy read before it.
#[derive(Debug, Clone, Copy)]
enum Touches {
    /// A reload: the rows only.
    Rows,
    /// An import: the key, the reading options and the link, and the label with
    /// `--label`.
    Import { label: bool },
}

/// Writes `d`'s settings that `touches` names over the stored ones (`stored`, read in
/// the same transaction before the rows were written).
fn keep_settings(
    tx: &store::Transaction<'_>,
    page_id: &str,
    side: Side,
    stored: Dataset,
    d: &Dataset,
    touches: Touches,
) -> std::result::Result<(), store::StoreError> {
    let mut meta = stored;
    if let Touches::Import { label } = touches {
        meta.key = d.key.clone();
        meta.read = d.read.clone();
        meta.file = d.file.clone();
        if label {
            meta.label = d.label.clone();
        }
    }
    store::ops::set_dataset_meta(tx, page_id, side, &meta)
}

/// Applies an import's `--label` (checked against the file's `fields`) and `--link`
/// to the dataset; returns the file it was linked to before when the import unlinks it.
fn apply_options(
    d: &mut Dataset,
    opts: &ImportOptions,
    fields: &[String],
    shown: &str,
    file: &Path,
) -> Result<Option<String>> {
    if let Some(label) = &opts.label {
        if !fields.contains(label) {
            return Err(AppError::Usage(format!(
                "--label `{label}`: {shown} has no field `{label}` (fields: {})",
                fields.join(", ")
            )));
        }
        d.label = Some(label.clone());
    }
    let linked_to = file.display().to_string();
    if opts.link {
        d.file = Some(linked_to);
        Ok(None)
    } else if d.file.as_deref().is_some_and(|f| f != linked_to) {
        Ok(d.file.take())
    } else {
        Ok(None)
    }
}

impl App {
    /// Imports a data file into one side of a page: all rows or none (unless
    /// `skip_bad`), validated with the page's rules, one transaction, one revision.
    pub fn import_dataset(
        &mut self,
        page_id: &str,
        side: Side,
        path: &Path,
        opts: &ImportOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<DatasetImported> {
        self.import_dataset_from(page_id, side, DataInput::File(path), opts, progress)
    }

    /// [`App::import_dataset`] from a file or from bytes read already (stdin); bytes
    /// cannot be linked.
    pub fn import_dataset_from(
        &mut self,
        page_id: &str,
        side: Side,
        input: DataInput<'_>,
        opts: &ImportOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<DatasetImported> {
        let path = match input {
            DataInput::File(path) | DataInput::Linked(path) => {
                self.refuse_database_file(path)?;
                path
            }
            DataInput::Bytes { name, .. } => {
                if opts.link {
                    return Err(AppError::Usage(format!(
                        "--link needs a file to watch, not {name}"
                    )));
                }
                Path::new("-")
            }
        };
        // The rows of `side` are replaced: they are not loaded (their keys only when
        // overrides must follow keys that changed case).
        let Some(stored) = self.store.load_without(page_id, side)? else {
            return Err(self.missing_page(page_id));
        };
        let mut page = stored.page;
        let file = absolute(path);
        let shown = input.shown();
        let no_assertions = page.assertions.is_empty();
        let d = dataset_mut(&mut page, side);
        if let Some(key) = &opts.key {
            if key.is_empty() || key.iter().any(|k| k.trim().is_empty()) {
                return Err(AppError::Usage(format!(
                    "--key `{}` names no field",
                    key.join(",")
                )));
            }
            d.key = key.clone();
        }
        // The dataset's own file: read as the dataset says, with the flags given laid
        // over (a new `--type` keeps the stored name field). Another file: as the flags
        // say.
        let read = if d.file.as_deref() == Some(&*file.to_string_lossy()) {
            let mut read = d.read.clone();
            let given = &opts.read;
            if given.format.is_some() {
                read.format = given.format;
            }
            if given.name_field.is_some() {
                read.name_field = given.name_field.clone();
            }
            if given.sheet.is_some() {
                read.sheet = given.sheet.clone();
            }
            read.types
                .extend(given.types.iter().map(|(f, t)| (f.clone(), *t)));
            read
        } else {
            opts.read.clone()
        };
        // Rows whose keys compare exactly, and that no assertion names (assertions name
        // source rows), are kept in their stored form: no row is held as a JSON tree.
        if d.key_case.is_sensitive() && (side == Side::Target || no_assertions) {
            let (key, key_case) = (d.key.clone(), d.key_case);
            d.read = read.clone();
            let how = Reading {
                key: &key,
                key_case,
                read: &read,
                skip_bad: opts.skip_bad,
            };
            return self.import_streamed(page, side, input, &how, path, opts, progress);
        }
        let how = Reading::of(d, &read, opts.skip_bad);
        let parsed = read_rows(input, &how, progress)?;
        d.read = read;
        let unlinked = apply_options(d, opts, &parsed.fields, shown.as_str(), &file)?;
        let Parsed {
            rows,
            skipped,
            format,
            place,
            ..
        } = parsed;
        d.rows = rows;
        let linked = d.file.clone();
        progress(Progress::Validating);
        let store = &self.store;
        let old_keys = || store.row_keys(page_id, side).unwrap_or_default();
        let before = page.overrides.clone();
        let (warnings, overrides_changed) = revalidate(&mut page, side, old_keys, &shown)?;
        let n = page.dataset(side).rows.len();
        let what = format!("imported {} from {shown} ({n} rows)", side.name());
        let touches = Touches::Import {
            label: opts.label.is_some(),
        };
        let revision = self.store.change(page_id, &what, |tx, _| {
            let stored = store::ops::dataset_meta(tx, page_id, side)?;
            store::ops::replace_dataset_with_progress(
                tx,
                page_id,
                side,
                page.dataset(side),
                &mut |done| {
                    if done.is_multiple_of(2048) || done == n {
                        progress(Progress::Writing {
                            done: done as u64,
                            total: n as u64,
                        });
                    }
                },
            )?;
            keep_settings(tx, page_id, side, stored, page.dataset(side), touches)?;
            if overrides_changed {
                store::ops::rekey_overrides(tx, page_id, &before, &page.overrides)?;
            }
            Ok(())
        })?;
        Ok(DatasetImported {
            page_id: page_id.to_owned(),
            side,
            file,
            format,
            revision,
            rows: n,
            skipped,
            place,
            warnings,
            linked,
            unlinked,
        })
    }

    /// Imports rows whose keys compare exactly, read in their stored form, as a stream:
    /// a worker thread makes the rows (for CSV, a second pass over the text, its column
    /// types known from the first) and hands them on in batches while this thread
    /// writes them inside the change's transaction, so memory holds the file and a few
    /// batches, not the rows, and the two cores share the work. The page is validated
    /// with what the rows were once the last one is written; an invalid file, a bad
    /// row or a failed write rolls everything back.
    #[allow(clippy::too_many_arguments)]
    fn import_streamed(
        &mut self,
        mut page: Page,
        side: Side,
        input: DataInput<'_>,
        how: &Reading<'_>,
        path: &Path,
        opts: &ImportOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<DatasetImported> {
        /// Rows per batch handed from the worker to the writer.
        const BATCH: usize = 2048;
        let page_id = page.id.clone();
        let file = absolute(path);
        let shown = input.shown();
        let held = input_bytes(input)?;
        let bytes: &[u8] = &held;
        let total = bytes.len() as u64;
        progress(Progress::Parsing { done: 0, total });
        let format = format_of(input, bytes, how, &shown)?;
        let parse = ParseOptions {
            key: how.key,
            key_case: how.key_case,
            skip_bad: how.skip_bad,
            read: how.read,
        };
        // A text file's first pass, before the database is locked.
        let planned = if format.is_binary() {
            None
        } else {
            Some(dataset::plan(bytes, &shown, format, &parse, &mut |done| {
                progress(Progress::Parsing { done, total })
            })?)
        };
        let expected = planned.as_ref().map_or(0, |p| p.rows()) as u64;
        // Only overrides and row patches look rows up by keyHash.
        let want_hashes = !(page.overrides.is_empty() && page.dataset(side).patches.is_empty());
        let touches = Touches::Import {
            label: opts.label.is_some(),
        };
        let mut done: Option<(dataset::CompactFacts, Vec<Diagnostic>, Option<String>)> = None;
        let revision = std::thread::scope(|scope| {
            let (send, batches) = std::sync::mpsc::sync_channel::<RowBatch>(4);
            let shown = shown.as_str();
            let worker = scope.spawn(move || {
                let mut batch = RowBatch::default();
                let mut out = |row: RowText<'_>| {
                    batch.push(row);
                    batch.len() < BATCH || send.send(std::mem::take(&mut batch)).is_ok()
                };
                let facts = match planned {
                    Some(planned) => planned.emit(&parse, &mut out),
                    None => {
                        let mut sink =
                            dataset::TableCompactor::new(shown, format, &parse, &mut out);
                        crate::readers::decode_into(bytes, shown, format, parse.read, &mut sink)
                            .and_then(|()| sink.finish())
                    }
                };
                if batch.len() > 0 {
                    // The writer hung up only when it failed: it says why.
                    let _ = send.send(batch);
                }
                facts
            });
            self.store
                .change_rows(&page_id, "importing a dataset", |tx, _| -> Result<String> {
                    let stored = store::ops::dataset_meta(tx, &page_id, side)?;
                    let mut writer = store::RowWriter::new(tx, &page_id, side)?;
                    let mut hashes = std::collections::HashSet::new();
                    for batch in batches.iter() {
                        for row in batch.rows() {
                            writer.put(row)?;
                            if want_hashes {
                                hashes.insert(row.hash.to_owned());
                            }
                        }
                        let n = writer.written() as u64;
                        progress(Progress::Writing {
                            done: n,
                            total: expected.max(n),
                        });
                    }
                    let facts = match worker.join() {
                        Ok(facts) => facts?,
                        Err(panic) => std::panic::resume_unwind(panic),
                    };
                    writer.finish()?;
                    progress(Progress::Validating);
                    let d = dataset_mut(&mut page, side);
                    let unlinked = apply_options(d, opts, &facts.fields, shown, &file)?;
                    d.rows.clear();
                    let row_facts = validate::RowFacts {
                        side,
                        rows: facts.rows,
                        fields: &facts.schema,
                        hashes,
                    };
                    let warnings = refuse_if_invalid(
                        rulebench_core::check::page_with(&page, Some(&row_facts)),
                        &page,
                        side,
                        shown,
                    )?;
                    keep_settings(tx, &page_id, side, stored, page.dataset(side), touches)?;
                    let n = facts.rows as u64;
                    progress(Progress::Writing { done: n, total: n });
                    let what = format!(
                        "imported {} from {shown} ({} rows)",
                        side.name(),
                        facts.rows
                    );
                    done = Some((facts, warnings, unlinked));
                    Ok(what)
                })
        })?;
        let (facts, warnings, unlinked) = done.expect("a change that was made");
        Ok(DatasetImported {
            page_id,
            side,
            file,
            format: facts.format,
            revision,
            rows: facts.rows,
            skipped: facts.skipped,
            place: facts.place,
            warnings,
            linked: page.dataset(side).file.clone(),
            unlinked,
        })
    }

    /// A dataset's fields with inferred types, coverage and defaults.
    pub fn dataset_schema(&self, page_id: &str, side: Side) -> Result<DatasetView> {
        let (page, revision) = self.page(page_id)?;
        let d = page.dataset(side);
        Ok(DatasetView {
            page_id: page.id.clone(),
            revision,
            side,
            name: d.name.clone(),
            key: d.key.clone(),
            label: d.label.clone(),
            key_case: d.key_case,
            file: d.file.clone(),
            schema: DatasetSchema::of(d),
        })
    }

    /// Sets one field of one row (`value` as JSON) as a new revision: the page is
    /// validated with the change first and an invalid result changes nothing.
    pub fn set_cell(
        &mut self,
        page_id: &str,
        side: Side,
        row: usize,
        field: &str,
        value: serde_json::Value,
    ) -> Result<i64> {
        let field = field.trim();
        if field.is_empty() {
            return Err(AppError::Usage("no field named (type field=value)".into()));
        }
        let (mut page, _) = self.page(page_id)?;
        let d = dataset_mut(&mut page, side);
        let n = d.rows.len();
        if row >= n {
            return Err(AppError::Usage(format!(
                "the {} dataset of `{page_id}` has {n} rows, not row {}",
                side.name(),
                row + 1
            )));
        }
        let label = d.row_label(&d.rows[row]);
        let old_keys: Vec<(String, String)> = d
            .rows
            .iter()
            .map(|r| {
                let k = d.row_key(r);
                let h = rulebench_core::model::key_hash(&k);
                (k, h)
            })
            .collect();
        d.rows[row].insert(field.to_owned(), value);
        let before = page.overrides.clone();
        // The row as it is stored now (its keyHash), for the write to check.
        let old_hash = old_keys[row].1.clone();
        let overrides_changed = dataset::rekey_overrides(&mut page, side, || old_keys);
        let diags = rulebench_core::check::page(&page);
        if diags.iter().any(Diagnostic::is_error) {
            return Err(AppError::Invalid {
                origin: format!(
                    "setting `{field}` of {} row `{label}` refused: page `{page_id}` would be invalid",
                    side.name()
                ),
                diagnostics: diags,
            });
        }
        let what = format!("set {field} of {} row {label}", side.name());
        // Only this row is written (with its key, which may have changed): a change
        // another writer made to another row meanwhile stays.
        let d = page.dataset(side);
        let value = &d.rows[row][field];
        let key_of = |r: &rulebench_core::model::Row| d.row_key(r);
        Ok(self.store.change(page_id, &what, |tx, _| {
            store::ops::set_row_field(
                tx,
                page_id,
                side,
                (row, &old_hash),
                field,
                value,
                Some(&key_of),
            )?;
            if overrides_changed {
                store::ops::rekey_overrides(tx, page_id, &before, &page.overrides)?;
            }
            Ok(())
        })?)
    }

    /// Sets one field (not a key field) of a stored row, as one revision (a cell edit
    /// the workbench made: it holds the page and checked the value). The row is read
    /// inside the change, so a field set elsewhere meanwhile stays; returns the row as
    /// stored now and the revision.
    #[allow(clippy::too_many_arguments)]
    pub fn store_cell(
        &mut self,
        page_id: &str,
        side: Side,
        (row, key_hash): (usize, &str),
        field: &str,
        value: &serde_json::Value,
        what: &str,
    ) -> Result<(rulebench_core::model::Row, i64)> {
        let mut stored = None;
        let revision = self.store.change(page_id, what, |tx, _| {
            stored = Some(store::ops::set_row_field(
                tx,
                page_id,
                side,
                (row, key_hash),
                field,
                value,
                None,
            )?);
            Ok(())
        })?;
        Ok((stored.expect("set by the change"), revision))
    }

    /// The linked files of a page, by side.
    pub fn linked_files(&self, page_id: &str) -> Result<Vec<(Side, PathBuf)>> {
        let (page, _) = self.page(page_id)?;
        Ok([Side::Source, Side::Target]
            .into_iter()
            .filter_map(|s| page.dataset(s).file.as_ref().map(|f| (s, PathBuf::from(f))))
            .collect())
    }

    /// Re-reads a dataset's linked file. Rows that differ from the stored ones are
    /// validated and stored as a new revision; an invalid file changes nothing.
    pub fn reload_linked(&mut self, page_id: &str, side: Side) -> Result<Reloaded> {
        self.reload_linked_with(page_id, side, &mut |_| {})
    }

    /// [`App::reload_linked`] reporting its progress (for the workbench's gauge).
    pub fn reload_linked_with(
        &mut self,
        page_id: &str,
        side: Side,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Reloaded> {
        let (mut page, _) = self.page(page_id)?;
        let d = dataset_mut(&mut page, side);
        let Some(file) = d.file.clone() else {
            return Err(AppError::Usage(format!(
                "the {} dataset of `{page_id}` links no file",
                side.name()
            )));
        };
        self.refuse_database_file(Path::new(&file))?;
        // A linked file is reloaded unattended: only a regular file (a FIFO put in its
        // place blocked the watcher, and the workbench's quit with it, for good).
        let parsed = read_rows(
            DataInput::Linked(Path::new(&file)),
            &Reading::of(d, &d.read, false),
            progress,
        )?;
        if parsed.rows == d.rows {
            return Ok(Reloaded::Unchanged {
                rows: parsed.rows.len(),
            });
        }
        let old = Dataset {
            key: d.key.clone(),
            rows: std::mem::replace(&mut d.rows, parsed.rows),
            ..Dataset::default()
        };
        let old_keys = || {
            old.rows
                .iter()
                .map(|r| {
                    let k = old.row_key(r);
                    (rulebench_core::model::key_hash(&k), k)
                })
                .map(|(h, k)| (k, h))
                .collect()
        };
        progress(Progress::Validating);
        let before = page.overrides.clone();
        let (_, overrides_changed) = revalidate(&mut page, side, old_keys, &file)?;
        let n = page.dataset(side).rows.len();
        let what = format!("reloaded {} from {file} ({n} rows)", side.name());
        let total = n as u64;
        let revision = self.store.change(page_id, &what, |tx, _| {
            let stored = store::ops::dataset_meta(tx, page_id, side)?;
            store::ops::replace_dataset_with_progress(
                tx,
                page_id,
                side,
                page.dataset(side),
                &mut |done| {
                    progress(Progress::Writing {
                        done: done as u64,
                        total,
                    })
                },
            )?;
            keep_settings(tx, page_id, side, stored, page.dataset(side), Touches::Rows)?;
            if overrides_changed {
                store::ops::rekey_overrides(tx, page_id, &before, &page.overrides)?;
            }
            Ok(())
        })?;
        Ok(Reloaded::Changed { revision, rows: n })
    }

    /// Imports a page file whose relative links point from `base`. With `read`, a
    /// linked file that exists replaces the page's embedded rows (the linked file wins);
    /// one that does not is a warning and the embedded rows stay.
    pub(crate) fn import_linked(
        &mut self,
        text: &str,
        origin: &str,
        replace: bool,
        base: &Path,
        read: bool,
    ) -> Result<Imported> {
        let (mut page, mut warnings) = Self::parse_page(text, origin)?;
        if !replace && self.store.revision(&page.id)?.is_some() {
            return Err(AppError::PageExists(page.id));
        }
        // Linked expectation tables are stored absolute, like linked data files (each
        // once: two spellings of one file are one link).
        for t in &mut page.expectations {
            t.file = link_path(&base.join(&t.file));
        }
        let mut seen = std::collections::HashSet::new();
        page.expectations.retain(|t| seen.insert(t.file.clone()));
        let mut read_any = false;
        for side in [Side::Source, Side::Target] {
            let d = dataset_mut(&mut page, side);
            let Some(file) = d.file.clone() else { continue };
            let path = absolute(&base.join(&file));
            d.file = Some(path.display().to_string());
            if !read {
                continue;
            }
            if path.is_file() {
                let parsed = read_rows(
                    DataInput::File(&path),
                    &Reading::of(d, &d.read, false),
                    &mut |_| {},
                )?;
                d.rows = parsed.rows;
                read_any = true;
            } else {
                warnings.push(Diagnostic::warning(
                    Code::LinkedFile,
                    format!("/{}/file", side.name()),
                    format!(
                        "linked file {} not found; the page's {} embedded {} rows are used",
                        path.display(),
                        d.rows.len(),
                        side.name()
                    ),
                ));
            }
        }
        if read_any {
            dataset::canonicalize_overrides(&mut page);
            let diags: Vec<Diagnostic> = rulebench_core::check::page(&page)
                .into_iter()
                .map(|d| d.locate_in(text))
                .collect();
            if diags.iter().any(Diagnostic::is_error) {
                return Err(AppError::Invalid {
                    origin: format!("{origin} (with the rows of its linked files)"),
                    diagnostics: diags,
                });
            }
            let linked: Vec<Diagnostic> = warnings
                .into_iter()
                .filter(|w| w.code == Code::LinkedFile)
                .collect();
            warnings = diags;
            warnings.extend(linked);
        }
        let revision = self.store.insert_page(&page, replace)?;
        Ok(Imported {
            page_id: page.id,
            revision,
            warnings,
        })
    }
}

impl App {
    /// Imports a page file: all or nothing. A dataset's linked `file` is resolved
    /// against the directory of `origin` (when it names a file, else the current
    /// directory) and, when it exists, its rows replace the embedded ones.
    pub fn import(&mut self, text: &str, origin: &str, replace: bool) -> Result<Imported> {
        self.import_linked(text, origin, replace, &link_base(origin), true)
    }
}

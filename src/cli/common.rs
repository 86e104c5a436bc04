//! Argument pieces several commands share: page-id completion, the dialect parser, the
//! listing formats.

use std::path::PathBuf;

use clap::ValueEnum;

use crate::app::text::sanitize_lines;
use crate::app::types::{ColumnType, DataFormat, ReadOptions};
use crate::app::{App, default_db_path};

/// `--format` of the listing commands (`pages`, `dataset schema`, `page log`,
/// `assertion list`).
pub use crate::print::listing::ListFormat;

/// `rulebench db --format`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoFormat {
    #[value(alias = "table")]
    Text,
    Json,
}

/// Completes page ids from the database (`$RULEBENCH_DB`, else the default one),
/// opened read-only; nothing when there is none.
/// The `--db` of the command line being completed (the shell passes its words after
/// `--`), when it names one: completion then reads that database.
pub fn db_in_words(words: impl IntoIterator<Item = String>) -> Option<PathBuf> {
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        if w == "--db" {
            return words.next().filter(|v| !v.is_empty()).map(PathBuf::from);
        }
        if let Some(v) = w.strip_prefix("--db=") {
            return (!v.is_empty()).then(|| PathBuf::from(v));
        }
    }
    None
}

pub fn page_ids() -> clap_complete::engine::ArgValueCompleter {
    clap_complete::engine::ArgValueCompleter::new(|current: &std::ffi::OsStr| {
        let path = db_in_words(std::env::args().skip_while(|a| a != "--").skip(1))
            .or_else(|| {
                std::env::var_os("RULEBENCH_DB")
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(default_db_path);
        let prefix = current.to_string_lossy();
        App::open_read_only(&path)
            .and_then(|app| app.pages())
            .map(|pages| {
                pages
                    .into_iter()
                    .filter(|p| p.id.starts_with(prefix.as_ref()))
                    .filter_map(|p| {
                        Some(
                            clap_complete::engine::CompletionCandidate::new(
                                crate::app::completion_word(&p.id)?,
                            )
                            .help(Some(sanitize_lines(&p.name).into())),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// `--dialect` / `--sql`: a dialect by name, its possible values listed from the one
/// enum (`core::sql::Dialect`).
pub fn dialect_arg() -> impl clap::builder::TypedValueParser<Value = crate::app::types::Dialect> {
    use crate::app::types::Dialect;
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Dialect::ALL.iter().map(|d| d.name()))
        .map(|name: String| Dialect::parse(&name).expect("a possible value"))
}

/// How a data file is read: the flags of `dataset import` and `page init`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReadArgs {
    /// The data file's format: csv, tsv, json, jsonl, parquet, arrow, excel [default: told
    /// by the extension, else by the content]
    #[arg(long, value_name = "FORMAT", value_parser = parse_data_format)]
    pub input_format: Option<DataFormat>,
    /// A JSON object whose members are rows: the field that takes each member's name
    /// [default: the dataset's key, when it is one field]
    #[arg(long, value_name = "FIELD")]
    pub name_field: Option<String>,
    /// An Excel workbook's sheet, by name or 1-based index [default: the first]
    #[arg(long, value_name = "NAME|N")]
    pub sheet: Option<String>,
    /// A column's type, one of string, number, integer, boolean, json (repeat for more
    /// columns) [default: inferred from the cells]
    #[arg(long = "type", value_name = "FIELD=TYPE", value_parser = parse_column_type)]
    pub types: Vec<(String, ColumnType)>,
}

impl ReadArgs {
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            format: self.input_format,
            name_field: self.name_field.clone(),
            sheet: self.sheet.clone(),
            types: self.types.iter().cloned().collect(),
        }
    }
}

fn parse_data_format(s: &str) -> Result<DataFormat, String> {
    s.parse::<DataFormat>()
        .map_err(|_| "one of csv, tsv, json, jsonl, parquet, arrow, excel".to_owned())
}

fn parse_column_type(s: &str) -> Result<(String, ColumnType), String> {
    let (field, ty) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("`{s}`: FIELD=TYPE (say `price=number`)"))?;
    let field = field.trim();
    if field.is_empty() {
        return Err(format!("`{s}` names no field"));
    }
    let ty = ty.trim().parse::<ColumnType>().map_err(|_| {
        format!("`{ty}` is not a type: one of string, number, integer, boolean, json")
    })?;
    Ok((field.to_owned(), ty))
}

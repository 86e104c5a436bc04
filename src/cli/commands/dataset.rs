//! `rulebench dataset import|schema` and `rulebench watch`.

use std::path::{Path, PathBuf};

use clap::{Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use crate::app::AppError;
use crate::app::dataset::{ImportOptions, Progress};
use crate::app::text::sanitize;
use crate::app::text::sanitize_lines;
use crate::app::types::DataError;
use crate::app::types::Side;
use crate::cli::io::{Exit, Failure, usage};
use crate::print::render_table;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideArg {
    Source,
    Target,
}

impl From<SideArg> for Side {
    fn from(s: SideArg) -> Side {
        match s {
            SideArg::Source => Side::Source,
            SideArg::Target => Side::Target,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum DatasetAction {
    /// Import a data file as one side's rows: CSV, TSV, JSON (an array of rows, or an
    /// object whose members are rows), JSON Lines, Parquet, Arrow IPC or Excel; all rows
    /// or none, one new revision
    #[command(
        after_help = "Examples:\n  rulebench dataset import llm target models.json --name-field model\n  rulebench dataset import llm source clients.xlsx --sheet Clients --type minContext=integer\n  rulebench dataset import llm target models.csv --link --skip-bad\n  curl -s https://example.com/models.parquet | rulebench dataset import llm target -"
    )]
    Import {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = crate::cli::common::page_ids())]
        page: String,
        /// Which side's rows
        #[arg(value_enum)]
        side: SideArg,
        /// .csv, .tsv, .json, .jsonl / .ndjson, .parquet, .arrow / .feather, .xlsx / .xls /
        /// .ods (else --input-format, else the format is told by the content); - reads
        /// stdin
        #[arg(value_name = "FILE|-")]
        file: PathBuf,
        /// Key fields, comma-separated [default: the dataset's key]
        #[arg(long, value_name = "F1,F2", value_delimiter = ',')]
        key: Option<Vec<String>>,
        /// The label field [default: the dataset's label]
        #[arg(long, value_name = "FIELD")]
        label: Option<String>,
        /// Link the dataset to the file: `rulebench watch` reloads it when it changes
        #[arg(long)]
        link: bool,
        /// Import the good rows and report the bad ones (else a bad row refuses the file)
        #[arg(long)]
        skip_bad: bool,
        #[command(flatten)]
        read: crate::cli::common::ReadArgs,
    },
    /// Set a dataset's name, label, priority or summary fields (one revision)
    #[command(after_help = "\
Examples:
  rulebench dataset set llm target --label model --summary litellm_provider,mode
  rulebench dataset set llm target --priority max_input_tokens   # ties: the larger wins
  rulebench dataset set llm target --priority '0 - target.input_cost_per_token'   # the cheapest
  rulebench dataset set llm source --label ''                    # rows named by their key")]
    Set {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = crate::cli::common::page_ids())]
        page: String,
        /// Which side's dataset
        #[arg(value_enum)]
        side: SideArg,
        /// The dataset's display name
        #[arg(long)]
        name: Option<String>,
        /// The field that names a row on screen ('' clears it: rows are named by key)
        #[arg(long, value_name = "FIELD")]
        label: Option<String>,
        /// What breaks recommendation ties after verdict and score (higher wins): a
        /// numeric field, or an infix expression over the target row ('0 -
        /// target.input_cost_per_token': the cheapest wins); '' clears it
        #[arg(long, value_name = "FIELD|EXPR")]
        priority: Option<String>,
        /// Fields shown with each target, comma-separated ('' clears them)
        #[arg(long, value_name = "F1,F2", value_delimiter = ',')]
        summary: Option<Vec<String>>,
    },
    /// A dataset's fields: inferred type, how many rows have each, defaults
    #[command(
        after_help = "Examples:\n  rulebench dataset schema llm target\n  rulebench dataset schema llm source --format json"
    )]
    Schema {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = crate::cli::common::page_ids())]
        page: String,
        /// Which side's rows
        #[arg(value_enum)]
        side: SideArg,
        /// How to print the result
        #[arg(long, value_enum, default_value = "table")]
        format: crate::cli::common::ListFormat,
        /// The same as --format json
        #[arg(long, hide = true)]
        json: bool,
        /// Write to FILE (whole or not at all) instead of stdout; - is stdout
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

pub fn run(db: &crate::cli::io::Db, action: DatasetAction) -> Result<Exit, Failure> {
    match action {
        DatasetAction::Import {
            page,
            side,
            file,
            key,
            label,
            link,
            skip_bad,
            read,
        } => import(
            db,
            &page,
            side.into(),
            &file,
            &ImportOptions {
                key,
                label,
                link,
                skip_bad,
                read: read.options(),
            },
        ),
        DatasetAction::Set {
            page,
            side,
            name,
            label,
            priority,
            summary,
        } => {
            let settings = crate::app::authoring::DatasetSettings {
                name,
                label,
                priority,
                summary: summary.map(|s| s.into_iter().filter(|f| !f.is_empty()).collect()),
            };
            let side: Side = side.into();
            let revision = db.open()?.set_dataset(&page, side, &settings)?;
            db.status(&format!(
                "set the {} dataset of {page} (revision {revision})",
                side.name()
            ));
            Ok(Exit::Ok)
        }
        DatasetAction::Schema {
            page,
            side,
            format,
            json,
            output,
        } => schema(
            db,
            &page,
            side.into(),
            if json {
                crate::cli::common::ListFormat::Json
            } else {
                format
            },
            output.as_deref(),
        ),
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
struct Bar {
    bar: ProgressBar,
    phase: u8,
}

impl Bar {
    fn new() -> Bar {
        Bar {
            bar: ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            phase: 0,
        }
    }

    fn style(&mut self, phase: u8, template: &str, message: &'static str) {
        if self.phase != phase {
            self.phase = phase;
            let style = ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("█▉▊▋▌▍▎▏ ");
            self.bar.set_style(style);
            self.bar.set_message(message);
            self.bar.reset();
        }
    }

    fn update(&mut self, p: Progress) {
        match p {
            Progress::Parsing { done, total } => {
                self.bar.set_length(total);
                self.style(1, "{msg:>10} [{bar:30}] {bytes}/{total_bytes}", "parsing");
                self.bar.set_position(done);
            }
            Progress::Validating => {
                self.style(2, "{msg:>10} {spinner}", "validating");
                self.bar.tick();
            }
            Progress::Writing { done, total } => {
                self.bar.set_length(total);
                self.style(3, "{msg:>10} [{bar:30}] {pos}/{len} rows", "writing");
                self.bar.set_position(done);
            }
        }
    }
}

fn import(
    db: &crate::cli::io::Db,
    page: &str,
    side: Side,
    file: &Path,
    opts: &ImportOptions,
) -> Result<Exit, Failure> {
    let mut app = db.open()?;
    let mut bar = Bar::new();
    let mut stdin = Vec::new();
    let input = crate::cli::io::data_input(file, &mut stdin)?;
    let outcome = app.import_dataset_from(page, side, input, opts, &mut |p| bar.update(p));
    bar.bar.finish_and_clear();
    let done = outcome.map_err(|e| {
        let hint = match &e {
            AppError::Data(DataError::BadRows { good, .. }) if !opts.skip_bad => format!(
                "\nnothing imported (hint: --skip-bad imports the {good} good rows and reports the others)"
            ),
            _ => "\nnothing imported".to_owned(),
        };
        usage(sanitize_lines(&format!("{e}{hint}")))
    })?;
    let shown = if file == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        sanitize(&file.display().to_string())
    };
    for b in &done.skipped {
        eprintln!(
            "skipped {}: {}",
            done.place.at(&shown, b.line),
            sanitize(&b.message)
        );
    }
    for w in &done.warnings {
        eprintln!("{page}: {}", sanitize_lines(&w.to_string()));
    }
    let mut text = format!(
        "imported {} {} rows into {page} from {shown} ({}, revision {})\n",
        done.rows,
        side.name(),
        done.format,
        done.revision
    );
    if !done.skipped.is_empty() {
        text.push_str(&format!(
            "skipped {} bad rows (listed on stderr)\n",
            done.skipped.len()
        ));
    }
    if opts.link
        && let Some(f) = &done.linked
    {
        text.push_str(&format!(
            "linked {} to {} (`rulebench watch {page}` reloads it on change)\n",
            side.name(),
            sanitize(f)
        ));
    }
    if let Some(f) = &done.unlinked {
        text.push_str(&format!(
            "unlinked {} from {} (its rows now come from {shown}; --link links the new file)\n",
            side.name(),
            sanitize(f)
        ));
    }
    db.status(&text);
    Ok(Exit::Ok)
}

fn schema(
    db: &crate::cli::io::Db,
    page: &str,
    side: Side,
    format: crate::cli::common::ListFormat,
    output: Option<&Path>,
) -> Result<Exit, Failure> {
    let app = db.read()?;
    let view = app.dataset_schema(page, side)?;
    let s = &view.schema;
    let table = || schema_table(page, side, &view);
    {
        let fields: Vec<Value> = s
            .fields
            .iter()
            .map(|(name, f)| {
                let mut v = json!({
                    "name": name,
                    "type": f.type_name(),
                    "coverage": s.coverage.get(name).copied().unwrap_or(0),
                    "present": f.present,
                    "nulls": f.nulls,
                    "types": f.types,
                });
                if let Some(d) = &f.default {
                    v["default"] = d.clone();
                }
                v
            })
            .collect();
        let out = json!({
            "pageId": view.page_id,
            "revision": view.revision,
            "side": side.name(),
            "name": view.name,
            "key": view.key,
            "label": view.label,
            "keyCase": view.key_case,
            "file": view.file,
            "rows": s.rows,
            "fields": fields,
        });
        crate::cli::io::emit_listing(
            &app,
            output,
            format,
            table,
            &out,
            (
                &[
                    "name", "type", "coverage", "present", "nulls", "types", "default",
                ],
                &fields,
            ),
        )?;
        Ok(Exit::Ok)
    }
}

/// `dataset schema` for people: the dataset's head, a table of its fields, a legend.
fn schema_table(page: &str, side: Side, view: &crate::app::dataset::DatasetView) -> String {
    let s = &view.schema;
    let mut text = format!(
        "{page} {}: {} — {} rows, key {}{}{}\n",
        side.name(),
        sanitize(&view.name),
        s.rows,
        sanitize(&view.key.join(", ")),
        if view.key_case.is_sensitive() {
            ""
        } else {
            " (case-insensitive)"
        },
        view.file
            .as_ref()
            .map(|f| format!(", linked to {}", sanitize(f)))
            .unwrap_or_default()
    );
    let header: Vec<String> = ["FIELD", "TYPE", "ROWS", "NULL", "DEFAULT", "ROLE"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = s
        .fields
        .iter()
        .map(|(name, f)| {
            let mut notes = Vec::new();
            if view.key.contains(name) {
                notes.push("key");
            }
            if view.label.as_ref() == Some(name) {
                notes.push("label");
            }
            vec![
                sanitize(name),
                f.type_name(),
                format!("{}/{}", f.present, s.rows),
                if f.nulls > 0 {
                    f.nulls.to_string()
                } else {
                    String::new()
                },
                f.default
                    .as_ref()
                    .map(|d| sanitize(&d.to_string()))
                    .unwrap_or_default(),
                notes.join(", "),
            ]
        })
        .collect();
    text.push('\n');
    text.push_str(&render_table(&header, &rows));
    text.push_str(
        "\nROWS: rows that have the field (null included); a field with a default counts as present in every row for rules.\n",
    );
    text
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: DatasetAction,
}

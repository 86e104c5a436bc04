//! `rulebench matrix`: the rule × target grid of one selection, as the workbench shows
//! it; with `--long`, its tidy rows (one per target, a column per rule).

use std::sync::Arc;

use clap::ValueEnum;

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, Output, usage};
use crate::print;
use crate::print::matrix::MatrixFormat;
use crate::print::result::{Format, PrinterBuilder};

/// `matrix --format`: the grid's formats, and the long ones.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixArg {
    /// Aligned columns: ✓ pass, ✗ fail, ! error
    #[value(alias = "text")]
    Table,
    /// One record per rule (its name, category and whether it is required), a column per target (pass, fail, error), then verdict
    /// and score records; with --long, a typed record per target
    Csv,
    /// As csv, tab-separated
    Tsv,
    /// A Markdown table (✓ ✗ !), ready for a pull request or a wiki
    #[value(alias = "markdown")]
    Md,
    /// The grid as JSON: targets, rules with their outcomes, verdicts, scores
    Json,
    /// A line per target (long: implies --long)
    Jsonl,
    /// Apache Parquet, a row per target (long: implies --long; to -o FILE)
    Parquet,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  rulebench matrix llm --select agent
  rulebench matrix llm --select agent --format md > agent.md
  rulebench matrix llm --select agent --long --format csv     # a row per target
  rulebench matrix llm --select agent --format parquet -o agent.parquet")]
pub struct Args {
    /// The page's id (`rulebench pages` lists them)
    #[arg(add = page_ids())]
    pub page: String,
    /// The source row: its key (`clientType=web|id=t3-chat`), keyHash, id or label
    #[arg(long, value_name = "KEY")]
    pub select: String,
    /// How to print the result
    #[arg(long, value_enum, default_value = "table")]
    pub format: MatrixArg,
    /// Tidy rows, one per target with a boolean column per rule (as `evaluate --format
    /// csv`), rather than the grid
    #[arg(long)]
    pub long: bool,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Write CSV/TSV text cells as they are (see `evaluate --no-formula-guard`)
    #[arg(long)]
    pub no_formula_guard: bool,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        select,
        format,
        long,
        output,
        no_formula_guard,
    } = args;
    let long = long || matches!(format, MatrixArg::Jsonl | MatrixArg::Parquet);
    let mut app = db.read()?;
    let result = app.evaluate(&page, &select)?;
    let mut out = Output::open(output.as_deref(), &app)?;
    let written = if long {
        let format = match format {
            MatrixArg::Csv => Format::Csv,
            MatrixArg::Tsv => Format::Tsv,
            MatrixArg::Jsonl => Format::Jsonl,
            MatrixArg::Json => {
                return Err(usage(
                    "--long writes rows: --format jsonl for JSON (a line per target); json is the grid",
                ));
            }
            MatrixArg::Parquet => Format::Parquet,
            MatrixArg::Table | MatrixArg::Md => {
                return Err(usage(
                    "--long writes rows: --format csv, tsv, jsonl or parquet",
                ));
            }
        };
        if format == Format::Parquet
            && out.is_stdout()
            && std::io::IsTerminal::is_terminal(&std::io::stdout())
        {
            return Err(usage(
                "Parquet is binary: write it to a file (-o grid.parquet) or a pipe",
            ));
        }
        let labels = Arc::new(app.source_labels(&page)?);
        let mut printer = PrinterBuilder::new(format)
            .all(true)
            .formula_guard(!no_formula_guard)
            .rows(None, None, labels)
            .build(&mut out);
        let w = printer
            .begin(&result.names, result.page_id(), "selection")
            .and_then(|()| printer.selection(&result))
            .and_then(|()| printer.finish());
        drop(printer);
        w
    } else {
        let grid = match format {
            MatrixArg::Table => MatrixFormat::Table,
            MatrixArg::Csv => MatrixFormat::Csv,
            MatrixArg::Tsv => MatrixFormat::Tsv,
            MatrixArg::Md => MatrixFormat::Md,
            MatrixArg::Json => MatrixFormat::Json,
            MatrixArg::Jsonl | MatrixArg::Parquet => unreachable!("long formats"),
        };
        let rules = app.page(&page)?.0.rules;
        print::matrix::write(&mut out, &result, &rules, grid, !no_formula_guard)
    };
    match written.and_then(|()| out.commit()) {
        Ok(()) => Ok(Exit::Ok),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Exit::Ok),
        Err(e) => Err(usage(format!("output: {e}"))),
    }
}

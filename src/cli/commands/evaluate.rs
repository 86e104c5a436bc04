//! `rulebench evaluate`: evaluate one selection or every source row

use std::io::Write;

use crate::app::App;
use crate::app::types::SelectionResult;
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, usage};
use crate::print::result::{Format, PrinterBuilder, ResultSink};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The page's id (`rulebench pages` lists them)
    #[arg(add = page_ids())]
    pub page: String,
    /// The source row: its key (`clientType=web|id=t3-chat`), keyHash or id
    #[arg(
        long,
        value_name = "KEY",
        conflicts_with = "all",
        required_unless_present = "all"
    )]
    pub select: Option<String>,
    /// Every source row
    #[arg(long)]
    pub all: bool,
    /// How to print the result [default: json]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write CSV/TSV text cells as they are, even those a spreadsheet would run as a
    /// formula (starting with = + - @); by default they get a leading '
    #[arg(long)]
    pub no_formula_guard: bool,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        select,
        all,
        format,
        no_formula_guard,
    } = args;
    let mut app = db.open()?;
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out.lock());
    let mut printer = PrinterBuilder::new(format.unwrap_or(Format::Json))
        .all(all)
        .formula_guard(!no_formula_guard)
        .build(&mut w);
    let written = if all {
        evaluate_all(&app, &page, printer.as_mut())?
    } else {
        let select = select.expect("clap requires --select without --all");
        let result = app.evaluate(&page, &select)?;
        evaluate_one(&result, printer.as_mut())
    };
    drop(printer);
    match written.and_then(|()| w.flush()) {
        Ok(()) => {}
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(usage(format!("stdout: {e}"))),
    }
    Ok(Exit::Ok)
}

/// Prints one selection's result. Its Markdown table is headed by the page's id and a
/// `selection` column.
fn evaluate_one(r: &SelectionResult, printer: &mut dyn ResultSink) -> std::io::Result<()> {
    printer.begin(&r.names, r.page_id(), "selection")?;
    printer.selection(r)?;
    printer.finish()
}

/// Prints every selection of a page, one at a time: memory stays bounded by one
/// selection. A progress bar goes to stderr when it is a terminal.
fn evaluate_all(
    app: &App,
    page: &str,
    printer: &mut dyn ResultSink,
) -> Result<std::io::Result<()>, Failure> {
    let evaluations = app.evaluate_all(page)?;
    let progress = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(evaluations.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let write = || -> std::io::Result<()> {
        let p = evaluations.page();
        printer.begin(evaluations.names(), &p.name, &p.source.name)?;
        for r in evaluations {
            printer.selection(&r)?;
            progress.inc(1);
        }
        printer.finish()
    };
    let out = write();
    progress.finish_and_clear();
    Ok(out)
}

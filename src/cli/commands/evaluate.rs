//! `rulebench evaluate`: evaluate one selection or every source row

use std::io::Write;

use crate::app::App;
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, usage};
use crate::print;

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
    let format = format.unwrap_or(Format::Json);
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out.lock());
    let written = if all {
        evaluate_all(&app, &page, format, !no_formula_guard, &mut w)?
    } else {
        let select = select.expect("clap requires --select without --all");
        let result = app.evaluate(&page, &select)?;
        evaluate_one(&result, format, !no_formula_guard, &mut w)
    };
    match written.and_then(|()| w.flush()) {
        Ok(()) => {}
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(usage(format!("stdout: {e}"))),
    }
    Ok(Exit::Ok)
}

/// Writes one selection's result in a format.
fn evaluate_one<W: Write>(
    r: &crate::app::types::SelectionResult,
    format: Format,
    guard: bool,
    w: &mut W,
) -> std::io::Result<()> {
    match format {
        Format::Json => {
            print::result::json(w, r, &print::result::Fragments::new(&r.names, Some(0)))?;
            w.write_all(b"\n")
        }
        Format::Jsonl => print::result::target_lines(w, r),
        Format::Summary => print::result::summary(w, r, false),
        Format::Table => print::result::table(w, r),
        Format::Csv | Format::Tsv => {
            let mut csv = print::result::csv_writer(w, format == Format::Tsv);
            csv.write_record(print::result::CSV_HEADER)?;
            print::result::csv_rows(&mut csv, r, guard)?;
            csv.flush()
        }
        Format::Md => {
            print::result::markdown_head(w, r.page_id(), "selection", &r.names)?;
            print::result::markdown_row(w, r)?;
            print::result::markdown_foot(w)
        }
    }
}

/// Writes every selection of a page, one at a time: memory stays bounded by one
/// selection. A progress bar goes to stderr when it is a terminal.
fn evaluate_all<W: Write>(
    app: &App,
    page: &str,
    format: Format,
    guard: bool,
    w: &mut W,
) -> Result<std::io::Result<()>, Failure> {
    let evaluations = app.evaluate_all(page)?;
    let progress = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(evaluations.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let (page_name, source_name) = (
        evaluations.page().name.clone(),
        evaluations.page().source.name.clone(),
    );
    let names = evaluations.names().clone();
    let write = |w: &mut W| -> std::io::Result<()> {
        match format {
            Format::Json => {
                let f = print::result::Fragments::new(&names, Some(2));
                w.write_all(b"[")?;
                let mut any = false;
                for (i, r) in evaluations.enumerate() {
                    w.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
                    print::result::json(w, &r, &f)?;
                    progress.inc(1);
                    any = true;
                }
                w.write_all(if any { b"\n]\n" } else { b"]\n" })
            }
            Format::Jsonl => {
                let f = print::result::Fragments::new(&names, None);
                for r in evaluations {
                    print::result::json_line(w, &r, &f)?;
                    progress.inc(1);
                }
                Ok(())
            }
            Format::Summary => {
                for r in evaluations {
                    print::result::summary(w, &r, true)?;
                    progress.inc(1);
                }
                Ok(())
            }
            Format::Table => {
                for (i, r) in evaluations.enumerate() {
                    if i > 0 {
                        w.write_all(b"\n")?;
                    }
                    print::result::table(w, &r)?;
                    progress.inc(1);
                }
                Ok(())
            }
            Format::Csv | Format::Tsv => {
                let mut csv = print::result::csv_writer(w, format == Format::Tsv);
                csv.write_record(print::result::CSV_HEADER)?;
                for r in evaluations {
                    print::result::csv_rows(&mut csv, &r, guard)?;
                    progress.inc(1);
                }
                csv.flush()
            }
            Format::Md => {
                print::result::markdown_head(w, &page_name, &source_name, &names)?;
                for r in evaluations {
                    print::result::markdown_row(w, &r)?;
                    progress.inc(1);
                }
                print::result::markdown_foot(w)
            }
        }
    };
    let out = write(w);
    progress.finish_and_clear();
    Ok(out)
}

/// Output formats of `evaluate`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The result JSON (with `--all`: an array of results)
    Json,
    /// A table per selection: each target's verdict, score, reason and failing rules
    Table,
    /// One record per selection × target (text cells guarded against spreadsheet
    /// formulas: see --no-formula-guard)
    Csv,
    /// As csv, tab-separated
    Tsv,
    /// A Markdown table of verdict glyphs and scores, one row per selection
    #[value(alias = "markdown")]
    Md,
    /// JSON Lines: one object per target (with `--all`: one result per selection)
    Jsonl,
    /// Compact JSON: per target its id, verdict, score, reason and failing rule ids
    /// (with `--all`: one line per selection)
    Summary,
}

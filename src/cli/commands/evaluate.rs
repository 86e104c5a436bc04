//! `rulebench evaluate`: evaluate one selection or every source row

use std::sync::Arc;

use crate::app::expr::Filter;
use crate::app::types::SelectionResult;
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, Output, usage};
use crate::print::result::{Format, PrinterBuilder, ResultSink};

#[derive(clap::Args, Debug)]
#[command(after_help = "\
csv, tsv, parquet and (with --all) jsonl write tidy rows: one per selection × target,
with the selection's key, label and verdict, the target's id, label, verdict, score,
reason, whether it is recommended, its summary fields (target.<field>) and one boolean
column per rule (rule.<id>). --where and --limit filter them.

Examples:
  rulebench evaluate llm --select agent --format table
  rulebench evaluate llm --all --format parquet -o verdicts.parquet
  rulebench evaluate llm --all --format csv --where 'verdict < 2 and rule.tools == false'
  rulebench evaluate llm --all --format jsonl --where 'recommended' --limit 20
  rulebench evaluate llm --all --format counts --by provider
  python -c \"import pandas as pd; print(pd.read_parquet('verdicts.parquet').dtypes)\"")]
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
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Keep the rows (csv, tsv, parquet, jsonl with --all) for which an infix expression
    /// over their columns holds: verdict, score, reason, recommended, targetId,
    /// selectionKey, target.<field>, rule.<id> (true, false, or null when the engine
    /// raised an error: `rule.x != true` keeps every row the rule failed), …
    #[arg(long = "where", value_name = "EXPR")]
    pub filter: Option<String>,
    /// At most N rows (csv, tsv, parquet, jsonl with --all)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Write CSV/TSV text cells as they are, even those a spreadsheet would run as a
    /// formula (starting with = + - @); by default they get a leading '
    #[arg(long)]
    pub no_formula_guard: bool,
    /// With --format counts: count per value of this target summary field (the target
    /// dataset's label or one of its `summary` fields)
    #[arg(long, value_name = "FIELD")]
    pub by: Option<String>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        select,
        all,
        format,
        output,
        filter,
        limit,
        no_formula_guard,
        by,
    } = args;
    let format = format.unwrap_or(Format::Json);
    if by.is_some() && format != Format::Counts {
        return Err(usage(
            "--by groups verdict counts: use it with --format counts",
        ));
    }
    if (filter.is_some() || limit.is_some()) && !format.is_tidy(all) {
        return Err(usage(
            "--where and --limit filter rows: --format csv, tsv or parquet (or jsonl with --all)",
        ));
    }
    let filter = filter
        .map(|text| Filter::parse(&text).map_err(|e| usage(format!("--where: {e}"))))
        .transpose()?
        .map(Arc::new);
    let mut app = db.read()?;
    let mut out = Output::open(output.as_deref(), &app)?;
    if format == Format::Parquet
        && out.is_stdout()
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        return Err(usage(
            "Parquet is binary: write it to a file (-o verdicts.parquet) or a pipe",
        ));
    }
    // Every source: the labels come from the rows the evaluations read (one snapshot).
    let (evaluations, all_labels) = if all {
        let (e, labels) = app.evaluate_all_labelled(&page, format.is_tidy(all))?;
        (Some(e), labels)
    } else {
        (None, vec![])
    };
    let one = match (&evaluations, &select) {
        (None, Some(select)) => Some(app.evaluate(&page, select)?),
        _ => None,
    };
    if let Some(field) = &by {
        let names = match (&evaluations, &one) {
            (Some(e), _) => e.names().clone(),
            (None, Some(r)) => r.names.clone(),
            (None, None) => unreachable!("clap requires --select without --all"),
        };
        if !names.shown.contains(field) {
            return Err(usage(format!(
                "--by {}: not a summary field of the targets; they are: {} (the target \
                 dataset's label and `summary` fields)",
                crate::app::text::sanitize(field),
                if names.shown.is_empty() {
                    "none".to_owned()
                } else {
                    crate::app::text::sanitize(&names.shown.join(", "))
                }
            )));
        }
    }
    let labels = Arc::new(match (&evaluations, format.is_tidy(all)) {
        (_, false) => vec![],
        (Some(_), true) => all_labels,
        // One selection: its own label, at its index (one row read, not every row).
        (None, true) => {
            let r = one.as_ref().expect("clap requires --select without --all");
            let label = app.source_label(&page, &r.selection_key)?;
            let mut labels = vec![String::new(); r.eval.selection + 1];
            labels[r.eval.selection] = label.unwrap_or_else(|| r.selection_key.clone());
            labels
        }
    });
    let mut printer = PrinterBuilder::new(format)
        .all(all)
        .formula_guard(!no_formula_guard)
        .rows(filter, limit, labels)
        .by(by.clone())
        .build(&mut out);
    let written = if let Some(evaluations) = evaluations {
        evaluate_all(evaluations, printer.as_mut())
    } else {
        let result = one.expect("clap requires --select without --all");
        evaluate_one(&result, printer.as_mut())
    };
    drop(printer);
    match written.and_then(|()| out.commit()) {
        Ok(()) => {}
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            return Err(usage(format!(
                "{}: {e}",
                output
                    .as_deref()
                    .filter(|p| *p != std::path::Path::new("-"))
                    .map_or("stdout".to_owned(), |p| crate::app::text::sanitize(
                        &p.display().to_string()
                    ))
            )));
        }
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

/// Prints every selection of a page, one at a time, while the next ones are evaluated:
/// memory stays bounded by a few handed-over lots of selections (a lot of at most
/// [`HANDED`] selections or [`HANDED_TARGETS`] targets). A progress bar goes to stderr
/// when it is a terminal.
fn evaluate_all(
    mut evaluations: crate::app::Evaluations,
    printer: &mut dyn ResultSink,
) -> std::io::Result<()> {
    let progress = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(evaluations.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let write = || -> std::io::Result<()> {
        let p = evaluations.page();
        printer.begin(evaluations.names(), &p.name, &p.source.name)?;
        evaluations.verdicts_only(printer.verdicts_only());
        print_ahead(evaluations, printer, &progress)
    };
    let out = write();
    progress.finish_and_clear();
    out
}

/// Prints `evaluations` and finishes: they are evaluated on a thread of their own,
/// ahead of the printer (handed over in lots: a hand-over wakes a thread), since
/// evaluating and printing each take a core's worth on a large page. The printer
/// stopping (or failing) stops them at the next selection; their thread panicking
/// goes on here, before the output is finished (it never looks whole).
fn print_ahead(
    evaluations: impl Iterator<Item = SelectionResult> + Send,
    printer: &mut dyn ResultSink,
    progress: &indicatif::ProgressBar,
) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<SelectionResult>>(LOTS);
    let stop = AtomicBool::new(false);
    let stop = &stop;
    std::thread::scope(|scope| {
        // The sender moves to the thread: its end (or panic) ends the hand-overs.
        let evaluating = scope.spawn(move || {
            let mut evaluations = evaluations;
            loop {
                let (mut lot, mut targets) = (Vec::new(), 0);
                while lot.len() < HANDED
                    && targets < HANDED_TARGETS
                    && !stop.load(Ordering::Relaxed)
                {
                    let Some(r) = evaluations.next() else { break };
                    targets += r.target_count();
                    lot.push(r);
                }
                if lot.is_empty() || tx.send(lot).is_err() {
                    return;
                }
            }
        });
        let printed = (|| -> std::io::Result<bool> {
            for lot in &rx {
                for r in lot {
                    printer.selection(&r)?;
                    progress.inc(1);
                    if !printer.wants_more() {
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        })();
        stop.store(true, Ordering::Relaxed);
        drop(rx);
        // Every selection came: the evaluations ended, or their thread panicked.
        if printed? && let Err(panic) = evaluating.join() {
            std::panic::resume_unwind(panic);
        }
        printer.finish()
    })
}

/// Lots of evaluated selections waiting for the printer, at most (and one being
/// made): a lot holds at most `HANDED` selections or `HANDED_TARGETS` targets.
const LOTS: usize = 2;
const HANDED: usize = 16;
const HANDED_TARGETS: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::{ResultSink, SelectionResult, print_ahead};

    /// What a printer was handed, and whether it was finished.
    #[derive(Default)]
    struct Seen {
        keys: Vec<String>,
        finished: bool,
    }

    impl ResultSink for Seen {
        fn selection(&mut self, r: &SelectionResult) -> std::io::Result<()> {
            self.keys.push(r.selection_key.clone());
            Ok(())
        }

        fn finish(&mut self) -> std::io::Result<()> {
            self.finished = true;
            Ok(())
        }
    }

    fn results() -> Vec<SelectionResult> {
        let dir = tempfile::tempdir().unwrap();
        let app = crate::app::App::open(&dir.path().join("rb.db")).unwrap();
        let results: Vec<SelectionResult> = app.evaluate_all("llm-chat-clients").unwrap().collect();
        assert!(results.len() > 3);
        results
    }

    /// Every selection evaluated ahead is printed, in order, then the printer is
    /// finished.
    #[test]
    fn selections_evaluated_ahead_are_printed_in_order() {
        let results = results();
        let mut seen = Seen::default();
        print_ahead(
            results.clone().into_iter(),
            &mut seen,
            &indicatif::ProgressBar::hidden(),
        )
        .unwrap();
        let keys: Vec<String> = results.iter().map(|r| r.selection_key.clone()).collect();
        assert_eq!(seen.keys, keys);
        assert!(seen.finished);
    }

    /// The evaluations panicking part way: the panic goes on, and the printer is not
    /// finished (a JSON array left open, no Markdown legend: the output never looks
    /// whole).
    #[test]
    fn a_panic_while_evaluating_ahead_leaves_the_output_unfinished() {
        let results = results();
        let mut seen = Seen::default();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let evaluations = results
                .iter()
                .cycle()
                .take(40)
                .cloned()
                .chain(std::iter::once_with(|| -> SelectionResult {
                    panic!("an evaluation failed")
                }));
            let _ = print_ahead(evaluations, &mut seen, &indicatif::ProgressBar::hidden());
        }));
        assert!(panicked.is_err());
        assert!(!seen.finished);
        // Those handed over before the panic were printed; not all 40 were.
        assert!(
            !seen.keys.is_empty() && seen.keys.len() < 40,
            "{}",
            seen.keys.len()
        );
    }
}

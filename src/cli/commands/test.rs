//! `rulebench test PAGE|FILE [--format text|json|junit] [--pin [--select KEY]]`: runs a
//! page's verdict assertions. Exit 0 when every one passes, 1 when one fails, 2 on bad
//! input (an invalid assertion is reported with its pointer).
//!
//! `--expect TABLE` checks a table of expected outcomes instead (every row; exit as
//! above), and `--pin-to TABLE [--select KEY]` writes the current outcomes as one.

use std::path::Path;

use clap::ValueEnum;

use crate::app::App;
use crate::app::expectations::LinkedRun;
use crate::app::text::sanitize;
use crate::cli::io::{Exit, Failure, pretty, usage};
use crate::print::expect as print_expect;
use crate::print::report;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFormat {
    #[value(alias = "table")]
    Text,
    Json,
    Junit,
    /// Markdown (--coverage)
    Md,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A stored page's id, or a page file (- reads stdin)
    #[arg(value_name = "PAGE|FILE|-", add = crate::cli::common::page_ids())]
    pub target: String,
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    pub format: TestFormat,
    /// First pin the current verdicts, selection verdict and recommendation as assertions
    #[arg(long)]
    pub pin: bool,
    /// With --pin or --pin-to: only this source row (else every source row)
    #[arg(long, value_name = "KEY")]
    pub select: Option<String>,
    /// Check a table of expected outcomes instead of the page's assertions: one row per
    /// pair, with `source` and `target` columns (a key, id or label; or the key fields
    /// themselves) and any of `verdict`, `score`, `reason` and `rule.ID` (CSV, TSV, JSON,
    /// JSON Lines, Parquet, Arrow, Excel; - reads stdin)
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["pin", "pin_to"])]
    pub expect: Option<std::path::PathBuf>,
    /// Write the current outcome of every pair (of --select's source row alone, with
    /// it) as a table of expectations: .csv, .tsv or .jsonl by the extension; - is CSV
    /// on stdout
    #[arg(long, value_name = "FILE|-", conflicts_with = "pin")]
    pub pin_to: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub read: crate::cli::common::ReadArgs,
    /// Report how the assertions cover the rules: each condition over the pairs they look
    /// at (evaluated, both outcomes, decisive), then mutants of each rule and whether an
    /// assertion notices (text, json or md)
    #[arg(long, conflicts_with_all = ["pin", "pin_to", "expect"])]
    pub coverage: bool,
    /// With --expect: link the table to the stored page (checked first): `rulebench test
    /// PAGE` then checks it with the assertions, and the workbench watches it
    #[arg(long, requires = "expect")]
    pub link: bool,
    /// Unlink a table linked with --link (as linked, or a path to it)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["expect", "pin", "pin_to", "coverage"])]
    pub unlink: Option<std::path::PathBuf>,
    /// With --coverage: exit 1 when the mutation score is below PCT
    #[arg(long, value_name = "PCT", requires = "coverage", value_parser = parse_percent)]
    pub fail_under: Option<f64>,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &crate::cli::io::Db, args: Args) -> Result<Exit, Failure> {
    if args.select.is_some() && !args.pin && args.pin_to.is_none() {
        return Err(usage(
            "--select names the source row to pin (hint: with --pin or --pin-to)",
        ));
    }
    if args.expect.is_none() && !args.read.options().is_default() {
        return Err(usage(
            "--input-format, --sheet, --type and --name-field say how to read the --expect table (hint: add --expect FILE)",
        ));
    }
    if let Some(file) = &args.pin_to {
        return pin_to(db, &args.target, args.select.as_deref(), file);
    }
    if let Some(file) = &args.unlink {
        let revision = db.open()?.unlink_expectations(&args.target, file)?;
        eprintln!(
            "unlinked {} from {} (revision {revision})",
            sanitize(&file.display().to_string()),
            sanitize(&args.target)
        );
        return Ok(Exit::Ok);
    }
    let to = crate::cli::io::To::new(db, args.output)?;
    if args.coverage {
        return coverage(db, &args.target, args.format, args.fail_under, &to);
    }
    if args.format == TestFormat::Md {
        return Err(usage(
            "--format md is for --coverage (hint: text, json or junit)",
        ));
    }
    if let Some(file) = &args.expect {
        return expect(
            db,
            &args.target,
            file,
            (&args.read.options(), args.link),
            args.format,
            &to,
        );
    }
    test_page(
        db,
        &args.target,
        args.format,
        args.pin,
        args.select.as_deref(),
        &to,
    )
}

/// Runs the command. `target` is a page file when such a file exists, else a page id.
fn test_page(
    db: &crate::cli::io::Db,
    target: &str,
    format: TestFormat,
    pin: bool,
    select: Option<&str>,
    to: &crate::cli::io::To,
) -> Result<Exit, Failure> {
    let path = Path::new(target);
    let linked: Vec<LinkedRun>;
    let (report, stored) = if target == "-" || path.is_file() {
        if pin {
            return Err(usage(format!(
                "{target}: --pin writes to a stored page (hint: `rulebench import {target}` first)"
            )));
        }
        let (text, origin) = crate::cli::io::read_arg(target, crate::cli::io::MAX_PAGE_BYTES)?;
        let report = App::test_text(&text, &origin)?;
        linked = App::check_linked_text(&text, &origin)?;
        (report, false)
    } else {
        let mut app = db.read()?;
        if pin {
            let p = app.pin_assertions(target, select)?;
            if p.changed {
                eprintln!(
                    "pinned {} selection(s) of {}: {} new, {} replaced (revision {})",
                    p.selections,
                    sanitize(target),
                    p.added,
                    p.replaced,
                    p.revision
                );
            } else {
                eprintln!(
                    "pinned {} selection(s) of {}: already pinned, nothing changed (revision {})",
                    p.selections,
                    sanitize(target),
                    p.revision
                );
            }
        }
        let report = app.run_assertions(target)?;
        linked = app.check_linked(target)?;
        (report, true)
    };
    if report.results.is_empty() && linked.is_empty() {
        eprintln!(
            "{}: no assertions (hint: `rulebench test PAGE --pin` pins the current verdicts)",
            sanitize(target)
        );
    }
    match format {
        TestFormat::Text => {
            let mut text = report::text(&report, stored);
            for run in &linked {
                text.push_str(&print_expect::linked_text(run, stored));
            }
            to.text(&text)?
        }
        TestFormat::Json if linked.is_empty() => to.json(&pretty(&report))?,
        // The report with the linked tables' runs beside its assertions.
        TestFormat::Json => {
            let mut v = serde_json::to_value(&report).map_err(|e| usage(e.to_string()))?;
            v["expectations"] = serde_json::to_value(&linked).map_err(|e| usage(e.to_string()))?;
            to.json(&pretty(&v))?
        }
        TestFormat::Junit => to.text(&report::junit_with(&report, &linked))?,
        TestFormat::Md => unreachable!("refused before"),
    }
    Ok(
        if report.all_passed() && linked.iter().all(LinkedRun::passed) {
            Exit::Ok
        } else {
            Exit::Problems
        },
    )
}

/// `--expect FILE`: checks a table of expected outcomes against the page (a stored one
/// at its current revision, or a page file in memory).
fn expect(
    db: &crate::cli::io::Db,
    target: &str,
    file: &Path,
    (read, link): (&crate::app::types::ReadOptions, bool),
    format: TestFormat,
    to: &crate::cli::io::To,
) -> Result<Exit, Failure> {
    let path = Path::new(target);
    let page_file = target == "-" || path.is_file();
    if link && (page_file || file == Path::new("-")) {
        return Err(usage(
            "--link links a table file to a stored page (hint: `rulebench import` the page first; a table from stdin cannot be linked)",
        ));
    }
    if file == Path::new("-") && target == "-" {
        return Err(usage(
            "the page and --expect cannot both be read from stdin",
        ));
    }
    let mut stdin = Vec::new();
    let input = crate::cli::io::data_input(file, &mut stdin)?;
    let (report, stored) = if page_file {
        let (text, origin) = crate::cli::io::read_arg(target, crate::cli::io::MAX_PAGE_BYTES)?;
        (
            App::check_expectations_text(&text, &origin, input, read)?,
            false,
        )
    } else if link {
        let (report, revision) = db.open()?.link_expectations(target, file, read)?;
        eprintln!(
            "linked {} to {} (revision {revision}): `rulebench test {}` checks it with the assertions",
            sanitize(&file.display().to_string()),
            sanitize(target),
            sanitize(target)
        );
        (report, true)
    } else {
        (db.read()?.check_expectations(target, input, read)?, true)
    };
    match format {
        TestFormat::Text => to.text(&print_expect::text(&report, stored))?,
        TestFormat::Json => to.json(&pretty(&report))?,
        TestFormat::Junit => to.text(&print_expect::junit(&report))?,
        TestFormat::Md => unreachable!("refused before"),
    }
    Ok(if report.all_passed() {
        Exit::Ok
    } else {
        Exit::Problems
    })
}

/// `--pin-to FILE`: writes the current outcomes as a table of expectations.
fn pin_to(
    db: &crate::cli::io::Db,
    target: &str,
    select: Option<&str>,
    file: &Path,
) -> Result<Exit, Failure> {
    let format = print_expect::TableFormat::of(file).ok_or_else(|| {
        usage(format!(
            "--pin-to {}: writes .csv, .tsv or .jsonl (told by the extension)",
            sanitize(&file.display().to_string())
        ))
    })?;
    // The database file (or SQLite's beside it) is never an output.
    crate::cli::io::To::new(db, Some(file.to_path_buf()))?;
    let path = Path::new(target);
    let (pins, app) = if target == "-" || path.is_file() {
        let (text, origin) = crate::cli::io::read_arg(target, crate::cli::io::MAX_PAGE_BYTES)?;
        (App::pin_expectations_text(&text, &origin, select)?, None)
    } else {
        let app = db.read()?;
        (app.pin_expectations(target, select)?, Some(app))
    };
    let mut bytes = Vec::new();
    print_expect::table(&pins, format, &mut bytes).map_err(|e| usage(format!("--pin-to: {e}")))?;
    if file == Path::new("-") {
        crate::cli::io::write_out(&String::from_utf8_lossy(&bytes))?;
    } else {
        match app {
            Some(app) => app.export_file(file, &bytes)?,
            None => crate::app::export::write_atomic(file, &bytes)?,
        }
        eprintln!(
            "wrote {} expectation(s) to {}",
            pins.len(),
            sanitize(&file.display().to_string())
        );
    }
    Ok(Exit::Ok)
}

fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("`{s}`: a percentage from 0 to 100"))
    }
}

/// `--coverage`: how the page's assertions cover its rules.
fn coverage(
    db: &crate::cli::io::Db,
    target: &str,
    format: TestFormat,
    fail_under: Option<f64>,
    to: &crate::cli::io::To,
) -> Result<Exit, Failure> {
    let path = Path::new(target);
    let report = if target == "-" || path.is_file() {
        let (text, origin) = crate::cli::io::read_arg(target, crate::cli::io::MAX_PAGE_BYTES)?;
        App::coverage_text(&text, &origin)?
    } else {
        db.read()?.coverage(target)?
    };
    match format {
        TestFormat::Text => to.text(&crate::print::coverage::text(&report))?,
        TestFormat::Md => to.text(&crate::print::coverage::md(&report))?,
        TestFormat::Json => to.json(&pretty(&report))?,
        TestFormat::Junit => {
            return Err(usage("--coverage prints text, json or md (not junit)"));
        }
    }
    let score = report.coverage.mutation_score;
    Ok(match fail_under {
        Some(pct) if score < pct => {
            eprintln!("mutation score {score:.1}% is under {pct}%");
            Exit::Problems
        }
        _ => Exit::Ok,
    })
}

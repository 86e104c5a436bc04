//! `rulebench test PAGE|FILE [--format text|json|junit] [--pin [--select KEY]]`: runs a
//! page's verdict assertions. Exit 0 when every one passes, 1 when one fails, 2 on bad
//! input (an invalid assertion is reported with its pointer).

use std::path::Path;

use clap::ValueEnum;

use crate::app::App;
use crate::app::text::sanitize;
use crate::cli::io::{Exit, Failure, pretty, usage};
use crate::print::report;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFormat {
    #[value(alias = "table")]
    Text,
    Json,
    Junit,
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
    /// With --pin: only this source row (else every source row)
    #[arg(long, value_name = "KEY", requires = "pin")]
    pub select: Option<String>,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &crate::cli::io::Db, args: Args) -> Result<Exit, Failure> {
    let to = crate::cli::io::To::new(db, args.output)?;
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
    let (report, stored) = if target == "-" || path.is_file() {
        if pin {
            return Err(usage(format!(
                "{target}: --pin writes to a stored page (hint: `rulebench import {target}` first)"
            )));
        }
        let (text, origin) = crate::cli::io::read_arg(target, crate::cli::io::MAX_PAGE_BYTES)?;
        (App::test_text(&text, &origin)?, false)
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
        (app.run_assertions(target)?, true)
    };
    if report.results.is_empty() {
        eprintln!(
            "{}: no assertions (hint: `rulebench test PAGE --pin` pins the current verdicts)",
            sanitize(target)
        );
    }
    match format {
        TestFormat::Text => to.text(&report::text(&report, stored))?,
        TestFormat::Json => to.json(&pretty(&report))?,
        TestFormat::Junit => to.text(&report::junit(&report))?,
    }
    Ok(if report.all_passed() {
        Exit::Ok
    } else {
        Exit::Problems
    })
}

//! `rulebench diff`: what changed between two versions of a page, and which cells, verdicts and

use std::path::Path;

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, MAX_PAGE_BYTES, page_ref, read_arg, usage};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The old version: a page file, - for stdin, a stored page id, or PAGE@N (a
    /// revision; PAGE@-1 is the previous one)
    #[arg(value_name = "OLD", add = page_ids())]
    pub old: String,
    /// The new version: a page file, - for stdin, a stored page id, or PAGE@N
    #[arg(value_name = "NEW", add = page_ids())]
    pub new: String,
    /// Only this source row (its key, keyHash, id or label in OLD); else every
    /// source row on both sides
    #[arg(long, value_name = "KEY")]
    pub select: Option<String>,
    /// Every source row on both sides (the default; as `evaluate --all`)
    #[arg(long, conflicts_with = "select")]
    pub all: bool,
    /// How to print the diff
    #[arg(long, value_enum, default_value = "table")]
    pub format: print::diff::DiffFormat,
    /// Exit 1 when a verdict, a selection verdict or a recommendation moved
    #[arg(long)]
    pub exit_code: bool,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        old,
        new,
        select,
        all: _,
        format,
        exit_code,
        output,
    } = args;
    let to = crate::cli::io::To::new(db, output)?;
    if old == "-" && new == "-" {
        return Err(usage("OLD and NEW cannot both read stdin (-)"));
    }
    let app = db.read()?;
    let load = |arg: &str| -> Result<Option<(String, String)>, Failure> {
        if arg == "-" || Path::new(arg).is_file() {
            Ok(Some(read_arg(arg, MAX_PAGE_BYTES)?))
        } else {
            Ok(None)
        }
    };
    let (a, b) = (load(&old)?, load(&new)?);
    let (old_ref, new_ref) = (page_ref(&a, &old), page_ref(&b, &new));
    let d = app.diff(old_ref, new_ref, select.as_deref())?;
    match format {
        print::diff::DiffFormat::Table => to.text(&print::diff::text(&d, &old, &new))?,
        print::diff::DiffFormat::Md => to.text(&print::diff::markdown(&d, &old, &new))?,
        print::diff::DiffFormat::Json => to.json(&print::diff::json(&d, &old, &new))?,
    }
    if exit_code && d.verdicts_moved() {
        return Ok(Exit::Problems);
    }
    Ok(Exit::Ok)
}

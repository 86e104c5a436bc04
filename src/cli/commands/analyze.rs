//! `rulebench analyze PAGE|FILE [--format text|json]`: what can be decided about a
//! page's rules for any row its schema allows (never true, always true, implied by
//! another, equivalent) and about its current rows (a required rule that vetoes every
//! target of a source, a threshold nothing reaches, a stale override), each with a
//! witness. Exit 0 (findings are warnings; `check` reports them too), 2 on bad input.

use std::path::Path;

use crate::app::App;
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, MAX_PAGE_BYTES, pretty, read_arg};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A stored page's id, or a page file (- reads stdin)
    #[arg(value_name = "PAGE|FILE|-", add = page_ids())]
    pub target: String,
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    pub format: print::explain::ExplainFormat,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let to = crate::cli::io::To::new(db, args.output)?;
    let path = Path::new(&args.target);
    let report = if args.target == "-" || path.is_file() {
        let (text, origin) = read_arg(&args.target, MAX_PAGE_BYTES)?;
        App::analyze_text(&text, &origin)?
    } else {
        db.read()?.analyze(&args.target)?
    };
    match args.format {
        print::explain::ExplainFormat::Json => to.json(&pretty(&report))?,
        print::explain::ExplainFormat::Text => to.text(&print::analysis::text(&report))?,
    }
    Ok(Exit::Ok)
}

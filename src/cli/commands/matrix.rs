//! `rulebench matrix`: the rule × target grid of one selection, as the workbench shows it

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, usage, write_out};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The page's id (`rulebench pages` lists them)
    #[arg(add = page_ids())]
    pub page: String,
    /// The source row: its key (`clientType=web|id=t3-chat`), keyHash, id or label
    #[arg(long, value_name = "KEY")]
    pub select: String,
    /// How to print the result
    #[arg(long, value_enum, default_value = "table")]
    pub format: print::matrix::MatrixFormat,
    /// Write CSV/TSV text cells as they are (see `evaluate --no-formula-guard`)
    #[arg(long)]
    pub no_formula_guard: bool,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        select,
        format,
        no_formula_guard,
    } = args;
    let mut app = db.open()?;
    let result = app.evaluate(&page, &select)?;
    let rules = app.page(&page)?.0.rules;
    let mut out = Vec::new();
    print::matrix::write(&mut out, &result, &rules, format, !no_formula_guard)
        .map_err(|e| usage(format!("stdout: {e}")))?;
    write_out(&String::from_utf8_lossy(&out))?;
    Ok(Exit::Ok)
}

//! `rulebench explain`: why a target got its verdict for a selection, and why each rule passed or failed

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, pretty};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The page's id (`rulebench pages` lists them)
    #[arg(add = page_ids())]
    pub page: String,
    /// The source row: its key (`clientType=web|id=t3-chat`), keyHash, id or label
    #[arg(long, value_name = "KEY")]
    pub select: String,
    /// The target row: its key, keyHash, id or label
    #[arg(long, value_name = "ID")]
    pub target: String,
    /// Only this rule (its id or name)
    #[arg(long, value_name = "RULE_ID")]
    pub rule: Option<String>,
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    pub format: print::explain::ExplainFormat,
    /// Also print each rule as a tree with every sub-expression's value (text)
    #[arg(long)]
    pub tree: bool,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        select,
        target,
        rule,
        format,
        tree,
        output,
    } = args;
    let to = crate::cli::io::To::new(db, output)?;
    let app = db.read()?;
    let e = app.explain(&page, &select, &target, rule.as_deref())?;
    match format {
        print::explain::ExplainFormat::Json => to.json(&pretty(&e))?,
        print::explain::ExplainFormat::Text => to.text(&print::explain::text(&e, tree))?,
    }
    Ok(Exit::Ok)
}

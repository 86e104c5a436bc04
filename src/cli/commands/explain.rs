//! `rulebench explain`: why a target got its verdict for a selection, and why each rule passed or failed

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, pretty, write_json, write_text};
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
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        select,
        target,
        rule,
        format,
        tree,
    } = args;
    let app = db.read()?;
    let e = app.explain(&page, &select, &target, rule.as_deref())?;
    match format {
        print::explain::ExplainFormat::Json => write_json(&pretty(&e))?,
        print::explain::ExplainFormat::Text => write_text(&print::explain::text(&e, tree))?,
    }
    Ok(Exit::Ok)
}

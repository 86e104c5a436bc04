//! `rulebench explain`: why a target got its verdict for a selection, and why each rule passed or failed

use crate::app::types::Verdict;
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, pretty};
use crate::print;

fn parse_verdict(s: &str) -> Result<Verdict, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "0" | "none" | "incompatible" => Ok(Verdict::None),
        "1" | "partial" => Ok(Verdict::Partial),
        "2" | "full" | "compatible" => Ok(Verdict::Full),
        _ => Err("a verdict: 0, 1 or 2 (none, partial or full)".to_owned()),
    }
}

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
    /// What would move the target to this verdict (0, 1, 2; none, partial, full): the
    /// smallest sets of rule outcomes, the threshold values past which its verdict
    /// changes, and the single edits that change the selection's recommendation
    #[arg(long, value_name = "VERDICT", value_parser = parse_verdict, conflicts_with_all = ["rule", "tree"])]
    pub why_not: Option<Verdict>,
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
        why_not,
        output,
    } = args;
    let to = crate::cli::io::To::new(db, output)?;
    let app = db.read()?;
    if let Some(asked) = why_not {
        let r = app.why_not(&page, &select, &target, asked)?;
        match format {
            print::explain::ExplainFormat::Json => to.json(&pretty(&r))?,
            print::explain::ExplainFormat::Text => to.text(&print::explain::why_not(&r))?,
        }
        return Ok(Exit::Ok);
    }
    let e = app.explain(&page, &select, &target, rule.as_deref())?;
    match format {
        print::explain::ExplainFormat::Json => to.json(&pretty(&e))?,
        print::explain::ExplainFormat::Text => to.text(&print::explain::text(&e, tree))?,
    }
    Ok(Exit::Ok)
}

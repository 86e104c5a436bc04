//! `rulebench rule`: add or remove one rule

use crate::app::text::sanitize_lines;
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, MAX_RULE_FILE_BYTES, read_arg};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: RuleAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum RuleAction {
    /// Add a rule from a JSON file, or - for stdin
    Add {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// A rule as JSON (name, logic or a predicate list, required, weight, category);
        /// - reads stdin
        #[arg(value_name = "FILE|-")]
        file: String,
        /// Overwrite the rule with the same id
        #[arg(long)]
        replace: bool,
    },
    /// Remove a rule
    Rm {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The rule's id
        rule_id: String,
    },
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { action } = args;
    let mut app = db.open()?;
    match action {
        RuleAction::Add {
            page,
            file,
            replace,
        } => {
            let (text, origin) = read_arg(&file, MAX_RULE_FILE_BYTES)?;
            let (rule, revision, warnings) = app.add_rule(&page, &text, &origin, replace)?;
            for w in &warnings {
                eprintln!("{}", sanitize_lines(&format!("{origin}: {w}")));
            }
            db.status(&format!(
                "saved rule {} in {page} (revision {revision})",
                rule.id
            ));
        }
        RuleAction::Rm { page, rule_id } => {
            let revision = app.remove_rule(&page, &rule_id)?;
            db.status(&format!(
                "removed rule {rule_id} from {page} (revision {revision})"
            ));
        }
    }
    Ok(Exit::Ok)
}

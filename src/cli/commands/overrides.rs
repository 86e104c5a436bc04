//! `rulebench override`: add or remove an override

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: OverrideAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum OverrideAction {
    /// Force the verdict of a (source, target) pair
    #[command(
        after_help = "Examples:\n  rulebench override add llm --source agent --target o3-mini --value true --note 'tested by hand'\n  rulebench override add llm --source 'id=local' --target 'model=gpt-4o' --value false"
    )]
    Add {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        source: String,
        /// The target row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        target: String,
        /// true forces the pair compatible, false incompatible
        #[arg(long, action = clap::ArgAction::Set, value_parser = clap::value_parser!(bool))]
        value: bool,
        /// Why (shown with the verdict)
        #[arg(long)]
        note: Option<String>,
    },
    /// Remove an override
    #[command(
        after_help = "Examples:\n  rulebench override rm llm --source agent --target o3-mini"
    )]
    Rm {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        source: String,
        /// The target row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        target: String,
    },
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { action } = args;
    let mut app = db.open()?;
    match action {
        OverrideAction::Add {
            page,
            source,
            target,
            value,
            note,
        } => {
            let revision = app.set_override(&page, &source, &target, value, note)?;
            db.status(&format!("override set in {page} (revision {revision})"));
        }
        OverrideAction::Rm {
            page,
            source,
            target,
        } => {
            let revision = app.remove_override(&page, &source, &target)?;
            db.status(&format!(
                "override removed from {page} (revision {revision})"
            ));
        }
    }
    Ok(Exit::Ok)
}

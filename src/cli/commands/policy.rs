//! `rulebench policy`: set policy values

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: PolicyAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum PolicyAction {
    /// Set policy values by name, e.g. `fullThreshold=0.9 requiredMode=ANY_REQUIRED_FAIL_IS_0`
    #[command(after_help = "\
NAMES AND VALUES:
  requiredMode      ANY_REQUIRED_FAIL_IS_0 | ANY_REQUIRED_FAIL_CAPS_AT_PARTIAL | IGNORE_REQUIRED
  fullThreshold     a score from 0 to 1, or a percentage (0.9, 90%)
  partialThreshold  a score from 0 to 1 (at most fullThreshold)
  mode              ANY_DEVICE_FULL_IS_COMPATIBLE | ALL_DEVICES_FULL_IS_COMPATIBLE
  elseMode          ANY_DEVICE_PARTIAL_IS_PARTIAL | NONE
  strategy          HIGHEST_VERDICT_THEN_SCORE
Mode names are case-insensitive; `-` and spaces read as `_`. Only the values named change.")]
    Set {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// One or more NAME=VALUE (names and values below)
        #[arg(required = true, value_name = "NAME=VALUE")]
        assignments: Vec<String>,
    },
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        action: PolicyAction::Set { page, assignments },
    } = args;
    let mut app = db.open()?;
    let (p, revision) = app.set_policy(&page, &assignments)?;
    db.status(&format!(
        "policy of {page} set (revision {revision}): {}",
        serde_json::json!({"devicePolicy": p.device_policy, "selectionPolicy": p.selection_policy})
    ));
    Ok(Exit::Ok)
}

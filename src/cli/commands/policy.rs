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
    #[command(after_help = names_and_values())]
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

/// The help's list of policy names and their values: the modes listed by their enums.
fn names_and_values() -> String {
    use crate::app::policy::{PolicyField, mode_names};
    let mut out = String::from("NAMES AND VALUES:\n");
    for &field in PolicyField::ALL {
        let values = match (field, mode_names(field)) {
            (_, Some(names)) => names.join(" | "),
            (PolicyField::PartialThreshold, None) => {
                "a score from 0 to 1 (at most fullThreshold)".to_owned()
            }
            (_, None) => "a score from 0 to 1, or a percentage (0.9, 90%)".to_owned(),
        };
        out.push_str(&format!("  {:<16}  {values}\n", field.name()));
    }
    out.push_str(
        "Mode names are case-insensitive; `-` and spaces read as `_`. Only the values named change.",
    );
    out.push_str(
        "\n\nExamples:\n  rulebench policy set llm fullThreshold=0.9\n  rulebench policy set llm fullThreshold=90% partialThreshold=0.5",
    );
    out
}

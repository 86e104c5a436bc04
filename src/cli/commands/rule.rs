//! `rulebench rule`: add rules (from a file of one, an array or JSON Lines, or one
//! from `--expr`), or remove one

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
    /// Add rules from a JSON file (one rule, an array, or JSON Lines; - reads stdin), or
    /// one rule from --expr: all are checked first and saved as one revision
    #[command(after_help = "\
A rule in a file is JSON: name, and one of logic (JSONLogic), expression (infix) or
predicates; optionally id, required, weight, category, description.

Examples:
  rulebench rule add llm rules.jsonl
  rulebench rule add llm --name Vision --required --expr 'target.supports_vision == true'
  rulebench rule add llm --name 'Context window' --weight 2 \\
      --expr 'target.max_input_tokens >= source.minContext'
  jq -c '.rules[]' other-page.json | rulebench rule add llm - --replace")]
    Add {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// Rules as JSON: one rule, an array, or JSON Lines; - reads stdin
        #[arg(value_name = "FILE|-", required_unless_present = "expr")]
        file: Option<String>,
        /// One rule's logic as an infix expression (needs --name)
        #[arg(long, value_name = "EXPR", conflicts_with = "file", requires = "name")]
        expr: Option<String>,
        /// The --expr rule's name
        #[arg(long, requires = "expr")]
        name: Option<String>,
        /// The --expr rule's id [default: made from the name]
        #[arg(long, requires = "expr")]
        id: Option<String>,
        /// The --expr rule is required (a failure fails the target)
        #[arg(long, requires = "expr")]
        required: bool,
        /// The --expr rule's weight [default: 1]
        #[arg(long, requires = "expr")]
        weight: Option<f64>,
        /// The --expr rule's category
        #[arg(long, requires = "expr")]
        category: Option<String>,
        /// Overwrite rules with the same ids (in place)
        #[arg(long)]
        replace: bool,
    },
    /// Remove a rule
    #[command(after_help = "Examples:\n  rulebench rule rm llm vision")]
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
            expr,
            name,
            id,
            required,
            weight,
            category,
            replace,
        } => {
            let (text, origin) = match (&file, &expr) {
                (Some(file), _) => read_arg(file, MAX_RULE_FILE_BYTES)?,
                (None, Some(expr)) => {
                    let mut rule = serde_json::json!({
                        "name": name.unwrap_or_default(),
                        "expression": expr,
                        "required": required,
                    });
                    if let Some(id) = id {
                        rule["id"] = id.into();
                    }
                    if let Some(w) = weight {
                        rule["weight"] = w.into();
                    }
                    if let Some(c) = category {
                        rule["category"] = c.into();
                    }
                    (
                        serde_json::to_string_pretty(&rule).expect("JSON serializes"),
                        "--expr".to_owned(),
                    )
                }
                (None, None) => unreachable!("clap requires one"),
            };
            let added = app.add_rules(&page, &text, &origin, replace)?;
            let mut said = String::new();
            for (_, warnings, at) in &added.rules {
                for w in warnings {
                    eprintln!("{}", sanitize_lines(&format!("{at}: {w}")));
                }
            }
            if let [(rule, _, _)] = added.rules.as_slice() {
                said.push_str(&format!(
                    "saved rule {} in {page} (revision {})",
                    rule.id, added.revision
                ));
            } else {
                for (rule, _, _) in &added.rules {
                    said.push_str(&format!("saved rule {} ({})\n", rule.id, rule.name));
                }
                said.push_str(&format!(
                    "{} rules saved in {page} (revision {})",
                    added.rules.len(),
                    added.revision
                ));
            }
            db.status(&said);
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

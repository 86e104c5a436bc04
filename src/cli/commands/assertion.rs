//! `rulebench assertion`: add, remove and list a page's verdict assertions.

use crate::app::text::sanitize;
use crate::cli::common::{ListFormat, page_ids};
use crate::cli::io::{Db, Exit, Failure, MAX_RULE_FILE_BYTES, read_arg};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: AssertionAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum AssertionAction {
    /// Add assertions from a JSON file (one, an array, or JSON Lines; - reads stdin), or
    /// one from flags: checked first, saved as one revision
    #[command(after_help = "\
An assertion is JSON: select (a source row, or * for every one), path (a JSONPath over
the selection's result: selectionVerdict, targets[?(@.id=='o3')].verdict, …), matcher
(toEqual, toBeGreaterThan, toContain, toBeNull, …), expected, and optionally id,
description, not, pathMatch (ANY or ALL). `rulebench test PAGE` runs them.

Examples:
  rulebench assertion add llm checks.jsonl
  rulebench assertion add llm --select agent --path selectionVerdict --matcher toEqual --expected 2
  rulebench assertion add llm --select '*' --path 'targets[*].score' --matcher toBeGreaterThan \\
      --expected 0 --all --description 'every model scores'")]
    Add {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// Assertions as JSON: one, an array, or JSON Lines; - reads stdin
        #[arg(value_name = "FILE|-", required_unless_present = "path")]
        file: Option<String>,
        /// The source row the assertion evaluates (* for every source row)
        #[arg(long, requires = "path", default_value = "*")]
        select: String,
        /// A JSONPath over the selection's result
        #[arg(long, conflicts_with = "file", requires = "matcher")]
        path: Option<String>,
        /// The matcher: toEqual, toBeGreaterThan, toBeLessThan, toContain, toBeNull, …
        #[arg(long, requires = "path")]
        matcher: Option<String>,
        /// The matcher's argument, as JSON (2, "o3", [1,2]); a bare word is a string
        #[arg(long, requires = "path")]
        expected: Option<String>,
        /// Every value the path finds must pass (else one is enough)
        #[arg(long, requires = "path")]
        all: bool,
        /// Invert the outcome
        #[arg(long, requires = "path")]
        not: bool,
        /// What the assertion checks, in words (its id is made from it)
        #[arg(long, requires = "path")]
        description: Option<String>,
        /// The assertion's id [default: made from the description]
        #[arg(long, requires = "path")]
        id: Option<String>,
        /// Overwrite assertions with the same ids
        #[arg(long)]
        replace: bool,
    },
    /// Remove an assertion
    #[command(after_help = "Examples:\n  rulebench assertion rm llm agent-has-a-model")]
    Rm {
        /// The page's id
        #[arg(add = page_ids())]
        page: String,
        /// The assertion's id (`rulebench assertion list PAGE` lists them)
        id: String,
    },
    /// A page's assertions
    #[command(after_help = "\
Examples:
  rulebench assertion list llm
  rulebench assertion list llm --format json > checks.json   # and back: assertion add")]
    List {
        /// The page's id
        #[arg(add = page_ids())]
        page: String,
        /// How to print them
        #[arg(long, value_enum, default_value = "table")]
        format: ListFormat,
        /// Write to FILE (whole or not at all) instead of stdout; - is stdout
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    match args.action {
        AssertionAction::Add {
            page,
            file,
            select,
            path,
            matcher,
            expected,
            all,
            not,
            description,
            id,
            replace,
        } => {
            let (text, origin) = match (file, path) {
                (Some(file), _) => read_arg(&file, MAX_RULE_FILE_BYTES)?,
                (None, Some(path)) => {
                    let mut a = serde_json::json!({
                        "select": select,
                        "path": path,
                        "matcher": matcher.unwrap_or_default(),
                    });
                    if let Some(e) = expected {
                        a["expected"] =
                            serde_json::from_str(&e).unwrap_or(serde_json::Value::String(e));
                    }
                    if all {
                        a["pathMatch"] = "ALL".into();
                    }
                    if not {
                        a["not"] = true.into();
                    }
                    if let Some(d) = description {
                        a["description"] = d.into();
                    }
                    if let Some(i) = id {
                        a["id"] = i.into();
                    }
                    (a.to_string(), "the flags".to_owned())
                }
                (None, None) => unreachable!("clap requires one"),
            };
            let mut app = db.open()?;
            let before: Vec<String> = app
                .page(&page)?
                .0
                .assertions
                .iter()
                .map(|a| a.id.clone())
                .collect();
            let (saved, revision) = app.add_assertions(&page, &text, &origin, replace)?;
            let new: Vec<&str> = saved
                .iter()
                .map(|a| a.id.as_str())
                .filter(|id| !before.iter().any(|b| b == id))
                .collect();
            db.status(&format!(
                "{} assertion{} added{} in {page} (revision {revision}; {} in all; `rulebench test {page}` runs them)",
                new.len(),
                if new.len() == 1 { "" } else { "s" },
                if new.is_empty() {
                    String::new()
                } else {
                    format!(": {}", new.join(", "))
                },
                saved.len()
            ));
        }
        AssertionAction::Rm { page, id } => {
            let revision = db.open()?.remove_assertion(&page, &id)?;
            db.status(&format!(
                "removed assertion {} from {page} (revision {revision})",
                sanitize(&id)
            ));
        }
        AssertionAction::List {
            page,
            format,
            output,
        } => {
            let app = db.read()?;
            let (p, _) = app.page(&page)?;
            let doc = serde_json::to_value(&p.assertions).expect("assertions serialize");
            let items = doc.as_array().cloned().unwrap_or_default();
            crate::cli::io::emit_listing(
                &app,
                output.as_deref(),
                format,
                || print::listing::assertions_table(&p.assertions),
                &doc,
                (
                    &[
                        "id",
                        "description",
                        "select",
                        "path",
                        "pathMatch",
                        "matcher",
                        "expected",
                        "not",
                    ],
                    &items,
                ),
            )?;
        }
    }
    Ok(Exit::Ok)
}

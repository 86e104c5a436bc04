//! `rulebench expr`: infix expression → JSONLogic (or back with --to-infix)

use serde_json::Value;

use crate::app::expr::read_json as parse_json;
use crate::app::expr::{self, Fields};
use crate::cli::io::{Db, Exit, Failure, usage, write_json};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// `source.age >= 18 AND target.country == source.country`, or JSON with --to-infix
    pub expression: String,
    /// Print JSONLogic as infix instead
    #[arg(long)]
    pub to_infix: bool,
    /// Check field names against this page's datasets (did-you-mean hints)
    #[arg(long, value_name = "ID")]
    pub page: Option<String>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        expression,
        to_infix,
        page,
    } = args;
    let fields = match page {
        Some(id) => expr::fields_of(&db.read()?.page(&id)?.0),
        None => Fields::default(),
    };
    // JSONLogic, or infix whose strings are JSON strings: escaped as JSON.
    write_json(&convert(&expression, to_infix, &fields)?)?;
    Ok(Exit::Ok)
}

/// Converts one expression; `fields` (a page's) enables unknown-field hints.
pub fn convert(text: &str, to_infix: bool, fields: &Fields) -> Result<String, Failure> {
    if to_infix {
        let logic: Value = parse_json(text).map_err(|d| usage(format!("--to-infix: {d}")))?;
        // Logic outside the infix grammar is bad input for this command: exit 2.
        return expr::to_infix(&logic)
            .map(|s| format!("{s}\n"))
            .map_err(|e| usage(e.to_string()));
    }
    let logic = expr::to_logic(text, fields).map_err(|e| usage(e.render(text)))?;
    Ok(format!("{logic}\n"))
}

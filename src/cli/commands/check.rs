//! `rulebench check`: validate a page's rules (a stored page or a page file); exit 1 on errors

use std::path::Path;

use crate::app::App;
use crate::cli::common::{dialect_arg, page_ids};
use crate::cli::io::{Db, Exit, Failure, MAX_PAGE_BYTES, pretty, read_arg};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A stored page's id, or a page file (- reads stdin)
    #[arg(value_name = "PAGE|FILE|-", add = page_ids())]
    pub target: String,
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
    /// Also report which rules translate to this SQL dialect (`rulebench sql`)
    #[arg(long, value_parser = dialect_arg(), value_name = "DIALECT")]
    pub sql: Option<crate::app::types::Dialect>,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        target,
        format,
        sql,
        output,
    } = args;
    let to = crate::cli::io::To::new(db, output)?;
    let path = Path::new(&target);
    let checked = if target == "-" || path.is_file() {
        App::check_text_with(&read_arg(&target, MAX_PAGE_BYTES)?.0, sql)
    } else {
        db.read()?.check_page_with(&target, sql)?
    };
    let diags = checked.diagnostics;
    let sql_summary = checked.sql.map(|summary| summary.to_string());
    let errors = diags.iter().filter(|d| d.is_error()).count();
    match format {
        CheckFormat::Json => to.json(&pretty(&diags))?,
        CheckFormat::Text => {
            let target = if target == "-" { "<stdin>" } else { &target };
            let mut text = String::new();
            for d in &diags {
                text.push_str(&format!("{target}: {d}\n"));
            }
            let warnings = diags.len() - errors;
            if let Some(summary) = &sql_summary {
                text.push_str(&format!("{target}: {summary}\n"));
            }
            text.push_str(&format!("{target}: {errors} errors, {warnings} warnings\n"));
            to.text(&text)?;
        }
    }
    if errors > 0 {
        return Ok(Exit::Problems);
    }
    Ok(Exit::Ok)
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    #[value(alias = "table")]
    Text,
    Json,
}

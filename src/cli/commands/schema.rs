//! `rulebench schema`: the JSON Schema of page files.

use crate::cli::io::{Exit, Failure, write_json};

pub fn run() -> Result<Exit, Failure> {
    write_json(crate::app::types::PAGE_SCHEMA)?;
    Ok(Exit::Ok)
}

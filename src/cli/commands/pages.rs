//! `rulebench pages`: list pages

use crate::cli::common::ListFormat;
use crate::cli::io::{Db, Exit, Failure, pretty, write_json, write_text};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// How to print the result
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
    /// The same as --format json
    #[arg(long, hide = true)]
    pub json: bool,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { format, json } = args;
    let app = db.read()?;
    let pages = app.pages()?;
    if json || format == ListFormat::Json {
        write_json(&pretty(&pages))?;
    } else {
        write_text(&print::listing::pages_table(&pages))?;
    }
    Ok(Exit::Ok)
}

//! `rulebench db`: the database: its file, schema version, size and pages

use crate::cli::common::InfoFormat;
use crate::cli::io::{Db, Exit, Failure, pretty, write_json, write_text};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    pub format: InfoFormat,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { format } = args;
    let info = db.open()?.info()?;
    match format {
        InfoFormat::Json => write_json(&pretty(&info))?,
        InfoFormat::Text => write_text(&print::listing::db_info(&info))?,
    }
    Ok(Exit::Ok)
}

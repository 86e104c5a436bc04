//! `rulebench pages`: list pages

use crate::cli::common::ListFormat;
use crate::cli::io::{Db, Exit, Failure, emit_listing};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// How to print the result
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
    /// The same as --format json
    #[arg(long, hide = true)]
    pub json: bool,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        format,
        json,
        output,
    } = args;
    let format = if json { ListFormat::Json } else { format };
    let app = db.read()?;
    let pages = app.pages()?;
    let doc = serde_json::to_value(&pages).expect("pages serialize");
    let items = doc.as_array().cloned().unwrap_or_default();
    emit_listing(
        &app,
        output.as_deref(),
        format,
        || print::listing::pages_table(&pages),
        &doc,
        (
            &[
                "id",
                "name",
                "rules",
                "sources",
                "targets",
                "revision",
                "updatedAt",
            ],
            &items,
        ),
    )?;
    Ok(Exit::Ok)
}

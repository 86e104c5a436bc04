//! `rulebench export`: write a page file (stdout by default)

use std::path::PathBuf;

use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, pretty, with_schema, write_text};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The page's id (`rulebench pages` lists them), or PAGE@N for the page as it
    /// was at revision N (PAGE@-1: the previous one)
    #[arg(add = page_ids())]
    pub page: String,
    /// Write the page file here instead of stdout (`-`: stdout)
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { page, output } = args;
    let app = db.read()?;
    if let Some(path) = output.as_ref().filter(|p| p.as_os_str() != "-") {
        app.refuse_database_file(path)?;
    }
    let (page, _) = app.page_spec(&page)?;
    let text = pretty(&with_schema(&page));
    // `-o -` is stdout, as everywhere else.
    match output.filter(|p| p.as_os_str() != "-") {
        // Whole or not at all: a reader never sees half a page file.
        Some(path) => app.export_file(&path, text.as_bytes())?,
        None => write_text(&text)?,
    }
    Ok(Exit::Ok)
}

//! `rulebench db`: the database: its file, schema version, size and pages

use crate::cli::common::InfoFormat;
use crate::cli::io::{Db, Exit, Failure, pretty};
use crate::print;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  rulebench db                           # which database, its schema version, size, pages
  rulebench --db team.db db init         # a new database with the sample pages
  rulebench --db team.db --no-seed db init")]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<DbAction>,
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    pub format: InfoFormat,
    /// Write to FILE (whole or not at all) instead of stdout; - is stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
pub enum DbAction {
    /// Create the database (with the sample pages unless --no-seed); one that exists is
    /// left as it is. Commands that only read never create one.
    #[command(
        after_help = "Examples:\n  rulebench --db team.db db init\n  rulebench --db empty.db --no-seed db init"
    )]
    Init,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        action,
        format,
        output,
    } = args;
    let to = crate::cli::io::To::new(db, output)?;
    if let Some(DbAction::Init) = action {
        let existed = db.path.exists();
        let app = db.open()?;
        if existed {
            db.status(&format!(
                "{} exists already (schema version {}): left as it is",
                db.path.display(),
                app.info()?.schema_version
            ));
        }
        return Ok(Exit::Ok);
    }
    let info = db.read()?.info()?;
    match format {
        InfoFormat::Json => to.json(&pretty(&info))?,
        InfoFormat::Text => to.text(&print::listing::db_info(&info))?,
    }
    Ok(Exit::Ok)
}

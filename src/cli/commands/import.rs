//! `rulebench import`: import page files (all or nothing per file)

use std::path::{Path, PathBuf};

use crate::app::text::sanitize_lines;
use crate::cli::io::{Db, Exit, Failure, MAX_PAGE_BYTES, read_arg, usage};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Page files (- reads one from stdin)
    #[arg(required = true, value_name = "FILE|-")]
    pub files: Vec<PathBuf>,
    /// Overwrite a page with the same id
    #[arg(long)]
    pub replace: bool,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { files, replace } = args;
    if files.iter().filter(|f| *f == Path::new("-")).count() > 1 {
        return Err(usage("stdin (-) can be read once: name it once"));
    }
    let mut app = db.open()?;
    let mut failed = Vec::new();
    for file in &files {
        let outcome = read_arg(&file.to_string_lossy(), MAX_PAGE_BYTES)
            .and_then(|(text, origin)| app.import(&text, &origin, replace).map_err(Failure::from));
        let origin = if file == Path::new("-") {
            "<stdin>".to_owned()
        } else {
            file.display().to_string()
        };
        match outcome {
            Ok(done) => {
                for w in &done.warnings {
                    eprintln!("{}", sanitize_lines(&format!("{origin}: {w}")));
                }
                db.status(&format!(
                    "imported {} (revision {}) from {origin}",
                    done.page_id, done.revision
                ));
            }
            Err(f) => {
                eprintln!("error: {}", sanitize_lines(&f.message));
                failed.push((origin, f.code));
            }
        }
    }
    if !failed.is_empty() {
        // Only pages that moved on under `--if-revision`: a finding (1).
        let code = if failed.iter().all(|(_, c)| *c == 1) {
            1
        } else {
            2
        };
        return Err(Failure {
            message: format!(
                "{} of {} files not imported: {}",
                failed.len(),
                files.len(),
                failed
                    .iter()
                    .map(|(o, _)| o.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            code,
        });
    }
    Ok(Exit::Ok)
}

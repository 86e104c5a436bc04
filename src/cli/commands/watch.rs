//! `rulebench watch`: reload a page's linked dataset files when they change (until
//! Ctrl-C or SIGTERM).

use std::sync::mpsc;
use std::time::Duration;

use crate::app::text::{sanitize, sanitize_lines};
use crate::app::watch::{Reload, Watcher};
use crate::cli::common::page_ids;
use crate::cli::io::{Db, Exit, Failure, usage, write_text};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The page's id (`rulebench pages` lists them)
    #[arg(add = page_ids())]
    pub page: String,
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    watch(db, &args.page)
}

/// `rulebench watch PAGE`: prints each reload until Ctrl-C or end of input.
fn watch(db: &crate::cli::io::Db, page: &str) -> Result<Exit, Failure> {
    // Opened once here: a missing page or database is said before watching starts.
    db.read()?.page(page)?;
    let watcher = Watcher::start(&db.path, page)?;
    let mut text = String::new();
    for (side, file) in watcher.files() {
        text.push_str(&format!(
            "watching {} of {page}: {}\n",
            side.name(),
            sanitize(&file.display().to_string())
        ));
    }
    for file in watcher.tables() {
        text.push_str(&format!(
            "watching expectations of {page}: {}\n",
            sanitize(&file.display().to_string())
        ));
    }
    text.push_str("(Ctrl-C stops)");
    db.status(&text);
    // SIGINT and SIGTERM stop watching (stdin is not read: `watch … </dev/null &` runs
    // until it is told to stop).
    let (quit_tx, quit_rx) = mpsc::channel::<()>();
    ctrlc::set_handler(move || {
        let _ = quit_tx.send(());
    })
    .map_err(|e| usage(format!("cannot handle Ctrl-C: {e}")))?;
    loop {
        match quit_rx.try_recv() {
            Ok(()) | Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let Some(event) = watcher.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        match event {
            Reload::Reloaded {
                side,
                file,
                revision,
                rows,
            } => write_text(&format!(
                "reloaded {} from {} (revision {revision}, {rows} rows)\n",
                side.name(),
                sanitize(&file.display().to_string())
            ))?,
            Reload::Failed { side, message, .. } => eprintln!(
                "error: {} not reloaded, the last good data stays: {}",
                side.name(),
                sanitize_lines(&message)
            ),
            Reload::Progress { .. } => {}
            Reload::Expectations { file } => {
                let shown = file.display().to_string();
                // A page or database that cannot be read now is said, and watching goes
                // on (as for the other events).
                let runs = match db
                    .read()
                    .map_err(|f| f.message)
                    .and_then(|app| app.check_linked(page).map_err(|e| e.to_string()))
                {
                    Ok(runs) => runs,
                    Err(message) => {
                        eprintln!("error: {}: {}", sanitize(&shown), sanitize_lines(&message));
                        continue;
                    }
                };
                for run in runs.iter().filter(|r| r.file == shown) {
                    match (&run.report, &run.error) {
                        (Some(r), _) => write_text(&format!(
                            "checked {}: {} passed, {} failed\n",
                            sanitize(&shown),
                            r.passed,
                            r.failed
                        ))?,
                        (None, error) => eprintln!(
                            "error: {}: {}",
                            sanitize(&shown),
                            sanitize_lines(error.as_deref().unwrap_or("cannot be read"))
                        ),
                    }
                }
            }
            Reload::Deleted { side, file } => eprintln!(
                "error: {} was deleted; {} keeps the last good data",
                sanitize(&file.display().to_string()),
                side.name()
            ),
        }
    }
    Ok(Exit::Ok)
}

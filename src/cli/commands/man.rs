//! `rulebench man`: the man page (roff: `rulebench man | man -l -`).

use crate::cli::io::{Exit, Failure, usage, write_out};

/// Renders the man page of `command` (the whole command line).
pub fn run(command: clap::Command) -> Result<Exit, Failure> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut out)
        .map_err(|e| usage(format!("man page: {e}")))?;
    write_out(&String::from_utf8_lossy(&out))?;
    Ok(Exit::Ok)
}

//! `rulebench config`: where the workbench's config file is, its defaults written out,
//! and a check of the file.

use crate::cli::io::{Exit, Failure, usage, write_text};
use crate::tui::config;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the config file's path (whether it is there or not)
    #[arg(long, conflicts_with_all = ["print_default", "check"])]
    pub path: bool,
    /// Print a config file with every default written out and every key binding listed
    /// (`rulebench config --print-default > "$(rulebench config --path)"` starts one)
    #[arg(long, conflicts_with = "check")]
    pub print_default: bool,
    /// Check the config file: exit 2 with what and where when it does not read
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<Exit, Failure> {
    let path = config::path().ok_or_else(|| {
        usage("no config directory on this system: set RULEBENCH_CONFIG to a file")
    })?;
    if args.print_default {
        write_text(&config::default_text())?;
        return Ok(Exit::Ok);
    }
    if args.path {
        write_text(&format!("{}\n", path.display()))?;
        return Ok(Exit::Ok);
    }
    // The check, and what the workbench takes from the file (without flags too).
    let settings = config::load(&path).map_err(usage)?;
    let there = path.exists();
    write_text(&format!(
        "{}{}\ntheme {} · mouse {} · default page {} · {} key remapping{}\n",
        path.display(),
        if there {
            ""
        } else {
            " (not there: the defaults)"
        },
        settings.scheme,
        if settings.mouse { "on" } else { "off" },
        settings
            .default_page
            .as_deref()
            .unwrap_or("none (the picker)"),
        settings.remaps.len(),
        if settings.remaps.len() == 1 { "" } else { "s" },
    ))?;
    Ok(Exit::Ok)
}

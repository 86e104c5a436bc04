//! `rulebench bench`: measure the matrix on a synthetic page, write that page, or drive
//! the workbench on a page file.

use std::path::PathBuf;

use crate::cli::io::{Exit, Failure, pretty, usage, write_text};

use super::bench_workbench;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Target rows of the synthetic page
    #[arg(long, default_value_t = 10_000)]
    pub targets: usize,
    /// Rules of the synthetic page
    #[arg(long, default_value_t = 100)]
    pub rules: usize,
    /// Source rows of the synthetic page
    #[arg(long, default_value_t = 8)]
    pub sources: usize,
    /// Pairs sampled for the per-pair engine loops
    #[arg(long, default_value_t = 100_000)]
    pub sample: usize,
    /// Write the synthetic page file here instead of measuring (to import and open it)
    #[arg(long, value_name = "FILE")]
    pub write_page: Option<PathBuf>,
    /// With --write-page: this many verdict assertions, the first over every source
    #[arg(long, default_value_t = 0, requires = "write_page")]
    pub assertions: usize,
    /// With --write-page: the worst case, every rule reads a value unique per target
    #[arg(long, requires = "write_page")]
    pub unique: bool,
    /// With --write-page: the sources after the first N copy one of those N (under
    /// their own id and name), so the page's sources collapse to N distinct profiles
    #[arg(long, value_name = "N", requires = "write_page")]
    pub distinct_sources: Option<usize>,
    /// Drive the workbench on this page file instead (keys, panes, render, background
    /// work) and report the whole frame of each kind of edit
    #[arg(long, value_name = "FILE", conflicts_with = "write_page")]
    pub workbench: Option<PathBuf>,
    /// With --workbench: how many of each kind of edit
    #[arg(long, default_value_t = 20)]
    pub rounds: usize,
    /// Time dataset imports instead: this many synthetic rows (8 columns) as CSV and as
    /// the same rows in Parquet, each into a new dataset of a scratch database
    #[arg(long, value_name = "ROWS", conflicts_with_all = ["write_page", "workbench"])]
    pub import: Option<usize>,
    /// Evaluate every source of the synthetic page twice in this process, by rulebench
    /// and by a plain datalogic-rs loop over every pair, check that the verdict counts
    /// are equal, and print both times and their ratio
    #[arg(long, conflicts_with_all = ["write_page", "workbench", "import"])]
    pub compare: bool,
}

pub fn run(args: Args) -> Result<Exit, Failure> {
    match args {
        Args {
            import: Some(rows), ..
        } => write_text(&crate::app::bench::imports(rows)?)?,
        Args {
            compare: true,
            targets,
            rules,
            sources,
            ..
        } => write_text(&crate::app::bench::compare(targets, rules, sources)?)?,
        Args {
            workbench: Some(file),
            rounds,
            ..
        } => write_text(&bench_workbench::run(&file, rounds)?)?,
        Args {
            targets,
            rules,
            sources,
            write_page: Some(path),
            assertions,
            unique,
            distinct_sources,
            ..
        } => {
            let spread = if unique {
                crate::app::synth::Spread::Unique
            } else {
                crate::app::synth::Spread::Realistic
            };
            let mut page = crate::app::synth::page(targets, rules, sources, spread, 42);
            if let Some(n) = distinct_sources {
                crate::app::synth::repeat_sources(&mut page, n);
            }
            page.assertions = crate::app::synth::assertions(&page, assertions);
            crate::app::export::write_atomic(&path, pretty(&page).as_bytes())
                .map_err(|e| usage(e.to_string()))?;
            write_text(&format!(
                "wrote {} ({targets} targets × {rules} rules × {sources} sources)\n",
                path.display()
            ))?;
        }
        Args {
            targets,
            rules,
            sources,
            sample,
            write_page: None,
            ..
        } => write_text(&crate::app::bench::run(targets, rules, sources, sample))?,
    }
    Ok(Exit::Ok)
}

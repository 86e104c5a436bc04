//! The command line (README, Command line). Exit status: 0 success, 1 a check found problems,
//! 2 bad usage or bad input.

mod bench_workbench;
mod dataset;
mod diff;
mod explain;
mod expr;
use crate::print::matrix;
mod output;
pub mod print;
mod test;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::app::types::parse_json;
use crate::app::types::sanitize_lines;
use crate::app::{App, AppError, default_db_path};

#[derive(Parser, Debug)]
#[command(
    name = "rulebench",
    version,
    about = "A terminal workbench for JSONLogic compatibility rules",
    long_about = "rulebench judges source rows against target rows with JSONLogic feature rules \
                  and verdict policies. Without a command it opens the workbench.",
    after_long_help = LONG_HELP_TAIL
)]
pub struct Cli {
    /// The database file [default: $RULEBENCH_DB, else rulebench.db in the platform data directory]
    #[arg(
        long,
        global = true,
        env = "RULEBENCH_DB",
        hide_env_values = true,
        value_name = "PATH"
    )]
    pub db: Option<PathBuf>,
    /// Open this page directly in the workbench
    #[arg(long, value_name = "ID")]
    pub page: Option<String>,
    /// Let the workbench take the mouse: the wheel scrolls, a click focuses a pane and
    /// selects the cell, rule or source under it (the terminal's own selection then
    /// needs Shift)
    #[arg(long)]
    pub mouse: bool,
    /// Append the workbench's recompute and render times per frame to FILE
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Create a new database empty, without the sample pages
    #[arg(long, global = true, env = "RULEBENCH_NO_SEED", hide_env_values = true, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_seed: bool,
    /// Print no status lines (what was imported, saved, created) on stderr; data and
    /// errors still print
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Change the page only if it is still at revision N (as read by `pages`, `export`
    /// or `page log`): when someone changed it meanwhile, nothing is written, the
    /// revisions since are listed, and the exit status is 1
    #[arg(long, global = true, value_name = "N")]
    pub if_revision: Option<i64>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Examples and exit status, at the end of `rulebench --help` and in the man page.
const LONG_HELP_TAIL: &str = "\
EXAMPLES:
  rulebench                                   open the workbench on the sample pages
  rulebench pages                             list the pages of the database
  rulebench evaluate llm-chat-clients --select t3-chat --format table
  rulebench evaluate llm-chat-clients --all --format csv > verdicts.csv
  rulebench explain llm-chat-clients --select t3-chat --target o3
  rulebench check my-page.json                validate a page file without importing it
  rulebench test my-page.json --format junit  run its verdict assertions (CI)
  rulebench import my-page.json && rulebench dataset import my-page target models.csv --link
  rulebench expr 'source.age >= 18 AND target.country == source.country'

EXIT STATUS:
  0  success
  1  a check or test found problems (check, test), or --if-revision found the page moved on
  2  bad usage or bad input (with a located message on stderr); nothing was changed

ENVIRONMENT:
  RULEBENCH_DB       the database file (as --db); empty means unset
  RULEBENCH_NO_SEED  create a new database without the sample pages (as --no-seed)
  NO_COLOR           the workbench draws without colour";

/// The database the global options name, and how to open it.
pub struct Db {
    pub path: PathBuf,
    /// Named by `--db` or `$RULEBENCH_DB` (its directory must exist), not the default.
    explicit: bool,
    seed: bool,
    quiet: bool,
    if_revision: Option<i64>,
}

impl Db {
    pub fn of(cli: &Cli) -> Db {
        // An empty `RULEBENCH_DB=` (or `--db ''`) means unset.
        let named = cli.db.clone().filter(|p| !p.as_os_str().is_empty());
        Db {
            explicit: named.is_some(),
            path: named.unwrap_or_else(default_db_path),
            seed: !cli.no_seed,
            quiet: cli.quiet,
            if_revision: cli.if_revision,
        }
    }

    /// Opens the database; a new one is announced on stderr with what was seeded.
    pub fn open(&self) -> Result<App, Failure> {
        let opened = App::open_with(
            &self.path,
            crate::app::OpenOptions {
                create_dir: !self.explicit,
                seed: self.seed,
            },
        )?;
        let mut app = opened.app;
        app.expect_revision(self.if_revision);
        if opened.created {
            self.status(&if self.seed {
                format!(
                    "created {} (seeded {} sample pages; --no-seed creates it empty)",
                    self.path.display(),
                    opened.seeded
                )
            } else {
                format!("created {} (empty)", self.path.display())
            });
        }
        Ok(app)
    }

    /// A status line (what a command did) on stderr, unless `--quiet`.
    pub fn status(&self, text: &str) {
        if !self.quiet {
            eprintln!("{}", sanitize_lines(text.trim_end_matches('\n')));
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List pages
    Pages {
        /// How to print the result
        #[arg(long, value_enum, default_value = "table")]
        format: ListFormat,
        /// The same as --format json
        #[arg(long, hide = true)]
        json: bool,
    },
    /// Import page files (all or nothing per file)
    Import {
        /// Page files (- reads one from stdin)
        #[arg(required = true, value_name = "FILE|-")]
        files: Vec<PathBuf>,
        /// Overwrite a page with the same id
        #[arg(long)]
        replace: bool,
    },
    /// Write a page file (stdout by default)
    Export {
        /// The page's id (`rulebench pages` lists them), or PAGE@N for the page as it
        /// was at revision N (PAGE@-1: the previous one)
        #[arg(add = page_ids())]
        page: String,
        /// Write the page file here instead of stdout
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Evaluate one selection or every source row
    Evaluate {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key (`clientType=web|id=t3-chat`), keyHash or id
        #[arg(
            long,
            value_name = "KEY",
            conflicts_with = "all",
            required_unless_present = "all"
        )]
        select: Option<String>,
        /// Every source row
        #[arg(long)]
        all: bool,
        /// How to print the result [default: json]
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Write CSV/TSV text cells as they are, even those a spreadsheet would run as a
        /// formula (starting with = + - @); by default they get a leading '
        #[arg(long)]
        no_formula_guard: bool,
    },
    /// What changed between two versions of a page, and which cells, verdicts and
    /// recommendations it moves
    #[command(after_help = "\
OLD and NEW are page files (- reads one from stdin), stored page ids, or revisions
of a stored page (PAGE@N; PAGE@-1 is the one before the current). Rules are matched by
id, rows and overrides by key. With --exit-code, exit 1 when any verdict, selection
verdict or recommendation moved (a CI gate for rule changes):
  rulebench diff my-page@-1 my-page          # what the last change did
  rulebench export my-page -o before.json   # then edit, import --replace or keep the file
  rulebench diff before.json my-page --format md --exit-code")]
    Diff {
        /// The old version: a page file, - for stdin, a stored page id, or PAGE@N (a
        /// revision; PAGE@-1 is the previous one)
        #[arg(value_name = "OLD", add = page_ids())]
        old: String,
        /// The new version: a page file, - for stdin, a stored page id, or PAGE@N
        #[arg(value_name = "NEW", add = page_ids())]
        new: String,
        /// Only this source row (its key, keyHash, id or label in OLD); else every
        /// source row on both sides
        #[arg(long, value_name = "KEY")]
        select: Option<String>,
        /// Every source row on both sides (the default; as `evaluate --all`)
        #[arg(long, conflicts_with = "select")]
        all: bool,
        /// How to print the diff
        #[arg(long, value_enum, default_value = "table")]
        format: diff::DiffFormat,
        /// Exit 1 when a verdict, a selection verdict or a recommendation moved
        #[arg(long)]
        exit_code: bool,
    },
    /// The rule × target grid of one selection, as the workbench shows it
    Matrix {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key (`clientType=web|id=t3-chat`), keyHash, id or label
        #[arg(long, value_name = "KEY")]
        select: String,
        /// How to print the result
        #[arg(long, value_enum, default_value = "table")]
        format: matrix::MatrixFormat,
        /// Write CSV/TSV text cells as they are (see `evaluate --no-formula-guard`)
        #[arg(long)]
        no_formula_guard: bool,
    },
    /// Validate a page's rules (a stored page or a page file); exit 1 on errors
    Check {
        /// A stored page's id, or a page file (- reads stdin)
        #[arg(value_name = "PAGE|FILE|-", add = page_ids())]
        target: String,
        /// How to print the result
        #[arg(long, value_enum, default_value = "text")]
        format: CheckFormat,
        /// Also report which rules translate to this SQL dialect (`rulebench sql`)
        #[arg(long, value_parser = dialect_arg(), value_name = "DIALECT")]
        sql: Option<crate::app::types::Dialect>,
    },
    /// A page's rules and policies as one SQL query over a source and a target table
    /// (or, with --data, the tables' DDL and rows)
    Sql {
        /// The page's id (`rulebench pages` lists them), or PAGE@N
        #[arg(add = page_ids())]
        page: String,
        /// The SQL dialect to write
        #[arg(long, value_parser = dialect_arg())]
        dialect: crate::app::types::Dialect,
        /// Only this source row (its key, keyHash, id or label), with its selection
        /// verdict and recommended target
        #[arg(long, value_name = "KEY", conflicts_with_all = ["all", "data"])]
        select: Option<String>,
        /// Also each source's selection verdict and recommended target
        #[arg(long, conflicts_with = "data")]
        all: bool,
        /// Print the DDL and the rows of the page's datasets and overrides instead
        #[arg(long)]
        data: bool,
        /// The source table's name
        #[arg(long, value_name = "NAME")]
        source_table: Option<String>,
        /// The target table's name
        #[arg(long, value_name = "NAME")]
        target_table: Option<String>,
        /// The overrides table's name (source_key, target_key, value); read when the
        /// page has overrides or this is given
        #[arg(long, value_name = "NAME")]
        overrides_table: Option<String>,
        /// Write the SQL here instead of stdout
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Plain JSONLogic: apply --logic to --data and print the result
    Eval {
        /// The JSONLogic to apply (- reads stdin)
        #[arg(long, value_name = "JSON|-")]
        logic: String,
        /// The data it reads (- reads stdin)
        #[arg(long, value_name = "JSON|-", default_value = "null")]
        data: String,
    },
    /// Why a target got its verdict for a selection, and why each rule passed or failed
    Explain {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key (`clientType=web|id=t3-chat`), keyHash, id or label
        #[arg(long, value_name = "KEY")]
        select: String,
        /// The target row: its key, keyHash, id or label
        #[arg(long, value_name = "ID")]
        target: String,
        /// Only this rule (its id or name)
        #[arg(long, value_name = "RULE_ID")]
        rule: Option<String>,
        /// How to print the result
        #[arg(long, value_enum, default_value = "text")]
        format: explain::ExplainFormat,
        /// Also print each rule as a tree with every sub-expression's value (text)
        #[arg(long)]
        tree: bool,
    },
    /// Infix expression → JSONLogic (or back with --to-infix)
    Expr {
        /// `source.age >= 18 AND target.country == source.country`, or JSON with --to-infix
        expression: String,
        /// Print JSONLogic as infix instead
        #[arg(long)]
        to_infix: bool,
        /// Check field names against this page's datasets (did-you-mean hints)
        #[arg(long, value_name = "ID")]
        page: Option<String>,
    },
    /// Add or remove one rule
    Rule {
        #[command(subcommand)]
        action: RuleAction,
    },
    /// Add or remove an override
    Override {
        #[command(subcommand)]
        action: OverrideAction,
    },
    /// Set policy values
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// Run a page's verdict assertions (a stored page or a page file); exit 1 on a failure
    Test {
        /// A stored page's id, or a page file (- reads stdin)
        #[arg(value_name = "PAGE|FILE|-", add = page_ids())]
        target: String,
        /// How to print the result
        #[arg(long, value_enum, default_value = "text")]
        format: test::TestFormat,
        /// First pin the current verdicts, selection verdict and recommendation as assertions
        #[arg(long)]
        pin: bool,
        /// With --pin: only this source row (else every source row)
        #[arg(long, value_name = "KEY", requires = "pin")]
        select: Option<String>,
    },
    /// Import a dataset file, or show a dataset's fields
    Dataset {
        #[command(subcommand)]
        action: dataset::DatasetAction,
    },
    /// Reload a page's linked dataset files when they change (until Ctrl-C or SIGTERM)
    Watch {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
    },
    /// The database: its file, schema version, size and pages
    Db {
        /// How to print the result
        #[arg(long, value_enum, default_value = "text")]
        format: InfoFormat,
    },
    /// Delete or rename a page
    Page {
        #[command(subcommand)]
        action: PageAction,
    },
    /// Print the JSON Schema of page files
    Schema,
    /// Print a shell's completion script (commands, options and page ids)
    #[command(after_help = "Install (re-run on upgrade):\n  \
        bash: echo 'source <(rulebench completions bash)' >> ~/.bashrc\n  \
        zsh:  echo 'source <(rulebench completions zsh)' >> ~/.zshrc\n  \
        fish: rulebench completions fish > ~/.config/fish/completions/rulebench.fish")]
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff: `rulebench man | man -l -`)
    Man,
    /// Measure the matrix on a synthetic page
    Bench {
        /// Target rows of the synthetic page
        #[arg(long, default_value_t = 10_000)]
        targets: usize,
        /// Rules of the synthetic page
        #[arg(long, default_value_t = 100)]
        rules: usize,
        /// Source rows of the synthetic page
        #[arg(long, default_value_t = 8)]
        sources: usize,
        /// Pairs sampled for the per-pair engine loops
        #[arg(long, default_value_t = 100_000)]
        sample: usize,
        /// Write the synthetic page file here instead of measuring (to import and open it)
        #[arg(long, value_name = "FILE")]
        write_page: Option<PathBuf>,
        /// With --write-page: this many verdict assertions, the first over every source
        #[arg(long, default_value_t = 0, requires = "write_page")]
        assertions: usize,
        /// With --write-page: the worst case, every rule reads a value unique per target
        #[arg(long, requires = "write_page")]
        unique: bool,
        /// Drive the workbench on this page file instead (keys, panes, render, background
        /// work) and report the whole frame of each kind of edit
        #[arg(long, value_name = "FILE", conflicts_with = "write_page")]
        workbench: Option<PathBuf>,
        /// With --workbench: how many of each kind of edit
        #[arg(long, default_value_t = 20)]
        rounds: usize,
    },
}

#[derive(Subcommand, Debug)]
pub enum RuleAction {
    /// Add a rule from a JSON file, or - for stdin
    Add {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// A rule as JSON (name, logic or a predicate list, required, weight, category);
        /// - reads stdin
        #[arg(value_name = "FILE|-")]
        file: String,
        /// Overwrite the rule with the same id
        #[arg(long)]
        replace: bool,
    },
    /// Remove a rule
    Rm {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The rule's id
        rule_id: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum OverrideAction {
    /// Force the verdict of a (source, target) pair
    Add {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        source: String,
        /// The target row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        target: String,
        /// true forces the pair compatible, false incompatible
        #[arg(long, action = clap::ArgAction::Set, value_parser = clap::value_parser!(bool))]
        value: bool,
        /// Why (shown with the verdict)
        #[arg(long)]
        note: Option<String>,
    },
    /// Remove an override
    Rm {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// The source row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        source: String,
        /// The target row: its key, keyHash, id or label
        #[arg(long, value_name = "KEY")]
        target: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum PageAction {
    /// Delete a page and everything it owns (asks on a terminal; --yes otherwise)
    Rm {
        /// The page's id
        #[arg(add = page_ids())]
        page: String,
        /// Delete without asking
        #[arg(short, long)]
        yes: bool,
    },
    /// Give a page a new id (its rules, rows, history and assertions follow)
    Rename {
        /// The page's id
        #[arg(add = page_ids())]
        page: String,
        /// The new id: lowercase letters, digits and single hyphens
        new_id: String,
    },
    /// The page's revisions, newest first: when, who, and what changed
    #[command(after_help = "\
Every revision can be read back whole: `rulebench export PAGE@N`, `rulebench diff
PAGE@N PAGE` (or `PAGE@-1 PAGE`: the previous revision against the current one), and
restored with `rulebench page restore PAGE@N`.")]
    Log {
        /// The page's id
        #[arg(add = page_ids())]
        page: String,
        /// How to print the log
        #[arg(long, value_enum, default_value = "table")]
        format: ListFormat,
        /// Only the newest N revisions
        #[arg(short = 'n', long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Forget a page's history before a revision (the page reads back at it and after;
    /// asks on a terminal, --yes otherwise)
    Prune {
        /// The page and the first revision to keep: PAGE@N, or PAGE@-K
        #[arg(value_name = "PAGE@N", add = page_ids())]
        at: String,
        /// Prune without asking
        #[arg(short, long)]
        yes: bool,
    },
    /// Restore the page, a rule, the policies or an override as it was at a revision
    /// (itself a new revision: nothing is lost)
    #[command(after_help = "\
Examples:
  rulebench page restore my-page@-1                      # undo the last change
  rulebench page restore my-page@12 --rule has-vision    # a rule, also a deleted one
  rulebench page restore my-page@12 --policies
  rulebench page restore my-page@12 --override 'id=ios' 'id=gpt-4o'")]
    Restore {
        /// The page and revision: PAGE@N, or PAGE@-K for K revisions back
        #[arg(value_name = "PAGE@N", add = page_ids())]
        at: String,
        /// Only this rule (by id)
        #[arg(long, value_name = "ID", conflicts_with_all = ["policies", "override_keys"])]
        rule: Option<String>,
        /// Only the device and selection policies
        #[arg(long, conflicts_with = "override_keys")]
        policies: bool,
        /// Only the override of this pair (source row key, target row key); removed
        /// when there was none at that revision
        #[arg(long = "override", value_names = ["SOURCE", "TARGET"], num_args = 2, id = "override_keys")]
        override_keys: Option<Vec<String>>,
    },
}

/// `--format` of the listing commands (`pages`, `dataset schema`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    Table,
    Json,
}

/// `rulebench db --format`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoFormat {
    Text,
    Json,
}

/// The shells `rulebench completions` writes for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// Completes page ids from the database (`$RULEBENCH_DB`, else the default one),
/// opened read-only; nothing when there is none.
/// The `--db` of the command line being completed (the shell passes its words after
/// `--`), when it names one: completion then reads that database.
pub fn db_in_words(words: impl IntoIterator<Item = String>) -> Option<PathBuf> {
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        if w == "--db" {
            return words.next().filter(|v| !v.is_empty()).map(PathBuf::from);
        }
        if let Some(v) = w.strip_prefix("--db=") {
            return (!v.is_empty()).then(|| PathBuf::from(v));
        }
    }
    None
}

fn page_ids() -> clap_complete::engine::ArgValueCompleter {
    clap_complete::engine::ArgValueCompleter::new(|current: &std::ffi::OsStr| {
        let path = db_in_words(std::env::args().skip_while(|a| a != "--").skip(1))
            .or_else(|| {
                std::env::var_os("RULEBENCH_DB")
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(default_db_path);
        let prefix = current.to_string_lossy();
        App::open_read_only(&path)
            .and_then(|app| app.pages())
            .map(|pages| {
                pages
                    .into_iter()
                    .filter(|p| p.id.starts_with(prefix.as_ref()))
                    .filter_map(|p| {
                        Some(
                            clap_complete::engine::CompletionCandidate::new(
                                crate::app::completion_word(&p.id)?,
                            )
                            .help(Some(sanitize_lines(&p.name).into())),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// The registration script of a shell: it calls `rulebench` back to complete.
pub fn completion_script(shell: Shell) -> String {
    use clap_complete::env::EnvCompleter;
    let mut out = Vec::new();
    let (name, bin) = ("rulebench", "rulebench");
    let written = match shell {
        Shell::Bash => {
            clap_complete::env::Bash.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Zsh => {
            clap_complete::env::Zsh.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Fish => {
            clap_complete::env::Fish.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Powershell => {
            clap_complete::env::Powershell.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Elvish => {
            clap_complete::env::Elvish.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
    };
    written.expect("writing to memory");
    String::from_utf8(out).expect("the scripts are UTF-8")
}

#[derive(Subcommand, Debug)]
pub enum PolicyAction {
    /// Set policy values by name, e.g. `fullThreshold=0.9 requiredMode=ANY_REQUIRED_FAIL_IS_0`
    #[command(after_help = "\
NAMES AND VALUES:
  requiredMode      ANY_REQUIRED_FAIL_IS_0 | ANY_REQUIRED_FAIL_CAPS_AT_PARTIAL | IGNORE_REQUIRED
  fullThreshold     a score from 0 to 1, or a percentage (0.9, 90%)
  partialThreshold  a score from 0 to 1 (at most fullThreshold)
  mode              ANY_DEVICE_FULL_IS_COMPATIBLE | ALL_DEVICES_FULL_IS_COMPATIBLE
  elseMode          ANY_DEVICE_PARTIAL_IS_PARTIAL | NONE
  strategy          HIGHEST_VERDICT_THEN_SCORE
Mode names are case-insensitive; `-` and spaces read as `_`. Only the values named change.")]
    Set {
        /// The page's id (`rulebench pages` lists them)
        #[arg(add = page_ids())]
        page: String,
        /// One or more NAME=VALUE (names and values below)
        #[arg(required = true, value_name = "NAME=VALUE")]
        assignments: Vec<String>,
    },
}

/// Output formats of `evaluate`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The result JSON (with `--all`: an array of results)
    Json,
    /// A table per selection: each target's verdict, score, reason and failing rules
    Table,
    /// One record per selection × target (text cells guarded against spreadsheet
    /// formulas: see --no-formula-guard)
    Csv,
    /// As csv, tab-separated
    Tsv,
    /// A Markdown table of verdict glyphs and scores, one row per selection
    #[value(alias = "markdown")]
    Md,
    /// JSON Lines: one object per target (with `--all`: one result per selection)
    Jsonl,
    /// Compact JSON: per target its id, verdict, score, reason and failing rule ids
    /// (with `--all`: one line per selection)
    Summary,
}

/// `--dialect` / `--sql`: a dialect by name, its possible values listed from the one
/// enum (`core::sql::Dialect`).
fn dialect_arg() -> impl clap::builder::TypedValueParser<Value = crate::app::types::Dialect> {
    use crate::app::types::Dialect;
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Dialect::ALL.iter().map(|d| d.name()))
        .map(|name: String| Dialect::parse(&name).expect("a possible value"))
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Json,
}

/// What a command ended with.
pub enum Exit {
    Ok,
    /// A check or test found problems (exit 1).
    Problems,
}

/// A failed command: the message and its exit status.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
}

impl From<AppError> for Failure {
    fn from(e: AppError) -> Self {
        // A page that moved on under `--if-revision` is a finding (1), not bad input.
        let code = if e.is_moved() { 1 } else { 2 };
        Failure {
            message: e.to_string(),
            code,
        }
    }
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 2,
    }
}

/// The largest page file a command reads (rows may be embedded).
pub const MAX_PAGE_BYTES: u64 = 512 * 1024 * 1024;
/// The largest rule file a command reads (a rule's logic is at most 64 KB).
pub const MAX_RULE_FILE_BYTES: u64 = 1024 * 1024;

/// Reads a text input of at most `limit` bytes: a byte-order mark is skipped, and text
/// that is not UTF-8 is refused with the line:col where it stops being UTF-8.
fn read_input(mut from: impl Read, origin: &str, limit: u64) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    from.by_ref()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| usage(format!("{}: {e}", sanitize_lines(origin))))?;
    if bytes.len() as u64 > limit {
        return Err(usage(format!(
            "{}: larger than the limit of {} KiB",
            sanitize_lines(origin),
            limit / 1024
        )));
    }
    // A byte-order mark stays in the text: the JSON reader skips one, and refuses a
    // second (two were accepted).
    let body = &bytes[..];
    match std::str::from_utf8(body) {
        Ok(text) => Ok(text.to_owned()),
        Err(e) => {
            let before = &body[..e.valid_up_to()];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let mut column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
            if line == 1 && body.starts_with(b"\xEF\xBB\xBF") {
                column -= 1; // the byte-order mark is not a column
            }
            Err(usage(format!(
                "{}:{line}:{column}: not UTF-8 text",
                sanitize_lines(origin)
            )))
        }
    }
}

/// A file argument's text: `-` reads stdin. Returns the text and what messages call
/// it (`<stdin>` or the path).
fn read_arg(arg: &str, limit: u64) -> Result<(String, String), Failure> {
    if arg == "-" {
        Ok((
            read_input(std::io::stdin(), "<stdin>", limit)?,
            "<stdin>".to_owned(),
        ))
    } else {
        Ok((read_file_within(Path::new(arg), limit)?, arg.to_owned()))
    }
}

/// Stdin's bytes (a data file), up to `limit`.
fn read_stdin_bytes(limit: u64) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| usage(format!("<stdin>: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(usage(format!(
            "<stdin>: larger than the limit of {} KiB",
            limit / 1024
        )));
    }
    Ok(bytes)
}

fn read_file_within(path: &Path, limit: u64) -> Result<String, Failure> {
    let shown = path.display().to_string();
    let file =
        std::fs::File::open(path).map_err(|e| usage(format!("{}: {e}", sanitize_lines(&shown))))?;
    read_input(file, &shown, limit)
}

/// Writes human text to stdout: every character that must not reach a terminal raw is
/// shown escaped ([`sanitize_lines`]); line breaks stay.
fn write_text(text: &str) -> Result<(), Failure> {
    write_out(&sanitize_lines(text))
}

/// Writes JSON text to stdout: such characters become `\uXXXX` escapes, the same JSON.
fn write_json(text: &str) -> Result<(), Failure> {
    write_out(&crate::app::types::json_safe(text))
}

/// Writes text as it is: only for text already made safe (through [`write_text`] or
/// [`write_json`]).
fn write_out(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth reporting.
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(usage(format!("stdout: {e}"))),
    }
}

/// A page argument as read: a page file's text, else a stored page's id.
fn page_ref<'a>(loaded: &'a Option<(String, String)>, arg: &'a str) -> crate::app::PageRef<'a> {
    match loaded {
        Some((text, origin)) => crate::app::PageRef::Text { text, origin },
        None => crate::app::PageRef::Stored(arg),
    }
}

/// Asks a yes/no question on the terminal; without one (or on anything but yes), the
/// command stops with exit 2 and nothing changed.
fn confirm(question: &str) -> Result<(), Failure> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return Err(usage(
            "no terminal to ask on: add --yes to confirm (nothing was changed)",
        ));
    }
    eprint!("{}", sanitize_lines(question));
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(|e| usage(format!("stdin: {e}")))?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        Ok(())
    } else {
        Err(usage("not confirmed: nothing was changed"))
    }
}

/// The `$schema` an exported page file names: the schema's own `$id`
/// (`rulebench schema` prints the schema; map the id to it in an editor).
pub const SCHEMA_ID: &str = "urn:rulebench:schema:page:v1";

/// A page as a page file writes it: `$schema` first, then the page.
fn with_schema(page: &crate::app::types::Page) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("$schema".into(), Value::String(SCHEMA_ID.into()));
    if let Value::Object(fields) = serde_json::to_value(page).expect("pages serialize") {
        doc.extend(fields);
    }
    Value::Object(doc)
}

fn pretty(v: &impl serde::Serialize) -> String {
    let s = serde_json::to_string_pretty(v).expect("serializable");
    // Stored strings may hold terminal controls serde leaves raw: escaped, same JSON.
    let mut s = crate::app::types::json_safe(&s).into_owned();
    s.push('\n');
    s
}

/// Opens the workbench.
pub fn run_tui(cli: Cli) -> Result<Exit, Failure> {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err(usage(
            "the workbench needs a terminal on stdin and stdout; without one, use the commands: \
             `rulebench pages`, `evaluate`, `explain`, `check`, `test`, `export`, `import` \
             (`rulebench --help` lists them all)",
        ));
    }
    let db = Db::of(&cli);
    let app = db.open()?;
    let options = crate::tui::Options {
        db: Some(db.path),
        page: cli.page,
        mouse: cli.mouse,
        profile: cli.profile,
    };
    crate::tui::run(app, options).map_err(|e| usage(e.to_string()))?;
    Ok(Exit::Ok)
}

/// Writes one selection's result in a format.
fn evaluate_one<W: Write>(
    r: &crate::app::types::SelectionResult,
    format: Format,
    guard: bool,
    w: &mut W,
) -> std::io::Result<()> {
    match format {
        Format::Json => {
            print::json(w, r, &print::Fragments::new(&r.names, Some(0)))?;
            w.write_all(b"\n")
        }
        Format::Jsonl => print::target_lines(w, r),
        Format::Summary => print::summary(w, r, false),
        Format::Table => print::table(w, r),
        Format::Csv | Format::Tsv => {
            let mut csv = print::csv_writer(w, format == Format::Tsv);
            csv.write_record(print::CSV_HEADER)?;
            print::csv_rows(&mut csv, r, guard)?;
            csv.flush()
        }
        Format::Md => {
            print::markdown_head(w, r.page_id(), "selection", &r.names)?;
            print::markdown_row(w, r)?;
            print::markdown_foot(w)
        }
    }
}

/// Writes every selection of a page, one at a time: memory stays bounded by one
/// selection. A progress bar goes to stderr when it is a terminal.
fn evaluate_all<W: Write>(
    app: &App,
    page: &str,
    format: Format,
    guard: bool,
    w: &mut W,
) -> Result<std::io::Result<()>, Failure> {
    let evaluations = app.evaluate_all(page)?;
    let progress = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(evaluations.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let (page_name, source_name) = (
        evaluations.page().name.clone(),
        evaluations.page().source.name.clone(),
    );
    let names = evaluations.names().clone();
    let write = |w: &mut W| -> std::io::Result<()> {
        match format {
            Format::Json => {
                let f = print::Fragments::new(&names, Some(2));
                w.write_all(b"[")?;
                let mut any = false;
                for (i, r) in evaluations.enumerate() {
                    w.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
                    print::json(w, &r, &f)?;
                    progress.inc(1);
                    any = true;
                }
                w.write_all(if any { b"\n]\n" } else { b"]\n" })
            }
            Format::Jsonl => {
                let f = print::Fragments::new(&names, None);
                for r in evaluations {
                    print::json_line(w, &r, &f)?;
                    progress.inc(1);
                }
                Ok(())
            }
            Format::Summary => {
                for r in evaluations {
                    print::summary(w, &r, true)?;
                    progress.inc(1);
                }
                Ok(())
            }
            Format::Table => {
                for (i, r) in evaluations.enumerate() {
                    if i > 0 {
                        w.write_all(b"\n")?;
                    }
                    print::table(w, &r)?;
                    progress.inc(1);
                }
                Ok(())
            }
            Format::Csv | Format::Tsv => {
                let mut csv = print::csv_writer(w, format == Format::Tsv);
                csv.write_record(print::CSV_HEADER)?;
                for r in evaluations {
                    print::csv_rows(&mut csv, &r, guard)?;
                    progress.inc(1);
                }
                csv.flush()
            }
            Format::Md => {
                print::markdown_head(w, &page_name, &source_name, &names)?;
                for r in evaluations {
                    print::markdown_row(w, &r)?;
                    progress.inc(1);
                }
                print::markdown_foot(w)
            }
        }
    };
    let out = write(w);
    progress.finish_and_clear();
    Ok(out)
}

/// Runs a command (not the TUI).
pub fn run(cli: Cli, command: Command) -> Result<Exit, Failure> {
    let path = Db::of(&cli).path;
    run_command(cli, command).map_err(|f| name_the_database(f, &path))
}

/// A database error names the database file (`attempt to write a readonly database`
/// alone does not say which).
fn name_the_database(mut failure: Failure, path: &Path) -> Failure {
    if let Some(rest) = failure.message.strip_prefix("database: ") {
        failure.message = format!("database {}: {rest}", path.display());
    }
    failure
}

fn run_command(cli: Cli, command: Command) -> Result<Exit, Failure> {
    let db = Db::of(&cli);
    match command {
        Command::Test {
            target,
            format,
            pin,
            select,
        } => return test::run(&db, &target, format, pin, select.as_deref()),
        Command::Dataset { action } => return dataset::run(&db, action),
        Command::Watch { page } => return dataset::watch(&db, &page),
        Command::Eval { logic, data } => {
            if logic == "-" && data == "-" {
                return Err(usage("--logic and --data cannot both read stdin (-)"));
            }
            let stdin = |text: String| -> Result<String, Failure> {
                if text == "-" {
                    read_input(std::io::stdin(), "<stdin>", MAX_RULE_FILE_BYTES * 64)
                } else {
                    Ok(text)
                }
            };
            let (logic, data) = (stdin(logic)?, stdin(data)?);
            let parse = |name: &str, text: &str| {
                parse_json::<Value>(text).map_err(|d| usage(format!("--{name}: {d}")))
            };
            let (logic, data) = (parse("logic", &logic)?, parse("data", &data)?);
            let result = crate::app::types::apply(&logic, &data)
                .map_err(|e| usage(format!("--logic: {e}")))?;
            write_json(&format!("{result}\n"))?;
        }
        Command::Diff {
            old,
            new,
            select,
            all: _,
            format,
            exit_code,
        } => {
            if old == "-" && new == "-" {
                return Err(usage("OLD and NEW cannot both read stdin (-)"));
            }
            let app = db.open()?;
            let load = |arg: &str| -> Result<Option<(String, String)>, Failure> {
                if arg == "-" || Path::new(arg).is_file() {
                    Ok(Some(read_arg(arg, MAX_PAGE_BYTES)?))
                } else {
                    Ok(None)
                }
            };
            let (a, b) = (load(&old)?, load(&new)?);
            let (old_ref, new_ref) = (page_ref(&a, &old), page_ref(&b, &new));
            let d = app.diff(old_ref, new_ref, select.as_deref())?;
            match format {
                diff::DiffFormat::Table => write_text(&diff::text(&d, &old, &new))?,
                diff::DiffFormat::Md => write_text(&diff::markdown(&d, &old, &new))?,
                diff::DiffFormat::Json => write_json(&diff::json(&d, &old, &new))?,
            }
            if exit_code && d.verdicts_moved() {
                return Ok(Exit::Problems);
            }
        }
        Command::Matrix {
            page,
            select,
            format,
            no_formula_guard,
        } => {
            let mut app = db.open()?;
            let result = app.evaluate(&page, &select)?;
            let rules = app.page(&page)?.0.rules;
            let mut out = Vec::new();
            matrix::write(&mut out, &result, &rules, format, !no_formula_guard)
                .map_err(|e| usage(format!("stdout: {e}")))?;
            write_out(&String::from_utf8_lossy(&out))?;
        }
        Command::Db { format } => {
            let info = db.open()?.info()?;
            match format {
                InfoFormat::Json => write_json(&pretty(&info))?,
                InfoFormat::Text => write_text(&output::db_info(&info))?,
            }
        }
        Command::Page { action } => match action {
            PageAction::Rm { page, yes } => {
                let mut app = db.open()?;
                let (p, _) = app.page(&page)?;
                if !yes {
                    confirm(&format!(
                        "delete page {page} ({}: {} rules, {} sources, {} targets)? [y/N] ",
                        p.name,
                        p.rules.len(),
                        p.source.rows.len(),
                        p.target.rows.len()
                    ))?;
                }
                app.delete_page(&page)?;
                db.status(&format!("deleted page {page}"));
            }
            PageAction::Log {
                page,
                format,
                limit,
            } => {
                let app = db.open()?;
                let mut log = app.revisions(&page)?;
                if let Some(n) = limit {
                    log.truncate(n);
                }
                match format {
                    ListFormat::Json => write_json(&pretty(&log))?,
                    ListFormat::Table => write_text(&output::revisions_table(&log))?,
                }
            }
            PageAction::Prune { at, yes } => {
                let (page, Some(rev)) = crate::app::history::split_spec(&at).map_err(usage)? else {
                    return Err(usage(format!(
                        "name the first revision to keep: `{}@N`",
                        crate::app::types::sanitize(&at)
                    )));
                };
                let mut app = db.open()?;
                let n = app.resolve_revision(page, rev)?;
                if !yes {
                    confirm(&format!(
                        "forget the history of {page} before revision {n}? [y/N] "
                    ))?;
                }
                let (n, entries, lines) = app.prune_history(page, n)?;
                db.status(&format!(
                    "pruned the history of {page} before revision {n} ({entries} log entries, {lines} revisions)"
                ));
            }
            PageAction::Restore {
                at,
                rule,
                policies,
                override_keys,
            } => {
                let (page, Some(rev)) = crate::app::history::split_spec(&at).map_err(usage)? else {
                    return Err(usage(format!(
                        "name the revision to restore from: `{}@N` (or `@-1` for the previous one)",
                        crate::app::types::sanitize(&at)
                    )));
                };
                let mut app = db.open()?;
                let n = app.resolve_revision(page, rev)?;
                let (what, done) = if let Some(rule) = &rule {
                    (format!("rule {rule}"), app.restore_rule(page, n, rule)?)
                } else if policies {
                    ("the policies".to_owned(), app.restore_policies(page, n)?)
                } else if let Some([s, t]) = override_keys.as_deref() {
                    (
                        format!("override {s} × {t}"),
                        app.restore_override(page, n, s, t)?,
                    )
                } else {
                    (format!("page {page}"), app.restore_page(page, n)?)
                };
                match done {
                    Some(revision) => db.status(&format!(
                        "restored {what} from revision {n} (revision {revision})"
                    )),
                    None => db.status(&format!(
                        "{what} is as at revision {n} already: nothing changed"
                    )),
                }
            }
            PageAction::Rename { page, new_id } => {
                let revision = db.open()?.rename_page(&page, &new_id)?;
                db.status(&format!(
                    "renamed page {page} to {new_id} (revision {revision})"
                ));
            }
        },
        Command::Schema => write_json(crate::app::types::PAGE_SCHEMA)?,
        Command::Completions { shell } => write_text(&completion_script(shell))?,
        Command::Man => {
            let mut out = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command())
                .render(&mut out)
                .map_err(|e| usage(format!("man page: {e}")))?;
            write_out(&String::from_utf8_lossy(&out))?;
        }
        Command::Bench {
            workbench: Some(file),
            rounds,
            ..
        } => write_text(&bench_workbench::run(&file, rounds)?)?,
        Command::Bench {
            targets,
            rules,
            sources,
            sample: _,
            write_page: Some(path),
            assertions,
            unique,
            ..
        } => {
            let spread = if unique {
                crate::app::synth::Spread::Unique
            } else {
                crate::app::synth::Spread::Realistic
            };
            let mut page = crate::app::synth::page(targets, rules, sources, spread, 42);
            page.assertions = crate::app::synth::assertions(&page, assertions);
            std::fs::write(&path, pretty(&page))
                .map_err(|e| usage(format!("{}: {e}", path.display())))?;
            write_text(&format!(
                "wrote {} ({targets} targets × {rules} rules × {sources} sources)\n",
                path.display()
            ))?;
        }
        Command::Bench {
            targets,
            rules,
            sources,
            sample,
            write_page: None,
            ..
        } => write_text(&crate::app::bench::run(targets, rules, sources, sample))?,
        Command::Explain {
            page,
            select,
            target,
            rule,
            format,
            tree,
        } => {
            let app = db.open()?;
            let e = app.explain(&page, &select, &target, rule.as_deref())?;
            match format {
                explain::ExplainFormat::Json => write_json(&pretty(&e))?,
                explain::ExplainFormat::Text => write_text(&explain::text(&e, tree))?,
            }
        }
        Command::Expr {
            expression,
            to_infix,
            page,
        } => {
            let fields = match page {
                Some(id) => crate::app::types::infix::fields_of(&db.open()?.page(&id)?.0),
                None => crate::app::types::infix::Fields::default(),
            };
            // JSONLogic, or infix whose strings are JSON strings: escaped as JSON.
            write_json(&expr::run(&expression, to_infix, &fields)?)?;
        }
        Command::Pages { format, json } => {
            let app = db.open()?;
            let pages = app.pages()?;
            if json || format == ListFormat::Json {
                write_json(&pretty(&pages))?;
            } else {
                write_text(&output::pages_table(&pages))?;
            }
        }
        Command::Import { files, replace } => {
            if files.iter().filter(|f| *f == Path::new("-")).count() > 1 {
                return Err(usage("stdin (-) can be read once: name it once"));
            }
            let mut app = db.open()?;
            let mut failed = Vec::new();
            for file in &files {
                let outcome =
                    read_arg(&file.to_string_lossy(), MAX_PAGE_BYTES).and_then(|(text, origin)| {
                        app.import(&text, &origin, replace).map_err(Failure::from)
                    });
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
        }
        Command::Export { page, output } => {
            let app = db.open()?;
            if let Some(path) = &output {
                app.refuse_database_file(path)?;
            }
            let (page, _) = app.page_spec(&page)?;
            let text = pretty(&with_schema(&page));
            match output {
                Some(path) => std::fs::write(&path, text)
                    .map_err(|e| usage(format!("{}: {e}", path.display())))?,
                None => write_text(&text)?,
            }
        }
        Command::Evaluate {
            page,
            select,
            all,
            format,
            no_formula_guard,
        } => {
            let mut app = db.open()?;
            let format = format.unwrap_or(Format::Json);
            let out = std::io::stdout();
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out.lock());
            let written = if all {
                evaluate_all(&app, &page, format, !no_formula_guard, &mut w)?
            } else {
                let select = select.expect("clap requires --select without --all");
                let result = app.evaluate(&page, &select)?;
                evaluate_one(&result, format, !no_formula_guard, &mut w)
            };
            match written.and_then(|()| w.flush()) {
                Ok(()) => {}
                // A closed pipe (`| head`) is not an error worth reporting.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => return Err(usage(format!("stdout: {e}"))),
            }
        }
        Command::Check {
            target,
            format,
            sql,
        } => {
            let path = Path::new(&target);
            let checked = if target == "-" || path.is_file() {
                App::check_text_with(&read_arg(&target, MAX_PAGE_BYTES)?.0, sql)
            } else {
                db.open()?.check_page_with(&target, sql)?
            };
            let diags = checked.diagnostics;
            let sql_summary = checked.sql.map(|(dialect, translated, rules)| {
                format!(
                    "{translated} of {rules} rules translate to {} SQL",
                    dialect.name()
                )
            });
            let errors = diags.iter().filter(|d| d.is_error()).count();
            match format {
                CheckFormat::Json => write_json(&pretty(&diags))?,
                CheckFormat::Text => {
                    let target = if target == "-" { "<stdin>" } else { &target };
                    let mut text = String::new();
                    for d in &diags {
                        text.push_str(&format!("{target}: {d}\n"));
                    }
                    let warnings = diags.len() - errors;
                    if let Some(summary) = &sql_summary {
                        text.push_str(&format!("{target}: {summary}\n"));
                    }
                    text.push_str(&format!("{target}: {errors} errors, {warnings} warnings\n"));
                    write_text(&text)?;
                }
            }
            if errors > 0 {
                return Ok(Exit::Problems);
            }
        }
        Command::Sql {
            page,
            dialect,
            select,
            all,
            data,
            source_table,
            target_table,
            overrides_table,
            output,
        } => {
            let app = db.open()?;
            let request = crate::app::sql::SqlRequest {
                dialect,
                select,
                all,
                source_table,
                target_table,
                overrides_table,
            };
            let text = if data {
                app.sql_data(&page, &request)?
            } else {
                app.sql_query(&page, &request)?
            };
            match output {
                Some(path) => {
                    app.refuse_database_file(&path)?;
                    std::fs::write(&path, text)
                        .map_err(|e| usage(format!("{}: {e}", path.display())))?
                }
                // String literals spell unsafe characters by code: the text is safe.
                None => write_text(&text)?,
            }
        }
        Command::Rule { action } => {
            let mut app = db.open()?;
            match action {
                RuleAction::Add {
                    page,
                    file,
                    replace,
                } => {
                    let (text, origin) = read_arg(&file, MAX_RULE_FILE_BYTES)?;
                    let (rule, revision, warnings) =
                        app.add_rule(&page, &text, &origin, replace)?;
                    for w in &warnings {
                        eprintln!("{}", sanitize_lines(&format!("{origin}: {w}")));
                    }
                    db.status(&format!(
                        "saved rule {} in {page} (revision {revision})",
                        rule.id
                    ));
                }
                RuleAction::Rm { page, rule_id } => {
                    let revision = app.remove_rule(&page, &rule_id)?;
                    db.status(&format!(
                        "removed rule {rule_id} from {page} (revision {revision})"
                    ));
                }
            }
        }
        Command::Override { action } => {
            let mut app = db.open()?;
            match action {
                OverrideAction::Add {
                    page,
                    source,
                    target,
                    value,
                    note,
                } => {
                    let revision = app.set_override(&page, &source, &target, value, note)?;
                    db.status(&format!("override set in {page} (revision {revision})"));
                }
                OverrideAction::Rm {
                    page,
                    source,
                    target,
                } => {
                    let revision = app.remove_override(&page, &source, &target)?;
                    db.status(&format!(
                        "override removed from {page} (revision {revision})"
                    ));
                }
            }
        }
        Command::Policy {
            action: PolicyAction::Set { page, assignments },
        } => {
            let mut app = db.open()?;
            let (p, revision) = app.set_policy(&page, &assignments)?;
            db.status(&format!(
                "policy of {page} set (revision {revision}): {}",
                serde_json::json!({"devicePolicy": p.device_policy, "selectionPolicy": p.selection_policy})
            ));
        }
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod database_errors {
    use super::*;

    #[test]
    fn a_database_error_names_the_file() {
        let f = Failure {
            message: "database: attempt to write a readonly database".into(),
            code: 2,
        };
        let named = name_the_database(f, Path::new("/data/x.db"));
        assert_eq!(
            named.message,
            "database /data/x.db: attempt to write a readonly database"
        );
        let other = Failure {
            message: "page `x` not found".into(),
            code: 2,
        };
        assert_eq!(
            name_the_database(other, Path::new("/data/x.db")).message,
            "page `x` not found"
        );
    }
}

//! The command line: the arguments ([`Cli`], [`Command`]), and a dispatcher that hands
//! each command to its own file under `commands/` (its arguments beside its code). What
//! every command shares (the database, exit status, reading and writing) is in `io`;
//! what they print comes from the printers (`crate::print`).

mod commands;
pub mod common;
pub mod io;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use commands::completions::{Shell, completion_script};
use commands::*;
pub use common::db_in_words;
pub use io::{Db, Exit, Failure, MAX_PAGE_BYTES, MAX_RULE_FILE_BYTES, SCHEMA_ID};
use io::{name_the_database, usage};

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

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List pages
    #[command(
        after_help = "Examples:\n  rulebench pages\n  rulebench pages --format json | jq -r '.[].id'\n  rulebench --db team.db pages"
    )]
    Pages(pages::Args),
    /// Import page files (all or nothing per file)
    #[command(
        after_help = "Examples:\n  rulebench import my-page.json\n  rulebench import a.json b.json --replace\n  curl -s https://example.com/page.json | rulebench import -"
    )]
    Import(import::Args),
    /// Write a page file (stdout by default)
    #[command(
        after_help = "Examples:\n  rulebench export llm > llm.json\n  rulebench export llm@-1 -o before.json   # the page one revision ago"
    )]
    Export(export::Args),
    /// Evaluate one selection or every source row
    Evaluate(evaluate::Args),
    /// What changed between two versions of a page, and which cells, verdicts and
    /// recommendations it moves
    #[command(after_help = "\
OLD and NEW are page files (- reads one from stdin), stored page ids, or revisions
of a stored page (PAGE@N; PAGE@-1 is the one before the current). Rules are matched by
id, rows and overrides by key. With --exit-code, exit 1 when any verdict, selection
verdict or recommendation moved (a CI gate for rule changes).

Examples:
  rulebench diff my-page@-1 my-page          # what the last change did
  rulebench export my-page -o before.json   # then edit, import --replace or keep the file
  rulebench diff before.json my-page --format md --exit-code")]
    Diff(diff::Args),
    /// The rule × target grid of one selection, as the workbench shows it
    Matrix(matrix::Args),
    /// Validate a page's rules (a stored page or a page file); exit 1 on errors
    #[command(
        after_help = "Examples:\n  rulebench check my-page.json\n  rulebench check llm --sql duckdb          # also: which rules translate\n  rulebench check llm --format json"
    )]
    Check(check::Args),
    /// What can be decided about a page's rules for any row (never true, always true,
    /// implied, equivalent) and its current rows (vetoes, unreachable thresholds, stale
    /// overrides), each with a witness
    #[command(
        after_help = "Examples:\n  rulebench analyze llm\n  rulebench analyze my-page.json --format json"
    )]
    Analyze(analyze::Args),
    /// A page's rules and policies as one SQL query over a source and a target table
    /// (or, with --data, the tables' DDL and rows)
    #[command(
        after_help = "Examples:\n  rulebench sql llm --dialect duckdb -o verdicts.sql\n  rulebench sql llm --dialect postgres --all --source-table clients --target-table models\n  rulebench sql llm --dialect sqlite --data | sqlite3 llm.sqlite"
    )]
    Sql(sql::Args),
    /// Plain JSONLogic: apply --logic to --data and print the result
    #[command(
        after_help = "Examples:\n  rulebench eval --logic '{\"<\": [{\"var\": \"a\"}, 3]}' --data '{\"a\": 1}'\n  echo '{\"a\": 1}' | rulebench eval --logic '{\"var\": \"a\"}' --data -"
    )]
    Eval(eval::Args),
    /// Why a target got its verdict for a selection, and why each rule passed or failed
    #[command(
        after_help = "Examples:\n  rulebench explain llm --select agent --target gpt-4o\n  rulebench explain llm --select agent --target o3-mini --rule tools --tree\n  rulebench explain llm --select agent --target gpt-4o --format json"
    )]
    Explain(explain::Args),
    /// Infix expression → JSONLogic (or back with --to-infix)
    #[command(
        after_help = "Examples:\n  rulebench expr 'source.age >= 18 and target.country == source.country'\n  rulebench expr --to-infix '{\"==\": [{\"var\": \"target.mode\"}, \"chat\"]}'\n  rulebench expr --page llm 'target.max_input_tokenz > 1000'   # did you mean …?"
    )]
    Expr(expr::Args),
    /// Add rules (from a file, or one from --expr), or remove one
    #[command(
        after_help = "Examples:\n  rulebench rule add llm rules.jsonl\n  rulebench rule add llm --name Vision --expr 'target.supports_vision == true'\n  rulebench rule rm llm vision"
    )]
    Rule(rule::Args),
    /// Add or remove an override
    #[command(
        after_help = "Examples:\n  rulebench override add llm --source agent --target o3-mini --value true --note 'tested by hand'\n  rulebench override rm llm --source agent --target o3-mini"
    )]
    Override(overrides::Args),
    /// Set policy values
    #[command(
        after_help = "Examples:\n  rulebench policy set llm fullThreshold=0.9\n  rulebench policy set llm requiredMode=ignore-required mode=all-devices-full-is-compatible"
    )]
    Policy(policy::Args),
    /// Run a page's verdict assertions, or check a table of expected outcomes (a stored
    /// page or a page file); exit 1 on a failure
    #[command(
        after_help = "Examples:\n  rulebench test llm\n  rulebench test my-page.json --format junit > junit.xml\n  rulebench test llm --pin --select agent   # pin today's verdicts\n  rulebench test llm --pin-to expected.csv  # today's outcomes as a table\n  rulebench test llm --expect expected.csv --format junit > junit.xml\n  rulebench test llm --expect expected.xlsx --sheet Expected"
    )]
    Test(test::Args),
    /// Add, remove or list a page's verdict assertions
    #[command(
        after_help = "Examples:\n  rulebench assertion add llm checks.jsonl\n  rulebench assertion list llm\n  rulebench assertion rm llm agent-has-a-model"
    )]
    Assertion(assertion::Args),
    /// Import a dataset file, set a dataset's label, priority and summary, or show its
    /// fields
    #[command(
        after_help = "Examples:\n  rulebench dataset import llm target models.json --name-field model --link\n  rulebench dataset set llm target --summary litellm_provider,mode\n  rulebench dataset schema llm target"
    )]
    Dataset(dataset::Args),
    /// Reload a page's linked dataset files when they change (until Ctrl-C or SIGTERM)
    #[command(
        after_help = "Examples:\n  rulebench watch llm                 # until Ctrl-C\n  rulebench dataset import llm target models.csv --link && rulebench watch llm"
    )]
    Watch(watch::Args),
    /// The database: its file, schema version, size and pages
    Db(db::Args),
    /// Make a page from data files; delete, rename, log, prune or restore a page
    #[command(
        after_help = "Examples:\n  rulebench page init llm --sources clients.parquet --targets models.json --name-field model\n  rulebench page log llm -n 5\n  rulebench page restore llm@-1\n  rulebench page rename llm llm-2026"
    )]
    Page(page::Args),
    /// Print the JSON Schema of page files
    #[command(
        after_help = "Examples:\n  rulebench schema > page.schema.json\n  rulebench export llm | check-jsonschema --schemafile page.schema.json -"
    )]
    Schema,
    /// Print a shell's completion script (commands, options and page ids)
    #[command(after_help = "Install (re-run on upgrade):\n  \
        bash: echo 'source <(rulebench completions bash)' >> ~/.bashrc\n  \
        zsh:  echo 'source <(rulebench completions zsh)' >> ~/.zshrc\n  \
        fish: rulebench completions fish > ~/.config/fish/completions/rulebench.fish\n\n\
        Examples:\n  \
        rulebench completions bash > /etc/bash_completion.d/rulebench\n  \
        source <(rulebench completions zsh)")]
    Completions(completions::Args),
    /// The workbench's config file: its path, its defaults written out, a check
    #[command(
        after_help = "Examples:\n  rulebench config --path\n  rulebench config --print-default > \"$(rulebench config --path)\"\n  rulebench config --check\n  RULEBENCH_CONFIG=./light.toml rulebench"
    )]
    Config(config::Args),
    /// Print the man page of rulebench or of one command (roff: `rulebench man evaluate |
    /// man -l -`)
    Man(man::Args),
    /// Measure the matrix on a synthetic page
    #[command(
        after_help = "Examples:\n  rulebench bench --targets 100000 --rules 100\n  rulebench bench --write-page big.json --targets 100000 --rules 100\n  rulebench bench --workbench big.json --rounds 5\n  rulebench bench --import 1000000\n  rulebench bench --compare --sources 100"
    )]
    Bench(bench::Args),
}

impl Cli {
    /// The database the global options name.
    pub fn database(&self) -> Db {
        Db::new(
            self.db.as_deref(),
            self.no_seed,
            self.quiet,
            self.if_revision,
        )
    }
}

/// Opens the workbench.
pub fn run_tui(cli: Cli) -> Result<Exit, Failure> {
    // The config file first: one that does not read is said before anything starts.
    let settings = match crate::tui::config::path() {
        Some(path) => crate::tui::config::load(&path).map_err(usage)?,
        None => Default::default(),
    };
    crate::tui::keymap::remap(settings.remaps).map_err(usage)?;
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err(usage(
            "the workbench needs a terminal on stdin and stdout; without one, use the commands: \
             `rulebench pages`, `evaluate`, `explain`, `check`, `test`, `export`, `import` \
             (`rulebench --help` lists them all)",
        ));
    }
    let db = cli.database();
    let app = db.open()?;
    // The config's default page, when it is not in the database (removed, renamed):
    // the picker, and the status line says why.
    let mut note = None;
    let default_page = settings.default_page.filter(|id| {
        let there = app.revision(id).ok().flatten().is_some();
        if !there {
            note = Some(format!(
                "the config's default page `{}` is not in this database: the page picker instead",
                crate::app::text::sanitize(id)
            ));
        }
        there
    });
    let options = crate::tui::Options {
        db: Some(db.path),
        note: if cli.page.is_some() { None } else { note },
        page: cli.page.or(default_page),
        mouse: cli.mouse || settings.mouse,
        theme: crate::tui::theme::Theme::named(settings.scheme),
        profile: cli.profile,
    };
    crate::tui::run(app, options).map_err(|e| usage(e.to_string()))?;
    Ok(Exit::Ok)
}

/// Runs a command (not the TUI).
pub fn run(cli: Cli, command: Command) -> Result<Exit, Failure> {
    let path = cli.database().path;
    run_command(cli, command).map_err(|f| name_the_database(f, &path))
}

fn run_command(cli: Cli, command: Command) -> Result<Exit, Failure> {
    let db = cli.database();
    match command {
        Command::Pages(args) => pages::run(&db, args),
        Command::Import(args) => import::run(&db, args),
        Command::Export(args) => export::run(&db, args),
        Command::Evaluate(args) => evaluate::run(&db, args),
        Command::Diff(args) => diff::run(&db, args),
        Command::Matrix(args) => matrix::run(&db, args),
        Command::Check(args) => check::run(&db, args),
        Command::Analyze(args) => analyze::run(&db, args),
        Command::Sql(args) => sql::run(&db, args),
        Command::Eval(args) => eval::run(args),
        Command::Explain(args) => explain::run(&db, args),
        Command::Expr(args) => expr::run(&db, args),
        Command::Rule(args) => rule::run(&db, args),
        Command::Assertion(args) => assertion::run(&db, args),
        Command::Override(args) => overrides::run(&db, args),
        Command::Policy(args) => policy::run(&db, args),
        Command::Test(args) => test::run(&db, args),
        Command::Dataset(args) => dataset::run(&db, args.action),
        Command::Watch(args) => watch::run(&db, args),
        Command::Db(args) => db::run(&db, args),
        Command::Page(args) => page::run(&db, args),
        Command::Schema => schema::run(),
        Command::Completions(args) => completions::run(args),
        Command::Config(args) => config::run(args),
        Command::Man(args) => man::run(<Cli as clap::CommandFactory>::command(), args),
        Command::Bench(args) => bench::run(args),
    }
}

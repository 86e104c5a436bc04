//! `rulebench page`: make a page from data files, delete, rename, log, prune, restore

use crate::cli::common::{ListFormat, page_ids};
use crate::cli::io::{Db, Exit, Failure, confirm, usage};
use crate::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: PageAction,
}

// Parsed once per run: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(clap::Subcommand, Debug)]
pub enum PageAction {
    /// Make a page from two data files: the keys and labels are inferred (and said),
    /// the policies are the defaults, and there are no rules yet
    #[command(after_help = "\
Each file is read as `dataset import` reads it (CSV, TSV, JSON, JSON Lines, Parquet,
Arrow, Excel); the reading flags apply to the file they fit (--name-field to a JSON
object, --sheet to a workbook, --type to the file that has the field).

Examples:
  rulebench page init llm --sources clients.parquet --targets models.json --name-field model
  rulebench page init apps --sources apps.xlsx --sheet Apps --targets browsers.csv --target-key browser,version
  rulebench page init llm --sources clients.csv --targets models.json --link   # watch reloads both")]
    Init {
        /// The new page's id: lowercase letters, digits and single hyphens
        page: String,
        /// The source rows' file
        #[arg(long, value_name = "FILE")]
        sources: std::path::PathBuf,
        /// The target rows' file
        #[arg(long, value_name = "FILE")]
        targets: std::path::PathBuf,
        /// The page's display name [default: its id]
        #[arg(long)]
        name: Option<String>,
        /// The source key fields, comma-separated [default: inferred]
        #[arg(long, value_name = "F1,F2", value_delimiter = ',')]
        source_key: Option<Vec<String>>,
        /// The target key fields, comma-separated [default: inferred; a JSON object's
        /// member names]
        #[arg(long, value_name = "F1,F2", value_delimiter = ',')]
        target_key: Option<Vec<String>>,
        /// The source label field [default: inferred]
        #[arg(long, value_name = "FIELD")]
        source_label: Option<String>,
        /// The target label field [default: inferred]
        #[arg(long, value_name = "FIELD")]
        target_label: Option<String>,
        /// Link both datasets to their files (`rulebench watch` reloads them on change)
        #[arg(long)]
        link: bool,
        /// Replace a page with this id
        #[arg(long)]
        replace: bool,
        #[command(flatten)]
        read: crate::cli::common::ReadArgs,
    },
    /// Delete a page and everything it owns (asks on a terminal; --yes otherwise)
    #[command(after_help = "Examples:\n  rulebench page rm old-page --yes")]
    Rm {
        /// The page's id
        #[arg(add = page_ids())]
        page: String,
        /// Delete without asking
        #[arg(short, long)]
        yes: bool,
    },
    /// Give a page a new id (its rules, rows, history and assertions follow)
    #[command(after_help = "Examples:\n  rulebench page rename llm llm-2026")]
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
restored with `rulebench page restore PAGE@N`.

Examples:
  rulebench page log llm -n 5
  rulebench page log llm --format json")]
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
        /// Write to FILE (whole or not at all) instead of stdout; - is stdout
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
    /// Forget a page's history before a revision (the page reads back at it and after;
    /// asks on a terminal, --yes otherwise)
    #[command(
        after_help = "Examples:\n  rulebench page prune llm@-10 --yes   # keep the last ten revisions"
    )]
    Prune {
        /// The page and the first revision to keep: PAGE@N, or PAGE@-K
        #[arg(value_name = "PAGE@N", add = page_ids())]
        at: String,
        /// Prune without asking
        #[arg(short, long)]
        yes: bool,
    },
    /// Restore the page, a rule, the policies, an override or an assertion as it was at
    /// a revision (itself a new revision: nothing is lost)
    #[command(after_help = "\
Examples:
  rulebench page restore my-page@-1                      # undo the last change
  rulebench page restore my-page@12 --rule has-vision    # a rule, also a deleted one
  rulebench page restore my-page@12 --policies
  rulebench page restore my-page@12 --override 'id=ios' 'id=gpt-4o'
  rulebench page restore my-page@12 --assertion ios-full # removed when there was none")]
    Restore {
        /// The page and revision: PAGE@N, or PAGE@-K for K revisions back
        #[arg(value_name = "PAGE@N", add = page_ids())]
        at: String,
        /// Only this rule (by id)
        #[arg(long, value_name = "ID", conflicts_with_all = ["policies", "override_keys", "assertion"])]
        rule: Option<String>,
        /// Only the device and selection policies
        #[arg(long, conflicts_with_all = ["override_keys", "assertion"])]
        policies: bool,
        /// Only this assertion (by id), in its place then; removed when there was none
        /// at that revision
        #[arg(long, value_name = "ID", conflicts_with = "override_keys")]
        assertion: Option<String>,
        /// Only the override of this pair (source row key, target row key); removed
        /// when there was none at that revision
        #[arg(long = "override", value_names = ["SOURCE", "TARGET"], num_args = 2, id = "override_keys")]
        override_keys: Option<Vec<String>>,
    },
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args { action } = args;
    match action {
        PageAction::Init {
            page,
            sources,
            targets,
            name,
            source_key,
            target_key,
            source_label,
            target_label,
            link,
            replace,
            read,
        } => {
            let read = read.options();
            let spec = crate::app::init::PageInit {
                page_id: page,
                name,
                source: crate::app::init::SideInit {
                    file: sources,
                    key: source_key,
                    label: source_label,
                    read: read.clone(),
                },
                target: crate::app::init::SideInit {
                    file: targets,
                    key: target_key,
                    label: target_label,
                    read,
                },
                link,
                replace,
            };
            let made = db.open()?.init_page(&spec)?;
            for w in &made.warnings {
                eprintln!(
                    "{}: {}",
                    made.page_id,
                    crate::app::text::sanitize_lines(&w.to_string())
                );
            }
            let mut text = String::new();
            for c in &made.choices {
                text.push_str(&format!("{}\n", crate::app::text::sanitize(c)));
            }
            text.push_str(&format!(
                "made page {} ({} sources × {} targets, no rules yet; revision {})\n\
                 next: rulebench rule add {} RULES.json   (or open it: rulebench --page {})\n",
                made.page_id, made.rows.0, made.rows.1, made.revision, made.page_id, made.page_id
            ));
            db.status(&text);
        }
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
            output,
        } => {
            let app = db.read()?;
            let mut log = app.revisions(&page)?;
            if let Some(n) = limit {
                log.truncate(n);
            }
            let doc = serde_json::to_value(&log).expect("the log serializes");
            let items = doc.as_array().cloned().unwrap_or_default();
            crate::cli::io::emit_listing(
                &app,
                output.as_deref(),
                format,
                || print::listing::revisions_table(&log),
                &doc,
                (&["revision", "at", "change", "author"], &items),
            )?;
        }
        PageAction::Prune { at, yes } => {
            let (page, Some(rev)) = crate::app::history::split_spec(&at).map_err(usage)? else {
                return Err(usage(format!(
                    "name the first revision to keep: `{}@N`",
                    crate::app::text::sanitize(&at)
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
            assertion,
            override_keys,
        } => {
            let (page, Some(rev)) = crate::app::history::split_spec(&at).map_err(usage)? else {
                return Err(usage(format!(
                    "name the revision to restore from: `{}@N` (or `@-1` for the previous one)",
                    crate::app::text::sanitize(&at)
                )));
            };
            let mut app = db.open()?;
            let n = app.resolve_revision(page, rev)?;
            let (what, done) = if let Some(rule) = &rule {
                (format!("rule {rule}"), app.restore_rule(page, n, rule)?)
            } else if policies {
                ("the policies".to_owned(), app.restore_policies(page, n)?)
            } else if let Some(id) = &assertion {
                (
                    format!("assertion {id}"),
                    app.restore_assertion(page, n, id)?,
                )
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
    };
    Ok(Exit::Ok)
}

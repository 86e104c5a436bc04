//! What every command shares: the database the global options name, how a command
//! ends (exit status), and reading inputs and writing outputs safely (limits, UTF-8
//! with located errors, terminal controls escaped, a closed pipe not an error).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::app::text::sanitize_lines;
use crate::app::{App, AppError, default_db_path};

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
    /// The database of the global options: `--db`, `--no-seed`, `--quiet`,
    /// `--if-revision`.
    pub fn new(db: Option<&Path>, no_seed: bool, quiet: bool, if_revision: Option<i64>) -> Db {
        // An empty `RULEBENCH_DB=` (or `--db ''`) means unset.
        let named = db
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf);
        Db {
            explicit: named.is_some(),
            path: named.unwrap_or_else(default_db_path),
            seed: !no_seed,
            quiet,
            if_revision,
        }
    }

    /// Opens the database to read pages: a `--db` (or `$RULEBENCH_DB`) file that does
    /// not exist is an error naming it, and nothing is created (a typo seeds no
    /// database). The default database is created and seeded as [`Db::open`] does.
    pub fn read(&self) -> Result<App, Failure> {
        if self.explicit && !self.path.exists() {
            return Err(usage(format!(
                "database {} does not exist (hint: check the path; `import`, `page init` and the workbench create a database, seeded with the sample pages unless --no-seed)",
                sanitize_lines(&self.path.display().to_string())
            )));
        }
        self.open()
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

pub fn usage(message: impl Into<String>) -> Failure {
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
pub fn read_input(mut from: impl Read, origin: &str, limit: u64) -> Result<String, Failure> {
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
pub fn read_arg(arg: &str, limit: u64) -> Result<(String, String), Failure> {
    if arg == "-" {
        Ok((
            read_input(std::io::stdin(), "<stdin>", limit)?,
            "<stdin>".to_owned(),
        ))
    } else {
        Ok((read_file_within(Path::new(arg), limit)?, arg.to_owned()))
    }
}

/// Where a data file argument's bytes come from: the file, or (for `-`) stdin, read
/// into `stdin` (which the input borrows).
pub fn data_input<'a>(
    file: &'a Path,
    stdin: &'a mut Vec<u8>,
) -> Result<crate::app::dataset::DataInput<'a>, Failure> {
    if file != Path::new("-") {
        return Ok(crate::app::dataset::DataInput::File(file));
    }
    *stdin = read_stdin_bytes(MAX_PAGE_BYTES)?;
    Ok(crate::app::dataset::DataInput::Bytes {
        name: "<stdin>",
        bytes: stdin,
    })
}

/// Stdin's bytes (a data file), up to `limit`.
pub fn read_stdin_bytes(limit: u64) -> Result<Vec<u8>, Failure> {
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

pub fn read_file_within(path: &Path, limit: u64) -> Result<String, Failure> {
    let shown = path.display().to_string();
    let file =
        std::fs::File::open(path).map_err(|e| usage(format!("{}: {e}", sanitize_lines(&shown))))?;
    read_input(file, &shown, limit)
}

/// Writes human text to stdout: every character that must not reach a terminal raw is
/// shown escaped ([`sanitize_lines`]); line breaks stay.
pub fn write_text(text: &str) -> Result<(), Failure> {
    write_out(&sanitize_lines(text))
}

/// Writes JSON text to stdout: such characters become `\uXXXX` escapes, the same JSON.
pub fn write_json(text: &str) -> Result<(), Failure> {
    write_out(&crate::app::text::json_safe(text))
}

/// Writes text as it is: only for text already made safe (through [`write_text`] or
/// [`write_json`]).
pub fn write_out(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth reporting.
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(usage(format!("stdout: {e}"))),
    }
}

/// A page argument as read: a page file's text, else a stored page's id.
pub fn page_ref<'a>(loaded: &'a Option<(String, String)>, arg: &'a str) -> crate::app::PageRef<'a> {
    match loaded {
        Some((text, origin)) => crate::app::PageRef::Text { text, origin },
        None => crate::app::PageRef::Stored(arg),
    }
}

/// Asks a yes/no question on the terminal; without one (or on anything but yes), the
/// command stops with exit 2 and nothing changed.
pub fn confirm(question: &str) -> Result<(), Failure> {
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
pub fn with_schema(page: &crate::app::types::Page) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("$schema".into(), Value::String(SCHEMA_ID.into()));
    if let Value::Object(fields) = serde_json::to_value(page).expect("pages serialize") {
        doc.extend(fields);
    }
    Value::Object(doc)
}

pub fn pretty(v: &impl serde::Serialize) -> String {
    let s = serde_json::to_string_pretty(v).expect("serializable");
    // Stored strings may hold terminal controls serde leaves raw: escaped, same JSON.
    let mut s = crate::app::text::json_safe(&s).into_owned();
    s.push('\n');
    s
}

/// A database error names the database file (`attempt to write a readonly database`
/// alone does not say which).
pub fn name_the_database(mut failure: Failure, path: &Path) -> Failure {
    if let Some(rest) = failure.message.strip_prefix("database: ") {
        failure.message = format!("database {}: {rest}", path.display());
    }
    failure
}

/// Where a command's data goes: stdout, or a file written whole or not at all (a
/// temporary file beside it, renamed over it by [`Output::commit`]; dropped without a
/// commit, the temporary file is removed and the file is as it was).
pub enum Output {
    Stdout(std::io::BufWriter<std::io::Stdout>),
    File {
        path: std::path::PathBuf,
        tmp: std::path::PathBuf,
        w: Option<std::io::BufWriter<std::fs::File>>,
    },
}

impl Output {
    /// `-o FILE` (`-` or none: stdout). The database file is refused.
    pub fn open(path: Option<&Path>, app: &App) -> Result<Output, Failure> {
        let Some(path) = path.filter(|p| *p != Path::new("-")) else {
            return Ok(Output::Stdout(std::io::BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            )));
        };
        app.refuse_database_file(path)?;
        let tmp = crate::app::export::temp_beside(path);
        let file = std::fs::File::create_new(&tmp).map_err(|e| {
            usage(format!(
                "{}: {e}",
                sanitize_lines(&path.display().to_string())
            ))
        })?;
        Ok(Output::File {
            path: path.to_owned(),
            tmp,
            w: Some(std::io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Output::Stdout(_))
    }

    /// Flushes, and puts a file in place.
    pub fn commit(mut self) -> std::io::Result<()> {
        match &mut self {
            Output::Stdout(w) => w.flush(),
            Output::File { path, tmp, w } => {
                let mut w = w.take().expect("committed once");
                let done = w
                    .flush()
                    .and_then(|()| w.into_inner().map_err(|e| e.into_error()))
                    .and_then(|f| f.sync_all())
                    .and_then(|()| std::fs::rename(&*tmp, &*path));
                if done.is_err() {
                    // Nothing is left half-written beside the file.
                    let _ = std::fs::remove_file(&*tmp);
                }
                done
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File { w, .. } => w.as_mut().expect("not committed").write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write_vectored(bufs),
            Output::File { w, .. } => w.as_mut().expect("not committed").write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File { w, .. } => w.as_mut().expect("not committed").flush(),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Output::File {
            tmp, w: Some(_), ..
        } = self
        {
            let _ = std::fs::remove_file(&*tmp);
        }
    }
}

/// Prints a listing ([`crate::print::listing::emit`]) to `-o FILE` or stdout: Parquet is
/// refused on a terminal, a closed pipe ends quietly, a file is written whole or not at
/// all.
pub fn emit_listing(
    app: &App,
    output: Option<&Path>,
    format: crate::print::listing::ListFormat,
    table: impl FnOnce() -> String,
    doc: &Value,
    rows: (&[&str], &[Value]),
) -> Result<(), Failure> {
    let mut out = Output::open(output, app)?;
    if format == crate::print::listing::ListFormat::Parquet
        && out.is_stdout()
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        return Err(usage(
            "Parquet is binary: write it to a file (-o list.parquet) or a pipe",
        ));
    }
    match crate::print::listing::emit(&mut out, format, table, doc, rows)
        .and_then(|()| out.commit())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(usage(format!("output: {e}"))),
    }
}

/// Where a report goes (`-o FILE` of `check`, `test`, `explain`, `diff`, `db`):
/// stdout, or a file written whole or not at all (never the database file).
pub struct To {
    path: Option<PathBuf>,
}

impl To {
    pub fn new(db: &Db, output: Option<PathBuf>) -> Result<To, Failure> {
        let path = output.filter(|p| p != Path::new("-"));
        if let Some(p) = &path
            && crate::app::is_database_file(&db.path, p)
        {
            return Err(usage(format!(
                "{}: that is the database file (or SQLite's file beside it): not an output",
                sanitize_lines(&p.display().to_string())
            )));
        }
        Ok(To { path })
    }

    /// Human text: what must not reach a terminal raw is escaped ([`write_text`]).
    pub fn text(&self, text: &str) -> Result<(), Failure> {
        self.put(&sanitize_lines(text))
    }

    /// JSON text: such characters as `\uXXXX` escapes ([`write_json`]).
    pub fn json(&self, text: &str) -> Result<(), Failure> {
        self.put(&crate::app::text::json_safe(text))
    }

    fn put(&self, text: &str) -> Result<(), Failure> {
        let Some(path) = &self.path else {
            return write_out(text);
        };
        Ok(crate::app::export::write_atomic(path, text.as_bytes())?)
    }
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

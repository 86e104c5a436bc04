//! Helpers shared by the integration tests (each test uses some of them).
#![allow(dead_code)]

pub mod sql;
pub mod tui;

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `rulebench --db DB ARGS...` with no stdin: (exit code, stdout, stderr). A run
/// killed by a signal (a stack overflow, say) or printing anything but UTF-8 fails the
/// test.
pub fn rb(db: &Path, args: &[&str]) -> (i32, String, String) {
    ensure_db(db, args);
    rb_as_is(db, args)
}

/// [`rb`] without creating the database first (a test of what a command does to a
/// database that is not there).
pub fn rb_as_is(db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run rulebench");
    (
        out.status.code().expect("not killed by a signal"),
        String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    )
}

/// Creates the database at `db` (seeded with the sample pages) when it is not there:
/// commands that only read refuse a `--db` that does not exist, and the tests run on
/// fresh paths.
pub fn ensure_db(db: &Path, args: &[&str]) {
    if db.exists() || db.as_os_str().is_empty() {
        return;
    }
    let seed: &[&str] = if args.contains(&"--no-seed") {
        &["--no-seed"]
    } else {
        &[]
    };
    let status = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(seed)
        .args(["--quiet", "db", "init"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run rulebench db init");
    // A directory that does not exist is the test's own business (an error to see).
    if !status.success() || !seed.is_empty() {
        return;
    }
    // The seeded `llm-chat-clients` becomes the compatibility spec's own page (see
    // [`SEED_CHAT`]), at revision 1 as a seeded page is.
    for args in [
        &["--quiet", "page", "rm", "llm-chat-clients", "--yes"][..],
        &["--quiet", "import", SEED_CHAT_PATH][..],
    ] {
        let ok = Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env_remove("RULEBENCH_DB")
            .arg("--db")
            .arg(db)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run rulebench")
            .success();
        assert!(ok, "{args:?}");
    }
}

/// The compatibility spec's own `llm-chat-clients` page: its rules as the spec writes
/// them (`or: [needsX == false, …]`: a feature a client does not need passes), where
/// the shipped sample says the same with `appliesWhen` (n/a). The tests' databases hold
/// it as `llm-chat-clients`: the spec's scenarios, and the workbench's behaviour the
/// tests pin on its numbers, are checked against the spec's rules as written.
pub const SEED_CHAT: &str = include_str!("../data/seed-llm-chat-clients.json");

/// Where [`SEED_CHAT`] is.
pub const SEED_CHAT_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/seed-llm-chat-clients.json"
);

/// Puts the spec's own page ([`SEED_CHAT`]) in place of the seeded sample, at revision
/// 1 (only where the seeded sample is: the sample's rules carry `appliesWhen`, the
/// spec's do not; a page a test removed or changed stays as it is).
pub fn with_seed_chat(app: &mut rulebench::app::App) {
    let sample = app
        .page("llm-chat-clients")
        .is_ok_and(|(p, rev)| rev == 1 && p.rules.iter().any(|r| r.applies_when.is_some()));
    if sample {
        app.delete_page("llm-chat-clients").unwrap();
        app.import(SEED_CHAT, "seed-llm-chat-clients.json", false)
            .unwrap();
    }
}

/// `App::open`, with the spec's own `llm-chat-clients` ([`with_seed_chat`]).
pub fn open_app(db: &Path) -> rulebench::app::App {
    let mut app = rulebench::app::App::open(db).unwrap();
    with_seed_chat(&mut app);
    app
}

/// Whether the `sqlite3` shell is here; on CI it must be (`.ci/run` installs it).
pub fn have_sqlite3() -> bool {
    let have = Command::new("sqlite3")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the sqlite3 shell (.ci/run installs it)"
        );
        eprintln!("skipped: no sqlite3 shell here");
    }
    have
}

/// A committed sample data file (`tests/data/real/NAME`), as a path argument.
pub fn real_sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real")
        .join(name)
        .display()
        .to_string()
}

/// A stored page as its page file (`rulebench export PAGE`), parsed.
pub fn export_page(db: &Path, page: &str) -> serde_json::Value {
    let (code, out, err) = rb(db, &["export", page]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("export prints JSON")
}

/// Adds a rule (its JSON) to a stored page with `rule add`, through a file beside the
/// database; the command must succeed.
pub fn add_rule(db: &Path, page: &str, rule: &serde_json::Value) {
    let file = db.with_extension("rule.json");
    std::fs::write(&file, rule.to_string()).expect("write the rule file");
    let (code, _, err) = rb(
        db,
        &["rule", "add", page, file.to_str().expect("a UTF-8 path")],
    );
    assert_eq!(code, 0, "rule add {rule}: {err}");
}

/// The items of a JSON array of strings (panics on anything else: a test's input).
pub fn strs(v: &serde_json::Value) -> Vec<&str> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_str().expect("a string"))
        .collect()
}

//! The first run and the database as a user meets it: where it is created, what is
//! said, seeding or not, `rulebench db`, deleting and renaming pages, a workbench
//! without a terminal, `--quiet`, completions, the man page and the schema.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Runs rulebench with HOME and XDG_DATA_HOME inside `home` (the default database
/// lands there), extra environment, and no stdin: (exit code, stdout, stderr).
fn run(home: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rulebench"));
    cmd.env_remove("RULEBENCH_DB")
        .env_remove("RULEBENCH_NO_SEED")
        .env_remove("COMPLETE")
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run rulebench");
    (
        out.status.code().expect("not killed by a signal"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn default_db(home: &Path) -> std::path::PathBuf {
    home.join("data").join("rulebench").join("rulebench.db")
}

#[test]
fn a_new_database_is_announced_on_stderr_once_with_what_was_seeded() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(home.path(), &[], &["pages", "--json"]);
    assert_eq!(code, 0, "{err}");
    let db = default_db(home.path());
    assert!(db.is_file(), "created in the data directory");
    assert!(
        err.contains(&format!("created {} (seeded 3 sample pages", db.display())),
        "{err}"
    );
    let pages: Value = serde_json::from_str(&out).expect("stdout holds the data only");
    assert_eq!(pages.as_array().unwrap().len(), 3);
    // The second run says nothing.
    let (_, _, err) = run(home.path(), &[], &["pages"]);
    assert_eq!(err, "");
    // An empty RULEBENCH_DB is unset: the same default database.
    let (code, out, err) = run(
        home.path(),
        &[("RULEBENCH_DB", "")],
        &["db", "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["path"], db.display().to_string());
    assert_eq!(info["schemaVersion"], 13);
    assert_eq!(info["pages"].as_array().unwrap().len(), 3);
    assert!(info["bytes"].as_u64().unwrap() > 0);
    let (_, text, _) = run(home.path(), &[], &["db"]);
    assert!(
        text.starts_with(&format!("database  {}\n", db.display())),
        "{text}"
    );
    assert!(text.contains("llm-chat-clients"), "{text}");
}

#[test]
fn no_seed_creates_an_empty_database_and_seeds_nothing_later() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("empty.db");
    let db = db.to_str().unwrap();
    let (code, _, err) = run(home.path(), &[], &["--no-seed", "--db", db, "db", "init"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(empty)"), "{err}");
    let (code, out, err) = run(home.path(), &[], &["--db", db, "pages", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "[]");
    // Later runs without the flag do not seed it either.
    let (_, out, _) = run(home.path(), &[], &["--db", db, "pages", "--json"]);
    assert_eq!(out.trim(), "[]");
    // The environment variable does the same.
    let other = home.path().join("env.db");
    let (code, _, err) = run(
        home.path(),
        &[("RULEBENCH_NO_SEED", "1")],
        &["--db", other.to_str().unwrap(), "db", "init"],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = run(
        home.path(),
        &[],
        &["--db", other.to_str().unwrap(), "pages", "--json"],
    );
    assert_eq!(out.trim(), "[]");
}

#[test]
fn a_db_in_a_missing_directory_is_an_error_and_creates_nothing() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("typo").join("x.db");
    for how in ["flag", "env"] {
        let (code, _, err) = if how == "flag" {
            run(
                home.path(),
                &[],
                &["--db", missing.to_str().unwrap(), "pages"],
            )
        } else {
            run(
                home.path(),
                &[("RULEBENCH_DB", missing.to_str().unwrap())],
                &["pages"],
            )
        };
        assert_eq!(code, 2, "{how}: {err}");
        assert!(err.contains("does not exist"), "{err}");
        assert!(
            !home.path().join("typo").exists(),
            "{how}: no directory made"
        );
    }
}

#[test]
fn pages_are_deleted_with_yes_or_a_terminal_and_renamed_with_their_history() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("p.db");
    let db = db.to_str().unwrap();
    // No terminal to ask on: refused, nothing changed.
    let (code, _, err) = run(
        home.path(),
        &[],
        &["--db", db, "page", "rm", "loan-eligibility"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--yes"), "{err}");
    let (code, _, err) = run(
        home.path(),
        &[],
        &["--db", db, "page", "rm", "loan-eligibilty", "--yes"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `loan-eligibility`"), "{err}");
    let (code, out, err) = run(
        home.path(),
        &[],
        &["--db", db, "page", "rm", "loan-eligibility", "--yes"],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("deleted page loan-eligibility"), "{err}");
    let (_, pages, _) = run(home.path(), &[], &["--db", db, "pages", "--json"]);
    assert!(!pages.contains("loan-eligibility"));

    // Rename: the rules, rows, overrides and assertions follow; a new revision.
    let (code, _, err) = run(
        home.path(),
        &[],
        &[
            "--db",
            db,
            "page",
            "rename",
            "llm-chat-clients",
            "Chat Models",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("say `chat-models`"), "{err}");
    let (code, _, err) = run(
        home.path(),
        &[],
        &[
            "--db",
            db,
            "page",
            "rename",
            "llm-chat-clients",
            "provider-capabilities",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("`provider-capabilities` exists already"),
        "{err}"
    );
    let (code, _, err) = run(
        home.path(),
        &[],
        &[
            "--db",
            db,
            "page",
            "rename",
            "llm-chat-clients",
            "llm-chat-clients",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("has that id already"), "{err}");
    let (code, _, err) = run(
        home.path(),
        &[],
        &[
            "--db",
            db,
            "page",
            "rename",
            "llm-chat-clients",
            "chat-models",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(revision 2)"), "{err}");
    let (code, out, err) = run(home.path(), &[], &["--db", db, "test", "chat-models"]);
    assert_eq!(code, 0, "the assertions moved with the page: {out}{err}");
    let (_, out, _) = run(home.path(), &[], &["--db", db, "export", "chat-models"]);
    let page: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(page["id"], "chat-models");
    assert_eq!(page["rules"].as_array().unwrap().len(), 9);
    assert_eq!(page["overrides"].as_array().unwrap().len(), 1);
    let (code, _, _) = run(
        home.path(),
        &[],
        &["--db", db, "export", "llm-chat-clients"],
    );
    assert_eq!(code, 2, "the old id is gone");
}

#[test]
fn the_workbench_without_a_terminal_says_what_to_use_instead() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("t.db");
    let (code, out, err) = run(home.path(), &[], &["--db", db.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(out, "", "no escape codes written into a pipe");
    assert!(
        err.contains("needs a terminal") && err.contains("evaluate"),
        "{err}"
    );
}

#[test]
fn quiet_silences_status_lines_but_not_data_or_errors() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("q.db");
    let db = db.to_str().unwrap();
    let (code, out, err) = run(
        home.path(),
        &[],
        &[
            "-q",
            "--db",
            db,
            "policy",
            "set",
            "loan-eligibility",
            "fullThreshold=0.9",
        ],
    );
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let (code, _, err) = run(
        home.path(),
        &[],
        &[
            "--quiet",
            "--db",
            db,
            "policy",
            "set",
            "loan-eligibility",
            "fullThreshold=9",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.starts_with("error:"), "{err}");
    let (_, out, _) = run(home.path(), &[], &["-q", "--db", db, "pages", "--json"]);
    assert!(out.contains("loan-eligibility"));
}

#[test]
fn completions_for_every_shell_and_page_ids_completed_from_the_database() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("c.db");
    let db_s = db.to_str().unwrap();
    assert_eq!(run(home.path(), &[], &["--db", db_s, "db", "init"]).0, 0);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, out, err) = run(home.path(), &[], &["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(
            out.contains("rulebench") && out.contains("COMPLETE"),
            "{shell}: {out}"
        );
    }
    let (code, _, _) = run(home.path(), &[], &["completions", "tcsh"]);
    assert_eq!(code, 2);
    // What the script asks at a <TAB>: commands, then page ids from the database.
    let complete = |words: &[&str]| {
        let mut args = vec!["--", "rulebench"];
        args.extend_from_slice(words);
        run(
            home.path(),
            &[("COMPLETE", "fish"), ("RULEBENCH_DB", db_s)],
            &args,
        )
        .1
    };
    let commands = complete(&["eva"]);
    assert!(
        commands.lines().any(|l| l.starts_with("evaluate\t")),
        "{commands}"
    );
    let pages = complete(&["evaluate", "lo"]);
    assert_eq!(
        pages
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect::<Vec<_>>(),
        ["loan-eligibility"],
        "{pages}"
    );
    let pages = complete(&["page", "rm", ""]);
    assert_eq!(
        pages.lines().filter(|l| !l.starts_with('-')).count(),
        3,
        "{pages}"
    );
    // A `--db` on the command line being completed is the database read (it used to be
    // ignored for RULEBENCH_DB or the default): one with a single page.
    let other = home.path().join("other.db");
    let other_s = other.to_str().unwrap();
    assert_eq!(
        run(
            home.path(),
            &[],
            &["--db", other_s, "--no-seed", "db", "init"]
        )
        .0,
        0
    );
    let page = r#"{"format": "rulebench.page/v1", "id": "only-here", "name": "Only",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]}}"#;
    let file = home.path().join("only.json");
    std::fs::write(&file, page).unwrap();
    assert_eq!(
        run(
            home.path(),
            &[],
            &["--db", other_s, "import", file.to_str().unwrap()]
        )
        .0,
        0
    );
    for words in [
        ["--db", other_s, "export", ""].as_slice(),
        [&format!("--db={other_s}"), "export", ""].as_slice(),
    ] {
        let pages = complete(words);
        assert_eq!(
            pages
                .lines()
                .filter(|l| !l.starts_with('-'))
                .map(|l| l.split('\t').next().unwrap())
                .collect::<Vec<_>>(),
            ["only-here"],
            "{pages}"
        );
    }
}

#[test]
fn the_man_page_and_the_schema_print() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(home.path(), &[], &["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".TH rulebench 1"), "{out}");
    assert!(
        out.contains("evaluate") && out.contains("EXIT STATUS"),
        "{out}"
    );
    let (code, out, _) = run(home.path(), &[], &["schema"]);
    assert_eq!(code, 0);
    let printed: Value = serde_json::from_str(&out).unwrap();
    let file: Value = serde_json::from_str(include_str!("../assets/page.schema.json")).unwrap();
    assert_eq!(printed, file);
    // None of these touched a database.
    assert!(!default_db(home.path()).exists());
}

/// Every argument and option of every command says what it is for.
#[test]
fn every_argument_has_help_text() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if matches!(id, "help" | "version") {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_about().is_none() && sub.get_name() != "help" {
                missing.push(format!("{path} {} (no about)", sub.get_name()));
            }
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut missing = Vec::new();
    walk(
        &<rulebench::cli::Cli as clap::CommandFactory>::command(),
        "rulebench",
        &mut missing,
    );
    assert!(missing.is_empty(), "without help: {missing:?}");
}

/// docs/cli.md is the `--help` of every command, as the binary prints it (regenerate
/// with `UPDATE_DOCS=1 cargo test --test first_run cli_reference`).
#[test]
fn the_cli_reference_in_docs_matches_the_binary() {
    fn walk(cmd: &mut clap::Command, path: &str, out: &mut String) {
        let name = if path.is_empty() {
            "rulebench".to_owned()
        } else {
            format!("{path} {}", cmd.get_name())
        };
        let help = cmd.render_long_help().to_string();
        out.push_str(&format!(
            "## `{name}`\n\n```text\n{}\n```\n\n",
            help.trim_end()
        ));
        let subs: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .filter(|s| s != "help")
            .collect();
        for sub in subs {
            let sub = cmd.find_subcommand_mut(&sub).unwrap();
            walk(sub, &name, out);
        }
    }
    let mut cmd = <rulebench::cli::Cli as clap::CommandFactory>::command();
    cmd.build();
    let mut text = String::from(
        "# Command-line reference\n\nThe `--help` of every command, as `rulebench` prints it \
         (a test keeps this file in step with the binary). See the README for a tour.\n\n",
    );
    walk(&mut cmd, "", &mut text);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == text,
        "docs/cli.md is stale: UPDATE_DOCS=1 cargo test --test first_run cli_reference"
    );
}

/// A 0-byte file (made by `touch`) is a new database: created, seeded and said so.
#[test]
fn a_zero_byte_database_file_is_announced_as_created() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("empty.db");
    std::fs::write(&db, b"").unwrap();
    let (code, out, err) = run(
        home.path(),
        &[],
        &["--db", db.to_str().unwrap(), "pages", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("created {} (seeded 3 sample pages", db.display())),
        "{err}"
    );
    let pages: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(pages.as_array().unwrap().len(), 3);
}

/// A database in a directory this user may not write (its write-ahead log cannot be
/// made there) still serves reads; changes are refused naming the file. Run as an
/// unprivileged user when the tests run as root (root writes anywhere).
#[test]
fn a_database_in_a_read_only_directory_serves_reads() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("r.db");
    let (code, _, err) = run(
        home.path(),
        &[],
        &["--db", db.to_str().unwrap(), "db", "init"],
    );
    assert_eq!(code, 0, "{err}");
    // The files writable by all, the directory by nobody.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = is_root();
    // The unprivileged user may not reach the build directory (a clone under /root):
    // the binary is run from beside the database, linked or copied there.
    let bin = home.path().join("rulebench");
    if root && std::fs::hard_link(env!("CARGO_BIN_EXE_rulebench"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_rulebench"), &bin).unwrap();
    }
    let as_user = |args: &[&str]| -> (i32, String, String) {
        let mut cmd = if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin);
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_rulebench"))
        };
        let out = cmd
            .env_remove("RULEBENCH_DB")
            .env("HOME", home.path())
            .arg("--db")
            .arg(&db)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("setpriv runs (util-linux)");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = as_user(&["pages", "--json"]);
    assert_eq!(code, 0, "reads work: {err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let (code, out, err) = as_user(&["export", "llm-chat-clients"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"llm-chat-clients\""));
    let (code, _, err) = as_user(&["policy", "set", "llm-chat-clients", "fullThreshold=0.9"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("read-only") && err.contains("r.db"), "{err}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Whether this process runs as root (its files in /proc say so without libc).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A page id from a database made before ids were slugs, completed in bash and the
/// completed line run as the user would: nothing in the id runs, and nothing the
/// completion prints reaches the terminal raw (ESC, BEL, U+202E).
#[test]
fn completing_a_hostile_page_id_in_bash_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("h.db");
    let db_s = db.to_str().unwrap();
    assert_eq!(run(home.path(), &[], &["--db", db_s, "db", "init"]).0, 0);
    {
        let mut store = rulebench_store::Store::open(&db).unwrap();
        store
            .rename_page("loan-eligibility", "x$(touch PWNED)`touch PWNED2`id")
            .unwrap();
        store
            .rename_page("provider-capabilities", "x\u{1b}]0;t\u{7}\u{202e}y")
            .unwrap();
    }
    // Import refuses such ids now, with the slug it suggests.
    let file = home.path().join("hostile.json");
    std::fs::write(
        &file,
        r#"{"format": "rulebench.page/v1", "id": "x$(touch PWNED)", "name": "H",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]}}"#,
    )
    .unwrap();
    let (code, _, err) = run(
        home.path(),
        &[],
        &["--db", db_s, "import", file.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not a slug") && err.contains("x-touch-pwned"),
        "{err}"
    );

    let bin_dir = home.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rulebench"), bin_dir.join("rulebench")).unwrap();
    let work = home.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let script = r#"
        source <(rulebench completions bash)
        COMP_WORDS=(rulebench export x); COMP_CWORD=2; COMP_TYPE=9
        COMP_LINE="rulebench export x"; COMP_POINT=${#COMP_LINE}
        _clap_complete_rulebench rulebench x export
        printf 'candidate:%s\n' "${COMPREPLY[@]}"
        for c in "${COMPREPLY[@]}"; do eval "rulebench export $c" >/dev/null 2>&1; done
        true
    "#;
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(&work)
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap()),
        )
        .env("RULEBENCH_DB", &db)
        .env_remove("COMPLETE")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !work.join("PWNED").exists() && !work.join("PWNED2").exists(),
        "the completed id ran a command: {stdout}"
    );
    assert!(
        stdout.contains("candidate:'x$(touch PWNED)`touch PWNED2`id'"),
        "the id is offered quoted: {stdout}"
    );
    assert!(
        !stdout.contains(['\u{1b}', '\u{7}', '\u{202e}']),
        "raw controls printed: {stdout:?}"
    );
    // A page stored under such an id before stays usable (checked, evaluated); only
    // page files coming in are held to slugs.
    let hostile = "x$(touch PWNED)`touch PWNED2`id";
    let (code, _, err) = run(home.path(), &[], &["--db", db_s, "check", hostile]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(
        home.path(),
        &[],
        &["--db", db_s, "evaluate", hostile, "--select", "app-001"],
    );
    assert_eq!(code, 0, "{err}");
}

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

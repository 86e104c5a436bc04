//! End to end in a real terminal (tmux): open the workbench, edit a rule, quit, reopen,
//! and find the edit kept. `.ci/run` installs tmux; without it the test fails on CI and
//! says why elsewhere.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

struct Session(String);

impl Session {
    fn start(name: &str, db: &Path, args: &str) -> Session {
        Self::start_sized(name, db, args, (160, 45))
    }

    fn start_sized(name: &str, db: &Path, args: &str, (w, h): (u16, u16)) -> Session {
        let (w, h) = (w.to_string(), h.to_string());
        let bin = env!("CARGO_BIN_EXE_rulebench");
        let command = format!("{bin} --db '{}' {args}", db.display());
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", name])
            .output();
        let status = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                &w,
                "-y",
                &h,
                &command,
            ])
            .env("NO_COLOR", "1")
            .status()
            .expect("tmux starts");
        assert!(status.success());
        Session(name.to_owned())
    }

    fn screen(&self) -> String {
        tmux(&["capture-pane", "-t", &self.0, "-p"])
    }

    fn wait_for(&self, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "`{needle}` never appeared; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            tmux(&["send-keys", "-t", &self.0, k]);
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    fn type_text(&self, text: &str) {
        tmux(&["send-keys", "-t", &self.0, "-l", text]);
        std::thread::sleep(Duration::from_millis(100));
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["has-session", "-t", &self.0])
            .status()
            .is_ok_and(|s| s.success())
    }

    fn wait_closed(&self) {
        let started = Instant::now();
        while self.alive() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the workbench did not quit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .output();
    }
}

/// Whether the test can run; on CI it must.
fn have_tmux() -> bool {
    if !tmux_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have tmux (.ci/run installs it)"
        );
        eprintln!(
            "tmux is not installed: the end-to-end terminal test needs it (apt-get install tmux)"
        );
        return false;
    }
    true
}

/// At 80×24: the palette opens History; Ctrl-C quits from inside that dialog; the rule
/// editor's diagnostics panel quotes the line with a caret; Ctrl-C from the question
/// on Esc quits too, and nothing invalid is saved.
#[test]
fn palette_dialogs_ctrl_c_and_the_diagnostics_panel_at_80x24() {
    if !have_tmux() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e2e.db");
    let name = format!("rulebench-e2e-small-{}", std::process::id());
    let s = Session::start_sized(&name, &db, "--page llm-chat-clients", (80, 24));
    s.wait_for("2 Rules");
    s.keys(&["C-p"]);
    s.wait_for("Command: ");
    s.type_text("history");
    s.keys(&["Enter"]);
    s.wait_for("History ·");
    s.keys(&["C-c"]);
    s.wait_closed();

    let s = Session::start_sized(&name, &db, "--page llm-chat-clients", (80, 24));
    s.wait_for("2 Rules");
    s.keys(&["2", "e"]);
    s.wait_for("editing");
    s.type_text("x");
    let screen = s.wait_for("json-syntax 1:1");
    assert!(screen.contains("1 │ x{"), "the line quoted:\n{screen}");
    assert!(
        screen.lines().any(|l| l.contains("│ ^")),
        "a caret under the column:\n{screen}"
    );
    s.keys(&["Escape"]);
    s.wait_for("Discard your edit?");
    s.keys(&["C-c"]);
    s.wait_closed();
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .args([
            "--db",
            db.to_str().unwrap(),
            "page",
            "log",
            "llm-chat-clients",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        log.as_array().unwrap().len(),
        1,
        "nothing invalid saved: {log}"
    );
}

#[test]
fn edit_a_rule_quit_reopen_and_find_it_kept() {
    if !tmux_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have tmux (.ci/run installs it)"
        );
        eprintln!(
            "tmux is not installed: the end-to-end terminal test needs it (apt-get install tmux)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e2e.db");
    let name = format!("rulebench-e2e-{}", std::process::id());

    let s = Session::start(&name, &db, "--page llm-chat-clients");
    s.wait_for("Rules (9)");
    assert!(s.screen().contains("rev 1"));
    // Rules pane, second rule (Tool Calling Support), edit it.
    s.keys(&["2", "Down", "e"]);
    s.wait_for("editing");
    s.type_text("{\"!\": ");
    s.wait_for("invalid");
    s.keys(&["M->", "End"]);
    s.type_text("}");
    // Valid again: the matrix changes at once; the save follows within a second.
    s.wait_for("rev 2");
    s.keys(&["Escape", "q"]);
    s.wait_closed();

    // The database has the edit.
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .args(["--db", db.to_str().unwrap(), "export", "llm-chat-clients"])
        .output()
        .unwrap();
    let page: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rule = page["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "tool-calling")
        .unwrap();
    assert!(
        rule["logic"]["!"].is_object(),
        "the edit was not saved: {}",
        rule["logic"]
    );

    // Reopened, the workbench shows it.
    let s = Session::start(&name, &db, "--page llm-chat-clients");
    let screen = s.wait_for("Rules (9)");
    assert!(screen.contains("rev 2"), "{screen}");
    s.keys(&["2", "Down"]);
    let screen = s.wait_for("\"!\"");
    assert!(screen.contains("Tool Calling Support"), "{screen}");
    s.keys(&["q"]);
    s.wait_closed();
}

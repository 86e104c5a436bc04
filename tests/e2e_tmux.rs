//! End to end in a real terminal (tmux): open the workbench, edit a rule, quit, reopen,
//! and find the edit kept. `.ci/run` installs tmux; without it the test fails on CI and
//! says why elsewhere.

mod common;

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
        // No config file of the machine's user: the defaults (the tmux server's
        // environment, not this process's, is what the command gets).
        let config = db.with_extension("no-config.toml");
        let command = format!(
            "env RULEBENCH_CONFIG='{}' {bin} --db '{}' {args}",
            config.display(),
            db.display()
        );
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
    common::ensure_db(&db, &[]);
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

    // Ctrl-C dropped the invalid text in silence: it is kept as a draft, offered back
    // on the next open, and put back in the editor.
    let s = Session::start_sized(&name, &db, "--page llm-chat-clients", (80, 24));
    s.wait_for("Unsaved edits from an");
    s.keys(&["y"]);
    let screen = s.wait_for("restored your");
    assert!(screen.contains("x{"), "the text is back:\n{screen}");
    s.keys(&["C-c"]);
    s.wait_closed();
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
    common::ensure_db(&db, &[]);
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

    // Reopened, the workbench shows it: the view was kept, so the cursor is on the
    // rule edited.
    let s = Session::start(&name, &db, "--page llm-chat-clients");
    let screen = s.wait_for("Rules (9)");
    assert!(screen.contains("rev 2"), "{screen}");
    s.keys(&["2"]);
    let screen = s.wait_for("\"!\"");
    assert!(screen.contains("Tool Calling Support"), "{screen}");
    s.keys(&["q"]);
    s.wait_closed();
}

fn rb_out(db: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The report's reproduction: a workbench on a page with a linked dataset file, the
/// `sqlite3` shell checking the database beside it, a colleague's `policy set`, then a
/// save in the workbench, kill -9; reopened, another save and a normal quit. Every
/// acknowledged save and the CLI's change are there each time.
#[test]
fn a_second_sqlite_client_beside_a_linked_workbench_loses_nothing() {
    if !have_tmux() {
        return;
    }
    if !common::have_sqlite3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("linked.db");
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "linked", "name": "Linked",
        "source": {"name": "Clients", "key": ["id"], "label": "name",
                   "rows": [{"id": "web", "name": "Web"}]},
        "target": {"name": "Models", "key": ["id"], "label": "name",
                   "rows": [{"id": "m1", "name": "M1", "supportsStreaming": true}]},
        "rules": [{"id": "streaming", "name": "Streaming", "required": true,
                   "logic": {"==": [{"var": "target.supportsStreaming"}, true]}}]
    });
    let file = dir.path().join("linked.json");
    std::fs::write(&file, page.to_string()).unwrap();
    let csv = dir.path().join("models.csv");
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\n").unwrap();
    rb_out(&db, &["import", file.to_str().unwrap()]);
    rb_out(
        &db,
        &[
            "dataset",
            "import",
            "linked",
            "target",
            csv.to_str().unwrap(),
            "--link",
        ],
    );
    let rule_logic = |db: &Path| -> serde_json::Value {
        let page: serde_json::Value =
            serde_json::from_str(&rb_out(db, &["export", "linked"])).unwrap();
        page["rules"][0]["logic"].clone()
    };
    let threshold = |db: &Path| -> f64 {
        let page: serde_json::Value =
            serde_json::from_str(&rb_out(db, &["export", "linked"])).unwrap();
        page["devicePolicy"]["fullThreshold"].as_f64().unwrap()
    };

    let name = format!("rulebench-e2e-linked-{}", std::process::id());
    let s = Session::start(&name, &db, "--page linked");
    s.wait_for("rev 2");
    let sqlite3 = Command::new("sqlite3")
        .arg(&db)
        .arg("pragma integrity_check")
        .output()
        .unwrap();
    assert!(sqlite3.status.success());
    rb_out(&db, &["policy", "set", "linked", "fullThreshold=0.5"]);
    s.wait_for("rev 3");
    // An edit saved in the workbench (revision 4), then kill -9.
    s.keys(&["2", "e"]);
    s.wait_for("editing");
    s.type_text("{\"!\": ");
    s.keys(&["M->", "End"]);
    s.type_text("}");
    s.wait_for("rev 4");
    let pid = tmux(&["display-message", "-p", "-t", &name, "#{pane_pid}"]);
    let killed = Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    s.wait_closed();
    assert!(
        rule_logic(&db)["!"].is_object(),
        "the acknowledged save is gone"
    );
    assert_eq!(threshold(&db), 0.5, "the CLI's change is gone");

    // Reopened: the shell again, a save, and a normal quit.
    let s = Session::start(&name, &db, "--page linked");
    s.wait_for("rev 4");
    let sqlite3 = Command::new("sqlite3")
        .arg(&db)
        .arg("pragma integrity_check")
        .output()
        .unwrap();
    assert!(sqlite3.status.success());
    s.keys(&["2", "e"]);
    s.wait_for("editing");
    s.type_text("{\"!\": ");
    s.keys(&["M->", "End"]);
    s.type_text("}");
    s.wait_for("rev 5");
    s.keys(&["Escape", "q"]);
    s.wait_closed();
    assert!(
        rule_logic(&db)["!"]["!"].is_object(),
        "the second save is gone"
    );
    assert_eq!(threshold(&db), 0.5);
    let log: serde_json::Value =
        serde_json::from_str(&rb_out(&db, &["page", "log", "linked", "--format", "json"])).unwrap();
    assert_eq!(log.as_array().unwrap().len(), 5, "{log}");
}

/// The view exported from a real terminal: filtered (`\`), sorted (`s`, `R`) and
/// transposed (`t`), `E` to a CSV file, read back: a row per target shown, in the
/// view's order.
#[test]
fn export_a_filtered_sorted_transposed_view_and_read_it_back() {
    if !tmux_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have tmux (.ci/run installs it)"
        );
        eprintln!("tmux is not installed: the end-to-end terminal test needs it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e2e.db");
    common::ensure_db(&db, &[]);
    let name = format!("rulebench-e2e-export-{}", std::process::id());
    let s = Session::start_sized(&name, &db, "--page llm-chat-clients", (200, 50));
    s.wait_for("Rules (9)");
    s.keys(&["3", "\\"]);
    s.wait_for("Filter targets");
    s.type_text("claude");
    s.keys(&["Enter"]);
    s.wait_for("\\claude");
    s.keys(&["s"]);
    s.wait_for("by verdict");
    s.keys(&["R"]);
    s.wait_for("by verdict, reversed");
    s.keys(&["t"]);
    s.keys(&["E"]);
    s.wait_for("Export");
    let path = dir.path().join("view.csv");
    // The prompt's name is selected: typing replaces it.
    s.type_text(&path.display().to_string());
    s.keys(&["Enter"]);
    s.wait_for("exported the view");
    s.keys(&["q"]);
    s.wait_closed();
    let mut rd = csv::Reader::from_path(&path).unwrap();
    let header = rd.headers().unwrap().clone();
    let target = header
        .iter()
        .position(|h| h == "targetId")
        .expect("a targetId column");
    let verdict = header
        .iter()
        .position(|h| h == "verdict")
        .expect("a verdict column");
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r[target].contains("claude")),
        "only the targets the filter shows: {rows:?}"
    );
    // Reversed worst-first: the best verdicts first.
    let verdicts: Vec<i64> = rows.iter().map(|r| r[verdict].parse().unwrap()).collect();
    assert!(verdicts.windows(2).all(|w| w[0] >= w[1]), "{verdicts:?}");
    // As many as the command line counts for the filter.
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .args([
            "--db",
            db.to_str().unwrap(),
            "matrix",
            "llm-chat-clients",
            "--select",
            "t3-chat",
            "--long",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    let all = String::from_utf8(out.stdout).unwrap();
    let claude = all.lines().skip(1).filter(|l| l.contains("claude")).count();
    assert_eq!(rows.len(), claude);
}

/// The config file's default page opens at start; one that is not in the database
/// (removed, renamed) opens the picker, and the status line says why.
#[test]
fn the_config_default_page_and_one_that_is_gone() {
    if !tmux_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have tmux (.ci/run installs it)"
        );
        eprintln!("tmux is not installed: the end-to-end terminal test needs it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e2e.db");
    common::ensure_db(&db, &[]);
    // The file the sessions read (see `start_sized`).
    let config = db.with_extension("no-config.toml");
    std::fs::write(&config, "default-page = \"loan-eligibility\"\n").unwrap();
    let name = format!("rulebench-e2e-config-{}", std::process::id());
    let s = Session::start_sized(&name, &db, "", (120, 35));
    s.wait_for("Applicants × loan products");
    s.keys(&["q"]);
    s.wait_closed();
    std::fs::write(&config, "default-page = \"gone\"\n").unwrap();
    let s = Session::start_sized(&name, &db, "", (120, 35));
    let screen = s.wait_for("is not in this database");
    assert!(screen.contains("llm-chat-clients"), "the picker: {screen}");
    s.keys(&["q"]);
    s.wait_closed();
}

//! The workbench's config file: `rulebench config --path`, `--print-default` and
//! `--check`; a file that does not read is an error with what and where (exit 2); key
//! remapping over the one keymap, which help and the palette follow.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::tui::Bench;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// `rulebench ARGS` with RULEBENCH_CONFIG set to `config`.
fn rb_config(config: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env("RULEBENCH_CONFIG", config)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn config_path_default_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    let (code, out, _) = rb_config(&file, &["config", "--path"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), file.display().to_string());
    // No file: the defaults.
    let (code, out, _) = rb_config(&file, &["config", "--check"]);
    assert_eq!(code, 0);
    assert!(out.contains("not there: the defaults"), "{out}");
    // The defaults written out read as the defaults, and list the keys.
    let (code, text, _) = rb_config(&file, &["config", "--print-default"]);
    assert_eq!(code, 0);
    assert!(text.contains("theme = \"dark\""), "{text}");
    assert!(text.contains("# page.find = [\"/\"]"), "{text}");
    assert!(text.contains("# matrix.filter = [\"\\\\\"]"), "{text}");
    std::fs::write(&file, &text).unwrap();
    let (code, out, err) = rb_config(&file, &["config", "--check"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("theme dark · mouse off"), "{out}");
    // A remapping and a theme.
    std::fs::write(
        &file,
        "theme = \"light\"\n[keys]\nfind = \"Ctrl-F\"\nmatrix.filter = [\"|\"]\n",
    )
    .unwrap();
    let (code, out, _) = rb_config(&file, &["config"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("theme light") && out.contains("2 key remappings"),
        "{out}"
    );
    // Mistakes: what and where, exit 2.
    std::fs::write(&file, "mouse = true\n[keys]\nfnid = \"x\"\n").unwrap();
    let (code, _, err) = rb_config(&file, &["config", "--check"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{}:3:1: no action `fnid`", file.display()))
            && err.contains("did you mean `find`"),
        "{err}"
    );
    std::fs::write(&file, "theme = \"solarized\"\n").unwrap();
    let (code, _, err) = rb_config(&file, &["config", "--check"]);
    assert_eq!(code, 2);
    assert!(err.contains(":1:9: no theme `solarized`"), "{err}");
    // The workbench refuses to start on it, before anything else.
    let (code, _, err) = rb_config(&file, &["--db", dir.path().join("x.db").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no theme `solarized`"), "{err}");
    assert!(!dir.path().join("x.db").exists(), "no database made");
}

/// The one test of this binary that remaps: the keymap is remapped once per process.
#[test]
fn remapped_keys_work_and_help_and_the_palette_follow() {
    let settings = rulebench::tui::config::read(
        "[keys]\nfind = \"Ctrl-F\"\nmatrix.filter = [\"|\", \"F3\"]\nquit = [\"q\", \"Ctrl-Q\"]\n",
    )
    .unwrap();
    rulebench::tui::keymap::remap(settings.remaps).unwrap();
    let mut b = Bench::open("llm-chat-clients");
    // `/` finds no more; Ctrl-F does.
    b.chars("2/");
    assert!(b.ui.modal.is_none(), "/ is not bound any more");
    b.ctrl('f');
    assert!(b.ui.modal.is_some(), "Ctrl-F opens find");
    b.chars("Vision");
    b.press(KeyCode::Enter);
    let p = b.ui.page().unwrap();
    assert_eq!(
        p.ws.page.rules[p.rules.selected().unwrap()].name,
        "Vision Input"
    );
    // The matrix's filter is on | and F3 now; `\` is not.
    b.chars("3|");
    assert!(b.ui.modal.is_some());
    b.press(KeyCode::Esc);
    b.ui.handle_key(KeyEvent::new(KeyCode::F(3), KeyModifiers::NONE));
    assert!(b.ui.modal.is_some());
    b.press(KeyCode::Esc);
    // Help lists the keys as remapped.
    let help = rulebench::tui::keymap::help_lines();
    let page = help.iter().find(|(t, _)| t == "Page screen").unwrap();
    assert!(
        page.1
            .iter()
            .any(|(k, h)| k == "Ctrl-F" && h.starts_with("find")),
        "{page:?}"
    );
    let matrix = help.iter().find(|(t, _)| t == "Matrix").unwrap();
    assert!(
        matrix
            .1
            .iter()
            .any(|(k, h)| k == "| F3" && h.starts_with("filter")),
        "{matrix:?}"
    );
    // The palette shows them too.
    b.ctrl('p');
    b.chars("find in the focused");
    let s = b.screen(160, 40);
    assert!(s.contains("Ctrl-F"), "{s}");
    b.press(KeyCode::Esc);
    // In help, the remapped find searches help.
    let in_help = rulebench::tui::keymap::lookup(
        &KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL),
        &[rulebench::tui::keymap::Context::Dialog(
            rulebench::tui::keymap::Dialog::Help,
        )],
    );
    assert_eq!(
        in_help,
        Some(rulebench::tui::action::Action::Find),
        "Ctrl-F in help"
    );
    b.chars("?");
    assert!(
        matches!(b.ui.modal, Some(rulebench::tui::ui::Modal::Help { .. })),
        "? opens help: {}",
        b.screen(120, 30)
    );
    assert!(
        b.screen(160, 40).contains("Ctrl-F searches"),
        "help names the key as remapped"
    );
    b.ctrl('f');
    assert!(
        matches!(
            &b.ui.modal,
            Some(rulebench::tui::ui::Modal::Help { query: Some(_), .. })
        ),
        "Ctrl-F starts the search: {}",
        b.screen(120, 30)
    );
    b.chars("filter");
    match &b.ui.modal {
        Some(rulebench::tui::ui::Modal::Help { query, .. }) => {
            assert_eq!(query.as_deref(), Some("filter"))
        }
        _ => panic!("help searches: {}", b.screen(120, 30)),
    }
    b.press(KeyCode::Esc);
    b.press(KeyCode::Esc);
    // A second remap is refused: the keymap is in use.
    assert!(rulebench::tui::keymap::remap(vec![]).is_err());
}

/// The README's example config reads (and says what it claims).
#[test]
fn the_readme_example_reads() {
    let readme = include_str!("../README.md");
    let section = &readme[readme.find("### The config file").unwrap()..];
    let start = section.find("```toml\n").unwrap() + "```toml\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    let s = rulebench::tui::config::read(example).unwrap();
    assert_eq!(s.scheme, rulebench::tui::theme::Scheme::Light);
    assert!(s.mouse);
    assert_eq!(s.default_page.as_deref(), Some("llm-chat-clients"));
    assert_eq!(s.remaps.len(), 3);
}

//! Out of the workbench: the matrix exported to a file with the command line's
//! printers (`E`), the clipboard (`y`, OSC 52), and running the tests again (`r`).

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::tui::action::Action;
use rulebench::tui::ui::Modal;

const LLM: &str = "llm-chat-clients";

fn open() -> Bench {
    Bench::open(LLM)
}

/// The export of the whole view is byte for byte what `rulebench matrix` prints, for
/// every format the extension names: rows (`--long`) for CSV, TSV and JSON Lines, the
/// grid for Markdown, JSON and a table.
#[test]
fn the_matrix_exports_with_the_command_line_printers() {
    let mut b = open();
    b.chars("3E");
    match &b.ui.modal {
        Some(Modal::Prompt { input, .. }) => {
            assert_eq!(input.lines().join(""), "llm-chat-clients-t3-chat.csv")
        }
        _ => panic!("asks for a file name"),
    }
    b.ui.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    let db = b.db();
    for (ext, args) in [
        ("csv", &["--long", "--format", "csv"][..]),
        ("tsv", &["--long", "--format", "tsv"][..]),
        ("jsonl", &["--format", "jsonl"][..]),
        ("md", &["--format", "md"][..]),
        ("json", &["--format", "json"][..]),
        ("txt", &["--format", "table"][..]),
    ] {
        let path = b.dir.path().join(format!("m.{ext}"));
        b.ui.dispatch(Action::ExportTo(path.clone()));
        let written = std::fs::read_to_string(&path).expect("written");
        let mut cli = vec!["matrix", LLM, "--select", "t3-chat"];
        cli.extend(args);
        let (code, printed, _) = common::rb(&db, &cli);
        assert_eq!(code, 0);
        assert_eq!(written, printed, "{ext}");
        let screen = b.screen(200, 50);
        assert!(screen.contains("exported the view"), "{screen}");
    }
    // Parquet too (binary).
    let path = b.dir.path().join("m.parquet");
    b.ui.dispatch(Action::ExportTo(path.clone()));
    assert!(std::fs::read(&path).unwrap().starts_with(b"PAR1"));
    // CSV reads back: a record per target.
    let path = b.dir.path().join("m.csv");
    let mut rd = csv::Reader::from_path(&path).unwrap();
    let records: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(
        records.len(),
        b.ui.page().unwrap().ws.page.target.rows.len()
    );
    // An existing file is not overwritten without asking.
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('E'), KeyModifiers::SHIFT));
    if let Some(Modal::Prompt { input, .. }) = &mut b.ui.modal {
        input.select_all();
        input.cut();
        input.insert_str(path.display().to_string());
    }
    b.ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(
        matches!(&b.ui.modal, Some(Modal::Confirm { message, .. }) if message.contains("Overwrite")),
        "asks before overwriting"
    );
}

/// `y` puts the rule's JSON (Rules) or the cell's explanation (Matrix) on the
/// clipboard, sent to the terminal as OSC 52.
#[test]
fn y_copies_the_rule_or_the_explanation() {
    let mut b = open();
    b.chars("2y");
    let text = b.ui.clipboard.take().expect("copied");
    let rule: serde_json::Value = serde_json::from_str(&text).expect("the rule's JSON");
    assert_eq!(
        rule["id"],
        b.ui.page().unwrap().ws.page.rules[0].id.as_str()
    );
    b.chars("3y");
    let text = b.ui.clipboard.take().expect("copied");
    let title = b.ui.page().unwrap().explain.title.clone();
    assert!(text.starts_with(&title), "{text}");
    assert!(text.lines().count() > 2, "{text}");
    // Nothing to copy in Policy: nothing sent.
    b.chars("6y");
    assert!(b.ui.clipboard.is_none());
    // The sequence: ESC ] 52 ; c ; base64 BEL.
    let seq = rulebench::tui::osc52("héllo");
    assert_eq!(seq, "\u{1b}]52;c;aMOpbGxv\u{7}");
}

#[test]
fn r_runs_the_assertions_again() {
    let mut b = open();
    b.chars("7r");
    let s = b.screen(200, 50);
    assert!(s.contains("running 8 assertions again"), "{s}");
    assert!(!b.ui.page().unwrap().tests.pending, "inline: done at once");
    assert!(b.ui.page().unwrap().tests.report.is_some());
}

/// `y` in Rules copies the rule under the cursor of the listed rules (filtered by `/`),
/// not the rule at that position of the page (it did).
#[test]
fn y_copies_the_rule_under_the_cursor_when_rules_are_filtered() {
    let mut b = open();
    b.chars("2\\vision");
    b.ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    b.chars("y");
    let text = b.ui.clipboard.take().expect("copied");
    let rule: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(rule["id"], "vision");
}

/// `S` (or the palette's "copy/export this page as SQL") asks for a dialect: alone it
/// copies the page's query, with a file it writes it; both are what `rulebench sql
/// --all` prints.
#[test]
fn s_copies_or_exports_the_page_as_sql() {
    let mut b = open();
    let entries = rulebench::tui::palette::entries("export page sql", &b.ui.palette_facts());
    assert_eq!(entries[0].action, Action::SqlPage, "the palette offers it");
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('S'), KeyModifiers::SHIFT));
    match &b.ui.modal {
        Some(Modal::Prompt { input, .. }) => assert_eq!(input.lines().join(""), "duckdb"),
        _ => panic!("asks for a dialect"),
    }
    b.ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let copied = b.ui.clipboard.take().expect("copied");
    let db = b.db();
    let (code, printed, _) = common::rb(&db, &["sql", LLM, "--dialect", "duckdb", "--all"]);
    assert_eq!(code, 0);
    assert_eq!(copied, printed);
    assert!(b.screen(200, 50).contains("copied the page as duckdb SQL"));

    // A dialect and a file: written, not copied.
    let path = b.dir.path().join("page.sql");
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('S'), KeyModifiers::SHIFT));
    if let Some(Modal::Prompt { input, .. }) = &mut b.ui.modal {
        input.select_all();
        input.cut();
        input.insert_str(format!("postgres {}", path.display()));
    }
    b.ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(b.ui.clipboard.is_none());
    let (_, printed, _) = common::rb(&db, &["sql", LLM, "--dialect", "postgres", "--all"]);
    assert_eq!(std::fs::read_to_string(&path).expect("written"), printed);

    // Not a dialect: said, nothing done.
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('S'), KeyModifiers::SHIFT));
    if let Some(Modal::Prompt { input, .. }) = &mut b.ui.modal {
        input.select_all();
        input.cut();
        input.insert_str("oracle");
    }
    b.ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(b.screen(200, 50).contains("`oracle` is not a dialect"));
    assert!(b.ui.clipboard.is_none());
}

/// The workbench's exports write through the app's one export: whole or not at all (no
/// temporary file left beside), and never over the database or SQLite's files beside it.
#[test]
fn exports_are_whole_and_never_over_the_database() {
    let mut b = open();
    let db = b.db();
    let sql = |b: &mut Bench, text: String| {
        b.ui.handle_key(KeyEvent::new(KeyCode::Char('S'), KeyModifiers::SHIFT));
        if let Some(Modal::Prompt { input, .. }) = &mut b.ui.modal {
            input.select_all();
            input.cut();
            input.insert_str(text);
        }
        b.ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        b.ui.settle();
    };
    sql(&mut b, format!("sqlite {}", db.display()));
    assert!(
        b.screen(200, 50).contains("that is the database file"),
        "{}",
        b.screen(200, 50)
    );
    let (code, pages, _) = common::rb(&db, &["pages"]);
    assert_eq!(code, 0, "the database still opens");
    assert!(pages.contains(LLM), "{pages}");

    // A file written: whole, nothing left beside it.
    let path = b.dir.path().join("out.sql");
    sql(&mut b, format!("sqlite {}", path.display()));
    let (_, printed, _) = common::rb(&db, &["sql", LLM, "--dialect", "sqlite", "--all"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), printed);
    let left: Vec<_> = std::fs::read_dir(b.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("rulebench-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Regression (export ignored the view): `E` writes the targets the view shows, in its
/// order, without the rules of folded categories, and says the absolute path; `Y`
/// copies the same rows as TSV.
#[test]
fn export_and_copy_write_what_the_view_shows() {
    let mut b = open();
    b.chars("3");
    // Only the Anthropic and Google models (each word in the label, key or a summary
    // field: the provider), lowest score first; Limits folded.
    b.ui.dispatch(Action::FilterTargets("o".into()));
    b.ui.dispatch(Action::CycleSort);
    b.ui.dispatch(Action::CycleSort);
    b.ui.page_mut()
        .unwrap()
        .matrix
        .collapsed
        .insert("Limits".into());
    let (targets, rules) = {
        let p = b.ui.page().unwrap();
        p.matrix.view(&p.ws.page.rules, p.ws.page.target.rows.len())
    };
    let all = b.ui.page().unwrap().ws.page.target.rows.len();
    assert!(targets.len() < all && targets.len() > 1, "{targets:?}");
    // Lowest score first: not page order.
    assert!(targets.windows(2).any(|w| w[0] > w[1]), "{targets:?}");
    let (ids, rule_ids): (Vec<String>, Vec<String>) = {
        let ws = &b.ui.page().unwrap().ws;
        (
            targets
                .iter()
                .map(|&t| ws.page.target.row_id(&ws.page.target.rows[t]))
                .collect(),
            rules.iter().map(|&r| ws.page.rules[r].id.clone()).collect(),
        )
    };
    assert!(!rule_ids.contains(&"context-window".to_owned()));
    // The export: a relative name (under `target/`, where the tests run), the absolute
    // path said.
    let name = format!("target/view-{}.csv", std::process::id());
    b.ui.dispatch(Action::ExportTo(std::path::PathBuf::from(&name)));
    let path = std::env::current_dir().unwrap().join(&name);
    let text = std::fs::read_to_string(&path).expect("written where the workbench runs");
    std::fs::remove_file(&path).unwrap();
    let screen = b.screen(240, 50);
    assert!(screen.contains(&path.display().to_string()), "{screen}");
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_owned).collect();
    let records: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let exported: Vec<&str> = records.iter().map(|r| &r[at("targetId")]).collect();
    assert_eq!(exported, ids, "the view's targets in the view's order");
    for id in &rule_ids {
        assert!(header.contains(&format!("rule.{id}")), "{id} in {header:?}");
    }
    assert!(
        !header.contains(&"rule.context-window".to_owned()),
        "{header:?}"
    );
    // `Y`: the same rows as TSV on the clipboard.
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT));
    let copied = b.ui.clipboard.take().expect("copied");
    let lines: Vec<&str> = copied.lines().collect();
    assert_eq!(lines.len(), 1 + ids.len(), "{copied}");
    assert!(lines[0].split('\t').any(|h| h == "targetId"), "{copied}");
    for (line, id) in lines[1..].iter().zip(&ids) {
        assert!(line.split('\t').any(|c| c == id), "{line} has {id}");
    }
}

/// Transposed (`t`), the grid formats turn with the view: a row per target, a column
/// per rule, in the view's order; the tidy rows stay a row per target.
#[test]
fn the_grid_follows_the_transposed_view() {
    let mut b = open();
    b.chars("3\\gpt");
    b.press(KeyCode::Enter);
    b.chars("sR");
    b.chars("t");
    let shown: Vec<String> = {
        let p = b.ui.page().unwrap();
        let d = &p.ws.page.target;
        (0..p.matrix.shown_len(d.rows.len()))
            .map(|i| d.rows[p.matrix.shown(i)]["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(shown.len() > 1);
    let path = b.dir.path().join("t.md");
    b.ui.dispatch(Action::ExportTo(path.clone()));
    let md = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    // The header names the rules; then a row per shown target, in the view's order.
    assert!(lines[0].contains("Streaming Support"), "{md}");
    let ids: Vec<String> = lines[1..]
        .iter()
        .map(|l| {
            l.trim_start_matches("| ")
                .split(" |")
                .next()
                .unwrap()
                .trim()
                .trim_start_matches('★')
                .to_owned()
        })
        .filter(|id| shown.contains(id))
        .collect();
    assert_eq!(ids, shown, "{md}");
    let screen = b.screen(200, 50);
    assert!(screen.contains("a row per target"), "{screen}");
}

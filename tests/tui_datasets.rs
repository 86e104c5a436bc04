//! The dataset pane: rows, search, schema, following the matrix selection, editing a
//! cell in place, and live reload of a linked file in the workbench.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::app::App;
use rulebench::app::dataset::ImportOptions;
use rulebench::tui::action::{Action, PaneId};
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;
use rulebench::tui::view;
use rulebench_core::model::Side;
use serde_json::{Value, json};

const PAGE: &str = "ds";

/// 2 clients × 2 models, one required streaming rule.
fn page_json() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": PAGE, "name": "Datasets",
        "source": {"name": "Clients", "key": ["id"], "label": "name",
                   "rows": [{"id": "web", "name": "Web", "needsStreaming": true},
                            {"id": "batch", "name": "Batch", "needsStreaming": false}]},
        "target": {"name": "Models", "key": ["id"], "label": "name",
                   "rows": [{"id": "m1", "name": "M1", "supportsStreaming": true},
                            {"id": "m2", "name": "M2", "supportsStreaming": false}]},
        "rules": [{"id": "streaming", "name": "Streaming", "required": true,
                   "logic": {"or": [{"==": [{"var": "source.needsStreaming"}, false]},
                                    {"==": [{"var": "target.supportsStreaming"}, true]}]}}]
    })
}

struct Bench {
    dir: tempfile::TempDir,
    db: PathBuf,
    ui: Ui,
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let mut app = App::open(&db).unwrap();
    app.import(&page_json().to_string(), "ds.json", false)
        .unwrap();
    (dir, db)
}

fn open() -> Bench {
    let (dir, db) = setup();
    let ui = Ui::new(App::open(&db).unwrap(), Some(PAGE), Theme::mono()).unwrap();
    Bench { dir, db, ui }
}

impl Bench {
    fn press(&mut self, code: KeyCode) {
        self.ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn chars(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    fn screen(&self, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| view::render(f, &self.ui)).unwrap();
        t.backend().to_string()
    }

    fn revision(&self) -> i64 {
        App::open(&self.db).unwrap().page(PAGE).unwrap().1
    }

    fn verdict(&self, target: &str) -> u8 {
        let ws = &self.ui.page().unwrap().ws;
        let t = ws.page.target.find_row(target).unwrap();
        ws.eval.devices[t].verdict.number()
    }

    fn stored(&self) -> Value {
        let (page, _) = App::open(&self.db).unwrap().page(PAGE).unwrap();
        serde_json::to_value(&page).unwrap()
    }
}

#[test]
fn the_pane_lists_rows_searches_shows_the_schema_and_follows_the_target() {
    let mut b = open();
    b.press(KeyCode::Char('9'));
    assert_eq!(b.ui.page().unwrap().focus, PaneId::Dataset);
    let screen = b.screen(160, 48);
    assert!(screen.contains("Dataset · target (2 rows)"), "{screen}");
    assert!(screen.contains("M1") && screen.contains("M2"), "{screen}");
    // The matrix selecting target m2 moves the pane there.
    b.ui.dispatch(Action::TargetSelected(1));
    assert_eq!(b.ui.page().unwrap().dataset.row(), Some(1));
    // Space: the source rows; the search narrows them.
    b.press(KeyCode::Char(' '));
    assert_eq!(b.ui.page().unwrap().dataset.side, Side::Source);
    b.press(KeyCode::Char('\\'));
    b.chars("batch");
    b.press(KeyCode::Enter);
    let st = &b.ui.page().unwrap().dataset;
    assert_eq!(st.matches, vec![1]);
    // The schema.
    b.press(KeyCode::Char('s'));
    let screen = b.screen(160, 48);
    assert!(screen.contains("needsStreaming"), "{screen}");
    assert!(screen.contains("boolean"), "{screen}");
}

#[test]
fn many_rows_render_fast() {
    let (dir, db) = setup();
    let rows: String = (0..10_000)
        .map(|i| format!("m{i},M{i},{}\n", i % 2 == 0))
        .collect();
    let csv = dir.path().join("big.csv");
    std::fs::write(&csv, format!("id,name,supportsStreaming\n{rows}")).unwrap();
    let mut app = App::open(&db).unwrap();
    app.import_dataset(
        PAGE,
        Side::Target,
        &csv,
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let mut ui = Ui::new(app, Some(PAGE), Theme::mono()).unwrap();
    ui.dispatch(Action::Focus(PaneId::Dataset));
    ui.dispatch(Action::End);
    let started = Instant::now();
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    for _ in 0..10 {
        t.draw(|f| view::render(f, &ui)).unwrap();
    }
    assert!(t.backend().to_string().contains("M9999"));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn editing_a_cell_makes_a_revision_and_moves_a_verdict() {
    let mut b = open();
    let before = b.revision();
    assert_eq!(b.verdict("m2"), 0, "web needs streaming; m2 lacks it");
    b.press(KeyCode::Char('9'));
    b.ui.dispatch(Action::TargetSelected(1));
    b.press(KeyCode::Enter);
    b.chars("supportsStreaming=true");
    b.press(KeyCode::Enter);
    assert_eq!(b.revision(), before + 1);
    assert_eq!(b.ui.page().unwrap().ws.revision, before + 1);
    assert_eq!(b.verdict("m2"), 2, "{:?}", b.ui.status.message);
    assert_eq!(
        b.stored()["target"]["rows"][1]["supportsStreaming"],
        json!(true),
        "stored as JSON, not as a string"
    );
    // A value that is not JSON is a string.
    b.press(KeyCode::Enter);
    b.chars("name=Model two");
    b.press(KeyCode::Enter);
    assert_eq!(b.stored()["target"]["rows"][1]["name"], json!("Model two"));
}

#[test]
fn an_invalid_edit_is_refused_and_changes_nothing() {
    let mut b = open();
    let before = (b.stored(), b.revision());
    b.press(KeyCode::Char('9'));
    b.ui.dispatch(Action::TargetSelected(1));
    // m2 renamed to m1: a duplicate key.
    b.press(KeyCode::Enter);
    b.chars("id=m1");
    b.press(KeyCode::Enter);
    let (message, _) = b.ui.status.message.clone().unwrap();
    assert!(message.contains("refused"), "{message}");
    assert_eq!((b.stored(), b.revision()), before);
    assert_eq!(b.ui.page().unwrap().ws.revision, before.1);
    // No `=`: nothing happens either.
    b.press(KeyCode::Enter);
    b.chars("oops");
    b.press(KeyCode::Enter);
    assert_eq!((b.stored(), b.revision()), before);
}

#[test]
fn a_linked_file_change_reloads_the_open_page() {
    linked_file_change_reloads(|app, db| {
        Ui::with_db(app, Some(PAGE), Theme::mono(), Some(db)).unwrap()
    });
}

/// In the workbench proper the page is reopened on a background thread with its own
/// connection, and taken in on the key thread with drafts and selection kept.
#[test]
fn a_linked_file_change_reopens_the_page_off_the_key_thread() {
    linked_file_change_reloads(|app, db| {
        Ui::workbench(app, Some(PAGE), Theme::mono(), Some(db)).unwrap()
    });
}

fn linked_file_change_reloads(make: fn(App, PathBuf) -> Ui) {
    let (dir, db) = setup();
    let csv = dir.path().join("models.csv");
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\n").unwrap();
    let mut app = App::open(&db).unwrap();
    let opts = ImportOptions {
        link: true,
        ..ImportOptions::default()
    };
    app.import_dataset(PAGE, Side::Target, &csv, &opts, &mut |_| {})
        .unwrap();
    let mut b = Bench {
        ui: make(app, db.clone()),
        dir,
        db,
    };
    assert!(b.ui.watching());
    let before = b.ui.page().unwrap().ws.revision;
    assert_eq!(b.verdict("m2"), 0);
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,true\n").unwrap();
    let started = Instant::now();
    // Until the watcher's event is taken in (the once-a-second look for changes made
    // elsewhere may see the new revision first, under load).
    let reloaded = |b: &Bench| {
        b.ui.status
            .message
            .as_ref()
            .is_some_and(|(m, _)| m.starts_with("reloaded target from"))
    };
    while started.elapsed() < Duration::from_secs(3)
        && (b.ui.page().unwrap().ws.revision == before || !reloaded(&b))
    {
        b.ui.tick(Instant::now());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(b.ui.page().unwrap().ws.revision, before + 1);
    assert_eq!(b.revision(), before + 1);
    assert_eq!(b.verdict("m2"), 2);
    assert!(
        b.ui.reload_progress.is_none(),
        "the gauge closes once the reload is done"
    );
    let (message, _) = b.ui.status.message.clone().unwrap();
    assert!(message.starts_with("reloaded target from"), "{message}");
    assert!(
        message.contains(&format!("(revision {})", before + 1)),
        "{message}"
    );
    let _ = &b.dir;
}

/// A cell edit naming a field no row has (a typo) asks first, with a did-you-mean: `n`
/// changes nothing, `y` creates the field.
#[test]
fn a_new_field_in_a_cell_edit_is_asked_about() {
    let mut b = open();
    let before = (b.stored(), b.revision());
    b.press(KeyCode::Char('9'));
    b.ui.dispatch(Action::TargetSelected(1));
    b.press(KeyCode::Enter);
    b.chars("supportStreaming=true");
    b.press(KeyCode::Enter);
    match &b.ui.modal {
        Some(rulebench::tui::ui::Modal::Confirm { message, .. }) => {
            assert!(
                message.contains("Did you mean `supportsStreaming`?"),
                "{message}"
            )
        }
        other => panic!("asked: {}", other.is_some()),
    }
    b.press(KeyCode::Char('n'));
    assert_eq!((b.stored(), b.revision()), before, "nothing changed");
    b.press(KeyCode::Enter);
    b.chars("notes=new field");
    b.press(KeyCode::Enter);
    b.press(KeyCode::Char('y'));
    assert_eq!(b.stored()["target"]["rows"][1]["notes"], json!("new field"));
    let (message, _) = b.ui.status.message.clone().unwrap();
    assert!(
        message.contains("set notes of target M2"),
        "named by label: {message}"
    );
}

/// An invalid linked file stays in sight in the header (it used to vanish from the
/// status line at the next key) until a good reload clears it.
#[test]
fn an_invalid_linked_file_stays_in_the_header_until_fixed() {
    let (dir, db) = setup();
    let csv = dir.path().join("models.csv");
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\n").unwrap();
    let mut app = App::open(&db).unwrap();
    let opts = ImportOptions {
        link: true,
        ..ImportOptions::default()
    };
    app.import_dataset(PAGE, Side::Target, &csv, &opts, &mut |_| {})
        .unwrap();
    let mut b = Bench {
        ui: Ui::with_db(app, Some(PAGE), Theme::mono(), Some(db.clone())).unwrap(),
        dir,
        db,
    };
    let header = |b: &Bench| b.screen(160, 45).lines().next().unwrap().to_owned();
    let wait = |b: &mut Bench, done: &dyn Fn(&Bench) -> bool| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) && !done(b) {
            b.ui.tick(Instant::now());
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    std::fs::write(&csv, "id,name,supportsStreaming\n\"m1,M1,true\n").unwrap();
    wait(&mut b, &|b| b.ui.linked_problem.is_some());
    assert!(
        header(&b).contains("⚠ the linked target file is invalid"),
        "{}",
        header(&b)
    );
    b.press(KeyCode::Down);
    assert!(header(&b).contains("⚠"), "still there after a key");
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,true\n").unwrap();
    wait(&mut b, &|b| b.ui.linked_problem.is_none());
    assert!(!header(&b).contains("⚠"), "{}", header(&b));
}

/// A cell typed as JSON with a key written twice is refused (it was kept as a string).
#[test]
fn a_cell_with_a_key_written_twice_is_refused() {
    use rulebench::tui::dataset_pane::parse_cell;
    let err = parse_cell(r#"meta={"a": 1, "a": 2}"#).unwrap_err();
    assert!(
        err.contains("duplicate key `a`") && err.contains("column 10"),
        "{err}"
    );
    assert_eq!(
        parse_cell(r#"meta={"a": 1}"#).unwrap().1,
        serde_json::json!({"a": 1})
    );
    assert_eq!(parse_cell("name=plain text").unwrap().1, "plain text");
}

/// Dataset columns are as wide as their content (a long field name is not cut to 12
/// characters) and numbers are right-aligned.
#[test]
fn dataset_columns_follow_their_content() {
    let mut b = common::tui::Bench::open("llm-chat-clients");
    b.chars("9z");
    let s = b.screen(200, 50);
    assert!(s.contains("supportsStructuredOutputs"), "{s}");
    assert!(!s.contains("supportsStr…"), "{s}");
    // contextWindow: 1047576 and 128000 end in the same column.
    let first: String = s
        .lines()
        .find(|l| l.contains("gpt-4.1 "))
        .unwrap()
        .to_owned();
    let second: String = s
        .lines()
        .find(|l| l.contains("gpt-4o-mini"))
        .unwrap()
        .to_owned();
    // Columns in characters (the cursor's row has a 3-byte ▶).
    let col = |l: &str, n: &str| l[..l.find(n).unwrap()].chars().count() + n.len();
    let (end_first, end_second) = (col(&first, "1047576"), col(&second, "128000"));
    assert_eq!(end_first, end_second, "right-aligned:\n{first}\n{second}");
}

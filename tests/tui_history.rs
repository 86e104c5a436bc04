//! The workbench's History dialog (`H`): the revision log, a revision against now,
//! restoring from it (a deleted rule, the policies), and the matrix compared with it.

mod common;

use common::tui::Bench;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::{Modal, Ui};
use rulebench::tui::view;

const LLM: &str = "llm-chat-clients";

fn open() -> Bench {
    Bench::open(LLM)
}

impl Bench {
    fn rule_ids(&self) -> Vec<String> {
        let ws = &self.ui.page().unwrap().ws;
        ws.page.rules.iter().map(|r| r.id.clone()).collect()
    }

    fn delete_rule(&mut self, id: &str) {
        let i = self.rule_ids().iter().position(|r| r == id).unwrap();
        self.chars("2");
        self.press(KeyCode::Home);
        for _ in 0..i {
            self.press(KeyCode::Down);
        }
        self.chars("dy");
        assert!(!self.rule_ids().contains(&id.to_owned()), "deleted");
    }
}

/// Delete a rule, open History, open the revision before the deletion, restore the
/// rule: it is back in its place, as a new revision, and the log says so.
#[test]
fn a_deleted_rule_is_restored_from_the_history_dialog() {
    let mut b = open();
    let before = b.rule_ids();
    b.delete_rule("vision");
    b.chars("H");
    let s = b.screen(120, 30);
    assert!(s.contains("removed rule vision"), "{s}");
    assert!(s.contains("imported"), "{s}");
    // The older revision, opened: what differs and what can be restored.
    b.chars("j");
    b.press(KeyCode::Enter);
    let s = b.screen(120, 30);
    assert!(s.contains("revision 1 against now"), "{s}");
    assert!(s.contains("rules removed since: vision"), "{s}");
    assert!(s.contains("restore rule vision (deleted since)"), "{s}");
    assert!(s.contains("restore the whole page as it was"), "{s}");
    // The whole page is first; the rule is next.
    b.chars("j");
    b.press(KeyCode::Enter);
    assert!(b.ui.modal.is_none(), "the dialog closes on a restore");
    assert_eq!(b.rule_ids(), before, "back in its place");
    let ws = &b.ui.page().unwrap().ws;
    assert_eq!(ws.revision, 3);
    let log = ws.app().revisions(LLM).unwrap();
    assert_eq!(log[0].change, "restored rule vision from revision 1");
    let s = b.screen(120, 30);
    assert!(
        s.contains("restored rule vision (deleted since) from revision 1 (revision 3)"),
        "{s}"
    );
}

/// `c` on a revision compares the matrix with it: the title counts what moved, the
/// moved cells are marked; `x` stops comparing.
#[test]
fn the_matrix_compares_with_a_revision_until_x() {
    let mut b = open();
    b.delete_rule("vision");
    b.chars("Hjc");
    assert!(b.ui.modal.is_none(), "the dialog closes to show the matrix");
    let ws = &b.ui.page().unwrap().ws;
    let (rev, c) = ws.comparison().expect("comparing");
    assert_eq!(rev, 1);
    // Removing a rule moves scores, and no cell of the remaining rules.
    assert_eq!(c.cells_moved, 0);
    let moved = c.verdicts_moved;
    let s = b.screen(160, 40);
    assert!(
        s.contains(&format!("vs rev 1: 0 cells, {moved} verdicts moved")),
        "{s}"
    );
    // An edit now shows against revision 1: the first rule negated moves every cell.
    b.chars("2");
    b.press(KeyCode::Home);
    b.chars("e");
    b.chars("{\"!\": ");
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::ALT));
    b.press(KeyCode::End);
    b.chars("}");
    b.press(KeyCode::Esc);
    let ws = &b.ui.page().unwrap().ws;
    let (_, c) = ws.comparison().unwrap();
    let passes_at_1 = ws
        .app()
        .page_at(LLM, 1)
        .map(|(p, _)| p.rules[0].id.clone())
        .unwrap();
    assert_eq!(passes_at_1, ws.page.rules[0].id);
    assert!(
        c.cells[0].iter().all(|&m| m),
        "every cell of the negated rule moved"
    );
    assert_eq!(c.cells_moved, c.cells[0].len());
    b.chars("3x");
    assert!(b.ui.page().unwrap().ws.chosen_comparison().is_none());
    assert!(!b.screen(160, 40).contains("vs rev"));
}

#[test]
fn the_history_dialog_keys_are_in_help_and_esc_steps_back() {
    let mut b = open();
    let help = rulebench::tui::keymap::help_lines();
    let (_, keys) = help
        .iter()
        .find(|(title, _)| title == "History dialog (H)")
        .expect("the dialog's keys are in help");
    assert!(keys.iter().any(|(k, _)| k == "c"));
    // Every dialog's keys are in the one keymap, so in help.
    for dialog in [
        "Help (?)",
        "Command palette",
        "A question",
        "A prompt",
        "Rule form",
        "JSON dialog",
    ] {
        assert!(
            help.iter()
                .any(|(title, keys)| title.starts_with(dialog) && !keys.is_empty()),
            "{dialog} is in help"
        );
    }
    b.chars("H");
    b.press(KeyCode::Enter);
    assert!(
        b.screen(120, 30)
            .contains("The page is the same as at this revision.")
    );
    b.press(KeyCode::Esc);
    assert!(
        matches!(b.ui.modal, Some(Modal::History(_))),
        "back to the list"
    );
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_none(), "closed");
}

/// A revision read off the key thread is shown only in the dialog that asked for it: a
/// History dialog closed and opened again meanwhile stays on the revision list (it used
/// to get the abandoned request's detail, and Enter then restored from it).
#[test]
fn an_abandoned_history_request_is_not_applied_to_a_later_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let app = common::open_app(&db);
    let mut ui = Ui::workbench(app, Some(LLM), Theme::mono(), Some(db.clone())).unwrap();
    let press = |ui: &mut Ui, code: KeyCode| ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    press(&mut ui, KeyCode::Char('H'));
    press(&mut ui, KeyCode::Enter); // read revision 1, in the background
    press(&mut ui, KeyCode::Esc);
    press(&mut ui, KeyCode::Char('H')); // a new dialog, asking nothing
    let started = std::time::Instant::now();
    while ui.busy() && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        ui.tick(std::time::Instant::now());
    }
    match &ui.modal {
        Some(Modal::History(s)) => assert!(s.detail.is_none(), "the old answer is dropped"),
        _ => panic!("the dialog stays open"),
    }
}

/// Sources filtered, then the source rows shrink (a restore of an older revision, a
/// reload): the list follows, nothing past the rows is drawn (it panicked).
#[test]
fn a_filtered_sources_list_follows_rows_that_shrink() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let mut app = common::open_app(&db);
    let (page, _) = app.page(LLM).unwrap();
    let ui_app = common::open_app(&db);
    let mut ui = Ui::new(ui_app, Some(LLM), Theme::mono()).unwrap();
    for c in "1\\hands".chars() {
        ui.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    // Another process keeps only the first three source rows.
    let rows: Vec<serde_json::Value> = page.source.rows[..3]
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    let mut smaller = page.clone();
    smaller.source.rows = serde_json::from_value(serde_json::Value::Array(rows)).unwrap();
    smaller.overrides.clear();
    smaller.assertions.clear();
    app.import(&serde_json::to_string(&smaller).unwrap(), "<t>", true)
        .unwrap();
    ui.tick(std::time::Instant::now() + std::time::Duration::from_secs(2));
    let s = {
        let mut t = Terminal::new(TestBackend::new(160, 40)).unwrap();
        t.draw(|f| view::render(f, &ui)).unwrap();
        t.backend().to_string()
    };
    assert!(s.contains("(0 of 3) \\hands"), "{s}");
}

/// A restored override named by a hostile row key says so with the key escaped (the
/// status line got it raw).
#[test]
fn a_restore_names_hostile_keys_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let mut app = common::open_app(&db);
    let evil = "t\u{1b}]0;pwned\u{7}";
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "evil", "name": "Evil",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": evil, "ok": true}]},
        "rules": [{"id": "ok", "name": "Ok", "required": false, "weight": 1, "category": "c",
                   "logic": {"==": [{"var": "target.ok"}, true]}}],
        "overrides": [{"sourceKey": "id=s", "targetKey": format!("id={evil}"), "value": false}]
    });
    app.import(&page.to_string(), "<t>", false).unwrap();
    app.put_override_by_keys("evil", "id=s", &format!("id={evil}"), None)
        .unwrap();
    let mut ui = Ui::new(common::open_app(&db), Some("evil"), Theme::mono()).unwrap();
    let press = |ui: &mut Ui, code: KeyCode| ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    press(&mut ui, KeyCode::Char('H'));
    press(&mut ui, KeyCode::Char('j'));
    press(&mut ui, KeyCode::Enter);
    press(&mut ui, KeyCode::Char('j')); // past "the whole page"
    press(&mut ui, KeyCode::Enter);
    let message = ui.status.message.clone().expect("a message").0;
    assert!(message.starts_with("restored override"), "{message}");
    assert!(
        !message.contains('\u{1b}') && !message.contains('\u{7}'),
        "{message:?}"
    );
    assert_eq!(ui.page().unwrap().ws.page.overrides.len(), 1, "restored");
}

//! The workbench's History dialog (`H`): the revision log, a revision against now,
//! restoring from it (a deleted rule, the policies), and the matrix compared with it.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::app::App;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::{Modal, Ui};
use rulebench::tui::view;

const LLM: &str = "llm-chat-clients";

struct Bench {
    _dir: tempfile::TempDir,
    ui: Ui,
}

fn open() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("tui.db")).unwrap();
    let ui = Ui::new(app, Some(LLM), Theme::mono()).unwrap();
    Bench { _dir: dir, ui }
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
    assert!(b.ui.page().unwrap().ws.comparison().is_none());
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

//! Drafts survive: what the person typed and did not save — a rule's text (even
//! invalid), tuned policy values, an assertion half-typed — is kept in the database per
//! page and user, and offered back on the next open after a quit, a crash or Ctrl-C.

mod common;

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::{Modal, Ui};

const LLM: &str = "llm-chat-clients";

struct Bench {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    ui: Ui,
}

impl Bench {
    fn new() -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("d.db");
        let ui = Ui::new(common::open_app(&db), Some(LLM), Theme::mono()).unwrap();
        Bench { _dir: dir, db, ui }
    }

    /// The workbench opened again on the same database (the last one closed, or gone
    /// as a crash leaves it).
    fn reopen(self) -> Bench {
        let Bench { _dir, db, ui } = self;
        drop(ui);
        let ui = Ui::new(common::open_app(&db), Some(LLM), Theme::mono()).unwrap();
        Bench { _dir, db, ui }
    }

    fn press(&mut self, code: KeyCode) {
        self.ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn chars(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    fn screen(&self) -> String {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 45)).unwrap();
        t.draw(|f| rulebench::tui::view::render(f, &self.ui))
            .unwrap();
        t.backend().to_string()
    }

    fn edit_rule(&mut self, id: &str) {
        let i = self.ui.page().unwrap().ws.page.rule(id).unwrap().0;
        self.press(KeyCode::Char('2'));
        self.press(KeyCode::Home);
        for _ in 0..i {
            self.press(KeyCode::Down);
        }
        self.press(KeyCode::Char('e'));
    }

    fn drafts(&self) -> Vec<rulebench::app::KeptDraft> {
        common::open_app(&self.db).drafts(LLM).unwrap()
    }
}

/// An invalid rule text and a quit (the Ctrl-C path saves what is valid): the text is
/// kept, said on leaving, offered on the next open, and put back in the editor.
#[test]
fn an_invalid_rule_text_survives_a_quit_and_is_offered_back() {
    let mut b = Bench::new();
    b.edit_rule("vision");
    b.chars("{\"!\": ");
    assert!(b.ui.page().unwrap().editor.is_invalid());
    let typed = b.ui.page().unwrap().editor.text();
    b.ui.flush_saves();
    let note = b.ui.exit_note.clone().expect("said on leaving");
    assert!(
        note.contains("rule `vision`") && note.contains("offered back"),
        "{note}"
    );
    let drafts = b.drafts();
    assert_eq!(drafts.len(), 1);
    assert_eq!(
        (drafts[0].item.as_str(), drafts[0].text.as_str()),
        ("vision", typed.as_str())
    );

    let mut b = b.reopen();
    let screen = b.screen();
    assert!(
        screen.contains("Unsaved edits from an earlier session"),
        "{screen}"
    );
    assert!(screen.contains("rule `vision`"), "{screen}");
    b.press(KeyCode::Char('y'));
    let p = b.ui.page().unwrap();
    assert_eq!(p.editor.text(), typed, "the text is back in the editor");
    assert!(p.editor.active && p.editor.is_invalid());
    assert!(
        b.screen()
            .contains("restored your unsaved edits: rule `vision`")
    );
    // Finished and saved, the draft is forgotten.
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::ALT));
    b.press(KeyCode::End);
    b.chars("}");
    b.ui.tick(Instant::now() + Duration::from_secs(3));
    assert!(b.drafts().is_empty());
    let (page, _) = common::open_app(&b.db).page(LLM).unwrap();
    assert!(page.rule("vision").unwrap().1.logic["!"].is_object());
}

/// A crash (nothing flushed): what the last tick kept is offered; `n` lets it go.
#[test]
fn a_crash_keeps_what_was_typed_and_n_lets_it_go() {
    let mut b = Bench::new();
    b.edit_rule("streaming");
    b.chars("{\"and\": [");
    b.ui.tick(Instant::now());
    assert_eq!(b.drafts().len(), 1, "kept while typing");
    let mut b = b.reopen();
    assert!(matches!(b.ui.modal, Some(Modal::Confirm { .. })));
    b.press(KeyCode::Char('n'));
    assert!(b.drafts().is_empty());
    assert!(!b.ui.page().unwrap().editor.active);
    let b = b.reopen();
    assert!(b.ui.modal.is_none(), "asked once");
}

/// Tuned policy values not saved yet (a crash inside the pause) come back, and are
/// saved only over the values they started from.
#[test]
fn tuned_policy_values_survive_a_crash() {
    let mut b = Bench::new();
    {
        let p = b.ui.page_mut().unwrap();
        let mut d = p.ws.page.device_policy.clone();
        d.full_threshold = 0.85;
        let s = p.ws.page.selection_policy.clone();
        p.ws.tune_policies(d, s).unwrap();
    }
    b.ui.tick(Instant::now());
    let drafts = b.drafts();
    assert_eq!(drafts.len(), 1, "{drafts:?}");
    assert_eq!(drafts[0].item, "policies");
    let mut b = b.reopen();
    assert!(b.screen().contains("policy values"));
    b.press(KeyCode::Char('y'));
    assert_eq!(
        b.ui.page().unwrap().ws.page.device_policy.full_threshold,
        0.85
    );
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let (page, _) = common::open_app(&b.db).page(LLM).unwrap();
    assert_eq!(page.device_policy.full_threshold, 0.85);
    assert!(b.drafts().is_empty(), "saved, and forgotten");
}

/// An assertion half-typed in its dialog comes back in the dialog.
#[test]
fn a_half_typed_assertion_survives_a_crash() {
    let mut b = Bench::new();
    b.press(KeyCode::Char('7'));
    b.press(KeyCode::Char('a'));
    let Some(Modal::Json(state)) = &mut b.ui.modal else {
        panic!("the JSON dialog is open");
    };
    state.textarea.insert_str("{\"description\": \"half");
    let typed = state.text();
    b.ui.tick(Instant::now());
    let mut b = b.reopen();
    b.press(KeyCode::Char('y'));
    let Some(Modal::Json(state)) = &b.ui.modal else {
        panic!("the dialog is back: {}", b.screen());
    };
    assert_eq!(state.text(), typed);
    assert!(state.edited(), "Esc asks before dropping it");
}

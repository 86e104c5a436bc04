//! Undo that walks back: `u` makes the page as it was before its last change, again
//! and again further back (rule, policy, override, assertion, pin), each step a new
//! revision; Ctrl-R walks forward again; another change ends the walk.

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::KeyCode;
use rulebench::app::types::Page;
use std::time::{Duration, Instant};

const LLM: &str = "llm-chat-clients";

impl Bench {
    fn stored_at(&self, rev: i64) -> Page {
        common::open_app(&self.db()).page_at(LLM, rev).unwrap().0
    }
    fn now(&self) -> (Page, i64) {
        let ws = &self.ui.page().unwrap().ws;
        (ws.page.clone(), ws.revision)
    }
}

#[test]
fn u_walks_back_one_change_at_a_time_and_ctrl_r_forward() {
    let mut b = Bench::open(LLM);
    // Three changes: a policy step (saved when the tuning pauses), an override, a
    // rule deleted.
    b.chars("6");
    b.press(KeyCode::Home);
    b.press(KeyCode::Down);
    b.press(KeyCode::Left);
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    assert_eq!(b.now().1, 2);
    b.chars("3o");
    b.press(KeyCode::Enter); // the note, empty
    b.chars("2dy");
    let (_, after) = b.now();
    assert_eq!(after, 4);
    b.chars("u");
    let (page, rev) = b.now();
    assert!(rev > after, "a step is a new revision");
    let last = rev;
    assert_eq!(
        page.rules.len(),
        b.stored_at(1).rules.len(),
        "the rule is back"
    );
    assert!(b.screen(200, 50).contains("undid removed rule"));
    b.chars("u");
    let (page, rev) = b.now();
    assert_eq!(rev, last + 1);
    assert_eq!(
        page.overrides,
        b.stored_at(1).overrides,
        "the override is gone"
    );
    assert_ne!(page.device_policy, b.stored_at(1).device_policy);
    b.chars("u");
    let (page, _) = b.now();
    assert_eq!(page.device_policy, b.stored_at(1).device_policy);
    assert_eq!(page.rules, b.stored_at(1).rules);
    // Nothing before the first revision.
    b.chars("u");
    assert!(b.screen(200, 50).contains("nothing to undo"));
    // Forward again: the policy, then the override.
    b.ctrl('r');
    let (page, _) = b.now();
    assert_ne!(page.device_policy, b.stored_at(1).device_policy);
    assert_eq!(page.overrides, b.stored_at(1).overrides);
    b.ctrl('r');
    let (page, _) = b.now();
    assert_ne!(
        page.overrides,
        b.stored_at(1).overrides,
        "the override again"
    );
    // Another change ends the walk: nothing to redo.
    b.chars("3");
    b.press(KeyCode::Right);
    b.chars("O");
    b.press(KeyCode::Enter);
    b.ctrl('r');
    assert!(b.screen(200, 50).contains("nothing to redo"));
}

#[test]
fn a_pin_is_one_step() {
    let mut b = Bench::open(LLM);
    let before = b.now().0.assertions.len();
    b.chars("7p");
    let (page, rev) = b.now();
    assert!(
        page.assertions.len() > before + 1,
        "several assertions pinned"
    );
    assert_eq!(rev, 2, "in one revision");
    b.chars("u");
    let (page, rev) = b.now();
    assert_eq!(rev, 3);
    assert_eq!(
        page.assertions.len(),
        before,
        "one u takes the pin back whole"
    );
}

#[test]
fn history_shows_and_restores_an_assertion() {
    let mut b = Bench::open(LLM);
    let first = b.now().0.assertions[0].id.clone();
    b.chars("7");
    // The failures come first; find the assertion and remove it.
    b.chars("/");
    b.chars(&first);
    b.press(KeyCode::Enter);
    b.chars("dy");
    assert!(!b.now().0.assertions.iter().any(|a| a.id == first));
    // History: the revision before, its assertion restorable.
    b.chars("Hj");
    b.press(KeyCode::Enter);
    let s = b.screen(200, 50);
    assert!(
        s.contains(&format!("assertions removed since: {first}")),
        "{s}"
    );
    assert!(s.contains(&format!("restore assertion {first}")), "{s}");
    // The whole page first, the assertion next: restored in its place.
    b.chars("j");
    b.press(KeyCode::Enter);
    let (page, rev) = b.now();
    assert_eq!(rev, 3);
    assert_eq!(page.assertions, b.stored_at(1).assertions);
    // The log and the dialog say it.
    b.chars("H");
    assert!(
        b.screen(200, 50)
            .contains(&format!("restored assertion {first} from revision 1"))
    );
}

/// In the workbench a step runs off the key thread: a second `u` while the first is
/// under way waits its turn (two at once started from the same revision, and the second
/// could redo the first).
#[test]
fn a_second_u_while_the_first_is_under_way_is_refused() {
    use ratatui::crossterm::event::{KeyEvent, KeyModifiers};
    use rulebench::app::App;
    use rulebench::tui::theme::Theme;
    use rulebench::tui::ui::Ui;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut app = App::open(&db).unwrap();
    common::with_seed_chat(&mut app);
    // Two changes to undo.
    app.set_policy(LLM, &["fullThreshold=0.9".to_owned()])
        .unwrap();
    app.set_policy(LLM, &["fullThreshold=0.8".to_owned()])
        .unwrap();
    drop(app);
    let mut ui = Ui::workbench(
        App::open(&db).unwrap(),
        Some(LLM),
        Theme::mono(),
        Some(db.clone()),
    )
    .unwrap();
    ui.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE));
    ui.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE));
    let started = std::time::Instant::now();
    while ui.busy() {
        assert!(started.elapsed().as_secs() < 20);
        ui.tick(std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    ui.tick(std::time::Instant::now());
    let app = common::open_app(&db);
    let log = app.revisions(LLM).unwrap();
    // One step taken: the revision of 0.8 undone to 0.9.
    assert_eq!(log.len(), 4, "{log:?}");
    let (page, _) = app.page(LLM).unwrap();
    assert_eq!(page.device_policy.full_threshold, 0.9);
}

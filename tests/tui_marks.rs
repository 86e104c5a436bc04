//! Marks that last (`*`): the matrix compares with the page as it was opened for the
//! whole session, whatever autosave does; the title counts what moved; `*` and `#`
//! walk the moved cells; a revision chosen in History wins until `x`.

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const LLM: &str = "llm-chat-clients";

/// Negates the first rule in the editor and leaves it (a valid edit is saved).
fn negate_first_rule(b: &mut Bench) {
    b.chars("2");
    b.press(KeyCode::Home);
    b.chars("e");
    b.chars("{\"!\": ");
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::ALT));
    b.press(KeyCode::End);
    b.chars("}");
    b.press(KeyCode::Esc);
}

#[test]
fn marks_last_after_the_edit_is_saved() {
    let mut b = Bench::open(LLM);
    let opened_at = b.ui.page().unwrap().ws.revision;
    assert_eq!(b.ui.page().unwrap().ws.opened_revision(), Some(opened_at));
    // Nothing moved yet: the title says nothing of it.
    assert!(!b.screen(160, 40).contains("since open"));
    negate_first_rule(&mut b);
    let ws = &b.ui.page().unwrap().ws;
    assert!(ws.revision > opened_at, "the edit was saved");
    assert!(!ws.any_unsaved());
    let targets = ws.page.target.rows.len();
    assert!(
        (0..targets).all(|t| ws.changed_since_save(0, t)),
        "still marked after the save"
    );
    let (rev, c) = ws.comparison().unwrap();
    assert_eq!(rev, opened_at);
    assert_eq!(c.cells_moved, targets);
    let s = b.screen(200, 40);
    assert!(
        s.contains(&format!(
            "since open: {targets} cells, {} verdict",
            c.verdicts_moved
        )),
        "{s}"
    );
    // A second edit (the rule back as it was) leaves nothing moved: the marks are
    // against the opened state, not the last save.
    b.chars("2");
    b.press(KeyCode::Home);
    b.chars("u");
    let ws = &b.ui.page().unwrap().ws;
    assert!(
        ws.revision > opened_at + 1,
        "the revert is a revision of its own"
    );
    assert_eq!(ws.comparison().unwrap().1.cells_moved, 0);
    assert!(!b.screen(200, 40).contains("since open"));
}

#[test]
fn star_and_hash_walk_the_moved_cells() {
    let mut b = Bench::open(LLM);
    negate_first_rule(&mut b);
    // Start on another rule: `*` jumps to a moved cell (rule 0 is the only one moved).
    b.chars("3");
    b.press(KeyCode::Down);
    b.press(KeyCode::Down);
    b.press(KeyCode::Right);
    b.chars("*");
    let p = b.ui.page().unwrap();
    let first = p.ws.page.rules[0].id.clone();
    assert_eq!(
        p.ws.page.rules[p.matrix.rule].id, first,
        "on the moved rule"
    );
    let t0 = p.matrix.target;
    assert!(p.ws.changed_since_save(p.matrix.rule, t0));
    assert!(b.screen(200, 40).contains("moved: "));
    // Forward is the next target along the row, back again with `#`.
    b.chars("*");
    let t1 = b.ui.page().unwrap().matrix.target;
    assert_ne!(t0, t1);
    b.chars("#");
    assert_eq!(b.ui.page().unwrap().matrix.target, t0);
    // From the last moved cell `*` wraps to the first.
    let targets = b.ui.page().unwrap().ws.page.target.rows.len();
    b.press(KeyCode::End);
    assert_eq!(b.ui.page().unwrap().matrix.target, targets - 1);
    b.chars("*");
    assert_eq!(b.ui.page().unwrap().matrix.target, 0);
    // Transposed, the walk goes along the target's row.
    b.chars("t*");
    assert_eq!(b.ui.page().unwrap().matrix.target, 1);
}

#[test]
fn nothing_moved_says_so() {
    let mut b = Bench::open(LLM);
    b.chars("3*");
    let s = b.screen(200, 40);
    assert!(
        s.contains("no cell shown moved since the page was opened"),
        "{s}"
    );
}

#[test]
fn a_revision_chosen_wins_until_x_then_the_opened_state_again() {
    let mut b = Bench::open(LLM);
    let opened_at = b.ui.page().unwrap().ws.revision;
    negate_first_rule(&mut b);
    // Compare with the revision after the edit: nothing moved against it.
    b.chars("Hc");
    let ws = &b.ui.page().unwrap().ws;
    let (rev, c) = ws.chosen_comparison().expect("chosen");
    assert!(rev > opened_at);
    assert_eq!(c.cells_moved, 0);
    assert!(
        b.screen(200, 40)
            .contains(&format!("vs rev {rev}: 0 cells"))
    );
    b.chars("3x");
    let ws = &b.ui.page().unwrap().ws;
    assert!(ws.chosen_comparison().is_none());
    let (rev, c) = ws.comparison().unwrap();
    assert_eq!(rev, opened_at, "back to the page as opened");
    assert_eq!(c.cells_moved, ws.page.target.rows.len());
}

/// In the workbench (background work on its threads) the opened state loads after the
/// first results; a save before that does not move what `*` compares with.
#[test]
fn a_save_before_the_opened_state_loads_does_not_lose_it() {
    use rulebench::app::App;
    use rulebench::tui::theme::Theme;
    use rulebench::tui::ui::Ui;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut app = App::open(&db).unwrap();
    common::with_seed_chat(&mut app);
    drop(app);
    let mut ui = Ui::workbench(
        App::open(&db).unwrap(),
        Some(LLM),
        Theme::mono(),
        Some(db.clone()),
    )
    .unwrap();
    let opened_at = ui.page().unwrap().ws.revision;
    // A target forced incompatible (saved at once), before any tick.
    ui.handle_key(KeyEvent::new(KeyCode::Char('3'), KeyModifiers::NONE));
    ui.handle_key(KeyEvent::new(KeyCode::Char('O'), KeyModifiers::SHIFT));
    ui.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(ui.page().unwrap().ws.revision > opened_at, "saved");
    let started = std::time::Instant::now();
    while ui.page().unwrap().ws.opened_revision().is_none() {
        assert!(started.elapsed().as_secs() < 20, "the opened state loads");
        ui.settle();
        ui.tick(std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(ui.page().unwrap().ws.opened_revision(), Some(opened_at));
    let (rev, c) = ui.page().unwrap().ws.comparison().unwrap();
    assert_eq!(rev, opened_at);
    assert!(
        c.verdicts_moved > 0,
        "the override moved a verdict since the opening"
    );
}

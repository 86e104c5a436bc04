//! The view is kept per page: the selection, the focused pane, zoom, the matrix's
//! transpose, order, filter, what it shows and its folds, the lists' filters — put
//! back on reopen, by key and id (what is gone since is left out).

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::KeyCode;
use rulebench::app::App;
use rulebench::tui::matrix::{Show, Sort};
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;

const LLM: &str = "llm-chat-clients";

fn reopen(b: Bench) -> Bench {
    let Bench { dir, mut ui } = b;
    // What quitting does.
    ui.flush_saves();
    drop(ui);
    let app = App::open(&dir.path().join("tui.db")).unwrap();
    let ui = Ui::new(app, Some(LLM), Theme::mono()).unwrap();
    Bench { dir, ui }
}

#[test]
fn the_view_comes_back_on_reopen() {
    let mut b = Bench::open(LLM);
    // Sources: the third one, sorted by verdict.
    b.chars("1");
    b.press(KeyCode::Down);
    b.press(KeyCode::Down);
    b.chars("s");
    let selection = b.ui.page().unwrap().ws.selection;
    // Matrix: filtered, sorted by verdict reversed, transposed, a category folded.
    b.chars("3\\gpt");
    b.press(KeyCode::Enter);
    b.chars("s");
    b.chars("R");
    b.chars("c");
    b.chars("t");
    b.press(KeyCode::Down);
    let before = {
        let p = b.ui.page().unwrap();
        (
            p.matrix.target,
            p.matrix.collapsed.clone(),
            p.matrix.shown_len(p.ws.page.target.rows.len()),
        )
    };
    assert!(!before.1.is_empty(), "a category folded");
    // Tests: failures only. Then back to the Matrix, zoomed.
    b.chars("7f3z");
    let b = reopen(b);
    let p = b.ui.page().unwrap();
    assert_eq!(p.ws.selection, selection, "the selection");
    assert!(p.sources.by_verdict);
    assert_eq!(p.focus, rulebench::tui::action::PaneId::Matrix);
    assert!(p.zoom);
    assert!(p.matrix.transposed);
    assert_eq!(p.matrix.filter, "gpt");
    assert_eq!(p.matrix.sort, Sort::Verdict);
    assert!(p.matrix.reversed);
    assert_eq!(p.matrix.show, Show::All);
    assert_eq!(p.matrix.collapsed, before.1);
    assert_eq!(p.matrix.target, before.0, "the cursor's target");
    assert_eq!(p.matrix.shown_len(p.ws.page.target.rows.len()), before.2);
    assert!(p.tests.only_failures);
    let s = b.screen(200, 50);
    assert!(s.contains("\\gpt"), "{s}");
}

#[test]
fn a_view_naming_what_is_gone_keeps_the_rest() {
    let mut b = Bench::open(LLM);
    // Sort by the first rule, then delete that rule.
    b.chars("3[");
    let first = b.ui.page().unwrap().ws.page.rules[0].id.clone();
    assert_eq!(b.ui.page().unwrap().matrix.sort, Sort::Rule(0));
    b.chars("t");
    let b = reopen(b);
    assert_eq!(b.ui.page().unwrap().matrix.sort, Sort::Rule(0), "kept");
    let b = {
        let mut app = common::open_app(&b.db());
        app.remove_rule(LLM, &first).unwrap();
        reopen(b)
    };
    let p = b.ui.page().unwrap();
    assert!(p.matrix.transposed, "the rest of the view");
    // The rule sorted by is gone: page order (not another rule's index).
    assert_eq!(p.matrix.sort, Sort::Page);
}

#[test]
fn a_read_only_database_opens_without_keeping_a_view() {
    let b = Bench::open(LLM);
    let db = b.db();
    drop(b.ui);
    let app = App::open_read_only(&db).unwrap();
    let mut ui = Ui::new(app, Some(LLM), Theme::mono()).unwrap();
    ui.flush_saves();
    assert!(ui.page().is_some());
}

/// A page removed elsewhere keeps no view when the workbench leaves it (one was left
/// behind, and renaming another page to that id then failed on it).
#[test]
fn no_view_is_kept_for_a_page_that_is_gone() {
    let b = Bench::open(LLM);
    let Bench { dir, mut ui } = b;
    let db = dir.path().join("tui.db");
    let mut other = App::open(&db).unwrap();
    other.delete_page(LLM).unwrap();
    ui.flush_saves();
    drop(ui);
    assert!(
        other.kept_view(LLM).unwrap().is_none(),
        "no view for a page that is gone"
    );
    // Another page renamed to that id: no old view in the way.
    other.rename_page("loan-eligibility", LLM).unwrap();
    assert!(other.page(LLM).is_ok());
}

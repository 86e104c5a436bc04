//! Text that does not fit says so: a long infix line scrolled sideways shows `…` where
//! its start is out of sight, and a line too long for the pane ends in `…`.

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::KeyCode;

#[test]
fn a_long_infix_line_marks_its_hidden_start() {
    let mut b = Bench::open("loan-eligibility");
    b.chars("2e");
    // Replace the rule with one long infix line (JSONLogic view: F2 for infix).
    b.press(KeyCode::F(2));
    let ed = &mut b.ui.page_mut().unwrap().editor;
    ed.textarea.select_all();
    ed.textarea.cut();
    b.chars("source.credit_score >= 600 and source.age >= 18 and source.annualIncome >= 10000 and source.employmentYears >= 1");
    let s = b.screen(80, 24);
    let editor_line = s
        .lines()
        .find(|l| l.contains("employmentYears"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(
        editor_line.contains("…"),
        "the start is out of sight: {editor_line}"
    );
    assert!(
        !editor_line.contains("source.credit_score"),
        "{editor_line}"
    );
    // Out of the editor the line is cut at its end, with `…`.
    b.press(KeyCode::Esc);
    let s = b.screen(80, 24);
    let editor_line = s
        .lines()
        .find(|l| l.contains("source.credit_score >= 600"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(editor_line.contains("…"), "{editor_line}");
}

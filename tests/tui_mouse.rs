//! Mouse clicks (with `--mouse`): a click focuses the pane under it and selects the
//! matrix cell, rule or source under it.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rulebench::app::App;
use rulebench::tui::action::PaneId;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;
use rulebench::tui::view;

fn screen(ui: &Ui) -> Vec<Vec<char>> {
    let mut t = Terminal::new(TestBackend::new(200, 50)).unwrap();
    t.draw(|f| view::render(f, ui)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..40)
        .map(|y| {
            (0..200)
                .map(|x| buf[(x, y)].symbol().chars().next().unwrap_or(' '))
                .collect()
        })
        .collect()
}

/// The screen position of the first `needle` on a line containing `row_text`.
fn find(s: &[Vec<char>], row_text: &str, needle: &str, nth: usize) -> (u16, u16) {
    for (y, line) in s.iter().enumerate() {
        let text: String = line.iter().collect();
        if let Some(start) = text.find(row_text) {
            let from = text[..start].chars().count();
            let hits: Vec<usize> = (from..line.len())
                .filter(|&x| line[x..].iter().collect::<String>().starts_with(needle))
                .collect();
            return (hits[nth] as u16, y as u16);
        }
    }
    panic!("{row_text} not on screen");
}

#[test]
fn clicks_focus_panes_and_select_cells_rules_and_sources() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("m.db")).unwrap();
    let mut ui = Ui::new(app, Some("llm-chat-clients"), Theme::mono()).unwrap();
    let s = screen(&ui);
    // The fourth target's cell of "Streaming Support" (o1-pro fails it).
    let (x, y) = find(&s, "│■Streaming Support", "✗", 0);
    ui.click(x, y);
    let p = ui.page().unwrap();
    assert_eq!(p.focus, PaneId::Matrix);
    let streaming = p.ws.page.rule("streaming").unwrap().0;
    assert_eq!(p.matrix.rule, streaming);
    let t = p.matrix.target;
    assert_eq!(p.ws.page.target.rows[t]["id"], "o1-pro");
    assert!(!p.ws.eval.columns[streaming].passed(t), "the ✗ clicked");
    assert_eq!(p.explain.target, t, "the explanation follows");
    // A rule in the Rules pane.
    let s = screen(&ui);
    let (x, y) = find(&s, "│  Price Budget", "P", 0);
    ui.click(x, y);
    let p = ui.page().unwrap();
    assert_eq!(p.focus, PaneId::Rules);
    assert_eq!(p.matrix.rule, p.ws.page.rule("price-budget").unwrap().0);
    // A source: the selection moves.
    let s = screen(&ui);
    let (x, y) = find(&s, "Offline Notes", "O", 0);
    ui.click(x, y);
    let p = ui.page().unwrap();
    assert_eq!(p.focus, PaneId::Sources);
    let d = &p.ws.page.source;
    assert!(
        d.row_label(&d.rows[p.ws.selection])
            .starts_with("Offline Notes")
    );
    // Any other pane: focused.
    let s = screen(&ui);
    let (x, y) = find(&s, "6 Policy", "P", 0);
    ui.click(x, y + 2);
    assert_eq!(ui.page().unwrap().focus, PaneId::Policy);
}

/// A click in the strip right of the last drawn target column selects nothing (it
/// selected the next target, which is not drawn).
#[test]
fn a_click_right_of_the_last_column_selects_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("m.db")).unwrap();
    let mut ui = Ui::new(app, Some("llm-chat-clients"), Theme::mono()).unwrap();
    let s = screen(&ui);
    let (left, y) = find(&s, "│■Streaming Support", "│", 0);
    // The matrix pane's right border on that row, and one column inside it.
    let line = &s[y as usize];
    let border = (left as usize + 1..line.len())
        .find(|&x| line[x] == '│')
        .expect("the right border");
    let before = ui.page().unwrap().matrix.target;
    ui.click(border as u16 - 1, y);
    let p = ui.page().unwrap();
    assert_eq!(p.focus, PaneId::Matrix);
    assert_eq!(p.matrix.target, before, "nothing selected");
}

/// The wheel moves in the pane under the pointer, focused or not (over an unfocused
/// Sources pane it did nothing while over the Matrix it moved the cursor); the focus
/// stays where it was.
#[test]
fn the_wheel_moves_in_the_pane_under_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("w.db")).unwrap();
    let mut ui = Ui::new(app, Some("llm-chat-clients"), Theme::mono()).unwrap();
    let s = screen(&ui);
    // Focus the matrix, then wheel over the Sources list.
    ui.dispatch(rulebench::tui::action::Action::Focus(PaneId::Matrix));
    let (x, y) = find(&s, "● t3.chat", "t", 0);
    let before = ui.page().unwrap().ws.selection;
    ui.wheel(x, y, rulebench::tui::action::Action::Down);
    let p = ui.page().unwrap();
    assert_eq!(p.ws.selection, before + 1, "the selection moved");
    assert_eq!(p.focus, PaneId::Matrix, "the focus stayed");
    // Over the Rules pane: its cursor moves.
    let (x, y) = find(&s, "┃  Tool Calling", "T", 0);
    let cursor = ui.page().unwrap().rules.cursor;
    ui.wheel(x, y, rulebench::tui::action::Action::Down);
    assert_eq!(ui.page().unwrap().rules.cursor, cursor + 1);
}

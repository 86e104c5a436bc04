//! The rule editor's diagnostics panel: wrapped (nothing cut, at 80 columns too), the
//! line of text quoted with a caret under the column, the hint in full.

mod common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;
use rulebench::tui::view;

fn open() -> (tempfile::TempDir, Ui) {
    let dir = tempfile::tempdir().unwrap();
    let app = common::open_app(&dir.path().join("tui.db"));
    let ui = Ui::new(app, Some("llm-chat-clients"), Theme::mono()).unwrap();
    (dir, ui)
}

fn press(ui: &mut Ui, code: KeyCode) {
    ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn typed(ui: &mut Ui, text: &str) {
    for c in text.chars() {
        press(ui, KeyCode::Char(c));
    }
}

fn screen(ui: &Ui, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::render(f, ui)).unwrap();
    t.backend().to_string()
}

/// Replaces the first rule's text in the editor with `text`, typed.
fn edit_first_rule(ui: &mut Ui, text: &str) {
    typed(ui, "2");
    press(ui, KeyCode::Home);
    typed(ui, "4e");
    let p = ui.page_mut().unwrap();
    p.editor.textarea.select_all();
    p.editor.textarea.cut();
    typed(ui, text);
}

/// Unwraps the screen's rows between the borders of the editor pane.
fn rows(s: &str) -> Vec<String> {
    s.lines().map(|l| l.trim_matches('"').to_owned()).collect()
}

#[test]
fn a_syntax_error_is_quoted_with_a_caret_under_its_column() {
    let (_dir, mut ui) = open();
    edit_first_rule(&mut ui, "{\"==\": [1, 2]] }");
    let s = screen(&ui, 80, 24);
    let r = rows(&s);
    let quote = r
        .iter()
        .position(|l| l.contains("  1 │ {\"==\": [1, 2]] }"))
        .unwrap_or_else(|| panic!("the line is quoted:\n{s}"));
    let caret = &r[quote + 1];
    let col = caret.find('^').expect("a caret under it");
    let bracket = r[quote].find("] }").expect("the stray bracket");
    assert_eq!(col, bracket, "under the column of the error:\n{s}");
    assert!(s.contains("✗ json-syntax 1:14"), "{s}");
}

/// An unknown field: the message and its did-you-mean hint are whole at 80×24, wrapped
/// over lines instead of cut at the pane's edge.
#[test]
fn the_hint_is_whole_at_80_columns() {
    let (_dir, mut ui) = open();
    edit_first_rule(
        &mut ui,
        "{\"==\": [{\"var\": \"source.needsStreamng\"}, true]}",
    );
    let p = ui.page().unwrap();
    let diags: Vec<_> = match &p.editor.draft {
        Some(rulebench::app::workspace::Draft::Invalid { diagnostics }) => diagnostics.clone(),
        Some(rulebench::app::workspace::Draft::Valid { warnings, .. }) => warnings.clone(),
        None => panic!("checked"),
    };
    let d = diags
        .iter()
        .find(|d| {
            d.hint
                .as_deref()
                .is_some_and(|h| h.contains("needsStreaming"))
        })
        .expect("a did-you-mean");
    let s = screen(&ui, 80, 24);
    // The panel's text, joined across its wrapped lines (inside the pane's borders).
    let joined: String = rows(&s)
        .iter()
        .filter_map(|l| {
            let inner = l.trim_start_matches(|c| c != '│' && c != '┃');
            inner
                .get(3..)
                .map(|t| t.trim_end_matches(['│', '┃', ' ']).to_owned())
        })
        .collect::<Vec<_>>()
        .join("");
    let hint = d.hint.as_deref().unwrap();
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    assert!(
        squeeze(&joined).contains(&squeeze(hint)),
        "the whole hint `{hint}` is on screen:\n{s}"
    );
}

/// Leaving the editor without a change clears its "editing: …" hint (it stayed).
#[test]
fn leaving_the_editor_drops_the_editing_hint() {
    let (_dir, mut ui) = open();
    typed(&mut ui, "2");
    typed(&mut ui, "4e");
    assert!(screen(&ui, 120, 30).contains("editing: Esc leaves"));
    press(&mut ui, KeyCode::Esc);
    let s = screen(&ui, 120, 30);
    assert!(!s.contains("editing: Esc leaves"), "{s}");
}

/// The caret stands under the column as drawn: a JSON syntax error's column counts
/// characters (serde_json counts bytes: each `é` moved it right), and text drawn escaped
/// (a tab shows as `\t`) moves it as far as it is drawn.
#[test]
fn the_caret_counts_characters_as_drawn() {
    use rulebench::app::expr::read_json as parse_json;
    use rulebench::app::types::Diagnostic;
    let caret = |text: &str| -> (String, String) {
        let d: Diagnostic = *parse_json::<serde_json::Value>(text).unwrap_err();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let panel = rulebench::tui::editor::diagnostic_lines(&[d], &lines, 100);
        (panel[0].1.clone(), panel[1].1.clone())
    };
    // The error is at the `x`.
    let (quote, mark) = caret(r#"{"a": "café", x}"#);
    let col = |s: &str, c: char| s.chars().position(|x| x == c).unwrap();
    assert_eq!(col(&mark, '^'), col(&quote, 'x'), "{quote}\n{mark}");
    let (quote, mark) = caret("{\t\"a\": 1 x}");
    assert!(quote.contains("\\t"), "{quote}");
    assert_eq!(col(&mark, '^'), col(&quote, 'x'), "{quote}\n{mark}");
}

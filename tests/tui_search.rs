//! Find like the tools people know (`/`, then `n` / `N`) in every list and in the
//! matrix, the best match selected; filters on their own key (`\`).

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::KeyCode;
use rulebench::app::App;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;

/// A workbench on a synthetic page of 100 rules ("Rule 0" … "Rule 99") and 300
/// targets ("Model 0" …).
fn hundred_rules() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let mut app = App::open(&db).unwrap();
    let page =
        rulebench::app::synth::page(300, 100, 3, rulebench::app::synth::Spread::Realistic, 7);
    let text = serde_json::to_string(&page).unwrap();
    app.import(&text, "synth.json", false).unwrap();
    let ui = Ui::new(App::open(&db).unwrap(), Some(&page.id), Theme::mono()).unwrap();
    Bench { dir, ui }
}

fn rule_at_cursor(b: &Bench) -> String {
    let p = b.ui.page().unwrap();
    p.ws.page.rules[p.rules.selected().unwrap()].name.clone()
}

/// Types a find and enters it.
fn find(b: &mut Bench, query: &str) {
    b.chars("/");
    b.chars(query);
    b.press(KeyCode::Enter);
}

#[test]
fn find_in_rules_selects_the_best_match_and_n_walks() {
    let mut b = hundred_rules();
    b.chars("2");
    find(&mut b, "Rule 77");
    assert_eq!(rule_at_cursor(&b), "Rule 77");
    // Find does not filter: every rule is still listed.
    assert_eq!(b.ui.page().unwrap().rules.order.len(), 100);
    let s = b.screen(200, 50);
    assert!(s.contains("for `Rule 77`"), "{s}");
    // `n` and `N` walk the matches and come back.
    b.chars("n");
    let next = rule_at_cursor(&b);
    b.chars("N");
    assert_eq!(rule_at_cursor(&b), "Rule 77");
    assert_ne!(next, "Rule 77", "another match after it (wrapping)");
    // The selected rule follows into the matrix and the editor.
    let p = b.ui.page().unwrap();
    assert_eq!(p.ws.page.rules[p.matrix.rule].name, "Rule 77");
}

#[test]
fn the_filter_is_its_own_key_and_cuts() {
    let mut b = hundred_rules();
    b.chars("2\\");
    b.chars("Rule 77");
    b.press(KeyCode::Enter);
    let p = b.ui.page().unwrap();
    let names: Vec<&str> = p
        .rules
        .order
        .iter()
        .map(|&i| p.ws.page.rules[i].name.as_str())
        .collect();
    assert_eq!(names.first(), Some(&"Rule 77"), "{names:?}");
    assert!(
        names.len() < 100,
        "a word no rule has is not ignored: {names:?}"
    );
    assert_eq!(rule_at_cursor(&b), "Rule 77");
}

#[test]
fn find_in_the_matrix_targets_then_rules() {
    let mut b = hundred_rules();
    b.chars("3");
    find(&mut b, "Model 250");
    let p = b.ui.page().unwrap();
    let d = &p.ws.page.target;
    assert_eq!(d.row_label(&d.rows[p.matrix.target]), "Model 250");
    // A rule's name is found too.
    find(&mut b, "Rule 42");
    let p = b.ui.page().unwrap();
    assert_eq!(p.ws.page.rules[p.matrix.rule].name, "Rule 42");
    // Nothing found says so and moves nothing.
    find(&mut b, "zzzqqq");
    assert!(
        b.screen(200, 50)
            .contains("no target or rule shown matches `zzzqqq`")
    );
    let p = b.ui.page().unwrap();
    assert_eq!(p.ws.page.rules[p.matrix.rule].name, "Rule 42");
}

#[test]
fn find_in_sources_dataset_and_the_picker() {
    let mut b = Bench::open("llm-chat-clients");
    // Sources: the selection moves to the match (the matrix follows).
    b.chars("1");
    find(&mut b, "t3");
    let ws = &b.ui.page().unwrap().ws;
    let d = &ws.page.source;
    assert!(d.row_key(&d.rows[ws.selection]).contains("t3-chat"));
    // Dataset rows: the cursor moves, the rows stay listed.
    b.chars("9");
    let listed = b.ui.page().unwrap().dataset.matches.len();
    find(&mut b, "llama");
    let p = b.ui.page().unwrap();
    assert_eq!(p.dataset.matches.len(), listed);
    let row = p.dataset.row().unwrap();
    let d = &p.ws.page.target;
    assert!(d.row_key(&d.rows[row]).contains("llama"));
    // `n` with no find yet on a fresh workbench says what to do.
    let mut fresh = Bench::open("llm-chat-clients");
    fresh.chars("2n");
    assert!(fresh.screen(200, 50).contains("nothing to find yet"));
    // A pane without a list says so.
    fresh.chars("6/");
    assert!(fresh.ui.modal.is_none());
    assert!(fresh.screen(200, 50).contains("nothing to find in Policy"));
    // The picker: the best page selected, the list unfiltered.
    fresh.chars("P");
    find(&mut fresh, "loan");
    let s = fresh.screen(200, 50);
    assert!(s.contains("for `loan`"), "{s}");
    fresh.press(KeyCode::Enter);
    assert_eq!(fresh.ui.page().unwrap().ws.page.id, "loan-eligibility");
}

/// The palette knows where it is: on the picker its entries are the pages and the
/// picker's commands; an entry that cannot run says why instead of running.
#[test]
fn the_palette_is_context_aware() {
    let mut b = Bench::open("llm-chat-clients");
    b.chars("P:");
    b.chars("loan");
    let s = b.screen(120, 30);
    assert!(s.contains("open page loan-eligibility"), "{s}");
    assert!(!s.contains("Matrix"), "no page commands on the picker: {s}");
    b.press(KeyCode::Enter);
    assert_eq!(b.ui.page().unwrap().ws.page.id, "loan-eligibility");
    // On the page: stop comparing, when not comparing, says why and does nothing.
    b.chars(":");
    b.chars("stop comparing");
    let s = b.screen(120, 30);
    assert!(s.contains("cannot run now: not comparing"), "{s}");
    b.press(KeyCode::Enter);
    let s = b.screen(120, 30);
    assert!(s.contains("not comparing with a revision"), "{s}");
    assert!(b.ui.modal.is_none());
}

/// Help wraps to the terminal and is searchable: `/` in help narrows it to the keys
/// whose text, keys or place have every word typed; Esc clears, Esc again closes.
#[test]
fn help_wraps_and_searches() {
    let mut b = Bench::open("llm-chat-clients");
    b.chars("?");
    let s = b.screen(80, 40);
    // A long line wraps under itself: its end is on screen, not cut.
    assert!(s.contains("drops it)"), "{s}");
    b.chars("/undo page");
    let s = b.screen(100, 30);
    assert!(s.contains("undo the page's last change"), "{s}");
    assert!(!s.contains("focus Sources"), "{s}");
    assert!(s.contains("search: undo page"), "{s}");
    b.press(KeyCode::Backspace);
    assert!(b.screen(100, 30).contains("search: undo pag"));
    b.press(KeyCode::Esc);
    let s = b.screen(100, 30);
    assert!(s.contains("/ searches"), "cleared: {s}");
    assert!(b.ui.modal.is_some());
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_none());
}

/// End in help reaches its last line on a narrow screen too (the end was counted on
/// unwrapped lines, short of the wrapped help's bottom).
#[test]
fn end_reaches_the_bottom_of_wrapped_help() {
    let mut b = Bench::open("llm-chat-clients");
    b.screen(80, 24);
    b.chars("?");
    b.screen(80, 24);
    b.press(KeyCode::End);
    let s = b.screen(80, 24);
    assert!(s.contains("Frequency view (F in the Matrix)"), "{s}");
    assert!(s.contains("close"), "{s}");
}

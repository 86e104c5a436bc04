//! Finding things at scale in the workbench: the matrix's target filter (`/`), what it
//! shows (`f`), its order (`s`), the transposed view (`t`), and zoom (`z`).

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::KeyCode;
use rulebench::app::App;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;

/// The sample chat page, the Matrix focused.
fn open() -> Bench {
    let mut b = Bench::open("llm-chat-clients");
    b.chars("3");
    b
}

impl Bench {
    /// The targets the matrix shows, in order.
    fn shown(&self) -> Vec<usize> {
        let p = self.ui.page().unwrap();
        let n = p.ws.page.target.rows.len();
        (0..p.matrix.shown_len(n))
            .map(|i| p.matrix.shown(i))
            .collect()
    }

    fn label(&self, t: usize) -> String {
        let d = &self.ui.page().unwrap().ws.page.target;
        d.row_label(&d.rows[t])
    }

    fn cursor(&self) -> usize {
        self.ui.page().unwrap().matrix.target
    }
}

#[test]
fn f_shows_only_targets_not_fully_compatible_then_those_that_moved() {
    let mut b = open();
    let all = b.shown().len();
    b.chars("f");
    let shown = b.shown();
    let ws = &b.ui.page().unwrap().ws;
    let failing: Vec<usize> = (0..all)
        .filter(|&t| ws.eval.devices[t].verdict != rulebench::app::types::FULL)
        .collect();
    assert!(
        !failing.is_empty() && failing.len() < all,
        "the sample has both"
    );
    assert_eq!(shown, failing);
    assert!(
        failing.contains(&b.cursor()),
        "the cursor is on a shown target"
    );
    let s = b.screen(200, 45);
    assert!(
        s.contains(&format!(
            "{} of {all} shown: not fully compatible",
            failing.len()
        )),
        "{s}"
    );
    // Right moves among the shown targets only.
    let first = b.cursor();
    b.press(KeyCode::Right);
    assert_eq!(
        b.cursor(),
        failing[failing.iter().position(|&t| t == first).unwrap() + 1]
    );
    // Nothing moved since the save: none shown, and the pane says how to get back.
    b.chars("f");
    assert!(b.shown().is_empty());
    assert!(b.screen(200, 45).contains("No target shown"));
    b.chars("f");
    assert_eq!(b.shown().len(), all);
}

#[test]
fn slash_filters_targets_by_label_and_esc_clears() {
    let mut b = open();
    let all = b.shown().len();
    b.chars("\\claude");
    let shown = b.shown();
    assert!(!shown.is_empty() && shown.len() < all);
    assert!(
        shown
            .iter()
            .all(|&t| b.label(t).to_lowercase().contains("claude"))
    );
    b.press(KeyCode::Enter);
    assert_eq!(b.shown(), shown, "Enter keeps the filter");
    assert!(b.screen(200, 45).contains("\\claude"));
    b.chars("\\");
    b.press(KeyCode::Esc);
    assert_eq!(b.shown().len(), all, "Esc clears it");
    // A filter that matches nothing says so.
    b.chars("\\zzzz");
    b.press(KeyCode::Enter);
    assert!(b.shown().is_empty());
    assert!(b.screen(200, 45).contains("no target matches `zzzz`"));
}

#[test]
fn s_sorts_by_verdict_score_and_label() {
    let mut b = open();
    b.chars("s");
    let ws = &b.ui.page().unwrap().ws;
    let v: Vec<(u8, f64)> = b
        .shown()
        .iter()
        .map(|&t| {
            (
                ws.eval.devices[t].verdict.number(),
                ws.eval.devices[t].score,
            )
        })
        .collect();
    assert!(
        v.windows(2)
            .all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 <= w[1].1)),
        "worst verdict first, then lowest score: {v:?}"
    );
    b.chars("s");
    let ws = &b.ui.page().unwrap().ws;
    let scores: Vec<f64> = b
        .shown()
        .iter()
        .map(|&t| ws.eval.devices[t].score)
        .collect();
    assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{scores:?}");
    b.chars("s");
    let labels: Vec<String> = b
        .shown()
        .iter()
        .map(|&t| b.label(t).to_lowercase())
        .collect();
    assert!(labels.windows(2).all(|w| w[0] <= w[1]), "{labels:?}");
    assert!(b.screen(200, 45).contains("by label"));
    // Then each summary field of the targets (here: provider), then page order.
    b.chars("s");
    assert!(b.screen(200, 45).contains("by provider"));
    b.chars("s");
    assert_eq!(
        b.shown(),
        (0..b.shown().len()).collect::<Vec<_>>(),
        "page order"
    );
}

#[test]
fn t_transposes_targets_into_rows_and_back() {
    let mut b = open();
    b.chars("z");
    b.chars("t");
    let s = b.screen(120, 30);
    assert!(s.contains("v score"), "{s}");
    // Every target is a row: the labels are at the start of lines.
    let first = b.label(0);
    let second = b.label(1);
    assert!(
        s.lines()
            .any(|l| l.contains(&format!("┃★{first}")) || l.contains(&format!("┃{first}"))),
        "{s}"
    );
    assert!(s.lines().any(|l| l.contains(&format!("┃{second}"))), "{s}");
    // Down moves to the next target, Right to the next rule.
    let rule = b.ui.page().unwrap().matrix.rule;
    b.press(KeyCode::Down);
    assert_eq!(b.cursor(), 1);
    b.press(KeyCode::Right);
    assert_ne!(b.ui.page().unwrap().matrix.rule, rule);
    b.chars("t");
    assert!(!b.screen(120, 30).contains("v score"));
}

#[test]
fn z_zooms_the_focused_pane_and_back() {
    let mut b = open();
    assert!(b.screen(160, 40).contains("1 Chat clients"));
    b.chars("z");
    let s = b.screen(160, 40);
    assert!(!s.contains("1 Chat clients"), "{s}");
    assert!(s.contains("3 Matrix"), "{s}");
    b.chars("z");
    assert!(b.screen(160, 40).contains("1 Chat clients"));
}

/// A failing assertion is listed first; `f` in Tests lists only the failures.
#[test]
fn tests_list_failures_first_and_f_shows_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    {
        let mut app = App::open(&db).unwrap();
        let broken: rulebench::app::types::Assertion = serde_json::from_value(serde_json::json!({
            "id": "zz-broken",
            "description": "a verdict that is not so",
            "select": "t3-chat",
            "path": "$.selectionVerdict",
            "matcher": "toEqual",
            "expected": 0
        }))
        .unwrap();
        app.put_assertion("llm-chat-clients", broken).unwrap();
    }
    let ui = Ui::new(
        App::open(&db).unwrap(),
        Some("llm-chat-clients"),
        Theme::mono(),
    )
    .unwrap();
    let mut b = Bench { dir, ui };
    b.chars("7");
    let tests = &b.ui.page().unwrap().tests;
    let listed: Vec<(String, bool)> = tests
        .listed()
        .map(|r| (r.assertion_id.clone(), r.passed))
        .collect();
    assert!(listed.len() > 1);
    assert_eq!(listed[0], ("zz-broken".to_owned(), false), "{listed:?}");
    assert!(listed[1..].iter().all(|(_, passed)| *passed));
    b.chars("f");
    let tests = &b.ui.page().unwrap().tests;
    assert_eq!(tests.listed().count(), 1);
    assert!(b.screen(200, 50).contains("only the 1 failing assertions"));
    b.chars("z");
    assert!(b.screen(200, 50).contains("failures only"));
    b.chars("z");
    b.chars("f");
    assert_eq!(b.ui.page().unwrap().tests.listed().count(), listed.len());
}

/// `/` in Sources filters them (the selection follows to a match); `s` lists the worst
/// selection verdict first.
#[test]
fn sources_filter_and_sort_by_verdict() {
    let mut b = open();
    b.chars("1\\pocket");
    b.press(KeyCode::Enter);
    let p = b.ui.page().unwrap();
    let n = p.ws.page.source.rows.len();
    let listed = p.sources.listed(n);
    assert_eq!(listed.len(), 1);
    let d = &p.ws.page.source;
    assert!(d.row_label(&d.rows[listed[0]]).starts_with("Pocket"));
    assert_eq!(
        p.ws.selection, listed[0],
        "the selection follows the filter"
    );
    assert!(b.screen(160, 40).contains("(1 of 7) \\pocket"));
    b.chars("\\");
    b.press(KeyCode::Esc);
    b.chars("s");
    let p = b.ui.page().unwrap();
    let listed = p.sources.listed(n);
    let v: Vec<u8> = listed
        .iter()
        .map(|&i| p.sources.verdicts[i].number())
        .collect();
    assert_eq!(listed.len(), n);
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "{v:?}");
    assert_eq!(v[0], 0, "the sample has an incompatible source");
    // Down walks the listed order.
    b.press(KeyCode::Home);
    b.press(KeyCode::Down);
    assert_eq!(b.ui.page().unwrap().ws.selection, listed[1]);
}

/// Every field is a column of the Dataset pane; → scrolls them while the row labels
/// stay; the title says which fields are shown.
#[test]
fn the_dataset_pane_scrolls_its_fields_with_the_label_frozen() {
    let mut b = open();
    b.chars("9");
    let p = b.ui.page().unwrap();
    let fields = p.dataset.fields.clone();
    assert!(fields.len() > 6, "{fields:?}");
    assert_eq!(fields[0], "id", "key fields first");
    let d = &p.ws.page.target;
    let label = d.row_label(&d.rows[0]);
    let s = b.screen(120, 40);
    assert!(s.contains("fields 1–"), "{s}");
    assert!(!s.contains("◀ row"));
    let last = fields.last().unwrap().clone();
    let last_head: String = last.chars().take(11).collect();
    for _ in 0..fields.len() {
        b.press(KeyCode::Right);
    }
    let s = b.screen(120, 40);
    assert!(s.contains("◀ row"), "{s}");
    assert!(s.contains(&last_head), "the last field is reachable: {s}");
    assert!(s.contains(&label), "the label column stays: {s}");
    assert!(!s.contains(" id "), "the first field scrolled away");
    let max = b.ui.page().unwrap().dataset.col_offset;
    assert!(max > 0);
    b.press(KeyCode::Right);
    assert_eq!(
        b.ui.page().unwrap().dataset.col_offset,
        max,
        "no scrolling past the end"
    );
    b.press(KeyCode::Left);
    assert_eq!(b.ui.page().unwrap().dataset.col_offset, max - 1);
}

/// `c` folds the cursor's category into one row (✓ where all its rules pass, ✗n where n
/// fail) and back; `g` and `G` go to the first and last row.
#[test]
fn c_folds_a_category_and_g_goes_to_the_first_and_last_row() {
    let mut b = open();
    b.chars("G");
    let last = b.ui.page().unwrap().matrix.rule;
    let rules = b.ui.page().unwrap().ws.page.rules.clone();
    assert_eq!(last, rules.len() - 1, "the last rule in display order");
    b.chars("g");
    assert_eq!(b.ui.page().unwrap().matrix.rule, 0);
    // Fold "Advanced Features" (two rules): one row, and the cursor steps over it.
    b.press(KeyCode::Down);
    let advanced = b.ui.page().unwrap().matrix.rule;
    let category = rules[advanced].category.clone();
    let members = rules.iter().filter(|r| r.category == category).count();
    assert!(members > 1);
    b.chars("c");
    let s = b.screen(160, 40);
    assert!(s.contains(&format!("▸ {category}")), "{s}");
    let in_matrix =
        |s: &str, name: &str| s.contains(&format!("┃ {name}")) || s.contains(&format!("┃■{name}"));
    assert!(in_matrix(&s, &rules[3].name), "{s}");
    assert!(
        !in_matrix(&s, &rules[advanced + 1].name),
        "its rules are folded: {s}"
    );
    b.press(KeyCode::Down);
    let next = b.ui.page().unwrap().matrix.rule;
    assert_ne!(
        rules[next].category, category,
        "one stop for the folded category"
    );
    b.press(KeyCode::Up);
    b.chars("c");
    assert!(
        in_matrix(&b.screen(160, 40), &rules[advanced + 1].name),
        "unfolded"
    );
}

/// A cell edit changes what the target filter matches at once (the filter's text was
/// cached until the page was reopened).
#[test]
fn the_target_filter_sees_a_cell_edit() {
    let mut b = open();
    b.chars("\\zzfast");
    b.press(KeyCode::Enter);
    assert!(b.shown().is_empty());
    let t = 4;
    b.ui.dispatch(rulebench::tui::action::Action::SetCell {
        side: rulebench::app::types::Side::Target,
        row: t,
        field: "displayName".into(),
        value: serde_json::json!("zzfast model"),
    });
    assert_eq!(b.shown(), vec![t], "{}", b.screen(160, 40));
}

/// Selecting a rule of a folded category (from Rules) puts the matrix cursor on the
/// folded row (it pointed at a hidden rule and the view jumped to the top).
#[test]
fn selecting_a_folded_rule_lands_on_its_folded_row() {
    let mut b = open();
    b.press(KeyCode::Down);
    let first = b.ui.page().unwrap().matrix.rule;
    b.chars("c");
    let rules = b.ui.page().unwrap().ws.page.rules.clone();
    let second = (0..rules.len())
        .filter(|&r| rules[r].category == rules[first].category)
        .nth(1)
        .expect("the category has two rules");
    b.ui.dispatch(rulebench::tui::action::Action::RuleSelected(second));
    assert_eq!(b.ui.page().unwrap().matrix.rule, first);
}

/// The transposed matrix draws at any size, a target marked ★ and ⚑ at a label column
/// two wide included (a u16 underflow).
#[test]
fn the_transposed_matrix_draws_at_tiny_sizes() {
    let mut b = open();
    // The recommended target (the first) overridden too: ★ and ⚑ on one label.
    b.press(KeyCode::Home);
    b.chars("o");
    b.press(KeyCode::Enter);
    let p = b.ui.page().unwrap();
    let t = p.ws.eval.recommended.expect("a recommendation");
    assert!(
        p.ws.eval.overrides.get(t).is_some(),
        "overridden and recommended"
    );
    b.chars("zt");
    for w in 3..=16u16 {
        for h in 3..=8u16 {
            let _ = b.screen(w, h);
        }
    }
}

/// Typing a Sources filter does not move the selection (each move recomputes the
/// matrix); Enter does, when the filter hides it; Esc leaves it where it was.
#[test]
fn the_sources_filter_moves_the_selection_only_when_entered() {
    let mut b = open();
    let before = b.ui.page().unwrap().ws.selection;
    b.chars("1\\pocket");
    assert_eq!(
        b.ui.page().unwrap().ws.selection,
        before,
        "typing moves nothing"
    );
    b.press(KeyCode::Esc);
    assert_eq!(
        b.ui.page().unwrap().ws.selection,
        before,
        "Esc: where it was"
    );
    b.chars("\\pocket");
    b.press(KeyCode::Enter);
    let p = b.ui.page().unwrap();
    let d = &p.ws.page.source;
    assert!(d.row_label(&d.rows[p.ws.selection]).starts_with("Pocket"));
}

/// Transposed, labels are as wide as they need while the screen has room: five
/// `anthropic.claude-3-5…` models read apart (they were cut at 20 characters with
/// 190 columns blank).
#[test]
fn transposed_labels_use_the_room_there_is() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut app = App::open(&db).unwrap();
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "long", "name": "Long labels",
        "source": {"name": "Apps", "key": ["id"], "rows": [{"id": "a"}]},
        "target": {"name": "Models", "key": ["id"], "rows": [
            {"id": "anthropic.claude-3-5-sonnet-20240620-v1:0", "ok": true},
            {"id": "anthropic.claude-3-5-sonnet-20241022-v2:0", "ok": false},
            {"id": "anthropic.claude-3-5-haiku-20241022-v1:0", "ok": true}]},
        "rules": [{"id": "ok", "name": "OK", "logic": {"==": [{"var": "target.ok"}, true]}}]
    });
    app.import(&page.to_string(), "long.json", false).unwrap();
    let ui = Ui::new(App::open(&db).unwrap(), Some("long"), Theme::mono()).unwrap();
    let mut b = Bench { dir, ui };
    b.chars("3t");
    let s = b.screen(200, 50);
    for id in [
        "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "anthropic.claude-3-5-sonnet-20241022-v2:0",
    ] {
        assert!(s.contains(id), "{id} whole:\n{s}");
    }
}

//! Sort and count: `s` reaches the summary fields, `R` reverses; the frequency view
//! (`F`) counts per rule and per summary field value over the targets shown, and Enter
//! on a row shows only its targets (Esc: all again).

mod common;

use common::tui::Bench;
use ratatui::crossterm::event::KeyCode;
use rulebench::tui::frequency::Row;
use rulebench::tui::matrix::Sort;
use rulebench::tui::ui::Modal;

fn open() -> Bench {
    let mut b = Bench::open("llm-chat-clients");
    b.chars("3");
    b
}

fn shown(b: &Bench) -> Vec<usize> {
    let p = b.ui.page().unwrap();
    let n = p.ws.page.target.rows.len();
    (0..p.matrix.shown_len(n))
        .map(|i| p.matrix.shown(i))
        .collect()
}

fn freq_rows(b: &Bench) -> Vec<Row> {
    match &b.ui.modal {
        Some(Modal::Frequency(s)) => s.rows.clone(),
        _ => panic!("the frequency view is open: {}", b.screen(160, 45)),
    }
}

#[test]
fn s_sorts_by_a_summary_field_and_r_reverses() {
    let mut b = open();
    let field = b.ui.page().unwrap().ws.page.target.summary[0].clone();
    b.chars("ssss");
    assert_eq!(b.ui.page().unwrap().matrix.sort, Sort::Field(0));
    let value = |b: &Bench, t: usize| {
        let d = &b.ui.page().unwrap().ws.page.target;
        d.rows[t]
            .get(&field)
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    let order = shown(&b);
    let values: Vec<String> = order.iter().map(|&t| value(&b, t)).collect();
    let mut sorted = values.clone();
    sorted.sort();
    assert_eq!(values, sorted, "by {field}");
    assert!(b.screen(200, 45).contains(&format!("by {field}")));
    b.chars("R");
    let reversed: Vec<String> = shown(&b).iter().map(|&t| value(&b, t)).collect();
    sorted.reverse();
    assert_eq!(reversed, sorted);
}

#[test]
fn the_frequency_view_counts_and_enter_shows_only_those() {
    let mut b = open();
    let all = shown(&b).len();
    b.chars("F");
    let rows = freq_rows(&b);
    // Rules, the most failing first, counts adding up to the targets shown.
    let rules: Vec<(usize, usize, usize, usize)> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Rule {
                rule,
                pass,
                fail,
                not_applicable,
                ..
            } => Some((*rule, *pass, *fail, *not_applicable)),
            _ => None,
        })
        .collect();
    assert_eq!(rules.len(), b.ui.page().unwrap().ws.page.rules.len());
    assert!(rules.iter().all(|(_, p, f, n)| p + f + n == all));
    assert!(
        rules.windows(2).all(|w| w[0].2 >= w[1].2),
        "most failing first"
    );
    let (worst, _, failing, _) = rules[0];
    assert!(failing > 0);
    let s = b.screen(160, 45);
    assert!(s.contains("Frequency over the"), "{s}");
    // Enter on the first rule row: only the targets failing it.
    b.press(KeyCode::Enter);
    assert!(b.ui.modal.is_none());
    let only = shown(&b);
    assert_eq!(only.len(), failing);
    let p = b.ui.page().unwrap();
    assert!(
        only.iter()
            .all(|&t| p.ws.eval.columns[worst].outcome[t] != rulebench::app::types::PASS)
    );
    let name = p.ws.page.rules[worst].name.clone();
    assert!(b.screen(200, 45).contains(&format!("only failing {name}")));
    // Esc: all again.
    b.press(KeyCode::Esc);
    assert_eq!(shown(&b).len(), all);
    // A value of the summary field: Enter shows only the targets with it.
    b.chars("F");
    let rows = freq_rows(&b);
    let (at, field, value, total) = rows
        .iter()
        .enumerate()
        .find_map(|(i, r)| match r {
            Row::Value {
                field,
                value,
                full,
                partial,
                none,
            } => Some((i, field.clone(), value.clone(), full + partial + none)),
            _ => None,
        })
        .expect("a value row");
    let first_rule = rows
        .iter()
        .position(|r| matches!(r, Row::Rule { .. }))
        .unwrap();
    // Down to it (headings are skipped).
    let steps = rows[first_rule..at]
        .iter()
        .filter(|r| matches!(r, Row::Rule { .. } | Row::Value { .. }))
        .count();
    for _ in 0..steps {
        b.press(KeyCode::Down);
    }
    b.press(KeyCode::Enter);
    let only = shown(&b);
    assert_eq!(only.len(), total);
    let d = &b.ui.page().unwrap().ws.page.target;
    assert!(only.iter().all(|&t| d.rows[t].get(&field) == Some(&value)));
    // Esc closes the view without filtering.
    b.press(KeyCode::Esc);
    b.chars("F");
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_none());
    assert_eq!(shown(&b).len(), all);
}

#[test]
fn the_frequency_view_at_80_by_24() {
    let mut b = open();
    b.chars("F");
    insta::assert_snapshot!("frequency_80x24", b.screen(80, 24));
}

/// What the matrix shows only, and the rule it sorts by, follow their rule when
/// another rule is deleted before it (they were kept by place and named another).
#[test]
fn only_and_the_sort_follow_their_rule_when_rules_move() {
    let mut b = open();
    b.chars("F");
    b.press(KeyCode::Enter);
    let (id, name) = {
        let p = b.ui.page().unwrap();
        match &p.matrix.only {
            Some(rulebench::tui::only::Only::Failing(id)) => {
                (id.clone(), p.ws.page.rule(id).unwrap().1.name.clone())
            }
            other => panic!("{other:?}"),
        }
    };
    let shown_before = shown(&b);
    // Delete the first rule of the page (not the one shown only).
    let first = b.ui.page().unwrap().ws.page.rules[0].id.clone();
    assert_ne!(first, id);
    b.chars("2");
    b.press(KeyCode::Home);
    b.chars("dy");
    b.chars("3");
    let s = b.screen(320, 45);
    assert!(s.contains(&format!("only failing {name}")), "{s}");
    assert_eq!(shown(&b), shown_before);
    // Sorted by a rule, then a rule before it deleted: still by it.
    b.press(KeyCode::Esc);
    let p = b.ui.page().unwrap();
    let target_rule = p.ws.page.rules.iter().position(|r| r.id == id).unwrap();
    b.chars("2");
    b.press(KeyCode::Home);
    for _ in 0..target_rule {
        b.press(KeyCode::Down);
    }
    b.chars("3[");
    assert!(b.screen(320, 45).contains(&format!("by {name}")));
    b.chars("2");
    b.press(KeyCode::Home);
    b.chars("dy");
    b.chars("3");
    assert!(
        b.screen(320, 45).contains(&format!("by {name}")),
        "{}",
        b.screen(320, 45)
    );
}

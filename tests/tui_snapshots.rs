//! Snapshots (insta) of every pane and screen on ratatui's TestBackend, without colour
//! (NO_COLOR style: glyphs carry the meaning). Timings and timestamps are masked.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::app::App;
use rulebench::tui::action::PaneId;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;
use rulebench::tui::view;

fn ui(page: Option<&str>) -> (tempfile::TempDir, Ui) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("snap.db")).unwrap();
    let ui = Ui::new(app, page, Theme::mono()).unwrap();
    (dir, ui)
}

fn press(ui: &mut Ui, code: KeyCode) {
    ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// Masks what changes from run to run: millisecond timings and timestamps.
fn mask(screen: String) -> String {
    let mut out = String::with_capacity(screen.len());
    let chars: Vec<char> = screen.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // `12.34 ms` → `#.## ms`
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let number: String = chars[start..i].iter().collect();
            if rest == " ms" && number.contains('.') {
                out.push_str("#.##");
            } else {
                out.push_str(&number);
            }
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    // 2026-11-22 01:59:06 → ####-##-## ##:##:##
    let mut masked = String::new();
    for line in out.lines() {
        let mut l = line.to_owned();
        while let Some(pos) = find_timestamp(&l) {
            l.replace_range(pos..pos + 19, "####-##-## ##:##:##");
        }
        masked.push_str(&l);
        masked.push('\n');
    }
    masked
}

fn find_timestamp(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(18)).find(|&i| {
        let s = &b[i..i + 19];
        s[4] == b'-'
            && s[7] == b'-'
            && (s[10] == b' ' || s[10] == b'T')
            && s[13] == b':'
            && s[16] == b':'
            && s.iter()
                .enumerate()
                .all(|(k, c)| [4, 7, 10, 13, 16].contains(&k) || c.is_ascii_digit())
    })
}

fn screen(ui: &Ui, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::render(f, ui)).unwrap();
    mask(t.backend().to_string())
}

/// One pane of the page, drawn alone through the [`Pane`] trait, focused.
fn pane(ui: &Ui, id: PaneId, w: u16, h: u16) -> String {
    let page = ui.page().unwrap();
    let theme = Theme::mono();
    let pane = page.panes().into_iter().find(|p| p.id() == id).unwrap();
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| pane.render(f, f.area(), &page.look(&theme, true)))
        .unwrap();
    mask(t.backend().to_string())
}

#[test]
fn picker() {
    let (_d, ui) = ui(None);
    insta::assert_snapshot!(screen(&ui, 120, 12));
}

#[test]
fn page_screen_wide_and_narrow() {
    let (_d, ui) = ui(Some("llm-chat-clients"));
    insta::assert_snapshot!("page_wide", screen(&ui, 180, 48));
    insta::assert_snapshot!("page_narrow", screen(&ui, 100, 30));
}

/// The three sizes people use: 80×24 shows ≥ 3 targets, 120×35 ≥ 6 (the matrix across
/// the right side), 200×50 every pane.
#[test]
fn layouts_at_three_sizes() {
    let (_d, mut ui) = ui(Some("llm-chat-clients"));
    press(&mut ui, KeyCode::Char('3'));
    for (w, h) in [(80, 24), (120, 35), (200, 50)] {
        let s = screen(&ui, w, h);
        // "1–N/14": the targets the matrix shows.
        let shown: usize = s
            .split("1–")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let least = match w {
            80 => 3,
            120 => 6,
            _ => 9,
        };
        assert!(shown >= least, "{w}×{h} shows {shown} targets:\n{s}");
        insta::assert_snapshot!(format!("layout_{w}x{h}"), s);
    }
}

#[test]
fn every_pane() {
    let (_d, mut ui) = ui(Some("llm-chat-clients"));
    // Put the cursor on an interesting cell: Tool Calling × Llama 3.3 70B.
    press(&mut ui, KeyCode::Char('3'));
    for _ in 0..2 {
        press(&mut ui, KeyCode::Down);
    }
    for _ in 0..8 {
        press(&mut ui, KeyCode::Right);
    }
    insta::assert_snapshot!("sources", pane(&ui, PaneId::Sources, 40, 10));
    insta::assert_snapshot!("rules", pane(&ui, PaneId::Rules, 60, 12));
    insta::assert_snapshot!("matrix", pane(&ui, PaneId::Matrix, 120, 24));
    insta::assert_snapshot!("editor", pane(&ui, PaneId::Editor, 70, 16));
    insta::assert_snapshot!("explain", pane(&ui, PaneId::Explain, 60, 30));
    insta::assert_snapshot!("policy", pane(&ui, PaneId::Policy, 44, 18));
    insta::assert_snapshot!("overrides", pane(&ui, PaneId::Overrides, 60, 8));
}

#[test]
fn editor_with_an_error() {
    let (_d, mut ui) = ui(Some("llm-chat-clients"));
    press(&mut ui, KeyCode::Char('2'));
    press(&mut ui, KeyCode::Char('e'));
    press(&mut ui, KeyCode::Char('x'));
    insta::assert_snapshot!(pane(&ui, PaneId::Editor, 90, 14));
}

#[test]
fn dialogs() {
    let (_d, mut ui) = ui(Some("llm-chat-clients"));
    press(&mut ui, KeyCode::Char('?'));
    insta::assert_snapshot!("help", screen(&ui, 100, 40));
    press(&mut ui, KeyCode::Esc);
    press(&mut ui, KeyCode::Char(':'));
    for c in "rule".chars() {
        press(&mut ui, KeyCode::Char(c));
    }
    insta::assert_snapshot!("palette", screen(&ui, 100, 30));
    press(&mut ui, KeyCode::Esc);
    press(&mut ui, KeyCode::Char('2'));
    press(&mut ui, KeyCode::Char('m'));
    insta::assert_snapshot!("rule_form", screen(&ui, 100, 30));
}

#[test]
fn masking_works() {
    assert_eq!(
        mask("render 12.34 ms · 2026-11-22 01:59:06 · 0.60".into()),
        "render #.## ms · ####-##-## ##:##:## · 0.60\n"
    );
}

/// A page whose Vision rule applies only where the app needs vision: for the text app
/// the matrix shows `–` and the explanation says why it does not apply.
#[test]
fn a_rule_that_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("snap.db")).unwrap();
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "na", "name": "Not applicable",
        "source": {"name": "Apps", "key": ["id"], "rows": [
            {"id": "text", "needsVision": false}, {"id": "photo", "needsVision": true}]},
        "target": {"name": "Models", "key": ["id"], "rows": [
            {"id": "big", "vision": true, "context": 200000},
            {"id": "small", "vision": false, "context": 4000}]},
        "rules": [
            {"id": "vision", "name": "Vision", "weight": 0.6,
             "appliesWhen": "source.needsVision == true",
             "logic": {"==": [{"var": "target.vision"}, true]}},
            {"id": "context", "name": "Context", "weight": 0.2,
             "logic": {">=": [{"var": "target.context"}, 100000]}}
        ]
    });
    app.import(&page.to_string(), "na.json", false).unwrap();
    let mut ui = Ui::new(app, Some("na"), Theme::mono()).unwrap();
    press(&mut ui, KeyCode::Char('3'));
    insta::assert_snapshot!("na_matrix", pane(&ui, PaneId::Matrix, 90, 10));
    insta::assert_snapshot!("na_explain", pane(&ui, PaneId::Explain, 60, 16));
    // The status line marks the cell n/a, not failed (once the cursor moved: the
    // opening message goes).
    press(&mut ui, KeyCode::Char('j'));
    press(&mut ui, KeyCode::Char('k'));
    let shown = screen(&ui, 100, 30);
    assert!(shown.contains(" – vision × big: does not apply"), "{shown}");
    // The rule form edits the condition: `== true` becomes `== false`, and Vision now
    // applies to the text app (and not to the photo app).
    press(&mut ui, KeyCode::Char('2'));
    press(&mut ui, KeyCode::Char('m'));
    for _ in 0..4 {
        press(&mut ui, KeyCode::Tab);
    }
    for _ in 0.."true".len() {
        press(&mut ui, KeyCode::Backspace);
    }
    for c in "false".chars() {
        press(&mut ui, KeyCode::Char(c));
    }
    insta::assert_snapshot!("na_rule_form", screen(&ui, 100, 30));
    press(&mut ui, KeyCode::Enter);
    insta::assert_snapshot!("na_matrix_after_form", pane(&ui, PaneId::Matrix, 90, 10));
}

/// Regression: a folded category counted a rule that does not apply as failing (`✗1`
/// where every rule that applies passes).
#[test]
fn a_folded_category_leaves_n_a_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("snap.db")).unwrap();
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "na", "name": "Not applicable",
        "source": {"name": "Apps", "key": ["id"], "rows": [{"id": "text", "needsVision": false}]},
        "target": {"name": "Models", "key": ["id"], "rows": [
            {"id": "big", "vision": true, "context": 200000},
            {"id": "small", "vision": false, "context": 4000}]},
        "rules": [
            {"id": "vision", "name": "Vision", "appliesWhen": "source.needsVision == true",
             "logic": {"==": [{"var": "target.vision"}, true]}},
            {"id": "context", "name": "Context",
             "logic": {">=": [{"var": "target.context"}, 100000]}}
        ]
    });
    app.import(&page.to_string(), "na.json", false).unwrap();
    let mut ui = Ui::new(app, Some("na"), Theme::mono()).unwrap();
    press(&mut ui, KeyCode::Char('3'));
    press(&mut ui, KeyCode::Char('c'));
    let shown = pane(&ui, PaneId::Matrix, 90, 8);
    let folded = shown
        .lines()
        .find(|l| l.contains("▸ General"))
        .unwrap_or_else(|| panic!("{shown}"));
    let cells: Vec<&str> = folded.split_whitespace().collect();
    assert!(cells.contains(&"✓") && cells.contains(&"✗1"), "{folded}");
}

/// A rule family: its name heads its members in the Rules pane and the matrix (the
/// matrix's family row: ✓ where every member that applies passes, else how many fail,
/// – where none applies); a member is not opened in the editor alone.
#[test]
fn a_rule_family_is_shown_as_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("snap.db")).unwrap();
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "web", "name": "Web apps",
        "source": {"name": "Apps", "key": ["id"], "rows": [
            {"id": "shop", "uses": ["fetch", "webgpu"]}]},
        "target": {"name": "Browsers", "key": ["id"], "rows": [
            {"id": "safari-16", "features": {"fetch": true, "webgpu": false, "dialog": true}},
            {"id": "chrome-120", "features": {"fetch": true, "webgpu": true, "dialog": true}}]},
        "rules": [
            {"id": "named", "name": "Named", "logic": {"!!": [{"var": "source.id"}]}},
            {"id": "feature-{feature}", "name": "Supports {feature}",
             "each": {"feature": ["fetch", "webgpu", "dialog"]},
             "appliesWhen": "param.feature in source.uses",
             "expression": "target.features.{feature} == true"}
        ]
    });
    app.import(&page.to_string(), "web.json", false).unwrap();
    let mut ui = Ui::new(app, Some("web"), Theme::mono()).unwrap();
    press(&mut ui, KeyCode::Char('3'));
    insta::assert_snapshot!("family_matrix", pane(&ui, PaneId::Matrix, 90, 11));
    press(&mut ui, KeyCode::Char('2'));
    press(&mut ui, KeyCode::Char('j'));
    press(&mut ui, KeyCode::Char('j'));
    press(&mut ui, KeyCode::Enter);
    insta::assert_snapshot!("family_rules", pane(&ui, PaneId::Rules, 50, 8));
    let status = ui
        .status
        .message
        .clone()
        .map(|(m, _)| m)
        .unwrap_or_default();
    assert!(
        status.contains("is one of the 3 rules of the family `feature-{feature}`"),
        "{status}"
    );
}

/// `w` in the Explanation pane: what would move the cell's target to each other verdict
/// (the smallest rule outcome changes), then the threshold values; `w` again hides it.
#[test]
fn what_would_change_it() {
    let (_d, mut ui) = ui(Some("llm-chat-clients"));
    // Tool Calling × Llama 3.3 70B for t3.chat: 0, low score.
    press(&mut ui, KeyCode::Char('3'));
    for _ in 0..2 {
        press(&mut ui, KeyCode::Down);
    }
    for _ in 0..8 {
        press(&mut ui, KeyCode::Right);
    }
    press(&mut ui, KeyCode::Char('5'));
    let before = pane(&ui, PaneId::Explain, 100, 40);
    press(&mut ui, KeyCode::Char('w'));
    let shown = pane(&ui, PaneId::Explain, 100, 40);
    assert!(shown.contains("What would change it"), "{shown}");
    insta::assert_snapshot!("explain_why_not", shown);
    press(&mut ui, KeyCode::Char('w'));
    press(&mut ui, KeyCode::Home);
    assert_eq!(pane(&ui, PaneId::Explain, 100, 40), before);
}

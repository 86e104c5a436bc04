//! The workbench driven by keys on ratatui's TestBackend: state and screen.

mod common;

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::app::workspace::Draft;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;
use rulebench::tui::view;
use rulebench_core::diag::Code;

struct Bench {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    ui: Ui,
}

fn open(page: &str) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let app = common::open_app(&db);
    let ui = Ui::new(app, Some(page), Theme::mono()).unwrap();
    Bench { _dir: dir, db, ui }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

impl Bench {
    fn press(&mut self, code: KeyCode) {
        self.ui.handle_key(key(code));
    }

    fn chars(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    fn alt(&mut self, c: char) {
        self.ui
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT));
    }

    fn ctrl(&mut self, c: char) {
        self.ui
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    }

    fn screen(&self, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| view::render(f, &self.ui)).unwrap();
        t.backend().to_string()
    }

    fn target(&self, id: &str) -> usize {
        let ws = &self.ui.page().unwrap().ws;
        ws.page.target.find_row(id).unwrap()
    }

    fn rule(&self, id: &str) -> usize {
        self.ui.page().unwrap().ws.page.rule(id).unwrap().0
    }

    /// Focuses the rules pane and moves to a rule.
    fn go_to_rule(&mut self, id: &str) {
        let i = self.rule(id);
        self.press(KeyCode::Char('2'));
        self.press(KeyCode::Home);
        for _ in 0..i {
            self.press(KeyCode::Down);
        }
    }
}

#[test]
fn editing_a_rule_flips_cells_moves_verdicts_and_saves_a_revision() {
    let mut b = open("llm-chat-clients");
    let (llama, gpt) = (b.target("llama-3.3-70b"), b.target("gpt-4.1"));
    let tc = b.rule("tool-calling");
    {
        let ws = &b.ui.page().unwrap().ws;
        assert_eq!(
            ws.page.source.row_key(&ws.page.source.rows[ws.selection]),
            "clientType=web|id=t3-chat"
        );
        assert!(!ws.eval.columns[tc].passed(llama));
        assert_eq!(ws.eval.devices[gpt].verdict.number(), 2);
    }
    let revision = b.ui.page().unwrap().ws.revision;
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    assert!(b.ui.page().unwrap().editor.active);
    // Wrap the rule in a negation: `{"!": <rule>}`, typed at both ends.
    b.chars("{\"!\": ");
    assert!(
        b.ui.page().unwrap().editor.is_invalid(),
        "half-typed JSON is invalid"
    );
    b.alt('>');
    b.press(KeyCode::End);
    b.chars("}");
    let page = b.ui.page().unwrap();
    assert!(
        matches!(page.editor.draft, Some(Draft::Valid { .. })),
        "{:?}",
        page.editor.draft
    );
    // The cells flipped and the verdicts moved at once, before any save.
    assert!(page.ws.eval.columns[tc].passed(llama));
    assert!(!page.ws.eval.columns[tc].passed(gpt));
    assert_eq!(page.ws.eval.devices[gpt].verdict.number(), 1);
    assert!(page.ws.changed_since_save(tc, gpt));
    assert!(page.ws.is_unsaved(tc));
    assert_eq!(page.ws.revision, revision);
    assert!(b.screen(160, 45).contains("unsaved"));
    // The debounced save makes a revision.
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.revision, revision + 1);
    assert!(!page.ws.is_unsaved(tc));
    assert!(b.screen(160, 45).contains("saved rule tool-calling"));
    // Reopened, the edit is there.
    let app = common::open_app(&b.db);
    let (stored, rev) = app.page("llm-chat-clients").unwrap();
    assert_eq!(rev, revision + 1);
    assert_eq!(
        stored.rules[tc].logic["!"]["or"].as_array().map(Vec::len),
        Some(2)
    );
}

#[test]
fn invalid_json_shows_line_and_column_and_keeps_the_last_results() {
    let mut b = open("llm-chat-clients");
    let tc = b.rule("tool-calling");
    let before = b.ui.page().unwrap().ws.eval.columns[tc].clone();
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.press(KeyCode::Down);
    b.chars("oops");
    let page = b.ui.page().unwrap();
    match &page.editor.draft {
        Some(Draft::Invalid { diagnostics }) => {
            assert_eq!(diagnostics[0].code, Code::JsonSyntax);
            assert_eq!(diagnostics[0].line, Some(2));
        }
        other => panic!("expected an invalid draft, got {other:?}"),
    }
    assert_eq!(
        page.ws.eval.columns[tc], before,
        "the last valid results stay"
    );
    let screen = b.screen(160, 45);
    assert!(screen.contains("✗ json-syntax 2:"), "{screen}");
    assert!(screen.contains("invalid"));
    // Nothing invalid is ever saved.
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    assert_eq!(b.ui.page().unwrap().ws.revision, 1);
    // Undo brings the valid text back.
    for _ in 0..4 {
        b.ctrl('z');
    }
    assert!(!b.ui.page().unwrap().editor.is_invalid());
    // Esc leaves the editor.
    b.press(KeyCode::Esc);
    assert!(!b.ui.page().unwrap().editor.active);
}

#[test]
fn an_unknown_field_is_an_error_with_a_hint_and_blocks_saving() {
    let mut b = open("llm-chat-clients");
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    // Replace the rule by typing a new one in front and removing the rest.
    b.ctrl('a');
    let text = b.ui.page().unwrap().editor.text();
    for _ in 0..text.len() {
        b.press(KeyCode::Delete);
    }
    b.chars("{\"==\": [{\"var\": \"target.supportToolCalling\"}, true]}");
    match &b.ui.page().unwrap().editor.draft {
        Some(Draft::Invalid { diagnostics }) => {
            let d = &diagnostics[0];
            assert_eq!(d.code, Code::UnknownField);
            assert_eq!(
                d.hint.as_deref(),
                Some("did you mean `target.supportsToolCalling`?")
            );
            // Points at the offending `"var"`.
            assert_eq!((d.line, d.column), (Some(1), Some(10)));
        }
        other => panic!("expected an invalid draft, got {other:?}"),
    }
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    assert_eq!(b.ui.page().unwrap().ws.revision, 1);
}

#[test]
fn quitting_with_an_invalid_edit_asks_first() {
    let mut b = open("llm-chat-clients");
    b.go_to_rule("streaming");
    b.press(KeyCode::Char('e'));
    b.chars("x");
    b.press(KeyCode::Tab); // typing goes to the editor: Tab is text there
    b.ctrl('s');
    assert!(b.ui.page().unwrap().editor.is_invalid());
    b.press(KeyCode::Esc); // leave the editor: invalid text is not dropped unasked
    assert!(
        matches!(b.ui.modal, Some(rulebench::tui::ui::Modal::Confirm { .. })),
        "Esc on invalid text asks"
    );
    b.press(KeyCode::Char('n'));
    assert!(b.ui.page().unwrap().editor.active, "n goes on editing");
    assert!(
        b.ui.page().unwrap().editor.is_invalid(),
        "with the text kept"
    );
    b.press(KeyCode::Esc);
    b.press(KeyCode::Char('y')); // discard
    assert!(!b.ui.page().unwrap().editor.is_invalid());
    assert!(!b.ui.page().unwrap().editor.active);
    b.press(KeyCode::Char('q'));
    assert!(b.ui.quit, "nothing unsaved: q quits at once");
    let mut b = open("llm-chat-clients");
    b.go_to_rule("streaming");
    b.press(KeyCode::Char('e'));
    b.chars("x");
    b.ctrl('c');
    assert!(b.ui.quit, "Ctrl-C quits even while editing");
}

#[test]
fn help_is_generated_from_the_keymap_and_the_palette_runs_actions() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('?'));
    let screen = b.screen(160, 60);
    for binding in rulebench::tui::keymap::bindings().iter().take(12) {
        assert!(
            screen.contains(binding.help),
            "help lacks `{}`",
            binding.help
        );
    }
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_none());
    // The palette: type to filter, Enter runs.
    b.press(KeyCode::Char(':'));
    b.chars("focus policy");
    b.press(KeyCode::Enter);
    assert_eq!(
        b.ui.page().unwrap().focus,
        rulebench::tui::action::PaneId::Policy
    );
}

#[test]
fn rules_search_ranks_and_filters() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('2'));
    b.press(KeyCode::Char('\\'));
    b.chars("streaming");
    let page = b.ui.page().unwrap();
    let names: Vec<&str> = page
        .rules
        .order
        .iter()
        .map(|&i| page.ws.page.rules[i].name.as_str())
        .collect();
    assert_eq!(names.first(), Some(&"Streaming Support"), "{names:?}");
    b.press(KeyCode::Enter);
    assert!(b.screen(160, 45).contains("Rules \\streaming"));
}

#[test]
fn adding_and_deleting_a_rule_through_keys() {
    let mut b = open("loan-eligibility");
    let n = b.ui.page().unwrap().ws.page.rules.len();
    let scores: Vec<f64> =
        b.ui.page()
            .unwrap()
            .ws
            .eval
            .devices
            .iter()
            .map(|d| d.score)
            .collect();
    let revision = b.ui.page().unwrap().ws.revision;
    b.press(KeyCode::Char('2'));
    b.press(KeyCode::Char('a'));
    b.chars("Has email");
    b.press(KeyCode::Enter);
    // The new rule is written in the editor; it is not in the page until valid.
    let page = b.ui.page().unwrap();
    assert!(page.editor.active, "a new rule opens in the editor");
    assert_eq!(page.editor.new_rule.as_deref(), Some("Has email"));
    assert_eq!(page.ws.page.rules.len(), n);
    assert_eq!(
        page.ws.revision, revision,
        "nothing saved before anything is typed"
    );
    assert!(
        b.screen(200, 50)
            .contains("new rule Has email (added once valid)")
    );
    // Not a rule yet (an unknown field): nothing added, scores as they were.
    b.chars("source.cred");
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.page.rules.len(), n);
    assert!(page.editor.is_invalid());
    let now: Vec<f64> = page.ws.eval.devices.iter().map(|d| d.score).collect();
    assert_eq!(now, scores, "scores do not move for a rule not written yet");
    // Valid: in the page and the matrix at once, saved when typing pauses.
    b.chars("it_score >= 700");
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.page.rules.len(), n + 1);
    assert!(page.editor.new_rule.is_none());
    assert_eq!(page.ws.page.rules[n].name, "Has email");
    assert!(page.ws.is_new(n) && page.ws.is_unsaved(n));
    assert_eq!(page.ws.revision, revision, "not saved while typing");
    assert!(b.screen(160, 45).contains("rule Has email is valid"));
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.revision, revision + 1, "one revision");
    assert!(!page.ws.is_new(n) && !page.ws.is_unsaved(n));
    let (stored, _) = common::open_app(&b.db).page("loan-eligibility").unwrap();
    assert_eq!(
        stored.rules[n].expression.as_deref(),
        Some("source.credit_score >= 700")
    );
    b.press(KeyCode::Esc);
    // A new rule left before it is valid is dropped (asked when text was typed).
    b.chars("2a");
    b.chars("Nothing yet");
    b.press(KeyCode::Enter);
    b.chars("source.");
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_some(), "asks before dropping typed text");
    b.chars("y");
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.page.rules.len(), n + 1);
    assert!(!page.editor.active && page.editor.new_rule.is_none());
    b.press(KeyCode::Char('2'));
    b.press(KeyCode::End);
    b.press(KeyCode::Char('d'));
    b.press(KeyCode::Char('y'));
    assert_eq!(b.ui.page().unwrap().ws.page.rules.len(), n);
    // The personal tier's limit of 10 rules holds in the TUI too: at the limit `a`
    // says so at once (nothing to type for nothing).
    for i in 0..2 {
        b.press(KeyCode::Char('2'));
        b.press(KeyCode::Char('a'));
        b.chars(&format!("Extra {i}"));
        b.press(KeyCode::Enter);
        b.chars("source.age > 1");
        b.press(KeyCode::Esc);
    }
    assert_eq!(b.ui.page().unwrap().ws.page.rules.len(), 10);
    b.chars("2a");
    b.chars("One too many");
    b.press(KeyCode::Enter);
    assert!(!b.ui.page().unwrap().editor.active);
    assert_eq!(b.ui.page().unwrap().ws.page.rules.len(), 10);
    assert!(b.screen(160, 45).contains("Rule limit reached (10/10)"));
}

/// A new rule that is valid but not saved yet survives the page being reloaded after
/// another process changed it (it came back as "deleted elsewhere"), and is saved after.
#[test]
fn a_new_rule_not_saved_yet_survives_a_reload() {
    let mut b = open("loan-eligibility");
    let n = b.ui.page().unwrap().ws.page.rules.len();
    b.chars("2a");
    b.chars("Adults");
    b.press(KeyCode::Enter);
    b.chars("source.age >= 18");
    assert!(b.ui.page().unwrap().ws.is_new(n));
    // Another process changes the page meanwhile.
    let mut other = common::open_app(&b.db);
    other
        .set_policy("loan-eligibility", &["fullThreshold=0.9".to_owned()])
        .unwrap();
    b.ui.tick(Instant::now());
    let ws = &b.ui.page().unwrap().ws;
    assert_eq!(ws.page.device_policy.full_threshold, 0.9, "reloaded");
    assert_eq!(ws.page.rules.len(), n + 1, "the new rule came along");
    assert!(ws.is_new(n) && ws.is_unsaved(n));
    assert!(
        b.ui.modal.is_none(),
        "not asked about as a rule deleted elsewhere"
    );
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let (stored, _) = common::open_app(&b.db).page("loan-eligibility").unwrap();
    assert_eq!(stored.rules.len(), n + 1);
    assert_eq!(stored.device_policy.full_threshold, 0.9);
    assert_eq!(stored.rules[n].name, "Adults");
}

/// A new rule whose id another process stored meanwhile comes along under another id
/// on the reload: theirs is never written over, and the editor follows the new one.
#[test]
fn a_new_rule_never_overwrites_one_stored_elsewhere_with_its_id() {
    let mut b = open("loan-eligibility");
    let n = b.ui.page().unwrap().ws.page.rules.len();
    b.chars("2a");
    b.chars("Adults");
    b.press(KeyCode::Enter);
    b.chars("source.age >= 18");
    assert_eq!(b.ui.page().unwrap().ws.page.rules[n].id, "adults");
    // Elsewhere, a rule with that id.
    let mut other = common::open_app(&b.db);
    let theirs = serde_json::json!({"id": "adults", "name": "Theirs", "logic": {"==": [1, 1]}});
    other
        .add_rule("loan-eligibility", &theirs.to_string(), "r.json", false)
        .unwrap();
    b.ui.tick(Instant::now());
    let ws = &b.ui.page().unwrap().ws;
    let mine = ws
        .page
        .rules
        .iter()
        .position(|r| r.name == "Adults")
        .expect("mine came along");
    assert_ne!(ws.page.rules[mine].id, "adults", "under another id");
    assert!(ws.is_new(mine));
    b.chars(" and source.age < 120");
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let (stored, _) = common::open_app(&b.db).page("loan-eligibility").unwrap();
    let theirs = stored.rule("adults").unwrap().1;
    assert_eq!(theirs.name, "Theirs");
    assert_eq!(
        theirs.logic,
        serde_json::json!({"==": [1, 1]}),
        "theirs untouched"
    );
    let mine = stored
        .rules
        .iter()
        .find(|r| r.name == "Adults")
        .expect("mine stored");
    assert_eq!(
        mine.expression.as_deref(),
        Some("source.age >= 18 and source.age < 120"),
        "the editor followed the renamed rule"
    );
}

/// Esc with invalid text on a new rule that was valid once keeps its last valid version
/// (it dropped the whole rule); the text of a rule not in the page yet is not kept as a
/// draft of the rule shown before it.
#[test]
fn a_new_rule_keeps_its_last_valid_version_and_is_no_draft_of_another() {
    let mut b = open("loan-eligibility");
    let n = b.ui.page().unwrap().ws.page.rules.len();
    b.chars("2a");
    b.chars("Older");
    b.press(KeyCode::Enter);
    b.chars("source.age >");
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let app = common::open_app(&b.db);
    assert!(
        app.drafts("loan-eligibility").unwrap().is_empty(),
        "no draft of another rule"
    );
    b.chars(" 30");
    b.chars(" and");
    assert!(b.ui.page().unwrap().editor.is_invalid());
    b.press(KeyCode::Esc);
    b.chars("y");
    let ws = &b.ui.page().unwrap().ws;
    assert_eq!(ws.page.rules.len(), n + 1, "the rule stays");
    assert_eq!(
        ws.page.rules[n].logic,
        serde_json::json!({">": [{"var": "source.age"}, 30]})
    );
}

#[test]
fn dataset_strings_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = common::open_app(&dir.path().join("x.db"));
    let page = r#"{"format": "rulebench.page/v1", "id": "evil", "name": "Evil\u001b[2J",
        "source": {"name": "S\u0007", "key": ["id"], "label": "name",
                   "rows": [{"id": "s1", "name": "\u001b[31mred\u001b[0m"}]},
        "target": {"name": "T", "key": ["id"], "label": "name",
                   "rows": [{"id": "t\u001b]0;title\u0007", "name": "\u001b[1mbold"}]},
        "rules": [{"name": "R\u001b[5m", "logic": true}]}"#;
    app.import(page, "evil.json", false).unwrap();
    let mut ui = Ui::new(app, Some("evil"), Theme::mono()).unwrap();
    ui.handle_key(key(KeyCode::Char('3')));
    let mut t = Terminal::new(TestBackend::new(160, 45)).unwrap();
    t.draw(|f| view::render(f, &ui)).unwrap();
    let screen = t.backend().to_string();
    assert!(
        !screen.contains('\u{1b}') && !screen.contains('\u{7}'),
        "raw control characters on screen"
    );
    assert!(screen.contains("\\u{1b}[31mred"), "{screen}");
}

#[test]
fn the_readme_keymap_is_the_keymap() {
    let readme = include_str!("../README.md");
    let table = rulebench::tui::keymap::markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() && !readme.contains(&table) {
        // `UPDATE_DOCS=1 cargo test --test tui the_readme_keymap` rewrites the table.
        let start = readme
            .find("| where | keys | does |")
            .expect("README has the table");
        let len: usize = readme[start..]
            .split_inclusive('\n')
            .take_while(|l| l.starts_with('|'))
            .map(str::len)
            .sum();
        let updated = format!("{}{table}{}", &readme[..start], &readme[start + len..]);
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"), updated).unwrap();
        return;
    }
    assert!(
        readme.contains(&table),
        "README.md's keymap table is out of date; replace it with:\n{table}"
    );
}

#[test]
fn a_threshold_change_moves_a_verdict_and_is_saved() {
    let mut b = open("llm-chat-clients");
    let llama = b.target("llama-3.3-70b");
    assert_eq!(
        b.ui.page().unwrap().ws.eval.devices[llama].verdict.number(),
        1
    );
    // Policy pane, fullThreshold (second field), down from 1.0 to 0.6 in steps of 0.05.
    b.press(KeyCode::Char('6'));
    b.press(KeyCode::Home);
    b.press(KeyCode::Down);
    for _ in 0..8 {
        b.press(KeyCode::Left);
    }
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.page.device_policy.full_threshold, 0.6);
    assert_eq!(
        page.ws.eval.devices[llama].verdict.number(),
        2,
        "score 0.6 now reaches full"
    );
    // A burst of steps is one revision, saved when the tuning pauses.
    assert_eq!(page.ws.revision, 1, "nothing saved while tuning");
    assert!(page.ws.policies_unsaved());
    b.ui.tick(Instant::now() + Duration::from_secs(2));
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.revision, 2, "one revision for the burst");
    assert!(!page.ws.policies_unsaved());
    let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    assert_eq!(stored.device_policy.full_threshold, 0.6);
    // Typed values work too, and bad ones are refused with a message.
    b.press(KeyCode::Enter);
    b.chars("abc");
    b.press(KeyCode::Enter);
    assert!(b.screen(160, 45).contains("is not a number"));
    assert_eq!(
        b.ui.page().unwrap().ws.page.device_policy.full_threshold,
        0.6
    );
    b.press(KeyCode::Enter);
    b.chars("0.95");
    b.press(KeyCode::Enter);
    assert_eq!(
        b.ui.page().unwrap().ws.eval.devices[llama].verdict.number(),
        1
    );
    let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    assert_eq!(stored.device_policy.full_threshold, 0.95);
}

#[test]
fn an_override_forces_a_verdict_with_its_note() {
    let mut b = open("llm-chat-clients");
    let o3 = b.target("o3");
    assert_eq!(b.ui.page().unwrap().ws.eval.devices[o3].verdict.number(), 1);
    b.press(KeyCode::Char('3'));
    for _ in 0..o3 {
        b.press(KeyCode::Right);
    }
    b.press(KeyCode::Char('o'));
    b.chars("verified by hand");
    b.press(KeyCode::Enter);
    let page = b.ui.page().unwrap();
    let d = page.ws.eval.devices[o3];
    assert_eq!((d.verdict.number(), d.reason.as_str()), (2, "override"));
    assert_eq!(page.ws.revision, 2);
    let screen = b.screen(180, 48);
    assert!(screen.contains("⚑"), "{screen}");
    assert!(screen.contains("verified by hand"), "{screen}");
    // `o` again forces incompatible, a third time clears it (after asking).
    b.press(KeyCode::Char('o'));
    b.press(KeyCode::Enter);
    assert_eq!(b.ui.page().unwrap().ws.eval.devices[o3].verdict.number(), 0);
    b.press(KeyCode::Char('o'));
    b.press(KeyCode::Char('y'));
    let d = b.ui.page().unwrap().ws.eval.devices[o3];
    assert_eq!((d.verdict.number(), d.reason.as_str()), (1, "partial"));
    assert_eq!(b.ui.page().unwrap().ws.revision, 4);
}

#[test]
fn a_broken_assertion_lights_up_as_the_edit_breaks_it() {
    let mut b = open("llm-chat-clients");
    let report = |b: &Bench| {
        b.ui.page()
            .unwrap()
            .tests
            .report
            .clone()
            .expect("the sample page has assertions")
    };
    let r = report(&b);
    assert!(r.failed == 0 && r.passed >= 5, "{r:?}");
    // Negate Tool Calling: gpt-4.1 drops to partial for t3.chat.
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.chars("{\"!\": ");
    b.alt('>');
    b.press(KeyCode::End);
    b.chars("}");
    // Before any save, the pinned verdict is red.
    assert!(b.ui.page().unwrap().ws.is_unsaved(b.rule("tool-calling")));
    let r = report(&b);
    let broken = r
        .results
        .iter()
        .find(|r| r.assertion_id == "gpt-4-1-full-on-t3-chat")
        .unwrap();
    assert!(!broken.passed);
    assert_eq!(
        broken.message.as_deref(),
        Some("$.targets[?@.id=='gpt-4.1'].verdict toEqual 2: got 1")
    );
    b.press(KeyCode::Esc);
    let screen = b.screen(180, 48);
    assert!(screen.contains("✗ FAIL"), "{screen}");
    // Undo the edit: green again.
    b.press(KeyCode::Char('2'));
    b.press(KeyCode::Char('u'));
    assert_eq!(report(&b).failed, 0);
    // `p` pins the selection's verdicts: new assertions, all passing.
    let before = b.ui.page().unwrap().ws.page.assertions.len();
    b.press(KeyCode::Char('7'));
    b.press(KeyCode::Char('p'));
    let page = b.ui.page().unwrap();
    assert!(page.ws.page.assertions.len() > before + 10);
    assert_eq!(report(&b).failed, 0);
    // An invalid assertion typed in is refused with the reason, and the dialog stays
    // open with the text and the problem (it used to close and drop the text).
    b.press(KeyCode::Char('a'));
    let typed = r#"{"select": "t3-chat", "path": "$.selectionVerdict", "matcher": "toEqul", "expected": 2}"#;
    match &mut b.ui.modal {
        Some(rulebench::tui::ui::Modal::Json(d)) => {
            assert!(d.text().contains("\n"), "multi-line: {}", d.text());
            d.textarea.select_all();
            d.textarea.cut();
        }
        _ => panic!("a adds in the JSON dialog"),
    }
    b.chars(typed);
    b.ctrl('s');
    let screen = b.screen(180, 48);
    assert!(screen.contains("assertion not saved"), "{screen}");
    match &b.ui.modal {
        Some(rulebench::tui::ui::Modal::Json(d)) => {
            assert_eq!(d.text(), typed, "the text is kept");
            assert!(
                d.problems
                    .iter()
                    .any(|p| p.code == Code::AssertionMatcher && p.message.contains("toEqul")),
                "{:?}",
                d.problems
            );
        }
        _ => panic!("the dialog stays open:\n{screen}"),
    }
    assert!(screen.contains("toEqul"), "the problem is shown:\n{screen}");
    // Esc asks before dropping the text; n keeps editing, y drops it.
    b.press(KeyCode::Esc);
    assert!(b.screen(180, 48).contains("Drop the edited text?"));
    b.press(KeyCode::Char('n'));
    assert!(matches!(
        b.ui.modal,
        Some(rulebench::tui::ui::Modal::Json(_))
    ));
    b.press(KeyCode::Esc);
    b.press(KeyCode::Char('y'));
    assert!(b.ui.modal.is_none());
}

#[test]
fn f2_switches_the_editor_to_infix_and_back_with_live_validation() {
    let mut b = open("llm-chat-clients");
    let tc = b.rule("tool-calling");
    let llama = b.target("llama-3.3-70b");
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.press(KeyCode::F(2));
    let page = b.ui.page().unwrap();
    assert!(page.editor.infix);
    assert_eq!(
        page.editor.text(),
        "source.needsToolCalling == false OR source.needsToolCalling == true AND target.supportsToolCalling == true"
    );
    // Type in infix: the matrix follows.
    b.alt('>');
    b.press(KeyCode::End);
    b.chars(" OR target.provider == 'meta'");
    let page = b.ui.page().unwrap();
    assert!(
        page.ws.eval.columns[tc].passed(llama),
        "{:?}",
        page.editor.draft
    );
    // A half-typed infix expression is an error with line:col, the results stay.
    b.chars(" AND");
    match &b.ui.page().unwrap().editor.draft {
        Some(Draft::Invalid { diagnostics }) => {
            assert_eq!(diagnostics[0].code, Code::InfixSyntax);
            assert_eq!(diagnostics[0].line, Some(1));
        }
        other => panic!("{other:?}"),
    }
    assert!(b.ui.page().unwrap().ws.eval.columns[tc].passed(llama));
    for _ in 0..4 {
        b.press(KeyCode::Backspace);
    }
    // Back to JSONLogic: the same rule, as JSON.
    b.press(KeyCode::F(2));
    let page = b.ui.page().unwrap();
    assert!(!page.editor.infix);
    let logic: serde_json::Value = serde_json::from_str(&page.editor.text()).unwrap();
    assert_eq!(logic, page.ws.page.rules[tc].logic);
    assert_eq!(
        logic["or"][2],
        serde_json::json!({"==": [{"var": "target.provider"}, "meta"]})
    );
}

#[test]
fn the_status_line_tells_why_the_selected_cell_failed() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('3'));
    b.press(KeyCode::Down);
    b.press(KeyCode::Down);
    for _ in 0..b.target("llama-3.3-70b") {
        b.press(KeyCode::Right);
    }
    let screen = b.screen(220, 48);
    let status = screen
        .lines()
        .rev()
        .find(|l| l.contains("rev 1"))
        .unwrap()
        .to_owned();
    assert!(
        status.contains("✗ structured-outputs × Llama 3.3 70B"),
        "{status}"
    );
    assert!(
        status.contains("target.supportsStructuredOutputs is false"),
        "{status}"
    );
}

/// In the workbench proper, every source's verdict and the assertions run on a worker:
/// the key returns before they do, the panes say they are computing, and the results
/// that arrive are those of the newest state.
#[test]
fn background_work_follows_an_edit_without_holding_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let app = common::open_app(&db);
    let ui = Ui::workbench(app, Some("llm-chat-clients"), Theme::mono(), None).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    b.ui.settle();
    let before = {
        let page = b.ui.page().unwrap();
        assert!(!page.sources.pending && !page.tests.pending);
        let report = page
            .tests
            .report
            .as_ref()
            .expect("the sample page has assertions");
        assert_eq!(report.failed, 0);
        page.sources.verdicts.clone()
    };
    assert_eq!(before.len(), 7);
    // Negate the tool-calling rule: gpt-4.1 drops to partial, a pinned assertion fails.
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.chars("{\"!\": ");
    b.alt('>');
    b.press(KeyCode::End);
    b.chars("}");
    {
        let page = b.ui.page().unwrap();
        assert!(b.ui.busy(), "the key returned before the background work");
        assert!(page.tests.pending && page.sources.pending);
        assert!(b.screen(200, 50).contains("running…"));
    }
    b.ui.settle();
    let page = b.ui.page().unwrap();
    assert!(!b.ui.busy());
    let report = page.tests.report.as_ref().unwrap();
    assert!(
        report.failed > 0,
        "the edit broke a pinned assertion: {report:?}"
    );
    // The verdicts that arrived are those of the edited page.
    let mut ws = rulebench::app::workspace::Session::open(&b.ui.app, "llm-chat-clients").unwrap();
    let tc = ws.page.rule("tool-calling").unwrap().0;
    let logic = page.ws.page.rules[tc].logic.clone();
    let _ = ws.try_logic_value(tc, logic, None);
    assert_eq!(page.sources.verdicts, ws.selection_verdicts());
    assert!(!b.screen(160, 45).contains("running…"));
}

/// Each kind of change reaches exactly the panes that show it: an assertion edit only
/// Tests, an override no Rules or Editor, a policy step no Dataset.
#[test]
fn a_change_reaches_exactly_the_panes_that_show_it() {
    use rulebench::tui::action::{Action, Changed, PaneId};
    let mut b = open("llm-chat-clients");
    let reached = |b: &Bench| b.ui.page().unwrap().reached.clone();
    // The routing table, one change at a time.
    for flag in [
        Changed::RULES,
        Changed::LOGIC,
        Changed::POLICY,
        Changed::OVERRIDES,
        Changed::ROWS,
        Changed::ASSERTIONS,
        Changed::SELECTION,
    ] {
        b.ui.dispatch(Action::Changed(flag));
        let expected: Vec<PaneId> = PaneId::ALL
            .into_iter()
            .filter(|p| p.concerns().intersects(flag))
            .collect();
        assert_eq!(reached(&b), expected, "{flag:?}");
    }
    b.ui.dispatch(Action::Changed(Changed::ASSERTIONS));
    assert_eq!(reached(&b), [PaneId::Tests]);
    // Real edits say what they changed. A policy step:
    b.press(KeyCode::Char('6'));
    b.press(KeyCode::Home);
    b.press(KeyCode::Down);
    b.press(KeyCode::Left);
    let r = reached(&b);
    assert!(
        r.contains(&PaneId::Matrix) && r.contains(&PaneId::Policy),
        "{r:?}"
    );
    assert!(
        !r.contains(&PaneId::Dataset) && !r.contains(&PaneId::Editor),
        "{r:?}"
    );
    assert!(
        !r.contains(&PaneId::Tests) && !r.contains(&PaneId::Rules),
        "{r:?}"
    );
    // An override toggle:
    b.press(KeyCode::Char('3'));
    b.press(KeyCode::Char('o'));
    b.press(KeyCode::Enter);
    let r = reached(&b);
    assert!(
        r.contains(&PaneId::Overrides) && r.contains(&PaneId::Matrix),
        "{r:?}"
    );
    assert!(
        !r.contains(&PaneId::Rules) && !r.contains(&PaneId::Editor),
        "{r:?}"
    );
    // Pinning assertions: the Tests pane alone.
    b.press(KeyCode::Char('7'));
    b.press(KeyCode::Char('p'));
    assert_eq!(reached(&b), [PaneId::Tests]);
}

/// A workbench session and another writer on one page: the other writer's change is
/// noticed, taken in, and never written over; the session's own tuning is kept too.
#[test]
fn a_change_made_elsewhere_is_taken_in_and_never_overwritten() {
    let mut b = open("llm-chat-clients");
    let start = b.ui.page().unwrap().ws.revision;
    // Another process sets fullThreshold.
    let mut other = common::open_app(&b.db);
    other
        .set_policy("llm-chat-clients", &["fullThreshold=0.9".to_owned()])
        .unwrap();
    // The workbench, still at the old revision, steps partialThreshold up.
    b.press(KeyCode::Char('6'));
    b.press(KeyCode::Home);
    b.press(KeyCode::Down);
    b.press(KeyCode::Down);
    b.press(KeyCode::Right);
    assert_eq!(
        b.ui.page().unwrap().ws.page.device_policy.partial_threshold,
        0.45
    );
    // The next look (once a second) notices the change; the tuning is saved later.
    b.ui.tick(Instant::now() + Duration::from_millis(100));
    let page = b.ui.page().unwrap();
    assert_eq!(page.ws.page.device_policy.full_threshold, 0.9, "taken in");
    assert_eq!(page.ws.page.device_policy.partial_threshold, 0.45, "kept");
    assert!(
        b.screen(160, 45).contains("changed elsewhere"),
        "{}",
        b.screen(160, 45)
    );
    b.ui.tick(Instant::now() + Duration::from_secs(3));
    let (stored, rev) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    assert_eq!(stored.device_policy.full_threshold, 0.9, "not written over");
    assert_eq!(stored.device_policy.partial_threshold, 0.45);
    assert_eq!(rev, start + 2);
    // A rule saved from the workbench writes its logic only: a weight changed
    // elsewhere stays.
    let tc = b.rule("tool-calling");
    let mut changed = other.page("llm-chat-clients").unwrap().0.rules[tc].clone();
    changed.weight = 7.0;
    other
        .add_rule(
            "llm-chat-clients",
            &serde_json::to_string(&changed).unwrap(),
            "rule.json",
            true,
        )
        .unwrap();
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.chars("{\"!\": ");
    b.alt('>');
    b.press(KeyCode::End);
    b.chars("}");
    b.press(KeyCode::Esc);
    b.ui.tick(Instant::now() + Duration::from_secs(5));
    let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    assert_eq!(
        stored.rules[tc].weight, 7.0,
        "the weight set elsewhere stays"
    );
    assert!(
        stored.rules[tc].logic.get("!").is_some(),
        "the edit is saved"
    );
}

/// A rule being edited here and deleted by another process: the edit is not dropped in
/// silence. The workbench asks; `y` restores the rule with the edit, `n` keeps the
/// deletion.
#[test]
fn a_rule_edited_here_and_deleted_elsewhere_is_asked_about() {
    for answer in ['y', 'n'] {
        let mut b = open("llm-chat-clients");
        let before = b.ui.page().unwrap().ws.page.rules.len();
        let original = b.ui.page().unwrap().ws.page.rules.clone();
        b.go_to_rule("tool-calling");
        b.press(KeyCode::Char('e'));
        b.chars("{\"!\": ");
        b.alt('>');
        b.press(KeyCode::End);
        b.chars("}");
        // Another process deletes the rule before the draft is saved.
        let mut other = common::open_app(&b.db);
        other
            .remove_rule("llm-chat-clients", "tool-calling")
            .unwrap();
        let start = Instant::now();
        let mut at = start;
        while !b.screen(160, 45).contains("deleted elsewhere") {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "never asked: {}",
                b.screen(160, 45)
            );
            at += Duration::from_millis(1100);
            b.ui.tick(at);
            std::thread::sleep(Duration::from_millis(20));
        }
        let screen = b.screen(160, 45);
        assert!(
            screen.contains("Rule `Tool Calling Support` was deleted"),
            "{screen}"
        );
        b.press(KeyCode::Char(answer));
        b.ui.tick(at + Duration::from_secs(5));
        let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
        // The editor followed its rule, not its index: the draft never landed on the
        // rule that took the deleted one's place (it once did).
        for rule in original.iter().filter(|r| r.id != "tool-calling") {
            let now = stored.rules.iter().find(|r2| r2.id == rule.id).unwrap();
            assert_eq!(now.logic, rule.logic, "{} untouched", rule.id);
        }
        let restored = stored.rules.iter().find(|r| r.id == "tool-calling");
        if answer == 'y' {
            let rule = restored.expect("restored");
            assert!(
                rule.logic.get("!").is_some(),
                "with the edit: {}",
                rule.logic
            );
            assert_eq!(stored.rules.len(), before);
            assert_eq!(b.ui.page().unwrap().ws.page.rules.len(), before);
            assert!(
                b.screen(160, 45).contains("restored"),
                "{}",
                b.screen(160, 45)
            );
        } else {
            assert!(restored.is_none(), "the deletion stands");
            assert_eq!(b.ui.page().unwrap().ws.page.rules.len(), before - 1);
            assert!(b.screen(160, 45).contains("kept the deletion"));
        }
        // The workbench goes on working: move around, edit another rule.
        b.press(KeyCode::Char('2'));
        b.press(KeyCode::End);
        b.press(KeyCode::Up);
        b.screen(80, 24);
    }
}

/// Regression: the editor held its rule by index. When another process deleted a rule
/// above the one being edited, the reload shifted the list and the next keystroke
/// wrote the edited text into the rule below. The editor follows its rule's id.
#[test]
fn the_editor_follows_its_rule_when_the_list_shifts_under_it() {
    let mut b = open("llm-chat-clients");
    let original = b.ui.page().unwrap().ws.page.rules.clone();
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.chars("{\"!\": ");
    b.alt('>');
    b.press(KeyCode::End);
    b.chars("}");
    common::open_app(&b.db)
        .remove_rule("llm-chat-clients", "streaming")
        .unwrap();
    let start = Instant::now();
    let mut at = start;
    while b.ui.page().unwrap().ws.page.rules.len() == original.len() {
        assert!(start.elapsed() < Duration::from_secs(20), "never reloaded");
        at += Duration::from_millis(1100);
        b.ui.tick(at);
        std::thread::sleep(Duration::from_millis(20));
    }
    // Still editing Tool Calling: one more keystroke, then leave (saves).
    b.press(KeyCode::Char(' '));
    b.press(KeyCode::Esc);
    b.ui.tick(at + Duration::from_secs(5));
    let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    let tc = stored
        .rules
        .iter()
        .find(|r| r.id == "tool-calling")
        .unwrap();
    assert!(tc.logic.get("!").is_some(), "the edit saved: {}", tc.logic);
    for rule in original
        .iter()
        .filter(|r| !["tool-calling", "streaming"].contains(&r.id.as_str()))
    {
        let now = stored.rules.iter().find(|r2| r2.id == rule.id).unwrap();
        assert_eq!(now.logic, rule.logic, "{} untouched", rule.id);
    }
}

/// Ctrl-C quits from every dialog (help, the palette, a question, a prompt, the rule
/// form), and a Ctrl- or Alt- chord is not typed into the palette.
#[test]
fn ctrl_c_quits_from_every_dialog_and_chords_are_not_typed() {
    type Opener = Box<dyn Fn(&mut Bench)>;
    let openers: Vec<(&str, Opener)> = vec![
        (
            "help",
            Box::new(|b: &mut Bench| b.press(KeyCode::Char('?'))),
        ),
        ("palette", Box::new(|b: &mut Bench| b.ctrl('p'))),
        (
            "delete question",
            Box::new(|b: &mut Bench| {
                b.press(KeyCode::Char('2'));
                b.press(KeyCode::Char('d'));
            }),
        ),
        (
            "search prompt",
            Box::new(|b: &mut Bench| {
                b.press(KeyCode::Char('2'));
                b.press(KeyCode::Char('/'));
            }),
        ),
        (
            "rule form",
            Box::new(|b: &mut Bench| {
                b.press(KeyCode::Char('2'));
                b.press(KeyCode::Char('m'));
            }),
        ),
    ];
    for (what, open_it) in openers {
        let mut b = open("llm-chat-clients");
        open_it(&mut b);
        assert!(b.ui.modal.is_some(), "{what} opened");
        b.ctrl('c');
        assert!(b.ui.quit, "Ctrl-C quits from the {what}");
    }
    // In the palette, Ctrl-U is not the letter u.
    let mut b = open("llm-chat-clients");
    b.ctrl('p');
    b.ctrl('u');
    b.alt('x');
    match &b.ui.modal {
        Some(rulebench::tui::ui::Modal::Palette { query, .. }) => assert_eq!(query, ""),
        _ => panic!("the palette stays open"),
    }
    assert!(!b.ui.quit);
}

/// The status line puts the message first at every width: a refusal is read whole at
/// 80 columns (it used to come after ~75 columns of page, revision and timings), and
/// the page and revision go on the right only when there is room.
#[test]
fn the_status_message_comes_first_at_every_width() {
    let mut b = open("llm-chat-clients");
    let message = "partialThreshold must be at most fullThreshold (0.95 > 0.90)";
    b.ui.status.error(message);
    for width in [60u16, 80, 160] {
        let screen = b.screen(width, 24);
        let last = screen.lines().last().unwrap();
        assert!(
            last.trim_matches('"')
                .trim_start()
                .starts_with(&message[..50.min(width as usize - 4)]),
            "{width}: {last}"
        );
        assert!(
            !last.contains("frame"),
            "timings only with --profile: {last}"
        );
        if width >= 120 {
            assert!(last.contains("llm-chat-clients · rev"), "{last}");
        }
    }
}

/// Pane titles carry their number, and Tab walks the panes in that order (Overrides is
/// 7 and Tests 8 by key, and now by Tab too).
#[test]
fn tab_follows_the_pane_numbers_shown_in_titles() {
    use rulebench::tui::action::PaneId;
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('1'));
    for n in 1..=9usize {
        let focus = b.ui.page().unwrap().focus;
        assert_eq!(focus.number(), n, "Tab step {n}: {focus:?}");
        b.press(KeyCode::Char(char::from(b'0' + n as u8)));
        assert_eq!(
            b.ui.page().unwrap().focus,
            focus,
            "key {n} focuses the same pane"
        );
        b.press(KeyCode::Tab);
    }
    assert_eq!(
        b.ui.page().unwrap().focus,
        PaneId::Sources,
        "and round again"
    );
    let screen = b.screen(200, 50);
    for title in [
        "1 Chat clients",
        "2 Rules",
        "3 Matrix",
        "4 Rule editor",
        "5 Explanation",
        "6 Policy",
        "7 Tests",
    ] {
        assert!(screen.contains(title), "{title}: {screen}");
    }
    // Numbered as the screen shows them, top to bottom (Tests was 8, above Overrides 7).
    let row = |title: &str| {
        screen
            .lines()
            .position(|l| l.contains(title))
            .unwrap_or_else(|| panic!("{title}"))
    };
    assert!(row("5 Explanation") < row("6 Policy"));
    assert!(row("6 Policy") < row("7 Tests"));
    // Below Tests, the shared slot: Overrides (8), or Dataset (9) after it was focused.
    let shared = if screen.contains("8 Overrides") {
        "8 Overrides"
    } else {
        "9 Dataset"
    };
    assert!(row("7 Tests") < row(shared), "{screen}");
}

/// `?` lists the focused pane's keys first and scrolls with PgUp/PgDn/Home/End (they
/// used to close it).
#[test]
fn help_shows_the_focused_panes_keys_first_and_scrolls() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('6'));
    b.press(KeyCode::Char('?'));
    let screen = b.screen(120, 40);
    let policy = screen.find("Policy").expect("the policy group");
    let everywhere = screen.find("Everywhere").unwrap_or(usize::MAX);
    assert!(policy < everywhere, "the Policy keys come first:\n{screen}");
    for key in [
        KeyCode::PageDown,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::Home,
    ] {
        b.press(key);
        assert!(
            matches!(b.ui.modal, Some(rulebench::tui::ui::Modal::Help { .. })),
            "{key:?} scrolls, it does not close help"
        );
    }
    b.press(KeyCode::End);
    let Some(rulebench::tui::ui::Modal::Help { scroll, .. }) = b.ui.modal else {
        panic!()
    };
    assert!(scroll > 10, "End scrolls to the end: {scroll}");
    b.press(KeyCode::Home);
    let Some(rulebench::tui::ui::Modal::Help { scroll, .. }) = b.ui.modal else {
        panic!()
    };
    assert_eq!(scroll, 0);
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_none());
}

/// Ctrl-C while the question about a rule deleted elsewhere is unanswered keeps the
/// edit: the rule is restored with it, then the workbench quits.
#[test]
fn ctrl_c_on_the_deleted_rule_question_keeps_the_edit() {
    let mut b = open("llm-chat-clients");
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.chars("{\"!\": ");
    b.alt('>');
    b.press(KeyCode::End);
    b.chars("}");
    common::open_app(&b.db)
        .remove_rule("llm-chat-clients", "tool-calling")
        .unwrap();
    let start = Instant::now();
    let mut at = start;
    while !b.screen(160, 45).contains("deleted elsewhere") {
        assert!(start.elapsed() < Duration::from_secs(20), "never asked");
        at += Duration::from_millis(1100);
        b.ui.tick(at);
        std::thread::sleep(Duration::from_millis(20));
    }
    b.ctrl('c');
    assert!(b.ui.quit);
    let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    let rule = stored
        .rules
        .iter()
        .find(|r| r.id == "tool-calling")
        .expect("kept");
    assert!(
        rule.logic.get("!").is_some(),
        "with the edit: {}",
        rule.logic
    );
}

/// The Overrides pane makes only the rows it shows (a page may have 100,000
/// overrides), and the cursor's row is always among them: at the end of a list longer
/// than the pane, a screen up from the end, and back at its start.
#[test]
fn the_overrides_pane_shows_the_cursors_override_in_a_long_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let mut app = common::open_app(&db);
    let mut page: rulebench_core::model::Page =
        serde_json::from_str(include_str!("../sample-pages/llm-chat-clients.json")).unwrap();
    page.id = "many-overrides".into();
    page.assertions.clear();
    page.overrides = page
        .source
        .rows
        .iter()
        .flat_map(|s| page.target.rows.iter().map(move |t| (s, t)))
        .enumerate()
        .map(|(i, (s, t))| rulebench_core::model::Override {
            source_key: Some(page.source.row_key(s)),
            target_key: Some(page.target.row_key(t)),
            source_key_hash: None,
            target_key_hash: None,
            value: i % 2 == 0,
            note: Some(format!("note-{i:03}")),
        })
        .collect();
    let n = page.overrides.len();
    assert!(n > 60, "{n}");
    app.import(&serde_json::to_string(&page).unwrap(), "many.json", false)
        .unwrap();
    let ui = Ui::new(app, Some("many-overrides"), Theme::mono()).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    b.press(KeyCode::Char('8'));
    let shows = |b: &Bench, i: usize| b.screen(160, 45).contains(&format!("note-{i:03}"));
    assert!(b.screen(160, 45).contains(&format!("Overrides ({n}")));
    assert!(shows(&b, 0));
    b.press(KeyCode::End);
    assert!(shows(&b, n - 1), "{}", b.screen(160, 45));
    assert!(!shows(&b, 0), "the first is scrolled away");
    // Up past the first screen from the end: the cursor's row is the last shown.
    for _ in 0..44 {
        b.press(KeyCode::Up);
    }
    assert!(shows(&b, n - 45), "{}", b.screen(160, 45));
    assert!(!shows(&b, n - 1));
    b.press(KeyCode::Home);
    assert!(shows(&b, 0));
    assert!(!shows(&b, n - 1));
}

/// The Overrides pane places overrides by row key through an index it rebuilds when the
/// rows are read again: once a target's key is edited (a reload), the override made for
/// its old key names no row (it kept the row while the row counts stayed the same).
#[test]
fn the_overrides_pane_follows_a_target_whose_key_was_edited() {
    use rulebench::app::types::Side;
    use rulebench::app::workspace::Session;
    use rulebench::tui::overrides::State;
    let dir = tempfile::tempdir().unwrap();
    let app = common::open_app(&dir.path().join("k.db"));
    let mut ws = Session::open(&app, "llm-chat-clients").unwrap();
    let t = ws
        .page
        .target
        .rows
        .iter()
        .position(|r| r["id"] == "llama-3.3-70b")
        .expect("the sample override's target");
    let mut st = State::default();
    st.refresh(&ws);
    assert_eq!(st.entries.len(), 1);
    assert_eq!(st.entries[0].target, Some(t));
    ws.set_cell(Side::Target, t, "id", serde_json::json!("llama-renamed"))
        .unwrap();
    assert_eq!(ws.page.target.rows[t]["id"], "llama-renamed");
    st.refresh(&ws);
    assert_eq!(st.entries[0].target, None, "its old key names no row now");
    assert!(st.entries[0].source.is_some());
}

/// The Overrides pane draws a list of exactly 65,535 overrides (its spare-room sum cast
/// the count to `u16` and added one: it overflowed).
#[test]
fn the_overrides_pane_draws_as_many_overrides_as_a_u16_holds() {
    use rulebench::app::synth::{self, Spread};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let mut app = common::open_app(&db);
    let mut page = synth::page(256, 2, 256, Spread::Realistic, 3);
    let keys = |d: &rulebench_core::model::Dataset| -> Vec<String> {
        d.rows.iter().map(|r| d.row_key(r)).collect()
    };
    let (sources, targets) = (keys(&page.source), keys(&page.target));
    page.overrides = sources
        .iter()
        .flat_map(|s| targets.iter().map(move |t| (s, t)))
        .take(usize::from(u16::MAX))
        .map(|(s, t)| rulebench_core::model::Override {
            source_key: Some(s.clone()),
            target_key: Some(t.clone()),
            source_key_hash: None,
            target_key_hash: None,
            value: true,
            note: None,
        })
        .collect();
    app.import(&serde_json::to_string(&page).unwrap(), "u16.json", false)
        .unwrap();
    let ui = Ui::new(app, Some(&page.id), Theme::mono()).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    b.press(KeyCode::Char('8'));
    assert!(b.screen(160, 45).contains("Overrides (65535"));
}

/// `d` in Overrides asks before deleting an override and its note: n keeps it.
#[test]
fn deleting_an_override_asks_first() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('8'));
    let count = |b: &Bench| b.ui.page().unwrap().ws.page.overrides.len();
    assert_eq!(count(&b), 1);
    b.press(KeyCode::Char('d'));
    assert!(
        b.screen(160, 45).contains("Clear the override of"),
        "{}",
        b.screen(160, 45)
    );
    b.press(KeyCode::Char('n'));
    assert_eq!(count(&b), 1, "n keeps it");
    b.press(KeyCode::Char('d'));
    b.press(KeyCode::Char('y'));
    assert_eq!(count(&b), 0);
    let (stored, _) = common::open_app(&b.db).page("llm-chat-clients").unwrap();
    assert!(stored.overrides.is_empty());
}

/// The Explanation scrolls no further than its last line at the bottom (End and
/// PgDn used to scroll it away to a single line).
#[test]
fn the_explanation_does_not_scroll_past_its_end() {
    let mut b = open("llm-chat-clients");
    b.screen(160, 45);
    b.press(KeyCode::Char('5'));
    b.press(KeyCode::End);
    b.press(KeyCode::PageDown);
    let screen = b.screen(160, 45);
    let page = b.ui.page().unwrap();
    // The pane stays full: its last two lines both show (it used to scroll until only
    // the last was left).
    let lines = &page.explain.lines;
    assert!(lines.len() > 2);
    for line in &lines[lines.len() - 2..] {
        let text: String = line.iter().map(|(_, s)| s.as_str()).collect();
        // Its start (a long line wraps).
        let text: String = text.trim().chars().take(12).collect();
        assert!(
            text.is_empty() || screen.contains(&text),
            "{text:?} shows\n{screen}"
        );
    }
    assert!(page.explain.scroll <= page.explain.max_scroll.get().expect("drawn"));
}

/// The palette runs an entry in the pane it belongs to: "clear the override" from the
/// Matrix asks to clear the Overrides pane's override (it used to open the Matrix's
/// "Force … compatible"); "pin" from Sources pins in Tests. Navigation is not listed.
#[test]
fn palette_entries_run_in_their_own_pane() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('3'));
    b.ctrl('p');
    b.chars("clear the override and its note");
    b.press(KeyCode::Enter);
    match &b.ui.modal {
        Some(rulebench::tui::ui::Modal::Confirm { message, .. }) => {
            assert!(message.starts_with("Clear the override of"), "{message}")
        }
        _ => panic!("the Overrides pane's question: {}", b.screen(160, 45)),
    }
    b.press(KeyCode::Char('n'));
    let revision = b.ui.page().unwrap().ws.revision;
    b.press(KeyCode::Char('1'));
    b.ctrl('p');
    b.chars("pin");
    b.press(KeyCode::Enter);
    assert!(
        b.ui.page().unwrap().ws.revision > revision,
        "pinned as assertions"
    );
    assert!(
        rulebench::tui::palette::entries("", &b.ui.palette_facts())
            .iter()
            .all(|e| e.action != rulebench::tui::action::Action::Up),
        "no navigation entries"
    );
}

/// With room to spare, target columns widen so labels are not cut to 8 characters.
#[test]
fn matrix_columns_use_the_room_there_is() {
    let mut b = open("loan-eligibility");
    b.press(KeyCode::Char('3'));
    // The header row of the matrix names two targets in full on one line.
    let header = |screen: &str| {
        screen
            .lines()
            .any(|l| l.contains("Prime Auto Loan") && l.contains("Jumbo Mortgage "))
    };
    let wide = b.screen(260, 50);
    assert!(header(&wide), "{wide}");
    // Narrow: the columns stay at their minimum and labels are cut.
    assert!(!header(&b.screen(100, 30)));
}

/// A rule whose literals hold ESC, U+202E and U+0085: the editor shows them escaped in
/// both views (they were hidden), F2 there and back changes nothing (it dropped U+202E),
/// and `y` puts JSON with no raw control on the clipboard.
#[test]
fn controls_in_a_rule_are_escaped_in_both_views_and_the_clipboard() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let mut app = common::open_app(&db);
    let literal = "a\u{1b}[2Jb\u{202e}c\u{85}d";
    let rule = serde_json::json!({"id": "hostile", "name": "Hostile",
        "logic": {"==": [{"var": "target.provider"}, literal]}});
    app.add_rule("llm-chat-clients", &rule.to_string(), "r.json", false)
        .unwrap();
    let ui = Ui::new(app, Some("llm-chat-clients"), Theme::mono()).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    let unsafe_in = |t: &str| t.chars().any(rulebench_core::text::is_unsafe);
    b.go_to_rule("hostile");
    b.press(KeyCode::Char('e'));
    let json_text = b.ui.page().unwrap().editor.text();
    assert!(!unsafe_in(&json_text), "{json_text:?}");
    assert!(json_text.contains("\\u202e"), "{json_text}");
    b.press(KeyCode::F(2));
    let infix_text = b.ui.page().unwrap().editor.text();
    assert!(b.ui.page().unwrap().editor.infix);
    assert!(!unsafe_in(&infix_text), "{infix_text:?}");
    assert!(infix_text.contains("\\u{202e}"), "{infix_text}");
    b.press(KeyCode::F(2));
    let page = b.ui.page().unwrap();
    let i = b.rule("hostile");
    assert_eq!(
        page.ws.page.rules[i].logic["=="][1], literal,
        "F2 twice kept the text"
    );
    assert!(!page.ws.is_unsaved(i), "nothing changed");
    b.press(KeyCode::Esc);
    b.press(KeyCode::Char('y'));
    let copied = b.ui.clipboard.clone().expect("copied");
    assert!(!unsafe_in(&copied.replace(['\n'], "")), "{copied:?}");
    let back: serde_json::Value = serde_json::from_str(&copied).unwrap();
    assert_eq!(back["logic"]["=="][1], literal);
}

/// The page holds every pane once, in Tab order: the pump reaches each of them.
#[test]
fn the_page_lists_every_pane_once_in_tab_order() {
    let b = open("llm-chat-clients");
    let ids: Vec<rulebench::tui::action::PaneId> =
        b.ui.page()
            .unwrap()
            .panes()
            .iter()
            .map(|p| p.id())
            .collect();
    let mut sorted = ids.clone();
    sorted.sort_by_key(|p| p.number());
    assert_eq!(
        sorted,
        rulebench::tui::action::PaneId::ALL.to_vec(),
        "every pane, once"
    );
}

/// Small things that behaved unlike the tools people know (each failed before): `q`
/// answers no to a question; a pre-filled prompt is replaced by what is typed (it
/// appended: `duckdbduckdb`); Ctrl-R redoes in the editor; a field the page does not
/// have, typed in infix, is `unknown-field` (it said `infix-syntax`).
#[test]
fn q_says_no_prefilled_prompts_are_replaced_ctrl_r_redoes_and_unknown_fields_say_so() {
    use rulebench::tui::ui::Modal;
    let mut b = open("llm-chat-clients");
    // `q` in a question: no (the editor goes on, the text kept).
    b.go_to_rule("streaming");
    b.press(KeyCode::Char('e'));
    b.chars("x");
    b.press(KeyCode::Esc);
    assert!(matches!(b.ui.modal, Some(Modal::Confirm { .. })));
    b.press(KeyCode::Char('q'));
    assert!(b.ui.modal.is_none(), "q closes the question");
    assert!(
        b.ui.page().unwrap().editor.active,
        "q answers no: editing goes on"
    );
    assert!(!b.ui.quit, "q in a question does not quit");
    // Ctrl-Z takes the `x` back, Ctrl-R brings it back.
    b.ctrl('z');
    assert!(!b.ui.page().unwrap().editor.is_invalid());
    b.ctrl('r');
    assert!(b.ui.page().unwrap().editor.is_invalid(), "redone");
    b.ctrl('z');
    // A field the page does not have, in infix: unknown-field, with a did-you-mean.
    b.press(KeyCode::F(2));
    assert!(b.ui.page().unwrap().editor.infix);
    b.alt('>');
    b.press(KeyCode::End);
    b.chars(" and target.supportsStreamng == true");
    match &b.ui.page().unwrap().editor.draft {
        Some(Draft::Invalid { diagnostics }) => {
            assert_eq!(diagnostics[0].code, Code::UnknownField, "{diagnostics:?}");
            assert_eq!(
                diagnostics[0].hint.as_deref(),
                Some("did you mean `target.supportsStreaming`?")
            );
        }
        other => panic!("{other:?}"),
    }
    for _ in 0.." and target.supportsStreamng == true".len() {
        b.press(KeyCode::Backspace);
    }
    b.press(KeyCode::Esc);
    // `S` offers `duckdb`: typing replaces it.
    b.press(KeyCode::Char('S'));
    b.chars("postgres");
    match &b.ui.modal {
        Some(Modal::Prompt { input, .. }) => assert_eq!(input.lines().join(""), "postgres"),
        _ => panic!("S asks for a dialect"),
    }
}

/// Deleting a rule keeps the cursor where it was (on the rule that took the deleted
/// one's place), in Rules and in the editor (reported as moving to the first rule; not
/// reproduced with the Rules pane unfiltered or filtered).
#[test]
fn deleting_a_rule_keeps_the_cursor_in_place() {
    let mut b = open("llm-chat-clients");
    b.go_to_rule("provider");
    let at = b.ui.page().unwrap().rules.selected().unwrap();
    let next = b.ui.page().unwrap().ws.page.rules[at + 1].id.clone();
    b.press(KeyCode::Char('d'));
    b.press(KeyCode::Char('y'));
    let p = b.ui.page().unwrap();
    assert!(p.ws.page.rule("provider").is_none(), "deleted");
    let now = p.rules.selected().unwrap();
    assert_eq!(p.ws.page.rules[now].id, next, "the cursor stays in place");
    assert_eq!(p.editor.rule, now, "the editor follows the cursor");
}

/// `O` forces the pair incompatible in one key, with one note, in one revision (it took
/// two `o`, two revisions and the note typed twice).
#[test]
fn shift_o_forces_incompatible_at_once() {
    let mut b = open("llm-chat-clients");
    b.press(KeyCode::Char('3'));
    let rev = b.ui.page().unwrap().ws.revision;
    let t = b.ui.page().unwrap().matrix.target;
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('O'), KeyModifiers::SHIFT));
    b.chars("outage");
    b.press(KeyCode::Enter);
    let ws = &b.ui.page().unwrap().ws;
    let o = ws.override_of(t).expect("an override");
    assert!(!o.value, "incompatible");
    assert_eq!(o.note.as_deref(), Some("outage"));
    assert_eq!(ws.revision, rev + 1, "one revision");
    assert_eq!(ws.eval.devices[t].verdict.number(), 0);
}

/// `[` sorts the targets by the rule under the cursor (failing first), `]` the other
/// way, `R` reverses any order; the title says so, and the export follows.
#[test]
fn targets_sort_by_a_rule_and_reverse() {
    let mut b = open("llm-chat-clients");
    b.go_to_rule("structured-outputs");
    b.press(KeyCode::Char('3'));
    let r = b.rule("structured-outputs");
    b.press(KeyCode::Char('['));
    let ranks = |b: &Bench| -> Vec<u8> {
        let p = b.ui.page().unwrap();
        let (targets, _) = p.matrix.view(&p.ws.page.rules, p.ws.page.target.rows.len());
        targets
            .iter()
            .map(|&t| u8::from(p.ws.eval.columns[r].passed(t)))
            .collect()
    };
    let asc = ranks(&b);
    assert!(asc.contains(&0) && asc.contains(&1), "{asc:?}");
    assert!(
        asc.windows(2).all(|w| w[0] <= w[1]),
        "failing first: {asc:?}"
    );
    assert!(b.screen(200, 50).contains("by Structured Outputs"));
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT));
    let desc = ranks(&b);
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "reversed: {desc:?}");
    assert!(
        b.screen(200, 50)
            .contains("by Structured Outputs, reversed")
    );
    b.press(KeyCode::Char(']'));
    assert_eq!(ranks(&b), desc, "] is the other way");
    // `s` goes back to page order (from a rule's), `R` reverses it.
    b.press(KeyCode::Char('s'));
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT));
    let p = b.ui.page().unwrap();
    let (targets, _) = p.matrix.view(&p.ws.page.rules, p.ws.page.target.rows.len());
    let n = p.ws.page.target.rows.len();
    assert_eq!(targets, (0..n).rev().collect::<Vec<_>>());
}

/// The editor says, as the rule is typed, when no row the schema allows passes it (the
/// analysis over any row), and stops saying so once it can pass.
#[test]
fn the_editor_warns_live_when_no_row_can_pass_the_rule() {
    let mut b = open("llm-chat-clients");
    b.go_to_rule("tool-calling");
    b.press(KeyCode::Char('e'));
    b.press(KeyCode::F(2));
    // Replace the infix text with a window no number falls in.
    b.alt('>');
    for _ in 0..200 {
        b.press(KeyCode::Backspace);
    }
    b.alt('<');
    for _ in 0..200 {
        b.press(KeyCode::Delete);
    }
    assert_eq!(b.ui.page().unwrap().editor.text(), "");
    b.chars("target.contextWindow > 100 AND target.contextWindow < 50");
    let warned = |b: &Bench| match &b.ui.page().unwrap().editor.draft {
        Some(Draft::Valid { warnings, .. }) => warnings.iter().any(|d| d.code == Code::NeverTrue),
        other => panic!("{other:?}"),
    };
    assert!(warned(&b));
    let screen = b.screen(200, 50);
    assert!(screen.contains("never-true"), "{screen}");
    // A window that holds values: no warning.
    for _ in 0..2 {
        b.press(KeyCode::Backspace);
    }
    b.chars("500");
    assert!(!warned(&b));
}

/// The Tests pane's `c`: the background work's coverage of the rules by the
/// assertions, the score in the title and the mutants no assertion notices.
#[test]
fn the_tests_pane_lists_the_coverage_from_the_background_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let app = common::open_app(&db);
    let ui = Ui::workbench(app, Some("llm-chat-clients"), Theme::mono(), None).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    b.ui.settle();
    let coverage =
        b.ui.page()
            .unwrap()
            .tests
            .coverage
            .clone()
            .expect("computed");
    assert!(coverage.mutants.len() > 10);
    b.press(KeyCode::Char('7'));
    b.press(KeyCode::Char('z'));
    let screen = b.screen(200, 50);
    assert!(
        screen.contains(&format!("mutants {:.0}% (c)", coverage.mutation_score)),
        "{screen}"
    );
    b.press(KeyCode::Char('c'));
    let screen = b.screen(200, 50);
    assert!(screen.contains("conditions "), "{screen}");
    assert!(
        screen.contains(&format!("{} survived", coverage.survived)),
        "{screen}"
    );
    if coverage.survived > 0 {
        assert!(screen.contains("survived "), "{screen}");
    }
}

/// A linked table of expected outcomes is checked by the background work and listed in
/// the Tests pane with its first rows that differ.
#[test]
fn the_tests_pane_lists_a_linked_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let table = dir.path().join("t.csv");
    std::fs::write(
        &table,
        "source,target,verdict\nt3-chat,gpt-4.1,1\nt3-chat,o3,\n",
    )
    .unwrap();
    let mut app = common::open_app(&db);
    // (The second row expects nothing: refused; a table that reads is linked.)
    assert!(
        app.link_expectations("llm-chat-clients", &table, &Default::default())
            .is_err()
    );
    std::fs::write(&table, "source,target,verdict\nt3-chat,gpt-4.1,1\n").unwrap();
    app.link_expectations("llm-chat-clients", &table, &Default::default())
        .unwrap();
    let ui = Ui::workbench(app, Some("llm-chat-clients"), Theme::mono(), None).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    b.ui.settle();
    let linked = b.ui.page().unwrap().tests.linked.clone();
    assert_eq!(linked.len(), 1);
    assert_eq!(linked[0].report.as_ref().unwrap().failed, 1);
    b.press(KeyCode::Char('7'));
    b.press(KeyCode::Char('z'));
    let screen = b.screen(160, 40);
    assert!(
        screen.contains("✗ table t.csv: 1 of 1 rows differ"),
        "{screen}"
    );
    assert!(
        screen.contains("row 2: t3.chat × GPT-4.1 — verdict 1 ≠ 2"),
        "{screen}"
    );
}

/// The sources pane makes only the rows it shows (a page may have 100,000 sources), and
/// shows the same ones as a list of every row would: the first screen, then the
/// selection on the last line as it moves down.
#[test]
fn the_sources_pane_shows_the_window_around_the_selection() {
    use rulebench::app::synth::{self, Spread};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut app = rulebench::app::App::open(&db).unwrap();
    let page = synth::page(20, 4, 300, Spread::Realistic, 5);
    app.import(&serde_json::to_string(&page).unwrap(), "w.json", false)
        .unwrap();
    let ui = Ui::new(app, Some(&page.id), Theme::mono()).unwrap();
    let mut b = Bench { _dir: dir, db, ui };
    let shown = |s: &str| -> Vec<usize> {
        (0..300)
            .filter(|i| s.contains(&format!("Client {i} ")) || s.contains(&format!("Client {i}│")))
            .collect()
    };
    let first = shown(&b.screen(160, 40));
    assert!(first.starts_with(&[0, 1, 2]), "{first:?}");
    let height = first.len();
    assert!(height > 5 && height < 40, "{first:?}");
    // Focus the sources and walk down past the first screen.
    b.press(KeyCode::Char('1'));
    for _ in 0..150 {
        b.press(KeyCode::Down);
    }
    assert_eq!(b.ui.page().unwrap().ws.selection, 150);
    let s = b.screen(160, 40);
    let now = shown(&s);
    let expected: Vec<usize> = (151 - height..=150).collect();
    assert_eq!(now, expected, "the window ends at the selection:\n{s}");
}

//! Conflicts are decided by the person, never by the clock: a save carries the stored
//! value its edit started from, and a value changed elsewhere meanwhile is not written
//! over. The workbench shows mine, theirs and the difference, and the person keeps
//! mine, takes theirs or edits a merge — for a rule's logic and for policy values.

mod common;

use std::time::{Duration, Instant};

use common::tui::Bench;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::app::workspace::Session;
use rulebench::app::{Choice, ConflictOn};
use serde_json::{Value, json};

const LLM: &str = "llm-chat-clients";

fn stored_logic(db: &std::path::Path, rule: &str) -> Value {
    let app = common::open_app(db);
    let (page, _) = app.page(LLM).unwrap();
    page.rule(rule).unwrap().1.logic.clone()
}

/// A colleague's change of one rule's logic, from another connection.
fn theirs_change(db: &std::path::Path, rule: &str, logic: Value) {
    let mut app = common::open_app(db);
    let (page, _) = app.page(LLM).unwrap();
    let mut r = page.rule(rule).unwrap().1.clone();
    r.logic = logic;
    r.expression = None;
    app.add_rule(
        LLM,
        &serde_json::to_string(&r).unwrap(),
        "theirs.json",
        true,
    )
    .unwrap();
}

/// Two workbenches edit rule `vision`: B's save does not remove A's clause (it did,
/// and B had been told its edits were kept).
#[test]
fn two_sessions_editing_one_rule_never_overwrite_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let app = common::open_app(&db);
    let mut a = Session::open(&app, LLM).unwrap();
    let mut b = Session::open(&app, LLM).unwrap();
    let i = a.page.rule("vision").unwrap().0;
    let original = a.page.rules[i].logic.clone();
    let mine_a = json!({"or": [original.clone(), {"==": [{"var": "target.provider"}, "openai"]}]});
    let mine_b = json!({"and": [original.clone(), {"!": {"var": "target.openWeights"}}]});
    assert!(matches!(
        a.try_logic_value(i, mine_a.clone(), None),
        rulebench::app::workspace::Draft::Valid { .. }
    ));
    assert!(matches!(
        b.try_logic_value(i, mine_b.clone(), None),
        rulebench::app::workspace::Draft::Valid { .. }
    ));
    a.save_rule(i).unwrap();
    let err = b.save_rule(i).unwrap_err();
    let c = err.conflict().expect("a conflict, not an overwrite");
    assert_eq!(c.what, ConflictOn::RuleLogic("vision".into()));
    assert_eq!((&c.mine, &c.theirs, &c.base), (&mine_b, &mine_a, &original));
    assert_eq!(stored_logic(&db, "vision"), mine_a, "A's clause stays");
    assert!(b.is_unsaved(i), "B's edit is still there, unsaved");
    assert_eq!(b.conflicts().len(), 1);
    // B keeps mine, having seen theirs: saved over it.
    let (rev, _) = b.resolve(Choice::KeepMine).unwrap();
    assert!(rev.is_some());
    assert_eq!(stored_logic(&db, "vision"), mine_b);
    assert!(b.conflicts().is_empty());
}

/// A colleague's `rule add --replace` of the rule being edited, then a reload ("your
/// edits kept"): the draft's save must not overwrite it without the person's word.
#[test]
fn a_reload_over_a_draft_of_a_rule_changed_elsewhere_asks_before_saving() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let app = common::open_app(&db);
    let mut s = Session::open(&app, LLM).unwrap();
    let i = s.page.rule("streaming").unwrap().0;
    let mine = json!({"==": [{"var": "target.supportsStreaming"}, true]});
    s.try_logic_value(i, mine.clone(), None);
    let theirs = json!({"!!": [{"var": "target.supportsStreaming"}]});
    theirs_change(&db, "streaming", theirs.clone());
    s.reload().unwrap();
    assert_eq!(s.page.rules[i].logic, mine, "the draft is shown");
    assert_eq!(s.conflicts().len(), 1, "and the conflict is waiting");
    assert!(s.save_rule(i).unwrap_err().conflict().is_some());
    assert_eq!(stored_logic(&db, "streaming"), theirs);
    s.resolve(Choice::TakeTheirs).unwrap();
    assert_eq!(s.page.rules[i].logic, theirs);
    assert!(!s.is_unsaved(i));
    // A draft of a rule nobody else touched is re-applied without a word.
    let j = s.page.rule("vision").unwrap().0;
    let draft = json!({"==": [{"var": "target.supportsVision"}, true]});
    s.try_logic_value(j, draft.clone(), None);
    theirs_change(&db, "streaming", json!(true));
    s.reload().unwrap();
    assert!(s.conflicts().is_empty());
    assert_eq!(s.page.rules[j].logic, draft);
    s.save_rule(j).unwrap();
    assert_eq!(stored_logic(&db, "vision"), draft);
}

/// Tuned policy values over a value changed elsewhere: asked, not saved over.
#[test]
fn a_tuned_policy_value_changed_elsewhere_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let app = common::open_app(&db);
    let mut s = Session::open(&app, LLM).unwrap();
    let mut d = s.page.device_policy.clone();
    d.full_threshold = 0.95;
    let sel = s.page.selection_policy.clone();
    s.tune_policies(d, sel).unwrap();
    common::open_app(&db)
        .set_policy(LLM, &["fullThreshold=0.5".into()])
        .unwrap();
    let err = s.save_tuned_policies().unwrap_err();
    let c = err.conflict().expect("a conflict");
    assert_eq!(c.what, ConflictOn::Policy(vec!["fullThreshold".into()]));
    assert_eq!(
        (
            c.mine["fullThreshold"].as_f64(),
            c.theirs["fullThreshold"].as_f64()
        ),
        (Some(0.95), Some(0.5))
    );
    let stored = || {
        common::open_app(&db)
            .page(LLM)
            .unwrap()
            .0
            .device_policy
            .full_threshold
    };
    assert_eq!(stored(), 0.5);
    s.resolve(Choice::TakeTheirs).unwrap();
    assert_eq!(s.page.device_policy.full_threshold, 0.5);
    assert!(!s.policies_unsaved());
    // And with keep mine, mine is saved over theirs.
    let mut d = s.page.device_policy.clone();
    d.full_threshold = 0.9;
    let sel = s.page.selection_policy.clone();
    s.tune_policies(d, sel).unwrap();
    common::open_app(&db)
        .set_policy(LLM, &["fullThreshold=0.6".into()])
        .unwrap();
    assert!(s.save_tuned_policies().is_err());
    s.resolve(Choice::KeepMine).unwrap();
    assert_eq!(stored(), 0.9);
}

/// A rule's logic as the workbench shows it.
fn shown_logic(b: &Bench, rule: &str) -> Value {
    b.ui.page()
        .unwrap()
        .ws
        .page
        .rule(rule)
        .unwrap()
        .1
        .logic
        .clone()
}

fn edit_rule(b: &mut Bench, rule: &str, prefix: &str, suffix: &str) {
    let i = b.ui.page().unwrap().ws.page.rule(rule).unwrap().0;
    b.press(KeyCode::Char('2'));
    b.press(KeyCode::Home);
    for _ in 0..i {
        b.press(KeyCode::Down);
    }
    b.press(KeyCode::Char('e'));
    b.chars(prefix);
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::ALT));
    b.press(KeyCode::End);
    b.chars(suffix);
}

/// In the workbench: the reload after a colleague's change shows the dialog (mine,
/// theirs, who), the status line never says "kept", and each choice does what it says.
#[test]
fn the_workbench_shows_mine_and_theirs_and_each_choice_does_what_it_says() {
    for choice in ['t', 'm', 'e'] {
        let mut b = Bench::open(LLM);
        let db = b.db();
        edit_rule(&mut b, "streaming", "{\"!\": ", "}");
        let mine = shown_logic(&b, "streaming");
        assert!(mine["!"].is_object(), "{mine}");
        let theirs = json!({"!!": [{"var": "target.supportsStreaming"}]});
        theirs_change(&db, "streaming", theirs.clone());
        b.ui.tick(Instant::now() + Duration::from_secs(3));
        let screen = b.screen(160, 45);
        if std::env::var_os("SHOW_SCREEN").is_some() {
            eprintln!("{screen}");
        }
        assert!(screen.contains("Changed elsewhere"), "{screen}");
        assert!(
            screen.contains("rule `streaming` was changed elsewhere"),
            "{screen}"
        );
        assert!(
            screen.contains("theirs  ") && screen.contains("mine    "),
            "{screen}"
        );
        assert!(screen.contains("m keep mine"), "{screen}");
        assert!(!screen.contains("your edits kept"), "{screen}");
        assert_eq!(
            stored_logic(&db, "streaming"),
            theirs,
            "nothing saved over theirs"
        );
        b.press(KeyCode::Char(choice));
        match choice {
            't' => {
                assert_eq!(stored_logic(&db, "streaming"), theirs);
                let p = b.ui.page().unwrap();
                assert_eq!(p.ws.page.rule("streaming").unwrap().1.logic, theirs);
                assert!(b.screen(160, 45).contains("took theirs"));
            }
            'm' => {
                assert_eq!(stored_logic(&db, "streaming"), mine);
                assert!(b.screen(160, 45).contains("kept mine over theirs"));
            }
            _ => {
                let text = b.ui.page().unwrap().editor.text();
                assert!(text.starts_with("<<<<<<< mine\n"), "{text}");
                assert!(
                    text.contains("\n=======\n") && text.contains(">>>>>>> theirs (revision"),
                    "{text}"
                );
                assert!(b.ui.page().unwrap().editor.is_invalid());
                // The person keeps theirs and adds a clause of their own.
                let p = b.ui.page_mut().unwrap();
                p.editor.textarea.select_all();
                p.editor.textarea.cut();
                b.chars(r#"{"and": [{"!!": [{"var": "target.supportsStreaming"}]}, {"var": "target.supportsVision"}]}"#);
                b.ui.tick(Instant::now() + Duration::from_secs(6));
                let merged = stored_logic(&db, "streaming");
                assert_eq!(merged["and"][0], theirs, "{merged}");
                assert!(b.ui.modal.is_none());
            }
        }
    }
}

/// A page renamed under an open workbench: noticed within a second and followed with
/// the edits (saves failed with "Query returned no rows" and the edit was lost on quit).
#[test]
fn a_page_renamed_elsewhere_is_followed_with_the_edits() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    edit_rule(&mut b, "vision", "{\"!\": ", "}");
    let mine = shown_logic(&b, "vision");
    common::open_app(&db)
        .rename_page(LLM, "chat-models")
        .unwrap();
    b.ui.tick(Instant::now() + Duration::from_millis(1500));
    let screen = b.screen(160, 45);
    assert!(screen.contains("was renamed to `chat-models`"), "{screen}");
    assert!(
        screen.contains("Follow it, with your edits? y/n"),
        "{screen}"
    );
    b.press(KeyCode::Char('y'));
    let p = b.ui.page().unwrap();
    assert_eq!(p.ws.page.id, "chat-models");
    assert_eq!(
        p.ws.page.rule("vision").unwrap().1.logic,
        mine,
        "the edit kept"
    );
    b.ui.tick(Instant::now() + Duration::from_secs(5));
    let app = common::open_app(&db);
    let (page, _) = app.page("chat-models").unwrap();
    assert_eq!(
        page.rule("vision").unwrap().1.logic,
        mine,
        "and saved there"
    );
}

/// A page removed under an open workbench: offered back under its own id, with the
/// edits; nothing is lost.
#[test]
fn a_page_removed_elsewhere_is_offered_back_with_the_edits() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    edit_rule(&mut b, "vision", "{\"!\": ", "}");
    let mine = shown_logic(&b, "vision");
    common::open_app(&db).delete_page(LLM).unwrap();
    b.ui.tick(Instant::now() + Duration::from_millis(1500));
    let screen = b.screen(160, 45);
    assert!(screen.contains("was removed elsewhere"), "{screen}");
    b.press(KeyCode::Char('y'));
    assert!(b.screen(160, 45).contains("Save this page as"));
    b.press(KeyCode::Enter);
    let app = common::open_app(&db);
    let (page, revision) = app.page(LLM).expect("offered back under its own id");
    assert_eq!(page.rule("vision").unwrap().1.logic, mine, "with the edit");
    assert_eq!(revision, 1);
    assert_eq!(page.target.rows.len(), 14);
    assert!(!b.ui.unsaved());
}

/// An assertion edited in the JSON dialog while a colleague changed it: Ctrl-S opens
/// the conflict dialog instead of writing over theirs; `m` then keeps mine.
#[test]
fn an_assertion_changed_elsewhere_while_edited_is_a_conflict() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    let first = b.ui.page().unwrap().ws.page.assertions[0].clone();
    b.press(KeyCode::Char('7'));
    b.press(KeyCode::Home);
    // The Tests pane lists failures first: find the first assertion's row.
    let id = first.id.clone();
    for _ in 0..20 {
        b.press(KeyCode::Enter);
        let open = match &b.ui.modal {
            Some(rulebench::tui::ui::Modal::Json(s)) => s.replacing.clone(),
            _ => None,
        };
        if open.as_deref() == Some(id.as_str()) {
            break;
        }
        b.ui.modal = None;
        b.press(KeyCode::Down);
    }
    // Theirs: the same assertion with another description.
    let mut theirs = first.clone();
    theirs.description = Some("changed by a colleague".into());
    common::open_app(&db)
        .replace_assertion(LLM, Some(&id), theirs.clone())
        .unwrap();
    // Mine: the description edited in the dialog.
    let Some(rulebench::tui::ui::Modal::Json(state)) = &mut b.ui.modal else {
        panic!("the JSON dialog is open");
    };
    let mut mine: Value = serde_json::from_str(&state.text()).unwrap();
    mine["description"] = json!("mine");
    state.textarea.select_all();
    state.textarea.cut();
    state.textarea.insert_str(mine.to_string());
    b.ctrl('s');
    let screen = b.screen(160, 45);
    assert!(screen.contains("Changed elsewhere"), "{screen}");
    assert!(
        screen.contains(&format!("assertion `{id}` was changed elsewhere")),
        "{screen}"
    );
    let stored = |db: &std::path::Path| {
        let (page, _) = common::open_app(db).page(LLM).unwrap();
        page.assertions
            .iter()
            .find(|a| a.id == id)
            .unwrap()
            .description
            .clone()
    };
    assert_eq!(stored(&db).as_deref(), Some("changed by a colleague"));
    b.press(KeyCode::Char('m'));
    assert_eq!(stored(&db).as_deref(), Some("mine"));
}

/// A rule deleted elsewhere while its text (not valid yet) was being typed: asked about
/// (it was not: only valid drafts were), and restored with the text as typed
/// ("restored … with your edits" was said while the text was lost).
#[test]
fn a_rule_deleted_elsewhere_while_typed_comes_back_with_the_text() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    edit_rule(&mut b, "vision", "{\"!\": ", "");
    let typed = b.ui.page().unwrap().editor.text();
    assert!(b.ui.page().unwrap().editor.is_invalid());
    common::open_app(&db).remove_rule(LLM, "vision").unwrap();
    b.ui.tick(Instant::now() + Duration::from_millis(1500));
    let screen = b.screen(160, 45);
    assert!(screen.contains("deleted elsewhere"), "{screen}");
    b.press(KeyCode::Char('y'));
    let p = b.ui.page().unwrap();
    assert!(p.ws.page.rule("vision").is_some(), "restored");
    assert_eq!(p.editor.text(), typed, "with the text as typed");
    assert!(p.editor.active);
}

/// A change elsewhere with no edit here: "reloaded", never "your edits kept".
#[test]
fn a_reload_with_nothing_edited_says_nothing_was_kept() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    common::open_app(&db)
        .set_policy(LLM, &["fullThreshold=0.8".into()])
        .unwrap();
    b.ui.tick(Instant::now() + Duration::from_millis(1500));
    let screen = b.screen(160, 45);
    assert!(
        screen.contains("the page changed elsewhere (revision 2): reloaded"),
        "{screen}"
    );
    assert!(!screen.contains("kept"), "{screen}");
}

/// The review's cases: a policy conflict found on saving survives the reopening that
/// follows (it vanished, and `m` did nothing); the choice applies to the conflict shown.
#[test]
fn a_policy_conflict_survives_the_reopening_and_the_choice_applies_to_it() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    {
        let p = b.ui.page_mut().unwrap();
        let mut d = p.ws.page.device_policy.clone();
        d.full_threshold = 0.95;
        let s = p.ws.page.selection_policy.clone();
        p.ws.tune_policies(d, s).unwrap();
    }
    let t0 = Instant::now();
    b.ui.tick(t0 + Duration::from_millis(100));
    common::open_app(&db)
        .set_policy(LLM, &["fullThreshold=0.5".into()])
        .unwrap();
    // The save finds the conflict (the page was looked at less than a second ago)...
    b.ui.tick(t0 + Duration::from_millis(800));
    assert_eq!(b.ui.page().unwrap().ws.conflicts().len(), 1);
    // ...and a second later the page is reopened under the dialog.
    b.ui.tick(t0 + Duration::from_millis(1500));
    assert!(
        b.screen(160, 45)
            .contains("policy fullThreshold was changed elsewhere")
    );
    assert_eq!(
        b.ui.page().unwrap().ws.conflicts().len(),
        1,
        "still waiting"
    );
    b.press(KeyCode::Char('m'));
    let stored = common::open_app(&db)
        .page(LLM)
        .unwrap()
        .0
        .device_policy
        .full_threshold;
    assert_eq!(stored, 0.95, "mine kept over theirs");
}

/// Text typed (not valid yet) while a colleague changes the rule: once valid, the save
/// must not take their logic for the start and write over it.
#[test]
fn an_invalid_text_becoming_valid_after_a_change_elsewhere_is_a_conflict() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    edit_rule(&mut b, "vision", "{\"!\": ", "");
    assert!(b.ui.page().unwrap().editor.is_invalid());
    let theirs = json!({"==": [{"var": "target.supportsVision"}, true]});
    theirs_change(&db, "vision", theirs.clone());
    b.ui.tick(Instant::now() + Duration::from_millis(1500));
    assert!(
        b.ui.modal.is_none(),
        "nothing to decide yet: the text is not valid"
    );
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::ALT));
    b.press(KeyCode::End);
    b.chars("}");
    b.ui.tick(Instant::now() + Duration::from_secs(4));
    assert_eq!(stored_logic(&db, "vision"), theirs, "not written over");
    assert!(
        b.screen(160, 45)
            .contains("rule `vision` was changed elsewhere")
    );
}

/// "Edit a merge", then quit before the merge is valid: theirs stands (mine was saved
/// over it on quitting), and the merge text is kept as a draft.
#[test]
fn quitting_in_the_middle_of_a_merge_writes_nothing_over_theirs() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    edit_rule(&mut b, "streaming", "{\"!\": ", "}");
    let theirs = json!({"!!": [{"var": "target.supportsStreaming"}]});
    theirs_change(&db, "streaming", theirs.clone());
    b.ui.tick(Instant::now() + Duration::from_secs(3));
    b.press(KeyCode::Char('e'));
    assert!(b.ui.page().unwrap().editor.is_invalid());
    b.ui.flush_saves();
    assert_eq!(stored_logic(&db, "streaming"), theirs);
    let drafts = common::open_app(&db).drafts(LLM).unwrap();
    assert!(drafts[0].text.starts_with("<<<<<<< mine"), "{drafts:?}");
}

/// Esc puts a conflict off; the next save of it asks again.
#[test]
fn a_conflict_put_off_is_asked_again_at_the_next_save() {
    let mut b = Bench::open(LLM);
    let db = b.db();
    edit_rule(&mut b, "streaming", "{\"!\": ", "}");
    theirs_change(&db, "streaming", json!(true));
    b.ui.tick(Instant::now() + Duration::from_secs(3));
    assert!(b.ui.modal.is_some());
    b.press(KeyCode::Esc);
    assert!(b.ui.modal.is_none(), "put off");
    b.ui.tick(Instant::now() + Duration::from_secs(4));
    assert!(b.ui.modal.is_none(), "not asked at every tick");
    // Another keystroke in the editor: its save meets the conflict again.
    b.ui.handle_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::ALT));
    b.press(KeyCode::End);
    b.chars(" ");
    b.ui.tick(Instant::now() + Duration::from_secs(6));
    assert!(matches!(
        b.ui.modal,
        Some(rulebench::tui::ui::Modal::Conflict(_))
    ));
}

/// `u` (revert) on a rule changed elsewhere since it was shown: nothing is reverted
/// over the change (it wrote the whole rule back).
#[test]
fn reverting_a_rule_changed_elsewhere_reverts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let app = common::open_app(&db);
    let mut s = Session::open(&app, LLM).unwrap();
    let i = s.page.rule("vision").unwrap().0;
    // A history to revert to: a change made here first.
    s.try_logic_value(
        i,
        json!({"==": [{"var": "target.supportsVision"}, true]}),
        None,
    );
    s.save_rule(i).unwrap();
    let theirs = json!({"!!": [{"var": "target.supportsVision"}]});
    theirs_change(&db, "vision", theirs.clone());
    let err = s.revert_rule(i).unwrap_err().to_string();
    assert!(err.contains("changed elsewhere"), "{err}");
    assert_eq!(stored_logic(&db, "vision"), theirs);
    // Once the page is read again, the revert goes from theirs.
    s.reload().unwrap();
    s.revert_rule(i).unwrap();
    assert_ne!(stored_logic(&db, "vision"), theirs);
}

/// The status line escapes what it shows, whatever made the message (a conflict's error
/// names a rule id, a page id and an author, all untrusted).
#[test]
fn the_status_line_escapes_every_message() {
    let mut b = Bench::open(LLM);
    b.ui.status
        .error("rule `x\u{1b}[2J\u{202e}` was changed elsewhere");
    let screen = b.screen(160, 45);
    assert!(!screen.contains(['\u{1b}', '\u{202e}']), "{screen:?}");
    assert!(screen.contains("x\\u{1b}[2J\\u{202e}"), "{screen}");
}

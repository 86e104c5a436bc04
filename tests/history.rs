//! A page's history: every revision reads back whole (`PAGE@N`), and a rule, the
//! policies, an override or the whole page restore from any revision as a new one.

mod common;

use rulebench::app::App;
use rulebench::app::dataset::{DataInput, ImportOptions};
use rulebench_core::model::{Page, Side};
use rulebench_store::MIGRATIONS;
use serde_json::{Value, json};

use common::rb;

const LLM: &str = "llm-chat-clients";

/// Replaces the sample page's target rows with `rows` (a dataset import).
fn import_targets(app: &mut App, rows: &[Value]) {
    let bytes = serde_json::to_vec(rows).unwrap();
    app.import_dataset_from(
        LLM,
        Side::Target,
        DataInput::Bytes {
            name: "<test>",
            bytes: &bytes,
        },
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap();
}

fn keys(page: &Page) -> (String, String, String, String) {
    let s = &page.source;
    let t = &page.target;
    (
        s.row_key(&s.rows[0]),
        t.row_key(&t.rows[0]),
        s.row_key(&s.rows[1]),
        t.row_key(&t.rows[1]),
    )
}

/// One change of every kind, each through the use case the fronts call; after each,
/// the page as it then was is kept, and every one of them reads back from the history
/// exactly (head, rows, rules and their order, overrides, assertions).
#[test]
fn every_revision_reads_back_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("h.db")).unwrap();
    let mut seen: Vec<(i64, Page)> = Vec::new();
    let mut keep = |app: &App, id: &str| {
        let (page, rev) = app.page(id).unwrap();
        assert!(seen.last().is_none_or(|(r, _)| *r < rev), "a new revision");
        seen.push((rev, page));
    };
    keep(&app, LLM);
    let (page, _) = app.page(LLM).unwrap();
    let (s0, t0, s1, t1) = keys(&page);
    app.remove_rule(LLM, &page.rules[2].id).unwrap();
    keep(&app, LLM);
    app.set_policy(
        LLM,
        &[
            "fullThreshold=0.6".into(),
            "mode=any-device-full-is-compatible".into(),
        ],
    )
    .unwrap();
    keep(&app, LLM);
    app.put_override_by_keys(LLM, &s0, &t0, Some((true, Some("checked by hand".into()))))
        .unwrap();
    keep(&app, LLM);
    app.put_override_by_keys(LLM, &s1, &t1, Some((false, None)))
        .unwrap();
    keep(&app, LLM);
    app.put_override_by_keys(LLM, &s0, &t0, None).unwrap();
    keep(&app, LLM);
    app.set_cell(LLM, Side::Target, 3, "note", json!("edited"))
        .unwrap();
    keep(&app, LLM);
    let mut rule = page.rules[0].clone();
    rule.weight = 7.0;
    rule.logic = json!({"==": [1, 1]});
    app.save_rule(&page, &rule, Some(0)).unwrap();
    keep(&app, LLM);
    let mut rows: Vec<Value> = page
        .target
        .rows
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    rows[5]["note"] = json!("reloaded");
    rows.pop();
    import_targets(&mut app, &rows);
    keep(&app, LLM);
    app.set_assertions(LLM, Vec::new()).unwrap();
    keep(&app, LLM);
    // A whole page replaced by import keeps its history.
    let mut replaced = page.clone();
    replaced.name = "Replaced".into();
    replaced.rules.truncate(3);
    let text = serde_json::to_string(&replaced).unwrap();
    app.import(&text, "<test>", true).unwrap();
    keep(&app, LLM);
    assert_eq!(seen.len(), 11);
    for (rev, page) in &seen {
        let (at, n) = app.page_at(LLM, *rev).unwrap();
        assert_eq!(n, *rev);
        assert_eq!(&at, page, "revision {rev} reads back as it was");
    }
    // Relative revisions count back from the current one.
    let (prev, n) = app.page_spec(&format!("{LLM}@-1")).unwrap();
    assert_eq!((n, &prev), (seen[9].0, &seen[9].1));
    // The log names each change, newest first.
    let log = app.revisions(LLM).unwrap();
    assert_eq!(log.len(), 11);
    assert_eq!(log[0].change, "replaced by import");
    assert!(log.iter().any(|e| e.change.starts_with("removed rule")));
    assert!(log.windows(2).all(|w| w[0].revision > w[1].revision));
}

#[test]
fn revisions_outside_the_history_are_refused_with_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("h.db")).unwrap();
    for spec in ["@2", "@-1", "@0", "@x", "@"] {
        let err = app
            .page_spec(&format!("{LLM}{spec}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("revision"),
            "{spec}: a message about the revision: {err}"
        );
    }
    let err = app.page_spec(&format!("{LLM}@2")).unwrap_err().to_string();
    assert!(err.contains("revisions 1 to 1"), "{err}");
    let err = app.page_spec("llm-chat-client@1").unwrap_err().to_string();
    assert!(err.contains("did you mean `llm-chat-clients`"), "{err}");
}

/// A rule deleted since comes back at its old place, as a new revision; restoring it
/// again changes nothing.
#[test]
fn a_deleted_rule_is_restored_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("h.db")).unwrap();
    let (page, r1) = app.page(LLM).unwrap();
    let gone = page.rules[3].id.clone();
    app.remove_rule(LLM, &gone).unwrap();
    app.set_policy(LLM, &["fullThreshold=0.5".into()]).unwrap();
    let r = app
        .restore_rule(LLM, r1, &gone)
        .unwrap()
        .expect("a new revision");
    let (now, rev) = app.page(LLM).unwrap();
    assert_eq!(rev, r);
    assert_eq!(now.rules, page.rules, "the rule is back, in its place");
    assert_eq!(now.device_policy.full_threshold, 0.5, "the rest stays");
    assert_eq!(app.restore_rule(LLM, r1, &gone).unwrap(), None);
    assert_eq!(app.page(LLM).unwrap().1, rev, "no revision for nothing");
    let log = app.revisions(LLM).unwrap();
    assert_eq!(
        log[0].change,
        format!("restored rule {gone} from revision {r1}")
    );
    // An edited rule goes back to its old text where it is.
    let mut edited = now.rules[0].clone();
    edited.logic = json!({"!": [true]});
    app.save_rule(&now, &edited, Some(0)).unwrap();
    app.restore_rule(LLM, r1, &edited.id).unwrap().unwrap();
    assert_eq!(app.page(LLM).unwrap().0.rules, page.rules);
    let err = app.restore_rule(LLM, r1, "no-such-rule").unwrap_err();
    assert!(err.to_string().contains("at revision 1"), "{err}");
}

#[test]
fn policies_overrides_and_the_whole_page_restore() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("h.db")).unwrap();
    let (page, r1) = app.page(LLM).unwrap();
    let (s0, t0, s1, t1) = keys(&page);
    app.put_override_by_keys(LLM, &s0, &t0, Some((true, Some("kept note".into()))))
        .unwrap();
    let with_override = app.page(LLM).unwrap().1;
    app.put_override_by_keys(LLM, &s0, &t0, None).unwrap();
    app.put_override_by_keys(LLM, &s1, &t1, Some((false, None)))
        .unwrap();
    app.set_policy(LLM, &["partialThreshold=0.1".into()])
        .unwrap();
    // The override cleared by mistake comes back with its note.
    app.restore_override(LLM, with_override, &s0, &t0)
        .unwrap()
        .unwrap();
    let now = app.page(LLM).unwrap().0;
    let o = now
        .overrides
        .iter()
        .find(|o| o.source_key.as_deref() == Some(s0.as_str()))
        .expect("restored");
    assert_eq!((o.value, o.note.as_deref()), (true, Some("kept note")));
    // An override that was not there at revision 1 is removed by restoring that.
    app.restore_override(LLM, r1, &s1, &t1).unwrap().unwrap();
    assert_eq!(
        app.page(LLM).unwrap().0.overrides.len(),
        page.overrides.len() + 1
    );
    app.restore_policies(LLM, r1).unwrap().unwrap();
    let now = app.page(LLM).unwrap().0;
    assert_eq!(now.device_policy, page.device_policy);
    assert_eq!(app.restore_policies(LLM, r1).unwrap(), None);
    // The whole page at revision 1 again, and the history keeps everything between.
    let before = app.page(LLM).unwrap().1;
    let r = app.restore_page(LLM, r1).unwrap().unwrap();
    assert_eq!(app.page(LLM).unwrap().0, page);
    assert_eq!(app.page_at(LLM, before).unwrap().0, now);
    assert_eq!(app.restore_page(LLM, r1).unwrap(), None);
    assert_eq!(app.revisions(LLM).unwrap()[0].revision, r);
}

/// A database made before whole-page history starts each page's history at the
/// revision it had; earlier ones are refused with why, later ones read back.
#[test]
fn an_older_database_starts_its_history_at_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let mut app = App::open(&path).unwrap();
        app.set_policy(LLM, &["fullThreshold=0.6".into()]).unwrap();
    }
    // Rebuild the database as version 4 had it: no log tables, no triggers.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let triggers: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        // (Schema 8 dropped the row triggers: rows are logged by their writer.)
        assert_eq!(triggers.len(), 11);
        for t in triggers {
            conn.execute_batch(&format!("DROP TRIGGER {t}")).unwrap();
        }
        conn.execute_batch(
            "DROP TABLE page_log; DROP TABLE row_log; DROP TABLE rule_log;
             DROP TABLE override_log; DROP TABLE assertion_log;
             ALTER TABLE revisions DROP COLUMN author;
             ALTER TABLE rules DROP COLUMN expression;
             ALTER TABLE rules DROP COLUMN warning_json;
             ALTER TABLE rules DROP COLUMN applies_when_json;
             ALTER TABLE rules DROP COLUMN family_json;
             DROP TABLE drafts;
             DROP TABLE views;
             ALTER TABLE pages DROP COLUMN expectations_json;
             ALTER TABLE dataset_rows DROP COLUMN revision;
             PRAGMA user_version = 4;",
        )
        .unwrap();
    }
    let mut app = App::open(&path).unwrap();
    assert_eq!(app.store().user_version().unwrap(), MIGRATIONS.len() as i64);
    let (page, r2) = app.page(LLM).unwrap();
    assert_eq!(r2, 2);
    let err = app.page_at(LLM, 1).unwrap_err().to_string();
    assert!(err.contains("from revision 2 on"), "{err}");
    assert_eq!(app.page_at(LLM, 2).unwrap().0, page);
    app.remove_rule(LLM, &page.rules[0].id).unwrap();
    assert_eq!(app.page_at(LLM, 2).unwrap().0, page);
    assert_eq!(app.revisions(LLM).unwrap()[1].author, None);
}

/// Deleting a page leaves no history behind; renaming one takes it along.
#[test]
fn history_follows_a_rename_and_goes_with_a_deleted_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("h.db")).unwrap();
    let (page, _) = app.page(LLM).unwrap();
    app.remove_rule(LLM, &page.rules[0].id).unwrap();
    app.rename_page(LLM, "chat").unwrap();
    let mut at1 = app.page_at("chat", 1).unwrap().0;
    at1.id = LLM.into();
    assert_eq!(at1, page);
    app.delete_page("chat").unwrap();
    for table in [
        "page_log",
        "row_log",
        "rule_log",
        "override_log",
        "assertion_log",
    ] {
        let n: i64 = app
            .store()
            .connection()
            .query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE page_id IN ('chat', ?1)"),
                [LLM],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0, "{table} holds nothing of the deleted page");
    }
}

#[test]
fn the_command_line_reads_and_restores_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (code, first, _) = rb(&db, &["export", LLM]);
    assert_eq!(code, 0);
    let (code, _, err) = rb(&db, &["rule", "rm", LLM, "vision"]);
    assert_eq!(code, 0, "{err}");
    // The log, as JSON.
    let (code, out, _) = rb(&db, &["page", "log", LLM, "--format", "json"]);
    assert_eq!(code, 0);
    let log: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(log[0]["change"], "removed rule vision");
    assert_eq!(log[0]["revision"], 2);
    // The page at revision 1 is the page as first exported.
    let (code, at1, _) = rb(&db, &["export", &format!("{LLM}@1")]);
    assert_eq!(code, 0);
    assert_eq!(at1, first);
    // The last change's effect on outcomes.
    let (code, out, _) = rb(
        &db,
        &["diff", &format!("{LLM}@-1"), LLM, "--format", "json"],
    );
    assert_eq!(code, 0);
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["diff"]["rules"]["removed"][0], "vision", "{d:#}");
    // Restore wants a revision, and says what it did.
    let (code, _, err) = rb(&db, &["page", "restore", LLM]);
    assert_eq!(code, 2);
    assert!(err.contains("@N"), "{err}");
    let (code, _, err) = rb(
        &db,
        &["page", "restore", &format!("{LLM}@1"), "--rule", "vision"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("restored rule vision from revision 1 (revision 3)"),
        "{err}"
    );
    let (_, now, _) = rb(&db, &["export", LLM]);
    assert_eq!(now, first);
    let (code, _, err) = rb(&db, &["page", "restore", &format!("{LLM}@9")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("revisions 1 to 3"), "{err}");
}

/// A dataset written again with one row changed logs that row only (each import logged
/// every row: a watched 100,000-row file grew the history by 100,000 rows a save), and
/// the history still reads back every revision.
#[test]
fn a_reimport_logs_only_the_rows_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("h.db")).unwrap();
    let (page, r1) = app.page(LLM).unwrap();
    let logged = |app: &App| -> i64 {
        app.store()
            .connection()
            .query_row(
                "SELECT COUNT(*) FROM row_log WHERE page_id = ?1",
                [LLM],
                |r| r.get(0),
            )
            .unwrap()
    };
    let mut rows: Vec<Value> = page
        .target
        .rows
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    let before = logged(&app);
    import_targets(&mut app, &rows);
    assert_eq!(logged(&app), before, "the same rows: nothing logged");
    rows[3]["rank"] = json!(99);
    import_targets(&mut app, &rows);
    assert_eq!(logged(&app), before + 1, "one row changed: one logged");
    let (with_14, r14) = app.page(LLM).unwrap();
    // Fewer rows: the tail goes (and is logged gone); every revision reads back.
    let mut fewer = page.clone();
    fewer.target.rows.truncate(10);
    fewer.overrides.clear();
    fewer.assertions.clear();
    app.import(&serde_json::to_string(&fewer).unwrap(), "<t>", true)
        .unwrap();
    assert_eq!(app.page(LLM).unwrap().0.target.rows.len(), 10);
    assert_eq!(app.page_at(LLM, r1).unwrap().0, page);
    assert_eq!(app.page_at(LLM, r14).unwrap().0, with_14);
}

/// Pruning forgets the history before a revision: every revision from it on still reads
/// back exactly, the earlier ones are refused, the log keeps its later lines; the
/// command asks first (`--yes` without a terminal).
#[test]
fn pruning_keeps_every_revision_from_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut app = App::open(&db).unwrap();
    let (page, _) = app.page(LLM).unwrap();
    let mut seen = vec![app.page(LLM).unwrap()];
    for (i, rule) in page.rules.iter().take(3).enumerate() {
        app.remove_rule(LLM, &rule.id).unwrap();
        let mut rows: Vec<Value> = seen
            .last()
            .unwrap()
            .0
            .target
            .rows
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect();
        rows[i]["rank"] = json!(100 + i);
        import_targets(&mut app, &rows);
        seen.push(app.page(LLM).unwrap());
    }
    let cut = seen[2].1;
    let before: i64 = app
        .store()
        .connection()
        .query_row("SELECT COUNT(*) FROM row_log", [], |r| r.get(0))
        .unwrap();
    drop(app);
    let (code, _, err) = rb(&db, &["page", "prune", &format!("{LLM}@{cut}")]);
    assert_eq!(code, 2, "asks first: {err}");
    let (code, _, err) = rb(&db, &["page", "prune", &format!("{LLM}@{cut}"), "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("before revision {cut}")), "{err}");
    let app = App::open(&db).unwrap();
    for (page, rev) in &seen {
        if *rev < cut {
            let e = app.page_at(LLM, *rev).unwrap_err().to_string();
            assert!(e.contains(&format!("from revision {cut} on")), "{e}");
        } else {
            assert_eq!(&app.page_at(LLM, *rev).unwrap().0, page, "revision {rev}");
        }
    }
    let after: i64 = app
        .store()
        .connection()
        .query_row("SELECT COUNT(*) FROM row_log", [], |r| r.get(0))
        .unwrap();
    assert!(after < before, "{after} < {before}");
    let log = app.revisions(LLM).unwrap();
    assert_eq!(log.last().unwrap().revision, cut);
}

/// From schema 8 a row is logged when it changes, not when it is written: new rows are
/// written once (the log takes none of them; a 1M-row import wrote every row twice),
/// and rows an older schema stored (logged by its triggers, with no revision of their
/// own) keep every revision readable after the upgrade, through cell edits, reimports
/// that change, add and drop rows, and a whole-page import.
#[test]
fn rows_are_logged_when_they_change_across_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let sample = App::open(&dir.path().join("sample.db"))
        .unwrap()
        .page(LLM)
        .unwrap()
        .0;
    let path = dir.path().join("old.db");
    let mut seen: Vec<(Page, i64)> = vec![];
    {
        // Schema 7: rows logged by triggers.
        let mut store = rulebench_store::Store::open_at(&path, 7).unwrap();
        store.insert_page(&sample, false).unwrap();
        seen.push((store.load(LLM).unwrap().unwrap().page, 1));
        let mut changed = sample.target.clone();
        changed.rows[0].insert("rank".into(), json!(7));
        changed.rows.truncate(12);
        let r = store
            .change(LLM, "rows", |tx, _| {
                rulebench_store::ops::replace_dataset(tx, LLM, Side::Target, &changed)
            })
            .unwrap();
        seen.push((store.load(LLM).unwrap().unwrap().page, r));
    }
    let mut app = App::open(&path).unwrap();
    assert_eq!(app.store().user_version().unwrap(), MIGRATIONS.len() as i64);
    let logged = |app: &App| -> i64 {
        app.store()
            .connection()
            .query_row("SELECT COUNT(*) FROM row_log", [], |r| r.get(0))
            .unwrap()
    };
    let rows_of = |page: &Page| -> Vec<Value> {
        page.target
            .rows
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect()
    };
    // 50 rows appended: none logged.
    let mut rows = rows_of(&seen[1].0);
    for i in 0..50 {
        rows.push(json!({"id": format!("new-{i}"), "name": format!("New {i}"), "rank": i}));
    }
    let before = logged(&app);
    import_targets(&mut app, &rows);
    assert_eq!(logged(&app), before, "new rows are not logged");
    seen.push(app.page(LLM).unwrap());
    // An old row (stored by schema 7) and a new one edited, then changed again.
    for (row, rank) in [(0, 70), (20, 71), (20, 72), (1, 73)] {
        let r = app
            .set_cell(LLM, Side::Target, row, "rank", json!(rank))
            .unwrap();
        let (page, rev) = app.page(LLM).unwrap();
        assert_eq!(rev, r);
        seen.push((page, rev));
    }
    // A reimport that changes two rows and drops the tail, then one that brings rows
    // back at the places of dropped ones.
    let mut rows = rows_of(&seen.last().unwrap().0);
    rows[2]["rank"] = json!(80);
    rows[30]["rank"] = json!(81);
    rows.truncate(40);
    import_targets(&mut app, &rows);
    seen.push(app.page(LLM).unwrap());
    rows.truncate(5);
    import_targets(&mut app, &rows);
    seen.push(app.page(LLM).unwrap());
    let mut rows = rows_of(&seen[2].0);
    rows.truncate(45);
    import_targets(&mut app, &rows);
    seen.push(app.page(LLM).unwrap());
    // A whole-page import over it.
    let mut whole = sample.clone();
    whole.target.rows.truncate(9);
    whole.target.rows[8].insert("rank".into(), json!(90));
    whole.overrides.clear();
    whole.assertions.clear();
    app.import(&serde_json::to_string(&whole).unwrap(), "<t>", true)
        .unwrap();
    seen.push(app.page(LLM).unwrap());
    let revisions: Vec<i64> = seen.iter().map(|(_, r)| *r).collect();
    assert!(revisions.windows(2).all(|w| w[0] < w[1]), "{revisions:?}");
    for (page, rev) in &seen {
        assert_eq!(&app.page_at(LLM, *rev).unwrap().0, page, "revision {rev}");
    }
    // And read-only, as `rulebench --db … export PAGE@N` opens it.
    drop(app);
    let store = rulebench_store::Store::open_read_only(&path).unwrap();
    for (page, rev) in &seen {
        assert_eq!(
            &store.load_at(LLM, *rev).unwrap().unwrap().page,
            page,
            "revision {rev}"
        );
    }
}

/// Assertions have a history like the rest: `diff` names the ones added, removed and
/// edited, `page restore --assertion` puts one back in its place (or removes one that
/// was not there), and the log says so.
#[test]
fn assertions_show_in_diff_and_restore_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (code, first, _) = rb(&db, &["export", LLM]);
    assert_eq!(code, 0);
    let page: Value = serde_json::from_str(&first).unwrap();
    let id = page["assertions"][0]["id"].as_str().unwrap().to_owned();
    let (code, _, err) = rb(&db, &["assertion", "rm", LLM, &id]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = rb(&db, &["diff", &format!("{LLM}@1"), LLM]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("assertions removed (1): {id}")),
        "{out}"
    );
    let (code, out, _) = rb(&db, &["diff", &format!("{LLM}@1"), LLM, "--format", "json"]);
    assert_eq!(code, 0);
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["diff"]["assertions"]["removed"][0], id.as_str(), "{d:#}");
    // Back in its place, as a new revision.
    let (code, _, err) = rb(
        &db,
        &["page", "restore", &format!("{LLM}@1"), "--assertion", &id],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "restored assertion {id} from revision 1 (revision 3)"
        )),
        "{err}"
    );
    let (_, now, _) = rb(&db, &["export", LLM]);
    assert_eq!(
        now, first,
        "the page is as it was, the assertion in its place"
    );
    // Again: nothing to do. An id neither then nor now: not found, exit 2.
    let (code, _, err) = rb(
        &db,
        &["page", "restore", &format!("{LLM}@1"), "--assertion", &id],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("already"), "{err}");
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "restore",
            &format!("{LLM}@1"),
            "--assertion",
            "no-such",
        ],
    );
    assert_eq!(code, 2, "{err}");
    // One added since revision 1 is removed by restoring it from revision 1.
    let (code, _, err) = rb(&db, &["test", LLM, "--pin"]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = rb(&db, &["diff", &format!("{LLM}@1"), LLM, "--format", "json"]);
    let d: Value = serde_json::from_str(&out).unwrap();
    let added = d["diff"]["assertions"]["added"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "restore",
            &format!("{LLM}@1"),
            "--assertion",
            &added,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = rb(&db, &["assertion", "list", LLM, "--format", "json"]);
    assert!(!out.contains(&format!("\"{added}\"")), "removed: {out}");
}

//! Concurrent writers lose nothing: processes changing different values of one page at
//! the same moment all keep their change.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

const LLM: &str = "llm-chat-clients";

fn rulebench(db: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rulebench")
}

fn export(db: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(["export", LLM])
        .output()
        .expect("run rulebench");
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).expect("the page file is JSON")
}

/// Three processes set three different policy values at once, 100 rounds: every value
/// of every round is there afterwards (a whole-policy write from a stale read would put
/// an older value back).
#[test]
fn concurrent_policy_changes_keep_every_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    // Create and seed the database first.
    assert!(rulebench(&db, &["db", "init"]).wait().unwrap().success());
    let modes = [
        "ANY_REQUIRED_FAIL_IS_0",
        "ANY_REQUIRED_FAIL_CAPS_AT_PARTIAL",
    ];
    let mut lost = Vec::new();
    for round in 0..100 {
        let full = if round % 2 == 0 { "0.9" } else { "0.95" };
        let partial = if round % 3 == 0 { "0.3" } else { "0.35" };
        let mode = modes[round % 2];
        let children = [
            rulebench(
                &db,
                &["policy", "set", LLM, &format!("fullThreshold={full}")],
            ),
            rulebench(
                &db,
                &["policy", "set", LLM, &format!("partialThreshold={partial}")],
            ),
            rulebench(
                &db,
                &["policy", "set", LLM, &format!("requiredMode={mode}")],
            ),
        ];
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let page = export(&db);
        let p = &page["devicePolicy"];
        let got = (
            p["fullThreshold"].as_f64().unwrap(),
            p["partialThreshold"].as_f64().unwrap(),
            p["requiredMode"].as_str().unwrap().to_owned(),
        );
        let want = (
            full.parse::<f64>().unwrap(),
            partial.parse::<f64>().unwrap(),
            mode.to_owned(),
        );
        if got != want {
            lost.push((round, got, want));
        }
    }
    assert!(
        lost.is_empty(),
        "lost updates in {} of 100 rounds, first: {:?}",
        lost.len(),
        &lost[..lost.len().min(3)]
    );
}

/// Writers adding assertions at once (each its own connection, as separate processes
/// would be) keep every one: the list is read and written inside one transaction.
#[test]
fn concurrent_assertion_edits_keep_every_assertion() {
    use rulebench::app::App;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let before = App::open(&db)
        .unwrap()
        .page(LLM)
        .unwrap()
        .0
        .assertions
        .len();
    for round in 0..10 {
        let handles: Vec<_> = (0..6)
            .map(|w| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let mut app = App::open(&db).unwrap();
                    let a = serde_json::from_value(serde_json::json!({
                        "id": format!("r{round}-w{w}"), "select": "t3-chat",
                        "path": "$.selectionVerdict", "matcher": "toBeOneOf",
                        "expected": [0, 1, 2]
                    }))
                    .unwrap();
                    app.put_assertion(LLM, a).unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    let after = App::open(&db).unwrap().page(LLM).unwrap().0.assertions;
    assert_eq!(after.len(), before + 60, "every added assertion is kept");
}

/// Overrides of different pairs set at once are all kept.
#[test]
fn concurrent_overrides_keep_every_pair() {
    use rulebench::app::App;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    let page = App::open(&db).unwrap().page(LLM).unwrap().0;
    let before = page.overrides.len();
    let keys = |side: &rulebench_core::model::Dataset| -> Vec<String> {
        side.rows.iter().map(|r| side.row_key(r)).collect()
    };
    let (sources, targets) = (keys(&page.source), keys(&page.target));
    // Pairs with no override yet.
    let pairs: Vec<(String, String)> = sources
        .iter()
        .flat_map(|s| targets.iter().map(move |t| (s.clone(), t.clone())))
        .filter(|(s, t)| {
            !page.overrides.iter().any(|o| {
                o.source_key.as_deref() == Some(s.as_str())
                    && o.target_key.as_deref() == Some(t.as_str())
            })
        })
        .take(24)
        .collect();
    let handles: Vec<_> = pairs
        .chunks(4)
        .map(|chunk| {
            let (db, chunk) = (db.clone(), chunk.to_vec());
            std::thread::spawn(move || {
                let mut app = App::open(&db).unwrap();
                for (s, t) in chunk {
                    app.set_override(LLM, &s, &t, true, Some(format!("{s} {t}")))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let after = App::open(&db).unwrap().page(LLM).unwrap().0.overrides;
    assert_eq!(after.len(), before + pairs.len(), "every override is kept");
}

/// Two workbench sessions editing different rows of one dataset at once keep every edit
/// (each edit rewrites its own row only).
#[test]
fn concurrent_cell_edits_of_different_rows_keep_every_value() {
    use rulebench::app::{App, Session};
    use rulebench_core::model::Side;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    App::open(&db).unwrap();
    let handles: Vec<_> = [2usize, 5]
        .into_iter()
        .map(|row| {
            let db = db.clone();
            std::thread::spawn(move || {
                let app = App::open(&db).unwrap();
                let mut s = Session::open(&app, LLM).unwrap();
                for i in 0..50 {
                    s.set_cell(Side::Target, row, "benchNote", serde_json::json!(i))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let page = App::open(&db).unwrap().page(LLM).unwrap().0;
    for row in [2, 5] {
        assert_eq!(page.target.rows[row]["benchNote"], 49, "row {row}");
    }
}

/// Key edits (which go through the whole-page check) of two different rows at once,
/// 50 rounds each: both rows end with their last key (the edit used to write back the
/// whole dataset it had read, putting the other row's older key back).
#[test]
fn concurrent_key_edits_of_different_rows_keep_every_key() {
    use rulebench::app::App;
    use rulebench_core::model::Side;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    App::open(&db).unwrap();
    let handles: Vec<_> = [2usize, 5]
        .into_iter()
        .map(|row| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut app = App::open(&db).unwrap();
                for i in 0..50 {
                    app.set_cell(
                        LLM,
                        Side::Target,
                        row,
                        "id",
                        serde_json::json!(format!("row{row}-{i}")),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let page = App::open(&db).unwrap().page(LLM).unwrap().0;
    for row in [2, 5] {
        assert_eq!(
            page.target.rows[row]["id"],
            format!("row{row}-49"),
            "row {row}"
        );
    }
}

/// Two writers holding the same snapshot of a page at 99 of its 100 rules both add a
/// rule: one gets in, the other is refused with the limit (the count is read inside
/// the transaction, not from the snapshot). Two writers adding the same new id: the
/// second is told the id exists instead of overwriting the first's rule.
#[test]
fn concurrent_rule_adds_respect_the_limit_and_the_id() {
    use rulebench::app::{App, AppError};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut a = App::open(&db).unwrap();
    let mut b = App::open(&db).unwrap();
    let rule = |id: &str| format!(r#"{{"id":"{id}","name":"Rule {id}","logic":true}}"#);
    let (page, _) = a.page(LLM).unwrap();
    for n in page.rules.len()..99 {
        a.add_rule(LLM, &rule(&format!("fill-{n}")), "test", false)
            .unwrap();
    }
    let (snap_a, _) = a.page(LLM).unwrap();
    let (snap_b, _) = b.page(LLM).unwrap();
    assert_eq!(snap_a.rules.len(), 99);
    let (x, _) = App::parse_rule(&snap_a, &rule("x"), "test").unwrap();
    let (y, _) = App::parse_rule(&snap_b, &rule("y"), "test").unwrap();
    a.save_rule(&snap_a, &x, None).unwrap();
    let refused = b.save_rule(&snap_b, &y, None);
    assert!(
        matches!(refused, Err(AppError::RuleLimit { limit: 100 })),
        "{refused:?}"
    );
    assert_eq!(b.page(LLM).unwrap().0.rules.len(), 100);

    // The same new id from two stale snapshots.
    let (snap_a, _) = a.page("loan-eligibility").unwrap();
    let (snap_b, _) = b.page("loan-eligibility").unwrap();
    let (first, _) = App::parse_rule(&snap_a, &rule("twin"), "test").unwrap();
    let mut second = first.clone();
    second.name = "The other twin".into();
    a.save_rule(&snap_a, &first, None).unwrap();
    let refused = b.save_rule(&snap_b, &second, None);
    assert!(
        matches!(refused, Err(AppError::RuleExists { .. })),
        "{refused:?}"
    );
    let (page, _) = b.page("loan-eligibility").unwrap();
    assert_eq!(page.rule("twin").unwrap().1.name, "Rule twin");
    assert_eq!(page.rules.len(), snap_a.rules.len() + 1);
}

/// A dataset import that points an override at a key whose case changed writes only
/// that override: an override another writer added while the import was reading its
/// file is still there afterwards (the import used to write back the whole list it had
/// read before the file). The file is a FIFO, so the other write lands exactly in that
/// window.
#[test]
fn dataset_import_keeps_an_override_added_while_it_read_the_file() {
    use rulebench::app::App;
    use rulebench::app::dataset::ImportOptions;
    use rulebench::app::types::Side;
    use std::io::Write;
    const PAGE: &str = "provider-capabilities";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    let mut a = App::open(&db).unwrap();
    let mut b = App::open(&db).unwrap();
    let (page, _) = a.page(PAGE).unwrap();
    assert_eq!(page.overrides.len(), 1, "the sample's ollama override");
    // The same rows, `ollama` re-keyed as `OLLAMA`.
    let rows: Vec<Value> = page
        .target
        .rows
        .iter()
        .map(|r| {
            let mut r = Value::Object(r.clone().into_iter().collect());
            if r["id"] == "ollama" {
                r["id"] = "OLLAMA".into();
            }
            r
        })
        .collect();
    let fifo = dir.path().join("providers.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let path = fifo.clone();
    let importer = std::thread::spawn(move || {
        a.import_dataset(
            PAGE,
            Side::Target,
            &path,
            &ImportOptions::default(),
            &mut |_| {},
        )
    });
    // Opening the FIFO for writing waits for the importer to open it: by then it has
    // read the page.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    b.set_override(PAGE, "streaming", "openai", false, Some("meanwhile".into()))
        .unwrap();
    writer
        .write_all(serde_json::to_string(&rows).unwrap().as_bytes())
        .unwrap();
    drop(writer);
    importer.join().unwrap().unwrap();
    let (page, _) = b.page(PAGE).unwrap();
    assert_eq!(page.overrides.len(), 2, "{:?}", page.overrides);
    assert!(
        page.overrides
            .iter()
            .any(|o| o.note.as_deref() == Some("meanwhile")),
        "{:?}",
        page.overrides
    );
    // The sample's override followed `ollama` to `OLLAMA`.
    let row = page
        .target
        .rows
        .iter()
        .find(|r| r["id"] == "OLLAMA")
        .unwrap();
    let hash = rulebench::app::text::key_hash(&page.target.row_key(row));
    assert!(
        page.overrides
            .iter()
            .any(|o| o.note.as_deref() != Some("meanwhile") && o.target_hash().unwrap() == hash),
        "{:?}",
        page.overrides
    );
}

/// Two workbench sessions changing different fields of one rule at once (one its logic,
/// the other its weight), 100 rounds each: both last values stay.
#[test]
fn concurrent_logic_and_weight_edits_of_one_rule_keep_both() {
    use rulebench::app::{App, Session};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    App::open(&db).unwrap();
    let logic_writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let app = App::open(&db).unwrap();
            let mut s = Session::open(&app, LLM).unwrap();
            let i = s
                .page
                .rules
                .iter()
                .position(|r| r.id == "tool-calling")
                .unwrap();
            for n in 0..100 {
                let text = format!("{{\"<=\": [{n}, {{\"var\": \"target.contextWindow\"}}]}}");
                assert!(matches!(
                    s.try_logic(i, &text),
                    rulebench::app::workspace::Draft::Valid { .. }
                ));
                s.save_rule(i).unwrap();
            }
        })
    };
    let weight_writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let app = App::open(&db).unwrap();
            let mut s = Session::open(&app, LLM).unwrap();
            let i = s
                .page
                .rules
                .iter()
                .position(|r| r.id == "tool-calling")
                .unwrap();
            for n in 0..100 {
                let r = s.page.rules[i].clone();
                let condition = s.condition_text(i);
                s.update_rule_meta(
                    i,
                    &r.name,
                    r.required,
                    f64::from(n) + 1.0,
                    &r.category,
                    &condition,
                )
                .unwrap();
            }
        })
    };
    logic_writer.join().unwrap();
    weight_writer.join().unwrap();
    let page = App::open(&db).unwrap().page(LLM).unwrap().0;
    let rule = page.rules.iter().find(|r| r.id == "tool-calling").unwrap();
    assert_eq!(rule.weight, 100.0, "the last weight");
    assert_eq!(
        rule.logic,
        serde_json::json!({"<=": [99, {"var": "target.contextWindow"}]}),
        "the last logic"
    );
}

/// Two sessions editing different fields of the same row at once, 50 rounds each: both
/// fields end with their last value.
#[test]
fn concurrent_cell_edits_of_one_row_keep_every_field() {
    use rulebench::app::{App, Session};
    use rulebench_core::model::Side;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    App::open(&db).unwrap();
    let handles: Vec<_> = ["noteA", "noteB"]
        .into_iter()
        .map(|field| {
            let db = db.clone();
            std::thread::spawn(move || {
                let app = App::open(&db).unwrap();
                let mut s = Session::open(&app, LLM).unwrap();
                for i in 0..50 {
                    s.set_cell(Side::Target, 3, field, serde_json::json!(i))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let page = App::open(&db).unwrap().page(LLM).unwrap().0;
    for field in ["noteA", "noteB"] {
        assert_eq!(page.target.rows[3][field], 49, "{field}");
    }
}

/// A cell edit from a session whose rows were renumbered elsewhere (a dataset import in
/// another order) is refused instead of landing on whatever row now has its position.
#[test]
fn a_cell_edit_never_lands_on_a_row_renumbered_elsewhere() {
    use rulebench::app::{App, Session};
    use rulebench_core::model::Side;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    let app = App::open(&db).unwrap();
    let mut session = Session::open(&app, LLM).unwrap();
    let row2 = session.page.target.rows[2]["id"].clone();
    // Elsewhere: the same rows, reversed.
    let mut rows: Vec<serde_json::Value> = session
        .page
        .target
        .rows
        .iter()
        .map(|r| serde_json::Value::Object(r.clone()))
        .collect();
    rows.reverse();
    let file = dir.path().join("reversed.json");
    std::fs::write(&file, serde_json::Value::Array(rows).to_string()).unwrap();
    let out = rulebench(
        &db,
        &["dataset", "import", LLM, "target", file.to_str().unwrap()],
    )
    .wait_with_output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let edit = session.set_cell(Side::Target, 2, "benchNote", serde_json::json!("mine"));
    assert!(edit.is_err(), "refused: {edit:?}");
    let page = App::open(&db).unwrap().page(LLM).unwrap().0;
    assert!(
        page.target
            .rows
            .iter()
            .all(|r| r.get("benchNote").is_none()),
        "no row got the value"
    );
    assert!(page.target.rows.iter().any(|r| r["id"] == row2));
}

/// Readers racing a writer that replaces a page again and again between two versions:
/// every export is one version whole (name, policy, rows, rules and overrides of the
/// same version: 21 of 1,470 exports mixed two), every evaluation and assertion run
/// succeeds, and nobody gets `database is locked`.
#[test]
fn readers_racing_replacing_imports_see_whole_versions_and_never_a_lock_error() {
    use rulebench::app::App;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("race.db");
    let version = |v: &str| -> String {
        serde_json::json!({
            "format": "rulebench.page/v1", "id": "race", "name": format!("Version {v}"),
            "source": {"name": "S", "key": ["id"], "rows": [{"id": format!("s-{v}")}, {"id": "s"}]},
            "target": {"name": "T", "key": ["id"],
                       "rows": (0..50).map(|i| serde_json::json!({"id": format!("t{i}-{v}"), "n": i})).collect::<Vec<_>>()},
            "rules": [{"id": format!("rule-{v}"), "name": format!("Rule {v}"),
                       "logic": {">=": [{"var": "target.n"}, 10]}}],
            "devicePolicy": {"fullThreshold": if v == "a" { 0.9 } else { 0.7 }},
            "overrides": [{"sourceKey": "id=s", "targetKey": format!("id=t1-{v}"), "value": true}],
            "assertions": [{"id": format!("as-{v}"), "select": "s", "path": "$.selectionVerdict",
                            "matcher": "toBeOneOf", "expected": [0, 1, 2]}]
        })
        .to_string()
    };
    let mut app = App::open(&db).unwrap();
    app.import(&version("a"), "a.json", false).unwrap();
    drop(app);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        let (a, b) = (version("a"), version("b"));
        std::thread::spawn(move || {
            let mut app = App::open(&db).unwrap();
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 300 {
                let text = if n % 2 == 0 { &b } else { &a };
                app.import(text, "v.json", true)
                    .expect("the writer waits, never fails");
                n += 1;
            }
            n
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut app = App::open(&db).unwrap();
                let mut seen = 0;
                for i in 0..200 {
                    let (page, _) = app.page("race").expect("a read never fails");
                    let v = if page.name == "Version a" { "a" } else { "b" };
                    let whole = page.source.rows[0]["id"] == format!("s-{v}")
                        && page
                            .target
                            .rows
                            .iter()
                            .all(|t| t["id"].as_str().unwrap().ends_with(&format!("-{v}")))
                        && page.rules[0].id == format!("rule-{v}")
                        && page.device_policy.full_threshold == if v == "a" { 0.9 } else { 0.7 }
                        && page.overrides.len() == 1
                        && page.assertions[0].id == format!("as-{v}");
                    assert!(
                        whole,
                        "a torn read: {}",
                        serde_json::to_string(&page).unwrap()
                    );
                    if (i + r) % 4 == 0 {
                        let result = app.evaluate("race", "id=s").expect("evaluate never fails");
                        let v = result.to_value(&rulebench::app::types::Needs::all());
                        let ids: std::collections::HashSet<char> = v["targets"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| t["id"].as_str().unwrap().chars().last().unwrap())
                            .collect();
                        assert_eq!(ids.len(), 1, "targets of two versions in one result: {v}");
                        app.run_assertions("race").expect("a test run never fails");
                    }
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for r in readers {
        assert_eq!(r.join().expect("no reader failed"), 200);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().expect("the writer never failed") > 0);
}

/// `--if-revision N`: a CLI writer that read revision N changes the page only if it is
/// still there; otherwise nothing is written, the revisions since are listed, exit 1.
#[test]
fn if_revision_refuses_a_page_that_moved_on_and_says_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ifrev.db");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env_remove("RULEBENCH_DB")
            .arg("--db")
            .arg(&db)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, err) = run(&[
        "policy",
        "set",
        LLM,
        "fullThreshold=0.9",
        "--if-revision",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    // A colleague's change meanwhile (revision 3).
    let (code, err) = run(&["policy", "set", LLM, "partialThreshold=0.3"]);
    assert_eq!(code, 0, "{err}");
    let before = export(&db);
    for args in [
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=0.8",
            "--if-revision",
            "2",
        ][..],
        &["rule", "rm", LLM, "streaming", "--if-revision", "2"],
        &[
            "override",
            "add",
            LLM,
            "--source",
            "t3-chat",
            "--target",
            "o3",
            "--value",
            "true",
            "--if-revision",
            "2",
        ],
        &["page", "rename", LLM, "renamed", "--if-revision", "2"],
        &["page", "rm", LLM, "--yes", "--if-revision", "2"],
    ] {
        let (code, err) = run(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains("is at revision 3, not 2"), "{args:?}: {err}");
        assert!(err.contains("3 policy"), "the change since is named: {err}");
        assert_eq!(export(&db), before, "{args:?} wrote nothing");
    }
    let file = dir.path().join("page.json");
    std::fs::write(&file, serde_json::to_string(&before).unwrap()).unwrap();
    let (code, err) = run(&[
        "import",
        file.to_str().unwrap(),
        "--replace",
        "--if-revision",
        "2",
    ]);
    assert_eq!(code, 1, "{err}");
    // At the revision it is at, the change goes through.
    let (code, err) = run(&[
        "policy",
        "set",
        LLM,
        "fullThreshold=0.8",
        "--if-revision",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(export(&db)["devicePolicy"]["fullThreshold"], 0.8);
}

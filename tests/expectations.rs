//! Expectations from a table: `rulebench test PAGE --expect FILE` checks a table of
//! expected outcomes (CSV, TSV, JSON Lines, Parquet, Excel) row by row, and `--pin-to`
//! writes the current outcomes as one. Every actual value a report gives is checked
//! against the engine's own result for the pair.

mod common;

use std::path::{Path, PathBuf};

use common::{rb, rb_as_is};
use serde_json::{Value, json};

/// Two apps and a third whose id a spreadsheet would run as a formula; three models.
/// "Vision" and "Context" apply only where the app needs vision; "Tools" is required
/// where the app needs tools.
fn page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "na", "name": "N/A",
        "source": {"name": "Apps", "key": ["id"], "label": "name", "rows": [
            {"id": "photo", "name": "Photo app", "needsVision": true, "needsTools": true},
            {"id": "text", "name": "Text app", "needsVision": false, "needsTools": false},
            {"id": "=calc", "name": "Calc", "needsVision": true, "needsTools": false}
        ]},
        "target": {"name": "Models", "key": ["model"], "rows": [
            {"model": "both", "vision": true, "tools": true, "context": 200000},
            {"model": "tools-only", "vision": false, "tools": true, "context": 8000},
            {"model": "neither", "vision": false, "tools": false, "context": 4000}
        ]},
        "rules": [
            {"id": "vision", "name": "Vision", "weight": 2,
             "appliesWhen": "source.needsVision == true",
             "logic": {"==": [{"var": "target.vision"}, true]}},
            {"id": "tools", "name": "Tools", "required": true,
             "appliesWhen": "source.needsTools == true",
             "logic": {"==": [{"var": "target.tools"}, true]}},
            {"id": "context", "name": "Context", "weight": 1,
             "appliesWhen": {"!!": [{"var": "source.needsVision"}]},
             "logic": {">=": [{"var": "target.context"}, 100000]}}
        ],
        "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1, "partialThreshold": 0.4}
    })
}

struct Env {
    dir: tempfile::TempDir,
    db: PathBuf,
}

impl Env {
    /// A database holding the page above as `na`.
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("rb.db");
        let env = Env { dir, db };
        let file = env.file("na.json", &page().to_string());
        let (code, _, err) = rb(&env.db, &["import", &file]);
        assert_eq!(code, 0, "{err}");
        env
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        self.path(name)
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    fn rb(&self, args: &[&str]) -> (i32, String, String) {
        rb(&self.db, args)
    }

    /// `test PAGE --expect FILE --format json`, which must exit `code`.
    #[track_caller]
    fn report(&self, page: &str, file: &str, code: i32) -> Value {
        let (c, out, err) = self.rb(&["test", page, "--expect", file, "--format", "json"]);
        assert_eq!(c, code, "exit {c}: {err}{out}");
        serde_json::from_str(&out).unwrap()
    }

    /// The engine's own result for one selection.
    fn evaluate(&self, page: &str, source: &str) -> Value {
        let (code, out, err) = self.rb(&["evaluate", page, "--select", source, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    }
}

/// Checks every row's `actual` against the engine's result for its pair (the witness).
#[track_caller]
fn actual_is_the_engines(env: &Env, page: &str, report: &Value) {
    let mut seen = std::collections::HashMap::new();
    for r in report["results"].as_array().unwrap() {
        let source = r["source"].as_str().unwrap().to_owned();
        let result = seen
            .entry(source.clone())
            .or_insert_with(|| env.evaluate(page, &source));
        let target = result["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == r["target"])
            .unwrap_or_else(|| panic!("no target {} in {source}'s result", r["target"]));
        assert_eq!(r["actual"]["verdict"], target["verdict"], "{r}");
        assert_eq!(r["actual"]["score"], target["score"], "{r}");
        assert_eq!(r["actual"]["reason"], target["reason"], "{r}");
    }
}

#[test]
fn pinned_tables_pass_in_every_format_they_are_written_in() {
    let env = Env::new();
    for page in [
        "na",
        "llm-chat-clients",
        "loan-eligibility",
        "provider-capabilities",
    ] {
        for ext in ["csv", "tsv", "jsonl"] {
            let file = env.path(&format!("{page}.{ext}"));
            let (code, _, err) = env.rb(&["test", page, "--pin-to", &file]);
            assert_eq!(code, 0, "{err}");
            assert!(err.contains("expectation(s)"), "{err}");
            let report = env.report(page, &file, 0);
            let exported = common::export_page(&env.db, page);
            let pairs = exported["source"]["rows"].as_array().unwrap().len()
                * exported["target"]["rows"].as_array().unwrap().len();
            assert_eq!(report["passed"], pairs, "{page}.{ext}");
            assert_eq!(report["failed"], 0);
            assert!(report.get("ignoredColumns").is_none(), "{report}");
            actual_is_the_engines(&env, page, &report);
        }
    }
    // The formula-looking id was written guarded, and read back as the row it names.
    let csv = std::fs::read_to_string(env.path("na.csv")).unwrap();
    assert!(csv.contains("\n'=calc,Calc,both,"), "{csv}");
}

#[test]
fn pinning_one_source_writes_its_targets_only() {
    let env = Env::new();
    let (code, out, err) = env.rb(&["test", "na", "--pin-to", "-", "--select", "text"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "source,sourceLabel,target,targetLabel,verdict,score,reason"
    );
    assert_eq!(
        &lines[1..],
        [
            "text,Text app,both,both,2,1,full",
            "text,Text app,tools-only,tools-only,2,1,full",
            "text,Text app,neither,neither,2,1,full",
        ]
    );
    // --select names what to pin: alone it is a usage error, as is a format --pin-to
    // does not write.
    let (code, _, err) = env.rb(&["test", "na", "--select", "text"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--pin-to"), "{err}");
    let (code, _, err) = env.rb(&["test", "na", "--pin-to", &env.path("x.parquet")]);
    assert_eq!(code, 2);
    assert!(err.contains(".csv, .tsv or .jsonl"), "{err}");
    assert!(!Path::new(&env.path("x.parquet")).exists());
}

#[test]
fn a_tidy_result_is_a_table_of_expectations_with_every_rule() {
    let env = Env::new();
    for format in ["csv", "parquet", "jsonl"] {
        let file = env.path(&format!("all.{format}"));
        let (code, _, err) = env.rb(&[
            "evaluate",
            "llm-chat-clients",
            "--all",
            "--format",
            format,
            "-o",
            &file,
        ]);
        assert_eq!(code, 0, "{err}");
        let report = env.report("llm-chat-clients", &file, 0);
        assert_eq!(report["passed"], 98, "{format}");
    }
    // A rule's outcome is checked: flip one `rule.…` cell of the CSV.
    let csv = std::fs::read_to_string(env.path("all.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "rule.streaming").unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_owned).collect();
    let mut cells: Vec<String> = lines[1].split(',').map(str::to_owned).collect();
    let was = cells[column].clone();
    cells[column] = if was == "true" { "false" } else { "true" }.to_owned();
    lines[1] = cells.join(",");
    let file = env.file("flipped.csv", &(lines.join("\n") + "\n"));
    let report = env.report("llm-chat-clients", &file, 1);
    assert_eq!(report["failed"], 1);
    let failed = &report["results"][0];
    assert_eq!(failed["row"], 2);
    assert_eq!(
        failed["mismatches"],
        json!([{"what": "rule.streaming", "expected": if was == "true" { "fail" } else { "pass" },
                "actual": if was == "true" { "pass" } else { "fail" }}])
    );
}

#[test]
fn every_kind_of_failure_names_the_row_what_was_expected_what_came_and_why() {
    let env = Env::new();
    // Sources and targets by their key fields; a label (`Text app`) names a row too.
    let file = env.file(
        "expect.csv",
        "id,model,verdict,score,reason,rule:tools,rule.vision,comment\n\
         photo,both,2,1.00,full,pass,pass,all good\n\
         photo,tools-only,1,,,,,verdict wrong\n\
         photo,neither,,0.5,,,,score wrong\n\
         photo,neither,,,low-score,,,reason wrong\n\
         photo,neither,,,,pass,,rule wrong\n\
         Text app,both,,,,n/a,fail,n/a expected as fail\n\
         text,neither,full,100%,,,,\n",
    );
    let report = env.report("na", &file, 1);
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(report["ignoredColumns"], json!(["comment"]));
    actual_is_the_engines(&env, "na", &report);
    let results = report["results"].as_array().unwrap();
    let failed: Vec<(u64, Value)> = results
        .iter()
        .filter(|r| r["passed"] == false)
        .map(|r| (r["row"].as_u64().unwrap(), r["mismatches"].clone()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                3,
                json!([{"what": "verdict", "expected": "1", "actual": "0"}])
            ),
            (
                4,
                json!([{"what": "score", "expected": "0.50", "actual": "0.00"}])
            ),
            (
                5,
                json!([{"what": "reason", "expected": "low-score", "actual": "required-fail"}])
            ),
            (
                6,
                json!([{"what": "rule.tools", "expected": "pass", "actual": "fail"}])
            ),
            (
                7,
                json!([{"what": "rule.vision", "expected": "fail", "actual": "n/a"}])
            ),
        ]
    );
    // A failed row says why the pair got its verdict, and which rules fail on it.
    let row5 = &results[3];
    assert_eq!(row5["failingRules"], json!(["vision", "tools", "context"]));
    assert!(
        row5["why"]
            .as_str()
            .unwrap()
            .contains("required rule failed"),
        "{row5}"
    );
    assert_eq!(row5["at"], format!("{file}:5"));
    assert!(results[0].get("why").is_none());
    // The text report lists the failed rows with their place in the file.
    let (code, out, _) = env.rb(&["test", "na", "--expect", &file]);
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!("FAIL  {file}:3  Photo app × tools-only")),
        "{out}"
    );
    assert!(out.contains("verdict: expected 1, got 0"), "{out}");
    assert!(out.contains("ignored columns: `comment`"), "{out}");
    assert!(
        out.ends_with("7 expectations: 2 passed, 5 failed\n"),
        "{out}"
    );
    // JUnit: one test case per row, named by its place and pair; a failure per failed row.
    let (code, xml, _) = env.rb(&["test", "na", "--expect", &file, "--format", "junit"]);
    assert_eq!(code, 1);
    assert_eq!(xml.matches("<testcase ").count(), 7, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 5, "{xml}");
    assert!(
        xml.contains(&format!("name=\"{file}:7: Text app × both\">")),
        "{xml}"
    );
    assert!(
        xml.contains("message=\"rule.vision: expected fail, got n/a\""),
        "{xml}"
    );
}

#[test]
fn an_excel_sheet_and_a_page_file_work_like_the_rest() {
    let env = Env::new();
    let xlsx = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/expect/expectations.xlsx"
    );
    let (code, out, err) = env.rb(&[
        "test", "na", "--expect", xlsx, "--sheet", "Expected", "--format", "json",
    ]);
    assert_eq!(code, 1, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(3), Some(1))
    );
    let failed = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["passed"] == false)
        .unwrap();
    assert_eq!(failed["at"], format!("{xlsx}: sheet `Expected` row 4"));
    assert_eq!(failed["mismatches"][0]["what"], "verdict");
    actual_is_the_engines(&env, "na", &report);
    // A page file, in memory: the same report, revision 0, no database made.
    let page = env.file("page.json", &page().to_string());
    let fresh = env.dir.path().join("none.db");
    let (code, out, err) = rb_as_is(
        &fresh,
        &[
            "test", &page, "--expect", xlsx, "--sheet", "Expected", "--format", "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let in_memory: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(in_memory["revision"], 0);
    assert_eq!(in_memory["results"], report["results"]);
    assert!(!fresh.exists());
    // A page file pins to a table too.
    let (code, out, err) = rb_as_is(&fresh, &["test", &page, "--pin-to", "-"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 10);
}

#[test]
fn bad_tables_are_refused_with_every_bad_row_located() {
    let env = Env::new();
    let refused = |name: &str, text: &str| -> String {
        let file = env.file(name, text);
        let (code, out, err) = env.rb(&["test", "na", "--expect", &file]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(out.is_empty(), "{out}");
        err
    };
    let err = refused(
        "rows.csv",
        "source,target,verdict,score,rule.tools\n\
         phot,both,2,,\n\
         photo,bothh,2,,\n\
         photo,both,3,,\n\
         photo,both,,2,\n\
         photo,both,,,maybe\n\
         photo,both,,,\n\
         ,both,2,,\n\
         photo,both,2,,\n",
    );
    let file = env.path("rows.csv");
    for (line, what) in [
        (2, "no source row `phot` (hint: did you mean `id=photo`?)"),
        (3, "no target row `bothh`"),
        (4, "`verdict`: `3` is not a verdict"),
        (5, "`score`: `2` is not a score"),
        (6, "`rule.tools`: `maybe` is not a rule outcome"),
        (7, "expects nothing"),
        (8, "the `source` cell is empty"),
    ] {
        assert!(
            err.contains(&format!("{file}:{line}: {what}")),
            "{line}: {err}"
        );
    }
    assert!(err.contains("7 bad rows (1 good)"), "{err}");
    let err = refused("nosource.csv", "who,target,verdict\nphoto,both,2\n");
    assert!(err.contains("no source column"), "{err}");
    assert!(err.contains("`source`"), "{err}");
    // A key field both sides have names neither.
    let file = env.file("both.csv", "id,verdict\nt3,2\n");
    let (code, _, err) = env.rb(&["test", "llm-chat-clients", "--expect", &file]);
    assert_eq!(code, 2);
    assert!(err.contains("`id` keys both sides"), "{err}");
    let err = refused("nothing.csv", "source,target,comment\nphoto,both,hi\n");
    assert!(err.contains("no expected outcome"), "{err}");
    let err = refused("rule.csv", "source,target,rule.vison\nphoto,both,pass\n");
    assert!(err.contains("did you mean `rule.vision`?"), "{err}");
    let err = refused("empty.csv", "source,target,verdict\n");
    assert!(err.contains("no rows"), "{err}");
    // Reading flags read the table: alone they are a usage error.
    let (code, _, err) = env.rb(&["test", "na", "--sheet", "Expected"]);
    assert_eq!(code, 2);
    assert!(err.contains("--expect"), "{err}");
    // Both from stdin cannot be.
    let (code, _, err) = env.rb(&["test", "-", "--expect", "-"]);
    assert_eq!(code, 2);
    assert!(err.contains("stdin"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Linked tables
// ---------------------------------------------------------------------------------------

#[test]
fn a_linked_table_is_checked_with_the_assertions_and_unlinked() {
    let env = Env::new();
    let table = env.path("linked.csv");
    assert_eq!(env.rb(&["test", "na", "--pin-to", &table]).0, 0);
    let (code, _, err) = env.rb(&["test", "na", "--expect", &table, "--link"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("linked ") && err.contains("(revision 2)"),
        "{err}"
    );
    // In the page (absolute), its log and its export; the revision before has none.
    let page = common::export_page(&env.db, "na");
    assert_eq!(page["expectations"], json!([{"file": table}]));
    let (_, log, _) = env.rb(&["page", "log", "na"]);
    assert!(
        log.contains(&format!("linked expectations {table}")),
        "{log}"
    );
    let (_, before, _) = env.rb(&["export", "na@1"]);
    assert!(!before.contains("\"expectations\""), "{before}");
    // `diff` says so (and History's "the same as at this revision" is not said).
    let (code, diff, err) = env.rb(&["diff", "na@1", "na"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        diff.contains("linked tables") && diff.contains(&table),
        "{diff}"
    );
    // `test PAGE` checks it after the assertions: all as expected.
    let (code, out, err) = env.rb(&["test", "na"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("9 expectations: 9 passed, 0 failed"), "{out}");
    // A row edited: `test` fails, in every format.
    let text = std::fs::read_to_string(&table).unwrap();
    let edited = text.replacen(",full\n", ",partial\n", 1);
    assert_ne!(text, edited);
    std::fs::write(&table, edited).unwrap();
    let (code, out, _) = env.rb(&["test", "na"]);
    assert_eq!(code, 1);
    assert!(out.contains("reason: expected partial, got full"), "{out}");
    let (code, out, _) = env.rb(&["test", "na", "--format", "json"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["expectations"][0]["file"], table.as_str());
    assert_eq!(v["expectations"][0]["report"]["failed"], 1);
    let (code, xml, _) = env.rb(&["test", "na", "--format", "junit"]);
    assert_eq!(code, 1);
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    // A linked table that is gone fails the run and says so.
    std::fs::remove_file(&table).unwrap();
    let (code, out, _) = env.rb(&["test", "na"]);
    assert_eq!(code, 1);
    assert!(out.contains(&format!("linked table {table}: ")), "{out}");
    // Unlinked — by its name alone, the file gone: one revision; a second time, not
    // found with what is linked.
    let (code, _, err) = env.rb(&["test", "na", "--unlink", "linked.csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        common::export_page(&env.db, "na")
            .get("expectations")
            .is_none()
    );
    let (code, _, err) = env.rb(&["test", "na", "--unlink", &table]);
    assert_eq!(code, 2);
    assert!(err.contains("the page links no table"), "{err}");
}

#[test]
fn a_bad_table_is_not_linked_and_page_files_link_relative_tables() {
    let env = Env::new();
    let bad = env.file("bad.csv", "source,target,verdict\nnobody,both,2\n");
    let (code, _, err) = env.rb(&["test", "na", "--expect", &bad, "--link"]);
    assert_eq!(code, 2);
    assert!(err.contains("no source row `nobody`"), "{err}");
    assert!(
        common::export_page(&env.db, "na")
            .get("expectations")
            .is_none()
    );
    let (_, log, _) = env.rb(&["page", "log", "na"]);
    assert!(!log.contains("linked"), "{log}");
    // --link needs a stored page.
    let page_file = env.file("page.json", &page().to_string());
    let (code, _, err) = env.rb(&["test", &page_file, "--expect", &bad, "--link"]);
    assert_eq!(code, 2);
    assert!(err.contains("stored page"), "{err}");
    // A page file's relative table: checked from the file's directory, in memory, and
    // stored absolute when the page is imported.
    let sub = env.dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("t.csv"), "source,target,verdict\nphoto,both,2\n").unwrap();
    let mut v = page();
    v["id"] = json!("na2");
    v["expectations"] = json!([{"file": "t.csv"}]);
    let file = sub.join("na2.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let (code, out, err) = rb_as_is(&env.db, &["test", file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 expectation: 1 passed, 0 failed"), "{out}");
    assert_eq!(env.rb(&["import", file]).0, 0);
    let stored = common::export_page(&env.db, "na2");
    let linked = sub.join("t.csv");
    assert_eq!(
        stored["expectations"][0]["file"],
        std::fs::canonicalize(&linked).unwrap().to_str().unwrap()
    );
    // An unknown key in a linked table's entry is the page file's error, located.
    let mut v = page();
    v["id"] = json!("na3");
    v["expectations"] = json!([{"file": "t.csv", "sheet": "x"}]);
    let bad_page = env.file("na3.json", &v.to_string());
    let (code, out, _) = rb_as_is(&env.db, &["check", &bad_page]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("unknown key `sheet`"), "{out}");
    // A link without a file, and one file linked twice, are errors where they are.
    let mut v = page();
    v["id"] = json!("na4");
    v["expectations"] = json!([{"file": ""}, {"file": "t.csv"}, {"file": "t.csv"}]);
    let twice = env.file("na4.json", &v.to_string());
    let (code, out, _) = rb_as_is(&env.db, &["check", &twice]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("error[linked-file]") && out.contains("/expectations/0/file"),
        "{out}"
    );
    assert!(
        out.contains("/expectations/2/file") && out.contains("linked twice"),
        "{out}"
    );
}

#[test]
fn the_watcher_tells_when_a_linked_table_changes() {
    use rulebench::app::watch::{Reload, Watcher};
    use std::time::Duration;
    let env = Env::new();
    let table = env.path("watched.csv");
    assert_eq!(env.rb(&["test", "na", "--pin-to", &table]).0, 0);
    assert_eq!(env.rb(&["test", "na", "--expect", &table, "--link"]).0, 0);
    // A table whose directory is gone does not keep the others from being watched.
    let gone = env.dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let lost = gone.join("lost.csv");
    std::fs::copy(&table, &lost).unwrap();
    assert_eq!(
        env.rb(&["test", "na", "--expect", lost.to_str().unwrap(), "--link"])
            .0,
        0
    );
    std::fs::remove_dir_all(&gone).unwrap();
    let watcher = Watcher::start(&env.db, "na").unwrap();
    assert_eq!(watcher.tables()[0], std::path::PathBuf::from(&table));
    assert!(watcher.files().is_empty());
    assert_eq!(watcher.recv_timeout(Duration::from_millis(400)), None);
    let text = std::fs::read_to_string(&table).unwrap();
    std::fs::write(&table, text.replacen(",full\n", ",partial\n", 1)).unwrap();
    assert_eq!(
        watcher.recv_timeout(Duration::from_secs(5)),
        Some(Reload::Expectations {
            file: std::path::PathBuf::from(&table)
        })
    );
}

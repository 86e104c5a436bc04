//! Dataset import (CSV, JSON, JSON Lines), the dataset schema, field defaults,
//! case-insensitive keys and live reload of linked files — through the app, the
//! watcher API and the command line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rulebench::app::App;
use rulebench::app::dataset::{ImportOptions, Progress};
use rulebench::app::watch::{Reload, Watcher};
use rulebench::app::workspace::Session;
use rulebench_core::dataset::{DataFormat, KeyCase, ParseOptions, parse};
use rulebench_core::diag::Code;
use rulebench_core::model::{Page, Side};
use serde_json::{Value, json};
use tempfile::TempDir;

const PAGE: &str = "ds";

fn streaming_rule() -> Value {
    json!({"id": "streaming", "name": "Streaming", "required": true,
           "logic": {"or": [{"==": [{"var": "source.needsStreaming"}, false]},
                            {"==": [{"var": "target.supportsStreaming"}, true]}]}})
}

/// A small page: 2 clients × 2 models, one required streaming rule.
fn page_json() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": PAGE, "name": "Datasets",
        "source": {"name": "Clients", "key": ["id"], "label": "name",
                   "rows": [{"id": "web", "name": "Web", "needsStreaming": true},
                            {"id": "batch", "name": "Batch", "needsStreaming": false}]},
        "target": {"name": "Models", "key": ["id"], "label": "name",
                   "rows": [{"id": "m1", "name": "M1", "supportsStreaming": true},
                            {"id": "m2", "name": "M2", "supportsStreaming": false}]},
        "rules": [streaming_rule()]
    })
}

struct Env {
    dir: TempDir,
    db: PathBuf,
}

impl Env {
    fn new() -> Env {
        Env::with_page(page_json())
    }

    fn with_page(page: Value) -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("d.db");
        let mut app = App::open(&db).expect("open");
        app.import(&page.to_string(), "ds.json", false)
            .expect("the fixture page imports");
        Env { dir, db }
    }

    fn app(&self) -> App {
        App::open(&self.db).expect("open")
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// Everything about the page: its export, its revision and every table's row count.
    fn state(&self) -> (Value, i64, Vec<(String, i64)>) {
        let app = self.app();
        let (page, revision) = app.page(PAGE).unwrap();
        (
            serde_json::to_value(&page).unwrap(),
            revision,
            app.store().fingerprint().unwrap(),
        )
    }

    fn rb(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env_remove("RULEBENCH_DB")
            .arg("--db")
            .arg(&self.db)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run rulebench");
        (
            out.status.code().expect("exit code"),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }
}

fn import(env: &Env, side: Side, path: &Path, opts: &ImportOptions) -> rulebench::app::Result<i64> {
    env.app()
        .import_dataset(PAGE, side, path, opts, &mut |_| {})
        .map(|d| d.revision)
}

fn target_rows(env: &Env) -> Value {
    let (page, _) = env.app().page(PAGE).unwrap();
    serde_json::to_value(&page.target.rows).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

#[test]
fn csv_edge_cases_import_typed_rows() {
    let env = Env::new();
    // BOM, CRLF, quotes with doubled quotes, a comma and a newline inside quotes, empty
    // cells, numbers, booleans in any case, zip codes with leading zeros.
    let text = "\u{feff}id,name,supportsStreaming,contextWindow,price,zip,notes\r\n\
                m1,\"GPT \"\"4.1\"\"\",true,128000,2.5,02134,\r\n\
                m2,\"Claude, Sonnet\",FALSE,200000,3,90210,\"two\r\nlines\"\r\n\
                m3,Local,,8000,,00501,plain\r\n";
    let path = env.file("models.csv", text);
    let before = env.state().1;
    let rev = import(&env, Side::Target, &path, &ImportOptions::default()).unwrap();
    assert_eq!(rev, before + 1, "one import, one revision");
    assert_eq!(
        target_rows(&env),
        json!([
            {"id": "m1", "name": "GPT \"4.1\"", "supportsStreaming": true, "contextWindow": 128000,
             "price": 2.5, "zip": "02134", "notes": null},
            {"id": "m2", "name": "Claude, Sonnet", "supportsStreaming": false, "contextWindow": 200000,
             "price": 3, "zip": "90210", "notes": "two\r\nlines"},
            {"id": "m3", "name": "Local", "supportsStreaming": null, "contextWindow": 8000,
             "price": null, "zip": "00501", "notes": "plain"}
        ])
    );
    // The zip column stays strings as a whole, even where a value has no leading zero.
    let view = env.app().dataset_schema(PAGE, Side::Target).unwrap();
    assert_eq!(view.schema.fields["zip"].type_name(), "string");
    assert_eq!(view.schema.fields["price"].type_name(), "number");
    assert_eq!(view.schema.fields["contextWindow"].type_name(), "integer");
    assert_eq!(view.schema.fields["supportsStreaming"].nulls, 1);
}

#[test]
fn csv_blank_lines_are_skipped_and_lines_stay_right() {
    let key = vec!["id".to_owned()];
    let opts = ParseOptions {
        key: &key,
        key_case: KeyCase::Sensitive,
        skip_bad: false,
        read: rulebench_core::dataset::READ_AS_IS,
    };
    let parsed = parse(
        b"id,n\na,1\n\nb,2\n",
        "f.csv",
        DataFormat::Csv,
        &opts,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(parsed.rows.len(), 2);
    assert_eq!(parsed.lines, vec![2, 4]);
    let err = parse(
        b"id,n\na,1\n\nb,2,3\n",
        "f.csv",
        DataFormat::Csv,
        &opts,
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert_eq!(err, "f.csv:4: 3 fields where the header has 2");
}

#[test]
fn an_invalid_file_leaves_the_database_unchanged() {
    let env = Env::new();
    let before = env.state();
    // A bad row.
    let bad = env.file("bad.csv", "id,name,supportsStreaming\nm1,M1,true\nm2,M2\n");
    let err = import(&env, Side::Target, &bad, &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("bad.csv:3: 2 fields where the header has 3"),
        "{err}"
    );
    assert_eq!(env.state(), before);
    // Valid rows that break a rule: the field it reads is gone.
    let lacking = env.file("lacking.csv", "id,name\nm1,M1\nm2,M2\n");
    let err = import(&env, Side::Target, &lacking, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("lacking.csv refused"), "{err}");
    assert!(err.contains("unknown-field"), "{err}");
    assert!(err.contains("supportsStreaming"), "{err}");
    assert_eq!(env.state(), before);
    // Not a file at all, and a JSON syntax error with line:col.
    let err = import(
        &env,
        Side::Target,
        &env.dir.path().join("nope.csv"),
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("nope.csv"), "{err}");
    let broken = env.file("broken.json", "[\n {\"id\": \"m1\"},\n {\"id\": \n");
    let err = import(&env, Side::Target, &broken, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("broken.json:4:"), "{err}");
    assert_eq!(env.state(), before);
    // The command line says the same and exits 2.
    let (code, _, stderr) = env.rb(&["dataset", "import", PAGE, "target", s(&bad)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bad.csv:3: 2 fields where the header has 3"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing imported"), "{stderr}");
    assert!(stderr.contains("--skip-bad"), "{stderr}");
    assert_eq!(env.state(), before);
}

#[test]
fn duplicate_keys_name_both_lines() {
    let env = Env::new();
    let path = env.file(
        "dup.csv",
        "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\nm1,Again,true\n",
    );
    let before = env.state();
    let (code, _, stderr) = env.rb(&["dataset", "import", PAGE, "target", s(&path)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("dup.csv:4: duplicate key `id=m1`: line 2 has it too"),
        "{stderr}"
    );
    assert_eq!(env.state(), before);
}

#[test]
fn skip_bad_imports_the_good_rows_and_reports_the_rest() {
    let env = Env::new();
    let path = env.file(
        "mixed.csv",
        "id,name,supportsStreaming\nm1,M1,true\nm2\nm3,M3,false\n,Nameless,true\nm1,Again,true\n",
    );
    let rev = env.state().1;
    let (code, stdout, stderr) =
        env.rb(&["dataset", "import", PAGE, "target", s(&path), "--skip-bad"]);
    assert_eq!(code, 0, "{stderr}");
    // Status lines go to stderr; stdout carries data only.
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("imported 2 target rows into ds from"),
        "{stderr}"
    );
    assert!(stderr.contains("(CSV, revision"), "{stderr}");
    for line in [
        "mixed.csv:3: 1 fields where the header has 3",
        "mixed.csv:5: no value for key field `id`",
        "mixed.csv:6: duplicate key `id=m1`: line 2 has it too",
    ] {
        assert!(stderr.contains(line), "{line}: {stderr}");
    }
    assert_eq!(env.state().1, rev + 1);
    assert_eq!(
        target_rows(&env),
        json!([{"id": "m1", "name": "M1", "supportsStreaming": true},
               {"id": "m3", "name": "M3", "supportsStreaming": false}])
    );
}

// ---------------------------------------------------------------------------------------------
// JSON, JSON Lines, options
// ---------------------------------------------------------------------------------------------

#[test]
fn json_and_json_lines_files() {
    let env = Env::new();
    let rows = json!([{"id": "m1", "name": "M1", "supportsStreaming": true, "tags": ["a"]},
                      {"id": "m9", "name": "M9", "supportsStreaming": false, "meta": {"x": 1}}]);
    let path = env.file("models.json", &serde_json::to_string_pretty(&rows).unwrap());
    let done = env
        .app()
        .import_dataset(
            PAGE,
            Side::Target,
            &path,
            &ImportOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(done.format, DataFormat::Json);
    assert_eq!(target_rows(&env), rows);
    let lines = "{\"id\": \"a\", \"name\": \"A\", \"supportsStreaming\": true}\n\n{\"id\": \"b\", \"name\": \"B\", \"supportsStreaming\": false}\n";
    for name in ["models.jsonl", "models.ndjson", "models.txt"] {
        let path = env.file(name, lines);
        let done = env
            .app()
            .import_dataset(
                PAGE,
                Side::Target,
                &path,
                &ImportOptions::default(),
                &mut |_| {},
            )
            .unwrap();
        assert_eq!(done.format, DataFormat::JsonLines, "{name}");
        assert_eq!(done.rows, 2);
    }
    // A bad line is reported with its line number.
    let path = env.file(
        "bad.jsonl",
        "{\"id\": \"a\", \"supportsStreaming\": true}\n[1]\n{oops\n",
    );
    let err = import(&env, Side::Target, &path, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.jsonl:2: a row must be an object, got an array"),
        "{err}"
    );
    assert!(err.contains("bad.jsonl:3: invalid JSON"), "{err}");
}

#[test]
fn key_and_label_options_and_progress() {
    let env = Env::new();
    let path = env.file(
        "models.csv",
        "vendor,model,title,supportsStreaming\nacme,m1,Acme M1,true\nacme,m2,Acme M2,false\n",
    );
    let opts = ImportOptions {
        key: Some(vec!["vendor".into(), "model".into()]),
        label: Some("title".into()),
        ..ImportOptions::default()
    };
    let mut seen = Vec::new();
    env.app()
        .import_dataset(PAGE, Side::Target, &path, &opts, &mut |p| seen.push(p))
        .unwrap();
    assert!(matches!(seen.first(), Some(Progress::Parsing { .. })));
    assert!(seen.contains(&Progress::Validating));
    assert_eq!(seen.last(), Some(&Progress::Writing { done: 2, total: 2 }));
    let (page, _) = env.app().page(PAGE).unwrap();
    assert_eq!(page.target.key, ["vendor", "model"]);
    assert_eq!(page.target.label.as_deref(), Some("title"));
    assert_eq!(
        page.target.row_key(&page.target.rows[0]),
        "vendor=acme|model=m1"
    );
    let missing = ImportOptions {
        label: Some("nope".into()),
        ..ImportOptions::default()
    };
    let err = import(&env, Side::Target, &path, &missing)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--label `nope`"), "{err}");
}

#[test]
fn partial_fields_are_warnings_and_printed() {
    let env = Env::new();
    let path = env.file("models.csv", "id,name,supportsStreaming\nm1,M1,true\n");
    // A JSON file where one row lacks the field: a warning, not an error.
    let json_path = env.file(
        "models.json",
        r#"[{"id": "m1", "supportsStreaming": true}, {"id": "m2"}]"#,
    );
    let (code, _, stderr) = env.rb(&["dataset", "import", PAGE, "target", s(&json_path)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("partial-field"), "{stderr}");
    assert!(stderr.contains("only 1 of 2 target rows"), "{stderr}");
    let (code, _, _) = env.rb(&["dataset", "import", PAGE, "target", s(&path)]);
    assert_eq!(code, 0);
}

// ---------------------------------------------------------------------------------------------
// Schema, defaults, key case
// ---------------------------------------------------------------------------------------------

#[test]
fn dataset_schema_command() {
    let mut page = page_json();
    page["target"]["defaults"] = json!({"supportsVision": false});
    page["target"]["rows"][1]["maxTokens"] = json!(4096);
    page["target"]["rows"][0]["maxTokens"] = Value::Null;
    let env = Env::with_page(page);
    let (code, stdout, stderr) = env.rb(&["dataset", "schema", PAGE, "target", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rows"], 2);
    assert_eq!(v["key"], json!(["id"]));
    let field = |name: &str| {
        v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no field {name}: {v}"))
            .clone()
    };
    assert_eq!(field("supportsStreaming")["type"], "boolean");
    assert_eq!(field("supportsStreaming")["coverage"], 2);
    assert_eq!(field("maxTokens")["type"], "integer");
    assert_eq!(field("maxTokens")["present"], 2);
    assert_eq!(field("maxTokens")["nulls"], 1);
    // A defaulted field no row has: present in no row, covered in all (for rules).
    assert_eq!(field("supportsVision")["present"], 0);
    assert_eq!(field("supportsVision")["coverage"], 2);
    assert_eq!(field("supportsVision")["default"], false);
    assert_eq!(field("supportsVision")["type"], "boolean");
    let (code, stdout, _) = env.rb(&["dataset", "schema", PAGE, "target"]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("ds target: Models — 2 rows, key id"),
        "{stdout}"
    );
    assert!(stdout.contains("supportsVision"), "{stdout}");
    let (code, _, stderr) = env.rb(&["dataset", "schema", "nope", "target"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("page `nope` not found"), "{stderr}");
}

#[test]
fn defaults_fill_missing_fields_in_evaluation_explanation_and_validation() {
    let mut page = page_json();
    page["target"]["defaults"] = json!({"supportsStreaming": true});
    page["target"]["summary"] = json!(["supportsStreaming"]);
    page["target"]["rows"] = json!([
        {"id": "m1", "name": "M1"},
        {"id": "m2", "name": "M2", "supportsStreaming": false},
        {"id": "m3", "name": "M3", "supportsStreaming": null}
    ]);
    let text = page.to_string();
    // Validation: the rule reads a field two rows lack, but the default covers it.
    let (_, warnings) = App::parse_page(&text, "p.json").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let env = Env::with_page(page);
    let mut app = env.app();
    let result = app.evaluate(PAGE, "web").unwrap().wire();
    let verdict = |id: &str| {
        result["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(verdict("m1")["verdict"], 2, "m1 streams by default");
    assert_eq!(
        verdict("m1")["supportsStreaming"],
        true,
        "results show the default"
    );
    assert_eq!(verdict("m2")["verdict"], 0, "m2 says false");
    assert_eq!(verdict("m3")["verdict"], 2, "null takes the default");
    // The explanation agrees with the matrix.
    let mut ws = Session::open(&app, PAGE).unwrap();
    ws.select(ws.page.source.find_row("web").unwrap());
    for t in 0..3 {
        let e = ws.explain(0, t);
        assert_eq!(e.passed, ws.eval.columns[0].passed(t), "target {t}");
    }
    // Exported unchanged: defaults are not written into rows.
    let (stored, _) = app.page(PAGE).unwrap();
    assert_eq!(
        serde_json::to_value(&stored.target.rows[0]).unwrap(),
        json!({"id": "m1", "name": "M1"})
    );
    // A default on a key field is refused.
    let mut bad = page_json();
    bad["target"]["defaults"] = json!({"id": "x"});
    let err = App::parse_page(&bad.to_string(), "bad.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("key-default"), "{err}");
}

#[test]
fn pages_without_the_extensions_are_unchanged_and_round_trip() {
    let text = page_json().to_string();
    let (page, _) = App::parse_page(&text, "p.json").unwrap();
    let exported = serde_json::to_value(&page).unwrap();
    for side in ["source", "target"] {
        for key in ["defaults", "keyCase", "file"] {
            assert!(exported[side].get(key).is_none(), "{side}.{key} written");
        }
    }
    let mut with = page_json();
    with["target"]["defaults"] = json!({"supportsStreaming": false});
    with["target"]["keyCase"] = json!("insensitive");
    let (page, _) = App::parse_page(&with.to_string(), "p.json").unwrap();
    let again: Page = serde_json::from_value(serde_json::to_value(&page).unwrap()).unwrap();
    assert_eq!(again, page);
}

#[test]
fn case_insensitive_keys() {
    let mut page = page_json();
    page["source"]["keyCase"] = json!("insensitive");
    page["target"]["keyCase"] = json!("insensitive");
    page["target"]["rows"] = json!([{"id": "openai", "name": "OpenAI", "supportsStreaming": true},
                                    {"id": "acme-llm", "name": "Acme", "supportsStreaming": false}]);
    page["overrides"] =
        json!([{"sourceKey": "id=WEB", "targetKey": "id=ACME-LLM", "value": true, "note": "n"}]);
    let env = Env::with_page(page);
    let (page, _) = env.app().page(PAGE).unwrap();
    // The override by key in another case names the row, stored by the row's own key.
    assert_eq!(page.overrides[0].target_key.as_deref(), Some("id=acme-llm"));
    assert_eq!(page.overrides[0].source_key.as_deref(), Some("id=web"));
    assert_eq!(page.target.find_row("OPENAI"), Some(0));
    assert_eq!(page.target.find_row("id=OpenAI"), Some(0));
    let mut app = env.app();
    let result = app.evaluate(PAGE, "WEB").unwrap().wire();
    assert_eq!(result["selectionKey"], "id=web");
    let acme = &result["targets"][1];
    assert_eq!(acme["override"]["value"], true, "{acme}");
    // --source/--target in any case.
    let (code, _, stderr) = env.rb(&[
        "override", "add", PAGE, "--source", "Web", "--target", "OpenAI", "--value", "false",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = env.rb(&["evaluate", PAGE, "--select", "ID=WEB"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v["targets"][0]["verdict"], 0,
        "the override by OpenAI applies"
    );
    // Keys that differ only in case are duplicates in the page and in a file.
    let mut dup = page_json();
    dup["target"]["keyCase"] = json!("insensitive");
    dup["target"]["rows"][1]["id"] = json!("M1");
    let err = App::parse_page(&dup.to_string(), "dup.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("duplicate-key"), "{err}");
    let path = env.file(
        "dup.csv",
        "id,name,supportsStreaming\nopenai,A,true\nOpenAI,B,true\n",
    );
    let err = import(&env, Side::Target, &path, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("dup.csv:3: duplicate key `id=OpenAI`: line 2 has it too"),
        "{err}"
    );
    // Re-importing a row in another case keeps the overrides that named it.
    let path = env.file(
        "upper.csv",
        "id,name,supportsStreaming\nOPENAI,OpenAI,true\nACME-LLM,Acme,false\n",
    );
    import(&env, Side::Target, &path, &ImportOptions::default()).unwrap();
    let (page, _) = env.app().page(PAGE).unwrap();
    assert_eq!(page.overrides.len(), 2);
    let result = env.app().evaluate(PAGE, "web").unwrap().wire();
    assert_eq!(
        result["targets"][0]["verdict"], 0,
        "{}",
        result["targets"][0]
    );
    assert_eq!(
        result["targets"][1]["verdict"], 2,
        "{}",
        result["targets"][1]
    );
}

#[test]
fn the_sample_pages_use_key_case_and_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("s.db")).unwrap();
    let (page, _) = app.page("provider-capabilities").unwrap();
    assert_eq!(page.target.key_case, KeyCase::Insensitive);
    assert_eq!(page.target.defaults["supportsStreaming"], false);
    assert!(page.target.find_row("OpenAI").is_some());
    // A new provider row without capabilities gets the conservative defaults.
    let mut row = page.target.rows[0].clone();
    row.retain(|k, _| k == "id" || k == "name");
    let effective = page.target.effective_row(&row);
    assert_eq!(effective["supportsCitations"], false);
    assert_eq!(effective["supportsSeed"], false);
    assert_eq!(effective["supportsTemperatureZero"], true);
    assert_eq!(effective["supportsStreaming"], false);
}

#[test]
fn the_schema_file_describes_the_dataset_extensions() {
    let schema: Value = serde_json::from_str(include_str!("../assets/page.schema.json")).unwrap();
    let props = &schema["$defs"]["dataset"]["properties"];
    let mut cases: Vec<String> = props["keyCase"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    cases.sort();
    let mut model: Vec<String> = [KeyCase::Sensitive, KeyCase::Insensitive]
        .iter()
        .map(|k| {
            serde_json::to_value(k)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    model.sort();
    assert_eq!(cases, model);
    assert_eq!(props["defaults"]["type"], "object");
    assert_eq!(props["file"]["type"], "string");
}

// ---------------------------------------------------------------------------------------------
// Linked files
// ---------------------------------------------------------------------------------------------

#[test]
fn the_sample_csv_holds_the_embedded_rows() {
    let text = include_str!("../sample-pages/provider-capabilities.json");
    let page: Page = serde_json::from_str(text).unwrap();
    assert_eq!(
        page.target.file.as_deref(),
        Some("provider-capabilities.targets.csv")
    );
    let csv = include_bytes!("../sample-pages/provider-capabilities.targets.csv");
    let parsed = parse(
        csv,
        "provider-capabilities.targets.csv",
        DataFormat::Csv,
        &ParseOptions {
            key: &page.target.key,
            key_case: page.target.key_case,
            skip_bad: false,
            read: rulebench_core::dataset::READ_AS_IS,
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(parsed.rows, page.target.rows);
}

#[test]
fn a_linked_file_is_resolved_against_the_page_file_and_wins() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut page = page_json();
    page["target"]["file"] = json!("models.csv");
    let page_path = data.join("page.json");
    std::fs::write(&page_path, page.to_string()).unwrap();
    // Without the file: the embedded rows, a warning, and the link stored absolute.
    let mut app = App::open(&db).unwrap();
    let done = app.import(&page.to_string(), s(&page_path), false).unwrap();
    assert!(
        done.warnings.iter().any(|w| w.code == Code::LinkedFile),
        "{:?}",
        done.warnings
    );
    let (stored, _) = app.page(PAGE).unwrap();
    let linked = std::fs::canonicalize(&data).unwrap().join("models.csv");
    assert_eq!(stored.target.file.as_deref(), Some(s(&linked)));
    assert_eq!(stored.target.rows.len(), 2);
    // With the file: its rows win.
    std::fs::write(
        data.join("models.csv"),
        "id,name,supportsStreaming\nx,X,true\n",
    )
    .unwrap();
    app.import(&page.to_string(), s(&page_path), true).unwrap();
    let (stored, _) = app.page(PAGE).unwrap();
    assert_eq!(
        serde_json::to_value(&stored.target.rows).unwrap(),
        json!([{"id": "x", "name": "X", "supportsStreaming": true}])
    );
    // import(export(p)) == p: the link is absolute now.
    let exported = serde_json::to_string(&stored).unwrap();
    app.import(&exported, "elsewhere.json", true).unwrap();
    let (again, _) = app.page(PAGE).unwrap();
    assert_eq!(again, stored);
    // An invalid linked file refuses the page import.
    std::fs::write(data.join("models.csv"), "id,name,supportsStreaming\nx,X\n").unwrap();
    let err = app
        .import(&page.to_string(), s(&page_path), true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("models.csv:2: 2 fields where the header has 3"),
        "{err}"
    );
}

#[test]
fn import_link_and_unlink() {
    let env = Env::new();
    let a = env.file("a.csv", "id,name,supportsStreaming\nm1,M1,true\n");
    let b = env.file("b.csv", "id,name,supportsStreaming\nm2,M2,true\n");
    let (code, _, stderr) = env.rb(&["dataset", "import", PAGE, "target", s(&a), "--link"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("linked target to"), "{stderr}");
    let files = env.app().linked_files(PAGE).unwrap();
    assert_eq!(
        files,
        vec![(Side::Target, std::fs::canonicalize(&a).unwrap())]
    );
    // Importing another file without --link drops the stale link.
    let (code, _, stderr) = env.rb(&["dataset", "import", PAGE, "target", s(&b)]);
    assert_eq!(code, 0);
    assert!(stderr.contains("unlinked target from"), "{stderr}");
    assert!(env.app().linked_files(PAGE).unwrap().is_empty());
    let (code, _, stderr) = env.rb(&["watch", PAGE]);
    assert_eq!(code, 2);
    assert!(stderr.contains("links no dataset file"), "{stderr}");
}

/// Waits for the next watcher event (at most 2 s after `since`).
#[track_caller]
fn next(w: &Watcher, since: Instant) -> Reload {
    loop {
        let left = Duration::from_secs(2).saturating_sub(since.elapsed());
        match w.recv_timeout(left) {
            Some(Reload::Progress { .. }) => continue,
            Some(event) => return event,
            None => panic!("no watcher event within 2 s"),
        }
    }
}

#[test]
fn a_reload_reports_its_progress_before_it_is_done() {
    let env = Env::new();
    let csv = env.file("p.csv", "id,name,supportsStreaming\nm1,M1,true\n");
    let opts = ImportOptions {
        link: true,
        ..ImportOptions::default()
    };
    import(&env, Side::Target, &csv, &opts).unwrap();
    let watcher = Watcher::start(&env.db, PAGE).unwrap();
    assert_eq!(watcher.recv_timeout(Duration::from_millis(500)), None);
    let mut text = String::from("id,name,supportsStreaming\n");
    for i in 0..5000 {
        text.push_str(&format!("m{i},M{i},true\n"));
    }
    let t = Instant::now();
    std::fs::write(&csv, text).unwrap();
    let mut fractions = Vec::new();
    loop {
        let left = Duration::from_secs(5).saturating_sub(t.elapsed());
        match watcher.recv_timeout(left) {
            Some(Reload::Progress { fraction, .. }) => fractions.push(fraction),
            Some(Reload::Reloaded { rows, .. }) => {
                assert_eq!(rows, 5000);
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(fractions.len() >= 3, "{fractions:?}");
    assert!(fractions.windows(2).all(|w| w[0] <= w[1]), "{fractions:?}");
    assert!(*fractions.last().unwrap() >= 0.95, "{fractions:?}");
}

#[test]
fn the_watcher_reloads_keeps_good_data_and_reports_deletes() {
    let env = Env::new();
    let csv = env.file(
        "live.csv",
        "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\n",
    );
    let opts = ImportOptions {
        link: true,
        ..ImportOptions::default()
    };
    let rev = import(&env, Side::Target, &csv, &opts).unwrap();
    let file = std::fs::canonicalize(&csv).unwrap();
    let watcher = Watcher::start(&env.db, PAGE).unwrap();
    assert_eq!(watcher.files(), &[(Side::Target, file.clone())]);
    // In step at the start: nothing to report.
    assert_eq!(watcher.recv_timeout(Duration::from_millis(500)), None);

    // A change: reloaded as a new revision within 2 s.
    let t = Instant::now();
    std::fs::write(
        &csv,
        "id,name,supportsStreaming\nm1,M1,true\nm2,M2,true\nm3,M3,true\n",
    )
    .unwrap();
    assert_eq!(
        next(&watcher, t),
        Reload::Reloaded {
            side: Side::Target,
            file: file.clone(),
            revision: rev + 1,
            rows: 3
        }
    );
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(env.state().1, rev + 1);
    let good = env.state();

    // An invalid file keeps the last good data; the error says file:line and why.
    let t = Instant::now();
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2\n").unwrap();
    match next(&watcher, t) {
        Reload::Failed { side, message, .. } => {
            assert_eq!(side, Side::Target);
            assert!(
                message.contains("live.csv:3: 2 fields where the header has 3"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(env.state(), good);
    // So does a file whose rows break a rule.
    let t = Instant::now();
    std::fs::write(&csv, "id,name\nm1,M1\n").unwrap();
    match next(&watcher, t) {
        Reload::Failed { message, .. } => assert!(message.contains("unknown-field"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(env.state(), good);

    // A deleted file is reported, never read as empty.
    let t = Instant::now();
    std::fs::remove_file(&csv).unwrap();
    assert_eq!(
        next(&watcher, t),
        Reload::Deleted {
            side: Side::Target,
            file: file.clone()
        }
    );
    assert_eq!(env.state(), good);

    // Written again (as editors do: a new file renamed over the old name): reloaded.
    let t = Instant::now();
    let tmp = env.file("live.csv.tmp", "id,name,supportsStreaming\nm9,M9,true\n");
    std::fs::rename(&tmp, &csv).unwrap();
    match next(&watcher, t) {
        Reload::Reloaded { revision, rows, .. } => {
            assert_eq!((revision, rows), (good.1 + 1, 1));
        }
        other => panic!("{other:?}"),
    }
    drop(watcher);
}

#[test]
fn the_watcher_catches_up_with_a_file_changed_while_nobody_watched() {
    let env = Env::new();
    let csv = env.file("live.csv", "id,name,supportsStreaming\nm1,M1,true\n");
    let opts = ImportOptions {
        link: true,
        ..ImportOptions::default()
    };
    let rev = import(&env, Side::Target, &csv, &opts).unwrap();
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,true\n").unwrap();
    let t = Instant::now();
    let watcher = Watcher::start(&env.db, PAGE).unwrap();
    match next(&watcher, t) {
        Reload::Reloaded { revision, rows, .. } => assert_eq!((revision, rows), (rev + 1, 2)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_watch_command_prints_reloads_until_it_is_told_to_stop() {
    let env = Env::new();
    let csv = env.file("live.csv", "id,name,supportsStreaming\nm1,M1,true\n");
    let opts = ImportOptions {
        link: true,
        ..ImportOptions::default()
    };
    let rev = import(&env, Side::Target, &csv, &opts).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(&env.db)
        .args(["watch", PAGE])
        // Closed at once: the end of input no longer stops watching (`watch … &`).
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut status_lines = BufReader::new(child.stderr.take().unwrap());
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // "watching …" and the hint (status, on stderr), then the watcher is running.
    for _ in 0..2 {
        line.clear();
        status_lines.read_line(&mut line).unwrap();
    }
    assert!(line.contains("Ctrl-C"), "{line}");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&csv, "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\n").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    let file = std::fs::canonicalize(&csv).unwrap();
    assert_eq!(
        line.trim_end(),
        format!(
            "reloaded target from {} (revision {}, 2 rows)",
            file.display(),
            rev + 1
        )
    );
    assert!(child.try_wait().unwrap().is_none(), "still watching");
    // SIGTERM (as from a service manager) stops it cleanly.
    // The shell's own `kill` (no procps needed).
    let killed = Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// A CSV keyed by two fields whose values hold `|` and `\`: the rows stay apart (they
/// made one key and were refused as duplicates) and each stored key and keyHash is the
/// engine's (`a=x\|b=y|b=z`), so overrides by key find them.
#[test]
fn a_csv_keyed_by_two_fields_escapes_pipes_in_keys_as_the_engine_does() {
    let mut page = page_json();
    page["target"]["key"] = json!(["a", "b"]);
    page["target"]["rows"] = json!([{"a": "m", "b": "1", "supportsStreaming": true}]);
    let env = Env::with_page(page);
    let csv = env.file(
        "pipes.csv",
        "a,b,supportsStreaming\n\"x|b=y\",z,true\nx,\"y|b=z\",false\n\"back\\slash\",\"|\",true\n",
    );
    import(&env, Side::Target, &csv, &ImportOptions::default()).unwrap();
    let app = env.app();
    let (page, _) = app.page(PAGE).unwrap();
    let keys: Vec<String> = page
        .target
        .rows
        .iter()
        .map(|r| page.target.row_key(r))
        .collect();
    assert_eq!(
        keys,
        ["a=x\\|b=y|b=z", "a=x|b=y\\|b=z", "a=back\\\\slash|b=\\|"]
    );
    let stored: Vec<String> = app
        .store()
        .row_keys(PAGE, Side::Target)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(stored, keys, "stored as the engine writes them");
}

/// A dataset import writes its rows with foreign keys unchecked (a check per row cost a
/// tenth of a 1M-row import): they are on again after it, whether it was stored or
/// refused (a duplicate key, found only once rows were written), and nothing it wrote
/// lacks its page.
#[test]
fn foreign_keys_are_on_again_after_an_import_stored_or_refused() {
    let env = Env::new();
    let mut app = env.app();
    let fk = |app: &App| -> i64 {
        app.store()
            .connection()
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(fk(&app), 1);
    let good = env.file(
        "good.csv",
        "id,name,supportsStreaming\nm1,M1,true\nm2,M2,false\n",
    );
    app.import_dataset(
        PAGE,
        Side::Target,
        &good,
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(fk(&app), 1, "after a stored import");
    let dup = env.file(
        "dup.csv",
        "id,name,supportsStreaming\nm3,M3,true\nm3,M3,false\n",
    );
    let (before, revision, tables) = env.state();
    let err = app
        .import_dataset(
            PAGE,
            Side::Target,
            &dup,
            &ImportOptions::default(),
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("duplicate key `id=m3`: line 2 has it too"),
        "{err}"
    );
    assert_eq!(fk(&app), 1, "after a refused import");
    assert_eq!(
        env.state(),
        (before, revision, tables),
        "a refused import changes nothing"
    );
    let orphans: i64 = app
        .store()
        .connection()
        .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(orphans, 0);
}

//! The typed result and its printers: the JSON printer writes the result JSON byte for
//! byte as the first round's tree builder did (kept here as the oracle), the cache pages
//! give back the same result, the other formats agree with it (for one selection and
//! streamed for every selection of a page), and assertions that read only part of a
//! result see what they would see on the whole.

mod common;

use std::sync::Arc;

use clap::ValueEnum;
use rulebench::app::App;
use rulebench::print::result::{
    CSV_HEADER, Format, JsonlBuilder, PrinterBuilder, ResultSink, SummaryBuilder,
};
use rulebench_core::assertions::{self, Limits};
use rulebench_core::matrix::{Matrix, SelectionEval};
use rulebench_core::model::{Page, key_hash};
use rulebench_core::result::{CacheState, Names, Needs, SelectionResult};
use serde_json::{Map, Value, json};
use tempfile::TempDir;

const SAMPLES: [&str; 3] = [
    "llm-chat-clients",
    "provider-capabilities",
    "loan-eligibility",
];

/// The first round's `result::build`: the whole result as a JSON tree (the oracle).
fn oracle(page: &Page, eval: &SelectionEval, revision: i64, at: &str, cache: &str) -> Value {
    let source = &page.source.rows[eval.selection];
    let target = &page.target;
    let ids: Vec<String> = target.rows.iter().map(|r| target.row_id(r)).collect();
    let source_hash = key_hash(&page.source.row_key(source));
    let note = |t: usize| -> Option<String> {
        let hash = key_hash(&target.row_key(&target.rows[t]));
        page.overrides
            .iter()
            .find(|o| {
                o.source_hash().as_deref() == Some(source_hash.as_str())
                    && o.target_hash().as_deref() == Some(hash.as_str())
            })
            .and_then(|o| o.note.clone())
    };
    let targets: Vec<Value> = target
        .rows
        .iter()
        .enumerate()
        .map(|(t, row)| {
            let row = target.effective_row(row);
            let mut entry = Map::new();
            entry.insert("id".into(), Value::String(ids[t].clone()));
            for field in target.label.iter().chain(&target.summary) {
                if field != "id" && !entry.contains_key(field) {
                    entry.insert(
                        field.clone(),
                        row.get(field).cloned().unwrap_or(Value::Null),
                    );
                }
            }
            let d = &eval.devices[t];
            entry.insert("verdict".into(), json!(d.verdict));
            entry.insert("score".into(), json!(d.score));
            entry.insert("reason".into(), json!(d.reason.as_str()));
            let rules: Map<String, Value> = page
                .rules
                .iter()
                .zip(&eval.columns)
                .map(|(r, c)| (r.id.clone(), outcome(c, t)))
                .collect();
            entry.insert("rules".into(), Value::Object(rules));
            if let Some(value) = eval.overrides.value(t) {
                let mut o = Map::new();
                o.insert("value".into(), Value::Bool(value));
                if let Some(note) = note(t) {
                    o.insert("note".into(), Value::String(note));
                }
                entry.insert("override".into(), Value::Object(o));
            }
            Value::Object(entry)
        })
        .collect();
    let features: Vec<Value> = page
        .rules
        .iter()
        .zip(&eval.columns)
        .map(|(rule, column)| {
            let mut f = Map::new();
            f.insert("name".into(), Value::String(rule.name.clone()));
            for (t, id) in ids.iter().enumerate() {
                f.insert(id.clone(), outcome(column, t));
            }
            Value::Object(f)
        })
        .collect();
    json!({
        "pageId": page.id, "revisionId": revision, "cache": cache,
        "selectionKey": page.source.row_key(source),
        "selectionVerdict": eval.selection_verdict,
        "recommendedTargetId": eval.recommended.map_or(Value::Null, |t| json!(ids[t])),
        "targets": targets, "features": features, "evaluatedAt": at,
    })
}

/// Prints `r` alone, `begin` to `finish` (as `evaluate --select` calls a printer).
fn print_through(printer: &mut dyn ResultSink, r: &SelectionResult) {
    printer.begin(&r.names, r.page_id(), "selection").unwrap();
    printer.selection(r).unwrap();
    printer.finish().unwrap();
}

/// What the printer of `format` writes for `r` alone.
fn print_one(format: Format, r: &SelectionResult) -> String {
    let mut out = Vec::new();
    print_through(PrinterBuilder::new(format).build(&mut out).as_mut(), r);
    String::from_utf8(out).unwrap()
}

fn open() -> (TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("t.db")).unwrap();
    (dir, app)
}

/// A rule's outcome as the result writes it: passed, failed, or null where it does
/// not apply.
fn outcome(column: &rulebench_core::matrix::Column, t: usize) -> Value {
    match column.outcome[t] {
        rulebench_core::matrix::Outcome::NotApplicable => Value::Null,
        o => Value::Bool(o == rulebench_core::matrix::PASS),
    }
}

/// Checks every printer of `r` against the oracle of the same evaluation.
fn check_printers(page: &Page, r: &SelectionResult) {
    let cache = r.cache.as_str();
    let expected = oracle(page, &r.eval, r.revision, &r.evaluated_at, cache);
    assert_eq!(
        print_one(Format::Json, r),
        format!("{}\n", serde_json::to_string_pretty(&expected).unwrap()),
        "pretty JSON of {} {}",
        page.id,
        r.selection_key
    );
    assert_eq!(r.wire(), expected);

    let mut line = Vec::new();
    print_through(
        &mut JsonlBuilder::new().per_selection(true).build(&mut line),
        r,
    );
    let text = String::from_utf8(line).unwrap();
    assert_eq!(text.matches('\n').count(), 1, "one line: {text}");
    assert_eq!(
        text,
        format!("{}\n", serde_json::to_string(&expected).unwrap())
    );

    // Summary: per target its verdict, score, reason and the rules that fail.
    let text = print_one(Format::Summary, r);
    let targets = expected["targets"].as_array().unwrap();
    assert_eq!(
        text.lines().count(),
        targets.len() + 2,
        "a line per target: {text}"
    );
    let mut one_line = Vec::new();
    print_through(
        &mut SummaryBuilder::new()
            .per_selection(true)
            .build(&mut one_line),
        r,
    );
    let one_line = String::from_utf8(one_line).unwrap();
    assert_eq!(one_line.lines().count(), 1, "{one_line}");
    let summary: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&one_line).unwrap(), summary);
    assert_eq!(summary["targets"].as_array().unwrap().len(), targets.len());
    for (s, t) in summary["targets"].as_array().unwrap().iter().zip(targets) {
        assert_eq!(
            (&s["id"], &s["verdict"], &s["score"]),
            (&t["id"], &t["verdict"], &t["score"])
        );
        let failing: Vec<&String> = t["rules"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, v)| **v == json!(false))
            .map(|(k, _)| k)
            .collect();
        let got = common::strs(&s["failing"]);
        assert_eq!(got, failing);
    }
    for key in [
        "pageId",
        "revisionId",
        "cache",
        "selectionKey",
        "selectionVerdict",
        "recommendedTargetId",
        "evaluatedAt",
    ] {
        assert_eq!(summary[key], expected[key], "{key}");
    }

    // CSV and TSV: the header, then one record per target, through a CSV parser.
    let text = print_one(Format::Csv, r);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<&str> = reader.headers().unwrap().iter().collect();
    assert_eq!(&header[..8], &CSV_HEADER[..]);
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), targets.len());
    let tsv = print_one(Format::Tsv, r);
    let tsv: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .from_reader(tsv.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tsv, records, "TSV is CSV with tabs");
    for (rec, t) in records.iter().zip(targets) {
        assert_eq!(&rec[3], t["id"].as_str().unwrap());
        assert_eq!(
            rec[4].parse::<u64>().unwrap(),
            t["verdict"].as_u64().unwrap()
        );
        assert_eq!(&rec[5], t["score"].to_string());
        assert_eq!(
            &rec[2] == "true",
            expected["recommendedTargetId"] == t["id"],
            "recommended column"
        );
    }

    // JSON Lines per target: each line is the target's entry with the selection key.
    let lines: Vec<Value> = print_one(Format::Jsonl, r)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), targets.len());
    for (l, t) in lines.iter().zip(targets) {
        let mut l = l.clone();
        assert_eq!(l["selectionKey"], expected["selectionKey"]);
        l.as_object_mut().unwrap().remove("selectionKey");
        assert_eq!(&l, t);
    }

    // The table: a head line, a blank line, the header and its rule, a line per target
    // (its id and verdict; the recommended one starred).
    let text = print_one(Format::Table, r);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4 + targets.len(), "{text}");
    assert!(lines[0].contains("selection verdict"), "{text}");
    for (line, t) in lines[4..].iter().zip(targets) {
        let id = rulebench::print::sanitize(t["id"].as_str().unwrap());
        assert!(line.contains(&id), "{id} in {line}");
        assert!(line.contains(&format!(" {} ", t["verdict"])), "{line}");
        assert_eq!(
            line.starts_with('★'),
            expected["recommendedTargetId"] == t["id"],
            "{line}"
        );
    }

    // Markdown: the head, a row for the selection with a cell per target, the legend.
    let text = print_one(Format::Md, r);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].starts_with("| selection | selection | recommended |"));
    let cells = |row: &str| row.matches('|').count() - row.matches("\\|").count();
    assert_eq!(cells(rows[2]), 4 + targets.len(), "{}", rows[2]);
    assert!(text.starts_with(&format!("# {}\n", r.page_id())), "{text}");
    assert!(text.ends_with("cells show verdict and score.\n"), "{text}");
}

/// `evaluate` reads target rows from their stored text into the engine's form; the
/// outcome is the one of a matrix built from the whole page's rows.
fn same_as_full_page(page: &Page, r: &SelectionResult) {
    let full = Matrix::new(page).unwrap().evaluate(r.eval.selection);
    assert_eq!(
        r.eval.devices, full.devices,
        "{} {}",
        page.id, r.selection_key
    );
    assert_eq!(r.eval.overrides, full.overrides, "overrides and notes");
    assert_eq!(r.eval.recommended, full.recommended);
    let outcomes = |e: &SelectionEval| -> Vec<Vec<rulebench_core::matrix::Outcome>> {
        e.columns.iter().map(|c| c.outcome.clone()).collect()
    };
    assert_eq!(outcomes(&r.eval), outcomes(&full));
    assert_eq!(*r.names, Names::of(page));
}

#[test]
fn sample_pages_print_byte_for_byte_as_the_tree_did_on_miss_and_hit() {
    let (_dir, mut app) = open();
    for id in SAMPLES {
        let (page, _) = app.page(id).unwrap();
        for s in 0..page.source.rows.len() {
            let key = page.source.row_key(&page.source.rows[s]);
            let miss = app.evaluate(id, &key).unwrap();
            assert_eq!(miss.cache, CacheState::Miss);
            check_printers(&page, &miss);
            same_as_full_page(&page, &miss);
            let hit = app.evaluate(id, &key).unwrap();
            assert_eq!(hit.cache, CacheState::Hit);
            check_printers(&page, &hit);
            // The hit is the miss, but for the cache flag.
            assert_eq!(hit.eval.devices, miss.eval.devices);
            assert_eq!(
                hit.eval.overrides, miss.eval.overrides,
                "overrides and notes"
            );
            let outcomes = |r: &SelectionResult| -> Vec<Vec<rulebench_core::matrix::Outcome>> {
                r.eval.columns.iter().map(|c| c.outcome.clone()).collect()
            };
            assert_eq!(outcomes(&hit), outcomes(&miss));
        }
    }
}

/// A printer that also keeps, for the test, the result JSON of each selection it is
/// handed (what the printer should have written).
struct Recording<'a> {
    printer: Box<dyn ResultSink + 'a>,
    wires: Vec<Value>,
}

impl ResultSink for Recording<'_> {
    fn begin(&mut self, names: &Names, page_name: &str, source_name: &str) -> std::io::Result<()> {
        self.printer.begin(names, page_name, source_name)
    }
    fn selection(&mut self, r: &SelectionResult) -> std::io::Result<()> {
        self.wires.push(r.wire());
        self.printer.selection(r)
    }
    fn finish(&mut self) -> std::io::Result<()> {
        self.printer.finish()
    }
}

/// Every format of `evaluate --all`, streamed as the command streams it: the page's
/// head, each selection as it is evaluated, the end. Returns the output and the
/// selections' result JSON.
fn print_all(app: &App, id: &str, format: Format) -> (Vec<u8>, Vec<Value>) {
    let mut out = Vec::new();
    let evaluations = app.evaluate_all(id).unwrap();
    let wires = {
        let mut sink = Recording {
            printer: PrinterBuilder::new(format).all(true).build(&mut out),
            wires: Vec::new(),
        };
        let p = evaluations.page();
        sink.begin(evaluations.names(), &p.name, &p.source.name)
            .unwrap();
        for r in evaluations {
            sink.selection(&r).unwrap();
        }
        sink.finish().unwrap();
        sink.wires
    };
    (out, wires)
}

/// The structure of every format of `--all`, on the sample pages, the awkward page and
/// a page without source rows: the JSON array is the selections' results byte for byte,
/// JSON Lines and summaries a line per selection, tables one per selection, CSV a
/// record per selection × target, Markdown a row per selection.
#[test]
fn every_format_streams_every_selection_of_a_page() {
    let (_dir, mut app) = open();
    app.import(&awkward_page().to_string(), "awkward.json", false)
        .unwrap();
    let empty = json!({"format": "rulebench.page/v1", "id": "empty", "name": "Empty",
        "source": {"name": "S", "key": ["id"], "rows": []},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]}});
    app.import(&empty.to_string(), "empty.json", false).unwrap();
    for id in SAMPLES.into_iter().chain(["awkward", "empty"]) {
        let (page, _) = app.page(id).unwrap();
        let sources = page.source.rows.len();
        let targets = page.target.rows.len();
        for format in Format::value_variants() {
            let (bytes, wires) = print_all(&app, id, *format);
            assert_eq!(wires.len(), sources, "{id} {format:?}");
            if *format == Format::Parquet {
                let reader =
                    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                        bytes::Bytes::from(bytes),
                    )
                    .unwrap()
                    .build()
                    .unwrap();
                let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
                assert_eq!(
                    rows,
                    sources * targets,
                    "{id}: a row per selection × target"
                );
                continue;
            }
            let text = String::from_utf8(bytes).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            match format {
                Format::Json => {
                    assert_eq!(
                        text,
                        format!("{}\n", serde_json::to_string_pretty(&wires).unwrap()),
                        "{id}: --all JSON is the array of results"
                    );
                }
                Format::Jsonl => {
                    // Tidy: a line per selection × target.
                    assert_eq!(lines.len(), sources * targets, "{id}");
                    for (n, line) in lines.iter().enumerate() {
                        let (s, t) = (n / targets, n % targets);
                        let row: Value = serde_json::from_str(line).unwrap();
                        let target = &wires[s]["targets"][t];
                        assert_eq!(row["selectionKey"], wires[s]["selectionKey"]);
                        assert_eq!(row["targetId"], target["id"]);
                        assert_eq!(row["verdict"], target["verdict"]);
                        assert_eq!(row["score"], target["score"]);
                    }
                }
                Format::Parquet => unreachable!("read above"),
                Format::Summary => {
                    assert_eq!(lines.len(), sources, "{id}");
                    for (line, wire) in lines.iter().zip(&wires) {
                        let s: Value = serde_json::from_str(line).unwrap();
                        assert_eq!(s["selectionKey"], wire["selectionKey"]);
                        assert_eq!(s["recommendedTargetId"], wire["recommendedTargetId"]);
                        assert_eq!(s["targets"].as_array().unwrap().len(), targets);
                    }
                }
                Format::Counts => {
                    assert_eq!(lines.len(), sources, "{id}");
                    for (line, wire) in lines.iter().zip(&wires) {
                        let c: Value = serde_json::from_str(line).unwrap();
                        assert_eq!(c["selectionKey"], wire["selectionKey"]);
                        assert_eq!(c["targets"], targets, "{id}");
                        let at = |v: u64| {
                            wire["targets"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .filter(|t| t["verdict"] == v)
                                .count()
                        };
                        assert_eq!(c["full"], at(2), "{id}");
                        assert_eq!(c["partial"], at(1), "{id}");
                        assert_eq!(c["none"], at(0), "{id}");
                    }
                }
                Format::Table => {
                    // A table of 4 + targets lines per selection, a blank line between.
                    let expected = (sources * (4 + targets) + sources).saturating_sub(1);
                    assert_eq!(lines.len(), expected, "{id}:\n{text}");
                    assert_eq!(text.matches("selection verdict").count(), sources);
                }
                Format::Csv | Format::Tsv => {
                    let mut reader = csv::ReaderBuilder::new()
                        .delimiter(if *format == Format::Tsv { b'\t' } else { b',' })
                        .from_reader(text.as_bytes());
                    let header: Vec<&str> = reader.headers().unwrap().iter().collect();
                    assert_eq!(&header[..8], &CSV_HEADER[..], "{id}");
                    let records: Vec<csv::StringRecord> =
                        reader.records().map(Result::unwrap).collect();
                    assert_eq!(records.len(), sources * targets, "{id} {format:?}");
                    for (rec, (s, t)) in records
                        .iter()
                        .zip((0..sources).flat_map(|s| (0..targets).map(move |t| (s, t))))
                    {
                        let wire = &wires[s];
                        assert_eq!(
                            &rec[0],
                            rulebench::print::csv_text(
                                wire["selectionKey"].as_str().unwrap(),
                                true
                            )
                        );
                        let target = &wire["targets"][t];
                        assert_eq!(&rec[5], target["score"].to_string());
                    }
                }
                Format::Md => {
                    let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with('|')).collect();
                    assert_eq!(rows.len(), 2 + sources, "{id}:\n{text}");
                    assert_eq!(
                        lines[0],
                        format!(
                            "# {}",
                            rulebench::print::sanitize(&page.name).replace('|', "\\|")
                        )
                    );
                    assert!(text.ends_with("cells show verdict and score.\n"), "{text}");
                }
            }
        }
    }
}

/// A page with the awkward cases: nested and escaped shown values, a target whose id is
/// `name`, overrides with and without notes, a rule that raises an engine error on
/// some targets, and more than one cache page of targets.
fn awkward_page() -> Value {
    let mut targets: Vec<Value> = (0..230)
        .map(|i| {
            json!({"id": format!("t{i:03}"), "label": format!("Target \"{i}\" ✓\u{1b}"),
                   "tags": ["a", {"b": [1, 2.5, null]}], "meta": {"x": {"y": i}},
                   "flag": i % 3 == 0, "bad": i % 7 == 0, "n": i, "price€": i % 5})
        })
        .collect();
    targets.push(
        json!({"id": "name", "label": "Named name", "tags": [], "meta": {},
                        "flag": true, "bad": false, "n": -1}),
    );
    json!({
        "format": "rulebench.page/v1", "id": "awkward", "name": "Awkward | page",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s1", "min": 10}, {"id": "s2", "min": 200}]},
        "target": {"name": "T", "key": ["id"], "label": "label", "summary": ["tags", "meta", "price€"],
                   "rows": targets},
        "rules": [
            {"id": "flag", "name": "Flag \"quoted\"", "required": false, "weight": 2,
             "category": "c", "logic": {"==": [{"var": "target.flag"}, true]}},
            {"id": "big", "name": "Big enough", "required": true, "weight": 1,
             "category": "c", "logic": {">=": [{"var": "target.n"}, {"var": "source.min"}]}},
            {"id": "boom", "name": "Throws", "required": false, "weight": 1, "category": "c",
             "logic": {"if": [{"var": "target.bad"}, {"throw": "boom"}, true]}}
        ],
        "overrides": [
            {"sourceKey": "id=s1", "targetKey": "id=t001", "value": true, "note": "checked \"by hand\""},
            {"sourceKey": "id=s1", "targetKey": "id=t002", "value": false},
            {"sourceKey": "id=s2", "targetKey": "id=name", "value": true, "note": "n"}
        ]
    })
}

#[test]
fn awkward_results_print_and_cache_exactly() {
    let (_dir, mut app) = open();
    app.import(&awkward_page().to_string(), "awkward.json", false)
        .unwrap();
    let (page, _) = app.page("awkward").unwrap();
    for key in ["s1", "s2"] {
        let miss = app.evaluate("awkward", key).unwrap();
        same_as_full_page(&page, &miss);
        // The throwing rule errored somewhere, and errors survive the cache.
        assert!(
            miss.eval.columns[2]
                .outcome
                .contains(&rulebench_core::matrix::ERROR)
        );
        check_printers(&page, &miss);
        let hit = app.evaluate("awkward", key).unwrap();
        assert_eq!(hit.cache, CacheState::Hit);
        check_printers(&page, &hit);
        let outcomes = |r: &SelectionResult| -> Vec<Vec<rulebench_core::matrix::Outcome>> {
            r.eval.columns.iter().map(|c| c.outcome.clone()).collect()
        };
        assert_eq!(outcomes(&hit), outcomes(&miss));
        assert_eq!(hit.eval.overrides, miss.eval.overrides);
    }
    let s1 = app.evaluate("awkward", "s1").unwrap();
    assert_eq!(
        s1.eval
            .overrides
            .all()
            .iter()
            .filter_map(|f| f.note.as_deref())
            .collect::<Vec<_>>(),
        ["checked \"by hand\""]
    );
    // A target id `name` takes the rule name's place in features[], as a JSON object would.
    let wire = s1.wire();
    assert!(
        wire["features"][0]["name"].is_boolean(),
        "{}",
        wire["features"][0]
    );
    // A summary field named like a reserved key does not displace it.
    assert_eq!(
        wire["targets"][0]["verdict"],
        json!(s1.eval.devices[0].verdict)
    );
}

#[test]
fn a_cache_page_this_version_cannot_read_is_a_miss_and_is_rewritten() {
    let (_dir, mut app) = open();
    let first = app.evaluate("llm-chat-clients", "t3-chat").unwrap();
    let hash = key_hash(&first.selection_key);
    // The first round stored the result JSON itself; such a page is not this format.
    let old = serde_json::to_string(&first.wire()).unwrap();
    let changed = app
        .store()
        .connection()
        .execute(
            "UPDATE compat_results SET payload_json = ?1 WHERE selection_hash = ?2",
            [old.as_str(), hash.as_str()],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let again = app.evaluate("llm-chat-clients", "t3-chat").unwrap();
    assert_eq!(
        again.cache,
        CacheState::Miss,
        "unreadable cache pages are recomputed"
    );
    assert_eq!(again.eval.devices, first.eval.devices);
    let third = app.evaluate("llm-chat-clients", "t3-chat").unwrap();
    assert_eq!(third.cache, CacheState::Hit, "and rewritten");
}

/// Paths of every shape: pruning must never change what a path selects.
const PATHS: &[&str] = &[
    "$",
    "$.targets",
    "$.targets[0]",
    "$.targets[*]",
    "$.targets[*].verdict",
    "$.targets[*].score",
    "$.targets[*].reason",
    "$.targets[*].id",
    "$.targets[*].label",
    "$.targets[*].tags",
    "$.targets[*].nothing",
    "$.targets[*].override",
    "$.targets[?@.id=='t001'].verdict",
    "$.targets[?@.id=='t001'].score",
    "$.targets[?@.id==\"t002\"].label",
    "$.targets[?@.id=='t003'].price€",
    "$.targets[?@.id=='t004'].override",
    "$.targets[?@.id=='name'].reason",
    "$.targets[?@.id=='nope'].verdict",
    "$.targets[?@.id=='t005'].nothing",
    "$.targets[?@.verdict==2].id",
    "$.targets[0].rules",
    "$.targets[0].rules.flag",
    "$.targets[?@.rules.flag==true].id",
    "$..verdict",
    "$.targets[0].*",
    "$.targets[*].*",
    "$.features[0]",
    "$.features[*].name",
    "$.features[?@.name=='Big enough'].t003",
    "$.targets[?length(@.tags) > 1].id",
    "$.targets[?length(@) > 7].id",
    "$.targets[?@ == 1]",
    "$.*",
    "$['targets'][0]['label']",
    "$.targets[?@.override].id",
    "$.targets[?@.override.note].override",
    "$.targets[1:3].score",
    "$.targets[-1].meta.x",
    "$.selectionVerdict",
    "$.recommendedTargetId",
    "$.evaluatedAt",
    // Non-ASCII member names are names too (RFC 9535).
    "$.targets[1].price€",
    "$.targets[?@.price€ > 3].id",
];

#[test]
fn pruned_results_answer_every_path_as_the_whole_result_does() {
    let (_dir, mut app) = open();
    app.import(&awkward_page().to_string(), "awkward.json", false)
        .unwrap();
    let (mut page, _) = app.page("awkward").unwrap();
    page.assertions = PATHS
        .iter()
        .enumerate()
        .map(|(i, path)| {
            serde_json::from_value(json!({"id": format!("a{i}"), "select": "*", "path": path,
                "matcher": "toBeNull", "not": true}))
            .unwrap()
        })
        .collect();
    let limits = Limits {
        max_details_bytes: 1 << 30,
        ..Limits::default()
    };
    let compiled = assertions::compile_all(&page, &limits).unwrap();
    let mut matrix = Matrix::new(&page).unwrap();
    let names = Arc::new(Names::of(&page));
    let results: Vec<SelectionResult> = (0..page.source.rows.len())
        .map(|s| SelectionResult::new(&page, names.clone(), matrix.evaluate(s), 1, "now"))
        .collect();
    let run = assertions::run_compiled(&compiled, &page, &limits, |s| {
        Ok::<_, ()>(results[s].clone())
    })
    .unwrap();
    for (c, got) in compiled.iter().zip(&run) {
        let expected: Vec<Value> = results
            .iter()
            .map(|r| {
                let o = c.evaluate(&r.wire(), &limits);
                json!({"selection": r.selection_key, "passed": o.passed, "values": o.values})
            })
            .collect();
        assert_eq!(
            got.actual_samples,
            Value::Array(expected),
            "path {}",
            c.path
        );
    }
    // The narrow paths read narrow results: no rule map, no features.
    let narrow = Needs::of_path("$.targets[?@.id=='t001'].verdict");
    let value = results[0].to_value(&narrow);
    assert!(value["features"].is_null());
    assert!(value["targets"][0]["rules"].is_null());
    assert!(Needs::of_path("$..verdict").is_all());
}

#[test]
fn streamed_samples_truncate_as_the_whole_array_would() {
    let page: Page = {
        let mut p =
            rulebench::app::synth::page(300, 6, 4, rulebench::app::synth::Spread::Realistic, 3);
        p.assertions = vec![
            serde_json::from_value(json!({"id": "all", "select": "*",
            "path": "$.targets[*].verdict", "pathMatch": "ALL", "matcher": "toBeOneOf",
            "expected": [0, 1, 2]}))
            .unwrap(),
        ];
        p
    };
    for limit in [100, 5_000, 1 << 20] {
        let limits = Limits {
            max_details_bytes: limit,
            ..Limits::default()
        };
        let report = assertions::run_in_memory(&page, 1, "now", &limits).unwrap();
        let got = &report.results[0];
        let mut matrix = Matrix::new(&page).unwrap();
        let names = Arc::new(Names::of(&page));
        let full: Vec<Value> = (0..page.source.rows.len())
            .map(|s| {
                let r = SelectionResult::new(&page, names.clone(), matrix.evaluate(s), 1, "now");
                let values: Vec<Value> = (0..r.target_count())
                    .map(|t| json!(r.eval.devices[t].verdict))
                    .collect();
                json!({"selection": r.selection_key, "passed": true, "values": values})
            })
            .collect();
        let (samples, truncated, sha) = assertions::truncate(Value::Array(full), limit);
        assert_eq!(
            (&got.actual_samples, got.truncated, &got.actual_sha256),
            (&samples, truncated, &sha),
            "limit {limit}"
        );
        assert!(got.passed);
    }
}

#[test]
fn keys_beyond_i64_keep_their_ids_and_overrides() {
    // The engine reads numbers as floats: an integer key beyond 2^53 − 1 is refused
    // where it comes in; written as a string it is kept, with its override.
    let (_dir, mut app) = open();
    let text = json!({
        "format": "rulebench.page/v1", "id": "big", "name": "Big",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": 12345678901234567890u64}]},
    })
    .to_string();
    let refused = app
        .import(&text, "big.json", false)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("big-integer"), "{refused}");
    let page = json!({
        "format": "rulebench.page/v1", "id": "big", "name": "Big",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "12345678901234567890", "ok": true}, {"id": 1, "ok": true}]},
        "rules": [{"id": "ok", "name": "Ok", "required": false, "weight": 1, "category": "c",
                   "logic": {"==": [{"var": "target.ok"}, true]}}],
        "overrides": [{"sourceKey": "id=s", "targetKey": "id=12345678901234567890",
                       "value": false, "note": "big"}]
    });
    app.import(&page.to_string(), "big.json", false).unwrap();
    let (full, _) = app.page("big").unwrap();
    let r = app.evaluate("big", "s").unwrap();
    same_as_full_page(&full, &r);
    assert_eq!(r.names.targets[0].id, "12345678901234567890");
    assert_eq!(r.eval.overrides.value(0), Some(false));
    assert_eq!(r.eval.overrides.note(0), Some("big"));
}

#[test]
fn a_corrupt_cache_page_is_an_error_not_a_panic() {
    let (_dir, mut app) = open();
    let r = app.evaluate("llm-chat-clients", "t3-chat").unwrap();
    let pages = r.cache_pages();
    assert!(SelectionResult::from_cache_pages(&pages, 0).is_ok());
    let count = format!("\"targetCount\":{}", r.target_count());
    assert!(pages[0].contains(&count));
    for bad in ["18446744073709551615", "1000000000000", "0", "15"] {
        let text = pages[0].replace(&count, &format!("\"targetCount\":{bad}"));
        assert!(
            SelectionResult::from_cache_pages(&[text], 0).is_err(),
            "targetCount {bad}"
        );
    }
    let text = pages[0].replacen("\"passes\":[\"", "\"passes\":[\"zz", 1);
    assert!(SelectionResult::from_cache_pages(&[text], 0).is_err());
}

/// A summary printer handed results of two pages in turn writes each with its own
/// names: what it makes once per run (target ids, rule ids) is made again for other
/// names. (A tidy printer is one table: its columns are the first page's.)
#[test]
fn one_printer_writes_two_pages_each_with_its_own_names() {
    let (_dir, mut app) = open();
    let llm = app.evaluate("llm-chat-clients", "opencode").unwrap();
    let loan = app.evaluate("loan-eligibility", "app-001").unwrap();
    let format = Format::Summary;
    {
        let together = {
            let mut out = Vec::new();
            let mut p = PrinterBuilder::new(format).all(true).build(&mut out);
            p.selection(&llm).unwrap();
            p.selection(&loan).unwrap();
            p.finish().unwrap();
            drop(p);
            String::from_utf8(out).unwrap()
        };
        let alone = |r: &SelectionResult| {
            let mut out = Vec::new();
            let mut p = PrinterBuilder::new(format).all(true).build(&mut out);
            p.selection(r).unwrap();
            p.finish().unwrap();
            drop(p);
            String::from_utf8(out).unwrap()
        };
        let loan_alone = alone(&loan);
        // The second page's lines are those it prints alone.
        let tail: Vec<&str> = loan_alone.lines().collect();
        let together: Vec<&str> = together.lines().collect();
        assert!(
            together.ends_with(&tail),
            "{format:?}:\n{}",
            together.join("\n")
        );
        assert!(
            !tail.is_empty() && tail[0].contains("app-001"),
            "{format:?}: {tail:?}"
        );
    }
}

/// Sources that read the same values share one evaluation, and the summary printer
/// writes their targets from the bytes it made for the first of them: every
/// selection's summary equals what a fresh printer writes for it alone, shared or not,
/// with overrides or not.
#[test]
fn summaries_of_sources_sharing_an_evaluation_are_written_exactly() {
    use rulebench::app::synth::{self, Spread};
    let (_dir, mut app) = open();
    // Overrides on some of the repeated sources: their verdicts are their own.
    let results = repeated_sources(
        &mut app,
        synth::page(30, 8, 90, Spread::Realistic, 11),
        4,
        &[(10, 3), (11, 0), (40, 7)],
    );
    let shared = results.iter().filter(|r| r.eval.shared).count();
    assert!(
        shared > 80,
        "most selections share an evaluation ({shared})"
    );
    let lines = summaries_written_alike(&results);
    assert_eq!(lines.len(), 90);
    // And the overridden ones do show their overrides.
    let line: Value = serde_json::from_str(&lines[10]).unwrap();
    assert_eq!(line["targets"][3]["reason"], "override");
}

/// A CSV or summary printer dropped without `finish` still writes what it was handed
/// (as the csv crate's writer flushed itself when dropped; the summary printer makes
/// its selections a batch at a time).
#[test]
fn printers_dropped_unfinished_write_what_they_were_handed() {
    let (_dir, app) = open();
    let r = app
        .evaluate_all("llm-chat-clients")
        .unwrap()
        .next()
        .unwrap();
    for format in [Format::Csv, Format::Summary] {
        let finished = print_one(format, &r);
        let mut out = Vec::new();
        {
            let mut printer = PrinterBuilder::new(format).build(&mut out);
            printer.begin(&r.names, r.page_id(), "selection").unwrap();
            printer.selection(&r).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), finished, "{format:?}");
        assert!(finished.lines().count() > 10, "{finished}");
    }
}

/// A summary's failing rules past 64 rules (its bits span words), with rules that do
/// not apply and rules the engine raises an error on: each target's list is the
/// result's own, in rule order — with ids of every length the printer pads to (16, 32
/// and 64 bytes) and longer ones, copied at their length.
#[test]
fn summary_failing_lists_span_more_than_64_rules() {
    use rulebench::app::synth::{self, Spread};
    let (_dir, mut app) = open();
    for (n, pad) in [0, 15, 45, 75].into_iter().enumerate() {
        summary_failing_lists(
            &mut app,
            synth::page(300, 70, 3, Spread::Realistic, 9),
            n,
            pad,
        );
    }
}

fn summary_failing_lists(app: &mut App, page: Page, n: usize, pad: usize) {
    let mut file = serde_json::to_value(&page).unwrap();
    file["id"] = json!(format!("wide-{n}"));
    file["rules"][65]["appliesWhen"] = json!({"==": [{"var": "target.tier"}, "pro"]});
    file["rules"][66]["logic"] =
        json!({"if": [{"==": [{"var": "target.tier"}, "max"]}, {"throw": "x"}, false]});
    for rule in file["rules"].as_array_mut().unwrap() {
        rule["id"] = json!(format!(
            "{}{}",
            "x".repeat(pad),
            rule["id"].as_str().unwrap()
        ));
    }
    app.import(&file.to_string(), "wide.json", false).unwrap();
    for r in app.evaluate_all(&format!("wide-{n}")).unwrap() {
        let mut out = Vec::new();
        let mut printer = SummaryBuilder::new().per_selection(true).build(&mut out);
        printer.selection(&r).unwrap();
        printer.finish().unwrap();
        drop(printer);
        let line: Value = serde_json::from_slice(&out).unwrap();
        let targets = line["targets"].as_array().unwrap();
        assert_eq!(targets.len(), 300);
        let mut past_64 = 0;
        for (t, target) in targets.iter().enumerate() {
            let expected: Vec<&str> = r.failing_rules(t).collect();
            let got = common::strs(&target["failing"]);
            assert_eq!(got, expected, "target {t}");
            past_64 += got
                .iter()
                .filter(|id| id.ends_with("-066") || id.ends_with("-069"))
                .count();
        }
        assert!(past_64 > 0, "some failing ids lie past the first word");
    }
}

/// The summary printer makes each batch's bytes on the thread pool while its caller
/// evaluates the next; called from one of the pool's own threads (a pool of one
/// here), it makes them in place rather than wait for a job that thread would have
/// to run — and writes the same bytes, in order, as from outside the pool.
#[test]
fn summaries_printed_from_inside_the_thread_pool_do_not_wait_for_it() {
    use rulebench::app::synth::{self, Spread};
    let (_dir, mut app) = open();
    let page = synth::page(5000, 12, 40, Spread::Realistic, 3);
    app.import(&serde_json::to_string(&page).unwrap(), "pool.json", false)
        .unwrap();
    let results: Vec<SelectionResult> = app.evaluate_all(&page.id).unwrap().collect();
    let print = || {
        let mut out = Vec::new();
        let mut printer = SummaryBuilder::new().per_selection(true).build(&mut out);
        for r in &results {
            printer.selection(r).unwrap();
        }
        printer.finish().unwrap();
        drop(printer);
        String::from_utf8(out).unwrap()
    };
    let outside = print();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let inside = pool.install(print);
    let strip = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("evaluatedAt");
                v.as_object_mut().unwrap().remove("cache");
                v.to_string()
            })
            .collect()
    };
    assert_eq!(strip(&inside), strip(&outside));
    assert_eq!(outside.lines().count(), 40);
}

/// Every selection's summary alone, as a fresh printer writes it (as text: a printer
/// makes a profile of a body only when it sees its columns again).
fn summaries_alone(results: &[SelectionResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let mut one = Vec::new();
            let mut printer = SummaryBuilder::new().per_selection(true).build(&mut one);
            printer.selection(r).unwrap();
            printer.finish().unwrap();
            drop(printer);
            String::from_utf8(one).unwrap()
        })
        .collect()
}

fn summaries_together(results: &[SelectionResult]) -> Vec<String> {
    let mut out = Vec::new();
    let mut printer = SummaryBuilder::new().per_selection(true).build(&mut out);
    for r in results {
        printer.selection(r).unwrap();
    }
    printer.finish().unwrap();
    drop(printer);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Every selection of `results` summarised by one printer, each line checked equal to
/// what a fresh printer writes for it alone; the lines.
fn summaries_written_alike(results: &[SelectionResult]) -> Vec<String> {
    let together = summaries_together(results);
    for (s, (line, one)) in together.iter().zip(&summaries_alone(results)).enumerate() {
        assert_eq!(line, one, "source {s}");
    }
    together
}

/// The results of `page` imported with its sources repeated to `distinct` profiles and
/// an override on each (source, target) of `overrides` (true on even sources).
fn repeated_sources(
    app: &mut App,
    mut page: Page,
    distinct: usize,
    overrides: &[(usize, usize)],
) -> Vec<SelectionResult> {
    rulebench::app::synth::repeat_sources(&mut page, distinct);
    for &(s, t) in overrides {
        page.overrides.push(rulebench_core::model::Override {
            source_key: Some(page.source.row_key(&page.source.rows[s])),
            target_key: Some(page.target.row_key(&page.target.rows[t])),
            source_key_hash: None,
            target_key_hash: None,
            value: s % 2 == 0,
            note: None,
        });
    }
    app.import(
        &serde_json::to_string(&page).unwrap(),
        "repeated.json",
        false,
    )
    .unwrap();
    app.evaluate_all(&page.id).unwrap().collect()
}

/// A page of many sources and few profiles, most of them written from the lines the
/// printer keeps per target (a profile's body made once, as its targets' line numbers)
/// — past the first batches, profiles seen once are made so at once: every
/// selection's summary is the one it has alone, byte for byte, overrides and all. A
/// selection with overrides is written from its profile but for its overridden
/// targets; one that makes a profile makes it of its verdicts before its overrides.
#[test]
fn summaries_written_from_kept_lines_are_the_bytes_made_as_text() {
    use rulebench::app::synth::{self, Spread};
    let (_dir, mut app) = open();
    let forced = [
        (3, 5),
        // Source 120 reads what source 0 does: the second sighting, it makes the
        // profile, and source 240 is written from it.
        (120, 7),
        (130, 0),
        (131, 699),
        (245, 1),
        (245, 2),
        (1400, 350),
    ];
    let results = repeated_sources(
        &mut app,
        synth::page(700, 9, 1500, Spread::Realistic, 5),
        120,
        &forced,
    );
    let together = summaries_written_alike(&results);
    assert_eq!(together.len(), 1500);
    let targets = |s: usize| -> Vec<Value> {
        let line: Value = serde_json::from_str(&together[s]).unwrap();
        line["targets"].as_array().unwrap().clone()
    };
    for (s, t) in forced {
        assert_eq!(targets(s)[t]["reason"], "override", "{s} {t}");
    }
}

/// The selection that makes a profile (the second of its twins) has overrides: the
/// profile's lines are its verdicts before them, and its twins written from it have
/// their own overrides and no other.
#[test]
fn a_profile_made_by_a_selection_with_overrides_holds_its_verdicts_before_them() {
    use rulebench::app::synth::{self, Spread};
    let (_dir, mut app) = open();
    // Every source a twin of the first: the first is written as text, the second
    // makes the profile, the others are written from it.
    let forced = [(1, 7), (1, 0), (3, 599)];
    let results = repeated_sources(
        &mut app,
        synth::page(600, 5, 6, Spread::Realistic, 9),
        1,
        &forced,
    );
    let together = summaries_written_alike(&results);
    let reasons = |s: usize| -> Vec<String> {
        let line: Value = serde_json::from_str(&together[s]).unwrap();
        let targets = line["targets"].as_array().unwrap().clone();
        targets
            .iter()
            .map(|t| t["reason"].as_str().unwrap().to_owned())
            .collect()
    };
    let overridden = |s: usize| -> Vec<usize> {
        let reasons = reasons(s);
        (0..600).filter(|&t| reasons[t] == "override").collect()
    };
    assert_eq!(overridden(1), [0, 7]);
    assert_eq!(overridden(3), [599]);
    for s in [0, 2, 4, 5] {
        assert!(overridden(s).is_empty(), "source {s}");
    }
}

/// A body kept for a profile is a page's at one revision: results of another
/// revision (its policies changed, its columns the very same) get their own verdicts.
#[test]
fn summaries_of_another_revision_are_not_written_from_kept_lines() {
    use rulebench_core::verdict::{DeviceVerdict, Reason, Verdict};
    let (_dir, app) = open();
    let first = app
        .evaluate_all("llm-chat-clients")
        .unwrap()
        .next()
        .unwrap();
    let mut later = first.clone();
    later.revision += 1;
    let devices: Vec<DeviceVerdict> = first
        .eval
        .devices
        .iter()
        .map(|d| DeviceVerdict {
            verdict: Verdict::None,
            score: d.score / 2.0,
            reason: Reason::LowScore,
        })
        .collect();
    later.eval.devices = devices.into();
    // Seen twice at the first revision: a profile; then twice at the next.
    let results = [first.clone(), first.clone(), first, later.clone(), later];
    let together = summaries_written_alike(&results);
    assert_ne!(together[2], together[3]);
}

/// The Markdown table's cells are made once per verdict and score: a cell holds its
/// own target's glyph and score, where targets of one score differ in verdict (a
/// required rule failing) and scores share the printer's table slots.
#[test]
fn markdown_cells_are_each_targets_own_verdict_and_score() {
    use rulebench::app::synth::{self, Spread};
    use rulebench::print::listing::glyph;
    let (_dir, mut app) = open();
    let page = synth::page(400, 12, 60, Spread::Realistic, 21);
    app.import(&serde_json::to_string(&page).unwrap(), "md.json", false)
        .unwrap();
    let results: Vec<SelectionResult> = app.evaluate_all(&page.id).unwrap().collect();
    let mut out = Vec::new();
    let mut printer = PrinterBuilder::new(Format::Md).all(true).build(&mut out);
    printer.begin(&results[0].names, "md", "sources").unwrap();
    for r in &results {
        printer.selection(r).unwrap();
    }
    printer.finish().unwrap();
    drop(printer);
    let text = String::from_utf8(out).unwrap();
    // The head's row, then a row per selection.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .collect();
    assert_eq!(rows.len(), results.len());
    let mut verdicts_of_a_score = std::collections::HashMap::new();
    for (row, r) in rows.iter().zip(&results) {
        let cells: Vec<&str> = row.trim_end_matches(" |").split(" | ").skip(3).collect();
        assert_eq!(cells.len(), r.target_count(), "{row}");
        for (t, cell) in cells.iter().enumerate() {
            let d = r.device(t);
            assert_eq!(
                *cell,
                format!("{} {:.2}", glyph(d.verdict), d.score),
                "target {t}"
            );
            verdicts_of_a_score
                .entry(d.score.to_bits())
                .or_insert_with(std::collections::BTreeSet::new)
                .insert(d.verdict.number());
        }
    }
    assert!(
        verdicts_of_a_score.values().any(|v| v.len() > 1),
        "some score comes with two verdicts"
    );
}

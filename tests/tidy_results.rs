//! Tidy results: `evaluate --all` in csv, tsv, jsonl and parquet writes one row per
//! (selection, target) with typed columns (read back by the arrow reader here), and
//! `--where`, `--limit` and `-o FILE` do what they say.

mod common;

use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_schema::DataType;
use common::{rb, real_sample as sample};
use serde_json::Value;

/// Page `llm`: ten clients × seventeen models, five rules.
fn page() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    for args in [
        vec![
            "page",
            "init",
            "llm",
            "--sources",
            &sample("clients.parquet"),
            "--targets",
            &sample("models.json"),
            "--name-field",
            "model",
        ],
        vec!["rule", "add", "llm", &sample("rules.jsonl")],
        vec![
            "dataset",
            "set",
            "llm",
            "target",
            "--summary",
            "litellm_provider,max_input_tokens,supports_vision",
        ],
    ] {
        let (code, _, err) = rb(&db, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    (dir, db)
}

#[test]
fn parquet_rows_read_back_with_their_types() {
    let (dir, db) = page();
    let out = dir.path().join("v.parquet");
    let (code, stdout, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "parquet",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(stdout, "", "-o writes the file, not stdout");
    let bytes = bytes::Bytes::from(std::fs::read(&out).unwrap());
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let schema = reader.schema().clone();
    let types: Vec<(String, DataType)> = schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    let want = |name: &str| {
        types
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no column {name}: {types:?}"))
            .1
            .clone()
    };
    assert_eq!(want("selectionKey"), DataType::Utf8);
    assert_eq!(want("selectionLabel"), DataType::Utf8);
    assert_eq!(want("selectionVerdict"), DataType::Int64);
    assert_eq!(want("verdict"), DataType::Int64);
    assert_eq!(want("score"), DataType::Float64);
    assert_eq!(want("recommended"), DataType::Boolean);
    assert_eq!(want("rule.tools"), DataType::Boolean);
    assert_eq!(want("rule.chat-mode"), DataType::Boolean);
    assert_eq!(want("target.litellm_provider"), DataType::Utf8);
    // Numbers in most models and text in one (litellm's `sample_spec`): text.
    assert_eq!(want("target.max_input_tokens"), DataType::Utf8);
    assert_eq!(want("target.supports_vision"), DataType::Boolean);
    let batches: Vec<_> = reader.build().unwrap().map(Result::unwrap).collect();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 10 * 17);
    // The agent's row for gpt-4o: full, recommended or not, every rule passed.
    let b = &batches[0];
    let col = |name: &str| b.column(schema.index_of(name).unwrap()).clone();
    let target = col("targetId");
    let target = target.as_string::<i32>();
    let i = (0..b.num_rows())
        .find(|&i| target.value(i) == "gpt-4o")
        .unwrap();
    assert_eq!(col("selectionKey").as_string::<i32>().value(i), "id=agent");
    assert_eq!(
        col("selectionLabel").as_string::<i32>().value(i),
        "Coding agent"
    );
    assert_eq!(
        col("verdict")
            .as_primitive::<arrow_array::types::Int64Type>()
            .value(i),
        2
    );
    assert_eq!(
        col("score")
            .as_primitive::<arrow_array::types::Float64Type>()
            .value(i),
        1.0
    );
    assert!(col("rule.tools").as_boolean().value(i));
    // Exactly one recommended target per selection that has one.
    let recommended: usize = batches
        .iter()
        .map(|b| {
            b.column(schema.index_of("recommended").unwrap())
                .as_boolean()
                .true_count()
        })
        .sum();
    assert_eq!(recommended, 10);
}

#[test]
fn where_and_limit_filter_rows_in_every_tidy_format() {
    let (_dir, db) = page();
    let (code, out, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "csv",
            "--where",
            "verdict < 2 and rule.tools == false",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    let header = reader.headers().unwrap().clone();
    let verdict = header.iter().position(|h| h == "verdict").unwrap();
    let tools = header.iter().position(|h| h == "rule.tools").unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert!(!records.is_empty());
    for r in &records {
        assert_ne!(&r[verdict], "2");
        assert_eq!(&r[tools], "false");
    }
    // The same rows as JSON Lines, cut at --limit.
    let (code, out, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "jsonl",
            "--where",
            "verdict < 2 and rule.tools == false",
            "--limit",
            "2",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2.min(records.len()));
    assert_eq!(rows[0]["rule.tools"], false);
    assert!(rows[0]["verdict"].as_i64().unwrap() < 2);
    // Summary fields are read under `target.`.
    let (code, out, _) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "jsonl",
            "--where",
            "recommended and target.litellm_provider == \"openai\"",
        ],
    );
    assert_eq!(code, 0);
    for line in out.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        assert_eq!(row["recommended"], true);
        assert_eq!(row["target.litellm_provider"], "openai");
    }
    // A bad expression, and --where on a format without rows.
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "csv",
            "--where",
            "verdict <",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--where"), "{err}");
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate", "llm", "--all", "--format", "json", "--limit", "1",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("csv, tsv or parquet"), "{err}");
}

#[test]
fn output_files_are_whole_or_absent() {
    let (dir, db) = page();
    let out = dir.path().join("v.csv");
    std::fs::write(&out, "before").unwrap();
    // A page that is not there: the file keeps what it had, no temporary is left.
    let (code, _, _) = rb(
        &db,
        &[
            "evaluate",
            "nope",
            "--all",
            "--format",
            "csv",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "before");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("rulebench-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "tsv",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().lines().count(),
        1 + 170
    );
    // The database file is not an output.
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "csv",
            "-o",
            db.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("that is the database file"), "{err}");
    // A file that cannot be put in place (a directory of that name): an error, and no
    // temporary file is left beside it.
    let taken = dir.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate",
            "llm",
            "--all",
            "--format",
            "csv",
            "-o",
            taken.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("rulebench-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // -o - is stdout.
    let (code, stdout, _) = rb(
        &db,
        &[
            "evaluate", "llm", "--select", "agent", "--format", "csv", "-o", "-",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 1 + 17);
}

/// Parquet rows are written column by column when no filter applies, row by row when
/// one does: the two give the same file contents, `--limit` included.
#[test]
fn parquet_column_and_row_paths_agree() {
    let (dir, db) = page();
    let read = |extra: &[&str]| {
        let out = dir.path().join("x.parquet");
        let mut args = vec![
            "evaluate",
            "llm",
            "--all",
            "--format",
            "parquet",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = rb(&db, &args);
        assert_eq!(code, 0, "{err}");
        let bytes = bytes::Bytes::from(std::fs::read(&out).unwrap());
        // 170 rows at most: one batch.
        let batches: Vec<arrow_array::RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
                .unwrap()
                .build()
                .unwrap()
                .map(Result::unwrap)
                .collect();
        assert_eq!(batches.len(), 1);
        batches.into_iter().next().unwrap()
    };
    let all = read(&[]);
    assert_eq!(all.num_rows(), 170);
    assert_eq!(all, read(&["--where", "true"]));
    let limited = read(&["--limit", "25"]);
    assert_eq!(limited.num_rows(), 25);
    assert_eq!(limited, read(&["--where", "true", "--limit", "25"]));
}

/// The fast path (every row of a selection at once) writes what the row-by-row path
/// (taken when `--where` is given) writes, byte for byte, in csv, tsv and jsonl, guarded
/// or not: text cells that look like formulas, hold the delimiter, quotes, line breaks
/// or terminal controls, summary values of every JSON kind, rules that raise errors or
/// do not apply, overrides.
#[test]
fn rows_written_at_once_equal_rows_written_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let labels = [
        "=SUM(A1)",
        "a,b",
        "tab\there",
        "quote \" here",
        "line\nbreak",
        "esc\u{1b}[31m",
        "-5",
        "+x",
        "@me",
        "plain",
    ];
    let targets: Vec<Value> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            serde_json::json!({"id": format!("t{i}"), "label": l,
                "extra": [i, {"k": null}], "n": i, "price": if i % 2 == 0 { Value::Null } else { l.to_string().into() }})
        })
        .collect();
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "edgy", "name": "Edgy",
        "source": {"name": "S", "key": ["id"], "label": "label", "rows": [
            {"id": "s1", "label": "=cmd|' /C calc'!A0", "min": 3},
            {"id": "s2", "label": "ok, fine", "min": 7}]},
        "target": {"name": "T", "key": ["id"], "label": "label", "summary": ["extra", "price", "n"],
                   "rows": targets},
        "rules": [
            {"id": "big", "name": "Big", "weight": 2, "logic": {">=": [{"var": "target.n"}, {"var": "source.min"}]}},
            {"id": "boom", "name": "Boom", "logic": {"if": [{"==": [{"var": "target.n"}, 4]}, {"throw": "x"}, true]}},
            {"id": "odd", "name": "Odd", "required": true, "appliesWhen": {">": [{"var": "target.n"}, 2]},
             "logic": {"==": [{"%": [{"var": "target.n"}, 2]}, 1]}}
        ],
        "overrides": [{"sourceKey": "id=s1", "targetKey": "id=t3", "value": true, "note": "n"}]
    });
    let file = dir.path().join("edgy.json");
    std::fs::write(&file, page.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for format in ["csv", "tsv", "jsonl"] {
        for guard in [None, Some("--no-formula-guard")] {
            let run = |filter: Option<&str>| {
                let mut args = vec!["evaluate", "edgy", "--all", "--format", format];
                args.extend(guard);
                if let Some(f) = filter {
                    args.extend(["--where", f]);
                }
                let (code, out, err) = rb(&db, &args);
                assert_eq!(code, 0, "{err}");
                out
            };
            let at_once = run(None);
            assert_eq!(at_once, run(Some("true")), "{format} {guard:?}");
            assert!(at_once.lines().count() >= 20, "{format}: {at_once}");
        }
    }
}

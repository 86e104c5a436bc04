//! The data file readers: each format's happy path, its type rules and its bad inputs,
//! through the real binary (`dataset import`, `page init`) on the committed samples in
//! `tests/data/real/` (a slice of litellm's model list; ten chat clients as Parquet,
//! Arrow, Excel and TSV).

mod common;

use std::path::{Path, PathBuf};

use common::{rb, real_sample as sample};
use serde_json::{Value, json};

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    (dir, db)
}

/// A page made from the clients in `sources` and the models, exported as JSON.
fn init(db: &Path, sources: &str, extra: &[&str]) -> (i32, String, String) {
    let s = sample(sources);
    let t = sample("models.json");
    let mut args = vec![
        "page",
        "init",
        "llm",
        "--sources",
        s.as_str(),
        "--targets",
        t.as_str(),
    ];
    args.extend_from_slice(extra);
    rb(db, &args)
}

fn export(db: &Path, page: &str) -> Value {
    common::export_page(db, page)
}

fn row<'a>(page: &'a Value, side: &str, id_field: &str, id: &str) -> &'a Value {
    page[side]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[id_field] == id)
        .unwrap_or_else(|| panic!("no {side} row {id}"))
}

/// The clients as every reader must read them (Excel: whole floats are integers).
fn chat_client(page: &Value) -> &Value {
    row(page, "source", "id", "chat")
}

#[test]
fn parquet_arrow_excel_and_tsv_read_the_same_clients() {
    for file in [
        "clients.parquet",
        "clients.arrow",
        "clients.xlsx",
        "clients.tsv",
    ] {
        let (_dir, db) = db();
        let (code, _, err) = init(&db, file, &["--name-field", "model"]);
        assert_eq!(code, 0, "{file}: {err}");
        assert!(err.contains("source key: `id`"), "{file}: {err}");
        assert!(err.contains("source label: `name`"), "{file}: {err}");
        assert!(
            err.contains("target key: `model` (the member names)"),
            "{err}"
        );
        let page = export(&db, "llm");
        let chat = chat_client(&page);
        assert_eq!(chat["name"], "Plain chat", "{file}");
        assert_eq!(chat["needsTools"], false, "{file}");
        assert_eq!(chat["minContext"], 4000, "{file}");
        assert_eq!(chat["maxCostPerMTok"].as_f64(), Some(1.0), "{file}");
        // A list column (Parquet, Arrow) or a JSON-looking text column (Excel, TSV):
        // an array either way, so `in` tests membership, not a substring.
        assert_eq!(
            chat["providers"],
            json!(["openai", "anthropic", "gemini", "mistral", "deepseek"]),
            "{file}"
        );
        // Dates are ISO 8601 text.
        assert_eq!(chat["launched"], "2022-12-01", "{file}");
        assert_eq!(page["source"]["rows"].as_array().unwrap().len(), 10);
    }
}

#[test]
fn a_json_object_of_rows_is_read_by_member_name() {
    let (_dir, db) = db();
    let (code, _, err) = init(&db, "clients.tsv", &["--name-field", "model"]);
    assert_eq!(code, 0, "{err}");
    let page = export(&db, "llm");
    assert_eq!(page["target"]["key"], json!(["model"]));
    assert_eq!(page["target"]["read"]["nameField"], "model");
    let gpt = row(&page, "target", "model", "gpt-4o");
    // The member name comes first; nested values stay nested.
    assert_eq!(
        gpt.as_object().unwrap().keys().next().map(String::as_str),
        Some("model")
    );
    assert_eq!(gpt["litellm_provider"], "openai");
    // A field with numbers in most rows and text in one is a warning naming both.
    assert!(
        err.contains("warning[mixed-types]")
            && err.contains("`max_input_tokens`")
            && err.contains("first `model=sample_spec`"),
        "{err}"
    );
    // The same file on stdin is told from JSON Lines by its content.
    let bytes = std::fs::read(sample("models.json")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .args([
            "--db",
            db.to_str().unwrap(),
            "dataset",
            "import",
            "llm",
            "target",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("17 target rows") && said.contains("(JSON,"),
        "{said}"
    );
}

#[test]
fn an_object_without_a_name_field_says_how_to_read_it() {
    let (_dir, db) = db();
    assert_eq!(init(&db, "clients.tsv", &["--name-field", "model"]).0, 0);
    // A key of two fields: no field to take the member names.
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm",
            "target",
            &sample("models.json"),
            "--key",
            "model,mode",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--name-field FIELD"), "{err}");
    assert!(err.contains("nothing imported"), "{err}");
}

#[test]
fn stated_types_win_over_inference() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let csv = dir.path().join("versions.csv");
    std::fs::write(
        &csv,
        "id,version,tags,zip,flag\n\
         a,16.10,\"[\"\"x\"\",\"\"y\"\"]\",02134,yes\n\
         b,16.2,[],90210,no\n",
    )
    .unwrap();
    let made = |extra: &[&str]| {
        let c = csv.to_str().unwrap();
        let mut args = vec![
            "page",
            "init",
            "v",
            "--sources",
            c,
            "--targets",
            c,
            "--replace",
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = rb(&db, &args);
        assert_eq!(code, 0, "{err}");
        export(&db, "v")["source"]["rows"][0].clone()
    };
    // Inferred: the version a number (16.1), the tags JSON, the zip text (a leading
    // zero), yes/no text.
    let r = made(&[]);
    assert_eq!(r["version"], 16.1);
    assert_eq!(r["tags"], json!(["x", "y"]));
    assert_eq!(r["zip"], "02134");
    assert_eq!(r["flag"], "yes");
    // Stated: the version text as written, the tags text, the zip a number, the flag a
    // boolean.
    let r = made(&[
        "--type",
        "version=string",
        "--type",
        "tags=string",
        "--type",
        "zip=integer",
        "--type",
        "flag=boolean",
    ]);
    assert_eq!(r["version"], "16.10");
    assert_eq!(r["tags"], "[\"x\",\"y\"]");
    assert_eq!(r["zip"], 2134);
    assert_eq!(r["flag"], true);
    // The types are kept with the dataset, so a reload reads the file the same way.
    let page = export(&db, "v");
    assert_eq!(page["source"]["read"]["types"]["version"], "string");
}

#[test]
fn a_cell_that_does_not_convert_is_a_located_bad_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let csv = dir.path().join("c.csv");
    std::fs::write(&csv, "id,n\na,1\nb,many\n").unwrap();
    let c = csv.to_str().unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "init",
            "p",
            "--sources",
            c,
            "--targets",
            c,
            "--type",
            "n=number",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("c.csv:3: column `n`: `many` is not a number"),
        "{err}"
    );
    // A type for a column the file lacks.
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "init",
            "p",
            "--sources",
            c,
            "--targets",
            c,
            "--type",
            "m=number",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--type m=…: neither file has a field `m`"),
        "{err}"
    );
    // A type that is not one.
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "init",
            "p",
            "--sources",
            c,
            "--targets",
            c,
            "--type",
            "n=float",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("one of string, number, integer, boolean, json"),
        "{err}"
    );
    assert_eq!(rb(&db, &["export", "p"]).0, 2, "nothing was made");
}

#[test]
fn excel_bad_cells_name_the_sheet_and_the_cell() {
    let (_dir, db) = db();
    assert_eq!(init(&db, "clients.xlsx", &["--name-field", "model"]).0, 0);
    let bad = sample("bad.xlsx");
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm",
            "source",
            &bad,
            "--type",
            "minContext=integer",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("sheet `Clients` row 3: cell B3 (`minContext`): `lots` is not a whole number"),
        "{err}"
    );
    // A sheet that is not there lists those that are.
    let xlsx = sample("clients.xlsx");
    let (code, _, err) = rb(
        &db,
        &[
            "dataset", "import", "llm", "source", &xlsx, "--sheet", "Nope",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("no sheet `Nope` (the sheets are `Clients`, `Notes`"),
        "{err}"
    );
    // By index: the second sheet has no `id`.
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "llm", "source", &xlsx, "--sheet", "2"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("no column `id`"), "{err}");
    // Without a type, the bad workbook reads: text and numbers in one column are a
    // warning naming both and a row of each.
    let (code, _, err) = rb(&db, &["dataset", "import", "llm", "source", &bad]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "source field `minContext` holds values of more than one type: number in 1 row, first `id=a`; string in 1 row, first `id=b`"
        ),
        "{err}"
    );
}

#[test]
fn parquet_bad_rows_and_big_integers() {
    let (_dir, db) = db();
    assert_eq!(
        init(&db, "clients.parquet", &["--name-field", "model"]).0,
        0
    );
    let dup = sample("dup.parquet");
    let (code, _, err) = rb(&db, &["dataset", "import", "llm", "source", &dup]);
    assert_eq!(code, 2);
    assert!(
        err.contains("dup.parquet: row 3: duplicate key `id=a`: row 1 has it too"),
        "{err}"
    );
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "llm", "source", &dup, "--skip-bad"],
    );
    assert_eq!(code, 0, "{err}");
    let page = export(&db, "llm");
    let b = row(&page, "source", "id", "b");
    // Beyond 2^53 an integer is kept as its exact text; a struct is an object.
    assert_eq!(b["big"], "1152921504606846976");
    assert_eq!(b["tags"], json!({"x": 2}));
    // A truncated file is an error, and the database keeps what it had.
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.parquet");
    let bytes = std::fs::read(sample("clients.parquet")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "llm", "source", cut.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("cut.parquet") && err.contains("Parquet"),
        "{err}"
    );
    assert_eq!(export(&db, "llm"), page);
    // Arrow too.
    let arrow = std::fs::read(sample("clients.arrow")).unwrap();
    let cut = dir.path().join("cut.arrow");
    std::fs::write(&cut, &arrow[..arrow.len() / 2]).unwrap();
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "llm", "source", cut.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert!(err.contains("cut.arrow"), "{err}");
}

#[test]
fn formats_are_told_by_extension_flag_or_content() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    assert_eq!(
        rb(
            &db,
            &[
                "page",
                "init",
                "llm",
                "--sources",
                &sample("clients.tsv"),
                "--targets",
                &sample("models.json"),
                "--name-field",
                "model",
            ]
        )
        .0,
        0
    );
    // A Parquet file with no extension: told by its magic bytes.
    let bare = dir.path().join("clients-data");
    std::fs::copy(sample("clients.parquet"), &bare).unwrap();
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "llm", "source", bare.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(Parquet,"), "{err}");
    // A TSV named .txt: told by its tabs; --input-format says it outright.
    let txt = dir.path().join("clients.txt");
    std::fs::copy(sample("clients.tsv"), &txt).unwrap();
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "llm", "source", txt.to_str().unwrap()],
    );
    assert_eq!(code, 0);
    assert!(err.contains("(TSV,"), "{err}");
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm",
            "source",
            txt.to_str().unwrap(),
            "--input-format",
            "tsv",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(TSV,"), "{err}");
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm",
            "source",
            txt.to_str().unwrap(),
            "--input-format",
            "yaml",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("csv, tsv, json, jsonl, parquet, arrow, excel"),
        "{err}"
    );
}

#[test]
fn a_linked_parquet_file_reloads_as_it_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let models = dir.path().join("models.json");
    std::fs::copy(sample("models.json"), &models).unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "init",
            "llm",
            "--sources",
            &sample("clients.parquet"),
            "--targets",
            models.to_str().unwrap(),
            "--name-field",
            "model",
            "--type",
            "max_input_tokens=string",
            "--link",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // The models lose one member; the reload reads the object by the same name field
    // and the same types.
    let mut m: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&models).unwrap()).unwrap();
    m.remove("gpt-4o-mini");
    std::fs::write(&models, serde_json::to_string(&m).unwrap()).unwrap();
    let reloaded = rulebench::app::App::open(&db)
        .unwrap()
        .reload_linked("llm", rulebench::app::types::Side::Target)
        .unwrap();
    assert!(
        matches!(
            reloaded,
            rulebench::app::dataset::Reloaded::Changed { rows: 16, .. }
        ),
        "{reloaded:?}"
    );
    let page = export(&db, "llm");
    let rows = page["target"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 16);
    let gpt = row(&page, "target", "model", "gpt-4o");
    assert!(gpt["max_input_tokens"].is_string(), "{gpt}");
}

/// Decimal ids (`NUMBER(38,0)` from a warehouse) are integers; a decimal column with a
/// value no float says exactly, or an integer column with one value beyond ±2^53, is
/// text in every row (one type per column, as CSV decides it).
#[test]
fn parquet_decimals_and_big_integers_keep_one_type_per_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let file = sample("decimals.parquet");
    let (code, _, err) = rb(
        &db,
        &["page", "init", "d", "--sources", &file, "--targets", &file],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("mixed-types"), "{err}");
    let page = export(&db, "d");
    let rows = page["source"]["rows"].as_array().unwrap();
    assert_eq!(rows[0]["id"], 5, "a scale of 0 is an integer");
    assert_eq!(
        rows[0]["account"], "1",
        "a value beyond 2^53: the column is text"
    );
    assert_eq!(rows[2]["account"], "12345678901234567890");
    assert_eq!(
        rows[0]["rate"], 0.1,
        "decimals a float says exactly: numbers"
    );
    assert_eq!(rows[2]["rate"], Value::Null);
    // A decimal no float says exactly: the whole column is text, as written.
    assert_eq!(rows[0]["price"], "0.10");
    assert_eq!(rows[2]["price"], "12345678901234567.89");
    // One value beyond 2^53 makes the whole column text.
    assert_eq!(rows[0]["big"], "5");
    assert_eq!(rows[1]["big"], "9007199254740993");
}

#[test]
fn reading_flags_that_do_not_fit_the_file_are_refused() {
    let (_dir, db) = db();
    assert_eq!(init(&db, "clients.tsv", &["--name-field", "model"]).0, 0);
    let tsv = sample("clients.tsv");
    let (code, _, err) = rb(
        &db,
        &[
            "dataset", "import", "llm", "source", &tsv, "--sheet", "Clients",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--sheet") && err.contains("not a workbook"),
        "{err}"
    );
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm",
            "source",
            &tsv,
            "--name-field",
            "id",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--name-field") && err.contains("TSV"), "{err}");
}

/// The dataset's own (linked) file imported again with one new flag keeps the stored
/// ones: a `--type` does not drop the name field.
#[test]
fn a_flag_given_again_is_laid_over_the_stored_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let models = dir.path().join("models.json");
    std::fs::copy(sample("models.json"), &models).unwrap();
    let m = models.to_str().unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "page",
            "init",
            "llm",
            "--sources",
            &sample("clients.tsv"),
            "--targets",
            m,
            "--target-key",
            "model",
            "--name-field",
            "model",
            "--link",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // The key is `model`, so the name field is it anyway: give another field first.
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm",
            "target",
            m,
            "--link",
            "--type",
            "max_input_tokens=string",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let page = export(&db, "llm");
    assert_eq!(page["target"]["read"]["nameField"], "model");
    assert_eq!(
        page["target"]["read"]["types"]["max_input_tokens"],
        "string"
    );
}

/// A damaged binary file is bad input (exit 2, a message naming it), never a crash:
/// fuzzing found bytes on which the Arrow reader panics (a buffer offset past its end),
/// and a block length that made it allocate 880 GB.
#[test]
fn a_damaged_binary_file_is_an_error_not_a_crash() {
    let (_dir, db) = db();
    assert_eq!(init(&db, "clients.tsv", &["--name-field", "model"]).0, 0);
    let before = export(&db, "llm");
    let dir = tempfile::tempdir().unwrap();
    // The second: an Arrow block whose length says 880 GB (the reader would allocate it
    // and the process abort).
    // A damaged file of one format only, from fuzzing: an Arrow file of no columns
    // whose batch claims 2^64 - 65526 rows (read row by row until memory ran out).
    let file = sample("no-columns.arrow");
    let (code, _, err) = rb(&db, &["dataset", "import", "llm", "source", &file]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-columns.arrow: no columns"), "{err}");
    // From fuzzing too: a 2 KB Parquet file whose page says it holds 1.7 GB. The
    // Parquet reader allocates what the page says before it finds the page short (1.6
    // GB of memory for a moment, in a release build; an out-of-memory abort under
    // AddressSanitizer): an error naming the file and the row group, not a crash.
    let file = sample("huge-page.parquet");
    let (code, _, err) = rb(&db, &["dataset", "import", "llm", "source", &file]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("huge-page.parquet: row group 0"), "{err}");
    for damaged in ["damaged.bin", "damaged-huge.bin"] {
        let damaged = std::fs::read(sample(damaged)).unwrap();
        for (ext, magic) in [
            ("arrow", &b"ARROW1\0\0"[..]),
            ("parquet", &b"PAR1"[..]),
            ("xlsx", &b"PK\x03\x04"[..]),
        ] {
            for wrapped in [false, true] {
                let mut bytes = Vec::new();
                if wrapped {
                    bytes.extend_from_slice(magic);
                }
                bytes.extend_from_slice(&damaged);
                if wrapped {
                    bytes.extend_from_slice(magic);
                }
                let file = dir.path().join(format!("bad-{wrapped}.{ext}"));
                std::fs::write(&file, &bytes).unwrap();
                let (code, _, err) = rb(
                    &db,
                    &["dataset", "import", "llm", "source", file.to_str().unwrap()],
                );
                assert_eq!(code, 2, "{ext} {wrapped}: {err}");
                assert!(err.contains(&format!("bad-{wrapped}.{ext}")), "{err}");
                assert!(!err.contains("panicked"), "{err}");
            }
        }
    }
    assert_eq!(export(&db, "llm"), before, "nothing changed");
}

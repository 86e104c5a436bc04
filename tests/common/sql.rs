//! The differential harness for `rulebench sql`: a page's query run on a SQL engine,
//! pair by pair against the engine's own evaluation, and a generator of pages with
//! heterogeneous rows, nulls, defaults, patches and overrides whose rules all translate.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rulebench::app::App;
use rulebench::app::sql::SqlRequest;
use rulebench::app::synth::Rng;
use rulebench::app::types::{Dialect, Page};
use rulebench_core::matrix::Matrix;
use serde_json::{Value, json};

/// One pair's outcome: every rule's pass, score, verdict, reason; the selection's
/// verdict and recommended target.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Per rule: passed, or `None` where it does not apply.
    pub rules: Vec<Option<bool>>,
    pub score: f64,
    pub verdict: i64,
    pub reason: String,
    pub selection: i64,
    pub recommended: Option<String>,
}

pub type Pairs = BTreeMap<(String, String), Pair>;

/// What the engine computes for every pair of a page.
pub fn engine_pairs(page: &Page) -> Pairs {
    let mut matrix = Matrix::new(page).expect("compiles");
    let mut out = Pairs::new();
    for s in 0..page.source.rows.len() {
        let eval = matrix.evaluate(s);
        let source_key = page.source.row_key(&page.source.rows[s]);
        let recommended = eval.recommended.map(|t| matrix.target_ids()[t].clone());
        for t in 0..page.target.rows.len() {
            let device = &eval.devices[t];
            out.insert(
                (
                    source_key.clone(),
                    page.target.row_key(&page.target.rows[t]),
                ),
                Pair {
                    rules: eval
                        .columns
                        .iter()
                        .map(|c| c.outcome[t].counted())
                        .collect(),
                    score: device.score,
                    verdict: i64::from(device.verdict),
                    reason: device.reason.as_str().to_owned(),
                    selection: i64::from(eval.selection_verdict),
                    recommended: recommended.clone(),
                },
            );
        }
    }
    out
}

/// A query's result: column names and rows of JSON values.
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        other => panic!("not a boolean: {other}"),
    }
}

/// The query's rows as pairs (with the selection columns).
pub fn sql_pairs(page: &Page, table: &Table) -> Pairs {
    let col = |name: &str| {
        table
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .unwrap_or_else(|| panic!("no column {name} in {:?}", table.columns))
    };
    let rules: Vec<usize> = page.rules.iter().map(|r| col(&r.id)).collect();
    let (sk, tk, score, verdict, reason, selection, recommended) = (
        col("source_key"),
        col("target_key"),
        col("score"),
        col("verdict"),
        col("reason"),
        col("selection_verdict"),
        col("recommended_target"),
    );
    let mut out = Pairs::new();
    for row in &table.rows {
        let text = |i: usize| row[i].as_str().expect("text").to_owned();
        let pair = Pair {
            rules: rules
                .iter()
                .map(|&i| (!row[i].is_null()).then(|| truthy(&row[i])))
                .collect(),
            score: row[score].as_f64().expect("a score"),
            verdict: row[verdict].as_i64().expect("a verdict"),
            reason: text(reason),
            selection: row[selection].as_i64().expect("a selection verdict"),
            recommended: row[recommended].as_str().map(str::to_owned),
        };
        let key = (text(sk), text(tk));
        assert!(
            out.insert(key.clone(), pair).is_none(),
            "pair {key:?} twice"
        );
    }
    out
}

/// Runs the data script and the query in an in-memory SQLite database.
pub fn run_sqlite(data: &str, query: &str) -> Table {
    run_sqlite_with(data, query, &[])
}

/// As [`run_sqlite`], binding the query's named parameters (`:name`).
pub fn run_sqlite_with(data: &str, query: &str, params: &[(&str, f64)]) -> Table {
    let conn = rusqlite::Connection::open_in_memory().expect("sqlite");
    conn.execute_batch(data)
        .unwrap_or_else(|e| panic!("data script fails: {e}\n{data}"));
    let mut stmt = conn
        .prepare(query)
        .unwrap_or_else(|e| panic!("query does not prepare: {e}\n{query}"));
    let columns: Vec<String> = stmt.column_names().map(|c| c.to_string()).collect();
    let n = columns.len();
    let named: Vec<(String, f64)> = params.iter().map(|(n, v)| (format!(":{n}"), *v)).collect();
    let bound: Vec<(&str, &dyn rusqlite::ToSql)> = named
        .iter()
        .map(|(n, v)| (n.as_str(), v as &dyn rusqlite::ToSql))
        .collect();
    let rows = stmt
        .query_map(bound.as_slice(), |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => Value::Null,
                        rusqlite::types::ValueRef::Integer(i) => json!(i),
                        rusqlite::types::ValueRef::Real(f) => json!(f),
                        rusqlite::types::ValueRef::Text(t) => {
                            Value::String(String::from_utf8_lossy(t).into_owned())
                        }
                        rusqlite::types::ValueRef::Blob(_) => panic!("a blob"),
                    })
                })
                .collect::<rusqlite::Result<Vec<Value>>>()
        })
        .expect("query runs")
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap_or_else(|e| panic!("query fails: {e}\n{query}"));
    Table { columns, rows }
}

/// Runs the data script and the query on another engine through `scripts/sqlrun.py`.
pub fn run_external(dialect: Dialect, data: &str, query: &str) -> Table {
    run_external_with(dialect, data, None, query)
}

/// As [`run_external`], with statements run after the data script (`--setup`).
pub fn run_external_with(dialect: Dialect, data: &str, setup: Option<&str>, query: &str) -> Table {
    run_sqlrun(dialect, None, data, setup, query, &[])
}

/// Runs a data script, optional setup statements and a query through
/// `scripts/sqlrun.py`, on a fresh database or (DuckDB) on a database file that keeps
/// what the scripts make.
pub fn run_sqlrun(
    dialect: Dialect,
    database: Option<&Path>,
    data: &str,
    setup: Option<&str>,
    query: &str,
    params: &[(&str, f64)],
) -> Table {
    let dir = tempfile::tempdir().expect("temp dir");
    let (d, q) = (dir.path().join("data.sql"), dir.path().join("query.sql"));
    std::fs::write(&d, data).expect("write data");
    std::fs::write(&q, query).expect("write query");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sqlrun.py");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .args(["--dialect", dialect.name(), "--data"])
        .arg(&d)
        .arg("--query")
        .arg(&q);
    if let Some(database) = database {
        command.arg("--database").arg(database);
    }
    for (name, value) in params {
        command.arg("--param").arg(format!("{name}={value:?}"));
    }
    if let Some(setup) = setup {
        let s = dir.path().join("setup.sql");
        std::fs::write(&s, setup).expect("write setup");
        command.arg("--setup").arg(&s);
    }
    let out = command.output().expect("python3 runs");
    assert!(
        out.status.success(),
        "{} fails: {}\n--- query\n{query}",
        dialect.name(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON from sqlrun.py");
    Table {
        columns: v["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(|c| c.as_str().expect("name").to_owned())
            .collect(),
        rows: v["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r.as_array().expect("a row").clone())
            .collect(),
    }
}

/// The page's query and data for a dialect (with the selection columns).
pub fn page_sql(page: &Page, dialect: Dialect) -> (String, String) {
    let mut request = SqlRequest::new(dialect);
    request.all = true;
    let query = App::sql_query_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let data = App::sql_data_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    (data, query)
}

/// Runs a page's query on a dialect's engine and compares every pair with the engine:
/// returns the number of pairs compared.
pub fn differential(page: &Page, dialect: Dialect) -> usize {
    differential_with(page, dialect, |_| {})
}

/// As [`differential`], with the request changed by `change` (for the data and the
/// query alike).
pub fn differential_with(page: &Page, dialect: Dialect, change: impl Fn(&mut SqlRequest)) -> usize {
    let mut request = SqlRequest::new(dialect);
    request.all = true;
    change(&mut request);
    let query = App::sql_query_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let data = App::sql_data_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let table = match dialect {
        Dialect::Sqlite => run_sqlite(&data, &query),
        other => run_external(other, &data, &query),
    };
    same_pairs(page, dialect, &table, &query)
}

/// As [`differential`], the thresholds bound as parameters (`--params`) to `full` and
/// `partial`: the engine's verdicts on the page with those thresholds.
pub fn differential_params(page: &Page, dialect: Dialect, full: f64, partial: f64) -> usize {
    let mut request = SqlRequest::new(dialect);
    request.all = true;
    request.params = true;
    let query = App::sql_query_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let data = App::sql_data_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let params = [("full_threshold", full), ("partial_threshold", partial)];
    let table = match dialect {
        Dialect::Sqlite => run_sqlite_with(&data, &query, &params),
        other => run_sqlrun(other, None, &data, None, &query, &params),
    };
    let mut v = serde_json::to_value(page).unwrap();
    v["devicePolicy"]["fullThreshold"] = json!(full);
    v["devicePolicy"]["partialThreshold"] = json!(partial);
    same_pairs(&parse(&v.to_string()), dialect, &table, &query)
}

/// As [`differential`], on the page's tables typed and named the warehouse way
/// ([`warehouse_types`]), read through `--map`.
pub fn differential_retyped(page: &Page, dialect: Dialect) -> usize {
    let (setup, map) = warehouse_types(page, dialect);
    let mut request = SqlRequest::new(dialect);
    request.all = true;
    let data = App::sql_data_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    request.map = map;
    if dialect == Dialect::Spark {
        request.source_table = Some("source_wh".into());
        request.target_table = Some("target_wh".into());
    }
    let query = App::sql_query_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let table = run_external_with(dialect, &data, Some(&setup), &query);
    same_pairs(page, dialect, &table, &query)
}

/// As [`differential`], the tables loaded from the Parquet files of `sql --data-files`
/// by its load script.
pub fn differential_from_files(page: &Page, dialect: Dialect) -> usize {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut request = SqlRequest::new(dialect);
    request.all = true;
    let files = App::sql_data_files_of(page, &request, dir.path(), &|_| Ok(()))
        .unwrap_or_else(|e| panic!("{e}"));
    let load = std::fs::read_to_string(&files.script).expect("load.sql");
    let query = App::sql_query_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let table = run_external(dialect, &load, &query);
    same_pairs(page, dialect, &table, &query)
}

/// The page's tables as a warehouse types and names them, as ALTER statements to run
/// after the data script, and the `--map` specs that name the new columns:
/// - numbers as `DECIMAL(p, s)`, with a scale that holds every value exactly;
/// - integers in the narrowest of `SMALLINT` and `INTEGER` that holds them;
/// - booleans as `SMALLINT` 0/1;
/// - strings as `CHAR(n)` where no value ends in a blank (PostgreSQL pads them);
/// - every column renamed to snake_case with a prefix (`minVcpu` → `c_min_vcpu`).
pub fn warehouse_types(page: &Page, dialect: Dialect) -> (String, Vec<String>) {
    use rulebench::app::types::Side;
    use rulebench_core::sql::{Kind, Schema};
    let mut setup = String::new();
    let mut map = Vec::new();
    // Spark alters no column's type: a view per table (`source_wh`) does it, and its
    // CHAR(n) keeps the padding (docs/sql.md), so strings stay strings there.
    let spark = dialect == Dialect::Spark;
    let text_type = match dialect {
        Dialect::Postgres => "TEXT",
        Dialect::Spark => "STRING",
        _ => "VARCHAR",
    };
    for (side, table) in [(Side::Source, "source"), (Side::Target, "target")] {
        let ds = page.dataset(side);
        let schema = Schema::of(ds, false);
        let ident = |n: &str| dialect.ident(n);
        let mut used = std::collections::HashSet::new();
        let mut view = Vec::new();
        for column in &schema.columns {
            let values: Vec<&Value> = ds
                .rows
                .iter()
                .filter_map(|r| r.get(column))
                .filter(|v| !v.is_null())
                .collect();
            let c = ident(column);
            // The column's new type, and the expression that makes it.
            let retype: Option<(String, String)> = match schema.kind(column) {
                Kind::Num => {
                    // Digits before and after the point of each value's shortest text.
                    let (mut whole, mut scale) = (1, 2);
                    for v in &values {
                        let text = format!("{}", v.as_f64().expect("a number"));
                        let text = text.trim_start_matches('-');
                        let (w, f) = text.split_once('.').unwrap_or((text, ""));
                        whole = whole.max(w.len());
                        scale = scale.max(f.len());
                    }
                    (whole + scale <= 36).then(|| {
                        let ty = format!("DECIMAL({}, {scale})", whole + scale + 2);
                        let using = format!("CAST(CAST({c} AS {text_type}) AS {ty})");
                        (ty, using)
                    })
                }
                Kind::Int => {
                    let fits = |lo: i64, hi: i64| {
                        values
                            .iter()
                            .all(|v| v.as_i64().is_some_and(|i| (lo..=hi).contains(&i)))
                    };
                    let ty = if fits(i16::MIN.into(), i16::MAX.into()) {
                        Some("SMALLINT")
                    } else if fits(i32::MIN.into(), i32::MAX.into()) {
                        Some("INTEGER")
                    } else {
                        None
                    };
                    ty.map(|ty| (ty.to_owned(), format!("CAST({c} AS {ty})")))
                }
                Kind::Bool => Some((
                    "SMALLINT".to_owned(),
                    format!("CAST(CASE WHEN {c} THEN 1 WHEN NOT {c} THEN 0 END AS SMALLINT)"),
                )),
                Kind::Text if !spark => {
                    let texts: Vec<&str> = values.iter().filter_map(|v| v.as_str()).collect();
                    let width = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
                    (width > 0 && !texts.iter().any(|t| t.ends_with(' '))).then(|| {
                        let ty = format!("CHAR({width})");
                        let using = format!("CAST({c} AS {ty})");
                        (ty, using)
                    })
                }
                _ => None,
            };
            // snake_case, prefixed, unique in the table.
            let mut snake = String::from("c_");
            for ch in column.chars() {
                if ch.is_uppercase() {
                    snake.push('_');
                    snake.extend(ch.to_lowercase());
                } else if ch.is_alphanumeric() {
                    snake.push(ch);
                } else {
                    snake.push('_');
                }
            }
            while !used.insert(snake.clone()) {
                snake.push('_');
            }
            if spark {
                let value = retype.map_or_else(|| c.clone(), |(_, using)| using);
                view.push(format!("{value} AS {}", ident(&snake)));
            } else {
                if let Some((ty, using)) = retype {
                    setup.push_str(&format!(
                        "ALTER TABLE {table} ALTER COLUMN {c} TYPE {ty} USING {using};\n"
                    ));
                }
                setup.push_str(&format!(
                    "ALTER TABLE {table} RENAME COLUMN {c} TO {};\n",
                    ident(&snake)
                ));
            }
            map.push(format!("{}.{column}={snake}", side.name()));
        }
        if spark {
            if view.is_empty() {
                view.push("NULL AS rb_empty".into());
            }
            setup.push_str(&format!(
                "CREATE OR REPLACE TEMPORARY VIEW {table}_wh AS SELECT {} FROM {table};\n",
                view.join(", ")
            ));
        }
    }
    (setup, map)
}

/// Compares a query's rows with the engine's pairs, every one: the number compared.
pub fn same_pairs(page: &Page, dialect: Dialect, table: &Table, query: &str) -> usize {
    let got = sql_pairs(page, table);
    let want = engine_pairs(page);
    assert_eq!(
        got.len(),
        want.len(),
        "{}: {} pairs from SQL, {} from the engine",
        page.id,
        got.len(),
        want.len()
    );
    // Pairs whose rules differ first (a selection differs because of one of them).
    let mut keys: Vec<&(String, String)> = want.keys().collect();
    keys.sort_by_key(|k| got.get(*k).is_some_and(|g| g.rules == want[*k].rules));
    for key in keys {
        let w = &want[key];
        let g = got
            .get(key)
            .unwrap_or_else(|| panic!("{}: pair {key:?} missing from SQL", page.id));
        if g != w {
            let rules: Vec<String> = page
                .rules
                .iter()
                .zip(g.rules.iter().zip(&w.rules))
                .filter(|(_, (a, b))| a != b)
                .map(|(r, (a, b))| {
                    format!(
                        "rule {} {}: sql {a:?}, engine {b:?}",
                        r.id,
                        serde_json::to_string(&r.logic).unwrap()
                    )
                })
                .collect();
            panic!(
                "{} ({}): pair {key:?} differs\n  sql    {g:?}\n  engine {w:?}\n  {}\n--- query\n{query}",
                page.id,
                dialect.name(),
                rules.join("\n  ")
            );
        }
    }
    want.len()
}

/// Parses and validates a page file's text.
pub fn parse(text: &str) -> Page {
    App::parse_page(text, "generated")
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .0
}

// ---------------------------------------------------------------------------------------------
// Generated pages
// ---------------------------------------------------------------------------------------------

/// Whether an event of `percent` chance happens.
fn chance(rng: &mut Rng, percent: u64) -> bool {
    rng.below(100) < percent
}

const WORDS: &[&str] = &["a", "b", "ab", "", "10", "9", "x y", "it's", "Ünï", "null"];

/// A field's value: often the field's own type, sometimes null or absent (None).
fn value(rng: &mut Rng, field: &str) -> Option<Value> {
    if chance(rng, 12) {
        return None;
    }
    if chance(rng, 10) {
        return Some(Value::Null);
    }
    Some(match field {
        "n" => json!(rng.below(7) as i64 - 2),
        "x" => json!(*rng.pick(&[0.5, -1.25, 2.0, 0.1, 3.75, 1e3, 0.0])),
        "s" => json!(rng.pick(WORDS)),
        "b" => json!(chance(rng, 50)),
        "tags" => {
            let n = rng.below(3);
            Value::Array((0..n).map(|_| json!(rng.pick(WORDS))).collect())
        }
        _ => unreachable!(),
    })
}

const FIELDS: &[&str] = &["n", "x", "s", "b", "tags"];

fn var(rng: &mut Rng, field: &str) -> Value {
    let side = if chance(rng, 50) { "source" } else { "target" };
    json!({"var": format!("{side}.{field}")})
}

fn num(rng: &mut Rng, depth: u32) -> Value {
    let leaf = depth == 0 || chance(rng, 40);
    if !leaf && chance(rng, 10) {
        // The remainder of an integer field or constant by an integer constant.
        let a = if chance(rng, 80) {
            var(rng, "n")
        } else {
            json!(rng.below(9) as i64 - 4)
        };
        return json!({"%": [a, *rng.pick(&[2, 3, -2, 5])]});
    }
    if !leaf && chance(rng, 8) {
        // The value of and/or over number fields and constants: one of the operands.
        let leaf = |rng: &mut Rng| {
            if chance(rng, 70) {
                let f = *rng.pick(&["n", "x"]);
                var(rng, f)
            } else {
                json!(*rng.pick(&[0.0, 2.5, -1.0]))
            }
        };
        let (a, b) = (leaf(rng), leaf(rng));
        return json!({*rng.pick(&["and", "or"]): [a, b]});
    }
    if leaf {
        return match rng.below(5) {
            0 | 1 => {
                let f = *rng.pick(&["n", "x"]);
                var(rng, f)
            }
            2 => json!(rng.below(5) as i64 - 1),
            3 => json!(*rng.pick(&[0.5, 2.25, -0.1])),
            _ => json!(*rng.pick(&["3", "0.5", " 2 ", ""])),
        };
    }
    let d = depth - 1;
    match rng.below(8) {
        0 => json!({"+": [num(rng, d), num(rng, d)]}),
        1 => json!({"-": [num(rng, d), num(rng, d)]}),
        2 => json!({"*": [num(rng, d), num(rng, d)]}),
        3 => json!({"/": [num(rng, d), *rng.pick(&[2, 4, -1])]}),
        4 => json!({"min": [num(rng, d), num(rng, d)]}),
        5 => json!({"max": [num(rng, d), num(rng, d), num(rng, d)]}),
        6 => json!({"-": [num(rng, d)]}),
        // Branches made numbers (a branch of string constants would make a string).
        _ => json!({"if": [boolean(rng, d), {"-": [num(rng, d), 0]}, {"-": [num(rng, d), 0]}]}),
    }
}

fn text(rng: &mut Rng, depth: u32) -> Value {
    if depth > 0 && chance(rng, 8) {
        // The value of and/or over strings: one of the operands.
        let d = depth - 1;
        return json!({*rng.pick(&["and", "or"]): [text(rng, d), text(rng, d)]});
    }
    if depth > 0 && chance(rng, 8) {
        // An integer field joined into text.
        let n = var(rng, "n");
        return json!({"cat": [text(rng, depth - 1), n]});
    }
    if depth == 0 || chance(rng, 60) {
        return if chance(rng, 60) {
            var(rng, "s")
        } else {
            json!(rng.pick(WORDS))
        };
    }
    let d = depth - 1;
    match rng.below(3) {
        0 => json!({"cat": [text(rng, d), json!(rng.pick(WORDS))]}),
        1 => {
            let b = var(rng, "b");
            json!({"cat": [text(rng, d), "-", b]})
        }
        _ => json!({"if": [boolean(rng, d), text(rng, d), text(rng, d)]}),
    }
}

/// `some`, `all` or `none` over the tags, the condition on the item alone.
fn quantifier(rng: &mut Rng) -> Value {
    let item = json!({"var": ""});
    let word = json!(rng.pick(WORDS));
    let condition = match rng.below(6) {
        0 => json!({"==": [item, word]}),
        1 => json!({"in": [word, item]}),
        2 => json!({"!": [item]}),
        3 => json!({*rng.pick(&["<", ">="]): [item, word]}),
        4 => json!({"===": [item, word]}),
        _ => {
            let words: Vec<Value> = (0..2).map(|_| json!(rng.pick(WORDS))).collect();
            json!({"in": [item, words]})
        }
    };
    let tags = var(rng, "tags");
    json!({*rng.pick(&["some", "all", "none"]): [tags, condition]})
}

fn boolean(rng: &mut Rng, depth: u32) -> Value {
    let d = depth.saturating_sub(1);
    if chance(rng, 8) {
        return quantifier(rng);
    }
    let cmp = *rng.pick(&["<", "<=", ">", ">="]);
    let eq = *rng.pick(&["==", "!=", "===", "!=="]);
    match rng.below(if depth == 0 { 9 } else { 16 }) {
        0 => json!({cmp: [num(rng, d), num(rng, d)]}),
        1 => json!({"<=": [num(rng, d), num(rng, d), num(rng, d)]}),
        2 => json!({eq: [num(rng, d), num(rng, d)]}),
        3 => json!({eq: [text(rng, d), text(rng, d)]}),
        4 => {
            let f = *rng.pick(FIELDS);
            let mut other = json!(*rng.pick(&[
                json!(null),
                json!(true),
                json!(0),
                json!(1),
                json!("1"),
                json!(false)
            ]));
            if f == "tags" && !eq.starts_with("!==") && eq != "===" {
                // An array compares as its text: refused (see tests/sql.rs).
                other = json!(null);
            }
            if f == "s" && !other.is_string() && !other.is_null() && eq.len() == 2 {
                // A string field made a number: refused.
                other = json!("1");
            }
            json!({eq: [var(rng, f), other]})
        }
        5 => {
            let b = var(rng, "b");
            json!({*rng.pick(&["==", "<", ">="]): [b, num(rng, d)]})
        }
        6 => {
            let lits: Vec<Value> = (0..rng.below(3) + 1)
                .map(|_| json!(rng.pick(WORDS)))
                .collect();
            json!({"in": [text(rng, d), lits]})
        }
        7 => {
            let t = var(rng, "tags");
            json!({"in": [text(rng, d), t]})
        }
        8 => {
            let s = var(rng, "s");
            json!({"in": [json!(rng.pick(WORDS)), s]})
        }
        9 => {
            let f1 = *rng.pick(FIELDS);
            let f2 = *rng.pick(FIELDS);
            let side = *rng.pick(&["source", "target"]);
            json!({"missing": [format!("{side}.{f1}"), format!("target.{f2}")]})
        }
        10 => json!({"!": boolean(rng, d)}),
        11 => {
            let f = *rng.pick(FIELDS);
            json!({"!!": [var(rng, f)]})
        }
        12 => json!({"and": [boolean(rng, d), boolean(rng, d)]}),
        13 => {
            let f = *rng.pick(FIELDS);
            json!({"or": [boolean(rng, d), var(rng, f)]})
        }
        14 => json!({"missing_some": [1, ["source.n", "source.s", "target.x"]]}),
        _ => json!({"if": [boolean(rng, d), boolean(rng, d), num(rng, d)]}),
    }
}

/// A page of `sources` × `targets` rows whose rules all translate to SQL.
pub fn random_page(seed: u64, sources: usize, targets: usize, rules: usize) -> String {
    let mut rng = Rng::new(seed);
    let rows = |rng: &mut Rng, prefix: &str, n: usize, priority: bool| -> Vec<Value> {
        (0..n)
            .map(|i| {
                let mut row = serde_json::Map::new();
                row.insert("id".into(), json!(format!("{prefix}-{i}")));
                for f in FIELDS {
                    if let Some(v) = value(rng, f) {
                        row.insert((*f).into(), v);
                    }
                }
                if priority && chance(rng, 70) {
                    row.insert("rank".into(), json!(rng.below(3)));
                }
                Value::Object(row)
            })
            .collect()
    };
    let source_rows = rows(&mut rng, "s", sources, false);
    let target_rows = rows(&mut rng, "t", targets, true);
    let rules: Vec<Value> = (0..rules)
        .map(|i| {
            // Now and then a rule that applies only where a condition holds (n/a
            // elsewhere: NULL in SQL, out of the score).
            let applies = chance(&mut rng, 25).then(|| boolean(&mut rng, 2));
            let mut rule = json!({
                "id": format!("r{i}"),
                "name": format!("Rule {i}"),
                "required": chance(&mut rng, 30),
                // Short decimals (exact scores) and, now and then, a long one
                // (summed and compared in double precision).
                "weight": if chance(&mut rng, 5) {
                    1.0 / 3.0
                } else {
                    *rng.pick(&[1.0, 2.0, 0.5, 3.0, 0.1, 0.2, 0.6, 0.7])
                },
                "logic": boolean(&mut rng, 3),
            });
            if let Some(condition) = applies {
                rule["appliesWhen"] = condition;
            }
            rule
        })
        .collect();
    let mut overrides = Vec::new();
    let mut pairs = std::collections::BTreeSet::new();
    for _ in 0..rng.below(4) {
        let pair = (rng.below(sources as u64), rng.below(targets as u64));
        if pairs.insert(pair) {
            overrides.push(json!({
                "sourceKey": format!("id=s-{}", pair.0),
                "targetKey": format!("id=t-{}", pair.1),
                "value": chance(&mut rng, 50),
                "note": "it's; checked\nby hand",
            }));
        }
    }
    let mut target = json!({
        "name": "Targets", "key": ["id"], "rows": target_rows,
        "priority": "rank",
    });
    if chance(&mut rng, 50) {
        target["defaults"] = json!({"x": 1.5, "s": "dflt"});
    }
    if chance(&mut rng, 50) {
        target["patches"] = json!([{"key": "id=t-1", "set": {"n": 4, "b": true}}]);
    }
    // Every mode, listed by its enum: a new one is generated (and checked) at once.
    fn names<T: strum::VariantArray + Copy + Into<&'static str>>() -> Vec<&'static str> {
        T::VARIANTS.iter().map(|m| (*m).into()).collect()
    }
    use rulebench_core::model::{AggregateMode, ElseMode, RequiredMode};
    let required_mode = *rng.pick(&names::<RequiredMode>());
    let full = *rng.pick(&[1.0, 0.9, 0.75]);
    let partial = *rng.pick(&[0.4, 0.3, 0.0]);
    json!({
        "format": "rulebench.page/v1",
        "id": format!("generated-{seed}"),
        "name": "Generated",
        "organization": {"id": "o", "name": "O", "planTier": "enterprise"},
        "source": {"name": "Sources", "key": ["id"], "rows": source_rows},
        "target": target,
        "rules": rules,
        "devicePolicy": {"requiredMode": required_mode, "fullThreshold": full, "partialThreshold": partial},
        "selectionPolicy": {
            "aggregate": {
                "mode": *rng.pick(&names::<AggregateMode>()),
                "elseMode": *rng.pick(&names::<ElseMode>()),
            },
            "recommendation": {"strategy": "HIGHEST_VERDICT_THEN_SCORE"}
        },
        "overrides": overrides,
    })
    .to_string()
}

/// The sample pages, parsed.
pub fn sample_pages() -> Vec<Page> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-pages");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("sample-pages") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            out.push(parse(&std::fs::read_to_string(&path).expect("read")));
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// Pages for what the first version of the query got wrong (each a regression test).
pub fn regression_pages() -> Vec<Page> {
    let page = |id: &str, rules: Value| {
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": id, "name": id,
                "source": {"name": "S", "key": ["id"], "defaults": {"x": 5},
                    "rows": [{"id": "s1", "x": null}, {"id": "s2", "a": 2, "x": null}]},
                "target": {"name": "T", "key": ["id"], "priority": "rank", "defaults": {"rank": 5},
                    "rows": [{"id": "b", "rank": 1}, {"id": "a"}, {"id": "c", "rank": 6, "flag": null}],
                    "patches": [{"key": "id=c", "set": {"flag": true, "rank": 0}}]},
                "rules": rules,
            })
            .to_string(),
        )
    };
    vec![
        page(
            "regressions",
            json!([
                // NaN is `===` to nothing in an array (it is "NaN" only in a string).
                {"id": "nan-in", "name": "n", "logic": {"in": [{"+": [{"var": "source.a"}, 0]}, ["NaN"]]}},
                // A count that is not a number: the missing keys are the result.
                {"id": "some-nan", "name": "s", "logic": {"missing_some": ["x", ["source.a"]]}},
                // null names the data itself: never missing ("" too; validation refuses it).
                {"id": "null-key", "name": "k", "logic": {"missing": [null]}},
                // A column that holds only null, with a default (TEXT in the data script).
                {"id": "default", "name": "d", "logic": {">": [{"var": "source.x"}, 1]}},
                // A column that holds only null, with a patch.
                {"id": "patched", "name": "p", "logic": {"!": [{"var": "target.flag"}]}, "weight": 0.5},
                // An integer field joined into text: `v5`, never `v5.0` (SQLite read it
                // as REAL).
                {"id": "int-text", "name": "i", "logic": {"==": [{"cat": ["v", {"var": "target.rank"}]}, "v5"]}}
            ]),
        ),
        // Weights out of order: every rule passes, so the score is exactly 1 (full).
        page(
            "weights",
            json!([
                {"id": "w1", "name": "w1", "weight": 0.1, "logic": {"!!": [{"var": "source.id"}]}},
                {"id": "w2", "name": "w2", "weight": 1.1, "logic": {"!!": [{"var": "source.id"}]}},
                {"id": "w3", "name": "w3", "weight": 0.1, "logic": {"!!": [{"var": "source.id"}]}}
            ]),
        ),
        // Optional weights 0.2, 0.6 and 0.7: where only the 0.6 rule passes the score is
        // exactly 40% and meets `partialThreshold 0.4` (target `b` has no rank).
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": "exact-scores", "name": "exact scores",
                "source": {"name": "S", "key": ["id"], "rows": [{"id": "s1"}]},
                "target": {"name": "T", "key": ["id"],
                    "rows": [{"id": "a", "rank": 1}, {"id": "b"}, {"id": "c", "rank": 2}]},
                "rules": [
                    {"id": "w02", "name": "w02", "weight": 0.2, "logic": {"==": [{"var": "target.id"}, "c"]}},
                    {"id": "w06", "name": "w06", "weight": 0.6, "logic": {"!!": [{"var": "target.rank"}]}},
                    {"id": "w07", "name": "w07", "weight": 0.7, "logic": {"==": [{"var": "target.id"}, "x"]}}
                ],
                "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1.0, "partialThreshold": 0.4}
            })
            .to_string(),
        ),
        // Multi-field keys whose values hold `|` and `\`: escaped in the key (the two
        // targets made one key), overridden by their keys.
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": "pipe-keys", "name": "pipe keys",
                "source": {"name": "S", "key": ["id"], "rows": [{"id": "s1"}]},
                "target": {"name": "T", "key": ["a", "b"],
                    "rows": [{"a": "x|b=y", "b": "z", "n": 1}, {"a": "x", "b": "y|b=z", "n": 2},
                             {"a": "back\\slash", "b": "|", "n": 3}]},
                "rules": [{"id": "r", "name": "r", "logic": {">": [{"var": "target.n"}, 1]}}],
                "overrides": [{"sourceKey": "id=s1", "targetKey": "a=x\\|b=y|b=z", "value": true},
                              {"sourceKey": "id=s1", "targetKey": "a=back\\\\slash|b=\\|", "value": false}]
            })
            .to_string(),
        ),
        // Twins: sources that read the same values share a selection (one per profile),
        // except where overrides name one, which is a profile of its own.
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": "twins", "name": "twins",
                "source": {"name": "S", "key": ["site", "no"], "rows": [
                    {"site": "a", "no": 1, "need": 2}, {"site": "a", "no": 2, "need": 2},
                    {"site": "b", "no": 1, "need": 2}, {"site": "b", "no": 2, "need": 9},
                    {"site": "c", "no": 1}, {"site": "c", "no": 2}]},
                "target": {"name": "T", "key": ["id"], "rows": [
                    {"id": "t1", "has": 1}, {"id": "t2", "has": 5}, {"id": "t3", "has": 3}]},
                "rules": [{"id": "r", "name": "r", "logic": {">=": [{"var": "target.has"}, {"var": "source.need"}]}}],
                "overrides": [
                    {"sourceKey": "site=a|no=2", "targetKey": "id=t1", "value": true},
                    {"sourceKey": "site=a|no=2", "targetKey": "id=t2", "value": false},
                    {"sourceKey": "site=a|no=2", "targetKey": "id=t3", "value": false},
                    {"sourceKey": "site=c|no=1", "targetKey": "id=t1", "value": false}]
            })
            .to_string(),
        ),
        // Rule families: one rule per value (an object of lists, a list of objects), a
        // parameter as a value (`param.feature`) and in a path (`{feature}`), with an
        // `appliesWhen` per member (n/a where the app does not use the feature).
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": "families", "name": "families",
                "source": {"name": "Apps", "key": ["id"], "rows": [
                    {"id": "shop", "uses": ["fetch", "webgpu"], "minimum": 2},
                    {"id": "blog", "uses": ["fetch"], "minimum": 1}]},
                "target": {"name": "Browsers", "key": ["id"], "rows": [
                    {"id": "old", "fetch": true, "webgpu": false, "dialog": null, "level": 1},
                    {"id": "new", "fetch": true, "webgpu": true, "dialog": true, "level": 3}]},
                "rules": [
                    {"id": "feature-{feature}", "name": "Supports {feature}",
                     "each": {"feature": ["fetch", "webgpu", "dialog"]},
                     "appliesWhen": "param.feature in source.uses",
                     "expression": "target.{feature} == true"},
                    {"id": "level", "name": "Level", "weight": 0.5,
                     "each": [{"at": 1, "w": "a"}, {"at": 2, "w": "b"}],
                     "logic": {">=": [{"var": "target.level"}, {"+": [{"var": "param.at"}, {"var": "source.minimum"}]}]}}
                ]
            })
            .to_string(),
        ),
        // Money in a warehouse's DECIMAL: 0.1 + 0.2 is not <= 0.3 in double precision,
        // as in the engine; flags as 0/1 integers; camelCase names mapped to snake_case.
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": "money", "name": "money",
                "source": {"name": "Orders", "key": ["orderNo"], "rows": [
                    {"orderNo": 1, "subTotal": 0.1, "shipping": 0.2, "rush": true},
                    {"orderNo": 2, "subTotal": 10.25, "shipping": 0.5, "rush": false},
                    {"orderNo": 3, "subTotal": 0.3, "shipping": 0.0}]},
                "target": {"name": "Plans", "key": ["planId"], "rows": [
                    {"planId": "basic", "spendLimit": 0.3, "express": false, "tier": 1},
                    {"planId": "plus", "spendLimit": 10.75, "express": true, "tier": 2}]},
                "rules": [
                    {"id": "within", "name": "within the limit", "required": true,
                     "logic": {"<=": [{"+": [{"var": "source.subTotal"}, {"var": "source.shipping"}]}, {"var": "target.spendLimit"}]}},
                    {"id": "rush", "name": "rush needs express",
                     "logic": {"or": [{"!": {"var": "source.rush"}}, {"==": [{"var": "target.express"}, true]}]}},
                    {"id": "tier", "name": "tier", "weight": 0.5,
                     "logic": {">=": [{"var": "target.tier"}, {"var": "source.orderNo"}]}}
                ]
            })
            .to_string(),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Wild rules: every operator over every kind of operand
// ---------------------------------------------------------------------------------------------

/// The fields of the page below, by kind.
const NUM: &[&str] = &["n", "x"];
const TEXT: &[&str] = &["s", "version"];
const BOOL: &[&str] = &["b"];
const ARRAY: &[&str] = &["tags"];

fn wild_field(rng: &mut Rng) -> Value {
    let side = *rng.pick(&["source", "target"]);
    let f = match rng.below(6) {
        0 | 1 => *rng.pick(NUM),
        2 | 3 => *rng.pick(TEXT),
        4 => *rng.pick(BOOL),
        _ => *rng.pick(ARRAY),
    };
    json!({"var": format!("{side}.{f}")})
}

fn wild_constant(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => json!(rng.below(10) as i64 - 2),
        1 => json!(*rng.pick(&[0.5, 2.25, 10.0])),
        2 => json!(*rng.pick(&["a", "gpt", "3.5", "", "x y"])),
        3 => json!(rng.below(2) == 0),
        4 => json!(null),
        _ => json!(["a", "b"]),
    }
}

/// Any value: a field, a constant, or an operation.
fn wild_value(rng: &mut Rng, depth: u32) -> Value {
    if depth == 0 || rng.below(100) < 45 {
        return if rng.below(100) < 65 {
            wild_field(rng)
        } else {
            wild_constant(rng)
        };
    }
    let d = depth - 1;
    let op = *rng.pick(&[
        "==",
        "!=",
        "===",
        "!==",
        "<",
        "<=",
        ">",
        ">=",
        "!",
        "!!",
        "and",
        "or",
        "if",
        "in",
        "cat",
        "substr",
        "+",
        "-",
        "*",
        "/",
        "%",
        "min",
        "max",
        "missing",
        "missing_some",
        "some",
        "all",
        "none",
    ]);
    match op {
        "!" | "!!" => json!({op: [wild_value(rng, d)]}),
        "if" => json!({"if": [wild_value(rng, d), wild_value(rng, d), wild_value(rng, d)]}),
        "substr" => json!({"substr": [wild_value(rng, d), rng.below(4) as i64 - 1]}),
        "missing" => json!({"missing": [format!("source.{}", rng.pick(NUM))]}),
        "missing_some" => json!({"missing_some": [1, ["source.n", "target.s"]]}),
        "some" | "all" | "none" => {
            let f = json!({"var": format!("{}.tags", rng.pick(&["source", "target"]))});
            json!({op: [f, {"==": [{"var": ""}, *rng.pick(&["a", "b"])]}]})
        }
        _ => json!({op: [wild_value(rng, d), wild_value(rng, d)]}),
    }
}

/// A rule: a comparison or a connective at the top, as people write them.
pub fn wild_rule(rng: &mut Rng) -> Value {
    let op = *rng.pick(&["==", "!=", "<", ">=", "and", "or", "!", "in", "===", "some"]);
    match op {
        "!" => json!({"!": [wild_value(rng, 2)]}),
        "some" => wild_value(rng, 1),
        _ => json!({op: [wild_value(rng, 2), wild_value(rng, 2)]}),
    }
}

pub fn wild_page(rules: &[Value]) -> Page {
    let rules: Vec<Value> = rules
        .iter()
        .enumerate()
        .map(|(i, logic)| json!({"id": format!("r{i}"), "name": format!("r{i}"), "logic": logic}))
        .collect();
    parse(
        &json!({
            "format": "rulebench.page/v1", "id": "wild", "name": "wild",
            "source": {"name": "S", "key": ["id"], "rows": [
                {"id": "a", "n": 1, "x": 2.5, "s": "gpt", "version": "3.5", "b": true, "tags": ["a"]},
                {"id": "b", "n": 4, "x": 0.5, "s": "", "version": "10", "b": false, "tags": []},
                {"id": "c", "s": "x y", "version": "2", "tags": ["b", "a"]},
                {"id": "d", "n": -3, "x": 0, "s": "1", "version": "", "b": false, "tags": ["1"]},
                {"id": "e", "n": 0, "x": -0.5, "s": "a", "version": "abc", "tags": ["a,b"]},
                {"id": "f", "n": 7, "x": 1.5e-7, "s": "3", "version": "1e3", "b": true, "tags": ["2"]}]},
            "target": {"name": "T", "key": ["id"], "rows": [
                {"id": "t1", "n": 3, "x": 1.0, "s": "a", "version": "4.0", "b": true, "tags": ["a", "b"]},
                {"id": "t2", "n": 0, "x": -2.0, "s": "gpt", "version": "1", "tags": []},
                {"id": "t3", "n": -1, "x": 2.5, "s": "b", "version": "2", "b": false, "tags": ["b"]},
                {"id": "t4", "n": 123456789, "x": 1234567890123456.8, "s": "", "version": "0.25", "tags": ["a", "b", "c"]}]},
            "rules": rules
        })
        .to_string(),
    )
}

// ---------------------------------------------------------------------------------------------
// Numbers as text
// ---------------------------------------------------------------------------------------------

/// Doubles across JavaScript's notations (integers in full below 10^21, plain decimals
/// from 10^-6, exponents past them), as JavaScript's `String()` writes them.
const NUMBER_TEXTS: &[(f64, &str)] = &[
    (0.1, "0.1"),
    (-2.5, "-2.5"),
    (0.30000000000000004, "0.30000000000000004"),
    (1e-5, "0.00001"),
    (-3.25e-6, "-0.00000325"),
    (1e-6, "0.000001"),
    (1.5e-7, "1.5e-7"),
    (5e-324, "5e-324"),
    (123456789012345.6, "123456789012345.6"),
    (1000000000000000.1, "1000000000000000.1"),
    (4503599627370495.5, "4503599627370495.5"),
    (1e16, "10000000000000000"),
    (12345678901234567000.0, "12345678901234567000"),
    (-9.3e18, "-9300000000000000000"),
    (1e21, "1e+21"),
    (2.5e21, "2.5e+21"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (0.0, "0"),
    (42.0, "42"),
];

/// A page whose rules make text of number fields (`cat`, `in`, `substr`): each source
/// row's number matches one target row's text, JavaScript's.
pub fn number_text_page() -> Page {
    let sources: Vec<Value> = NUMBER_TEXTS
        .iter()
        .enumerate()
        .map(|(i, (x, _))| json!({"id": format!("s{i}"), "x": x}))
        .chain([json!({"id": "none"})])
        .collect();
    let targets: Vec<Value> = NUMBER_TEXTS
        .iter()
        .enumerate()
        .map(|(i, (_, text))| json!({"id": format!("t{i}"), "text": text, "half": 0.5}))
        .collect();
    for (x, text) in NUMBER_TEXTS {
        assert_eq!(
            rulebench_core::jsops::number_to_string(*x),
            *text,
            "the engine writes {x:e}"
        );
    }
    parse(
        &json!({
            "format": "rulebench.page/v1", "id": "number-text", "name": "numbers as text",
            "source": {"name": "S", "key": ["id"], "rows": sources},
            "target": {"name": "T", "key": ["id"], "rows": targets},
            "rules": [
                {"id": "cat", "name": "cat", "logic": {"==": [{"cat": [{"var": "source.x"}]}, {"var": "target.text"}]}},
                {"id": "cat-computed", "name": "cat of a sum", "logic": {"==": [{"cat": ["=", {"+": [{"var": "source.x"}, {"var": "target.half"}]}]}, {"cat": ["=", {"var": "target.text"}]}]}},
                {"id": "in", "name": "in", "logic": {"in": [{"var": "source.x"}, {"var": "target.text"}]}},
                {"id": "substr", "name": "substr", "logic": {"==": [{"substr": [{"var": "source.x"}, 0, 4]}, {"substr": [{"var": "target.text"}, 0, 4]}]}},
                {"id": "substr-end", "name": "substr from the end", "logic": {"==": [{"substr": [{"var": "source.x"}, -3]}, {"substr": [{"var": "target.text"}, -3]}]}}
            ]
        })
        .to_string(),
    )
}

/// A page of remainders of doubles across magnitudes (subnormal to 1e300, both signs,
/// dividends below and far above their divisors): each source row holds `x`, `y` and
/// JavaScript's `x % y`, and the rules say the query's remainder is that one.
pub fn remainder_page(seed: u64) -> Page {
    let mut rng = Rng::new(seed ^ 0x7e3a);
    let mut doubles: Vec<f64> = vec![
        0.1,
        0.3,
        2.5,
        1e300,
        5e-324,
        2.2250738585072014e-308,
        1.152921504606847e18,
        7.0,
        3.0,
        1e-10,
        123456.789,
        0.5,
    ];
    for _ in 0..24 {
        let mantissa = 1.0 + rng.below(1 << 20) as f64 / (1u64 << 20) as f64;
        let exponent = rng.below(120) as i32 - 60;
        doubles.push(mantissa * 2f64.powi(exponent) * if rng.below(3) == 0 { -1.0 } else { 1.0 });
    }
    let mut rows = Vec::new();
    for (i, x) in doubles.iter().enumerate() {
        for y in [
            doubles[(i * 7 + 3) % doubles.len()],
            doubles[(i * 5 + 1) % doubles.len()],
        ] {
            let r = x % y;
            rows.push(
                json!({"id": format!("r{}", rows.len()), "x": x, "y": y, "r": r, "neg": r < 0.0}),
            );
        }
    }
    parse(
        &json!({
            "format": "rulebench.page/v1", "id": "remainders", "name": "remainders of doubles",
            "source": {"name": "S", "key": ["id"], "rows": rows},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "d": 0.0}, {"id": "u", "d": 3.0}]},
            "rules": [
                {"id": "exact", "name": "the remainder", "logic": {"==": [{"%": [{"var": "source.x"}, {"var": "source.y"}]}, {"var": "source.r"}]}},
                {"id": "sign", "name": "its sign", "logic": {"==": [{"<": [{"%": [{"var": "source.x"}, {"var": "source.y"}]}, 0]}, {"var": "source.neg"}]}},
                {"id": "by-target", "name": "by a target's 0 or 3", "logic": {"<": [{"%": [{"var": "source.x"}, {"var": "target.d"}]}, 1]}}
            ]
        })
        .to_string(),
    )
}

// ---------------------------------------------------------------------------------------------
// Partial compilation
// ---------------------------------------------------------------------------------------------

/// A generated page with three rules that translate to no dialect besides its own: a
/// `var` with a default, a `reduce`, and an `appliesWhen` with a `var` default.
pub fn page_with_untranslatable(seed: u64) -> Page {
    let mut rng = Rng::new(seed ^ 0x5eed);
    let mut page: Value = serde_json::from_str(&random_page(seed, 6, 9, 8)).unwrap();
    let rules = page["rules"].as_array_mut().unwrap();
    rules.push(json!({
        "id": "u-default", "name": "var with a default", "required": chance(&mut rng, 40),
        "weight": *rng.pick(&[1.0, 2.0, 0.5]),
        "logic": {">": [{"var": ["source.n", 3]}, 1]},
    }));
    rules.push(json!({
        "id": "u-reduce", "name": "reduce", "required": chance(&mut rng, 30),
        "logic": {">": [{"reduce": [{"var": "target.tags"}, {"+": [{"var": "accumulator"}, 1]}, 0]}, 0]},
    }));
    rules.push(json!({
        "id": "u-applies", "name": "applies by a var default", "weight": 0.5,
        "appliesWhen": {"==": [{"var": ["target.x", 0]}, 1.5]},
        "logic": {"!!": [{"var": "source.s"}]},
    }));
    parse(&page.to_string())
}

/// The page with each of `rules` replaced by a constant (and applying everywhere).
fn with_constant(page: &Page, rules: &[String], value: bool) -> Page {
    let mut v = serde_json::to_value(page).unwrap();
    for rule in v["rules"].as_array_mut().unwrap() {
        if rules.iter().any(|r| rule["id"] == json!(r)) {
            rule["logic"] = json!(value);
            rule.as_object_mut().unwrap().remove("appliesWhen");
            rule.as_object_mut().unwrap().remove("expression");
        }
    }
    parse(&v.to_string())
}

/// What one pair of a partial query says: `None` where it is NULL.
#[derive(Debug, PartialEq)]
struct Open {
    rules: Vec<Option<bool>>,
    score: Option<f64>,
    verdict: Option<i64>,
    reason: Option<String>,
    selection: Option<i64>,
    recommended: Option<String>,
}

/// Runs a page's `--partial --all` query and checks every pair: the rules that translate
/// as the engine computes them, the rules left out NULL, and the score, verdict, reason
/// and selection NULL exactly where the left-out rules, all failing or all passing,
/// give different values (elsewhere the engine's); the recommendation where the
/// source's every verdict and score is known. Returns (pairs, pairs with a NULL
/// verdict).
pub fn partial_differential(page: &Page, dialect: Dialect) -> (usize, usize) {
    let left_out: Vec<String> = rulebench_core::sql::problems(page, dialect)
        .into_iter()
        .map(|e| e.rule.expect("a rule's problem"))
        .collect();
    let mut request = SqlRequest::new(dialect);
    request.all = true;
    request.partial = true;
    let query = App::sql_query_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let data = App::sql_data_of(page, &request).unwrap_or_else(|e| panic!("{e}"));
    let table = match dialect {
        Dialect::Sqlite => run_sqlite(&data, &query),
        other => run_external(other, &data, &query),
    };
    let col = |name: &str| {
        table
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let got: BTreeMap<(String, String), Open> = table
        .rows
        .iter()
        .map(|row| {
            let text = |n: &str| row[col(n)].as_str().map(str::to_owned);
            let open = Open {
                rules: page
                    .rules
                    .iter()
                    .map(|r| {
                        let v = &row[col(&r.id)];
                        (!v.is_null()).then(|| truthy(v))
                    })
                    .collect(),
                score: row[col("score")].as_f64(),
                verdict: row[col("verdict")].as_i64(),
                reason: text("reason"),
                selection: row[col("selection_verdict")].as_i64(),
                recommended: text("recommended_target"),
            };
            (
                (text("source_key").unwrap(), text("target_key").unwrap()),
                open,
            )
        })
        .collect();
    let real = engine_pairs(page);
    let lo = engine_pairs(&with_constant(page, &left_out, false));
    let hi = engine_pairs(&with_constant(page, &left_out, true));
    assert_eq!(got.len(), real.len(), "{}: pairs", page.id);
    // A source is settled when every one of its pairs has a known verdict and score.
    let settled = |source: &str| {
        real.keys()
            .filter(|(s, _)| s == source)
            .all(|k| lo[k].verdict == hi[k].verdict && lo[k].score == hi[k].score)
    };
    let known = |a, b| (a == b).then_some(a);
    let mut open = 0;
    for (key, r) in &real {
        let (l, h) = (&lo[key], &hi[key]);
        assert!(
            l.verdict <= r.verdict && r.verdict <= h.verdict,
            "{}: {key:?}: the engine's verdict {} is not between the bounds {} and {}",
            page.id,
            r.verdict,
            l.verdict,
            h.verdict
        );
        let selection = known(l.selection, h.selection);
        let want = Open {
            rules: page
                .rules
                .iter()
                .zip(&r.rules)
                .map(|(rule, o)| {
                    if left_out.contains(&rule.id) {
                        None
                    } else {
                        *o
                    }
                })
                .collect(),
            score: (l.score == h.score).then_some(l.score),
            verdict: known(l.verdict, h.verdict),
            reason: (l.reason == h.reason).then(|| l.reason.clone()),
            selection,
            recommended: if selection.is_some_and(|s| s > 0) && settled(&key.0) {
                r.recommended.clone()
            } else {
                None
            },
        };
        open += usize::from(want.verdict.is_none());
        assert_eq!(
            got.get(key),
            Some(&want),
            "{} ({}): pair {key:?}\n--- query\n{query}",
            page.id,
            dialect.name()
        );
    }
    (real.len(), open)
}

// ---------------------------------------------------------------------------------------------
// String fields made numbers
// ---------------------------------------------------------------------------------------------

/// Strings a version-like field holds: plain decimals JavaScript and SQL read alike, the
/// empty string (0 to `Number()`, NaN to `parseFloat()`), and text that is no number.
const NUMERIC_TEXTS: &[&str] = &[
    "3.5", "10", "", "2", "-1.25", "1e3", ".5", "7.", "abc", "+4", "007",
];

/// A page whose rules make numbers of string fields: compared with numbers and number
/// fields, with `==` against numbers and booleans, added (`parseFloat`) and subtracted
/// (`Number`); every dialect's query translates them.
pub fn numeric_text_page(seed: u64) -> Page {
    let mut rng = Rng::new(seed ^ 0x7e27);
    let rows = |rng: &mut Rng, prefix: &str, n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| {
                let mut row = serde_json::Map::new();
                row.insert("id".into(), json!(format!("{prefix}-{i}")));
                if !chance(rng, 10) {
                    row.insert("version".into(), json!(rng.pick(NUMERIC_TEXTS)));
                }
                if !chance(rng, 10) {
                    row.insert("n".into(), json!(rng.below(12) as i64 - 2));
                }
                row.insert("flag".into(), json!(chance(rng, 50)));
                Value::Object(row)
            })
            .collect()
    };
    let version =
        |rng: &mut Rng| json!({"var": format!("{}.version", rng.pick(&["source", "target"]))});
    let number = |rng: &mut Rng| match rng.below(3) {
        0 => json!({"var": format!("{}.n", rng.pick(&["source", "target"]))}),
        1 => json!(*rng.pick(&[3.5, 10.0, 0.0, 2.0, -1.25, 1000.0])),
        _ => json!(*rng.pick(&[3, 0, 7])),
    };
    let rules: Vec<Value> = (0..10)
        .map(|i| {
            let v = version(&mut rng);
            let logic = match rng.below(7) {
                0 => json!({*rng.pick(&["<", "<=", ">", ">="]): [v, number(&mut rng)]}),
                1 => json!({*rng.pick(&["<", ">="]): [number(&mut rng), v]}),
                2 => json!({*rng.pick(&["==", "!="]): [v, number(&mut rng)]}),
                3 => json!({"==": [v, {"var": "target.flag"}]}),
                4 => json!({">": [{"+": [v, number(&mut rng)]}, 5]}),
                5 => json!({"<": [{"-": [v, number(&mut rng)]}, 1]}),
                _ => json!({">=": [{"max": [v, number(&mut rng)]}, 3]}),
            };
            json!({"id": format!("r{i}"), "name": format!("r{i}"), "logic": logic,
                   "required": chance(&mut rng, 20)})
        })
        .collect();
    parse(
        &json!({
            "format": "rulebench.page/v1", "id": format!("numeric-text-{seed}"), "name": "numeric text",
            "source": {"name": "S", "key": ["id"], "rows": rows(&mut rng, "s", 5)},
            "target": {"name": "T", "key": ["id"], "rows": rows(&mut rng, "t", 7)},
            "rules": rules,
        })
        .to_string(),
    )
}

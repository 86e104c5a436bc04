//! `rulebench sql`: the query means what the engine computes (pair by pair, in SQLite),
//! and what does not translate is refused with a located error.

mod common;

use common::sql::{
    differential, engine_pairs, page_sql, parse, random_page, run_sqlite, sample_pages, sql_pairs,
};
use rulebench::app::App;
use rulebench::app::sql::SqlRequest;
use rulebench::app::types::Dialect;
use serde_json::json;

#[test]
fn every_sample_page_means_the_same_in_sqlite() {
    let mut pairs = 0;
    for page in sample_pages() {
        pairs += differential(&page, Dialect::Sqlite);
    }
    assert!(pairs > 100, "{pairs} pairs");
}

#[test]
fn generated_pages_mean_the_same_in_sqlite() {
    let mut pairs = 0;
    let mut not_applicable = 0;
    for seed in 1..=150 {
        let page = parse(&random_page(seed, 6, 9, 12));
        pairs += differential(&page, Dialect::Sqlite);
        not_applicable += engine_pairs(&page)
            .values()
            .flat_map(|p| &p.rules)
            .filter(|r| r.is_none())
            .count();
    }
    assert_eq!(pairs, 150 * 6 * 9);
    // Rules that do not apply somewhere (n/a: NULL in SQL, out of the score) are among
    // them.
    assert!(not_applicable > 1000, "{not_applicable} n/a outcomes");
}

/// A page with one rule over typed fields (and a field of two types, `mixed`).
fn page_with(logic: serde_json::Value) -> rulebench::app::types::Page {
    parse(
        &json!({
            "format": "rulebench.page/v1",
            "id": "p",
            "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": [
                {"id": "a", "n": 1, "s": "x", "tags": ["x"], "mixed": 1, "obj": {"deep": 1}, "padded": " 2 ", "tiny": "1e-400"},
                {"id": "b", "n": 2.5, "s": "y", "tags": [], "mixed": "one"}
            ]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "n": 3, "s": "z"}]},
            "rules": [
                {"id": "fine", "name": "Fine", "logic": {">=": [{"var": "source.n"}, 1]}},
                {"id": "the-rule", "name": "The rule", "logic": logic}
            ]
        })
        .to_string(),
    )
}

#[test]
fn what_does_not_translate_is_refused_with_its_place_operator_and_reason() {
    let cases = [
        (
            json!({"merge": [{"var": "source.s"}, 1]}),
            "/rules/1/logic/merge",
            Some("merge"),
            "no SQL translation",
        ),
        (
            json!({"==": [{"substr": [{"var": "source.s"}, {"var": "source.n"}]}, "x"]}),
            "/rules/1/logic/==/0/substr",
            Some("substr"),
            "constant start",
        ),
        (
            json!({">": [{"var": "source.padded"}, 5]}),
            "/rules/1/logic/>",
            Some(">"),
            "makes a number of string field `source.padded`",
        ),
        (
            json!({"==": [{"var": "source.mixed"}, 1]}),
            "/rules/1/logic/==/0/var",
            Some("var"),
            "several types (integer|string)",
        ),
        (
            json!({"==": [{"var": ["source.n", 5]}, 5]}),
            "/rules/1/logic/==/0/var",
            Some("var"),
            "absent field",
        ),
        (
            json!({"<": [{"var": "source.s"}, {"var": "target.s"}]}),
            "/rules/1/logic/<",
            Some("<"),
            "UTF-16",
        ),
        (
            json!({"some": [{"var": "source.tags"}, {"==": [{"var": "source.s"}, "x"]}]}),
            "/rules/1/logic/some/1",
            Some("some"),
            "only the item itself",
        ),
        (
            json!({"all": [{"var": "source.s"}, {"==": [{"var": ""}, "x"]}]}),
            "/rules/1/logic/all/0",
            Some("all"),
            "arrays of strings",
        ),
        (
            json!({"map": [{"var": "source.tags"}, {"var": ""}]}),
            "/rules/1/logic/map",
            Some("map"),
            "no SQL translation",
        ),
        (
            json!({"==": [{"missing": ["source.n", "source.s", "source.tags", "target.n"]}, "y"]}),
            "/rules/1/logic/==",
            Some("=="),
            "only their truth",
        ),
        (
            json!({"==": [{"var": "source.obj"}, 1]}),
            "/rules/1/logic/==/0/var",
            Some("var"),
            "holds objects",
        ),
        (
            json!({"==": [{"var": "source.obj.deep"}, 1]}),
            "/rules/1/logic/==/0/var",
            Some("var"),
            "only a field",
        ),
        (
            json!({"==": [{"var": "source.tags"}, [1, 2]]}),
            "/rules/1/logic/==",
            Some("=="),
            "other items than strings",
        ),
    ];
    for (logic, pointer, operator, why) in cases {
        let page = page_with(logic.clone());
        for dialect in Dialect::ALL {
            let problems = rulebench_core::sql::problems(&page, dialect);
            assert_eq!(problems.len(), 1, "{logic}: {problems:?}");
            let e = &problems[0];
            assert_eq!(e.rule.as_deref(), Some("the-rule"), "{logic}");
            assert_eq!(e.pointer, pointer, "{logic}");
            assert_eq!(e.operator.as_deref(), operator, "{logic}");
            assert!(e.why.contains(why), "{logic}: {}", e.why);
            // The use case refuses the whole query with the same diagnostic.
            let err = App::sql_query_of(&page, &SqlRequest::new(dialect)).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("rule `the-rule`") && text.contains(pointer),
                "{text}"
            );
        }
        // The rule that does translate is reported as such.
        let report = App::sql_rules(&page, Dialect::Duckdb);
        assert_eq!(report[0], ("fine".to_owned(), None));
        assert!(report[1].1.is_some());
    }
    // A rule whose SQL would grow past what a planner takes: divisions by a field
    // nested twelve deep (each repeats its dividend three times).
    let mut deep = json!({"var": "source.n"});
    for _ in 0..12 {
        deep = json!({"/": [deep, {"var": "target.n"}]});
    }
    let page = page_with(json!({">": [deep, 1]}));
    for dialect in Dialect::ALL {
        let problems = rulebench_core::sql::problems(&page, dialect);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/rules/1/logic");
        assert!(problems[0].why.contains("KB of SQL"), "{}", problems[0].why);
    }
    // What some dialects lack: the text of a double with JavaScript's digits (SQLite,
    // Spark). The remainder of doubles translates everywhere.
    let some = [
        (
            json!({"%": [{"var": "source.n"}, {"var": "target.n"}]}),
            "",
            "",
            &[][..],
        ),
        (
            json!({"cat": [{"var": "source.n"}, "!"]}),
            "/rules/1/logic/cat/0",
            "5.0",
            &[Dialect::Sqlite, Dialect::Spark][..],
        ),
    ];
    for (logic, pointer, why, refused) in some {
        let page = page_with(logic.clone());
        for dialect in Dialect::ALL {
            let problems = rulebench_core::sql::problems(&page, dialect);
            if refused.contains(&dialect) {
                assert_eq!(problems.len(), 1, "{logic}: {problems:?}");
                assert_eq!(problems[0].pointer, pointer, "{logic}");
                assert!(
                    problems[0].why.contains(why),
                    "{logic}: {}",
                    problems[0].why
                );
            } else {
                assert!(
                    problems.is_empty(),
                    "{logic} in {}: {problems:?}",
                    dialect.name()
                );
            }
        }
    }
}

/// A string field made a number translates where the dialect's cast reads every string
/// the page holds in it as JavaScript's `Number()` does; else the refusal names one.
#[test]
fn a_string_field_made_a_number_translates_where_its_strings_allow() {
    let page = page_with(json!({">": [{"var": "source.s"}, 5]}));
    for dialect in Dialect::ALL {
        assert!(
            rulebench_core::sql::problems(&page, dialect).is_empty(),
            "{}",
            dialect.name()
        );
    }
    // SQLite reads decimals of 15 digits at most (exponents within ±22), the ones one
    // rounding makes exact without its cast: a string with more is refused there only.
    for (text, digits) in [("0.1234567890123456", true), ("123456789012345", false)] {
        let long = parse(
            &json!({
                "format": "rulebench.page/v1", "id": "p", "name": "P",
                "source": {"name": "S", "key": ["id"], "rows": [{"id": "a", "v": text}]},
                "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
                "rules": [{"id": "r", "name": "R", "logic": {"<": [{"var": "source.v"}, 1]}}]
            })
            .to_string(),
        );
        let sqlite = rulebench_core::sql::problems(&long, Dialect::Sqlite);
        assert_eq!(sqlite.len(), usize::from(digits), "{text}: {sqlite:?}");
        if digits {
            assert!(sqlite[0].why.contains("15 digits at most"), "{sqlite:?}");
            assert!(sqlite[0].why.contains(text), "{sqlite:?}");
        }
        assert!(rulebench_core::sql::problems(&long, Dialect::Duckdb).is_empty());
    }
    let padded = page_with(json!({"==": [{"var": "source.padded"}, 2]}));
    let e = rulebench_core::sql::problems(&padded, Dialect::Duckdb);
    assert!(
        e[0].why
            .contains("which holds \" 2 \": JavaScript's Number() makes it 2"),
        "{e:?}"
    );
    // A number too small (or large) for a cast: PostgreSQL would fail on the row.
    let tiny = page_with(json!({"<": [{"var": "source.tiny"}, 1]}));
    for dialect in [Dialect::Duckdb, Dialect::Postgres, Dialect::Spark] {
        let e = rulebench_core::sql::problems(&tiny, dialect);
        assert!(e[0].why.contains("which holds \"1e-400\""), "{e:?}");
    }
    // parseFloat (`+`) reads "" as NaN, Number() as 0: both translate.
    let sum = page_with(json!({">": [{"+": [{"var": "source.s"}, 1]}, 0]}));
    assert!(rulebench_core::sql::problems(&sum, Dialect::Postgres).is_empty());
}

/// The hint fits what the field holds: one type in every row is asked of a field of
/// several types only.
#[test]
fn a_field_sql_cannot_type_gets_the_hint_for_what_it_holds() {
    let hint = |logic: serde_json::Value| {
        rulebench_core::sql::problems(&page_with(logic), Dialect::Duckdb)[0]
            .hint
            .clone()
            .unwrap()
    };
    assert!(hint(json!({"==": [{"var": "source.mixed"}, 1]})).contains("one type"));
    let objects = hint(json!({"==": [{"var": "source.obj"}, 1]}));
    assert!(
        objects.contains("a field of its own") && !objects.contains("one type"),
        "{objects}"
    );
}

#[test]
fn names_a_dialect_cannot_hold_are_refused() {
    let long = "r".repeat(70);
    let page = parse(
        &json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "a", "ID": 2}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
            "rules": [{"id": long, "name": "Long", "logic": true}]
        })
        .to_string(),
    );
    // PostgreSQL cuts names at 63 bytes: two long rule ids would share a column.
    let e = rulebench_core::sql::problems(&page, Dialect::Postgres);
    assert!(e[0].why.contains("63 bytes"), "{e:?}");
    assert!(rulebench_core::sql::problems(&page, Dialect::Sqlite).is_empty());
    // DuckDB and Spark ignore case in column names: `id` and `ID` are one column.
    let mut request = SqlRequest::new(Dialect::Duckdb);
    request.all = true;
    let err = App::sql_data_of(&page, &request).unwrap_err().to_string();
    assert!(err.contains("`id` and `ID` are one column"), "{err}");
    assert!(App::sql_data_of(&page, &SqlRequest::new(Dialect::Sqlite)).is_ok());
}

#[test]
fn strings_that_must_not_reach_a_terminal_are_spelled_by_code_and_mean_the_same() {
    let hostile = "red\u{1b}[31m\u{202e}txt\r";
    let page = parse(
        &json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": hostile, "s": hostile}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "s": hostile}]},
            "rules": [{"id": "same", "name": "Same", "logic": {"==": [{"var": "source.s"}, hostile]}}]
        })
        .to_string(),
    );
    for dialect in Dialect::ALL {
        let (data, query) = page_sql(&page, dialect);
        for text in [&data, &query] {
            assert!(
                !text
                    .chars()
                    .any(|c| rulebench::app::text::is_unsafe(c) && c != '\n'),
                "{}: {text}",
                dialect.name()
            );
        }
    }
    // And the data still holds the string: the rule passes, keyed by the hostile id.
    let (data, query) = page_sql(&page, Dialect::Sqlite);
    let got = sql_pairs(&page, &run_sqlite(&data, &query));
    assert_eq!(got, engine_pairs(&page));
    assert!(got.values().all(|p| p.rules == vec![Some(true)]));
}

#[test]
fn the_command_line_prints_the_query_the_data_and_which_rules_translate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, query, err) = common::rb(
        &db,
        &[
            "sql",
            "loan-eligibility",
            "--dialect",
            "sqlite",
            "--select",
            "app-001",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        query.contains("WHERE 'id=' || COALESCE(\"id\", 'null') = 'id=app-001'"),
        "{query}"
    );
    let (code, data, err) = common::rb(
        &db,
        &["sql", "loan-eligibility", "--dialect", "sqlite", "--data"],
    );
    assert_eq!(code, 0, "{err}");
    // The query over the data: one source's pairs, with its selection and recommendation.
    let table = run_sqlite(&data, &query);
    assert_eq!(table.rows.len(), 9);
    let page = App::parse_page(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/sample-pages/loan-eligibility.json"
        ))
        .unwrap(),
        "loan",
    )
    .unwrap()
    .0;
    let want: std::collections::BTreeMap<_, _> = engine_pairs(&page)
        .into_iter()
        .filter(|((s, _), _)| s == "id=app-001")
        .collect();
    assert_eq!(sql_pairs(&page, &table), want);

    // Table names are the user's; a bad dialect is a usage error.
    let (code, q, _) = common::rb(
        &db,
        &[
            "sql",
            "llm-chat-clients",
            "--dialect",
            "spark",
            "--all",
            "--source-table",
            "prod.clients",
            "--target-table",
            "models",
            "--overrides-table",
            "ovr",
        ],
    );
    assert_eq!(code, 0);
    assert!(
        q.contains("FROM `prod`.`clients`")
            && q.contains("FROM `models`")
            && q.contains("LEFT JOIN `ovr`"),
        "{q}"
    );
    let (code, _, err) = common::rb(&db, &["sql", "llm-chat-clients", "--dialect", "oracle"]);
    assert_eq!(code, 2);
    assert!(err.contains("oracle"), "{err}");

    // check --sql: every rule of a sample page translates; a rule that does not is named.
    let (code, out, _) = common::rb(&db, &["check", "loan-eligibility", "--sql", "postgres"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("8 of 8 rules translate to postgres SQL"),
        "{out}"
    );
    common::add_rule(
        &db,
        "loan-eligibility",
        &json!({"id": "initial", "name": "Initial", "logic": {"in": ["M", {"merge": [{"var": "source.name"}, "x"]}]}}),
    );
    let (code, out, _) = common::rb(&db, &["check", "loan-eligibility", "--sql", "duckdb"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("8 of 9 rules translate to duckdb SQL"),
        "{out}"
    );
    assert!(
        out.contains("rule `initial`, operator `merge`")
            && out.contains("/rules/8/logic/in/1/merge"),
        "{out}"
    );
    let (code, _, err) = common::rb(&db, &["sql", "loan-eligibility", "--dialect", "duckdb"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("rule `initial`") && err.contains("merge"),
        "{err}"
    );

    // Every refusal at once, in `sql` as in `check --sql`; `--partial` leaves them out.
    common::add_rule(
        &db,
        "loan-eligibility",
        &json!({"id": "defaulted", "name": "Defaulted", "logic": {">": [{"var": ["source.age", 30]}, 18]}}),
    );
    let (code, out, _) = common::rb(&db, &["check", "loan-eligibility", "--sql", "duckdb"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("8 of 10 rules translate to duckdb SQL (`rulebench sql --partial`"),
        "{out}"
    );
    let (code, _, err) = common::rb(&db, &["sql", "loan-eligibility", "--dialect", "duckdb"]);
    assert_eq!(code, 2);
    for needle in ["rule `initial`", "rule `defaulted`", "--partial"] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let (code, q, err) = common::rb(
        &db,
        &[
            "sql",
            "loan-eligibility",
            "--dialect",
            "duckdb",
            "--partial",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("rule `initial`")
            && err.contains("rule `defaulted`")
            && err.contains("left out"),
        "{err}"
    );
    assert!(
        q.contains("-- Not translated (2 of 10 rules")
            && q.contains("CAST(NULL AS BOOLEAN) AS \"initial\""),
        "{q}"
    );
}

/// A page whose own parts do not translate (here a number key) is refused even when
/// every rule translates, and `check --sql` says so.
#[test]
fn check_sql_says_when_the_page_itself_does_not_translate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let page = dir.path().join("page.json");
    std::fs::write(
        &page,
        json!({
            "format": "rulebench.page/v1", "id": "nums", "name": "nums",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": 1.5}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "a"}]},
            "rules": [{"id": "r", "name": "r", "logic": {"==": [{"var": "target.id"}, "a"]}}]
        })
        .to_string(),
    )
    .unwrap();
    let (code, out, _) = common::rb(&db, &["check", page.to_str().unwrap(), "--sql", "duckdb"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "1 of 1 rules translate to duckdb SQL, but the page does not: 1 of its own problems"
        ),
        "{out}"
    );
    assert!(out.contains("key field `id`"), "{out}");
}

#[test]
fn what_the_first_query_got_wrong_means_the_same_now() {
    use common::sql::regression_pages;
    for page in regression_pages() {
        differential(&page, Dialect::Sqlite);
    }
    let pages = regression_pages();
    // Exactly 40% meets partialThreshold 0.4, in the engine and (the differential above)
    // in SQL: 0.6 / 1.5 summed in doubles was 0.39999999999999997, a low score.
    let exact = engine_pairs(pages.iter().find(|p| p.id == "exact-scores").unwrap());
    let pair = |t: &str| &exact[&("id=s1".to_owned(), format!("id={t}"))];
    assert_eq!((pair("a").verdict, pair("a").score), (1, 0.4));
    assert_eq!(pair("a").reason, "partial");
    assert_eq!(
        (pair("b").verdict, pair("b").reason.as_str()),
        (0, "low-score")
    );
    assert_eq!((pair("c").verdict, pair("c").score), (1, 0.8 / 1.5));
    // Keys with `|` and `\` in several fields stay apart, and overrides find them.
    let pipes = pages.iter().find(|p| p.id == "pipe-keys").unwrap();
    let keys: Vec<String> = pipes
        .target
        .rows
        .iter()
        .map(|r| pipes.target.row_key(r))
        .collect();
    assert_eq!(
        keys,
        ["a=x\\|b=y|b=z", "a=x|b=y\\|b=z", "a=back\\\\slash|b=\\|"]
    );
    let p = engine_pairs(pipes);
    let verdict = |t: &str| p[&("id=s1".to_owned(), t.to_owned())].verdict;
    assert_eq!(verdict(&keys[0]), 2, "overridden true (its rule fails)");
    assert_eq!(verdict(&keys[1]), 2, "its rule passes");
    assert_eq!(verdict(&keys[2]), 0, "overridden false (its rule passes)");
    let pairs = engine_pairs(&pages[0]);
    // The recommendation reads the priority as rules see it: `a` has none and takes the
    // default 5; `c` is patched to 0; `b` has 1.
    let pick = |s: &str| {
        pairs[&(s.to_owned(), "id=a".to_owned())]
            .recommended
            .clone()
    };
    assert_eq!(pick("id=s1").as_deref(), Some("a"));
    let rule = |s: &str, t: &str, r: usize| {
        pairs[&(s.to_owned(), t.to_owned())].rules[r].expect("every rule applies")
    };
    assert!(!rule("id=s1", "id=a", 0), "NaN in [\"NaN\"]");
    assert!(
        rule("id=s1", "id=a", 1) && !rule("id=s2", "id=a", 1),
        "missing_some NaN"
    );
    assert!(!rule("id=s1", "id=a", 2), "missing null");
    assert!(rule("id=s1", "id=a", 3), "the default 5 > 1");
    assert!(
        !rule("id=s1", "id=c", 4) && rule("id=s1", "id=a", 4),
        "the patched flag"
    );
    // Every rule passes with weights 0.1, 1.1, 0.1: score 1, full (a running sum of the
    // total weight made it 0.9999999999999998, partial).
    for pair in engine_pairs(&pages[1]).values() {
        assert_eq!(
            (pair.score, pair.verdict, pair.reason.as_str()),
            (1.0, 2, "full")
        );
    }
}

/// The query's header says where it came from: the page, its revision, the rulebench
/// that compiled it, and the policies it bakes in as literals.
#[test]
fn the_query_header_names_its_revision_version_and_policies() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (code, _, err) = common::rb(
        &db,
        &["policy", "set", "loan-eligibility", "fullThreshold=0.9"],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::rb(
        &db,
        &["sql", "loan-eligibility@1", "--dialect", "duckdb", "--all"],
    );
    assert_eq!(code, 0, "{err}");
    let head: Vec<&str> = out.lines().take(3).collect();
    assert!(
        head[0].contains("page loan-eligibility at revision 1")
            && head[0].contains(&format!("by rulebench {}", env!("CARGO_PKG_VERSION"))),
        "{head:?}"
    );
    assert!(
        head[2].contains("fullThreshold=1"),
        "revision 1's policies: {head:?}"
    );
    let (_, now, _) = common::rb(
        &db,
        &["sql", "loan-eligibility", "--dialect", "duckdb", "--all"],
    );
    let head = now.lines().nth(2).unwrap();
    assert!(head.contains("fullThreshold=0.9"), "{head}");
    assert!(now.lines().next().unwrap().contains("at revision 2"));
}

/// `sql --long`: a row per (source, target, rule), each the rule's outcome of the wide
/// shape (which the other tests hold to the engine), on every sample page and a few
/// generated ones; its columns are the same whatever the rules.
#[test]
fn the_long_shape_is_the_wide_one_row_by_row() {
    let mut pages = sample_pages();
    pages.extend((0..4).map(|seed| parse(&random_page(seed, 6, 9, 12))));
    let mut checked = 0;
    for page in pages {
        let request = SqlRequest::new(Dialect::Sqlite);
        let data = App::sql_data_of(&page, &request).unwrap();
        let wide = run_sqlite(&data, &App::sql_query_of(&page, &request).unwrap());
        let long_request = SqlRequest {
            long: true,
            ..SqlRequest::new(Dialect::Sqlite)
        };
        let long = run_sqlite(&data, &App::sql_query_of(&page, &long_request).unwrap());
        assert_eq!(
            long.columns,
            ["source_key", "target_key", "target_id", "rule_id", "passed"],
            "{}",
            page.id
        );
        assert_eq!(
            long.rows.len(),
            wide.rows.len() * page.rules.len(),
            "{}",
            page.id
        );
        let at = |name: &str| wide.columns.iter().position(|c| c == name).unwrap();
        let mut by_key = std::collections::HashMap::new();
        for row in &long.rows {
            by_key.insert(
                (
                    row[0].to_string(),
                    row[1].to_string(),
                    row[3].as_str().unwrap().to_owned(),
                ),
                row[4].clone(),
            );
        }
        for row in &wide.rows {
            for rule in &page.rules {
                let key = (
                    row[at("source_key")].to_string(),
                    row[at("target_key")].to_string(),
                    rule.id.clone(),
                );
                assert_eq!(
                    by_key.get(&key),
                    Some(&row[at(&rule.id)]),
                    "{} {key:?}",
                    page.id
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked} cells");
}

/// The user's names: `--map side.field=column` reads a field from a column named
/// otherwise (key fields too), and a qualified table name (`main.source`) is quoted part
/// by part; the query then means what it means over the page's own names.
#[test]
fn mapped_columns_and_qualified_tables_mean_the_same() {
    let page = sample_pages()
        .into_iter()
        .find(|p| p.id == "llm-chat-clients")
        .unwrap();
    let plain = SqlRequest {
        all: true,
        ..SqlRequest::new(Dialect::Sqlite)
    };
    let data = App::sql_data_of(&page, &plain).unwrap();
    let expected = run_sqlite(&data, &App::sql_query_of(&page, &plain).unwrap());
    // The warehouse's names: snake_case columns, the key field renamed too.
    let renamed = format!(
        "{data}\nALTER TABLE source RENAME COLUMN \"needsStreaming\" TO needs_streaming;\nALTER TABLE target RENAME COLUMN \"supportsStreaming\" TO supports_streaming;\nALTER TABLE target RENAME COLUMN \"id\" TO model_id;\n"
    );
    let mapped = SqlRequest {
        all: true,
        source_table: Some("main.source".into()),
        map: vec![
            "source.needsStreaming=needs_streaming".into(),
            "target.supportsStreaming=supports_streaming".into(),
            "target.id=model_id".into(),
        ],
        ..SqlRequest::new(Dialect::Sqlite)
    };
    let query = App::sql_query_of(&page, &mapped).unwrap();
    assert!(query.contains("FROM \"main\".\"source\""), "{query}");
    // The same mappings from a file (comments and blank lines apart), a `--map` winning
    // over the file's line for the same field.
    let from_file = SqlRequest {
        all: true,
        source_table: Some("main.source".into()),
        map_file: Some((
            "names.map".into(),
            "# the warehouse's names\nsource.needsStreaming = needs_streaming\n\ntarget.supportsStreaming=supports_streaming\ntarget.id=wrong\n".into(),
        )),
        map: vec!["target.id=model_id".into()],
        ..SqlRequest::new(Dialect::Sqlite)
    };
    assert_eq!(App::sql_query_of(&page, &from_file).unwrap(), query);
    let bad_line = SqlRequest {
        map_file: Some(("names.map".into(), "# ok\nsource.needsStreamin=x\n".into())),
        ..SqlRequest::new(Dialect::Sqlite)
    };
    let e = App::sql_query_of(&page, &bad_line).unwrap_err().to_string();
    assert!(
        e.starts_with("names.map:2: --map `source.needsStreamin=x`"),
        "{e}"
    );
    let got = run_sqlite(&renamed, &query);
    assert_eq!(got.columns, expected.columns);
    let mut a = got.rows.clone();
    let mut b = expected.rows.clone();
    a.sort_by_key(|r| format!("{r:?}"));
    b.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(a, b);
    // Mistakes say what and where.
    let bad = |map: &str| {
        let request = SqlRequest {
            map: vec![map.into()],
            ..SqlRequest::new(Dialect::Sqlite)
        };
        App::sql_query_of(&page, &request).unwrap_err().to_string()
    };
    assert!(bad("source.needsStreamin=x").contains("did you mean `needsStreaming`"));
    assert!(bad("sauce.needsStreaming=x").contains("not a side"));
    assert!(bad("needsStreaming").contains("side.field=column"));
    let empty_part = SqlRequest {
        source_table: Some("wh..clients".into()),
        ..SqlRequest::new(Dialect::Sqlite)
    };
    assert!(
        App::sql_query_of(&page, &empty_part)
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
}

/// `sql --partial`: the rules that translate as the engine computes them, the others
/// NULL, and the verdicts NULL exactly where a rule left out could change them.
#[test]
fn partial_compilation_is_null_exactly_where_a_left_out_rule_could_change_it() {
    let (mut pairs, mut open) = (0, 0);
    for seed in 1..=40 {
        let page = common::sql::page_with_untranslatable(seed);
        let (p, o) = common::sql::partial_differential(&page, Dialect::Sqlite);
        pairs += p;
        open += o;
    }
    // Both kinds of pair occur: verdicts the left-out rules cannot change, and others.
    assert!(open > 100 && pairs - open > 100, "{open} open of {pairs}");
}

/// Overrides keyed by the rows' key fields (`--override-keys fields`) mean what the key
/// strings mean: every sample, regression and generated page, pair by pair.
#[test]
fn overrides_keyed_by_their_fields_mean_the_same() {
    use rulebench::app::types::OverrideKeys;
    let by_fields = |r: &mut SqlRequest| r.override_keys = OverrideKeys::Fields;
    let mut pairs = 0;
    for page in common::sql::sample_pages()
        .into_iter()
        .chain(common::sql::regression_pages())
    {
        pairs += common::sql::differential_with(&page, Dialect::Sqlite, by_fields);
    }
    for seed in 1..=40 {
        let page = parse(&common::sql::random_page(seed, 6, 9, 12));
        pairs += common::sql::differential_with(&page, Dialect::Sqlite, by_fields);
    }
    assert!(pairs > 2000, "{pairs}");
    // The table itself: a column per key field, typed, the multi-field keys unescaped.
    let pipes = common::sql::regression_pages()
        .into_iter()
        .find(|p| p.id == "pipe-keys")
        .unwrap();
    let mut request = SqlRequest::new(Dialect::Duckdb);
    request.override_keys = OverrideKeys::Fields;
    let data = App::sql_data_of(&pipes, &request).unwrap();
    assert!(
        data.contains("\"source_id\" VARCHAR,\n  \"target_a\" VARCHAR,\n  \"target_b\" VARCHAR,\n  value BOOLEAN")
            && data.contains("('s1', 'x|b=y', 'z', TRUE"),
        "{data}"
    );
}

/// `sql --overrides` prints the overrides table alone, keyed either way.
#[test]
fn the_overrides_table_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let page = dir.path().join("page.json");
    std::fs::write(
        &page,
        json!({
            "format": "rulebench.page/v1", "id": "ward", "name": "ward",
            "source": {"name": "Patients", "key": ["site", "patientNo"], "rows": [
                {"site": "BER", "patientNo": 1}, {"site": "MUC", "patientNo": 2}]},
            "target": {"name": "Trials", "key": ["id"], "rows": [{"id": "t1"}, {"id": "t2"}]},
            "rules": [{"id": "r", "name": "r", "logic": {"==": [{"var": "target.id"}, "t1"]}}],
            "overrides": [{"sourceKey": "site=BER|patientNo=1", "targetKey": "id=t2", "value": true, "note": "by hand"}]
        })
        .to_string(),
    )
    .unwrap();
    let (code, _, err) = common::rb(&db, &["import", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::rb(
        &db,
        &[
            "sql",
            "ward",
            "--dialect",
            "postgres",
            "--overrides",
            "--override-keys",
            "fields",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("CREATE TABLE \"overrides\" (\n  \"source_site\" TEXT,\n  \"source_patientNo\" BIGINT,\n  \"target_id\" TEXT,")
            && out.contains("('BER', 1, 't2', TRUE, 'by hand')")
            && !out.contains("Patients"),
        "{out}"
    );
    let (code, out, _) = common::rb(&db, &["sql", "ward", "--dialect", "sqlite", "--overrides"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("('site=BER|patientNo=1', 'id=t2', TRUE, 'by hand')"),
        "{out}"
    );
    // The query reads the same table by the same keys.
    let (code, q, _) = common::rb(
        &db,
        &[
            "sql",
            "ward",
            "--dialect",
            "postgres",
            "--override-keys",
            "fields",
        ],
    );
    assert_eq!(code, 0);
    assert!(
        q.contains("ov.\"source_site\" IS NOT DISTINCT FROM o.rb_sk0")
            && q.contains("ov.\"source_patientNo\" IS NOT DISTINCT FROM o.rb_sk1"),
        "{q}"
    );
    let (code, _, err) = common::rb(
        &db,
        &["sql", "ward", "--dialect", "sqlite", "--overrides", "--all"],
    );
    assert_eq!(code, 2, "{err}");
}

/// `sql --dbt DIR`: the model (tables as `ref`/`source`, the rest literal to Jinja) and
/// its properties (every column, tests); names dbt cannot take are refused.
#[test]
fn the_query_as_a_dbt_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    common::add_rule(
        &db,
        "loan-eligibility",
        &json!({"id": "braces", "name": "Braces", "logic": {"!=": [{"var": "source.purpose"}, "{{ x }} {% y %} {# z #}"]}}),
    );
    let models = dir.path().join("models");
    // `sql loan-eligibility --dialect D --dbt models` with more options: (exit, stderr).
    let dbt = |dialect: &str, more: &[&str]| {
        let mut args = vec![
            "sql",
            "loan-eligibility",
            "--dialect",
            dialect,
            "--dbt",
            models.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        let (code, _, err) = common::rb(&db, &args);
        (code, err)
    };
    let (code, err) = dbt(
        "postgres",
        &[
            "--all",
            "--source-table",
            "wh.applicants",
            "--target-table",
            "products",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("wrote the dbt model loan_eligibility_verdicts"),
        "{err}"
    );
    let sql = std::fs::read_to_string(models.join("loan_eligibility_verdicts.sql")).unwrap();
    assert!(
        sql.starts_with("{{ config(materialized='table') }}\n-- rulebench: page loan-eligibility"),
        "{sql}"
    );
    assert!(
        sql.contains("FROM {{ source('wh', 'applicants') }}")
            && sql.contains("FROM {{ ref('products') }}"),
        "{sql}"
    );
    // The constant's braces are printed by Jinja expressions, never opened as tags.
    assert!(
        sql.contains("'{{ '{{' }} x }} {{ '{%' }} y %} {{ '{#' }} z #}'"),
        "{sql}"
    );
    let yml = std::fs::read_to_string(models.join("loan_eligibility_verdicts.yml")).unwrap();
    for needle in [
        "  - name: \"loan_eligibility_verdicts\"\n",
        "      - name: \"braces\"\n        description: \"Braces\"\n",
        "      - name: \"verdict\"\n        description: \"2 full, 1 partial, 0 not compatible\"\n        data_tests:\n          - not_null\n          - accepted_values:\n              values: [0, 1, 2]\n              quote: false\n",
        "      - name: \"recommended_target\"",
    ] {
        assert!(yml.contains(needle), "{needle}\n{yml}");
    }
    // Quotes in ids: no accepted_values test dbt would write as broken SQL; a model
    // name YAML would read as null stays a string.
    common::add_rule(
        &db,
        "loan-eligibility",
        &json!({"id": "o'clock", "name": "O'clock", "logic": {"!!": [{"var": "source.purpose"}]}}),
    );
    let (code, err) = dbt("duckdb", &["--long", "--dbt-model", "null"]);
    assert_eq!(code, 0, "{err}");
    let yml = std::fs::read_to_string(models.join("null.yml")).unwrap();
    assert!(yml.contains("  - name: \"null\"\n"), "{yml}");
    assert!(
        yml.contains("      - name: \"rule_id\"")
            && !yml.contains("accepted_values:\n              values: [\"minimum-age\""),
        "{yml}"
    );
    let (code, _, err) = common::rb(&db, &["rule", "rm", "loan-eligibility", "o'clock"]);
    assert_eq!(code, 0, "{err}");
    // With --partial, a rule left out is described so and the verdicts may be NULL.
    common::add_rule(
        &db,
        "loan-eligibility",
        &json!({"id": "initial", "name": "Initial", "logic": {"in": ["M", {"merge": [{"var": "source.name"}, "x"]}]}}),
    );
    let (code, err) = dbt("duckdb", &["--partial", "--dbt-model", "partial_model"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("rule `initial`") && err.contains("left out"),
        "{err}"
    );
    let yml = std::fs::read_to_string(models.join("partial_model.yml")).unwrap();
    assert!(
        yml.contains("description: \"Initial (not translated: NULL)\"")
            && !yml.contains("name: \"verdict\"\n        description: \"2 full, 1 partial, 0 not compatible\"\n        data_tests:\n          - not_null"),
        "{yml}"
    );
    let (code, _, err) = common::rb(&db, &["rule", "rm", "loan-eligibility", "initial"]);
    assert_eq!(code, 0, "{err}");
    // Named, long, and what dbt cannot name.
    let (code, err) = dbt("duckdb", &["--long", "--dbt-model", "loan_pairs"]);
    assert_eq!(code, 0, "{err}");
    let yml = std::fs::read_to_string(models.join("loan_pairs.yml")).unwrap();
    assert!(
        yml.contains("      - name: \"rule_id\"") && yml.contains("\"braces\"]"),
        "{yml}"
    );
    let (code, err) = dbt("duckdb", &["--source-table", "a.b.c"]);
    assert_eq!(code, 2);
    assert!(err.contains("--source-table `a.b.c`"), "{err}");
    let (code, err) = dbt("duckdb", &["--dbt-model", "no-dash"]);
    assert_eq!(code, 2);
    assert!(err.contains("letters, digits and `_`"), "{err}");
}

/// `sql --data-files DIR`: a Parquet file per table and the script that reads them, for
/// the dialects that read Parquet; the others are told to use `--data`.
#[test]
fn the_data_as_parquet_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let out = dir.path().join("tables");
    let (code, _, err) = common::rb(
        &db,
        &[
            "sql",
            "llm-chat-clients",
            "--dialect",
            "duckdb",
            "--data-files",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote 3 tables as Parquet"), "{err}");
    let load = std::fs::read_to_string(out.join("load.sql")).unwrap();
    let abs = std::fs::canonicalize(&out).unwrap();
    for table in ["source", "target", "overrides"] {
        let file = abs.join(format!("{table}.parquet"));
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(&bytes[..4], b"PAR1", "{table}");
        assert!(
            load.contains(&format!(
                "CREATE TABLE \"{table}\" AS SELECT * FROM read_parquet('{}');",
                file.display()
            )),
            "{load}"
        );
    }
    let (code, _, err) = common::rb(
        &db,
        &[
            "sql",
            "llm-chat-clients",
            "--dialect",
            "postgres",
            "--data-files",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--data"), "{err}");
    // A qualified name is the table the query reads, in its schema; two tables never
    // share a file.
    let (code, _, err) = common::rb(
        &db,
        &[
            "sql",
            "llm-chat-clients",
            "--dialect",
            "duckdb",
            "--data-files",
            out.to_str().unwrap(),
            "--source-table",
            "wh.clients",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let load = std::fs::read_to_string(out.join("load.sql")).unwrap();
    assert!(
        load.contains("CREATE SCHEMA IF NOT EXISTS \"wh\";\nCREATE TABLE \"wh\".\"clients\" AS SELECT * FROM read_parquet(")
            && load.contains("wh.clients.parquet"),
        "{load}"
    );
    let (code, _, err) = common::rb(
        &db,
        &[
            "sql",
            "llm-chat-clients",
            "--dialect",
            "duckdb",
            "--data-files",
            out.to_str().unwrap(),
            "--source-table",
            "same",
            "--target-table",
            "same",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("two tables"), "{err}");
}

/// `--params`: the thresholds bound at run time mean what the engine computes with
/// those thresholds, exact where it is exact (at most nine decimal places) and in
/// double precision where it is not, on every sample, regression and generated page.
#[test]
fn thresholds_bound_as_parameters_mean_what_the_engine_computes() {
    let pages: Vec<_> = common::sql::sample_pages()
        .into_iter()
        .chain(common::sql::regression_pages())
        .chain((1..=6).map(|seed| common::sql::parse(&common::sql::random_page(seed, 8, 9, 10))))
        .collect();
    let mut pairs = 0;
    let mut both_scorings = false;
    for page in &pages {
        let mut request = SqlRequest::new(Dialect::Sqlite);
        request.params = true;
        let query = App::sql_query_of(page, &request).unwrap();
        assert!(query.contains(":full_threshold") && !query.contains("fullThreshold="));
        both_scorings |= query.contains("rb_passed_w");
        for (full, partial) in [
            (1.0, 0.4),
            (0.9, 0.3),
            (0.55, 0.123456789),
            (0.5, 0.1234567891),
            (0.7, 0.7),
            (0.3333333333333333, 0.25),
            (0.0, 0.0),
        ] {
            pairs += common::sql::differential_params(page, Dialect::Sqlite, full, partial);
        }
    }
    // A page whose weights have decimals tallies both ways (units and doubles).
    assert!(both_scorings);
    assert!(pairs > 1000, "{pairs}");
}

/// Remainders of doubles equal JavaScript's to the last bit in SQLite, subnormal to
/// 1e300, by long division in base 2 (SQLite's `%` is of integers).
#[test]
fn remainders_of_doubles_are_exact_in_sqlite() {
    let mut pairs = 0;
    for seed in 1..=3 {
        let page = common::sql::remainder_page(seed);
        assert!(rulebench_core::sql::problems(&page, Dialect::Sqlite).is_empty());
        // Not vacuous: the engine finds every remainder exact.
        assert!(
            engine_pairs(&page)
                .values()
                .all(|p| p.rules[0] == Some(true))
        );
        pairs += differential(&page, Dialect::Sqlite);
    }
    assert!(pairs >= 400, "{pairs}");
}

/// String fields made numbers (`Number()`, `parseFloat()`) in SQLite, which has no
/// regular expressions: the form taken apart with GLOB, read as digits × 10^k.
#[test]
fn string_fields_made_numbers_in_sqlite() {
    let pairs: usize = (1..=20)
        .map(|seed| differential(&common::sql::numeric_text_page(seed), Dialect::Sqlite))
        .sum();
    assert!(pairs >= 20 * 35, "{pairs}");
}

/// SQLite reads every decimal of 15 digits at most (exponents within ±22) to the last
/// bit, whatever the form: signs, points at either end, leading zeros, exponents.
#[test]
fn sqlite_reads_random_decimals_to_the_last_bit() {
    let mut rng = rulebench::app::synth::Rng::new(0xdec);
    let mut rows = Vec::new();
    while rows.len() < 400 {
        let digits: String = (0..1 + rng.below(15))
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect();
        let point = rng.below(digits.len() as u64 + 1) as usize;
        let mut text = match rng.below(3) {
            0 => "-".to_owned(),
            1 => "+".to_owned(),
            _ => String::new(),
        };
        text.push_str(&digits[..point]);
        if point < digits.len() || rng.below(2) == 0 {
            text.push('.');
        }
        text.push_str(&digits[point..]);
        if text.ends_with(['-', '+', '.']) && !text.bytes().any(|c| c.is_ascii_digit()) {
            continue;
        }
        if rng.below(2) == 0 {
            let e = rng.below(45) as i64 - 22;
            text.push_str(&format!("{}{e}", if rng.below(2) == 0 { "e" } else { "E" }));
        }
        if !Dialect::Sqlite.reads_decimal(&text) {
            continue;
        }
        let x: f64 = text.parse().unwrap();
        rows.push(json!({"id": format!("r{}", rows.len()), "v": text, "x": x}));
    }
    let page = parse(
        &json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": rows},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
            "rules": [{"id": "exact", "name": "Exact", "logic": {"==": [{"-": [{"var": "source.v"}, 0]}, {"var": "source.x"}]}}]
        })
        .to_string(),
    );
    assert!(rulebench_core::sql::problems(&page, Dialect::Sqlite).is_empty());
    // Not vacuous: the engine finds every one equal.
    assert!(
        engine_pairs(&page)
            .values()
            .all(|p| p.rules[0] == Some(true))
    );
    assert_eq!(differential(&page, Dialect::Sqlite), 400);
}

/// The selection is made once per profile (the values the rules read): sources that
/// read the same values share it, except where overrides name a source, which is a
/// profile of its own — keyed by strings or by the key fields. The `twins` regression
/// page (run on every engine with the others) holds such sources.
#[test]
fn sources_of_one_profile_share_a_selection_unless_overrides_name_one() {
    use rulebench::app::types::OverrideKeys;
    let page = common::sql::regression_pages()
        .into_iter()
        .find(|p| p.id == "twins")
        .unwrap();
    let engine = engine_pairs(&page);
    let selection = |key: &str| {
        let p = &engine[&(key.to_owned(), "id=t1".to_owned())];
        (p.selection, p.recommended.clone())
    };
    // Not vacuous: the twins `a|1` and `a|2`, `c|1` and `c|2` read the same values and
    // differ only by their overrides; `b|1` reads what `a|1` reads.
    assert_ne!(selection("site=a|no=1"), selection("site=a|no=2"));
    assert_ne!(selection("site=c|no=1"), selection("site=c|no=2"));
    assert_eq!(selection("site=a|no=1"), selection("site=b|no=1"));
    for keys in [OverrideKeys::Strings, OverrideKeys::Fields] {
        let query = App::sql_query_of(&page, &{
            let mut r = SqlRequest::new(Dialect::Sqlite);
            r.all = true;
            r.override_keys = keys;
            r
        })
        .unwrap();
        assert!(query.contains("profiles AS"), "{query}");
        assert_eq!(
            common::sql::differential_with(&page, Dialect::Sqlite, |r| r.override_keys = keys),
            18
        );
    }
}

/// What the review of SQLite's reading of numbers and of the profiles found: a NUL
/// ends SQLite's text functions (JavaScript reads `"5\0"` as NaN); zeros at either end
/// of the digits do not count against the 15; a negative zero is refused (a division
/// by it is `-Infinity`); a field named like the query's own columns is refused; and
/// sources told apart only by case are two profiles under a `NOCASE` column.
#[test]
fn sqlite_numbers_and_profiles_hold_at_their_edges() {
    let page_of = |values: &[&str], logic: serde_json::Value| {
        let rows: Vec<serde_json::Value> = values
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"id": format!("s{i}"), "s": v}))
            .collect();
        parse(
            &json!({
                "format": "rulebench.page/v1", "id": "p", "name": "P",
                "source": {"name": "S", "key": ["id"], "rows": rows},
                "target": {"name": "T", "key": ["id"], "rows": [{"id": "t1", "x": 1}, {"id": "t2", "x": 2}]},
                "rules": [{"id": "r", "name": "R", "logic": logic}]
            })
            .to_string(),
        )
    };
    let numbers = page_of(
        &[
            "5\u{0}",
            "1000000000000000",
            "1.500000000000000000",
            "0.0e99",
            "abc",
            "7",
        ],
        json!({"<": [{"var": "source.s"}, {"*": [{"var": "target.x"}, 4]}]}),
    );
    assert!(rulebench_core::sql::problems(&numbers, Dialect::Sqlite).is_empty());
    assert_eq!(differential(&numbers, Dialect::Sqlite), 12);
    // Not vacuous: the engine reads "5\0" as NaN (no target passes it) and "7" passes t2.
    let engine = engine_pairs(&numbers);
    assert_eq!(
        engine[&("id=s0".into(), "id=t2".into())].rules[0],
        Some(false)
    );
    assert_eq!(
        engine[&("id=s5".into(), "id=t2".into())].rules[0],
        Some(true)
    );
    for dialect in Dialect::ALL {
        let zero = page_of(&["-0", "3"], json!({"<": [{"var": "source.s"}, 1]}));
        let e = rulebench_core::sql::problems(&zero, dialect);
        assert!(e.len() == 1 && e[0].why.contains("\"-0\""), "{e:?}");
    }
    let own = parse(
        &json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "a", "rb_rep": 1}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
            "rules": [{"id": "r", "name": "R", "logic": {"==": [{"var": "source.rb_rep"}, 1]}}]
        })
        .to_string(),
    );
    let e = rulebench_core::sql::problems(&own, Dialect::Duckdb);
    assert!(e.iter().any(|e| e.why.contains("`rb_rep`")), "{e:?}");
    // `A` and `a` under a NOCASE column: the rule tells them apart, so do the profiles.
    let case = page_of(&["A", "a"], json!({"in": ["A", {"var": "source.s"}]}));
    let mut request = SqlRequest::new(Dialect::Sqlite);
    request.all = true;
    let query = App::sql_query_of(&case, &request).unwrap();
    let data = App::sql_data_of(&case, &request).unwrap();
    assert!(data.contains("\"s\" TEXT"), "{data}");
    let data = data.replace("\"s\" TEXT", "\"s\" TEXT COLLATE NOCASE");
    let table = common::sql::run_sqlite(&data, &query);
    assert_eq!(
        common::sql::same_pairs(&case, Dialect::Sqlite, &table, &query),
        4
    );
}

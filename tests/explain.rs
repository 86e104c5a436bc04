//! Explanations in words: the sentences of every operator family (insta snapshots under
//! tests/snapshots/, reviewed to read well), the worked example through
//! `rulebench explain --format json`, and the `explain` command.

mod common;
use common::rb;
use std::path::PathBuf;

use rulebench_core::explain::{Explanation, explain, fmt_value};
use rulebench_core::infix;
use rulebench_core::model::Rule;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Sentences
// ---------------------------------------------------------------------------------------------

fn rule(logic: &Value) -> Rule {
    Rule {
        expression: None,
        warning: None,
        applies_when: None,
        family: None,
        id: "r".into(),
        name: "R".into(),
        required: false,
        weight: 1.0,
        category: "General".into(),
        description: None,
        logic: logic.clone(),
    }
}

/// One case as the snapshot shows it: the rule (infix where it has one), the fields it
/// read, and ✓/✗ with the sentence.
fn case(logic: Value, source: Value, target: Value) -> String {
    let e: Explanation = explain(&rule(&logic), &source, &target);
    let shown = infix::print(&logic).unwrap_or_else(|_| logic.to_string());
    let fields: Vec<String> = e
        .fields
        .iter()
        .map(|(p, v)| {
            if e.missing.contains(p) {
                format!("{p} missing")
            } else {
                format!("{p} = {}", fmt_value(v))
            }
        })
        .collect();
    let mark = if e.passed { "✓" } else { "✗" };
    format!(
        "{shown}\n  with {}\n  {mark} {}\n",
        if fields.is_empty() {
            "no fields".to_owned()
        } else {
            fields.join(", ")
        },
        e.sentence
    )
}

/// Cases of one family, separated by blank lines.
fn cases(list: Vec<(Value, Value, Value)>) -> String {
    list.into_iter()
        .map(|(l, s, t)| case(l, s, t))
        .collect::<Vec<_>>()
        .join("\n")
}

fn v(name: &str) -> Value {
    json!({ "var": name })
}

#[test]
fn equality_sentences() {
    insta::assert_snapshot!(
        "equality",
        cases(vec![
            (
                json!({"==": [v("target.provider"), "openai"]}),
                json!({}),
                json!({"provider": "openai"})
            ),
            (
                json!({"==": [v("target.provider"), "openai"]}),
                json!({}),
                json!({"provider": "meta"})
            ),
            (
                json!({"==": [v("source.country"), v("target.country")]}),
                json!({"country": "Canada"}),
                json!({"country": "USA"})
            ),
            (
                json!({"==": [v("source.country"), v("target.country")]}),
                json!({"country": "USA"}),
                json!({"country": "USA"})
            ),
            (
                json!({"==": [v("source.requiredProvider"), null]}),
                json!({}),
                json!({})
            ),
            (
                json!({"==": [v("source.requiredProvider"), null]}),
                json!({"requiredProvider": "openai"}),
                json!({})
            ),
            (
                json!({"==": [v("source.minContextWindow"), "8192"]}),
                json!({"minContextWindow": 8192}),
                json!({})
            ),
            (
                json!({"===": [v("source.minContextWindow"), "8192"]}),
                json!({"minContextWindow": 8192}),
                json!({})
            ),
            (
                json!({"===": [v("target.provider"), "openai"]}),
                json!({}),
                json!({"provider": "openai"})
            ),
        ])
    );
}

#[test]
fn inequality_sentences() {
    insta::assert_snapshot!(
        "inequality",
        cases(vec![
            (
                json!({"!=": [v("target.provider"), "meta"]}),
                json!({}),
                json!({"provider": "openai"})
            ),
            (
                json!({"!=": [v("target.provider"), "meta"]}),
                json!({}),
                json!({"provider": "meta"})
            ),
            (
                json!({"!=": [v("source.country"), v("target.country")]}),
                json!({"country": "USA"}),
                json!({"country": "USA"})
            ),
            (
                json!({"!=": [v("source.requiredProvider"), null]}),
                json!({}),
                json!({})
            ),
            (
                json!({"!==": [v("target.provider"), "meta"]}),
                json!({}),
                json!({"provider": "meta"})
            ),
            (
                json!({"!==": [v("source.limit"), "5"]}),
                json!({"limit": 5}),
                json!({})
            ),
        ])
    );
}

#[test]
fn relational_and_between_sentences() {
    let t = json!({"contextWindow": 8192});
    let s = json!({"minContextWindow": 32000, "age": 17});
    insta::assert_snapshot!(
        "relational",
        cases(vec![
            (
                json!({"<": [v("target.contextWindow"), 4096]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<": [v("target.contextWindow"), 10000]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<=": [v("target.contextWindow"), 4096]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<=": [v("target.contextWindow"), 8192]}),
                json!({}),
                t.clone()
            ),
            (
                json!({">": [v("target.contextWindow"), 8192]}),
                json!({}),
                t.clone()
            ),
            (
                json!({">": [v("target.contextWindow"), 4096]}),
                json!({}),
                t.clone()
            ),
            (
                json!({">=": [v("target.contextWindow"), v("source.minContextWindow")]}),
                s.clone(),
                t.clone()
            ),
            (json!({">=": [v("source.age"), 18]}), s.clone(), json!({})),
            (json!({"<": [18, v("source.age")]}), s.clone(), json!({})),
            (
                json!({">=": [v("source.income"), 1000]}),
                json!({}),
                json!({})
            ),
        ])
    );
    insta::assert_snapshot!(
        "between",
        cases(vec![
            (
                json!({"<=": [1000, v("target.contextWindow"), 10000]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<=": [1000, v("target.contextWindow"), 4096]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<=": [10000, v("target.contextWindow"), 20000]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<": [8192, v("target.contextWindow"), 10000]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<": [1000, v("target.contextWindow"), 8192]}),
                json!({}),
                t.clone()
            ),
            (
                json!({"<=": [v("target.minAmount"), v("source.requestedAmount"), v("target.maxAmount")]}),
                json!({"requestedAmount": 90000}),
                json!({"minAmount": 5000, "maxAmount": 75000})
            ),
        ])
    );
}

#[test]
fn membership_sentences() {
    insta::assert_snapshot!(
        "in",
        cases(vec![
            (
                json!({"in": [v("target.tier"), ["pro", "max"]]}),
                json!({}),
                json!({"tier": "pro"})
            ),
            (
                json!({"in": [v("target.tier"), ["pro", "max"]]}),
                json!({}),
                json!({"tier": "free"})
            ),
            (
                json!({"in": [v("source.purpose"), v("target.purposes")]}),
                json!({"purpose": "boat"}),
                json!({"purposes": ["car", "home"]})
            ),
            (
                json!({"in": ["vision", v("target.tags")]}),
                json!({}),
                json!({"tags": ["chat", "vision"]})
            ),
            (
                json!({"in": ["vision", v("target.tags")]}),
                json!({}),
                json!({"tags": ["chat", "tools"]})
            ),
            (
                json!({"in": ["pro", v("target.name")]}),
                json!({}),
                json!({"name": "gemini-pro"})
            ),
            (
                json!({"in": ["pro", v("target.name")]}),
                json!({}),
                json!({"name": "gemini-flash"})
            ),
            (
                json!({"in": [v("source.code"), "ABCDEF"]}),
                json!({"code": "CD"}),
                json!({})
            ),
            (
                json!({"!": [{"in": [v("target.tier"), ["free"]]}]}),
                json!({}),
                json!({"tier": "free"})
            ),
            (
                json!({"!": [{"in": ["beta", v("target.tags")]}]}),
                json!({}),
                json!({"tags": ["beta"]})
            ),
        ])
    );
}

#[test]
fn negation_and_truthiness_sentences() {
    insta::assert_snapshot!(
        "not",
        cases(vec![
            (
                json!({"!": [v("target.requiresCollateral")]}),
                json!({}),
                json!({"requiresCollateral": false})
            ),
            (
                json!({"!": [v("target.requiresCollateral")]}),
                json!({}),
                json!({"requiresCollateral": true})
            ),
            (
                json!({"!": [v("source.notes")]}),
                json!({"notes": "vip"}),
                json!({})
            ),
            (
                json!({"!": [{"==": [v("target.provider"), "meta"]}]}),
                json!({}),
                json!({"provider": "meta"})
            ),
            (
                json!({"!": [{">=": [v("source.age"), 18]}]}),
                json!({"age": 30}),
                json!({})
            ),
        ])
    );
    insta::assert_snapshot!(
        "not_not",
        cases(vec![
            (
                json!({"!!": [v("target.supportsVision")]}),
                json!({}),
                json!({"supportsVision": true})
            ),
            (
                json!({"!!": [v("target.supportsVision")]}),
                json!({}),
                json!({"supportsVision": false})
            ),
            (
                json!({"!!": [v("source.maxLatencyMs")]}),
                json!({}),
                json!({})
            ),
            (
                json!({"!!": [v("target.tags")]}),
                json!({}),
                json!({"tags": []})
            ),
            (
                json!({"!!": [v("source.name")]}),
                json!({"name": ""}),
                json!({})
            ),
            (
                json!({"!!": [{"==": [v("target.provider"), "meta"]}]}),
                json!({}),
                json!({"provider": "openai"})
            ),
        ])
    );
}

#[test]
fn and_or_sentences() {
    insta::assert_snapshot!(
        "and_or",
        cases(vec![
            (
                json!({"and": [{">=": [v("source.age"), 18]}, {">": [v("source.credit_score"), 700]}]}),
                json!({"age": 25, "credit_score": 720}),
                json!({})
            ),
            (
                json!({"and": [{">=": [v("source.age"), 18]}, {">": [v("source.credit_score"), 700]}]}),
                json!({"age": 16, "credit_score": 650}),
                json!({})
            ),
            (
                json!({"or": [{"==": [v("source.needsStreaming"), false]}, {"==": [v("target.supportsStreaming"), true]}]}),
                json!({"needsStreaming": true}),
                json!({"supportsStreaming": true})
            ),
            (
                json!({"or": [{"==": [v("source.needsStreaming"), false]}, {"==": [v("target.supportsStreaming"), true]}]}),
                json!({"needsStreaming": true}),
                json!({"supportsStreaming": false})
            ),
            (
                json!({"or": [{"and": [{">=": [v("source.age"), 18]}, {">": [v("source.credit_score"), 700]}]},
                           {"==": [v("source.country"), "USA"]}]}),
                json!({"age": 25, "credit_score": 650, "country": "Canada"}),
                json!({})
            ),
        ])
    );
}

#[test]
fn conditional_sentences() {
    let tiered = json!({"if": [
        {"==": [v("target.tier"), "free"]}, {"<=": [v("source.requests"), 100]},
        {"==": [v("target.tier"), "pro"]}, {"<=": [v("source.requests"), 10000]},
        false]});
    insta::assert_snapshot!(
        "if",
        cases(vec![
            (
                tiered.clone(),
                json!({"requests": 50}),
                json!({"tier": "free"})
            ),
            (
                tiered.clone(),
                json!({"requests": 500}),
                json!({"tier": "free"})
            ),
            (
                tiered.clone(),
                json!({"requests": 500}),
                json!({"tier": "pro"})
            ),
            (tiered, json!({"requests": 5}), json!({"tier": "team"})),
            (
                json!({"?:": [v("source.strict"), {"==": [v("target.supportsCitations"), true]}, true]}),
                json!({"strict": true}),
                json!({"supportsCitations": false})
            ),
            (
                json!({"?:": [v("source.strict"), {"==": [v("target.supportsCitations"), true]}, true]}),
                json!({"strict": false}),
                json!({"supportsCitations": false})
            ),
        ])
    );
}

#[test]
fn missing_sentences() {
    insta::assert_snapshot!(
        "missing",
        cases(vec![
            (
                json!({"!": [{"missing": ["source.age", "source.country"]}]}),
                json!({"age": 30, "country": "USA"}),
                json!({})
            ),
            (
                json!({"!": [{"missing": ["source.age", "source.country"]}]}),
                json!({"age": 30}),
                json!({})
            ),
            (
                json!({"!": [{"missing": ["source.age", "source.country"]}]}),
                json!({}),
                json!({})
            ),
            (json!({"missing": ["target.apiKey"]}), json!({}), json!({})),
            (
                json!({"missing": ["target.apiKey"]}),
                json!({}),
                json!({"apiKey": "k"})
            ),
            (
                json!({"!": [{"missing_some": [1, ["source.email", "source.phone"]]}]}),
                json!({"phone": "555"}),
                json!({})
            ),
            (
                json!({"!": [{"missing_some": [1, ["source.email", "source.phone"]]}]}),
                json!({}),
                json!({})
            ),
            (
                json!({"!": [{"missing_some": [2, ["source.email", "source.phone", "source.address"]]}]}),
                json!({"email": "a@b"}),
                json!({})
            ),
        ])
    );
}

#[test]
fn array_sentences() {
    insta::assert_snapshot!(
        "some_all_none",
        cases(vec![
            (
                json!({"all": [v("target.ports"), {">": [{"var": ""}, 1024]}]}),
                json!({}),
                json!({"ports": [8080, 9090]})
            ),
            (
                json!({"all": [v("target.ports"), {">": [{"var": ""}, 1024]}]}),
                json!({}),
                json!({"ports": [8080, 80, 443]})
            ),
            (
                json!({"all": [v("target.ports"), {">": [{"var": ""}, 1024]}]}),
                json!({}),
                json!({"ports": []})
            ),
            (
                json!({"some": [v("target.tags"), {"==": [{"var": ""}, "vision"]}]}),
                json!({}),
                json!({"tags": ["chat", "vision"]})
            ),
            (
                json!({"some": [v("target.tags"), {"==": [{"var": ""}, "vision"]}]}),
                json!({}),
                json!({"tags": ["chat", "tools"]})
            ),
            (
                json!({"none": [v("target.tags"), {"in": [{"var": ""}, ["beta", "deprecated"]]}]}),
                json!({}),
                json!({"tags": ["chat"]})
            ),
            (
                json!({"none": [v("target.tags"), {"in": [{"var": ""}, ["beta", "deprecated"]]}]}),
                json!({}),
                json!({"tags": ["beta", "chat", "deprecated"]})
            ),
        ])
    );
}

#[test]
fn var_default_sentences() {
    insta::assert_snapshot!(
        "var_default",
        cases(vec![
            (
                json!({">=": [{"var": ["target.contextWindow", 0]}, 1000]}),
                json!({}),
                json!({})
            ),
            (
                json!({">=": [{"var": ["target.contextWindow", 0]}, 1000]}),
                json!({}),
                json!({"contextWindow": 128000})
            ),
            (
                json!({"==": [{"var": ["source.region", "us"]}, v("target.region")]}),
                json!({}),
                json!({"region": "eu"})
            ),
            (
                json!({"var": ["target.enabled", true]}),
                json!({}),
                json!({})
            ),
            (
                json!({"var": "target.supportsVision"}),
                json!({}),
                json!({"supportsVision": false})
            ),
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("x.db");
        Env { _dir: dir, db }
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        rb(&self.db, args)
    }

    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(
            code, 0,
            "rulebench {args:?}\nstdout:\n{out}\nstderr:\n{err}"
        );
        out
    }

    #[track_caller]
    fn fails(&self, args: &[&str], expected: i32) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(
            code, expected,
            "rulebench {args:?}\nstdout:\n{out}\nstderr:\n{err}"
        );
        err
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[test]
fn seed_004_worked_example_reports_both_failing_conditions() {
    let env = Env::new();
    let out = env.ok(&[
        "explain",
        "loan-eligibility",
        "--select",
        "app-001",
        "--target",
        "us-prime-auto",
        "--rule",
        "cross-border",
        "--format",
        "json",
    ]);
    let e = json_of(&out);
    assert_eq!(e["selectionKey"], "id=app-001");
    assert_eq!(e["target"]["id"], "us-prime-auto");
    assert_eq!(e["target"]["verdict"], 0);
    assert_eq!(e["target"]["reason"], "required-fail");
    let rules = e["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    let r = &rules[0];
    assert_eq!(
        (r["id"].as_str(), r["passed"].as_bool()),
        (Some("cross-border"), Some(false))
    );
    assert_eq!(
        r["sentence"],
        "source.credit_score (650) is not above target.foreignMinCreditScore (700); \
         source.country ('Canada') differs from target.country ('USA')"
    );
    assert_eq!(
        r["fields"],
        json!({"source.age": 25, "source.credit_score": 650, "target.foreignMinCreditScore": 700,
               "source.country": "Canada", "target.country": "USA"})
    );
    // The tree carries each comparison with its value: age passes, the other two fail.
    let or = &r["tree"];
    assert_eq!(
        (or["op"].as_str(), or["value"].as_bool()),
        (Some("or"), Some(false))
    );
    let and = &or["children"][0];
    assert_eq!(and["children"][0]["value"], true);
    assert_eq!(and["children"][1]["value"], false);
    assert_eq!(or["children"][1]["value"], false);
    assert!(or["children"][1]["evaluated"].as_bool().unwrap());
}

#[test]
fn explain_json_has_the_documented_shape_and_puts_failing_rules_first() {
    let env = Env::new();
    let e = json_of(&env.ok(&[
        "explain",
        "llm-chat-clients",
        "--select",
        "clientType=web|id=t3-chat",
        "--target",
        "llama-3.3-70b",
        "--format",
        "json",
    ]));
    let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["pageId", "revisionId", "selectionKey", "target", "rules"]
    );
    assert_eq!(e["pageId"], "llm-chat-clients");
    assert_eq!(e["revisionId"], 1);
    let t = &e["target"];
    assert_eq!(
        (
            t["id"].as_str(),
            t["label"].as_str(),
            t["verdict"].as_u64(),
            t["reason"].as_str()
        ),
        (
            Some("llama-3.3-70b"),
            Some("Llama 3.3 70B"),
            Some(1),
            Some("partial")
        )
    );
    assert_eq!(t["score"].as_f64(), Some(0.6));
    assert_eq!(
        t["why"],
        "partial · score 0.60 = 6 / 10 optional weight (full ≥ 1, partial ≥ 0.4)"
    );
    assert!(t.get("override").is_none());
    let rules = e["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 9);
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "tool-calling",
            "structured-outputs",
            "streaming",
            "provider",
            "context-window",
            "open-weights",
            "vision",
            "price-budget",
            "latency-budget"
        ]
    );
    let passed: Vec<bool> = rules
        .iter()
        .map(|r| r["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed.iter().filter(|p| !**p).count(), 2);
    for r in rules {
        for key in [
            "id", "name", "required", "weight", "passed", "value", "error", "sentence", "fields",
            "missing", "tree",
        ] {
            assert!(r.get(key).is_some(), "rule {} has no `{key}`", r["id"]);
        }
    }
    assert_eq!(rules[0]["weight"], 2);
    assert_eq!(
        rules[0]["sentence"],
        "source.needsToolCalling is true, expected false; target.supportsToolCalling is false, expected true"
    );
    // A rule that is a predicate list is shown as one.
    let context = rules.iter().find(|r| r["id"] == "context-window").unwrap();
    assert_eq!(
        context["predicates"],
        json!({"predicates": [{"field": "target.contextWindow", "operator": ">=",
                               "value": {"field": "source.minContextWindow"}}],
               "logical_operator": "AND"})
    );
}

#[test]
fn explain_text_reads_as_sentences() {
    let env = Env::new();
    let out = env.ok(&[
        "explain",
        "llm-chat-clients",
        "--select",
        "t3-chat",
        "--target",
        "llama-3.3-70b",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "llama-3.3-70b (Llama 3.3 70B) for clientType=web|id=t3-chat: ◐ 1 partial · score 0.60 = 6 / 10 optional weight (full ≥ 1, partial ≥ 0.4)"
    );
    assert_eq!(
        lines[1],
        "✗ Tool Calling Support (optional, weight 2): source.needsToolCalling is true, expected false; target.supportsToolCalling is false, expected true"
    );
    assert_eq!(
        lines[2],
        "    fields: source.needsToolCalling = true, target.supportsToolCalling = false"
    );
    assert!(lines[3].starts_with("✗ Structured Outputs (optional, weight 2): "));
    assert!(
        lines[5].starts_with("✓ Streaming Support (required): "),
        "{out}"
    );
    let rule_lines = lines.iter().filter(|l| !l.starts_with(' ')).count();
    assert_eq!(rule_lines, 1 + 9);
    // --tree adds each rule's tree; --rule keeps one rule.
    let out = env.ok(&[
        "explain",
        "loan-eligibility",
        "--select",
        "app-001",
        "--target",
        "us-prime-auto",
        "--rule",
        "Residency or Cross-border Credit",
        "--tree",
    ]);
    assert_eq!(
        out.lines().filter(|l| !l.starts_with(' ')).count(),
        2,
        "{out}"
    );
    for expected in [
        "    rule: source.age >= 18 AND source.credit_score > target.foreignMinCreditScore OR source.country == target.country",
        "      ✗ or → false",
        "            ✓ var source.age → 25",
        "          ✗ > → false",
        "              source.credit_score (650) is not above target.foreignMinCreditScore (700)",
    ] {
        assert!(
            out.lines().any(|l| l == expected),
            "no line `{expected}` in:\n{out}"
        );
    }
}

#[test]
fn overrides_are_explained_with_their_note_and_what_the_rules_give() {
    let env = Env::new();
    let out = env.ok(&[
        "explain",
        "llm-chat-clients",
        "--select",
        "opencode",
        "--target",
        "llama-3.3-70b",
        "--format",
        "json",
    ]);
    let t = &json_of(&out)["target"];
    assert_eq!(
        t["override"],
        json!({"value": true, "note": "Verified by testing team - works with Groq provider"})
    );
    assert_eq!(t["reason"], "override");
    let why = t["why"].as_str().unwrap();
    assert!(
        why.starts_with("override: forced compatible (2) — Verified by testing team - works with Groq provider; without the override: "),
        "{why}"
    );
}

#[test]
fn unknown_pages_rows_and_rules_exit_2_with_a_hint() {
    let env = Env::new();
    let base = [
        "explain",
        "llm-chat-clients",
        "--select",
        "t3-chat",
        "--target",
        "gpt-4.1",
    ];
    env.ok(&base);
    let err = env.fails(
        &[
            "explain",
            "llm-chat-client",
            "--select",
            "t3-chat",
            "--target",
            "gpt-4.1",
        ],
        2,
    );
    assert!(
        err.contains("page `llm-chat-client` not found")
            && err.contains("did you mean `llm-chat-clients`?"),
        "{err}"
    );
    let err = env.fails(
        &[
            "explain",
            "llm-chat-clients",
            "--select",
            "t3-chta",
            "--target",
            "gpt-4.1",
        ],
        2,
    );
    assert!(err.contains("source row `t3-chta` not found"), "{err}");
    let err = env.fails(
        &[
            "explain",
            "llm-chat-clients",
            "--select",
            "t3-chat",
            "--target",
            "gpt-4.2",
        ],
        2,
    );
    assert!(
        err.contains("target row `gpt-4.2` not found") && err.contains("did you mean `gpt-4.1`?"),
        "{err}"
    );
    let mut args = base.to_vec();
    args.extend(["--rule", "tool-caling"]);
    let err = env.fails(&args, 2);
    assert!(
        err.contains("rule `tool-caling` not found (hint: did you mean `tool-calling`?)"),
        "{err}"
    );
    let err = env.fails(&["explain", "llm-chat-clients", "--target", "gpt-4.1"], 2);
    assert!(err.contains("--select"), "{err}");
}

/// Every cell of every sample page is explained; failing rules come first, each has a
/// sentence, and the rules' outcomes are the ones `evaluate` reports.
#[test]
fn every_cell_of_the_sample_pages_is_explained_consistently_with_evaluate() {
    use rulebench::app::App;
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("x.db")).unwrap();
    for page_id in [
        "llm-chat-clients",
        "provider-capabilities",
        "loan-eligibility",
    ] {
        let (page, _) = app.page(page_id).unwrap();
        for s in &page.source.rows {
            let select = page.source.row_key(s);
            let result = app.evaluate(page_id, &select).unwrap().wire();
            for t in result["targets"].as_array().unwrap() {
                let id = t["id"].as_str().unwrap();
                let e = app.explain(page_id, &select, id, None).unwrap();
                assert_eq!(json!(e.target.verdict), t["verdict"]);
                assert_eq!(e.target.reason, t["reason"].as_str().unwrap());
                let mut seen_pass = false;
                let mut seen_not_applicable = false;
                for r in &e.rules {
                    let not_applicable = r.applies == Some(false);
                    assert_eq!(
                        if not_applicable {
                            Value::Null
                        } else {
                            json!(r.passed)
                        },
                        t["rules"][&r.id],
                        "{page_id} {select} {id} {}",
                        r.id
                    );
                    assert!(!r.sentence.is_empty());
                    // Failing first, then passing, then those that do not apply.
                    assert!(
                        !seen_not_applicable || not_applicable,
                        "n/a rules come last"
                    );
                    seen_not_applicable |= not_applicable;
                    assert!(
                        !seen_pass || r.passed || not_applicable,
                        "failing rules come first"
                    );
                    seen_pass |= r.passed;
                    if !r.passed {
                        assert!(!r.sentence.contains("falsy"), "{}: {}", r.id, r.sentence);
                    }
                }
            }
        }
    }
}

/// Regression: `explain` read raw rows while the matrix filled dataset defaults in.
#[test]
fn explain_fills_dataset_defaults_like_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = rulebench::app::App::open(&dir.path().join("d.db")).unwrap();
    let page = r#"{"format": "rulebench.page/v1", "id": "defaults", "name": "D",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s", "needs": true}]},
        "target": {"name": "T", "key": ["id"], "defaults": {"supports": true},
                   "rows": [{"id": "with", "supports": false}, {"id": "without"}]},
        "rules": [{"id": "r", "name": "R", "required": true,
                   "logic": {"==": [{"var": "target.supports"}, {"var": "source.needs"}]}}]}"#;
    app.import(page, "d.json", false).unwrap();
    let result = app.evaluate("defaults", "s").unwrap().wire();
    assert_eq!(
        result["targets"][1]["rules"]["r"],
        json!(true),
        "the default applies"
    );
    let cell = app.explain("defaults", "s", "without", None).unwrap();
    let json = serde_json::to_value(&cell).unwrap();
    assert_eq!(json["rules"][0]["passed"], json!(true), "{json}");
    assert_eq!(
        json["rules"][0]["fields"]["target.supports"],
        json!(true),
        "{json}"
    );
}

/// A computed `var` path (`{"var": {"cat": ["target.", …]}}`) is described by the value
/// it read, not as "missing (null)" (it once was, though the rule passed on it).
#[test]
fn a_computed_var_path_is_described_by_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "comp", "name": "Comp",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s", "field": "provider"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "provider": "openai"}]},
        "rules": [{"name": "Computed", "logic":
            {"==": [{"var": {"cat": ["target.", {"var": "source.field"}]}}, "openai"]}}]
    });
    let file = dir.path().join("comp.json");
    std::fs::write(&file, page.to_string()).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env_remove("RULEBENCH_DB")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["import", file.to_str().unwrap()]);
    let text = run(&["explain", "comp", "--select", "s", "--target", "t"]);
    assert!(!text.contains("missing (null)"), "{text}");
    assert!(text.contains("('openai') equals 'openai'"), "{text}");
}

//! The compatibility engine's scenarios: one test per scenario, named after it.
//!
//! Every test runs on its own temporary database (`App::open` seeds it with the sample
//! pages). Scenarios about a pure policy also call `rulebench_core` directly, but each
//! is demonstrated end to end through `App::evaluate` as well. Expected values are
//! worked out independently of the code under test (by hand for the small pages, by a
//! reference computation in the test for the sample page).

mod common;

use std::fmt::Write as _;
use std::path::PathBuf;

use rulebench::app::synth;
use rulebench::app::{App, AppError};
use rulebench_core::diag::{Code, Diagnostic};
use rulebench_core::engine::{self, Outcome};
use rulebench_core::model::{
    AggregateMode, DevicePolicy, ElseMode, Page, RecommendationStrategy, RequiredMode,
    SelectionPolicy,
};
use rulebench_core::validate::{MAX_DEPTH, MAX_RULE_BYTES, Schema};
use rulebench_core::verdict::{self, Candidate, Reason, RuleWeight, Scoring, Tally};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// The page of the seed's examples (the spec's own page: `common::SEED_CHAT`).
const CHAT: &str = "llm-chat-clients";
/// The seed's selection `{clientType: "web", id: "t3-chat"}` as a key.
const T3: &str = "clientType=web|id=t3-chat";

/// A fresh database in a temporary directory (seeded with the sample pages; its
/// `llm-chat-clients` is the spec's own page, with the spec's rules as written).
fn open() -> (TempDir, App) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut app = App::open(&db_path(&dir)).expect("open a new database");
    common::with_seed_chat(&mut app);
    (dir, app)
}

fn db_path(dir: &TempDir) -> PathBuf {
    dir.path().join("rulebench.db")
}

/// Lowercase hex SHA-256, computed here rather than by the code under test.
fn sha256_hex(text: &str) -> String {
    let mut out = String::new();
    for b in Sha256::digest(text.as_bytes()) {
        write!(out, "{b:02x}").expect("write to a string");
    }
    out
}

fn fingerprint(app: &App) -> Vec<(String, i64)> {
    app.store().fingerprint().expect("fingerprint")
}

#[track_caller]
fn revision(app: &App, page: &str) -> i64 {
    app.page(page).expect("page exists").1
}

#[track_caller]
fn evaluate(app: &mut App, page: &str, selection: &str) -> Value {
    match app.evaluate(page, selection) {
        Ok(result) => result.wire(),
        Err(e) => panic!("evaluate {page} {selection}: {e}"),
    }
}

#[track_caller]
fn import(app: &mut App, page: &Value) -> i64 {
    let text = serde_json::to_string_pretty(page).expect("page serializes");
    match app.import(&text, "test-page.json", false) {
        Ok(imported) => imported.revision,
        Err(e) => panic!("import: {e}"),
    }
}

/// The diagnostics of an `AppError::Invalid`, or a panic naming what came instead.
#[track_caller]
fn diagnostics(err: AppError) -> Vec<Diagnostic> {
    match err {
        AppError::Invalid { diagnostics, .. } => diagnostics,
        other => panic!("expected AppError::Invalid, got {other:?} ({other})"),
    }
}

#[track_caller]
fn find(diags: &[Diagnostic], code: Code) -> &Diagnostic {
    match diags.iter().find(|d| d.code == code) {
        Some(d) => d,
        None => panic!("no `{code}` diagnostic in {diags:#?}"),
    }
}

/// The entry of one target in an evaluation result.
#[track_caller]
fn target<'a>(result: &'a Value, id: &str) -> &'a Value {
    let targets = result["targets"].as_array().expect("targets is an array");
    match targets.iter().find(|t| t["id"] == id) {
        Some(t) => t,
        None => panic!(
            "no target `{id}` in the result of {}",
            result["selectionKey"]
        ),
    }
}

/// (verdict, score, reason) of one target.
#[track_caller]
fn device(result: &Value, id: &str) -> (u64, f64, String) {
    let t = target(result, id);
    (
        t["verdict"].as_u64().expect("verdict is an integer"),
        t["score"].as_f64().expect("score is a number"),
        t["reason"].as_str().expect("reason is a string").to_owned(),
    )
}

#[track_caller]
fn rule_passed(result: &Value, target_id: &str, rule_id: &str) -> bool {
    match target(result, target_id)["rules"][rule_id].as_bool() {
        Some(passed) => passed,
        None => panic!("no boolean for rule `{rule_id}` on `{target_id}`"),
    }
}

fn recommended(result: &Value) -> Option<&str> {
    result.get("recommendedTargetId").and_then(Value::as_str)
}

/// Every stored result page of a selection: (revision_id, page_num, payload).
fn cached_rows(app: &App, page: &str, selection_key: &str) -> Vec<(i64, i64, Value)> {
    let conn = app.store().connection();
    let mut stmt = conn
        .prepare(
            "SELECT revision_id, page_num, payload_json FROM compat_results
             WHERE page_id = ?1 AND selection_hash = ?2 ORDER BY revision_id, page_num",
        )
        .expect("prepare");
    stmt.query_map([page, sha256_hex(selection_key).as_str()], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
    })
    .expect("query")
    .map(|row| {
        let (rev, num, text) = row.expect("row");
        let payload = rulebench_core::result::cache_page_as_wire(&text)
            .expect("payload_json is a result page");
        (rev, num, payload)
    })
    .collect()
}

/// The first place where two JSON values differ, as a pointer and both sides.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys_x: Vec<&String> = x.keys().collect();
            let keys_y: Vec<&String> = y.keys().collect();
            if keys_x != keys_y {
                return Some(format!("{at}: keys {keys_x:?} vs {keys_y:?}"));
            }
            x.iter()
                .find_map(|(k, v)| first_difference(v, &y[k], &format!("{at}/{k}")))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, &format!("{at}/{i}"))),
        (Value::Array(x), Value::Array(y)) => {
            Some(format!("{at}: {} items vs {}", x.len(), y.len()))
        }
        _ if a == b => None,
        _ => Some(format!("{at}: {a} vs {b}")),
    }
}

/// Asserts two (possibly large) results are equal, naming the first difference.
#[track_caller]
fn assert_same(a: &Value, b: &Value, what: &str) {
    if let Some(diff) = first_difference(a, b, "") {
        panic!("{what}: differs at {diff}");
    }
}

/// A result without its `cache` field (to compare a hit with the miss it repeats).
fn without_cache(result: &Value) -> Value {
    let mut r = result.clone();
    r.as_object_mut().expect("object").remove("cache");
    r
}

const SEED_DEVICE_POLICY: &str =
    r#"{"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1.0, "partialThreshold": 0.4}"#;

const SEED_SELECTION_POLICY: &str = r#"{
    "aggregate": {
      "mode": "ANY_DEVICE_FULL_IS_COMPATIBLE",
      "elseMode": "ANY_DEVICE_PARTIAL_IS_PARTIAL"
    },
    "recommendation": {
      "strategy": "HIGHEST_VERDICT_THEN_SCORE"
    }
  }"#;

/// The seed's rule "Create feature rule for streaming support", verbatim.
const SEED_STREAMING_RULE: &str = r#"{
    "name": "Streaming Support",
    "required": true,
    "weight": 1,
    "category": "Core Features",
    "logic": {
      "or": [
        { "==": [{ "var": "source.needsStreaming" }, false] },
        {
          "and": [
            { "==": [{ "var": "source.needsStreaming" }, true] },
            { "==": [{ "var": "target.supportsStreaming" }, true] }
          ]
        }
      ]
    }
  }"#;

/// The seed's rule "Create feature rule for tool calling", verbatim.
const SEED_TOOL_RULE: &str = r#"{
    "name": "Tool Calling Support",
    "required": false,
    "weight": 2,
    "category": "Advanced Features",
    "logic": {
      "or": [
        { "==": [{ "var": "source.needsToolCalling" }, false] },
        {
          "and": [
            { "==": [{ "var": "source.needsToolCalling" }, true] },
            { "==": [{ "var": "target.supportsToolCalling" }, true] }
          ]
        }
      ]
    }
  }"#;

/// The seed's rule "Create provider-specific rule", verbatim.
const SEED_PROVIDER_RULE: &str = r#"{
    "name": "OpenAI Provider Required",
    "required": true,
    "weight": 1,
    "category": "Provider",
    "logic": {
      "==": [{ "var": "target.provider" }, "openai"]
    }
  }"#;

// ----- The small verdict page: 5 rules, 2 required (Streaming Support, Tool Calling) -----

/// What a target of the small page supports:
/// [streaming, tool calling, structured outputs, vision, caching].
type Caps = [bool; 5];
const CAPS: [&str; 5] = [
    "Streaming",
    "ToolCalling",
    "StructuredOutputs",
    "Vision",
    "Caching",
];
// Optional weights: structured outputs 2, vision 1, caching 2 (total 5).
/// Every rule passes: score 5/5 = 1.0.
const FULL: Caps = [true, true, true, true, true];
/// Structured outputs + caching: 4/5 = 0.8.
const EIGHTY: Caps = [true, true, true, false, true];
/// Structured outputs + vision: 3/5 = 0.6.
const PARTIAL: Caps = [true, true, true, true, false];
/// Vision only: 1/5 = 0.2.
const LOW: Caps = [true, true, false, true, false];
/// Streaming Support (required) fails; every optional rule passes.
const NO_STREAM: Caps = [false, true, true, true, true];
/// Tool Calling (required) fails; every optional rule passes.
const NO_TOOLS: Caps = [true, false, true, true, true];

/// A rule in the seed's shape: a need of the source met by a capability of the target.
fn need_rule(id: &str, name: &str, required: bool, weight: u32, cap: &str) -> Value {
    let need = format!("source.needs{cap}");
    let supports = format!("target.supports{cap}");
    json!({
        "id": id, "name": name, "required": required, "weight": weight,
        "category": "Features",
        "logic": {"or": [
            {"==": [{"var": need}, false]},
            {"and": [{"==": [{"var": need}, true]}, {"==": [{"var": supports}, true]}]}
        ]}
    })
}

fn five_rules() -> Vec<Value> {
    vec![
        need_rule("streaming", "Streaming Support", true, 1, CAPS[0]),
        need_rule("tool-calling", "Tool Calling", true, 1, CAPS[1]),
        need_rule(
            "structured-outputs",
            "Structured Outputs",
            false,
            2,
            CAPS[2],
        ),
        need_rule("vision", "Vision Input", false, 1, CAPS[3]),
        need_rule("caching", "Prompt Caching", false, 2, CAPS[4]),
    ]
}

/// A page with one source (t3-chat, which needs everything) and the given targets,
/// the five rules and the seed's policies.
fn small_page(id: &str, targets: &[(&str, Caps)]) -> Value {
    let mut source = Map::new();
    source.insert("id".into(), json!("t3-chat"));
    source.insert("displayName".into(), json!("t3.chat"));
    for cap in CAPS {
        source.insert(format!("needs{cap}"), json!(true));
    }
    let rows: Vec<Value> = targets
        .iter()
        .map(|(tid, caps)| {
            let mut row = Map::new();
            row.insert("id".into(), json!(tid));
            row.insert("displayName".into(), json!(tid.to_uppercase()));
            row.insert("provider".into(), json!("acme"));
            for (cap, on) in CAPS.iter().zip(caps) {
                row.insert(format!("supports{cap}"), json!(on));
            }
            Value::Object(row)
        })
        .collect();
    json!({
        "format": "rulebench.page/v1",
        "id": id,
        "name": format!("Verdicts ({id})"),
        "source": {"name": "Chat clients", "key": ["id"], "label": "displayName",
                   "rows": [Value::Object(source)]},
        "target": {"name": "LLM models", "key": ["id"], "label": "displayName",
                   "summary": ["provider"], "rows": rows},
        "rules": five_rules(),
        "devicePolicy": serde_json::from_str::<Value>(SEED_DEVICE_POLICY).unwrap(),
        "selectionPolicy": serde_json::from_str::<Value>(SEED_SELECTION_POLICY).unwrap(),
        "overrides": []
    })
}

/// Imports a small page and evaluates its only selection.
fn small_result(app: &mut App, id: &str, targets: &[(&str, Caps)]) -> Value {
    import(app, &small_page(id, targets));
    evaluate(app, id, "t3-chat")
}

/// The device policy's view of the five rules, for the pure verdict functions.
fn five_weights() -> Vec<RuleWeight> {
    [
        (true, 1.0),
        (true, 1.0),
        (false, 2.0),
        (false, 1.0),
        (false, 2.0),
    ]
    .iter()
    .map(|&(required, weight)| RuleWeight { required, weight })
    .collect()
}

/// The verdict of outcomes (every rule applies) under a policy.
fn verdict_of(
    policy: &DevicePolicy,
    weights: &[RuleWeight],
    passed: &[bool],
) -> verdict::DeviceVerdict {
    let scoring = Scoring::new(policy, weights);
    verdict::device_verdict(&scoring, &scoring.tally(passed), None)
}

fn seed_device_policy() -> DevicePolicy {
    DevicePolicy {
        required_mode: RequiredMode::AnyRequiredFailIs0,
        full_threshold: 1.0,
        partial_threshold: 0.4,
    }
}

fn seed_selection_policy() -> SelectionPolicy {
    serde_json::from_str(SEED_SELECTION_POLICY).expect("the seed's selection policy parses")
}

// ----- A reference computation of the verdict rules (README, Verdicts), independent of the code under test -----

/// (verdict, score, reason) by the contract, from a target's rule outcomes.
fn reference_device(
    page: &Page,
    passed: &[bool],
    overridden: Option<bool>,
) -> (u64, f64, &'static str) {
    let (mut pass_w, mut total_w, mut required_failed) = (0.0, 0.0, false);
    for (rule, &ok) in page.rules.iter().zip(passed) {
        if rule.required {
            required_failed |= !ok;
        } else {
            total_w += rule.weight;
            if ok {
                pass_w += rule.weight;
            }
        }
    }
    let score = if total_w > 0.0 { pass_w / total_w } else { 1.0 };
    let p = &page.device_policy;
    match overridden {
        Some(true) => (2, score, "override"),
        Some(false) => (0, score, "override"),
        None if required_failed => (0, score, "required-fail"),
        None if score >= p.full_threshold => (2, score, "full"),
        None if score >= p.partial_threshold => (1, score, "partial"),
        None => (0, score, "low-score"),
    }
}

// =======================================================================================
// Requirement: Feature Rules
// =======================================================================================

#[test]
fn create_feature_rule_for_streaming_support() {
    let (_dir, mut app) = open();
    let rev0 = revision(&app, CHAT);
    let before = fingerprint(&app);

    // The system MUST validate the JSONLogic syntax: broken JSON and a broken operator
    // are both rejected, with a location, and nothing is stored.
    let broken = SEED_STREAMING_RULE.replacen("false] },", "false },", 1);
    let diags = diagnostics(app.add_rule(CHAT, &broken, "rule.json", false).unwrap_err());
    let d = find(&diags, Code::JsonSyntax);
    assert!(d.line.is_some() && d.column.is_some(), "{d}");
    let bad_op = SEED_STREAMING_RULE.replacen("\"and\"", "\"adn\"", 1);
    let diags = diagnostics(app.add_rule(CHAT, &bad_op, "rule.json", false).unwrap_err());
    assert_eq!(
        find(&diags, Code::UnknownOperator).pointer,
        "/logic/or/1/adn"
    );
    assert_eq!(fingerprint(&app), before);
    assert_eq!(revision(&app, CHAT), rev0);

    // The seed's rule is accepted and stored.
    let (rule, rev, warnings) = app
        .add_rule(CHAT, SEED_STREAMING_RULE, "rule.json", false)
        .expect("the seed's streaming rule is valid");
    assert!(warnings.iter().all(|d| !d.is_error()));
    assert_eq!(rule.id, "streaming-support", "id derived from the name");
    assert_eq!(rev, rev0 + 1);
    assert_eq!(revision(&app, CHAT), rev0 + 1);

    // Stored with pageId and organizationId scope.
    let (page_id, org_id, name, required, weight, category, logic): (
        String,
        String,
        String,
        bool,
        f64,
        String,
        String,
    ) = app
        .store()
        .connection()
        .query_row(
            "SELECT page_id, organization_id, name, required, weight, category, logic_json
             FROM rules WHERE id = 'streaming-support'",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .expect("a rules row for the new rule");
    assert_eq!(page_id, CHAT);
    assert_eq!(org_id, "acme", "the page's organization");
    assert_eq!(name, "Streaming Support");
    assert!(required);
    assert_eq!(weight, 1.0);
    assert_eq!(category, "Core Features");
    let seed: Value = serde_json::from_str(SEED_STREAMING_RULE).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&logic).unwrap(),
        seed["logic"]
    );

    // It is part of the page and takes part in evaluation; it says the same as the sample
    // page's own streaming rule for every model (o1-pro does not stream).
    let (page, _) = app.page(CHAT).unwrap();
    let (_, stored) = page.rule("streaming-support").expect("rule on the page");
    assert_eq!(stored.logic, seed["logic"]);
    let result = evaluate(&mut app, CHAT, T3);
    for t in result["targets"].as_array().unwrap() {
        assert_eq!(
            t["rules"]["streaming-support"], t["rules"]["streaming"],
            "{}",
            t["id"]
        );
    }
    assert!(!rule_passed(&result, "o1-pro", "streaming-support"));
    assert!(rule_passed(&result, "gpt-4.1", "streaming-support"));

    // A page without an organization belongs to the local organization.
    import(&mut app, &small_page("local-page", &[("m1", FULL)]));
    app.add_rule("local-page", SEED_STREAMING_RULE, "rule.json", false)
        .expect("valid on the small page too");
    let org: String = app
        .store()
        .connection()
        .query_row(
            "SELECT organization_id FROM rules WHERE page_id = 'local-page' AND id = 'streaming-support'",
            [],
            |r| r.get(0),
        )
        .expect("row scoped to local-page");
    assert_eq!(org, "local");
}

#[test]
fn create_feature_rule_for_tool_calling() {
    let (_dir, mut app) = open();
    let rev0 = revision(&app, CHAT);
    let broken = SEED_TOOL_RULE.replacen("\"or\"", "\"orr\"", 1);
    let diags = diagnostics(app.add_rule(CHAT, &broken, "rule.json", false).unwrap_err());
    let d = find(&diags, Code::UnknownOperator);
    assert_eq!(d.pointer, "/logic/orr");
    assert_eq!(revision(&app, CHAT), rev0);

    let (rule, rev, _) = app
        .add_rule(CHAT, SEED_TOOL_RULE, "rule.json", false)
        .expect("the seed's tool calling rule is valid");
    assert_eq!(rule.id, "tool-calling-support");
    assert!(!rule.required);
    assert_eq!(rule.weight, 2.0);
    assert_eq!(rule.category, "Advanced Features");
    assert_eq!(rev, rev0 + 1);

    let row: (String, String, bool, f64) = app
        .store()
        .connection()
        .query_row(
            "SELECT page_id, organization_id, required, weight FROM rules WHERE id = 'tool-calling-support'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("a rules row for the new rule");
    assert_eq!(row, (CHAT.to_owned(), "acme".to_owned(), false, 2.0));

    // The stored rule is evaluated: Llama 3.3 70B has no tool calling.
    let result = evaluate(&mut app, CHAT, T3);
    for t in result["targets"].as_array().unwrap() {
        assert_eq!(
            t["rules"]["tool-calling-support"], t["rules"]["tool-calling"],
            "{}",
            t["id"]
        );
    }
    assert!(!rule_passed(
        &result,
        "llama-3.3-70b",
        "tool-calling-support"
    ));
    assert!(rule_passed(
        &result,
        "claude-3.7-sonnet",
        "tool-calling-support"
    ));
}

#[test]
fn create_provider_specific_rule() {
    // The logic alone: only provider "openai" passes.
    let compiled =
        engine::compile(&serde_json::from_str::<Value>(SEED_PROVIDER_RULE).unwrap()["logic"])
            .expect("compiles");
    let src = json!({"clientType": "enterprise", "id": "contoso-copilot"});
    for (target_row, pass) in [
        (json!({"provider": "openai"}), true),
        (json!({"provider": "anthropic"}), false),
        (json!({"provider": "OpenAI"}), false),
        (json!({}), false),
    ] {
        assert_eq!(
            engine::evaluate_rows(&compiled.logic, &src, &target_row).passed(),
            pass,
            "{target_row}"
        );
    }

    // On the sample page, through the app.
    let (_dir, mut app) = open();
    let (rule, _, _) = app
        .add_rule(CHAT, SEED_PROVIDER_RULE, "rule.json", false)
        .expect("valid");
    assert_eq!(rule.id, "openai-provider-required");
    let result = evaluate(&mut app, CHAT, T3);
    let mut openai = 0;
    for t in result["targets"].as_array().unwrap() {
        let is_openai = t["provider"] == "openai";
        assert_eq!(
            t["rules"]["openai-provider-required"],
            json!(is_openai),
            "{}",
            t["id"]
        );
        if is_openai {
            openai += 1;
        } else {
            // A required rule: every other provider is out.
            assert_eq!(t["verdict"], 0, "{}", t["id"]);
            assert_eq!(t["reason"], "required-fail", "{}", t["id"]);
        }
    }
    assert_eq!(openai, 4, "gpt-4.1, gpt-4o-mini, o3, o1-pro");
    assert_eq!(device(&result, "gpt-4.1").0, 2);
    assert_eq!(device(&result, "claude-3.7-sonnet").0, 0);
    assert_eq!(recommended(&result), Some("gpt-4.1"));
}

#[test]
fn rule_validation() {
    let (_dir, mut app) = open();
    let (page, rev0) = app.page(CHAT).unwrap();
    let schema = Schema::of(&page);
    let before = fingerprint(&app);
    let add = |app: &mut App, logic: &Value| -> Vec<Diagnostic> {
        let text = serde_json::to_string_pretty(&json!({"name": "Probe", "logic": logic})).unwrap();
        diagnostics(
            app.add_rule(CHAT, &text, "probe.json", false)
                .expect_err("an invalid rule is rejected"),
        )
    };

    // A valid rule raises no error.
    let seed: Value = serde_json::from_str(SEED_STREAMING_RULE).unwrap();
    let diags = rulebench_core::check::logic(&seed["logic"], &schema);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:#?}");

    // 1. Valid JSONLogic operators are used (with a did-you-mean hint).
    let logic = json!({"or": [
        {"==": [{"var": "source.needsStreaming"}, false]},
        {"adn": [{"==": [{"var": "source.needsStreaming"}, true]},
                 {"==": [{"var": "target.supportsStreaming"}, true]}]}
    ]});
    let diags = add(&mut app, &logic);
    let d = find(&diags, Code::UnknownOperator);
    assert!(d.is_error());
    assert_eq!(d.pointer, "/logic/or/1/adn");
    assert!(d.message.contains("adn"), "{d}");
    assert_eq!(d.hint.as_deref(), Some("did you mean `and`?"));
    assert!(d.line.is_some(), "located in the rule text: {d}");
    let diags = rulebench_core::check::logic(
        &json!({"some": [[1], {"===": [{"var": ""}, 1]}], "x": 1}),
        &schema,
    );
    assert!(
        diags.iter().all(|d| d.code != Code::UnknownOperator),
        "{diags:#?}"
    );
    let diags =
        rulebench_core::check::logic(&json!({"lenght": [{"var": "target.provider"}]}), &schema);
    assert_eq!(
        find(&diags, Code::UnknownOperator).hint.as_deref(),
        Some("did you mean `length`?")
    );

    // 2. Referenced variables exist in the source or target schema (did-you-mean).
    let diags = add(
        &mut app,
        &json!({"==": [{"var": "target.supportStreaming"}, true]}),
    );
    let d = find(&diags, Code::UnknownField);
    assert_eq!(d.pointer, "/logic/==/0/var");
    assert!(d.message.contains("supportStreaming"), "{d}");
    assert_eq!(
        d.hint.as_deref(),
        Some("did you mean `target.supportsStreaming`?")
    );
    let diags = add(
        &mut app,
        &json!({"==": [{"var": "source.needStreaming"}, true]}),
    );
    assert_eq!(
        find(&diags, Code::UnknownField).hint.as_deref(),
        Some("did you mean `source.needsStreaming`?")
    );
    // A source field looked up on the target is not in the target schema.
    let diags = add(
        &mut app,
        &json!({"==": [{"var": "target.needsStreaming"}, true]}),
    );
    assert_eq!(find(&diags, Code::UnknownField).pointer, "/logic/==/0/var");
    // A variable outside {source, target}.
    let diags = add(&mut app, &json!({"==": [{"var": "needsStreaming"}, true]}));
    assert_eq!(
        find(&diags, Code::VarPrefix).hint.as_deref(),
        Some("did you mean `source.needsStreaming`?")
    );
    // In a page file, the pointer is into the page and the position into the text.
    let mut bad_page = small_page("bad-vars", &[("m1", FULL)]);
    bad_page["rules"][2]["logic"] =
        json!({"==": [{"var": "target.supportsStructuredOutput"}, true]});
    let text = serde_json::to_string_pretty(&bad_page).unwrap();
    let diags = diagnostics(app.import(&text, "bad-vars.json", false).unwrap_err());
    let d = find(&diags, Code::UnknownField);
    assert_eq!(d.pointer, "/rules/2/logic/==/0/var");
    assert_eq!(
        d.hint.as_deref(),
        Some("did you mean `target.supportsStructuredOutputs`?")
    );
    let (line, _) = (d.line.expect("line"), d.column.expect("column"));
    assert!(
        text.lines()
            .nth(line - 1)
            .unwrap()
            .contains("supportsStructuredOutput\""),
        "line {line} of the page text"
    );
    assert!(
        App::check_text(&text)
            .iter()
            .any(|d| d.code == Code::UnknownField)
    );

    // 3. No infinite loops or unsafe operations: nesting and size limits, reported
    //    with which limit and a JSON pointer.
    assert_eq!(MAX_DEPTH, 64);
    // Nesting in the array form the seed's rules use (`{"!": [x]}`) and in the unary form
    // (`{"!": x}`).
    let nest = |levels: usize, array_form: bool| {
        let mut logic = json!({"var": "source.needsStreaming"});
        for _ in 0..levels {
            logic = if array_form {
                json!({"!": [logic]})
            } else {
                json!({"!": logic})
            };
        }
        logic
    };
    let rule_text = |logic: &Value| json!({"name": "Probe", "logic": logic}).to_string();
    for array_form in [true, false] {
        // 60 levels are fine, as a value and as the text of a rule.
        assert!(
            rulebench_core::check::logic(&nest(60, array_form), &schema)
                .iter()
                .all(|d| !d.is_error()),
            "60 levels (array form: {array_form})"
        );
        App::parse_rule(&page, &rule_text(&nest(60, array_form)), "probe.json")
            .unwrap_or_else(|e| panic!("60 levels (array form: {array_form}): {e}"));
        // Deeper than 64 is refused, naming the limit and where.
        let diags = rulebench_core::check::logic(&nest(MAX_DEPTH + 10, array_form), &schema);
        let d = find(&diags, Code::TooDeep);
        assert!(d.message.contains("64"), "names the limit: {d}");
        let prefix = if array_form { "/!/0/!/0/!/0" } else { "/!/!/!" };
        assert!(d.pointer.starts_with(prefix), "points into the rule: {d}");
        assert_eq!(
            diags.iter().filter(|d| d.code == Code::TooDeep).count(),
            1,
            "reported once"
        );
    }
    let diags = add(&mut app, &nest(MAX_DEPTH + 10, false));
    let d = find(&diags, Code::TooDeep);
    assert!(d.message.contains("64"), "names the limit: {d}");
    assert!(
        d.pointer.starts_with("/logic/!/!/!"),
        "points into the rule: {d}"
    );

    let list = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| format!("provider-{i:06}-{}", "x".repeat(40)))
            .collect()
    };
    let small = json!({"in": [{"var": "target.provider"}, list(500)]});
    assert!(small.to_string().len() < MAX_RULE_BYTES);
    assert!(
        rulebench_core::check::logic(&small, &schema)
            .iter()
            .all(|d| !d.is_error())
    );
    App::parse_rule(&page, &rule_text(&small), "probe.json").expect("under 64 KB");
    let big = json!({"in": [{"var": "target.provider"}, list(2_000)]});
    assert!(big.to_string().len() > 64 * 1024);
    let diags = add(&mut app, &big);
    let d = find(&diags, Code::RuleTooLarge);
    assert!(d.message.contains("64 KB"), "names the limit: {d}");
    assert!(d.pointer.starts_with("/logic"), "has a pointer: {d}");

    // Nothing invalid was stored.
    assert_eq!(fingerprint(&app), before);
    assert_eq!(revision(&app, CHAT), rev0);

    // The limit is the validator's 64 levels, whatever the path: the deepest rule it
    // accepts is accepted as the text of a rule and inside a page file too ...
    let deepest = (1..=MAX_DEPTH)
        .rev()
        .find(|&n| {
            rulebench_core::check::logic(&nest(n, true), &schema)
                .iter()
                .all(|d| !d.is_error())
        })
        .expect("some depth is accepted");
    assert!(deepest >= 60, "about 64 levels: {deepest}");
    let at_limit = nest(deepest, true);
    if let Err(e) = App::parse_rule(&page, &rule_text(&at_limit), "probe.json") {
        panic!("a rule of {deepest} nested operators is refused as a rule: {e}");
    }
    let mut deep_page = small_page("deep-rule", &[("m1", FULL)]);
    deep_page["rules"][0]["logic"] = at_limit;
    if let Err(e) = App::parse_page(&deep_page.to_string(), "deep-rule.json") {
        panic!("a rule of {deepest} nested operators is refused in a page file: {e}");
    }
    // ... and a rule nested deeper than 64 levels in the array form, added as text, is
    // reported as the depth limit with a pointer (not as a JSON syntax error).
    let diags = add(&mut app, &nest(MAX_DEPTH + 10, true));
    let d = find(&diags, Code::TooDeep);
    assert!(d.message.contains("64"), "names the limit: {d}");
    assert!(
        d.pointer.starts_with("/logic/!/0/!/0/!/0"),
        "points into the rule: {d}"
    );
    assert_eq!(fingerprint(&app), before);
}

/// A page with `n` rules on a plan tier.
fn limit_page(id: &str, tier: &str, n: usize) -> Value {
    let rules: Vec<Value> = (1..=n)
        .map(|i| {
            json!({"id": format!("r{i}"), "name": format!("Rule {i}"),
                         "logic": {">=": [{"var": "target.score"}, i]}})
        })
        .collect();
    json!({
        "format": "rulebench.page/v1", "id": id, "name": "Limits",
        "organization": {"id": "solo", "name": "Solo", "planTier": tier},
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s1"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t1", "score": 5}]},
        "rules": rules
    })
}

#[test]
fn rule_limit_by_tier() {
    let (_dir, mut app) = open();
    // A personal-tier page with 10 existing rules.
    import(&mut app, &limit_page("personal", "personal", 10));
    assert_eq!(app.page("personal").unwrap().0.rules.len(), 10);
    let before = fingerprint(&app);
    let rev = revision(&app, "personal");

    // The 11th is rejected with exactly the seed's message, and nothing changes.
    let eleventh = r#"{"name": "Rule 11", "logic": {">=": [{"var": "target.score"}, 11]}}"#;
    let err = app
        .add_rule("personal", eleventh, "rule.json", false)
        .expect_err("an 11th rule on a personal page");
    assert_eq!(err.to_string(), "Rule limit reached (10/10)");
    assert!(matches!(err, AppError::RuleLimit { limit: 10 }), "{err:?}");
    assert_eq!(fingerprint(&app), before, "database unchanged");
    assert_eq!(revision(&app, "personal"), rev);
    assert_eq!(app.page("personal").unwrap().0.rules.len(), 10);

    // Changing an existing rule is not adding one; freeing a slot allows an add.
    app.add_rule(
        "personal",
        r#"{"id": "r3", "name": "Rule 3", "logic": {">=": [{"var": "target.score"}, 2]}}"#,
        "rule.json",
        true,
    )
    .expect("replacing a rule at the limit");
    app.remove_rule("personal", "r10").expect("remove");
    app.add_rule("personal", eleventh, "rule.json", false)
        .expect("10 rules again after a removal");
    assert_eq!(app.page("personal").unwrap().0.rules.len(), 10);
    let err = app.add_rule(
        "personal",
        r#"{"name": "Rule 12", "logic": {">=": [{"var": "target.score"}, 12]}}"#,
        "rule.json",
        false,
    );
    assert_eq!(err.unwrap_err().to_string(), "Rule limit reached (10/10)");

    // Importing a personal page file with 11 rules fails the same way, all or nothing.
    let before = fingerprint(&app);
    let text = serde_json::to_string_pretty(&limit_page("personal-11", "personal", 11)).unwrap();
    let err = app.import(&text, "personal-11.json", false).unwrap_err();
    assert!(
        err.to_string().contains("Rule limit reached (10/10)"),
        "{err}"
    );
    let diags = diagnostics(err);
    assert_eq!(
        find(&diags, Code::RuleLimit).message,
        "Rule limit reached (10/10)"
    );
    assert_eq!(fingerprint(&app), before);
    assert!(app.page("personal-11").is_err(), "not imported");

    // The limit is the tier's: team pages hold 100 rules, enterprise pages any number.
    import(&mut app, &limit_page("team-11", "team", 11));
    import(&mut app, &limit_page("team-100", "team", 100));
    let text = serde_json::to_string(&limit_page("team-101", "team", 101)).unwrap();
    let err = app.import(&text, "team-101.json", false).unwrap_err();
    assert!(
        err.to_string().contains("Rule limit reached (100/100)"),
        "{err}"
    );
    import(&mut app, &limit_page("enterprise-150", "enterprise", 150));
    assert_eq!(app.page("enterprise-150").unwrap().0.rules.len(), 150);
}

// =======================================================================================
// Requirement: Rule Evaluation
// =======================================================================================

#[test]
fn evaluate_single_rule() {
    let logic = json!({"var": "source.needsStreaming"});
    let compiled = engine::compile(&logic).expect("compiles");
    let target_row = json!({"supportsStreaming": true});
    assert_eq!(
        engine::evaluate_rows(
            &compiled.logic,
            &json!({"needsStreaming": true}),
            &target_row
        ),
        Outcome::Value {
            value: json!(true),
            pass: true
        }
    );
    assert_eq!(
        engine::evaluate_rows(
            &compiled.logic,
            &json!({"needsStreaming": false}),
            &target_row
        ),
        Outcome::Value {
            value: json!(false),
            pass: false
        }
    );
    // The context is exactly {source, target}.
    let context = json!({"source": {"needsStreaming": true}, "target": target_row});
    assert_eq!(engine::apply(&logic, &context).unwrap(), json!(true));

    // Through the app, on a page holding that one rule.
    let (_dir, mut app) = open();
    import(
        &mut app,
        &json!({
            "format": "rulebench.page/v1", "id": "single", "name": "Single rule",
            "source": {"name": "S", "key": ["id"], "rows": [
                {"id": "streamer", "needsStreaming": true},
                {"id": "batch", "needsStreaming": false}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "m", "supportsStreaming": true}]},
            "rules": [{"id": "needs-streaming", "name": "Needs streaming", "required": true,
                       "logic": {"var": "source.needsStreaming"}}]
        }),
    );
    let result = evaluate(&mut app, "single", "streamer");
    assert!(rule_passed(&result, "m", "needs-streaming"));
    assert_eq!(device(&result, "m").0, 2);
    let result = evaluate(&mut app, "single", "batch");
    assert!(!rule_passed(&result, "m", "needs-streaming"));
    assert_eq!(device(&result, "m").0, 0);
}

#[test]
fn evaluate_all_rules_for_a_pair() {
    let (_dir, mut app) = open();
    let (page, _) = app.page(CHAT).unwrap();
    let result = evaluate(&mut app, CHAT, T3);
    let rule_ids: Vec<&str> = page.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(rule_ids.len(), 9);

    // t3.chat ↔ GPT-4.1: a map {ruleId: boolean} over every rule, all passing.
    let map = target(&result, "gpt-4.1")["rules"]
        .as_object()
        .expect("rules map");
    assert_eq!(map.keys().map(String::as_str).collect::<Vec<_>>(), rule_ids);
    assert!(map.values().all(|v| v == &json!(true)), "{map:?}");

    // t3.chat ↔ Llama 3.3 70B: which rules passed and which failed.
    let map = target(&result, "llama-3.3-70b")["rules"]
        .as_object()
        .unwrap();
    let failed: Vec<&str> = map
        .iter()
        .filter(|(_, v)| **v == json!(false))
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(failed, ["tool-calling", "structured-outputs"]);

    // Every pair of the selection agrees with evaluating each rule on its own.
    let t3 = &page.source.rows[page.source.find_row(T3).unwrap()];
    for (rule_index, rule) in page.rules.iter().enumerate() {
        let compiled = engine::compile(&rule.logic).unwrap();
        for row in &page.target.rows {
            let id = row["id"].as_str().unwrap();
            let expected = engine::evaluate_rows(
                &compiled.logic,
                &Value::Object(t3.clone()),
                &Value::Object(row.clone()),
            )
            .passed();
            assert_eq!(
                rule_passed(&result, id, &rule.id),
                expected,
                "{} × {id}",
                rule.id
            );
            // The features table says the same.
            assert_eq!(
                result["features"][rule_index][id],
                json!(expected),
                "{} × {id}",
                rule.id
            );
        }
    }
}

#[test]
fn rule_evaluation_with_missing_data() {
    // t3.chat has no maxLatencyMs field.
    let (_dir, mut app) = open();
    let (page, _) = app.page(CHAT).unwrap();
    let t3 = Value::Object(page.source.rows[page.source.find_row(T3).unwrap()].clone());
    assert!(
        t3.get("maxLatencyMs").is_none(),
        "the sample row lacks the field"
    );
    let gpt = Value::Object(page.target.rows[page.target.find_row("gpt-4.1").unwrap()].clone());
    let context = json!({"source": t3, "target": gpt});

    // `var` returns null for the missing field (and its default when one is given).
    assert_eq!(
        engine::apply(&json!({"var": "source.maxLatencyMs"}), &context).unwrap(),
        Value::Null
    );
    assert_eq!(
        engine::apply(&json!({"var": ["source.maxLatencyMs", 250]}), &context).unwrap(),
        json!(250)
    );
    let compiled = engine::compile(&json!({"==": [{"var": "source.maxLatencyMs"}, null]})).unwrap();
    assert_eq!(
        engine::evaluate_rows(&compiled.logic, &t3, &gpt),
        Outcome::Value {
            value: json!(true),
            pass: true
        }
    );

    // End to end: the sample latency rule's null branch lets every model pass for t3.chat,
    // while a client with a budget (opencode, 2000 ms) rules out slow models.
    let result = evaluate(&mut app, CHAT, T3);
    for t in result["targets"].as_array().unwrap() {
        assert_eq!(t["rules"]["latency-budget"], json!(true), "{}", t["id"]);
    }
    let result = evaluate(&mut app, CHAT, "opencode");
    assert!(
        !rule_passed(&result, "o3", "latency-budget"),
        "4000 ms > 2000 ms"
    );
    assert!(
        rule_passed(&result, "gpt-4.1", "latency-budget"),
        "600 ms <= 2000 ms"
    );

    // Comparisons with null follow JSONLogic semantics (JavaScript's: null == null,
    // null is not loosely equal to 0, false or ""; relational operators read null as 0).
    // The expected values are those of json-logic-js, JSONLogic's reference
    // implementation, which applies JavaScript's `==`, `<`, … to the arguments.
    let m = || json!({"var": "source.maxLatencyMs"});
    let cases = [
        (json!({"==": [m(), null]}), json!(true)),
        (json!({"===": [m(), null]}), json!(true)),
        (json!({"!=": [m(), null]}), json!(false)),
        (json!({"!": [m()]}), json!(true)),
        (json!({"!!": [m()]}), json!(false)),
        (json!({"<=": [m(), 100]}), json!(true)),
        (json!({"<": [m(), 1]}), json!(true)),
        (json!({">": [m(), 0]}), json!(false)),
        (json!({">=": [m(), 0]}), json!(true)),
        (json!({"<=": [600, m()]}), json!(false)),
        (json!({"===": [m(), 0]}), json!(false)),
        (json!({"==": [m(), 0]}), json!(false)),
        (json!({"==": [m(), false]}), json!(false)),
        (json!({"==": [m(), ""]}), json!(false)),
        (json!({"!=": [m(), 0]}), json!(true)),
        (json!({"!=": [m(), false]}), json!(true)),
    ];
    let mut wrong = Vec::new();
    for (logic, expected) in &cases {
        let got = engine::apply(logic, &context).unwrap_or_else(|e| json!(format!("error: {e}")));
        if &got != expected {
            wrong.push(format!("{logic} gave {got}, JSONLogic gives {expected}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "comparisons with a missing (null) field do not follow JSONLogic semantics:\n  {}",
        wrong.join("\n  ")
    );
}

// =======================================================================================
// Requirement: Device Policy
// =======================================================================================

#[test]
fn configure_device_policy() {
    let (dir, mut app) = open();
    // A page whose device policy starts elsewhere.
    let mut page = small_page(
        "device-policy",
        &[
            ("full", FULL),
            ("partial", PARTIAL),
            ("low", LOW),
            ("no-stream", NO_STREAM),
        ],
    );
    // (Under IGNORE_REQUIRED the required rules are weighted in: 5/7 and 6/7.)
    page["devicePolicy"] =
        json!({"requiredMode": "IGNORE_REQUIRED", "fullThreshold": 0.9, "partialThreshold": 0.75});
    import(&mut app, &page);
    let rev0 = revision(&app, "device-policy");
    let result = evaluate(&mut app, "device-policy", "t3-chat");
    assert_eq!(
        device(&result, "partial").0,
        0,
        "5/7 is below a 0.75 partial threshold"
    );
    assert_ne!(device(&result, "no-stream").2, "required-fail");

    // The user configures the seed's policy.
    let (_, rev) = app
        .set_policy(
            "device-policy",
            &[
                "requiredMode=ANY_REQUIRED_FAIL_IS_0".to_owned(),
                "fullThreshold=1.0".to_owned(),
                "partialThreshold=0.4".to_owned(),
            ],
        )
        .expect("a valid device policy");
    assert_eq!(rev, rev0 + 1);

    // Stored on the page record.
    let stored: String = app
        .store()
        .connection()
        .query_row(
            "SELECT device_policy_json FROM pages WHERE id = 'device-policy'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["requiredMode"], "ANY_REQUIRED_FAIL_IS_0");
    assert_eq!(stored["fullThreshold"].as_f64(), Some(1.0));
    assert_eq!(stored["partialThreshold"].as_f64(), Some(0.4));
    assert_eq!(
        app.page("device-policy").unwrap().0.device_policy,
        seed_device_policy()
    );
    drop(app);
    let mut app = App::open(&db_path(&dir)).expect("reopen");
    assert_eq!(
        app.page("device-policy").unwrap().0.device_policy,
        seed_device_policy()
    );

    // And it is the policy evaluation applies.
    let result = evaluate(&mut app, "device-policy", "t3-chat");
    assert_eq!(result["revisionId"], rev);
    assert_eq!(device(&result, "full"), (2, 1.0, "full".into()));
    assert_eq!(device(&result, "partial"), (1, 0.6, "partial".into()));
    assert_eq!(device(&result, "low"), (0, 0.2, "low-score".into()));
    assert_eq!(device(&result, "no-stream").0, 0);
    assert_eq!(device(&result, "no-stream").2, "required-fail");

    // An invalid policy is rejected and changes nothing.
    let before = fingerprint(&app);
    assert!(
        app.set_policy("device-policy", &["partialThreshold=1.5".to_owned()])
            .is_err()
    );
    assert!(
        app.set_policy("device-policy", &["requiredMode=SOMETIMES".to_owned()])
            .is_err()
    );
    assert_eq!(fingerprint(&app), before);
    assert_eq!(revision(&app, "device-policy"), rev);

    // The policy of a page file is stored as given.
    let imported: DevicePolicy = serde_json::from_str(SEED_DEVICE_POLICY).unwrap();
    assert_eq!(app.page(CHAT).unwrap().0.device_policy, imported);
}

#[test]
fn verdict_required_failure() {
    // The policy alone: a failing required rule gives 0 whatever the score.
    let policy = seed_device_policy();
    let weights = five_weights();
    let scoring = Scoring::new(&policy, &weights);
    let tally = scoring.tally(&[false, true, true, true, true]);
    assert_eq!(tally.score(), 1.0, "every optional rule passes");
    let v = verdict::device_verdict(&scoring, &tally, None);
    assert_eq!((v.verdict, v.reason), (verdict::NONE, Reason::RequiredFail));
    assert_eq!(v.reason.as_str(), "required-fail");
    let v = verdict_of(&policy, &weights, &[true; 5]);
    assert_eq!(v.verdict, verdict::FULL, "control: nothing fails");

    // End to end: 5 rules, 2 required (Streaming Support, Tool Calling).
    let (_dir, mut app) = open();
    let result = small_result(
        &mut app,
        "required-fail",
        &[
            ("gpt-4.1", FULL),
            ("o1-pro", NO_STREAM),
            ("no-tools", NO_TOOLS),
        ],
    );
    assert!(!rule_passed(&result, "o1-pro", "streaming"));
    let (v, _, reason) = device(&result, "o1-pro");
    assert_eq!((v, reason.as_str()), (0, "required-fail"));
    let (v, _, reason) = device(&result, "no-tools");
    assert_eq!((v, reason.as_str()), (0, "required-fail"));
    assert_eq!(device(&result, "gpt-4.1").0, 2);
}

#[test]
fn verdict_full_compatibility() {
    let policy = seed_device_policy();
    let v = verdict_of(&policy, &five_weights(), &[true; 5]);
    assert_eq!(
        (v.verdict, v.score, v.reason),
        (verdict::FULL, 1.0, Reason::Full)
    );
    // With no optional rule, passing the required ones is full compatibility.
    let required_only = [RuleWeight {
        required: true,
        weight: 1.0,
    }];
    let v = verdict_of(&policy, &required_only, &[true]);
    assert_eq!((v.verdict, v.score), (verdict::FULL, 1.0));

    let (_dir, mut app) = open();
    let result = small_result(&mut app, "full", &[("gpt-4.1", FULL), ("eighty", EIGHTY)]);
    assert_eq!(device(&result, "gpt-4.1"), (2, 1.0, "full".into()));
    // 80% of the optional weight is not full under fullThreshold 1.0.
    assert_eq!(device(&result, "eighty"), (1, 0.8, "partial".into()));
}

#[test]
fn verdict_partial_compatibility() {
    let policy = seed_device_policy();
    // Optional weights 2, 1, 2: structured outputs and vision pass = 3/5 = 60%.
    let scoring = Scoring::new(&policy, &five_weights());
    let tally = scoring.tally(&[true, true, true, true, false]);
    let v = verdict::device_verdict(&scoring, &tally, None);
    assert_eq!(v.verdict, verdict::PARTIAL);
    assert_eq!(v.score, 0.6);
    assert_eq!(v.reason, Reason::Partial);

    let (_dir, mut app) = open();
    let result = small_result(&mut app, "partial", &[("llama-3.3-70b", PARTIAL)]);
    let (v, score, reason) = device(&result, "llama-3.3-70b");
    assert_eq!(v, 1);
    assert_eq!(score, 0.6, "exactly 0.6");
    assert_eq!(reason, "partial");
    assert_eq!(target(&result, "llama-3.3-70b")["score"].to_string(), "0.6");
}

#[test]
fn verdict_incompatible_by_score() {
    let policy = seed_device_policy();
    // Only vision (1 of 5) passes: 20%.
    let scoring = Scoring::new(&policy, &five_weights());
    let tally = scoring.tally(&[true, true, false, true, false]);
    let v = verdict::device_verdict(&scoring, &tally, None);
    assert_eq!(
        (v.verdict, v.score, v.reason),
        (verdict::NONE, 0.2, Reason::LowScore)
    );
    assert_eq!(v.reason.as_str(), "low-score");
    // Exactly at the partial threshold is partial, not low.
    let at = verdict::device_verdict(
        &Scoring::new(&policy, &five_weights()),
        &Tally {
            passed_weight: 2.0,
            total_weight: 5.0,
            required_failed: false,
        },
        None,
    );
    assert_eq!(at.verdict, verdict::PARTIAL);

    let (_dir, mut app) = open();
    let result = small_result(&mut app, "low-score", &[("low", LOW), ("partial", PARTIAL)]);
    assert_eq!(device(&result, "low"), (0, 0.2, "low-score".into()));
    assert_eq!(device(&result, "partial").0, 1);
}

// =======================================================================================
// Requirement: Selection Policy
// =======================================================================================

#[test]
fn configure_selection_policy() {
    let (dir, mut app) = open();
    let mut page = small_page(
        "selection-policy",
        &[
            ("o1-pro", NO_STREAM),
            ("low", LOW),
            ("gpt-4.1", FULL),
            ("llama", PARTIAL),
        ],
    );
    page["selectionPolicy"] =
        json!({"aggregate": {"mode": "ALL_DEVICES_FULL_IS_COMPATIBLE", "elseMode": "NONE"}});
    import(&mut app, &page);
    let rev0 = revision(&app, "selection-policy");
    let result = evaluate(&mut app, "selection-policy", "t3-chat");
    assert_eq!(
        result["selectionVerdict"], 0,
        "not every device is full, and no else mode"
    );

    let (_, rev) = app
        .set_policy(
            "selection-policy",
            &[
                "aggregate.mode=ANY_DEVICE_FULL_IS_COMPATIBLE".to_owned(),
                "aggregate.elseMode=ANY_DEVICE_PARTIAL_IS_PARTIAL".to_owned(),
                "recommendation.strategy=HIGHEST_VERDICT_THEN_SCORE".to_owned(),
            ],
        )
        .expect("a valid selection policy");
    assert_eq!(rev, rev0 + 1);

    // Stored on the page record, as the seed writes it.
    let stored: String = app
        .store()
        .connection()
        .query_row(
            "SELECT selection_policy_json FROM pages WHERE id = 'selection-policy'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let seed: Value = serde_json::from_str(SEED_SELECTION_POLICY).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&stored).unwrap(), seed);
    drop(app);
    let mut app = App::open(&db_path(&dir)).expect("reopen");
    let policy = app.page("selection-policy").unwrap().0.selection_policy;
    assert_eq!(policy, seed_selection_policy());
    assert_eq!(
        policy.aggregate.mode,
        AggregateMode::AnyDeviceFullIsCompatible
    );
    assert_eq!(
        policy.aggregate.else_mode,
        ElseMode::AnyDevicePartialIsPartial
    );
    assert_eq!(
        policy.recommendation.strategy,
        RecommendationStrategy::HighestVerdictThenScore
    );

    // And evaluation applies it.
    let result = evaluate(&mut app, "selection-policy", "t3-chat");
    assert_eq!(result["revisionId"], rev);
    assert_eq!(result["selectionVerdict"], 2);
    assert_eq!(recommended(&result), Some("gpt-4.1"));

    // Unknown values are rejected and change nothing.
    let before = fingerprint(&app);
    assert!(
        app.set_policy(
            "selection-policy",
            &["aggregate.mode=MOST_DEVICES".to_owned()]
        )
        .is_err()
    );
    assert_eq!(fingerprint(&app), before);
}

#[test]
fn selection_verdict_any_full() {
    let policy = seed_selection_policy();
    assert_eq!(
        verdict::selection_verdict(
            &policy,
            &[
                verdict::NONE,
                verdict::NONE,
                verdict::FULL,
                verdict::PARTIAL
            ]
        ),
        verdict::FULL
    );
    let c = |id, verdict: u64, score| Candidate {
        id,
        verdict: verdict::Verdict::from_number(verdict).unwrap(),
        score,
        priority: 0.0,
    };
    let candidates = [
        c("claude", 0, 0.2),
        c("a-llama", 0, 1.0),
        c("gpt-4.1", 2, 1.0),
        c("b", 1, 0.6),
    ];
    assert_eq!(
        verdict::recommend(verdict::FULL, &candidates),
        Some("gpt-4.1")
    );

    // End to end: device verdicts [0, 0, 2, 1], GPT-4.1 the fully compatible one.
    let (_dir, mut app) = open();
    let result = small_result(
        &mut app,
        "any-full",
        &[
            ("o1-pro", NO_STREAM),
            ("claude-3.5-haiku", LOW),
            ("gpt-4.1", FULL),
            ("claude-3.7-sonnet", PARTIAL),
        ],
    );
    let verdicts: Vec<&Value> = result["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["verdict"])
        .collect();
    assert_eq!(verdicts, [&json!(0), &json!(0), &json!(2), &json!(1)]);
    assert_eq!(result["selectionVerdict"], 2);
    assert_eq!(
        recommended(&result),
        Some("gpt-4.1"),
        "the target with verdict 2"
    );
}

#[test]
fn selection_verdict_any_partial() {
    let policy = seed_selection_policy();
    assert_eq!(
        verdict::selection_verdict(
            &policy,
            &[
                verdict::NONE,
                verdict::NONE,
                verdict::PARTIAL,
                verdict::PARTIAL
            ]
        ),
        verdict::PARTIAL
    );

    let (_dir, mut app) = open();
    let result = small_result(
        &mut app,
        "any-partial",
        &[
            ("o1-pro", NO_STREAM),
            ("haiku", LOW),
            ("llama", PARTIAL),
            ("deepseek", PARTIAL),
        ],
    );
    let verdicts: Vec<u64> = result["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["verdict"].as_u64().unwrap())
        .collect();
    assert_eq!(verdicts, [0, 0, 1, 1]);
    assert_eq!(result["selectionVerdict"], 1);
    // A partial selection still recommends one of its partial targets (equal score:
    // the smallest id).
    assert_eq!(recommended(&result), Some("deepseek"));
}

#[test]
fn selection_verdict_none_compatible() {
    let policy = seed_selection_policy();
    assert_eq!(
        verdict::selection_verdict(
            &policy,
            &[verdict::NONE, verdict::NONE, verdict::NONE, verdict::NONE]
        ),
        verdict::NONE
    );
    let c = |id, score| Candidate {
        id,
        verdict: verdict::NONE,
        score,
        priority: 0.0,
    };
    assert_eq!(
        verdict::recommend(verdict::NONE, &[c("a", 1.0), c("b", 0.2)]),
        None
    );

    let (_dir, mut app) = open();
    let result = small_result(
        &mut app,
        "none-compatible",
        &[
            ("o1-pro", NO_STREAM),
            ("haiku", LOW),
            ("no-tools", NO_TOOLS),
            ("tiny", LOW),
        ],
    );
    let verdicts: Vec<u64> = result["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["verdict"].as_u64().unwrap())
        .collect();
    assert_eq!(verdicts, [0, 0, 0, 0]);
    assert_eq!(result["selectionVerdict"], 0);
    assert!(
        result.get("recommendedTargetId").is_none_or(Value::is_null),
        "no recommendation: {}",
        result["recommendedTargetId"]
    );
}

#[test]
fn recommendation_tie_breaker() {
    // Pure: among verdict-2 targets the highest score wins, whatever the order or ids;
    // equal scores fall back to the smallest id.
    let c = |id, verdict: u64, score| Candidate {
        id,
        verdict: verdict::Verdict::from_number(verdict).unwrap(),
        score,
        priority: 0.0,
    };
    let candidates = [
        c("alpha", 2, 0.6),
        c("omega", 2, 1.0),
        c("beta", 2, 0.8),
        c("aaa", 1, 1.0),
    ];
    assert_eq!(
        verdict::recommend(verdict::FULL, &candidates),
        Some("omega")
    );
    let tied = [c("zeta", 2, 1.0), c("eta", 2, 1.0), c("alpha", 2, 0.6)];
    assert_eq!(verdict::recommend(verdict::FULL, &tied), Some("eta"));

    // End to end: with fullThreshold 0.5, scores 0.6, 1.0 and 0.8 are all verdict 2.
    let (_dir, mut app) = open();
    let mut page = small_page(
        "tie-breaker",
        &[
            ("alpha", PARTIAL),
            ("omega", FULL),
            ("beta", EIGHTY),
            ("delta", LOW),
        ],
    );
    page["devicePolicy"]["fullThreshold"] = json!(0.5);
    import(&mut app, &page);
    let result = evaluate(&mut app, "tie-breaker", "t3-chat");
    for id in ["alpha", "omega", "beta"] {
        assert_eq!(device(&result, id).0, 2, "{id}");
    }
    assert_eq!(device(&result, "delta").0, 0);
    assert_eq!(
        recommended(&result),
        Some("omega"),
        "the highest score among verdict 2"
    );

    // Two at the top score: the smaller id.
    let mut page = small_page(
        "tie-breaker-2",
        &[("zeta", FULL), ("alpha", PARTIAL), ("eta", FULL)],
    );
    page["devicePolicy"]["fullThreshold"] = json!(0.5);
    import(&mut app, &page);
    let result = evaluate(&mut app, "tie-breaker-2", "t3-chat");
    assert_eq!(recommended(&result), Some("eta"));
}

// =======================================================================================
// Requirement: Manual Overrides
// =======================================================================================

#[test]
fn create_override() {
    let (_dir, mut app) = open();
    let note = "Verified by testing team - works with Groq provider";
    // keyHash of t3.chat and of llama-3.3-70b.
    let source_hash = sha256_hex(T3);
    let target_hash = sha256_hex("id=llama-3.3-70b");
    let rev0 = revision(&app, CHAT);
    let result = evaluate(&mut app, CHAT, T3);
    assert_eq!(device(&result, "llama-3.3-70b"), (1, 0.6, "partial".into()));

    // Hashes that match no row are refused (the seed's abc123 / def456 are placeholders).
    let before = fingerprint(&app);
    assert!(
        app.set_override(CHAT, "abc123", &target_hash, true, None)
            .is_err()
    );
    assert!(
        app.set_override(CHAT, &source_hash, "def456", true, None)
            .is_err()
    );
    assert_eq!(fingerprint(&app), before);

    let rev = app
        .set_override(
            CHAT,
            &source_hash,
            &target_hash,
            true,
            Some(note.to_owned()),
        )
        .expect("rows named by keyHash");
    assert_eq!(rev, rev0 + 1);

    // Stored.
    let (value, stored_note): (bool, Option<String>) = app
        .store()
        .connection()
        .query_row(
            "SELECT value, note FROM overrides
             WHERE page_id = ?1 AND source_key_hash = ?2 AND target_key_hash = ?3",
            [CHAT, source_hash.as_str(), target_hash.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("an overrides row keyed by the hashes");
    assert!(value);
    assert_eq!(stored_note.as_deref(), Some(note));
    let (page, _) = app.page(CHAT).unwrap();
    let o = page
        .overrides
        .iter()
        .find(|o| o.source_hash() == Some(source_hash.clone()))
        .expect("override on the page");
    assert_eq!(o.target_hash(), Some(target_hash.clone()));
    assert!(o.value);
    assert_eq!(o.note.as_deref(), Some(note));

    // And applied.
    let result = evaluate(&mut app, CHAT, T3);
    assert_eq!(result["cache"], "miss");
    let llama = target(&result, "llama-3.3-70b");
    assert_eq!(
        (&llama["verdict"], &llama["reason"]),
        (&json!(2), &json!("override"))
    );
    assert_eq!(llama["override"]["value"], true);
    assert_eq!(llama["override"]["note"], note);

    // A page file may name the rows by keyHash too.
    let mut page = small_page(
        "hash-overrides",
        &[("gpt-4.1", FULL), ("llama-3.3-70b", LOW)],
    );
    let llama_hash = sha256_hex("id=llama-3.3-70b");
    page["overrides"] = json!([{
        "sourceKeyHash": sha256_hex("id=t3-chat"), "targetKeyHash": llama_hash,
        "value": true, "note": note
    }]);
    import(&mut app, &page);
    let stored_hash: String = app
        .store()
        .connection()
        .query_row(
            "SELECT target_key_hash FROM overrides WHERE page_id = 'hash-overrides'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored_hash, llama_hash);
    let result = evaluate(&mut app, "hash-overrides", "t3-chat");
    assert_eq!(device(&result, "llama-3.3-70b").0, 2);
    assert_eq!(device(&result, "llama-3.3-70b").2, "override");
    let mut bad = small_page("bad-hash", &[("m", FULL)]);
    bad["overrides"] =
        json!([{"sourceKeyHash": "abc123", "targetKeyHash": "def456", "value": true}]);
    // The spec's literal hashes name no row: in a page file such an override would do
    // nothing, so the import is refused, saying where (a dataset reload that drops a
    // row keeps its override with a warning: tests/warnings.rs).
    let refused = app
        .import(&bad.to_string(), "bad-hash.json", false)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("orphaned-override"), "{refused}");
    assert!(refused.contains("/overrides/0"), "{refused}");
    assert!(app.page("bad-hash").is_err(), "nothing imported");
}

#[test]
fn override_precedence() {
    let (_dir, mut app) = open();
    // Make the rules give t3.chat ↔ llama-3.3-70b verdict 0: tool calling becomes required.
    let (page, _) = app.page(CHAT).unwrap();
    let mut tool = serde_json::to_value(page.rule("tool-calling").unwrap().1).unwrap();
    tool["required"] = json!(true);
    app.add_rule(CHAT, &tool.to_string(), "rule.json", true)
        .expect("replace the tool calling rule");
    let result = evaluate(&mut app, CHAT, T3);
    assert_eq!(device(&result, "llama-3.3-70b").0, 0);
    assert_eq!(device(&result, "llama-3.3-70b").2, "required-fail");

    app.set_override(CHAT, T3, "id=llama-3.3-70b", true, None)
        .expect("override");
    let result = evaluate(&mut app, CHAT, T3);
    let (v, _, reason) = device(&result, "llama-3.3-70b");
    assert_eq!(v, 2, "the override takes precedence");
    assert!(reason.contains("override"), "{reason}");
    // The rules are still evaluated and reported.
    assert!(!rule_passed(&result, "llama-3.3-70b", "tool-calling"));
    assert!(rule_passed(&result, "llama-3.3-70b", "streaming"));
    // Other pairs are not affected.
    assert_eq!(device(&result, "o1-pro").2, "required-fail");

    // The small page: a required failure overridden to compatible.
    let mut page = small_page("precedence", &[("o1-pro", NO_STREAM), ("low", LOW)]);
    page["overrides"] = json!([
        {"sourceKey": "id=t3-chat", "targetKey": "id=o1-pro", "value": true},
        {"sourceKey": "id=t3-chat", "targetKey": "id=low", "value": true}
    ]);
    import(&mut app, &page);
    let result = evaluate(&mut app, "precedence", "t3-chat");
    assert_eq!(device(&result, "o1-pro").0, 2);
    assert_eq!(device(&result, "o1-pro").2, "override");
    assert_eq!(device(&result, "low").0, 2);
    assert_eq!(result["selectionVerdict"], 2);
}

#[test]
fn negative_override() {
    let (_dir, mut app) = open();
    let result = evaluate(&mut app, CHAT, T3);
    assert_eq!(device(&result, "gpt-4.1"), (2, 1.0, "full".into()));
    assert_eq!(recommended(&result), Some("gpt-4.1"));

    app.set_override(
        CHAT,
        T3,
        "gpt-4.1",
        false,
        Some("Deprecated for this client".into()),
    )
    .expect("override");
    let result = evaluate(&mut app, CHAT, T3);
    let (v, _, reason) = device(&result, "gpt-4.1");
    assert_eq!(v, 0, "force incompatible");
    assert_eq!(reason, "override");
    assert!(
        target(&result, "gpt-4.1")["rules"]
            .as_object()
            .unwrap()
            .values()
            .all(|v| v == &json!(true)),
        "the rules still pass and are reported"
    );
    assert_ne!(recommended(&result), Some("gpt-4.1"));
    assert_eq!(recommended(&result), Some("claude-3.7-sonnet"));

    // Removing it gives the rules' verdict back.
    app.remove_override(CHAT, T3, "gpt-4.1").expect("remove");
    let result = evaluate(&mut app, CHAT, T3);
    assert_eq!(device(&result, "gpt-4.1").0, 2);

    // The small page: the only fully compatible target overridden to 0.
    let mut page = small_page("negative", &[("gpt-4.1", FULL), ("llama", PARTIAL)]);
    page["overrides"] =
        json!([{"sourceKey": "id=t3-chat", "targetKey": "id=gpt-4.1", "value": false}]);
    import(&mut app, &page);
    let result = evaluate(&mut app, "negative", "t3-chat");
    assert_eq!(device(&result, "gpt-4.1"), (0, 1.0, "override".into()));
    assert_eq!(result["selectionVerdict"], 1);
    assert_eq!(recommended(&result), Some("llama"));
}

// =======================================================================================
// Requirement: Compatibility Evaluation API
// =======================================================================================

#[test]
fn evaluate_compatibility() {
    let (_dir, mut app) = open();
    let (page, rev) = app.page(CHAT).unwrap();

    // 1. Find the source row matching the selection, however it is named.
    let by_key = evaluate(&mut app, CHAT, T3);
    assert_eq!(by_key["selectionKey"], T3);
    for name in ["t3-chat", sha256_hex(T3).as_str()] {
        assert_eq!(evaluate(&mut app, CHAT, name)["selectionKey"], T3, "{name}");
    }
    let err = app.evaluate(CHAT, "clientType=web|id=nope").unwrap_err();
    assert!(matches!(err, AppError::NotFound { .. }), "{err:?}");
    assert!(app.evaluate("no-such-page", T3).is_err());

    // Steps 2–8 for every source row of the page, against a reference computation.
    let priority = page
        .target
        .priority
        .clone()
        .expect("the sample ranks its models");
    for source in &page.source.rows {
        let key = format!(
            "clientType={}|id={}",
            source["clientType"].as_str().unwrap(),
            source["id"].as_str().unwrap()
        );
        let result = evaluate(&mut app, CHAT, &key);
        assert_eq!(result["pageId"], CHAT);
        assert_eq!(result["revisionId"], rev);
        assert_eq!(result["selectionKey"], key);

        // 2. Every target row, in order.
        let targets = result["targets"].as_array().unwrap();
        let ids: Vec<&str> = targets.iter().map(|t| t["id"].as_str().unwrap()).collect();
        let expected_ids: Vec<&str> = page
            .target
            .rows
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, expected_ids);

        let mut expected_devices = Vec::new();
        for (row, entry) in page.target.rows.iter().zip(targets) {
            let tid = row["id"].as_str().unwrap();
            // 3. Every rule, 5. evaluated for the pair.
            let rules = entry["rules"].as_object().unwrap();
            assert_eq!(rules.len(), page.rules.len());
            let passed: Vec<bool> = page
                .rules
                .iter()
                .map(|rule| {
                    let compiled = engine::compile(&rule.logic).unwrap();
                    let ok = engine::evaluate_rows(
                        &compiled.logic,
                        &Value::Object(source.clone()),
                        &Value::Object(row.clone()),
                    )
                    .passed();
                    assert_eq!(rules[&rule.id], json!(ok), "{key} × {tid}: {}", rule.id);
                    ok
                })
                .collect();
            // 4. Overrides first.
            let target_hash = sha256_hex(&format!("id={tid}"));
            let overridden = page
                .overrides
                .iter()
                .find(|o| {
                    o.source_key_hash
                        .clone()
                        .or(o.source_key.as_deref().map(sha256_hex))
                        == Some(sha256_hex(&key))
                        && o.target_key_hash
                            .clone()
                            .or(o.target_key.as_deref().map(sha256_hex))
                            == Some(target_hash.clone())
                })
                .map(|o| o.value);
            // 6. Device verdicts.
            let (v, score, reason) = reference_device(&page, &passed, overridden);
            assert_eq!(entry["verdict"], v, "{key} × {tid}");
            assert_eq!(entry["reason"], reason, "{key} × {tid}");
            let got_score = entry["score"].as_f64().unwrap();
            assert!(
                (got_score - score).abs() < 1e-12,
                "{key} × {tid}: {got_score} vs {score}"
            );
            expected_devices.push((tid, v, score, row[&priority].as_f64().unwrap_or(0.0)));
        }

        // 7. Selection verdict and recommendation.
        let selection = expected_devices.iter().map(|d| d.1).max().unwrap_or(0);
        assert_eq!(result["selectionVerdict"], selection, "{key}");
        let best = expected_devices
            .iter()
            .filter(|d| selection > 0 && d.1 > 0)
            .min_by(|a, b| {
                b.1.cmp(&a.1)
                    .then(b.2.total_cmp(&a.2))
                    .then(b.3.total_cmp(&a.3))
                    .then(a.0.cmp(b.0))
            })
            .map(|d| d.0);
        assert_eq!(recommended(&result), best, "{key}");

        // 8. A structured result.
        for field in [
            "selectionKey",
            "selectionVerdict",
            "targets",
            "features",
            "evaluatedAt",
        ] {
            assert!(result.get(field).is_some(), "{key}: no {field}");
        }
    }

    // The page has the cases the seed describes: an override, a client nothing fits,
    // and one with partial matches only.
    let opencode = evaluate(&mut app, CHAT, "opencode");
    assert_eq!(device(&opencode, "llama-3.3-70b").2, "override");
    assert_eq!(
        evaluate(&mut app, CHAT, "offline-notes")["selectionVerdict"],
        0
    );
    assert_eq!(
        evaluate(&mut app, CHAT, "hands-free")["selectionVerdict"],
        1
    );
}

#[test]
fn evaluation_result_structure() {
    let (_dir, mut app) = open();
    let (page, rev) = app.page(CHAT).unwrap();
    let result = evaluate(&mut app, CHAT, T3);

    assert_eq!(result["selectionKey"], T3);
    assert_eq!(result["selectionVerdict"], 2);
    assert_eq!(result["recommendedTargetId"], "gpt-4.1");
    assert_eq!(result["pageId"], CHAT);
    assert_eq!(result["revisionId"], rev);
    assert_eq!(result["cache"], "miss");
    let at = result["evaluatedAt"]
        .as_str()
        .expect("evaluatedAt is a string");
    chrono::DateTime::parse_from_rfc3339(at).unwrap_or_else(|e| panic!("evaluatedAt `{at}`: {e}"));

    for (id, name, provider, v, score) in [
        ("gpt-4.1", "GPT-4.1", "openai", 2, 1.0),
        (
            "claude-3.7-sonnet",
            "Claude 3.7 Sonnet",
            "anthropic",
            2,
            1.0,
        ),
        ("llama-3.3-70b", "Llama 3.3 70B", "meta", 1, 0.6),
    ] {
        let t = target(&result, id);
        assert_eq!(t["displayName"], name, "{id}");
        assert_eq!(t["provider"], provider, "{id}");
        assert_eq!(t["verdict"], v, "{id}");
        assert_eq!(t["score"].as_f64(), Some(score), "{id}");
    }
    let targets = result["targets"].as_array().unwrap();
    assert_eq!(targets.len(), page.target.rows.len());
    for t in targets {
        assert!(t["reason"].is_string(), "{t}");
        let rules = t["rules"]
            .as_object()
            .unwrap_or_else(|| panic!("no rules map: {t}"));
        assert_eq!(rules.len(), page.rules.len());
        assert!(rules.values().all(Value::is_boolean));
    }

    // features: one entry per rule, its name and a boolean per target.
    let features = result["features"].as_array().unwrap();
    assert_eq!(features.len(), page.rules.len());
    for (feature, rule) in features.iter().zip(&page.rules) {
        assert_eq!(feature["name"], rule.name.as_str());
        let f = feature.as_object().unwrap();
        assert_eq!(f.len(), 1 + targets.len());
        for t in targets {
            let id = t["id"].as_str().unwrap();
            assert_eq!(f[id], t["rules"][&rule.id], "{} × {id}", rule.id);
        }
    }
    let feature = |name: &str| {
        features
            .iter()
            .find(|f| f["name"].as_str().is_some_and(|n| n.starts_with(name)))
            .unwrap_or_else(|| panic!("no feature {name}"))
    };
    for (name, llama) in [
        ("Streaming Support", true),
        ("Tool Calling", false),
        ("Structured Outputs", false),
    ] {
        let f = feature(name);
        assert_eq!(f["gpt-4.1"], true, "{name}");
        assert_eq!(f["claude-3.7-sonnet"], true, "{name}");
        assert_eq!(f["llama-3.3-70b"], llama, "{name}");
    }
}

// =======================================================================================
// Requirement: Result Caching
// =======================================================================================

#[test]
fn cache_on_first_evaluation() {
    let (_dir, mut app) = open();
    let rev = revision(&app, CHAT);
    // A selection that has not been evaluated.
    assert!(cached_rows(&app, CHAT, T3).is_empty());
    let result = evaluate(&mut app, CHAT, T3);
    assert_eq!(result["cache"], "miss");

    // Stored in compat_results: selection_hash, revision_id, page_num, payload_json.
    let rows = cached_rows(&app, CHAT, T3);
    assert_eq!(rows.len(), 1, "14 targets fit one page");
    let (revision_id, page_num, payload) = &rows[0];
    assert_eq!(*revision_id, rev);
    assert_eq!(*page_num, 0);
    assert_eq!(payload["selectionKey"], T3);
    assert_eq!(payload["targets"], result["targets"]);
    assert_eq!(payload["features"], result["features"]);
    assert_eq!(payload["selectionVerdict"], result["selectionVerdict"]);
    assert_eq!(payload["evaluatedAt"], result["evaluatedAt"]);
    let hash: String = app
        .store()
        .connection()
        .query_row(
            "SELECT selection_hash FROM compat_results WHERE page_id = ?1",
            [CHAT],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hash, sha256_hex(T3));
    assert_eq!(hash.len(), 64);
    assert!(
        hash.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );

    // Another selection gets its own rows; the first stays.
    evaluate(&mut app, CHAT, "opencode");
    assert_eq!(
        cached_rows(&app, CHAT, "clientType=cli|id=opencode").len(),
        1
    );
    assert_eq!(cached_rows(&app, CHAT, T3).len(), 1);
}

#[test]
fn return_cached_result() {
    let (_dir, mut app) = open();
    let first = evaluate(&mut app, CHAT, T3);
    assert_eq!(first["cache"], "miss");
    let before = fingerprint(&app);
    let rev = revision(&app, CHAT);

    let second = evaluate(&mut app, CHAT, T3);
    assert_eq!(second["cache"], "hit");
    assert_eq!(second["evaluatedAt"], first["evaluatedAt"]);
    assert_eq!(without_cache(&second), without_cache(&first));
    assert_eq!(fingerprint(&app), before, "a hit writes nothing");
    assert_eq!(revision(&app, CHAT), rev);

    // Proof that rules are NOT re-evaluated: change a rule's logic behind the app's back
    // (no new revision) so that it would fail everywhere. The cached answer still says
    // it passes.
    let changed = app
        .store()
        .connection()
        .execute(
            "UPDATE rules SET logic_json = '{\"==\": [1, 2]}' WHERE page_id = ?1 AND id = 'streaming'",
            [CHAT],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let third = evaluate(&mut app, CHAT, T3);
    assert_eq!(third["cache"], "hit");
    assert!(
        rule_passed(&third, "gpt-4.1", "streaming"),
        "served from the cache"
    );
    assert_eq!(without_cache(&third), without_cache(&first));

    // And the payload served is the stored one, not a recomputation.
    let hash = sha256_hex(T3);
    let (text,): (String,) = app
        .store()
        .connection()
        .query_row(
            "SELECT payload_json FROM compat_results WHERE page_id = ?1 AND selection_hash = ?2 AND page_num = 0",
            [CHAT, hash.as_str()],
            |r| Ok((r.get(0)?,)),
        )
        .unwrap();
    let mut payload: Value = serde_json::from_str(&text).unwrap();
    payload["evaluatedAt"] = json!("1999-12-31T23:59:59Z");
    app.store()
        .connection()
        .execute(
            "UPDATE compat_results SET payload_json = ?3 WHERE page_id = ?1 AND selection_hash = ?2",
            [CHAT, hash.as_str(), payload.to_string().as_str()],
        )
        .unwrap();
    let fourth = evaluate(&mut app, CHAT, T3);
    assert_eq!(fourth["cache"], "hit");
    assert_eq!(fourth["evaluatedAt"], "1999-12-31T23:59:59Z");

    // Control: once the revision moves, the changed rule is evaluated (and fails). (A
    // real change: setting a value it already has makes no revision.)
    app.set_policy(CHAT, &["partialThreshold=0.45".to_owned()])
        .unwrap();
    let fresh = evaluate(&mut app, CHAT, T3);
    assert_eq!(fresh["cache"], "miss");
    assert!(!rule_passed(&fresh, "gpt-4.1", "streaming"));
    assert_ne!(fresh["evaluatedAt"], "1999-12-31T23:59:59Z");
}

#[test]
fn cache_miss_with_compute() {
    let (_dir, mut app) = open();
    // Some other selection is cached; this one is not.
    evaluate(&mut app, CHAT, T3);
    let key = "clientType=ide|id=continue";
    assert!(cached_rows(&app, CHAT, key).is_empty());

    let computed = evaluate(&mut app, CHAT, key);
    assert_eq!(computed["cache"], "miss", "computed, not served");
    assert_eq!(computed["selectionKey"], key);
    // Continue needs open weights: only open-weight models can be compatible.
    let (page, _) = app.page(CHAT).unwrap();
    for row in &page.target.rows {
        if row["openWeights"] == false {
            assert_eq!(
                device(&computed, row["id"].as_str().unwrap()).2,
                "required-fail"
            );
        }
    }
    assert!(rule_passed(&computed, "llama-3.3-70b", "open-weights"));

    // Stored, for the current revision.
    let rows = cached_rows(&app, CHAT, key);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, revision(&app, CHAT));
    assert_eq!(rows[0].2["targets"], computed["targets"]);

    // And served from the cache next time, identical.
    let again = evaluate(&mut app, CHAT, key);
    assert_eq!(again["cache"], "hit");
    assert_eq!(without_cache(&again), without_cache(&computed));
}

#[test]
fn cache_invalidation() {
    let (_dir, mut app) = open();
    let first = evaluate(&mut app, CHAT, T3);
    let mut rev = first["revisionId"].as_i64().unwrap();
    assert_eq!(evaluate(&mut app, CHAT, T3)["cache"], "hit");

    // Each change increments the revision; the next query computes fresh for it and
    // the query after that is served from the cache again.
    let mut check = |app: &mut App, what: &str| -> Value {
        let now = revision(app, CHAT);
        assert_eq!(now, rev + 1, "{what} increments the revision");
        rev = now;
        let fresh = evaluate(app, CHAT, T3);
        assert_eq!(
            fresh["cache"], "miss",
            "{what}: stale entries are not served"
        );
        assert_eq!(fresh["revisionId"], now, "{what}");
        let again = evaluate(app, CHAT, T3);
        assert_eq!(again["cache"], "hit", "{what}");
        assert_eq!(again["revisionId"], now, "{what}");
        fresh
    };

    // A rule.
    app.add_rule(CHAT, SEED_PROVIDER_RULE, "rule.json", false)
        .unwrap();
    let r = check(&mut app, "adding a rule");
    assert_eq!(device(&r, "claude-3.7-sonnet").2, "required-fail");
    app.remove_rule(CHAT, "openai-provider-required").unwrap();
    let r = check(&mut app, "removing a rule");
    assert_eq!(device(&r, "claude-3.7-sonnet").0, 2);

    // A policy.
    app.set_policy(CHAT, &["fullThreshold=0.5".to_owned()])
        .unwrap();
    let r = check(&mut app, "a policy");
    assert_eq!(device(&r, "llama-3.3-70b").0, 2, "0.6 >= 0.5");

    // An override.
    app.set_override(CHAT, T3, "o1-pro", true, None).unwrap();
    let r = check(&mut app, "an override");
    assert_eq!(device(&r, "o1-pro").2, "override");

    // The data (a re-import of the page with a changed row).
    let (mut page, _) = app.page(CHAT).unwrap();
    let llama = page.target.find_row("llama-3.3-70b").unwrap();
    page.target.rows[llama].insert("supportsToolCalling".into(), json!(true));
    let text = serde_json::to_string(&page).unwrap();
    app.import(&text, "changed.json", true).expect("replace");
    let r = check(&mut app, "changed data");
    assert!(rule_passed(&r, "llama-3.3-70b", "tool-calling"));

    // Results for an old revision are never served.
    let served = evaluate(&mut app, CHAT, T3);
    assert_eq!(served["revisionId"], rev);
    assert_ne!(served["revisionId"], first["revisionId"]);
}

#[test]
fn result_pagination() {
    let (_dir, mut app) = open();
    // A page with 500 target LLMs.
    let page = synth::page(500, 12, 3, synth::Spread::Realistic, 42);
    assert_eq!(page.target.rows.len(), 500);
    let page_id = page.id.clone();
    let text = serde_json::to_string(&page).unwrap();
    app.import(&text, "synthetic.json", false)
        .expect("the synthetic page imports");
    let key = "id=client-000";

    let result = evaluate(&mut app, &page_id, key);
    assert_eq!(result["cache"], "miss");
    assert_eq!(result["targets"].as_array().unwrap().len(), 500);

    // Split into pages of at most 100 targets, each a separate row.
    let rows = cached_rows(&app, &page_id, key);
    assert_eq!(rows.len(), 5);
    let all_ids: Vec<&str> = page
        .target
        .rows
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let mut seen = Vec::new();
    for (i, (rev, num, payload)) in rows.iter().enumerate() {
        assert_eq!(*num, i as i64);
        assert_eq!(*rev, result["revisionId"].as_i64().unwrap());
        let targets = payload["targets"].as_array().unwrap();
        assert!(
            !targets.is_empty() && targets.len() <= 100,
            "page {num}: {}",
            targets.len()
        );
        let ids: Vec<&str> = targets.iter().map(|t| t["id"].as_str().unwrap()).collect();
        // Each page carries the header and the features of its own targets.
        assert_eq!(payload["selectionKey"], key);
        assert_eq!(payload["pageId"], page_id.as_str());
        assert_eq!(payload["selectionVerdict"], result["selectionVerdict"]);
        let features = payload["features"].as_array().unwrap();
        assert_eq!(features.len(), 12);
        for f in features {
            let f = f.as_object().unwrap();
            assert_eq!(f.len(), 1 + ids.len());
            assert!(ids.iter().all(|id| f[*id].is_boolean()));
        }
        assert!(
            payload.to_string().len() < 1_000_000,
            "page {num} fits a 1 MB document"
        );
        seen.extend(ids);
    }
    assert_eq!(seen, all_ids, "every target once, in order");

    // Read back whole: every target, in order, with its verdict and rules, and the
    // features of all 500 targets ...
    let cached = evaluate(&mut app, &page_id, key);
    assert_eq!(cached["cache"], "hit");
    let targets = cached["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 500);
    for (got, want) in targets.iter().zip(result["targets"].as_array().unwrap()) {
        for field in [
            "id",
            "displayName",
            "provider",
            "verdict",
            "reason",
            "rules",
        ] {
            assert_eq!(got[field], want[field], "{} {field}", want["id"]);
        }
    }
    assert_eq!(cached["features"], result["features"]);
    let features = cached["features"].as_array().unwrap();
    assert!(features.iter().all(|f| f.as_object().unwrap().len() == 501));
    // ... and exactly the result that was computed, scores included.
    assert_same(
        &without_cache(&cached),
        &without_cache(&result),
        "read back whole",
    );
}

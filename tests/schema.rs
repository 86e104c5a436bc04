//! assets/page.schema.json describes the page file the model reads and writes.

use rulebench_core::model::{
    AggregateMode, ElseMode, Page, PlanTier, RecommendationStrategy, RequiredMode,
};
use serde_json::{Value, json};

fn schema() -> Value {
    serde_json::from_str(include_str!("../assets/page.schema.json")).expect("schema is JSON")
}

fn enum_at(schema: &Value, pointer: &str) -> Vec<String> {
    let values = schema
        .pointer(pointer)
        .and_then(|v| v.get("enum"))
        .unwrap_or_else(|| panic!("no enum at {pointer}"));
    let mut out: Vec<String> = values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

fn names<T: serde::Serialize>(variants: &[T]) -> Vec<String> {
    let mut out: Vec<String> = variants
        .iter()
        .map(|v| {
            serde_json::to_value(v)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn schema_enums_are_the_models() {
    let s = schema();
    assert_eq!(
        s.pointer("/$defs/rule/properties/weight/maximum")
            .and_then(Value::as_f64),
        Some(rulebench_core::validate::MAX_WEIGHT)
    );
    assert_eq!(
        enum_at(&s, "/$defs/devicePolicy/properties/requiredMode"),
        names(<RequiredMode as strum::VariantArray>::VARIANTS)
    );
    assert_eq!(
        enum_at(
            &s,
            "/$defs/selectionPolicy/properties/aggregate/properties/mode"
        ),
        names(<AggregateMode as strum::VariantArray>::VARIANTS)
    );
    assert_eq!(
        enum_at(
            &s,
            "/$defs/selectionPolicy/properties/aggregate/properties/elseMode"
        ),
        names(<ElseMode as strum::VariantArray>::VARIANTS)
    );
    assert_eq!(
        enum_at(
            &s,
            "/$defs/selectionPolicy/properties/recommendation/properties/strategy"
        ),
        names(<RecommendationStrategy as strum::VariantArray>::VARIANTS)
    );
    assert_eq!(
        enum_at(&s, "/$defs/organization/properties/planTier"),
        names(&[PlanTier::Personal, PlanTier::Team, PlanTier::Enterprise])
    );
}

/// Every property the model writes is one the schema allows, and the schema's
/// required properties are exactly the ones the model cannot default.
#[test]
fn schema_properties_match_an_exported_page() {
    let s = schema();
    for (file, text) in rulebench::app::SAMPLE_PAGES {
        let page: Page = serde_json::from_str(text).unwrap();
        let exported = serde_json::to_value(&page).unwrap();
        let allowed = |pointer: &str| -> Vec<String> {
            s.pointer(pointer)
                .and_then(Value::as_object)
                .unwrap_or_else(|| panic!("no properties at {pointer}"))
                .keys()
                .cloned()
                .collect()
        };
        let check = |value: &Value, pointer: &str| {
            let allowed = allowed(pointer);
            for key in value.as_object().unwrap().keys() {
                assert!(
                    allowed.contains(key),
                    "{file}: `{key}` is not in the schema at {pointer}"
                );
            }
        };
        check(&exported, "/properties");
        check(&exported["source"], "/$defs/dataset/properties");
        check(&exported["target"], "/$defs/dataset/properties");
        for rule in exported["rules"].as_array().unwrap() {
            check(rule, "/$defs/rule/properties");
        }
        check(&exported["devicePolicy"], "/$defs/devicePolicy/properties");
        check(
            &exported["selectionPolicy"],
            "/$defs/selectionPolicy/properties",
        );
        for o in exported["overrides"].as_array().unwrap() {
            check(o, "/$defs/override/properties");
        }
    }
    // Leaving out a required property fails to parse; leaving out any other does not.
    let minimal = json!({"format": "rulebench.page/v1", "id": "p", "name": "P",
        "source": {"name": "S", "key": ["id"], "rows": []},
        "target": {"name": "T", "key": ["id"], "rows": []}});
    assert!(serde_json::from_value::<Page>(minimal.clone()).is_ok());
    for required in s["required"].as_array().unwrap() {
        let mut page = minimal.clone();
        page.as_object_mut()
            .unwrap()
            .remove(required.as_str().unwrap());
        assert!(
            serde_json::from_value::<Page>(page).is_err(),
            "`{required}` is required by the schema but not by the model"
        );
    }
}

/// The `assertion` definition is the model's: its properties, the pathMatch enum and
/// the matcher names of the registry.
#[test]
fn schema_assertions_are_the_models() {
    use rulebench_core::assertions::{PathMatch, registry};
    let s = schema();
    assert_eq!(
        enum_at(&s, "/$defs/assertion/properties/pathMatch"),
        names(&[PathMatch::Any, PathMatch::All])
    );
    let examples: Vec<&str> = s
        .pointer("/$defs/assertion/properties/matcher/enum")
        .and_then(Value::as_array)
        .expect("matcher enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let matchers: Vec<&str> = registry().iter().map(|m| m.name).collect();
    assert_eq!(examples, matchers);
    let allowed: Vec<&String> = s
        .pointer("/$defs/assertion/properties")
        .and_then(Value::as_object)
        .unwrap()
        .keys()
        .collect();
    let mut seen = 0;
    for (file, text) in rulebench::app::SAMPLE_PAGES {
        let page: Page = serde_json::from_str(text).unwrap();
        let exported = serde_json::to_value(&page).unwrap();
        for a in exported["assertions"].as_array().into_iter().flatten() {
            seen += 1;
            for key in a.as_object().unwrap().keys() {
                assert!(
                    allowed.contains(&key),
                    "{file}: assertion key `{key}` is not in the schema"
                );
            }
        }
    }
    assert!(seen > 0, "a sample page ships with assertions");
}

/// The JSON Schema and the loader agree on every fixture: the pages in
/// `tests/data/pages/accepted` (and the sample pages) pass both; each page in
/// `tests/data/pages/refused` (one mistake each: a misspelled key, a wrong type, an
/// unknown enum value, a number out of range, a missing part) fails both.
#[test]
fn the_schema_and_the_loader_agree_on_every_fixture() {
    let validator = jsonschema::draft202012::new(&schema()).expect("the schema compiles");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = |sub: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        v.sort();
        v
    };
    let loader_errors = |text: &str| -> Vec<String> {
        rulebench::app::App::check_text(text)
            .into_iter()
            .filter(|d| d.is_error())
            .map(|d| d.to_string())
            .collect()
    };
    let accepted: Vec<_> = files("tests/data/pages/accepted")
        .into_iter()
        .chain(files("sample-pages"))
        .collect();
    let refused = files("tests/data/pages/refused");
    assert!(accepted.len() >= 5 && refused.len() >= 20);
    let mut disagree = Vec::new();
    for file in &accepted {
        let text = std::fs::read_to_string(file).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let schema_errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        let loader = loader_errors(&text);
        if !schema_errors.is_empty() || !loader.is_empty() {
            disagree.push(format!(
                "{} should pass both: schema {schema_errors:?}, loader {loader:?}",
                file.display()
            ));
        }
    }
    for file in &refused {
        let text = std::fs::read_to_string(file).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let schema_ok = validator.is_valid(&doc);
        let loader = loader_errors(&text);
        if schema_ok || loader.is_empty() {
            disagree.push(format!(
                "{} should fail both: schema valid {schema_ok}, loader {loader:?}",
                file.display()
            ));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// The schema says which matchers take `expected` and which refuse it, as the registry
/// does: a new matcher that takes one is not accepted without it by the schema while the
/// loader refuses it.
#[test]
fn the_schema_knows_which_matchers_take_expected() {
    use rulebench_core::assertions::{Arity, REGISTRY};
    let s = schema();
    let conditions = s
        .pointer("/$defs/assertion/allOf")
        .and_then(Value::as_array)
        .expect("the assertion's conditions");
    let mut takes = Vec::new();
    let mut refuses = Vec::new();
    for c in conditions {
        let matcher = &c["if"]["properties"]["matcher"];
        let names: Vec<String> = match (&matcher["const"], &matcher["enum"]) {
            (Value::String(one), _) => vec![one.clone()],
            (_, Value::Array(many)) => many
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => continue,
        };
        if c["then"]["required"] == serde_json::json!(["expected"]) {
            takes.extend(names);
        } else if c["then"]["not"]["required"] == serde_json::json!(["expected"]) {
            refuses.extend(names);
        }
    }
    takes.sort();
    refuses.sort();
    let of = |arity: Arity| {
        let mut names: Vec<String> = REGISTRY
            .iter()
            .filter(|m| m.arity == arity)
            .map(|m| m.name.to_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(takes, of(Arity::One), "matchers that require expected");
    assert_eq!(refuses, of(Arity::None), "matchers that refuse expected");
}

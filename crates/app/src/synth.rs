//! Synthetic pages for benchmarks and property tests: deterministic, no I/O.

use serde_json::{Map, Value, json};

use rulebench_core::model::{
    Dataset, DevicePolicy, Organization, PAGE_FORMAT, Page, PlanTier, Rule, SelectionPolicy,
};

/// A small deterministic PRNG (xorshift64*), so generated pages are reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const PROVIDERS: &[&str] = &[
    "openai",
    "anthropic",
    "google",
    "meta",
    "mistral",
    "cohere",
    "deepseek",
    "qwen",
];
const CAPS: &[&str] = &[
    "Streaming",
    "ToolCalling",
    "StructuredOutputs",
    "Vision",
    "Audio",
    "Seed",
    "Citations",
    "Caching",
];
const CONTEXT: &[i64] = &[
    8_192, 16_384, 32_768, 65_536, 128_000, 200_000, 1_000_000, 2_000_000,
];
const TIERS: &[&str] = &["free", "pro", "max", "enterprise"];

/// How the synthetic target values are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Fields from small realistic domains (capability flags, a few context sizes).
    Realistic,
    /// Every rule also reads a field unique to each target: no two targets group.
    Unique,
}

/// A page of `sources` × `targets` with `rules` rules mixing the shapes analysts write.
pub fn page(targets: usize, rules: usize, sources: usize, spread: Spread, seed: u64) -> Page {
    let mut rng = Rng::new(seed);
    let target_rows = (0..targets)
        .map(|i| {
            let mut row = Map::new();
            row.insert("id".into(), json!(format!("model-{i:05}")));
            row.insert("displayName".into(), json!(format!("Model {i}")));
            row.insert("provider".into(), json!(rng.pick(PROVIDERS)));
            for cap in CAPS {
                row.insert(format!("supports{cap}"), json!(rng.below(4) != 0));
            }
            row.insert("contextWindow".into(), json!(rng.pick(CONTEXT)));
            row.insert("tier".into(), json!(rng.pick(TIERS)));
            row.insert("pricePerMTok".into(), json!(rng.below(20) as f64 * 0.5));
            row.insert(
                "latencyMs".into(),
                json!(if spread == Spread::Unique {
                    10_000 + i as i64
                } else {
                    100 * (1 + rng.below(10) as i64)
                }),
            );
            row
        })
        .collect();
    let source_rows = (0..sources)
        .map(|i| {
            let mut row = Map::new();
            row.insert("id".into(), json!(format!("client-{i:03}")));
            row.insert("displayName".into(), json!(format!("Client {i}")));
            for cap in CAPS {
                row.insert(format!("needs{cap}"), json!(rng.below(2) == 0));
            }
            row.insert("minContext".into(), json!(rng.pick(CONTEXT)));
            row.insert("maxPrice".into(), json!(2.0 + rng.below(8) as f64));
            row.insert(
                "maxLatencyMs".into(),
                json!(200 + 100 * rng.below(20) as i64),
            );
            row.insert(
                "provider".into(),
                if rng.below(3) == 0 {
                    json!(rng.pick(PROVIDERS))
                } else {
                    Value::Null
                },
            );
            row
        })
        .collect();
    let rules: Vec<Rule> = (0..rules).map(|i| rule(i, spread, &mut rng)).collect();
    Page {
        format: PAGE_FORMAT.into(),
        id: format!("synthetic-{targets}x{}", rules.len()),
        name: "Synthetic benchmark page".into(),
        description: None,
        organization: Some(Organization {
            id: "bench".into(),
            name: "Bench".into(),
            plan_tier: PlanTier::Enterprise,
        }),
        source: Dataset {
            name: "Clients".into(),
            key: vec!["id".into()],
            label: Some("displayName".into()),
            summary: vec![],
            priority: None,
            rows: source_rows,
            ..Dataset::default()
        },
        target: Dataset {
            name: "Models".into(),
            key: vec!["id".into()],
            label: Some("displayName".into()),
            summary: vec!["provider".into()],
            priority: None,
            rows: target_rows,
            ..Dataset::default()
        },
        rules,
        device_policy: DevicePolicy::default(),
        selection_policy: SelectionPolicy::default(),
        overrides: vec![],
        assertions: vec![],
        expectations: vec![],
    }
}

/// Makes every source after the first `distinct` a copy of one of those, under its own
/// id and name, scattered through the rows: a page whose sources collapse to `distinct`
/// profiles, as real clients do (a few hundred kinds among 100,000 rows).
pub fn repeat_sources(page: &mut Page, distinct: usize) {
    let distinct = distinct.max(1);
    let rows = &mut page.source.rows;
    for i in distinct..rows.len() {
        let of = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as usize % distinct;
        let mut row = rows[of].clone();
        for own in ["id", "displayName"] {
            if let Some(v) = rows[i].get(own) {
                row.insert(own.into(), v.clone());
            }
        }
        rows[i] = row;
    }
}

fn rule(i: usize, spread: Spread, rng: &mut Rng) -> Rule {
    let cap = rng.pick(CAPS);
    let logic = match i % 6 {
        // The seed's shape: a need on the source met by a capability of the target.
        0 => json!({"or": [{"==": [{"var": format!("source.needs{cap}")}, false]},
                           {"and": [{"==": [{"var": format!("source.needs{cap}")}, true]},
                                    {"==": [{"var": format!("target.supports{cap}")}, true]}]}]}),
        // A target-only threshold.
        1 => json!({">=": [{"var": "target.contextWindow"}, rng.pick(CONTEXT)]}),
        // Field to field.
        2 => json!({">=": [{"var": "target.contextWindow"}, {"var": "source.minContext"}]}),
        // Membership.
        3 => json!({"in": [{"var": "target.tier"}, [rng.pick(TIERS), rng.pick(TIERS)]]}),
        // Null means any.
        4 => json!({"or": [{"==": [{"var": "source.provider"}, null]},
                           {"==": [{"var": "source.provider"}, {"var": "target.provider"}]}]}),
        // Arithmetic with two target fields.
        _ => {
            json!({"<=": [{"*": [{"var": "target.pricePerMTok"}, 2]}, {"var": "source.maxPrice"}]})
        }
    };
    let logic = match spread {
        Spread::Realistic => logic,
        Spread::Unique => {
            json!({"and": [logic, {"<=": [{"var": "target.latencyMs"}, {"+": [{"var": "source.maxLatencyMs"}, 20_000]}]}]})
        }
    };
    Rule {
        expression: None,
        warning: None,
        applies_when: None,
        family: None,
        id: format!("rule-{i:03}"),
        name: format!("Rule {i}"),
        required: i.is_multiple_of(10),
        weight: 1.0 + (i % 3) as f64,
        category: format!("Category {}", i % 5),
        description: None,
        logic,
    }
}

/// `n` verdict assertions over a synthetic page, the first over every source (`*`): the
/// shapes people pin (a target's verdict, the selection verdict, the recommendation,
/// every target's reason).
pub fn assertions(page: &Page, n: usize) -> Vec<rulebench_core::assertions::Assertion> {
    use rulebench_core::assertions::{Assertion, PathMatch};
    let sources = page.source.rows.len().max(1);
    let target = |i: usize| {
        page.target
            .rows
            .get(i % page.target.rows.len().max(1))
            .map(|r| page.target.row_id(r))
            .unwrap_or_default()
    };
    (0..n)
        .map(|i| {
            let select = match i {
                0 => "*".to_owned(),
                _ => page
                    .source
                    .rows
                    .get(i % sources)
                    .map(|r| page.source.row_key(r))
                    .unwrap_or_else(|| "*".to_owned()),
            };
            let (path, path_match, matcher, expected, not) = match i % 4 {
                0 => (
                    format!("$.targets[?@.id=='{}'].verdict", target(i)),
                    PathMatch::Any,
                    "toBeOneOf",
                    Some(json!([0, 1, 2])),
                    false,
                ),
                1 => (
                    "$.selectionVerdict".to_owned(),
                    PathMatch::Any,
                    "toBeOneOf",
                    Some(json!([1, 2])),
                    false,
                ),
                2 => (
                    "$.recommendedTargetId".to_owned(),
                    PathMatch::Any,
                    "toBeNull",
                    None,
                    true,
                ),
                _ => (
                    "$.targets[*].reason".to_owned(),
                    PathMatch::All,
                    "toBeOneOf",
                    Some(json!([
                        "override",
                        "required-fail",
                        "full",
                        "partial",
                        "low-score"
                    ])),
                    false,
                ),
            };
            Assertion {
                id: format!("bench-{i:03}"),
                description: Some(format!("synthetic assertion {i}")),
                select,
                path,
                path_match,
                matcher: matcher.to_owned(),
                expected,
                not,
            }
        })
        .collect()
}

/// `{source: <first source row>, target: <row>}` for every target row, in the engine's
/// own form in `arena`: the input of the plain-engine baselines (`bench`, `cargo bench`).
pub fn engine_contexts<'a>(
    page: &Page,
    arena: &'a datalogic_rs::bumpalo::Bump,
) -> Vec<datalogic_rs::DataValue<'a>> {
    use datalogic_rs::DataValue;
    let source = DataValue::from_serde_value_in(&Value::Object(page.source.rows[0].clone()), arena);
    page.target
        .rows
        .iter()
        .map(|t| {
            let t = DataValue::from_serde_value_in(&Value::Object(t.clone()), arena);
            DataValue::Object(arena.alloc([("source", source), ("target", t)]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_sources_keep_their_ids_and_copy_a_profile() {
        let mut p = page(4, 3, 50, Spread::Realistic, 7);
        let before = p.source.rows.clone();
        repeat_sources(&mut p, 5);
        let profile = |r: &Map<String, Value>| {
            let mut r = r.clone();
            r.remove("id");
            r.remove("displayName");
            r
        };
        let profiles: Vec<_> = before[..5].iter().map(profile).collect();
        for (i, (row, was)) in p.source.rows.iter().zip(&before).enumerate() {
            assert_eq!(row["id"], was["id"], "row {i} keeps its id");
            assert_eq!(row["displayName"], was["displayName"]);
            assert!(
                profiles.contains(&profile(row)),
                "row {i} has one of 5 profiles"
            );
        }
        let used: std::collections::HashSet<String> = p
            .source
            .rows
            .iter()
            .map(|r| serde_json::to_string(&profile(r)).unwrap())
            .collect();
        assert_eq!(used.len(), 5, "every profile is used");
    }

    #[test]
    fn synthetic_pages_are_reproducible_and_valid() {
        let a = page(50, 12, 3, Spread::Realistic, 7);
        let b = page(50, 12, 3, Spread::Realistic, 7);
        assert_eq!(a, b);
        let errors: Vec<_> = rulebench_core::check::page(&a)
            .into_iter()
            .filter(|d| d.is_error())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}

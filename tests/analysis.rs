//! Analysis with witnesses (`rulebench analyze`, and `check`'s warnings): a page built
//! to hold every kind of finding has each, a page with none has none, and every claim is
//! checked by the engine — a claim over any row on thousands of sampled rows of the
//! schema's types (and on random pages of random rules), a claim over the current rows
//! on its witness.

mod common;

use rulebench::app::App;
use rulebench_core::analyze::{self, Analysis, Finding, Kind};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{Page, Row};
use rulebench_core::schema::Schema;
use rulebench_core::verdict::Verdict;
use serde_json::{Value, json};

fn parse(v: &Value) -> Page {
    let (page, diags) = rulebench_core::read::page_all(&v.to_string());
    let page = page.unwrap_or_else(|| panic!("{diags:?}"));
    assert!(!diags.iter().any(|d| d.is_error()), "{diags:?}");
    page
}

/// Every kind of finding: a rule no row passes, one every row passes, one implied by
/// another, two equivalent, a required rule that vetoes every target of a source, a
/// full threshold no row can reach (the impossible rule's weight is lost), a stale
/// override.
fn findings_page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "findings", "name": "Findings",
        "source": {"name": "Apps", "key": ["id"], "rows": [
            {"id": "photo", "needsVision": true, "minContext": 100, "tier": "pro"},
            {"id": "notes", "needsVision": false, "minContext": 8, "tier": "pro"},
            {"id": "free", "needsVision": false, "minContext": 8, "tier": "free"}
        ]},
        "target": {"name": "Models", "key": ["model"], "rows": [
            {"model": "big", "vision": true, "context": 200, "price": 3},
            {"model": "small", "vision": false, "context": 50, "price": 1},
            {"model": "tiny", "vision": false, "context": 8, "price": 0}
        ]},
        "rules": [
            {"id": "impossible", "name": "Impossible", "weight": 1,
             "logic": {"and": [{">": [{"var": "target.context"}, 100]}, {"<": [{"var": "target.context"}, 50]}]}},
            {"id": "tautology", "name": "Tautology", "weight": 1,
             "logic": {"or": [{">=": [{"var": "target.price"}, 0]}, {"<": [{"var": "target.price"}, 0]}]}},
            {"id": "context", "name": "Context", "weight": 2,
             "logic": {">=": [{"var": "target.context"}, {"var": "source.minContext"}]}},
            {"id": "context-strict", "name": "Context, strictly", "weight": 1,
             "logic": {">": [{"var": "target.context"}, {"var": "source.minContext"}]}},
            {"id": "vision", "name": "Vision", "weight": 2,
             "logic": {"or": [{"==": [{"var": "source.needsVision"}, false]}, {"==": [{"var": "target.vision"}, true]}]}},
            {"id": "vision-again", "name": "Vision again", "weight": 1,
             "logic": {"or": [{"==": [{"var": "target.vision"}, true]}, {"==": [{"var": "source.needsVision"}, false]}]}},
            {"id": "pro-tier", "name": "Pro tier", "required": true,
             "logic": {"==": [{"var": "source.tier"}, "pro"]}}
        ],
        "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1, "partialThreshold": 0.4},
        "overrides": [
            {"sourceKey": "id=free", "targetKey": "model=big", "value": false, "note": "free tier"},
            {"sourceKey": "id=notes", "targetKey": "model=big", "value": true}
        ]
    })
}

fn run(page: &Page) -> Analysis {
    let mut m = Matrix::new(page).unwrap();
    analyze::analyze(page, &Schema::of(page), &mut m)
}

/// A small deterministic random source.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A sampled value of a field of the given kinds: numbers near the page's literals and
/// anywhere, strings, booleans, null, or missing (`None`).
fn sample(rng: &mut Rng, kinds: &[&str], near: &[f64]) -> Option<Value> {
    match rng.below(12) {
        0 => return None,
        1 => return Some(Value::Null),
        _ => {}
    }
    let kind = kinds[rng.below(kinds.len())];
    Some(match kind {
        "number" => {
            let base = if near.is_empty() || rng.below(3) == 0 {
                rng.below(400) as f64 - 200.0
            } else {
                near[rng.below(near.len())]
            };
            let offset = [0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 0.001, 7.0][rng.below(8)];
            let x = base + offset;
            if x.fract() == 0.0 {
                json!(x as i64)
            } else {
                json!(x)
            }
        }
        "string" => json!(["pro", "free", "", "x", "0", "1", "Pro"][rng.below(7)]),
        _ => json!(rng.below(2) == 0),
    })
}

/// The literals a logic mentions (numbers), to sample near them.
fn numbers_in(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(n.as_f64().unwrap()),
        Value::Array(a) => a.iter().for_each(|x| numbers_in(x, out)),
        Value::Object(o) => o.values().for_each(|x| numbers_in(x, out)),
        _ => {}
    }
}

/// Samples `n × n` pairs of rows of the page's field types and returns the page with
/// them (its rules kept), for the engine to evaluate.
fn sampled(page: &Page, n: usize, seed: u64) -> Page {
    let schema = Schema::of(page);
    let mut near = Vec::new();
    for r in &page.rules {
        numbers_in(&r.logic, &mut near);
    }
    let mut rng = Rng(seed);
    let mut out = page.clone();
    out.overrides.clear();
    out.assertions.clear();
    for (d, s) in [
        (&mut out.source, &schema.source),
        (&mut out.target, &schema.target),
    ] {
        let key = d.key[0].clone();
        let fields: Vec<(String, Vec<&str>)> = s
            .fields
            .iter()
            .filter(|(f, _)| **f != key)
            .map(|(f, fs)| {
                let mut kinds: Vec<&str> = fs.kinds().iter().map(|(k, _, _)| *k).collect();
                if kinds.is_empty() {
                    kinds = vec!["number", "string", "boolean"];
                }
                (f.clone(), kinds)
            })
            .collect();
        d.rows = (0..n)
            .map(|i| {
                let mut row = Row::new();
                row.insert(key.clone(), json!(format!("r{i}")));
                for (f, kinds) in &fields {
                    if let Some(v) = sample(&mut rng, kinds, &near) {
                        row.insert(f.clone(), v);
                    }
                }
                row
            })
            .collect();
        d.patches.clear();
    }
    out
}

/// Each rule's outcome on every sampled pair.
fn outcomes(page: &Page) -> Vec<Vec<Option<bool>>> {
    let mut m = Matrix::new(page).unwrap();
    let mut out = vec![Vec::new(); page.rules.len()];
    for s in 0..page.source.rows.len() {
        for (r, c) in m.columns(s).iter().enumerate() {
            out[r].extend(c.outcome.iter().map(|o| o.counted()));
        }
    }
    out
}

/// Checks every claim over any row on sampled pairs, and every made witness.
fn check_any_row(page: &Page, analysis: &Analysis, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let o = outcomes(&sampled(page, 60, seed));
        for f in analysis.findings.iter().filter(|f| f.any_row) {
            let Some(r) = f.rule_index else { continue };
            let pass = |x: &Option<bool>| *x == Some(true);
            match f.kind {
                Kind::NeverTrue => assert!(!o[r].iter().any(pass), "{f:?}"),
                Kind::AlwaysTrue => assert!(!o[r].contains(&Some(false)), "{f:?}"),
                Kind::ImpliedBy => {
                    let a = f.other_index.unwrap();
                    assert!(
                        !(0..o[r].len()).any(|p| pass(&o[a][p]) && !pass(&o[r][p])),
                        "{f:?}"
                    );
                }
                Kind::Equivalent => assert_eq!(o[r], o[f.other_index.unwrap()], "{f:?}"),
                _ => {}
            }
        }
    }
    // A made witness shows what it says, by the engine.
    for f in analysis.findings.iter().filter(|f| f.any_row) {
        for w in &f.witnesses {
            let (Some(s), Some(t)) = (&w.source, &w.target) else {
                continue;
            };
            let mut p = page.clone();
            p.overrides.clear();
            let (sk, tk) = (p.source.key[0].clone(), p.target.key[0].clone());
            let mut s = s.clone();
            s.insert(sk, json!("w"));
            let mut t = t.clone();
            t.insert(tk, json!("w"));
            p.source.rows = vec![s];
            p.target.rows = vec![t];
            let e = Matrix::new(&p).unwrap().evaluate(0);
            let r = f.rule_index.unwrap();
            let got = e.columns[r].outcome[0].counted();
            match f.kind {
                Kind::NeverTrue => assert_ne!(got, Some(true), "{f:?}"),
                Kind::AlwaysTrue => assert_eq!(got, Some(true), "{f:?}"),
                Kind::ImpliedBy => {
                    // The pair that tells the two apart: this rule passes, the other not.
                    let other = e.columns[f.other_index.unwrap()].outcome[0].counted();
                    assert_eq!((got, other == Some(true)), (Some(true), false), "{f:?}");
                }
                Kind::Equivalent => {
                    let other = e.columns[f.other_index.unwrap()].outcome[0].counted();
                    assert_eq!((got, other), (Some(true), Some(true)), "{f:?}");
                }
                _ => {}
            }
        }
    }
}

fn kinds(a: &Analysis) -> Vec<(Kind, Option<&str>, Option<&str>)> {
    a.findings
        .iter()
        .map(|f| (f.kind, f.rule.as_deref(), f.other.as_deref()))
        .collect()
}

fn find(a: &Analysis, kind: Kind) -> Vec<&Finding> {
    a.findings.iter().filter(|f| f.kind == kind).collect()
}

#[test]
fn a_page_of_every_finding_has_each_and_every_claim_holds() {
    let page = parse(&findings_page());
    let a = run(&page);
    let k = kinds(&a);
    for want in [
        (Kind::NeverTrue, Some("impossible"), None),
        (Kind::AlwaysTrue, Some("tautology"), None),
        (Kind::ImpliedBy, Some("context"), Some("context-strict")),
        (Kind::Equivalent, Some("vision-again"), Some("vision")),
        (Kind::RequiredVetoes, Some("pro-tier"), None),
    ] {
        assert!(k.contains(&want), "{want:?} not in {k:?}");
    }
    assert!(a.unknown.is_empty(), "{:?}", a.unknown);
    check_any_row(&page, &a, 0..20);
    // The vetoing rule fails every target of its witness source, by the engine.
    let veto = find(&a, Kind::RequiredVetoes)[0];
    assert!(
        veto.message.contains("1 of 3 sources (id=free)"),
        "{}",
        veto.message
    );
    let mut m = Matrix::new(&page).unwrap();
    let free = page
        .source
        .rows
        .iter()
        .position(|r| r["id"] == "free")
        .unwrap();
    let e = m.evaluate(free);
    let r = veto.rule_index.unwrap();
    assert!((0..3).all(|t| e.columns[r].outcome[t].counted() == Some(false)));
    // Full is out of reach for any row: the impossible rule's weight (1 of 8) is lost.
    let unreachable = find(&a, Kind::UnreachableThreshold);
    assert_eq!(unreachable.len(), 1, "{unreachable:?}");
    assert!(unreachable[0].any_row);
    assert!(
        unreachable[0]
            .message
            .starts_with("fullThreshold 1 cannot be reached by any row: impossible never pass"),
        "{}",
        unreachable[0].message
    );
    for s in 0..3 {
        let e = m.evaluate(s);
        assert!(
            e.devices
                .iter()
                .all(|d| d.verdict != Verdict::Full || !e.overrides.is_empty())
        );
        assert!(
            e.devices
                .iter()
                .enumerate()
                .all(|(t, d)| e.overrides.get(t).is_some() || d.score <= 7.0 / 8.0)
        );
    }
    // The free tier's override agrees with what the rules alone give (0); the other
    // (notes × big forced 2) does not.
    let stale = find(&a, Kind::StaleOverride);
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert_eq!(stale[0].override_index, Some(0));
    let mut without = page.clone();
    without.overrides.remove(0);
    let e = Matrix::new(&without).unwrap().evaluate(free);
    let big = page
        .target
        .rows
        .iter()
        .position(|r| r["model"] == "big")
        .unwrap();
    assert_eq!(e.devices[big].verdict, Verdict::None);
    // As `check` warnings, with their codes and pointers.
    let diags = analyze::diagnostics(&a);
    let codes: Vec<(&str, &str)> = diags
        .iter()
        .map(|d| (d.code.as_str(), d.pointer.as_str()))
        .collect();
    for want in [
        ("never-true", "/rules/0/logic"),
        ("always-true", "/rules/1/logic"),
        ("implied-rule", "/rules/2/logic"),
        ("equivalent-rules", "/rules/5/logic"),
        ("required-vetoes", "/rules/6/logic"),
        ("unreachable-threshold", "/devicePolicy/fullThreshold"),
        ("stale-override", "/overrides/0"),
    ] {
        assert!(codes.contains(&want), "{want:?} not in {codes:?}");
    }
}

#[test]
fn pages_without_findings_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("a.db")).unwrap();
    let (page, _) = app.page("llm-chat-clients").unwrap();
    let a = run(&page);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert!(a.unknown.is_empty(), "{:?}", a.unknown);
    assert!(a.pairs_evaluated > 0);
    // A clean version of the findings page: the impossible, tautological, implied and
    // equivalent rules gone, every source on the pro tier, no overrides.
    let mut v = findings_page();
    let rules = v["rules"].as_array_mut().unwrap();
    rules.retain(|r| ["context", "vision", "pro-tier"].contains(&r["id"].as_str().unwrap()));
    v["source"]["rows"][2]["tier"] = json!("pro");
    v["overrides"] = json!([]);
    let clean = parse(&v);
    let a = run(&clean);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
}

#[test]
fn claims_on_random_pages_hold_on_sampled_rows() {
    let mut rng = Rng(7);
    let fields = [
        ("source", "a"),
        ("source", "b"),
        ("target", "x"),
        ("target", "y"),
    ];
    let literals = [
        json!(0),
        json!(1),
        json!(5),
        json!(10),
        json!(2.5),
        json!("5"),
        json!(true),
        json!(null),
    ];
    let ops = ["==", "!=", "<", "<=", ">", ">=", "===", "!=="];
    fn var(side: &str, f: &str) -> Value {
        json!({"var": format!("{side}.{f}")})
    }
    let mut claims = 0;
    for page_no in 0..12 {
        let leaf = |rng: &mut Rng| -> Value {
            let (side, f) = fields[rng.below(fields.len())];
            let op = ops[rng.below(ops.len())];
            if rng.below(4) == 0 {
                let (s2, f2) = fields[rng.below(fields.len())];
                json!({op: [var(side, f), var(s2, f2)]})
            } else if rng.below(6) == 0 {
                // Two fields in one window, ordered: they need two values between the
                // same two literals.
                let (s2, f2) = fields[rng.below(fields.len())];
                let lo = literals[rng.below(5)].clone();
                let hi = literals[rng.below(5)].clone();
                json!({"and": [
                    {">": [var(side, f), lo.clone()]}, {"<": [var(side, f), hi.clone()]},
                    {">": [var(s2, f2), lo]}, {"<": [var(s2, f2), hi]},
                    {op: [var(side, f), var(s2, f2)]}
                ]})
            } else if rng.below(5) == 0 {
                // A window on one field: empty or not depending on the values between.
                let lo = literals[rng.below(5)].clone();
                let hi = literals[rng.below(5)].clone();
                json!({"and": [{">": [var(side, f), lo]}, {"<": [var(side, f), hi]}]})
            } else if rng.below(8) == 0 {
                json!({"in": [var(side, f), [literals[rng.below(4)].clone(), literals[rng.below(4)].clone()]]})
            } else {
                json!({op: [var(side, f), literals[rng.below(literals.len())].clone()]})
            }
        };
        let mut rules = Vec::new();
        for i in 0..8 {
            let logic = match rng.below(5) {
                0 => leaf(&mut rng),
                1 => json!({"!": [leaf(&mut rng)]}),
                2 => json!({"and": [leaf(&mut rng), leaf(&mut rng)]}),
                3 => json!({"or": [leaf(&mut rng), leaf(&mut rng)]}),
                _ => json!({"if": [leaf(&mut rng), leaf(&mut rng), leaf(&mut rng)]}),
            };
            rules.push(json!({"id": format!("r{i}"), "name": format!("R{i}"), "weight": 1, "logic": logic}));
        }
        let row = |rng: &mut Rng, key: &str, names: [&str; 2], i: usize| {
            let mut r = serde_json::Map::new();
            r.insert(key.into(), json!(format!("{key}{i}")));
            r.insert(names[0].into(), json!(rng.below(12) as i64 - 1));
            r.insert(names[1].into(), json!(rng.below(12) as f64 / 2.0));
            Value::Object(r)
        };
        let sources: Vec<Value> = (0..3).map(|i| row(&mut rng, "id", ["a", "b"], i)).collect();
        let targets: Vec<Value> = (0..3)
            .map(|i| row(&mut rng, "model", ["x", "y"], i))
            .collect();
        let page = parse(&json!({
            "format": "rulebench.page/v1", "id": format!("random-{page_no}"), "name": "Random",
            "source": {"name": "S", "key": ["id"], "rows": sources},
            "target": {"name": "T", "key": ["model"], "rows": targets},
            "rules": rules
        }));
        let a = run(&page);
        claims += a.findings.iter().filter(|f| f.any_row).count();
        check_any_row(&page, &a, 0..6);
    }
    // The random rules make claims to check (not a vacuous pass).
    assert!(claims > 10, "{claims}");
}

#[test]
fn the_command_and_check_report_the_findings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let file = dir.path().join("findings.json");
    std::fs::write(&file, findings_page().to_string()).unwrap();
    let file = file.to_str().unwrap();
    let (code, out, err) = common::rb_as_is(&db, &["analyze", file]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("findings (revision 0): 7 findings; 7 of 7 rules decided over any row"),
        "{out}"
    );
    assert!(
        out.contains("never-true rule impossible [any row]"),
        "{out}"
    );
    assert!(out.contains("stale-override [current rows]"), "{out}");
    assert!(
        out.contains("witness: source id=free × target model=big"),
        "{out}"
    );
    let (code, out, _) = common::rb_as_is(&db, &["analyze", file, "--format", "json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 7);
    assert_eq!(v["findings"][0]["kind"], "never-true");
    // `check` says the same as warnings, located in the file.
    let (code, out, _) = common::rb_as_is(&db, &["check", file]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warning[never-true]"), "{out}");
    assert!(out.contains("warning[stale-override]"), "{out}");
    // The analysis's never-true replaces constant-over-data for that rule.
    assert!(!out.contains("constant-over-data] at /rules/0"), "{out}");
}

/// Claims a review found the abstraction could make wrongly: none is made, and what is
/// claimed holds on sampled rows.
#[test]
fn no_wrong_claim_on_the_cases_a_review_found() {
    let rules = json!([
        // Two literals looked for in one string field: "ab" passes.
        {"id": "both-letters", "name": "A", "weight": 1,
         "logic": {"and": [{"in": ["a", {"var": "source.s"}]}, {"in": ["b", {"var": "source.s"}]}]}},
        // A number looked for in a string: "A5" passes.
        {"id": "five-in", "name": "B", "weight": 1, "logic": {"in": [5, {"var": "source.s"}]}},
        // Loose and strict equality to 5 and "5" differ (" 5").
        {"id": "loose-five", "name": "C", "weight": 1, "logic": {"==": [{"var": "target.t"}, 5]}},
        {"id": "loose-text-five", "name": "D", "weight": 1, "logic": {"==": [{"var": "target.t"}, "5"]}},
        {"id": "loose-not-strict", "name": "E", "weight": 1,
         "logic": {"and": [{"==": [{"var": "target.t"}, 5]}, {"!==": [{"var": "target.t"}, "5"]}]}},
        // A default that is logic: outside the fragment.
        {"id": "default-logic", "name": "F", "weight": 1,
         "logic": {"==": [{"var": ["source.x", {"var": "target.t"}]}, 5]}},
        // Beyond a huge bound.
        {"id": "huge", "name": "G", "weight": 1, "logic": {">": [{"var": "source.n"}, 1e17]}},
        // A patched value of another type.
        {"id": "not-unlimited", "name": "H", "weight": 1,
         "logic": {"!=": [{"var": "target.maxTokens"}, "unlimited"]}}
    ]);
    let page = parse(&json!({
        "format": "rulebench.page/v1", "id": "review", "name": "Review",
        "source": {"name": "S", "key": ["id"], "rows": [
            {"id": "s1", "s": "x", "x": 1, "n": 3}, {"id": "s2", "s": "y", "x": 2, "n": 4}
        ]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "t1", "t": "5", "maxTokens": 10}, {"id": "t2", "t": "6", "maxTokens": 20}
        ], "patches": [{"key": "id=t2", "set": {"maxTokens": "unlimited"}}]},
        "rules": rules
    }));
    let a = run(&page);
    let k = kinds(&a);
    for (kind, rule, _) in &k {
        assert!(
            !matches!(kind, Kind::NeverTrue | Kind::AlwaysTrue),
            "{kind:?} {rule:?} in {k:?}"
        );
    }
    assert!(
        !k.contains(&(
            Kind::Equivalent,
            Some("loose-text-five"),
            Some("loose-five")
        )),
        "{k:?}"
    );
    assert!(
        a.unknown.iter().any(|u| u.rule == "default-logic"),
        "{:?}",
        a.unknown
    );
    check_any_row(&page, &a, 0..4);
    // Weights in exact units: the never-passing rule (0.15) leaves 0.6 of 0.75 = 0.8,
    // which meets fullThreshold 0.8 exactly — no unreachable claim.
    let page = parse(&json!({
        "format": "rulebench.page/v1", "id": "units", "name": "Units",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s1", "x": 1}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t1", "y": 1}]},
        "rules": [
            {"id": "never", "name": "Never", "weight": 0.15,
             "logic": {"and": [{">": [{"var": "target.y"}, 5]}, {"<": [{"var": "target.y"}, 2]}]}},
            {"id": "ok", "name": "OK", "weight": 0.6, "logic": {">=": [{"var": "target.y"}, {"var": "source.x"}]}}
        ],
        "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 0.8, "partialThreshold": 0.4}
    }));
    let a = run(&page);
    assert!(find(&a, Kind::NeverTrue).len() == 1, "{:?}", a.findings);
    assert!(
        find(&a, Kind::UnreachableThreshold).is_empty(),
        "{:?}",
        a.findings
    );
}

/// The analysis over any row has a budget of made pairs in all: past it, the rules left
/// are unknown and the pairs of rules not looked at are said — nothing claimed of them.
#[test]
fn past_its_budget_the_analysis_says_what_it_left_undecided() {
    let page = parse(&findings_page());
    let mut m = Matrix::new(&page).unwrap();
    let a = analyze::analyze_within(&page, &Schema::of(&page), &mut m, 30);
    assert!(
        a.unknown
            .iter()
            .any(|u| u.why.contains("budget of 30 made pairs")),
        "{:?}",
        a.unknown
    );
    // What was decided before the budget ran out still holds.
    check_any_row(&page, &a, 0..3);
    let full = run(&page);
    assert!(
        a.findings.iter().filter(|f| f.any_row).count()
            < full.findings.iter().filter(|f| f.any_row).count()
    );
}

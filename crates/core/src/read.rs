//! Reading a page: the page file's rule input (JSONLogic, infix text or a predicate
//! list) desugared into a rule. The model is types; this step parses.

use serde_json::Value;

use crate::diag::{Code, Diagnostic, parse_json};
use crate::model::{Page, Rule, RuleInput, RuleItem};
use crate::predicates::{self, PredicateList};
use crate::validate;

impl TryFrom<RuleInput> for Rule {
    type Error = String;

    fn try_from(r: RuleInput) -> Result<Rule, String> {
        let op = r.logical_operator.as_ref().map(|v| ("logical_operator", v));
        // An infix `expression`: the logic is parsed from it (and must agree with a
        // `logic` given too, as exports write both).
        let parsed = match &r.expression {
            None => None,
            Some(text) => {
                no_control(&r.name, "expression", text)?;
                if r.predicates.is_some() {
                    return Err(format!(
                        "rule `{}`: give `predicates` or `expression`, not both",
                        r.name
                    ));
                }
                let logic = infix(&r.name, "expression", text)?;
                if let Some(given) = &r.logic
                    && given != &logic
                {
                    return Err(format!(
                        "rule `{}`: `expression` and `logic` disagree (the expression reads as {logic}); give one, or both alike",
                        r.name
                    ));
                }
                Some(logic)
            }
        };
        let logic_in = parsed.as_ref().or(r.logic.as_ref());
        let (logic, _) = super::predicates::rule_logic(logic_in, r.predicates.as_ref(), op)
            .map_err(|errors| {
                let what: Vec<String> = errors.iter().map(ToString::to_string).collect();
                format!("rule `{}`: {}", r.name, what.join("; "))
            })?;
        let applies_when = r.applies_when.map(|v| condition(&r.name, v)).transpose()?;
        Ok(Rule {
            applies_when,
            family: None,
            id: r.id,
            name: r.name,
            required: r.required,
            weight: r.weight,
            category: r.category,
            description: r.description,
            logic,
            expression: r.expression,
            warning: r.warning,
        })
    }
}

/// A rule's infix text (`key`: `expression` or `appliesWhen`) holds no control
/// character.
fn no_control(rule: &str, key: &str, text: &str) -> Result<(), String> {
    match text.chars().find(|&c| super::text::is_unsafe(c)) {
        Some(c) => Err(format!(
            "rule `{rule}`: `{key}` holds the control character U+{:04X}: write it as an escape in a JSONLogic string instead",
            c as u32
        )),
        None => Ok(()),
    }
}

/// A rule's infix text (`key`) parsed, an error located inside it.
fn infix(rule: &str, key: &str, text: &str) -> Result<Value, String> {
    super::infix::parse(text, &super::infix::Fields::default()).map_err(|e| {
        format!(
            "rule `{rule}`: `{key}` {}:{}: {}",
            e.line, e.column, e.message
        )
    })
}

/// A rule's `appliesWhen` as written: an infix text, a predicate list
/// (`{"predicates": […], "logical_operator": …}`), or JSONLogic.
pub fn condition(rule: &str, written: Value) -> Result<crate::model::Condition, String> {
    use crate::model::Condition;
    match written {
        Value::String(text) => {
            no_control(rule, "appliesWhen", &text)?;
            let logic = infix(rule, "appliesWhen", &text)?;
            Ok(Condition {
                logic,
                expression: Some(text),
            })
        }
        Value::Object(o) if o.contains_key("predicates") => {
            if let Some(k) = o.keys().find(|k| {
                !matches!(
                    k.as_str(),
                    "predicates" | "logical_operator" | "logicalOperator"
                )
            }) {
                return Err(format!(
                    "rule `{rule}`: `appliesWhen` as predicates takes `predicates` and `logical_operator`, not `{k}`"
                ));
            }
            let op = o
                .get_key_value("logical_operator")
                .or_else(|| o.get_key_value("logicalOperator"))
                .map(|(k, v)| (k.as_str(), v));
            let (logic, _) =
                predicates::rule_logic(None, o.get("predicates"), op).map_err(|errors| {
                    let what: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    format!("rule `{rule}`: `appliesWhen`: {}", what.join("; "))
                })?;
            Ok(Condition::logic(logic))
        }
        logic => Ok(Condition::logic(logic)),
    }
}

/// Unknown keys of a page file (`None`) or of a schema definition, located in `text`.
/// A text that is not JSON has none here (its syntax error comes from the parse).
pub fn keys_of(text: &str, def: Option<&str>) -> Vec<Diagnostic> {
    match parse_json::<Value>(text) {
        Ok(doc) => crate::diag::locate_all(validate::unknown_keys(&doc, def), text),
        Err(_) => vec![],
    }
}

/// Reads a page file reporting every problem at once, located in `text`: unknown keys,
/// predicate lists that do not read, a rule, override or assertion that does not parse
/// (each at its own pointer), and then everything validation finds in the rest — one
/// bad element no longer hides the others' problems. The page is `None` when the
/// document itself does not parse; elements that did not parse are left out of it
/// (and the diagnostics then hold an error).
///
/// An override or an assertion that names no row is an error here (in a page file it
/// would do nothing), not the warning it is after a dataset change.
pub fn page_all(text: &str) -> (Option<Page>, Vec<Diagnostic>) {
    let (page, diags) = page_all_as_stored(text);
    let diags = diags.into_iter().map(orphan_in_a_page_file).collect();
    (page, diags)
}

/// A reference that names no row, found in a page file (`check FILE`, `import FILE`):
/// an error there — it would do nothing — where after a dataset change it is a warning
/// (the row may come back). `d` is returned as it is when it is not such a warning.
fn orphan_in_a_page_file(d: Diagnostic) -> Diagnostic {
    let tail = match d.code {
        Code::OrphanedOverride => validate::ORPHAN_KEPT,
        Code::AssertionOrphaned => crate::assertions::ORPHAN_FAILS,
        _ => return d,
    };
    Diagnostic {
        severity: crate::diag::Severity::Error,
        message: d
            .message
            .strip_suffix(tail)
            .map(|m| format!("{m}: it would do nothing"))
            .unwrap_or(d.message),
        ..d
    }
}

/// [`page_all`] with references that name no row left as warnings.
fn page_all_as_stored(text: &str) -> (Option<Page>, Vec<Diagnostic>) {
    let mut diags = keys_of(text, None);
    let (lists, bad_lists) = match read_predicates(text) {
        Ok(lists) => (lists, vec![]),
        Err(errors) => {
            let bad: Vec<usize> = errors
                .iter()
                .filter_map(|d| {
                    d.pointer
                        .strip_prefix("/rules/")
                        .and_then(|r| r.split('/').next())
                        .and_then(|i| i.parse().ok())
                })
                .collect();
            diags.extend(errors);
            (vec![], bad)
        }
    };
    // The common case, a page that reads: one typed parse, nothing left out.
    if diags.is_empty()
        && let Ok(mut page) = parse_json::<Page>(text)
    {
        page.rules.iter_mut().for_each(Rule::ensure_id);
        crate::assertions::normalize(&mut page);
        crate::dataset::canonicalize_overrides(&mut page);
        let written = crate::family::written_indexes(&page.rules);
        let diags = crate::check::page(&page)
            .into_iter()
            .map(|d| crate::family::at_written(d, &page.rules, &written))
            .map(|d| at_predicates(d, &lists))
            .chain(validate::page_id_slug(&page.id))
            .collect();
        return (Some(page), crate::diag::locate_all(diags, text));
    }
    // Not a page that reads: the document as a tree, to check its elements one by one.
    let mut doc = match parse_json::<Value>(text) {
        Ok(doc) => doc,
        Err(d) => return (None, vec![*d]),
    };
    // Every element that does not parse (or whose predicates do not read, or that holds
    // an unknown key) is left out, by index; its problem is already said.
    let mut left_out: Vec<String> = Vec::new();
    let unknown_under: Vec<String> = diags.iter().map(|d| d.pointer.clone()).collect();
    for (array, check) in [
        (
            "rules",
            (|v: &Value| serde_json::from_value::<RuleItem>(v.clone()).map(|_| ()))
                as fn(&Value) -> std::result::Result<(), serde_json::Error>,
        ),
        ("overrides", |v: &Value| {
            serde_json::from_value::<crate::model::Override>(v.clone()).map(|_| ())
        }),
        ("assertions", |v: &Value| {
            serde_json::from_value::<crate::assertions::Assertion>(v.clone()).map(|_| ())
        }),
    ] {
        let Some(items) = doc.get(array).and_then(Value::as_array) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let at = format!("/{array}/{i}");
            let known_bad = (array == "rules" && bad_lists.contains(&i))
                || unknown_under
                    .iter()
                    .any(|p| p == &at || p.starts_with(&format!("{at}/")));
            if known_bad {
                left_out.push(at);
            } else if let Err(e) = check(item) {
                let mut d = Diagnostic::json_syntax(&e);
                d.line = None;
                d.column = None;
                d.pointer = at.clone();
                d.message = format!("{}: {}", &at[1..], d.message);
                diags.push(d.locate_in(text));
                left_out.push(at);
            }
        }
    }
    // Take the elements left out away, last first (indexes stay right).
    let mut removed: Vec<(String, usize)> = left_out
        .iter()
        .filter_map(|p| {
            let (array, i) = p[1..].split_once('/')?;
            Some((array.to_owned(), i.parse().ok()?))
        })
        .collect();
    removed.sort_by_key(|(array, i)| (std::cmp::Reverse(*i), array.clone()));
    removed.dedup();
    for (array, i) in &removed {
        if let Some(items) = doc.get_mut(array.as_str()).and_then(Value::as_array_mut) {
            items.remove(*i);
        }
    }
    // Pointers into what is left map back to the original indexes.
    let original = |pointer: &str| -> String {
        for array in ["rules", "overrides", "assertions"] {
            let Some(rest) = pointer.strip_prefix(&format!("/{array}/")) else {
                continue;
            };
            let (index, tail) = rest.split_once('/').map_or((rest, ""), |(i, t)| (i, t));
            let Ok(mut i) = index.parse::<usize>() else {
                return pointer.to_owned();
            };
            let mut gone: Vec<usize> = removed
                .iter()
                .filter(|(a, _)| a == array)
                .map(|(_, g)| *g)
                .collect();
            gone.sort_unstable();
            for g in gone {
                if g <= i {
                    i += 1;
                }
            }
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!("/{tail}")
            };
            return format!("/{array}/{i}{tail}");
        }
        pointer.to_owned()
    };
    // What a tree of values cannot see: a key written twice (the tree keeps the last;
    // the typed parse refuses it, and nothing is silently dropped).
    if !diags.iter().any(Diagnostic::is_error)
        && let Err(d) = parse_json::<Page>(text)
    {
        diags.push(*d);
        return (None, diags);
    }
    let mut page = match serde_json::from_value::<Page>(doc) {
        Ok(page) => page,
        Err(e) => {
            if diags.is_empty() {
                // The page's own shape: serde's message, located as parse_json does.
                if let Err(d) = parse_json::<Page>(text) {
                    diags.push(*d);
                }
            } else {
                // The page's own shape is wrong too (a missing name, say): said beside
                // the elements' problems, at the page.
                let mut d = Diagnostic::json_syntax(&e);
                d.line = None;
                d.column = None;
                diags.push(d);
            }
            return (None, diags);
        }
    };
    page.rules.iter_mut().for_each(Rule::ensure_id);
    crate::assertions::normalize(&mut page);
    crate::dataset::canonicalize_overrides(&mut page);
    let lists_now: Vec<Option<PredicateList>> = if removed.is_empty() { lists } else { vec![] };
    let written = crate::family::written_indexes(&page.rules);
    diags.extend(crate::check::page(&page).into_iter().map(|d| {
        let d = crate::family::at_written(d, &page.rules, &written);
        let d = at_predicates(d, &lists_now);
        let pointer = original(&d.pointer);
        Diagnostic { pointer, ..d }
    }));
    diags.extend(validate::page_id_slug(&page.id));
    (Some(page), crate::diag::locate_all(diags, text))
}

/// The predicate lists of a page file's rules (by index), after checking them: errors
/// with pointers and line:col (`/rules/3/predicates/1/operator`). JSON syntax errors
/// are left to the page's own parse.
fn read_predicates(text: &str) -> std::result::Result<Vec<Option<PredicateList>>, Vec<Diagnostic>> {
    let Ok(doc) = parse_json::<Value>(text) else {
        return Ok(vec![]);
    };
    predicates::read_page(&doc).map_err(|diags| crate::diag::locate_all(diags, text))
}

/// Points a diagnostic of a rule written as a predicate list at its predicates
/// (`/rules/0/logic/and/1/==/0/var` → `/rules/0/predicates/1/field`).
pub fn at_predicates(d: Diagnostic, lists: &[Option<PredicateList>]) -> Diagnostic {
    let Some(rest) = d.pointer.strip_prefix("/rules/") else {
        return d;
    };
    let (index, rest) = rest.split_once('/').unwrap_or((rest, ""));
    let Some(Some(list)) = index.parse::<usize>().ok().and_then(|i| lists.get(i)) else {
        return d;
    };
    let Some(logic) = rest.strip_prefix("logic") else {
        return d;
    };
    Diagnostic {
        pointer: format!("/rules/{index}{}", predicates::source_pointer(list, logic)),
        ..d
    }
}

/// One element of a file of rules (`rule add`): a rule, or a family (with `each`) as its
/// members, each with its id.
pub fn rules(text: &str) -> Result<Vec<Rule>, Box<Diagnostic>> {
    let mut rules = parse_json::<RuleItem>(text)?.0;
    rules.iter_mut().for_each(Rule::ensure_id);
    Ok(rules)
}

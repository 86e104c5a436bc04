//! Rule families: one rule written with `each`, a list of parameters, read as one rule
//! per value (or per combination of values).
//!
//! ```json
//! { "id": "feature-{feature}", "name": "Supports {feature}",
//!   "each": { "feature": ["fetch", "webgpu"] },
//!   "expression": "param.feature in target.features" }
//! ```
//!
//! In every text of the rule (its id, name, description, `expression`, `appliesWhen`,
//! the strings of its `logic`), `{feature}` is replaced by the value's text; in its
//! logic, `param.feature` (`{"var": "param.feature"}`) is the value itself. `each` is an
//! object of lists (every combination, the first parameter outermost) or a list of
//! objects (one member each, so that values can go together). A member whose id does not
//! name a parameter gets the values appended (`feature-fetch`), likewise its name
//! (`Supports (fetch)`). The family is kept as written ([`Family::written`]): stored and
//! exported so.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::model::{Expanded, Family, Member, Rule, slugify};

/// The most members one family may expand to (each combination of `each` is a rule; the
/// page's rule limit applies to them too).
pub const MAX_MEMBERS: usize = 2_000;

/// The most a family may take: its members times the size of its text as written
/// (each member is stored with its family as written), in bytes.
pub const MAX_EXPANDED_BYTES: usize = 16 * 1024 * 1024;

/// The root of a parameter in a family's logic: `param.feature`.
pub const PARAM_ROOT: &str = "param";

impl TryFrom<Map<String, Value>> for Expanded {
    type Error = String;

    fn try_from(written: Map<String, Value>) -> Result<Expanded, String> {
        expand(written).map(Expanded)
    }
}

/// A family's members, in order, each carrying the family.
pub fn expand(written: Map<String, Value>) -> Result<Vec<Rule>, String> {
    let name = match written.get("name") {
        Some(Value::String(n)) => n.clone(),
        Some(_) => return Err("a rule family's `name` must be a string".to_owned()),
        None => return Err("missing field `name`".to_owned()),
    };
    let id = match written.get("id") {
        Some(Value::String(i)) if !i.trim().is_empty() => i.clone(),
        Some(Value::String(_)) | None => slugify(&name),
        Some(_) => return Err(format!("rule family `{name}`: `id` must be a string")),
    };
    let what = format!("rule family `{id}`");
    let bindings = bindings(&what, written.get("each").unwrap_or(&Value::Null))?;
    let params: Vec<String> = bindings
        .first()
        .map(|b| b.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let params: Vec<&str> = params.iter().map(String::as_str).collect();
    let mut template = written.clone();
    template.remove("each");
    // Each member is stored with its family as written (`each` included).
    let size = Value::Object(written.clone()).to_string().len();
    if size.saturating_mul(bindings.len()) > MAX_EXPANDED_BYTES {
        return Err(format!(
            "{what}: {} members of {size} bytes each expand past {} MB: fewer values, or a smaller rule",
            bindings.len(),
            MAX_EXPANDED_BYTES / (1024 * 1024)
        ));
    }
    unknown_placeholders(&what, &Value::Object(template.clone()), &bindings)?;
    let family = Arc::new(Family {
        id: id.clone(),
        written,
        members: bindings.len(),
    });
    let id_names_a_param = written_id(&family).is_some_and(|i| names_a_param(i, &params));
    let name_names_a_param = names_a_param(&name, &params);
    let mut rules: Vec<Rule> = Vec::with_capacity(bindings.len());
    let mut ids: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (index, binding) in bindings.into_iter().enumerate() {
        let values: Vec<String> = binding.iter().map(|(_, v)| text_of(v)).collect();
        let mut member = substitute_texts(&Value::Object(template.clone()), &binding);
        let obj = member.as_object_mut().expect("a template is an object");
        if !name_names_a_param {
            obj.insert(
                "name".to_owned(),
                Value::String(format!("{name} ({})", values.join(", "))),
            );
        }
        match written_id(&family) {
            Some(i) if !id_names_a_param => {
                obj.insert(
                    "id".to_owned(),
                    Value::String(format!("{i}-{}", slugify(&values.join("-")))),
                );
            }
            _ => {}
        }
        let mut rule: Rule = serde_json::from_value(member)
            .map_err(|e| format!("{what}, member {}: {e}", values.join(", ")))?;
        rule.ensure_id();
        let before = rule.logic.clone();
        rule.logic = bind(&rule.logic, &binding, &what)?;
        if rule.logic != before {
            // The text shows `param.feature`; the member's logic holds the value.
            rule.expression = None;
        }
        if let Some(c) = rule.applies_when.as_mut() {
            let bound = bind(&c.logic, &binding, &what)?;
            if bound != c.logic {
                c.logic = bound;
                c.expression = None;
            }
        }
        if !ids.insert(rule.id.clone())
            && let Some(first) = rules.iter().find(|r| r.id == rule.id)
        {
            return Err(format!(
                "{what}: two members have the id `{}` ({} and {}); name a parameter in the id, as `{}-{{{}}}`",
                rule.id,
                first.family.as_ref().map(Member::label).unwrap_or_default(),
                values.join(", "),
                id,
                params.first().copied().unwrap_or("param"),
            ));
        }
        rule.family = Some(Member {
            family: Arc::clone(&family),
            index,
            binding,
        });
        rules.push(rule);
    }
    Ok(rules)
}

/// The family's `id` as written, when it was.
fn written_id(family: &Family) -> Option<&str> {
    family
        .written
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| !i.trim().is_empty())
}

/// Whether `text` holds `{p}` for a parameter `p`.
fn names_a_param(text: &str, params: &[&str]) -> bool {
    params.iter().any(|p| text.contains(&format!("{{{p}}}")))
}

/// The values of `each`, one binding per member: an object of lists (every combination,
/// the first parameter outermost) or a list of objects.
fn bindings(what: &str, each: &Value) -> Result<Vec<Vec<(String, Value)>>, String> {
    let scalar = |param: &str, v: &Value| -> Result<(), String> {
        match v {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => Ok(()),
            other => Err(format!(
                "{what}: `each`'s `{param}` holds {other}: a parameter's value is a string, a number or a boolean"
            )),
        }
    };
    let param_name = |p: &str| -> Result<(), String> {
        let mut chars = p.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{what}: `{p}` is not a parameter name (letters, digits and `_`, not starting with a digit)"
            ))
        }
    };
    match each {
        Value::Object(params) => {
            if params.is_empty() {
                return Err(format!("{what}: `each` names no parameter"));
            }
            let mut total: usize = 1;
            for (p, values) in params {
                param_name(p)?;
                let Value::Array(values) = values else {
                    return Err(format!(
                        "{what}: `each`'s `{p}` must be a list of values (`\"{p}\": [\"a\", \"b\"]`)"
                    ));
                };
                if values.is_empty() {
                    return Err(format!("{what}: `each`'s `{p}` lists no value"));
                }
                for v in values {
                    scalar(p, v)?;
                }
                total = total
                    .checked_mul(values.len())
                    .filter(|&t| t <= MAX_MEMBERS)
                    .ok_or_else(|| too_many(what))?;
            }
            let mut out: Vec<Vec<(String, Value)>> = vec![vec![]];
            for (p, values) in params {
                let values = values.as_array().expect("checked above");
                out = out
                    .into_iter()
                    .flat_map(|prefix| {
                        values.iter().map(move |v| {
                            let mut b = prefix.clone();
                            b.push((p.clone(), v.clone()));
                            b
                        })
                    })
                    .collect();
            }
            Ok(out)
        }
        Value::Array(items) => {
            if items.is_empty() {
                return Err(format!("{what}: `each` lists no member"));
            }
            if items.len() > MAX_MEMBERS {
                return Err(too_many(what));
            }
            let mut out = Vec::with_capacity(items.len());
            let mut keys: Option<Vec<&String>> = None;
            for (i, item) in items.iter().enumerate() {
                let Value::Object(o) = item else {
                    return Err(format!(
                        "{what}: `each`'s entry {} must be an object of parameter values (`{{\"feature\": \"fetch\"}}`)",
                        i + 1
                    ));
                };
                if o.is_empty() {
                    return Err(format!(
                        "{what}: `each`'s entry {} names no parameter",
                        i + 1
                    ));
                }
                let mut these: Vec<&String> = o.keys().collect();
                these.sort();
                match &keys {
                    None => keys = Some(these),
                    Some(first) if *first != these => {
                        return Err(format!(
                            "{what}: `each`'s entry {} names {}, the first names {}: every entry names the same parameters",
                            i + 1,
                            list(&these),
                            list(first)
                        ));
                    }
                    Some(_) => {}
                }
                let mut b = Vec::with_capacity(o.len());
                for (p, v) in o {
                    param_name(p)?;
                    scalar(p, v)?;
                    b.push((p.clone(), v.clone()));
                }
                out.push(b);
            }
            Ok(out)
        }
        Value::Null => Err(format!("{what}: `each` is missing")),
        other => Err(format!(
            "{what}: `each` must be an object of lists (`{{\"feature\": [\"fetch\", \"webgpu\"]}}`) or a list of objects, not {other}"
        )),
    }
}

fn list(keys: &[&String]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn too_many(what: &str) -> String {
    format!("{what}: `each` makes more than {MAX_MEMBERS} members")
}

/// A parameter value as text: a string as it is, a number or a boolean as JSON.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every `{p}` of a parameter `p` in the strings of `v` (not its keys) replaced by the
/// value's text.
fn substitute_texts(v: &Value, binding: &[(String, Value)]) -> Value {
    match v {
        Value::String(s) if s.contains('{') => {
            // One pass: a value that holds `{b}` is not read again as a placeholder.
            let mut out = String::with_capacity(s.len());
            let mut rest = s.as_str();
            while let Some(open) = rest.find('{') {
                out.push_str(&rest[..open]);
                let after = &rest[open + 1..];
                let found = after.find('}').and_then(|close| {
                    let (_, value) = binding.iter().find(|(p, _)| *p == after[..close])?;
                    Some((close, value))
                });
                match found {
                    Some((close, value)) => {
                        out.push_str(&text_of(value));
                        rest = &after[close + 1..];
                    }
                    None => {
                        out.push('{');
                        rest = after;
                    }
                }
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| substitute_texts(i, binding)).collect())
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), substitute_texts(v, binding)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A `{name}` in the template's texts that names no parameter: a typo that would
/// otherwise stay in every member (a rule's warning's `{target.label}` and the like hold
/// a dot and are not parameters).
fn unknown_placeholders(
    what: &str,
    template: &Value,
    bindings: &[Vec<(String, Value)>],
) -> Result<(), String> {
    let params: Vec<&str> = bindings
        .first()
        .map(|b| b.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let mut found: Option<String> = None;
    fn walk(v: &Value, params: &[&str], found: &mut Option<String>) {
        match v {
            Value::String(s) => {
                let mut rest = s.as_str();
                while let Some(open) = rest.find('{') {
                    let after = &rest[open + 1..];
                    let Some(close) = after.find('}') else { break };
                    let name = &after[..close];
                    let ident = !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !name.starts_with(|c: char| c.is_ascii_digit());
                    if ident && !params.contains(&name) && found.is_none() {
                        *found = Some(name.to_owned());
                    }
                    rest = &after[close + 1..];
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, params, found)),
            Value::Object(o) => o.values().for_each(|i| walk(i, params, found)),
            _ => {}
        }
    }
    walk(template, &params, &mut found);
    match found {
        None => Ok(()),
        Some(name) => Err(format!(
            "{what}: `{{{name}}}` names no parameter{}",
            crate::diag::did_you_mean(&name, params.iter().copied())
                .map(|p| format!(" (did you mean `{{{p}}}`?)"))
                .unwrap_or_else(|| format!(" (its parameters: {})", params.join(", ")))
        )),
    }
}

/// The logic with every `param.p` (`{"var": "param.p"}`, with a default or not)
/// replaced by the value; a `param.` path that names no parameter is an error.
fn bind(logic: &Value, binding: &[(String, Value)], what: &str) -> Result<Value, String> {
    Ok(match logic {
        Value::Object(o) if o.len() == 1 && o.contains_key("var") => {
            let path = match &o["var"] {
                Value::String(p) => Some(p.as_str()),
                Value::Array(a) => a.first().and_then(Value::as_str),
                _ => None,
            };
            match path.and_then(|p| {
                p.strip_prefix(PARAM_ROOT)
                    .and_then(|r| r.strip_prefix('.'))
                    .or((p == PARAM_ROOT).then_some(""))
            }) {
                Some(name) => match binding.iter().find(|(p, _)| p == name) {
                    Some((_, value)) => value.clone(),
                    None => {
                        let names: Vec<&str> = binding.iter().map(|(p, _)| p.as_str()).collect();
                        return Err(format!(
                            "{what}: `{PARAM_ROOT}.{name}` names no parameter{}",
                            crate::diag::did_you_mean(name, names.iter().copied())
                                .map(|p| format!(" (did you mean `{PARAM_ROOT}.{p}`?)"))
                                .unwrap_or_else(|| format!(
                                    " (its parameters: {})",
                                    names.join(", ")
                                ))
                        ));
                    }
                },
                None => logic.clone(),
            }
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| Ok((k.clone(), bind(v, binding, what)?)))
                .collect::<Result<_, String>>()?,
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| bind(i, binding, what))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// The page file's index of each rule (a family's members share their family's), for
/// locating what validation says of a member in the file.
pub fn written_indexes(rules: &[Rule]) -> Vec<usize> {
    let mut out = Vec::with_capacity(rules.len());
    let mut next = 0usize;
    let mut last: Option<&Arc<Family>> = None;
    for r in rules {
        match &r.family {
            Some(m) if last.is_some_and(|f| Arc::ptr_eq(f, &m.family)) => {
                out.push(next - 1);
            }
            Some(m) => {
                last = Some(&m.family);
                out.push(next);
                next += 1;
            }
            None => {
                last = None;
                out.push(next);
                next += 1;
            }
        }
    }
    out
}

/// A diagnostic pointing at the page's `n`-th rule (`/rules/n/…`) pointed at the page
/// file's rule instead (a member's family), its message naming the member.
pub fn at_written(
    d: crate::diag::Diagnostic,
    rules: &[Rule],
    written: &[usize],
) -> crate::diag::Diagnostic {
    let Some(rest) = d.pointer.strip_prefix("/rules/") else {
        return d;
    };
    let (index, tail) = rest.split_once('/').map_or((rest, ""), |(i, t)| (i, t));
    let Ok(i) = index.parse::<usize>() else {
        return d;
    };
    let (Some(&w), Some(rule)) = (written.get(i), rules.get(i)) else {
        return d;
    };
    if w == i && rule.family.is_none() {
        return d;
    }
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!("/{tail}")
    };
    let d = of_member(d, rule);
    crate::diag::Diagnostic {
        pointer: format!("/rules/{w}{tail}"),
        ..d
    }
}

/// A diagnostic of `rule` naming it when it is a member of a family (what is said of a
/// member is located at its family), unless it speaks of the family already.
pub fn of_member(d: crate::diag::Diagnostic, rule: &Rule) -> crate::diag::Diagnostic {
    match &rule.family {
        Some(m)
            if !d
                .message
                .contains(&format!("rule family `{}`", m.family.id)) =>
        {
            crate::diag::Diagnostic {
                message: format!(
                    "{} (member `{}` of the rule family `{}`)",
                    d.message, rule.id, m.family.id
                ),
                ..d
            }
        }
        _ => d,
    }
}

//! The evaluation result (CONTRACT §4) and its split into cache pages of 100 targets.

use serde_json::{Map, Value, json};

use super::matrix::SelectionEval;
use super::model::Page;

/// Targets per cached result page.
pub const TARGETS_PER_PAGE: usize = 100;

/// Builds the result of one selection. `cache` is set by whoever serves it.
pub fn build(page: &Page, eval: &SelectionEval, revision: i64, evaluated_at: &str) -> Value {
    let source = &page.source.rows[eval.selection];
    let target = &page.target;
    let ids: Vec<String> = target.rows.iter().map(|r| target.row_id(r)).collect();
    let notes = override_notes(page, eval.selection);

    let targets: Vec<Value> = target
        .rows
        .iter()
        .enumerate()
        .map(|(t, row)| {
            let row = target.effective_row(row);
            let mut entry = Map::new();
            entry.insert("id".into(), Value::String(ids[t].clone()));
            let shown = target.label.iter().chain(&target.summary);
            for field in shown {
                if field != "id" && !entry.contains_key(field) {
                    entry.insert(
                        field.clone(),
                        row.get(field).cloned().unwrap_or(Value::Null),
                    );
                }
            }
            let d = &eval.devices[t];
            entry.insert("verdict".into(), json!(d.verdict));
            entry.insert("score".into(), json!(d.score));
            entry.insert("reason".into(), json!(d.reason.as_str()));
            let rules: Map<String, Value> = page
                .rules
                .iter()
                .zip(&eval.columns)
                .map(|(r, c)| (r.id.clone(), Value::Bool(c.passed(t))))
                .collect();
            entry.insert("rules".into(), Value::Object(rules));
            if let Some(value) = eval.overrides[t] {
                let mut o = Map::new();
                o.insert("value".into(), Value::Bool(value));
                if let Some(note) = notes.get(&ids[t]).cloned().flatten() {
                    o.insert("note".into(), Value::String(note));
                }
                entry.insert("override".into(), Value::Object(o));
            }
            Value::Object(entry)
        })
        .collect();

    let features: Vec<Value> = page
        .rules
        .iter()
        .zip(&eval.columns)
        .map(|(rule, column)| {
            let mut f = Map::new();
            f.insert("name".into(), Value::String(rule.name.clone()));
            for (t, id) in ids.iter().enumerate() {
                f.insert(id.clone(), Value::Bool(column.passed(t)));
            }
            Value::Object(f)
        })
        .collect();

    let mut out = Map::new();
    out.insert("pageId".into(), json!(page.id));
    out.insert("revisionId".into(), json!(revision));
    out.insert("cache".into(), json!("miss"));
    out.insert("selectionKey".into(), json!(page.source.row_key(source)));
    out.insert("selectionVerdict".into(), json!(eval.selection_verdict));
    out.insert(
        "recommendedTargetId".into(),
        eval.recommended.map_or(Value::Null, |t| json!(ids[t])),
    );
    out.insert("targets".into(), Value::Array(targets));
    out.insert("features".into(), Value::Array(features));
    out.insert("evaluatedAt".into(), json!(evaluated_at));
    Value::Object(out)
}

/// target id → the note of this selection's override on it.
fn override_notes(
    page: &Page,
    selection: usize,
) -> std::collections::HashMap<String, Option<String>> {
    let source_hash = super::model::key_hash(&page.source.row_key(&page.source.rows[selection]));
    page.overrides
        .iter()
        .filter(|o| o.source_hash().as_deref() == Some(source_hash.as_str()))
        .filter_map(|o| {
            let hash = o.target_hash()?;
            let row = page
                .target
                .rows
                .iter()
                .find(|r| super::model::key_hash(&page.target.row_key(r)) == hash)?;
            Some((page.target.row_id(row), o.note.clone()))
        })
        .collect()
}

/// Splits a result into pages of at most [`TARGETS_PER_PAGE`] targets. Each page
/// carries the header fields, its targets, and the features restricted to them.
pub fn split(result: &Value) -> Vec<Value> {
    let targets = result["targets"].as_array().cloned().unwrap_or_default();
    let features = result["features"].as_array().cloned().unwrap_or_default();
    let chunks: Vec<&[Value]> = if targets.is_empty() {
        vec![&[]]
    } else {
        targets.chunks(TARGETS_PER_PAGE).collect()
    };
    // Everything but targets and features, in place (cloning the whole result for every
    // page would make a 100,000-target result take minutes).
    let skeleton: Map<String, Value> = result
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| match k.as_str() {
                    "targets" | "features" => (k.clone(), Value::Null),
                    _ => (k.clone(), v.clone()),
                })
                .collect()
        })
        .unwrap_or_default();
    chunks
        .into_iter()
        .map(|chunk| {
            let ids: Vec<&str> = chunk.iter().filter_map(|t| t["id"].as_str()).collect();
            let features: Vec<Value> = features
                .iter()
                .map(|f| {
                    let mut m = Map::new();
                    m.insert("name".into(), f["name"].clone());
                    for id in &ids {
                        if let Some(v) = f.get(*id) {
                            m.insert((*id).to_owned(), v.clone());
                        }
                    }
                    Value::Object(m)
                })
                .collect();
            let mut page = Value::Object(skeleton.clone());
            page["targets"] = Value::Array(chunk.to_vec());
            page["features"] = Value::Array(features);
            page
        })
        .collect()
}

/// Joins result pages (in page order) back into one result.
pub fn merge(pages: Vec<Value>) -> Option<Value> {
    let mut iter = pages.into_iter();
    let mut out = iter.next()?;
    for page in iter {
        if let (Some(all), Some(more)) = (out["targets"].as_array_mut(), page["targets"].as_array())
        {
            all.extend(more.iter().cloned());
        }
        let more = page["features"].as_array().cloned().unwrap_or_default();
        if let Some(all) = out["features"].as_array_mut() {
            for (f, extra) in all.iter_mut().zip(more) {
                if let (Some(f), Value::Object(extra)) = (f.as_object_mut(), extra) {
                    f.extend(extra.into_iter().filter(|(k, _)| k != "name"));
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_merge_round_trip() {
        let targets: Vec<Value> = (0..250)
            .map(|i| json!({"id": format!("t{i}"), "verdict": 2}))
            .collect();
        let mut feature = Map::new();
        feature.insert("name".into(), json!("Streaming"));
        for i in 0..250 {
            feature.insert(format!("t{i}"), json!(i % 2 == 0));
        }
        let result = json!({"pageId": "p", "targets": targets, "features": [feature]});
        let pages = split(&result);
        assert_eq!(pages.len(), 3);
        assert_eq!(pages[0]["targets"].as_array().unwrap().len(), 100);
        assert_eq!(pages[2]["targets"].as_array().unwrap().len(), 50);
        assert_eq!(pages[2]["features"][0].as_object().unwrap().len(), 51);
        assert_eq!(merge(pages).unwrap(), result);
    }
}

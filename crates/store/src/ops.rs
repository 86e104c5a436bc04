//! The steps of a change, each run inside the change's transaction ([`Store::change`]).

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::Value;

use rulebench_core::assertions::Assertion;
use rulebench_core::dataset::StoredRow;
use rulebench_core::model::{Dataset, Override, Page, Rule, Side, key_hash};

use crate::error::{Result, StoreError};
use crate::records::*;
use crate::rows::*;
use crate::schema::*;

/// The stored override of a pair by keyHashes: (value, note).
pub fn override_of(
    tx: &Transaction<'_>,
    page_id: &str,
    source_hash: &str,
    target_hash: &str,
) -> Result<Option<(bool, Option<String>)>> {
    Ok(tx
        .query_row(
            "SELECT value, note FROM overrides
             WHERE page_id = ?1 AND source_key_hash = ?2 AND target_key_hash = ?3",
            params![page_id, source_hash, target_hash],
            |r| Ok((r.get::<_, bool>(0)?, r.get::<_, Option<String>>(1)?)),
        )
        .optional()?)
}

/// The page's rule count and whether rule `rule_id` is among them, read inside
/// the change's transaction.
pub fn rule_count(tx: &Transaction<'_>, page_id: &str, rule_id: &str) -> Result<(usize, bool)> {
    let (count, exists): (i64, bool) = tx.query_row(
        "SELECT COUNT(*), COALESCE(MAX(id = ?2), 0) FROM rules WHERE page_id = ?1",
        params![page_id, rule_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok((count as usize, exists))
}

/// A rule's position, read inside the change's transaction (`None`: no such rule).
pub fn rule_ord(tx: &Transaction<'_>, page_id: &str, rule_id: &str) -> Result<Option<usize>> {
    Ok(tx
        .query_row(
            "SELECT ord FROM rules WHERE page_id = ?1 AND id = ?2",
            params![page_id, rule_id],
            |r| r.get::<_, i64>(0),
        )
        .optional()?
        .map(|o| o as usize))
}

/// Saves a rule (new or changed) at position `ord`, shifting later rules.
pub fn put_rule(
    tx: &Transaction<'_>,
    page: &Page,
    rule: &Rule,
    ord: usize,
    revision: i64,
) -> Result<()> {
    let exists: bool = tx
        .query_row(
            "SELECT 1 FROM rules WHERE page_id = ?1 AND id = ?2",
            params![page.id, rule.id],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false);
    if !exists {
        tx.execute(
            "UPDATE rules SET ord = ord + 1 WHERE page_id = ?1 AND ord >= ?2",
            params![page.id, ord as i64],
        )?;
    }
    upsert_rule(tx, &page.id, &org_id(page), rule, ord as i64)?;
    record_rule(tx, &page.id, &rule.id, revision, Some(rule))
}

pub fn delete_rule(
    tx: &Transaction<'_>,
    page_id: &str,
    rule_id: &str,
    revision: i64,
) -> Result<()> {
    let ord: i64 = tx.query_row(
        "DELETE FROM rules WHERE page_id = ?1 AND id = ?2 RETURNING ord",
        params![page_id, rule_id],
        |r| r.get(0),
    )?;
    tx.execute(
        "UPDATE rules SET ord = ord - 1 WHERE page_id = ?1 AND ord > ?2",
        params![page_id, ord],
    )?;
    record_rule(tx, page_id, rule_id, revision, None)
}

/// Rewrites one stored row in place; with `new_key`, its stored key and hash
/// follow (a key edit), else they stay.
pub fn update_row(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    ord: usize,
    row: &rulebench_core::model::Row,
    new_key: Option<&str>,
) -> Result<()> {
    // From schema 8 on, the row's old value is logged and the row takes the revision
    // (`?7`); before, triggers log it.
    let written = if schema_of(tx)? >= crate::schema::ROWS_LOGGED_ON_CHANGE {
        let revision: i64 =
            tx.query_row("SELECT revision FROM pages WHERE id = ?1", [page_id], |r| {
                r.get(0)
            })?;
        log_old_row(tx, page_id, side.name(), ord as i64, revision)?;
        Some(revision)
    } else {
        None
    };
    let changed = tx.execute(
        &format!(
            "UPDATE dataset_rows SET row_json = ?4,
                 row_key = COALESCE(?5, row_key), key_hash = COALESCE(?6, key_hash){}
             WHERE page_id = ?1 AND side = ?2 AND ord = ?3 AND (?7 IS NULL OR TRUE)",
            if written.is_some() {
                ", revision = ?7"
            } else {
                ""
            }
        ),
        params![
            page_id,
            side.name(),
            ord as i64,
            serde_json::to_string(row).expect("rows serialize"),
            new_key,
            new_key.map(key_hash),
            written
        ],
    )?;
    if changed != 1 {
        return Err(StoreError::Unreadable {
            what: format!("{} row {ord}", side.name()),
            message: "no such stored row".into(),
        });
    }
    Ok(())
}

/// Sets one field of a stored row, read inside the transaction: a field another
/// writer set meanwhile stays. `key_of` (for an edit of a key field) gives the row's
/// new key from the row as written. Returns the row as stored now.
#[allow(clippy::too_many_arguments)]
pub fn set_row_field(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    (ord, key_hash): (usize, &str),
    field: &str,
    value: &Value,
    key_of: Option<&dyn Fn(&rulebench_core::model::Row) -> String>,
) -> Result<rulebench_core::model::Row> {
    // The row at `ord` must still be the one the caller saw (its keyHash): an
    // import elsewhere renumbers rows, and the edit must not land on another.
    let text: Option<String> = tx
        .query_row(
            "SELECT row_json FROM dataset_rows
             WHERE page_id = ?1 AND side = ?2 AND ord = ?3 AND key_hash = ?4",
            params![page_id, side.name(), ord as i64, key_hash],
            |r| r.get(0),
        )
        .optional()?;
    let Some(text) = text else {
        return Err(StoreError::Unreadable {
            what: format!("{} row {}", side.name(), ord + 1),
            message: "it changed or moved elsewhere since the page was opened (reopen it)".into(),
        });
    };
    let mut row: rulebench_core::model::Row =
        serde_json::from_str(&text).map_err(corrupt(format!("{} row", side.name())))?;
    row.insert(field.to_owned(), value.clone());
    let key = key_of.map(|k| k(&row));
    update_row(tx, page_id, side, ord, &row, key.as_deref())?;
    Ok(row)
}

pub fn put_override(tx: &Transaction<'_>, page_id: &str, o: &Override) -> Result<()> {
    let ord: i64 = tx.query_row(
        "SELECT COALESCE(MAX(ord) + 1, 0) FROM overrides WHERE page_id = ?1",
        [page_id],
        |r| r.get(0),
    )?;
    upsert_override(tx, page_id, o, ord)
}

/// Removes an override; false when there was none.
pub fn delete_override(
    tx: &Transaction<'_>,
    page_id: &str,
    source_hash: &str,
    target_hash: &str,
) -> Result<bool> {
    Ok(tx.execute(
        "DELETE FROM overrides WHERE page_id = ?1 AND source_key_hash = ?2 AND target_key_hash = ?3",
        params![page_id, source_hash, target_hash],
    )? > 0)
}

/// A page's policies as stored (read inside the change that updates them).
pub fn policies(
    tx: &Transaction<'_>,
    page_id: &str,
) -> Result<(
    rulebench_core::model::DevicePolicy,
    rulebench_core::model::SelectionPolicy,
)> {
    let (device, selection): (String, String) = tx.query_row(
        "SELECT device_policy_json, selection_policy_json FROM pages WHERE id = ?1",
        [page_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok((
        serde_json::from_str(&device).map_err(corrupt("device policy"))?,
        serde_json::from_str(&selection).map_err(corrupt("selection policy"))?,
    ))
}

/// Writes a page's policies.
pub fn write_policies(
    tx: &Transaction<'_>,
    page_id: &str,
    device: &rulebench_core::model::DevicePolicy,
    selection: &rulebench_core::model::SelectionPolicy,
) -> Result<()> {
    tx.execute(
        "UPDATE pages SET device_policy_json = ?2, selection_policy_json = ?3 WHERE id = ?1",
        params![page_id, to_json(device), to_json(selection)],
    )?;
    Ok(())
}

pub fn set_policies(tx: &Transaction<'_>, page: &Page) -> Result<()> {
    tx.execute(
        "UPDATE pages SET device_policy_json = ?2, selection_policy_json = ?3 WHERE id = ?1",
        params![
            page.id,
            to_json(&page.device_policy),
            to_json(&page.selection_policy)
        ],
    )?;
    Ok(())
}

/// Sets the logic of one stored rule, leaving its other fields as stored (an edit in
/// the workbench does not put back a name or weight changed elsewhere). Returns the
/// rule as saved; an error when the rule is no longer there.
/// Who made the page's last revision, when the log says.
pub fn last_author(tx: &Transaction<'_>, page_id: &str) -> Result<Option<String>> {
    if schema_of(tx)? < 5 {
        return Ok(None);
    }
    Ok(tx
        .query_row(
            "SELECT author FROM revisions WHERE page_id = ?1 ORDER BY revision DESC LIMIT 1",
            [page_id],
            |r| r.get::<_, Option<String>>(0),
        )
        .optional()?
        .flatten())
}

/// A page's stored rules in order, read inside the change's transaction.
pub fn rules(tx: &Transaction<'_>, page_id: &str) -> Result<Vec<Rule>> {
    read_rules(tx, page_id, None, At::Now)
}

/// A stored rule, read inside the change's transaction (`None`: no such rule).
pub fn rule(tx: &Transaction<'_>, page_id: &str, rule_id: &str) -> Result<Option<Rule>> {
    Ok(read_rules(tx, page_id, Some(rule_id), At::Now)?.pop())
}

pub fn set_rule_logic(
    tx: &Transaction<'_>,
    page_id: &str,
    rule_id: &str,
    logic: &Value,
    expression: Option<&str>,
    revision: i64,
) -> Result<Rule> {
    let changed = if schema_of(tx)? >= 6 {
        tx.execute(
            "UPDATE rules SET logic_json = ?3, expression = ?4 WHERE page_id = ?1 AND id = ?2",
            params![page_id, rule_id, logic.to_string(), expression],
        )?
    } else {
        tx.execute(
            "UPDATE rules SET logic_json = ?3 WHERE page_id = ?1 AND id = ?2",
            params![page_id, rule_id, logic.to_string()],
        )?
    };
    let rule = match (
        changed,
        read_rules(tx, page_id, Some(rule_id), At::Now)?.pop(),
    ) {
        (1, Some(rule)) => rule,
        _ => {
            return Err(StoreError::Unreadable {
                what: format!("rule {rule_id}"),
                message: "it was removed elsewhere".into(),
            });
        }
    };
    record_rule(tx, page_id, rule_id, revision, Some(&rule))?;
    Ok(rule)
}

/// Sets a stored rule's name, required flag, weight and category, leaving its logic
/// as stored. Returns the rule as saved; an error when it is no longer there.
pub fn set_rule_meta(
    tx: &Transaction<'_>,
    page_id: &str,
    rule: &Rule,
    revision: i64,
) -> Result<Rule> {
    // With its condition, where the schema has it (the rule form edits it too).
    let condition = rule
        .applies_when
        .as_ref()
        .map(|c| c.as_written().to_string());
    let with_condition = crate::schema::schema_of(tx)? >= crate::schema::APPLIES_WHEN;
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![
        &page_id,
        &rule.id,
        &rule.name,
        &rule.required,
        &rule.weight,
        &rule.category,
    ];
    if with_condition {
        values.push(&condition);
    }
    let changed = tx.execute(
        &format!(
            "UPDATE rules SET name = ?3, required = ?4, weight = ?5, category = ?6{}
             WHERE page_id = ?1 AND id = ?2",
            if with_condition {
                ", applies_when_json = ?7"
            } else {
                ""
            }
        ),
        values.as_slice(),
    )?;
    let saved = match (
        changed,
        read_rules(tx, page_id, Some(&rule.id), At::Now)?.pop(),
    ) {
        (1, Some(saved)) => saved,
        _ => {
            return Err(StoreError::Unreadable {
                what: format!("rule {}", rule.id),
                message: "it was removed elsewhere".into(),
            });
        }
    };
    record_rule(tx, page_id, &rule.id, revision, Some(&saved))?;
    Ok(saved)
}

/// A page's assertions, read inside the change that edits them.
pub fn assertions(tx: &Transaction<'_>, page_id: &str) -> Result<Vec<Assertion>> {
    read_assertions(tx, page_id, At::Now)
}

/// Replaces a page's assertions (in order).
pub fn set_assertions(tx: &Transaction<'_>, page_id: &str, assertions: &[Assertion]) -> Result<()> {
    tx.execute("DELETE FROM assertions WHERE page_id = ?1", [page_id])?;
    let mut stmt =
        tx.prepare("INSERT INTO assertions (page_id, ord, id, json) VALUES (?1, ?2, ?3, ?4)")?;
    for (ord, a) in assertions.iter().enumerate() {
        stmt.execute(params![page_id, ord as i64, a.id, to_json(a)])?;
    }
    Ok(())
}

/// Replaces one dataset's rows and metadata.
pub fn replace_dataset(tx: &Transaction<'_>, page_id: &str, side: Side, d: &Dataset) -> Result<()> {
    replace_dataset_with_progress(tx, page_id, side, d, &mut |_| {})
}

/// [`replace_dataset`], telling `on_row` how many rows are written so far.
pub fn replace_dataset_with_progress(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    d: &Dataset,
    on_row: &mut dyn FnMut(usize),
) -> Result<()> {
    set_dataset_meta(tx, page_id, side, d)?;
    insert_rows(tx, page_id, side, d, on_row)
}

/// Replaces one dataset's rows with rows in their stored form (`d`'s own rows are
/// not read: its metadata is stored).
pub fn replace_dataset_stored(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    d: &Dataset,
    rows: &[StoredRow],
    on_row: &mut dyn FnMut(usize),
) -> Result<()> {
    set_dataset_meta(tx, page_id, side, d)?;
    insert_stored(tx, page_id, side, rows.iter(), on_row)
}

/// One side's dataset metadata as stored (no rows), read inside the change.
pub fn dataset_meta(tx: &Transaction<'_>, page_id: &str, side: Side) -> Result<Dataset> {
    let column = match side {
        Side::Source => "source_json",
        Side::Target => "target_json",
    };
    let text: String = tx.query_row(
        &format!("SELECT {column} FROM pages WHERE id = ?1"),
        params![page_id],
        |r| r.get(0),
    )?;
    serde_json::from_str(&text).map_err(|source| crate::StoreError::Corrupt {
        what: format!("page {page_id}'s {} dataset", side.name()),
        source,
    })
}

/// Stores one side's dataset metadata (its rows are written over the stored ones
/// by `insert_stored`).
pub fn set_dataset_meta(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    d: &Dataset,
) -> Result<()> {
    let column = match side {
        Side::Source => "source_json",
        Side::Target => "target_json",
    };
    tx.execute(
        &format!("UPDATE pages SET {column} = ?2 WHERE id = ?1"),
        params![page_id, to_json(&d.without_rows())],
    )?;
    Ok(())
}

/// Writes the overrides that a dataset change pointed at new keys: `before[i]`
/// became `after[i]`. Only those rows are touched, each keeping its place, so an
/// override another writer added or removed meanwhile stays added or removed.
pub fn rekey_overrides(
    tx: &Transaction<'_>,
    page_id: &str,
    before: &[Override],
    after: &[Override],
) -> Result<()> {
    for (b, a) in before.iter().zip(after).filter(|(b, a)| b != a) {
        let ord: Option<i64> = tx
            .query_row(
                "DELETE FROM overrides
                 WHERE page_id = ?1 AND source_key_hash = ?2 AND target_key_hash = ?3
                 RETURNING ord",
                params![
                    page_id,
                    b.source_hash().unwrap_or_default(),
                    b.target_hash().unwrap_or_default()
                ],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(ord) = ord {
            upsert_override(tx, page_id, a, ord)?;
        }
    }
    Ok(())
}

/// A page's linked tables of expected outcomes, as stored.
pub fn expectation_tables(
    tx: &Transaction<'_>,
    page_id: &str,
) -> Result<Vec<rulebench_core::model::ExpectationTable>> {
    let text: Option<String> = tx.query_row(
        "SELECT expectations_json FROM pages WHERE id = ?1",
        [page_id],
        |r| r.get(0),
    )?;
    Ok(text
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(corrupt("expectation tables"))?
        .unwrap_or_default())
}

/// Writes a page's linked tables of expected outcomes (none: `NULL`).
pub fn write_expectation_tables(
    tx: &Transaction<'_>,
    page_id: &str,
    tables: &[rulebench_core::model::ExpectationTable],
) -> Result<()> {
    tx.execute(
        "UPDATE pages SET expectations_json = ?2 WHERE id = ?1",
        params![page_id, (!tables.is_empty()).then(|| to_json(&tables))],
    )?;
    Ok(())
}

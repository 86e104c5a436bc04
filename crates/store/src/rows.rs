//! The row-level reads and writes the page operations share (rules, assertions,
//! dataset rows, overrides) and the helpers beside them.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use rulebench_core::assertions::Assertion;
use rulebench_core::dataset::{RowText, StoredRow};
use rulebench_core::model::{Dataset, Override, Page, Rule, Side, key_hash};

use crate::error::{Result, StoreError};
use crate::records::*;
use crate::schema::schema_of;

/// A path as the path part of an SQLite `file:` URI (`?`, `#` and `%` escaped).
pub(crate) fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '?' | '#' | '%' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether page `page_id` is at `revision` now (inside a transaction).
pub(crate) fn at_revision(tx: &Transaction<'_>, page_id: &str, revision: i64) -> Result<bool> {
    Ok(tx
        .query_row("SELECT revision FROM pages WHERE id = ?1", [page_id], |r| {
            r.get::<_, i64>(0)
        })
        .optional()?
        == Some(revision))
}

/// The statement that logs a revision (?5, its author, is stored from schema 5 on).
pub(crate) fn revision_sql(schema: i64) -> &'static str {
    if schema >= 5 {
        "INSERT INTO revisions (page_id, revision, created_at, change, author)
         VALUES (?1, ?2, ?3, ?4, ?5)"
    } else {
        "INSERT INTO revisions (page_id, revision, created_at, change)
         SELECT ?1, ?2, ?3, ?4 WHERE ?5 IS NULL OR TRUE"
    }
}

/// The user's login name, from the environment (`USER`, `LOGNAME` or `USERNAME`).
pub(crate) fn login_name() -> Option<String> {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub(crate) fn corrupt(what: impl Into<String>) -> impl FnOnce(serde_json::Error) -> StoreError {
    let what = what.into();
    move |source| StoreError::Corrupt { what, source }
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("model types serialize")
}

/// A page's rules in order, or only the one with id `only` (on a connection or inside a
/// transaction).
pub(crate) fn read_rules(
    conn: &Connection,
    page_id: &str,
    only: Option<&str>,
    at: At,
) -> Result<Vec<Rule>> {
    // A database older than schema 6 has no `expression` column (tests keep old ones).
    let schema = schema_of(conn)?;
    let expression = if schema >= crate::schema::RULE_FAMILIES {
        "expression, warning_json, applies_when_json, family_json"
    } else if schema >= crate::schema::APPLIES_WHEN {
        "expression, warning_json, applies_when_json, NULL"
    } else if schema >= 6 {
        "expression, warning_json, NULL, NULL"
    } else {
        "NULL, NULL, NULL, NULL"
    };
    let mut stmt = conn.prepare(&format!(
        "SELECT id, name, required, weight, category, description, logic_json, {expression}
         FROM {} WHERE page_id = ?1 AND (?2 IS NULL OR id = ?2) ORDER BY ord",
        at.table("rules")
    ))?;
    let raw = stmt
        .query_map(params![page_id, only], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, f64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?,
                r.get::<_, Option<String>>(9)?,
                r.get::<_, Option<String>>(10)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // A family's members carry it as written; it is read once per run of members.
    let mut families: Vec<(String, Vec<Rule>)> = Vec::new();
    let mut member_of = |id: &str, text: &str| -> Result<Option<rulebench_core::model::Member>> {
        if families.last().is_none_or(|(t, _)| t != text) {
            let written: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(text).map_err(corrupt(format!("rule {id}'s family")))?;
            let members = rulebench_core::family::expand(written).map_err(|message| {
                StoreError::Unreadable {
                    what: format!("rule {id}'s family"),
                    message,
                }
            })?;
            families.push((text.to_owned(), members));
        }
        let (_, members) = families.last().expect("pushed above");
        Ok(members
            .iter()
            .find(|m| m.id == id)
            .and_then(|m| m.family.clone()))
    };
    raw.into_iter()
        .map(
            |(
                id,
                name,
                required,
                weight,
                category,
                description,
                logic,
                expression,
                warning,
                applies_when,
                family,
            )| {
                let family = match family {
                    None => None,
                    Some(text) => member_of(&id, &text)?,
                };
                let applies_when = match applies_when {
                    None => None,
                    Some(text) => {
                        let written: serde_json::Value = serde_json::from_str(&text)
                            .map_err(corrupt(format!("rule {id}'s appliesWhen")))?;
                        Some(rulebench_core::read::condition(&name, written).map_err(
                            |message| StoreError::Unreadable {
                                what: format!("rule {id}'s appliesWhen"),
                                message,
                            },
                        )?)
                    }
                };
                Ok(Rule {
                    applies_when,
                    family,
                    expression,
                    warning: warning
                        .map(|w| serde_json::from_str(&w))
                        .transpose()
                        .map_err(corrupt(format!("rule {id}'s warning")))?,
                    logic: serde_json::from_str(&logic).map_err(corrupt(format!("rule {id}")))?,
                    id,
                    name,
                    required,
                    weight,
                    category,
                    description,
                })
            },
        )
        .collect()
}

/// A page's assertions, in order (on a connection or inside a transaction).
pub(crate) fn read_assertions(conn: &Connection, page_id: &str, at: At) -> Result<Vec<Assertion>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT id, json FROM {} WHERE page_id = ?1 ORDER BY ord",
        at.table("assertions")
    ))?;
    let raw = stmt
        .query_map([page_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raw.into_iter()
        .map(|(id, json)| serde_json::from_str(&json).map_err(corrupt(format!("assertion {id}"))))
        .collect()
}

pub(crate) fn org_id(page: &Page) -> String {
    page.organization
        .as_ref()
        .map_or_else(|| "local".to_owned(), |o| o.id.clone())
}

pub(crate) fn insert_rows(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    d: &Dataset,
    on_row: &mut dyn FnMut(usize),
) -> Result<()> {
    let rows = d.rows.iter().map(|row| {
        let key = d.row_key(row);
        StoredRow {
            hash: key_hash(&key),
            key,
            json: serde_json::to_string(row).expect("rows serialize"),
        }
    });
    insert_stored(tx, page_id, side, rows, on_row)
}

/// Writes one side's rows, in their stored form and order, over what is stored (see
/// [`RowWriter`]).
pub(crate) fn insert_stored<R: std::borrow::Borrow<StoredRow>>(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    rows: impl Iterator<Item = R>,
    on_row: &mut dyn FnMut(usize),
) -> Result<()> {
    let mut writer = RowWriter::new(tx, page_id, side)?;
    for row in rows {
        writer.put(row.borrow().text())?;
        on_row(writer.written());
    }
    writer.finish()
}

/// Writes one side's rows, one at a time in their order, over what is stored, inside
/// a change: a row that is the same at its place is not written (so a reload that
/// changes one row of 100,000 logs one row in the history, and costs a comparison for
/// the others), a changed or new one is, and [`RowWriter::finish`] removes the rows
/// past the new end. Rows stream through it: nothing is held but the statements.
///
/// From schema 8 on, a row written carries the page's revision, and the row log gets
/// a row's old value only when this overwrites or removes it (with a mark where a row
/// went): new rows are written once. Before schema 8, triggers log every row written.
pub struct RowWriter<'t> {
    tx: &'t Transaction<'t>,
    /// The statement that appends a row (held: a 1M-row import runs it 1M times).
    insert: rusqlite::Statement<'t>,
    /// Over stored rows (schema 8 on): the row at a place, its old value logged, the
    /// row rewritten.
    over: Option<[rusqlite::Statement<'t>; 3]>,
    page_id: String,
    side: &'static str,
    /// The page's revision (the change's own).
    revision: i64,
    /// One past the highest place stored before: rows from there on are new.
    old_end: i64,
    logged_on_change: bool,
    n: i64,
}

impl<'t> RowWriter<'t> {
    pub fn new(tx: &'t Transaction<'t>, page_id: &str, side: Side) -> Result<Self> {
        let revision: i64 =
            tx.query_row("SELECT revision FROM pages WHERE id = ?1", [page_id], |r| {
                r.get(0)
            })?;
        let old_end: i64 = tx.query_row(
            "SELECT COALESCE(MAX(ord) + 1, 0) FROM dataset_rows WHERE page_id = ?1 AND side = ?2",
            params![page_id, side.name()],
            |r| r.get(0),
        )?;
        let logged_on_change = schema_of(tx)? >= crate::schema::ROWS_LOGGED_ON_CHANGE;
        let insert = tx.prepare(if logged_on_change {
            "INSERT INTO dataset_rows (page_id, side, ord, row_key, key_hash, row_json, revision)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        } else {
            "INSERT INTO dataset_rows (page_id, side, ord, row_key, key_hash, row_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (page_id, side, ord) DO UPDATE SET row_key = excluded.row_key,
                 key_hash = excluded.key_hash, row_json = excluded.row_json
             WHERE dataset_rows.row_json IS NOT excluded.row_json
                OR dataset_rows.row_key IS NOT excluded.row_key"
        })?;
        let mut insert = insert;
        insert.raw_bind_parameter(1, page_id)?;
        insert.raw_bind_parameter(2, side.name())?;
        if logged_on_change {
            insert.raw_bind_parameter(7, revision)?;
        }
        let over = if logged_on_change && old_end > 0 {
            Some([
                tx.prepare(
                    "SELECT row_key, key_hash, row_json, revision FROM dataset_rows
                     WHERE page_id = ?1 AND side = ?2 AND ord = ?3",
                )?,
                tx.prepare(
                    "INSERT OR REPLACE INTO row_log
                         (page_id, side, ord, revision, row_key, key_hash, row_json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?,
                tx.prepare(
                    "UPDATE dataset_rows SET row_key = ?4, key_hash = ?5, row_json = ?6,
                         revision = ?7
                     WHERE page_id = ?1 AND side = ?2 AND ord = ?3",
                )?,
            ])
        } else {
            None
        };
        Ok(RowWriter {
            tx,
            insert,
            over,
            page_id: page_id.to_owned(),
            side: side.name(),
            revision,
            old_end,
            logged_on_change,
            n: 0,
        })
    }

    /// How many rows were put.
    pub fn written(&self) -> usize {
        self.n as usize
    }

    /// Writes the next row.
    pub fn put(&mut self, row: RowText<'_>) -> Result<()> {
        let ord = self.n;
        self.n += 1;
        let (page, side) = (self.page_id.as_str(), self.side);
        if !self.logged_on_change {
            // (An upsert: triggers log what it writes.)
            return self.append(ord, row);
        }
        if let Some([lookup, log, update]) = self.over.as_mut()
            && ord < self.old_end
        {
            let mut found = lookup.query(params![page, side, ord])?;
            if let Some(old) = found.next()? {
                let text = |i: usize| -> rusqlite::Result<&str> {
                    old.get_ref(i)?.as_str().map_err(Into::into)
                };
                if text(0)? == row.key && text(2)? == row.json {
                    return Ok(());
                }
                // The old value goes to the log under the revision that wrote it,
                // unless that is this one (no revision read it) or unknown (a row
                // from before schema 8, logged already).
                if let Some(written) = old.get::<_, Option<i64>>(3)?
                    && written < self.revision
                {
                    log.execute(params![
                        page,
                        side,
                        ord,
                        written,
                        text(0)?,
                        text(1)?,
                        text(2)?
                    ])?;
                }
                drop(found);
                update.execute(params![
                    page,
                    side,
                    ord,
                    row.key,
                    row.hash,
                    row.json,
                    self.revision
                ])?;
                return Ok(());
            }
        }
        self.append(ord, row)
    }

    /// Runs the held insert for the row at `ord` (its page, side and revision were
    /// bound once: SQLite keeps bindings from one run to the next).
    fn append(&mut self, ord: i64, row: RowText<'_>) -> Result<()> {
        self.insert.raw_bind_parameter(3, ord)?;
        self.insert.raw_bind_parameter(4, row.key)?;
        self.insert.raw_bind_parameter(5, row.hash)?;
        self.insert.raw_bind_parameter(6, row.json)?;
        self.insert.raw_execute()?;
        Ok(())
    }

    /// Removes the rows past the last one put (logging them gone).
    pub fn finish(self) -> Result<()> {
        let (page, side, n) = (self.page_id.as_str(), self.side, self.n);
        if self.logged_on_change && n < self.old_end {
            self.tx.execute(
                "INSERT OR REPLACE INTO row_log
                     (page_id, side, ord, revision, row_key, key_hash, row_json)
                 SELECT page_id, side, ord, revision, row_key, key_hash, row_json
                 FROM dataset_rows WHERE page_id = ?1 AND side = ?2 AND ord >= ?3
                     AND revision < ?4",
                params![page, side, n, self.revision],
            )?;
            self.tx.execute(
                "INSERT OR REPLACE INTO row_log
                     (page_id, side, ord, revision, row_key, key_hash, row_json)
                 SELECT page_id, side, ord, ?4, NULL, NULL, NULL
                 FROM dataset_rows WHERE page_id = ?1 AND side = ?2 AND ord >= ?3",
                params![page, side, n, self.revision],
            )?;
        }
        self.tx.execute(
            "DELETE FROM dataset_rows WHERE page_id = ?1 AND side = ?2 AND ord >= ?3",
            params![page, side, n],
        )?;
        Ok(())
    }
}

/// Before a stored row is overwritten at `revision` (schema 8 on): its value goes to
/// the row log under the revision that wrote it, unless that is this one (nothing
/// read it then) or unknown (a row from before schema 8, logged already).
pub(crate) fn log_old_row(
    tx: &Transaction<'_>,
    page_id: &str,
    side: &str,
    ord: i64,
    revision: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO row_log (page_id, side, ord, revision, row_key, key_hash, row_json)
         SELECT page_id, side, ord, revision, row_key, key_hash, row_json FROM dataset_rows
         WHERE page_id = ?1 AND side = ?2 AND ord = ?3 AND revision < ?4",
    )?
    .execute(params![page_id, side, ord, revision])?;
    Ok(())
}

pub fn upsert_rule(
    tx: &Transaction<'_>,
    page_id: &str,
    org: &str,
    rule: &Rule,
    ord: i64,
) -> Result<()> {
    // The columns a rule has beyond the first schema's, as far as this database's
    // schema has them (tests keep old ones).
    let schema = schema_of(tx)?;
    let extra: &[&str] = if schema >= crate::schema::RULE_FAMILIES {
        &[
            "expression",
            "warning_json",
            "applies_when_json",
            "family_json",
        ]
    } else if schema >= crate::schema::APPLIES_WHEN {
        &["expression", "warning_json", "applies_when_json"]
    } else if schema >= 6 {
        &["expression", "warning_json"]
    } else {
        &[]
    };
    let condition = rule
        .applies_when
        .as_ref()
        .map(|c| c.as_written().to_string());
    let family = rule
        .family
        .as_ref()
        .map(|m| serde_json::Value::Object(m.family.written.clone()).to_string());
    let logic = rule.logic.to_string();
    let warning = rule.warning.as_ref().map(to_json);
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![
        &page_id,
        &org,
        &rule.id,
        &ord,
        &rule.name,
        &rule.required,
        &rule.weight,
        &rule.category,
        &rule.description,
        &logic,
        &rule.expression,
        &warning,
        &condition,
        &family,
    ];
    values.truncate(10 + extra.len());
    // An UPDATE for a rule there is, not an upsert: an upsert's conflict handling
    // overrides the log trigger's `OR REPLACE`, so a rule logged already in this
    // revision (its position moved by a removal, say) would fail the log's key.
    let exists = tx
        .prepare_cached("SELECT 1 FROM rules WHERE page_id = ?1 AND id = ?2")?
        .exists(params![page_id, rule.id])?;
    let sql = if exists {
        let set: String = extra
            .iter()
            .enumerate()
            .map(|(i, c)| format!(", {c} = ?{}", 11 + i))
            .collect();
        format!(
            "UPDATE rules SET organization_id = ?2, ord = ?4, name = ?5, required = ?6,
                weight = ?7, category = ?8, description = ?9, logic_json = ?10{set}
             WHERE page_id = ?1 AND id = ?3"
        )
    } else {
        let cols: String = extra.iter().map(|c| format!(", {c}")).collect();
        let vals: String = (0..extra.len()).map(|i| format!(", ?{}", 11 + i)).collect();
        format!(
            "INSERT INTO rules (page_id, organization_id, id, ord, name, required, weight, category, description, logic_json{cols})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10{vals})"
        )
    };
    tx.execute(&sql, values.as_slice())?;
    Ok(())
}

pub(crate) fn record_rule(
    tx: &Transaction<'_>,
    page_id: &str,
    rule_id: &str,
    revision: i64,
    rule: Option<&Rule>,
) -> Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO rule_history (page_id, rule_id, revision, rule_json) VALUES (?1, ?2, ?3, ?4)",
        params![page_id, rule_id, revision, rule.map(to_json)],
    )?;
    Ok(())
}

pub(crate) fn upsert_override(
    tx: &Transaction<'_>,
    page_id: &str,
    o: &Override,
    ord: i64,
) -> Result<()> {
    tx.execute(
        "INSERT INTO overrides (page_id, source_key_hash, target_key_hash, source_key, target_key, value, note, ord)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (page_id, source_key_hash, target_key_hash) DO UPDATE SET
            source_key = excluded.source_key, target_key = excluded.target_key,
            value = excluded.value, note = excluded.note",
        params![
            page_id,
            o.source_hash().unwrap_or_default(),
            o.target_hash().unwrap_or_default(),
            o.source_key,
            o.target_key,
            o.value,
            o.note,
            ord
        ],
    )?;
    Ok(())
}

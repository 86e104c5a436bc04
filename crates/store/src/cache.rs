//! The result cache (`compat_results`) and the records of assertion runs: written only
//! for the revision a page is still at.

use rusqlite::{Transaction, params};

use rulebench_core::assertions::AssertionResult;

use crate::error::Result;
use crate::pages::Store;
use crate::records::*;
use crate::rows::*;

impl Store {
    /// The cached result pages of a selection at a revision (compact JSON texts, see
    /// `core::result`), in page order.
    pub fn cached_result(
        &self,
        page_id: &str,
        selection_hash: &str,
        revision: i64,
    ) -> Result<Option<Vec<String>>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT payload_json FROM compat_results
             WHERE page_id = ?1 AND selection_hash = ?2 AND revision_id = ?3 ORDER BY page_num",
        )?;
        let texts = stmt
            .query_map(params![page_id, selection_hash, revision], |r| {
                r.get::<_, String>(0)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok((!texts.is_empty()).then_some(texts))
    }

    /// Stores a selection's result pages for a revision and drops stale revisions.
    pub fn store_result(
        &mut self,
        page_id: &str,
        selection_hash: &str,
        revision: i64,
        pages: &[String],
    ) -> Result<()> {
        // A cache: nothing is lost by not writing it (read-only, or the page moved on).
        let Some(tx) = self.write_at_revision(page_id, revision)? else {
            return Ok(());
        };
        tx.execute(
            "DELETE FROM compat_results WHERE page_id = ?1 AND revision_id < ?2",
            params![page_id, revision],
        )?;
        // Fewer pages than an earlier write of the same key leaves no stale tail.
        tx.execute(
            "DELETE FROM compat_results
             WHERE page_id = ?1 AND selection_hash = ?2 AND revision_id = ?3 AND page_num >= ?4",
            params![page_id, selection_hash, revision, pages.len() as i64],
        )?;
        let at = now();
        {
            let mut stmt = tx.prepare(
                "INSERT OR REPLACE INTO compat_results
                    (page_id, selection_hash, revision_id, page_num, payload_json, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for (num, payload) in pages.iter().enumerate() {
                stmt.execute(params![
                    page_id,
                    selection_hash,
                    revision,
                    num as i64,
                    payload,
                    at
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Records the results of an assertion run at a revision (replacing an earlier run of
    /// that revision). Not a page change: the revision stays.
    pub fn store_assertion_results(
        &mut self,
        page_id: &str,
        revision: i64,
        run_at: &str,
        results: &[AssertionResult],
    ) -> Result<()> {
        // The report is printed; its record is not kept where it cannot be, nor when it
        // would describe a revision that is not the page's any more.
        let Some(tx) = self.write_at_revision(page_id, revision)? else {
            return Ok(());
        };
        tx.execute(
            "DELETE FROM assertion_results WHERE page_id = ?1 AND revision = ?2",
            params![page_id, revision],
        )?;
        {
            let mut stmt = tx.prepare(
                "INSERT INTO assertion_results (page_id, revision, assertion_id, passed, message,
                    actual_json, actual_sha256, truncated, run_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for r in results {
                stmt.execute(params![
                    page_id,
                    revision,
                    r.assertion_id,
                    r.passed,
                    r.message,
                    to_json(&r.actual_samples),
                    r.actual_sha256,
                    r.truncated,
                    run_at
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The results of the latest assertion run of a page, in assertion order.
    pub fn assertion_results(&self, page_id: &str) -> Result<Vec<StoredAssertionResult>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.revision, r.assertion_id, r.passed, r.message, r.actual_json,
                    r.actual_sha256, r.truncated, r.run_at
             FROM assertion_results r
             LEFT JOIN assertions a ON a.page_id = r.page_id AND a.id = r.assertion_id
             WHERE r.page_id = ?1
               AND r.revision = (SELECT MAX(revision) FROM assertion_results WHERE page_id = ?1)
             ORDER BY a.ord, r.assertion_id",
        )?;
        let raw = stmt
            .query_map([page_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, bool>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        raw.into_iter()
            .map(
                |(
                    revision,
                    assertion_id,
                    passed,
                    message,
                    actual,
                    actual_sha256,
                    truncated,
                    run_at,
                )| {
                    Ok(StoredAssertionResult {
                        actual_samples: serde_json::from_str(&actual)
                            .map_err(corrupt(format!("assertion result {assertion_id}")))?,
                        revision,
                        assertion_id,
                        passed,
                        message,
                        actual_sha256,
                        truncated,
                        run_at,
                    })
                },
            )
            .collect()
    }

    /// An IMMEDIATE transaction for writing what was computed at `revision` of a page —
    /// `None` when the database is read-only or the page is not at that revision any
    /// more (renamed, removed or changed meanwhile): such a write is skipped, never an
    /// error.
    fn write_at_revision(
        &mut self,
        page_id: &str,
        revision: i64,
    ) -> Result<Option<Transaction<'_>>> {
        if self.read_only {
            return Ok(None);
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        Ok(at_revision(&tx, page_id, revision)?.then_some(tx))
    }
}

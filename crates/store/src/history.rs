//! A page's history: its revisions, the page as it was at one, a rule's versions,
//! pruning, and where a page was renamed to.

use rusqlite::{OptionalExtension, params};

use rulebench_core::model::Rule;

use crate::error::Result;
use crate::pages::Store;
use crate::records::*;
use crate::rows::*;
use crate::schema::ROWS_LOGGED_ON_CHANGE;

impl Store {
    /// Loads a page as it was at `revision`, from its history; `None` when there is no
    /// such page or the revision is outside [`Store::history_span`].
    pub fn load_at(&self, page_id: &str, revision: i64) -> Result<Option<StoredPage>> {
        match self.history_span(page_id)? {
            Some((first, last)) if (first..=last).contains(&revision) => {
                self.load_but(page_id, &[], At::Revision(revision))
            }
            _ => Ok(None),
        }
    }

    /// The revisions a page can be loaded at: from the first one its history holds
    /// (1, or the revision it had when this history began) to the current one.
    pub fn history_span(&self, page_id: &str) -> Result<Option<(i64, i64)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT (SELECT MIN(revision) FROM page_log WHERE page_id = ?1), revision
                 FROM pages WHERE id = ?1",
                [page_id],
                |r| Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, i64>(1)?)),
            )
            .optional()?
            .map(|(first, last)| (first.unwrap_or(last), last)))
    }

    /// Forgets a page's history before revision `from`: every log entry an entry at or
    /// before `from` supersedes, and the revision log's lines before it. The page still
    /// reads back at `from` and after; earlier revisions are refused from then on
    /// ([`Store::history_span`] starts at `from`). Returns how many log entries and
    /// revision lines went. One transaction.
    pub fn prune_history(&mut self, page_id: &str, from: i64) -> Result<(usize, usize)> {
        self.refuse_if_read_only("pruning the history")?;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut entries = 0;
        for (log, keys) in [
            ("page_log", &[][..]),
            ("row_log", &["side", "ord"][..]),
            ("rule_log", &["id"][..]),
            ("override_log", &["source_key_hash", "target_key_hash"][..]),
            ("assertion_log", &["id"][..]),
        ] {
            let same: String = keys.iter().map(|k| format!(" AND m.{k} = l.{k}")).collect();
            // From schema 8 on, a stored row written at or before the cut supersedes
            // its row's log entries too.
            let head = if log == "row_log" && self.schema >= ROWS_LOGGED_ON_CHANGE {
                " OR EXISTS (SELECT 1 FROM dataset_rows h WHERE h.page_id = l.page_id
                     AND h.side = l.side AND h.ord = l.ord AND h.revision <= ?2)"
            } else {
                ""
            };
            entries += tx.execute(
                &format!(
                    "DELETE FROM {log} AS l WHERE l.page_id = ?1 AND l.revision < ?2
                       AND (l.revision < (SELECT MAX(m.revision) FROM {log} m
                                         WHERE m.page_id = l.page_id{same} AND m.revision <= ?2){head})"
                ),
                params![page_id, from],
            )?;
        }
        // The head's entry that stands for `from` takes its number: the history then
        // starts there (`history_span` reads the head log's first revision).
        tx.execute(
            "UPDATE page_log SET revision = ?2 WHERE page_id = ?1 AND revision < ?2",
            params![page_id, from],
        )?;
        let lines = tx.execute(
            "DELETE FROM revisions WHERE page_id = ?1 AND revision < ?2",
            params![page_id, from],
        )?;
        tx.commit()?;
        Ok((entries, lines))
    }

    /// A page's revision log, newest first: revision, when, and what changed.
    pub fn revisions(&self, page_id: &str) -> Result<Vec<RevisionEntry>> {
        let mut stmt = self.conn.prepare(
            "SELECT revision, created_at, change, author FROM revisions
             WHERE page_id = ?1 ORDER BY revision DESC",
        )?;
        let rows = stmt
            .query_map([page_id], |r| {
                Ok(RevisionEntry {
                    revision: r.get(0)?,
                    at: r.get(1)?,
                    change: r.get(2)?,
                    author: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn rule_history(&self, page_id: &str, rule_id: &str) -> Result<Vec<(i64, Option<Rule>)>> {
        let mut stmt = self.conn.prepare(
            "SELECT revision, rule_json FROM rule_history
             WHERE page_id = ?1 AND rule_id = ?2 ORDER BY revision DESC",
        )?;
        let raw = stmt
            .query_map(params![page_id, rule_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        raw.into_iter()
            .map(|(rev, json)| {
                let rule = json
                    .map(|j| serde_json::from_str(&j))
                    .transpose()
                    .map_err(corrupt("rule_history"))?;
                Ok((rev, rule))
            })
            .collect()
    }

    /// The page a page `old` was renamed to, when the revision log says so (the newest
    /// rename from that id).
    pub fn renamed_to(&self, old: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT page_id FROM revisions WHERE change = ?1
                 AND page_id IN (SELECT id FROM pages)
                 ORDER BY created_at DESC, revision DESC LIMIT 1",
                [format!("renamed from {old}")],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// A page's newest revision and who made it, when the log says.
    pub fn last_revision(&self, page_id: &str) -> Result<Option<(i64, Option<String>)>> {
        let author = if self.schema >= 5 { "author" } else { "NULL" };
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT revision, {author} FROM revisions WHERE page_id = ?1
                     ORDER BY revision DESC LIMIT 1"
                ),
                [page_id],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?)),
            )
            .optional()?)
    }

    /// One stored rule as it is now (`None`: no such rule).
    pub fn rule(&self, page_id: &str, rule_id: &str) -> Result<Option<Rule>> {
        Ok(read_rules(&self.conn, page_id, Some(rule_id), At::Now)?.pop())
    }
}

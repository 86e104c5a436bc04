//! What the store hands back: pages as stored, summaries, drafts, revisions, results.

use serde_json::Value;

use rulebench_core::model::Page;

/// What kind of edit a [`KeptDraft`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DraftKind {
    /// A rule's text in the editor (`item`: the rule id).
    Rule,
    /// Tuned policy values (`item`: `policies`; the text a JSON object of them).
    Policy,
    /// An assertion in the JSON dialog (`item`: its id; empty for a new one).
    Assertion,
}

impl DraftKind {
    pub fn name(self) -> &'static str {
        match self {
            DraftKind::Rule => "rule",
            DraftKind::Policy => "policy",
            DraftKind::Assertion => "assertion",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<DraftKind> {
        match s {
            "rule" => Some(DraftKind::Rule),
            "policy" => Some(DraftKind::Policy),
            "assertion" => Some(DraftKind::Assertion),
            _ => None,
        }
    }
}

/// An edit kept in the database without being saved to its page.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptDraft {
    pub kind: DraftKind,
    pub item: String,
    pub text: String,
    /// The rule's text is infix (the editor's F2 view), not JSONLogic.
    pub infix: bool,
    /// The stored value the edit started from (a save goes over it only).
    pub base: Option<Value>,
    pub updated_at: String,
}

/// One row of `rulebench pages`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageSummary {
    pub id: String,
    pub name: String,
    pub rules: i64,
    pub sources: i64,
    pub targets: i64,
    pub revision: i64,
    pub updated_at: String,
}

/// One persisted assertion result (`assertion_results`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAssertionResult {
    pub revision: i64,
    pub assertion_id: String,
    pub passed: bool,
    pub message: Option<String>,
    pub actual_samples: Value,
    pub actual_sha256: Option<String>,
    pub truncated: bool,
    pub run_at: String,
}

/// One entry of a page's revision log.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RevisionEntry {
    pub revision: i64,
    pub at: String,
    pub change: String,
    /// The login name of whoever made it (absent for revisions made before rulebench
    /// recorded it, or where the system does not say).
    pub author: Option<String>,
}

/// Which state of a page a read sees: the current one, or one from its history.
#[derive(Debug, Clone, Copy)]
pub(crate) enum At {
    Now,
    Revision(i64),
}

impl At {
    /// [`At::table_in`] for a table whose history is logged by triggers in every
    /// schema (not `dataset_rows`).
    pub(crate) fn table(self, table: &str) -> String {
        debug_assert_ne!(table, "dataset_rows", "rows are read with At::table_in");
        self.table_in(table, 0)
    }

    pub(crate) fn revision(self) -> Option<i64> {
        match self {
            At::Now => None,
            At::Revision(n) => Some(n),
        }
    }

    /// The table to read `table` from (in a database at `schema`; it matters for
    /// `dataset_rows` only): itself, or a view of its log holding each item's latest
    /// entry at or before the revision, items gone by then left out.
    pub(crate) fn table_in(self, table: &str, schema: i64) -> String {
        let At::Revision(n) = self else {
            return table.to_owned();
        };
        let (log, keys, payload): (&str, &[&str], &str) = match table {
            "dataset_rows" => ("row_log", &["side", "ord"], "row_json"),
            "rules" => ("rule_log", &["id"], "logic_json"),
            "overrides" => (
                "override_log",
                &["source_key_hash", "target_key_hash"],
                "value",
            ),
            "assertions" => ("assertion_log", &["id"], "json"),
            _ => unreachable!("no log for {table}"),
        };
        let same: String = keys.iter().map(|k| format!(" AND m.{k} = l.{k}")).collect();
        if table == "dataset_rows" && schema >= crate::schema::ROWS_LOGGED_ON_CHANGE {
            // A row is logged when it changes (migration 8): the head row holds from
            // the revision that wrote it; before that, the log's latest entry.
            return format!(
                "(SELECT page_id, side, ord, row_key, key_hash, row_json FROM dataset_rows \
                  WHERE revision <= {n} \
                 UNION ALL \
                 SELECT l.page_id, l.side, l.ord, l.row_key, l.key_hash, l.row_json \
                  FROM row_log l WHERE l.row_json IS NOT NULL AND l.revision = \
                  (SELECT MAX(m.revision) FROM row_log m WHERE m.page_id = l.page_id{same} \
                   AND m.revision <= {n}) \
                  AND NOT EXISTS (SELECT 1 FROM dataset_rows h WHERE h.page_id = l.page_id \
                   AND h.side = l.side AND h.ord = l.ord AND h.revision <= {n}))"
            );
        }
        format!(
            "(SELECT * FROM {log} l WHERE l.{payload} IS NOT NULL AND l.revision = \
             (SELECT MAX(m.revision) FROM {log} m WHERE m.page_id = l.page_id{same} \
              AND m.revision <= {n}))"
        )
    }
}

/// A stored row's key and keyHash.
pub type RowKey = (String, String);

/// A page as stored, with its revision.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPage {
    pub page: Page,
    pub revision: i64,
}

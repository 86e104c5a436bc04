//! Drafts: what a person typed in the workbench and did not save, per page and user
//! (schema 7); and views: how the workbench showed a page to a user (schema 11). Not
//! part of a page: no revision, no history.

use rusqlite::params;

use crate::error::Result;
use crate::pages::Store;
use crate::records::*;
use crate::rows::*;

impl Store {
    /// Keeps (or replaces) a draft of this user on a page. Not a page change.
    pub fn put_draft(&self, page_id: &str, draft: &KeptDraft) -> Result<()> {
        self.refuse_if_read_only("keeping a draft")?;
        self.conn.execute(
            "INSERT OR REPLACE INTO drafts
                (page_id, author, kind, item, text, infix, base_json, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                page_id,
                self.author(),
                draft.kind.name(),
                draft.item,
                draft.text,
                draft.infix,
                draft.base.as_ref().map(|b| b.to_string()),
                now()
            ],
        )?;
        Ok(())
    }

    /// Forgets a draft of this user (saved, or let go).
    pub fn delete_draft(&self, page_id: &str, kind: DraftKind, item: &str) -> Result<()> {
        if self.read_only || self.schema < 7 {
            return Ok(());
        }
        self.conn.execute(
            "DELETE FROM drafts WHERE page_id = ?1 AND author = ?2 AND kind = ?3 AND item = ?4",
            params![page_id, self.author(), kind.name(), item],
        )?;
        Ok(())
    }

    /// Forgets every draft of this user on a page.
    pub fn clear_drafts(&self, page_id: &str) -> Result<()> {
        if self.read_only || self.schema < 7 {
            return Ok(());
        }
        self.conn.execute(
            "DELETE FROM drafts WHERE page_id = ?1 AND author = ?2",
            params![page_id, self.author()],
        )?;
        Ok(())
    }

    /// This user's drafts on a page, oldest first.
    pub fn drafts(&self, page_id: &str) -> Result<Vec<KeptDraft>> {
        if self.schema < 7 {
            return Ok(vec![]);
        }
        let mut stmt = self.conn.prepare(
            "SELECT kind, item, text, infix, base_json, updated_at FROM drafts
             WHERE page_id = ?1 AND author = ?2 ORDER BY updated_at, kind, item",
        )?;
        let rows = stmt
            .query_map(params![page_id, self.author()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, bool>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(kind, item, text, infix, base, updated_at)| {
                Some(KeptDraft {
                    kind: DraftKind::parse(&kind)?,
                    item,
                    text,
                    infix,
                    base: base.and_then(|b| serde_json::from_str(&b).ok()),
                    updated_at,
                })
            })
            .collect())
    }

    /// Keeps this user's view of a page (JSON the workbench reads back), replacing the
    /// one kept before. Not a page change. Nothing on a read-only database or one
    /// older than schema 11 (its view is simply not kept).
    pub fn put_view(&self, page_id: &str, view_json: &str) -> Result<()> {
        if self.read_only || self.schema < crate::schema::VIEWS {
            return Ok(());
        }
        // Only for a page that is there (one removed or renamed elsewhere keeps none).
        self.conn.execute(
            "INSERT OR REPLACE INTO views (page_id, author, view_json, updated_at)
             SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM pages WHERE id = ?1)",
            params![page_id, self.author(), view_json, now()],
        )?;
        Ok(())
    }

    /// This user's view of a page, as kept.
    pub fn view(&self, page_id: &str) -> Result<Option<String>> {
        if self.schema < crate::schema::VIEWS {
            return Ok(None);
        }
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .query_row(
                "SELECT view_json FROM views WHERE page_id = ?1 AND author = ?2",
                params![page_id, self.author()],
                |r| r.get(0),
            )
            .optional()?)
    }
}

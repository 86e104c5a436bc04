//! A page's history: its revision log, the page as it was at any revision, and
//! restoring a rule, the policies, an override or the whole page from one. A restore is
//! itself a new revision (nothing is rewound), and restoring what is already there makes
//! none.

use super::{App, AppError, Result, did_you_mean, store};
use crate::core::model::{Page, key_hash};
pub use crate::store::RevisionEntry;

/// Parses the revision part of `PAGE@N`: `N` (a revision number) or `-K` (K revisions
/// back from the current one; `-0` is the current one).
pub fn parse_revision(text: &str) -> std::result::Result<i64, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "`{}` is not a revision: write a number (`@12`) or how many back (`@-1`)",
            crate::core::text::sanitize(t)
        )
    };
    if let Some(back) = t.strip_prefix('-') {
        let k: i64 = back.parse().map_err(|_| bad())?;
        Ok(-k)
    } else {
        let n: i64 = t.parse().map_err(|_| bad())?;
        if n < 1 {
            return Err(bad());
        }
        Ok(n)
    }
}

/// Splits `PAGE@N` into the page id and the revision (page ids never hold `@`).
pub fn split_spec(spec: &str) -> std::result::Result<(&str, Option<i64>), String> {
    match spec.rsplit_once('@') {
        None => Ok((spec, None)),
        Some((id, rev)) => Ok((id, Some(parse_revision(rev)?))),
    }
}

impl App {
    /// A page's revision log, newest first.
    pub fn revisions(&self, page_id: &str) -> Result<Vec<RevisionEntry>> {
        self.require_page(page_id)?;
        Ok(self.store.revisions(page_id)?)
    }

    /// The revision `at` names (`N`, or `-K` back from the current one), checked
    /// against what the page's history holds.
    pub fn resolve_revision(&self, page_id: &str, at: i64) -> Result<i64> {
        let Some((first, last)) = self.store.history_span(page_id)? else {
            self.require_page(page_id)?;
            unreachable!("require_page fails for a page without a history span");
        };
        let n = if at <= 0 { last + at } else { at };
        if n > last || n < 1 {
            return Err(AppError::Usage(format!(
                "page `{page_id}` has revisions 1 to {last}: there is no revision {n} (`rulebench page log {page_id}` lists them)"
            )));
        }
        if n < first {
            return Err(AppError::Usage(format!(
                "page `{page_id}` has its whole history from revision {first} on (revisions before it were made by an older rulebench): revision {n} cannot be rebuilt"
            )));
        }
        Ok(n)
    }

    /// The page as it was at revision `at` (see [`App::resolve_revision`]).
    pub fn page_at(&self, page_id: &str, at: i64) -> Result<(Page, i64)> {
        let n = self.resolve_revision(page_id, at)?;
        let stored = self
            .store
            .load_at(page_id, n)?
            .ok_or_else(|| AppError::Usage(format!("page `{page_id}` has no revision {n}")))?;
        Ok((stored.page, stored.revision))
    }

    /// A page named as `PAGE` (its current state) or `PAGE@N` / `PAGE@-K` (a revision).
    pub fn page_spec(&self, spec: &str) -> Result<(Page, i64)> {
        match split_spec(spec).map_err(AppError::Usage)? {
            (id, None) => self.page(id),
            (id, Some(at)) => self.page_at(id, at),
        }
    }

    fn require_page(&self, page_id: &str) -> Result<()> {
        if self.store.revision(page_id)?.is_none() {
            self.page(page_id)?;
        }
        Ok(())
    }

    /// Restores rule `rule_id` as it was at revision `from`: over the current rule, or,
    /// for a rule deleted since, at its old place (within the plan's rule limit).
    /// `None` when the rule is already so.
    pub fn restore_rule(&mut self, page_id: &str, from: i64, rule_id: &str) -> Result<Option<i64>> {
        let (old, n) = self.page_at(page_id, from)?;
        let Some((old_pos, rule)) = old.rule(rule_id).map(|(i, r)| (i, r.clone())) else {
            let ids: Vec<&str> = old.rules.iter().map(|r| r.id.as_str()).collect();
            return Err(AppError::NotFound {
                what: "rule",
                id: format!("{rule_id} (at revision {n})"),
                hint: did_you_mean(rule_id, ids.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| Some(format!("rules at revision {n}: {}", ids.join(", ")))),
            });
        };
        let (page, _) = self.page(page_id)?;
        if page.rule(rule_id).map(|(_, r)| r) == Some(&rule) {
            return Ok(None);
        }
        let limit = page.plan_tier().rule_limit();
        let current = page.rule(rule_id).map(|(i, _)| i);
        let what = format!("restored rule {rule_id} from revision {n}");
        self.store
            .change_if(page_id, &what, |tx, rev| -> Result<bool> {
                let (count, exists) = store::ops::rule_count(tx, page_id, rule_id)?;
                let ord = match (exists, current) {
                    (true, Some(i)) => i.min(count.saturating_sub(1)),
                    (true, None) => count.saturating_sub(1),
                    (false, _) => {
                        if let Some(limit) = limit
                            && count >= limit
                        {
                            return Err(AppError::RuleLimit { limit });
                        }
                        old_pos.min(count)
                    }
                };
                store::ops::put_rule(tx, &page, &rule, ord, rev)?;
                Ok(true)
            })
    }

    /// Restores both policies as they were at revision `from`; `None` when they are so.
    pub fn restore_policies(&mut self, page_id: &str, from: i64) -> Result<Option<i64>> {
        let (old, n) = self.page_at(page_id, from)?;
        let what = format!("restored the policies from revision {n}");
        self.store
            .change_if(page_id, &what, |tx, _| -> Result<bool> {
                let (d, s) = store::ops::policies(tx, page_id)?;
                if d == old.device_policy && s == old.selection_policy {
                    return Ok(false);
                }
                store::ops::write_policies(tx, page_id, &old.device_policy, &old.selection_policy)?;
                Ok(true)
            })
    }

    /// Restores the override of (source, target), named by their row keys, as it was
    /// at revision `from`: set as it was, or removed when there was none. `None` when
    /// it is already so.
    pub fn restore_override(
        &mut self,
        page_id: &str,
        from: i64,
        source_key: &str,
        target_key: &str,
    ) -> Result<Option<i64>> {
        let (old, n) = self.page_at(page_id, from)?;
        let (sh, th) = (key_hash(source_key), key_hash(target_key));
        let was = old
            .overrides
            .iter()
            .find(|o| o.source_hash() == Some(sh.clone()) && o.target_hash() == Some(th.clone()))
            .cloned();
        let what = format!("restored override {source_key} × {target_key} from revision {n}");
        self.store
            .change_if(page_id, &what, |tx, _| -> Result<bool> {
                let now = store::ops::override_of(tx, page_id, &sh, &th)?;
                match was {
                    Some(o) => {
                        if now == Some((o.value, o.note.clone())) {
                            return Ok(false);
                        }
                        store::ops::put_override(tx, page_id, &o)?;
                        Ok(true)
                    }
                    None => Ok(store::ops::delete_override(tx, page_id, &sh, &th)?),
                }
            })
    }

    /// Makes the page as it was at revision `from` again (rules, rows, policies,
    /// overrides, assertions), as one new revision; `None` when it is so already.
    pub fn restore_page(&mut self, page_id: &str, from: i64) -> Result<Option<i64>> {
        let (old, n) = self.page_at(page_id, from)?;
        let (page, _) = self.page(page_id)?;
        if page == old {
            return Ok(None);
        }
        let what = format!("restored revision {n}");
        Ok(Some(self.store.insert_page_as(&old, true, Some(&what))?))
    }
}

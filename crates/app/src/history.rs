//! A page's history: its revision log, the page as it was at any revision, and
//! restoring a rule, the policies, an override or the whole page from one. A restore is
//! itself a new revision (nothing is rewound), and restoring what is already there makes
//! none.

use crate::{App, AppError, Result};
use rulebench_core::diag::did_you_mean;
use rulebench_core::matrix::Column;
use rulebench_core::model::{Page, key_hash};
use rulebench_store as store;
pub use rulebench_store::RevisionEntry;
use std::sync::Arc;

/// Parses the revision part of `PAGE@N`: `N` (a revision number) or `-K` (K revisions
/// back from the current one; `-0` is the current one).
pub fn parse_revision(text: &str) -> std::result::Result<i64, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "`{}` is not a revision: write a number (`@12`) or how many back (`@-1`)",
            rulebench_core::text::sanitize(t)
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
                "page `{page_id}` keeps its whole history from revision {first} on (earlier ones were pruned, or made by an older rulebench): revision {n} cannot be rebuilt"
            )));
        }
        Ok(n)
    }

    /// Forgets the history before revision `at` (see [`App::resolve_revision`]): the page
    /// reads back at `at` and after, not before. Returns the revision and how many log
    /// entries and revision lines went.
    pub fn prune_history(&mut self, page_id: &str, at: i64) -> Result<(i64, usize, usize)> {
        let n = self.resolve_revision(page_id, at)?;
        let (entries, lines) = self.store.prune_history(page_id, n)?;
        Ok((n, entries, lines))
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
                    .or_else(|| Some(super::some_of(&format!("rules at revision {n}"), &ids))),
            });
        };
        let (page, _) = self.page(page_id)?;
        if page.rule(rule_id).map(|(_, r)| r) == Some(&rule) {
            return Ok(None);
        }
        // A member of a rule family (then or now) changes with its family: one member
        // alone would split it (restore the page, or add the family again).
        if let Some(m) = rule
            .family
            .as_ref()
            .or_else(|| page.rule(rule_id).and_then(|(_, r)| r.family.as_ref()))
        {
            return Err(AppError::FamilyMember {
                page: page_id.to_owned(),
                rule: rule_id.to_owned(),
                family: m.family.id.clone(),
            });
        }
        let limit = page.plan_tier().rule_limit();
        let what = format!("restored rule {rule_id} from revision {n}");
        self.store
            .change_if(page_id, &what, |tx, rev| -> Result<bool> {
                let (count, _) = store::ops::rule_count(tx, page_id, rule_id)?;
                // Where the rule is now, read in this transaction (it may have come
                // back since the page was read): it stays there.
                let ord = match store::ops::rule_ord(tx, page_id, rule_id)? {
                    Some(ord) => ord,
                    None => {
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
        let label = format!("{source_key} × {target_key}");
        self.restore_override_hashed(
            page_id,
            from,
            (&key_hash(source_key), &key_hash(target_key)),
            &label,
        )
    }

    /// [`App::restore_override`] of the pair with these keyHashes (`label` names it).
    pub fn restore_override_hashed(
        &mut self,
        page_id: &str,
        from: i64,
        (sh, th): (&str, &str),
        label: &str,
    ) -> Result<Option<i64>> {
        let (old, n) = self.page_at(page_id, from)?;
        let was = old
            .overrides
            .iter()
            .find(|o| {
                o.source_hash().as_deref() == Some(sh) && o.target_hash().as_deref() == Some(th)
            })
            .cloned();
        let what = format!("restored override {label} from revision {n}");
        self.store
            .change_if(page_id, &what, |tx, _| -> Result<bool> {
                let now = store::ops::override_of(tx, page_id, sh, th)?;
                match was {
                    Some(o) => {
                        if now == Some((o.value, o.note.clone())) {
                            return Ok(false);
                        }
                        store::ops::put_override(tx, page_id, &o)?;
                        Ok(true)
                    }
                    None => Ok(store::ops::delete_override(tx, page_id, sh, th)?),
                }
            })
    }

    /// Restores assertion `id` as it was at revision `from`, in its place then (or
    /// removes it, when there was none then), as one new revision; `None` when it is
    /// so already.
    pub fn restore_assertion(&mut self, page_id: &str, from: i64, id: &str) -> Result<Option<i64>> {
        let (old, n) = self.page_at(page_id, from)?;
        let at = old.assertions.iter().position(|a| a.id == id);
        let (now, _) = self.page(page_id)?;
        let current = now.assertions.iter().find(|a| a.id == id);
        if at.is_none() && current.is_none() {
            let ids = old
                .assertions
                .iter()
                .chain(&now.assertions)
                .map(|a| a.id.as_str());
            return Err(AppError::NotFound {
                what: "assertion",
                id: format!("{id} (at revision {n} or now)"),
                hint: did_you_mean(id, ids).map(|s| format!("did you mean `{s}`?")),
            });
        }
        if at.map(|i| &old.assertions[i]) == current {
            return Ok(None);
        }
        let what = format!("restored assertion {id} from revision {n}");
        let ((), _, revision) = self.edit_assertions(page_id, &what, |all| {
            let here = all.iter().position(|a| a.id == id);
            match (at, here) {
                (Some(i), Some(h)) => all[h] = old.assertions[i].clone(),
                (Some(i), None) => {
                    // Back where it was: after the assertion that came before it then,
                    // when that one is still there.
                    let after = old.assertions[..i]
                        .iter()
                        .rev()
                        .find_map(|p| all.iter().position(|a| a.id == p.id));
                    let place = after.map_or(0, |p| p + 1);
                    all.insert(place.min(all.len()), old.assertions[i].clone());
                }
                (None, Some(h)) => {
                    all.remove(h);
                }
                (None, None) => {}
            }
            Ok(())
        })?;
        Ok(Some(revision))
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

/// What can be restored from a revision (what differs from the current page).
#[derive(Debug, Clone, PartialEq)]
pub enum Restorable {
    /// The whole page as it was.
    Page,
    /// Both policies (they differ).
    Policies,
    /// A rule that was deleted or changed since.
    Rule { id: String, deleted: bool },
    /// An assertion that differs (`was`: it existed at the revision; else restoring it
    /// removes the current one).
    Assertion { id: String, was: bool },
    /// An override that differs (`was`: it existed at the revision; else restoring it
    /// removes the current one).
    Override {
        source_hash: String,
        target_hash: String,
        label: String,
        was: bool,
    },
}

impl Restorable {
    /// How a list shows it.
    pub fn label(&self) -> String {
        match self {
            Restorable::Page => "the whole page as it was".into(),
            Restorable::Policies => "the policies".into(),
            Restorable::Rule { id, deleted: true } => format!("rule {id} (deleted since)"),
            Restorable::Rule { id, deleted: false } => format!("rule {id} (changed since)"),
            Restorable::Assertion { id, was: true } => format!("assertion {id}"),
            Restorable::Assertion { id, was: false } => {
                format!("assertion {id} (none then: removes it)")
            }
            Restorable::Override {
                label, was: true, ..
            } => format!("override {label}"),
            Restorable::Override {
                label, was: false, ..
            } => format!("override {label} (none then: removes it)"),
        }
    }
}

/// A revision against the current page: what differs, what it does to the selection's
/// outcomes, and what can be restored; with the revision compiled for comparing.
pub struct RevisionDetail {
    pub revision: i64,
    pub diff: rulebench_core::diff::PageDiff,
    pub restorable: Vec<Restorable>,
    pub baseline: Baseline,
}

impl App {
    /// Revision `at` of a page against its current state, for the selection with key
    /// `selection` (its outcome moves). Heavier than a frame on a large page: the
    /// workbench runs it off the key thread.
    pub fn revision_detail(
        &self,
        page_id: &str,
        at: i64,
        selection: Option<&str>,
    ) -> Result<RevisionDetail> {
        let (old, n) = self.page_at(page_id, at)?;
        let (now, _) = self.page(page_id)?;
        let which = rulebench_core::diff::Selections::Keys(
            selection.map(|s| vec![s.to_owned()]).unwrap_or_default(),
        );
        let diff = rulebench_core::diff::diff(&old, &now, &which).map_err(AppError::Usage)?;
        let mut restorable = Vec::new();
        if old != now {
            restorable.push(Restorable::Page);
        }
        if old.device_policy != now.device_policy || old.selection_policy != now.selection_policy {
            restorable.push(Restorable::Policies);
        }
        for rule in &old.rules {
            match now.rule(&rule.id) {
                None => restorable.push(Restorable::Rule {
                    id: rule.id.clone(),
                    deleted: true,
                }),
                Some((_, r)) if r != rule => restorable.push(Restorable::Rule {
                    id: rule.id.clone(),
                    deleted: false,
                }),
                _ => {}
            }
        }
        for a in &old.assertions {
            if now.assertions.iter().find(|c| c.id == a.id) != Some(a) {
                restorable.push(Restorable::Assertion {
                    id: a.id.clone(),
                    was: true,
                });
            }
        }
        for a in &now.assertions {
            if !old.assertions.iter().any(|c| c.id == a.id) {
                restorable.push(Restorable::Assertion {
                    id: a.id.clone(),
                    was: false,
                });
            }
        }
        let pair = |o: &rulebench_core::model::Override| {
            (
                o.source_hash().unwrap_or_default(),
                o.target_hash().unwrap_or_default(),
            )
        };
        let label = rulebench_core::model::Override::pair_label;
        for o in &old.overrides {
            let same = now.overrides.iter().find(|c| pair(c) == pair(o));
            if same.is_none_or(|c| c.value != o.value || c.note != o.note) {
                let (source_hash, target_hash) = pair(o);
                restorable.push(Restorable::Override {
                    source_hash,
                    target_hash,
                    label: label(o),
                    was: true,
                });
            }
        }
        for o in &now.overrides {
            if !old.overrides.iter().any(|c| pair(c) == pair(o)) {
                let (source_hash, target_hash) = pair(o);
                restorable.push(Restorable::Override {
                    source_hash,
                    target_hash,
                    label: label(o),
                    was: false,
                });
            }
        }
        let baseline = Baseline::of(old, n)?;
        Ok(RevisionDetail {
            revision: n,
            diff,
            restorable,
            baseline,
        })
    }

    /// Restores one item from revision `from` (see [`App::revision_detail`]).
    pub fn restore(&mut self, page_id: &str, from: i64, what: &Restorable) -> Result<Option<i64>> {
        match what {
            Restorable::Page => self.restore_page(page_id, from),
            Restorable::Policies => self.restore_policies(page_id, from),
            Restorable::Rule { id, .. } => self.restore_rule(page_id, from, id),
            Restorable::Assertion { id, .. } => self.restore_assertion(page_id, from, id),
            Restorable::Override {
                source_hash,
                target_hash,
                label,
                ..
            } => self.restore_override_hashed(page_id, from, (source_hash, target_hash), label),
        }
    }
}

/// Where a walk through a page's history stands (the workbench's `u` / Ctrl-R): each
/// step makes the page as it was one revision further back (or forward again) as a
/// new revision, so nothing is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoWalk {
    /// The revision the walk started from (the newest redo goes back to).
    pub tip: i64,
    /// The revision whose state the page has now.
    pub at: i64,
    /// The revision the last step made: the walk goes on only while the page is
    /// still at it (any other change starts a new walk, and redo is gone).
    pub made: i64,
}

/// One step of an [`UndoWalk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Undo,
    Redo,
}

/// What a step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stepped {
    pub walk: UndoWalk,
    /// The new revision.
    pub revision: i64,
    /// The change undone or redone, as the page's log says it.
    pub change: String,
}

impl App {
    /// Takes one step of the walk through the page's history (`walk`: where the last
    /// one left it): undo makes the page as it was before the change at `walk.at`,
    /// redo makes it as it was after the next one. `None` when there is nothing to
    /// undo (the first revision, or the start of the kept history) or redo.
    pub fn step_history(
        &mut self,
        page_id: &str,
        walk: Option<UndoWalk>,
        step: Step,
    ) -> Result<Option<Stepped>> {
        let current = self.revision(page_id)?.ok_or_else(|| AppError::NotFound {
            what: "page",
            id: page_id.to_owned(),
            hint: None,
        })?;
        let walk = walk.filter(|w| w.made == current).unwrap_or(UndoWalk {
            tip: current,
            at: current,
            made: current,
        });
        let entries = self.revisions(page_id)?;
        let change = |rev: i64| {
            entries
                .iter()
                .find(|e| e.revision == rev)
                .map_or_else(|| format!("revision {rev}"), |e| e.change.clone())
        };
        let oldest = entries.iter().map(|e| e.revision).min().unwrap_or(current);
        // A revision whose state is the page's already (a change that changed nothing
        // visible) is stepped over.
        let mut to = match step {
            Step::Undo => walk.at - 1,
            Step::Redo => walk.at + 1,
        };
        while (oldest..=walk.tip).contains(&to) {
            if let Some(revision) = self.restore_page(page_id, to)? {
                let undone = match step {
                    Step::Undo => to + 1,
                    Step::Redo => to,
                };
                return Ok(Some(Stepped {
                    walk: UndoWalk {
                        tip: walk.tip,
                        at: to,
                        made: revision,
                    },
                    revision,
                    change: change(undone),
                }));
            }
            to += match step {
                Step::Undo => -1,
                Step::Redo => 1,
            };
        }
        Ok(None)
    }
}

/// The page as it was at a revision, compiled, to compare the current outcomes with
/// (the workbench's "compare with revision N"). Built off the key thread
/// ([`Baseline::load`]); rules are matched by id, rows by key.
pub struct Baseline {
    pub revision: i64,
    page: Page,
    matrix: rulebench_core::matrix::Matrix,
    sources: std::collections::HashMap<String, usize>,
    targets: std::collections::HashMap<String, usize>,
    rules: std::collections::HashMap<String, usize>,
    /// The outcomes at the revision of the selection last asked for (by its key).
    eval: Option<(String, rulebench_core::matrix::SelectionEval)>,
    /// Each current target's row at the revision, for the rows of one stamp.
    target_map: Option<(u64, Vec<Option<usize>>)>,
    /// What the last comparison was made of: the next one compares only the columns
    /// that changed (a keystroke changes one).
    memo: Option<Memo>,
    /// Per state of the current rows (its stamp): whether the datasets are the same as
    /// at the revision. Then a rule whose logic and condition are the same has the same
    /// outcomes, and only the rules that changed are evaluated at the revision.
    same_data: Option<(u64, bool)>,
}

/// The inputs of the last [`Baseline::compare_into`]: the selection's key, the rows'
/// stamp, and per rule its id, its column and how many of its cells moved.
struct Memo {
    key: String,
    stamp: u64,
    rules: Vec<(String, Arc<Column>, usize)>,
}

impl std::fmt::Debug for Baseline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Baseline")
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

/// How the current outcomes of a selection differ from a [`Baseline`]'s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Per current rule, per current target: whether the outcome differs (a rule or
    /// target absent at the revision differs everywhere).
    pub cells: Vec<Vec<bool>>,
    /// Per current target: whether its verdict differs (or it was absent).
    pub verdicts: Vec<bool>,
    pub cells_moved: usize,
    pub verdicts_moved: usize,
    /// The selection's verdict moved, or it was absent at the revision.
    pub selection_moved: bool,
    /// The selection is not in the page at the revision.
    pub selection_absent: bool,
}

impl Baseline {
    /// Loads and compiles the page at revision `at` (see [`App::resolve_revision`]).
    pub fn load(app: &App, page_id: &str, at: i64) -> Result<Baseline> {
        let (page, revision) = app.page_at(page_id, at)?;
        Self::of(page, revision)
    }

    /// Compiles `page`, the page at `revision`.
    pub fn of(page: Page, revision: i64) -> Result<Baseline> {
        let matrix = rulebench_core::matrix::Matrix::new(&page)?;
        let index = |d: &rulebench_core::model::Dataset| {
            d.rows
                .iter()
                .enumerate()
                .map(|(i, r)| (d.row_key(r), i))
                .collect()
        };
        Ok(Baseline {
            revision,
            sources: index(&page.source),
            targets: index(&page.target),
            rules: page
                .rules
                .iter()
                .enumerate()
                .map(|(i, r)| (r.id.clone(), i))
                .collect(),
            matrix,
            page,
            eval: None,
            target_map: None,
            memo: None,
            same_data: None,
        })
    }

    /// Evaluates the selection with key `source_key` at the revision now (off the key
    /// thread, where the baseline is loaded), so that the first comparison on the key
    /// thread finds it computed (the first evaluation of a page also encodes its
    /// columns).
    pub fn warm(&mut self, source_key: &str) {
        if let Some(&s) = self.sources.get(source_key) {
            self.eval = Some((source_key.to_owned(), self.matrix.evaluate(s)));
        }
    }

    /// The page at the revision.
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// Compares the current outcomes of selection `eval` of `page` with those of the
    /// same selection at the revision. `rows_stamp` names the current rows (their
    /// keys are matched once per stamp).
    pub fn compare(
        &mut self,
        page: &Page,
        eval: &rulebench_core::matrix::SelectionEval,
        rows_stamp: u64,
    ) -> Comparison {
        let mut out = Comparison::default();
        self.memo = None;
        self.compare_into(page, eval, rows_stamp, &mut out);
        out
    }

    /// [`Baseline::compare`] into `out`, the comparison this baseline made last: a
    /// column that is the same as then (same rule, same computed column, same rows)
    /// keeps its cells, so an edit costs the columns it changed.
    pub fn compare_into(
        &mut self,
        page: &Page,
        eval: &rulebench_core::matrix::SelectionEval,
        rows_stamp: u64,
        out: &mut Comparison,
    ) {
        let Some(row) = page.source.rows.get(eval.selection) else {
            *out = Comparison::default();
            self.memo = None;
            return;
        };
        let key = page.source.row_key(row);
        let old_sel = self.sources.get(&key).copied();
        let n = page.target.rows.len();
        if self
            .target_map
            .as_ref()
            .is_none_or(|(stamp, m)| *stamp != rows_stamp || m.len() != n)
        {
            let map = page
                .target
                .rows
                .iter()
                .map(|r| self.targets.get(&page.target.row_key(r)).copied())
                .collect();
            self.target_map = Some((rows_stamp, map));
        }
        if self.same_data.is_none_or(|(stamp, _)| stamp != rows_stamp) {
            let same = page.source == self.page.source && page.target == self.page.target;
            self.same_data = Some((rows_stamp, same));
        }
        if let (Some((_, true)), Some(s)) = (self.same_data, old_sel) {
            self.compare_same_data(page, eval, s, out);
            return;
        }
        if self.eval.as_ref().map(|(k, _)| k) != Some(&key) {
            self.eval = old_sel.map(|s| (key.clone(), self.matrix.evaluate(s)));
        }
        let targets = &self.target_map.as_ref().expect("just set").1;
        let Some((_, old)) = self.eval.as_ref().filter(|_| old_sel.is_some()) else {
            *out = Comparison {
                cells: vec![vec![true; n]; page.rules.len()],
                verdicts: vec![true; n],
                cells_moved: n * page.rules.len(),
                verdicts_moved: n,
                selection_moved: true,
                selection_absent: true,
            };
            self.memo = None;
            return;
        };
        let memo = self
            .memo
            .take()
            .filter(|m| m.key == key && m.stamp == rows_stamp && out.cells.len() == m.rules.len());
        let mut before = std::mem::take(&mut out.cells);
        let mut c = Comparison::default();
        let mut rules = Vec::with_capacity(page.rules.len());
        for (r, rule) in page.rules.iter().enumerate() {
            let now = &eval.columns[r];
            let same = memo
                .as_ref()
                .and_then(|m| m.rules.get(r))
                .filter(|(id, col, _)| {
                    *id == rule.id && Arc::ptr_eq(col, now) && before[r].len() == n
                });
            let (col, moved) = match same {
                Some((_, _, moved)) => (std::mem::take(&mut before[r]), *moved),
                None => {
                    let was = self.rules.get(&rule.id).map(|&i| &old.columns[i].outcome);
                    let col: Vec<bool> = targets
                        .iter()
                        .enumerate()
                        .map(|(t, ot)| match (was, ot) {
                            (Some(w), Some(ot)) => w[*ot] != now.outcome[t],
                            _ => true,
                        })
                        .collect();
                    let moved = col.iter().filter(|&&m| m).count();
                    (col, moved)
                }
            };
            c.cells_moved += moved;
            c.cells.push(col);
            rules.push((rule.id.clone(), now.clone(), moved));
        }
        c.verdicts = targets
            .iter()
            .enumerate()
            .map(|(t, ot)| ot.is_none_or(|o| old.devices[o].verdict != eval.devices[t].verdict))
            .collect();
        c.verdicts_moved = c.verdicts.iter().filter(|&&m| m).count();
        c.selection_moved = old.selection_verdict != eval.selection_verdict;
        *out = c;
        self.memo = Some(Memo {
            key,
            stamp: rows_stamp,
            rules,
        });
    }

    /// [`Baseline::compare_into`] when the datasets are as at the revision: a rule whose
    /// logic and condition are unchanged has the outcomes it has now, so only the rules
    /// that changed (or went) are evaluated at the revision, for selection `s` there;
    /// its verdicts follow from those columns.
    fn compare_same_data(
        &mut self,
        page: &Page,
        eval: &rulebench_core::matrix::SelectionEval,
        s: usize,
        out: &mut Comparison,
    ) {
        self.memo = None;
        let now: std::collections::HashMap<&str, usize> = page
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.as_str(), i))
            .collect();
        let same = |old: &rulebench_core::model::Rule, new: &rulebench_core::model::Rule| {
            old.logic == new.logic
                && old.applies_when.as_ref().map(|c| &c.logic)
                    == new.applies_when.as_ref().map(|c| &c.logic)
        };
        // Per rule at the revision: the current rule with its outcomes, if unchanged.
        let unchanged: Vec<Option<usize>> = self
            .page
            .rules
            .iter()
            .map(|r| {
                now.get(r.id.as_str())
                    .copied()
                    .filter(|&i| same(r, &page.rules[i]))
            })
            .collect();
        let to_compute: Vec<usize> = (0..unchanged.len())
            .filter(|&j| unchanged[j].is_none())
            .collect();
        let mut computed = self.matrix.columns_of(s, &to_compute).into_iter();
        let old_columns: Vec<Arc<Column>> = unchanged
            .iter()
            .map(|u| match u {
                Some(i) => eval.columns[*i].clone(),
                None => computed.next().expect("one per rule computed"),
            })
            .collect();
        let old = self.matrix.verdicts(s, old_columns);
        let n = page.target.rows.len();
        let mut c = Comparison::default();
        for (r, rule) in page.rules.iter().enumerate() {
            let was = self.rules.get(&rule.id).copied();
            match was {
                // Unchanged: no cell moved (an empty column reads as none moved).
                Some(j) if unchanged[j] == Some(r) => c.cells.push(Vec::new()),
                Some(j) => {
                    let (w, now) = (&old.columns[j].outcome, &eval.columns[r].outcome);
                    let col: Vec<bool> = (0..n).map(|t| w[t] != now[t]).collect();
                    c.cells_moved += col.iter().filter(|&&m| m).count();
                    c.cells.push(col);
                }
                None => {
                    c.cells_moved += n;
                    c.cells.push(vec![true; n]);
                }
            }
        }
        c.verdicts = (0..n)
            .map(|t| old.devices[t].verdict != eval.devices[t].verdict)
            .collect();
        c.verdicts_moved = c.verdicts.iter().filter(|&&m| m).count();
        c.selection_moved = old.selection_verdict != eval.selection_verdict;
        *out = c;
    }
}

#[cfg(test)]
mod tests {
    /// A baseline is built on a background thread and handed to the key thread.
    #[test]
    fn a_baseline_can_cross_threads() {
        fn send<T: Send>() {}
        send::<super::Baseline>();
    }

    /// With the datasets as at the revision, the comparison evaluates only the rules
    /// that changed; it finds what evaluating every rule at the revision finds.
    #[test]
    fn the_same_data_comparison_is_the_whole_one() {
        use rulebench_core::matrix::Matrix;
        let page = crate::synth::page(400, 12, 4, crate::synth::Spread::Realistic, 3);
        let mut edited = page.clone();
        // One rule negated, one removed, one added, a policy moved.
        edited.rules[1].logic = serde_json::json!({"!": edited.rules[1].logic.clone()});
        edited.rules.remove(3);
        let mut added = edited.rules[0].clone();
        added.id = "added".into();
        edited.rules.push(added);
        edited.device_policy.full_threshold = 0.7;
        let mut now = Matrix::new(&edited).unwrap();
        let mut then = Matrix::new(&page).unwrap();
        for s in 0..4 {
            let eval = now.evaluate(s);
            let mut base = super::Baseline::of(page.clone(), 1).unwrap();
            let c = base.compare(&edited, &eval, 7);
            // By hand: every rule at the revision evaluated.
            let old = then.evaluate(s);
            for (r, rule) in edited.rules.iter().enumerate() {
                let j = page.rules.iter().position(|x| x.id == rule.id);
                for t in 0..400 {
                    let moved =
                        j.is_none_or(|j| old.columns[j].outcome[t] != eval.columns[r].outcome[t]);
                    let said = c.cells[r].get(t).copied().unwrap_or(false);
                    assert_eq!(said, moved, "rule {} target {t} source {s}", rule.id);
                }
            }
            for t in 0..400 {
                assert_eq!(
                    c.verdicts[t],
                    old.devices[t].verdict != eval.devices[t].verdict
                );
            }
            assert_eq!(
                c.selection_moved,
                old.selection_verdict != eval.selection_verdict
            );
        }
    }
}

//! A live page session: the page, its compiled matrix and the current selection's
//! evaluation, kept current as rules, policies and overrides change. The TUI drives it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{App, AppError, Result};
use rulebench_core::diag::{Code, Diagnostic, parse_json};
use rulebench_core::matrix::{Column, Matrix, SelectionEval};
use rulebench_core::model::{DevicePolicy, Override, Page, Rule, SelectionPolicy, Side, key_hash};
use rulebench_core::validate::{self, Schema};
use rulebench_core::verdict::Verdict;

/// What checking an edited rule text found.
#[derive(Debug, Clone, PartialEq)]
pub enum Draft {
    /// The text is a valid rule: the matrix now shows it (unsaved until saved).
    /// `changed` is false when the logic is the same as before (whitespace edits).
    Valid {
        warnings: Vec<Diagnostic>,
        changed: bool,
    },
    /// The text is not valid: the last valid results stay.
    Invalid { diagnostics: Vec<Diagnostic> },
}

/// A rule as `a` makes it: weight 1, optional, in "General", applying everywhere.
fn new_rule(name: &str, logic: Value, expression: Option<String>) -> Rule {
    Rule {
        expression,
        warning: None,
        applies_when: None,
        family: None,
        id: String::new(),
        name: name.to_owned(),
        required: false,
        weight: 1.0,
        category: "General".into(),
        description: None,
        logic,
    }
}

/// A new rule's text, checked ([`Session::check_new_rule`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NewRule {
    pub logic: Value,
    /// The infix it was written in, kept as authored.
    pub expression: Option<String>,
    pub warnings: Vec<Diagnostic>,
}

/// One rule's live analysis and what it was made for.
struct Analysed {
    logic: Value,
    condition: Option<Value>,
    schema_stamp: u64,
    warnings: Vec<Diagnostic>,
}

/// The live session of one page.
pub struct Session {
    pub page: Page,
    /// The saved revision.
    pub revision: i64,
    pub selection: usize,
    pub eval: SelectionEval,
    /// Time of the last recompute.
    pub last_recompute: Duration,
    matrix: Matrix,
    schema: Schema,
    /// Columns of the last saved state for the current selection (outcome diff).
    saved_columns: Vec<Arc<Column>>,
    /// Rules whose shown logic is not saved yet.
    unsaved: Vec<bool>,
    /// Rules written here (`a`) that are not stored yet (by id): in the page once their
    /// text was valid, saved like any edit (inserted then).
    new_rules: std::collections::HashSet<String>,
    /// New rules given another id on a reload (a rule of theirs was stored elsewhere
    /// meanwhile): (old id, new id), for the editor to follow.
    renamed_new: Vec<(String, String)>,
    /// Per rule with an unsaved draft (by id): the stored logic the draft started from.
    /// A save goes through only while the stored logic is still this one.
    bases: std::collections::HashMap<String, Value>,
    /// The stored policies the values tuned here started from.
    policy_base: Option<(DevicePolicy, SelectionPolicy)>,
    /// Conflicts found on reopening or saving, waiting for the person's choice.
    conflicts: Vec<super::Conflict>,
    /// The rule open in an editor here (by id): deleted elsewhere, it is asked about
    /// like a rule with an unsaved draft (its text may be there, invalid).
    editing: Option<String>,
    /// The stored logic the editor's text started from (its draft's base once it
    /// changes): a change made elsewhere while the text is typed — even before it is
    /// valid — is a conflict, never taken for the start.
    editing_base: Option<Value>,
    /// Counts conflicts found ([`Session::conflicts_raised`]).
    conflicts_raised: u64,
    /// The live analysis of each rule (by id) for the logic, condition and schema it was
    /// made for ([`Session::live_analysis`]): a frame that redraws a rule's warnings does
    /// not analyse it again.
    analysed: std::cell::RefCell<std::collections::HashMap<String, Analysed>>,
    /// Names this state of the schema (a new one whenever it is recomputed).
    schema_stamp: u64,
    /// Names this state of the rows: a new one for every open or reload.
    pub rows_stamp: u64,
    /// Names this state of the overrides: a new one for every open or reload, and for
    /// every override set or cleared.
    pub overrides_stamp: u64,
    /// Rows changed by cell edits, not yet handed to the background work.
    cell_edits: Vec<(Side, usize, rulebench_core::model::Row)>,
    /// The last step of policies tuned in memory and not saved yet
    /// ([`Session::tune_policies`]).
    policies_since: Option<Instant>,
    /// The rule (by id) whose valid edited text waits to be saved, and when it is due
    /// ([`Session::schedule_rule_save`]).
    rule_due: Option<(String, Instant)>,
    /// The policy values tuned since the last save (only these are saved).
    tuned: Vec<super::policy::PolicyField>,
    /// Rules with unsaved edits here that another process deleted: found when the page
    /// is reopened ([`Session::adopt`]), kept until the user restores or drops them
    /// ([`Session::restore_orphans`], [`Session::drop_orphans`]).
    orphans: Vec<rulebench_core::model::Rule>,
    /// Per rule, from the background work: one outcome for every pair of the current
    /// rows (`Some(true)` passes everywhere, `Some(false)` fails everywhere).
    pub constant: Vec<Option<bool>>,
    /// A revision chosen to compare the outcomes with, and the comparison of the
    /// current selection; it wins over `opened`.
    baseline: Option<(super::history::Baseline, super::history::Comparison)>,
    /// The page as it was opened, and the comparison of the current selection with
    /// it: what `*` marks for the whole session, whatever saves happen (loaded off the
    /// key thread after the first frame; until then the last saved state is used).
    opened: Option<(super::history::Baseline, super::history::Comparison)>,
    /// The revision the session was opened at (kept across reloads): `opened` is the
    /// page at it.
    opened_at: i64,
    /// The session's own connection to the database: every change it makes is saved
    /// through it.
    pub(super) app: App,
}

/// Who made the last revision of a freshly opened session's page, when the log says.
fn fresh_author(fresh: &Session) -> Option<String> {
    fresh
        .app
        .store()
        .last_revision(&fresh.page.id)
        .ok()
        .flatten()
        .and_then(|(_, author)| author)
}

/// A JSON value as the policy parser takes it typed (`0.9`, `ANY_DEVICE_FULL_IS_COMPATIBLE`).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How long typing in a rule pauses before its valid text is saved (one revision a burst).
pub const RULE_SAVE_DELAY: std::time::Duration = std::time::Duration::from_millis(600);

/// How long policy tuning pauses before the policies are saved (one revision a burst).
pub const POLICY_SAVE_DELAY: std::time::Duration = std::time::Duration::from_millis(700);

/// The source of [`Session::rows_stamp`] and [`Session::overrides_stamp`].
static STAMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A stamp no other state has had.
fn stamp() -> u64 {
    STAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Session {
    /// Opens a page and evaluates its first source row, on a connection of its own to
    /// `app`'s database.
    pub fn open(app: &App, page_id: &str) -> Result<Session> {
        Self::open_with(app.reopen()?, page_id)
    }

    /// Opens a page on this connection and evaluates its first source row.
    pub fn open_with(app: App, page_id: &str) -> Result<Session> {
        let (page, revision) = app.page(page_id)?;
        let mut matrix = Matrix::new(&page)?;
        let started = Instant::now();
        let eval = matrix.evaluate(0);
        let unsaved = vec![false; page.rules.len()];
        Ok(Session {
            schema: Schema::of(&page),
            analysed: Default::default(),
            schema_stamp: 0,
            saved_columns: eval.columns.clone(),
            last_recompute: started.elapsed(),
            page,
            revision,
            selection: 0,
            eval,
            matrix,
            unsaved,
            new_rules: std::collections::HashSet::new(),
            renamed_new: Vec::new(),
            bases: std::collections::HashMap::new(),
            policy_base: None,
            conflicts: Vec::new(),
            editing: None,
            editing_base: None,
            conflicts_raised: 0,
            rows_stamp: stamp(),
            overrides_stamp: stamp(),
            policies_since: None,
            rule_due: None,
            tuned: Vec::new(),
            cell_edits: Vec::new(),
            orphans: Vec::new(),
            baseline: None,
            opened: None,
            opened_at: revision,
            constant: Vec::new(),
            app,
        })
    }

    /// The session's connection (reads; changes go through the session's use cases).
    pub fn app(&self) -> &App {
        &self.app
    }

    /// Re-opens the page from the database (after a dataset change), keeping the
    /// selection where it still exists and re-applying unsaved rule drafts by rule id.
    pub fn reload(&mut self) -> Result<()> {
        let fresh = Session::open(&self.app, &self.page.id)?;
        self.adopt(fresh);
        Ok(())
    }

    /// Takes the state of a freshly opened workspace of the same page (opened elsewhere,
    /// say on a background thread), keeping the selection where it still exists and
    /// re-applying unsaved rule drafts by rule id.
    pub fn adopt(&mut self, mut fresh: Session) {
        let drafts: Vec<(String, Value)> = (0..self.page.rules.len())
            .filter(|&i| self.is_unsaved(i))
            .map(|i| {
                (
                    self.page.rules[i].id.clone(),
                    self.page.rules[i].logic.clone(),
                )
            })
            .collect();
        let selection = self.selection;
        if selection < fresh.page.source.rows.len() {
            fresh.select(selection);
        }
        // A draft whose rule was deleted elsewhere is not dropped in silence: it waits
        // for the user's answer (restore it with the edit, or let it go).
        let mut orphans = std::mem::take(&mut self.orphans);
        let author = fresh_author(&fresh);
        for (id, logic) in drafts {
            if self.new_rules.contains(&id)
                && let Some((_, rule)) = self.page.rule(&id)
            {
                // Written here and not stored yet: it comes along as it is — under
                // another id when a rule of its id was stored elsewhere meanwhile (never
                // over that rule).
                let mut rule = rule.clone();
                if fresh.page.rule(&id).is_some() {
                    fresh.unique_id(&mut rule);
                    fresh.renamed_new.push((id.clone(), rule.id.clone()));
                    // The editor's rule is this one under its new id (taken below).
                    if self.editing.as_deref() == Some(id.as_str()) {
                        self.editing = Some(rule.id.clone());
                    }
                }
                let i = fresh.page.rules.len();
                if fresh.matrix.insert_rule(i, &rule).is_ok() {
                    fresh.new_rules.insert(rule.id.clone());
                    fresh.page.rules.push(rule);
                    fresh.unsaved.push(true);
                    fresh.recompute();
                }
                continue;
            }
            if let Some(i) = fresh.page.rules.iter().position(|r| r.id == id) {
                let theirs = fresh.page.rules[i].logic.clone();
                if theirs == logic {
                    continue; // the same edit, stored meanwhile: nothing left unsaved
                }
                let _ = fresh.try_logic_value(i, logic.clone(), None);
                // Changed elsewhere since the draft began: the draft stays (the editor
                // shows it), its base stays the old one (a save is refused), and the
                // person is asked.
                if let Some(base) = self.bases.get(&id)
                    && *base != theirs
                {
                    fresh.bases.insert(id.clone(), base.clone());
                    fresh.add_conflict(&super::Conflict {
                        page_id: fresh.page.id.clone(),
                        what: super::ConflictOn::RuleLogic(id.clone()),
                        mine: logic,
                        theirs,
                        base: base.clone(),
                        revision: fresh.revision,
                        author: author.clone(),
                    });
                }
            } else if let Some((_, rule)) = self.page.rule(&id) {
                orphans.push(rulebench_core::model::Rule {
                    logic,
                    ..rule.clone()
                });
            }
        }
        // The rule open in the editor, deleted elsewhere: asked about too (its text
        // may hold an edit that is not valid yet).
        if let Some(id) = &self.editing
            && fresh.page.rule(id).is_none()
            && !orphans.iter().any(|r| &r.id == id)
            && let Some((_, rule)) = self.page.rule(id)
        {
            orphans.push(rule.clone());
        }
        fresh.editing = self.editing.take();
        fresh.editing_base = self.editing_base.take();
        fresh.orphans = orphans;
        fresh.baseline = self.baseline.take();
        fresh.opened = self.opened.take();
        fresh.opened_at = self.opened_at;
        fresh.compare();
        // Policy values being tuned here are put over the fresh ones, value by value.
        // (Tuned values waiting on a conflict are not due to be saved: still carried.)
        if !self.tuned.is_empty() {
            let (mut d, mut s) = (
                fresh.page.device_policy.clone(),
                fresh.page.selection_policy.clone(),
            );
            for &name in &self.tuned {
                super::policy::copy(
                    name,
                    (&self.page.device_policy, &self.page.selection_policy),
                    (&mut d, &mut s),
                );
            }
            let stored = (
                fresh.page.device_policy.clone(),
                fresh.page.selection_policy.clone(),
            );
            if fresh.tune_policies(d, s).is_ok() {
                fresh.tuned = std::mem::take(&mut self.tuned);
                // A tuned value changed elsewhere since the tuning began: asked.
                if let Some(base) = self.policy_base.take() {
                    let moved: Vec<super::policy::PolicyField> =
                        super::policy::changed((&base.0, &base.1), (&stored.0, &stored.1))
                            .into_iter()
                            .filter(|n| fresh.tuned.contains(n))
                            .collect();
                    if !moved.is_empty() {
                        fresh.add_conflict(&super::Conflict {
                            page_id: fresh.page.id.clone(),
                            what: super::ConflictOn::Policy(
                                moved.iter().map(|n| n.name().to_owned()).collect(),
                            ),
                            mine: super::policy::values(
                                &moved,
                                (&fresh.page.device_policy, &fresh.page.selection_policy),
                            ),
                            theirs: super::policy::values(&moved, (&stored.0, &stored.1)),
                            base: super::policy::values(&moved, (&base.0, &base.1)),
                            revision: fresh.revision,
                            author: author.clone(),
                        });
                        fresh.policy_base = Some(base);
                        // Not saved until the person chooses.
                        fresh.policies_since = None;
                    }
                }
            }
        }
        // An assertion in conflict lives only in its conflict (its dialog closed): it is
        // carried over, theirs read again.
        for c in std::mem::take(&mut self.conflicts) {
            if let super::ConflictOn::Assertion(id) = &c.what {
                let theirs = fresh
                    .page
                    .assertions
                    .iter()
                    .find(|a| &a.id == id)
                    .map_or(Value::Null, |a| {
                        serde_json::to_value(a).expect("an assertion serializes")
                    });
                if theirs != c.mine {
                    fresh.add_conflict(&super::Conflict {
                        theirs,
                        revision: fresh.revision,
                        author: author.clone(),
                        ..c
                    });
                }
            }
        }
        fresh.conflicts_raised += self.conflicts_raised;
        // A rule edit waiting to be saved still is, on the same rule (by id: the fresh
        // page may order its rules otherwise), when its draft was carried over.
        if let Some((id, at)) = self.rule_due.take()
            && let Some(j) = fresh.page.rules.iter().position(|r| r.id == id)
            && fresh.is_unsaved(j)
        {
            fresh.rule_due = Some((id, at));
        }
        *self = fresh;
    }

    /// Conflicts waiting for the person's choice (the oldest first).
    pub fn conflicts(&self) -> &[super::Conflict] {
        &self.conflicts
    }

    /// Passes a save's result on, a conflict it met kept for the person first.
    pub(super) fn noting_conflict<T>(&mut self, saved: Result<T>) -> Result<T> {
        if let Err(AppError::Conflict(c)) = &saved {
            self.add_conflict(c);
        }
        saved
    }

    pub(super) fn add_conflict(&mut self, c: &super::Conflict) {
        self.conflicts.retain(|o| o.what != c.what);
        self.conflicts.push(c.clone());
        self.conflicts_raised += 1;
    }

    /// How many times a conflict was found (on saving or reopening): a front that let
    /// the person put one off asks again when this moves.
    pub fn conflicts_raised(&self) -> u64 {
        self.conflicts_raised
    }

    /// Applies the person's choice to the oldest conflict. Keep mine saves mine over
    /// theirs (seen now); take theirs drops mine; edit a merge returns the text to edit
    /// (mine and theirs between markers), saved over theirs once the person makes it
    /// valid. Returns the new revision when something was saved, and the merge text.
    pub fn resolve(&mut self, choice: super::Choice) -> Result<(Option<i64>, Option<String>)> {
        match self.conflicts.first().map(|c| c.what.clone()) {
            Some(what) => self.resolve_on(&what, choice),
            None => Ok((None, None)),
        }
    }

    /// [`Session::resolve`] for the conflict on `what` (the one the person was shown);
    /// nothing when it is not waiting any more.
    pub fn resolve_on(
        &mut self,
        what: &super::ConflictOn,
        choice: super::Choice,
    ) -> Result<(Option<i64>, Option<String>)> {
        use super::{Choice, ConflictOn};
        let Some(at) = self.conflicts.iter().position(|c| &c.what == what) else {
            return Ok((None, None));
        };
        let c = self.conflicts.remove(at);
        match (&c.what, choice) {
            (ConflictOn::RuleLogic(id), _) => {
                let Some(i) = self.page.rules.iter().position(|r| &r.id == id) else {
                    return Ok((None, None));
                };
                match choice {
                    Choice::KeepMine => {
                        self.bases.insert(id.clone(), c.theirs.clone());
                        self.save_rule(i).map(|r| (Some(r), None))
                    }
                    Choice::TakeTheirs => {
                        self.take_stored_logic(i, c.theirs.clone())?;
                        Ok((None, None))
                    }
                    Choice::EditMerge => {
                        // Theirs stands (in the matrix too) until the merged text is
                        // valid: a save meanwhile (a quit) writes nothing over it.
                        self.take_stored_logic(i, c.theirs.clone())?;
                        self.bases.insert(id.clone(), c.theirs.clone());
                        Ok((None, Some(c.merge_text())))
                    }
                }
            }
            (ConflictOn::Policy(names), _) => {
                let theirs_of = |name: &str| c.theirs.get(name).cloned();
                // The base becomes theirs (seen now) for the values in conflict.
                let (mut bd, mut bs) = self.policy_base.clone().unwrap_or_else(|| {
                    (
                        self.page.device_policy.clone(),
                        self.page.selection_policy.clone(),
                    )
                });
                for name in names {
                    if let Some(v) = theirs_of(name) {
                        super::policy::set(&mut bd, &mut bs, name, &plain(&v))
                            .map_err(AppError::Usage)?;
                    }
                }
                match choice {
                    Choice::KeepMine => {
                        self.policy_base = Some((bd, bs));
                        self.save_tuned_policies().map(|r| (Some(r), None))
                    }
                    Choice::TakeTheirs => {
                        let (mut d, mut s) = (
                            self.page.device_policy.clone(),
                            self.page.selection_policy.clone(),
                        );
                        // The conflict names its values as the page file does.
                        let fields: Vec<super::policy::PolicyField> =
                            names.iter().filter_map(|n| n.parse().ok()).collect();
                        for &field in &fields {
                            super::policy::copy(field, (&bd, &bs), (&mut d, &mut s));
                        }
                        self.tuned.retain(|n| !fields.contains(n));
                        self.policy_base = Some((bd, bs));
                        self.matrix.set_policies(&d, &s);
                        self.page.device_policy = d;
                        self.page.selection_policy = s;
                        self.reverdict();
                        if self.tuned.is_empty() {
                            self.policy_base = None;
                            self.policies_since = None;
                            Ok((None, None))
                        } else {
                            self.save_tuned_policies().map(|r| (Some(r), None))
                        }
                    }
                    Choice::EditMerge => {
                        // Mine stay in place, theirs seen: saved after the person's next
                        // change of a value (not before; kept as a draft meanwhile).
                        self.policy_base = Some((bd, bs));
                        self.policies_since = None;
                        Ok((None, None))
                    }
                }
            }
            (ConflictOn::Assertion(id), _) => match choice {
                Choice::KeepMine => {
                    let mine: rulebench_core::assertions::Assertion =
                        serde_json::from_value(c.mine.clone())
                            .map_err(|e| AppError::Usage(format!("assertion `{id}`: {e}")))?;
                    self.replace_assertion_over(Some(id), mine, Some(&c.theirs))?;
                    Ok((Some(self.revision), None))
                }
                Choice::TakeTheirs => {
                    self.reload_assertions()?;
                    Ok((None, None))
                }
                Choice::EditMerge => Ok((None, Some(c.merge_text()))),
            },
        }
    }

    /// Rule `i` takes the stored logic `theirs`, dropping the draft.
    fn take_stored_logic(&mut self, i: usize, theirs: Value) -> Result<()> {
        let mut rule = self.page.rules[i].clone();
        rule.logic = theirs;
        rule.expression = None;
        self.matrix.replace_rule(i, &rule)?;
        self.bases.remove(&rule.id);
        if self.editing.as_deref() == Some(rule.id.as_str()) {
            self.editing_base = Some(rule.logic.clone());
        }
        self.page.rules[i] = rule;
        self.unsaved[i] = false;
        self.recompute();
        self.saved_columns = self.eval.columns.clone();
        Ok(())
    }

    /// Which rule an editor has open for editing here (`None`: none): its text starts
    /// from the rule as stored now (or from its draft's base). Asked about when deleted
    /// elsewhere ([`Session::adopt`]).
    pub fn set_editing(&mut self, id: Option<String>) {
        if id == self.editing {
            return;
        }
        self.editing_base = id.as_ref().and_then(|id| {
            self.bases
                .get(id)
                .cloned()
                .or_else(|| self.page.rule(id).map(|(_, r)| r.logic.clone()))
        });
        self.editing = id;
    }

    /// The stored logic rule `id`'s unsaved draft started from (`None`: no draft).
    pub fn base_of(&self, id: &str) -> Option<&Value> {
        self.bases.get(id)
    }

    /// Makes rule `id`'s next draft start from `base` (a draft kept from an earlier
    /// session: saved only over the logic it started from).
    pub fn set_base(&mut self, id: &str, base: Value) {
        self.bases.insert(id.to_owned(), base);
    }

    /// The policy values tuned here and not saved, and the stored values they started
    /// from, as JSON objects by name (`None`: nothing tuned).
    pub fn tuned_values(&self) -> Option<(Value, Value)> {
        if self.tuned.is_empty() {
            return None;
        }
        let mine = super::policy::values(
            &self.tuned,
            (&self.page.device_policy, &self.page.selection_policy),
        );
        let base = match &self.policy_base {
            Some((d, s)) => super::policy::values(&self.tuned, (d, s)),
            None => Value::Null,
        };
        Some((mine, base))
    }

    /// Puts policy values kept from an earlier session back as tuned here (saved after
    /// the next pause, only over the values they started from: `base`).
    pub fn restore_tuned(&mut self, values: &Value, base: &Value) -> Result<()> {
        let (mut d, mut s) = (
            self.page.device_policy.clone(),
            self.page.selection_policy.clone(),
        );
        let (mut bd, mut bs) = (d.clone(), s.clone());
        let Some(values) = values.as_object() else {
            return Ok(());
        };
        for (name, v) in values {
            super::policy::set(&mut d, &mut s, name, &plain(v)).map_err(AppError::Usage)?;
            if let Some(b) = base.get(name) {
                super::policy::set(&mut bd, &mut bs, name, &plain(b)).map_err(AppError::Usage)?;
            }
        }
        self.policy_base = Some((bd, bs));
        self.tune_policies(d, s)?;
        // `tune_policies` lists only the values that differ from the page's; a kept
        // value equal to the page's is still the person's, and is saved (or asked).
        for name in values.keys() {
            if let Ok(n) = name.parse::<super::policy::PolicyField>()
                && !self.tuned.contains(&n)
            {
                self.tuned.push(n);
            }
        }
        Ok(())
    }

    /// The page was renamed elsewhere to `new_id`: the session follows it, its drafts
    /// and tuned values put over the page as stored there (conflicts asked as usual).
    pub fn follow_rename(&mut self, new_id: &str) -> Result<()> {
        self.page.id = new_id.to_owned();
        self.reload()
    }

    /// Saves the page as this session has it — its rows, rules with every draft, tuned
    /// policy values — as a new page `new_id` (the page was removed elsewhere, or the
    /// person keeps their version apart). Returns the new page's revision; the session
    /// is then on it.
    pub fn save_as_page(&mut self, new_id: &str) -> Result<i64> {
        let mut page = self.page.clone();
        page.id = new_id.to_owned();
        let text = serde_json::to_string(&page).expect("a page serializes");
        let imported = self.app.import(&text, "the workbench", false)?;
        // The edits are in the new page now: drafts kept under the old id go.
        let old = std::mem::replace(&mut self.page.id, new_id.to_owned());
        self.app.forget_drafts(&old)?;
        let fresh = Session::open(&self.app, new_id)?;
        *self = fresh;
        Ok(imported.revision)
    }

    /// The stamps of this state of the rows and overrides (what the background work is
    /// told they are).
    pub fn stamps(&self) -> super::jobs::Stamps {
        super::jobs::Stamps {
            rows: self.rows_stamp,
            overrides: self.overrides_stamp,
        }
    }

    pub fn has_sources(&self) -> bool {
        !self.page.source.rows.is_empty()
    }

    fn recompute(&mut self) {
        if !self.has_sources() {
            return;
        }
        let started = Instant::now();
        self.eval = self.matrix.evaluate(self.selection);
        self.compare();
        self.last_recompute = started.elapsed();
    }

    /// Recomputes verdicts only (after a policy or override change).
    fn reverdict(&mut self) {
        let started = Instant::now();
        self.eval = self
            .matrix
            .verdicts(self.selection, std::mem::take(&mut self.eval.columns));
        self.compare();
        self.last_recompute = started.elapsed();
    }

    fn compare(&mut self) {
        // Nothing changed since the page was opened (no save, no edit in memory):
        // nothing moved, whatever the selection — no need to evaluate the opened state.
        let untouched = self.revision == self.opened_at && !self.any_unsaved();
        if self.baseline.is_none()
            && untouched
            && let Some((_, cmp)) = &mut self.opened
        {
            *cmp = Default::default();
            return;
        }
        if let Some((base, cmp)) = self.baseline.as_mut().or(self.opened.as_mut()) {
            base.compare_into(&self.page, &self.eval, self.rows_stamp, cmp);
        }
    }

    /// Compares the outcomes with the page at a revision from now on (cells and
    /// verdicts that differ are marked), or, with `None`, with the page as opened
    /// again.
    pub fn set_baseline(&mut self, baseline: Option<super::history::Baseline>) {
        self.baseline = baseline.map(|b| (b, Default::default()));
        self.compare();
    }

    /// Takes `baseline` as the page when it was opened (see the field `opened`): it is
    /// compared with whenever no other revision is chosen. Ignored when it is of
    /// another revision than the session opened at, or the session has one already.
    pub fn set_opened(&mut self, baseline: super::history::Baseline) {
        if self.opened.is_none() && baseline.revision == self.opened_at {
            self.opened = Some((baseline, Default::default()));
            self.compare();
        }
    }

    /// The revision the session was opened at (its state is what `*` compares with).
    pub fn opened_at(&self) -> i64 {
        self.opened_at
    }

    /// The revision the page was opened at, once its state is loaded.
    pub fn opened_revision(&self) -> Option<i64> {
        self.opened.as_ref().map(|(b, _)| b.revision)
    }

    /// The revision compared with and how the selection's outcomes differ from it: the
    /// one chosen, else the page as opened.
    pub fn comparison(&self) -> Option<(i64, &super::history::Comparison)> {
        self.baseline
            .as_ref()
            .or(self.opened.as_ref())
            .map(|(b, c)| (b.revision, c))
    }

    /// The revision chosen to compare with (`c` in History), if any.
    pub fn chosen_comparison(&self) -> Option<(i64, &super::history::Comparison)> {
        self.baseline.as_ref().map(|(b, c)| (b.revision, c))
    }

    /// Whether target `target`'s verdict differs from the revision compared with.
    pub fn verdict_moved(&self, target: usize) -> bool {
        self.comparison()
            .is_some_and(|(_, c)| c.verdicts.get(target).copied().unwrap_or(false))
    }

    /// Chooses the source row whose verdicts are shown.
    pub fn select(&mut self, source: usize) {
        if source < self.page.source.rows.len() {
            self.selection = source;
            self.recompute();
            self.saved_columns = self.eval.columns.clone();
        }
    }

    /// Whether the outcome of (rule, target) differs from the revision compared with
    /// (the page as opened, or one chosen: see [`Session::set_baseline`]); before the
    /// opened state is loaded, from the last saved state.
    pub fn changed_since_save(&self, rule: usize, target: usize) -> bool {
        if let Some((_, c)) = self.comparison() {
            return c
                .cells
                .get(rule)
                .and_then(|col| col.get(target))
                .copied()
                .unwrap_or(false);
        }
        match (self.eval.columns.get(rule), self.saved_columns.get(rule)) {
            (Some(now), Some(saved)) => now.outcome[target] != saved.outcome[target],
            _ => false,
        }
    }

    pub fn is_unsaved(&self, rule: usize) -> bool {
        self.unsaved.get(rule).copied().unwrap_or(false)
    }

    pub fn any_unsaved(&self) -> bool {
        self.unsaved.iter().any(|&u| u) || self.policies_since.is_some()
    }

    /// The type-aware lint's warnings on rule `rule` over this page's data, the
    /// analysis of the rule alone over any row (`never-true`, `always-true`), else
    /// `constant-over-data` when the background work found the rule has one outcome for
    /// every pair of the current rows.
    pub fn rule_lint(&self, rule: usize) -> Vec<rulebench_core::diag::Diagnostic> {
        let Some(r) = self.page.rules.get(rule) else {
            return vec![];
        };
        let condition = r.applies_when.as_ref().map(|c| &c.logic);
        let mut out = rulebench_core::lint::lint_rule(&r.logic, condition, &self.schema);
        // Never or always true for any row: said instead of constant over the data.
        let alone = self.live_analysis(rule);
        if alone.is_empty() {
            out.extend(self.constant_lint(rule));
        }
        out.extend(alone);
        out
    }

    /// `constant-over-data` for rule `rule`, when the background work found it has one
    /// outcome for every pair of the current rows: a lookup, cheap enough for a frame
    /// (the rest of [`Session::rule_lint`] walks the rule).
    pub fn constant_lint(&self, rule: usize) -> Option<rulebench_core::diag::Diagnostic> {
        let passes = (*self.constant.get(rule)?)?;
        let reads = rulebench_core::engine::Reads::of(&self.page.rules.get(rule)?.logic);
        let reads_data = [&reads.source, &reads.target]
            .iter()
            .any(|s| s.as_ref().is_none_or(|p| !p.is_empty()));
        if !reads_data {
            return None; // `constant-logic` says it already
        }
        let what = if passes {
            "passes for every pair: it decides nothing here"
        } else {
            "fails for every pair: no target can pass it"
        };
        Some(Diagnostic::warning(
            Code::ConstantOverData,
            "",
            format!("over the current data this rule {what}"),
        ))
    }

    /// The fields of the page's datasets (`source.x`, `target.y`), for infix hints.
    pub fn infix_fields(&self) -> rulebench_core::infix::Fields {
        rulebench_core::infix::fields_of_schema(&self.schema)
    }

    /// A rule's logic as infix: as authored when it was written so, else printed from
    /// its logic when it has an infix form (`Err` says why not).
    pub fn rule_infix(&self, rule: usize) -> std::result::Result<String, String> {
        let r = &self.page.rules[rule];
        match &r.expression {
            Some(text) => Ok(text.clone()),
            None => rulebench_core::infix::print(&r.logic).map_err(|e| e.to_string()),
        }
    }

    /// Checks an edited infix text for rule `i`: parsed against the page's fields
    /// (located errors with a hint), then as [`Session::try_logic_value`].
    pub fn try_infix(&mut self, i: usize, text: &str) -> Draft {
        match rulebench_core::infix::parse(text, &self.infix_fields()) {
            Ok(logic) => {
                let draft = self.try_logic_value(i, logic, None);
                // The text is kept as typed (saved with the rule, shown as written).
                if let Draft::Valid { warnings, changed } = draft {
                    let rule = &mut self.page.rules[i];
                    // Text with a control character is not kept as authored (a page
                    // file refuses it); the logic it reads as is.
                    let text_kept =
                        (!text.chars().any(rulebench_core::text::is_unsafe)).then_some(text);
                    let retyped = rule.expression.as_deref() != text_kept;
                    if retyped {
                        rule.expression = text_kept.map(str::to_owned);
                        self.unsaved[i] = true;
                    }
                    return Draft::Valid {
                        warnings,
                        changed: changed || retyped,
                    };
                }
                draft
            }
            Err(e) => Draft::Invalid {
                diagnostics: vec![Diagnostic {
                    line: Some(e.line),
                    column: Some(e.column),
                    // A field the page does not have says so (`unknown-field`), as
                    // in JSONLogic; the rest is `infix-syntax`.
                    ..Diagnostic::error(e.code, "", e.message.clone()).with_hint(e.hint.clone())
                }],
            },
        }
    }

    /// Pretty JSON of a rule's logic, as the editor shows it: every character a
    /// terminal could act on or hide written as a `\uXXXX` escape (the same string to
    /// the parser, so switching views or saving changes nothing).
    pub fn rule_text(&self, rule: usize) -> String {
        let text = rulebench_core::text::pretty_json(&self.page.rules[rule].logic, 60);
        rulebench_core::text::json_safe(&text).into_owned()
    }

    /// Checks an edited logic text for rule `i`; when valid, the matrix shows it at
    /// once (only that rule's column is recomputed). Nothing is saved.
    pub fn try_logic(&mut self, i: usize, text: &str) -> Draft {
        let logic: Value = match parse_json(text) {
            Ok(v) => v,
            Err(d) => {
                return Draft::Invalid {
                    diagnostics: vec![*d],
                };
            }
        };
        self.try_logic_value(i, logic, Some(text))
    }

    /// Checks logic for rule `i` (from the JSON editor, or compiled from infix); `text`
    /// is the JSON it came from, to locate diagnostics in.
    pub fn try_logic_value(&mut self, i: usize, logic: Value, text: Option<&str>) -> Draft {
        let condition = self
            .page
            .rules
            .get(i)
            .and_then(|r| r.applies_when.as_ref())
            .map(|c| &c.logic);
        let diags: Vec<Diagnostic> =
            rulebench_core::check::rule_logic(&logic, condition, &self.schema)
                .into_iter()
                .map(|d| match text {
                    Some(t) => d.locate_in(t),
                    None => d,
                })
                .collect();
        if diags.iter().any(Diagnostic::is_error) {
            return Draft::Invalid { diagnostics: diags };
        }
        if self.page.rules[i].logic == logic {
            let mut warnings = diags;
            warnings.extend(self.live_analysis(i));
            return Draft::Valid {
                warnings,
                changed: false,
            };
        }
        let mut rule = self.page.rules[i].clone();
        rule.logic = logic;
        // Edited as JSONLogic: the authored infix no longer says it (the infix view sets
        // it again).
        rule.expression = None;
        if let Err(e) = self.matrix.replace_rule(i, &rule) {
            return Draft::Invalid {
                diagnostics: vec![Diagnostic::error(Code::Compile, "", e.message)],
            };
        }
        if !self.unsaved[i] {
            // The draft starts here: from the stored logic, or, for the rule open in the
            // editor, from the logic its text started from.
            let stored = std::mem::replace(&mut self.page.rules[i], rule);
            let base = match (&self.editing, &self.editing_base) {
                (Some(id), Some(base)) if *id == stored.id => base.clone(),
                _ => stored.logic,
            };
            self.bases.entry(stored.id).or_insert(base);
        } else {
            self.page.rules[i] = rule;
        }
        self.unsaved[i] = true;
        self.recompute();
        let mut warnings = diags;
        warnings.extend(self.live_analysis(i));
        Draft::Valid {
            warnings,
            changed: true,
        }
    }

    /// The analysis of rule `i` alone over any row the schema allows (`never-true`,
    /// `always-true`), as the editor's warnings: at most
    /// [`rulebench_core::analyze::LIVE_PAIRS`] made pairs, so it keeps up with typing.
    pub fn live_analysis(&self, i: usize) -> Vec<Diagnostic> {
        let Some(rule) = self.page.rules.get(i) else {
            return vec![];
        };
        let condition = rule.applies_when.as_ref().map(|c| c.logic.clone());
        if let Some(a) = self.analysed.borrow().get(&rule.id)
            && a.logic == rule.logic
            && a.condition == condition
            && a.schema_stamp == self.schema_stamp
        {
            return a.warnings.clone();
        }
        let warnings: Vec<Diagnostic> =
            rulebench_core::analyze::rule_alone(&self.page, &self.schema, i)
                .iter()
                .map(|f| {
                    let mut d = f.diagnostic();
                    d.pointer.clear();
                    d
                })
                .collect();
        self.analysed.borrow_mut().insert(
            rule.id.clone(),
            Analysed {
                logic: rule.logic.clone(),
                condition,
                schema_stamp: self.schema_stamp,
                warnings: warnings.clone(),
            },
        );
        warnings
    }

    /// Saves rule `i` as a new revision.
    pub fn save_rule(&mut self, i: usize) -> Result<i64> {
        if self.is_new(i) {
            // Written here and never stored: inserted whole.
            let rule = self.page.rules[i].clone();
            self.revision = self.app.save_rule(&self.page, &rule, None)?;
            self.new_rules.remove(&rule.id);
            self.bases.remove(&rule.id);
            if self.editing.as_deref() == Some(rule.id.as_str()) {
                self.editing_base = Some(rule.logic.clone());
            }
            self.unsaved[i] = false;
            self.saved_columns = self.eval.columns.clone();
            return Ok(self.revision);
        }
        // The logic alone is written over the stored rule: a name or weight changed
        // elsewhere meanwhile stays.
        // Only over the stored logic the draft started from: a change made elsewhere
        // meanwhile is a conflict for the person, never overwritten.
        let rule = self.page.rules[i].clone();
        let saved = self.app.save_rule_logic(
            &self.page.id,
            &rule.id,
            &rule.logic,
            rule.expression.as_deref(),
            self.bases.get(&rule.id),
        );
        let (saved, revision) = self.noting_conflict(saved)?;
        self.bases.remove(&rule.id);
        if self.editing.as_deref() == Some(rule.id.as_str()) {
            self.editing_base = Some(saved.logic.clone());
        }
        self.revision = revision;
        if (saved.required, saved.weight) != (rule.required, rule.weight) {
            self.matrix.set_rule_weight(i, saved.required, saved.weight);
        }
        self.page.rules[i] = saved;
        self.unsaved[i] = false;
        self.saved_columns = self.eval.columns.clone();
        Ok(self.revision)
    }

    /// Saves every unsaved rule.
    pub fn save_all(&mut self) -> Result<()> {
        // Every edit that can be saved is, whatever another one met (a conflict waits
        // for the person); the first problem is returned.
        let mut first = None;
        for i in 0..self.page.rules.len() {
            if self.unsaved[i]
                && let Err(e) = self.save_rule(i)
            {
                first.get_or_insert(e);
            }
        }
        if self.policies_since.is_some()
            && let Err(e) = self.save_tuned_policies()
        {
            first.get_or_insert(e);
        }
        if let Some(e) = first {
            return Err(e);
        }
        Ok(())
    }

    /// Changes a rule's name, required flag, weight and category (saved at once).
    pub fn update_rule_meta(
        &mut self,
        i: usize,
        name: &str,
        required: bool,
        weight: f64,
        category: &str,
        applies_when: &str,
    ) -> Result<i64> {
        // A rule written here and not stored yet is stored first (its text is valid:
        // it would not be in the page otherwise).
        if self.is_new(i) {
            self.save_rule(i)?;
        }
        let problems = validate::rule_fields(name, weight);
        if !problems.is_empty() {
            return Err(AppError::Invalid {
                origin: format!("rule {}", self.page.rules[i].id),
                diagnostics: problems,
            });
        }
        let mut condition = self.read_condition(i, applies_when)?;
        let mut rule = self.page.rules[i].clone();
        // The same condition, however it is shown (a JSONLogic one in infix), is the
        // one stored: kept as written.
        if condition.as_ref().map(|c| &c.logic) == rule.applies_when.as_ref().map(|c| &c.logic) {
            condition = rule.applies_when.clone();
        }
        let condition_changed = rule.applies_when != condition;
        // The condition is written only when it was changed here, over the one this
        // session had (a change made elsewhere is never written over unseen).
        let base = rule.applies_when.clone();
        rule.applies_when = condition;
        rule.name = name.trim().to_owned();
        rule.required = required;
        rule.weight = weight;
        rule.category = if category.trim().is_empty() {
            "General".into()
        } else {
            category.trim().to_owned()
        };
        // These fields alone are written over the stored rule: its logic (saved, or a
        // draft still being edited here) is left as it is.
        let (saved, revision) = self.app.save_rule_meta(
            &self.page.id,
            &rule,
            condition_changed.then_some(base.as_ref()),
        )?;
        self.revision = revision;
        self.matrix.set_rule_weight(i, saved.required, saved.weight);
        // (Changed here, or elsewhere meanwhile: the stored one is kept then.)
        let condition_moved = saved.applies_when != base;
        let logic = std::mem::take(&mut self.page.rules[i].logic);
        self.page.rules[i] = rulebench_core::model::Rule { logic, ..saved };
        if condition_moved {
            // Where the rule applies changes its outcomes: its column is computed again.
            let rule = self.page.rules[i].clone();
            self.matrix
                .replace_rule(i, &rule)
                .map_err(|e| AppError::Usage(e.message))?;
            self.recompute();
            if !self.unsaved[i] {
                self.saved_columns = self.eval.columns.clone();
            }
        } else {
            self.reverdict();
        }
        Ok(self.revision)
    }

    /// Rule `i`'s `appliesWhen` as the rule form shows it: the infix text it was
    /// written as, else its logic in infix, else as JSONLogic; empty when it has none.
    pub fn condition_text(&self, i: usize) -> String {
        let Some(c) = self.page.rules.get(i).and_then(|r| r.applies_when.as_ref()) else {
            return String::new();
        };
        c.expression.clone().unwrap_or_else(|| {
            rulebench_core::infix::print(&c.logic).unwrap_or_else(|_| c.logic.to_string())
        })
    }

    /// A condition typed for rule `i` (infix text, or JSONLogic when it starts with `{`;
    /// empty: none), read and checked against the page's fields.
    fn read_condition(
        &self,
        i: usize,
        text: &str,
    ) -> Result<Option<rulebench_core::model::Condition>> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let name = &self.page.rules[i].name;
        let invalid = |diagnostics| AppError::Invalid {
            origin: "appliesWhen".to_owned(),
            diagnostics,
        };
        let written = if text.starts_with('{') {
            rulebench_core::diag::parse_json::<Value>(text).map_err(|d| invalid(vec![*d]))?
        } else {
            Value::String(text.to_owned())
        };
        let condition = rulebench_core::read::condition(name, written)
            .map_err(|message| invalid(vec![Diagnostic::error(Code::InfixSyntax, "", message)]))?;
        let errors: Vec<Diagnostic> =
            rulebench_core::check::rule_logic(&condition.logic, None, &self.schema)
                .into_iter()
                .filter(Diagnostic::is_error)
                .collect();
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        Ok(Some(condition))
    }

    /// Rules edited here but deleted elsewhere, waiting for the user's answer.
    pub fn orphans(&self) -> &[rulebench_core::model::Rule] {
        &self.orphans
    }

    /// Lets the orphaned drafts go (the deletion made elsewhere stands).
    pub fn drop_orphans(&mut self) -> Vec<rulebench_core::model::Rule> {
        std::mem::take(&mut self.orphans)
    }

    /// Adds the orphaned drafts back as rules, with the edits made here, at the end of
    /// the list (an id taken meanwhile gets a suffix); returns their names.
    pub fn restore_orphans(&mut self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        while let Some(mut rule) = self.orphans.first().cloned() {
            // Back as a rule of its own (its family, if it had one, is gone).
            rule.family = None;
            let base = rule.id.clone();
            let mut n = 2;
            while self.page.rule(&rule.id).is_some() {
                rule.id = format!("{base}-{n}");
                n += 1;
            }
            self.revision = self.app.save_rule(&self.page, &rule, None)?;
            self.orphans.remove(0);
            let i = self.page.rules.len();
            self.matrix.insert_rule(i, &rule)?;
            names.push(rule.name.clone());
            self.page.rules.push(rule);
            self.unsaved.push(false);
            if !self.constant.is_empty() {
                self.constant.push(None);
            }
        }
        self.recompute();
        self.saved_columns = self.eval.columns.clone();
        Ok(names)
    }

    /// Adds a rule (always-true logic unless given), saved at once; returns its index.
    /// Why rule `i` cannot be edited alone, when it is a member of a rule family (it
    /// changes with its family, in a rule file or the page file).
    pub fn family_refusal(&self, i: usize) -> Option<String> {
        let rule = self.page.rules.get(i)?;
        let m = rule.family.as_ref()?;
        Some(format!(
            "`{}` is one of the {} rules of the family `{}`: change the family (`rulebench rule add {} FILE --replace`), not one member",
            rule.id, m.family.members, m.family.id, self.page.id
        ))
    }

    pub fn add_rule(&mut self, name: &str) -> Result<usize> {
        self.add_rule_with(name, Value::Bool(true), None)
    }

    /// Checks the text of a rule not in the page yet (`a`: it is added only once its
    /// text is valid): its logic and authored infix (`infix`), and the warnings, or
    /// the problems that keep it out. Nothing changes.
    pub fn check_new_rule(
        &self,
        text: &str,
        infix: bool,
    ) -> std::result::Result<NewRule, Vec<Diagnostic>> {
        if text.trim().is_empty() {
            return Err(vec![Diagnostic::error(
                Code::JsonSyntax,
                "",
                "type the rule's logic: it is added to the page once it is valid",
            )]);
        }
        let (logic, expression) = if infix {
            match rulebench_core::infix::parse(text, &self.infix_fields()) {
                Ok(logic) => (
                    logic,
                    (!text.chars().any(rulebench_core::text::is_unsafe)).then(|| text.to_owned()),
                ),
                Err(e) => {
                    return Err(vec![Diagnostic {
                        line: Some(e.line),
                        column: Some(e.column),
                        ..Diagnostic::error(e.code, "", e.message.clone()).with_hint(e.hint.clone())
                    }]);
                }
            }
        } else {
            match parse_json(text) {
                Ok(v) => (v, None),
                Err(d) => return Err(vec![*d]),
            }
        };
        let diags: Vec<Diagnostic> = rulebench_core::check::rule_logic(&logic, None, &self.schema)
            .into_iter()
            .map(|d| if infix { d } else { d.locate_in(text) })
            .collect();
        if diags.iter().any(Diagnostic::is_error) {
            return Err(diags);
        }
        Ok(NewRule {
            logic,
            expression,
            warnings: diags,
        })
    }

    /// Adds a rule written here (`a`) once its text is valid: in the page and the
    /// matrix at once, saved like any edit (when typing pauses, on Esc or Ctrl-S).
    /// Returns its index.
    pub fn add_new_rule(&mut self, name: &str, new: NewRule) -> Result<usize> {
        self.rule_room()?;
        let mut rule = new_rule(name, new.logic, new.expression);
        self.unique_id(&mut rule);
        let i = self.page.rules.len();
        self.matrix.insert_rule(i, &rule)?;
        self.new_rules.insert(rule.id.clone());
        self.page.rules.push(rule);
        self.unsaved.push(true);
        self.recompute();
        Ok(i)
    }

    /// Whether the page's plan has room for one more rule (its rules here counted,
    /// those not stored yet too).
    pub fn rule_room(&self) -> Result<()> {
        match self.page.plan_tier().rule_limit() {
            Some(limit) if self.page.rules.len() >= limit => Err(AppError::RuleLimit { limit }),
            _ => Ok(()),
        }
    }

    /// The id a new rule written here has now, when a reload gave it another (a rule
    /// of its id was stored elsewhere meanwhile).
    pub fn renamed_new_rule(&self, id: &str) -> Option<&str> {
        self.renamed_new
            .iter()
            .find(|(old, _)| old == id)
            .map(|(_, new)| new.as_str())
    }

    /// Whether rule `i` was written here and is not stored yet.
    pub fn is_new(&self, i: usize) -> bool {
        self.page
            .rules
            .get(i)
            .is_some_and(|r| self.new_rules.contains(&r.id))
    }

    /// Gives `rule` an id no rule of the page has (its own, else `-2`, `-3`…).
    fn unique_id(&self, rule: &mut Rule) {
        rule.ensure_id();
        let base = rule.id.clone();
        let mut n = 2;
        while self.page.rule(&rule.id).is_some() {
            rule.id = format!("{base}-{n}");
            n += 1;
        }
    }

    /// Adds a rule named `name` with `logic` (and its authored infix), saved at once as
    /// a new revision, at the end of the page. Returns its index.
    pub fn add_rule_with(
        &mut self,
        name: &str,
        logic: Value,
        expression: Option<String>,
    ) -> Result<usize> {
        let mut rule = new_rule(name, logic, expression);
        self.unique_id(&mut rule);
        self.revision = self.app.save_rule(&self.page, &rule, None)?;
        let i = self.page.rules.len();
        self.matrix.insert_rule(i, &rule)?;
        self.page.rules.push(rule);
        self.unsaved.push(false);
        self.recompute();
        self.saved_columns = self.eval.columns.clone();
        Ok(i)
    }

    pub fn delete_rule(&mut self, i: usize) -> Result<i64> {
        let id = self.page.rules[i].id.clone();
        // A rule written here and never stored has nothing to remove from the page.
        if !self.new_rules.remove(&id) {
            self.revision = self.app.remove_rule(&self.page.id, &id)?;
        }
        self.bases.remove(&id);
        self.page.rules.remove(i);
        self.unsaved.remove(i);
        // The background work's word on each rule follows the rules (until it answers).
        if i < self.constant.len() {
            self.constant.remove(i);
        }
        self.matrix.remove_rule(i);
        self.recompute();
        self.saved_columns = self.eval.columns.clone();
        Ok(self.revision)
    }

    /// Reverts rule `i` to its version before the last saved change (`u`).
    pub fn revert_rule(&mut self, i: usize) -> Result<i64> {
        let id = self.page.rules[i].id.clone();
        // Reverting goes back from the rule as shown here: one changed elsewhere since
        // (not seen yet) is not reverted over.
        let stored = self.app.store().rule(&self.page.id, &id)?;
        if !self.unsaved[i] && stored.as_ref() != Some(&self.page.rules[i]) {
            return Err(AppError::Usage(format!(
                "rule `{id}` was changed elsewhere since it was shown here: nothing reverted (hint: look at it again, it is reloaded within a second)"
            )));
        }
        let history = self.app.store().rule_history(&self.page.id, &id)?;
        let current = &self.page.rules[i];
        let previous = history
            .into_iter()
            .filter_map(|(_, r)| r)
            .find(|r| {
                r.logic != current.logic
                    || r.name != current.name
                    || r.weight != current.weight
                    || r.required != current.required
                    || r.category != current.category
            })
            .ok_or_else(|| AppError::Usage(format!("rule `{id}` has no earlier version")))?;
        self.revision = self.app.save_rule(&self.page, &previous, Some(i))?;
        self.matrix.replace_rule(i, &previous)?;
        self.page.rules[i] = previous;
        self.unsaved[i] = false;
        self.recompute();
        self.saved_columns = self.eval.columns.clone();
        Ok(self.revision)
    }

    /// Sets both policies (saved at once); only the verdicts are recomputed.
    pub fn set_policies(
        &mut self,
        device: DevicePolicy,
        selection: SelectionPolicy,
    ) -> Result<i64> {
        self.tune_policies(device, selection)?;
        self.save_tuned_policies()
    }

    /// Sets both policies in memory while they are being tuned: checked on their own
    /// (no copy of the page, no whole-page validation), verdicts recomputed, saved
    /// once the tuning pauses ([`Session::save_policies_if_due`]).
    pub fn tune_policies(
        &mut self,
        device: DevicePolicy,
        selection: SelectionPolicy,
    ) -> Result<()> {
        let errors = validate::validate_device_policy(&device);
        if !errors.is_empty() {
            return Err(AppError::Invalid {
                origin: "policy".into(),
                diagnostics: errors,
            });
        }
        if self.policy_base.is_none() {
            // The tuning starts here: from the stored values.
            self.policy_base = Some((
                self.page.device_policy.clone(),
                self.page.selection_policy.clone(),
            ));
        }
        for name in super::policy::changed(
            (&self.page.device_policy, &self.page.selection_policy),
            (&device, &selection),
        ) {
            if !self.tuned.contains(&name) {
                self.tuned.push(name);
            }
        }
        self.matrix.set_policies(&device, &selection);
        self.page.device_policy = device;
        self.page.selection_policy = selection;
        self.reverdict();
        self.policies_since = Some(Instant::now());
        Ok(())
    }

    /// Whether tuned policies wait to be saved.
    pub fn policies_unsaved(&self) -> bool {
        self.policies_since.is_some()
    }

    /// When tuned policies are due to be saved (a pause after the last step).
    pub fn policies_due_at(&self) -> Option<Instant> {
        self.policies_since.map(|at| at + POLICY_SAVE_DELAY)
    }

    /// A valid edit of rule `rule` waits to be saved: saved [`RULE_SAVE_DELAY`] after the
    /// last keystroke (each one puts it off), one revision a burst of typing.
    pub fn schedule_rule_save(&mut self, rule: usize) {
        if let Some(r) = self.page.rules.get(rule) {
            self.rule_due = Some((r.id.clone(), Instant::now() + RULE_SAVE_DELAY));
        }
    }

    /// No rule edit waits to be saved any more (it was saved, or its text no longer
    /// validates).
    pub fn cancel_rule_save(&mut self) {
        self.rule_due = None;
    }

    /// When the edited rule is due to be saved.
    pub fn rule_save_due_at(&self) -> Option<Instant> {
        self.rule_due.as_ref().map(|(_, at)| *at)
    }

    /// Saves the edited rule when it is due at `now`: which rule, and how it went.
    pub fn save_rule_if_due(&mut self, now: Instant) -> Option<(usize, Result<i64>)> {
        let (id, at) = self.rule_due.clone()?;
        if at > now {
            return None;
        }
        self.rule_due = None;
        // By id: rules may have moved (or gone) since the edit was scheduled.
        let rule = self.page.rules.iter().position(|r| r.id == id)?;
        Some((rule, self.save_rule(rule)))
    }

    /// Saves tuned policies as one revision.
    pub fn save_tuned_policies(&mut self) -> Result<i64> {
        // Only the values tuned here are written over the stored ones: a value changed
        // elsewhere meanwhile stays, and is taken in.
        // Only over the values the tuning started from: a tuned value changed elsewhere
        // meanwhile is a conflict for the person.
        let names = self.tuned.clone();
        let saved = self.app.save_policy_values(
            &self.page.id,
            &self.page.device_policy,
            &self.page.selection_policy,
            &names,
            self.policy_base.as_ref().map(|(d, s)| (d, s)),
        );
        let (saved, revision) = match saved {
            Err(AppError::Conflict(c)) => {
                // Not due again until the person chooses.
                self.policies_since = None;
                return self.noting_conflict(Err(AppError::Conflict(c)));
            }
            Err(e) if e.is_page_gone() => {
                // Nowhere to save them: not tried again at every tick (the values stay
                // tuned here, and kept as a draft, while the person decides).
                self.policies_since = None;
                return Err(e);
            }
            other => other?,
        };
        self.tuned.clear();
        self.policy_base = None;
        self.revision = revision;
        self.policies_since = None;
        if saved.device_policy != self.page.device_policy
            || saved.selection_policy != self.page.selection_policy
        {
            self.matrix
                .set_policies(&saved.device_policy, &saved.selection_policy);
            self.page.device_policy = saved.device_policy;
            self.page.selection_policy = saved.selection_policy;
            self.reverdict();
        }
        Ok(self.revision)
    }

    /// Changes the policies in memory only (while tuning); `set_policies` saves.
    pub fn preview_policies(&mut self, device: &DevicePolicy, selection: &SelectionPolicy) {
        self.matrix.set_policies(device, selection);
        self.reverdict();
    }

    /// Sets `field` of one row to `value`, saved at once as one revision. A field that
    /// is not a key changes that row only: one stored row rewritten, the rules that read
    /// the field recomputed, the change queued for the background work
    /// ([`Session::take_cell_edits`]). A key field moves the row's key (overrides
    /// follow it): the page is validated whole and reloaded.
    pub fn set_cell(&mut self, side: Side, row: usize, field: &str, value: Value) -> Result<i64> {
        let field = field.trim();
        if validate::value_depth(&value) + 1 > validate::MAX_DEPTH {
            return Err(AppError::Usage(format!(
                "the value of `{field}` nests deeper than the limit of {} levels",
                validate::MAX_DEPTH
            )));
        }
        let d = self.page.dataset(side);
        if field.is_empty() || row >= d.rows.len() || d.key.iter().any(|k| k == field) {
            let rev = self
                .app
                .set_cell(&self.page.id.clone(), side, row, field, value)?;
            self.reload()?;
            return Ok(rev);
        }
        let what = format!(
            "set {field} of {} row {}",
            side.name(),
            d.row_label(&d.rows[row])
        );
        let hash = rulebench_core::model::key_hash(&d.row_key(&d.rows[row]));
        let (new_row, revision) =
            self.app
                .store_cell(&self.page.id, side, (row, &hash), field, &value, &what)?;
        self.revision = revision;
        // The row as stored: this field, and any other set elsewhere meanwhile.
        let old_row = &self.page.dataset(side).rows[row];
        let mut changed: Vec<String> = new_row
            .iter()
            .filter(|(k, v)| old_row.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .collect();
        changed.extend(
            old_row
                .keys()
                .filter(|k| !new_row.contains_key(*k))
                .cloned(),
        );
        self.matrix
            .replace_row(side, row, self.page.dataset(side), &new_row, &changed);
        self.page.dataset_mut(side).rows[row] = new_row.clone();
        self.schema = Schema::of(&self.page);
        self.schema_stamp += 1;
        self.cell_edits.push((side, row, new_row));
        self.recompute();
        self.saved_columns = self.eval.columns.clone();
        Ok(self.revision)
    }

    /// Cell edits since the last call, in order, for the background work.
    pub fn take_cell_edits(&mut self) -> Vec<(Side, usize, rulebench_core::model::Row)> {
        std::mem::take(&mut self.cell_edits)
    }

    /// Sets (Some) or clears (None) the override of (selection, target), saved at once.
    pub fn set_override(
        &mut self,
        target: usize,
        value: Option<(bool, Option<String>)>,
    ) -> Result<i64> {
        self.set_override_at(self.selection, target, value)
    }

    /// Sets or clears the override of any (source, target) pair, saved at once; the
    /// shown verdicts are recomputed for the current selection.
    pub fn set_override_at(
        &mut self,
        source: usize,
        target: usize,
        value: Option<(bool, Option<String>)>,
    ) -> Result<i64> {
        let source_key = self.page.source.row_key(&self.page.source.rows[source]);
        let target_key = self.page.target.row_key(&self.page.target.rows[target]);
        // The workspace knows both rows: the change is written by key, without
        // loading the page again.
        self.revision = self.app.put_override_by_keys(
            &self.page.id,
            &source_key,
            &target_key,
            value.clone(),
        )?;
        let (sh, th) = (key_hash(&source_key), key_hash(&target_key));
        self.page.overrides.retain(|o| {
            !(o.source_hash().as_deref() == Some(&sh) && o.target_hash().as_deref() == Some(&th))
        });
        self.matrix.put_override(source, target, value.clone());
        self.overrides_stamp = stamp();
        if let Some((v, note)) = value {
            self.page.overrides.push(Override {
                source_key: Some(source_key),
                target_key: Some(target_key),
                source_key_hash: None,
                target_key_hash: None,
                value: v,
                note,
            });
        }
        self.reverdict();
        Ok(self.revision)
    }

    /// The override of (selection, target) with its note, if any.
    pub fn override_of(&self, target: usize) -> Option<&Override> {
        let sh = key_hash(
            &self
                .page
                .source
                .row_key(&self.page.source.rows[self.selection]),
        );
        let th = key_hash(&self.page.target.row_key(&self.page.target.rows[target]));
        self.page.overrides.iter().find(|o| {
            o.source_hash().as_deref() == Some(&sh) && o.target_hash().as_deref() == Some(&th)
        })
    }

    /// The selection verdict every source row would get (for the sources pane).
    pub fn selection_verdicts(&mut self) -> Vec<Verdict> {
        (0..self.page.source.rows.len())
            .map(|s| self.matrix.evaluate(s).selection_verdict)
            .collect()
    }

    /// A row as JSON, as rules see it (field defaults filled in; for explanations).
    pub fn row(&self, side: Side, i: usize) -> Value {
        let d = self.page.dataset(side);
        Value::Object(d.effective_row(&d.rows[i]).into_owned())
    }

    /// Why rule `rule` passed or failed for (selection, target).
    pub fn explain(&self, rule: usize, target: usize) -> rulebench_core::explain::Explanation {
        rulebench_core::explain::explain(
            &self.page.rules[rule],
            &self.row(Side::Source, self.selection),
            &self.row(Side::Target, target),
        )
    }

    /// Why a target got its verdict for the selection: the override and its note, the
    /// required rules that failed, or the score against the thresholds.
    pub fn target_why(&self, target: usize) -> String {
        rulebench_core::explain::target_why(&self.page, &self.eval, target).text
    }

    /// What would move `target` to the verdict `asked` for the selection: the smallest
    /// sets of rule outcomes and the threshold values past which its verdict changes
    /// (the recommendation's edits are the CLI's: they re-score the whole selection).
    pub fn why_not(&self, target: usize, asked: Verdict) -> rulebench_core::whatif::WhyNot {
        rulebench_core::whatif::why_not(&self.page, &self.eval, target, asked)
    }

    /// How many targets of the selection change verdict when a threshold takes another
    /// value, for each `(threshold, value)` asked.
    pub fn threshold_flips(&self, asked: &[(super::policy::PolicyField, f64)]) -> Vec<usize> {
        rulebench_core::whatif::threshold_flips(&self.page, &self.eval, asked)
    }

    /// Clears the override of any (source, target) pair, saved at once.
    pub fn clear_override_at(&mut self, source: usize, target: usize) -> Result<i64> {
        self.set_override_at(source, target, None)
    }

    /// The page with its compiled matrix, for running assertions on the live state.
    pub(super) fn page_and_matrix(&mut self) -> (&Page, &mut Matrix) {
        (&self.page, &mut self.matrix)
    }

    /// The compiled matrix (read-only), for explanations.
    pub fn matrix(&self) -> &Matrix {
        &self.matrix
    }

    /// The selection's outcomes as shown (drafts included), as the one typed result
    /// the printers take.
    pub fn result(&self) -> rulebench_core::result::SelectionResult {
        let names = Arc::new(rulebench_core::result::Names::of_matrix(
            &self.page,
            &self.matrix,
        ));
        rulebench_core::result::SelectionResult::new(
            &self.page,
            names,
            self.eval.clone(),
            self.revision,
            &super::timestamp(),
        )
    }
}

impl App {
    /// Saves a page's policies as a new revision.
    pub fn save_policies(&mut self, page: &Page) -> Result<i64> {
        Ok(self.store.change(&page.id, "policy changed", |tx, _| {
            rulebench_store::ops::set_policies(tx, page)
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(&dir.path().join("w.db")).unwrap();
        (dir, app)
    }

    fn target(ws: &Session, id: &str) -> usize {
        ws.page.target.find_row(id).unwrap()
    }

    /// Edits the last rule to `true` and schedules its save: the rule's id.
    fn pending_save_on_the_last_rule(ws: &mut Session) -> String {
        let i = ws.page.rules.len() - 1;
        assert!(matches!(ws.try_logic(i, "true"), Draft::Valid { .. }));
        ws.schedule_rule_save(i);
        ws.page.rules[i].id.clone()
    }

    /// Once due, the pending save is made on rule `id`, and the database has it.
    fn saved_when_due(app: &App, ws: &mut Session, id: &str) {
        let later = Instant::now() + RULE_SAVE_DELAY * 2;
        let (rule, saved) = ws.save_rule_if_due(later).expect("saved when due");
        assert_eq!(ws.page.rules[rule].id, id);
        saved.unwrap();
        let stored = Session::open(app, "llm-chat-clients").unwrap();
        assert_eq!(
            stored.page.rule(id).unwrap().1.logic,
            serde_json::json!(true)
        );
    }

    /// A rule edit waiting to be saved is saved on its rule even when a rule before it
    /// is deleted meanwhile (the index moves; it was kept by index and saved the wrong
    /// rule, or none past the end).
    #[test]
    fn a_rule_save_waiting_follows_its_rule_by_id() {
        let (_d, app) = app();
        let mut ws = Session::open(&app, "llm-chat-clients").unwrap();
        let id = pending_save_on_the_last_rule(&mut ws);
        ws.delete_rule(0).unwrap();
        saved_when_due(&app, &mut ws, &id);
    }

    /// A rule edit waiting to be saved when the page is reopened (another process
    /// changed it) is still saved after the pause, on the same rule.
    #[test]
    fn a_rule_save_waiting_survives_a_reopen() {
        let (_d, app) = app();
        let mut ws = Session::open(&app, "llm-chat-clients").unwrap();
        let id = pending_save_on_the_last_rule(&mut ws);
        let fresh = Session::open(&app, "llm-chat-clients").unwrap();
        ws.adopt(fresh);
        assert!(
            ws.rule_save_due_at().is_some(),
            "still due after the reopen"
        );
        saved_when_due(&app, &mut ws, &id);
    }

    #[test]
    fn editing_a_rule_flips_cells_then_saving_makes_a_revision() {
        let (_d, app) = app();
        let mut ws = Session::open(&app, "llm-chat-clients").unwrap();
        ws.select(ws.page.source.find_row("t3-chat").unwrap());
        let llama = target(&ws, "llama-3.3-70b");
        let (tc, _) = ws.page.rule("tool-calling").unwrap();
        assert!(!ws.eval.columns[tc].passed(llama));
        assert_eq!(ws.eval.devices[llama].verdict.number(), 0);
        let rev = ws.revision;
        match ws.try_logic(tc, "true") {
            Draft::Valid { warnings, changed } => {
                assert!(changed);
                let codes: Vec<_> = warnings.iter().map(|w| w.code).collect();
                assert_eq!(codes, [Code::ConstantLogic], "logic that reads no field");
            }
            other => panic!("{other:?}"),
        }
        assert!(ws.eval.columns[tc].passed(llama));
        assert!(ws.changed_since_save(tc, llama));
        assert!(ws.is_unsaved(tc));
        assert_eq!(ws.revision, rev);
        // Invalid text keeps the last valid results.
        match ws.try_logic(tc, "{\"==\": [1") {
            Draft::Invalid { diagnostics } => assert_eq!(diagnostics[0].code, Code::JsonSyntax),
            other => panic!("{other:?}"),
        }
        assert!(ws.eval.columns[tc].passed(llama));
        ws.save_rule(tc).unwrap();
        assert_eq!(ws.revision, rev + 1);
        assert!(!ws.changed_since_save(tc, llama));
        let reopened = Session::open(&app, "llm-chat-clients").unwrap();
        assert_eq!(reopened.page.rules[tc].logic, Value::Bool(true));
        // `u` reverts to the version before.
        ws.revert_rule(tc).unwrap();
        assert!(!ws.eval.columns[tc].passed(llama));
        assert_eq!(ws.revision, rev + 2);
    }

    #[test]
    fn thresholds_and_overrides_move_verdicts() {
        let (_d, app) = app();
        let mut ws = Session::open(&app, "llm-chat-clients").unwrap();
        ws.select(ws.page.source.find_row("t3-chat").unwrap());
        let llama = target(&ws, "llama-3.3-70b");
        let mut device = ws.page.device_policy.clone();
        // Llama scores 2 / 6 for t3.chat (the rules it does not need do not count).
        device.full_threshold = 0.3;
        device.partial_threshold = 0.3;
        ws.set_policies(device, ws.page.selection_policy.clone())
            .unwrap();
        assert_eq!(ws.eval.devices[llama].verdict.number(), 2);
        let gpt = target(&ws, "gpt-4.1");
        ws.set_override(gpt, Some((false, Some("outage".into()))))
            .unwrap();
        assert_eq!(ws.eval.devices[gpt].verdict.number(), 0);
        assert_eq!(
            ws.override_of(gpt).and_then(|o| o.note.as_deref()),
            Some("outage")
        );
        ws.set_override(gpt, None).unwrap();
        assert_eq!(ws.eval.devices[gpt].verdict.number(), 2);
        assert!(ws.override_of(gpt).is_none());
    }

    #[test]
    fn rules_can_be_added_described_and_deleted() {
        let (_d, app) = app();
        let mut ws = Session::open(&app, "loan-eligibility").unwrap();
        let n = ws.page.rules.len();
        let i = ws.add_rule("New rule").unwrap();
        assert_eq!(i, n);
        ws.update_rule_meta(i, "Renamed", true, 3.0, "Risk", "")
            .unwrap();
        let reopened = Session::open(&app, "loan-eligibility").unwrap();
        assert_eq!(reopened.page.rules[i].name, "Renamed");
        assert!(reopened.page.rules[i].required);
        ws.delete_rule(i).unwrap();
        assert_eq!(ws.page.rules.len(), n);
        assert_eq!(ws.eval.columns.len(), n);
    }
}

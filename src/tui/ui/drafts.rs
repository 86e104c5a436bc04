//! Drafts in the workbench: what the person typed and did not save is kept in the
//! database while typing and on quitting, offered back on the next open, and put back.

use std::time::{Duration, Instant};

use crate::tui::action::{Action, Changed, PaneId};
use crate::tui::modal::Modal;

use super::shell::*;

impl Ui {
    /// Keeps what the person typed and has not saved in the database (a rule's text,
    /// tuned policy values, an assertion in its dialog), so that a quit, a crash or
    /// Ctrl-C loses none of it; forgets what was saved or let go. Written at most twice
    /// a second while typing (`force`: now).
    pub(super) fn keep_drafts(&mut self, now: Instant, force: bool) {
        use crate::app::{DraftKind, KeptDraft};
        if self.drafts_offered {
            return;
        }
        // Writes wait (at most twice a second); forgetting a saved draft does not.
        let throttled = !force
            && self
                .drafts_written_at
                .is_some_and(|at| now.saturating_duration_since(at) < Duration::from_millis(500));
        let Screen::Page(p) = &self.screen else {
            return;
        };
        let mut want: Vec<KeptDraft> = Vec::new();
        let draft = |kind, item: &str, text: String, infix, base| KeptDraft {
            kind,
            item: item.to_owned(),
            text,
            infix,
            base,
            updated_at: String::new(),
        };
        for (i, rule) in p.ws.page.rules.iter().enumerate() {
            // A rule written here and not stored yet is no draft of a stored rule (it is
            // saved when the workbench leaves the page); nor is the text of a rule not
            // in the page yet a draft of the rule shown before it.
            if p.ws.is_new(i) {
                continue;
            }
            let in_editor = p.editor.active && p.editor.new_rule.is_none() && p.editor.rule == i;
            if in_editor && (p.editor.is_invalid() || p.ws.is_unsaved(i)) {
                want.push(draft(
                    DraftKind::Rule,
                    &rule.id,
                    p.editor.text(),
                    p.editor.infix,
                    Some(
                        p.ws.base_of(&rule.id)
                            .cloned()
                            .unwrap_or_else(|| rule.logic.clone()),
                    ),
                ));
            } else if p.ws.is_unsaved(i) {
                want.push(draft(
                    DraftKind::Rule,
                    &rule.id,
                    p.ws.rule_text(i),
                    false,
                    p.ws.base_of(&rule.id).cloned(),
                ));
            }
        }
        if let Some((mine, base)) = p.ws.tuned_values() {
            want.push(draft(
                DraftKind::Policy,
                "policies",
                mine.to_string(),
                false,
                Some(base),
            ));
        }
        if let Some(Modal::Json(state)) = &self.modal
            && state.edited()
        {
            want.push(draft(
                DraftKind::Assertion,
                state.replacing.as_deref().unwrap_or(""),
                state.text(),
                false,
                state.base.clone(),
            ));
        }
        let page_id = p.ws.page.id.clone();
        let app = p.ws.app();
        let kept = std::mem::take(&mut self.drafts_kept);
        let mut wrote = false;
        let mut pending = Vec::new();
        let mut failed = Vec::new();
        for d in &want {
            let key = (d.kind, d.item.clone());
            // Forced (quitting): every draft is written again (one deleted elsewhere
            // meanwhile comes back), so what the exit note says is true.
            if force || kept.get(&key) != Some(&d.text) {
                if throttled {
                    pending.push(key);
                    continue;
                }
                if self.drafts_unavailable {
                    failed.push(key);
                    continue;
                }
                if let Err(e) = app.keep_draft(&page_id, d) {
                    // Not kept (a read-only database): said once, not tried again.
                    self.status.app_error(&e);
                    self.drafts_unavailable = true;
                    failed.push(key);
                    continue;
                }
                wrote = true;
            }
        }
        let wanted: std::collections::HashSet<(DraftKind, String)> =
            want.iter().map(|d| (d.kind, d.item.clone())).collect();
        for (kind, item) in kept.keys().filter(|k| !wanted.contains(*k)) {
            if app.forget_draft(&page_id, *kind, item).is_ok() {
                wrote = true;
            }
        }
        // A write put off keeps the text last written (written on a later tick).
        let mut next: std::collections::HashMap<(DraftKind, String), String> = want
            .into_iter()
            .map(|d| ((d.kind, d.item), d.text))
            .collect();
        for key in failed {
            next.remove(&key);
        }
        for key in pending {
            match kept.get(&key) {
                Some(old) => {
                    next.insert(key, old.clone());
                }
                None => {
                    next.remove(&key);
                }
            }
        }
        self.drafts_kept = next;
        if wrote {
            self.drafts_written_at = Some(now);
        }
    }

    /// Offers the drafts kept from an earlier session on the open page.
    pub(super) fn offer_drafts(&mut self) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        let drafts = match p.ws.app().drafts(&p.ws.page.id) {
            Ok(d) => d,
            Err(e) => {
                self.status.app_error(&e);
                return;
            }
        };
        // A draft that says what is stored now (saved just before a crash) is no edit.
        let (stale, drafts): (Vec<_>, Vec<_>) = drafts.into_iter().partition(|d| {
            d.kind == crate::app::DraftKind::Rule
                && !d.infix
                && p.ws.page.rule(&d.item).is_some_and(|(_, r)| {
                    serde_json::from_str::<serde_json::Value>(&d.text)
                        .ok()
                        .as_ref()
                        == Some(&r.logic)
                })
        });
        for d in &stale {
            let _ = p.ws.app().forget_draft(&p.ws.page.id, d.kind, &d.item);
        }
        if drafts.is_empty() {
            return;
        }
        let items: Vec<String> = drafts
            .iter()
            .map(|d| draft_label(d.kind, &d.item))
            .collect();
        let when = drafts
            .last()
            .map(|d| d.updated_at.clone())
            .unwrap_or_default();
        self.drafts_offered = true;
        self.modal = Some(Modal::Confirm {
            message: format!(
                "Unsaved edits from an earlier session ({}, {}): {}. Restore them? y/n (n: let them go)",
                drafts.len(),
                crate::tui::theme::safe(&when),
                items.join(", ")
            ),
            on_yes: Action::RestoreDrafts,
            on_no: Some(Action::DiscardDrafts),
        });
    }

    /// Puts the kept drafts back: each rule's text (the newest in the editor, the
    /// others applied and saved), the tuned policy values, an assertion in its dialog —
    /// each saved only over the value it started from (a change made elsewhere meanwhile
    /// is a conflict for the person).
    pub(super) fn restore_drafts(&mut self) {
        use crate::app::DraftKind;
        self.drafts_offered = false;
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        let drafts = match p.ws.app().drafts(&p.ws.page.id) {
            Ok(d) => d,
            Err(e) => {
                self.status.app_error(&e);
                return;
            }
        };
        let mut restored = Vec::new();
        let mut missing = Vec::new();
        let mut unrestored = Vec::new();
        let newest_rule = drafts
            .iter()
            .rev()
            .find(|d| d.kind == DraftKind::Rule)
            .map(|d| d.item.clone());
        for d in &drafts {
            match d.kind {
                DraftKind::Rule => {
                    let Some(i) = p.ws.page.rules.iter().position(|r| r.id == d.item) else {
                        missing.push(draft_label(d.kind, &d.item));
                        continue;
                    };
                    if let Some(base) = &d.base {
                        p.ws.set_base(&d.item, base.clone());
                    }
                    if newest_rule.as_deref() == Some(d.item.as_str()) {
                        p.focus = PaneId::Editor;
                        p.editor.infix = d.infix;
                        let follow = crate::tui::editor::open_with_text_as(
                            &mut p.editor,
                            &mut p.ws,
                            i,
                            &d.text,
                            d.infix,
                        );
                        self.queue.extend(follow);
                    } else {
                        let draft = if d.infix {
                            p.ws.try_infix(i, &d.text)
                        } else {
                            p.ws.try_logic(i, &d.text)
                        };
                        if !matches!(draft, crate::app::workspace::Draft::Valid { .. }) {
                            // Not valid any more (a field gone, say): kept for later,
                            // offered again.
                            unrestored.push(draft_label(d.kind, &d.item));
                            continue;
                        }
                        if p.ws.is_unsaved(i)
                            && let Err(e) = p.ws.save_rule(i)
                            && e.conflict().is_none()
                        {
                            self.status.app_error(&e);
                        }
                    }
                    restored.push(draft_label(d.kind, &d.item));
                }
                DraftKind::Policy => {
                    let values = serde_json::from_str(&d.text).unwrap_or_default();
                    let base = d.base.clone().unwrap_or_default();
                    match p.ws.restore_tuned(&values, &base) {
                        Ok(()) => restored.push(draft_label(d.kind, &d.item)),
                        Err(e) => self.status.app_error(&e),
                    }
                }
                DraftKind::Assertion => {
                    let replacing = (!d.item.is_empty()).then(|| d.item.clone());
                    let mut state = crate::tui::json_dialog::State::new(
                        match &replacing {
                            Some(id) => {
                                format!("Edit assertion {} (JSON)", crate::tui::theme::safe(id))
                            }
                            None => "New assertion (JSON)".into(),
                        },
                        &d.text,
                        replacing,
                    );
                    state.base = d.base.clone();
                    state.mark_edited();
                    self.modal = Some(Modal::Json(Box::new(state)));
                    restored.push(draft_label(d.kind, &d.item));
                }
            }
        }
        // What is back is kept as before (and forgotten once saved); what could not
        // come back stays in the database, offered again next time.
        self.drafts_kept = drafts
            .iter()
            .filter(|d| !unrestored.contains(&draft_label(d.kind, &d.item)))
            .map(|d| ((d.kind, d.item.clone()), d.text.clone()))
            .collect();
        let mut message = if restored.is_empty() {
            "no draft could be restored".to_owned()
        } else {
            format!("restored your unsaved edits: {}", restored.join(", "))
        };
        if !missing.is_empty() {
            message.push_str(&format!(
                " ({} not restored: no such rule any more)",
                missing.join(", ")
            ));
        }
        if !unrestored.is_empty() {
            message.push_str(&format!(
                " ({} not valid on the page as it is now: kept, offered again)",
                unrestored.join(", ")
            ));
        }
        self.status.info(message);
        self.queue.push_back(Action::Changed(Changed::all()));
        self.drain();
        self.keep_drafts(Instant::now(), true);
    }
}

/// Sends an action to the page's panes: events to all, the rest to the focused pane.
/// A result of the background work, taken into the panes that show it.
/// How a kept draft is named to the person: `rule \`tool-calling\``.
pub(super) fn draft_label(kind: crate::app::DraftKind, item: &str) -> String {
    use crate::app::DraftKind;
    match kind {
        DraftKind::Rule => format!("rule `{}`", crate::tui::theme::safe(item)),
        DraftKind::Policy => "policy values".into(),
        DraftKind::Assertion if item.is_empty() => "a new assertion".into(),
        DraftKind::Assertion => format!("assertion `{}`", crate::tui::theme::safe(item)),
    }
}

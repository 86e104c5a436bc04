//! Conflicts in the workbench: the dialog that shows a value changed elsewhere, and the
//! person's choice.

use crate::tui::action::{Action, Changed, PaneId};
use crate::tui::modal::Modal;

use super::shell::*;

impl Ui {
    /// Shows the oldest conflict waiting for the person (unless put off, or another
    /// dialog is open).
    pub(super) fn ask_about_conflicts(&mut self) {
        if self.modal.is_some() {
            return;
        }
        let Screen::Page(p) = &self.screen else {
            return;
        };
        // Put off (Esc): not asked again until a conflict is found again (the next
        // save of it, a reopening); others are asked meanwhile.
        let raised = p.ws.conflicts_raised();
        let deferred = |c: &crate::app::Conflict| {
            self.conflict_deferred
                .as_ref()
                .is_some_and(|(what, at)| *what == c.what && *at == raised)
        };
        let Some(c) = p.ws.conflicts().iter().find(|c| !deferred(c)) else {
            return;
        };
        self.modal = Some(Modal::Conflict(Box::new(crate::tui::conflict::State::new(
            c.clone(),
        ))));
    }

    /// The person's choice on the conflict shown.
    pub(super) fn resolve_conflict(
        &mut self,
        choice: crate::app::Choice,
        what: crate::app::ConflictOn,
    ) {
        use crate::app::{Choice, ConflictOn};
        self.conflict_deferred = None;
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        // The conflict shown, as it stands now (a reopening may have read theirs again).
        let Some(conflict) = p.ws.conflicts().iter().find(|c| c.what == what).cloned() else {
            self.status.info(format!(
                "{}: nothing to decide any more (saved or changed meanwhile)",
                what.describe()
            ));
            return;
        };
        match p.ws.resolve_on(&what, choice) {
            Ok((revision, merge)) => {
                let merge_for_assertion = merge.clone();
                let name = what.describe();
                match (choice, revision) {
                    (Choice::KeepMine, Some(rev)) => self
                        .status
                        .info(format!("{name}: kept mine over theirs (revision {rev})")),
                    (Choice::KeepMine, None) => self.status.info(format!("{name}: kept mine")),
                    (Choice::TakeTheirs, _) => self
                        .status
                        .info(format!("{name}: took theirs; your edit is dropped")),
                    (Choice::EditMerge, _) if matches!(what, ConflictOn::Policy(_)) => {
                        self.status.info(format!(
                            "{name}: yours are in place, theirs seen; saved after your next change of a value"
                        ))
                    }
                    (Choice::EditMerge, _) => self.status.info(format!(
                        "{name}: edit the merge (mine and theirs between markers); saved once valid"
                    )),
                }
                if let (Some(text), ConflictOn::RuleLogic(id)) = (merge, &what)
                    && let Some(i) = p.ws.page.rules.iter().position(|r| &r.id == id)
                {
                    p.focus = PaneId::Editor;
                    let follow =
                        crate::tui::editor::open_with_text(&mut p.editor, &mut p.ws, i, &text);
                    self.queue.extend(follow);
                }
                if choice == Choice::EditMerge && matches!(what, ConflictOn::Policy(_)) {
                    p.focus = PaneId::Policy;
                }
                if let (Some(text), ConflictOn::Assertion(id)) = (merge_for_assertion, &what) {
                    let mut state = crate::tui::json_dialog::State::new(
                        format!("Merge assertion {} (JSON)", crate::tui::theme::safe(id)),
                        &text,
                        Some(id.clone()),
                    );
                    state.base = Some(conflict.theirs.clone());
                    self.modal = Some(Modal::Json(Box::new(state)));
                }
                self.queue.push_back(Action::Changed(Changed::all()));
            }
            Err(e) => self.status.app_error(&e),
        }
        self.drain();
        self.ask_about_conflicts();
    }
}

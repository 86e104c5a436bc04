//! Work off the key thread and what comes back from it: the page's jobs (verdicts,
//! assertions), reading history and exporting, reopening a page whose linked file
//! changed, the watcher, changes made by other processes, and the timers of saves.

use std::time::{Duration, Instant};

use super::drafts::draft_label;
use crate::app::App;
use crate::app::jobs::{Jobs, Mode};
use crate::app::watch::{Reload, Watcher};
use crate::app::workspace::Session;
use crate::tui::action::{Action, Changed, JobDone, PaneId};
use crate::tui::modal::Modal;

use super::shell::*;

impl Ui {
    /// Hands the page to the background work when it changed since the last time.
    pub(super) fn sync_jobs(&mut self) {
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        let cells = p.ws.take_cell_edits();
        if let Some(jobs) = &mut self.jobs
            && jobs.sync_with(&p.ws.page, p.ws.revision, p.ws.stamps(), cells)
        {
            p.sources.pending = true;
            p.tests.pending = true;
            self.take_job_results();
        }
    }

    /// Results of the background work that arrived (stale ones are dropped).
    pub(super) fn take_job_results(&mut self) {
        let (Some(jobs), Screen::Page(_)) = (&mut self.jobs, &self.screen) else {
            return;
        };
        // Through the pump, as an event: the panes it is for take it.
        for result in jobs.poll() {
            self.profile_notes.push(result.describe());
            self.dispatch(Action::JobDone(JobDone(std::sync::Arc::new(result))));
        }
    }

    /// Reopens the page after its rows changed in the database: on a background thread
    /// with its own connection when the database file is known (the key thread never
    /// loads the page), else at once.
    pub(super) fn reopen(&mut self, what: String) {
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        match (&self.db, self.job_mode) {
            (Some(db), Mode::Background) => {
                self.reopens += 1;
                let number = self.reopens;
                let reply = Reply::new(self.background.0.clone(), Some(number));
                let (db, id) = (db.clone(), p.ws.page.id.clone());
                std::thread::spawn(move || {
                    let opened = App::open(&db).and_then(|app| Session::open(&app, &id));
                    reply.send(Came::Reopened(number, Box::new(opened)));
                });
                self.reopening = true;
                self.in_flight += 1;
                self.status.info(format!("{what} · opening it…"));
                self.pending_reopen_message = Some(what);
            }
            _ => {
                p.ws.set_editing(p.editor.editing());
                match p.ws.reload() {
                    Ok(()) => {
                        self.status.info(reopened_message(&what, &p.ws));
                        self.queue.push_back(Action::Changed(Changed::all()));
                        self.ask_about_orphans();
                        self.rewatch_if_links_changed();
                    }
                    Err(e) => self.status.app_error(&e),
                }
            }
        }
    }

    /// Once a second: when another process changed the open page, reopen it (drafts,
    /// tuned policy values and the selection are put back over the new state) and say so.
    pub(super) fn look_for_external_changes(&mut self, now: Instant) {
        if self
            .checked_at
            .is_some_and(|at| now.saturating_duration_since(at) < Duration::from_secs(1))
            || self.reopening
        {
            return;
        }
        self.checked_at = Some(now);
        let Screen::Page(p) = &self.screen else {
            return;
        };
        match p.ws.app().revision(&p.ws.page.id) {
            Ok(Some(stored)) if stored > p.ws.revision => {
                // "Kept" only when there were edits to keep (conflicts are said apart).
                let edits = p.ws.any_unsaved() || p.editor.is_invalid();
                self.reopen(format!(
                    "the page changed elsewhere (revision {stored}): reloaded{}",
                    if edits { ", your edits kept" } else { "" }
                ));
            }
            Ok(None) if !self.page_gone_asked && self.modal.is_none() => {
                // Removed or renamed elsewhere: within a second the person is offered
                // the page back (followed, or saved as it is here, edits included).
                self.page_gone_asked = true;
                let id = p.ws.page.id.clone();
                let safe = crate::tui::theme::safe;
                self.modal = Some(match p.ws.app().renamed_to(&id) {
                    Ok(Some(new)) => Modal::Confirm {
                        message: format!(
                            "Page `{}` was renamed to `{}` elsewhere. Follow it, with your edits? y/n (n: save it as you have it here under a new id)",
                            safe(&id),
                            safe(&new)
                        ),
                        on_yes: Action::FollowRename(new),
                        on_no: Some(Action::SaveAsPagePrompt),
                    },
                    _ => Modal::Confirm {
                        message: format!(
                            "Page `{}` was removed elsewhere. Save it as you have it here (your edits included)? y/n (n: let it go)",
                            safe(&id)
                        ),
                        on_yes: Action::SaveAsPagePrompt,
                        on_no: Some(Action::Pages),
                    },
                });
                self.status.error(format!(
                    "page `{}` is not there any more: nothing can be saved to it",
                    crate::tui::theme::safe(&id)
                ));
            }
            Ok(_) => {}
            Err(e) => self.status.app_error(&e),
        }
    }

    /// What came back on the background channel, as it comes in.
    pub(super) fn take_background(&mut self) {
        while let Ok(came) = self.background.1.try_recv() {
            self.in_flight = self.in_flight.saturating_sub(1);
            match came {
                // Only the latest reopen is taken in: an earlier one read an older state.
                Came::Reopened(number, opened) if number == self.reopens => {
                    self.take_reopened(*opened)
                }
                Came::Reopened(..) => {}
                Came::History(done) => self.history_done(done),
                Came::Lost { reopen } => {
                    if reopen == Some(self.reopens) {
                        self.reopening = false;
                    }
                    self.status
                        .error("work off the key thread ended without an answer".to_owned());
                }
            }
        }
    }

    /// A page reopened in the background: taken in, drafts and selection kept.
    fn take_reopened(&mut self, opened: Result<Session, crate::app::AppError>) {
        self.reopening = false;
        let what = self.pending_reopen_message.take().unwrap_or_default();
        if let Screen::Page(p) = &mut self.screen {
            match opened {
                Ok(fresh) if fresh.page.id == p.ws.page.id => {
                    let started = Instant::now();
                    p.ws.set_editing(p.editor.editing());
                    p.ws.adopt(fresh);
                    self.profile_notes.push(format!(
                        "reload=adopted ms={:.3}",
                        started.elapsed().as_secs_f64() * 1e3
                    ));
                    self.status.info(reopened_message(&what, &p.ws));
                    self.queue.push_back(Action::Changed(Changed::all()));
                    self.ask_about_orphans();
                    self.rewatch_if_links_changed();
                }
                Ok(_) => {}
                Err(e) => self.status.app_error(&e),
            }
        }
    }

    /// After the page was reopened: when the files it links (datasets' data files,
    /// tables of expected outcomes) are not those watched — linked or unlinked
    /// elsewhere — the watcher starts again on them.
    pub(super) fn rewatch_if_links_changed(&mut self) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        let id = p.ws.page.id.clone();
        let tables: Vec<std::path::PathBuf> =
            p.ws.page
                .expectations
                .iter()
                .map(|t| std::path::PathBuf::from(&t.file))
                .collect();
        let files = p.ws.app().linked_files(&id).unwrap_or_default();
        let watched = match &self.watcher {
            Some(w) => (w.files().to_vec(), w.tables().to_vec()),
            None => (Vec::new(), Vec::new()),
        };
        if watched == (files.clone(), tables.clone()) {
            return;
        }
        self.watcher = None;
        if let Some(db) = &self.db
            && (!files.is_empty() || !tables.is_empty())
        {
            match Watcher::start(db, &id) {
                Ok(w) => self.watcher = Some(w),
                Err(e) => self.status.app_error(&e),
            }
        }
    }

    /// Runs a step of the History dialog: on a connection of its own off the key thread
    /// (the workbench), or here (tests, scripts). `f` gets the page id and the selected
    /// source's key.
    pub(super) fn history_run(
        &mut self,
        f: impl FnOnce(&mut App, String, Option<String>) -> HistoryDone + Send + 'static,
    ) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        let page = p.ws.page.id.clone();
        let selection =
            p.ws.page
                .source
                .rows
                .get(p.ws.selection)
                .map(|r| p.ws.page.source.row_key(r));
        match (&self.db, self.job_mode) {
            (Some(db), Mode::Background) => {
                let reply = Reply::new(self.background.0.clone(), None);
                let db = db.clone();
                std::thread::spawn(move || {
                    let done = match App::open(&db) {
                        Ok(mut app) => f(&mut app, page, selection),
                        Err(e) => HistoryDone::Failed(e),
                    };
                    reply.send(Came::History(done));
                });
                self.in_flight += 1;
            }
            // Here and now (tests, scripts): its answer is taken at once, nothing else
            // from the channel in the middle of a key.
            _ => match self.app.reopen() {
                Ok(mut app) => self.history_done(f(&mut app, page, selection)),
                Err(e) => self.status.app_error(&e),
            },
        }
    }

    /// Loads the open page as it is now, off the key thread: what `*` marks moved from
    /// for the rest of the session.
    pub(super) fn load_opened(&mut self) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        // The revision it was opened at, whatever was saved since (the load may come
        // after the first saves).
        let revision = p.ws.opened_at();
        self.history_run(move |app, page, selection| {
            let loaded = crate::app::history::Baseline::load(app, &page, revision).map(|mut b| {
                if let Some(key) = &selection {
                    b.warm(key);
                }
                Box::new(b)
            });
            HistoryDone::Opened(page, loaded)
        });
    }

    /// One step of the walk through the open page's history (`u`, Ctrl-R), after the
    /// edits waiting to be saved are.
    pub(super) fn step_history(&mut self, step: crate::app::history::Step) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        if self.stepping {
            self.status
                .info("one step at a time: the last one is still under way");
            return;
        }
        let id = p.ws.page.id.clone();
        self.flush_saves();
        let walk = self
            .undo_walk
            .as_ref()
            .filter(|(page, _)| *page == id)
            .map(|(_, w)| *w);
        self.stepping = true;
        self.history_run(move |app, page, _| {
            let stepped = app.step_history(&page, walk, step);
            HistoryDone::Stepped(page, step, stepped)
        });
    }

    pub(super) fn history_done(&mut self, done: HistoryDone) {
        // The History dialog waiting for this revision of this page, if it is open.
        let waiting = |ui: &Ui, page: &str, revision: i64| {
            ui.on_page(page)
                && matches!(&ui.modal, Some(Modal::History(s))
                    if s.loading.is_some_and(|(r, _)| r == revision))
        };
        match done {
            HistoryDone::Failed(e) => {
                self.stepping = false;
                self.status.app_error(&e)
            }
            HistoryDone::Opened(page, loaded) if self.on_page(&page) => match loaded {
                Ok(baseline) => {
                    if let Screen::Page(p) = &mut self.screen {
                        p.ws.set_opened(*baseline);
                        self.queue.push_back(Action::Changed(Changed::OUTCOMES));
                    }
                }
                Err(e) => self.status.app_error(&e),
            },
            HistoryDone::Opened(..) => {}
            HistoryDone::Stepped(page, step, stepped) => {
                use crate::app::history::Step;
                self.stepping = false;
                match stepped {
                    Ok(Some(s)) => {
                        let what = format!(
                            "{} {} (revision {}; {})",
                            if step == Step::Undo { "undid" } else { "redid" },
                            crate::tui::theme::safe(&s.change),
                            s.revision,
                            if s.walk.at < s.walk.tip {
                                "u: further back, Ctrl-R: redo"
                            } else {
                                "u: undo again"
                            }
                        );
                        self.undo_walk = Some((page.clone(), s.walk));
                        if self.on_page(&page) {
                            self.reopen(what);
                        }
                    }
                    Ok(None) => self.status.info(if step == Step::Undo {
                        "nothing to undo: this is the oldest revision kept"
                    } else {
                        "nothing to redo"
                    }),
                    Err(e) => self.status.app_error(&e),
                }
            }
            HistoryDone::Detail(page, revision, _) if !waiting(self, &page, revision) => {}
            HistoryDone::Detail(_, _, Err(e)) => {
                if let Some(Modal::History(s)) = &mut self.modal {
                    s.loading = None;
                }
                self.status.app_error(&e);
            }
            HistoryDone::Detail(_, _, Ok(detail)) => {
                let selection = self
                    .page()
                    .and_then(|p| {
                        p.ws.page
                            .source
                            .rows
                            .get(p.ws.selection)
                            .map(|r| p.ws.page.source.row_label(r))
                    })
                    .unwrap_or_default();
                if let Some(Modal::History(s)) = &mut self.modal
                    && let Some(baseline) = s.loaded(*detail, &selection)
                {
                    self.modal = None;
                    self.compare_with(baseline);
                }
            }
            HistoryDone::Restored(page, what, Ok(Some(rev))) => {
                // Only the History dialog closes (never another dialog opened meanwhile),
                // and only the page it was for reloads.
                if matches!(self.modal, Some(Modal::History(_))) {
                    self.modal = None;
                }
                if self.on_page(&page) {
                    self.reopen(format!("{what} (revision {rev})"));
                } else {
                    self.status.info(format!(
                        "{what} on page {} (revision {rev})",
                        crate::tui::theme::safe(&page)
                    ));
                }
            }
            HistoryDone::Restored(_, what, Ok(None)) => {
                self.status
                    .info(format!("{what}: it is so already, nothing changed"));
            }
            HistoryDone::Restored(_, _, Err(e)) => self.status.app_error(&e),
            HistoryDone::Exported(what, Ok(format)) => {
                self.status.info(format!("{what}, {format})"));
            }
            HistoryDone::Exported(_, Err(e)) => self.status.app_error(&e),
            HistoryDone::Sql(Ok((what, copy))) => {
                self.status.info(what);
                if copy.is_some() {
                    self.clipboard = copy;
                }
            }
            HistoryDone::Sql(Err(e)) => self.status.app_error(&e),
        }
    }

    /// Marks in the matrix what moved since `baseline`'s revision.
    pub(super) fn compare_with(&mut self, baseline: crate::app::history::Baseline) {
        if let Screen::Page(p) = &mut self.screen {
            let rev = baseline.revision;
            p.ws.set_baseline(Some(baseline));
            if let Some((_, c)) = p.ws.comparison() {
                self.status.info(format!(
                    "comparing with revision {rev}: {} cells and {} verdicts moved for this source (* marks them; x stops)",
                    c.cells_moved, c.verdicts_moved
                ));
            }
            p.focus = PaneId::Matrix;
            self.queue.push_back(Action::Changed(Changed::OUTCOMES));
        }
    }

    /// Rules edited here were deleted elsewhere: ask whether to restore them with the
    /// edits made here (nothing is dropped without an answer).
    /// Starts the open page's background work and the watcher of its linked files
    /// (on opening it, and when its id changed: a rename followed, saved as a new page).
    pub(super) fn restart_watcher(&mut self) {
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        self.jobs = Some(Jobs::start(
            self.job_mode,
            &p.ws.page,
            p.ws.revision,
            p.ws.stamps(),
        ));
        p.sources.pending = true;
        p.tests.pending = true;
        self.watcher = None;
        let id = p.ws.page.id.clone();
        if let Some(db) = &self.db
            && (!p.ws.page.expectations.is_empty()
                || p.ws.app().linked_files(&id).is_ok_and(|f| !f.is_empty()))
        {
            match Watcher::start(db, &id) {
                Ok(w) => self.watcher = Some(w),
                Err(e) => self.status.app_error(&e),
            }
        }
        self.take_job_results();
    }

    /// Waits until the background work has caught up with the page (tests, benchmarks).
    pub fn settle(&mut self) {
        if let (Some(jobs), Screen::Page(_)) = (&mut self.jobs, &self.screen) {
            for result in jobs.settle(Duration::from_secs(60)) {
                self.dispatch(Action::JobDone(JobDone(std::sync::Arc::new(result))));
            }
        }
    }

    /// Whether background work is under way.
    pub fn busy(&self) -> bool {
        self.jobs.as_ref().is_some_and(Jobs::pending) || self.in_flight > 0
    }

    /// Saves every valid pending edit now.
    pub fn flush_saves(&mut self) {
        self.keep_view();
        if let Screen::Page(p) = &mut self.screen {
            if let Err(e) = p.ws.save_all() {
                self.status.app_error(&e);
            }
            p.ws.cancel_rule_save();
        }
        // What could not be saved (an invalid text, a conflict) is kept as a draft.
        self.keep_drafts(Instant::now(), true);
        if let Screen::Page(p) = &self.screen
            && p.ws.app().revision(&p.ws.page.id).ok().flatten().is_none()
            && (p.ws.any_unsaved() || p.editor.is_invalid())
        {
            self.exit_note = Some(format!(
                "page {} is not there any more (removed or renamed elsewhere): your unsaved edits on it are kept under its id, offered back if a page of that id is opened",
                crate::tui::theme::safe(&p.ws.page.id)
            ));
        } else if let Screen::Page(p) = &self.screen
            && !self.drafts_kept.is_empty()
        {
            let mut items: Vec<String> = self
                .drafts_kept
                .keys()
                .map(|(kind, item)| draft_label(*kind, item))
                .collect();
            items.sort();
            self.exit_note = Some(format!(
                "kept unsaved edits of page {} as drafts ({}): offered back when you open it",
                crate::tui::theme::safe(&p.ws.page.id),
                items.join(", ")
            ));
        }
    }

    /// Saves edits whose debounce has elapsed.
    pub fn tick(&mut self, now: Instant) {
        self.poll_watcher();
        self.take_background();
        self.look_for_external_changes(now);
        self.drain();
        self.take_job_results();
        if self.opened_pending && !self.busy() {
            self.opened_pending = false;
            self.load_opened();
        }
        if let Screen::Page(p) = &mut self.screen
            && p.ws.policies_due_at().is_some_and(|at| at <= now)
        {
            match p.ws.save_tuned_policies() {
                Ok(rev) => self
                    .status
                    .info(format!("saved the policies (revision {rev})")),
                Err(e) => self.status.app_error(&e),
            }
        }
        if let Screen::Page(p) = &mut self.screen {
            let started = Instant::now();
            if let Some((rule, saved)) = p.ws.save_rule_if_due(now) {
                self.profile_notes.push(format!(
                    "save=rule ms={:.3}",
                    started.elapsed().as_secs_f64() * 1e3
                ));
                match saved {
                    Ok(rev) => self.status.info(format!(
                        "saved rule {} (revision {rev})",
                        p.ws.page.rules[rule].id
                    )),
                    Err(e) => self.status.app_error(&e),
                }
            }
        }
        self.ask_about_conflicts();
        self.keep_drafts(now, false);
    }

    /// Whether linked dataset files are being watched.
    pub fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// Takes the watcher's events: a reload re-opens the page.
    pub(super) fn poll_watcher(&mut self) {
        let Some(w) = &self.watcher else { return };
        let events: Vec<Reload> = std::iter::from_fn(|| w.try_recv()).collect();
        for event in events {
            if !matches!(event, Reload::Progress { .. }) {
                self.reload_progress = None;
            }
            match event {
                Reload::Progress { side, fraction, .. } => {
                    self.reload_progress =
                        (fraction < 1.0).then(|| (format!("reloading {}", side.name()), fraction));
                }
                Reload::Reloaded {
                    side,
                    file,
                    revision,
                    ..
                } => {
                    self.linked_problem = None;
                    let what = format!(
                        "reloaded {} from {} (revision {revision})",
                        side.name(),
                        crate::tui::theme::safe(&file.display().to_string())
                    );
                    self.reopen(what);
                }
                Reload::Failed { side, message, .. } => {
                    self.status
                        .error(crate::tui::theme::safe(&message).replace('\n', " "));
                    self.linked_problem = Some(format!(
                        "the linked {} file is invalid; the last good rows stay",
                        side.name()
                    ));
                }
                Reload::Expectations { file } => {
                    // A linked table changed: the tests run again (they read it anew).
                    if let (Some(jobs), Screen::Page(p)) = (&mut self.jobs, &mut self.screen) {
                        jobs.submit(&p.ws.page, p.ws.revision, false);
                        p.tests.pending = true;
                        self.status.info(format!(
                            "{} changed: checking it again",
                            crate::tui::theme::safe(&file.display().to_string())
                        ));
                    }
                }
                Reload::Deleted { side, file } => {
                    let text = format!(
                        "{} file {} was deleted; the last good rows stay",
                        side.name(),
                        crate::tui::theme::safe(&file.display().to_string())
                    );
                    self.status.error(text.clone());
                    self.linked_problem = Some(text);
                }
            }
        }
        self.drain();
    }

    /// How long the event loop may sleep before `tick` has work.
    pub fn next_deadline(&self, now: Instant) -> Duration {
        let idle = if self.busy() {
            // Background results are on their way: look for them often.
            Duration::from_millis(15)
        } else if self.watcher.is_some() {
            Duration::from_millis(250)
        } else {
            Duration::from_millis(500)
        };
        self.page()
            .and_then(
                |p| match (p.ws.rule_save_due_at(), p.ws.policies_due_at()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                },
            )
            .map_or(idle, |at| at.saturating_duration_since(now).min(idle))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workbench() -> (tempfile::TempDir, Ui) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("bg.db");
        let app = App::open(&db).unwrap();
        let theme = crate::tui::theme::Theme::mono();
        let ui = Ui::workbench(app, Some("llm-chat-clients"), theme, Some(db)).unwrap();
        (dir, ui)
    }

    fn wait(ui: &mut Ui) {
        let started = Instant::now();
        while ui.in_flight > 0 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
            ui.take_background();
        }
        assert_eq!(ui.in_flight, 0, "every worker answered");
    }

    /// Two reopens under way at once: only the latest is taken in, once, with its
    /// message; the earlier one, which may come back last, is dropped.
    #[test]
    fn only_the_latest_reopen_is_taken_in() {
        let (_d, mut ui) = workbench();
        ui.reopen("first".into());
        ui.reopen("second".into());
        wait(&mut ui);
        assert!(!ui.reopening);
        let adopted = ui
            .profile_notes
            .iter()
            .filter(|n| n.starts_with("reload=adopted"))
            .count();
        assert_eq!(adopted, 1, "{:?}", ui.profile_notes);
        let (message, _) = ui.status.message.clone().unwrap();
        assert!(message.contains("second"), "{message}");
    }

    /// A worker that ends without an answer (a panic) still counts as answered: the
    /// workbench is not left busy for ever.
    #[test]
    fn a_worker_lost_is_answered_for() {
        let (_d, mut ui) = workbench();
        ui.history_run(|_, _, _| panic!("a worker that fails"));
        wait(&mut ui);
        assert!(!ui.busy() || ui.jobs.as_ref().is_some_and(Jobs::pending));
    }
}

//! The workbench state and its one update path: key → action → (queue) → panes / app.

mod conflicts;
mod drafts;
use drafts::draft_label;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, KeyEvent, KeyEventKind, MouseEventKind};
use ratatui_textarea::TextArea;

use super::action::{Action, Changed, PaneId};
use super::keymap::{self, Context};
use super::theme::Theme;
use super::{
    dataset_pane, editor, explain, matrix, overrides, picker, policy, rules, sources, tests_pane,
};
use crate::app::jobs::{JobResult, Jobs, Mode};
use crate::app::types::Side;
use crate::app::watch::{Reload, Watcher};
use crate::app::workspace::Session;
use crate::app::{App, AppError};

/// How long an edit waits before it is saved.
pub const SAVE_DEBOUNCE: Duration = Duration::from_millis(600);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// The status bar's message.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub message: Option<(String, Level)>,
}

impl Status {
    pub fn info(&mut self, m: impl Into<String>) {
        self.message = Some((m.into(), Level::Info));
    }

    pub fn error(&mut self, m: impl Into<String>) {
        self.message = Some((m.into(), Level::Error));
    }

    pub fn app_error(&mut self, e: &AppError) {
        self.error(e.to_string().replace('\n', " "));
    }
}

/// What a one-line prompt is for.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptFor {
    AddRule,
    SearchRules,
    FilterPages,
    /// The matrix's target filter.
    FilterTargets,
    /// The file to export the matrix to.
    ExportMatrix,
    /// The dialect (and file) to copy or export the page as SQL in.
    SqlPage,
    /// The Sources pane's filter.
    FilterSources,
    /// The note of an override about to be set on a target.
    OverrideNote {
        target: usize,
        value: bool,
    },
    /// A typed policy value for the policy pane's field.
    PolicyValue {
        field: usize,
    },
    /// The dataset pane's row search.
    SearchDataset,
    /// The id to save the open page under (it was removed or renamed elsewhere).
    SaveAsPage,
    /// `field=value` for a row of a dataset.
    DatasetCell {
        side: Side,
        row: usize,
    },
}

/// A dialog over the screen; it takes every key while open.
pub enum Modal {
    Help {
        scroll: u16,
    },
    Palette {
        query: String,
        selected: usize,
    },
    Confirm {
        message: String,
        on_yes: Action,
        /// What `n` or Esc does (else nothing).
        on_no: Option<Action>,
    },
    Prompt {
        title: String,
        input: Box<TextArea<'static>>,
        purpose: PromptFor,
    },
    RuleForm(rules::Form),
    History(Box<super::history::State>),
    /// The multi-line JSON dialog (assertions).
    Json(Box<super::json_dialog::State>),
    /// A value edited here was changed elsewhere: mine, theirs, the person's choice.
    Conflict(Box<super::conflict::State>),
}

/// What work off the key thread (the History dialog's, an export) brought, each
/// tagged with what it was for: a result for another page or an abandoned request is
/// not applied to what is on screen now.
enum HistoryDone {
    /// The matrix written to a file, and what the status line says of it.
    Exported(String, Result<crate::print::matrix::MatrixFormat, AppError>),
    /// A revision of a page (its id, the revision asked for) read against now.
    Detail(
        String,
        i64,
        Result<Box<crate::app::history::RevisionDetail>, AppError>,
    ),
    /// A restore on a page (its id): what, and its revision (`None`: nothing to do).
    Restored(String, String, Result<Option<i64>, AppError>),
    /// The page as SQL: what the status line says of it, and the query to copy (`None`
    /// when it was written to a file).
    Sql(Result<(String, Option<String>), AppError>),
    /// The work could not open the database.
    Failed(AppError),
}

/// The page screen.
pub struct PageUi {
    pub ws: Session,
    pub focus: PaneId,
    pub sources: sources::State,
    pub rules: rules::State,
    pub editor: editor::State,
    pub matrix: matrix::State,
    pub explain: explain::State,
    pub policy: policy::State,
    pub overrides: overrides::State,
    pub tests: tests_pane::State,
    pub dataset: dataset_pane::State,
    /// Which of Overrides and Dataset the wide layout shows (the last focused).
    pub shared: PaneId,
    /// The panes the last [`Action::Changed`] reached.
    pub reached: Vec<PaneId>,
    /// The focused pane takes the whole screen (`z`).
    pub zoom: bool,
}

pub enum Screen {
    Picker(picker::State),
    Page(Box<PageUi>),
}

/// What a pane's update may touch.
pub struct Ctx<'a> {
    pub ws: &'a mut Session,
    pub status: &'a mut Status,
    pub modal: &'a mut Option<Modal>,
    pub focus: &'a mut PaneId,
}

/// The whole workbench.
pub struct Ui {
    pub app: App,
    pub screen: Screen,
    pub modal: Option<Modal>,
    pub status: Status,
    pub theme: Theme,
    pub quit: bool,
    /// The last frame's render.
    pub last_render: Duration,
    /// The last frame whole: handling its events (keys, panes, saves) and rendering it
    /// (the status bar shows it).
    pub last_frame: Duration,
    /// What the last frame handled, for `--profile`.
    pub last_event: String,
    /// The status line shows the last frame's time (with `--profile`).
    pub show_timings: bool,
    /// A linked file that failed to load or was deleted: shown in the header until a
    /// good reload.
    pub linked_problem: Option<String>,
    /// Things that happened between frames (saves, background results), for `--profile`.
    pub profile_notes: Vec<String>,
    /// A linked file being reloaded: what, and how far (0.0–1.0), for the gauge.
    pub reload_progress: Option<(String, f64)>,
    queue: VecDeque<Action>,
    /// The database file, for the watcher of linked dataset files.
    db: Option<std::path::PathBuf>,
    /// Watches the open page's linked files.
    watcher: Option<Watcher>,
    /// Every source's verdict and the assertions, off the key thread.
    jobs: Option<Jobs>,
    /// A page being reopened on a background thread after its linked file changed.
    reopening: Option<std::sync::mpsc::Receiver<Result<Session, AppError>>>,
    /// What the status line says once the reopened page is in.
    pending_reopen_message: Option<String>,
    /// When the stored revision was last compared with the session's (changes made by
    /// other processes are looked for once a second).
    checked_at: Option<Instant>,
    job_mode: Mode,
    /// The History dialog's reading or restoring, off the key thread.
    history_jobs: Vec<std::sync::mpsc::Receiver<HistoryDone>>,
    /// Text to put on the terminal's clipboard (OSC 52) after the next frame.
    pub clipboard: Option<String>,
    /// The size of the last frame drawn (mouse clicks are placed in its layout).
    pub last_area: std::cell::Cell<ratatui::layout::Rect>,
    /// The drafts as last kept in the database (kind, item → text): written again only
    /// when they change, deleted when saved or let go.
    drafts_kept: std::collections::HashMap<(crate::app::DraftKind, String), String>,
    /// When drafts were last written (at most twice a second while typing).
    drafts_written_at: Option<Instant>,
    /// Drafts from an earlier session are offered and not answered yet: none is
    /// written or deleted meanwhile.
    drafts_offered: bool,
    /// Drafts cannot be kept here (a read-only database): not tried again.
    drafts_unavailable: bool,
    /// What to say on stderr once the terminal is restored (drafts kept on quitting).
    pub exit_note: Option<String>,
    /// The open page was found gone (removed or renamed elsewhere) and the person asked.
    page_gone_asked: bool,
    /// The conflict the person put off (Esc): not asked again until another comes.
    conflict_deferred: Option<(crate::app::ConflictOn, u64)>,
}

impl Ui {
    /// Opens on the picker, or on a page.
    pub fn new(app: App, page: Option<&str>, theme: Theme) -> Result<Ui, AppError> {
        Ui::with_db(app, page, theme, None)
    }

    /// Like [`Ui::new`]; knowing the database file, it watches the linked dataset files
    /// of an open page and reloads the page when they change.
    /// Background work (every source's verdict, the assertions) runs inline here: each
    /// key's effect is complete when `handle_key` returns (scripted use, tests).
    pub fn with_db(
        app: App,
        page: Option<&str>,
        theme: Theme,
        db: Option<std::path::PathBuf>,
    ) -> Result<Ui, AppError> {
        Self::build(app, page, theme, db, Mode::Inline)
    }

    /// The workbench proper: like [`Ui::with_db`], with the background work on a worker
    /// thread; the key thread never waits for it.
    pub fn workbench(
        app: App,
        page: Option<&str>,
        theme: Theme,
        db: Option<std::path::PathBuf>,
    ) -> Result<Ui, AppError> {
        Self::build(app, page, theme, db, Mode::Background)
    }

    fn build(
        app: App,
        page: Option<&str>,
        theme: Theme,
        db: Option<std::path::PathBuf>,
        job_mode: Mode,
    ) -> Result<Ui, AppError> {
        let mut ui = Ui {
            db,
            watcher: None,
            jobs: None,
            reopening: None,
            pending_reopen_message: None,
            checked_at: None,
            job_mode,
            history_jobs: Vec::new(),
            clipboard: None,
            last_area: std::cell::Cell::new(ratatui::layout::Rect::default()),
            screen: Screen::Picker(picker::State::new(&app)?),
            app,
            modal: None,
            status: Status::default(),
            theme,
            quit: false,
            last_render: Duration::ZERO,
            last_frame: Duration::ZERO,
            show_timings: false,
            linked_problem: None,
            last_event: String::new(),
            profile_notes: Vec::new(),
            reload_progress: None,
            conflict_deferred: None,
            page_gone_asked: false,
            drafts_kept: std::collections::HashMap::new(),
            drafts_written_at: None,
            drafts_offered: false,
            drafts_unavailable: false,
            exit_note: None,
            queue: VecDeque::new(),
        };
        if let Some(id) = page {
            ui.open_page(id)?;
        }
        Ok(ui)
    }

    fn open_page(&mut self, id: &str) -> Result<(), AppError> {
        let ws = Session::open(&self.app, id)?;
        let mut page = PageUi {
            sources: sources::State::new(),
            rules: rules::State::new(&ws),
            editor: editor::State::new(),
            matrix: matrix::State::default(),
            explain: explain::State::default(),
            policy: policy::State::default(),
            overrides: overrides::State::default(),
            tests: tests_pane::State::default(),
            dataset: dataset_pane::State::default(),
            shared: PaneId::Overrides,
            reached: Vec::new(),
            zoom: false,
            focus: PaneId::Rules,
            ws,
        };
        page.dataset.refresh(&page.ws);
        self.screen = Screen::Page(Box::new(page));
        self.status.info(format!("opened {id}"));
        self.restart_watcher();
        self.queue.push_back(Action::SourceSelected(0));
        if let Screen::Page(p) = &self.screen
            && !p.ws.page.rules.is_empty()
        {
            self.queue.push_back(Action::RuleSelected(0));
        }
        self.drain();
        self.drafts_kept.clear();
        self.drafts_offered = false;
        self.offer_drafts();
        Ok(())
    }

    pub fn page(&self) -> Option<&PageUi> {
        match &self.screen {
            Screen::Page(p) => Some(p),
            Screen::Picker(_) => None,
        }
    }

    pub fn page_mut(&mut self) -> Option<&mut PageUi> {
        match &mut self.screen {
            Screen::Page(p) => Some(p),
            Screen::Picker(_) => None,
        }
    }

    /// Whether any edit is waiting to be saved.
    pub fn unsaved(&self) -> bool {
        self.page()
            .is_some_and(|p| p.ws.any_unsaved() || p.editor.is_invalid())
    }

    /// A terminal event.
    pub fn handle_event(&mut self, event: Event) {
        self.last_event = match &event {
            Event::Key(k) => format!(
                "key:{:?}{}",
                k.code,
                if k.modifiers.is_empty() {
                    String::new()
                } else {
                    format!("+{:?}", k.modifiers)
                }
            ),
            Event::Mouse(m) => format!("mouse:{:?}", m.kind),
            Event::Resize(w, h) => format!("resize:{w}x{h}"),
            other => format!("{other:?}").chars().take(24).collect(),
        };
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollDown => self.dispatch(Action::Down),
                MouseEventKind::ScrollUp => self.dispatch(Action::Up),
                MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left) => {
                    self.click(m.column, m.row)
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// A left click (with `--mouse`): focuses the pane under it and, in the matrix,
    /// the rules list and the sources list, selects what is under it.
    pub fn click(&mut self, x: u16, y: u16) {
        if self.modal.is_some() {
            return;
        }
        let area = self.last_area.get();
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        if p.focus == PaneId::Editor && p.editor.active {
            return; // typing: a stray click must not leave the editor
        }
        let body = ratatui::layout::Rect::new(
            area.x,
            area.y + 1,
            area.width,
            area.height.saturating_sub(2),
        );
        let panes = if p.zoom {
            vec![(p.focus, body)]
        } else {
            super::view::layout_with(body, p.focus, p.shared)
        };
        let at = ratatui::layout::Position::new(x, y);
        let Some(&(pane, rect)) = panes.iter().find(|(_, r)| r.contains(at)) else {
            return;
        };
        let mut follow = vec![Action::Focus(pane)];
        // The row of a list under the click (lists keep their selection in sight,
        // scrolled no further than needed).
        let list_row = |selected: usize| -> Option<usize> {
            let height = rect.height.saturating_sub(2) as usize;
            let offset = selected.saturating_sub(height.saturating_sub(1));
            (y > rect.y && y < rect.bottom().saturating_sub(1))
                .then(|| offset + (y - rect.y - 1) as usize)
        };
        match pane {
            PaneId::Matrix => {
                let n = p.ws.page.target.rows.len();
                if let Some((rule, target)) = p.matrix.cell_at(&p.ws.page.rules, n, x, y) {
                    p.matrix.rule = rule;
                    p.matrix.target = target;
                    follow.extend([Action::RuleSelected(rule), Action::TargetSelected(target)]);
                }
            }
            PaneId::Rules => {
                if let Some(row) = list_row(p.rules.cursor)
                    && let Some(&rule) = p.rules.order.get(row)
                {
                    follow.push(Action::RuleSelected(rule));
                }
            }
            PaneId::Sources => {
                let listed = p.sources.listed(p.ws.page.source.rows.len());
                let pos = listed
                    .iter()
                    .position(|&s| s == p.sources.selected)
                    .unwrap_or(0);
                if let Some(row) = list_row(pos)
                    && let Some(&s) = listed.get(row)
                {
                    p.sources.selected = s;
                    p.ws.select(s);
                    follow.extend([
                        Action::SourceSelected(s),
                        Action::Changed(Changed::SELECTION),
                    ]);
                }
            }
            _ => {}
        }
        for a in follow {
            self.queue.push_back(a);
        }
        self.drain();
    }

    /// A key: the modal takes it, else the editor while typing, else the keymap.
    pub fn handle_key(&mut self, key: KeyEvent) {
        self.handle_key_inner(key);
        // A save the key made may have found a conflict: asked at once.
        self.ask_about_conflicts();
    }

    fn handle_key_inner(&mut self, key: KeyEvent) {
        use ratatui::crossterm::event::{KeyCode, KeyModifiers};
        // Ctrl-C quits from everywhere, dialogs and prompts included (valid edits are
        // saved, as help says).
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            // Unanswered, the question about rules deleted elsewhere keeps the edits:
            // they are restored before quitting (nothing is dropped without an answer).
            if let Some(Modal::Confirm {
                on_yes: Action::RestoreOrphans,
                ..
            }) = self.modal.take()
            {
                self.dispatch(Action::RestoreOrphans);
            }
            self.dispatch(Action::ForceQuit);
            return;
        }
        if self.modal.is_some() {
            self.modal_key(key);
            self.drain();
            return;
        }
        let editing = self
            .page()
            .is_some_and(|p| p.focus == PaneId::Editor && p.editor.active);
        if editing {
            match keymap::lookup(&key, &[Context::Editing]) {
                Some(a) => self.dispatch(a),
                None if key
                    == KeyEvent::new(
                        ratatui::crossterm::event::KeyCode::Char('c'),
                        ratatui::crossterm::event::KeyModifiers::CONTROL,
                    ) =>
                {
                    self.dispatch(Action::ForceQuit)
                }
                None => {
                    if let Some(p) = self.page_mut() {
                        let follow = editor::type_key(&mut p.editor, &mut p.ws, key);
                        self.queue.extend(follow);
                        self.drain();
                    }
                }
            }
            return;
        }
        let contexts: Vec<Context> = match &self.screen {
            Screen::Picker(_) => vec![Context::Picker, Context::Global],
            Screen::Page(p) => vec![Context::Pane(p.focus), Context::Page, Context::Global],
        };
        if let Some(action) = keymap::lookup(&key, &contexts) {
            self.dispatch(action);
        }
    }

    /// Runs an action and everything it leads to.
    pub fn dispatch(&mut self, action: Action) {
        self.queue.push_back(action);
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(action) = self.queue.pop_front() {
            self.update(action);
        }
        self.sync_jobs();
    }

    /// Hands the page to the background work when it changed since the last time.
    fn sync_jobs(&mut self) {
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        let cells = p.ws.take_cell_edits();
        if let Some(jobs) = &mut self.jobs
            && jobs.sync_with(&p.ws.page, p.ws.revision, p.ws.rows_stamp, cells)
        {
            p.sources.pending = true;
            p.tests.pending = true;
            self.take_job_results();
        }
    }

    /// Results of the background work that arrived (stale ones are dropped).
    fn take_job_results(&mut self) {
        let (Some(jobs), Screen::Page(p)) = (&mut self.jobs, &mut self.screen) else {
            return;
        };
        for result in jobs.poll() {
            self.profile_notes.push(result.describe());
            apply_job_result(p, result);
        }
    }

    /// Reopens the page after its rows changed in the database: on a background thread
    /// with its own connection when the database file is known (the key thread never
    /// loads the page), else at once.
    fn reopen(&mut self, what: String) {
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        match (&self.db, self.job_mode) {
            (Some(db), Mode::Background) => {
                let (tx, rx) = std::sync::mpsc::channel();
                let (db, id) = (db.clone(), p.ws.page.id.clone());
                std::thread::spawn(move || {
                    let opened = App::open(&db).and_then(|app| Session::open(&app, &id));
                    let _ = tx.send(opened);
                });
                self.reopening = Some(rx);
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
                    }
                    Err(e) => self.status.app_error(&e),
                }
            }
        }
    }

    /// Once a second: when another process changed the open page, reopen it (drafts,
    /// tuned policy values and the selection are put back over the new state) and say so.
    fn look_for_external_changes(&mut self, now: Instant) {
        if self
            .checked_at
            .is_some_and(|at| now.saturating_duration_since(at) < Duration::from_secs(1))
            || self.reopening.is_some()
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
                let safe = super::theme::safe;
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
                    super::theme::safe(&id)
                ));
            }
            Ok(_) => {}
            Err(e) => self.status.app_error(&e),
        }
    }

    /// A page reopened in the background: taken in, drafts and selection kept.
    fn take_reopened(&mut self) {
        let Some(rx) = &self.reopening else { return };
        let Ok(opened) = rx.try_recv() else { return };
        self.reopening = None;
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
                }
                Ok(_) => {}
                Err(e) => self.status.app_error(&e),
            }
        }
    }

    /// Runs a step of the History dialog: on a connection of its own off the key thread
    /// (the workbench), or here (tests, scripts). `f` gets the page id and the selected
    /// source's key.
    fn history_run(
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
        let (tx, rx) = std::sync::mpsc::channel();
        match (&self.db, self.job_mode) {
            (Some(db), Mode::Background) => {
                let db = db.clone();
                std::thread::spawn(move || {
                    let done = match App::open(&db) {
                        Ok(mut app) => f(&mut app, page, selection),
                        Err(e) => HistoryDone::Failed(e),
                    };
                    let _ = tx.send(done);
                });
            }
            _ => match self.app.reopen() {
                Ok(mut app) => {
                    let _ = tx.send(f(&mut app, page, selection));
                }
                Err(e) => self.status.app_error(&e),
            },
        }
        self.history_jobs.push(rx);
        self.take_history_job();
    }

    /// What the work off the key thread brought, as it comes in.
    fn take_history_job(&mut self) {
        let mut done = Vec::new();
        self.history_jobs.retain(|rx| match rx.try_recv() {
            Ok(d) => {
                done.push(d);
                false
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => true,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => false,
        });
        for d in done {
            self.history_done(d);
        }
    }

    fn on_page(&self, id: &str) -> bool {
        self.page().is_some_and(|p| p.ws.page.id == id)
    }

    fn history_done(&mut self, done: HistoryDone) {
        // The History dialog waiting for this revision of this page, if it is open.
        let waiting = |ui: &Ui, page: &str, revision: i64| {
            ui.on_page(page)
                && matches!(&ui.modal, Some(Modal::History(s))
                    if s.loading.is_some_and(|(r, _)| r == revision))
        };
        match done {
            HistoryDone::Failed(e) => self.status.app_error(&e),
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
                        super::theme::safe(&page)
                    ));
                }
            }
            HistoryDone::Restored(_, what, Ok(None)) => {
                self.status
                    .info(format!("{what}: it is so already, nothing changed"));
            }
            HistoryDone::Restored(_, _, Err(e)) => self.status.app_error(&e),
            HistoryDone::Exported(what, Ok(format)) => {
                self.status.info(format!("{what}, {format:?})"));
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

    /// Copies the page's query in a dialect to the clipboard, or writes it to a file
    /// (`DIALECT [FILE]`): compiled off the key thread from the stored page.
    fn sql_page(&mut self, text: &str) {
        use crate::app::types::Dialect;
        let mut words = text.split_whitespace();
        let Some(dialect) = words.next().and_then(Dialect::parse) else {
            self.status.error(format!(
                "`{}` is not a dialect: sqlite, duckdb, postgres or spark",
                super::theme::safe(text.trim())
            ));
            return;
        };
        let file: Option<std::path::PathBuf> = {
            let rest: Vec<&str> = words.collect();
            (!rest.is_empty()).then(|| rest.join(" ").into())
        };
        self.status
            .info(format!("compiling the page to {} SQL…", dialect.name()));
        self.history_run(move |app, page, _| {
            let mut request = crate::app::sql::SqlRequest::new(dialect);
            request.all = true;
            HistoryDone::Sql(app.sql_query(&page, &request).and_then(|query| {
                let lines = query.lines().count();
                match file {
                    Some(path) => {
                        app.export_file(&path, query.as_bytes())?;
                        Ok((
                            format!(
                                "exported the page as {} SQL to {} ({lines} lines; its data: rulebench sql {page} --dialect {} --data)",
                                dialect.name(),
                                super::theme::safe(&path.display().to_string()),
                                dialect.name()
                            ),
                            None,
                        ))
                    }
                    None => Ok((
                        format!(
                            "copied the page as {} SQL to the clipboard ({lines} lines, through the terminal: OSC 52)",
                            dialect.name()
                        ),
                        Some(query),
                    )),
                }
            }))
        });
    }

    /// Marks in the matrix what moved since `baseline`'s revision.
    fn compare_with(&mut self, baseline: crate::app::history::Baseline) {
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
    fn restart_watcher(&mut self) {
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        self.jobs = Some(Jobs::start(
            self.job_mode,
            &p.ws.page,
            p.ws.revision,
            p.ws.rows_stamp,
        ));
        p.sources.pending = true;
        p.tests.pending = true;
        self.watcher = None;
        let id = p.ws.page.id.clone();
        if let Some(db) = &self.db
            && p.ws.app().linked_files(&id).is_ok_and(|f| !f.is_empty())
        {
            match Watcher::start(db, &id) {
                Ok(w) => self.watcher = Some(w),
                Err(e) => self.status.app_error(&e),
            }
        }
        self.take_job_results();
    }

    fn ask_about_orphans(&mut self) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        let names: Vec<String> =
            p.ws.orphans()
                .iter()
                .map(|r| format!("`{}`", r.name))
                .collect();
        if names.is_empty() {
            return;
        }
        self.modal = Some(Modal::Confirm {
            message: format!(
                "{} {} {} deleted elsewhere while you edited {}. Restore {} with your edits? y/n",
                if names.len() == 1 { "Rule" } else { "Rules" },
                names.join(", "),
                if names.len() == 1 { "was" } else { "were" },
                if names.len() == 1 { "it" } else { "them" },
                if names.len() == 1 { "it" } else { "them" },
            ),
            on_yes: Action::RestoreOrphans,
            on_no: Some(Action::DropOrphans),
        });
    }

    /// Waits until the background work has caught up with the page (tests, benchmarks).
    pub fn settle(&mut self) {
        if let (Some(jobs), Screen::Page(p)) = (&mut self.jobs, &mut self.screen) {
            for result in jobs.settle(Duration::from_secs(60)) {
                apply_job_result(p, result);
            }
        }
    }

    /// Whether background work is under way.
    pub fn busy(&self) -> bool {
        self.jobs.as_ref().is_some_and(Jobs::pending)
            || self.reopening.is_some()
            || !self.history_jobs.is_empty()
    }

    fn update(&mut self, action: Action) {
        if matches!(
            action,
            Action::Up
                | Action::Down
                | Action::Left
                | Action::Right
                | Action::PageUp
                | Action::PageDown
        ) {
            // Moving on: the status line goes back to the selected cell's reason.
            self.status.message = None;
        }
        match action {
            Action::Help => {
                self.modal = Some(Modal::Help { scroll: 0 });
                return;
            }
            Action::Palette => {
                self.modal = Some(Modal::Palette {
                    query: String::new(),
                    selected: 0,
                });
                return;
            }
            Action::Quit => {
                if self.unsaved() {
                    self.modal = Some(Modal::Confirm {
                        message: "There are unsaved or invalid edits. Quit anyway? (valid edits are saved; the rest is kept as drafts, offered back next time) y/n".into(),
                        on_yes: Action::ForceQuit,
                        on_no: None,
                    });
                } else {
                    self.quit = true;
                }
                return;
            }
            Action::ForceQuit => {
                self.flush_saves();
                self.quit = true;
                return;
            }
            Action::SetCell {
                side,
                row,
                field,
                value,
            } => {
                if let Screen::Page(p) = &mut self.screen {
                    match p.ws.set_cell(side, row, &field, value) {
                        Ok(rev) => {
                            let d = p.ws.page.dataset(side);
                            let label = d.rows.get(row).map(|r| d.row_label(r)).unwrap_or_default();
                            self.status.info(format!(
                                "set {} of {} {} (revision {rev})",
                                super::theme::safe(&field),
                                side.name(),
                                super::theme::safe(&label)
                            ));
                            self.queue.push_back(Action::Changed(Changed::ROWS));
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
                return;
            }
            Action::ClearOverride(s, t) => {
                if let Screen::Page(p) = &mut self.screen {
                    match p.ws.clear_override_at(s, t) {
                        Ok(rev) => {
                            let page = &p.ws.page;
                            self.status.info(format!(
                                "cleared override {} × {} (revision {rev})",
                                super::theme::safe(&page.source.row_label(&page.source.rows[s])),
                                super::theme::safe(&page.target.row_label(&page.target.rows[t]))
                            ));
                            self.queue.push_back(Action::Changed(Changed::OVERRIDES));
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
                return;
            }
            Action::RestoreOrphans | Action::DropOrphans => {
                if let Screen::Page(p) = &mut self.screen {
                    if action == Action::DropOrphans {
                        p.editor.orphaned = None;
                        let gone = p.ws.drop_orphans();
                        self.status.info(format!(
                            "kept the deletion of {} rule(s) made elsewhere",
                            gone.len()
                        ));
                    } else {
                        match p.ws.restore_orphans() {
                            Ok(names) => {
                                self.status
                                    .info(format!("restored {} with your edits", names.join(", ")));
                                self.queue.push_back(Action::Changed(Changed::all()));
                                // The text being typed in the editor comes back with it
                                // (an edit that is not valid yet, too).
                                if let Some((id, text, infix)) = p.editor.orphaned.take()
                                    && let Some(i) = p.ws.page.rules.iter().position(|r| r.id == id)
                                {
                                    p.focus = PaneId::Editor;
                                    let follow = super::editor::open_with_text_as(
                                        &mut p.editor,
                                        &mut p.ws,
                                        i,
                                        &text,
                                        infix,
                                    );
                                    self.queue.extend(follow);
                                }
                            }
                            Err(e) => self.status.app_error(&e),
                        }
                    }
                }
                return;
            }
            Action::History => {
                if let Screen::Page(p) = &self.screen {
                    match p.ws.app().revisions(&p.ws.page.id) {
                        Ok(entries) => {
                            self.modal = Some(Modal::History(Box::new(super::history::State::new(
                                entries,
                            ))))
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
                return;
            }
            Action::ExportMatrix => {
                if let Screen::Page(p) = &self.screen {
                    let d = &p.ws.page.source;
                    let selection = d
                        .rows
                        .get(p.ws.selection)
                        .map(|r| crate::app::types::slugify(&d.row_label(r)))
                        .unwrap_or_default();
                    let name = format!("{}-{selection}.csv", p.ws.page.id);
                    let mut input = TextArea::default();
                    input.insert_str(&name);
                    self.modal = Some(Modal::Prompt {
                        title: "Export the matrix to (.csv .tsv .md .json, else a table) · Enter writes"
                            .into(),
                        input: Box::new(input),
                        purpose: PromptFor::ExportMatrix,
                    });
                }
                return;
            }
            Action::ExportTo(path) => {
                if let Screen::Page(p) = &self.screen {
                    // The result as shown is taken here; the file is written off the key
                    // thread (megabytes at 10,000 targets).
                    let result = p.ws.result();
                    let rules = p.ws.page.rules.clone();
                    let what = format!(
                        "exported the matrix of {} to {} ({} rules × {} targets",
                        super::theme::safe(&result.selection_key),
                        super::theme::safe(&path.display().to_string()),
                        rules.len(),
                        p.ws.page.target.rows.len()
                    );
                    self.status.info(format!(
                        "exporting to {}…",
                        super::theme::safe(&path.display().to_string())
                    ));
                    self.history_run(move |app, _, _| {
                        let format = crate::print::matrix::MatrixFormat::for_path(&path);
                        let mut bytes = Vec::new();
                        let written =
                            crate::print::matrix::write(&mut bytes, &result, &rules, format, true)
                                .map_err(|source| AppError::Io {
                                    path: path.display().to_string(),
                                    source,
                                })
                                .and_then(|()| app.export_file(&path, &bytes))
                                .map(|()| format);
                        HistoryDone::Exported(what, written)
                    });
                }
                return;
            }
            Action::SqlPage => {
                if let Screen::Page(_) = &self.screen {
                    let mut input = TextArea::default();
                    input.insert_str("duckdb");
                    self.modal = Some(Modal::Prompt {
                        title: format!(
                            "As SQL: DIALECT [FILE] ({})",
                            crate::app::types::Dialect::names("/")
                        ),
                        input: Box::new(input),
                        purpose: PromptFor::SqlPage,
                    });
                }
                return;
            }
            Action::Copy => {
                if let Screen::Page(p) = &self.screen {
                    let text = match p.focus {
                        PaneId::Matrix | PaneId::Explain => {
                            let mut text = p.explain.title.clone();
                            for line in &p.explain.lines {
                                text.push('\n');
                                text.extend(line.iter().map(|(_, s)| s.as_str()));
                            }
                            // What the panes show is escaped already; this is its text.
                            Some(("the explanation", crate::app::types::sanitize_lines(&text)))
                        }
                        PaneId::Rules | PaneId::Editor => {
                            // The rule under the cursor (a position in the listed
                            // rules), or the editor's.
                            let rule = if p.focus == PaneId::Editor {
                                Some(p.editor.rule)
                            } else {
                                p.rules.selected()
                            };
                            rule.and_then(|i| p.ws.page.rules.get(i))
                                .and_then(|r| serde_json::to_string_pretty(r).ok())
                                // The same JSON, with every character a terminal could
                                // act on written as an escape (the clipboard is pasted
                                // into terminals and editors).
                                .map(|j| {
                                    (
                                        "the rule's JSON",
                                        crate::app::types::json_safe(&j).into_owned(),
                                    )
                                })
                        }
                        _ => None,
                    };
                    match text {
                        Some((what, text)) => {
                            self.status.info(format!(
                                "copied {what} to the clipboard ({} bytes, through the terminal: OSC 52)",
                                text.len()
                            ));
                            self.clipboard = Some(text);
                        }
                        None => self.status.info(
                            "nothing to copy here: y copies in Matrix, Explanation, Rules and the editor",
                        ),
                    }
                }
                return;
            }
            Action::RerunTests => {
                if let (Some(jobs), Screen::Page(p)) = (&mut self.jobs, &mut self.screen) {
                    jobs.submit(&p.ws.page, p.ws.revision, false);
                    p.tests.pending = true;
                    self.status.info(format!(
                        "running {} assertions again",
                        p.ws.page.assertions.len()
                    ));
                    self.take_job_results();
                }
                return;
            }
            Action::StopComparing => {
                if let Screen::Page(p) = &mut self.screen
                    && let Some((rev, _)) = p.ws.comparison()
                {
                    p.ws.set_baseline(None);
                    self.status.info(format!(
                        "stopped comparing with revision {rev}: * marks changes since save again"
                    ));
                    self.queue.push_back(Action::Changed(Changed::OUTCOMES));
                }
                return;
            }
            Action::OpenPage(id) => {
                if let Err(e) = self.open_page(&id) {
                    self.status.app_error(&e);
                }
                return;
            }
            Action::RestoreDrafts => {
                self.restore_drafts();
                return;
            }
            Action::DiscardDrafts => {
                self.drafts_offered = false;
                if let Screen::Page(p) = &self.screen {
                    match p.ws.app().forget_drafts(&p.ws.page.id) {
                        Ok(()) => self
                            .status
                            .info("let the unsaved edits of an earlier session go"),
                        Err(e) => self.status.app_error(&e),
                    }
                }
                self.drafts_kept.clear();
                return;
            }
            Action::FollowRename(new) => {
                if let Screen::Page(p) = &mut self.screen {
                    // Followed, the edits that could not be saved meanwhile are saved
                    // there (a conflict is asked as usual).
                    match p.ws.follow_rename(&new).and_then(|()| p.ws.save_all()) {
                        Ok(()) => {
                            p.editor.saved();
                            self.page_gone_asked = false;
                            self.status.info(reopened_message(
                                &format!(
                                    "followed the page to `{}`: reloaded, your edits kept",
                                    super::theme::safe(&new)
                                ),
                                &p.ws,
                            ));
                            self.queue.push_back(Action::Changed(Changed::all()));
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
                self.restart_watcher();
                return;
            }
            Action::SaveAsPagePrompt => {
                if let Screen::Page(p) = &self.screen {
                    let id = &p.ws.page.id;
                    let mut input = TextArea::default();
                    // Removed: offered back under its own id; renamed: beside it.
                    let taken = p.ws.app().revision(id).ok().flatten().is_some()
                        || p.ws.app().renamed_to(id).ok().flatten().is_some();
                    input.insert_str(if taken {
                        format!("{id}-mine")
                    } else {
                        id.clone()
                    });
                    self.modal = Some(Modal::Prompt {
                        title: "Save this page as (a new page id)".into(),
                        input: Box::new(input),
                        purpose: PromptFor::SaveAsPage,
                    });
                }
                return;
            }
            Action::Pages => {
                if self
                    .page()
                    .is_some_and(|p| p.ws.app().revision(&p.ws.page.id).ok().flatten().is_none())
                {
                    // The page is gone: nothing to save it to.
                    self.watcher = None;
                    self.page_gone_asked = false;
                    match picker::State::new(&self.app) {
                        Ok(s) => self.screen = Screen::Picker(s),
                        Err(e) => self.status.app_error(&e),
                    }
                    return;
                }
                self.flush_saves();
                self.watcher = None;
                match picker::State::new(&self.app) {
                    Ok(s) => self.screen = Screen::Picker(s),
                    Err(e) => self.status.app_error(&e),
                }
                return;
            }
            _ => {}
        }
        let follow = match &mut self.screen {
            Screen::Picker(state) => picker::update(state, &action, &mut self.modal),
            Screen::Page(page) => route(page, &mut self.status, &mut self.modal, action),
        };
        self.queue.extend(follow);
    }

    /// Saves every valid pending edit now.
    pub fn flush_saves(&mut self) {
        if let Screen::Page(p) = &mut self.screen {
            if let Err(e) = p.ws.save_all() {
                self.status.app_error(&e);
            }
            p.editor.saved();
        }
        // What could not be saved (an invalid text, a conflict) is kept as a draft.
        self.keep_drafts(Instant::now(), true);
        if let Screen::Page(p) = &self.screen
            && p.ws.app().revision(&p.ws.page.id).ok().flatten().is_none()
            && (p.ws.any_unsaved() || p.editor.is_invalid())
        {
            self.exit_note = Some(format!(
                "page {} is not there any more (removed or renamed elsewhere): your unsaved edits on it are kept under its id, offered back if a page of that id is opened",
                super::theme::safe(&p.ws.page.id)
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
                super::theme::safe(&p.ws.page.id),
                items.join(", ")
            ));
        }
    }

    /// Saves edits whose debounce has elapsed.
    pub fn tick(&mut self, now: Instant) {
        self.poll_watcher();
        self.take_reopened();
        self.take_history_job();
        self.look_for_external_changes(now);
        self.drain();
        self.take_job_results();
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
        if let Screen::Page(p) = &mut self.screen
            && p.editor.save_due(now)
        {
            let rule = p.editor.rule;
            let started = Instant::now();
            let saved = p.ws.save_rule(rule);
            self.profile_notes.push(format!(
                "save=rule ms={:.3}",
                started.elapsed().as_secs_f64() * 1e3
            ));
            match saved {
                Ok(rev) => {
                    p.editor.saved();
                    self.status.info(format!(
                        "saved rule {} (revision {rev})",
                        p.ws.page.rules[rule].id
                    ));
                }
                Err(e) => {
                    p.editor.saved();
                    self.status.app_error(&e);
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
    fn poll_watcher(&mut self) {
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
                        super::theme::safe(&file.display().to_string())
                    );
                    self.reopen(what);
                }
                Reload::Failed { side, message, .. } => {
                    self.status
                        .error(super::theme::safe(&message).replace('\n', " "));
                    self.linked_problem = Some(format!(
                        "the linked {} file is invalid; the last good rows stay",
                        side.name()
                    ));
                }
                Reload::Deleted { side, file } => {
                    let text = format!(
                        "{} file {} was deleted; the last good rows stay",
                        side.name(),
                        super::theme::safe(&file.display().to_string())
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
            .and_then(|p| match (p.editor.due_at(), p.ws.policies_due_at()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            })
            .map_or(idle, |at| at.saturating_duration_since(now).min(idle))
    }

    fn modal_key(&mut self, key: KeyEvent) {
        use ratatui::crossterm::event::KeyCode as K;
        let Some(modal) = self.modal.take() else {
            return;
        };
        // A Ctrl- or Alt- chord is not a character to type into the palette or answer a
        // question with (Ctrl-U used to type `u`); prompts' text areas read chords
        // themselves.
        let chord = key.modifiers.intersects(
            ratatui::crossterm::event::KeyModifiers::CONTROL
                | ratatui::crossterm::event::KeyModifiers::ALT,
        ) && matches!(key.code, K::Char(_));
        if chord
            && !matches!(
                modal,
                Modal::Prompt { .. } | Modal::RuleForm(_) | Modal::Json(_)
            )
        {
            self.modal = Some(modal);
            return;
        }
        use keymap::Dialog as D;
        let action = |d: D| keymap::lookup(&key, &[Context::Dialog(d)]);
        match modal {
            Modal::Help { scroll } => {
                let end = keymap::help_height().saturating_sub(5);
                let to = |s: u16| Some(Modal::Help { scroll: s.min(end) });
                match action(D::Help) {
                    Some(Action::Down) => self.modal = to(scroll + 1),
                    Some(Action::Up) => self.modal = to(scroll.saturating_sub(1)),
                    Some(Action::PageDown) => self.modal = to(scroll + 10),
                    Some(Action::PageUp) => self.modal = to(scroll.saturating_sub(10)),
                    Some(Action::Home) => self.modal = to(0),
                    Some(Action::End) => self.modal = to(end),
                    _ => {}
                }
            }
            Modal::Palette {
                mut query,
                mut selected,
            } => {
                let entries = super::palette::entries(&query);
                match (action(D::Palette), key.code) {
                    (Some(Action::Back), _) => {}
                    (Some(Action::Enter), _) => {
                        if let Some(e) = entries.get(selected) {
                            // Run the entry in its own pane, not the focused one.
                            if let Some(pane) = e.pane {
                                self.queue.push_back(Action::Focus(pane));
                            }
                            self.queue.push_back(e.action.clone());
                        }
                    }
                    (Some(Action::Up), _) => {
                        selected = selected.saturating_sub(1);
                        self.modal = Some(Modal::Palette { query, selected });
                    }
                    (Some(Action::Down), _) => {
                        selected = (selected + 1).min(entries.len().saturating_sub(1));
                        self.modal = Some(Modal::Palette { query, selected });
                    }
                    (Some(Action::DeleteBack), _) => {
                        query.pop();
                        self.modal = Some(Modal::Palette { query, selected: 0 });
                    }
                    (_, K::Char(c)) => {
                        query.push(c);
                        self.modal = Some(Modal::Palette { query, selected: 0 });
                    }
                    _ => self.modal = Some(Modal::Palette { query, selected }),
                }
            }
            Modal::Confirm {
                message,
                on_yes,
                on_no,
            } => match action(D::Confirm) {
                Some(Action::Answer(true)) => self.queue.push_back(on_yes),
                Some(Action::Answer(false)) => self.queue.extend(on_no),
                _ => {
                    self.modal = Some(Modal::Confirm {
                        message,
                        on_yes,
                        on_no,
                    })
                }
            },
            Modal::Prompt {
                title,
                mut input,
                purpose,
            } => match action(D::Prompt) {
                Some(Action::Back) => {
                    if purpose == PromptFor::SearchRules {
                        self.queue.push_back(Action::SearchRules(String::new()));
                    }
                    if purpose == PromptFor::FilterTargets {
                        self.queue.push_back(Action::FilterTargets(String::new()));
                    }
                    if purpose == PromptFor::FilterSources {
                        self.queue
                            .push_back(Action::FilterSources(String::new(), false));
                    }
                    if purpose == PromptFor::FilterPages {
                        self.queue.push_back(Action::FilterPages(String::new()));
                    }
                    if purpose == PromptFor::SearchDataset
                        && let Screen::Page(p) = &mut self.screen
                    {
                        p.dataset.search(&p.ws, "");
                    }
                }
                Some(Action::Enter) => self.prompt_done(purpose, input.lines().join("")),
                _ => {
                    input.input(key);
                    let text = input.lines().join("");
                    // Searches update as you type.
                    match purpose {
                        PromptFor::SearchRules => self.queue.push_back(Action::SearchRules(text)),
                        PromptFor::FilterTargets => {
                            self.queue.push_back(Action::FilterTargets(text))
                        }
                        PromptFor::FilterSources => {
                            self.queue.push_back(Action::FilterSources(text, false))
                        }
                        PromptFor::FilterPages => self.queue.push_back(Action::FilterPages(text)),
                        PromptFor::SearchDataset => {
                            if let Screen::Page(p) = &mut self.screen {
                                p.dataset.search(&p.ws, &text);
                            }
                        }
                        _ => {}
                    }
                    self.modal = Some(Modal::Prompt {
                        title,
                        input,
                        purpose,
                    });
                }
            },
            Modal::History(mut state) => {
                let Some(action) =
                    keymap::lookup(&key, &[Context::Dialog(keymap::Dialog::History)])
                else {
                    self.modal = Some(Modal::History(state));
                    return;
                };
                use super::history::Outcome;
                match state.key(&action) {
                    Outcome::Stay => self.modal = Some(Modal::History(state)),
                    Outcome::Close => {}
                    Outcome::StopComparing => self.queue.push_back(Action::StopComparing),
                    Outcome::Compare(baseline) => self.compare_with(*baseline),
                    Outcome::Load { revision, .. } => {
                        self.modal = Some(Modal::History(state));
                        self.history_run(move |app, page, selection| {
                            let detail = app
                                .revision_detail(&page, revision, selection.as_deref())
                                .map(Box::new);
                            HistoryDone::Detail(page, revision, detail)
                        });
                    }
                    Outcome::Restore { revision, item } => {
                        self.flush_saves();
                        let what = format!(
                            "restored {} from revision {revision}",
                            super::theme::safe(&item.label())
                        );
                        self.status.info(format!("{what}…"));
                        self.history_run(move |app, page, _| {
                            let done = app.restore(&page, revision, &item);
                            HistoryDone::Restored(page, what, done)
                        });
                    }
                }
            }
            Modal::Conflict(mut state) => match action(D::Conflict) {
                Some(Action::Resolve(choice)) => {
                    self.resolve_conflict(choice, state.conflict.what.clone())
                }
                Some(Action::Down) => {
                    state.scroll = state.scroll.saturating_add(1);
                    self.modal = Some(Modal::Conflict(state));
                }
                Some(Action::Up) => {
                    state.scroll = state.scroll.saturating_sub(1);
                    self.modal = Some(Modal::Conflict(state));
                }
                Some(Action::Back) => {
                    self.status.info(format!(
                        "{}: decided later; nothing is saved over theirs meanwhile",
                        state.conflict.what.describe()
                    ));
                    let raised = self.page().map_or(0, |p| p.ws.conflicts_raised());
                    self.conflict_deferred = Some((state.conflict.what.clone(), raised));
                }
                _ => self.modal = Some(Modal::Conflict(state)),
            },
            Modal::Json(mut state) => {
                if state.confirm_discard {
                    match key.code {
                        K::Char('y') | K::Char('Y') => {
                            self.status.info("dropped the edited assertion");
                        }
                        K::Char('n') | K::Char('N') | K::Esc => {
                            state.confirm_discard = false;
                            self.modal = Some(Modal::Json(state));
                        }
                        _ => self.modal = Some(Modal::Json(state)),
                    }
                    return;
                }
                match keymap::lookup(&key, &[Context::Dialog(keymap::Dialog::Json)]) {
                    Some(Action::Back) => {
                        if state.edited() {
                            state.confirm_discard = true;
                            self.modal = Some(Modal::Json(state));
                        }
                    }
                    Some(Action::SaveNow) => {
                        let Screen::Page(p) = &mut self.screen else {
                            return;
                        };
                        let mut ctx = Ctx {
                            ws: &mut p.ws,
                            status: &mut self.status,
                            modal: &mut self.modal,
                            focus: &mut p.focus,
                        };
                        match tests_pane::save_typed(
                            &mut ctx,
                            &state.text(),
                            state.replacing.clone(),
                            state.base.as_ref(),
                        ) {
                            Ok(follow) => self.queue.extend(follow),
                            Err(problems) => {
                                self.status.error(format!(
                                    "assertion not saved: {} problem(s), shown in the dialog",
                                    problems.len()
                                ));
                                state.problems = problems;
                                self.modal = Some(Modal::Json(state));
                            }
                        }
                    }
                    _ => {
                        state.textarea.input(key);
                        self.modal = Some(Modal::Json(state));
                    }
                }
            }
            Modal::RuleForm(mut form) => {
                if let Screen::Page(p) = &mut self.screen {
                    match rules::form_key(&mut form, action(D::RuleForm), key, p, &mut self.status)
                    {
                        rules::FormResult::Open => self.modal = Some(Modal::RuleForm(form)),
                        rules::FormResult::Closed(follow) => self.queue.extend(follow),
                    }
                }
            }
        }
    }

    fn prompt_done(&mut self, purpose: PromptFor, text: String) {
        match purpose {
            PromptFor::SaveAsPage => {
                if let Screen::Page(p) = &mut self.screen {
                    match p.ws.save_as_page(text.trim()) {
                        Ok(rev) => {
                            self.page_gone_asked = false;
                            self.status.info(format!(
                                "saved the page as `{}` (revision {rev}), your edits included",
                                super::theme::safe(text.trim())
                            ));
                            self.queue.push_back(Action::Changed(Changed::all()));
                        }
                        Err(e) => {
                            self.status.app_error(&e);
                            // Asked again: the edits are still here.
                            self.queue.push_back(Action::SaveAsPagePrompt);
                        }
                    }
                }
                self.restart_watcher();
            }
            PromptFor::SearchRules => self.queue.push_back(Action::SearchRules(text)),
            PromptFor::FilterTargets => self.queue.push_back(Action::FilterTargets(text)),
            PromptFor::ExportMatrix => {
                let path = std::path::PathBuf::from(text.trim());
                if text.trim().is_empty() {
                    self.status.error("no file named: nothing exported");
                } else if path.exists() {
                    self.modal = Some(Modal::Confirm {
                        message: format!(
                            "{} exists. Overwrite it? y/n",
                            super::theme::safe(&path.display().to_string())
                        ),
                        on_yes: Action::ExportTo(path),
                        on_no: None,
                    });
                } else {
                    self.queue.push_back(Action::ExportTo(path));
                }
            }
            PromptFor::SqlPage => self.sql_page(&text),
            PromptFor::FilterSources => self.queue.push_back(Action::FilterSources(text, true)),
            PromptFor::FilterPages => self.queue.push_back(Action::FilterPages(text)),
            PromptFor::SearchDataset => {
                if let Screen::Page(p) = &mut self.screen {
                    p.dataset.search(&p.ws, &text);
                }
            }
            PromptFor::DatasetCell { side, row } => {
                if let Screen::Page(p) = &mut self.screen {
                    let (field, value) = match dataset_pane::parse_cell(&text) {
                        Ok(cell) => cell,
                        Err(message) => {
                            self.status.error(super::theme::safe(&message));
                            return;
                        }
                    };
                    let d = p.ws.page.dataset(side);
                    let known = d.rows.iter().any(|r| r.contains_key(&field))
                        || d.defaults.contains_key(&field);
                    let action = Action::SetCell {
                        side,
                        row,
                        field: field.clone(),
                        value,
                    };
                    if known {
                        self.queue.push_back(action);
                    } else {
                        // A typo (`needVision`) would silently make a new field: asked.
                        let names = d.field_names();
                        let hint = crate::app::types::did_you_mean(
                            &field,
                            names.iter().map(String::as_str),
                        )
                        .map(|s| format!(" Did you mean `{s}`?"))
                        .unwrap_or_default();
                        self.modal = Some(Modal::Confirm {
                            message: format!(
                                "No {} row has a field `{field}`.{hint} Create it? y/n",
                                side.name()
                            ),
                            on_yes: action,
                            on_no: None,
                        });
                    }
                }
            }
            PromptFor::AddRule => {
                if let Screen::Page(p) = &mut self.screen {
                    let name = if text.trim().is_empty() {
                        "New rule".to_owned()
                    } else {
                        text.trim().to_owned()
                    };
                    match p.ws.add_rule(&name) {
                        Ok(i) => {
                            self.status.info(format!(
                                "added rule {} (revision {})",
                                p.ws.page.rules[i].id, p.ws.revision
                            ));
                            self.queue.extend([
                                Action::Changed(Changed::RULES),
                                Action::RuleSelected(i),
                                Action::Focus(PaneId::Editor),
                                Action::EditRule,
                            ]);
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
            }
            PromptFor::OverrideNote { target, value } => {
                if let Screen::Page(p) = &mut self.screen {
                    let note = (!text.trim().is_empty()).then(|| text.trim().to_owned());
                    match p.ws.set_override(target, Some((value, note))) {
                        Ok(rev) => {
                            self.status.info(format!("override set (revision {rev})"));
                            self.queue.push_back(Action::Changed(Changed::OVERRIDES));
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
            }
            PromptFor::PolicyValue { field } => {
                if let Screen::Page(p) = &mut self.screen {
                    let mut ctx = Ctx {
                        ws: &mut p.ws,
                        status: &mut self.status,
                        modal: &mut self.modal,
                        focus: &mut p.focus,
                    };
                    let follow = policy::set_typed(&mut p.policy, &mut ctx, field, &text);
                    self.queue.extend(follow);
                }
            }
        }
    }
}

/// What the status line says once a page changed elsewhere is reopened: never "your
/// edits kept" when one of them was changed there too (the conflict dialog asks).
fn reopened_message(what: &str, ws: &Session) -> String {
    match ws.conflicts() {
        [] => what.to_owned(),
        conflicts => format!(
            "{}; changed there too: {} (choose: m mine, t theirs, e merge)",
            what.split(": reloaded")
                .next()
                .unwrap_or(what)
                .trim_end_matches(", your edits kept"),
            conflicts
                .iter()
                .map(|c| c.what.describe())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn apply_job_result(p: &mut PageUi, result: JobResult) {
    match result {
        JobResult::Verdicts {
            verdicts, constant, ..
        } => {
            p.sources.set_verdicts(verdicts);
            if p.ws.constant != constant {
                // The explanation shows the rule's lint, this included.
                p.ws.constant = constant;
                p.explain.refresh(&p.ws);
            }
        }
        JobResult::Tests { report, .. } => p.tests.set_report(report),
    }
}

fn route(
    page: &mut PageUi,
    status: &mut Status,
    modal: &mut Option<Modal>,
    action: Action,
) -> Vec<Action> {
    match action {
        Action::FocusNext | Action::FocusPrev => {
            page.focus = if action == Action::FocusNext {
                page.focus.next()
            } else {
                page.focus.prev()
            };
            if matches!(page.focus, PaneId::Overrides | PaneId::Dataset) {
                page.shared = page.focus;
            }
            return vec![];
        }
        Action::Focus(p) => {
            page.focus = p;
            if matches!(p, PaneId::Overrides | PaneId::Dataset) {
                page.shared = p;
            }
            return vec![];
        }
        Action::Zoom => {
            page.zoom = !page.zoom;
            status.info(if page.zoom {
                format!(
                    "zoomed: {} fills the screen (z again: back)",
                    page.focus.title()
                )
            } else {
                "every pane again".to_owned()
            });
            return vec![];
        }
        _ => {}
    }
    if matches!(page.focus, PaneId::Overrides | PaneId::Dataset) {
        page.shared = page.focus;
    }
    let PageUi {
        ws,
        focus,
        sources,
        rules,
        editor,
        matrix,
        explain,
        policy,
        overrides,
        tests,
        dataset,
        shared: _,
        reached,
        zoom: _,
    } = page;
    let mut ctx = Ctx {
        ws,
        status,
        modal,
        focus,
    };
    let mut follow = Vec::new();
    if action.is_event() {
        // A change reaches only the panes that show what changed.
        let hears = |pane: PaneId| match &action {
            Action::Changed(c) => pane.concerns().intersects(*c),
            _ => true,
        };
        if let Action::Changed(_) = &action {
            *reached = PaneId::ALL.into_iter().filter(|&p| hears(p)).collect();
        }
        if hears(PaneId::Sources) {
            follow.extend(sources::update(sources, &mut ctx, &action));
        }
        if hears(PaneId::Rules) {
            follow.extend(rules::update(rules, &mut ctx, &action));
        }
        if hears(PaneId::Editor) {
            follow.extend(editor::update(editor, &mut ctx, &action));
        }
        if hears(PaneId::Matrix) {
            follow.extend(matrix::update(matrix, &mut ctx, &action));
        }
        if hears(PaneId::Explain) {
            follow.extend(explain::update(explain, &mut ctx, &action));
        }
        if hears(PaneId::Policy) {
            follow.extend(policy::update(policy, &mut ctx, &action));
        }
        if hears(PaneId::Overrides) {
            follow.extend(overrides::update(overrides, &mut ctx, &action));
        }
        if hears(PaneId::Tests) {
            follow.extend(tests_pane::update(tests, &mut ctx, &action));
        }
        if hears(PaneId::Dataset) {
            follow.extend(dataset_pane::update(dataset, &mut ctx, &action));
        }
    } else {
        let target = *ctx.focus;
        follow.extend(match target {
            PaneId::Sources => sources::update(sources, &mut ctx, &action),
            PaneId::Rules => rules::update(rules, &mut ctx, &action),
            PaneId::Editor => editor::update(editor, &mut ctx, &action),
            PaneId::Matrix => matrix::update(matrix, &mut ctx, &action),
            PaneId::Explain => explain::update(explain, &mut ctx, &action),
            PaneId::Policy => policy::update(policy, &mut ctx, &action),
            PaneId::Overrides => overrides::update(overrides, &mut ctx, &action),
            PaneId::Tests => tests_pane::update(tests, &mut ctx, &action),
            PaneId::Dataset => dataset_pane::update(dataset, &mut ctx, &action),
        });
    }
    follow
}

//! The workbench's shell: the screen (picker or page), the page's panes in one list,
//! and the one path every key, click and action takes (key → action → queue → pump →
//! panes and use cases).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, KeyEvent, KeyEventKind, MouseEventKind};

use crate::app::jobs::{Jobs, Mode};
use crate::app::watch::Watcher;
use crate::app::workspace::Session;
use crate::app::{App, AppError};
use crate::tui::action::{Action, Changed, PaneId};
use crate::tui::keymap::{self, Context};
use crate::tui::modal::{Modal, PromptFor};
use crate::tui::pane::{Ctx, Look, Pane, Status};
use crate::tui::theme::Theme;
use crate::tui::{
    dataset_pane, editor, explain, matrix, overrides, picker, policy, rules, sources, tests_pane,
};

/// What came back on the background channel.
pub(super) enum Came {
    /// The open page, read again on a connection of its own, for the reopen of this
    /// number (only the latest is taken in).
    Reopened(u64, Box<Result<Session, AppError>>),
    /// A step of the History dialog, an export or a compiled query.
    History(HistoryDone),
    /// A worker ended without an answer (it panicked): what it was for is given up.
    Lost {
        /// The number of the reopen it was, if one.
        reopen: Option<u64>,
    },
}

/// The end of the background channel a worker answers on: whatever happens to the
/// worker, exactly one answer arrives (a lost one when it ends without sending), so the
/// count of work under way never sticks.
pub(super) struct Reply {
    tx: Option<std::sync::mpsc::Sender<Came>>,
    reopen: Option<u64>,
}

impl Reply {
    pub(super) fn new(tx: std::sync::mpsc::Sender<Came>, reopen: Option<u64>) -> Reply {
        Reply {
            tx: Some(tx),
            reopen,
        }
    }

    pub(super) fn send(mut self, came: Came) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(came);
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Came::Lost {
                reopen: self.reopen,
            });
        }
    }
}

/// What work off the key thread (the History dialog's, an export) brought, each
/// tagged with what it was for: a result for another page or an abandoned request is
/// not applied to what is on screen now.
pub(super) enum HistoryDone {
    /// The matrix written to a file, and what the status line says of it.
    Exported(String, Result<&'static str, AppError>),
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
    /// A step of the undo walk on a page (its id).
    Stepped(
        String,
        crate::app::history::Step,
        Result<Option<crate::app::history::Stepped>, AppError>,
    ),
    /// The page (its id) as it was opened, at its revision, to compare with.
    Opened(String, Result<Box<crate::app::history::Baseline>, AppError>),
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

impl PageUi {
    /// The panes, in the order events reach them.
    pub fn panes(&self) -> [&dyn Pane; PaneId::COUNT] {
        [
            &self.sources,
            &self.rules,
            &self.editor,
            &self.matrix,
            &self.explain,
            &self.policy,
            &self.overrides,
            &self.tests,
            &self.dataset,
        ]
    }

    /// The session, the focus, the panes an event reached and the panes, borrowed
    /// apart: the pump hands the session to each pane in turn.
    pub fn split(
        &mut self,
    ) -> (
        &mut Session,
        &mut PaneId,
        &mut Vec<PaneId>,
        [&mut dyn Pane; PaneId::COUNT],
    ) {
        (
            &mut self.ws,
            &mut self.focus,
            &mut self.reached,
            [
                &mut self.sources,
                &mut self.rules,
                &mut self.editor,
                &mut self.matrix,
                &mut self.explain,
                &mut self.policy,
                &mut self.overrides,
                &mut self.tests,
                &mut self.dataset,
            ],
        )
    }

    /// What a pane's render sees.
    pub fn look<'a>(&'a self, theme: &'a Theme, focused: bool) -> Look<'a> {
        Look {
            ws: &self.ws,
            theme,
            focused,
            draft_invalid: self.editor.is_invalid(),
        }
    }
}

pub enum Screen {
    Picker(picker::State),
    Page(Box<PageUi>),
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
    pub(super) queue: VecDeque<Action>,
    /// The database file, for the watcher of linked dataset files.
    pub(super) db: Option<std::path::PathBuf>,
    /// Watches the open page's linked files.
    pub(super) watcher: Option<Watcher>,
    /// Every source's verdict and the assertions, off the key thread.
    pub(super) jobs: Option<Jobs>,
    /// A page is being reopened on a background thread (its linked file changed, or
    /// another process changed it).
    pub(super) reopening: bool,
    /// The number of the latest reopen: an earlier one that comes back after it is
    /// dropped (the latest reads the newer state).
    pub(super) reopens: u64,
    /// What the status line says once the reopened page is in.
    pub(super) pending_reopen_message: Option<String>,
    /// When the stored revision was last compared with the session's (changes made by
    /// other processes are looked for once a second).
    pub(super) checked_at: Option<Instant>,
    pub(super) job_mode: Mode,
    /// The one channel the workbench's own work off the key thread (a reopened page,
    /// the History dialog's reading and restoring, an export) comes back on, and how
    /// many are under way. The page's jobs (verdicts, assertions) are `jobs`.
    pub(super) background: (
        std::sync::mpsc::Sender<Came>,
        std::sync::mpsc::Receiver<Came>,
    ),
    pub(super) in_flight: usize,
    /// Text to put on the terminal's clipboard (OSC 52) after the next frame.
    pub clipboard: Option<String>,
    /// The size of the last frame drawn (mouse clicks are placed in its layout).
    pub last_area: std::cell::Cell<ratatui::layout::Rect>,
    /// The drafts as last kept in the database (kind, item → text): written again only
    /// when they change, deleted when saved or let go.
    pub(super) drafts_kept: std::collections::HashMap<(crate::app::DraftKind, String), String>,
    /// When drafts were last written (at most twice a second while typing).
    pub(super) drafts_written_at: Option<Instant>,
    /// Drafts from an earlier session are offered and not answered yet: none is
    /// written or deleted meanwhile.
    pub(super) drafts_offered: bool,
    /// Drafts cannot be kept here (a read-only database): not tried again.
    pub(super) drafts_unavailable: bool,
    /// What to say on stderr once the terminal is restored (drafts kept on quitting).
    pub exit_note: Option<String>,
    /// The open page was found gone (removed or renamed elsewhere) and the person asked.
    pub(super) page_gone_asked: bool,
    /// The conflict the person put off (Esc): not asked again until another comes.
    pub(super) conflict_deferred: Option<(crate::app::ConflictOn, u64)>,
    /// The last find (`/`) entered: what `n` / `N` look for in the focused pane.
    pub find: String,
    /// The page as opened is yet to be loaded (once the first background work is done).
    pub(super) opened_pending: bool,
    /// A step of the undo walk is under way (the next waits for it: two at once would
    /// start from the same revision).
    pub(super) stepping: bool,
    /// The walk through the open page's history that `u` / Ctrl-R take (the page's id
    /// and where it stands).
    pub(super) undo_walk: Option<(String, crate::app::history::UndoWalk)>,
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

    pub(super) fn build(
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
            reopening: false,
            reopens: 0,
            pending_reopen_message: None,
            checked_at: None,
            job_mode,
            background: std::sync::mpsc::channel(),
            in_flight: 0,
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
            find: String::new(),
            undo_walk: None,
            opened_pending: false,
            stepping: false,
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

    pub(super) fn open_page(&mut self, id: &str) -> Result<(), AppError> {
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
        // The page as opened, for the marks: at once here (tests, scripts); in the
        // workbench once the first results are in, so that its loading does not
        // compete with the first frame (until then the last save, which is the
        // opening, is compared with).
        if self.job_mode == Mode::Background {
            self.opened_pending = true;
        } else {
            self.load_opened();
        }
        self.queue.push_back(Action::SourceSelected(0));
        if let Screen::Page(p) = &self.screen
            && !p.ws.page.rules.is_empty()
        {
            self.queue.push_back(Action::RuleSelected(0));
        }
        self.drain();
        // How the page was shown last time, back (the selection, the panes' views).
        self.restore_view();
        self.drafts_kept.clear();
        self.drafts_offered = false;
        self.offer_drafts();
        Ok(())
    }

    /// What the palette needs to know of where it opens.
    pub fn palette_facts(&self) -> crate::tui::palette::Facts {
        use crate::tui::palette::Facts;
        match &self.screen {
            Screen::Picker(s) => Facts {
                picker: Some(
                    s.pages
                        .iter()
                        .map(|p| (p.id.clone(), p.name.clone()))
                        .collect(),
                ),
                read_only: self.app.is_read_only(),
                ..Facts::default()
            },
            Screen::Page(p) => Facts {
                picker: None,
                rules: p.ws.page.rules.len(),
                sources: p.ws.page.source.rows.len(),
                targets: p.ws.page.target.rows.len(),
                comparing: p.ws.chosen_comparison().is_some(),
                moved: p.ws.comparison().map_or(0, |(_, c)| c.cells_moved),
                found: !self.find.trim().is_empty(),
                redo: self.undo_walk.as_ref().is_some_and(|(id, w)| {
                    *id == p.ws.page.id && w.at < w.tip && w.made == p.ws.revision
                }),
                read_only: p.ws.app().is_read_only(),
            },
        }
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
                MouseEventKind::ScrollDown => self.wheel(m.column, m.row, Action::Down),
                MouseEventKind::ScrollUp => self.wheel(m.column, m.row, Action::Up),
                MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left) => {
                    self.click(m.column, m.row)
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// The pane drawn at (x, y) in the last frame's layout, and its area.
    fn pane_at(&self, x: u16, y: u16) -> Option<(PaneId, ratatui::layout::Rect)> {
        let area = self.last_area.get();
        let p = self.page()?;
        let body = ratatui::layout::Rect::new(
            area.x,
            area.y + 1,
            area.width,
            area.height.saturating_sub(2),
        );
        let panes = if p.zoom {
            vec![(p.focus, body)]
        } else {
            crate::tui::layout::layout_with(body, p.focus, p.shared)
        };
        let at = ratatui::layout::Position::new(x, y);
        panes.into_iter().find(|(_, r)| r.contains(at))
    }

    /// The wheel (with `--mouse`) moves in the pane under the pointer, focused or not
    /// (it moved in the focused pane wherever the pointer was); the focus stays.
    pub fn wheel(&mut self, x: u16, y: u16, action: Action) {
        if self.modal.is_some() {
            self.dispatch(action);
            return;
        }
        let Some((pane, _)) = self.pane_at(x, y) else {
            return;
        };
        let Screen::Page(p) = &mut self.screen else {
            self.dispatch(action);
            return;
        };
        if p.focus == PaneId::Editor && p.editor.active || pane == p.focus {
            self.dispatch(action);
            return;
        }
        let focus = p.focus;
        p.focus = pane;
        self.dispatch(action);
        if let Screen::Page(p) = &mut self.screen {
            p.focus = focus;
        }
    }

    /// A left click (with `--mouse`): focuses the pane under it and, in the matrix,
    /// the rules list and the sources list, selects what is under it.
    pub fn click(&mut self, x: u16, y: u16) {
        if self.modal.is_some() {
            return;
        }
        let Some((pane, rect)) = self.pane_at(x, y) else {
            return;
        };
        let Screen::Page(p) = &mut self.screen else {
            return;
        };
        if p.focus == PaneId::Editor && p.editor.active {
            return; // typing: a stray click must not leave the editor
        }
        let mut follow = vec![Action::Focus(pane)];
        // The row of a list under the click (lists keep their selection in sight,
        // scrolled no further than needed).
        // `header`: rows above the list inside the border (Rules has a header row).
        let list_row = |selected: usize, header: u16| -> Option<usize> {
            let top = rect.y + 1 + header;
            let height = rect.height.saturating_sub(2 + header) as usize;
            let offset = selected.saturating_sub(height.saturating_sub(1));
            (y >= top && y < rect.bottom().saturating_sub(1)).then(|| offset + (y - top) as usize)
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
                if let Some(row) = list_row(p.rules.cursor, 1)
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
                if let Some(row) = list_row(pos, 0)
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

    pub(super) fn handle_key_inner(&mut self, key: KeyEvent) {
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
            // A command of the editor, else a key typed into its text: both through
            // the pump to the focused pane.
            self.dispatch(keymap::lookup(&key, &[Context::Editing]).unwrap_or(Action::Typed(key)));
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

    pub(super) fn drain(&mut self) {
        while let Some(action) = self.queue.pop_front() {
            self.update(action);
        }
        self.sync_jobs();
    }

    pub(super) fn on_page(&self, id: &str) -> bool {
        self.page().is_some_and(|p| p.ws.page.id == id)
    }

    pub(super) fn update(&mut self, action: Action) {
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
                self.modal = Some(Modal::Help {
                    scroll: 0,
                    query: None,
                });
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
                                crate::tui::theme::safe(&field),
                                side.name(),
                                crate::tui::theme::safe(&label)
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
                                crate::tui::theme::safe(
                                    &page.source.row_label(&page.source.rows[s])
                                ),
                                crate::tui::theme::safe(
                                    &page.target.row_label(&page.target.rows[t])
                                )
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
                                    let follow = crate::tui::editor::open_with_text_as(
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
            Action::UndoChange | Action::RedoChange => {
                let step = if action == Action::UndoChange {
                    crate::app::history::Step::Undo
                } else {
                    crate::app::history::Step::Redo
                };
                self.step_history(step);
                return;
            }
            Action::Find => {
                if let Screen::Page(p) = &self.screen
                    && !p.focus.finds()
                {
                    self.status.info(format!(
                        "nothing to find in {}: / finds in Sources, Rules, Matrix, Tests, Overrides and Dataset",
                        p.focus.title()
                    ));
                    return;
                }
                self.modal = Some(Modal::Prompt {
                    title:
                        "Find (the best match is selected as you type; n / N then walk the matches)"
                            .into(),
                    input: Box::new(crate::tui::widgets::prefilled(&self.find)),
                    purpose: PromptFor::Find,
                });
                return;
            }
            Action::FindNext(forward) => {
                if self.find.trim().is_empty() {
                    self.status.info("nothing to find yet: / finds");
                } else {
                    self.queue
                        .push_back(Action::FindFrom(self.find.clone(), forward));
                }
                return;
            }
            Action::History => {
                if let Screen::Page(p) = &self.screen {
                    match p.ws.app().revisions(&p.ws.page.id) {
                        Ok(entries) => {
                            self.modal = Some(Modal::History(Box::new(
                                crate::tui::history::State::new(entries),
                            )))
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
                        .map(|r| crate::app::text::slugify(&d.row_label(r)))
                        .unwrap_or_default();
                    let name = format!("{}-{selection}.csv", p.ws.page.id);
                    let input = crate::tui::widgets::prefilled(&name);
                    self.modal = Some(Modal::Prompt {
                        title: "Export the view to (.csv .tsv .jsonl .parquet: a row per target; .md .json, else a table: the grid) · Enter writes"
                            .into(),
                        input: Box::new(input),
                        purpose: PromptFor::ExportMatrix,
                    });
                }
                return;
            }
            Action::ExportTo(path) => {
                if let Screen::Page(p) = &self.screen {
                    // The view as shown is taken here (its targets filtered and sorted,
                    // its rules without the folded categories); the file is written off
                    // the key thread (megabytes at 10,000 targets).
                    let (result, rules, labels) = view_of(p);
                    let targets = result.target_count();
                    // Where it goes, said whole.
                    let path = std::path::absolute(&path).unwrap_or(path);
                    let what = format!(
                        "exported the view of {} to {} ({} rules × {} targets",
                        crate::tui::theme::safe(&result.selection_key),
                        crate::tui::theme::safe(&path.display().to_string()),
                        rules.len(),
                        targets
                    );
                    self.status.info(format!(
                        "exporting to {}…",
                        crate::tui::theme::safe(&path.display().to_string())
                    ));
                    let transposed = self.page().is_some_and(|p| p.matrix.transposed);
                    self.history_run(move |app, _, _| {
                        let mut bytes = Vec::new();
                        let written = crate::print::view::write(
                            &mut bytes, &result, &rules, labels, &path, transposed,
                        )
                        .map_err(|source| AppError::Io {
                            path: path.display().to_string(),
                            source,
                        })
                        .and_then(|format| app.export_file(&path, &bytes).map(|()| format));
                        HistoryDone::Exported(what, written)
                    });
                }
                return;
            }
            Action::CopyView => {
                if let Screen::Page(p) = &self.screen {
                    let (result, rules, labels) = view_of(p);
                    let mut bytes = Vec::new();
                    match crate::print::view::tsv(&mut bytes, &result, labels) {
                        Ok(()) => {
                            // Cells escaped as everything else a terminal receives; the
                            // tabs and line breaks between them kept (they make cells).
                            let text = String::from_utf8_lossy(&bytes)
                                .split('\n')
                                .map(|line| {
                                    line.split('\t')
                                        .map(crate::app::text::sanitize)
                                        .collect::<Vec<_>>()
                                        .join("\t")
                                })
                                .collect::<Vec<_>>()
                                .join("\n");
                            self.status.info(format!(
                                "copied the view ({} targets × {} rules) as TSV to the clipboard ({} bytes, through the terminal: OSC 52)",
                                result.target_count(),
                                rules.len(),
                                text.len()
                            ));
                            self.clipboard = Some(text);
                        }
                        Err(e) => self.status.error(format!("copying the view: {e}")),
                    }
                }
                return;
            }
            Action::SqlPage => {
                if let Screen::Page(_) = &self.screen {
                    let input = crate::tui::widgets::prefilled("duckdb");
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
                            Some(("the explanation", crate::app::text::sanitize_lines(&text)))
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
                                        crate::app::text::json_safe(&j).into_owned(),
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
                    && let Some((rev, _)) = p.ws.chosen_comparison()
                {
                    p.ws.set_baseline(None);
                    self.status.info(format!(
                        "stopped comparing with revision {rev}: * marks what moved since the page was opened again"
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
                            p.ws.cancel_rule_save();
                            self.page_gone_asked = false;
                            self.status.info(reopened_message(
                                &format!(
                                    "followed the page to `{}`: reloaded, your edits kept",
                                    crate::tui::theme::safe(&new)
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
                    // Removed: offered back under its own id; renamed: beside it.
                    let taken = p.ws.app().revision(id).ok().flatten().is_some()
                        || p.ws.app().renamed_to(id).ok().flatten().is_some();
                    let input = crate::tui::widgets::prefilled(&if taken {
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
            Screen::Picker(state) => {
                picker::update(state, &action, &mut self.modal, &mut self.status)
            }
            Screen::Page(page) => route(page, &mut self.status, &mut self.modal, action),
        };
        self.queue.extend(follow);
    }
}

pub(super) fn route(
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
            if page.focus.shares_slot() {
                page.shared = page.focus;
            }
            return vec![];
        }
        Action::Focus(p) => {
            page.focus = p;
            if p.shares_slot() {
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
    if page.focus.shares_slot() {
        page.shared = page.focus;
    }
    let (ws, focus, reached, panes) = page.split();
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
        for pane in panes {
            if hears(pane.id()) {
                follow.extend(pane.update(&mut ctx, &action));
            }
        }
    } else {
        // A key's action reaches the focused pane alone.
        let target = *ctx.focus;
        if let Some(pane) = panes.into_iter().find(|p| p.id() == target) {
            follow.extend(pane.update(&mut ctx, &action));
        }
    }
    follow
}

/// What the status line says once a page changed elsewhere is reopened: never "your
/// edits kept" when one of them was changed there too (the conflict dialog asks).
pub(super) fn reopened_message(what: &str, ws: &Session) -> String {
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

/// What the matrix's view shows (`E`, `Y`): the result cut to its targets (in its
/// order) and rules (without the folded categories), those rules, and the source rows'
/// labels (the rows name their selection).
fn view_of(
    p: &PageUi,
) -> (
    crate::app::types::SelectionResult,
    Vec<crate::app::types::Rule>,
    std::sync::Arc<Vec<String>>,
) {
    let (targets, rules) = p.matrix.view(&p.ws.page.rules, p.ws.page.target.rows.len());
    let result = p.ws.result().view(&targets, &rules);
    let source = &p.ws.page.source;
    let labels = source.rows.iter().map(|r| source.row_label(r)).collect();
    (
        result,
        rules.iter().map(|&r| p.ws.page.rules[r].clone()).collect(),
        std::sync::Arc::new(labels),
    )
}

//! What a pane is and what it may touch: the [`Pane`] trait every pane implements, the
//! context an update gets ([`Ctx`]), what a render sees ([`Look`]) and the status line.
//! A leaf below every pane: it imports none.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::action::{Action, PaneId};
use super::modal::Modal;
use super::theme::Theme;
use crate::app::AppError;
use crate::app::workspace::Session;

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

/// What a pane's update may touch.
pub struct Ctx<'a> {
    pub ws: &'a mut Session,
    pub status: &'a mut Status,
    pub modal: &'a mut Option<Modal>,
    pub focus: &'a mut PaneId,
}

/// What a pane's render sees: the session, the theme, whether it has the focus, and
/// what another pane shows that changes how it draws.
pub struct Look<'a> {
    pub ws: &'a Session,
    pub theme: &'a Theme,
    pub focused: bool,
    /// The rule being edited does not validate: the matrix dims its cells.
    pub draft_invalid: bool,
}

/// A pane of the page screen. The page holds its panes in one list and one pump drives
/// them: an event reaches every pane that listens to it ([`PaneId::concerns`]), a key
/// reaches the focused one, and what a pane returns goes back through the pump.
pub trait Pane {
    /// Which pane this is (its number, title and what it listens to).
    fn id(&self) -> PaneId;
    /// Handles an action; returns the actions it leads to.
    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action>;
    /// Draws the pane in `area`.
    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>);
}

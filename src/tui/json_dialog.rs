//! The JSON dialog: a multi-line editor (the rule editor's text area) for an assertion.
//! Ctrl-S saves; an invalid text keeps the dialog open with the problem shown under
//! it (the line quoted, a caret under the column, the hint); Esc asks before dropping
//! edited text.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};
use ratatui_textarea::TextArea;

use super::theme::Theme;
use crate::app::types::Diagnostic;

pub struct State {
    pub title: String,
    pub textarea: TextArea<'static>,
    /// The assertion being replaced (its id), or `None` for a new one.
    pub replacing: Option<String>,
    /// The stored assertion the edit started from (as JSON): saved only over it.
    pub base: Option<serde_json::Value>,
    /// The problems of the last save, as the panel shows them.
    pub problems: Vec<Diagnostic>,
    /// Esc was pressed on edited text: the dialog asks before dropping it.
    pub confirm_discard: bool,
    original: String,
}

impl State {
    /// A dialog on `json` (shown pretty-printed when it parses).
    pub fn new(title: String, json: &str, replacing: Option<String>) -> State {
        let text = serde_json::from_str::<serde_json::Value>(json)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| json.to_owned());
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let original = lines.join("\n");
        let mut textarea = TextArea::new(lines);
        textarea.move_cursor(ratatui_textarea::CursorMove::Top);
        State {
            title,
            textarea,
            replacing,
            base: None,
            problems: Vec::new(),
            confirm_discard: false,
            original,
        }
    }

    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Counts the text as edited (a draft put back: Esc asks before dropping it).
    pub fn mark_edited(&mut self) {
        self.original = String::new();
    }

    /// Whether the text differs from what the dialog opened with.
    pub fn edited(&self) -> bool {
        self.text() != self.original
    }
}

pub fn render(frame: &mut Frame, area: Rect, s: &State, t: &Theme) {
    let rect = super::widgets::centered(
        area,
        area.width.saturating_sub(6).clamp(40, 100),
        area.height.saturating_sub(2).clamp(8, 30),
    );
    frame.render_widget(Clear, rect);
    let block = super::widgets::pane_block(
        &format!(
            "{} · Ctrl-S saves · Esc cancels",
            super::theme::safe(&s.title)
        ),
        t,
        true,
    );
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let mut panel: Vec<Line> = if s.confirm_discard {
        vec![Line::styled(
            "Drop the edited text? y drops it, n keeps editing",
            t.warn(),
        )]
    } else {
        super::widgets::diagnostic_lines(&s.problems, s.textarea.lines(), inner.width as usize)
            .into_iter()
            .map(|(dim, l)| Line::styled(l, if dim { t.dim() } else { t.fail() }))
            .collect()
    };
    let room = inner.height.saturating_sub(3) as usize;
    panel.truncate(room);
    let [text_area, panel_area] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(super::widgets::rows(panel.len())),
    ])
    .areas(inner);
    frame.render_widget(&s.textarea, text_area);
    frame.render_widget(Paragraph::new(panel), panel_area);
}

//! Sources pane: choose the selection; each source shows its selection verdict.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState};

use super::action::{Action, Changed};
use super::theme::{Theme, safe, verdict_glyph};
use super::ui::{Ctx, PageUi};
use super::view::pane_block;
use crate::app::workspace::Session;

#[derive(Debug, Default)]
pub struct State {
    pub selected: usize,
    /// Selection verdict of every source row (from the background work; the
    /// selection's own is kept live).
    pub verdicts: Vec<u8>,
    /// The background work has not caught up with the last change yet.
    pub pending: bool,
}

impl State {
    pub fn new() -> Self {
        Self::default()
    }

    /// The selection's verdict follows every edit at once; the others arrive from the
    /// background work ([`State::set_verdicts`]).
    pub fn refresh(&mut self, ws: &Session) {
        if let Some(v) = self.verdicts.get_mut(ws.selection) {
            *v = ws.eval.selection_verdict;
        }
    }

    /// Every source's verdict, computed in the background.
    pub fn set_verdicts(&mut self, verdicts: Vec<u8>) {
        self.verdicts = verdicts;
        self.pending = false;
    }
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let n = ctx.ws.page.source.rows.len();
    let moved = match action {
        Action::Up => state.selected.checked_sub(1),
        Action::Down => (state.selected + 1 < n).then_some(state.selected + 1),
        Action::PageUp => Some(state.selected.saturating_sub(10)),
        Action::PageDown => Some((state.selected + 10).min(n.saturating_sub(1))),
        Action::Home => Some(0),
        Action::End => Some(n.saturating_sub(1)),
        Action::Changed(_) => {
            state.refresh(ctx.ws);
            None
        }
        Action::SourceSelected(s) => {
            state.selected = *s;
            None
        }
        _ => None,
    };
    match moved {
        Some(s) if s != state.selected || ctx.ws.selection != s => {
            state.selected = s;
            ctx.ws.select(s);
            vec![
                Action::SourceSelected(s),
                Action::Changed(Changed::SELECTION),
            ]
        }
        _ => vec![],
    }
}

pub fn render(frame: &mut Frame, area: Rect, page: &PageUi, theme: &Theme, focused: bool) {
    let d = &page.ws.page.source;
    let items: Vec<ListItem> = d
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let v = page.sources.verdicts.get(i).copied().unwrap_or(0);
            ListItem::new(Line::from(vec![
                Span::styled(format!("{} ", verdict_glyph(v)), theme.verdict(v)),
                Span::raw(safe(&d.row_label(row))),
            ]))
        })
        .collect();
    let title = if page.sources.pending {
        format!("{} ({}) · computing…", safe(&d.name), d.rows.len())
    } else {
        format!("{} ({})", safe(&d.name), d.rows.len())
    };
    let list = List::new(items)
        .block(pane_block(
            &super::view::numbered(super::action::PaneId::Sources, &title),
            theme,
            focused,
        ))
        .highlight_style(theme.selected());
    let mut st = ListState::default().with_selected(Some(page.sources.selected));
    frame.render_stateful_widget(list, area, &mut st);
}

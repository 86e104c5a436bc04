//! Page picker: name, rules, targets, revision, last change; `/` filters; Enter opens.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Row, Table, TableState};

use super::action::Action;
use super::modal::{Modal, PromptFor};
use super::theme::{Theme, safe};
use super::widgets::pane_block;
use crate::app::PageSummary;
use crate::app::{App, AppError};

#[derive(Debug)]
pub struct State {
    pub pages: Vec<PageSummary>,
    pub filter: String,
    pub cursor: usize,
}

impl State {
    pub fn new(app: &App) -> Result<State, AppError> {
        Ok(State {
            pages: app.pages()?,
            filter: String::new(),
            cursor: 0,
        })
    }

    /// The pages the filter lets through (fuzzily, by id and name), best first.
    pub fn visible(&self) -> Vec<&PageSummary> {
        super::fuzzy::rank(&self.filter, self.pages.iter().collect(), |p| {
            format!("{} {}", p.id, p.name)
        })
    }
}

pub fn update(
    state: &mut State,
    action: &Action,
    modal: &mut Option<Modal>,
    status: &mut super::pane::Status,
) -> Vec<Action> {
    let n = state.visible().len();
    match action {
        Action::Up => state.cursor = state.cursor.saturating_sub(1),
        Action::Down => state.cursor = (state.cursor + 1).min(n.saturating_sub(1)),
        Action::Home => state.cursor = 0,
        Action::End => state.cursor = n.saturating_sub(1),
        Action::Filter => {
            *modal = Some(Modal::Prompt {
                title: "Filter pages".into(),
                input: Box::new(ratatui_textarea::TextArea::new(vec![state.filter.clone()])),
                purpose: PromptFor::FilterPages,
            })
        }
        Action::FindText(q) | Action::FindFrom(q, _) => {
            let visible = state.visible();
            let hay = |i: usize| format!("{} {}", visible[i].id, visible[i].name);
            let Some(hits) = super::find::hits(q, n, hay) else {
                status.info(super::find::none(q, "page"));
                return vec![];
            };
            state.cursor = hits.landing(state.cursor, action);
            status.info(super::find::said(&hits, state.cursor, q));
        }
        Action::FilterPages(f) => {
            state.filter = f.clone();
            state.cursor = 0;
        }
        Action::Enter => {
            if let Some(p) = state.visible().get(state.cursor) {
                return vec![Action::OpenPage(p.id.clone())];
            }
        }
        Action::Back if !state.filter.is_empty() => state.filter.clear(),
        _ => {}
    }
    vec![]
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let rows: Vec<Row> = state
        .visible()
        .iter()
        .map(|p| {
            Row::new(vec![
                safe(&p.name),
                safe(&p.id),
                p.rules.to_string(),
                p.sources.to_string(),
                p.targets.to_string(),
                p.revision.to_string(),
                p.updated_at
                    .chars()
                    .take(19)
                    .collect::<String>()
                    .replace('T', " "),
            ])
        })
        .collect();
    let title = if state.filter.is_empty() {
        "Pages · Enter opens · / filters · q quits".to_owned()
    } else {
        format!("Pages /{} · Enter opens · Esc clears", safe(&state.filter))
    };
    let table = Table::new(
        rows,
        [
            Constraint::Min(24),
            Constraint::Min(18),
            Constraint::Length(6),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(9),
            Constraint::Length(19),
        ],
    )
    .header(
        Row::new([
            "Name",
            "Id",
            "Rules",
            "Sources",
            "Targets",
            "Revision",
            "Last change",
        ])
        .style(theme.title()),
    )
    .block(pane_block(&title, theme, true))
    .row_highlight_style(theme.selected());
    let mut ts = TableState::default().with_selected(Some(state.cursor));
    frame.render_stateful_widget(table, area, &mut ts);
}

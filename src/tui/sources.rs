//! Sources pane: choose the selection; each source shows its selection verdict. `/`
//! filters the sources (label, key, summary fields), `s` sorts them by verdict.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState};

use super::action::{Action, Changed};
use super::modal::{Modal, PromptFor};
use super::pane::{Ctx, Look, Pane};
use super::theme::{safe, verdict_glyph};
use super::widgets::pane_block;
use crate::app::jobs::JobResult;
use crate::app::types::Verdict;
use crate::app::workspace::Session;

#[derive(Debug, Default)]
pub struct State {
    pub selected: usize,
    /// Selection verdict of every source row (from the background work; the
    /// selection's own is kept live).
    pub verdicts: Vec<Verdict>,
    /// The background work has not caught up with the last change yet.
    pub pending: bool,
    /// The filter (`/`): every word in the label, key or summary fields.
    pub filter: String,
    /// Sorted by selection verdict, worst first (`s`).
    pub by_verdict: bool,
    /// The sources listed, in order, when not all in page order.
    order: Option<Vec<usize>>,
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
    pub fn set_verdicts(&mut self, verdicts: Vec<Verdict>) {
        self.verdicts = verdicts;
        self.pending = false;
        if self.by_verdict
            && let Some(order) = &mut self.order
        {
            let v = &self.verdicts;
            order.sort_by_key(|&i| (v.get(i).copied().unwrap_or_default(), i));
        }
    }

    /// The sources listed, in order.
    pub fn listed(&self, n: usize) -> Vec<usize> {
        match &self.order {
            // Rows past the end (the rows changed before the list did) are not listed.
            Some(order) => order.iter().copied().filter(|&i| i < n).collect(),
            None => (0..n).collect(),
        }
    }

    fn reorder(&mut self, ws: &Session) {
        if self.filter.is_empty() && !self.by_verdict {
            self.order = None;
            return;
        }
        let d = &ws.page.source;
        let words: Vec<String> = self
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let mut order: Vec<usize> = (0..d.rows.len())
            .filter(|&i| {
                let hay = row_text(d, i).to_lowercase();
                words.iter().all(|w| hay.contains(w.as_str()))
            })
            .collect();
        if self.by_verdict {
            let v = |i: usize| self.verdicts.get(i).copied().unwrap_or_default();
            order.sort_by_key(|&i| (v(i), i));
        }
        self.order = Some(order);
    }
}

/// A row's label, key and summary fields, as the filter and find read them.
pub(super) fn row_text(d: &crate::app::types::Dataset, i: usize) -> String {
    let r = &d.rows[i];
    let mut hay = format!("{} {}", d.row_label(r), d.row_key(r));
    for f in &d.summary {
        if let Some(v) = r.get(f) {
            hay.push(' ');
            match v {
                serde_json::Value::String(x) => hay.push_str(x),
                other => hay.push_str(&other.to_string()),
            }
        }
    }
    hay
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let listed = state.listed(ctx.ws.page.source.rows.len());
    let n = listed.len();
    let pos = listed.iter().position(|&s| s == state.selected);
    let at = |p: usize| listed.get(p).copied();
    let moved = match action {
        Action::Up => pos.and_then(|p| p.checked_sub(1)).and_then(at),
        Action::Down => at(pos.map_or(0, |p| p + 1)),
        Action::PageUp => at(pos.unwrap_or(0).saturating_sub(10)),
        Action::PageDown => at((pos.unwrap_or(0) + 10).min(n.saturating_sub(1))),
        Action::Home => at(0),
        Action::End => at(n.saturating_sub(1)),
        Action::Changed(_) => {
            state.refresh(ctx.ws);
            // Rows, verdicts or the filter's matches may have changed with the page.
            if state.order.is_some() {
                state.reorder(ctx.ws);
            }
            None
        }
        Action::SourceSelected(s) => {
            state.selected = *s;
            None
        }
        Action::Filter => {
            let input = super::widgets::prefilled(&state.filter);
            *ctx.modal = Some(Modal::Prompt {
                title: "Filter sources: label, key or summary fields (Enter keeps, Esc clears)"
                    .into(),
                input: Box::new(input),
                purpose: PromptFor::FilterSources,
            });
            None
        }
        Action::FilterSources(text, entered) => {
            state.filter = text.trim().to_owned();
            state.reorder(ctx.ws);
            let listed = state.listed(ctx.ws.page.source.rows.len());
            if listed.is_empty() {
                ctx.status.error(format!(
                    "no source matches `{}` (Esc clears the filter)",
                    safe(&state.filter)
                ));
            }
            // Once the filter is entered, the selection moves to the first match when it
            // is filtered out (not while typing: each move recomputes the matrix).
            listed
                .first()
                .copied()
                .filter(|_| *entered && !listed.contains(&state.selected))
        }
        Action::FindText(q) | Action::FindFrom(q, _) => {
            let d = &ctx.ws.page.source;
            let hay = |p: usize| row_text(d, listed[p]);
            let Some(hits) = super::find::hits(q, n, hay) else {
                ctx.status.info(super::find::none(q, "source"));
                return vec![];
            };
            let found = hits.landing(pos.unwrap_or(0), action);
            ctx.status.info(super::find::said(&hits, found, q));
            at(found)
        }
        Action::CycleSort => {
            state.by_verdict = !state.by_verdict;
            state.reorder(ctx.ws);
            ctx.status.info(if state.by_verdict {
                "sources by selection verdict, worst first (s: page order)"
            } else {
                "sources in page order"
            });
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

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let d = &look.ws.page.source;
    let listed = state.listed(d.rows.len());
    // Only the rows the pane shows are made (a page may have 100,000 sources): the
    // window a fresh list state scrolls to, the selected row last when it is below the
    // first screen.
    let height = usize::from(area.height.saturating_sub(2)).max(1);
    let selected = listed.iter().position(|&i| i == state.selected);
    let start = selected.map_or(0, |p| (p + 1).saturating_sub(height));
    let items: Vec<ListItem> = listed
        .iter()
        .skip(start)
        .take(height)
        .map(|&i| {
            let row = &d.rows[i];
            let v = state.verdicts.get(i).copied().unwrap_or_default();
            ListItem::new(Line::from(vec![
                Span::styled(format!("{} ", verdict_glyph(v)), theme.verdict(v)),
                Span::raw(safe(&d.row_label(row))),
            ]))
        })
        .collect();
    let mut title = if listed.len() == d.rows.len() {
        format!("{} ({})", safe(&d.name), d.rows.len())
    } else {
        format!("{} ({} of {})", safe(&d.name), listed.len(), d.rows.len())
    };
    if !state.filter.is_empty() {
        title.push_str(&format!(" \\{}", safe(&state.filter)));
    }
    if state.by_verdict {
        title.push_str(" · by verdict");
    }
    if state.pending {
        title.push_str(" · computing…");
    }
    let list = List::new(items)
        .block(pane_block(
            &super::widgets::numbered(super::action::PaneId::Sources, &title),
            theme,
            focused,
        ))
        .highlight_style(theme.selected());
    let mut st = ListState::default().with_selected(selected.map(|p| p - start));
    frame.render_stateful_widget(list, area, &mut st);
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Sources
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        if let Action::JobDone(done) = action {
            if let JobResult::Verdicts { verdicts, .. } = done.0.as_ref() {
                self.set_verdicts(verdicts.clone());
            }
            return vec![];
        }
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

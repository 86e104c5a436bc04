//! Overrides pane: every override of the page (source × target, forced value, note);
//! Enter goes to its selection and target, `d` clears it. Overrides are resolved to
//! rows by key hash once per change, not on every frame.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, Wrap};

use super::action::{Action, Changed};
use super::pane::{Ctx, Look, Pane};
use super::theme::{FAIL, OVERRIDE, PASS, safe};
use super::widgets::pane_block;
use crate::app::text::key_hash;
use crate::app::types::{Dataset, Override, Side};
use crate::app::workspace::Session;

/// Marks the overrides of the current selection.
pub const HERE: &str = "◆";

/// One override, resolved to its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Index in `state`.
    pub index: usize,
    pub source_hash: Option<String>,
    pub target_hash: Option<String>,
    /// The source row, when the page has it.
    pub source: Option<usize>,
    /// The target row, when the page has it.
    pub target: Option<usize>,
}

impl Entry {
    /// Both rows, when the page has them.
    pub fn rows(&self) -> Option<(usize, usize)> {
        Some((self.source?, self.target?))
    }
}

/// Key hash → row, for both datasets (built once for each reading of the rows: a cell
/// edit that changes a row's key reads them again).
#[derive(Debug, Default)]
struct RowIndex {
    sources: HashMap<String, usize>,
    targets: HashMap<String, usize>,
    /// The rows the index was built for ([`Session::rows_stamp`]).
    built_for: u64,
}

impl RowIndex {
    fn of(d: &Dataset) -> HashMap<String, usize> {
        d.rows
            .iter()
            .enumerate()
            .map(|(i, r)| (key_hash(&d.row_key(r)), i))
            .collect()
    }

    fn build(ws: &Session) -> RowIndex {
        RowIndex {
            sources: Self::of(ws.page.dataset(Side::Source)),
            targets: Self::of(ws.page.dataset(Side::Target)),
            built_for: ws.rows_stamp,
        }
    }
}

#[derive(Debug, Default)]
pub struct State {
    pub entries: Vec<Entry>,
    pub cursor: usize,
    /// The selection when the entries were resolved (its rows are marked).
    pub selection: usize,
    index: Option<RowIndex>,
}

impl State {
    /// Re-resolves the page's overrides, keeping the cursor on the same override.
    pub fn refresh(&mut self, ws: &Session) {
        if self
            .index
            .as_ref()
            .is_none_or(|i| i.built_for != ws.rows_stamp)
        {
            self.index = Some(RowIndex::build(ws));
        }
        let index = self.index.as_ref().expect("built above");
        let keep = self
            .entries
            .get(self.cursor)
            .map(|e| (e.source_hash.clone(), e.target_hash.clone()));
        self.entries = resolve(&ws.page.overrides, &index.sources, &index.targets);
        self.selection = ws.selection;
        self.cursor = keep
            .and_then(|k| {
                self.entries.iter().position(|e| {
                    (e.source_hash.as_ref(), e.target_hash.as_ref()) == (k.0.as_ref(), k.1.as_ref())
                })
            })
            .unwrap_or(self.cursor)
            .min(self.entries.len().saturating_sub(1));
    }

    pub fn selected(&self) -> Option<&Entry> {
        self.entries.get(self.cursor)
    }
}

/// Resolves overrides to rows through key-hash indexes.
pub fn resolve(
    overrides: &[Override],
    sources: &HashMap<String, usize>,
    targets: &HashMap<String, usize>,
) -> Vec<Entry> {
    overrides
        .iter()
        .enumerate()
        .map(|(index, o)| {
            let (source_hash, target_hash) = (o.source_hash(), o.target_hash());
            Entry {
                index,
                source: source_hash.as_ref().and_then(|h| sources.get(h).copied()),
                target: target_hash.as_ref().and_then(|h| targets.get(h).copied()),
                source_hash,
                target_hash,
            }
        })
        .collect()
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let n = state.entries.len();
    match action {
        // A new selection marks other overrides: nothing to resolve again (a page may
        // have 100,000 overrides).
        Action::Changed(c) if !c.intersects(Changed::OVERRIDES | Changed::ROWS) => {
            state.selection = ctx.ws.selection;
        }
        Action::SourceSelected(s) => state.selection = *s,
        Action::Changed(_) => {
            state.refresh(ctx.ws);
        }
        Action::FindText(q) | Action::FindFrom(q, _) => {
            let p = &ctx.ws.page;
            let label = |d: &crate::app::types::Dataset, row: Option<usize>| {
                row.map(|r| super::sources::row_text(d, r))
                    .unwrap_or_default()
            };
            let hay = |i: usize| {
                let e = &state.entries[i];
                let note = p
                    .overrides
                    .get(e.index)
                    .and_then(|o| o.note.clone())
                    .unwrap_or_default();
                format!(
                    "{} {} {note}",
                    label(&p.source, e.source),
                    label(&p.target, e.target)
                )
            };
            let Some(hits) = super::find::hits(q, n, hay) else {
                ctx.status.info(super::find::none(q, "override"));
                return vec![];
            };
            state.cursor = hits.landing(state.cursor, action);
            ctx.status.info(super::find::said(&hits, state.cursor, q));
        }
        Action::Up => state.cursor = state.cursor.saturating_sub(1),
        Action::Down => state.cursor = (state.cursor + 1).min(n.saturating_sub(1)),
        Action::PageUp => state.cursor = state.cursor.saturating_sub(10),
        Action::PageDown => state.cursor = (state.cursor + 10).min(n.saturating_sub(1)),
        Action::Home => state.cursor = 0,
        Action::End => state.cursor = n.saturating_sub(1),
        Action::Enter => match state.selected().map(Entry::rows) {
            Some(Some((s, t))) => {
                ctx.ws.select(s);
                let p = &ctx.ws.page;
                ctx.status.info(format!(
                    "selection {} · target {}",
                    safe(&p.source.row_label(&p.source.rows[s])),
                    safe(&p.target.row_label(&p.target.rows[t]))
                ));
                return vec![
                    Action::SourceSelected(s),
                    Action::TargetSelected(t),
                    Action::Changed(Changed::OVERRIDES),
                ];
            }
            Some(None) => ctx.status.error(missing_rows_message()),
            None => {}
        },
        Action::ToggleOverride => match state.selected().map(|e| (e.rows(), e.index)) {
            Some((Some((s, t)), _)) => {
                // An override and its note are not deleted without asking.
                let p = &ctx.ws.page;
                *ctx.modal = Some(super::modal::Modal::Confirm {
                    message: format!(
                        "Clear the override of {} × {} and its note? y/n",
                        p.source.row_label(&p.source.rows[s]),
                        p.target.row_label(&p.target.rows[t])
                    ),
                    on_yes: Action::ClearOverride(s, t),
                    on_no: None,
                });
            }
            Some((None, _)) => ctx.status.error(missing_rows_message()),
            None => ctx
                .status
                .info("no overrides · press o on a matrix column to add one"),
        },
        _ => {}
    }
    vec![]
}

fn missing_rows_message() -> &'static str {
    "this override names a row the page does not have; \
     remove it with `rulebench override rm PAGE --source KEY --target KEY`"
}

/// How an override names a row the page lacks: its key, else a short hash.
fn unknown_row(key: Option<&str>, hash: Option<&str>) -> String {
    match (key, hash) {
        (Some(k), _) => safe(k),
        (None, Some(h)) => format!("#{}", h.get(..8).unwrap_or(h)),
        (None, None) => "?".into(),
    }
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let st = &state;
    let p = &look.ws.page;
    let here = st
        .entries
        .iter()
        .filter(|e| e.source == Some(st.selection))
        .count();
    let title = if here > 0 {
        format!(
            "Overrides ({} · {HERE} {here} for selection)",
            st.entries.len()
        )
    } else {
        format!("Overrides ({})", st.entries.len())
    };
    let mut block = pane_block(
        &super::widgets::numbered(super::action::PaneId::Overrides, &title),
        theme,
        focused,
    );
    if focused && !st.entries.is_empty() {
        block = block.title_bottom(Line::styled(" Enter go to · d clear ", theme.dim()));
    }
    if st.entries.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "no overrides · press o on a matrix column to add one",
                theme.dim(),
            ))
            .wrap(Wrap { trim: true })
            .block(block),
            area,
        );
        return;
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Room to spare below the list: the highlighted override's whole note.
    let note = st
        .selected()
        .and_then(|e| p.overrides.get(e.index))
        .and_then(|o| o.note.as_deref())
        .filter(|n| !n.trim().is_empty());
    let listed = super::widgets::rows(st.entries.len());
    let spare = inner.height.saturating_sub(listed.saturating_add(1));
    let note_h = if note.is_some() { spare.min(4) } else { 0 };
    let [list_area, note_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(note_h)]).areas(inner);
    // Only the rows the pane shows are made (a page may have 100,000 overrides): the
    // window a fresh list state scrolls to, the cursor's row last when it is below the
    // first screen.
    let height = usize::from(list_area.height).max(1);
    let start = (st.cursor + 1).saturating_sub(height);
    let items: Vec<ListItem> = st
        .entries
        .iter()
        .skip(start)
        .take(height)
        .filter_map(|e| Some((e, p.overrides.get(e.index)?)))
        .map(|(e, o)| {
            let mine = e.source == Some(st.selection);
            let source = match e.source {
                Some(s) => safe(&p.source.row_label(&p.source.rows[s])),
                None => unknown_row(o.source_key.as_deref(), e.source_hash.as_deref()),
            };
            let target = match e.target {
                Some(t) => safe(&p.target.row_label(&p.target.rows[t])),
                None => unknown_row(o.target_key.as_deref(), e.target_hash.as_deref()),
            };
            let (glyph, style) = if o.value {
                (PASS, theme.pass())
            } else {
                (FAIL, theme.fail())
            };
            let mut spans = vec![
                Span::styled(
                    if mine { HERE } else { " " },
                    if mine { theme.accent() } else { theme.dim() },
                ),
                Span::styled(format!(" {OVERRIDE} {glyph} "), style),
                Span::styled(
                    source,
                    if mine {
                        theme.title()
                    } else {
                        Default::default()
                    },
                ),
                Span::styled(" × ", theme.dim()),
                Span::raw(target),
            ];
            if e.rows().is_none() {
                spans.push(Span::styled(
                    " (orphaned: no such row; inactive)",
                    theme.fail(),
                ));
            }
            if let Some(note) = o.note.as_deref().filter(|n| !n.trim().is_empty()) {
                spans.push(Span::styled(format!(" — {}", safe(note)), theme.dim()));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let list = List::new(items).highlight_style(theme.selected());
    let mut ls = ListState::default().with_selected(Some(st.cursor - start));
    frame.render_stateful_widget(list, list_area, &mut ls);
    if let (Some(note), true) = (note, note_h > 0) {
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("note ", theme.dim()),
                Span::raw(safe(note)),
            ]))
            .wrap(Wrap { trim: true }),
            note_area,
        );
    }
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Overrides
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(source: &str, target: &str, value: bool) -> Override {
        Override {
            source_key: Some(source.into()),
            target_key: None,
            source_key_hash: None,
            target_key_hash: Some(key_hash(target)),
            value,
            note: None,
        }
    }

    #[test]
    fn overrides_resolve_by_key_or_hash() {
        let sources: HashMap<String, usize> = [(key_hash("id=a"), 0), (key_hash("id=b"), 1)].into();
        let targets: HashMap<String, usize> = [(key_hash("id=x"), 0), (key_hash("id=y"), 1)].into();
        let entries = resolve(
            &[o("id=b", "id=y", true), o("id=zzz", "id=x", false)],
            &sources,
            &targets,
        );
        assert_eq!(entries[0].rows(), Some((1, 1)));
        assert_eq!(entries[1].source, None);
        assert_eq!(entries[1].target, Some(0));
        assert_eq!(entries[1].rows(), None);
        assert_eq!(unknown_row(Some("id=zzz"), None), "id=zzz");
        assert_eq!(unknown_row(None, Some("0123456789abcdef")), "#01234567");
    }
}

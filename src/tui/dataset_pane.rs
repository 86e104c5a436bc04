//! Dataset pane: the rows of one side (Space toggles source / target), searched with
//! `/`, the schema on `s`, the selected pair's row highlighted; Enter edits a cell
//! (`field=value`, saved as a new revision). Every field is a column: ← → scroll them,
//! the row label stays put. Only the visible rows are rendered.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::Value;

use super::action::Action;
use super::modal::{Modal, PromptFor};
use super::pane::{Ctx, Look, Pane};
use super::theme::safe;
use super::widgets::pane_block;
use crate::app::types::DatasetSchema;
use crate::app::types::{Dataset, Row, Side};
use crate::app::workspace::Session;

/// The narrowest and widest a field column is (its width follows its header and
/// values, measured over the first rows).
const COL_MIN: usize = 4;
const COL_MAX: usize = 28;
/// How many rows a column's width is measured over.
const MEASURED_ROWS: usize = 2000;
/// Width of the frozen label column, at most.
const LABEL_W: usize = 18;

#[derive(Debug)]
pub struct State {
    pub side: Side,
    /// Position in `matches`.
    pub cursor: usize,
    pub show_schema: bool,
    pub query: String,
    /// Row indexes matching the query (all rows without one).
    pub matches: Vec<usize>,
    /// The selected pair: (source row, target row).
    pub pair: (usize, usize),
    pub schema: Option<DatasetSchema>,
    /// (side, revision, rows, query) the matches were built for.
    built_for: Option<(Side, i64, usize, String)>,
    /// Every field of the side's rows (key fields first, then in first appearance),
    /// the label left out: the columns.
    pub fields: Vec<String>,
    /// Each column's width (as `fields`).
    widths: Vec<usize>,
    /// What the last find matched: typing on narrows it.
    find_cache: super::find::Narrowing,
    /// The first field column shown (← →).
    pub col_offset: usize,
    /// Field columns that fit at the last render.
    shown_cols: std::cell::Cell<usize>,
}

impl Default for State {
    fn default() -> Self {
        State {
            side: Side::Target,
            cursor: 0,
            show_schema: false,
            query: String::new(),
            matches: Vec::new(),
            pair: (0, 0),
            schema: None,
            built_for: None,
            fields: Vec::new(),
            widths: Vec::new(),
            find_cache: Default::default(),
            col_offset: 0,
            shown_cols: std::cell::Cell::new(0),
        }
    }
}

/// Whether any value of the row contains `needle` (lower-cased).
/// A row's values, as find reads them.
fn row_text(row: &Row) -> String {
    let mut out = String::new();
    for v in row.values() {
        if !out.is_empty() {
            out.push(' ');
        }
        match v {
            Value::String(s) => out.push_str(s),
            v => out.push_str(&v.to_string()),
        }
    }
    out
}

fn row_matches(row: &Row, needle: &str) -> bool {
    row.values().any(|v| match v {
        Value::String(s) => s.to_lowercase().contains(needle),
        v => v.to_string().to_lowercase().contains(needle),
    })
}

impl State {
    fn dataset<'a>(&self, ws: &'a Session) -> &'a Dataset {
        ws.page.dataset(self.side)
    }

    /// The row under the cursor.
    pub fn row(&self) -> Option<usize> {
        self.matches.get(self.cursor).copied()
    }

    fn selected_row(&self) -> usize {
        match self.side {
            Side::Source => self.pair.0,
            Side::Target => self.pair.1,
        }
    }

    /// Rebuilds the matches when the rows, side or query changed.
    pub fn refresh(&mut self, ws: &Session) {
        let d = self.dataset(ws);
        let key = (self.side, ws.revision, d.rows.len(), self.query.clone());
        if self.built_for.as_ref() == Some(&key) {
            return;
        }
        let keep = self.row();
        let needle = self.query.trim().to_lowercase();
        self.matches = if needle.is_empty() {
            (0..d.rows.len()).collect()
        } else {
            (0..d.rows.len())
                .filter(|&i| row_matches(&d.rows[i], &needle))
                .collect()
        };
        self.fields = fields(d);
        self.widths = widths(d, &self.fields);
        self.col_offset = self.col_offset.min(self.fields.len().saturating_sub(1));
        if self.show_schema {
            self.schema = Some(DatasetSchema::of(d));
        } else {
            self.schema = None;
        }
        self.built_for = Some(key);
        self.cursor = keep
            .and_then(|r| self.matches.iter().position(|&m| m == r))
            .unwrap_or(self.cursor)
            .min(self.matches.len().saturating_sub(1));
    }

    /// Moves the cursor to a row, when it matches the search.
    pub fn jump_to(&mut self, row: usize) {
        if let Some(i) = self.matches.iter().position(|&m| m == row) {
            self.cursor = i;
        }
    }

    /// Sets the search and moves to the first match.
    pub fn search(&mut self, ws: &Session, query: &str) {
        self.query = query.to_owned();
        self.refresh(ws);
        self.cursor = 0;
    }
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let n = state.matches.len();
    match action {
        Action::Changed(_) => state.refresh(ctx.ws),
        Action::SourceSelected(s) => {
            state.pair.0 = *s;
            state.refresh(ctx.ws);
            if state.side == Side::Source {
                state.jump_to(*s);
            }
        }
        Action::TargetSelected(t) => {
            state.pair.1 = *t;
            state.refresh(ctx.ws);
            if state.side == Side::Target {
                state.jump_to(*t);
            }
        }
        Action::Up => state.cursor = state.cursor.saturating_sub(1),
        Action::Down => state.cursor = (state.cursor + 1).min(n.saturating_sub(1)),
        Action::PageUp => state.cursor = state.cursor.saturating_sub(10),
        Action::PageDown => state.cursor = (state.cursor + 10).min(n.saturating_sub(1)),
        Action::Home => state.cursor = 0,
        Action::End => state.cursor = n.saturating_sub(1),
        Action::Left => state.col_offset = state.col_offset.saturating_sub(1),
        Action::Right => {
            let shown = state.shown_cols.get().max(1);
            let last_start = state.fields.len().saturating_sub(shown);
            state.col_offset = (state.col_offset + 1).min(last_start);
        }
        Action::Cycle => {
            state.side = match state.side {
                Side::Source => Side::Target,
                Side::Target => Side::Source,
            };
            state.refresh(ctx.ws);
            state.cursor = 0;
            state.col_offset = 0;
            state.jump_to(state.selected_row());
        }
        Action::ToggleSchema => {
            state.show_schema = !state.show_schema;
            state.built_for = None;
            state.refresh(ctx.ws);
        }
        Action::Filter => {
            let input = super::widgets::prefilled(&state.query);
            *ctx.modal = Some(Modal::Prompt {
                title: format!(
                    "Filter {} rows: any value (Enter keeps, Esc clears)",
                    state.side.name()
                ),
                input: Box::new(input),
                purpose: PromptFor::FilterDataset,
            });
        }
        Action::FindText(q) | Action::FindFrom(q, _) => {
            let d = state.dataset(ctx.ws);
            // The rows listed now (a narrowing over other rows would miss).
            let list = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (&state.built_for, ctx.ws.rows_stamp).hash(&mut h);
                h.finish()
            };
            let mut narrowing = std::mem::take(&mut state.find_cache);
            let hay = |p: usize| row_text(&d.rows[state.matches[p]]);
            let hits = super::find::hits_narrowing(&mut narrowing, list, q, n, hay);
            state.find_cache = narrowing;
            let Some(hits) = hits else {
                ctx.status.info(super::find::none(q, "row"));
                return vec![];
            };
            state.cursor = hits.landing(state.cursor, action);
            ctx.status.info(super::find::said(&hits, state.cursor, q));
        }
        Action::Enter => match state.row() {
            Some(row) => {
                let d = state.dataset(ctx.ws);
                *ctx.modal = Some(Modal::Prompt {
                    title: format!(
                        "Set field=value on {} row {}",
                        state.side.name(),
                        safe(&d.row_label(&d.rows[row]))
                    ),
                    input: Box::default(),
                    purpose: PromptFor::DatasetCell {
                        side: state.side,
                        row,
                    },
                });
            }
            None => ctx.status.info("no rows"),
        },
        _ => {}
    }
    vec![]
}

/// Parses `field=value`: the value as JSON, else as a string (also an integer too large
/// to compare exactly, which stays exact as text, as in CSV).
pub fn parse_cell(text: &str) -> Result<(String, Value), String> {
    crate::app::parse_cell(text)
}

/// A short cell text.
/// A value as a cell shows it, before fitting.
fn cell_text(v: Option<&Value>) -> String {
    safe(&match v {
        None => "·".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    })
}

/// A cell `width` wide: cut with `…`, numbers right-aligned, the rest left.
fn cell(v: Option<&Value>, width: usize) -> String {
    let text = cell_text(v);
    if matches!(v, Some(Value::Number(_)))
        && unicode_width::UnicodeWidthStr::width(text.as_str()) <= width
    {
        format!("{text:>width$}")
    } else {
        super::widgets::fit_padded(&text, width)
    }
}

/// Each column's width: its header's or its widest value's over the first rows,
/// within [`COL_MIN`, `COL_MAX`].
fn widths(d: &Dataset, fields: &[String]) -> Vec<usize> {
    fields
        .iter()
        .map(|f| {
            let header = unicode_width::UnicodeWidthStr::width(f.as_str());
            d.rows
                .iter()
                .take(MEASURED_ROWS)
                .map(|r| unicode_width::UnicodeWidthStr::width(cell_text(r.get(f)).as_str()))
                .max()
                .unwrap_or(0)
                .max(header)
                .clamp(COL_MIN, COL_MAX)
        })
        .collect()
}

/// The columns: every field of the rows, key fields first, then in order of first
/// appearance; the label is its own frozen column.
fn fields(d: &Dataset) -> Vec<String> {
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    let label = d.label.as_deref();
    for k in &d.key {
        if Some(k.as_str()) != label && seen.insert(k) {
            out.push(k.clone());
        }
    }
    for r in &d.rows {
        for k in r.keys() {
            if Some(k.as_str()) != label && seen.insert(k) {
                out.push(k.clone());
            }
        }
    }
    out
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let st = &state;
    let d = look.ws.page.dataset(st.side);
    let mut title = format!("Dataset · {} ({} rows)", st.side.name(), d.rows.len());
    if !st.query.is_empty() {
        title.push_str(&format!(" · \\{} {}", safe(&st.query), st.matches.len()));
    }
    // The frozen label column as wide as its labels need (up to LABEL_W), then the
    // field columns from the first shown, each as wide as its content, while they fit.
    let room = area.width.saturating_sub(2) as usize;
    let label_w = st
        .matches
        .iter()
        .take(MEASURED_ROWS)
        .map(|&i| unicode_width::UnicodeWidthStr::width(safe(&d.row_label(&d.rows[i])).as_str()))
        .max()
        .unwrap_or(3)
        .clamp(3, LABEL_W);
    let nf = st.fields.len();
    let first = st.col_offset.min(nf.saturating_sub(1));
    let mut used = 2 + label_w;
    let mut last = first;
    while last < nf {
        let w = st.widths.get(last).copied().unwrap_or(COL_MIN) + 1;
        if used + w > room && last > first {
            break;
        }
        used += w;
        last += 1;
    }
    let fit_cols = (last - first).max(1);
    st.shown_cols.set(fit_cols);
    if nf > fit_cols {
        title.push_str(&format!(" · fields {}–{last} of {nf} (← →)", first + 1));
    }
    let mut block = pane_block(
        &super::widgets::numbered(super::action::PaneId::Dataset, &title),
        theme,
        focused,
    );
    if focused {
        block = block.title_bottom(Line::styled(
            " Space side · / find · \\ filter · ← → fields · s schema · Enter edit ",
            theme.dim(),
        ));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if st.show_schema {
        let schema = st.schema.as_ref();
        let mut lines = vec![Line::styled(
            format!("{:<20} {:<14} coverage", "field", "type"),
            theme.title(),
        )];
        if let Some(s) = schema {
            for (name, f) in &s.fields {
                let cov = s.coverage.get(name).copied().unwrap_or(0);
                lines.push(Line::raw(format!(
                    "{:<20} {:<14} {cov}/{}",
                    safe(name),
                    f.type_name(),
                    s.rows
                )));
            }
        }
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let detail_h = if inner.height > 8 { 3 } else { 0 };
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(detail_h)]).areas(inner);
    let cols = &st.fields[first.min(nf)..last];
    let col_ws = &st.widths[first.min(nf)..last.min(st.widths.len())];
    let more_left = if first > 0 { "◀ " } else { "  " };
    let mut lines = vec![Line::styled(
        std::iter::once(format!("{more_left}{:<label_w$}", "row"))
            .chain(
                cols.iter()
                    .zip(col_ws)
                    .map(|(c, &w)| cell(Some(&Value::String(c.clone())), w)),
            )
            .collect::<Vec<_>>()
            .join(" "),
        theme.title(),
    )];
    let height = list_area.height.saturating_sub(1) as usize;
    let offset = if st.cursor < height {
        0
    } else {
        st.cursor + 1 - height
    };
    let selected = st.selected_row();
    for (pos, &i) in st.matches.iter().enumerate().skip(offset).take(height) {
        let row = &d.rows[i];
        // A patched row shows its patched values, marked ✎ (the stored ones are in
        // the page file; the patch is in the dataset's `patches`).
        let patch = d.patch_of(row);
        let mark = match (i == selected, patch.is_some()) {
            (true, true) => "▶✎",
            (true, false) => "▶ ",
            (false, true) => " ✎",
            (false, false) => "  ",
        };
        let mut text = format!(
            "{mark}{}",
            cell(Some(&Value::String(d.row_label(row))), label_w)
        );
        for (c, &w) in cols.iter().zip(col_ws) {
            text.push(' ');
            let value = patch.and_then(|p| p.set.get(c)).or(row.get(c));
            text.push_str(&cell(value, w));
        }
        let style = if pos == st.cursor {
            theme.selected()
        } else if i == selected {
            theme.accent()
        } else {
            Default::default()
        };
        lines.push(Line::styled(text, style));
    }
    if st.matches.is_empty() {
        lines.push(Line::styled("no rows", theme.dim()));
    }
    frame.render_widget(Paragraph::new(lines), list_area);
    if detail_h > 0
        && let Some(row) = st.row().and_then(|i| d.rows.get(i))
    {
        let mut spans = Vec::new();
        for (k, v) in row {
            spans.push(Span::styled(format!("{}=", safe(k)), theme.dim()));
            let v = match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            spans.push(Span::raw(format!("{} ", safe(&v))));
        }
        frame.render_widget(
            Paragraph::new(Line::from(spans)).wrap(Wrap { trim: true }),
            detail_area,
        );
    }
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Dataset
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

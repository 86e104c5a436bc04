//! The frequency view (`F` in the Matrix, as VisiData's Shift-F): over the targets the
//! matrix shows, per rule how many pass, fail or are n/a (which rule fails most), and
//! per value of each summary field how many targets are at 2 / 1 / 0 ("how many per
//! provider are full"). Enter on a row shows only its targets in the matrix.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use serde_json::Value;

use super::action::Action;
use super::only::Only;
use super::theme::{Theme, safe};
use super::widgets::{centered, fit, fit_padded, pane_block};
use crate::app::types::{NOT_APPLICABLE, PASS, Verdict};
use crate::app::workspace::Session;

/// How many values of one field are listed (the most frequent first).
const VALUES_SHOWN: usize = 40;

#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Heading(String),
    Rule {
        rule: usize,
        /// The rule's id (what the matrix's "only failing" follows).
        id: String,
        name: String,
        pass: usize,
        fail: usize,
        not_applicable: usize,
    },
    Value {
        field: String,
        value: Value,
        full: usize,
        partial: usize,
        none: usize,
    },
    /// Values past [`VALUES_SHOWN`], counted.
    More(usize),
}

impl Row {
    fn choosable(&self) -> bool {
        matches!(self, Row::Rule { .. } | Row::Value { .. })
    }
}

#[derive(Debug)]
pub struct State {
    pub rows: Vec<Row>,
    pub cursor: usize,
    /// How many targets were counted (those the matrix showed).
    pub targets: usize,
    scroll: std::cell::Cell<usize>,
}

/// What a key does in the dialog.
pub enum Outcome {
    Stay,
    Close,
    /// Show only these targets in the matrix.
    Only(Only),
}

/// A value as the view shows it.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".into(),
        other => other.to_string(),
    }
}

impl State {
    /// Counts over `shown` (the targets the matrix shows), rules in `rules` order.
    pub fn build(ws: &Session, rules: &[usize], shown_targets: &[usize]) -> State {
        let mut rows = vec![Row::Heading(format!(
            "rules over the {} targets shown: most failing first",
            shown_targets.len()
        ))];
        let mut per_rule: Vec<Row> = rules
            .iter()
            .filter_map(|&r| {
                let col = ws.eval.columns.get(r)?;
                let (mut pass, mut fail, mut na) = (0, 0, 0);
                for &t in shown_targets {
                    match col.outcome.get(t).copied() {
                        Some(PASS) => pass += 1,
                        Some(NOT_APPLICABLE) => na += 1,
                        _ => fail += 1,
                    }
                }
                Some(Row::Rule {
                    rule: r,
                    id: ws.page.rules[r].id.clone(),
                    name: ws.page.rules[r].name.clone(),
                    pass,
                    fail,
                    not_applicable: na,
                })
            })
            .collect();
        // Most failing first; ties keep the page's order.
        per_rule.sort_by_key(|r| match r {
            Row::Rule { fail, .. } => std::cmp::Reverse(*fail),
            _ => std::cmp::Reverse(0),
        });
        rows.extend(per_rule);
        let d = &ws.page.target;
        for field in &d.summary {
            let mut counts: Vec<(Value, [usize; 3])> = Vec::new();
            let mut index: std::collections::HashMap<String, usize> = Default::default();
            for &t in shown_targets {
                let Some(row) = d.rows.get(t) else { continue };
                let v = row.get(field).cloned().unwrap_or(Value::Null);
                let key = v.to_string();
                let at = *index.entry(key).or_insert_with(|| {
                    counts.push((v, [0; 3]));
                    counts.len() - 1
                });
                let verdict = ws
                    .eval
                    .devices
                    .get(t)
                    .map(|d| d.verdict)
                    .unwrap_or_default();
                let slot = match verdict {
                    Verdict::Full => 0,
                    Verdict::Partial => 1,
                    Verdict::None => 2,
                };
                counts[at].1[slot] += 1;
            }
            counts.sort_by_key(|(_, c)| std::cmp::Reverse(c.iter().sum::<usize>()));
            rows.push(Row::Heading(format!(
                "{}: targets at ● 2 / ◐ 1 / ○ 0, most frequent first",
                safe(field)
            )));
            let more = counts.len().saturating_sub(VALUES_SHOWN);
            rows.extend(
                counts
                    .into_iter()
                    .take(VALUES_SHOWN)
                    .map(|(value, c)| Row::Value {
                        field: field.clone(),
                        value,
                        full: c[0],
                        partial: c[1],
                        none: c[2],
                    }),
            );
            if more > 0 {
                rows.push(Row::More(more));
            }
        }
        let cursor = rows.iter().position(Row::choosable).unwrap_or(0);
        State {
            rows,
            cursor,
            targets: shown_targets.len(),
            scroll: Default::default(),
        }
    }

    fn step(&mut self, by: isize) {
        let n = self.rows.len() as isize;
        let mut at = self.cursor as isize;
        let dir = by.signum();
        let mut left = by.abs();
        while left > 0 {
            let mut next = at + dir;
            while (0..n).contains(&next) && !self.rows[next as usize].choosable() {
                next += dir;
            }
            if !(0..n).contains(&next) {
                break;
            }
            at = next;
            left -= 1;
        }
        self.cursor = at as usize;
    }

    pub fn key(&mut self, action: &Action) -> Outcome {
        match action {
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::PageUp => self.step(-10),
            Action::PageDown => self.step(10),
            Action::Home => self.step(-(self.rows.len() as isize)),
            Action::End => self.step(self.rows.len() as isize),
            Action::Enter => {
                return match self.rows.get(self.cursor) {
                    Some(Row::Rule { id, .. }) => Outcome::Only(Only::Failing(id.clone())),
                    Some(Row::Value { field, value, .. }) => {
                        Outcome::Only(Only::Value(field.clone(), value.clone()))
                    }
                    _ => Outcome::Stay,
                };
            }
            Action::Back => return Outcome::Close,
            _ => {}
        }
        Outcome::Stay
    }
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let w = area.width.saturating_sub(4).clamp(20, 100);
    let h = area.height.saturating_sub(2).max(5);
    let rect = centered(area, w, h);
    frame.render_widget(Clear, rect);
    let block = pane_block(
        &format!(
            "Frequency over the {} targets shown (Enter: only those; Esc closes)",
            state.targets
        ),
        theme,
        true,
    );
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let height = inner.height as usize;
    // The cursor stays in sight.
    let mut top = state.scroll.get();
    if state.cursor < top {
        top = state.cursor;
    } else if state.cursor >= top + height {
        top = state.cursor + 1 - height;
    }
    state.scroll.set(top);
    let width = inner.width as usize;
    let counts_w = 26;
    let name_w = width.saturating_sub(counts_w + 2);
    let lines: Vec<Line> = state
        .rows
        .iter()
        .enumerate()
        .skip(top)
        .take(height)
        .map(|(i, row)| {
            let selected = i == state.cursor;
            let style = if selected {
                theme.selected()
            } else {
                Default::default()
            };
            match row {
                Row::Heading(text) => Line::from(Span::styled(fit(text, width), theme.title())),
                Row::More(n) => {
                    Line::from(Span::styled(format!("  … {n} more values"), theme.dim()))
                }
                Row::Rule {
                    name,
                    pass,
                    fail,
                    not_applicable,
                    ..
                } => Line::from(vec![
                    Span::styled(format!("  {}", fit_padded(&safe(name), name_w)), style),
                    Span::styled(format!("{:>6} ✗", fail), theme.fail()),
                    Span::styled(format!("{:>6} ✓", pass), theme.pass()),
                    Span::styled(format!("{:>6} –", not_applicable), theme.dim()),
                ]),
                Row::Value {
                    value,
                    full,
                    partial,
                    none,
                    ..
                } => Line::from(vec![
                    Span::styled(
                        format!("  {}", fit_padded(&safe(&shown(value)), name_w)),
                        style,
                    ),
                    Span::styled(format!("{:>6} ●", full), theme.pass()),
                    Span::styled(format!("{:>6} ◐", partial), theme.warn()),
                    Span::styled(format!("{:>6} ○", none), theme.fail()),
                ]),
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

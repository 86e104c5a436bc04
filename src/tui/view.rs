//! The screen: header, panes, status bar, and any dialog on top.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, List, ListItem, ListState, Paragraph, Wrap};

use super::keymap;
pub use super::layout::{layout, layout_with};
use super::theme::{Theme, safe, verdict_glyph};
use super::ui::{Level, Modal, PageUi, Screen, Ui};
pub use super::widgets::{centered, numbered, pane_block};
use super::{palette, picker};

pub fn render(frame: &mut Frame, ui: &Ui) {
    let area = frame.area();
    ui.last_area.set(area);
    let [header, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    match &ui.screen {
        Screen::Picker(state) => {
            frame.render_widget(
                Line::styled(" rulebench · pages", ui.theme.accent()),
                header,
            );
            picker::render(frame, body, state, &ui.theme);
        }
        Screen::Page(page) => {
            render_header(frame, header, page, ui);
            let panes = if page.zoom {
                vec![(page.focus, body)]
            } else {
                layout_with(body, page.focus, page.shared)
            };
            for (pane, rect) in panes {
                let focused = pane == page.focus;
                let t = &ui.theme;
                if let Some(p) = page.panes().into_iter().find(|p| p.id() == pane) {
                    p.render(frame, rect, &page.look(t, focused));
                }
            }
        }
    }
    render_status(frame, status, ui);
    if let Some(modal) = &ui.modal {
        render_modal(frame, area, modal, ui);
    }
}

fn render_header(frame: &mut Frame, area: Rect, page: &PageUi, ui: &Ui) {
    let theme = &ui.theme;
    let ws = &page.ws;
    let mut spans = vec![];
    // A problem that lasts (an invalid or deleted linked file) stays in sight, first,
    // until a good reload clears it.
    if let Some(problem) = &ui.linked_problem {
        spans.push(Span::styled(format!(" ⚠ {} ", safe(problem)), theme.fail()));
    }
    spans.extend([
        Span::styled(format!(" {} ", safe(&ws.page.name)), theme.accent()),
        Span::styled(format!("· {} ", safe(&ws.page.id)), theme.dim()),
    ]);
    if ws.has_sources() {
        let d = &ws.page.source;
        let v = ws.eval.selection_verdict;
        spans.push(Span::raw("· selection "));
        spans.push(Span::styled(
            safe(&d.row_label(&d.rows[ws.selection])),
            theme.title(),
        ));
        spans.push(Span::styled(
            format!(" {} {v}", verdict_glyph(v)),
            theme.verdict(v),
        ));
        let rec = ws.eval.recommended.map_or("none".to_owned(), |t| {
            safe(&ws.page.target.row_label(&ws.page.target.rows[t]))
        });
        spans.push(Span::raw(format!(" · recommended {rec}")));
    }
    frame.render_widget(Line::from(spans), area);
}

fn render_status(frame: &mut Frame, area: Rect, ui: &Ui) {
    let t = &ui.theme;
    if let Some((label, fraction)) = &ui.reload_progress {
        // A linked file is being reloaded: a gauge takes the status line.
        let gauge = ratatui::widgets::Gauge::default()
            .gauge_style(t.accent())
            .ratio(fraction.clamp(0.0, 1.0))
            .label(format!("{label} {:.0}%", fraction * 100.0));
        frame.render_widget(gauge, area);
        return;
    }
    // The message first, at every width; the page, revision and save state on the
    // right when there is room for them after it.
    let mut spans = Vec::new();
    match &ui.status.message {
        // Escaped here, whatever made the message (an error naming an id, say).
        Some((m, Level::Error)) => spans.push(Span::styled(format!(" {}", safe(m)), t.fail())),
        Some((m, Level::Info)) => spans.push(Span::styled(format!(" {}", safe(m)), t.dim())),
        None => match ui
            .page()
            .and_then(|p| p.explain.explanation.as_ref().map(|e| (p, e)))
        {
            // The one-line reason of the selected cell.
            Some((page, e)) => {
                // A rule that does not apply to the pair is neither (n/a).
                let not_applicable = e.applies == Some(false);
                let glyph = if not_applicable {
                    super::theme::NOT_APPLICABLE
                } else if e.passed {
                    "✓"
                } else {
                    "✗"
                };
                let target = page
                    .ws
                    .page
                    .target
                    .rows
                    .get(page.explain.target)
                    .map(|r| page.ws.page.target.row_label(r))
                    .unwrap_or_default();
                spans.push(Span::styled(
                    format!(" {glyph} "),
                    if not_applicable {
                        t.dim()
                    } else if e.passed {
                        t.pass()
                    } else {
                        t.fail()
                    },
                ));
                spans.push(Span::raw(safe(&format!(
                    "{} × {target}: {}",
                    e.rule_id, e.sentence
                ))));
            }
            None => spans.push(Span::styled(" ? help · : commands", t.dim())),
        },
    }
    let mut right = Vec::new();
    if let Some(page) = ui.page() {
        let ws = &page.ws;
        let save = if page.editor.is_invalid() {
            Span::styled("invalid", t.fail())
        } else if ws.any_unsaved() {
            Span::styled("unsaved", t.warn())
        } else {
            Span::styled("saved", t.pass())
        };
        right.extend([
            Span::raw(format!(" {} · rev {} · ", safe(&ws.page.id), ws.revision)),
            save,
        ]);
        if ui.show_timings {
            right.push(Span::raw(format!(
                " · frame {:.2} ms",
                ui.last_frame.as_secs_f64() * 1e3
            )));
        }
        right.push(Span::raw(" "));
    }
    let left = Line::from(spans);
    let right = Line::from(right);
    let (lw, rw) = (left.width() as u16, right.width() as u16);
    if rw > 0 && lw + 1 + rw <= area.width {
        let [l, r] = Layout::horizontal([Constraint::Min(0), Constraint::Length(rw)]).areas(area);
        frame.render_widget(Paragraph::new(left), l);
        frame.render_widget(
            Paragraph::new(right).alignment(ratatui::layout::Alignment::Right),
            r,
        );
        return;
    }
    // No room for both: the message wins, wrapped onto nothing (cut at the edge).
    frame.render_widget(Paragraph::new(left), area);
}

fn render_modal(frame: &mut Frame, area: Rect, modal: &Modal, ui: &Ui) {
    let t = &ui.theme;
    match modal {
        Modal::Help { scroll, query } => {
            let rect = help_rect(area);
            let lines = help_text(ui, rect.width, query.as_deref(), t);
            frame.render_widget(Clear, rect);
            frame.render_widget(
                Paragraph::new(lines)
                    .scroll((*scroll, 0))
                    .block(pane_block("Help", t, true)),
                rect,
            );
        }
        Modal::Palette { query, selected } => {
            // As wide as the terminal allows (up to 110 columns), as tall as 18 rows.
            let rect = centered(area, area.width.saturating_sub(4).clamp(40, 110), 18);
            let entries = palette::entries(query, &ui.palette_facts());
            // Columns that fit the box: the label cut (with `…`) before it runs into
            // the keys.
            let inner = usize::from(rect.width.saturating_sub(2));
            let (keys_w, context_w) = (12, 14);
            let label_w = inner.saturating_sub(keys_w + context_w + 1).max(10);
            let items: Vec<ListItem> = entries
                .iter()
                .map(|e| {
                    let label_style = if e.unavailable.is_some() {
                        t.dim()
                    } else {
                        ratatui::style::Style::default()
                    };
                    ListItem::new(Line::from(vec![
                        Span::styled(super::widgets::fit_padded(&e.label, label_w), label_style),
                        Span::raw(" "),
                        Span::styled(super::widgets::fit_padded(&e.keys, keys_w), t.title()),
                        Span::styled(super::widgets::fit(&e.context, context_w), t.dim()),
                    ]))
                })
                .collect();
            frame.render_widget(Clear, rect);
            // Why the highlighted entry cannot run, at the foot of the box.
            let why = entries
                .get(*selected)
                .and_then(|e| e.unavailable.as_deref())
                .map(|w| format!(" cannot run now: {w} "));
            let mut block = pane_block(&format!("Command: {}▏", safe(query)), t, true);
            if let Some(why) = why {
                block = block.title_bottom(Line::from(Span::styled(why, t.warn())));
            }
            let list = List::new(items).block(block).highlight_style(t.selected());
            let mut ls = ListState::default().with_selected(Some(*selected));
            frame.render_stateful_widget(list, rect, &mut ls);
        }
        Modal::Confirm { message, .. } => {
            // Tall enough for the question wrapped at the box's width.
            let lines = super::widgets::rows(message.chars().count().div_ceil(60)).max(1);
            let rect = centered(area, 64, lines.saturating_add(3));
            frame.render_widget(Clear, rect);
            frame.render_widget(
                Paragraph::new(safe(message))
                    .wrap(Wrap { trim: true })
                    .block(pane_block("Confirm", t, true)),
                rect,
            );
        }
        Modal::Prompt { title, input, .. } => {
            let rect = centered(area, 60, 3);
            frame.render_widget(Clear, rect);
            let block = pane_block(title, t, true);
            let inner = block.inner(rect);
            frame.render_widget(block, rect);
            frame.render_widget(Paragraph::new(input_line(input, inner.width, t)), inner);
        }
        Modal::Frequency(s) => super::frequency::render(frame, area, s, t),
        Modal::History(s) => {
            let comparing = ui
                .page()
                .and_then(|p| p.ws.chosen_comparison())
                .map(|(r, _)| r);
            super::history::render(frame, area, s, comparing, t)
        }
        Modal::Json(s) => super::json_dialog::render(frame, area, s, t),
        Modal::Conflict(s) => super::conflict::render(frame, area, s, t),
        Modal::RuleForm(form) => {
            let rect = centered(area, 72, 10);
            frame.render_widget(Clear, rect);
            let field = |i: usize, label: &str, value: String| {
                let style = if form.field == i {
                    t.selected()
                } else {
                    ratatui::style::Style::default()
                };
                Line::from(vec![
                    Span::styled(format!("{label:<10}"), t.title()),
                    Span::styled(value, style),
                ])
            };
            let mut lines = vec![
                field(0, "name", safe(&form.name)),
                field(
                    1,
                    "required",
                    format!("[{}] (Space)", if form.required { "x" } else { " " }),
                ),
                field(2, "weight", safe(&form.weight)),
                field(3, "category", safe(&form.category)),
                field(
                    4,
                    "applies",
                    if form.applies_when.is_empty() && form.field != 4 {
                        "always (or a condition: source.needsVision == true)".to_owned()
                    } else {
                        safe(&form.applies_when)
                    },
                ),
                Line::styled("Tab moves · Enter saves · Esc cancels", t.dim()),
            ];
            if let Some(e) = &form.error {
                lines.push(Line::styled(safe(e), t.fail()));
            }
            frame.render_widget(
                Paragraph::new(lines).block(pane_block("Rule", t, true)),
                rect,
            );
        }
    }
}

/// A one-line prompt's text as shown: escaped like every other untrusted string (a
/// stored note or a pasted text may hold controls), scrolled so the cursor shows, the
/// cursor drawn as a reversed cell.
fn input_line(input: &ratatui_textarea::TextArea<'_>, width: u16, t: &Theme) -> Line<'static> {
    let ratatui_textarea::DataCursor(row, col) = input.cursor();
    let text = input.lines().get(row).map(String::as_str).unwrap_or("");
    let split = text
        .char_indices()
        .nth(col)
        .map_or(text.len(), |(at, _)| at);
    let (before, rest) = text.split_at(split);
    let mut rest = rest.chars();
    let at = rest.next().map_or(" ".to_owned(), |c| safe(&c.to_string()));
    let after = safe(rest.as_str());
    let mut before: Vec<char> = safe(before).chars().collect();
    // Scroll: keep the cursor within the width.
    let room = usize::from(width).saturating_sub(at.chars().count() + 1);
    if before.len() > room {
        before.drain(..before.len() - room);
    }
    // Text selected (a pre-filled prompt: typing replaces it) shows so.
    let rest = if input.is_selecting() {
        t.selected()
    } else {
        ratatui::style::Style::default()
    };
    Line::from(vec![
        Span::styled(before.into_iter().collect::<String>(), rest),
        Span::styled(
            at,
            t.selected()
                .add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        Span::styled(after, rest),
    ])
}

/// Where help is drawn: as wide as the terminal allows (up to 120 columns).
fn help_rect(area: Rect) -> Rect {
    centered(
        area,
        area.width.saturating_sub(4).clamp(30, 120),
        area.height.saturating_sub(4),
    )
}

/// Help's lines in a box `width` wide: what a key does wraps under itself, beside its
/// keys; narrowed to `query` when searching.
fn help_text(ui: &Ui, width: u16, query: Option<&str>, t: &Theme) -> Vec<Line<'static>> {
    let inner_w = usize::from(width.saturating_sub(2));
    let keys_w = 18.min(inner_w / 3);
    let text_w = inner_w.saturating_sub(keys_w + 2).max(10);
    let focus = ui.page().map(|p| p.focus);
    let groups = match query {
        Some(q) => keymap::help_lines_matching(focus, q),
        None => keymap::help_lines_for(focus),
    };
    let intro = match query {
        Some(q) => format!(
            "search: {}▏ (type words; Backspace; Esc clears) · {} places match",
            safe(q),
            groups.len()
        ),
        None => format!(
            "Keys (generated from the keymap; this pane's first) · {} searches · ↑↓ PgUp PgDn Home End scroll · Esc closes",
            keymap::keys_for(
                keymap::Context::Dialog(keymap::Dialog::Help),
                &crate::tui::action::Action::Find
            )
        ),
    };
    let mut lines: Vec<Line<'static>> = super::widgets::wrap(&intro, inner_w)
        .into_iter()
        .map(|l| Line::styled(l, t.dim()))
        .collect();
    for (title, entries) in groups {
        lines.push(Line::raw(""));
        lines.push(Line::styled(title, t.accent()));
        for (keys, help) in entries {
            for (i, part) in super::widgets::wrap(help, text_w).into_iter().enumerate() {
                let key_col = if i == 0 {
                    super::widgets::fit_padded(&keys, keys_w)
                } else {
                    " ".repeat(keys_w)
                };
                lines.push(Line::from(vec![
                    Span::styled(format!("  {key_col}"), t.title()),
                    Span::raw(part),
                ]));
            }
        }
    }
    lines
}

/// How far help scrolls on a screen of `area` (its lines as wrapped there, less a
/// screenful).
pub fn help_scroll_end(ui: &Ui, area: Rect, query: Option<&str>) -> u16 {
    let rect = help_rect(area);
    let lines = help_text(ui, rect.width, query, &ui.theme).len();
    super::widgets::rows(lines).saturating_sub(rect.height.saturating_sub(2))
}

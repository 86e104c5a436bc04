//! Matrix pane: rules (grouped by category) × targets for the selection. A frozen rule
//! column and frozen header rows (target label, ★ recommended, ⚑ overridden, summary
//! fields), ✓ / ✗ / ! cells (`*` when changed since the last save), and a footer with
//! each target's verdict and score. Only the visible slice is drawn, straight into the
//! buffer, so it stays smooth at 10,000 targets × 100 rules.

use std::cell::Cell;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::Paragraph;

use super::action::{Action, PaneId};
use super::theme::{self, Theme, safe, verdict_glyph};
use super::ui::{Ctx, Modal, PageUi, PromptFor};
use super::view::pane_block;
use crate::app::types::{Dataset, Rule};
use crate::app::types::{ERROR, PASS};

/// Width of the frozen rule-name column.
pub const NAME_WIDTH: u16 = 22;
/// Width of one target column (with its one-space gap).
pub const COL_WIDTH: u16 = 9;
/// The widest a target column grows when there is room to spare.
pub const MAX_COL_WIDTH: u16 = 24;
/// Most summary fields shown as header rows.
const MAX_SUMMARY: usize = 3;
/// Footer rows: verdict and score.
const FOOTER_ROWS: u16 = 2;

/// A row of the matrix body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// A category header, named by the category of this rule.
    Category(usize),
    Rule(usize),
}

/// The body rows: rules grouped by category, categories in first-appearance order.
pub fn display_rows(rules: &[Rule]) -> Vec<Row> {
    let mut categories: Vec<(&str, usize)> = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        if !categories.iter().any(|(c, _)| *c == r.category) {
            categories.push((&r.category, i));
        }
    }
    let mut rows = Vec::with_capacity(rules.len() + categories.len());
    for (category, first) in categories {
        rows.push(Row::Category(first));
        rows.extend(
            rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.category == category)
                .map(|(i, _)| Row::Rule(i)),
        );
    }
    rows
}

/// The rules in display order.
fn rule_order(rules: &[Rule]) -> Vec<usize> {
    display_rows(rules)
        .into_iter()
        .filter_map(|r| match r {
            Row::Rule(i) => Some(i),
            Row::Category(_) => None,
        })
        .collect()
}

#[derive(Debug, Default)]
pub struct State {
    /// The cursor's rule (an index into the page's rules).
    pub rule: usize,
    /// The cursor's target.
    pub target: usize,
    /// First body row shown; kept by render so that the cursor stays visible.
    row_offset: Cell<usize>,
    /// First target column shown; kept by render.
    col_offset: Cell<usize>,
    /// Body rows visible at the last render (PageUp/PageDown step).
    page_rows: Cell<usize>,
}

impl State {
    /// The first target column and first body row shown at the last render.
    pub fn offsets(&self) -> (usize, usize) {
        (self.col_offset.get(), self.row_offset.get())
    }

    fn clamp(&mut self, rules: usize, targets: usize) {
        self.rule = self.rule.min(rules.saturating_sub(1));
        self.target = self.target.min(targets.saturating_sub(1));
    }
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let rules = ctx.ws.page.rules.len();
    let targets = ctx.ws.page.target.rows.len();
    match action {
        Action::RuleSelected(i) => {
            if *i < rules {
                state.rule = *i;
            }
            vec![]
        }
        Action::TargetSelected(t) => {
            if *t < targets {
                state.target = *t;
            }
            vec![]
        }
        Action::Changed(_) | Action::SourceSelected(_) => {
            state.clamp(rules, targets);
            vec![]
        }
        Action::Up | Action::Down | Action::PageUp | Action::PageDown => {
            let order = rule_order(&ctx.ws.page.rules);
            if order.is_empty() {
                return vec![];
            }
            let pos = order.iter().position(|&r| r == state.rule).unwrap_or(0);
            // A page of rows as last rendered (10 before the first render).
            let page = match state.page_rows.get() {
                0 => 10,
                rows => rows.saturating_sub(1).max(1),
            };
            let last = order.len() - 1;
            let next = match action {
                Action::Up => pos.saturating_sub(1),
                Action::Down => (pos + 1).min(last),
                Action::PageUp => pos.saturating_sub(page),
                _ => (pos + page).min(last),
            };
            if order[next] == state.rule {
                return vec![];
            }
            state.rule = order[next];
            vec![Action::RuleSelected(state.rule)]
        }
        Action::Left | Action::Right | Action::Home | Action::End => {
            if targets == 0 {
                return vec![];
            }
            let next = match action {
                Action::Left => state.target.saturating_sub(1),
                Action::Right => (state.target + 1).min(targets - 1),
                Action::Home => 0,
                _ => targets - 1,
            };
            if next == state.target {
                return vec![];
            }
            state.target = next;
            vec![Action::TargetSelected(next)]
        }
        Action::Enter => {
            *ctx.focus = PaneId::Explain;
            vec![]
        }
        Action::EditRule if state.rule < rules => vec![
            Action::RuleSelected(state.rule),
            Action::Focus(PaneId::Editor),
            Action::EditRule,
        ],
        Action::ToggleOverride => toggle_override(state, ctx),
        _ => vec![],
    }
}

/// `o`: no override → force compatible (asks for a note) → force incompatible (asks)
/// → cleared.
fn toggle_override(state: &State, ctx: &mut Ctx<'_>) -> Vec<Action> {
    let t = state.target;
    if !ctx.ws.has_sources() || t >= ctx.ws.page.target.rows.len() {
        ctx.status.error("no (selection, target) pair to override");
        return vec![];
    }
    let d = &ctx.ws.page.target;
    let label = safe(&d.row_label(&d.rows[t]));
    let value = match ctx.ws.override_of(t).map(|o| o.value) {
        None => true,
        Some(true) => false,
        Some(false) => {
            // The third `o` clears the override (and its note): asked first.
            *ctx.modal = Some(Modal::Confirm {
                message: format!("Clear the override of {label} and its note? y/n"),
                on_yes: Action::ClearOverride(ctx.ws.selection, t),
                on_no: None,
            });
            return vec![];
        }
    };
    let what = if value { "compatible" } else { "incompatible" };
    *ctx.modal = Some(Modal::Prompt {
        title: format!("Force {label} {what} · note (optional), Enter saves"),
        input: Box::default(),
        purpose: PromptFor::OverrideNote { target: t, value },
    });
    vec![]
}

/// `text` cut to `width` columns, with `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if Span::raw(text).width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = Span::raw(c.to_string()).width();
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// A label cut to `width` columns in the middle, keeping its distinguishing end:
/// `Claude Sonnet 4` → `Cla…et 4`, `Model 9992` → `Mod…9992`.
fn fit_middle(text: &str, width: usize) -> String {
    if Span::raw(text).width() <= width || width < 5 {
        return fit(text, width);
    }
    let chars: Vec<char> = text.chars().collect();
    let tail_n = width / 2;
    let head_n = width - 1 - tail_n;
    let head: String = chars[..head_n].iter().collect();
    let tail: String = chars[chars.len() - tail_n..].iter().collect();
    let out = format!("{}…{}", head.trim_end(), tail.trim_start());
    // Wide characters: fall back to cutting the end.
    if Span::raw(out.as_str()).width() > width {
        fit(text, width)
    } else {
        out
    }
}

/// A summary field's value as a header shows it.
fn field_text(d: &Dataset, row: usize, field: &str) -> String {
    match d.rows[row].get(field) {
        Some(serde_json::Value::String(s)) => safe(s),
        Some(v) => safe(&v.to_string()),
        None => String::new(),
    }
}

/// The first index to show so that `cursor` is visible in `visible` slots of `len`.
fn follow(offset: usize, cursor: usize, visible: usize, len: usize) -> usize {
    let visible = visible.max(1);
    let mut off = offset;
    if cursor < off {
        off = cursor;
    } else if cursor >= off + visible {
        off = cursor + 1 - visible;
    }
    off.min(len.saturating_sub(visible))
}

pub fn render(frame: &mut Frame, area: Rect, page: &PageUi, theme: &Theme, focused: bool) {
    let ws = &page.ws;
    let rules = &ws.page.rules;
    let targets = &ws.page.target;
    let nt = targets.rows.len();
    let mut title = format!("Matrix: {} rules × {} targets", rules.len(), nt);
    if let Some((rev, c)) = ws.comparison() {
        title.push_str(&if c.selection_absent {
            format!(" · vs rev {rev}: this source was not there")
        } else {
            format!(
                " · vs rev {rev}: {} cells, {} verdicts moved",
                c.cells_moved, c.verdicts_moved
            )
        });
    }
    if let Some(row) = targets.rows.get(page.matrix.target) {
        title.push_str(&format!(
            " · ▸ {} ({}/{nt})",
            safe(&targets.row_label(row)),
            page.matrix.target + 1
        ));
    }
    if page.editor.is_invalid() {
        title.push_str(" · dimmed: the editor's text is invalid");
    }
    let block = pane_block(
        &super::view::numbered(super::action::PaneId::Matrix, &title),
        theme,
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let empty = if rules.is_empty() {
        Some("No rules yet: press 2, then a, to add one.")
    } else if nt == 0 {
        Some("This page has no targets.")
    } else if !ws.has_sources() {
        Some("This page has no sources: nothing to evaluate.")
    } else {
        None
    };
    if let Some(message) = empty {
        frame.render_widget(Paragraph::new(message).style(theme.dim()), inner);
        return;
    }
    if inner.width < 4 || inner.height < 3 {
        return;
    }
    draw(frame.buffer_mut(), inner, page, theme);
}

/// Draws the visible slice of the matrix into `inner`.
fn draw(buf: &mut Buffer, inner: Rect, page: &PageUi, theme: &Theme) {
    let ws = &page.ws;
    let st = &page.matrix;
    let rules = &ws.page.rules;
    let targets = &ws.page.target;
    let nt = targets.rows.len();
    let dim_cells = page.editor.is_invalid();
    let rows = display_rows(rules);

    // Vertical layout: header, summary rows, body, footer — summary rows give way first.
    let summary: Vec<&String> = targets.summary.iter().take(MAX_SUMMARY).collect();
    let fixed = 1 + FOOTER_ROWS;
    let summary_rows = (summary.len() as u16).min(inner.height.saturating_sub(fixed + 1));
    let header_h = 1 + summary_rows;
    let footer_h = FOOTER_ROWS.min(inner.height.saturating_sub(header_h + 1));
    let body_h = inner.height.saturating_sub(header_h + footer_h).max(1);

    // Horizontal layout: the frozen name column, then as many target columns as fit.
    let name_w = NAME_WIDTH.min(inner.width.saturating_sub(COL_WIDTH).max(inner.width / 2));
    // Columns share the room there is: wider than the minimum when every target fits
    // with space to spare (labels are cut less), at most MAX_COL_WIDTH.
    let avail = inner.width.saturating_sub(name_w);
    let col_w = if (nt as u16).saturating_mul(COL_WIDTH) < avail {
        (avail / (nt as u16).max(1)).clamp(COL_WIDTH, MAX_COL_WIDTH)
    } else {
        COL_WIDTH
    };
    let cols = ((avail / col_w).max(1)) as usize;
    let cell_w = (col_w - 1) as usize;

    // Follow the cursor.
    let col_off = follow(st.col_offset.get(), st.target.min(nt - 1), cols, nt);
    st.col_offset.set(col_off);
    let cursor_row = rows
        .iter()
        .position(|r| *r == Row::Rule(st.rule))
        .unwrap_or(0);
    let mut row_off = st.row_offset.get();
    if cursor_row < row_off && body_h >= 2 {
        // Scrolling up onto a category's first rule shows its header too.
        row_off = match rows.get(cursor_row.wrapping_sub(1)) {
            Some(Row::Category(_)) => cursor_row - 1,
            _ => cursor_row,
        };
    }
    let row_off = follow(row_off, cursor_row, body_h as usize, rows.len());
    st.row_offset.set(row_off);
    st.page_rows.set(body_h as usize);

    let visible: Vec<usize> = (col_off..nt.min(col_off + cols)).collect();
    let col_x = |c: usize| inner.x + name_w + (c as u16) * col_w;
    let right = inner.right();
    let put = |buf: &mut Buffer, x: u16, y: u16, text: &str, width: usize, style: Style| {
        if x < right {
            buf.set_stringn(x, y, text, width.min((right - x) as usize), style);
        }
    };
    let name_text_w = name_w.saturating_sub(1) as usize;

    // Header: target labels with ★ (recommended) and ⚑ (overridden), cut at the end
    // or in the middle, whichever keeps the visible labels more distinct.
    let y = inner.y;
    let markers: Vec<(bool, bool)> = visible
        .iter()
        .map(|&t| {
            (
                ws.eval.recommended == Some(t),
                ws.eval.overrides.get(t).is_some_and(Option::is_some),
            )
        })
        .collect();
    let labels = {
        let full: Vec<String> = visible
            .iter()
            .map(|&t| safe(&targets.row_label(&targets.rows[t])))
            .collect();
        let cut = |f: fn(&str, usize) -> String| -> Vec<String> {
            full.iter()
                .zip(&markers)
                .map(|(l, (a, b))| f(l, cell_w - usize::from(*a) - usize::from(*b)))
                .collect()
        };
        let distinct = |v: &[String]| v.iter().collect::<std::collections::HashSet<_>>().len();
        let (end, middle) = (cut(fit), cut(fit_middle));
        if distinct(&middle) > distinct(&end) {
            middle
        } else {
            end
        }
    };
    let last = if nt > cols {
        format!("{}–{}/{}", col_off + 1, col_off + visible.len(), nt)
    } else {
        "rule \\ target".to_owned()
    };
    put(
        buf,
        inner.x,
        y,
        &fit(&last, name_text_w),
        name_text_w,
        theme.dim(),
    );
    for (c, &t) in visible.iter().enumerate() {
        let x = col_x(c);
        let mut used = 0u16;
        let (recommended, overridden) = markers[c];
        if recommended {
            put(buf, x, y, theme::RECOMMENDED, 1, theme.warn());
            used += 1;
        }
        if overridden {
            put(buf, x + used, y, theme::OVERRIDE, 1, theme.accent());
            used += 1;
        }
        let width = cell_w - used as usize;
        let style = if t == st.target {
            theme.accent().add_modifier(Modifier::UNDERLINED)
        } else {
            theme.title()
        };
        put(buf, x + used, y, &labels[c], width, style);
    }
    // Summary rows: the target's summary field values.
    for (k, field) in summary.iter().take(summary_rows as usize).enumerate() {
        let y = inner.y + 1 + k as u16;
        put(
            buf,
            inner.x,
            y,
            &fit(&safe(field), name_text_w),
            name_text_w,
            theme.dim(),
        );
        for (c, &t) in visible.iter().enumerate() {
            let text = fit(&field_text(targets, t, field), cell_w);
            put(buf, col_x(c), y, &text, cell_w, theme.dim());
        }
    }

    // Body.
    let body_y = inner.y + header_h;
    for (k, row) in rows.iter().skip(row_off).take(body_h as usize).enumerate() {
        let y = body_y + k as u16;
        match *row {
            Row::Category(i) => {
                let text = format!("▾ {}", safe(&rules[i].category));
                put(buf, inner.x, y, &text, inner.width as usize, theme.title());
            }
            Row::Rule(r) => {
                let rule = &rules[r];
                if rule.required {
                    put(buf, inner.x, y, "■", 1, theme.fail());
                }
                let name_style = if r == st.rule {
                    theme.accent()
                } else {
                    Style::default()
                };
                let name = fit(&safe(&rule.name), name_text_w.saturating_sub(1));
                put(buf, inner.x + 1, y, &name, name_text_w - 1, name_style);
                let column = ws.eval.columns.get(r);
                for (c, &t) in visible.iter().enumerate() {
                    let x = col_x(c);
                    let Some(&outcome) = column.and_then(|col| col.outcome.get(t)) else {
                        continue;
                    };
                    let (glyph, mut style) = match outcome {
                        PASS => (theme::PASS, theme.pass()),
                        ERROR => ("!", theme.warn()),
                        _ => (theme::FAIL, theme.fail()),
                    };
                    let changed = ws.changed_since_save(r, t);
                    let mut mark_style = theme.warn();
                    if changed {
                        style = style.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
                    }
                    if dim_cells {
                        style = theme.dim();
                        mark_style = theme.dim();
                    }
                    put(buf, x + 2, y, glyph, 1, style);
                    if changed {
                        put(buf, x + 3, y, theme::CHANGED, 1, mark_style);
                    }
                    if r == st.rule && t == st.target {
                        let w = (cell_w as u16).min(right.saturating_sub(x));
                        buf.set_style(Rect::new(x, y, w, 1), theme.selected());
                    }
                }
            }
        }
    }
    // A legend when there is room to spare.
    if rows.len() < body_h as usize {
        let y = body_y + body_h - 1;
        let legend = format!(
            "{} pass  {} fail  ! error  ■ required  {} changed since {}  {} override  {} recommended",
            theme::PASS,
            theme::FAIL,
            theme::CHANGED,
            ws.comparison()
                .map_or_else(|| "save".to_owned(), |(rev, _)| format!("revision {rev}")),
            theme::OVERRIDE,
            theme::RECOMMENDED
        );
        put(buf, inner.x, y, &legend, inner.width as usize, theme.dim());
    }

    // Footer: verdict glyph and score per target.
    let footer_y = body_y + body_h;
    if footer_h >= 1 {
        put(buf, inner.x, footer_y, "verdict", name_text_w, theme.dim());
        for (c, &t) in visible.iter().enumerate() {
            if let Some(d) = ws.eval.devices.get(t) {
                let v = d.verdict;
                put(
                    buf,
                    col_x(c) + 2,
                    footer_y,
                    verdict_glyph(v),
                    1,
                    theme.verdict(v),
                );
                if ws.verdict_moved(t) {
                    put(buf, col_x(c) + 3, footer_y, theme::CHANGED, 1, theme.warn());
                }
            }
        }
    }
    if footer_h >= 2 {
        let y = footer_y + 1;
        put(buf, inner.x, y, "score", name_text_w, theme.dim());
        for (c, &t) in visible.iter().enumerate() {
            if let Some(d) = ws.eval.devices.get(t) {
                let text = format!("{:.2}", d.score);
                put(buf, col_x(c), y, &text, cell_w, theme.verdict(d.verdict));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(category: &str) -> Rule {
        Rule {
            id: String::new(),
            name: "r".into(),
            required: false,
            weight: 1.0,
            category: category.into(),
            description: None,
            logic: json!(true),
        }
    }

    #[test]
    fn rows_group_rules_by_category_in_first_appearance_order() {
        let rules = vec![rule("B"), rule("A"), rule("B"), rule("C")];
        assert_eq!(
            display_rows(&rules),
            vec![
                Row::Category(0),
                Row::Rule(0),
                Row::Rule(2),
                Row::Category(1),
                Row::Rule(1),
                Row::Category(3),
                Row::Rule(3)
            ]
        );
        assert_eq!(rule_order(&rules), vec![0, 2, 1, 3]);
    }

    #[test]
    fn fitting_and_following() {
        assert_eq!(fit("GPT-4.1", 7), "GPT-4.1");
        assert_eq!(fit("Claude Sonnet", 7), "Claude…");
        assert_eq!(fit_middle("Claude Sonnet 4", 8), "Cla…et 4");
        assert_eq!(fit_middle("Model 9992", 8), "Mod…9992");
        assert_eq!(fit_middle("Llama 3.3 70B", 8), "Lla…70B");
        assert_eq!(fit_middle("GPT-4.1", 7), "GPT-4.1");
        assert_eq!(follow(0, 5, 3, 10), 3);
        assert_eq!(follow(4, 2, 3, 10), 2);
        assert_eq!(follow(9, 9, 3, 10), 7);
        assert_eq!(follow(0, 0, 20, 5), 0);
    }

    mod driven {
        use ratatui::Terminal;
        use ratatui::backend::TestBackend;
        use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

        use crate::app::App;
        use crate::tui::action::PaneId;
        use crate::tui::theme::Theme;
        use crate::tui::ui::{Modal, PromptFor, Ui};

        fn open(dir: &tempfile::TempDir, page: &str) -> Ui {
            let app = App::open(&dir.path().join("m.db")).unwrap();
            Ui::new(app, Some(page), Theme::mono()).unwrap()
        }

        fn press(ui: &mut Ui, code: KeyCode) {
            ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
        }

        fn screen(ui: &Ui, w: u16, h: u16) -> String {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| crate::tui::view::render(f, ui)).unwrap();
            t.backend().to_string()
        }

        #[test]
        fn moving_selects_and_the_explanation_follows() {
            let dir = tempfile::tempdir().unwrap();
            let mut ui = open(&dir, "llm-chat-clients");
            press(&mut ui, KeyCode::Char('3'));
            for _ in 0..3 {
                press(&mut ui, KeyCode::Right);
            }
            press(&mut ui, KeyCode::Down);
            let p = ui.page().unwrap();
            let o1 = p.ws.page.target.find_row("o1-pro").unwrap();
            let tc = p.ws.page.rule("tool-calling").unwrap().0;
            assert_eq!((p.matrix.target, p.matrix.rule), (o1, tc));
            // The other panes heard it.
            assert_eq!(p.rules.selected(), Some(tc));
            assert_eq!((p.explain.target, p.explain.rule), (o1, tc));
            assert_eq!(
                p.explain.title,
                "Explanation: Tool Calling Support × o1-pro"
            );
            let s = screen(&ui, 180, 50);
            assert!(s.contains("▸ o1-pro (4/14)"), "{s}");
            assert!(s.contains("★GPT-4.1"), "{s}");
            assert!(s.contains("▾ Core Features"), "{s}");
            assert!(s.contains("Fields read:"), "{s}");
            // Streaming fails for o1-pro: both failing conditions are in the sentence.
            press(&mut ui, KeyCode::Up);
            let s = screen(&ui, 180, 50);
            assert!(s.contains("source.needsStreaming is true"), "{s}");
            // Home / End jump across targets; Enter focuses the explanation.
            press(&mut ui, KeyCode::End);
            assert_eq!(ui.page().unwrap().explain.target, 13);
            press(&mut ui, KeyCode::Home);
            assert_eq!(ui.page().unwrap().matrix.target, 0);
            press(&mut ui, KeyCode::Enter);
            assert_eq!(ui.page().unwrap().focus, PaneId::Explain);
            // `e` edits the row's rule.
            press(&mut ui, KeyCode::Char('3'));
            press(&mut ui, KeyCode::Char('e'));
            let p = ui.page().unwrap();
            assert_eq!(p.focus, PaneId::Editor);
            assert!(p.editor.active);
            assert_eq!(p.editor.rule, p.ws.page.rule("streaming").unwrap().0);
        }

        #[test]
        fn o_cycles_an_override_through_compatible_incompatible_and_none() {
            let dir = tempfile::tempdir().unwrap();
            let mut ui = open(&dir, "llm-chat-clients");
            press(&mut ui, KeyCode::Char('3'));
            for _ in 0..3 {
                press(&mut ui, KeyCode::Right);
            }
            let t = ui.page().unwrap().matrix.target;
            press(&mut ui, KeyCode::Char('o'));
            match &ui.modal {
                Some(Modal::Prompt { purpose, .. }) => {
                    assert_eq!(
                        *purpose,
                        PromptFor::OverrideNote {
                            target: t,
                            value: true
                        }
                    )
                }
                _ => panic!("expected the note prompt"),
            }
            press(&mut ui, KeyCode::Enter);
            assert_eq!(ui.page().unwrap().ws.eval.overrides[t], Some(true));
            assert!(screen(&ui, 180, 50).contains("⚑o1-pro"));
            press(&mut ui, KeyCode::Char('o'));
            for c in "outage".chars() {
                press(&mut ui, KeyCode::Char(c));
            }
            press(&mut ui, KeyCode::Enter);
            let p = ui.page().unwrap();
            assert_eq!(p.ws.eval.overrides[t], Some(false));
            assert_eq!(p.ws.override_of(t).unwrap().note.as_deref(), Some("outage"));
            assert!(p.explain.lines[0].iter().any(|(_, s)| s.contains("outage")));
            press(&mut ui, KeyCode::Char('o'));
            // Clearing the override (and its note) is asked first; n keeps it.
            assert!(ui.modal.is_some());
            press(&mut ui, KeyCode::Char('n'));
            assert_eq!(ui.page().unwrap().ws.eval.overrides[t], Some(false));
            press(&mut ui, KeyCode::Char('o'));
            press(&mut ui, KeyCode::Char('y'));
            assert!(ui.modal.is_none());
            assert_eq!(ui.page().unwrap().ws.eval.overrides[t], None);
        }

        #[test]
        fn ten_thousand_targets_scroll_with_the_cursor() {
            let dir = tempfile::tempdir().unwrap();
            let mut app = App::open(&dir.path().join("m.db")).unwrap();
            let page = crate::synth::page(10_000, 100, 2, crate::synth::Spread::Realistic, 7);
            app.import(&serde_json::to_string(&page).unwrap(), "synth", false)
                .unwrap();
            let mut ui = Ui::new(app, Some(&page.id), Theme::mono()).unwrap();
            press(&mut ui, KeyCode::Char('3'));
            press(&mut ui, KeyCode::End);
            screen(&ui, 180, 50);
            for _ in 0..3 {
                press(&mut ui, KeyCode::PageDown);
            }
            let s = screen(&ui, 180, 50);
            let p = ui.page().unwrap();
            assert_eq!(p.matrix.target, 9_999);
            let (col, row) = p.matrix.offsets();
            assert!(col > 9_980 && col < 9_999, "{col}");
            assert!(row > 0);
            assert!(s.contains("/10000"), "{s}");
            assert!(s.contains(&format!(
                "▸ {}",
                p.ws.page.target.row_label(&p.ws.page.target.rows[9_999])
            )));
        }
    }
}

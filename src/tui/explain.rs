//! Explanation pane: why the matrix's selected cell passed or failed. The target's
//! verdict and why, the rule's outcome and sentence, the fields read with their values,
//! and the tree mirroring the rule with every node's value (`·` where JSONLogic
//! short-circuited past it). Computed when the selection, the rule, the target or the
//! results change — never per frame.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::action::Action;
use super::pane::{Ctx, Look, Pane};
use super::theme::{self, Theme, safe, verdict_glyph};
use super::widgets::pane_block;
use crate::app::jobs::JobResult;
use crate::app::text::fmt_value;
use crate::app::types::{ERROR, NOT_APPLICABLE, PASS};
use crate::app::types::{Explanation, Kind};
use crate::app::workspace::Session;

/// How a piece of text is styled (the theme is applied at render).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Pass,
    Fail,
    Warn,
    Dim,
    Title,
    Verdict(crate::app::types::Verdict),
}

impl Tone {
    fn style(self, theme: &Theme) -> Style {
        match self {
            Tone::Plain => Style::default(),
            Tone::Pass => theme.pass(),
            Tone::Fail => theme.fail(),
            Tone::Warn => theme.warn(),
            Tone::Dim => theme.dim(),
            Tone::Title => theme.title(),
            Tone::Verdict(v) => theme.verdict(v),
        }
    }
}

/// One line of the pane: styled pieces, already made safe.
pub type Text = Vec<(Tone, String)>;

#[derive(Debug, Default)]
pub struct State {
    pub rule: usize,
    pub target: usize,
    /// The latest explanation of (selection, rule, target).
    pub explanation: Option<Explanation>,
    /// The title: rule name × target label.
    pub title: String,
    /// The pane's lines, built with the explanation.
    pub lines: Vec<Text>,
    pub scroll: usize,
    /// Whether the pane also shows what would change the verdict (`w`).
    pub why_not: bool,
    /// The furthest the pane scrolls: its last line at the bottom (set when drawn, where
    /// the height and the wrapping are known).
    pub max_scroll: std::cell::Cell<Option<usize>>,
}

impl State {
    /// Recomputes the explanation of the current (rule, target) for the selection.
    pub fn refresh(&mut self, ws: &Session) {
        let rules = ws.page.rules.len();
        let targets = ws.page.target.rows.len();
        self.rule = self.rule.min(rules.saturating_sub(1));
        self.target = self.target.min(targets.saturating_sub(1));
        if rules == 0 || targets == 0 || !ws.has_sources() {
            self.explanation = None;
            self.title = "Explanation".into();
            self.lines = vec![vec![(
                Tone::Dim,
                "Nothing to explain: the page needs rules, sources and targets.".into(),
            )]];
            self.scroll = 0;
            return;
        }
        let e = ws.explain(self.rule, self.target);
        let d = &ws.page.target;
        self.title = format!(
            "Explanation: {} × {}",
            safe(&ws.page.rules[self.rule].name),
            safe(&d.row_label(&d.rows[self.target]))
        );
        self.lines = lines(ws, self.rule, self.target, &e);
        if self.why_not {
            self.lines.extend(why_not(ws, self.target));
        }
        self.explanation = Some(e);
        self.scroll = self.scroll.min(self.lines.len().saturating_sub(1));
    }
}

/// The pane's content for an explanation.
fn lines(ws: &Session, rule: usize, target: usize, e: &Explanation) -> Vec<Text> {
    let mut out: Vec<Text> = Vec::new();
    let d = &ws.page.target;
    let label = safe(&d.row_label(&d.rows[target]));
    let v = ws
        .eval
        .devices
        .get(target)
        .map(|d| d.verdict)
        .unwrap_or_default();
    out.push(vec![
        (Tone::Verdict(v), format!("{} {label}", verdict_glyph(v))),
        (Tone::Plain, format!(": {}", safe(&ws.target_why(target)))),
    ]);
    let outcome = ws
        .eval
        .columns
        .get(rule)
        .and_then(|c| c.outcome.get(target).copied());
    let (glyph, word, tone) = match (outcome, e.passed) {
        (Some(ERROR), _) => ("!", "error", Tone::Warn),
        (Some(PASS), _) | (None, true) => (theme::PASS, "passes", Tone::Pass),
        (Some(NOT_APPLICABLE), _) => (theme::NOT_APPLICABLE, "does not apply", Tone::Dim),
        (None, false) if e.applies == Some(false) => {
            (theme::NOT_APPLICABLE, "does not apply", Tone::Dim)
        }
        _ => (theme::FAIL, "fails", Tone::Fail),
    };
    let name = safe(&ws.page.rules[rule].name);
    // The sentence says "does not apply: …" where the word already does.
    let sentence = e
        .sentence
        .strip_prefix("does not apply: ")
        .filter(|_| word == "does not apply")
        .unwrap_or(&e.sentence);
    out.push(vec![
        (tone, format!("{glyph} {name} {word}: ")),
        (Tone::Plain, safe(sentence)),
    ]);
    if let Some(w) = crate::app::explain::cell_warning(&ws.page, &ws.eval, rule, target) {
        out.push(vec![(
            Tone::Warn,
            format!("⚠ warning {}: {}", safe(&w.kind), safe(&w.detail)),
        )]);
    }
    for d in ws.rule_lint(rule) {
        let hint = d
            .hint
            .as_ref()
            .map(|h| format!(" (hint: {})", safe(h)))
            .unwrap_or_default();
        out.push(vec![(
            Tone::Warn,
            format!("⚠ {}: {}{hint}", d.code, safe(&d.message)),
        )]);
    }
    out.push(vec![]);
    out.push(vec![(Tone::Title, "Fields read:".into())]);
    if e.fields.is_empty() {
        out.push(vec![(Tone::Dim, "  (none)".into())]);
    }
    for (path, value) in &e.fields {
        let mut line = vec![
            (Tone::Plain, format!("  {} = ", safe(path))),
            (Tone::Plain, safe(&fmt_value(value))),
        ];
        if e.missing.contains(path) {
            line.push((Tone::Warn, " (missing)".into()));
        }
        out.push(line);
    }
    if let Some(condition) = &e.condition {
        out.push(vec![]);
        out.push(vec![(Tone::Title, "Applies when:".into())]);
        tree(condition, &mut out);
    }
    out.push(vec![]);
    out.push(vec![(
        Tone::Title,
        "Tree (✓ truthy, ✗ falsy, · not evaluated):".into(),
    )]);
    tree(&e.tree, &mut out);
    out
}

/// What would move the target to each other verdict (the smallest sets of rule
/// outcomes), then the threshold values past which its verdict changes.
fn why_not(ws: &Session, target: usize) -> Vec<Text> {
    use crate::app::types::Verdict;
    let mut out: Vec<Text> = vec![
        vec![],
        vec![(Tone::Title, "What would change it (w hides):".into())],
    ];
    let mut thresholds = Vec::new();
    for asked in [Verdict::Full, Verdict::Partial, Verdict::None] {
        let w = ws.why_not(target, asked);
        // The same for every verdict asked (they are this target's).
        thresholds = crate::print::explain::threshold_lines(&w);
        if w.without_override.unwrap_or(w.verdict) == asked {
            continue;
        }
        out.push(vec![(
            Tone::Verdict(asked),
            format!("→ {} {asked}:", verdict_glyph(asked)),
        )]);
        for l in crate::print::explain::why_not_lines(&w) {
            out.push(vec![(Tone::Plain, format!("  {l}"))]);
        }
    }
    for l in thresholds {
        out.push(vec![(Tone::Dim, l)]);
    }
    out
}

/// A tree's lines: each node with its glyph, label and value, indented by depth.
fn tree(root: &crate::app::types::Node, out: &mut Vec<Text>) {
    for (depth, n) in root.walk() {
        let indent = "  ".repeat(depth + 1);
        let (glyph, tone) = match (n.kind, n.evaluated, n.pass) {
            (Kind::ItemScope, _, _) => ("∀", Tone::Dim),
            (Kind::Literal, true, _) => (" ", Tone::Plain),
            (_, false, _) => ("·", Tone::Dim),
            (_, true, Some(true)) => (theme::PASS, Tone::Pass),
            (_, true, Some(false)) => (theme::FAIL, Tone::Fail),
            (_, true, None) => ("!", Tone::Warn),
        };
        let label_tone = if n.evaluated { Tone::Plain } else { Tone::Dim };
        let mut line = vec![
            (tone, format!("{indent}{glyph} ")),
            (label_tone, safe(&n.label)),
        ];
        match (&n.value, &n.error) {
            _ if matches!(n.kind, Kind::Literal | Kind::ItemScope) => {}
            (Some(value), _) => line.push((Tone::Dim, format!(" → {}", safe(&fmt_value(value))))),
            (None, Some(err)) => line.push((Tone::Warn, format!(" → error: {}", safe(err)))),
            (None, None) => {}
        }
        if !n.evaluated && n.kind != Kind::Literal {
            line.push((Tone::Dim, " (not evaluated)".into()));
        }
        out.push(line);
        if let Some(s) = n.sentence.as_ref().filter(|_| n.kind != Kind::Field) {
            out.push(vec![(Tone::Dim, format!("{indent}    {}", safe(s)))]);
        }
    }
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    // As far as the last drawing allowed (the last line at the bottom), else the last line.
    let max = state
        .max_scroll
        .get()
        .map_or(state.lines.len().saturating_sub(1), |m| {
            m.min(state.lines.len().saturating_sub(1))
        });
    match action {
        Action::RuleSelected(i) => {
            if *i != state.rule {
                state.scroll = 0;
            }
            state.rule = *i;
            state.refresh(ctx.ws);
        }
        Action::TargetSelected(t) => {
            if *t != state.target {
                state.scroll = 0;
            }
            state.target = *t;
            state.refresh(ctx.ws);
        }
        Action::SourceSelected(_) | Action::Changed(_) => state.refresh(ctx.ws),
        Action::Up => state.scroll = state.scroll.saturating_sub(1),
        Action::Down => state.scroll = (state.scroll + 1).min(max),
        Action::PageUp => state.scroll = state.scroll.saturating_sub(10),
        Action::PageDown => state.scroll = (state.scroll + 10).min(max),
        Action::Home => state.scroll = 0,
        Action::End => state.scroll = max,
        Action::WhyNot => {
            state.why_not = !state.why_not;
            state.refresh(ctx.ws);
            if state.why_not {
                // The answer is at the end: show it.
                state.scroll = state.lines.len().saturating_sub(12);
            }
        }

        _ => {}
    }
    vec![]
}

/// Word-wraps a line to `width` columns; continuation lines keep the line's indent
/// (plus two), so the tree stays readable in a narrow pane.
pub fn wrap(text: &Text, width: usize) -> Vec<Text> {
    let width = width.max(8);
    let lead: String = text
        .first()
        .map(|(_, s)| s.chars().take_while(|c| *c == ' ').collect())
        .unwrap_or_default();
    let hang = format!("{lead}  ");
    let hang = if hang.chars().count() + 8 > width {
        String::new()
    } else {
        hang
    };
    let mut out: Vec<Text> = vec![vec![]];
    let mut used = 0;
    let mut at_start = true;
    for (tone, piece) in text {
        // Split into words, each keeping its trailing spaces.
        let mut words: Vec<String> = Vec::new();
        for c in piece.chars() {
            match words.last_mut() {
                Some(w) if !(c != ' ' && w.ends_with(' ')) => w.push(c),
                _ => words.push(c.to_string()),
            }
        }
        for word in words {
            let mut word = word;
            let mut w = Span::raw(word.as_str()).width();
            if used + Span::raw(word.trim_end()).width() > width && !at_start {
                out.push(vec![(Tone::Plain, hang.clone())]);
                used = hang.chars().count();
            }
            // A word longer than a line is cut.
            while used + Span::raw(word.trim_end()).width() > width && w > 1 {
                let room = width.saturating_sub(used).max(1);
                let head: String = word.chars().take(room).collect();
                let tail: String = word.chars().skip(room).collect();
                out.last_mut().expect("a line").push((*tone, head));
                out.push(vec![(Tone::Plain, hang.clone())]);
                used = hang.chars().count();
                word = tail;
                w = Span::raw(word.as_str()).width();
            }
            at_start = word.chars().all(|c| c == ' ') && at_start;
            used += w;
            out.last_mut().expect("a line").push((*tone, word));
        }
    }
    out
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let st = &state;
    let title = if st.title.is_empty() {
        "Explanation"
    } else {
        &st.title
    };
    let block = pane_block(
        &super::widgets::numbered(super::action::PaneId::Explain, title),
        theme,
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    // Never past the end: at most so far that the last line sits at the bottom.
    let mut rows = 0;
    let mut max_start = st.lines.len();
    for (i, text) in st.lines.iter().enumerate().rev() {
        rows += wrap(text, width).len().max(1);
        if rows > inner.height as usize {
            break;
        }
        max_start = i;
    }
    st.max_scroll.set(Some(max_start));
    let lines: Vec<Line> = st
        .lines
        .iter()
        .skip(st.scroll.min(max_start))
        .flat_map(|text| wrap(text, width))
        .take(inner.height as usize)
        .map(|text| {
            Line::from(
                text.into_iter()
                    .map(|(tone, s)| Span::styled(s, tone.style(theme)))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Explain
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        if let Action::JobDone(done) = action {
            // The explanation shows the rule's lint, the live constant-over-data one
            // included.
            if let JobResult::Verdicts { constant, .. } = done.0.as_ref()
                && ctx.ws.constant != *constant
            {
                ctx.ws.constant = constant.clone();
                self.refresh(ctx.ws);
            }
            return vec![];
        }
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Text]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|(_, s)| s.as_str()).collect::<String>())
            .collect()
    }

    #[test]
    fn wrapping_keeps_the_indent() {
        let line: Text = vec![
            (Tone::Pass, "    ✗ ".into()),
            (
                Tone::Plain,
                "target.provider is 'meta', expected 'openai'".into(),
            ),
        ];
        let wrapped = plain(&wrap(&line, 24));
        assert_eq!(
            wrapped,
            vec![
                "    ✗ target.provider is ",
                "      'meta', expected ",
                "      'openai'"
            ]
        );
        assert!(
            wrapped
                .iter()
                .all(|l| Span::raw(l.trim_end()).width() <= 24)
        );
        let long: Text = vec![(Tone::Plain, "x".repeat(30))];
        assert_eq!(plain(&wrap(&long, 12)).len(), 3);
    }
}

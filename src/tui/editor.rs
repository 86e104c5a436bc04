//! Rule editor: the rule's JSONLogic in a text area. Every keystroke parses, validates,
//! compiles and recomputes that rule's column; errors show with line:col while the last
//! valid results stay (dimmed); valid edits are saved after a short pause.

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui_textarea::TextArea;

use super::action::{Action, Changed, PaneId};
use super::pane::{Ctx, Look, Pane};
use super::theme::{Theme, safe};
pub use super::widgets::diagnostic_lines;
use super::widgets::pane_block;
use crate::app::workspace::{Draft, Session};

pub struct State {
    pub textarea: TextArea<'static>,
    /// The rule shown (its index; follows the rule's id when the list changes).
    pub rule: usize,
    /// The id of the rule shown: when the rules change under the editor (a reload, a
    /// deletion elsewhere), the editor follows the rule, never the index.
    rule_id: String,
    /// Typing goes to the text area.
    pub active: bool,
    /// The result of checking the current text.
    pub draft: Option<Draft>,
    /// The text is the infix form of the rule (F2), not JSONLogic.
    pub infix: bool,
    /// The text of a rule deleted elsewhere while it was being edited (its id, the
    /// text, infix): put back when the person restores the rule.
    pub orphaned: Option<(String, String, bool)>,
    /// A rule being written (`a`: its name), not in the page until its text is valid:
    /// then it is added and saved, and the editor goes on with it as with any rule.
    pub new_rule: Option<String>,
}

impl Default for State {
    fn default() -> Self {
        Self::new()
    }
}

impl State {
    pub fn new() -> Self {
        State {
            textarea: TextArea::default(),
            rule: 0,
            rule_id: String::new(),
            active: false,
            draft: None,
            infix: false,
            orphaned: None,
            new_rule: None,
        }
    }

    fn load(&mut self, ws: &mut Session, rule: usize) {
        self.rule = rule;
        let id = ws
            .page
            .rules
            .get(rule)
            .map(|r| r.id.clone())
            .unwrap_or_default();
        // A rule authored in infix opens as it was written (F2 still switches).
        if id != self.rule_id
            && ws
                .page
                .rules
                .get(rule)
                .is_some_and(|r| r.expression.is_some())
        {
            self.infix = true;
        }
        self.rule_id = id;
        self.draft = None;
        ws.cancel_rule_save();
        let text = match ws.page.rules.get(rule) {
            None => String::new(),
            Some(_) if self.infix => match ws.rule_infix(rule) {
                Ok(t) => t,
                Err(_) => {
                    // This rule has no infix form: show it as JSONLogic.
                    self.infix = false;
                    ws.rule_text(rule)
                }
            },
            Some(_) => ws.rule_text(rule),
        };
        self.textarea = TextArea::new(text.lines().map(str::to_owned).collect());
    }

    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// The id of the rule open, when it is being edited.
    pub fn editing(&self) -> Option<String> {
        self.active.then(|| self.rule_id.clone())
    }

    /// The text does not parse or validate: results shown are the last valid ones.
    pub fn is_invalid(&self) -> bool {
        matches!(self.draft, Some(Draft::Invalid { .. }))
    }

    /// Checks the text and, when valid, shows it in the matrix at once.
    fn check(&mut self, ws: &mut Session) -> Vec<Action> {
        if let Some(name) = self.new_rule.clone() {
            return self.check_new(ws, &name);
        }
        if self.rule >= ws.page.rules.len() {
            return vec![];
        }
        let draft = if self.infix {
            ws.try_infix(self.rule, &self.text())
        } else {
            ws.try_logic(self.rule, &self.text())
        };
        let follow = match &draft {
            Draft::Valid { changed, .. } => {
                if ws.is_unsaved(self.rule) {
                    ws.schedule_rule_save(self.rule);
                }
                // Only a changed rule changes what the other panes show.
                if *changed {
                    vec![Action::Changed(Changed::LOGIC)]
                } else {
                    vec![]
                }
            }
            Draft::Invalid { .. } => {
                ws.cancel_rule_save();
                vec![]
            }
        };
        self.draft = Some(draft);
        follow
    }
}

impl State {
    /// The text of the rule being written, checked: once valid, the rule is added to
    /// the page (one revision) and is the rule edited from then on.
    fn check_new(&mut self, ws: &mut Session, name: &str) -> Vec<Action> {
        match ws.check_new_rule(&self.text(), self.infix) {
            Err(diagnostics) => {
                self.draft = Some(Draft::Invalid { diagnostics });
                vec![]
            }
            Ok(new) => match ws.add_new_rule(name, new.clone()) {
                Ok(i) => {
                    self.new_rule = None;
                    self.rule = i;
                    self.rule_id = ws.page.rules[i].id.clone();
                    ws.set_editing(self.editing());
                    ws.schedule_rule_save(i);
                    self.draft = Some(Draft::Valid {
                        warnings: new.warnings,
                        changed: true,
                    });
                    vec![Action::Changed(Changed::RULES), Action::RuleSelected(i)]
                }
                Err(e) => {
                    self.draft = Some(Draft::Invalid {
                        diagnostics: vec![crate::app::types::Diagnostic::error(
                            crate::app::types::Code::Compile,
                            "",
                            e.to_string(),
                        )],
                    });
                    vec![]
                }
            },
        }
    }

    /// Starts writing a new rule named `name`: an empty text, in infix.
    pub fn start_new(&mut self, ws: &mut Session, name: String) {
        if self.active {
            self.active = false;
            ws.set_editing(None);
        }
        ws.cancel_rule_save();
        self.new_rule = Some(name);
        self.infix = true;
        self.textarea = TextArea::default();
        self.draft = None;
        self.active = true;
    }
}

/// Opens rule `rule` for editing with `text` in place of its own (the merge of a
/// conflict: mine and theirs between markers, not JSON until the person makes it so).
pub fn open_with_text(state: &mut State, ws: &mut Session, rule: usize, text: &str) -> Vec<Action> {
    open_with_text_as(state, ws, rule, text, false)
}

/// [`open_with_text`] with the text in infix (`infix`) or JSONLogic.
pub fn open_with_text_as(
    state: &mut State,
    ws: &mut Session,
    rule: usize,
    text: &str,
    infix: bool,
) -> Vec<Action> {
    state.infix = infix;
    state.load(ws, rule);
    state.infix = infix;
    state.textarea = TextArea::new(text.lines().map(str::to_owned).collect());
    state.active = true;
    ws.set_editing(state.editing());
    state.check(ws)
}

/// A key typed into the editor.
pub fn type_key(state: &mut State, ws: &mut Session, key: KeyEvent) -> Vec<Action> {
    if state.textarea.input(key) {
        state.check(ws)
    } else {
        vec![]
    }
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    match action {
        Action::Typed(key) if state.active => {
            let writing = state.new_rule.clone();
            let follow = type_key(state, ctx.ws, *key);
            if let (Some(name), None) = (writing, &state.new_rule) {
                ctx.status.info(format!(
                    "rule {} is valid: in the matrix now, saved when you pause (Esc, Ctrl-S: now)",
                    safe(&name)
                ));
            }
            follow
        }
        Action::NewRule(name) => {
            if let Err(e) = ctx.ws.rule_room() {
                ctx.status.app_error(&e);
                return vec![];
            }
            state.start_new(ctx.ws, name.clone());
            *ctx.focus = PaneId::Editor;
            ctx.status.info(format!(
                "new rule {}: type its logic (infix; F2: JSONLogic) — it is added once valid · Esc drops it",
                safe(name)
            ));
            vec![]
        }
        // Writing a new rule: the editor stays on it (Esc drops it).
        Action::RuleSelected(_) if state.new_rule.is_some() && state.active => vec![],
        Action::RuleSelected(i) if !state.active || *i != state.rule => {
            if state.active {
                save(state, ctx);
                state.active = false;
                ctx.ws.set_editing(None);
            }
            state.load(ctx.ws, *i);
            vec![]
        }
        Action::EditRule | Action::Enter => {
            if ctx.ws.page.rules.is_empty() {
                ctx.status
                    .error("this page has no rules: press `a` in Rules to add one");
                return vec![];
            }
            // A family's member changes with its family, not alone.
            if let Some(refusal) = ctx.ws.family_refusal(state.rule) {
                ctx.status.error(refusal);
                return vec![];
            }
            *ctx.focus = PaneId::Editor;
            state.active = true;
            ctx.ws.set_editing(state.editing());
            ctx.status
                .info("editing: Esc leaves · Ctrl-Z undoes · Ctrl-S saves");
            vec![]
        }
        Action::Back if state.active && state.new_rule.is_some() => {
            if state.text().trim().is_empty() {
                drop_new(state, ctx);
                return vec![];
            }
            *ctx.modal = Some(super::modal::Modal::Confirm {
                message: "The new rule's text is not valid yet, so it is not in the page. Drop it? y drops · n keeps writing".into(),
                on_yes: Action::DiscardDraft,
                on_no: None,
            });
            vec![]
        }
        Action::Back if state.active => {
            if state.is_invalid() {
                // Invalid text is not dropped without asking: y discards it, n (or Esc)
                // goes on editing.
                *ctx.modal = Some(super::modal::Modal::Confirm {
                    message: "The rule text is invalid (the last valid version is what shows). Discard your edit? y discards · n keeps editing".into(),
                    on_yes: Action::DiscardDraft,
                    on_no: None,
                });
                return vec![];
            }
            state.active = false;
            ctx.ws.set_editing(None);
            // The editing hint is stale once out of the editor.
            if ctx
                .status
                .message
                .as_ref()
                .is_some_and(|(m, _)| m.starts_with("editing:"))
            {
                ctx.status.message = None;
            }
            save(state, ctx);
            vec![]
        }
        Action::DiscardDraft if state.new_rule.is_some() => {
            drop_new(state, ctx);
            vec![]
        }
        Action::DiscardDraft => {
            state.active = false;
            ctx.ws.set_editing(None);
            // Leave the invalid text: show the rule as it stands.
            state.load(ctx.ws, state.rule);
            ctx.status
                .info("left the editor; the invalid edit was discarded");
            vec![]
        }
        Action::ToggleInfix if state.new_rule.is_some() => {
            // Nothing to convert yet: the same text is read the other way.
            state.infix = !state.infix;
            let follow = state.check(ctx.ws);
            ctx.status.info(if state.infix {
                "the new rule in infix (F2: JSONLogic)"
            } else {
                "the new rule in JSONLogic (F2: infix)"
            });
            follow
        }
        Action::ToggleInfix => {
            if state.is_invalid() {
                ctx.status
                    .error("fix the text first: F2 switches views of a valid rule");
                return vec![];
            }
            if state.rule >= ctx.ws.page.rules.len() {
                return vec![];
            }
            if !state.infix
                && let Err(e) = ctx.ws.rule_infix(state.rule)
            {
                ctx.status.error(format!("{e}: it stays in JSONLogic"));
                return vec![];
            }
            state.infix = !state.infix;
            let active = state.active;
            state.load(ctx.ws, state.rule);
            state.active = active;
            ctx.status.info(if state.infix {
                "infix view (F2: JSONLogic)"
            } else {
                "JSONLogic view (F2: infix)"
            });
            vec![]
        }
        Action::Undo => {
            if state.textarea.undo() {
                state.check(ctx.ws)
            } else {
                vec![]
            }
        }
        Action::Redo => {
            if state.textarea.redo() {
                state.check(ctx.ws)
            } else {
                vec![]
            }
        }
        Action::SaveNow => {
            save(state, ctx);
            vec![]
        }
        // Writing a rule not in the page yet: nothing to follow (the index of the rule
        // shown before is kept in range).
        Action::Changed(c) if c.contains(Changed::RULES) && state.new_rule.is_some() => {
            state.rule = state.rule.min(ctx.ws.page.rules.len().saturating_sub(1));
            vec![]
        }
        Action::Changed(c) if c.contains(Changed::RULES) => {
            // A new rule renamed on a reload (its id was taken elsewhere): followed.
            if let Some(new) = ctx.ws.renamed_new_rule(&state.rule_id) {
                state.rule_id = new.to_owned();
            }
            let at = ctx.ws.page.rules.iter().position(|r| r.id == state.rule_id);
            match at {
                // Still there, being edited: the text and its draft stay, the index follows.
                Some(i) if state.active => state.rule = i,
                Some(i) => state.load(ctx.ws, i),
                None => {
                    // The rule is gone (deleted here or elsewhere): nothing is saved
                    // over another rule; the session keeps an unsaved draft to ask about,
                    // and the text typed is kept here to put back if it is restored.
                    if state.active {
                        state.orphaned = Some((state.rule_id.clone(), state.text(), state.infix));
                    }
                    state.active = false;
                    let r = state.rule.min(ctx.ws.page.rules.len().saturating_sub(1));
                    state.load(ctx.ws, r);
                }
            }
            vec![]
        }
        _ => vec![],
    }
}

/// Leaves the new rule unwritten: nothing was added to the page.
fn drop_new(state: &mut State, ctx: &mut Ctx<'_>) {
    state.new_rule = None;
    state.active = false;
    ctx.ws.set_editing(None);
    state.load(ctx.ws, state.rule);
    ctx.status
        .info("the new rule was dropped: nothing was added to the page");
}

fn save(state: &mut State, ctx: &mut Ctx<'_>) {
    if state.rule < ctx.ws.page.rules.len() && ctx.ws.is_unsaved(state.rule) && !state.is_invalid()
    {
        match ctx.ws.save_rule(state.rule) {
            Ok(rev) => ctx.status.info(format!(
                "saved rule {} (revision {rev})",
                ctx.ws.page.rules[state.rule].id
            )),
            Err(e) => ctx.status.app_error(&e),
        }
    }
    ctx.ws.cancel_rule_save();
}

/// JSON colouring for one line: keys, strings, numbers, literals.
fn colour_line(line: &str, theme: &Theme) -> Line<'static> {
    if !theme.color {
        return Line::raw(safe(line));
    }
    let mut spans = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            let s: String = chars[start..i].iter().collect();
            let is_key = chars[i..].iter().find(|c| !c.is_whitespace()) == Some(&':');
            let style = if is_key {
                Style::default().fg(Color::Cyan)
            } else {
                Style::default().fg(Color::Green)
            };
            spans.push(Span::styled(safe(&s), style));
        } else if c.is_ascii_digit() || c == '-' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || ".-+".contains(chars[i]))
            {
                i += 1;
            }
            spans.push(Span::styled(
                chars[start..i].iter().collect::<String>(),
                Style::default().fg(Color::Magenta),
            ));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            spans.push(Span::styled(
                chars[start..i].iter().collect::<String>(),
                Style::default().fg(Color::Yellow),
            ));
        } else {
            spans.push(Span::raw(c.to_string()));
            i += 1;
        }
    }
    Line::from(spans)
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let st = &state;
    let ws = &look.ws;
    let name = match &st.new_rule {
        Some(name) => format!("new rule {} (added once valid)", safe(name)),
        None => ws
            .page
            .rules
            .get(st.rule)
            .map_or("(no rule)".to_owned(), |r| safe(&r.name)),
    };
    let state = match (&st.draft, ws.is_unsaved(st.rule) && st.new_rule.is_none()) {
        (Some(Draft::Invalid { .. }), _) if st.new_rule.is_some() => " · not valid yet",
        (Some(Draft::Invalid { .. }), _) => " · invalid (showing the last valid results)",
        (_, true) => " · unsaved",
        _ if st.active => " · editing",
        _ => "",
    };
    let view = if st.infix { "infix" } else { "JSONLogic" };
    let block = pane_block(
        &super::widgets::numbered(
            super::action::PaneId::Editor,
            &format!("Rule editor · {view} (F2): {name}{state}"),
        ),
        theme,
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let (list, style) = match &st.draft {
        Some(Draft::Invalid { diagnostics }) => (diagnostics.as_slice(), theme.fail()),
        Some(Draft::Valid { warnings, .. }) => (warnings.as_slice(), theme.warn()),
        None => (&[][..], theme.dim()),
    };
    let text = st.textarea.lines();
    // What the background work found over every pair of the current rows.
    let mut list = list.to_vec();
    // Never or always true for any row (the draft's warnings) says more than constant
    // over the current rows.
    let decided = list.iter().any(|d| {
        matches!(
            d.code,
            crate::app::types::Code::NeverTrue | crate::app::types::Code::AlwaysTrue
        )
    });
    if !st.is_invalid() && !decided {
        // A lookup (not the whole lint, which walks the rule) on every frame.
        list.extend(ws.constant_lint(st.rule));
    }
    let mut panel = diagnostic_lines(&list, text, inner.width as usize);
    // The panel takes what it needs, leaving two lines of the text in sight; short of
    // room, the quoted line and its caret go first, then the later lines.
    let room = inner.height.saturating_sub(2).max(1) as usize;
    if panel.len() > room && panel.first().is_some_and(|(quoted, _)| *quoted) {
        panel.drain(..2);
    }
    let mut diags: Vec<Line> = panel
        .into_iter()
        .map(|(dim, l)| Line::styled(l, if dim { theme.dim() } else { style }))
        .collect();
    if diags.len() > room {
        let more = diags.len() - room + 1;
        diags.truncate(room - 1);
        diags.push(Line::styled(
            format!("… {more} more lines (Esc, then z zooms the editor)"),
            theme.dim(),
        ));
    }
    let [text_area, diag_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(super::widgets::rows(diags.len())),
    ])
    .areas(inner);
    if st.active {
        frame.render_widget(&st.textarea, text_area);
        // Scrolled sideways (a long infix line): `…` where the start of a line is out
        // of sight.
        let (top, left) = st.textarea.scroll_offset();
        if left > 0 {
            let buf = frame.buffer_mut();
            for (i, line) in st
                .textarea
                .lines()
                .iter()
                .skip(top as usize)
                .take(text_area.height as usize)
                .enumerate()
            {
                if !line.is_empty() {
                    buf.set_string(text_area.x, text_area.y + i as u16, "…", theme.dim());
                }
            }
        }
    } else {
        // Lines wider than the pane end in `…`.
        let width = text_area.width as usize;
        let lines: Vec<Line> = st
            .textarea
            .lines()
            .iter()
            .map(|l| {
                if ratatui::text::Span::raw(l.as_str()).width() > width {
                    Line::raw(super::widgets::fit(&safe(l), width))
                } else {
                    colour_line(l, theme)
                }
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), text_area);
    }
    frame.render_widget(Paragraph::new(diags), diag_area);
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Editor
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

//! Rules pane: name, required/weight, category, how many targets pass; search ranked by
//! relevance with a deterministic tiebreak; add, delete, edit, revert; and
//! the small form for name / required / weight / category.

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState};

use super::action::{Action, Changed, PaneId};
use super::modal::{Modal, PromptFor};
use super::pane::{Ctx, Look, Pane, Status};
pub use super::rule_form::Form;
use super::theme::safe;
use super::widgets::pane_block;
use crate::app::types::Rule;
use crate::app::workspace::Session;

#[derive(Debug, Default)]
pub struct State {
    /// Rule indexes in display order (filtered and ranked while searching).
    pub order: Vec<usize>,
    /// Position in `order`.
    pub cursor: usize,
    pub query: String,
}

impl State {
    pub fn new(ws: &Session) -> Self {
        State {
            order: (0..ws.page.rules.len()).collect(),
            cursor: 0,
            query: String::new(),
        }
    }

    /// The highlighted rule's index, if any.
    pub fn selected(&self) -> Option<usize> {
        self.order.get(self.cursor).copied()
    }

    fn reorder(&mut self, ws: &Session) {
        let keep = self.selected();
        self.order = rank(&ws.page.rules, &self.query, |i| {
            ws.matrix().compiled(i).reads.clone()
        });
        self.cursor = keep
            .and_then(|k| self.order.iter().position(|&i| i == k))
            .unwrap_or(0);
    }
}

/// Ranks rules for a filter: each query word scores 3 in the name, 2 in the category and
/// 1 in a field the rule reads (prefix matches count half), and every word must score.
/// Ties: higher weight, then id. An empty query keeps page order.
pub fn rank(
    rules: &[Rule],
    query: &str,
    reads: impl Fn(usize) -> crate::app::types::Reads,
) -> Vec<usize> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.is_empty() {
        return (0..rules.len()).collect();
    }
    let mut scored: Vec<(f64, usize)> = rules
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let r_reads = reads(i);
            let fields: Vec<String> = [("source", &r_reads.source), ("target", &r_reads.target)]
                .iter()
                .flat_map(|(side, paths)| {
                    paths
                        .iter()
                        .flatten()
                        .map(move |p| format!("{side}.{}", p.join(".")).to_lowercase())
                })
                .collect();
            let score_in = |hay: &str, w: &str| {
                let hay = hay.to_lowercase();
                if hay.split(|c: char| !c.is_alphanumeric()).any(|t| t == w) {
                    1.0
                } else if hay.contains(w) {
                    0.5
                } else {
                    0.0
                }
            };
            // Every word must be somewhere (a word that fits no rule is not ignored:
            // a filter that keeps every rule filters nothing).
            let per_word: Vec<f64> = words
                .iter()
                .map(|w| {
                    3.0 * score_in(&r.name, w)
                        + 2.0 * score_in(&r.category, w)
                        + fields.iter().map(|f| score_in(f, w)).fold(0.0, f64::max)
                })
                .collect();
            let score: f64 = per_word.iter().sum();
            per_word.iter().all(|&s| s > 0.0).then_some((score, i))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(rules[b.1].weight.total_cmp(&rules[a.1].weight))
            .then(rules[a.1].id.cmp(&rules[b.1].id))
    });
    scored.into_iter().map(|(_, i)| i).collect()
}

/// A rule's name, category, id and the fields it reads, as find reads them.
pub(super) fn rule_text(ws: &Session, i: usize) -> String {
    let rule = &ws.page.rules[i];
    let reads = &ws.matrix().compiled(i).reads;
    let mut h = format!("{} {} {}", rule.name, rule.category, rule.id);
    for (side, paths) in [("source", &reads.source), ("target", &reads.target)] {
        for path in paths.iter().flatten() {
            h.push_str(&format!(" {side}.{}", path.join(".")));
        }
    }
    h
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let n = state.order.len();
    let moved = match action {
        Action::Up => state.cursor.checked_sub(1),
        Action::Down => (state.cursor + 1 < n).then_some(state.cursor + 1),
        Action::PageUp => Some(state.cursor.saturating_sub(10)),
        Action::PageDown => Some((state.cursor + 10).min(n.saturating_sub(1))),
        Action::Home => Some(0),
        Action::End => Some(n.saturating_sub(1)),
        Action::Changed(c) if c.contains(Changed::RULES) => {
            state.reorder(ctx.ws);
            None
        }
        Action::FilterRules(q) => {
            state.query = q.clone();
            state.reorder(ctx.ws);
            return state
                .selected()
                .map(Action::RuleSelected)
                .into_iter()
                .collect();
        }
        Action::RuleSelected(i) => {
            if let Some(c) = state.order.iter().position(|r| r == i) {
                state.cursor = c;
            }
            None
        }
        Action::Filter => {
            let mut input = ratatui_textarea::TextArea::new(vec![state.query.clone()]);
            input.move_cursor(ratatui_textarea::CursorMove::End);
            *ctx.modal = Some(Modal::Prompt {
                title: "Filter rules: name, category, fields read (Enter keeps, Esc clears)".into(),
                input: Box::new(input),
                purpose: PromptFor::FilterRules,
            });
            None
        }
        Action::FindText(q) | Action::FindFrom(q, _) => {
            let hay = |p: usize| rule_text(ctx.ws, state.order[p]);
            let Some(hits) = super::find::hits(q, state.order.len(), hay) else {
                ctx.status.info(super::find::none(q, "rule"));
                return vec![];
            };
            let at = hits.landing(state.cursor, action);
            ctx.status.info(super::find::said(&hits, at, q));
            Some(at)
        }
        Action::AddRule => {
            *ctx.modal = Some(Modal::Prompt {
                title: "New rule name".into(),
                input: Box::default(),
                purpose: PromptFor::AddRule,
            });
            None
        }
        Action::DeleteRule => {
            if let Some(i) = state.selected() {
                *ctx.modal = Some(Modal::Confirm {
                    message: format!("Delete rule `{}`? y/n", safe(&ctx.ws.page.rules[i].name)),
                    on_yes: Action::DeleteConfirmed(i),
                    on_no: None,
                });
            }
            None
        }
        Action::DeleteConfirmed(i) => {
            let i = *i;
            if i < ctx.ws.page.rules.len() {
                match ctx.ws.delete_rule(i) {
                    Ok(rev) => {
                        ctx.status.info(format!("deleted rule (revision {rev})"));
                        state.reorder(ctx.ws);
                        state.cursor = state.cursor.min(state.order.len().saturating_sub(1));
                        let mut follow = vec![Action::Changed(Changed::RULES)];
                        follow.extend(state.selected().map(Action::RuleSelected));
                        return follow;
                    }
                    Err(e) => ctx.status.app_error(&e),
                }
            }
            None
        }
        Action::Enter | Action::EditRule => {
            return match state.selected() {
                // A family's member changes with its family, not alone.
                Some(i) if ctx.ws.family_refusal(i).is_some() => {
                    if let Some(refusal) = ctx.ws.family_refusal(i) {
                        ctx.status.error(refusal);
                    }
                    vec![Action::RuleSelected(i)]
                }
                Some(i) => vec![
                    Action::RuleSelected(i),
                    Action::Focus(PaneId::Editor),
                    Action::EditRule,
                ],
                None => vec![],
            };
        }
        Action::EditRuleMeta => {
            if let Some(i) = state.selected() {
                if let Some(refusal) = ctx.ws.family_refusal(i) {
                    ctx.status.error(refusal);
                    return vec![];
                }
                *ctx.modal = Some(Modal::RuleForm(Form::of(
                    i,
                    &ctx.ws.page.rules[i],
                    ctx.ws.condition_text(i),
                )));
            }
            None
        }
        _ => None,
    };
    match moved {
        Some(c) if c != state.cursor => {
            state.cursor = c;
            state
                .selected()
                .map(Action::RuleSelected)
                .into_iter()
                .collect()
        }
        _ => vec![],
    }
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let ws = &look.ws;
    let st = &state;
    let title = if st.query.is_empty() {
        format!("Rules ({})", ws.page.rules.len())
    } else {
        format!(
            "Rules \\{} ({} of {})",
            safe(&st.query),
            st.order.len(),
            ws.page.rules.len()
        )
    };
    let block = pane_block(
        &super::widgets::numbered(super::action::PaneId::Rules, &title),
        theme,
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Columns: marks, the name (what is left), weight, passing, the category (when
    // there is room), under a header row.
    let width = inner.width as usize;
    // As wide as their widest value (a weight, "passing/of") plus a space.
    let weight_w = ws
        .page
        .rules
        .iter()
        .map(|r| format!("{}", r.weight).len())
        .max()
        .unwrap_or(1)
        + 2;
    let digits = ws.page.target.rows.len().max(1).to_string().len();
    let pass_w = (2 * digits + 2).max(5);
    let cat_w = if width >= 44 {
        ws.page
            .rules
            .iter()
            .map(|r| unicode_width::UnicodeWidthStr::width(r.category.as_str()))
            .max()
            .unwrap_or(0)
            .clamp(8, 16)
    } else {
        0
    };
    let name_w = width.saturating_sub(2 + weight_w + pass_w + cat_w + usize::from(cat_w > 0));
    let fit = super::widgets::fit_padded;
    let [head_area, list_area] = ratatui::layout::Layout::vertical([
        ratatui::layout::Constraint::Length(1),
        ratatui::layout::Constraint::Min(0),
    ])
    .areas(inner);
    let mut head = vec![
        Span::raw("  "),
        Span::styled(fit("rule", name_w), theme.dim()),
        Span::styled(format!("{:>weight_w$}", "w"), theme.dim()),
        Span::styled(format!("{:>pass_w$}", "pass"), theme.dim()),
    ];
    if cat_w > 0 {
        head.push(Span::raw(" "));
        head.push(Span::styled(fit("category", cat_w), theme.dim()));
    }
    frame.render_widget(
        ratatui::widgets::Paragraph::new(Line::from(head)),
        head_area,
    );
    let items: Vec<ListItem> = st
        .order
        .iter()
        .map(|&i| {
            let r = &ws.page.rules[i];
            let passing = ws.eval.columns.get(i).map_or(0, |c| c.pass_count());
            // Of the targets the rule applies to (n/a ones are neither).
            let total =
                ws.page.target.rows.len() - ws.eval.columns.get(i).map_or(0, |c| c.not_applicable);
            let mark = if ws.is_unsaved(i) { "•" } else { " " };
            let req = if r.required { "■" } else { " " };
            // A rule family's members are indented under its name (shown once, above
            // its first member).
            let member = r.family.as_ref();
            let head = member.filter(|m| m.index == 0).map(|m| {
                Line::from(vec![
                    Span::raw("  "),
                    Span::styled(
                        format!(
                            "▾ {} · {} rules ",
                            safe(
                                m.family
                                    .written
                                    .get("name")
                                    .and_then(serde_json::Value::as_str)
                                    .unwrap_or(&m.family.id)
                            ),
                            m.family.members
                        ),
                        theme.dim(),
                    ),
                ])
            });
            let name = if member.is_some() {
                format!("  {}", safe(&r.name))
            } else {
                safe(&r.name)
            };
            let passed = if total == 0 && !ws.page.target.rows.is_empty() {
                "n/a".to_owned()
            } else {
                format!("{passing}/{total}")
            };
            let weight = format!("{}", r.weight);
            let mut spans = vec![
                Span::styled(mark, theme.warn()),
                Span::styled(req, theme.fail()),
                Span::raw(fit(&name, name_w)),
                Span::styled(format!("{weight:>weight_w$}"), theme.dim()),
                Span::styled(
                    format!("{passed:>pass_w$}"),
                    if passing == total {
                        theme.pass()
                    } else {
                        theme.dim()
                    },
                ),
            ];
            if cat_w > 0 {
                spans.push(Span::raw(" "));
                spans.push(Span::styled(fit(&safe(&r.category), cat_w), theme.dim()));
            }
            let line = Line::from(spans);
            match head {
                // Not when filtered: the family's name heads its members in order.
                Some(head) if st.query.is_empty() => ListItem::new(vec![head, line]),
                _ => ListItem::new(line),
            }
        })
        .collect();
    let list = List::new(items).highlight_style(theme.selected());
    let mut ls = ListState::default().with_selected((!st.order.is_empty()).then_some(st.cursor));
    frame.render_stateful_widget(list, list_area, &mut ls);
}

pub enum FormResult {
    Open,
    Closed(Vec<Action>),
}

/// A key in the form, as the keymap reads it (`action`; see its Rule form group): Tab/↑/↓
/// move, Space toggles required, Enter saves, Esc cancels; other characters are typed.
pub fn form_key(
    form: &mut Form,
    action: Option<Action>,
    key: KeyEvent,
    ws: &mut crate::app::workspace::Session,
    status: &mut Status,
) -> FormResult {
    fn text(f: &mut Form) -> Option<&mut String> {
        match f.field {
            0 => Some(&mut f.name),
            2 => Some(&mut f.weight),
            3 => Some(&mut f.category),
            4 => Some(&mut f.applies_when),
            _ => None,
        }
    }
    use super::rule_form::FIELDS;
    match action {
        Some(Action::Back) => return FormResult::Closed(vec![]),
        Some(Action::FocusNext) => form.field = (form.field + 1) % FIELDS,
        Some(Action::FocusPrev) => form.field = (form.field + FIELDS - 1) % FIELDS,
        Some(Action::Cycle) if form.field == 1 => form.required = !form.required,
        Some(Action::DeleteBack) => {
            if let Some(t) = text(form) {
                t.pop();
            }
        }
        Some(Action::Enter) => {
            let Ok(weight) = form.weight.trim().parse::<f64>() else {
                form.error = Some(format!("weight `{}` is not a number", form.weight));
                return FormResult::Open;
            };
            return match ws.update_rule_meta(
                form.rule,
                &form.name,
                form.required,
                weight,
                &form.category,
                &form.applies_when,
            ) {
                Ok(rev) => {
                    status.info(format!(
                        "saved rule {} (revision {rev})",
                        ws.page.rules[form.rule].id
                    ));
                    // A new condition changes outcomes, as a logic edit does.
                    FormResult::Closed(vec![Action::Changed(Changed::RULES | Changed::LOGIC)])
                }
                Err(e) => {
                    form.error = Some(e.to_string());
                    FormResult::Open
                }
            };
        }
        _ => {
            if let KeyCode::Char(c) = key.code
                && let Some(t) = text(form)
            {
                t.push(c);
            }
        }
    }
    FormResult::Open
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Rules
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
    use crate::app::types::Reads;
    use serde_json::json;

    fn rule(id: &str, name: &str, category: &str, weight: f64) -> Rule {
        Rule {
            expression: None,
            warning: None,
            applies_when: None,
            family: None,
            id: id.into(),
            name: name.into(),
            required: false,
            weight,
            category: category.into(),
            description: None,
            logic: json!(true),
        }
    }

    #[test]
    fn ranking_prefers_name_then_category_then_fields_with_deterministic_ties() {
        let rules = vec![
            rule("b", "Vision", "Streaming things", 1.0),
            rule("a", "Streaming Support", "Core", 1.0),
            rule("c", "Latency", "Core", 2.0),
            rule("d", "Latency copy", "Core", 2.0),
        ];
        let reads = |i: usize| {
            if i >= 2 {
                Reads::of(&json!({"var": "target.supportsStreaming"}))
            } else {
                Reads::default()
            }
        };
        assert_eq!(rank(&rules, "streaming", reads), vec![1, 0, 2, 3]);
        assert_eq!(rank(&rules, "", reads), vec![0, 1, 2, 3]);
        assert_eq!(rank(&rules, "nothing", reads), Vec::<usize>::new());
    }
}

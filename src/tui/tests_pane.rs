//! Tests pane: the page's verdict assertions with pass/fail chips, re-run on the live
//! state after every change, so a broken assertion lights up the moment an edit breaks
//! it. Failures come first; `f` shows only them. `p` pins the selection's verdicts;
//! `a` / `e` add or edit one (as JSON), `d` removes. `c` lists how the assertions cover
//! the rules (conditions left uncovered, mutants no assertion notices), computed by the
//! background work after each change on pages small enough.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, Wrap};

use super::action::{Action, Changed};
use super::modal::Modal;
use super::pane::{Ctx, Look, Pane};
use super::theme::safe;
use super::widgets::pane_block;
use crate::app::jobs::JobResult;
use crate::app::types::{Assertion, Report};

#[derive(Debug, Default)]
pub struct State {
    pub report: Option<Report>,
    /// Why the assertions could not run (invalid ones), if so.
    pub error: Option<String>,
    pub cursor: usize,
    /// The background work has not caught up with the last change yet.
    pub pending: bool,
    /// Only the failing assertions are listed (`f`).
    pub only_failures: bool,
    /// The results listed, in order (indexes into the report): failures first.
    order: Vec<usize>,
    /// How the assertions cover the rules, from the background work (a page small
    /// enough; else `rulebench test --coverage`).
    pub coverage: Option<Box<crate::app::types::Coverage>>,
    /// The pane lists the coverage (`c`) instead of the assertions.
    pub show_coverage: bool,
    /// The page's linked tables of expected outcomes, checked by the background work.
    pub linked: Vec<crate::app::expectations::LinkedRun>,
}

impl State {
    /// The assertions' run on the current state, from the background work (`None`:
    /// the page has none).
    pub fn set_report(&mut self, report: Option<Result<Report, String>>) {
        self.pending = false;
        match report {
            None => {
                self.report = None;
                self.error = None;
            }
            Some(Ok(report)) => {
                let selected = self.selected_id();
                self.report = Some(report);
                self.error = None;
                self.reorder();
                // The cursor stays on its assertion when it is still listed.
                self.cursor = selected
                    .and_then(|id| {
                        self.order.iter().position(|&i| {
                            self.report.as_ref().unwrap().results[i].assertion_id == id
                        })
                    })
                    .unwrap_or(self.cursor)
                    .min(self.order.len().saturating_sub(1));
            }
            Some(Err(e)) => {
                self.report = None;
                self.error = Some(e);
            }
        }
    }

    fn reorder(&mut self) {
        let Some(report) = &self.report else {
            self.order.clear();
            return;
        };
        let failed = (0..report.results.len()).filter(|&i| !report.results[i].passed);
        let passed = (0..report.results.len()).filter(|&i| report.results[i].passed);
        self.order = if self.only_failures {
            failed.collect()
        } else {
            failed.chain(passed).collect()
        };
    }

    /// The results listed, in order: failures first (only them with `f`).
    pub fn listed(&self) -> impl Iterator<Item = &crate::app::types::AssertionResult> {
        let results = self.report.as_ref().map(|r| r.results.as_slice());
        self.order
            .iter()
            .filter_map(move |&i| results.and_then(|r| r.get(i)))
    }

    fn selected_id(&self) -> Option<String> {
        self.listed()
            .nth(self.cursor)
            .map(|r| r.assertion_id.clone())
    }
}

fn prompt(ctx: &mut Ctx<'_>, title: &str, text: String, replacing: Option<String>) {
    // An edit is saved only over the assertion as it is now.
    let base = replacing.as_ref().and_then(|id| {
        ctx.ws
            .page
            .assertions
            .iter()
            .find(|a| &a.id == id)
            .and_then(|a| serde_json::to_value(a).ok())
    });
    let mut state = super::json_dialog::State::new(title.to_owned(), &text, replacing);
    state.base = base;
    *ctx.modal = Some(Modal::Json(Box::new(state)));
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    let n = state.order.len();
    match action {
        Action::CycleShow => {
            state.only_failures = !state.only_failures;
            let selected = state.selected_id();
            state.reorder();
            state.cursor = selected
                .and_then(|id| state.listed().position(|r| r.assertion_id == id))
                .unwrap_or(0);
            ctx.status.info(if state.only_failures {
                format!("only the {} failing assertions (f: all)", state.order.len())
            } else {
                "every assertion, failures first".to_owned()
            });
        }
        Action::ToggleCoverage => {
            state.show_coverage = !state.show_coverage;
            if state.show_coverage && state.coverage.is_none() {
                ctx.status.info(
                    "no coverage here yet: the page has no assertions, or is too large for the background work (`rulebench test PAGE --coverage`)",
                );
            }
        }
        Action::FindText(q) | Action::FindFrom(q, _) => {
            let listed: Vec<String> = state
                .listed()
                .map(|r| {
                    format!(
                        "{} {} {} {}",
                        r.assertion_id,
                        r.description.as_deref().unwrap_or(""),
                        r.select,
                        r.claim
                    )
                })
                .collect();
            let Some(hits) = super::find::hits(q, listed.len(), |i| listed[i].clone()) else {
                ctx.status.info(super::find::none(q, "assertion"));
                return vec![];
            };
            state.cursor = hits.landing(state.cursor, action);
            ctx.status.info(super::find::said(&hits, state.cursor, q));
        }
        // Changes reach the background work, which answers with a new run.
        Action::Up => state.cursor = state.cursor.saturating_sub(1),
        Action::Down => state.cursor = (state.cursor + 1).min(n.saturating_sub(1)),
        Action::Home => state.cursor = 0,
        Action::End => state.cursor = n.saturating_sub(1),
        Action::Pin => match ctx.ws.pin_selection() {
            Ok(added) => {
                ctx.status.info(format!(
                    "pinned the selection's verdicts: {added} new (revision {})",
                    ctx.ws.revision
                ));
                return vec![Action::Changed(Changed::ASSERTIONS)];
            }
            Err(e) => ctx.status.app_error(&e),
        },
        Action::AddAssertion => {
            let key = ctx
                .ws
                .page
                .source
                .row_key(&ctx.ws.page.source.rows[ctx.ws.selection]);
            let template = serde_json::json!({"description": "", "select": key, "path": "$.selectionVerdict", "matcher": "toEqual", "expected": 2});
            prompt(ctx, "New assertion (JSON)", template.to_string(), None);
        }
        Action::EditAssertion | Action::Enter => {
            if let Some(id) = state.selected_id()
                && let Some(a) = ctx.ws.page.assertions.iter().find(|a| a.id == id)
            {
                let text = serde_json::to_string(a).unwrap_or_default();
                prompt(ctx, &format!("Edit assertion {id} (JSON)"), text, Some(id));
            }
        }
        Action::DeleteAssertion => {
            if let Some(id) = state.selected_id() {
                *ctx.modal = Some(Modal::Confirm {
                    message: format!("Remove assertion `{}`? y/n", safe(&id)),
                    on_yes: Action::DeleteAssertionConfirmed(id),
                    on_no: None,
                });
            }
        }
        Action::DeleteAssertionConfirmed(id) => match ctx.ws.remove_assertion(id) {
            Ok(()) => {
                ctx.status.info(format!(
                    "removed assertion {id} (revision {})",
                    ctx.ws.revision
                ));
                return vec![Action::Changed(Changed::ASSERTIONS)];
            }
            Err(e) => ctx.status.app_error(&e),
        },
        _ => {}
    }
    vec![]
}

/// An assertion typed in the JSON dialog: parsed, validated and saved; its problems
/// (located in the text where possible) when not, for the dialog to show.
pub fn save_typed(
    ctx: &mut Ctx<'_>,
    text: &str,
    replacing: Option<String>,
    base: Option<&serde_json::Value>,
) -> Result<Vec<Action>, Vec<crate::app::types::Diagnostic>> {
    let mut a: Assertion = crate::app::expr::read_json(text).map_err(|d| vec![*d])?;
    if let Some(id) = &replacing
        && a.id.is_empty()
    {
        a.id = id.clone();
    }
    // A rename replaces the old assertion in place: one revision.
    match ctx.ws.replace_assertion_over(replacing.as_deref(), a, base) {
        Ok(id) => {
            ctx.status.info(format!(
                "saved assertion {id} (revision {})",
                ctx.ws.revision
            ));
            Ok(vec![Action::Changed(Changed::ASSERTIONS)])
        }
        Err(crate::app::AppError::Invalid { diagnostics, .. }) => Err(diagnostics),
        // Changed elsewhere since the dialog opened: the conflict dialog asks (the
        // text is kept as "mine").
        Err(e @ crate::app::AppError::Conflict(_)) => {
            ctx.status.app_error(&e);
            Ok(vec![])
        }
        Err(e) => Err(vec![crate::app::types::Diagnostic::error(
            crate::app::types::Code::Assertion,
            "",
            e.to_string(),
        )]),
    }
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let st = &state;
    let running = if st.pending { " · running…" } else { "" };
    let only = if st.only_failures {
        " · failures only"
    } else {
        ""
    };
    let covered = st
        .coverage
        .as_ref()
        .map(|c| format!(" · mutants {:.0}% (c)", c.mutation_score))
        .unwrap_or_default();
    let title = match &st.report {
        Some(r) => format!(
            "Tests ({} passed, {} failed){only}{running}{covered}",
            r.passed, r.failed
        ),
        None => format!("Tests ({}){running}", look.ws.page.assertions.len()),
    };
    let block = pane_block(
        &super::widgets::numbered(super::action::PaneId::Tests, &title),
        theme,
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // The linked tables, at the bottom: a line each, and their first failed rows.
    let tables = linked_lines(&st.linked, theme);
    let [inner, tables_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(super::widgets::rows(tables.len()).min(inner.height / 2)),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(tables), tables_area);
    if st.report.is_none() {
        let text = match &st.error {
            Some(e) => Line::styled(safe(e), theme.fail()),
            None => Line::styled(
                "no assertions · p pins the selection's verdicts · a adds one",
                theme.dim(),
            ),
        };
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
        return;
    }
    if st.show_coverage {
        let lines = match &st.coverage {
            Some(c) => coverage_lines(c, theme),
            None => vec![Line::styled(
                "coverage is computed here for pages of up to 200,000 pairs × rules: `rulebench test PAGE --coverage`",
                theme.dim(),
            )],
        };
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        return;
    }
    let selected = st.listed().nth(st.cursor);
    let detail = selected
        .and_then(|r| r.message.clone())
        .filter(|_| inner.height > 4);
    let [list_area, detail_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(if detail.is_some() { 2 } else { 0 }),
    ])
    .areas(inner);
    let items: Vec<ListItem> = st
        .listed()
        .map(|r| {
            let chip = if r.passed {
                Span::styled("✓ PASS ", theme.pass())
            } else {
                Span::styled("✗ FAIL ", theme.fail())
            };
            let label = r
                .description
                .clone()
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| r.assertion_id.clone());
            let mode = if r.path_match.is_any() { "" } else { " (ALL)" };
            ListItem::new(Line::from(vec![
                chip,
                Span::raw(format!("{} ", safe(&label))),
                Span::styled(
                    format!(
                        "{}{mode} {}{}",
                        safe(&r.path),
                        if r.not { "not " } else { "" },
                        r.matcher
                    ),
                    theme.dim(),
                ),
            ]))
        })
        .collect();
    let list = List::new(items).highlight_style(theme.selected());
    let mut ls = ListState::default().with_selected(Some(st.cursor));
    frame.render_stateful_widget(list, list_area, &mut ls);
    if let Some(message) = detail {
        frame.render_widget(
            Paragraph::new(Line::styled(safe(&message), theme.fail())).wrap(Wrap { trim: true }),
            detail_area,
        );
    }
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Tests
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        if let Action::JobDone(done) = action {
            if let JobResult::Tests {
                report,
                coverage,
                linked,
                ..
            } = done.0.as_ref()
            {
                self.set_report(report.clone());
                self.coverage = coverage.clone();
                self.linked = linked.clone();
            }
            return vec![];
        }
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

/// The coverage as the pane lists it: the conditions not covered, then the mutants no
/// assertion noticed with the pair to pin.
fn coverage_lines(
    c: &crate::app::types::Coverage,
    theme: &super::theme::Theme,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!(
            "conditions {} of {} covered · mutants {} killed, {} survived, {} equivalent · score {:.1}%",
            c.conditions_covered,
            c.conditions,
            c.killed,
            c.survived,
            c.equivalent,
            c.mutation_score
        ),
        theme.title(),
    )];
    for r in &c.rules {
        for (cond, why) in r.conditions.iter().filter_map(|c| Some((c, c.gap()?))) {
            out.push(Line::styled(
                format!("✗ {}: {} — {why}", safe(&r.rule), safe(&cond.text)),
                theme.warn(),
            ));
        }
    }
    for line in c
        .mutants
        .iter()
        .filter_map(crate::print::coverage::survivor)
    {
        out.push(Line::styled(format!("survived {line}"), theme.fail()));
    }
    out
}

/// The linked tables as the pane lists them: per table its count, then its first
/// failed rows (what differs), or why it cannot be read.
fn linked_lines(
    linked: &[crate::app::expectations::LinkedRun],
    theme: &super::theme::Theme,
) -> Vec<Line<'static>> {
    const ROWS_SHOWN: usize = 3;
    let mut out = Vec::new();
    for run in linked {
        let name = std::path::Path::new(&run.file)
            .file_name()
            .map_or(run.file.clone(), |n| n.to_string_lossy().into_owned());
        match (&run.report, &run.error) {
            (Some(r), _) if r.failed == 0 => out.push(Line::styled(
                format!("✓ table {}: {} rows as expected", safe(&name), r.passed),
                theme.pass(),
            )),
            (Some(r), _) => {
                out.push(Line::styled(
                    format!(
                        "✗ table {}: {} of {} rows differ",
                        safe(&name),
                        r.failed,
                        r.results.len()
                    ),
                    theme.fail(),
                ));
                for row in r.results.iter().filter(|x| !x.passed).take(ROWS_SHOWN) {
                    let differs: Vec<String> = row
                        .mismatches
                        .iter()
                        .map(|m| format!("{} {} ≠ {}", m.what, m.expected, m.actual))
                        .collect();
                    out.push(Line::styled(
                        format!(
                            "    row {}: {} × {} — {}",
                            row.row,
                            safe(&row.source_label),
                            safe(&row.target_label),
                            safe(&differs.join(", "))
                        ),
                        theme.fail(),
                    ));
                }
            }
            (None, error) => out.push(Line::styled(
                format!(
                    "! table {}: {}",
                    safe(&name),
                    safe(error.as_deref().unwrap_or("cannot be read"))
                ),
                theme.warn(),
            )),
        }
    }
    out
}

//! The view of a page kept across sessions, per user: the selection, the focused pane,
//! zoom, and the panes' ways of showing (the matrix's transpose, order, filter, what it
//! shows and its folded categories; the filters of Sources, Rules and Dataset; Tests'
//! failures only). Written when the workbench leaves the page (quit, another page,
//! Ctrl-C), read back when it opens the page again. Rows and rules are named by key
//! and id, so a view outlives edits; what is gone is left out.

use serde::{Deserialize, Serialize};

use super::shell::{PageUi, Ui};
use crate::app::types::Side;
use crate::tui::action::{Action, PaneId};
use crate::tui::matrix::{Show, Sort};

#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
struct KeptView {
    /// The selection's source row key.
    selection: Option<String>,
    /// The focused pane's number (1–9).
    focus: Option<usize>,
    zoom: bool,
    matrix: MatrixView,
    sources: ListView,
    rules: ListView,
    dataset: DatasetView,
    tests_failures_only: bool,
}

#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
struct MatrixView {
    transposed: bool,
    /// `all`, `failing` or `moved`.
    show: String,
    /// `page`, `verdict`, `score`, `label` or `rule`.
    sort: String,
    /// The rule sorted by (its id), for `sort: rule`; the summary field, for
    /// `sort: field`.
    sort_rule: Option<String>,
    reversed: bool,
    filter: String,
    collapsed: Vec<String>,
    /// The cursor's rule (id) and target (key).
    rule: Option<String>,
    target: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
struct ListView {
    filter: String,
    /// Sources sorted by verdict.
    by_verdict: bool,
}

#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
struct DatasetView {
    /// `source` or `target`.
    side: String,
    filter: String,
}

fn of(p: &PageUi) -> KeptView {
    let page = &p.ws.page;
    let m = &p.matrix;
    let mut collapsed: Vec<String> = m.collapsed.iter().cloned().collect();
    collapsed.sort();
    KeptView {
        selection: page
            .source
            .rows
            .get(p.ws.selection)
            .map(|r| page.source.row_key(r)),
        focus: Some(p.focus.number()),
        zoom: p.zoom,
        matrix: MatrixView {
            transposed: m.transposed,
            show: match m.show {
                Show::All => "all",
                Show::Failing => "failing",
                Show::Moved => "moved",
            }
            .into(),
            sort: match m.sort {
                Sort::Page => "page",
                Sort::Verdict => "verdict",
                Sort::Score => "score",
                Sort::Label => "label",
                Sort::Rule(_) => "rule",
                Sort::Field(_) => "field",
            }
            .into(),
            sort_rule: match m.sort {
                Sort::Rule(r) => page.rules.get(r).map(|r| r.id.clone()),
                Sort::Field(f) => page.target.summary.get(f).cloned(),
                _ => None,
            },
            reversed: m.reversed,
            filter: m.filter.clone(),
            collapsed,
            rule: page.rules.get(m.rule).map(|r| r.id.clone()),
            target: page
                .target
                .rows
                .get(m.target)
                .map(|r| page.target.row_key(r)),
        },
        sources: ListView {
            filter: p.sources.filter.clone(),
            by_verdict: p.sources.by_verdict,
        },
        rules: ListView {
            filter: p.rules.query.clone(),
            by_verdict: false,
        },
        dataset: DatasetView {
            side: p.dataset.side.name().into(),
            filter: p.dataset.query.clone(),
        },
        tests_failures_only: p.tests.only_failures,
    }
}

impl Ui {
    /// Keeps the open page's view for the next time it is opened (nothing on a
    /// read-only database; a failure is not worth more than a word on the status line).
    pub(super) fn keep_view(&mut self) {
        let Some(p) = self.page() else {
            return;
        };
        let view = serde_json::to_value(of(p)).expect("a view serializes");
        if let Err(e) = p.ws.app().keep_view(&p.ws.page.id, &view) {
            self.status.app_error(&e);
        }
    }

    /// Puts the open page's kept view back (after it was opened).
    pub(super) fn restore_view(&mut self) {
        let Some(p) = self.page_mut() else {
            return;
        };
        let Ok(Some(json)) = p.ws.app().kept_view(&p.ws.page.id) else {
            return;
        };
        let Ok(view) = serde_json::from_value::<KeptView>(json) else {
            return;
        };
        let follow = apply(p, view);
        self.queue.extend(follow);
        self.drain();
    }
}

/// Sets the panes as `view` says, and returns what must follow (the selection, the
/// filters: they recompute what the panes list).
fn apply(p: &mut PageUi, view: KeptView) -> Vec<Action> {
    let mut follow = Vec::new();
    let source = &p.ws.page.source;
    if let Some(s) = view
        .selection
        .and_then(|k| source.rows.iter().position(|r| source.row_key(r) == k))
        .filter(|&s| s != p.ws.selection)
    {
        p.ws.select(s);
        follow.extend([
            Action::SourceSelected(s),
            Action::Changed(crate::tui::action::Changed::SELECTION),
        ]);
    }
    let page = &p.ws.page;
    let rule_index = |id: &str| page.rules.iter().position(|r| r.id == id);
    let m = &mut p.matrix;
    let v = view.matrix;
    m.transposed = v.transposed;
    m.show = match v.show.as_str() {
        "failing" => Show::Failing,
        "moved" => Show::Moved,
        _ => Show::All,
    };
    let sort = match v.sort.as_str() {
        "verdict" => Sort::Verdict,
        "score" => Sort::Score,
        "label" => Sort::Label,
        "rule" => v
            .sort_rule
            .as_deref()
            .and_then(rule_index)
            .map_or(Sort::Page, Sort::Rule),
        "field" => v
            .sort_rule
            .as_deref()
            .and_then(|f| page.target.summary.iter().position(|s| s == f))
            .map_or(Sort::Page, Sort::Field),
        _ => Sort::Page,
    };
    m.sort_by(sort);
    m.reversed = v.reversed;
    m.collapsed = v
        .collapsed
        .into_iter()
        .filter(|c| page.rules.iter().any(|r| &r.category == c))
        .collect();
    if let Some(r) = v.rule.as_deref().and_then(rule_index) {
        follow.push(Action::RuleSelected(r));
    }
    follow.push(Action::FilterTargets(v.filter));
    if let Some(t) = v.target.and_then(|k| {
        page.target
            .rows
            .iter()
            .position(|r| page.target.row_key(r) == k)
    }) {
        follow.push(Action::TargetSelected(t));
    }
    p.sources.by_verdict = view.sources.by_verdict;
    follow.push(Action::FilterSources(view.sources.filter, false));
    follow.push(Action::FilterRules(view.rules.filter));
    p.dataset.side = if view.dataset.side == "source" {
        Side::Source
    } else {
        Side::Target
    };
    p.dataset.search(&p.ws, &view.dataset.filter);
    p.tests.only_failures = view.tests_failures_only;
    if let Some(pane) = view
        .focus
        .and_then(|n| PaneId::ALL.into_iter().find(|p| p.number() == n))
    {
        follow.push(Action::Focus(pane));
    }
    p.zoom = view.zoom;
    follow
}

#[cfg(test)]
mod tests {
    use super::KeptView;

    /// A view kept by an older or newer workbench reads with what it has.
    #[test]
    fn a_partial_view_reads() {
        let v: KeptView = serde_json::from_value(
            serde_json::json!({"zoom": true, "matrix": {"sort": "label"}, "extra": 1}),
        )
        .unwrap();
        assert!(v.zoom);
        assert_eq!(v.matrix.sort, "label");
        assert_eq!(v.selection, None);
    }
}

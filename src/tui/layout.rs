//! Where each pane goes on the page screen, by the screen's size and the focus.

use ratatui::layout::{Constraint, Layout, Rect};

use super::action::PaneId;

/// Where each pane goes; panes not shown on a narrow screen are absent.
pub fn layout(area: Rect, focus: PaneId) -> Vec<(PaneId, Rect)> {
    layout_with(area, focus, PaneId::Overrides)
}

/// [`layout`], with `shared` (Overrides or Dataset) in the wide layout's bottom-right slot.
pub fn layout_with(area: Rect, focus: PaneId, shared: PaneId) -> Vec<(PaneId, Rect)> {
    // Wide: every pane at once. Medium (120–179 columns): the matrix across the whole
    // right side, the editor and the focused one of the others under it. Narrow: the
    // matrix, and one pane under it.
    let wide = area.width >= 180;
    let medium = !wide && area.width >= 120;
    let [left, rest] = Layout::horizontal([
        Constraint::Length(area.width.min(160) / 5 + 8),
        Constraint::Min(20),
    ])
    .areas(area);
    let [sources_area, rules_area] =
        Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(left);
    let mut out = vec![(PaneId::Sources, sources_area), (PaneId::Rules, rules_area)];
    if wide {
        let [center, right] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(44)]).areas(rest);
        let [matrix_area, editor_area] =
            Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(center);
        let [explain_area, policy_area, tests_area, overrides_area] = Layout::vertical([
            Constraint::Percentage(36),
            Constraint::Percentage(32),
            Constraint::Percentage(18),
            Constraint::Percentage(14),
        ])
        .areas(right);
        out.extend([
            (PaneId::Matrix, matrix_area),
            (PaneId::Editor, editor_area),
            (PaneId::Explain, explain_area),
            (PaneId::Policy, policy_area),
            (PaneId::Tests, tests_area),
            (shared, overrides_area),
        ]);
    } else if medium {
        let [matrix_area, lower] =
            Layout::vertical([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(rest);
        let [editor_area, other_area] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(lower);
        let other = match focus {
            PaneId::Sources | PaneId::Rules | PaneId::Matrix | PaneId::Editor => PaneId::Explain,
            PaneId::Explain
            | PaneId::Policy
            | PaneId::Overrides
            | PaneId::Tests
            | PaneId::Dataset => focus,
        };
        out.extend([
            (PaneId::Matrix, matrix_area),
            (PaneId::Editor, editor_area),
            (other, other_area),
        ]);
    } else {
        // Narrow: the matrix on top, the focused one of the others below it.
        let [matrix_area, lower] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(rest);
        out.push((PaneId::Matrix, matrix_area));
        let lower_pane = match focus {
            PaneId::Sources | PaneId::Rules | PaneId::Matrix => PaneId::Editor,
            PaneId::Editor
            | PaneId::Explain
            | PaneId::Policy
            | PaneId::Overrides
            | PaneId::Tests
            | PaneId::Dataset => focus,
        };
        out.push((lower_pane, lower));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pane has a place in every layout when it has the focus (a pane left out
    /// of it would be focused and never drawn).
    #[test]
    fn every_pane_is_drawn_when_focused() {
        for area in [
            Rect::new(0, 0, 200, 50),
            Rect::new(0, 0, 120, 35),
            Rect::new(0, 0, 80, 24),
        ] {
            for pane in PaneId::ALL {
                let shared = if pane.shares_slot() {
                    pane
                } else {
                    PaneId::Overrides
                };
                let shown = layout_with(area, pane, shared);
                assert!(
                    shown.iter().any(|(p, r)| *p == pane && r.area() > 0),
                    "{pane:?} is not drawn at {area:?}: {shown:?}"
                );
            }
        }
    }
}

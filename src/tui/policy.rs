//! Policy pane (placeholder until built).

use ratatui::Frame;
use ratatui::layout::Rect;

use super::action::Action;
use super::theme::Theme;
use super::ui::{Ctx, PageUi};
use super::view::pane_block;

#[derive(Debug, Default)]
pub struct State {}

pub fn update(_state: &mut State, _ctx: &mut Ctx<'_>, _action: &Action) -> Vec<Action> {
    vec![]
}

/// A value typed for field `field` (from the prompt).
pub fn set_typed(
    _state: &mut State,
    _ctx: &mut Ctx<'_>,
    _field: usize,
    _text: &str,
) -> Vec<Action> {
    vec![]
}

pub fn render(frame: &mut Frame, area: Rect, _page: &PageUi, theme: &Theme, focused: bool) {
    frame.render_widget(pane_block("Policy", theme, focused), area);
}

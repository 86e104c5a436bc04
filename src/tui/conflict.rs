//! The conflict dialog: a value edited here was changed elsewhere since the edit began
//! (a rule's logic, policy values, an assertion). It shows mine and theirs line by
//! line (who made theirs, at which revision) and the person chooses: `m` keeps mine
//! (saved over theirs, seen now), `t` takes theirs (mine is dropped), `e` edits a
//! merge (both between conflict markers, saved once valid); Esc decides later (nothing
//! is saved over theirs meanwhile).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::theme::{Theme, safe};
use crate::app::Conflict;
use crate::app::conflict::DiffLine;

pub struct State {
    pub conflict: Conflict,
    pub scroll: u16,
}

impl State {
    pub fn new(conflict: Conflict) -> State {
        State {
            conflict,
            scroll: 0,
        }
    }
}

/// The dialog's lines: what, who, the difference, the choices.
pub fn lines(s: &State, t: &Theme) -> Vec<Line<'static>> {
    let c = &s.conflict;
    let mut out = vec![
        Line::from(format!(
            "{} was changed elsewhere since your edit began.",
            safe(&c.what.describe())
        )),
        Line::from(vec![
            Span::styled("mine  ", t.pass()),
            Span::raw("your edit (not saved)   "),
            Span::styled("theirs", t.fail()),
            Span::raw(format!(
                " {}",
                safe(&c.theirs_label()).trim_start_matches("theirs ")
            )),
        ]),
        Line::from(""),
    ];
    for d in c.diff() {
        out.push(match d {
            DiffLine::Same(l) => Line::from(format!("        {}", safe(&l))),
            DiffLine::Mine(l) => Line::styled(format!("mine    {}", safe(&l)), t.pass()),
            DiffLine::Theirs(l) => Line::styled(format!("theirs  {}", safe(&l)), t.fail()),
        });
    }
    out.push(Line::from(""));
    out.push(Line::styled(
        "m keep mine (saved over theirs) · t take theirs · e edit a merge · Esc later",
        t.accent(),
    ));
    out
}

pub fn render(frame: &mut Frame, area: Rect, s: &State, t: &Theme) {
    let lines = lines(s, t);
    let h = super::widgets::rows(lines.len())
        .saturating_add(2)
        .min(area.height.saturating_sub(2))
        .max(8);
    let rect = super::widgets::centered(area, 90, h);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((s.scroll, 0))
            .block(super::widgets::pane_block("Changed elsewhere", t, true)),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::conflict::ConflictOn;
    use ratatui::{Terminal, backend::TestBackend};
    use serde_json::{Value, json};

    /// A rule's logic of over 65,535 lines in conflict draws: the dialog's height is not
    /// its line count cast to a `u16` and added to (that overflowed).
    #[test]
    fn a_conflict_over_a_rule_of_as_many_lines_as_a_u16_holds_draws() {
        // Each long string is a line of its own; with the lines around them, 65,535.
        let mine: Vec<Value> = (0..65_522).map(|i| json!(format!("{i:060}"))).collect();
        let conflict = Conflict {
            page_id: "p".into(),
            what: ConflictOn::RuleLogic("r".into()),
            mine: json!({"in": [{"var": "target.id"}, mine]}),
            theirs: Value::Null,
            base: Value::Null,
            revision: 2,
            author: None,
        };
        let s = State::new(conflict);
        let n = lines(&s, &Theme::mono()).len();
        assert_eq!(n, usize::from(u16::MAX), "as many lines as a u16 holds");
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("a test backend");
        terminal
            .draw(|f| render(f, f.area(), &s, &Theme::mono()))
            .expect("drawn");
        let screen = terminal.backend().to_string();
        assert!(screen.contains("Changed elsewhere"), "the dialog is drawn");
    }
}

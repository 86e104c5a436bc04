//! The History dialog (`H`): the page's revisions (when, who, what), and for the one
//! opened what differs from now, what that does to the selection's outcomes, and what
//! can be restored from it (the page, the policies, a rule — also a deleted one — or an
//! override; each restore is a new revision). `c` compares the matrix with a revision:
//! the cells and verdicts that moved since are marked there until `x`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, List, ListItem, ListState, Paragraph, Wrap};

use super::action::Action;
use super::theme::{Theme, safe, verdict_glyph};
use crate::app::history::{Baseline, Restorable, RevisionDetail, RevisionEntry};

pub struct State {
    pub entries: Vec<RevisionEntry>,
    pub selected: usize,
    pub detail: Option<Detail>,
    /// A revision being read (off the key thread), and whether to compare with it once
    /// it is in.
    pub loading: Option<(i64, bool)>,
}

/// The opened revision.
pub struct Detail {
    pub revision: i64,
    pub lines: Vec<String>,
    pub items: Vec<Restorable>,
    pub selected: usize,
    pub baseline: Option<Baseline>,
}

/// What a key in the dialog asks of the workbench.
pub enum Outcome {
    Stay,
    Close,
    /// Read this revision against now (then compare the matrix with it).
    Load {
        revision: i64,
        compare: bool,
    },
    Restore {
        revision: i64,
        item: Restorable,
    },
    Compare(Box<Baseline>),
    StopComparing,
}

impl State {
    pub fn new(entries: Vec<RevisionEntry>) -> State {
        State {
            entries,
            selected: 0,
            detail: None,
            loading: None,
        }
    }

    fn chosen(&self) -> Option<i64> {
        self.entries.get(self.selected).map(|e| e.revision)
    }

    /// A revision read against now: `selection` names the selected source.
    pub fn loaded(&mut self, d: RevisionDetail, selection: &str) -> Option<Baseline> {
        let compare = self.loading.take().is_some_and(|(_, c)| c);
        let mut lines = Vec::new();
        let diff = &d.diff;
        let names = |v: &[String]| {
            let shown: Vec<String> = v.iter().take(6).map(|s| safe(s)).collect();
            let more = v.len().saturating_sub(6);
            if more > 0 {
                format!("{} and {more} more", shown.join(", "))
            } else {
                shown.join(", ")
            }
        };
        let mut items = |what: &str, c: &crate::app::types::ItemChanges| {
            if !c.added.is_empty() {
                lines.push(format!("{what} added since: {}", names(&c.added)));
            }
            if !c.removed.is_empty() {
                lines.push(format!("{what} removed since: {}", names(&c.removed)));
            }
            if !c.changed.is_empty() {
                let ch: Vec<String> = c.changed.iter().map(|(k, _)| k.clone()).collect();
                lines.push(format!("{what} changed since: {}", names(&ch)));
            }
        };
        items("rules", &diff.rules);
        items("overrides", &diff.overrides);
        items("assertions", &diff.assertions);
        items("source rows", &diff.source_rows);
        items("target rows", &diff.target_rows);
        if !diff.policies.is_empty() {
            let p: Vec<String> = diff
                .policies
                .iter()
                .map(|(k, m)| format!("{k} {} → {}", m.old, m.new))
                .collect();
            lines.push(format!("policies changed since: {}", safe(&p.join(", "))));
        }
        if lines.is_empty() {
            lines.push("The page is the same as at this revision.".into());
        }
        match diff.selections.first() {
            Some(s) => {
                let verdicts = s
                    .targets
                    .iter()
                    .filter(|t| t.verdict.old != t.verdict.new)
                    .count();
                let mut line = format!(
                    "For {}: {} targets changed, {verdicts} verdicts moved",
                    safe(selection),
                    s.targets.len()
                );
                if s.selection_verdict.old != s.selection_verdict.new {
                    line.push_str(&format!(
                        "; its verdict {} {} → {} {}",
                        verdict_glyph(s.selection_verdict.old),
                        s.selection_verdict.old,
                        verdict_glyph(s.selection_verdict.new),
                        s.selection_verdict.new
                    ));
                }
                lines.push(line);
            }
            None if diff.selections_compared == 0 => lines.push(format!(
                "{} was not a source at this revision.",
                safe(selection)
            )),
            None => lines.push(format!("For {}: no outcome moved.", safe(selection))),
        }
        let mut detail = Detail {
            revision: d.revision,
            lines,
            items: d.restorable,
            selected: 0,
            baseline: Some(d.baseline),
        };
        if compare {
            return detail.baseline.take();
        }
        self.detail = Some(detail);
        None
    }

    /// A key's action in the dialog (see the keymap's History group).
    pub fn key(&mut self, action: &Action) -> Outcome {
        let step = |at: usize, len: usize, by: isize| -> usize {
            (at as isize + by).clamp(0, len.saturating_sub(1) as isize) as usize
        };
        if let Some(d) = &mut self.detail {
            let n = d.items.len();
            match action {
                Action::Up => d.selected = step(d.selected, n, -1),
                Action::Down => d.selected = step(d.selected, n, 1),
                Action::PageUp => d.selected = step(d.selected, n, -10),
                Action::PageDown => d.selected = step(d.selected, n, 10),
                Action::Home => d.selected = 0,
                Action::End => d.selected = n.saturating_sub(1),
                Action::Enter => {
                    if let Some(item) = d.items.get(d.selected) {
                        return Outcome::Restore {
                            revision: d.revision,
                            item: item.clone(),
                        };
                    }
                }
                Action::CompareRevision => {
                    if let Some(b) = d.baseline.take() {
                        return Outcome::Compare(Box::new(b));
                    }
                }
                Action::StopComparing => return Outcome::StopComparing,
                Action::Back => self.detail = None,
                _ => {}
            }
            return Outcome::Stay;
        }
        let n = self.entries.len();
        match action {
            Action::Up => self.selected = step(self.selected, n, -1),
            Action::Down => self.selected = step(self.selected, n, 1),
            Action::PageUp => self.selected = step(self.selected, n, -10),
            Action::PageDown => self.selected = step(self.selected, n, 10),
            Action::Home => self.selected = 0,
            Action::End => self.selected = n.saturating_sub(1),
            Action::Enter | Action::CompareRevision => {
                if let Some(revision) = self.chosen() {
                    let compare = *action == Action::CompareRevision;
                    self.loading = Some((revision, compare));
                    return Outcome::Load { revision, compare };
                }
            }
            Action::StopComparing => return Outcome::StopComparing,
            Action::Back => return Outcome::Close,
            _ => {}
        }
        Outcome::Stay
    }
}

pub fn render(frame: &mut Frame, area: Rect, s: &State, comparing: Option<i64>, t: &Theme) {
    let rect = super::widgets::centered(
        area,
        area.width.saturating_sub(8).clamp(40, 110),
        area.height.saturating_sub(4),
    );
    frame.render_widget(Clear, rect);
    let title = match (&s.detail, s.loading) {
        (Some(d), _) => format!(
            "History · revision {} against now · Enter restores · c compare · Esc back",
            d.revision
        ),
        (None, Some((rev, _))) => format!("History · reading revision {rev}…"),
        (None, None) => {
            "History · Enter opens · c compares the matrix · x stops comparing · Esc closes"
                .to_owned()
        }
    };
    let block = super::widgets::pane_block(&title, t, true);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if let Some(d) = &s.detail {
        let text_h = super::widgets::rows(d.lines.len())
            .saturating_add(1)
            .min(inner.height / 2);
        let [top, bottom] =
            Layout::vertical([Constraint::Length(text_h), Constraint::Min(1)]).areas(inner);
        let lines: Vec<Line> = d.lines.iter().map(|l| Line::raw(l.clone())).collect();
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), top);
        let mut items: Vec<ListItem> = d
            .items
            .iter()
            .map(|i| ListItem::new(format!("restore {}", safe(&i.label()))))
            .collect();
        if items.is_empty() {
            items.push(ListItem::new(Span::styled(
                "Nothing to restore: the page is as it was.",
                t.dim(),
            )));
        }
        let mut st = ListState::default().with_selected(Some(d.selected));
        frame.render_stateful_widget(
            List::new(items).highlight_style(t.selected()),
            bottom,
            &mut st,
        );
        return;
    }
    let items: Vec<ListItem> = s
        .entries
        .iter()
        .map(|e| {
            let mark = if Some(e.revision) == comparing {
                "≈"
            } else {
                " "
            };
            ListItem::new(Line::from(vec![
                Span::styled(format!("{mark}{:>5}  ", e.revision), t.title()),
                Span::styled(
                    format!(
                        "{}  ",
                        safe(e.at.get(..16).unwrap_or(&e.at)).replace('T', " ")
                    ),
                    t.dim(),
                ),
                Span::styled(
                    format!("{:<10} ", safe(e.author.as_deref().unwrap_or("-"))),
                    t.dim(),
                ),
                Span::raw(safe(&e.change)),
            ]))
        })
        .collect();
    let mut st = ListState::default().with_selected(Some(s.selected));
    frame.render_stateful_widget(
        List::new(items).highlight_style(t.selected()),
        inner,
        &mut st,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::{Terminal, backend::TestBackend};

    /// An opened revision's text is given at most half the dialog, however many lines it
    /// has: the count is not cast to a `u16` and added to (65,535 lines overflowed).
    #[test]
    fn an_opened_revision_with_as_many_lines_as_a_u16_holds_draws() {
        for n in [1, usize::from(u16::MAX), 70_000] {
            let mut s = State::new(Vec::new());
            s.detail = Some(Detail {
                revision: 7,
                lines: (0..n).map(|i| format!("line {i}")).collect(),
                items: Vec::new(),
                selected: 0,
                baseline: None,
            });
            let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("a test backend");
            terminal
                .draw(|f| render(f, f.area(), &s, None, &Theme::mono()))
                .expect("drawn");
            let screen = terminal.backend().to_string();
            assert!(screen.contains("line 0"), "{n}: the text's first line");
            assert!(
                screen.contains("Nothing to restore"),
                "{n}: the list under it"
            );
        }
    }
}

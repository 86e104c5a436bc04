//! The command palette: every action of the keymap with its keys, filtered as you type.

use super::action::{Action, PaneId};
use super::keymap::{self, Context};

pub struct Entry {
    pub label: String,
    pub keys: String,
    pub context: &'static str,
    pub action: Action,
    /// The pane the entry belongs to: it runs there (focused first), whatever pane has
    /// the focus when the palette opens.
    pub pane: Option<PaneId>,
}

/// Palette entries matching a query, fuzzily (each word), best first. Moving the cursor
/// is not a command: the navigation keys are left out.
pub fn entries(query: &str) -> Vec<Entry> {
    let all: Vec<Entry> = keymap::bindings()
        .iter()
        .filter(|b| !matches!(b.context, Context::Editing | Context::Dialog(_)))
        .filter(|b| {
            !matches!(
                b.action,
                Action::Up
                    | Action::Down
                    | Action::Left
                    | Action::Right
                    | Action::PageUp
                    | Action::PageDown
                    | Action::Home
                    | Action::End
                    | Action::Enter
                    | Action::Back
            )
        })
        .map(|b| Entry {
            label: b.help.to_owned(),
            keys: keymap::keys_label(b),
            context: b.context.title(),
            pane: match b.context {
                Context::Pane(p) => Some(p),
                _ => None,
            },
            action: b.action.clone(),
        })
        .collect();
    super::fuzzy::rank(query, all, |e| format!("{} {}", e.label, e.context))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_filters_by_words() {
        assert!(entries("").len() > 20);
        let e = entries("override");
        assert!(e.iter().any(|e| e.action == Action::ToggleOverride));
        assert!(entries("zzzz").is_empty());
        // Fuzzy: letters in order, not a substring.
        assert!(
            entries("ovrride")
                .iter()
                .any(|e| e.action == Action::ToggleOverride)
        );
        assert_eq!(entries("clear ovr")[0].action, Action::ToggleOverride);
        assert_eq!(
            entries("focus ovr")[0].action,
            Action::Focus(PaneId::Overrides)
        );
        // The palette's own commands, found by what people call them.
        for (query, action) in [
            ("export the view (the targets shown)", Action::ExportMatrix),
            ("copy the view as TSV", Action::CopyView),
            ("re-run tests", Action::RerunTests),
            ("switch page", Action::Pages),
            ("go to revision", Action::History),
            ("copy", Action::Copy),
        ] {
            assert_eq!(entries(query)[0].action, action, "{query}");
        }
    }
}

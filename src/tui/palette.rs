//! The command palette: the commands of where you are (on the page picker: the pages
//! and the picker's commands; on a page: the page's and its panes'), with their keys,
//! filtered as you type. An entry that cannot run now says why instead of running.

use super::action::{Action, PaneId};
use super::keymap::{self, Context};

pub struct Entry {
    pub label: String,
    pub keys: String,
    pub context: String,
    pub action: Action,
    /// The pane the entry belongs to: it runs there (focused first), whatever pane has
    /// the focus when the palette opens.
    pub pane: Option<PaneId>,
    /// Why the entry cannot run now, if it cannot.
    pub unavailable: Option<String>,
}

/// What the palette needs to know of where it was opened.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// On the page picker: its pages (id, name).
    pub picker: Option<Vec<(String, String)>>,
    pub rules: usize,
    pub sources: usize,
    pub targets: usize,
    /// A revision chosen to compare with.
    pub comparing: bool,
    /// Cells moved since the revision compared with.
    pub moved: usize,
    /// A find was entered (`n` / `N` have something to look for).
    pub found: bool,
    /// `u` took a step back that Ctrl-R can redo.
    pub redo: bool,
    pub read_only: bool,
}

/// Why `action` cannot run now, if it cannot.
fn why_not(action: &Action, f: &Facts) -> Option<String> {
    use Action as A;
    let writes = matches!(
        action,
        A::AddRule
            | A::DeleteRule
            | A::EditRuleMeta
            | A::ToggleOverride
            | A::ForceIncompatible
            | A::Pin
            | A::AddAssertion
            | A::EditAssertion
            | A::DeleteAssertion
            | A::UndoChange
            | A::RedoChange
    );
    if f.read_only && writes {
        return Some("the database is read-only: nothing can be saved".into());
    }
    let reason = match action {
        A::EditRule | A::DeleteRule | A::EditRuleMeta | A::SortByRule(_) | A::Collapse
            if f.rules == 0 =>
        {
            "the page has no rules yet (a adds one in Rules)"
        }
        A::ToggleOverride
        | A::ForceIncompatible
        | A::Frequency
        | A::ExportMatrix
        | A::CopyView
        | A::Transpose
            if f.targets == 0 =>
        {
            "the page has no targets"
        }
        A::Pin if f.sources == 0 => "the page has no source rows",
        A::StopComparing if !f.comparing => "not comparing with a revision (H, then c, compares)",
        A::NextMoved(_) if f.moved == 0 => "no cell moved since the page was opened",
        A::FindNext(_) if !f.found => "nothing found yet: / finds",
        A::RedoChange if !f.redo => "nothing to redo: u undoes first",
        _ => return None,
    };
    Some(reason.to_owned())
}

/// Palette entries matching a query, fuzzily (each word), best first. Moving the cursor
/// is not a command: the navigation keys are left out.
pub fn entries(query: &str, facts: &Facts) -> Vec<Entry> {
    let on_picker = facts.picker.is_some();
    let mut all: Vec<Entry> = keymap::bindings()
        .iter()
        .filter(|b| match b.context {
            Context::Editing | Context::Dialog(_) => false,
            Context::Global => true,
            Context::Picker => on_picker,
            Context::Page | Context::Pane(_) => !on_picker,
        })
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
            context: b.context.title().to_owned(),
            pane: match b.context {
                Context::Pane(p) => Some(p),
                _ => None,
            },
            unavailable: why_not(&b.action, facts),
            action: b.action.clone(),
        })
        .collect();
    // On the picker, each page is an entry: open it.
    for (id, name) in facts.picker.iter().flatten() {
        all.push(Entry {
            label: format!(
                "open page {} ({})",
                super::theme::safe(id),
                super::theme::safe(name)
            ),
            keys: String::new(),
            context: "Page".into(),
            pane: None,
            unavailable: None,
            action: Action::OpenPage(id.clone()),
        });
    }
    super::fuzzy::rank(query, all, |e| format!("{} {}", e.label, e.context))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Facts {
        Facts {
            rules: 3,
            sources: 2,
            targets: 5,
            ..Facts::default()
        }
    }

    #[test]
    fn palette_filters_by_words() {
        let f = page();
        assert!(entries("", &f).len() > 20);
        let e = entries("override", &f);
        assert!(e.iter().any(|e| e.action == Action::ToggleOverride));
        assert!(entries("zzzz", &f).is_empty());
        // Fuzzy: letters in order, not a substring.
        assert!(
            entries("ovrride", &f)
                .iter()
                .any(|e| e.action == Action::ToggleOverride)
        );
        assert_eq!(entries("clear ovr", &f)[0].action, Action::ToggleOverride);
        assert_eq!(
            entries("focus ovr", &f)[0].action,
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
            assert_eq!(entries(query, &f)[0].action, action, "{query}");
        }
    }

    #[test]
    fn on_the_picker_pages_and_picker_commands_only() {
        let f = Facts {
            picker: Some(vec![("loan-eligibility".into(), "Loans".into())]),
            ..Facts::default()
        };
        let all = entries("", &f);
        assert!(
            all.iter()
                .any(|e| e.action == Action::OpenPage("loan-eligibility".into()))
        );
        assert!(
            all.iter()
                .any(|e| e.action == Action::Filter && e.context == "Page picker")
        );
        assert!(
            !all.iter().any(|e| e.action == Action::ToggleOverride),
            "no page commands"
        );
        assert_eq!(
            entries("loan", &f)[0].action,
            Action::OpenPage("loan-eligibility".into())
        );
        // On a page, no picker entries.
        assert!(
            !entries("", &page())
                .iter()
                .any(|e| e.context == "Page picker")
        );
    }

    #[test]
    fn what_cannot_run_says_why() {
        let f = page();
        let stop = entries("stop comparing", &f);
        let e = stop
            .iter()
            .find(|e| e.action == Action::StopComparing)
            .unwrap();
        assert!(e.unavailable.as_deref().unwrap().contains("not comparing"));
        let empty = Facts { rules: 0, ..page() };
        let edit = entries("edit the rule's logic", &empty);
        assert!(edit[0].unavailable.as_deref().unwrap().contains("no rules"));
        let ro = Facts {
            read_only: true,
            ..page()
        };
        let add = entries("write a new rule", &ro);
        assert!(add[0].unavailable.as_deref().unwrap().contains("read-only"));
        assert!(entries("write a new rule", &f)[0].unavailable.is_none());
    }
}

//! The command palette: every action of the keymap with its keys, filtered as you type.

use super::action::Action;
use super::keymap::{self, Context};

pub struct Entry {
    pub label: String,
    pub keys: String,
    pub context: &'static str,
    pub action: Action,
}

/// Palette entries matching a query (every word must appear).
pub fn entries(query: &str) -> Vec<Entry> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    keymap::bindings()
        .into_iter()
        .filter(|b| b.context != Context::Editing)
        .map(|b| Entry {
            label: b.help.to_owned(),
            keys: keymap::keys_label(&b),
            context: b.context.title(),
            action: b.action,
        })
        .filter(|e| {
            let hay = format!("{} {}", e.label, e.context).to_lowercase();
            words.iter().all(|w| hay.contains(w))
        })
        .collect()
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
    }
}

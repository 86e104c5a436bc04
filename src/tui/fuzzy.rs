//! Fuzzy matching for the palette and the page picker (nucleo-matcher, the matcher of
//! helix): each word of the query is matched fuzzily (`ovr` finds "override"), the
//! best matches first; an empty query keeps every item in its order.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// The items that match `query`, best first (ties keep their order).
pub fn rank<T>(query: &str, items: Vec<T>, text: impl Fn(&T) -> String) -> Vec<T> {
    if query.trim().is_empty() {
        return items;
    }
    let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, usize, T)> = items
        .into_iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let hay = text(&item);
            pattern
                .score(Utf32Str::new(&hay, &mut buf), &mut matcher)
                .map(|s| (s, i, item))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn fuzzy_words_best_first() {
        let items = vec!["set or clear an override", "open the page", "overview"];
        assert_eq!(
            rank("ovr", items.clone(), |s| s.to_string()),
            vec!["set or clear an override", "overview"]
        );
        assert_eq!(
            rank("page open", items.clone(), |s| s.to_string()),
            vec!["open the page"]
        );
        assert_eq!(rank("", items.clone(), |s| s.to_string()), items);
        assert!(rank("zzzz", items, |s| s.to_string()).is_empty());
    }
}

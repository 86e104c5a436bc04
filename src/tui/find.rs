//! Find (`/`, then `n` / `N`), as in the tools people know: each word of the query is
//! matched fuzzily (nucleo, the matcher of helix), the best match is selected as you
//! type, and `n` / `N` walk the matches in list order, wrapping. Weak matches are cut
//! (a match scoring under half the best one is none), so a query that fits every item
//! loosely does not find them all.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// The matches of a query over a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits {
    /// The positions in the list that match, ascending.
    pub positions: Vec<usize>,
    /// The position of the best match (the first of the best when tied).
    pub best: usize,
}

impl Hits {
    /// The match after position `from` (before it when not `forward`), wrapping;
    /// `from` need not be a match.
    pub fn next(&self, from: usize, forward: bool) -> usize {
        let p = &self.positions;
        if forward {
            p.iter().copied().find(|&x| x > from).unwrap_or(p[0])
        } else {
            p.iter()
                .rev()
                .copied()
                .find(|&x| x < from)
                .unwrap_or(p[p.len() - 1])
        }
    }

    /// Where a find lands from position `from`: the best match for the query as typed
    /// (`FindText`), the next or previous one for `n` / `N` (`FindFrom`).
    pub fn landing(&self, from: usize, action: &super::action::Action) -> usize {
        match action {
            super::action::Action::FindFrom(_, forward) => self.next(from, *forward),
            _ => self.best,
        }
    }

    /// Which match position `at` is (1-based), for "3 of 12".
    pub fn ordinal(&self, at: usize) -> Option<usize> {
        self.positions.iter().position(|&x| x == at).map(|i| i + 1)
    }
}

/// The items of a list of `n` that match `query` (`hay` gives an item's text), or
/// `None` when none does or the query is empty.
pub fn hits<S: AsRef<str>>(query: &str, n: usize, hay: impl Fn(usize) -> S) -> Option<Hits> {
    hits_in(query, (0..n).collect(), hay).0
}

/// What the last find over a list matched, before the cut: typing on narrows the
/// search to those items (a longer query matches a subset), so a find over 100,000
/// targets costs one full pass, then less at each key.
#[derive(Debug, Default)]
pub struct Narrowing {
    /// Which list (the pane's name for its items as they are: rows, order, filter).
    list: u64,
    query: String,
    matched: Vec<usize>,
}

/// [`hits`], narrowed by `cache` when `query` extends the query it holds for the same
/// `list`; the cache then holds this query's matches.
pub fn hits_narrowing<S: AsRef<str>>(
    cache: &mut Narrowing,
    list: u64,
    query: &str,
    n: usize,
    hay: impl Fn(usize) -> S,
) -> Option<Hits> {
    let narrows = cache.list == list
        && !cache.query.trim().is_empty()
        && query.starts_with(cache.query.as_str())
        // A longer word or a new one narrows; a negated one (`!x`) widens as it grows.
        && !query.contains('!');
    let candidates = if narrows {
        std::mem::take(&mut cache.matched)
    } else {
        (0..n).collect()
    };
    let (hits, matched) = hits_in(query, candidates, hay);
    *cache = Narrowing {
        list,
        query: query.to_owned(),
        matched,
    };
    hits
}

/// The hits among `candidates`, and every candidate that matched (before the cut).
fn hits_in<S: AsRef<str>>(
    query: &str,
    candidates: Vec<usize>,
    hay: impl Fn(usize) -> S,
) -> (Option<Hits>, Vec<usize>) {
    if query.trim().is_empty() {
        return (None, Vec::new());
    }
    let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let scored: Vec<(usize, u32)> = candidates
        .into_iter()
        .filter_map(|i| {
            let text = hay(i);
            pattern
                .score(Utf32Str::new(text.as_ref(), &mut buf), &mut matcher)
                .map(|s| (i, s))
        })
        .collect();
    let matched: Vec<usize> = scored.iter().map(|&(i, _)| i).collect();
    let Some(top) = scored.iter().map(|&(_, s)| s).max() else {
        return (None, matched);
    };
    let kept: Vec<(usize, u32)> = scored.into_iter().filter(|&(_, s)| s * 2 >= top).collect();
    let best = kept.iter().find(|&&(_, s)| s == top).map(|&(i, _)| i);
    let hits = best.map(|best| Hits {
        positions: kept.into_iter().map(|(i, _)| i).collect(),
        best,
    });
    (hits, matched)
}

/// What the status line says after a jump: "match 3 of 12 for `q`".
pub fn said(hits: &Hits, at: usize, query: &str) -> String {
    format!(
        "match {} of {} for `{}` (n next, N previous)",
        hits.ordinal(at).unwrap_or(0),
        hits.positions.len(),
        super::theme::safe(query.trim())
    )
}

/// What the status line says when nothing matches.
pub fn none(query: &str, what: &str) -> String {
    format!("no {what} matches `{}`", super::theme::safe(query.trim()))
}

#[cfg(test)]
mod tests {
    use super::hits;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("Rule {i}")).collect()
    }

    #[test]
    fn the_best_match_and_the_cut() {
        let items = names(100);
        let h = hits("Rule 77", items.len(), |i| items[i].clone()).unwrap();
        assert_eq!(h.best, 77);
        assert!(
            h.positions.len() < 10,
            "a query every item fits loosely is cut: {:?}",
            h.positions
        );
        assert!(hits("zzz", items.len(), |i| items[i].clone()).is_none());
        assert!(hits("  ", items.len(), |i| items[i].clone()).is_none());
    }

    #[test]
    fn narrowing_finds_what_a_full_pass_finds() {
        let items: Vec<String> = (0..500).map(|i| format!("Model {i}")).collect();
        let mut cache = super::Narrowing::default();
        for q in ["M", "Mo", "Model", "Model 4", "Model 49", "Model 499"] {
            let narrowed =
                super::hits_narrowing(&mut cache, 1, q, items.len(), |i| items[i].clone());
            assert_eq!(narrowed, hits(q, items.len(), |i| items[i].clone()), "{q}");
        }
        // Another list, or a query that does not extend the last: a full pass.
        let other =
            super::hits_narrowing(&mut cache, 2, "Model 1", items.len(), |i| items[i].clone());
        assert_eq!(other, hits("Model 1", items.len(), |i| items[i].clone()));
        let back = super::hits_narrowing(&mut cache, 2, "Model", items.len(), |i| items[i].clone());
        assert_eq!(back, hits("Model", items.len(), |i| items[i].clone()));
    }

    #[test]
    fn next_and_previous_wrap() {
        let items = ["apple", "banana", "apricot", "cherry", "grape"];
        let h = hits("ap", items.len(), |i| items[i].to_owned()).unwrap();
        assert_eq!(h.positions, vec![0, 2, 4]);
        assert_eq!(h.next(0, true), 2);
        assert_eq!(h.next(1, true), 2);
        assert_eq!(h.next(4, true), 0);
        assert_eq!(h.next(0, false), 4);
        assert_eq!(h.next(3, false), 2);
        assert_eq!(h.ordinal(4), Some(3));
    }
}

//! A selection's overrides and its targets' verdicts with them: what a selection
//! shares with every selection that reads the same values, and what is its own.
//!
//! The matrix keeps every override of a page in one table by source ([`OverrideTable`]):
//! a selection's are a range of it, found in two reads, and an evaluation holds the
//! table (shared, not copied) with that range ([`Overrides`]). Its targets' verdicts are
//! the shared ones with its overridden targets' forced over them ([`Devices`]). So a
//! page with an override on every source costs, per selection, its overrides, not a
//! copy of every target's verdict nor a map of them.

use std::sync::Arc;

use crate::verdict::DeviceVerdict;

/// One override of a selection: its target, its value and its note.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Forced {
    pub target: usize,
    pub value: bool,
    pub note: Option<String>,
}

/// Every override of a page's matrix, by source: each source's by target (ascending),
/// the sources' one after another in one `Vec`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OverrideTable {
    /// Where each source's overrides start in `entries`, and where the last ends
    /// (`starts[s]..starts[s + 1]`): one more than the sources, or empty when no source
    /// has an override.
    starts: Vec<u32>,
    entries: Vec<Forced>,
}

impl OverrideTable {
    /// The table of `sources` sources' overrides from (source, override) pairs in any
    /// order; of two for one pair, the later holds.
    pub fn new(sources: usize, mut pairs: Vec<(usize, Forced)>) -> OverrideTable {
        if pairs.is_empty() {
            return OverrideTable::default();
        }
        // Stable: the later of two for one pair stays after the earlier.
        pairs.sort_by_key(|(s, f)| (*s, f.target));
        let mut entries: Vec<(usize, Forced)> = Vec::with_capacity(pairs.len());
        for (s, f) in pairs {
            match entries.last_mut() {
                Some((last, kept)) if *last == s && kept.target == f.target => *kept = f,
                _ => entries.push((s, f)),
            }
        }
        let mut starts = Vec::with_capacity(sources + 1);
        let mut at = 0;
        for s in 0..=sources {
            while at < entries.len() && entries[at].0 < s {
                at += 1;
            }
            starts.push(u32::try_from(at).expect("fewer than 2^32 overrides"));
        }
        entries.truncate(starts[sources] as usize);
        OverrideTable {
            starts,
            entries: entries.into_iter().map(|(_, f)| f).collect(),
        }
    }

    /// Source `source`'s overrides, by target.
    pub fn of(&self, source: usize) -> &[Forced] {
        &self.entries[self.range(source)]
    }

    fn range(&self, source: usize) -> std::ops::Range<usize> {
        match (self.starts.get(source), self.starts.get(source + 1)) {
            (Some(&from), Some(&to)) => from as usize..to as usize,
            _ => 0..0,
        }
    }

    /// Whether no source has an override.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many overrides the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Sets (`Some`) or clears (`None`) the override of (`source`, `target`) in a table
    /// of `sources` sources.
    pub fn set(
        &mut self,
        sources: usize,
        source: usize,
        target: usize,
        value: Option<(bool, Option<String>)>,
    ) {
        let range = self.range(source);
        let at = self.entries[range.clone()].binary_search_by_key(&target, |f| f.target);
        if at.is_err() && value.is_none() {
            return;
        }
        // A source past the table's end (none had overrides, or a row was added):
        // the sources up to it start where the last ends.
        if self.starts.len() < sources.max(source + 1) + 1 {
            let end = self.starts.last().copied().unwrap_or(0);
            self.starts.resize(sources.max(source + 1) + 1, end);
        }
        // Where the source's range is now (past the end before: at the end).
        let range = self.range(source);
        let grown = match (at, value) {
            (Ok(i), Some((value, note))) => {
                self.entries[range.start + i] = Forced {
                    target,
                    value,
                    note,
                };
                return;
            }
            (Err(i), Some((value, note))) => {
                let forced = Forced {
                    target,
                    value,
                    note,
                };
                self.entries.insert(range.start + i, forced);
                true
            }
            (Ok(i), None) => {
                self.entries.remove(range.start + i);
                false
            }
            (Err(_), None) => unreachable!("returned above"),
        };
        for start in &mut self.starts[source + 1..] {
            if grown {
                *start += 1;
            } else {
                *start -= 1;
            }
        }
    }
}

/// One selection's overrides: its range of the matrix's table (shared, not copied),
/// by target.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    table: Option<Arc<OverrideTable>>,
    source: usize,
}

impl Overrides {
    /// Source `source`'s overrides in `table`.
    pub fn of_source(table: Arc<OverrideTable>, source: usize) -> Overrides {
        Overrides {
            table: Some(table),
            source,
        }
    }

    /// A selection's own overrides, by target (ascending).
    pub fn new(forced: Vec<Forced>) -> Overrides {
        let pairs = forced.into_iter().map(|f| (0, f)).collect();
        Overrides::of_source(Arc::new(OverrideTable::new(1, pairs)), 0)
    }

    /// Every override, by target.
    pub fn all(&self) -> &[Forced] {
        self.table.as_ref().map_or(&[], |t| t.of(self.source))
    }

    pub fn is_empty(&self) -> bool {
        self.all().is_empty()
    }

    pub fn len(&self) -> usize {
        self.all().len()
    }

    /// Target `target`'s override, if it has one.
    pub fn get(&self, target: usize) -> Option<&Forced> {
        let all = self.all();
        all.binary_search_by_key(&target, |f| f.target)
            .ok()
            .map(|i| &all[i])
    }

    /// Target `target`'s override value, if it has one.
    pub fn value(&self, target: usize) -> Option<bool> {
        self.get(target).map(|f| f.value)
    }

    /// Target `target`'s override note, if it has an override with a note.
    pub fn note(&self, target: usize) -> Option<&str> {
        self.get(target)?.note.as_deref()
    }

    /// The override value of each of `targets` targets, in order (`None`: not
    /// overridden).
    pub fn values(&self, targets: usize) -> Vec<Option<bool>> {
        let mut out = vec![None; targets];
        for f in self.all() {
            out[f.target] = Some(f.value);
        }
        out
    }
}

impl PartialEq for Overrides {
    /// The same overrides (however they are kept).
    fn eq(&self, other: &Overrides) -> bool {
        self.all() == other.all()
    }
}

impl std::hash::Hash for Overrides {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.all().hash(h);
    }
}

/// A selection's targets' verdicts: those of every selection that reads the same
/// values (shared, not copied) with the selection's own overrides forced over them (a
/// few entries, by target). A selection with one override costs that override, not a
/// copy of every target's verdict.
#[derive(Debug, Clone, Default)]
pub struct Devices {
    base: Arc<[DeviceVerdict]>,
    /// By target, ascending, each within `base`.
    forced: Box<[(usize, DeviceVerdict)]>,
}

impl Devices {
    /// `base` with `forced` over it (by target, ascending; each within `base`).
    pub fn forced(base: Arc<[DeviceVerdict]>, forced: Vec<(usize, DeviceVerdict)>) -> Devices {
        assert!(
            forced.windows(2).all(|w| w[0].0 < w[1].0)
                && forced.last().is_none_or(|f| f.0 < base.len()),
            "forced verdicts are by target, ascending, within the targets"
        );
        Devices {
            base,
            forced: forced.into_boxed_slice(),
        }
    }

    pub fn len(&self) -> usize {
        self.base.len()
    }

    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// Target `t`'s verdict.
    #[inline]
    pub fn get(&self, t: usize) -> Option<&DeviceVerdict> {
        if !self.forced.is_empty()
            && let Ok(i) = self.forced.binary_search_by_key(&t, |f| f.0)
        {
            return Some(&self.forced[i].1);
        }
        self.base.get(t)
    }

    /// Every target's verdict, in order.
    pub fn iter(&self) -> DevicesIter<'_> {
        DevicesIter {
            base: self.base.iter(),
            t: 0,
            forced: &self.forced,
        }
    }

    /// The verdicts shared with every selection that reads the same values, before
    /// this selection's overrides.
    pub fn shared(&self) -> &Arc<[DeviceVerdict]> {
        &self.base
    }

    /// The verdicts this selection's overrides force, by target.
    pub fn overridden(&self) -> &[(usize, DeviceVerdict)] {
        &self.forced
    }

    /// Every target's verdict, in one `Vec`.
    pub fn to_vec(&self) -> Vec<DeviceVerdict> {
        self.iter().copied().collect()
    }
}

impl std::ops::Index<usize> for Devices {
    type Output = DeviceVerdict;

    #[inline]
    fn index(&self, t: usize) -> &DeviceVerdict {
        match self.get(t) {
            Some(d) => d,
            None => panic!("target {t} of {}", self.base.len()),
        }
    }
}

impl PartialEq for Devices {
    /// The same verdict for every target (however it is kept).
    fn eq(&self, other: &Devices) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Arc<[DeviceVerdict]>> for Devices {
    fn from(base: Arc<[DeviceVerdict]>) -> Devices {
        Devices {
            base,
            forced: Box::new([]),
        }
    }
}

impl From<Vec<DeviceVerdict>> for Devices {
    fn from(base: Vec<DeviceVerdict>) -> Devices {
        Devices::from(Arc::<[DeviceVerdict]>::from(base))
    }
}

impl FromIterator<DeviceVerdict> for Devices {
    fn from_iter<I: IntoIterator<Item = DeviceVerdict>>(iter: I) -> Devices {
        Devices::from(iter.into_iter().collect::<Arc<[DeviceVerdict]>>())
    }
}

impl<'a> IntoIterator for &'a Devices {
    type Item = &'a DeviceVerdict;
    type IntoIter = DevicesIter<'a>;

    fn into_iter(self) -> DevicesIter<'a> {
        self.iter()
    }
}

/// The targets' verdicts of a [`Devices`], in order.
#[derive(Clone)]
pub struct DevicesIter<'a> {
    base: std::slice::Iter<'a, DeviceVerdict>,
    /// The target `base` is at.
    t: usize,
    /// The forced verdicts from `t` on.
    forced: &'a [(usize, DeviceVerdict)],
}

impl<'a> Iterator for DevicesIter<'a> {
    type Item = &'a DeviceVerdict;

    #[inline]
    fn next(&mut self) -> Option<&'a DeviceVerdict> {
        let shared = self.base.next()?;
        let t = self.t;
        self.t += 1;
        match self.forced.split_first() {
            Some(((at, forced), rest)) if *at == t => {
                self.forced = rest;
                Some(forced)
            }
            _ => Some(shared),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
}

impl ExactSizeIterator for DevicesIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{FULL, NONE, PARTIAL, Reason};

    fn forced(target: usize, value: bool, note: Option<&str>) -> Forced {
        Forced {
            target,
            value,
            note: note.map(str::to_owned),
        }
    }

    /// Every source's overrides as (source, target, value) in table order.
    fn listed(table: &OverrideTable, sources: usize) -> Vec<(usize, usize, bool)> {
        (0..sources)
            .flat_map(|s| table.of(s).iter().map(move |f| (s, f.target, f.value)))
            .collect()
    }

    #[test]
    fn a_table_holds_each_sources_overrides_by_target_the_later_of_two_for_a_pair() {
        let pairs = vec![
            (2, forced(5, true, None)),
            (0, forced(3, false, Some("first"))),
            (2, forced(1, false, None)),
            (0, forced(3, true, Some("second"))),
            // A source the table does not have: not placed.
            (7, forced(0, true, None)),
        ];
        let table = OverrideTable::new(3, pairs);
        assert_eq!(
            listed(&table, 3),
            [(0, 3, true), (2, 1, false), (2, 5, true)]
        );
        assert_eq!(table.len(), 3);
        assert_eq!(table.of(0)[0].note.as_deref(), Some("second"));
        assert!(table.of(1).is_empty());
        assert!(table.of(7).is_empty(), "out of range: none");
        assert!(OverrideTable::new(3, vec![]).of(0).is_empty());
    }

    #[test]
    fn setting_an_override_moves_only_the_later_sources_ranges() {
        let mut table = OverrideTable::default();
        table.set(3, 1, 4, Some((true, None)));
        table.set(3, 0, 2, Some((false, Some("n".into()))));
        table.set(3, 2, 0, Some((true, None)));
        table.set(3, 1, 1, Some((false, None)));
        assert_eq!(
            listed(&table, 3),
            [(0, 2, false), (1, 1, false), (1, 4, true), (2, 0, true)]
        );
        // Replaced in place, then removed; removing what is not there does nothing.
        table.set(3, 1, 4, Some((false, None)));
        table.set(3, 0, 2, None);
        table.set(3, 0, 9, None);
        assert_eq!(
            listed(&table, 3),
            [(1, 1, false), (1, 4, false), (2, 0, true)]
        );
        // A source past the table's end (a row added since) grows it.
        table.set(3, 4, 0, Some((true, None)));
        assert_eq!(listed(&table, 5).last(), Some(&(4, 0, true)));
        assert_eq!(table, {
            let mut pairs = vec![(1, forced(1, false, None)), (1, forced(4, false, None))];
            pairs.extend([(2, forced(0, true, None)), (4, forced(0, true, None))]);
            OverrideTable::new(5, pairs)
        });
    }

    #[test]
    fn a_selections_overrides_answer_by_target() {
        let o = Overrides::new(vec![
            forced(1, true, Some("by hand")),
            forced(4, false, None),
        ]);
        assert_eq!(
            (o.value(1), o.value(4), o.value(2)),
            (Some(true), Some(false), None)
        );
        assert_eq!((o.note(1), o.note(4)), (Some("by hand"), None));
        assert_eq!(o.values(5), [None, Some(true), None, None, Some(false)]);
        // Kept as a range of a table or on their own: equal when they say the same.
        let table = Arc::new(OverrideTable::new(
            2,
            vec![
                (1, forced(4, false, None)),
                (1, forced(1, true, Some("by hand"))),
            ],
        ));
        assert_eq!(Overrides::of_source(table.clone(), 1), o);
        assert_ne!(Overrides::of_source(table, 0), o);
        assert!(Overrides::default().is_empty());
    }

    #[test]
    fn forced_verdicts_stand_over_the_shared_ones_and_nowhere_else() {
        let d = |verdict, score| DeviceVerdict {
            verdict,
            score,
            reason: Reason::Partial,
        };
        let base: Arc<[DeviceVerdict]> = vec![d(PARTIAL, 0.5), d(FULL, 1.0), d(NONE, 0.0)].into();
        let over = DeviceVerdict {
            verdict: NONE,
            score: 1.0,
            reason: Reason::Override,
        };
        let devices = Devices::forced(base.clone(), vec![(1, over)]);
        assert_eq!(devices.len(), 3);
        assert_eq!(devices[1], over);
        assert_eq!((devices[0], devices[2]), (base[0], base[2]));
        assert_eq!(devices.to_vec(), [base[0], over, base[2]]);
        assert_eq!(devices.iter().len(), 3);
        assert!(Arc::ptr_eq(devices.shared(), &base), "not copied");
        assert_eq!(devices, Devices::from(vec![base[0], over, base[2]]));
        assert_ne!(devices, Devices::from(base));
        assert_eq!(devices.get(3), None);
    }
}

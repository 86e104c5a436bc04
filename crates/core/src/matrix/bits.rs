//! A rule's outcomes over the targets as bitsets, and per-target counts of them kept
//! bit-sliced, so that a selection's verdicts come from weighted bit counts.
//!
//! A column's pass and n/a bits are made once, when the column is (from the outcome of
//! each group of targets that read the same values). [`Sliced`] adds a rule's bits to
//! every target's count 64 targets at a time: bit `k` of 64 targets' counts is one
//! word, and adding a word of bits is a ripple carry through those words.

use super::outcome::Outcome;

/// One bit per target, 64 to a word (bit `t % 64` of word `t / 64`); bits past the
/// last target are clear.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    /// The targets whose outcome is `which`.
    pub fn of(outcome: &[Outcome], which: Outcome) -> Bits {
        const ONES: u64 = 0x0101_0101_0101_0101;
        // Eight outcomes at once: their bytes xor `which`'s are zero where equal (an
        // outcome's byte is 0..=3, so two bits tell), and the eight low bits are then
        // gathered into one byte by a multiplication that moves bit 8i to bit 56 + i.
        let eight = |c: &[Outcome]| -> u64 {
            let x = u64::from_le_bytes(std::array::from_fn(|i| c[i] as u8));
            let y = x ^ (u64::from(which as u8) * ONES);
            let equal = !(y | y >> 1) & ONES;
            equal.wrapping_mul(0x0102_0408_1020_4080) >> 56
        };
        let words = outcome
            .chunks(64)
            .map(|chunk| {
                let whole = chunk.chunks_exact(8);
                let rest = whole.remainder();
                let word = whole
                    .enumerate()
                    .fold(0u64, |w, (j, c)| w | eight(c) << (8 * j));
                let done = chunk.len() - rest.len();
                rest.iter()
                    .enumerate()
                    .fold(word, |w, (b, &o)| w | (u64::from(o == which) << (done + b)))
            })
            .collect();
        Bits { words }
    }

    /// No bits (a column where no outcome is of the kind).
    pub fn none() -> Bits {
        Bits::default()
    }

    /// Whether target `t`'s bit is set (false past the end or when the set is empty).
    pub fn get(&self, t: usize) -> bool {
        self.words
            .get(t / 64)
            .is_some_and(|w| w >> (t % 64) & 1 == 1)
    }

    /// The words: empty, or one per 64 targets.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// How many bits are set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

/// The mask of the targets word `w` of `n` targets holds.
pub(super) fn live(w: usize, n: usize) -> u64 {
    let left = n - w * 64;
    if left >= 64 {
        u64::MAX
    } else {
        (1u64 << left) - 1
    }
}

/// A count per target (up to `2^depth - 1`), bit-sliced: `slices[w * depth + k]` is bit
/// `k` of the counts of targets `64w..64w + 64`.
pub(super) struct Sliced {
    slices: Vec<u64>,
    depth: usize,
}

impl Sliced {
    /// Counts of `n` targets, all zero, that can reach `most`.
    pub(super) fn new(n: usize, most: u32) -> Sliced {
        let depth = (u32::BITS - most.leading_zeros()).max(1) as usize;
        Sliced {
            slices: vec![0; n.div_ceil(64) * depth],
            depth,
        }
    }

    /// Adds one to the count of every target whose bit is set.
    pub(super) fn add(&mut self, bits: &Bits) {
        for (counts, &word) in self.slices.chunks_exact_mut(self.depth).zip(bits.words()) {
            let mut carry = word;
            for c in counts {
                let next = *c & carry;
                *c ^= carry;
                carry = next;
            }
        }
    }

    /// The counts of the 64 targets of word `w`, into `out` (target `64w + b` at `b`).
    pub(super) fn unpack(&self, w: usize, out: &mut [u32; 64]) {
        out.fill(0);
        self.add_scaled(w, 1, out);
    }

    /// Adds `scale ×` the count of each of the 64 targets of word `w` to `out`'s.
    pub(super) fn add_scaled(&self, w: usize, scale: u32, out: &mut [u32; 64]) {
        let counts = &self.slices[w * self.depth..(w + 1) * self.depth];
        for (k, &c) in counts.iter().enumerate() {
            let unit = scale << k;
            for (b, o) in out.iter_mut().enumerate() {
                *o += ((c >> b) as u32 & 1) * unit;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::outcome::{ERROR, FAIL, NOT_APPLICABLE, PASS};
    use super::*;

    fn outcomes(n: usize, seed: u64) -> Vec<Outcome> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                [FAIL, PASS, ERROR, NOT_APPLICABLE][(x >> 33) as usize % 4]
            })
            .collect()
    }

    #[test]
    fn bits_hold_each_targets_outcome_and_nothing_past_the_last() {
        for n in [0, 1, 7, 8, 9, 63, 64, 65, 130, 1000] {
            let o = outcomes(n, n as u64);
            let pass = Bits::of(&o, PASS);
            let na = Bits::of(&o, NOT_APPLICABLE);
            let (fail, error) = (Bits::of(&o, FAIL), Bits::of(&o, ERROR));
            assert_eq!(pass.words().len(), n.div_ceil(64));
            for (t, &x) in o.iter().enumerate() {
                assert_eq!(pass.get(t), x == PASS, "{n}: {t}");
                assert_eq!(na.get(t), x == NOT_APPLICABLE, "{n}: {t}");
                assert_eq!(fail.get(t), x == FAIL, "{n}: {t}");
                assert_eq!(error.get(t), x == ERROR, "{n}: {t}");
            }
            assert!(!pass.get(n));
            assert_eq!(pass.count(), o.iter().filter(|&&x| x == PASS).count());
            for (w, &word) in pass.words().iter().enumerate() {
                assert_eq!(word & !live(w, n), 0, "{n}: word {w} past the end");
            }
        }
    }

    #[test]
    fn sliced_counts_are_each_targets_count_of_its_bits() {
        for (n, rules) in [(1, 1), (64, 3), (100, 7), (200, 20), (65, 64)] {
            let columns: Vec<Vec<Outcome>> = (0..rules)
                .map(|r| outcomes(n, (r * 31 + n) as u64))
                .collect();
            let mut sliced = Sliced::new(n, rules as u32);
            for c in &columns {
                sliced.add(&Bits::of(c, PASS));
            }
            let mut out = [0u32; 64];
            for t in 0..n {
                if t % 64 == 0 {
                    sliced.unpack(t / 64, &mut out);
                }
                let want = columns.iter().filter(|c| c[t] == PASS).count() as u32;
                assert_eq!(out[t % 64], want, "{n} × {rules}: target {t}");
            }
        }
    }
}

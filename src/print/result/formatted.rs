//! Texts formatted once per distinct value: a page's scores take few values (weighted
//! counts of a few rules), and formatting a double costs more than the rest of a
//! target's bytes.

/// Texts of at most `W` bytes, each made once per key (a value's bits, in one of a
/// few lanes): a small table by the key's bits, each text padded to `W` bytes so that
/// it is copied at that constant size. A text whose slot holds another key's is made
/// again.
pub(super) struct Formatted<const W: usize> {
    slots: Box<[Slot<W>]>,
    lanes: usize,
}

#[derive(Clone, Copy)]
struct Slot<const W: usize> {
    bits: u64,
    /// 0: empty (a text kept is never empty).
    len: u8,
    text: [u8; W],
}

/// Slots per lane.
const SLOTS: usize = 512;

impl<const W: usize> Formatted<W> {
    /// A table of `lanes` lanes (a key's bits are looked up in its own lane only).
    pub(super) fn new(lanes: usize) -> Formatted<W> {
        const { assert!(W <= u8::MAX as usize) };
        let empty = Slot {
            bits: 0,
            len: 0,
            text: [0; W],
        };
        Formatted {
            slots: vec![empty; SLOTS * lanes].into_boxed_slice(),
            lanes,
        }
    }

    /// The text of `bits` in `lane`, padded to `W` bytes, and its length; `make` makes
    /// it when the table does not hold it. A text `make` makes longer than `W` bytes
    /// (or empty) is not kept: it comes back as it is.
    #[inline]
    pub(super) fn get(
        &mut self,
        bits: u64,
        lane: usize,
        make: impl FnOnce() -> String,
    ) -> Result<(&[u8; W], usize), String> {
        let at = (bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 55) as usize * self.lanes + lane;
        let slot = &mut self.slots[at];
        if slot.len == 0 || slot.bits != bits {
            let text = make();
            if text.is_empty() || text.len() > W {
                return Err(text);
            }
            let mut padded = [0; W];
            padded[..text.len()].copy_from_slice(text.as_bytes());
            *slot = Slot {
                bits,
                len: u8::try_from(text.len()).expect("W is at most 255"),
                text: padded,
            };
        }
        Ok((&slot.text, usize::from(slot.len)))
    }
}

impl<const W: usize> std::fmt::Debug for Formatted<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Formatted")
            .field("lanes", &self.lanes)
            .finish()
    }
}

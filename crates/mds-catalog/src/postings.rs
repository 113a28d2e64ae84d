//! Posting lists: sorted `u32` row indices, or a bitmap when a list holds
//! more than 1/32 of the rows, laid out in two shared buffers; and the
//! [`Seeker`] that reads one from a position (galloping or bitmap scan), as
//! the catalog's lazy intersection needs.

/// Where one posting list lives, and how many rows it holds.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Postings {
    /// Start in `ids` (array) or in `bits` (bitmap).
    pub(crate) start: u32,
    /// Number of rows.
    pub(crate) len: u32,
    pub(crate) bitmap: bool,
}

/// Collects posting lists in two passes: count, then fill.
#[derive(Default)]
pub(crate) struct ListBuilder {
    pub(crate) n: usize,
    pub(crate) ids: Vec<u32>,
    pub(crate) bits: Vec<u64>,
}

impl ListBuilder {
    /// Lays out a list of `count` rows: a bitmap when it holds more than 1/32 of them.
    pub(crate) fn reserve(&mut self, count: u32) -> Postings {
        if count as usize * 32 > self.n {
            let start = self.bits.len();
            self.bits.resize(start + self.n.div_ceil(64), 0);
            Postings { start: u32::try_from(start).expect("bitmaps fit u32 words"), len: count, bitmap: true }
        } else {
            let start = self.ids.len();
            self.ids.resize(start + count as usize, 0);
            Postings { start: u32::try_from(start).expect("postings fit u32"), len: count, bitmap: false }
        }
    }
}

/// A reading position in one posting list.
pub(crate) enum Seeker<'a> {
    Ids { ids: &'a [u32], pos: usize },
    Bits(&'a [u64]),
}

impl Seeker<'_> {
    /// The first row `>= x` in the list.
    pub(crate) fn seek(&mut self, x: u32) -> Option<u32> {
        match self {
            Seeker::Ids { ids, pos } => {
                let rest = &ids[*pos..];
                // Gallop, then binary search inside the bracket.
                let mut step = 1;
                while step < rest.len() && rest[step - 1] < x {
                    step *= 2;
                }
                let hi = step.min(rest.len());
                let lo = step / 2;
                *pos += lo + rest[lo..hi].partition_point(|&v| v < x);
                ids.get(*pos).copied()
            }
            Seeker::Bits(words) => {
                let mut w = (x / 64) as usize;
                let mut word = *words.get(w)? & (!0u64 << (x % 64));
                loop {
                    if word != 0 {
                        return Some((w * 64) as u32 + word.trailing_zeros());
                    }
                    w += 1;
                    word = *words.get(w)?;
                }
            }
        }
    }
}

//! Posting lists: the sorted row indices that hold a gram or an attribute.
//!
//! A list denser than 1/16 of the rows is a bitmap (one bit per row). Any
//! other list is compressed: blocks of [`BLOCK`] rows, each block's first row
//! in a skip table (`first: u32, offset: u32`) followed by the gaps between
//! the block's rows as LEB128 varints (one byte for a gap under 128). A
//! [`Seeker`] reads a list from a position forwards, jumping blocks through
//! the skip table (galloping) and decoding at most one block per seek.
//!
//! Everything is read from little-endian bytes with bounds-checked `get`s:
//! a damaged list ends early, it cannot panic.

/// Rows per compressed block.
pub(crate) const BLOCK: usize = 64;

/// Where one posting list lives, and how many rows it holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Postings {
    /// Byte offset in the compressed lists, or word index in the bitmaps.
    pub(crate) start: u32,
    /// Number of rows.
    pub(crate) len: u32,
    pub(crate) bitmap: bool,
}

impl Postings {
    /// Bytes of one record in the catalog's buffer.
    pub(crate) const SIZE: usize = 12;

    /// Appends the record (`start`, `len`, kind; little-endian `u32`s).
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.start.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&u32::from(self.bitmap).to_le_bytes());
    }

    /// Reads record `i` of a table of records.
    pub(crate) fn read(table: &[u8], i: usize) -> Postings {
        let at = i * Self::SIZE;
        Postings { start: u32_at(table, at), len: u32_at(table, at + 4), bitmap: u32_at(table, at + 8) != 0 }
    }

    /// Whether a list of `count` of `n` rows is stored as a bitmap: denser
    /// than 1/16. From 1/8 a compressed list (about a byte per row) would be
    /// larger; between 1/16 and 1/8 a bitmap is up to twice its size, but a
    /// seek in it is a word scan, not a block decode, and such lists are
    /// what the slowest searches intersect (see BENCHMARKS.md). Readers go
    /// by each list's record, so either choice reads back.
    pub(crate) fn is_dense(count: usize, n: usize) -> bool {
        count * 16 > n
    }
}

/// The little-endian `u32` at byte `at` (0 when out of bounds).
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).map_or(0, |s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
}

/// The little-endian `u64` at byte `at` (0 when out of bounds).
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).map_or(0, |s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
}

/// Appends sorted, distinct `rows` compressed; the list starts where `out` ended.
pub(crate) fn encode(rows: &[u32], out: &mut Vec<u8>) {
    let table = out.len();
    out.resize(table + rows.len().div_ceil(BLOCK) * 8, 0);
    let data = out.len();
    for (b, block) in rows.chunks(BLOCK).enumerate() {
        let offset = u32::try_from(out.len() - data).expect("a list's data fits 4 GiB");
        out[table + b * 8..table + b * 8 + 4].copy_from_slice(&block[0].to_le_bytes());
        out[table + b * 8 + 4..table + b * 8 + 8].copy_from_slice(&offset.to_le_bytes());
        for w in block.windows(2) {
            let mut gap = w[1] - w[0];
            while gap >= 0x80 {
                out.push(gap as u8 | 0x80);
                gap >>= 7;
            }
            out.push(gap as u8);
        }
    }
}

/// The varint at `data[*pos..]`, advancing `pos`; `None` if damaged.
fn varint(data: &[u8], pos: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u32::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// A reading position in one posting list.
pub(crate) enum Seeker<'a> {
    /// A compressed list.
    List(ListSeeker<'a>),
    /// A bitmap's words (little-endian `u64`s).
    Bits(&'a [u8]),
}

/// A reading position in a compressed list: at row `cur`, the `j`th of block `block`.
pub(crate) struct ListSeeker<'a> {
    table: &'a [u8],
    data: &'a [u8],
    len: usize,
    blocks: usize,
    block: usize,
    j: usize,
    pos: usize,
    cur: u32,
    done: bool,
}

impl<'a> ListSeeker<'a> {
    /// A seeker at the start of the list at byte `start` of `lists` holding `len` rows.
    pub(crate) fn new(lists: &'a [u8], start: usize, len: usize) -> Self {
        let blocks = len.div_ceil(BLOCK);
        let table = lists.get(start..start + blocks * 8).unwrap_or(&[]);
        let data = lists.get(start + blocks * 8..).unwrap_or(&[]);
        let mut s = ListSeeker { table, data, len, blocks, block: 0, j: 0, pos: 0, cur: 0, done: true };
        if blocks > 0 && table.len() == blocks * 8 {
            s.enter(0);
        }
        s
    }

    fn first(&self, b: usize) -> u32 {
        u32_at(self.table, b * 8)
    }

    fn enter(&mut self, b: usize) {
        self.block = b;
        self.j = 0;
        self.pos = u32_at(self.table, b * 8 + 4) as usize;
        self.cur = self.first(b);
        self.done = false;
    }

    fn seek(&mut self, x: u32) -> Option<u32> {
        if self.done {
            return None;
        }
        if self.cur >= x {
            return Some(self.cur);
        }
        // Jump to the last block starting at or before `x`: gallop, then bisect.
        if self.block + 1 < self.blocks && self.first(self.block + 1) <= x {
            let (mut lo, mut step) = (self.block + 1, 1);
            while lo + step < self.blocks && self.first(lo + step) <= x {
                lo += step;
                step *= 2;
            }
            let mut hi = (lo + step).min(self.blocks);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.first(mid) <= x {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            self.enter(lo);
            if self.cur >= x {
                return Some(self.cur);
            }
        }
        // Decode forward within the block.
        let in_block = BLOCK.min(self.len - self.block * BLOCK);
        while self.j + 1 < in_block {
            let Some(gap) = varint(self.data, &mut self.pos) else {
                self.done = true;
                return None;
            };
            self.j += 1;
            self.cur = self.cur.saturating_add(gap);
            if self.cur >= x {
                return Some(self.cur);
            }
        }
        // Past this block: the next one starts after `x`.
        if self.block + 1 < self.blocks {
            self.enter(self.block + 1);
            Some(self.cur)
        } else {
            self.done = true;
            None
        }
    }
}

impl Seeker<'_> {
    /// The first row `>= x` in the list (`x` never decreases between calls).
    pub(crate) fn seek(&mut self, x: u32) -> Option<u32> {
        match self {
            Seeker::List(s) => s.seek(x),
            Seeker::Bits(words) => {
                let mut w = (x / 64) as usize;
                if w * 8 >= words.len() {
                    return None;
                }
                let mut word = u64_at(words, w * 8) & (!0u64 << (x % 64));
                loop {
                    if word != 0 {
                        return Some((w * 64) as u32 + word.trailing_zeros());
                    }
                    w += 1;
                    if w * 8 >= words.len() {
                        return None;
                    }
                    word = u64_at(words, w * 8);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rows: &[u32]) -> Vec<u8> {
        let mut out = vec![0xAA; 3]; // a list need not start at 0
        encode(rows, &mut out);
        out
    }

    #[test]
    fn seeks_match_a_linear_search() {
        let mut rows = Vec::new();
        let mut x = 5u32;
        for k in 0..1000u32 {
            rows.push(x);
            x += 1 + (k * 7919) % 300; // gaps of 1 to 300: one- and two-byte varints
        }
        let bytes = list(&rows);
        for step in [1, 3, 17, 64, 200, 1000] {
            let mut s = ListSeeker::new(&bytes, 3, rows.len());
            let mut probe = 0;
            while probe <= x + 10 {
                let want = rows.iter().copied().find(|&r| r >= probe);
                assert_eq!(s.seek(probe), want, "probe {probe}, step {step}");
                probe += step;
            }
        }
    }

    #[test]
    fn empty_single_and_block_edges() {
        assert_eq!(ListSeeker::new(&list(&[]), 3, 0).seek(0), None);
        let one = list(&[7]);
        assert_eq!(ListSeeker::new(&one, 3, 1).seek(0), Some(7));
        assert_eq!(ListSeeker::new(&one, 3, 1).seek(8), None);
        let rows: Vec<u32> = (0..BLOCK as u32 * 2).map(|r| r * 2).collect();
        let bytes = list(&rows);
        let mut s = ListSeeker::new(&bytes, 3, rows.len());
        assert_eq!(s.seek(2 * BLOCK as u32 - 1), Some(2 * BLOCK as u32)); // first of block 1
        assert_eq!(s.seek(4 * BLOCK as u32 - 2), Some(4 * BLOCK as u32 - 2)); // last row
        assert_eq!(s.seek(4 * BLOCK as u32 - 1), None);
    }

    #[test]
    fn damaged_lists_end_instead_of_panicking() {
        let rows: Vec<u32> = (0..300).map(|r| r * 1000).collect();
        let mut bytes = list(&rows);
        bytes.truncate(bytes.len() / 2);
        let mut s = ListSeeker::new(&bytes, 3, rows.len());
        let mut x = 0;
        while let Some(r) = s.seek(x) {
            x = r + 1;
        }
        assert_eq!(ListSeeker::new(&[], 0, 10).seek(0), None);
    }

    #[test]
    fn bitmaps_seek_across_words() {
        let mut words = vec![0u8; 24];
        words[8..16].copy_from_slice(&(1u64 << 5).to_le_bytes());
        let mut s = Seeker::Bits(&words);
        assert_eq!(s.seek(0), Some(69));
        assert_eq!(s.seek(70), None);
    }
}

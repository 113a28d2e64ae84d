//! Relevance of a search (contract section 15): what a term matched in a
//! row, how well, and what a row is also found by.
//!
//! A match has a *tier*, best first: 0 an exact ticker; 1 an exact former
//! ticker; 2 a name or ticker beginning with the term, or a word of the name
//! beginning with it; 3 the same on a former ticker or name; 4 any other
//! substring of the name or ticker; 5 the same on a former one. A row's
//! match is its best: the lowest tier, then ticker before name (and a
//! former ticker before a former name, each in the order the row keeps
//! them). The relevance order is then `(tier, inactive, market cap key,
//! ticker, ISIN)`: see [`upper`].
//!
//! A relevance page reads its candidates in row (ticker) order, keeping
//! the best `limit + 1`. Once it holds that many, it ends as soon as no
//! later row can beat the last of them: the catalog keeps, per block of
//! rows, the least key any row from there on can have short of an exact
//! ticker (tier 1 for a row with aliases, else tier 2, with its status and
//! market cap), and the rows an exact ticker can be in are one range of
//! the order, seen before the page ends.
//!
//! A row's *aliases* are the former tickers and names a search also
//! matches (without `as_of`): the symbols and names its own identity
//! events changed from, and every symbol and name in the events of the
//! ISINs it superseded (followed back through their `isin_changed`), less
//! its current ticker and name, each once. They are made once, when the
//! catalog is built; their grams are in the row's posting lists and their
//! four-character grams in its signature, so a search finds the row by
//! them with no other index.

use mds_domain::query::fold;
use mds_domain::{IdentityChange, MarketCap};
use memchr::memmem::Finder;

use crate::events::PackedEvents;
use crate::history::RowFacts;
use crate::tail::{Reader, put_varint};

/// An alias's kind byte: a former ticker.
pub(crate) const FORMER_TICKER: u8 = 0;
/// An alias's kind byte: a former name.
pub(crate) const FORMER_NAME: u8 = 1;

/// `match.field` codes, in the order of [`mds_domain::MatchField`].
pub(crate) const FIELD_TICKER: u32 = 0;
/// The current name.
pub(crate) const FIELD_NAME: u32 = 1;
/// A former ticker (an alias).
pub(crate) const FIELD_FORMER_TICKER: u32 = 2;
/// A former name (an alias).
pub(crate) const FIELD_FORMER_NAME: u32 = 3;

/// A match, packed: tier (bits 0–2), field (bits 3–4), the alias's index
/// among the row's aliases (bits 5–31; 0 for a current field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found(pub(crate) u32);

impl Found {
    /// A match of `tier` in `field` (of the row's `alias`-th alias, for a former one).
    pub(crate) fn new(tier: u32, field: u32, alias: usize) -> Self {
        Found(tier | field << 3 | (alias.min((1 << 27) - 1) as u32) << 5)
    }

    /// The tier (0 best).
    pub(crate) fn tier(self) -> u32 {
        self.0 & 7
    }

    /// The field code (`FIELD_*`).
    pub(crate) fn field(self) -> u32 {
        (self.0 >> 3) & 3
    }

    /// Which of the row's aliases matched (for a former field).
    pub(crate) fn alias(self) -> usize {
        (self.0 >> 5) as usize
    }

    /// The field's wire name.
    pub(crate) fn field_name(self) -> &'static [u8] {
        match self.field() {
            FIELD_TICKER => b"ticker",
            FIELD_NAME => b"name",
            FIELD_FORMER_TICKER => b"former_ticker",
            _ => b"former_name",
        }
    }

    /// The better of two matches (lower tier, then the earlier field).
    fn min(self, other: Option<Found>) -> Found {
        match other {
            Some(o) if (o.tier(), o.field()) < (self.tier(), self.field()) => o,
            _ => self,
        }
    }
}

/// Whether `text` lower-cased (ASCII letters only) holds `t` at byte
/// `at`: what comparing a lower-cased copy would say, without the copy.
pub(crate) fn lower_at(text: &[u8], at: usize, t: &[u8]) -> bool {
    text.get(at..at + t.len()).is_some_and(|w| w.iter().zip(t).all(|(&h, &c)| h.to_ascii_lowercase() == c))
}

/// Where `text` lower-cased (ASCII letters only) holds `t`, in
/// order. A scan for the first byte, then a comparison: the names and
/// tickers searched are short, and a lower-cased copy and a substring
/// searcher's set-up cost more than the scan (BENCHMARKS.md).
fn lower_matches<'a>(text: &'a [u8], t: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let last = (text.len() + 1).saturating_sub(t.len());
    (0..last).filter(move |&at| match t.first() {
        Some(&first) => text[at].to_ascii_lowercase() == first && lower_at(text, at, t),
        None => true,
    })
}

/// A search term, ready to match: the folded text, its substring finder,
/// and whether it could be (part of) a ticker.
pub(crate) struct Term<'t> {
    pub(crate) text: &'t str,
    pub(crate) finder: Finder<'t>,
    /// Tickers are printable ASCII without spaces: other terms cannot match one.
    pub(crate) ticker_like: bool,
}

impl<'t> Term<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Term { text, finder: Finder::new(text.as_bytes()), ticker_like: text.bytes().all(|b| b.is_ascii_graphic()) }
    }

    /// How a ticker matches: 0 exact, 1 beginning with the term, 2 another
    /// substring.
    fn ticker(&self, ticker: &[u8]) -> Option<u32> {
        if !self.ticker_like || ticker.len() < self.text.len() {
            return None;
        }
        let t = self.text.as_bytes();
        if lower_at(ticker, 0, t) {
            Some(if ticker.len() == t.len() { 0 } else { 1 })
        } else {
            lower_matches(ticker, t).next().map(|_| 2)
        }
    }

    /// How a name matches: 1 when it or one of its words begins with the
    /// term (a word begins after a character that is not alphanumeric), 2
    /// another substring. ASCII names are compared lower-cased a byte at a
    /// time, in place; others are folded (as the term was).
    fn name(&self, name: &[u8]) -> Option<u32> {
        if name.is_ascii() {
            if !self.text.is_ascii() {
                return None;
            }
            let mut found = None;
            for at in lower_matches(name, self.text.as_bytes()) {
                if at == 0 || !name[at - 1].is_ascii_alphanumeric() {
                    return Some(1);
                }
                found = Some(2);
            }
            found
        } else {
            let folded = fold(std::str::from_utf8(name).unwrap_or_default());
            let mut found = None;
            for at in self.finder.find_iter(folded.as_bytes()) {
                let before = folded[..at].chars().next_back();
                if before.is_none_or(|c| !c.is_alphanumeric()) {
                    return Some(1);
                }
                found = Some(2);
            }
            found
        }
    }

    /// The match of a current ticker and name (tiers 0, 2 and 4).
    pub(crate) fn current(&self, ticker: &[u8], name: &[u8]) -> Option<Found> {
        let t = self.ticker(ticker).map(|k| Found::new(2 * k, FIELD_TICKER, 0));
        if t.is_some_and(|f| f.tier() == 0) {
            return t;
        }
        let n = self.name(name).map(|k| Found::new(2 * k, FIELD_NAME, 0));
        match (t, n) {
            (Some(t), n) => Some(t.min(n)),
            (None, n) => n,
        }
    }

    /// The best match among a row's aliases (tiers 1, 3 and 5), if one
    /// beats `current`.
    pub(crate) fn former(&self, aliases: &[u8], current: Option<Found>) -> Option<Found> {
        let mut best = current;
        for (k, (kind, text)) in Aliases(Reader(aliases)).enumerate() {
            let found = match kind {
                FORMER_TICKER => self.ticker(text).map(|t| Found::new(2 * t + 1, FIELD_FORMER_TICKER, k)),
                _ => self.name(text).map(|t| Found::new(2 * t + 1, FIELD_FORMER_NAME, k)),
            };
            if let Some(f) = found {
                best = Some(match best {
                    Some(b) => b.min(Some(f)),
                    None => f,
                });
                if f.tier() == 1 {
                    break;
                }
            }
        }
        best
    }
}

/// The market-cap key of a row: sorts the largest first; `u32::MAX` for
/// none (or a value that is not a positive number).
pub(crate) fn mcap_key(m: Option<&MarketCap>) -> u32 {
    match m {
        Some(m) if m.inr_crore.is_finite() && m.inr_crore >= 0.0 => {
            // Non-negative floats order as their bits; `!bits` reverses
            // that, and the `- 1` keeps `u32::MAX` for none.
            !(m.inr_crore as f32).to_bits() - 1
        }
        _ => u32::MAX,
    }
}

/// The part of a relevance key before the ticker and ISIN: tier, then
/// inactive (superseded or delisted), then the market-cap key.
pub(crate) fn upper(tier: u32, inactive: bool, mcap: u32) -> u64 {
    u64::from(tier) << 33 | u64::from(inactive) << 32 | u64::from(mcap)
}

/// The aliases of one row's bytes: `(kind, text)` each.
pub(crate) struct Aliases<'a>(pub(crate) Reader<'a>);

impl<'a> Iterator for Aliases<'a> {
    type Item = (u8, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let kind = self.0.byte()?;
        let n = usize::try_from(self.0.varint()?).ok()?;
        Some((kind, self.0.bytes(n)?))
    }
}

/// The `k`th alias of a row's bytes.
pub(crate) fn alias_at(aliases: &[u8], k: usize) -> Option<(u8, &[u8])> {
    Aliases(Reader(aliases)).nth(k)
}

/// Appends one row's aliases to `out` (see the module's comment):
/// the strings of its lineage's events (`own` the row's ISIN).
pub(crate) fn encode_aliases(
    row: &RowFacts<'_>,
    lineage: &[(mds_domain::Isin, mds_domain::IdentityEvent)],
    out: &mut Vec<u8>,
) {
    let mut seen: Vec<(u8, String)> = Vec::new();
    let (ticker, name) = (row.ticker.to_ascii_lowercase(), fold(row.name));
    let mut add = |kind: u8, s: &str| {
        let key = if kind == FORMER_TICKER { s.to_ascii_lowercase() } else { fold(s) };
        let current = if kind == FORMER_TICKER { &ticker } else { &name };
        if key.is_empty() || key == *current || seen.iter().any(|(k, t)| *k == kind && *t == key) {
            return;
        }
        seen.push((kind, key));
        out.push(kind);
        put_varint(out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
    };
    for (isin, e) in lineage {
        let own = isin.as_str() == row.isin;
        match &e.change {
            IdentityChange::SymbolChanged { from, to, .. } => {
                add(FORMER_TICKER, from.as_str());
                if !own {
                    add(FORMER_TICKER, to.as_str());
                }
            }
            IdentityChange::NameChanged { from, to } => {
                add(FORMER_NAME, from);
                if !own {
                    add(FORMER_NAME, to);
                }
            }
            IdentityChange::Listed { symbol, .. } | IdentityChange::Delisted { symbol, .. } if !own => {
                add(FORMER_TICKER, symbol.as_str());
            }
            _ => {}
        }
    }
}

/// The aliases of every row (`row_of(i)` row `i`): the two sections, the
/// offsets and the bytes.
pub(crate) fn build_aliases<'r>(
    n: usize,
    row_of: impl Fn(usize) -> RowFacts<'r>,
    events: &PackedEvents,
) -> (Vec<u8>, Vec<u8>) {
    let order = events.order();
    let mut off = Vec::with_capacity(4 * (n + 1));
    let mut text = Vec::new();
    off.extend_from_slice(&0u32.to_le_bytes());
    for i in 0..n {
        let row = row_of(i);
        let lineage = events.lineage(&order, row.isin);
        if !lineage.is_empty() {
            encode_aliases(&row, &lineage, &mut text);
        }
        off.extend_from_slice(&u32::try_from(text.len()).expect("aliases fit 4 GiB").to_le_bytes());
    }
    (off, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(term: &str, ticker: &str, name: &str) -> Option<(u32, u32)> {
        Term::new(term).current(ticker.as_bytes(), name.as_bytes()).map(|f| (f.tier(), f.field()))
    }

    #[test]
    fn tiers_of_current_fields() {
        assert_eq!(tier("reliance", "RELIANCE", "Reliance Industries Limited"), Some((0, FIELD_TICKER)));
        assert_eq!(tier("infosys", "INFY", "Infosys Limited"), Some((2, FIELD_NAME)));
        assert_eq!(tier("infosys", "HCL-INSYS", "HCL Infosystems Limited"), Some((2, FIELD_NAME)));
        assert_eq!(tier("bank", "BANKBARODA", "Bank of Baroda"), Some((2, FIELD_TICKER)), "ticker before name");
        assert_eq!(tier("bank", "AXISBANK", "Axis Bank Limited"), Some((2, FIELD_NAME)));
        assert_eq!(tier("bank", "AXISBANK", "Axisbank Limited"), Some((4, FIELD_TICKER)));
        assert_eq!(tier("bank", "X", "Embank (Bank) Ltd"), Some((2, FIELD_NAME)), "a later word-start occurrence");
        assert_eq!(tier("bank", "X", "Embank Ltd"), Some((4, FIELD_NAME)));
        assert_eq!(tier("nestlé", "NESTLEIND", "Nestlé India"), Some((2, FIELD_NAME)));
        assert_eq!(tier("tlé", "NESTLEIND", "Nestlé India"), Some((4, FIELD_NAME)));
        assert_eq!(tier("india", "X", "Nestlé-India"), Some((2, FIELD_NAME)));
        assert_eq!(tier("zz", "X", "Nestlé"), None);
        assert_eq!(tier("m&m", "M&M", "Mahindra & Mahindra Limited"), Some((0, FIELD_TICKER)));
    }

    #[test]
    fn a_former_field_ranks_just_after_a_current_one() {
        let mut out = Vec::new();
        for (k, s) in [(FORMER_TICKER, "ZOMATO"), (FORMER_NAME, "Zomato Limited")] {
            out.push(k);
            put_varint(&mut out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        let t = Term::new("zomato");
        let f = t.former(&out, t.current(b"ETERNAL", b"Eternal Limited")).unwrap();
        assert_eq!((f.tier(), f.field(), f.alias()), (1, FIELD_FORMER_TICKER, 0));
        assert_eq!(alias_at(&out, f.alias()), Some((FORMER_TICKER, &b"ZOMATO"[..])));
        let t = Term::new("zomato lim");
        let f = t.former(&out, t.current(b"ETERNAL", b"Eternal Limited")).unwrap();
        assert_eq!((f.tier(), f.field(), f.alias()), (3, FIELD_FORMER_NAME, 1));
        // A former exact ticker beats a current prefix (tier 1 before 2).
        let t = Term::new("zomato");
        let f = t.former(&out, t.current(b"ZOMATOX", b"Other")).unwrap();
        assert_eq!(f.tier(), 1);
        // A current substring beats a former one.
        let t = Term::new("omato");
        assert_eq!(t.former(&out, t.current(b"X", b"Tomatoes")).unwrap().tier(), 4);
    }

    /// The in-place scan finds what a lower-cased copy searched for every
    /// occurrence finds, on strings of letters of both cases, digits and
    /// punctuation (with overlaps, at both ends, and an empty term).
    #[test]
    fn the_in_place_scan_finds_what_a_lower_cased_copy_finds() {
        let mut rng = mds_testkit::rng::Rng(0x5EED_CA7A_10C4_0001);
        let alphabet = b"aAbB-. 1";
        let draw = |rng: &mut mds_testkit::rng::Rng, n: usize| -> Vec<u8> {
            (0..n).map(|_| *rng.pick(alphabet)).collect::<Vec<u8>>()
        };
        for _ in 0..20_000 {
            let n = rng.below(12);
            let text = draw(&mut rng, n);
            let m = rng.below(4);
            let t = draw(&mut rng, m).to_ascii_lowercase();
            let lower = text.to_ascii_lowercase();
            let want: Vec<usize> = (0..=lower.len()).filter(|&at| lower[at..].starts_with(&t)).collect();
            let got: Vec<usize> = lower_matches(&text, &t).collect();
            assert_eq!(got, want, "{:?} in {:?}", String::from_utf8_lossy(&t), String::from_utf8_lossy(&text));
            assert_eq!(lower_at(&text, 0, &t), lower.starts_with(&t));
        }
    }

    #[test]
    fn market_cap_keys_sort_the_largest_first() {
        let m = |v: f64| Some(MarketCap { inr_crore: v, as_of: None });
        let k = |v: f64| mcap_key(m(v).as_ref());
        assert!(k(1_900_000.0) < k(150_000.0));
        assert!(k(150_000.0) < k(0.5));
        assert!(k(0.0) < mcap_key(None));
        assert_eq!(k(f64::NAN), u32::MAX);
        assert!(upper(0, true, u32::MAX) < upper(1, false, 0));
        assert!(upper(2, false, u32::MAX) < upper(2, true, 0));
    }
}

//! Word starts: every place of a row's ticker, name and former values where
//! a search term can begin a match of tier 0 to 3 (contract section 15; see
//! [`crate::rank`]), sorted by the text from there on, so that a term finds
//! the rows it begins a word of with two binary searches instead of a scan
//! of its candidates.
//!
//! A ranked page whose term begins a word of at least `limit + 1` rows
//! (after its filters and cursor) is made of those rows alone: no row
//! matched only inside a word (tiers 4 and 5) can rank before them. Such a
//! page costs what its matches cost, not what the trigram candidates do;
//! any other page is made by the scan, as before.
//!
//! Kept for ASCII texts only (a start's first eight bytes, lower-cased, as
//! a big-endian number, with where it is); a row with a text that is not
//! ASCII is listed once among the *other* rows, which a page verifies one
//! by one. Derived from the catalog's buffer (see
//! [`Catalog::prepare_search`]); not part of the snapshot.

use crate::catalog::Catalog;
use crate::rank::{
    self, Aliases, FIELD_FORMER_NAME, FIELD_FORMER_TICKER, FIELD_NAME, FIELD_TICKER, FORMER_TICKER, Found,
};
use crate::tail::Reader;

/// The most aliases of a row whose starts are kept (beyond, the row is
/// one of the other rows).
const ALIASES_MAX: usize = 1 << 10;
/// The longest text whose starts are kept (offsets fit 19 bits).
const TEXT_MAX: usize = 1 << 19;

/// One word start: the first eight bytes of the text from it on, and
/// where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Start {
    /// Up to eight bytes, lower-cased, big-endian, zero-padded.
    key: u64,
    /// The row.
    row: u32,
    /// The field (bits 0–1, a `rank::FIELD_*`), the alias's index among
    /// the row's aliases (bits 2–11), the byte offset in the text (bits 12–31).
    at: u32,
}

impl Start {
    fn field(self) -> u32 {
        self.at & 3
    }

    fn alias(self) -> usize {
        ((self.at >> 2) & (ALIASES_MAX as u32 - 1)) as usize
    }

    fn offset(self) -> usize {
        (self.at >> 12) as usize
    }
}

/// The first eight bytes of `text` lower-cased (ASCII), big-endian,
/// zero-padded.
fn key8(text: &[u8]) -> u64 {
    let mut k = [0u8; 8];
    for (slot, b) in k.iter_mut().zip(text) {
        *slot = b.to_ascii_lowercase();
    }
    u64::from_be_bytes(k)
}

/// The word starts of a catalog (see the module).
#[derive(Debug)]
pub(crate) struct Starts {
    starts: Vec<Start>,
    /// Rows with a text the starts do not keep, in row order.
    other: Vec<u32>,
}

/// A word-start candidate: `(relevance key's upper part, row, match)`.
pub(crate) type Hit = (u64, u32, u32);

impl Starts {
    /// The starts of `c`'s rows.
    pub(crate) fn of(c: &Catalog) -> Starts {
        let mut s = Starts { starts: Vec::with_capacity(c.len() * 6), other: Vec::new() };
        for i in 0..c.len() {
            let at = s.starts.len();
            if !s.push_row(c, i) {
                s.starts.truncate(at);
                s.other.push(i as u32);
            }
        }
        s.starts.sort_unstable();
        s.starts.shrink_to_fit();
        s
    }

    /// Pushes row `i`'s starts; false when one of its texts is not kept.
    fn push_row(&mut self, c: &Catalog, i: usize) -> bool {
        let row = i as u32;
        if !self.push_text(row, FIELD_TICKER, 0, c.ticker_bytes(i), false)
            || !self.push_text(row, FIELD_NAME, 0, c.name_bytes(i), true)
        {
            return false;
        }
        for (k, (kind, text)) in Aliases(Reader(c.aliases(i))).enumerate() {
            let (field, words) =
                if kind == FORMER_TICKER { (FIELD_FORMER_TICKER, false) } else { (FIELD_FORMER_NAME, true) };
            if k >= ALIASES_MAX || !self.push_text(row, field, k, text, words) {
                return false;
            }
        }
        true
    }

    /// Pushes the starts of one text: its beginning, and with `words` each
    /// byte after one that is not alphanumeric (as [`rank`] begins a word),
    /// less those a term cannot begin with (whitespace: terms are trimmed).
    fn push_text(&mut self, row: u32, field: u32, alias: usize, text: &[u8], words: bool) -> bool {
        if !text.is_ascii() || text.len() >= TEXT_MAX {
            return false;
        }
        for at in 0..text.len() {
            let begins = at == 0 || words && !text[at - 1].is_ascii_alphanumeric();
            if begins && !text[at].is_ascii_whitespace() {
                let packed = field | (alias as u32) << 2 | (at as u32) << 12;
                self.starts.push(Start { key: key8(&text[at..]), row, at: packed });
            }
        }
        true
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<Start>() + self.other.capacity() * 4
    }

    /// The starts whose first bytes are `term`'s first eight.
    fn range(&self, term: &[u8]) -> (usize, usize) {
        let n = term.len().min(8);
        let mut lo = [0u8; 8];
        lo[..n].copy_from_slice(&term[..n]);
        let mut hi = [0xffu8; 8];
        hi[..n].copy_from_slice(&term[..n]);
        let (lo, hi) = (u64::from_be_bytes(lo), u64::from_be_bytes(hi));
        (self.starts.partition_point(|s| s.key < lo), self.starts.partition_point(|s| s.key <= hi))
    }

    /// The rows `keep` keeps that `term` matches at tier 0 to 3, each
    /// with a match, once per start (a row whose ticker and name both
    /// begin with the term is there twice; see [`best_rows`]): the starts'
    /// rows, then the other rows verified with `verify`; true. False, with
    /// nothing pushed, when there are more than `max` starts and other
    /// rows to read.
    pub(crate) fn hits(
        &self,
        c: &Catalog,
        term: &rank::Term<'_>,
        max: usize,
        keep: impl Fn(u32) -> bool,
        verify: impl Fn(u32) -> Option<Found>,
        out: &mut Vec<Hit>,
    ) -> bool {
        let t = term.text.as_bytes();
        let (lo, hi) = self.range(t);
        if hi - lo + self.other.len() > max {
            return false;
        }
        for s in &self.starts[lo..hi] {
            let (field, row) = (s.field(), s.row);
            let tickers = field == FIELD_TICKER || field == FIELD_FORMER_TICKER;
            if tickers && !term.ticker_like || !keep(row) {
                continue;
            }
            // The text is read only when the key cannot say enough: past
            // its eight bytes, or whether a ticker is the term exactly.
            let exact = if t.len() > 8 || tickers {
                let text = c.field_text(row as usize, field, s.alias());
                if t.len() > 8 && !rank::lower_at(text, s.offset() + 8, &t[8..]) {
                    continue;
                }
                tickers && text.len() == t.len()
            } else {
                false
            };
            let tier = match field {
                FIELD_TICKER => 2 * u32::from(!exact),
                FIELD_NAME => 2,
                FIELD_FORMER_TICKER => 1 + 2 * u32::from(!exact),
                _ => 3,
            };
            out.push((c.upper_of(row as usize, tier), row, Found::new(tier, field, s.alias()).0));
        }
        for &row in &self.other {
            if keep(row)
                && let Some(f) = verify(row).filter(|f| f.tier() <= 3)
            {
                out.push((c.upper_of(row as usize, f.tier()), row, f.0));
            }
        }
        true
    }
}

/// The best `take` rows of `hits` that `past` keeps, each once with its
/// best match, in relevance order (`(key, row)`; a row's best is its least
/// key, then its least match: the earlier field, then the earlier alias,
/// see `Found`), left in `hits`; false, with `hits` in any order, when
/// there are fewer. A row's best is found before `past` is asked, so a row
/// whose best is before the cursor is not served again for a worse match.
pub(crate) fn best_rows(hits: &mut Vec<Hit>, take: usize, past: impl Fn(u64, u32) -> bool) -> bool {
    hits.sort_unstable();
    // The rows met so far, sorted: a row's later hits are worse than its first.
    let mut seen: Vec<u32> = Vec::with_capacity(take.min(hits.len()));
    let mut kept = 0;
    for k in 0..hits.len() {
        if kept == take {
            break;
        }
        let (key, row, _) = hits[k];
        let Err(at) = seen.binary_search(&row) else { continue };
        seen.insert(at, row);
        if past(key, row) {
            hits[kept] = hits[k];
            kept += 1;
        }
    }
    hits.truncate(kept);
    kept == take
}

#[cfg(test)]
thread_local! {
    /// Tests: make every ranked page by the scan, the reference the word
    /// starts are checked against.
    pub(crate) static SCAN_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use mds_domain::{Company, CompanyFilter, CompanyStatus, Exchange, IdentityChange, IdentityEvent, Ticker};
    use mds_domain::{Industry, Letter, MarketCap, MarketCapBand, SearchTerm, StatusFilter};
    use mds_testkit::fixtures::{bare_company, isin_of};

    use super::SCAN_ONLY;
    use crate::build::ChangeStamp;
    use crate::catalog::Catalog;

    /// Words that recur across names (so that a term begins many words, or
    /// few, or is inside them), with punctuation and one that is not ASCII.
    const WORDS: &str = "Bank Bandhan India Indian Tata Motors Ltd Limited Reliance Infra A&B (India) Nestlé Banaras \
                         Sugar Mills HDFC Life Insurance Co. Taj Hotels";

    /// A catalog of `n` rows made of [`WORDS`], with market caps, the three
    /// statuses, both exchanges, industries, and former tickers and names.
    fn catalog(n: u32) -> Catalog {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let words: Vec<&str> = WORDS.split_whitespace().collect();
        let mut rows = Vec::new();
        let mut events = Vec::new();
        for k in 0..n {
            let picked: Vec<&str> = (0..1 + next(4)).map(|_| words[next(words.len() as u64) as usize]).collect();
            let name = picked.join(if next(5) == 0 { "  " } else { " " });
            let ticker: String =
                words.iter().flat_map(|w| w.chars().filter(char::is_ascii_alphanumeric).take(4)).collect();
            let ticker =
                format!("{}{}", ticker.to_uppercase(), if next(3) == 0 { String::new() } else { k.to_string() });
            let mut c = Company { name, ..bare_company(isin_of(k), &ticker[..ticker.len().min(20)]) };
            c.is_nse = next(2) == 0;
            c.industry = Some(["Banks", "Sugar", "Hotels"][next(3) as usize].into());
            c.market_cap_band = [None, Some(MarketCapBand::Large), Some(MarketCapBand::Small)][next(3) as usize];
            c.details.status =
                [CompanyStatus::Active, CompanyStatus::Active, CompanyStatus::Superseded, CompanyStatus::Delisted]
                    [next(4) as usize];
            if next(4) != 0 {
                c.details.market_cap = Some(MarketCap { inr_crore: next(5000) as f64, as_of: None });
            }
            let day = NaiveDate::from_ymd_opt(2025, 1, 1 + next(28) as u32).unwrap();
            if next(6) == 0 {
                let from = format!("TATA{}", next(40));
                let change = IdentityChange::SymbolChanged {
                    exchange: Exchange::Nse,
                    from: Ticker::parse(&from).unwrap(),
                    to: c.ticker.clone(),
                };
                events.push((c.isin.clone(), IdentityEvent { date: day, exact: true, observed_between: None, change }));
            }
            if next(6) == 0 {
                let from = format!("{} Banking Corp", words[next(words.len() as u64) as usize]);
                let change = IdentityChange::NameChanged { from, to: c.name.clone() };
                events.push((c.isin.clone(), IdentityEvent { date: day, exact: true, observed_between: None, change }));
            }
            rows.push((ChangeStamp::default(), c));
        }
        Catalog::from_stamped_with_history(rows, events)
    }

    /// Every page of `filter`, followed to the end, as `(rows, matches)`.
    fn pages(c: &Catalog, filter: &CompanyFilter, limit: usize) -> Vec<(Vec<u32>, Vec<u32>, Option<u64>)> {
        let mut out = Vec::new();
        let mut after = None;
        loop {
            let p = c.page(filter, after.as_ref(), limit);
            out.push((p.rows.clone(), p.found.clone(), p.next.as_ref().and_then(|k| k.rank)));
            match p.next {
                Some(k) if out.len() < 6 => after = Some(k),
                _ => return out,
            }
        }
    }

    /// A ranked page made from the word starts is the page the scan makes:
    /// the same rows, matches and cursors, page after page, for terms that
    /// begin many words, few, none, span words or run past eight bytes,
    /// under every filter.
    #[test]
    fn pages_from_the_word_starts_are_the_scans_pages() {
        let c = catalog(2000);
        assert!(!c.starts().other.is_empty(), "a name that is not ASCII is among the other rows");
        let terms = [
            "ba",
            "ban",
            "bank",
            "bank ",
            "banaras sug",
            "in",
            "ind",
            "india",
            "indian",
            "(india",
            "a&b",
            "&b",
            "ta",
            "tata",
            "tata motors",
            "tata mo",
            "tata1",
            "tata12",
            "motors",
            "ltd",
            "limited",
            "reliance infra",
            "reliance",
            "nestlé",
            "nestl",
            "co.",
            "o.",
            "hdfc life",
            "ife",
            "ank",
            "taj hotels",
            "  ",
            "zz",
            "banking corp",
            "bankin",
            "india  tata",
        ];
        let filters = |term: &str| {
            let search = SearchTerm::parse(term).ok();
            let base = CompanyFilter { search, ..Default::default() };
            vec![
                base.clone(),
                CompanyFilter { status: StatusFilter::Any, ..base.clone() },
                CompanyFilter { status: StatusFilter::Only(CompanyStatus::Delisted), ..base.clone() },
                CompanyFilter { exchange: Some(Exchange::Nse), market_cap: Some(MarketCapBand::Large), ..base.clone() },
                CompanyFilter { exchange: Some(Exchange::Bse), ..base.clone() },
                CompanyFilter { industry: Some(Industry::parse("Sugar").unwrap()), ..base.clone() },
                CompanyFilter { letter: Some(Letter::parse("t").unwrap()), ..base.clone() },
                CompanyFilter { ticker: Some(Ticker::parse("TATA").unwrap()), ..base.clone() },
            ]
        };
        let mut from_starts = 0;
        for term in terms {
            if SearchTerm::parse(term).is_err() {
                continue;
            }
            for f in filters(term) {
                for limit in [1, 7, 50] {
                    SCAN_ONLY.with(|s| s.set(true));
                    let want = pages(&c, &f, limit);
                    SCAN_ONLY.with(|s| s.set(false));
                    let got = pages(&c, &f, limit);
                    assert_eq!(got, want, "{term:?}, limit {limit}, {f:?}");
                    from_starts += usize::from(c.made_from_starts(&f, limit));
                }
            }
        }
        assert!(from_starts > 100, "the word starts made {from_starts} first pages");
    }
}

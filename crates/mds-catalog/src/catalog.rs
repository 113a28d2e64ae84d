//! [`Catalog`]: companies sorted by `(ticker, isin)`, each with its JSON
//! serialised once, and the filtered keyset page over them.
//!
//! # Layout (compact, for a million rows)
//! Row `i` (its position in `(ticker, isin)` order, a `u32`) has its JSON,
//! ticker and folded name as slices of three arenas (one `String` each, with
//! offsets), and its ISIN as 12 bytes. Filters are posting lists of row
//! indices: per interned industry, per exchange, per market-cap band, and per
//! bigram and trigram of the folded name and ticker (for search). A list
//! holding more than 1/32 of the rows is a bitmap instead of a `u32` array.
//! `letter` and `ticker` are contiguous ranges in this order (binary search).
//!
//! A page intersects its lists lazily (leapfrog: each list seeks to the
//! current candidate by galloping or bitmap scan), starting at the cursor's
//! position, so a deep page costs what the first page costs. A search term's
//! grams only narrow the candidates; every candidate is then checked with the
//! real substring test. Nothing is allocated per row.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

use mds_domain::query::fold;
use mds_domain::{Company, CompanyFilter, Exchange, MarketCapBand};

use crate::grams::{GramHasher, bigram, grams_of, trigram};
use crate::postings::{ListBuilder, Postings, Seeker};

/// The position of a row in the catalog's order: `(ticker, isin)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey {
    /// Ticker (upper-case).
    pub ticker: String,
    /// ISIN.
    pub isin: String,
}

/// Every company, sorted by `(ticker, isin)`.
#[derive(Debug, Default)]
pub struct Catalog {
    /// `json[json_off[i]..json_off[i + 1]]` is row `i`'s `V1Company` JSON.
    json: String,
    json_off: Vec<usize>,
    /// Tickers (upper-case), same scheme.
    tickers: String,
    ticker_off: Vec<u32>,
    /// Folded names ([`fold`]), same scheme.
    names: String,
    name_off: Vec<u32>,
    isins: Vec<[u8; 12]>,
    /// Interned industry name → its list.
    industries: HashMap<Box<str>, Postings>,
    bse: Postings,
    nse: Postings,
    bands: [Postings; 3],
    /// Gram (see [`bigram`], [`trigram`]) → its index in `gram_lists`.
    grams: HashMap<u64, u32, BuildHasherDefault<GramHasher>>,
    gram_lists: Vec<Postings>,
    /// Every posting array, back to back (lists refer to ranges of it).
    ids: Vec<u32>,
    /// Every bitmap, back to back.
    bits: Vec<u64>,
    /// The companies, rebuilt from the JSON on first use of [`Catalog::companies`].
    companies: OnceLock<Vec<Company>>,
}

/// One page of a filtered walk.
#[derive(Debug)]
pub struct Page<'a> {
    /// The matching companies' JSON, in order.
    pub rows: Vec<&'a str>,
    /// The key of the last row on the page, when more rows follow.
    pub next: Option<SortKey>,
}

impl Page<'_> {
    /// Whether more pages follow.
    pub fn has_more(&self) -> bool {
        self.next.is_some()
    }

    fn empty() -> Self {
        Page { rows: Vec::new(), next: None }
    }
}

/// Whether upper-case ASCII `ticker`, folded, contains the folded `term`.
fn ticker_contains(ticker: &str, term: &str) -> bool {
    let (t, s) = (ticker.as_bytes(), term.as_bytes());
    s.len() <= t.len() && t.windows(s.len()).any(|w| w.iter().zip(s).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

fn band_index(b: MarketCapBand) -> usize {
    match b {
        MarketCapBand::Large => 0,
        MarketCapBand::Mid => 1,
        MarketCapBand::Small => 2,
    }
}

impl Catalog {
    /// Builds a catalog from companies in any order. Companies with the same
    /// ISIN must not repeat (the store's primary key guarantees it).
    pub fn new(companies: Vec<Company>) -> Self {
        assert!(companies.len() < u32::MAX as usize, "a catalog holds fewer than 2^32 rows");
        // Sort a permutation, mostly on the tickers' first 8 bytes (zero-padded,
        // so a prefix sorts first, as with strings).
        let head = |c: &Company| {
            let mut b = [0u8; 8];
            let t = c.ticker.as_str().as_bytes();
            b[..t.len().min(8)].copy_from_slice(&t[..t.len().min(8)]);
            u64::from_be_bytes(b)
        };
        let mut order: Vec<(u64, u32)> = companies.iter().enumerate().map(|(i, c)| (head(c), i as u32)).collect();
        order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                let (x, y) = (&companies[a.1 as usize], &companies[b.1 as usize]);
                (&x.ticker, &x.isin).cmp(&(&y.ticker, &y.isin))
            })
        });
        let sorted: Vec<&Company> = order.into_iter().map(|(_, i)| &companies[i as usize]).collect();
        // The JSON on a second thread; everything else on this one.
        let (mut c, (json, json_off)) = std::thread::scope(|s| {
            let json = s.spawn(|| {
                let mut json = Vec::with_capacity(sorted.len() * 200);
                let mut off = Vec::with_capacity(sorted.len() + 1);
                off.push(0);
                for company in &sorted {
                    serde_json::to_writer(&mut json, company).expect("a company always serialises");
                    off.push(json.len());
                }
                json.shrink_to_fit();
                (String::from_utf8(json).expect("serde_json writes UTF-8"), off)
            });
            let c = Self::index(&sorted);
            (c, json.join().expect("serialising does not panic"))
        });
        drop(sorted);
        c.json = json;
        c.json_off = json_off;
        // Freeing a million small strings takes a while: not on the caller's time.
        if companies.len() > 10_000 {
            std::thread::spawn(move || drop(companies));
        }
        c
    }

    /// Everything but the JSON: keys, folded names and the posting lists.
    fn index(companies: &[&Company]) -> Self {
        let n = companies.len();
        let mut c = Catalog {
            ticker_off: Vec::with_capacity(n + 1),
            name_off: Vec::with_capacity(n + 1),
            isins: Vec::with_capacity(n),
            ..Default::default()
        };
        // Per row, what the attribute lists need: industry id, exchanges, band.
        let mut industry_of = Vec::with_capacity(n);
        let mut flags = Vec::with_capacity(n);
        let mut industry_ids: HashMap<&str, u32, BuildHasherDefault<GramHasher>> = HashMap::default();
        let mut industry_counts: Vec<u32> = Vec::new();
        c.ticker_off.push(0);
        c.name_off.push(0);
        for company in companies {
            c.tickers.push_str(company.ticker.as_str());
            c.ticker_off.push(u32::try_from(c.tickers.len()).expect("tickers fit 4 GiB"));
            if company.name.is_ascii() {
                // `fold` is `to_lowercase`, which is this on ASCII, without allocating.
                c.names.extend(company.name.chars().map(|ch| ch.to_ascii_lowercase()));
            } else {
                c.names.push_str(&fold(&company.name));
            }
            c.name_off.push(u32::try_from(c.names.len()).expect("names fit 4 GiB"));
            let mut isin = [0u8; 12];
            isin.copy_from_slice(&company.isin.as_str().as_bytes()[..12]);
            c.isins.push(isin);
            industry_of.push(match company.industry.as_deref() {
                Some(i) => {
                    let next = industry_counts.len() as u32;
                    let id = *industry_ids.entry(i).or_insert(next);
                    if id == next {
                        industry_counts.push(0);
                    }
                    industry_counts[id as usize] += 1;
                    id
                }
                None => u32::MAX,
            });
            flags.push(
                u8::from(company.is_bse)
                    | u8::from(company.is_nse) << 1
                    | company.market_cap_band.map_or(0, |b| band_index(b) as u8 + 1) << 2,
            );
        }
        c.tickers.shrink_to_fit();
        c.names.shrink_to_fit();

        let mut lists = ListBuilder { n, ..Default::default() };
        // Attribute lists: slots 0 and 1 are BSE and NSE, 2..5 the bands, then industries.
        let count = |f: &dyn Fn(u8) -> bool| flags.iter().filter(|&&x| f(x)).count() as u32;
        let mut attrs = vec![lists.reserve(count(&|x| x & 1 != 0)), lists.reserve(count(&|x| x & 2 != 0))];
        for b in 0..3u8 {
            attrs.push(lists.reserve(count(&|x| x >> 2 == b + 1)));
        }
        attrs.extend(industry_counts.iter().map(|&k| lists.reserve(k)));
        // Gram lists: number each distinct gram and count its rows, lay out, then fill.
        // A gram repeated within a row counts once: `last` is the last row counted.
        let (mut counts, mut last): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut buf = Vec::with_capacity(256);
        for i in 0..n {
            c.row_grams(i, &mut buf);
            for &g in &buf {
                let next = counts.len() as u32;
                let slot = *c.grams.entry(g).or_insert(next);
                if slot == next {
                    counts.push(0);
                    last.push(u32::MAX);
                }
                if last[slot as usize] != i as u32 {
                    last[slot as usize] = i as u32;
                    counts[slot as usize] += 1;
                }
            }
        }
        drop(last);
        c.gram_lists = counts.iter().map(|&k| lists.reserve(k)).collect();
        // Fill every list in row order, so arrays come out sorted.
        // (A row repeating a gram is written once: an array's last entry is that row.)
        let put = |lists: &mut ListBuilder, p: &Postings, filled: &mut u32, row: u32| {
            if p.bitmap {
                lists.bits[p.start as usize + (row / 64) as usize] |= 1 << (row % 64);
            } else if *filled == 0 || lists.ids[(p.start + *filled - 1) as usize] != row {
                lists.ids[(p.start + *filled) as usize] = row;
                *filled += 1;
            }
        };
        let mut attr_fill = vec![0u32; attrs.len()];
        counts.iter_mut().for_each(|k| *k = 0);
        for i in 0..n {
            let row = i as u32;
            let (f, ind) = (flags[i], industry_of[i]);
            let mut slots = [usize::MAX; 4];
            if f & 1 != 0 {
                slots[0] = 0;
            }
            if f & 2 != 0 {
                slots[1] = 1;
            }
            if f >> 2 != 0 {
                slots[2] = 2 + (f >> 2) as usize - 1;
            }
            if ind != u32::MAX {
                slots[3] = 5 + ind as usize;
            }
            for s in slots.into_iter().filter(|&s| s != usize::MAX) {
                put(&mut lists, &attrs[s], &mut attr_fill[s], row);
            }
            c.row_grams(i, &mut buf);
            for &g in &buf {
                let slot = c.grams[&g] as usize;
                put(&mut lists, &c.gram_lists[slot], &mut counts[slot], row);
            }
        }
        (c.bse, c.nse) = (attrs[0], attrs[1]);
        c.bands = [attrs[2], attrs[3], attrs[4]];
        c.industries = industry_ids.into_iter().map(|(name, id)| (name.into(), attrs[5 + id as usize])).collect();
        c.ids = lists.ids;
        c.bits = lists.bits;
        c
    }

    /// The grams of row `i`'s folded name and folded ticker (with repeats).
    fn row_grams(&self, i: usize, buf: &mut Vec<u64>) {
        buf.clear();
        grams_of(self.name(i), buf);
        let t = self.ticker(i);
        let mut p = [0u8; 2];
        for (k, &b) in t.as_bytes().iter().enumerate() {
            let c = b.to_ascii_lowercase() as char;
            if k >= 1 {
                buf.push(bigram(p[1] as char, c));
            }
            if k >= 2 {
                buf.push(trigram(p[0] as char, p[1] as char, c));
            }
            p = [p[1], c as u8];
        }
    }

    fn json(&self, i: usize) -> &str {
        &self.json[self.json_off[i]..self.json_off[i + 1]]
    }

    fn ticker(&self, i: usize) -> &str {
        &self.tickers[self.ticker_off[i] as usize..self.ticker_off[i + 1] as usize]
    }

    fn name(&self, i: usize) -> &str {
        &self.names[self.name_off[i] as usize..self.name_off[i + 1] as usize]
    }

    fn isin(&self, i: usize) -> &str {
        std::str::from_utf8(&self.isins[i]).expect("an ISIN is ASCII")
    }

    /// How many companies there are.
    pub fn len(&self) -> usize {
        self.isins.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.isins.is_empty()
    }

    /// The companies, in order. The catalog keeps only their JSON, so the
    /// first call parses it back (once); serving pages never needs this.
    pub fn companies(&self) -> impl Iterator<Item = &Company> {
        self.companies
            .get_or_init(|| {
                (0..self.len())
                    .map(|i| serde_json::from_str(self.json(i)).expect("the catalog's own JSON parses"))
                    .collect()
            })
            .iter()
    }

    fn seeker(&self, p: &Postings) -> Seeker<'_> {
        if p.bitmap {
            Seeker::Bits(&self.bits[p.start as usize..p.start as usize + self.len().div_ceil(64)])
        } else {
            Seeker::Ids { ids: &self.ids[p.start as usize..(p.start + p.len) as usize], pos: 0 }
        }
    }

    /// Up to `limit` companies matching `filter`, strictly after `after`.
    pub fn page(&self, filter: &CompanyFilter, after: Option<&SortKey>, limit: usize) -> Page<'_> {
        let (lo, hi) = self.range(filter);
        let start = match after {
            Some(k) => lo.max(self.partition(|t, i| (t, i) <= (k.ticker.as_str(), k.isin.as_str()))),
            None => lo,
        };
        if start >= hi {
            return Page::empty();
        }
        // The lists every match is in, smallest first.
        let mut lists: Vec<Postings> = Vec::with_capacity(8);
        if let Some(ind) = &filter.industry {
            match self.industries.get(ind.as_str()) {
                Some(p) => lists.push(*p),
                None => return Page::empty(),
            }
        }
        match filter.exchange {
            Some(Exchange::Bse) => lists.push(self.bse),
            Some(Exchange::Nse) => lists.push(self.nse),
            None => {}
        }
        if let Some(b) = filter.market_cap {
            lists.push(self.bands[band_index(b)]);
        }
        let term = filter.search.as_ref().map(|s| s.as_str());
        if let Some(term) = term {
            let chars: Vec<char> = term.chars().collect();
            let mut grams: Vec<Postings> = Vec::with_capacity(chars.len());
            let keys = if chars.len() == 2 {
                vec![bigram(chars[0], chars[1])]
            } else {
                chars.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect()
            };
            for g in keys {
                match self.grams.get(&g) {
                    Some(&slot) => grams.push(self.gram_lists[slot as usize]),
                    None => return Page::empty(),
                }
            }
            // A few of the rarest grams narrow enough; the substring test decides.
            grams.sort_by_key(|p| p.len);
            grams.dedup_by_key(|p| (p.start, p.bitmap));
            lists.extend(grams.into_iter().take(3));
        }
        lists.sort_by_key(|p| p.len);
        let mut seekers: Vec<Seeker<'_>> = lists.iter().map(|p| self.seeker(p)).collect();

        let mut rows = Vec::with_capacity(limit.min(256));
        let mut last = None;
        let mut more = false;
        let verify = |i: usize| match term {
            Some(t) => self.name(i).contains(t) || ticker_contains(self.ticker(i), t),
            None => true,
        };
        let (mut x, hi) = (start as u32, hi as u32);
        'walk: while x < hi {
            // Leapfrog: advance `x` until every list holds it.
            let k = seekers.len();
            let (mut i, mut agreed) = (0, 0);
            while agreed < k {
                match seekers[i].seek(x) {
                    None => break 'walk,
                    Some(y) if y == x => agreed += 1,
                    Some(y) => {
                        if y >= hi {
                            break 'walk;
                        }
                        (x, agreed) = (y, 1);
                    }
                }
                i = (i + 1) % k;
            }
            let r = x as usize;
            if verify(r) {
                if rows.len() == limit {
                    more = true;
                    break;
                }
                rows.push(self.json(r));
                last = Some(r);
            }
            x += 1;
        }
        let next = match (more, last) {
            (true, Some(r)) => Some(SortKey { ticker: self.ticker(r).to_owned(), isin: self.isin(r).to_owned() }),
            _ => None,
        };
        Page { rows, next }
    }

    /// The first row for which `before(ticker, isin)` is false (`before`
    /// must hold for a prefix of the rows).
    fn partition(&self, before: impl Fn(&str, &str) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self.ticker(mid), self.isin(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The index range that can hold matches: the rows of one ticker, or of
    /// one first letter, are contiguous in this order.
    fn range(&self, filter: &CompanyFilter) -> (usize, usize) {
        let (mut lo, mut hi) = (0, self.len());
        if let Some(t) = &filter.ticker {
            let t = t.as_str();
            lo = self.partition(|r, _| r < t);
            hi = self.partition(|r, _| r <= t);
        }
        if let Some(l) = filter.letter {
            let b = l.as_char() as u8;
            let first = |r: &str| r.as_bytes()[0];
            lo = lo.max(self.partition(|r, _| first(r) < b));
            hi = hi.min(self.partition(|r, _| first(r) <= b));
        }
        (lo, hi.max(lo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mds_domain::{Exchange, Isin, Letter, MarketCapBand, SearchTerm, Ticker};

    /// Valid ISINs with distinct check digits, made with the `isin` crate's rule.
    const ISINS: &[&str] = &[
        "INE117A01022",
        "INE208C01025",
        "INE144J01027",
        "INE239A01024",
        "INE002A01018",
        "INE009A01021",
        "INE040A01034",
        "INE062A01020",
    ];

    fn company(isin: &str, ticker: &str, name: &str, bse: bool, band: Option<MarketCapBand>) -> Company {
        Company {
            isin: Isin::parse(isin).unwrap(),
            ticker: Ticker::parse(ticker).unwrap(),
            name: name.into(),
            industry: Some(if bse { "Banks".into() } else { "Software".into() }),
            sector: None,
            is_bse: bse,
            is_nse: !bse,
            market_cap_band: band,
            logo_url: None,
        }
    }

    fn sample() -> Catalog {
        Catalog::new(vec![
            company(ISINS[0], "ZETA", "Zeta Ltd", true, None),
            company(ISINS[1], "ABB", "ABB India", true, Some(MarketCapBand::Large)),
            company(ISINS[2], "20MICRONS", "20 Microns", false, Some(MarketCapBand::Small)),
            company(ISINS[3], "NESTLEIND", "Nestlé India", true, Some(MarketCapBand::Large)),
            company(ISINS[4], "DUP", "Dup One", false, None),
            company(ISINS[5], "DUP", "Dup Two", true, None),
            company(ISINS[6], "ABBOTINDIA", "Abbott India", false, Some(MarketCapBand::Mid)),
        ])
    }

    fn tickers(p: &Page<'_>) -> Vec<String> {
        p.rows
            .iter()
            .map(|j| serde_json::from_str::<serde_json::Value>(j).unwrap()["ticker"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn walks_in_ticker_then_isin_order() {
        let c = sample();
        let mut all = vec![];
        let mut after = None;
        loop {
            let p = c.page(&CompanyFilter::default(), after.as_ref(), 2);
            all.extend(tickers(&p));
            match p.next {
                Some(k) => after = Some(k),
                None => break,
            }
        }
        assert_eq!(all, ["20MICRONS", "ABB", "ABBOTINDIA", "DUP", "DUP", "NESTLEIND", "ZETA"]);
    }

    #[test]
    fn filters_combine_with_and() {
        let c = sample();
        let f = CompanyFilter {
            letter: Some(Letter::parse("a").unwrap()),
            exchange: Some(Exchange::Nse),
            ..Default::default()
        };
        assert_eq!(tickers(&c.page(&f, None, 50)), ["ABBOTINDIA"]);
        let f = CompanyFilter { ticker: Some(Ticker::parse("dup").unwrap()), ..Default::default() };
        let p = c.page(&f, None, 1);
        assert_eq!(tickers(&p), ["DUP"]);
        assert!(p.has_more());
        let p2 = c.page(&f, p.next.as_ref(), 1);
        assert_eq!(tickers(&p2), ["DUP"]);
        assert!(!p2.has_more());
        let f = CompanyFilter { search: Some(SearchTerm::parse("NESTLÉ").unwrap()), ..Default::default() };
        assert_eq!(tickers(&c.page(&f, None, 50)), ["NESTLEIND"]);
        let f = CompanyFilter { letter: Some(Letter::parse("2").unwrap()), ..Default::default() };
        assert_eq!(tickers(&c.page(&f, None, 50)), ["20MICRONS"]);
        let f = CompanyFilter { industry: Some("Nope".into()), ..Default::default() };
        assert!(c.page(&f, None, 50).rows.is_empty());
    }

    #[test]
    fn exact_final_page_has_no_more() {
        let c = sample();
        let p = c.page(&CompanyFilter::default(), None, 7);
        assert_eq!(p.rows.len(), 7);
        assert!(!p.has_more());
    }

    #[test]
    fn cursor_after_a_deleted_row_still_continues() {
        let c = sample();
        let gone = SortKey { ticker: "ABBA".into(), isin: "INE000000000".into() };
        assert_eq!(tickers(&c.page(&CompanyFilter::default(), Some(&gone), 1)), ["ABBOTINDIA"]);
    }
}

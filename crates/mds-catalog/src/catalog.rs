//! [`Catalog`]: companies sorted by `(ticker, isin)`, each with its JSON
//! serialised once, and the filtered keyset page over them.

use mds_domain::query::fold;
use mds_domain::{Company, CompanyFilter};

/// The position of a row in the catalog's order: `(ticker, isin)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey {
    /// Ticker (upper-case).
    pub ticker: String,
    /// ISIN.
    pub isin: String,
}

/// One company with what serving it needs, computed once at load.
#[derive(Debug)]
struct Row {
    company: Company,
    /// Case-folded name, for search.
    folded_name: String,
    /// Case-folded ticker, for search.
    folded_ticker: String,
    /// The company's `V1Company` JSON.
    json: Box<str>,
}

/// Every company, sorted by `(ticker, isin)`.
#[derive(Debug, Default)]
pub struct Catalog {
    rows: Vec<Row>,
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
}

impl Catalog {
    /// Builds a catalog from companies in any order. Companies with the same
    /// ISIN must not repeat (the store's primary key guarantees it).
    pub fn new(mut companies: Vec<Company>) -> Self {
        companies.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
        let rows = companies
            .into_iter()
            .map(|company| Row {
                folded_name: fold(&company.name),
                folded_ticker: fold(company.ticker.as_str()),
                json: serde_json::to_string(&company).expect("a company always serialises").into_boxed_str(),
                company,
            })
            .collect();
        Catalog { rows }
    }

    /// How many companies there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The companies, in order.
    pub fn companies(&self) -> impl Iterator<Item = &Company> {
        self.rows.iter().map(|r| &r.company)
    }

    /// Up to `limit` companies matching `filter`, strictly after `after`.
    pub fn page(&self, filter: &CompanyFilter, after: Option<&SortKey>, limit: usize) -> Page<'_> {
        let (lo, hi) = self.range(filter);
        let start = match after {
            Some(k) => lo.max(self.rows.partition_point(|r| {
                (r.company.ticker.as_str(), r.company.isin.as_str()) <= (k.ticker.as_str(), k.isin.as_str())
            })),
            None => lo,
        };
        let mut rows = Vec::with_capacity(limit.min(64));
        let mut last = None;
        let mut more = false;
        for r in self.rows[start.min(hi)..hi].iter() {
            if !filter.matches(&r.company, &r.folded_name, &r.folded_ticker) {
                continue;
            }
            if rows.len() == limit {
                more = true;
                break;
            }
            rows.push(&*r.json);
            last = Some(r);
        }
        let next = match (more, last) {
            (true, Some(r)) => {
                Some(SortKey { ticker: r.company.ticker.as_str().to_owned(), isin: r.company.isin.as_str().to_owned() })
            }
            _ => None,
        };
        Page { rows, next }
    }

    /// The index range that can hold matches: the rows of one ticker, or of
    /// one first letter, are contiguous in this order.
    fn range(&self, filter: &CompanyFilter) -> (usize, usize) {
        let (mut lo, mut hi) = (0, self.rows.len());
        if let Some(t) = &filter.ticker {
            let t = t.as_str();
            lo = self.rows.partition_point(|r| r.company.ticker.as_str() < t);
            hi = self.rows.partition_point(|r| r.company.ticker.as_str() <= t);
        }
        if let Some(l) = filter.letter {
            let b = l.as_char() as u8;
            let first = |r: &Row| r.company.ticker.as_str().as_bytes()[0];
            lo = lo.max(self.rows.partition_point(|r| first(r) < b));
            hi = hi.min(self.rows.partition_point(|r| first(r) <= b));
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

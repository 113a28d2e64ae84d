//! Randomised comparison of [`Catalog::page`] with a naive reference filter:
//! thousands of generated companies (ASCII, accented and Devanagari names,
//! shared tickers, a few superseded or delisted), many random filter
//! combinations (the status filter among them), limits and cursors.

use mds_catalog::{Catalog, ListRows, SortKey};
use mds_domain::query::fold;
use mds_domain::{
    Company, CompanyDetails, CompanyFilter, CompanySort, CompanyStatus, Exchange, Industry, Letter, MarketCap,
    MarketCapBand, SearchTerm, StatusFilter, Ticker,
};
use mds_testkit::fixtures::isin_of;
use mds_testkit::rng::Rng;
use serde_json::Value;

const WORDS: &[&str] = &[
    "Nestlé",
    "ÉCOLE",
    "Tata",
    "Reliance",
    "Infosys",
    "भारत",
    "पेट्रोलियम",
    "Ltd",
    "India",
    "Bank",
    "Steel",
    "Motors",
    "Ωmega",
    "ΣΑΣ",
    "Straße",
    "Größe",
    "İstanbul",
    "Adani",
    "Green",
    "Energy",
    "ab",
    "Ba",
    "zz",
    "日本",
    "Café",
];
const INDUSTRIES: &[&str] = &["Banks", "Software", "Steel", "Pharma", "Textiles", "बैंक"];
const TICKER_PARTS: &[&str] = &["AB", "TATA", "REL", "INFY", "M&M", "20", "BAJAJ-", "Z", "ÉX", "NEST"];

fn generate(rng: &mut Rng, n: usize) -> Vec<Company> {
    (0..n)
        .map(|k| {
            let words = 1 + rng.below(4);
            let mut name = (0..words).map(|_| *rng.pick(WORDS)).collect::<Vec<_>>().join(" ");
            if rng.chance(3) {
                // Characters JSON must escape.
                name.push_str(rng.pick::<&str>(&[" \"Q\"", " a\\b", " tab\there", " \u{1}"]));
            }
            let mut ticker = String::new();
            while ticker.is_empty() || rng.chance(40) && ticker.len() < 20 {
                let p = rng.pick(TICKER_PARTS);
                if p.is_ascii() {
                    ticker.push_str(p);
                }
            }
            // Few distinct tickers, so several ISINs share one.
            if rng.chance(30) {
                ticker.push_str(&rng.below(10).to_string());
            }
            Company {
                isin: isin_of((k as u64 * 7919 % 100_000_000) as u32),
                ticker: Ticker::parse(&ticker).unwrap(),
                name,
                industry: if rng.chance(80) { Some(rng.pick(INDUSTRIES).to_string()) } else { None },
                sector: if rng.chance(50) { Some(rng.pick(&["Financials", "", "Énergie"]).to_string()) } else { None },
                is_bse: rng.chance(70),
                is_nse: rng.chance(50),
                market_cap_band: if rng.chance(75) { Some(*rng.pick(MarketCapBand::ALL)) } else { None },
                logo_url: match rng.below(10) {
                    0..3 => Some(format!("https://logos.example.com/{k}.png")),
                    3 => Some(String::new()),
                    _ => None,
                },
                details: CompanyDetails {
                    status: match rng.below(10) {
                        0 => CompanyStatus::Superseded,
                        1 => CompanyStatus::Delisted,
                        _ => CompanyStatus::Active,
                    },
                    // Some ties, so the ticker and ISIN decide among them.
                    market_cap: rng
                        .chance(60)
                        .then(|| MarketCap { inr_crore: (rng.below(40) * 1000) as f64 + 0.5, as_of: None }),
                    ..Default::default()
                },
            }
        })
        .collect()
}

/// A search term: a slice of some company's name or ticker (so it often
/// matches), in random case, or a random short string.
fn term(rng: &mut Rng, companies: &[Company]) -> Option<SearchTerm> {
    let c = rng.pick(companies);
    let text: Vec<char> = if rng.chance(70) { c.name.chars().collect() } else { c.ticker.as_str().chars().collect() };
    let s: String = if rng.chance(85) && text.len() >= 2 {
        let len = if rng.chance(40) { 2 } else { 2 + rng.below(text.len() - 1) };
        let len = len.min(text.len());
        let at = rng.below(text.len() - len + 1);
        let t: String = text[at..at + len].iter().collect();
        if rng.chance(50) { t.to_uppercase() } else { t }
    } else {
        (0..2 + rng.below(3)).map(|_| *rng.pick(&['a', 'b', 'é', 'ा', 'z', 'Σ', '&', '2'])).collect()
    };
    SearchTerm::parse(&s).ok()
}

fn filter(rng: &mut Rng, companies: &[Company]) -> CompanyFilter {
    let c = rng.pick(companies);
    CompanyFilter {
        letter: if rng.chance(25) {
            Letter::parse(&c.ticker.as_str()[..1]).ok().or_else(|| Letter::parse("z").ok())
        } else {
            None
        },
        industry: if rng.chance(30) {
            let name = if rng.chance(90) { rng.pick(INDUSTRIES) } else { "Nope" };
            Industry::parse(name).ok()
        } else {
            None
        },
        exchange: if rng.chance(30) { Some(*rng.pick(Exchange::ALL)) } else { None },
        market_cap: if rng.chance(30) { Some(*rng.pick(MarketCapBand::ALL)) } else { None },
        search: if rng.chance(50) { term(rng, companies) } else { None },
        ticker: if rng.chance(10) { Some(c.ticker.clone()) } else { None },
        status: match rng.below(6) {
            0 => StatusFilter::Any,
            1 => StatusFilter::Only(CompanyStatus::Superseded),
            2 => StatusFilter::Only(CompanyStatus::Delisted),
            _ => StatusFilter::DEFAULT,
        },
        as_of: None,
        // The reference is in ticker order (the relevance order has its
        // own test).
        sort: Some(CompanySort::Ticker),
    }
}

/// The reference: every company, sorted, filtered one by one.
fn reference<'a>(sorted: &'a [Company], f: &CompanyFilter) -> Vec<&'a Company> {
    sorted.iter().filter(|c| f.matches(c, &fold(&c.name), &fold(c.ticker.as_str()))).collect()
}

fn key(c: &Company) -> SortKey {
    SortKey::new(c.ticker.as_str(), c.isin.as_str())
}

fn json(c: &Company) -> String {
    serde_json::to_string(c).unwrap()
}

/// A page's rows as JSON, without their `match` (present on each row of
/// a search, and only then: checked here).
fn unmatched(page: &ListRows<'_>, search: bool) -> Vec<String> {
    page.json_rows()
        .into_iter()
        .map(|row| {
            let mut v: Value = serde_json::from_str(&row).unwrap();
            let m = v.as_object_mut().unwrap().remove("match");
            assert_eq!(m.is_some(), search, "{row}");
            if let Some(m) = m {
                assert!(["ticker", "name"].contains(&m["field"].as_str().unwrap()), "{m}");
                assert!(m["value"].is_string(), "{m}");
            }
            // Written back in the order the catalog wrote it (a map that keeps order).
            let back = serde_json::to_string(&v).unwrap();
            let company: Company = serde_json::from_str(&back).unwrap();
            json(&company)
        })
        .collect()
}

/// The relevance tier of a company for a folded term, computed here from
/// the contract's words (section 15): 0 exact ticker, 2 a ticker, name or
/// word of the name beginning with the term, 4 another substring.
fn tier(c: &Company, t: &str) -> Option<u32> {
    let ticker = c.ticker.as_str().to_ascii_lowercase();
    let name = fold(&c.name);
    let word_start =
        name.match_indices(t).any(|(i, _)| name[..i].chars().next_back().is_none_or(|p| !p.is_alphanumeric()));
    if ticker == t {
        Some(0)
    } else if ticker.starts_with(t) || word_start {
        Some(2)
    } else if ticker.contains(t) || name.contains(t) {
        Some(4)
    } else {
        None
    }
}

/// The relevance order's key of a company (section 15).
fn relevance(c: &Company, t: &str) -> (u32, bool, bool, std::cmp::Reverse<u32>, String, String) {
    let mcap = c.details.market_cap.as_ref().map(|m| m.inr_crore as f32);
    (
        tier(c, t).unwrap(),
        c.details.status != CompanyStatus::Active,
        mcap.is_none(),
        std::cmp::Reverse(mcap.map_or(0, f32::to_bits)),
        c.ticker.as_str().to_owned(),
        c.isin.as_str().to_owned(),
    )
}

#[test]
fn searches_walk_by_relevance() {
    let mut rng = Rng(0x5EED_CA7A_1060_0015);
    let companies = generate(&mut rng, 3_000);
    let catalog = Catalog::new(companies.clone());
    let mut searched = 0;
    for round in 0..300 {
        let mut f = filter(&mut rng, &companies);
        f.sort = None;
        let Some(term) = f.search.clone().or_else(|| term(&mut rng, &companies)) else { continue };
        f.search = Some(term.clone());
        let mut want = reference(&companies, &f);
        want.sort_by_cached_key(|c| relevance(c, term.as_str()));
        searched += usize::from(want.len() > 1);
        let limit = *rng.pick(&[1, 2, 3, 7, 50, 200]);
        let mut got = Vec::new();
        let mut after = None;
        loop {
            let p = catalog.page(&f, after.as_ref(), limit);
            assert!(p.len() <= limit);
            got.extend(unmatched(&p, true));
            match p.next {
                Some(k) => {
                    assert!(k.rank.is_some(), "a relevance position carries its rank");
                    after = Some(k)
                }
                None => break,
            }
            assert!(got.len() <= want.len(), "round {round}: walk runs past the matches");
        }
        assert_eq!(got, want.iter().map(|c| json(c)).collect::<Vec<_>>(), "round {round}: walk of {f:?}");
    }
    assert!(searched > 100, "only {searched} searches matched more than one company");
}

#[test]
fn pages_and_walks_match_a_naive_filter() {
    let mut rng = Rng(0x5EED_CA7A_1060_0001);
    let companies = generate(&mut rng, 3_000);
    let catalog = Catalog::new(companies.clone());
    let mut sorted = companies;
    sorted.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    assert_eq!(catalog.len(), sorted.len());
    assert!(catalog.companies().eq(sorted.iter().cloned()), "companies() gives every company back, in order");

    let (mut nonempty, mut searched) = (0, 0);
    for round in 0..600 {
        let f = filter(&mut rng, &sorted);
        let want = reference(&sorted, &f);
        nonempty += usize::from(!want.is_empty());
        searched += usize::from(f.search.is_some() && !want.is_empty());
        let limit = *rng.pick(&[1, 2, 3, 7, 50, 200]);

        // One page from a random cursor: a row's key, or a key between rows.
        let after = match rng.below(3) {
            0 => None,
            1 => Some(key(rng.pick(&sorted))),
            _ => {
                let mut k = key(rng.pick(&sorted));
                k.ticker.push('!');
                Some(k)
            }
        };
        let from = after.as_ref().map_or(0, |a| want.partition_point(|c| key(c) <= *a));
        let page = catalog.page(&f, after.as_ref(), limit);
        let expect: Vec<String> = want[from..].iter().take(limit).map(|c| json(c)).collect();
        assert_eq!(unmatched(&page, f.search.is_some()), expect, "round {round}: {f:?} after {after:?} limit {limit}");
        let more = want.len() > from + limit;
        assert_eq!(page.next, if more { Some(key(want[from + limit - 1])) } else { None }, "round {round}: {f:?}");

        // A full walk with the cursors the catalog hands out.
        if round % 3 == 0 {
            let mut got = Vec::new();
            let mut after = None;
            loop {
                let p = catalog.page(&f, after.as_ref(), limit);
                assert!(p.len() <= limit);
                got.extend(unmatched(&p, f.search.is_some()));
                match p.next {
                    Some(k) => after = Some(k),
                    None => break,
                }
                assert!(got.len() <= want.len(), "round {round}: walk runs past the matches");
            }
            assert_eq!(got, want.iter().map(|c| json(c)).collect::<Vec<_>>(), "round {round}: walk of {f:?}");
        }
    }
    // The generator must exercise the interesting cases, or the test proves little.
    assert!(nonempty > 200, "only {nonempty} filters matched anything");
    assert!(searched > 100, "only {searched} searches matched anything");
}

#[test]
fn unicode_and_two_character_searches() {
    let mut rng = Rng(7);
    let mut companies = generate(&mut rng, 500);
    companies[0].name = "Nestlé India".into();
    companies[1].name = "ÉCOLE Normale".into();
    companies[2].name = "भारत पेट्रोलियम".into();
    let catalog = Catalog::new(companies.clone());
    companies.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    for s in ["NESTLÉ", "stlé", "école", "ÉC", "भारत", "रत", "ab", "&M", "m&", "é", "ीी", "zz"] {
        let Ok(t) = SearchTerm::parse(s) else {
            assert_eq!(s.chars().count(), 1);
            continue;
        };
        let f = CompanyFilter { search: Some(t), sort: Some(CompanySort::Ticker), ..Default::default() };
        let want: Vec<String> = reference(&companies, &f).into_iter().map(json).collect();
        let got: Vec<String> = unmatched(&catalog.page(&f, None, 200), true);
        assert_eq!(got, want, "{s}");
    }
    let f = CompanyFilter { search: Some(SearchTerm::parse("NESTLÉ").unwrap()), ..Default::default() };
    assert!(!catalog.page(&f, None, 200).is_empty());
    let f = CompanyFilter { search: Some(SearchTerm::parse("रत").unwrap()), ..Default::default() };
    assert!(!catalog.page(&f, None, 200).is_empty());
}

#[test]
fn a_snapshot_serves_what_the_catalog_served() {
    let mut rng = Rng(0xC0FF_EE00_0000_0005);
    let companies = generate(&mut rng, 2_000);
    let catalog = Catalog::new(companies.clone());
    let loaded = Catalog::from_bytes(catalog.as_bytes().to_vec()).expect("a catalog's own bytes load");
    assert!(loaded.companies().eq(catalog.companies()));
    for _ in 0..200 {
        let f = filter(&mut rng, &companies);
        let (a, b) = (catalog.page(&f, None, 50), loaded.page(&f, None, 50));
        assert_eq!((a.json_rows(), a.next), (b.json_rows(), b.next), "{f:?}");
    }
}

#[test]
fn damaged_or_foreign_snapshots_are_refused() {
    let mut rng = Rng(11);
    let bytes = Catalog::new(generate(&mut rng, 300)).as_bytes().to_vec();
    for at in [0, 7, 9, 20, bytes.len() / 2, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x40;
        assert!(Catalog::from_bytes(bad).is_err(), "a flipped bit at {at} is noticed");
    }
    assert!(Catalog::from_bytes(bytes[..bytes.len() - 8].to_vec()).is_err());
    assert!(Catalog::from_bytes(Vec::new()).is_err());
    let e =
        Catalog::from_bytes(b"PK\x03\x04 not a catalog at all, just some bytes here and more".repeat(20)).unwrap_err();
    assert!(e.to_string().contains("not a catalog snapshot"), "{e}");
}

#[test]
fn the_builder_refuses_rows_out_of_order() {
    let mut rng = Rng(12);
    let mut companies = generate(&mut rng, 50);
    companies.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    let mut b = mds_catalog::CatalogBuilder::with_capacity(50);
    b.push(&companies[1]).unwrap();
    let e = b.push(&companies[0]).unwrap_err();
    assert_eq!(e.isin, companies[0].isin.as_str());
    assert!(b.push(&companies[1]).is_err(), "a repeat is out of order too");
    assert_eq!(b.len(), 1);
}

//! In-process cost of the catalog, without HTTP: build time and memory for a
//! companies import file, the size of each section, the time to load the
//! catalog back from its snapshot bytes, then the time of first and last
//! (deep-cursor) pages, JSON included, for a set of filters, and the worst
//! first pages of 20,000 random search terms built from the most common
//! letters (the terms whose grams are all common but which rarely occur
//! whole are the search index's worst case; ranked by relevance, the
//! default order of a search). Used by `bench/run.sh`.
//!
//! Usage: `cargo run --release -p mds-catalog --example catalog_bench -- FILE`

use std::time::Instant;

use mds_catalog::Catalog;
use mds_domain::{CompanyFilter, Exchange, Industry, Letter, MarketCapBand, SearchTerm};

fn rss_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: catalog_bench FILE");
    let bytes = std::fs::read(&path).expect("read the file");
    let companies = mds_import::parse_companies(&bytes).expect("a valid companies file");
    drop(bytes);
    let n = companies.len();
    let before = rss_kib("VmRSS:");
    let t = Instant::now();
    let catalog = Catalog::new(companies);
    let build = t.elapsed();
    let after = rss_kib("VmRSS:");
    println!(
        "rows {n}; build {:.3} s; RSS before {} MiB (parsed companies), after {} MiB, peak {} MiB",
        build.as_secs_f64(),
        before / 1024,
        after / 1024,
        rss_kib("VmHWM:") / 1024
    );
    let sizes = catalog.sizes();
    let total: usize = sizes.iter().map(|(_, b)| b).sum();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    let parts: Vec<String> = sizes.iter().filter(|(_, b)| *b > 0).map(|(s, b)| format!("{s} {:.1}", mib(*b))).collect();
    println!("catalog {:.1} MiB: {}", mib(total), parts.join(", "));
    let copy = catalog.as_bytes().to_vec();
    let t = Instant::now();
    let loaded = Catalog::from_bytes(copy).expect("its own snapshot loads");
    println!("load from snapshot bytes (checksum and checks) {:.3} s", t.elapsed().as_secs_f64());
    drop(loaded);
    let s = |t: &str| Some(SearchTerm::parse(t).unwrap());
    // A search's default order is relevance (every match ranked); in
    // ticker order a page stops at its limit.
    let by_ticker = Some(mds_domain::CompanySort::Ticker);
    let cases: Vec<(&str, CompanyFilter)> = vec![
        ("all", CompanyFilter::default()),
        ("letter=m", CompanyFilter { letter: Some(Letter::parse("m").unwrap()), ..Default::default() }),
        ("exchange=nse", CompanyFilter { exchange: Some(Exchange::Nse), ..Default::default() }),
        ("market_cap=large_cap", CompanyFilter { market_cap: Some(MarketCapBand::Large), ..Default::default() }),
        ("industry=Banks", CompanyFilter { industry: Industry::parse("Banks").ok(), ..Default::default() }),
        (
            "industry=Banks&exchange=bse&market_cap=large_cap",
            CompanyFilter {
                industry: Industry::parse("Banks").ok(),
                exchange: Some(Exchange::Bse),
                market_cap: Some(MarketCapBand::Large),
                ..Default::default()
            },
        ),
        ("search=ta", CompanyFilter { search: s("ta"), ..Default::default() }),
        ("search=ta&sort=ticker", CompanyFilter { search: s("ta"), sort: by_ticker, ..Default::default() }),
        ("search=ltd", CompanyFilter { search: s("ltd"), ..Default::default() }),
        ("search=ltd&sort=ticker", CompanyFilter { search: s("ltd"), sort: by_ticker, ..Default::default() }),
        ("search=bank", CompanyFilter { search: s("bank"), ..Default::default() }),
        ("search=bank&sort=ticker", CompanyFilter { search: s("bank"), sort: by_ticker, ..Default::default() }),
        ("search=india", CompanyFilter { search: s("india"), ..Default::default() }),
        (
            "search=bank&exchange=nse",
            CompanyFilter { search: s("bank"), exchange: Some(Exchange::Nse), ..Default::default() },
        ),
        ("search=zq (rare)", CompanyFilter { search: s("zq"), ..Default::default() }),
        ("search=lé", CompanyFilter { search: s("lé"), ..Default::default() }),
    ];
    println!("{:<50} {:>9} {:>12} {:>12} {:>6}", "filter (limit=50)", "matches", "first µs", "last µs", "pages");
    for (name, f) in cases {
        // Walk every page to find the last cursor and the number of matches.
        let (mut after, mut last_after, mut pages, mut matches) = (None, None, 0usize, 0usize);
        loop {
            let p = catalog.page(&f, after.as_ref(), 50);
            pages += 1;
            matches += p.len();
            match p.next {
                Some(k) => {
                    last_after = Some(k.clone());
                    after = Some(k);
                }
                None => break,
            }
        }
        let time = |after: Option<&mds_catalog::SortKey>| {
            let reps = 200;
            let t = Instant::now();
            let mut body = Vec::with_capacity(64 * 1024);
            for _ in 0..reps {
                body.clear();
                catalog.page(&f, after, 50).write_rows(&mut body);
                std::hint::black_box(&body);
            }
            t.elapsed().as_secs_f64() * 1e6 / reps as f64
        };
        let first = time(None);
        let last = time(last_after.as_ref());
        println!("{name:<50} {matches:>9} {first:>12.1} {last:>12.1} {pages:>6}");
    }
    worst_searches(&catalog);
}

/// First pages of random 3–7 character terms over common letters and spaces:
/// the distribution of their cost, and the slowest.
fn worst_searches(catalog: &Catalog) {
    let letters: Vec<char> = "aeiolnrtsdmk ".chars().collect();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut times: Vec<(f64, String, usize)> = Vec::new();
    let mut body = Vec::with_capacity(64 * 1024);
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 3 + (x % 5) as usize;
        let t: String = (0..len).map(|k| letters[((x >> (8 * k)) % letters.len() as u64) as usize]).collect();
        let Ok(term) = SearchTerm::parse(&t) else { continue };
        let f = CompanyFilter { search: Some(term), ..Default::default() };
        let start = Instant::now();
        body.clear();
        let page = catalog.page(&f, None, 50);
        page.write_rows(&mut body);
        times.push((start.elapsed().as_secs_f64() * 1e6, t, page.len()));
    }
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    let n = times.len();
    let at = |q: f64| times[((1.0 - q) * n as f64) as usize].0;
    println!(
        "{n} random search terms (first page, µs): p50 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
        at(0.5),
        at(0.99),
        at(0.999),
        times[0].0
    );
    for (us, t, rows) in &times[..5] {
        println!("  {us:>8.1} µs  {t:?} ({rows} rows)");
    }
}

//! In-process cost of the catalog, without HTTP: build time and memory for a
//! companies import file, then the time of first and last (deep-cursor)
//! pages for a set of filters. Used by `bench/run.sh`.
//!
//! Usage: `cargo run --release -p mds-catalog --example catalog_bench -- FILE`

use std::time::Instant;

use mds_catalog::Catalog;
use mds_domain::{CompanyFilter, Exchange, Letter, MarketCapBand, SearchTerm};

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
    let s = |t: &str| Some(SearchTerm::parse(t).unwrap());
    let cases: Vec<(&str, CompanyFilter)> = vec![
        ("all", CompanyFilter::default()),
        ("letter=m", CompanyFilter { letter: Some(Letter::parse("m").unwrap()), ..Default::default() }),
        ("exchange=nse", CompanyFilter { exchange: Some(Exchange::Nse), ..Default::default() }),
        ("market_cap=large_cap", CompanyFilter { market_cap: Some(MarketCapBand::Large), ..Default::default() }),
        ("industry=Banks", CompanyFilter { industry: Some("Banks".into()), ..Default::default() }),
        (
            "industry=Banks&exchange=bse&market_cap=large_cap",
            CompanyFilter {
                industry: Some("Banks".into()),
                exchange: Some(Exchange::Bse),
                market_cap: Some(MarketCapBand::Large),
                ..Default::default()
            },
        ),
        ("search=ta", CompanyFilter { search: s("ta"), ..Default::default() }),
        ("search=ltd", CompanyFilter { search: s("ltd"), ..Default::default() }),
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
            matches += p.rows.len();
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
            for _ in 0..reps {
                std::hint::black_box(catalog.page(&f, after, 50));
            }
            t.elapsed().as_secs_f64() * 1e6 / reps as f64
        };
        let first = time(None);
        let last = time(last_after.as_ref());
        println!("{name:<50} {matches:>9} {first:>12.1} {last:>12.1} {pages:>6}");
    }
}

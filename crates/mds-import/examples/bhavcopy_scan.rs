//! Reads NSE daily files (any of the paths `mds import nse-bhavcopy`
//! takes) and prints what they hold, per format: files, rows, equity rows,
//! rows skipped by reason, distinct symbols and ISINs, and the time taken.
//! The parse alone, no store: its time and memory are the floor of an
//! import's.
//!
//! ```text
//! cargo build --release -p mds-import --example bhavcopy_scan
//! /usr/bin/time -v target/release/examples/bhavcopy_scan \
//!     ../shared/data/prices/nse_udiff_2024-01-01_2025-03-07.tar.zst \
//!     ../shared/data/prices/nse_sec_bhavdata_full_2024-01-01_2026-08-21.tar.zst
//! ```
//!
//! Measured 2026-11-29 on the 2-core machine, shared (load average 5.8):
//! both whole archives (953 files, 2,217,581 rows) in 5.17 s wall, 3.2 s
//! user CPU, peak RSS 13.4 MiB; `data/prices/` (296 files, 730,163 rows)
//! in 1.34 s and 13.8 MiB.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use mds_import::bhavcopy::{Format, Skipped, archive, parse_day};

#[derive(Default)]
struct Counts {
    files: usize,
    equity_rows: u64,
    skipped: Skipped,
    symbols: HashSet<String>,
    isins: HashSet<String>,
    first: Option<chrono::NaiveDate>,
    last: Option<chrono::NaiveDate>,
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: bhavcopy_scan PATH...");
        std::process::exit(2);
    }
    let started = Instant::now();
    let mut by_format: BTreeMap<&'static str, Counts> = BTreeMap::new();
    let read = archive::for_each_file(&paths, &mut |name, bytes| {
        let day = parse_day(name, bytes)?;
        let c = by_format.entry(day.format.name()).or_default();
        c.files += 1;
        c.equity_rows += day.rows.len() as u64;
        c.skipped.add(&day.skipped);
        c.first = Some(c.first.map_or(day.date, |d| d.min(day.date)));
        c.last = Some(c.last.map_or(day.date, |d| d.max(day.date)));
        for row in &day.rows {
            if !c.symbols.contains(row.symbol.as_str()) {
                c.symbols.insert(row.symbol.as_str().to_owned());
            }
            if let Some(isin) = &row.isin {
                if !c.isins.contains(isin.as_str()) {
                    c.isins.insert(isin.as_str().to_owned());
                }
            }
        }
        Ok(())
    });
    let elapsed = started.elapsed();
    if let Err(e) = read {
        eprintln!("{e}");
        std::process::exit(1);
    }
    for (format, c) in &by_format {
        let skipped: Vec<String> = {
            let mut by: Vec<(&mds_domain::prices::Series, &u64)> = c.skipped.by_series.iter().collect();
            by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            by.iter().map(|(s, n)| format!("{s} {n}")).collect()
        };
        println!(
            "{format}: {} files, {} .. {}; {} rows: {} equity, {} skipped ({} funds; {} of {} other series: {})",
            c.files,
            c.first.map_or_else(String::new, |d| d.to_string()),
            c.last.map_or_else(String::new, |d| d.to_string()),
            c.equity_rows + c.skipped.total(),
            c.equity_rows,
            c.skipped.total(),
            c.skipped.funds,
            c.skipped.by_series.values().sum::<u64>(),
            c.skipped.by_series.len(),
            skipped.join(", "),
        );
        let isins = if *format == Format::Udiff.name() { format!(", {} ISINs", c.isins.len()) } else { String::new() };
        println!("{format}: equity rows name {} symbols{isins}", c.symbols.len());
    }
    println!("read in {:.2} s", elapsed.as_secs_f64());
}

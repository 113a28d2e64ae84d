//! The demo data set, embedded in the binary so `mds demo` needs no files.
//!
//! The bytes are the files in `data/demo/` (the exchanges' lists of January
//! 2024, a market-capitalisation file of 28 March 2024, and fictional news),
//! run through the same parsers an operator's files go through. The tests of
//! this crate parse them, so the `expect`s below cannot fire in a build whose
//! tests pass.

use mds_domain::{Article, Company};

use crate::exchange::{self, MergedCompanies};
use crate::news;

/// NSE `EQUITY_L.csv`, January 2024.
pub const NSE_EQUITY_LIST: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/nse_EQUITY_L_2024-01.csv"));
/// BSE `Equity.csv`, January 2024.
pub const BSE_EQUITY_LIST: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/bse_Equity_2024-01.csv"));
/// NSE market capitalisation by symbol, 28 March 2024.
pub const NSE_MCAP: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/nse_mcap_2024-03-28.csv"));
/// Fictional news articles about companies of the lists (JSON Lines).
pub const NEWS: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/news.jsonl"));

/// The demo companies with what the merge reported: skipped rows and notes.
pub fn demo_merge() -> MergedCompanies {
    let nse = exchange::parse_nse_equity_list(NSE_EQUITY_LIST).expect("embedded NSE list is valid");
    let bse = exchange::parse_bse_equity_list(BSE_EQUITY_LIST).expect("embedded BSE list is valid");
    let mcap = exchange::parse_nse_mcap(NSE_MCAP)
        .expect("embedded market-cap file is valid")
        .with_as_of(exchange::mcap_day_from_file_name("nse_mcap_2024-03-28.csv"));
    exchange::merge(&nse, &bse, Some(&mcap))
}

/// The demo companies, sorted by ticker, then ISIN.
pub fn demo_companies() -> Vec<Company> {
    demo_merge().companies
}

/// The demo news articles, in file order.
pub fn demo_articles() -> Vec<Article> {
    news::parse_articles(NEWS).expect("embedded news file is valid")
}

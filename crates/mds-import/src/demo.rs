//! The demo data set, embedded in the binary so `mds demo` needs no files.
//!
//! The bytes are the files in `data/demo/` (the exchanges' lists of January
//! 2024, a market-capitalisation file of 28 March 2024, NSE's main board and
//! SME lists of 17 May 2026 with its symbol- and name-change files, and
//! fictional news), the four corporate-action files of `data/actions/`
//! (NSE's two, BSE's two) and the two archives of NSE's daily price files
//! of `data/prices/`, run through the same parsers an operator's files go
//! through. `mds demo` loads them as an operator would, each an import the
//! node runs ([`imports`]): the 2024 snapshot, then the 2026 one, the
//! change files, NSE's actions, BSE's, the prices, and the news
//! ([`demo_history`] holds the identity part parsed). The tests of this crate parse them, so the
//! `expect`s below cannot fire in a build whose tests pass.

use chrono::NaiveDate;
use mds_domain::snapshot::{NameChange, SnapshotImport, SymbolChange};
use mds_domain::{Article, Company};

use crate::exchange::{self, MergedCompanies};
use crate::format::{Format, Given, Source};
use crate::{actions, bhavcopy, changes, news};

/// The bytes of the file `name` of the repository's `data/{dir}/`.
macro_rules! data_file {
    ($dir:literal, $name:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/", $dir, "/", $name))
    };
}

/// The file `name` of `data/{dir}/`, embedded under its name.
macro_rules! embedded {
    ($dir:literal, $name:literal) => {
        Source::Embedded { name: $name, bytes: data_file!($dir, $name) }
    };
}

/// NSE `EQUITY_L.csv`, January 2024.
pub const NSE_EQUITY_LIST: &[u8] = data_file!("demo", "nse_EQUITY_L_2024-01.csv");
/// BSE `Equity.csv`, January 2024.
pub const BSE_EQUITY_LIST: &[u8] = data_file!("demo", "bse_Equity_2024-01.csv");
/// NSE market capitalisation by symbol, 28 March 2024.
pub const NSE_MCAP: &[u8] = data_file!("demo", "nse_mcap_2024-03-28.csv");
/// NSE `EQUITY_L.csv`, 17 May 2026.
pub const NSE_EQUITY_LIST_2026: &[u8] = data_file!("demo", "nse_EQUITY_L_2026-05-17.csv");
/// NSE `SME_EQUITY_L.csv`, 17 May 2026.
pub const NSE_SME_EQUITY_LIST_2026: &[u8] = data_file!("demo", "nse_SME_EQUITY_L_2026-05-17.csv");
/// NSE `symbolchange.csv` as of 17 May 2026 (no header line).
pub const NSE_SYMBOL_CHANGES: &[u8] = data_file!("demo", "nse_symbolchange_2026-05-17.csv");
/// NSE `namechange.csv` as of 17 May 2026.
pub const NSE_NAME_CHANGES: &[u8] = data_file!("demo", "nse_namechange_2026-05-17.csv");

/// NSE's corporate-action files, 2016 to 2026 (zstd).
pub const NSE_ACTIONS: [Source; 2] = [
    embedded!("actions", "nse_CF-CA-equities_2016-01-05_to_2025-07-18.csv.zst"),
    embedded!("actions", "nse_CF-CA-equities_2025-07-15_to_2026-07-15.csv.zst"),
];
/// BSE's corporate-action files, 2025 to 2026 (zstd).
pub const BSE_ACTIONS: [Source; 2] = [
    embedded!("actions", "bse_Corporate_Actions_2025-07-15_to_2026-07-15.csv.zst"),
    embedded!("actions", "bse_Corporate_Actions_2026-07-23_to_2026-08-31.csv.zst"),
];

/// NSE's daily price files the repository carries (`data/prices/README.md`):
/// the ISIN-keyed (UDiFF) days of 2025-01-01 to 2025-03-07, with TTL's split
/// and ISIN change, and the symbol-keyed (`sec_bhavdata_full`) days of
/// 2025-08-21 to 2026-08-21.
pub const PRICES: [Source; 2] = [
    embedded!("prices", "nse_udiff_2025-01-01_2025-03-07.tar.zst"),
    embedded!("prices", "nse_sec_bhavdata_full_2025-08-21_2026-08-21.tar.zst"),
];

/// The day the January 2024 lists are taken as of: the BSE list's (30
/// January 2024; the NSE list is of the 20th, and nothing in it changed by
/// the 30th as far as the later files tell).
pub const DAY_2024: NaiveDate = match NaiveDate::from_ymd_opt(2024, 1, 30) {
    Some(d) => d,
    None => panic!("a day"),
};
/// The day of the 2026 lists.
pub const DAY_2026: NaiveDate = match NaiveDate::from_ymd_opt(2026, 5, 17) {
    Some(d) => d,
    None => panic!("a day"),
};

/// The demo's identity history, in the order `mds demo` imports it.
#[derive(Debug, Clone)]
pub struct DemoHistory {
    /// NSE and BSE of January 2024 with the market caps of March 2024, as
    /// of [`DAY_2024`].
    pub snapshots_2024: SnapshotImport,
    /// NSE's main board and SME lists of [`DAY_2026`].
    pub snapshots_2026: SnapshotImport,
    /// NSE's symbol changes.
    pub symbol_changes: Vec<SymbolChange>,
    /// NSE's name changes.
    pub name_changes: Vec<NameChange>,
}

/// The demo's identity history: the two snapshots and the change files.
pub fn demo_history() -> DemoHistory {
    let (_, bse, mcap) = lists_2024();
    let nse = exchange::parse_nse_rows(NSE_EQUITY_LIST).expect("embedded NSE list is valid");
    let nse26 = exchange::parse_nse_rows(NSE_EQUITY_LIST_2026).expect("embedded 2026 NSE list is valid");
    let sme26 = exchange::parse_nse_sme_rows(NSE_SME_EQUITY_LIST_2026).expect("embedded SME list is valid");
    DemoHistory {
        snapshots_2024: exchange::snapshot_import(nse, None, Some(bse), Some(mcap), DAY_2024)
            .expect("the 2024 lists share no ISIN between NSE lists")
            .import,
        snapshots_2026: exchange::snapshot_import(nse26, Some(sme26), None, None, DAY_2026)
            .expect("the 2026 main board and SME lists share no ISIN")
            .import,
        symbol_changes: changes::parse_symbol_changes(NSE_SYMBOL_CHANGES).expect("embedded symbol changes are valid"),
        name_changes: changes::parse_name_changes(NSE_NAME_CHANGES).expect("embedded name changes are valid"),
    }
}

/// Fictional news articles about companies of the lists (JSON Lines).
pub const NEWS: &[u8] = data_file!("demo", "news.jsonl");

/// The imports `mds demo` runs into an empty store, in order, each a format
/// with the embedded files given as an operator would give theirs: the
/// 2024 lists with the market caps (`mds import exchanges --nse --bse
/// --mcap --as-of 2024-01-30`), the 2026 lists, the change files, NSE's
/// action files, BSE's, the daily price files (`mds import nse-bhavcopy`,
/// whose symbol-keyed rows resolve through the identity the lists and
/// change files made), then the news.
pub fn imports() -> Vec<(&'static Format, Given)> {
    let embedded = |name: &'static str, bytes: &'static [u8]| Source::Embedded { name, bytes };
    let nse_actions = NSE_ACTIONS.into_iter().fold(Given::default(), |g, f| g.file("files", f));
    let bse_actions = BSE_ACTIONS.into_iter().fold(Given::default(), |g, f| g.file("files", f));
    let prices = PRICES.into_iter().fold(Given::default(), |g, f| g.file("paths", f));
    vec![
        (
            &exchange::FORMAT,
            Given::default()
                .file("nse", embedded("nse_EQUITY_L_2024-01.csv", NSE_EQUITY_LIST))
                .file("bse", embedded("bse_Equity_2024-01.csv", BSE_EQUITY_LIST))
                .file("mcap", embedded("nse_mcap_2024-03-28.csv", NSE_MCAP))
                .day("as-of", DAY_2024),
        ),
        (
            &exchange::FORMAT,
            Given::default()
                .file("nse", embedded("nse_EQUITY_L_2026-05-17.csv", NSE_EQUITY_LIST_2026))
                .file("nse-sme", embedded("nse_SME_EQUITY_L_2026-05-17.csv", NSE_SME_EQUITY_LIST_2026))
                .day("as-of", DAY_2026),
        ),
        (
            &changes::FORMAT,
            Given::default()
                .file("symbols", embedded("nse_symbolchange_2026-05-17.csv", NSE_SYMBOL_CHANGES))
                .file("names", embedded("nse_namechange_2026-05-17.csv", NSE_NAME_CHANGES)),
        ),
        (&actions::NSE_FORMAT, nse_actions),
        (&actions::BSE_FORMAT, bse_actions),
        (&bhavcopy::FORMAT, prices),
        (&news::FORMAT, Given::default().file("file", embedded("news.jsonl", NEWS))),
    ]
}

/// The demo companies with what the merge reported: skipped rows and notes.
pub fn demo_merge() -> MergedCompanies {
    let (nse, bse, mcap) = lists_2024();
    exchange::merge(&nse, &bse, Some(&mcap))
}

/// The embedded lists of 2024, parsed.
fn lists_2024() -> (exchange::NseEquityList, exchange::BseEquityList, exchange::McapList) {
    let nse = exchange::parse_nse_equity_list(NSE_EQUITY_LIST).expect("embedded NSE list is valid");
    let bse = exchange::parse_bse_equity_list(BSE_EQUITY_LIST).expect("embedded BSE list is valid");
    let mcap = exchange::parse_nse_mcap(NSE_MCAP)
        .expect("embedded market-cap file is valid")
        .with_as_of(exchange::mcap_day_from_file_name("nse_mcap_2024-03-28.csv"));
    (nse, bse, mcap)
}

/// The demo companies of January 2024 (before the 2026 lists), sorted by
/// ticker, then ISIN.
pub fn demo_companies() -> Vec<Company> {
    demo_merge().companies
}

/// The demo news articles, in file order.
pub fn demo_articles() -> Vec<Article> {
    news::parse_articles(NEWS).expect("embedded news file is valid")
}

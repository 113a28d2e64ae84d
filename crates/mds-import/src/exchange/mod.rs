//! The exchanges' own daily files, and the merge that turns them into
//! companies.
//!
//! - NSE `EQUITY_L.csv`: every equity listed on NSE (symbol, name, ISIN;
//!   series, date of listing and face value when the file has them); NSE's
//!   `SME_EQUITY_L.csv`, the same for its SME platform.
//! - BSE `Equity.csv`: every equity listed on BSE, with BSE's four-level
//!   classification, security code and id, status, group and face value
//!   (CRLF line ends, a trailing comma on each data row).
//! - An NSE market-capitalisation file (`Id,Symbol,Company_Name,
//!   Market_capitalization_lakhs`), ranked to give the SEBI-style bands; the
//!   figure is kept as each company's market capitalisation, with the day
//!   the caller says it is of.
//!
//! These are other people's formats, so their headers are matched ignoring
//! case and surrounding spaces, and columns this module does not read are
//! ignored. A row whose ISIN is a placeholder (`-`, `NA`, empty) cannot be
//! keyed and is skipped, and reported as skipped; anything else that is wrong
//! is an error with its line, as in the other parsers.
//!
//! # Layout
//! - [`nse`]: NSE's equity list.
//! - [`bse`]: BSE's equity list.
//! - [`mcap`]: the market-capitalisation file, ranked.
//! - [`sme`]: NSE's SME list, read into the shape of the main board's.
//! - [`merge`](mod@merge): the merge of the three into companies.
//! - [`packed`]: an NSE list read packed, and the companies of an
//!   exchange import made an ISIN range at a time.
//! - [`snapshot`](mod@snapshot): the lists as snapshots of their series
//!   with the companies merged of them, what the store is handed.
//! - `table` (private): what the exchange CSVs share: reading the records
//!   one at a time with lenient headers, placeholder ISINs, duplicate
//!   ISINs, names, codes and face values, and the row loop that reports
//!   every bad row.

pub mod bse;
pub mod mcap;
pub mod merge;
pub mod nse;
pub mod packed;
pub mod sme;
pub mod snapshot;
pub(crate) mod table;

pub use bse::{BseEquityList, BseListing, BseTickerSource, parse_bse_equity_list};
pub use mcap::{McapList, McapRow, mcap_day_from_file_name, parse_nse_mcap};
pub use merge::{MergedCompanies, merge};
pub use nse::{NseEquityList, NseListing, parse_nse_equity_list};
pub use packed::{ExchangeCompanies, NseRows, parse_nse_rows, parse_nse_sme_rows};
pub use sme::parse_nse_sme_equity_list;
pub use snapshot::{ExchangeSnapshots, FORMAT, snapshot_import};
pub use table::{EquityList, SkippedRow};

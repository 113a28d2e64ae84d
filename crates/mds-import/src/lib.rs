//! Parsing of the files mds imports, with no database: everything here turns
//! bytes into domain records ([`Company`], [`Article`]) or into a list of
//! every problem found, each with its line ([`ImportError`]).
//!
//! Imports are all-or-nothing, so the parsers never stop at the first bad
//! row: an operator sees every problem of a file at once and fixes it in one
//! go. Line numbers are 1-based physical lines of the file, the header being
//! line 1.
//!
//! # Layout
//! - [`companies`]: the companies file of `mds import companies`, CSV (header
//!   = the `V1Company` field names) or JSON Lines; and the CSV rows `mds get
//!   companies --format csv` writes.
//! - [`details`]: the optional detail fields of the companies file.
//! - [`news`]: the news file of `mds import news`, JSON Lines of articles.
//! - [`exchange`]: NSE's (main board and SME) and BSE's own equity lists
//!   and a market-cap file, [`exchange::merge()`], which makes companies of
//!   them, and [`exchange::snapshot_import`], the lists as snapshots (NSE's
//!   read packed, [`exchange::parse_nse_rows`]).
//! - [`actions`]: NSE's and BSE's corporate-action files, their `PURPOSE`
//!   text read into typed actions, and the merge of rows resolved to ISINs.
//! - [`changes`]: NSE's symbol- and name-change files.
//! - [`bhavcopy`]: NSE's end-of-day files (UDiFF and `sec_bhavdata_full`),
//!   from files, directories and archives, and the two compared.
//! - [`format`]: what every import format declares ([`format::Format`]:
//!   its name, arguments and reading), the files given ([`format::Source`])
//!   and what they become for the node to write ([`format::Input`]); each
//!   parser module carries its `FORMAT`.
//! - [`demo`]: the demo data set, embedded in the binary, and the imports
//!   that load it ([`demo::imports`]).
//! - [`error`]: [`RowError`] and [`ImportError`].
//!
//! Private helpers: `text` (UTF-8, BOM, CSV tables with line numbers, JSON
//! Lines) and `fields` (checks of single values shared by the formats).
//!
//! [`Company`]: mds_domain::Company
//! [`Article`]: mds_domain::Article

pub mod actions;
pub mod bhavcopy;
pub mod changes;
pub mod companies;
pub mod demo;
pub mod details;
pub mod error;
pub mod exchange;
mod fields;
pub mod format;
pub mod news;
mod text;

pub use changes::{parse_name_changes, parse_symbol_changes};
pub use companies::{check_companies, companies_in_chunks, csv_header, csv_row, parse_companies};
pub use demo::{DemoHistory, demo_articles, demo_companies, demo_history};
pub use error::{ImportError, RowError};
pub use exchange::{
    BseEquityList, EquityList, ExchangeSnapshots, McapList, MergedCompanies, NseEquityList, NseRows, merge,
    parse_bse_equity_list, parse_nse_equity_list, parse_nse_mcap, parse_nse_rows, parse_nse_sme_equity_list,
    parse_nse_sme_rows, snapshot_import,
};
pub use news::{ArticleChunks, articles_in_chunks, parse_articles};

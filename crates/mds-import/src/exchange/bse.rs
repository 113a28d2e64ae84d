//! BSE's `Equity.csv`: every equity listed on BSE, with BSE's four-level
//! classification, security code and id, status, group and face value (CRLF
//! line ends, a trailing comma on each data row).

use mds_domain::{Isin, ListingStatus, Ticker};

use super::table::{EquityList, code, exchange_name, face_value, parse_listings, row_of_cells};
use crate::error::ImportError;
use crate::fields::non_empty;
use crate::text::Column;

/// Where a BSE security's ticker came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BseTickerSource {
    /// The `Security Id` (`ABB`, `20MICRONS`): the usual case.
    SecurityId,
    /// The numeric `Security Code` (`536493`), used when the `Security Id` is
    /// not a valid ticker (BSE has ids with a space, such as `JK AGRI`).
    /// BSE itself identifies every security by this code.
    SecurityCode,
}

/// One security on BSE's equity list.
#[derive(Debug, Clone, PartialEq)]
pub struct BseListing {
    /// Line of the row.
    pub line: usize,
    /// `ISIN No`.
    pub isin: Isin,
    /// The ticker: the `Security Id`, or the `Security Code` when the id is
    /// not a valid ticker (see [`BseListing::ticker_source`]).
    pub ticker: Ticker,
    /// Which column [`BseListing::ticker`] came from.
    pub ticker_source: BseTickerSource,
    /// The `Security Id` as written (trimmed).
    pub security_id: String,
    /// `Issuer Name`.
    pub name: String,
    /// `Igroup Name` (the Industry level); `None` when unclassified (`-`).
    pub industry: Option<String>,
    /// `Industry New Name` (the Sector level); `None` when unclassified (`-`).
    pub sector: Option<String>,
    /// `Security Code`, BSE's numeric id of the security.
    pub scrip_code: String,
    /// `Status` (`Active` when the file has no such column).
    pub status: ListingStatus,
    /// `Group` (`A`, `B`, `T`, …), when given.
    pub group: Option<String>,
    /// `Face Value`, in rupees, when given.
    pub face_value: Option<f64>,
    /// `Sector Name` (the Macro-Economic Sector level), when classified.
    pub macro_sector: Option<String>,
    /// `ISubgroup Name` (the Basic Industry level), when classified.
    pub basic_industry: Option<String>,
}

/// BSE's equity list (`Equity.csv`).
pub type BseEquityList = EquityList<BseListing>;

const BSE_COLUMNS: &[Column] = &[
    Column::required("Security Code"),
    Column::required("Issuer Name"),
    Column::required("Security Id"),
    Column::required("ISIN No"),
    Column::required("Industry New Name"),
    Column::required("Igroup Name"),
    Column::optional("Status"),
    Column::optional("Group"),
    Column::optional("Face Value"),
    Column::optional("Sector Name"),
    Column::optional("ISubgroup Name"),
];

/// BSE's `Status` cell; `Active` when the file has no such column.
fn bse_status(cell: Option<&str>) -> Result<ListingStatus, String> {
    match cell.map(str::to_ascii_lowercase).as_deref() {
        None | Some("active") => Ok(ListingStatus::Active),
        Some("suspended") => Ok(ListingStatus::Suspended),
        Some("delisted") => Ok(ListingStatus::Delisted),
        Some(_) => Err(format!("Status must be Active, Suspended or Delisted (got {:?})", cell.unwrap_or_default())),
    }
}

/// BSE's `Security Code`: digits.
pub(crate) fn scrip_code(cell: &str) -> Result<String, String> {
    if !cell.is_empty() && cell.len() <= 12 && cell.bytes().all(|b| b.is_ascii_digit()) {
        Ok(cell.to_owned())
    } else {
        Err(format!("Security Code must be digits (got {cell:?})"))
    }
}

/// Parses BSE's `Equity.csv`. Every bad row is reported with its line.
pub fn parse_bse_equity_list(bytes: &[u8]) -> Result<BseEquityList, ImportError> {
    parse_listings(bytes, BSE_COLUMNS, 3, |record, col, isin| {
        let security_id = record.get(col.req(2));
        let (ticker, source) = match bse_ticker(security_id, record.get(col.req(0))) {
            Ok((ticker, source)) => (Ok(ticker), source),
            Err(e) => (Err(e), BseTickerSource::SecurityId),
        };
        let name = exchange_name(record, col.req(1), "Issuer Name");
        let industry = classification(record.get(col.req(5)), mds_domain::bounds::INDUSTRY);
        let sector = classification(record.get(col.req(4)), mds_domain::bounds::SECTOR);
        let opt_level = |i: usize| classification(record.opt(col.opt(i)).unwrap_or(""), mds_domain::bounds::SECTOR);
        let (macro_sector, basic_industry) = (opt_level(9), opt_level(10));
        let scrip_code = scrip_code(record.get(col.req(0)));
        let status = bse_status(record.opt(col.opt(6)));
        let group = code(record.opt(col.opt(7)), "Group");
        let face_value = face_value(record.opt(col.opt(8)), "Face Value");
        row_of_cells!(BseListing {
            line: record.line, ticker_source: source, security_id: security_id.to_owned();
            isin, ticker, name, industry, sector, macro_sector, basic_industry, scrip_code, status, group, face_value
        })
    })
}

/// The ticker of a BSE row: the Security Id, else the Security Code.
fn bse_ticker(security_id: &str, security_code: &str) -> Result<(Ticker, BseTickerSource), String> {
    if let Ok(ticker) = Ticker::parse(security_id) {
        return Ok((ticker, BseTickerSource::SecurityId));
    }
    if !security_code.is_empty() {
        if let Ok(ticker) = Ticker::parse(security_code) {
            return Ok((ticker, BseTickerSource::SecurityCode));
        }
    }
    Err(format!(
        "Security Id {security_id:?} is not a valid ticker, and Security Code {security_code:?} cannot stand in for it"
    ))
}

/// A BSE classification cell: `-` and empty mean unclassified.
fn classification(cell: &str, bound: mds_domain::bounds::Bound) -> Result<Option<String>, String> {
    let value = non_empty(Some(cell)).filter(|c| *c != "-");
    value.map(|v| bound.check(v).map(|()| v.to_owned())).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bse_ticker_falls_back_to_the_security_code() {
        assert_eq!(bse_ticker("ABB", "500002").unwrap(), (Ticker::parse("ABB").unwrap(), BseTickerSource::SecurityId));
        assert_eq!(
            bse_ticker("JK AGRI", "536493").unwrap(),
            (Ticker::parse("536493").unwrap(), BseTickerSource::SecurityCode)
        );
        assert!(bse_ticker("JK AGRI", "").is_err());
    }

    #[test]
    fn classification_dash_is_none() {
        let b = mds_domain::bounds::INDUSTRY;
        assert_eq!(classification("-", b), Ok(None));
        assert_eq!(classification(" ", b), Ok(None));
        assert_eq!(classification(" Gas ", b), Ok(Some("Gas".to_owned())));
        assert!(classification(&"g".repeat(201), b).is_err());
    }
}

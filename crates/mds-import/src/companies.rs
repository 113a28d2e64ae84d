//! The companies import file (`mds import companies FILE`): CSV whose header
//! is the `V1Company` field names, or JSON Lines of `V1Company` objects;
//! either may carry the optional detail fields ([`crate::details`]).
//!
//! Both forms go through one validation, so a value is refused with the same
//! message whichever form it came in. The CSV form is also written here
//! ([`csv_header`], [`csv_row`]: what `mds get companies --format csv`
//! prints), so what is exported re-imports to the same companies.

use mds_domain::bounds;
use mds_domain::{Classification, Company, CompanyDetails, CompanyStatus, Isin, Listing, MarketCap, MarketCapBand};
use serde::Deserialize;

use crate::details::{self, CSV_COLUMNS};
use crate::error::{ImportError, RowError};
use crate::fields::{non_empty, parse_isin, parse_ticker, parse_url};
use crate::format::{Format, Given, Input, ONE_FILE, Read, Refusal};
use crate::text::{self, Column, CsvRows, FirstSeen, HeaderRule, JsonRows};

/// How many columns a CSV may have: the `V1Company` fields, then the details.
const WIDTH: usize = Company::FIELDS.len() + CSV_COLUMNS.len();

/// The CSV columns: the `V1Company` fields in wire order
/// ([`Company::FIELDS`]), the nullable ones optional; then the optional
/// detail columns ([`CSV_COLUMNS`]).
const COLUMNS: &[Column] = &{
    let mut out = [Column::required(""); WIDTH];
    let mut i = 0;
    while i < Company::FIELDS.len() {
        let (name, nullable) = Company::FIELDS[i];
        out[i] = if nullable { Column::optional(name) } else { Column::required(name) };
        i += 1;
    }
    while i < WIDTH {
        out[i] = Column::optional(CSV_COLUMNS[i - Company::FIELDS.len()]);
        i += 1;
    }
    out
};

/// The CSV header of the `V1Company` fields, in wire order
/// ([`Company::FIELDS`]): the first line of an exported file.
pub fn csv_header() -> String {
    Company::FIELDS.map(|(name, _)| name).join(",")
}

/// One company as a CSV row of its `V1Company` fields (no details; `null`
/// as an empty cell), each cell quoted when it holds a comma, a quote or a
/// line break. No line end.
pub fn csv_row(c: &Company) -> String {
    c.field_texts().map(|v| csv_cell(v.unwrap_or(""))).join(",")
}

/// One CSV cell, quoted when it holds a comma, a quote or a line break.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

/// Parses a companies file, CSV or JSON Lines (chosen by the first character
/// that is not white space: `{` means JSON Lines).
///
/// Every bad row is reported with its line; a file with any bad row yields no
/// companies. An ISIN appearing twice is an error on the later line, naming
/// the earlier. The companies come back in file order.
pub fn parse_companies(bytes: &[u8]) -> Result<Vec<Company>, ImportError> {
    let mut out = Vec::new();
    for_each_company(bytes, |c| out.push(c))?;
    Ok(out)
}

/// Checks a companies file as [`parse_companies`] does, without keeping its
/// rows (a file of a million rows costs its bytes and the set of its ISINs):
/// how many companies it holds, or every error.
pub fn check_companies(bytes: &[u8]) -> Result<usize, ImportError> {
    let mut n = 0;
    for_each_company(bytes, |_| n += 1)?;
    Ok(n)
}

/// The companies of a file that [`check_companies`] accepted, `chunk` at a
/// time in file order, so an import can hand them to the store without
/// holding them all. A file that has errors (not checked first) yields the
/// good rows only.
pub fn companies_in_chunks(bytes: &[u8], chunk: usize) -> impl Iterator<Item = Vec<Company>> + '_ {
    let mut errors = Vec::new();
    // A checked file is UTF-8, so its text borrows from `bytes`.
    let text = match text::decode(bytes, &mut errors) {
        Ok(std::borrow::Cow::Borrowed(text)) => Some(text),
        _ => None,
    };
    let mut rows = text.and_then(|t| CompanyRows::open(t, &mut errors).ok().flatten());
    std::iter::from_fn(move || {
        let rows = rows.as_mut()?;
        let batch: Vec<Company> = rows.by_ref().filter_map(Result::ok).take(chunk.max(1)).collect();
        (!batch.is_empty()).then_some(batch)
    })
}

/// Runs `each` on every company of a valid file, in file order; every
/// problem of an invalid one.
fn for_each_company(bytes: &[u8], mut each: impl FnMut(Company)) -> Result<(), ImportError> {
    let mut errors = Vec::new();
    let text = text::decode(bytes, &mut errors)?;
    if let Some(mut rows) = CompanyRows::open(&text, &mut errors)? {
        for row in rows.by_ref() {
            match row {
                // After the first error nothing is kept: the file is refused.
                Ok(c) if errors.is_empty() => each(c),
                Ok(_) => {}
                Err(e) => errors.extend(e),
            }
        }
        rows.finish()?;
    }
    ImportError::check(errors)
}

/// The rows of a companies file, each validated as it is read.
struct CompanyRows<'a> {
    source: Source<'a>,
    seen: FirstSeen<Isin>,
}

/// Where the rows come from.
enum Source<'a> {
    Csv { rows: CsvRows<'a>, columns: Vec<Option<usize>> },
    Json(JsonRows<'a, JsonCompany>),
}

impl<'a> CompanyRows<'a> {
    /// The rows of `text`; `None` (with the problems in `errors`) when its
    /// header is not sound, so no cell can be read with confidence.
    fn open(text: &'a str, errors: &mut Vec<RowError>) -> Result<Option<Self>, ImportError> {
        let source = if text.trim_start().starts_with('{') {
            Source::Json(JsonRows::new(text))
        } else {
            let rows = CsvRows::open(text, false)?;
            match text::map_header(rows.header_line, &rows.header, COLUMNS, HeaderRule::Strict) {
                Ok(columns) => Source::Csv { rows, columns },
                Err(header_errors) => {
                    errors.extend(header_errors);
                    return Ok(None);
                }
            }
        };
        Ok(Some(CompanyRows { source, seen: FirstSeen::new() }))
    }

    /// `Err` for a file with no rows.
    fn finish(&self) -> Result<(), ImportError> {
        match &self.source {
            Source::Csv { rows, .. } => rows.finish(),
            Source::Json(rows) => rows.finish(),
        }
    }
}

impl Iterator for CompanyRows<'_> {
    type Item = Result<Company, Vec<RowError>>;

    fn next(&mut self) -> Option<Self::Item> {
        let seen = &mut self.seen;
        match &mut self.source {
            Source::Csv { rows, columns } => {
                let record = match rows.next()? {
                    Ok(record) => record,
                    Err(e) => return Some(Err(vec![e])),
                };
                let required = |i: usize| columns[i].expect("required columns are present");
                let cell = |i: usize| record.get(required(i));
                let fields = Fields {
                    isin: cell(0),
                    ticker: cell(1),
                    name: cell(2),
                    industry: record.opt(columns[3]),
                    sector: record.opt(columns[4]),
                    is_bse: parse_bool("is_bse", cell(5)),
                    is_nse: parse_bool("is_nse", cell(6)),
                    market_cap_band: record.opt(columns[7]),
                    logo_url: record.opt(columns[8]),
                    details: Details::Csv((Company::FIELDS.len()..WIDTH).map(|i| record.opt(columns[i])).collect()),
                };
                Some(validate(record.line, fields, seen))
            }
            Source::Json(rows) => {
                let (line, row) = match rows.next()? {
                    Ok(found) => found,
                    Err(e) => return Some(Err(vec![e])),
                };
                let fields = Fields {
                    isin: &row.isin,
                    ticker: &row.ticker,
                    name: &row.name,
                    industry: row.industry.as_deref(),
                    sector: row.sector.as_deref(),
                    is_bse: Ok(row.is_bse),
                    is_nse: Ok(row.is_nse),
                    market_cap_band: row.market_cap_band.as_deref(),
                    logo_url: row.logo_url.as_deref(),
                    details: Details::Json(CompanyDetails {
                        listings: row.listings.clone().unwrap_or_default(),
                        classification: row.classification.clone().unwrap_or_default(),
                        market_cap: row.market_cap.clone(),
                        status: row.status.unwrap_or_default(),
                    }),
                };
                Some(validate(line, fields, seen))
            }
        }
    }
}

/// A `V1Company` object as written in a JSON Lines file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a company object")]
struct JsonCompany {
    isin: String,
    ticker: String,
    name: String,
    industry: Option<String>,
    sector: Option<String>,
    is_bse: bool,
    is_nse: bool,
    market_cap_band: Option<String>,
    logo_url: Option<String>,
    #[serde(default)]
    listings: Option<Vec<Listing>>,
    #[serde(default)]
    classification: Option<Classification>,
    #[serde(default)]
    market_cap: Option<MarketCap>,
    #[serde(default)]
    status: Option<CompanyStatus>,
    /// Written by the API; the store stamps what an import changes.
    #[serde(default, rename = "updated_at")]
    _updated_at: Option<serde::de::IgnoredAny>,
    /// Written by the API (derived from identity events, not imported).
    #[serde(default, rename = "superseded_by")]
    _superseded_by: Option<serde::de::IgnoredAny>,
    /// Written by the API (derived from identity events, not imported).
    #[serde(default, rename = "supersedes")]
    _supersedes: Option<serde::de::IgnoredAny>,
}

/// A row's details before validation.
enum Details<'a> {
    /// The detail cells of a CSV row, in [`CSV_COLUMNS`] order.
    Csv(Vec<Option<&'a str>>),
    /// The detail fields of a JSON Lines row.
    Json(CompanyDetails),
}

/// The fields of one row before validation.
struct Fields<'a> {
    isin: &'a str,
    ticker: &'a str,
    name: &'a str,
    industry: Option<&'a str>,
    sector: Option<&'a str>,
    is_bse: Result<bool, String>,
    is_nse: Result<bool, String>,
    market_cap_band: Option<&'a str>,
    logo_url: Option<&'a str>,
    details: Details<'a>,
}

/// Validates one row: the company, or every bad field. An ISIN seen on an
/// earlier line is reported even when either row has other problems, so
/// fixing those does not uncover a new error.
fn validate(line: usize, f: Fields<'_>, seen: &mut FirstSeen<Isin>) -> Result<Company, Vec<RowError>> {
    let isin = parse_isin(f.isin).and_then(|isin| match seen.insert(isin.clone(), line) {
        Some(first) => Err(format!("duplicate isin {isin}: it is already on line {first}")),
        None => Ok(isin),
    });
    let name = f.name.trim();
    let name_ok = if name.is_empty() { Err("name is empty".to_owned()) } else { bounds::COMPANY_NAME.check(name) };
    let band = non_empty(f.market_cap_band).map(parse_band).transpose();
    let logo_url = non_empty(f.logo_url).map(|v| parse_url("logo_url", v)).transpose();
    let classes = [(f.industry, bounds::INDUSTRY), (f.sector, bounds::SECTOR)]
        .into_iter()
        .filter_map(|(v, bound)| non_empty(v).and_then(|v| bound.check(v).err()))
        .reduce(|a, b| format!("{a}; {b}"))
        .map_or(Ok(()), Err);
    let ticker = parse_ticker(f.ticker);
    let row = details::Row {
        ticker: ticker.as_ref().map_or(f.ticker, |t| t.as_str()),
        flags: (f.is_nse.clone().unwrap_or(true), f.is_bse.clone().unwrap_or(true)),
        levels: (non_empty(f.sector), non_empty(f.industry)),
    };
    let details = match f.details {
        Details::Csv(cells) => details::csv_details(&row, |i| cells[i]),
        Details::Json(d) => details::check(&row, &d).map(|()| d),
    }
    .map_err(|e| e.join("; "));
    match (isin, ticker, name_ok, f.is_bse, f.is_nse, band, logo_url, classes.and(details)) {
        (Ok(isin), Ok(ticker), Ok(()), Ok(is_bse), Ok(is_nse), Ok(market_cap_band), Ok(logo_url), Ok(details)) => {
            Ok(Company {
                isin,
                ticker,
                name: name.to_owned(),
                industry: non_empty(f.industry).map(str::to_owned),
                sector: non_empty(f.sector).map(str::to_owned),
                is_bse,
                is_nse,
                market_cap_band,
                logo_url,
                details,
            })
        }
        (isin, ticker, name, is_bse, is_nse, band, logo_url, classes) => {
            let mut errors = Vec::new();
            RowError::push_all(
                &mut errors,
                line,
                [
                    isin.err(),
                    ticker.err(),
                    name.err(),
                    is_bse.err(),
                    is_nse.err(),
                    band.err(),
                    logo_url.err(),
                    classes.err(),
                ],
            );
            Err(errors)
        }
    }
}

/// `true`/`false` in any case, or `1`/`0`.
fn parse_bool(column: &str, value: &str) -> Result<bool, String> {
    match value {
        "1" => Ok(true),
        "0" => Ok(false),
        v if v.eq_ignore_ascii_case("true") => Ok(true),
        v if v.eq_ignore_ascii_case("false") => Ok(false),
        v => Err(format!("{column} must be true, false, 1 or 0 (got {v:?})")),
    }
}

fn parse_band(value: &str) -> Result<MarketCapBand, String> {
    value.parse().map_err(|_| format!("market_cap_band must be large_cap, mid_cap or small_cap (got {value:?})"))
}

/// `mds import companies FILE`: CSV or JSON Lines, checked whole, then
/// upserted by ISIN a chunk at a time.
pub const FORMAT: Format = Format {
    name: "companies",
    about: "Companies: CSV (header = V1Company field names) or JSON Lines; upsert by ISIN.",
    args: ONE_FILE,
    read: read_format,
};

/// [`FORMAT`]'s reading: every row checked (none kept), the bytes handed on.
fn read_format(given: &Given, _today: chrono::NaiveDate) -> Result<Read, Refusal> {
    let file = given.the_file()?;
    let bytes = file.bytes()?;
    check_companies(&bytes).map_err(|e| Refusal::of(&file, e))?;
    Ok(Input::Companies { file, bytes }.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_header_is_the_wire_field_names() {
        assert_eq!(csv_header(), "isin,ticker,name,industry,sector,is_bse,is_nse,market_cap_band,logo_url");
    }

    #[test]
    fn csv_cells_are_quoted_when_needed() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn booleans() {
        for (v, b) in [("true", true), ("TRUE", true), ("False", false), ("1", true), ("0", false)] {
            assert_eq!(parse_bool("is_bse", v), Ok(b), "{v}");
        }
        for v in ["yes", "", "2", "t"] {
            assert!(parse_bool("is_bse", v).is_err(), "{v}");
        }
    }
}

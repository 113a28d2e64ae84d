//! NSE's end-of-day files ("bhavcopy", contract 14.1), in both of the
//! formats NSE publishes, read into rows of one day each ([`DayFile`]).
//!
//! # Formats
//! The format is told by the header, whatever the file is called:
//! - **UDiFF** (`TradDt,BizDt,Sgmt,Src,FinInstrmTp,FinInstrmId,ISIN,TckrSymb,SctySrs,…`,
//!   [`udiff`]): one row per security and series, with its ISIN. Files
//!   before 2024-07-08 end the header with a comma (one header cell more
//!   than a row has) and name the last columns `Rsvd01..Rsvd04`; later ones
//!   `Rsvd1..Rsvd4` without the comma. Both are read.
//! - **`sec_bhavdata_full`** (`SYMBOL, SERIES, DATE1, PREV_CLOSE, …, DELIV_QTY, DELIV_PER`,
//!   [`secbhav`]): keyed by symbol only (no ISIN), cells padded with
//!   spaces, `-` for none, `DD-Mon-YYYY` dates, turnover in lakh (read here
//!   into rupees: times 100,000), with delivery figures.
//!
//! # Equity series
//! Rows of the equity series make bars; the others are skipped and counted
//! by series ([`Skipped`]). The equity series (NSE's definitions; the list
//! is [`mds_domain::prices::EQUITY_SERIES`], defined once):
//! - `EQ`: equity, rolling settlement;
//! - `BE`: equity, trade for trade;
//! - `BZ`: equity, trade for trade, companies not complying with the
//!   listing rules (Z category);
//! - `SM`: the SME platform (NSE Emerge);
//! - `ST`: the SME platform, trade for trade;
//! - `SZ`: the SME platform, trade for trade, not complying;
//! - `IT`: the Institutional Trading Platform.
//!
//! Not equity, so skipped: `BL` (block deals), `T0` (the T+0 settlement
//! trial: the same shares traded for same-day settlement), `E1`, `X1`
//! (partly paid-up shares), `P1` (preference shares), `W1` (warrants), `RR`,
//! `IV` (REIT and InvIT units), `MF`, `GB` (sovereign gold bonds), `GS`,
//! `SG` (government and state loans), `TB` (treasury bills) and the debt
//! series (`N0`..`NZ`, `Y*`, `Z*`, `A*`, `B*`). A row of an equity series
//! whose ISIN is a fund's (`INF…`: exchange-traded funds trade in `EQ`) is
//! skipped too, counted as a fund; a symbol-keyed file cannot tell, so its
//! funds' rows are left to the symbol's resolution (no equity list names
//! them).
//!
//! # Checks
//! A file holds one day: a row of another day is an error, and so is a
//! second row of a symbol and series (or, in UDiFF, of an ISIN and series).
//! Every problem is reported with its line (the header is line 1), and the
//! file's name ([`BhavcopyError`]); a refused file gives no rows.
//!
//! # Layout
//! - [`udiff`], [`secbhav`]: the two formats' columns and rows.
//! - `rows` (private): the row loop both share: header, cell counts, line
//!   numbers, the day, repeats, the equity filter.
//! - [`archive`]: files, directories, `.zip`, `.zst`, `.tar`, `.tar.zst`,
//!   each member handed on as it is read.
//! - [`check`]: the two formats' rows of one day paired and compared.
//!
//! # The import format
//! [`FORMAT`] is `mds import nse-bhavcopy PATH... [--verbose]`: its reading
//! checks that the paths are there and hands them on as [`DayFiles`], read
//! a file at a time while the node writes (`mds_node::import`): the days
//! of an archive are never all in memory, and a bad file found half-way
//! refuses the import whole.

pub mod archive;
pub mod check;
mod rows;
pub mod secbhav;
pub mod udiff;

use std::collections::BTreeMap;

use chrono::NaiveDate;
use mds_domain::prices::{Figures, Series};
use mds_domain::{Isin, Ticker};

use crate::error::ImportError;
use crate::format::{Arg, ArgKind, Given, Input, Read, Refusal, Source};

/// `mds import nse-bhavcopy PATH... [--verbose]` (contract 14.1).
pub const FORMAT: crate::format::Format = crate::format::Format {
    name: "nse-bhavcopy",
    about: "NSE's daily price files (UDiFF, sec_bhavdata_full; files, directories, .zip, .zst, .tar.zst): equity \
            series only, symbol-keyed rows resolved to the ISIN of their day; each day replaced whole, the ISIN-keyed \
            row winning, and announced (prices.published). A bad line: its file and number, nothing imported.",
    args: &[
        Arg { name: "paths", kind: ArgKind::Files, help: "The files, directories or archives." },
        Arg {
            name: "verbose",
            kind: ArgKind::Switch,
            help: "List the rows resolved to no ISIN, every disagreement and every series skipped.",
        },
    ],
    read: read_format,
};

/// [`FORMAT`]'s reading: the paths given, each there, as [`DayFiles`].
fn read_format(given: &Given, _today: NaiveDate) -> Result<Read, Refusal> {
    let sources = given.many("paths").to_vec();
    if sources.is_empty() {
        return Err(Refusal::message("no daily files given"));
    }
    for s in &sources {
        if let Source::Path(p) = s {
            std::fs::metadata(p).map_err(|e| Refusal::message(format!("cannot read {}: {e}", p.display())))?;
        }
    }
    Ok(Input::Prices { files: DayFiles::new(sources), verbose: given.is_on("verbose") }.into())
}

/// The daily files an import was given (paths or embedded archives), read
/// when the node writes them: a file at a time, each parsed as it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayFiles {
    sources: Vec<Source>,
}

impl DayFiles {
    /// The daily files under `sources`.
    pub fn new(sources: Vec<Source>) -> Self {
        DayFiles { sources }
    }

    /// The sources, as given.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// Reads every daily file in order ([`archive::for_each_source`]) and
    /// hands `visit` its name and its day ([`parse_day`]); stops at the
    /// first error, a read's, a parse's or `visit`'s. Returns how many
    /// files were read.
    pub fn for_each_day(
        &self,
        visit: &mut dyn FnMut(&str, DayFile) -> Result<(), BhavcopyError>,
    ) -> Result<usize, BhavcopyError> {
        archive::for_each_source(&self.sources, &mut |name, bytes| visit(name, parse_day(name, bytes)?))
    }

    /// [`DayFiles::for_each_day`] of the files of one format only: a file
    /// whose header names another format is passed over unparsed (one the
    /// header names no format of is parsed, and refused, when `only` is
    /// UDiFF). A price import reads the ISIN-keyed files first, then the
    /// symbol-keyed ones (contract 14.1).
    pub fn for_each_day_of(
        &self,
        only: Format,
        visit: &mut dyn FnMut(&str, DayFile) -> Result<(), BhavcopyError>,
    ) -> Result<usize, BhavcopyError> {
        let mut n = 0;
        archive::for_each_source(&self.sources, &mut |name, bytes| {
            let format = Format::of_header(bytes);
            if format == Some(only) || (format.is_none() && only == Format::Udiff) {
                n += 1;
                visit(name, parse_day(name, bytes)?)?;
            }
            Ok(())
        })?;
        Ok(n)
    }
}

impl BhavcopyError {
    /// The refusal of an import: a file's problems, each with its line, or
    /// a sentence.
    pub fn refusal(self) -> Refusal {
        match self {
            BhavcopyError::File { file, error } => Refusal { file: Some(file), error },
            other => Refusal::message(other.to_string()),
        }
    }
}

/// The format of a daily file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// UDiFF: with ISINs.
    Udiff,
    /// `sec_bhavdata_full`: symbols only, with delivery figures.
    SecBhavdataFull,
}

impl Format {
    /// The format whose header's first cell is `cell` (trimmed, any case).
    pub fn of_first_header_cell(cell: &str) -> Option<Format> {
        let cell = cell.trim();
        if cell.eq_ignore_ascii_case("TradDt") {
            Some(Format::Udiff)
        } else if cell.eq_ignore_ascii_case("SYMBOL") {
            Some(Format::SecBhavdataFull)
        } else {
            None
        }
    }

    /// The format of a file's bytes, told by its header's first cell (a
    /// byte-order mark and padding aside).
    pub fn of_header(bytes: &[u8]) -> Option<Format> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let end = bytes.iter().position(|b| matches!(b, b',' | b'\n' | b'\r')).unwrap_or(bytes.len()).min(64);
        Format::of_first_header_cell(std::str::from_utf8(&bytes[..end]).ok()?.trim_matches('"'))
    }

    /// The format's name as NSE calls it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Udiff => "UDiFF",
            Format::SecBhavdataFull => "sec_bhavdata_full",
        }
    }
}

/// One equity row of a daily file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BhavRow {
    /// Line of the row in its file.
    pub line: usize,
    /// The trading day.
    pub date: NaiveDate,
    /// NSE symbol.
    pub symbol: Ticker,
    /// Series (an equity one).
    pub series: Series,
    /// The ISIN, when the file names it (UDiFF).
    pub isin: Option<Isin>,
    /// The figures as published (turnover in rupees).
    pub figures: Figures,
}

/// Rows left out, by why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Rows of a series that is not equity, by series.
    pub by_series: BTreeMap<Series, u64>,
    /// Rows of an equity series whose ISIN is a fund's (`INF…`).
    pub funds: u64,
}

impl Skipped {
    /// Every row left out.
    pub fn total(&self) -> u64 {
        self.by_series.values().sum::<u64>() + self.funds
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Skipped) {
        for (series, n) in &other.by_series {
            *self.by_series.entry(*series).or_default() += n;
        }
        self.funds += other.funds;
    }
}

/// A daily file read: its day, its equity rows in file order, and what was
/// left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayFile {
    /// The format.
    pub format: Format,
    /// The day every row is of.
    pub date: NaiveDate,
    /// The equity rows.
    pub rows: Vec<BhavRow>,
    /// Rows left out.
    pub skipped: Skipped,
}

/// Why a daily file (or a path holding some) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BhavcopyError {
    /// The file is refused: every problem, each with its line.
    #[error("{}", named(file, error))]
    File {
        /// The file's name (`archive:member` for an archive's member).
        file: String,
        /// What is wrong.
        error: ImportError,
    },
    /// The file or archive could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A `.zip` archive could not be read.
    #[error("{path}: {source}")]
    Zip {
        /// The archive.
        path: String,
        /// The cause.
        source: zip::result::ZipError,
    },
}

/// Each problem of `error` on a line of its own, prefixed by the file name.
fn named(file: &str, error: &ImportError) -> String {
    match error {
        ImportError::File(message) => format!("{file}: {message}"),
        ImportError::Rows(rows) => rows.iter().map(|r| format!("{file}: {r}")).collect::<Vec<_>>().join("\n"),
    }
}

/// Reads one daily file of either format (told by its header). `name` is
/// what errors call the file.
pub fn parse_day(name: &str, bytes: &[u8]) -> Result<DayFile, BhavcopyError> {
    rows::read(bytes).map_err(|error| BhavcopyError::File { file: name.to_owned(), error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_on_each_line() {
        let error = ImportError::Rows(vec![
            crate::RowError::new(3, "OpnPric: is empty"),
            crate::RowError::new(9, "TckrSymb: ticker is empty"),
        ]);
        let e = BhavcopyError::File { file: "a.tar.zst:udiff/x.csv".into(), error };
        assert_eq!(
            e.to_string(),
            "a.tar.zst:udiff/x.csv: line 3: OpnPric: is empty\na.tar.zst:udiff/x.csv: line 9: TckrSymb: ticker is empty"
        );
    }

    #[test]
    fn formats_are_told_by_the_first_header_cell() {
        assert_eq!(Format::of_first_header_cell("TradDt"), Some(Format::Udiff));
        assert_eq!(Format::of_first_header_cell(" SYMBOL "), Some(Format::SecBhavdataFull));
        assert_eq!(Format::of_first_header_cell("ISIN"), None);
        assert_eq!(Format::of_header(b"\xEF\xBB\xBFTradDt,BizDt\n"), Some(Format::Udiff));
        assert_eq!(Format::of_header(b"SYMBOL, SERIES\r\n"), Some(Format::SecBhavdataFull));
        assert_eq!(Format::of_header(b"ISIN,X"), None);
    }
}

//! The row loop both formats share: the header (told, matched, its
//! trailing comma dropped), each record's cell count and line, the one day
//! of a file, repeated rows, the equity filter; a row's figures; and the
//! readers of single cells. A format gives its columns, its day's writing,
//! its turnover's unit and its own columns ([`Layout`]).

use chrono::NaiveDate;
use mds_domain::prices::{Figures, Paise, Percent, Series};
use mds_domain::{Isin, Ticker};

use super::{BhavRow, DayFile, Format, Skipped, secbhav, udiff};
use crate::error::{ImportError, RowError};
use crate::fields::{parse_isin, parse_ticker};
use crate::text::{self, Column, FirstSeen, HeaderRule, LineCounter};

/// What a format is to the loop: its columns, in the order of
/// [`DATE`]…[`TRADES`], then its own ([`Own`]); how a day is written; and
/// the unit of its turnover.
pub(super) struct Layout {
    /// The format.
    pub(super) format: Format,
    /// Its columns: day, symbol, series, the figures both formats have,
    /// then the format's own.
    pub(super) columns: &'static [Column],
    /// Reads a day cell.
    pub(super) date: fn(&str) -> Option<NaiveDate>,
    /// How the day is written, for errors.
    pub(super) date_example: &'static str,
    /// Rupees per unit of the turnover column.
    pub(super) turnover_unit: i64,
    /// What the format has besides the figures both have.
    pub(super) own: Own,
}

/// The columns a format has besides the figures both have, from [`OWN`] on.
pub(super) enum Own {
    /// The ISIN (UDiFF).
    Isin,
    /// The delivery quantity and percentage (sec_bhavdata_full).
    Delivery,
}

/// An equity row's ISIN (if the format has one) and figures, or every
/// problem of the row.
type RowResult = Result<(Option<Isin>, Figures), Vec<String>>;

/// Where the columns are in a file (indexes in `Layout::columns` order).
const DATE: usize = 0;
const SYMBOL: usize = 1;
const SERIES: usize = 2;
const OPEN: usize = 3;
const HIGH: usize = 4;
const LOW: usize = 5;
const CLOSE: usize = 6;
const LAST: usize = 7;
const PREV_CLOSE: usize = 8;
const VOLUME: usize = 9;
const TURNOVER: usize = 10;
const TRADES: usize = 11;
/// The first of a format's own columns.
const OWN: usize = 12;

/// Columns a file must all have, by name.
pub(super) const fn all_required<const N: usize>(names: [&'static str; N]) -> [Column; N] {
    let mut columns = [Column::required(""); N];
    let mut i = 0;
    while i < N {
        columns[i] = Column::required(names[i]);
        i += 1;
    }
    columns
}

/// Reads an equity row's ISIN (if the format has one) and figures; every
/// problem of the row, each a sentence naming its column.
fn read_figures(layout: &Layout, c: &Cells<'_>) -> RowResult {
    let mut errors = Vec::new();
    let isin = match layout.own {
        Own::Isin => c.kept(OWN, parse_isin(c.get(OWN).unwrap_or("")).map(Some), &mut errors),
        Own::Delivery => None,
    };
    let open = c.required(OPEN, &mut errors);
    let high = c.required(HIGH, &mut errors);
    let low = c.required(LOW, &mut errors);
    let close = c.required(CLOSE, &mut errors);
    let last = c.optional(LAST, &mut errors);
    let prev_close = c.required(PREV_CLOSE, &mut errors);
    let volume = c.required(VOLUME, &mut errors);
    let units: Paise = c.required(TURNOVER, &mut errors);
    let turnover = units.units().checked_mul(layout.turnover_unit).map(Paise::from_units);
    let turnover = c.kept(TURNOVER, turnover.ok_or_else(|| "is too large".to_owned()), &mut errors);
    let trades = c.required(TRADES, &mut errors);
    let (delivery_qty, delivery_pct) = match layout.own {
        Own::Isin => (None, None),
        Own::Delivery => (c.optional(OWN, &mut errors), c.optional(OWN + 1, &mut errors)),
    };
    let figures =
        Figures { open, high, low, close, last, prev_close, volume, turnover, trades, delivery_qty, delivery_pct };
    if errors.is_empty() { Ok((isin, figures)) } else { Err(errors) }
}

/// The cells of one record, by the layout's column number.
pub(super) struct Cells<'a> {
    record: &'a csv::StringRecord,
    at: &'a [usize],
    columns: &'static [Column],
}

impl Cells<'_> {
    /// The trimmed cell of column `i`; `None` when it is empty or `-`.
    pub(super) fn get(&self, i: usize) -> Option<&str> {
        let cell = self.record.get(self.at[i]).unwrap_or("").trim();
        (!cell.is_empty() && cell != "-").then_some(cell)
    }

    fn name(&self, i: usize) -> &'static str {
        self.columns[i].name
    }

    /// A required value (a price or amount, a count).
    pub(super) fn required<T: CellValue + Default>(&self, i: usize, errors: &mut Vec<String>) -> T {
        let value = self.get(i).ok_or_else(|| "is empty".to_owned()).and_then(T::read);
        self.kept(i, value, errors)
    }

    /// A value that may be empty or `-`.
    pub(super) fn optional<T: CellValue>(&self, i: usize, errors: &mut Vec<String>) -> Option<T> {
        let value = self.get(i).map(T::read).transpose();
        self.kept(i, value, errors)
    }

    /// The value, or its default with the problem (named by its column)
    /// added to `errors`.
    pub(super) fn kept<T: Default>(&self, i: usize, value: Result<T, String>, errors: &mut Vec<String>) -> T {
        value.unwrap_or_else(|e| {
            errors.push(format!("{}: {e}", self.name(i)));
            T::default()
        })
    }
}

/// A value a cell holds, read from its trimmed text (neither empty nor
/// `-`), or a sentence saying what is wrong with it.
pub(super) trait CellValue: Sized {
    /// The value of `cell`.
    fn read(cell: &str) -> Result<Self, String>;
}

/// A price or amount.
impl CellValue for Paise {
    fn read(cell: &str) -> Result<Self, String> {
        Paise::parse(cell).map_err(|e| e.to_string())
    }
}

/// A count (shares, trades).
impl CellValue for u64 {
    fn read(cell: &str) -> Result<Self, String> {
        cell.parse().map_err(|_| format!("must be a whole number (got {cell:?})"))
    }
}

/// A percentage.
impl CellValue for Percent {
    fn read(cell: &str) -> Result<Self, String> {
        Percent::parse(cell).map_err(|e| e.to_string())
    }
}

/// Reads a daily file of either format.
pub(super) fn read(bytes: &[u8]) -> Result<DayFile, ImportError> {
    let mut errors = Vec::new();
    let text = text::decode(bytes, &mut errors)?;
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut lines = LineCounter::new(&text);
    let mut record = csv::StringRecord::new();

    // The header: the first record that is not blank.
    let (header_line, header) = match next(&mut reader, &mut record, &mut lines) {
        Next::Record(line) => {
            let mut cells: Vec<String> = record.iter().map(|c| c.trim().to_owned()).collect();
            if cells.len() > 1 && cells.last().is_some_and(String::is_empty) {
                cells.pop(); // UDiFF before 2024-07-08: a trailing comma
            }
            (line, cells)
        }
        Next::Broken(e) => return Err(ImportError::Rows(vec![e])),
        Next::End => return Err(ImportError::file("the file is empty")),
    };
    let layout = match Format::of_first_header_cell(&header[0]) {
        Some(Format::Udiff) => &udiff::LAYOUT,
        Some(Format::SecBhavdataFull) => &secbhav::LAYOUT,
        None => {
            return Err(ImportError::file(format!(
                "not an NSE daily file: its header starts with {:?}; UDiFF's starts with TradDt, \
                 sec_bhavdata_full's with SYMBOL",
                header[0]
            )));
        }
    };
    let at: Vec<usize> = match text::map_header(header_line, &header, layout.columns, HeaderRule::Lenient) {
        Ok(found) => found.into_iter().map(|i| i.expect("every column is required")).collect(),
        Err(e) => return Err(ImportError::Rows(e)),
    };

    let mut day = Day::default();
    let mut out =
        DayFile { format: layout.format, date: NaiveDate::MIN, rows: Vec::new(), skipped: Skipped::default() };
    let mut symbols: FirstSeen<(Ticker, Series)> = FirstSeen::new();
    let mut isins: FirstSeen<(Isin, Series)> = FirstSeen::new();
    let mut data_rows = 0usize;
    loop {
        let line = match next(&mut reader, &mut record, &mut lines) {
            Next::Record(line) => line,
            Next::Broken(e) => {
                errors.push(e);
                continue;
            }
            Next::End => break,
        };
        data_rows += 1;
        let n = record.len();
        let trailing = n == header.len() + 1 && record.get(n - 1).is_some_and(|c| c.trim().is_empty());
        if n != header.len() && !trailing {
            errors.push(RowError::new(
                line,
                format!("expected {} cells, one per header column, but found {n}", header.len()),
            ));
            continue;
        }
        let cells = Cells { record: &record, at: &at, columns: layout.columns };
        let mut problems = Vec::new();
        day.check(&cells, layout, line, &mut problems);
        let series = match cells.get(SERIES).map(Series::parse) {
            Some(Ok(series)) => series,
            Some(Err(e)) => {
                problems.push(format!("{}: {e}", layout.columns[SERIES].name));
                RowError::push_all(&mut errors, line, problems.into_iter().map(Some));
                continue;
            }
            None => {
                problems.push(format!("{} is empty", layout.columns[SERIES].name));
                RowError::push_all(&mut errors, line, problems.into_iter().map(Some));
                continue;
            }
        };
        if !series.is_equity() {
            *out.skipped.by_series.entry(series).or_default() += 1;
            RowError::push_all(&mut errors, line, problems.into_iter().map(Some));
            continue;
        }
        let symbol = parse_ticker(cells.get(SYMBOL).unwrap_or(""))
            .map_err(|e| problems.push(format!("{}: {e}", layout.columns[SYMBOL].name)))
            .ok();
        let figures = read_figures(layout, &cells).map_err(|mut e| problems.append(&mut e)).ok();
        if let Some(symbol) = &symbol {
            if let Some(first) = symbols.insert((symbol.clone(), series), line) {
                problems.push(format!("{symbol} {series} is also on line {first}: a file holds one row of each"));
            }
        }
        if let Some((Some(isin), _)) = &figures {
            if let Some(first) = isins.insert((isin.clone(), series), line) {
                problems.push(format!("{isin} {series} is also on line {first}: a file holds one row of each"));
            }
        }
        match (symbol, figures, day.date) {
            (Some(symbol), Some((isin, figures)), Some(date)) if problems.is_empty() => {
                if isin.as_ref().is_some_and(|i| i.as_str().starts_with("INF")) {
                    out.skipped.funds += 1;
                } else {
                    out.rows.push(BhavRow { line, date, symbol, series, isin, figures });
                }
            }
            _ => RowError::push_all(&mut errors, line, problems.into_iter().map(Some)),
        }
    }
    ImportError::check(errors)?;
    if data_rows == 0 {
        return Err(ImportError::file("no rows: the file has a header but no data rows"));
    }
    out.date = day.date.expect("a file with rows and no errors has its day");
    Ok(out)
}

/// The day of a file: the first row's, which every other row must have.
#[derive(Default)]
struct Day {
    /// The first row's cell, as written, and its day.
    cell: String,
    date: Option<NaiveDate>,
    line: usize,
}

impl Day {
    /// Checks a row's day against the file's (the first row's sets it).
    fn check(&mut self, cells: &Cells<'_>, layout: &Layout, line: usize, problems: &mut Vec<String>) {
        let name = layout.columns[DATE].name;
        let Some(cell) = cells.get(DATE) else {
            problems.push(format!("{name} is empty"));
            return;
        };
        if self.date.is_some() && cell == self.cell {
            return;
        }
        let Some(date) = (layout.date)(cell) else {
            problems.push(format!("{name} must be a date such as {} (got {cell:?})", layout.date_example));
            return;
        };
        match self.date {
            None => {
                self.cell = cell.to_owned();
                self.date = Some(date);
                self.line = line;
            }
            Some(first) if first != date => problems
                .push(format!("{name} is {date}, but line {} is of {first}: a daily file holds one day", self.line)),
            Some(_) => {}
        }
    }
}

/// What the next record is.
enum Next {
    /// A record that is not blank, read into the record, on this line.
    Record(usize),
    /// One that cannot be read.
    Broken(RowError),
    /// The end of the file.
    End,
}

fn next(reader: &mut csv::Reader<&[u8]>, record: &mut csv::StringRecord, lines: &mut LineCounter<'_>) -> Next {
    loop {
        match reader.read_record(record) {
            Ok(false) => return Next::End,
            Ok(true) => {
                let line = record.position().map_or(0, |p| lines.line_at(p.byte()));
                if record.len() == 1 && record[0].trim().is_empty() {
                    continue;
                }
                return Next::Record(line);
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| lines.line_at(p.byte()));
                return Next::Broken(RowError::new(line, format!("not readable as CSV: {e}")));
            }
        }
    }
}

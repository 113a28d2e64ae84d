//! The reading every parser shares: bytes to text (UTF-8, BOM, empty files),
//! CSV tables with physical line numbers, header columns, JSON Lines.

use std::borrow::Cow;

use serde::de::DeserializeOwned;

use crate::error::{ImportError, RowError};

/// The UTF-8 byte order mark, which spreadsheet programs put at the start of
/// CSV files they save as UTF-8.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Decodes a file: strips a UTF-8 BOM, refuses an empty file, and reports
/// every physical line that is not valid UTF-8. Such lines are decoded
/// lossily so the rest of the file can still be checked in the same pass.
pub(crate) fn decode<'a>(bytes: &'a [u8], errors: &mut Vec<RowError>) -> Result<Cow<'a, str>, ImportError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::file("the file is empty"));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text)),
        Err(_) => {
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                if let Err(e) = std::str::from_utf8(line) {
                    errors.push(not_utf8(i + 1, line, &e));
                }
            }
            Ok(String::from_utf8_lossy(bytes))
        }
    }
}

/// A CSV file split into its header and data records.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Table {
    /// Line of the header.
    pub(crate) header_line: usize,
    /// Data records with exactly one cell per header column.
    pub(crate) records: Vec<Record>,
}

/// One CSV data record.
#[derive(Debug)]
pub(crate) struct Record {
    /// Physical line the record starts on.
    pub(crate) line: usize,
    /// Cells, as written (not trimmed).
    pub(crate) cells: Vec<String>,
}

impl Record {
    /// The trimmed cell of column `index`.
    pub(crate) fn get(&self, index: usize) -> &str {
        self.cells[index].trim()
    }

    /// The trimmed cell of an optional column, `None` when the column is
    /// absent or the cell is empty.
    pub(crate) fn opt(&self, index: Option<usize>) -> Option<&str> {
        index.map(|i| self.get(i)).filter(|s| !s.is_empty())
    }
}

/// Reads a CSV table. A record with the wrong number of cells is reported and
/// left out. With `trailing_comma`, a record may have one extra, empty, last
/// cell (BSE ends every data row with a comma), and an empty last header cell
/// is dropped. Lines holding only white space are skipped.
#[cfg(test)]
pub(crate) fn read_csv(text: &str, trailing_comma: bool, errors: &mut Vec<RowError>) -> Result<Table, ImportError> {
    let mut rows = CsvRows::open(text, trailing_comma)?;
    let records = rows.by_ref().filter_map(|r| r.map_err(|e| errors.push(e)).ok()).collect();
    rows.finish()?;
    Ok(Table { header_line: rows.header_line, records })
}

/// A CSV file read one record at a time (a whole file of records is never
/// held): the header first ([`CsvRows::open`]), then each data record, or the
/// error of a record that cannot be one, with the same rules as [`read_csv`].
/// [`CsvRows::finish`] says whether there was any data row.
pub(crate) struct CsvRows<'a> {
    records: csv::StringRecordsIntoIter<&'a [u8]>,
    lines: LineCounter<'a>,
    trailing_comma: bool,
    data_records: usize,
    /// Line of the header.
    pub(crate) header_line: usize,
    /// Header cells, trimmed.
    pub(crate) header: Vec<String>,
}

impl<'a> CsvRows<'a> {
    /// Reads up to and including the header (the first line that is not
    /// blank). `Err` for a file without one.
    pub(crate) fn open(text: &'a str, trailing_comma: bool) -> Result<Self, ImportError> {
        let reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
        let mut rows = CsvRows {
            records: reader.into_records(),
            lines: LineCounter::new(text),
            trailing_comma,
            data_records: 0,
            header_line: 0,
            header: Vec::new(),
        };
        match rows.next_cells() {
            Some(Ok((line, cells))) => {
                let mut names: Vec<String> = cells.iter().map(|c| c.trim().to_owned()).collect();
                if trailing_comma && names.len() > 1 && names.last().is_some_and(String::is_empty) {
                    names.pop();
                }
                rows.header_line = line;
                rows.header = names;
                Ok(rows)
            }
            Some(Err(e)) => Err(ImportError::file(e.message)),
            None => Err(ImportError::file("the file is empty")),
        }
    }

    /// `Err` when the file had a header but no data rows.
    pub(crate) fn finish(&self) -> Result<(), ImportError> {
        if self.data_records == 0 {
            return Err(ImportError::file("no rows: the file has a header but no data rows"));
        }
        Ok(())
    }

    /// The next record that is not blank, as its line and cells.
    fn next_cells(&mut self) -> Option<Result<(usize, Vec<String>), RowError>> {
        loop {
            let record = match self.records.next()? {
                Ok(record) => record,
                Err(e) => {
                    // The input is in memory and valid UTF-8, so the csv crate
                    // has nothing left to fail on; report it all the same.
                    let line = e.position().map_or(0, |p| self.lines.line_at(p.byte()));
                    return Some(Err(RowError::new(line, format!("not readable as CSV: {e}"))));
                }
            };
            let line = record.position().map_or(0, |p| self.lines.line_at(p.byte()));
            let cells: Vec<String> = record.iter().map(str::to_owned).collect();
            if cells.len() == 1 && cells[0].trim().is_empty() {
                continue;
            }
            return Some(Ok((line, cells)));
        }
    }
}

impl Iterator for CsvRows<'_> {
    type Item = Result<Record, RowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line, mut cells) = match self.next_cells()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        self.data_records += 1;
        let expected = self.header.len();
        if self.trailing_comma && cells.len() == expected + 1 && cells.last().is_some_and(|c| c.trim().is_empty()) {
            cells.pop();
        }
        if cells.len() != expected {
            return Some(Err(RowError::new(
                line,
                format!("expected {expected} cells, one per header column, but found {}", cells.len()),
            )));
        }
        Some(Ok(Record { line, cells }))
    }
}

/// Turns the byte offsets of CSV records into physical line numbers.
///
/// The csv crate's own `Position::line` is not usable: it counts a CRLF line
/// end as one line and skips blank lines without counting them. Its byte
/// offset is exact, though it points at the line end before a record, so the
/// line is found by counting line feeds up to the record's first character.
pub(crate) struct LineCounter<'a> {
    text: &'a [u8],
    /// Offset up to which line feeds have been counted.
    offset: usize,
    /// Line feeds before `offset`.
    newlines: usize,
}

impl<'a> LineCounter<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        LineCounter { text: text.as_bytes(), offset: 0, newlines: 0 }
    }

    /// The 1-based line of the record starting at `byte`. Offsets must not
    /// decrease from one call to the next (records come in file order).
    pub(crate) fn line_at(&mut self, byte: u64) -> usize {
        let mut start = usize::try_from(byte).unwrap_or(usize::MAX).min(self.text.len());
        while start < self.text.len() && matches!(self.text[start], b'\r' | b'\n') {
            start += 1;
        }
        if start > self.offset {
            self.newlines += self.text[self.offset..start].iter().filter(|&&b| b == b'\n').count();
            self.offset = start;
        }
        self.newlines + 1
    }
}

/// A column a parser reads.
#[derive(Clone, Copy)]
pub(crate) struct Column {
    /// Its name in the header.
    pub(crate) name: &'static str,
    /// Whether a file without it is refused.
    pub(crate) required: bool,
}

impl Column {
    /// A column a file must have.
    pub(crate) const fn required(name: &'static str) -> Self {
        Column { name, required: true }
    }

    /// A column a file may leave out.
    pub(crate) const fn optional(name: &'static str) -> Self {
        Column { name, required: false }
    }
}

/// How a header is matched against the known columns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderRule {
    /// Our own format: names match exactly, an unknown column is an error.
    Strict,
    /// An exchange's format: names match ignoring ASCII case, columns we do
    /// not read are ignored (exchanges add columns).
    Lenient,
}

/// Finds each known column in the header: its index, or `None` for an absent
/// optional column. Unknown (under [`HeaderRule::Strict`]), repeated and
/// missing required columns are all reported on the header's line, `line`.
pub(crate) fn map_header(
    line: usize,
    header: &[String],
    known: &[Column],
    rule: HeaderRule,
) -> Result<Vec<Option<usize>>, Vec<RowError>> {
    let mut found: Vec<Option<usize>> = vec![None; known.len()];
    let mut errors = Vec::new();
    for (index, cell) in header.iter().enumerate() {
        let position = known.iter().position(|c| match rule {
            HeaderRule::Strict => c.name == cell,
            HeaderRule::Lenient => c.name.eq_ignore_ascii_case(cell),
        });
        match position {
            Some(k) if found[k].is_some() => {
                errors.push(RowError::new(line, format!("column {cell:?} appears more than once in the header")));
            }
            Some(k) => found[k] = Some(index),
            None if rule == HeaderRule::Strict => {
                let names: Vec<&str> = known.iter().map(|c| c.name).collect();
                errors.push(RowError::new(
                    line,
                    format!("unknown column {cell:?}; the columns are {}", names.join(", ")),
                ));
            }
            None => {}
        }
    }
    for (column, index) in known.iter().zip(&found) {
        if column.required && index.is_none() {
            errors.push(RowError::new(line, format!("required column {:?} is missing from the header", column.name)));
        }
    }
    if errors.is_empty() { Ok(found) } else { Err(errors) }
}

/// JSON Lines read one line at a time: one object of type `T` per
/// non-blank line ([`json_object`]), each with its line, or its error.
/// [`JsonRows::finish`] says whether there was any.
pub(crate) struct JsonRows<'a, T> {
    lines: std::iter::Enumerate<std::str::Split<'a, char>>,
    seen: usize,
    _values: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: DeserializeOwned> JsonRows<'a, T> {
    /// The lines of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        JsonRows { lines: text.split('\n').enumerate(), seen: 0, _values: std::marker::PhantomData }
    }

    /// `Err` when no line held anything.
    pub(crate) fn finish(&self) -> Result<(), ImportError> {
        if self.seen == 0 {
            return Err(ImportError::file("the file is empty"));
        }
        Ok(())
    }
}

impl<T: DeserializeOwned> Iterator for JsonRows<'_, T> {
    type Item = Result<(usize, T), RowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (i, line) = self.lines.next()?;
            let line_no = i + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            self.seen += 1;
            return Some(json_object(line_no, line).map(|value| (line_no, value)));
        }
    }
}

/// The problem of a line (`line_no`, its `bytes`) that is not UTF-8.
pub(crate) fn not_utf8(line_no: usize, bytes: &[u8], e: &std::str::Utf8Error) -> RowError {
    let at = e.valid_up_to();
    RowError::new(
        line_no,
        format!("not UTF-8 (byte 0x{:02X} at position {} of the line); save the file as UTF-8", bytes[at], at + 1),
    )
}

/// The value of one non-blank JSON Lines line (`line_no`, trimmed), which
/// must be an object.
pub(crate) fn json_object<T: DeserializeOwned>(line_no: usize, line: &str) -> Result<T, RowError> {
    // serde would read an array as the struct's fields in order, and
    // complain about a field the writer never meant to give.
    if !line.starts_with('{') {
        return Err(RowError::new(line_no, "not a JSON object: each line must hold one object, {...}"));
    }
    serde_json::from_str::<T>(line).map_err(|e| RowError::new(line_no, json_message(&e)))
}

/// serde_json's message without its "at line 1 column N" (each line is parsed
/// on its own, so its line would always be 1), with the column kept.
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => &full,
    };
    let prefix = match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON: ",
        _ => "",
    };
    if e.column() > 0 { format!("{prefix}{message} (column {})", e.column()) } else { format!("{prefix}{message}") }
}

/// The first line of each key seen, for reporting duplicates on the later
/// line (kept as `u32`: a file has fewer lines).
pub(crate) struct FirstSeen<K>(std::collections::HashMap<K, u32>);

impl<K: std::hash::Hash + Eq> FirstSeen<K> {
    /// An empty record.
    pub(crate) fn new() -> Self {
        FirstSeen(std::collections::HashMap::new())
    }

    /// Records `key` on `line`; returns the earlier line if it was seen before.
    pub(crate) fn insert(&mut self, key: K, line: usize) -> Option<usize> {
        match self.0.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => Some(*e.get() as usize),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(u32::try_from(line).unwrap_or(u32::MAX));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_quoted_line_breaks_and_blank_lines() {
        let mut errors = Vec::new();
        let text = "a,b\n1,\"x\ny\"\n\n2,z\n";
        let table = read_csv(text, false, &mut errors).unwrap();
        assert!(errors.is_empty());
        let lines: Vec<usize> = table.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![2, 5]);
    }

    #[test]
    fn lines_count_crlf_and_runs_of_blank_lines() {
        let mut errors = Vec::new();
        let table = read_csv("\r\na,b\r\n1,2\r\n\r\n\r\n3,4\n\n5,\"\r\n\"\r\n6,7", false, &mut errors).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(table.header_line, 2);
        let lines: Vec<usize> = table.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![3, 6, 8, 10]);
    }

    #[test]
    fn crlf_and_trailing_comma() {
        let mut errors = Vec::new();
        let table = read_csv("a,b\r\n1,2,\r\n3,4,\r\n", true, &mut errors).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(table.records[1].line, 3);
        assert_eq!(table.records[1].cells, vec!["3", "4"]);
    }

    #[test]
    fn non_utf8_lines_are_each_reported() {
        let mut errors = Vec::new();
        let text = decode(b"a\nb\xE9\nc\n\xFFd\n", &mut errors).unwrap();
        assert_eq!(errors.iter().map(|e| e.line).collect::<Vec<_>>(), vec![2, 4]);
        assert!(text.contains('c'));
    }

    #[test]
    fn json_messages_drop_the_line_and_keep_the_column() {
        let e = serde_json::from_str::<serde_json::Value>("{\"a\": }").unwrap_err();
        assert_eq!(json_message(&e), "not valid JSON: expected value (column 7)");
    }

    #[test]
    fn record_cells_are_trimmed() {
        let r = Record { line: 2, cells: vec![" a ".into(), "  ".into()] };
        assert_eq!(r.get(0), "a");
        assert_eq!(r.opt(Some(1)), None);
        assert_eq!(r.opt(None), None);
    }
}

//! The renderers of listed rows: JSON arrays, JSON Lines, CSV (the columns
//! `mds import companies` reads) and an aligned text table, written to
//! stdout or a file as pages arrive.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::Context;
use mds_client::CompanyListItem;

use super::args::Format;
use super::paging::Rows;

/// Where rows go: the file `output` names, else stdout.
pub(super) fn sink(output: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    Ok(match output {
        Some(p) => {
            let f = File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
            Box::new(BufWriter::new(f))
        }
        None => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

/// Writes listed rows (articles, actions) as they arrive: a JSON array, or
/// JSON Lines.
pub(super) struct JsonRows {
    sink: Box<dyn Write>,
    lines: bool,
    count: usize,
}

impl JsonRows {
    pub(super) fn new(sink: Box<dyn Write>, lines: bool) -> Self {
        JsonRows { sink, lines, count: 0 }
    }
}

impl<T: serde::Serialize> Rows<T> for JsonRows {
    fn rows(&mut self, rows: &[T]) -> io::Result<usize> {
        for a in rows {
            json_row(&mut self.sink, self.lines, self.count, a)?;
            self.count += 1;
        }
        Ok(self.count)
    }

    fn finish(&mut self) -> io::Result<()> {
        json_end(&mut self.sink, self.lines, self.count)?;
        self.sink.flush()
    }
}

/// Writes the row numbered `n` (from 0) of a JSON array, or of JSON Lines
/// (`lines`).
pub(super) fn json_row(sink: &mut dyn Write, lines: bool, n: usize, row: &impl serde::Serialize) -> io::Result<()> {
    if !lines {
        sink.write_all(if n == 0 { b"[\n" } else { b",\n" })?;
    }
    serde_json::to_writer(&mut *sink, row)?;
    if lines {
        sink.write_all(b"\n")?;
    }
    Ok(())
}

/// Ends a JSON array of `count` rows (JSON Lines need no end).
pub(super) fn json_end(sink: &mut dyn Write, lines: bool, count: usize) -> io::Result<()> {
    match (lines, count) {
        (true, _) => Ok(()),
        (false, 0) => sink.write_all(b"[]\n"),
        (false, _) => sink.write_all(b"\n]\n"),
    }
}

/// Writes rows in one format as they arrive (a table waits for the end, to
/// size its columns).
pub(super) struct Output {
    sink: Box<dyn Write>,
    format: Format,
    count: usize,
    table: Vec<CompanyListItem>,
}

impl Output {
    pub(super) fn new(sink: Box<dyn Write>, format: Format) -> Self {
        Output { sink, format, count: 0, table: Vec::new() }
    }
}

impl Rows<CompanyListItem> for Output {
    /// JSON keeps a search's `match`; CSV has the columns `mds import
    /// companies` reads, so none.
    fn rows(&mut self, rows: &[CompanyListItem]) -> io::Result<usize> {
        for c in rows {
            match self.format {
                Format::Json | Format::Jsonl => json_row(&mut self.sink, self.format == Format::Jsonl, self.count, c)?,
                Format::Csv => {
                    if self.count == 0 {
                        writeln!(self.sink, "{}", mds_import::csv_header())?;
                    }
                    writeln!(self.sink, "{}", mds_import::csv_row(c))?;
                }
                Format::Table => self.table.push(c.clone()),
            }
            self.count += 1;
        }
        Ok(self.count)
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.format {
            Format::Json | Format::Jsonl => json_end(&mut self.sink, self.format == Format::Jsonl, self.count)?,
            Format::Csv if self.count == 0 => writeln!(self.sink, "{}", mds_import::csv_header())?,
            Format::Table => self.table()?,
            _ => {}
        }
        self.sink.flush()
    }
}

impl Output {
    /// Writes the rows held back as a table, columns sized to fit; a
    /// search's rows with a last column, what each matched (`field:
    /// value`).
    fn table(&mut self) -> io::Result<()> {
        let matched = self.table.iter().any(|c| c.matched.is_some());
        let mut head = vec!["TICKER", "ISIN", "NAME", "EXCHANGES", "MARKET CAP", "INDUSTRY"];
        if matched {
            head.push("MATCH");
        }
        let rows: Vec<Vec<String>> = self
            .table
            .iter()
            .map(|c| {
                let ex = match (c.is_bse, c.is_nse) {
                    (true, true) => "BSE,NSE",
                    (true, false) => "BSE",
                    (false, true) => "NSE",
                    (false, false) => "-",
                };
                let mut row = vec![
                    c.ticker.to_string(),
                    c.isin.to_string(),
                    c.name.clone(),
                    ex.to_owned(),
                    c.market_cap_band.map_or("-", |b| b.as_str()).to_owned(),
                    c.industry.clone().unwrap_or_else(|| "-".into()),
                ];
                if matched {
                    row.push(c.matched.as_ref().map_or_else(|| "-".into(), |m| format!("{}: {}", m.field, m.value)));
                }
                row
            })
            .collect();
        let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, cell) in width.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let padded: Vec<String> =
                cells.iter().zip(&width).map(|(c, &w)| format!("{c}{}", " ".repeat(w - c.chars().count()))).collect();
            padded.join("  ").trim_end().to_owned()
        };
        writeln!(self.sink, "{}", line(&head))?;
        for r in &rows {
            let cells: Vec<&str> = r.iter().map(String::as_str).collect();
            writeln!(self.sink, "{}", line(&cells))?;
        }
        Ok(())
    }
}

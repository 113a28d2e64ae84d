//! `mds get`: the API as a consumer sees it, through [`mds_client`].
//!
//! The key comes from `MDS_API_KEY` only (never a flag, so it stays out of
//! shell history and process lists); the base URL from `MDS_BASE_URL`
//! (default `http://127.0.0.1:8080`). An API error is one line with the
//! problem's code and detail, and a non-zero exit.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use mds_client::{Client, Company, Exchange, MarketCapBand, Page};

/// Environment variable holding the API key.
const KEY_ENV: &str = "MDS_API_KEY";
/// Environment variable holding the base URL.
const BASE_ENV: &str = "MDS_BASE_URL";

/// What to fetch.
#[derive(Debug, Subcommand)]
pub(crate) enum GetCommand {
    /// Companies, one page (or every page with --all).
    Companies(CompaniesArgs),
    /// One news article, as JSON.
    News {
        /// The article's slug.
        slug: String,
    },
    /// Your key's tier, limits and usage, as JSON.
    Usage,
}

/// Filters and output of `mds get companies`.
#[derive(Debug, Args)]
pub(crate) struct CompaniesArgs {
    /// Tickers starting with this character (A-Z or 0-9).
    #[arg(long)]
    letter: Option<char>,
    /// Exact, case-sensitive industry.
    #[arg(long)]
    industry: Option<String>,
    /// Listed on this exchange: bse or nse.
    #[arg(long)]
    exchange: Option<Exchange>,
    /// Market-cap band: large_cap, mid_cap or small_cap.
    #[arg(long)]
    market_cap: Option<MarketCapBand>,
    /// Case-insensitive substring of the name or ticker (2-100 characters).
    #[arg(long)]
    search: Option<String>,
    /// Exact ticker, case-insensitive.
    #[arg(long)]
    ticker: Option<String>,
    /// Rows per request, 1-200 (the API's default is 50).
    #[arg(long)]
    limit: Option<u16>,
    /// Start at this cursor (the `next_cursor` of an earlier page).
    #[arg(long, conflicts_with = "all")]
    cursor: Option<String>,
    /// Follow every page to the end.
    #[arg(long)]
    all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of stdout (with progress on stderr).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Output formats of `mds get companies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A JSON array of companies.
    Json,
    /// One JSON company per line.
    Jsonl,
    /// CSV with a header of the V1Company field names (as `mds import companies` reads).
    Csv,
    /// An aligned text table.
    Table,
}

/// Runs `mds get …`.
pub(crate) async fn run(command: GetCommand) -> anyhow::Result<()> {
    let client = client()?;
    match command {
        GetCommand::Companies(args) => companies(&client, args).await,
        GetCommand::News { slug } => {
            let article = client.news(&slug).await?;
            outln!("{}", serde_json::to_string_pretty(&article)?)?;
            Ok(())
        }
        GetCommand::Usage => {
            let usage = client.usage().await?;
            outln!("{}", serde_json::to_string_pretty(&usage)?)?;
            Ok(())
        }
    }
}

/// The client from the environment.
fn client() -> anyhow::Result<Client> {
    let key = match std::env::var(KEY_ENV) {
        Ok(k) if !k.trim().is_empty() => k.trim().to_owned(),
        _ => anyhow::bail!("{KEY_ENV} is not set: export your API key (mds_live_…) in it"),
    };
    let base = std::env::var(BASE_ENV).unwrap_or_else(|_| mds_client::DEFAULT_BASE_URL.to_owned());
    Ok(Client::builder().base_url(base).api_key(key).build()?)
}

async fn companies(client: &Client, a: CompaniesArgs) -> anyhow::Result<()> {
    let mut req = client.companies();
    if let Some(v) = a.letter {
        req = req.letter(v);
    }
    if let Some(v) = a.industry {
        req = req.industry(v);
    }
    if let Some(v) = a.exchange {
        req = req.exchange(v);
    }
    if let Some(v) = a.market_cap {
        req = req.market_cap(v);
    }
    if let Some(v) = a.search {
        req = req.search(v);
    }
    if let Some(v) = a.ticker {
        req = req.ticker(v);
    }
    if let Some(v) = a.limit {
        req = req.limit(v);
    }
    if let Some(v) = a.cursor {
        req = req.cursor(v);
    }

    let (sink, path): (Box<dyn Write>, _) = match &a.output {
        Some(p) => {
            let f = File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
            (Box::new(BufWriter::new(f)), Some(p))
        }
        None => (Box::new(BufWriter::new(io::stdout().lock())), None),
    };
    let mut out = Output::new(sink, a.format);
    let progress = path.is_some();
    let mut pages = req.pages();
    let mut last: Option<Page<Company>> = None;
    while let Some(page) = pages.next_page().await? {
        out.rows(&page.data)?;
        if progress {
            eprint!("\r{} companies…", thousands(out.count));
        }
        let more = page.has_more;
        last = Some(page);
        if !a.all || !more {
            break;
        }
    }
    out.finish()?;
    if progress {
        eprintln!(
            "\r{} companies written to {}",
            thousands(out.count),
            path.map(|p| p.display().to_string()).unwrap_or_default()
        );
    }
    if !a.all {
        if let Some(Page { next_cursor: Some(c), has_more: true, .. }) = last {
            eprintln!("more companies follow: add --all, or --cursor {c}");
        }
    }
    Ok(())
}

/// Writes rows in one format as they arrive (a table waits for the end, to
/// size its columns).
struct Output {
    sink: Box<dyn Write>,
    format: Format,
    count: usize,
    table: Vec<Company>,
}

/// The CSV header: the V1Company field names, in wire order
/// ([`Company::FIELDS`], the columns `mds import companies` reads).
fn csv_header() -> String {
    Company::FIELDS.map(|(name, _)| name).join(",")
}

impl Output {
    fn new(sink: Box<dyn Write>, format: Format) -> Self {
        Output { sink, format, count: 0, table: Vec::new() }
    }

    fn rows(&mut self, rows: &[Company]) -> io::Result<()> {
        for c in rows {
            match self.format {
                Format::Json => {
                    self.sink.write_all(if self.count == 0 { b"[\n" } else { b",\n" })?;
                    serde_json::to_writer(&mut self.sink, c)?;
                }
                Format::Jsonl => {
                    serde_json::to_writer(&mut self.sink, c)?;
                    self.sink.write_all(b"\n")?;
                }
                Format::Csv => {
                    if self.count == 0 {
                        writeln!(self.sink, "{}", csv_header())?;
                    }
                    let line: Vec<String> = c.field_texts().iter().map(|v| csv_cell(v.unwrap_or(""))).collect();
                    writeln!(self.sink, "{}", line.join(","))?;
                }
                Format::Table => self.table.push(c.clone()),
            }
            self.count += 1;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.format {
            Format::Json if self.count == 0 => self.sink.write_all(b"[]\n")?,
            Format::Json => self.sink.write_all(b"\n]\n")?,
            Format::Csv if self.count == 0 => writeln!(self.sink, "{}", csv_header())?,
            Format::Table => self.table()?,
            _ => {}
        }
        self.sink.flush()
    }

    fn table(&mut self) -> io::Result<()> {
        let head = ["TICKER", "ISIN", "NAME", "EXCHANGES", "MARKET CAP", "INDUSTRY"];
        let rows: Vec<[String; 6]> = self
            .table
            .iter()
            .map(|c| {
                let ex = match (c.is_bse, c.is_nse) {
                    (true, true) => "BSE,NSE",
                    (true, false) => "BSE",
                    (false, true) => "NSE",
                    (false, false) => "-",
                };
                [
                    c.ticker.to_string(),
                    c.isin.to_string(),
                    c.name.clone(),
                    ex.to_owned(),
                    c.market_cap_band.map_or("-", |b| b.as_str()).to_owned(),
                    c.industry.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        let mut width = head.map(|h| h.chars().count());
        for r in &rows {
            for (w, cell) in width.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let padded: Vec<String> =
                cells.iter().zip(width).map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count()))).collect();
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

/// One CSV cell, quoted when it holds a comma, a quote or a line break.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

/// `12345` → `12,345`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(12345), "12,345");
        assert_eq!(thousands(1234567), "1,234,567");
    }

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
}

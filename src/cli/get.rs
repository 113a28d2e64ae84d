//! `mds get`: the API as a consumer sees it, through [`mds_client`].
//!
//! The key comes from `MDS_API_KEY` only (never a flag, so it stays out of
//! shell history and process lists); the base URL from `MDS_BASE_URL`
//! (default `http://127.0.0.1:8080`). An API error is one line with the
//! problem's code and detail, and a non-zero exit. The lists (companies,
//! news) print one page, or every page with `--all`, to stdout or a file.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand, ValueEnum};
use mds_client::{ArticleSummary, BillingMonth, Client, Company, Exchange, ListRequest, MarketCapBand};
use serde::de::DeserializeOwned;

use super::thousands;

/// Environment variable holding the API key.
const KEY_ENV: &str = "MDS_API_KEY";
/// Environment variable holding the base URL.
const BASE_ENV: &str = "MDS_BASE_URL";

/// What to fetch.
#[derive(Debug, Subcommand)]
pub(crate) enum GetCommand {
    /// Companies, one page (or every page with --all).
    Companies(CompaniesArgs),
    /// One company with everything the service knows about it, as JSON.
    Company {
        /// Its ISIN (case-insensitive).
        isin: String,
    },
    /// The change feed to its end: every company, or those changed since a sync token (a nightly sync).
    #[command(after_help = super::changes::AFTER_HELP)]
    Changes(super::changes::ChangesArgs),
    /// One news article with its body (given its slug), or the news list,
    /// newest first, without bodies (one page, or every page with --all).
    News(NewsArgs),
    /// Your key's tier, limits and usage, as JSON; with --daily, a month
    /// day by day as a bar chart.
    Usage(UsageArgs),
}

/// What `mds get usage` shows.
#[derive(Debug, Args)]
pub(crate) struct UsageArgs {
    /// The month day by day: a bar a day, the quota's daily share marked.
    #[arg(long)]
    daily: bool,
    /// With --daily: this month (YYYY-MM, UTC) instead of the current one;
    /// the current month or one of the twelve before it.
    #[arg(long, value_name = "YYYY-MM", requires = "daily")]
    month: Option<BillingMonth>,
    /// With --daily: the report as JSON instead of the chart.
    #[arg(long, requires = "daily")]
    json: bool,
}

/// The paging flags of the lists (`mds get companies`, `mds get news`).
#[derive(Debug, Args)]
pub(crate) struct PagingArgs {
    /// Start at this cursor (the `next_cursor` of an earlier page).
    #[arg(long, conflicts_with = "all")]
    cursor: Option<String>,
    /// Follow every page to the end.
    #[arg(long)]
    all: bool,
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
    #[command(flatten)]
    paging: PagingArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of stdout (with progress on stderr).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Filters and output of `mds get news`.
#[derive(Debug, Args)]
pub(crate) struct NewsArgs {
    /// The slug of one article to print, with its body, as JSON; without
    /// it, the news list.
    #[arg(conflicts_with_all = [
        "isin", "ticker", "category", "tag", "published_after", "published_before", "limit", "cursor", "all",
        "format", "output",
    ])]
    slug: Option<String>,
    /// Articles about the company with this ISIN.
    #[arg(long)]
    isin: Option<String>,
    /// Articles about the company with this ticker (case-insensitive).
    #[arg(long)]
    ticker: Option<String>,
    /// Exact category.
    #[arg(long)]
    category: Option<String>,
    /// Articles carrying this exact tag.
    #[arg(long)]
    tag: Option<String>,
    /// Published after this instant (RFC 3339 with an offset, e.g. 2026-01-01T00:00:00Z).
    #[arg(long, value_parser = instant)]
    published_after: Option<DateTime<Utc>>,
    /// Published before this instant (RFC 3339 with an offset).
    #[arg(long, value_parser = instant)]
    published_before: Option<DateTime<Utc>>,
    /// Articles per request, 1-200 (the API's default is 50).
    #[arg(long)]
    limit: Option<u16>,
    #[command(flatten)]
    paging: PagingArgs,
    /// Output format: a JSON array (json) or one article per line (jsonl).
    #[arg(long, value_enum, default_value_t = NewsFormat::Json)]
    format: NewsFormat,
    /// Write to this file instead of stdout (with progress on stderr).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// An instant given on the command line: RFC 3339 with an offset.
fn instant(s: &str) -> Result<DateTime<Utc>, String> {
    mds_domain::time::parse_rfc3339(s)
        .map_err(|_| "must be an RFC 3339 date-time with an offset, such as 2026-01-01T00:00:00Z".to_owned())
}

/// Output formats of `mds get news`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum NewsFormat {
    /// A JSON array of articles.
    Json,
    /// One JSON article per line.
    Jsonl,
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
        GetCommand::Company { isin } => {
            // Checked here, not by a request that would count against the quota.
            let isin = mds_client::Isin::parse(&isin)?;
            let detail = client.company(isin.as_str()).await?;
            outln!("{}", serde_json::to_string_pretty(&detail)?)?;
            Ok(())
        }
        GetCommand::Changes(args) => super::changes::run(&client, args).await,
        GetCommand::News(NewsArgs { slug: Some(slug), .. }) => {
            let article = client.news(&slug).await?;
            outln!("{}", serde_json::to_string_pretty(&article)?)?;
            Ok(())
        }
        GetCommand::News(args) => news(&client, args).await,
        GetCommand::Usage(UsageArgs { daily: false, .. }) => {
            let usage = client.usage().await?;
            outln!("{}", serde_json::to_string_pretty(&usage)?)?;
            Ok(())
        }
        GetCommand::Usage(UsageArgs { daily: true, month, json }) => {
            let report = client.usage_daily(month).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&report)?)?;
            } else {
                let chart = super::usage_chart::render(&report);
                io::stdout().lock().write_all(chart.as_bytes())?;
            }
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

/// `request` with each of the `flags` of `args` that was given passed to
/// the request's setter of the same name (the list flags of `mds get` are
/// named as the API's parameters).
macro_rules! with_flags {
    ($request:expr, $args:ident: $($flag:ident),+) => {{
        let mut request = $request;
        $(
            if let Some(v) = $args.$flag {
                request = request.$flag(v);
            }
        )+
        request
    }};
}

async fn companies(client: &Client, a: CompaniesArgs) -> anyhow::Result<()> {
    let req = with_flags!(client.companies(), a: letter, industry, exchange, market_cap, search, ticker, limit);
    let out = Output::new(sink(a.output.as_deref())?, a.format);
    list(req, a.paging, a.output.as_deref(), "companies", out).await
}

async fn news(client: &Client, a: NewsArgs) -> anyhow::Result<()> {
    let req = with_flags!(
        client.news_list(),
        a: isin, ticker, category, tag, published_after, published_before, limit
    );
    let out = JsonRows::new(sink(a.output.as_deref())?, a.format == NewsFormat::Jsonl);
    list(req, a.paging, a.output.as_deref(), "articles", out).await
}

/// Where rows go: the file `output` names, else stdout.
fn sink(output: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    Ok(match output {
        Some(p) => {
            let f = File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
            Box::new(BufWriter::new(f))
        }
        None => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

/// Where a list's rows go, page by page.
trait Rows<T> {
    /// Writes `rows`; returns how many rows were written so far.
    fn rows(&mut self, rows: &[T]) -> io::Result<usize>;
    /// Ends the output (a JSON array's bracket, a table) and flushes it.
    fn finish(&mut self) -> io::Result<()>;
}

/// What [`list`] fetched.
struct Listed {
    /// Rows written.
    count: usize,
    /// The cursor to go on from, when more rows follow and not all were asked for.
    more: Option<String>,
}

/// Fetches the first page of a list (from `--cursor` if given), or every
/// page with `--all`, writing each page's rows to `out` as it arrives; with
/// a file `output`, progress on stderr; then says where the rows went and
/// how to go on.
async fn list<T: DeserializeOwned + Send + 'static>(
    request: ListRequest<T>,
    paging: PagingArgs,
    output: Option<&Path>,
    noun: &str,
    mut out: impl Rows<T>,
) -> anyhow::Result<()> {
    let PagingArgs { cursor, all } = paging;
    let mut pages = match cursor {
        Some(c) => request.cursor(c),
        None => request,
    }
    .pages();
    let mut listed = Listed { count: 0, more: None };
    while let Some(page) = pages.next_page().await? {
        listed.count = out.rows(&page.data)?;
        if output.is_some() {
            eprint!("\r{} {noun}…", thousands(listed.count as u64));
        }
        if !all || !page.has_more {
            listed.more = page.next_cursor.filter(|_| page.has_more && !all);
            break;
        }
    }
    out.finish()?;
    listed.report(output, noun);
    Ok(())
}

impl Listed {
    /// Says on stderr where the rows went (for a file) and how to go on
    /// (when more follow).
    fn report(&self, output: Option<&Path>, noun: &str) {
        if let Some(p) = output {
            eprintln!("\r{} {noun} written to {}", thousands(self.count as u64), p.display());
        }
        if let Some(c) = &self.more {
            eprintln!("more {noun} follow: add --all, or --cursor {c}");
        }
    }
}

/// Writes listed articles as they arrive: a JSON array, or JSON Lines.
struct JsonRows {
    sink: Box<dyn Write>,
    lines: bool,
    count: usize,
}

impl JsonRows {
    fn new(sink: Box<dyn Write>, lines: bool) -> Self {
        JsonRows { sink, lines, count: 0 }
    }
}

impl Rows<ArticleSummary> for JsonRows {
    fn rows(&mut self, rows: &[ArticleSummary]) -> io::Result<usize> {
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
fn json_row(sink: &mut dyn Write, lines: bool, n: usize, row: &impl serde::Serialize) -> io::Result<()> {
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
fn json_end(sink: &mut dyn Write, lines: bool, count: usize) -> io::Result<()> {
    match (lines, count) {
        (true, _) => Ok(()),
        (false, 0) => sink.write_all(b"[]\n"),
        (false, _) => sink.write_all(b"\n]\n"),
    }
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
}

impl Rows<Company> for Output {
    fn rows(&mut self, rows: &[Company]) -> io::Result<usize> {
        for c in rows {
            match self.format {
                Format::Json | Format::Jsonl => json_row(&mut self.sink, self.format == Format::Jsonl, self.count, c)?,
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
        Ok(self.count)
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.format {
            Format::Json | Format::Jsonl => json_end(&mut self.sink, self.format == Format::Jsonl, self.count)?,
            Format::Csv if self.count == 0 => writeln!(self.sink, "{}", csv_header())?,
            Format::Table => self.table()?,
            _ => {}
        }
        self.sink.flush()
    }
}

impl Output {
    /// Writes the rows held back as a table, columns sized to fit.
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
}

//! The arguments of `mds get`'s subcommands: filters, paging flags and
//! output formats, as clap parses them.

use std::path::PathBuf;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, Utc};
use clap::{Args, ValueEnum};
use mds_client::{ActionType, Adjust, BillingMonth, CompanySort, Exchange, MarketCapBand, NewsSort, StatusFilter};

/// What `mds get usage` shows.
#[derive(Debug, Args)]
pub(crate) struct UsageArgs {
    /// The month day by day: a bar a day, the quota's daily share marked.
    #[arg(long)]
    pub(super) daily: bool,
    /// With --daily: this month (YYYY-MM, UTC) instead of the current one;
    /// the current month or one of the twelve before it.
    #[arg(long, value_name = "YYYY-MM", requires = "daily")]
    pub(super) month: Option<BillingMonth>,
    /// With --daily: the report as JSON instead of the chart.
    #[arg(long, requires = "daily")]
    pub(super) json: bool,
}

/// The paging flags and the destination of the lists (`mds get
/// companies`, `news`, and `actions`' calendar).
#[derive(Debug, Args)]
pub(crate) struct PagingArgs {
    /// Rows per request, 1-200 (the API's default is 50).
    #[arg(long)]
    pub(super) limit: Option<u16>,
    /// Start at this cursor (the `next_cursor` of an earlier page).
    #[arg(long, conflicts_with = "all")]
    pub(super) cursor: Option<String>,
    /// Follow every page to the end.
    #[arg(long)]
    pub(super) all: bool,
    /// Write to this file instead of stdout (with progress on stderr).
    #[arg(long, short)]
    pub(super) output: Option<PathBuf>,
}

/// Filters and output of `mds get companies`.
#[derive(Debug, Args)]
pub(crate) struct CompaniesArgs {
    /// Tickers starting with this character (A-Z or 0-9).
    #[arg(long)]
    pub(super) letter: Option<char>,
    /// Exact, case-sensitive industry.
    #[arg(long)]
    pub(super) industry: Option<String>,
    /// Listed on this exchange: bse or nse.
    #[arg(long)]
    pub(super) exchange: Option<Exchange>,
    /// Market-cap band: large_cap, mid_cap or small_cap.
    #[arg(long)]
    pub(super) market_cap: Option<MarketCapBand>,
    /// Case-insensitive substring of the name or ticker, current or former
    /// (2-100 characters); ranked by relevance, each row with what it
    /// matched (`match`; a MATCH column in the table).
    #[arg(long)]
    pub(super) search: Option<String>,
    /// The order: relevance (the default with --search, which it needs) or
    /// ticker.
    #[arg(long, value_parser = wire::<CompanySort>, requires = "search")]
    pub(super) sort: Option<CompanySort>,
    /// Exact ticker, case-insensitive.
    #[arg(long)]
    pub(super) ticker: Option<String>,
    /// Companies of this status: active (the API's default), superseded,
    /// delisted or any.
    #[arg(long, value_parser = wire::<StatusFilter>)]
    pub(super) status: Option<StatusFilter>,
    /// The master as it stood at the end of this day (YYYY-MM-DD, from
    /// 1990-01-01 up to today): that day's tickers and names.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = day)]
    pub(super) as_of: Option<NaiveDate>,
    #[command(flatten)]
    pub(super) paging: PagingArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub(super) format: Format,
}

/// Filters and output of `mds get news`.
#[derive(Debug, Args)]
pub(crate) struct NewsArgs {
    /// Articles about the company with this ISIN.
    #[arg(long)]
    pub(super) isin: Option<String>,
    /// Articles about the company with this ticker (case-insensitive).
    #[arg(long)]
    pub(super) ticker: Option<String>,
    /// Exact category.
    #[arg(long)]
    pub(super) category: Option<String>,
    /// Articles carrying this exact tag.
    #[arg(long)]
    pub(super) tag: Option<String>,
    /// Published after this instant (RFC 3339 with an offset, e.g. 2026-01-01T00:00:00Z).
    #[arg(long, value_parser = instant)]
    pub(super) published_after: Option<DateTime<Utc>>,
    /// Published before this instant (RFC 3339 with an offset).
    #[arg(long, value_parser = instant)]
    pub(super) published_before: Option<DateTime<Utc>>,
    /// Full-text search over headline, subheadline, excerpt and body: words
    /// (all required), "a phrase", prefix*; case and accents folded. Most
    /// relevant first.
    #[arg(long, value_name = "TEXT")]
    pub(super) q: Option<String>,
    /// The order of a search: relevance (the default with --q, which it
    /// needs) or published_at (newest first).
    #[arg(long, value_parser = wire::<NewsSort>, requires = "q")]
    pub(super) sort: Option<NewsSort>,
    #[command(flatten)]
    pub(super) paging: PagingArgs,
    /// Output format: a JSON array (json) or one article per line (jsonl).
    #[arg(long, value_enum, default_value_t = NewsFormat::Json)]
    pub(super) format: NewsFormat,
}

/// Filters and output of `mds get actions`.
#[derive(Debug, Args)]
pub(crate) struct ActionsArgs {
    /// The company with this ISIN: its actions, ex-date descending, with
    /// those of the ISINs it superseded (unless --no-lineage), all at once.
    /// Without it, the calendar: every company's, ex-date ascending.
    #[arg(long, conflicts_with_all = ["exchange", "limit", "cursor", "all"])]
    pub(super) isin: Option<String>,
    /// With --isin: that ISIN's own actions only.
    #[arg(long, requires = "isin")]
    pub(super) no_lineage: bool,
    /// Only actions of this type: dividend, bonus, split, consolidation,
    /// rights, buyback, demerger or other.
    #[arg(long = "type", value_name = "TYPE", value_parser = wire::<ActionType>)]
    pub(super) action_type: Option<ActionType>,
    /// Ex-dates on or after this day (YYYY-MM-DD).
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = any_day)]
    pub(super) from: Option<NaiveDate>,
    /// Ex-dates on or before this day (YYYY-MM-DD).
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = any_day)]
    pub(super) to: Option<NaiveDate>,
    /// Calendar: only actions this exchange published (bse or nse).
    #[arg(long)]
    pub(super) exchange: Option<Exchange>,
    #[command(flatten)]
    pub(super) paging: PagingArgs,
    /// Output format: a JSON array (json) or one action per line (jsonl).
    #[arg(long, value_enum, default_value_t = NewsFormat::Json)]
    pub(super) format: NewsFormat,
}

/// The query and output of `mds get prices`.
#[derive(Debug, Args)]
pub(crate) struct PricesArgs {
    /// The security's ISIN (case-insensitive): its bars, oldest first,
    /// with those of the ISINs it superseded (unless --no-lineage).
    pub(super) isin: String,
    /// The first day (YYYY-MM-DD, inclusive); by default a year before --to.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = any_day)]
    pub(super) from: Option<NaiveDate>,
    /// The last day (YYYY-MM-DD, inclusive); by default the last day loaded.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = any_day)]
    pub(super) to: Option<NaiveDate>,
    /// none (as published), split (splits, consolidations and bonuses
    /// applied: the API's default) or total (dividends and rights too).
    #[arg(long, value_parser = wire::<Adjust>)]
    pub(super) adjust: Option<Adjust>,
    /// That ISIN's own bars only.
    #[arg(long)]
    pub(super) no_lineage: bool,
    /// Output format: the answer as JSON (json, with the adjustments), the
    /// bars as CSV (csv, the API's text/csv columns), or a chart of the
    /// closes (table).
    #[arg(long, value_enum, default_value_t = PricesFormat::Json)]
    pub(super) format: PricesFormat,
}

/// Output formats of `mds get prices`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum PricesFormat {
    /// The answer as JSON: the bars and the adjustments applied.
    Json,
    /// The bars as CSV, with the API's header of the bar's field names.
    Csv,
    /// A chart of the closes, a row a day, ex-dates and ISIN changes named.
    Table,
}

/// A value of one of the API's query types (an adjustment, an action
/// type, a sort, a status filter) given on the command line, read by the
/// type's own `FromStr` (its error is clap's message).
fn wire<T: FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.parse()
}

/// A day given on the command line: `YYYY-MM-DD`, as the actions routes
/// read their bounds.
fn any_day(s: &str) -> Result<NaiveDate, String> {
    mds_domain::action_query::parse_day("it", s)
}

/// A day given on the command line: `YYYY-MM-DD` from 1990-01-01 (the
/// server checks it is not after its today).
pub(super) fn day(s: &str) -> Result<NaiveDate, String> {
    mds_domain::identity::parse_as_of(s, NaiveDate::MAX)
}

/// An instant given on the command line: RFC 3339 with an offset.
fn instant(s: &str) -> Result<DateTime<Utc>, String> {
    mds_domain::time::parse_rfc3339(s)
        .map_err(|_| "must be an RFC 3339 date-time with an offset, such as 2026-01-01T00:00:00Z".to_owned())
}

/// Output formats of `mds get news` and `mds get actions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum NewsFormat {
    /// A JSON array of articles.
    Json,
    /// One JSON article per line.
    Jsonl,
}

/// Output formats of `mds get companies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    /// A JSON array of companies.
    Json,
    /// One JSON company per line.
    Jsonl,
    /// CSV with a header of the V1Company field names (as `mds import companies` reads).
    Csv,
    /// An aligned text table.
    Table,
}

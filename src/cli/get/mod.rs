//! `mds get`: the API as a consumer sees it, through [`mds_client`].
//!
//! The key comes from `MDS_API_KEY` only (never a flag, so it stays out of
//! shell history and process lists); the base URL from `MDS_BASE_URL`
//! (default `http://127.0.0.1:8080`). An API error is one line with the
//! problem's code and detail, and a non-zero exit. The lists (companies,
//! news, the actions calendar) print one page, or every page with `--all`, to stdout or a file.
//!
//! # Layout
//! - `args`: the subcommands' arguments (filters, paging flags, formats).
//! - `paging`: one page or every page of a list, rows handed on as they come.
//! - `render`: JSON, JSON Lines, CSV and table output of listed rows.
//! - `changes`: `mds get changes`, the change feed walked to its end.
//! - `chart`: the bars the terminal charts draw.
//! - `usage_chart`: `mds get usage --daily`'s bar chart.
//! - `price_chart`: `mds get prices --format table`'s chart of the closes.

mod args;
pub(crate) mod changes;
mod chart;
mod paging;
mod price_chart;
mod render;
mod usage_chart;

use std::io::{self, Write};

use clap::Subcommand;
use mds_client::Client;

use args::{ActionsArgs, CompaniesArgs, NewsArgs, NewsFormat, PricesArgs, PricesFormat, UsageArgs};
use paging::list;
use render::{JsonRows, Output, sink};

/// Environment variable holding the API key.
const KEY_ENV: &str = "MDS_API_KEY";
/// Environment variable holding the base URL.
const BASE_ENV: &str = "MDS_BASE_URL";

/// What to fetch.
#[derive(Debug, Subcommand)]
pub(crate) enum GetCommand {
    /// Companies, one page (or every page with --all).
    Companies(CompaniesArgs),
    /// One company with everything the service knows about it, as JSON;
    /// its identity history with --history, or as it stood on a day with
    /// --as-of.
    Company {
        /// Its ISIN (case-insensitive).
        isin: String,
        /// Its identity events (listings, symbol, name and ISIN changes,
        /// delistings), oldest first, instead of the record.
        #[arg(long, conflicts_with = "as_of")]
        history: bool,
        /// The company as it stood at the end of this day (YYYY-MM-DD).
        #[arg(long, value_name = "YYYY-MM-DD", value_parser = args::day)]
        as_of: Option<chrono::NaiveDate>,
    },
    /// Every ISIN that has carried a symbol on an exchange, with when, as JSON.
    Symbol {
        /// The NSE symbol or BSE security id (case-insensitive).
        symbol: String,
        /// The exchange: nse (the default) or bse.
        #[arg(long, default_value = "nse")]
        exchange: mds_client::Exchange,
    },
    /// The change feed to its end: every company, or those changed since a sync token (a nightly sync).
    #[command(after_help = changes::AFTER_HELP)]
    Changes(changes::ChangesArgs),
    /// The news list, newest first, without bodies (one page, or every
    /// page with --all).
    News(NewsArgs),
    /// One news article with its body, as JSON.
    Article {
        /// The article's slug (as the news list gives it).
        slug: String,
    },
    /// Corporate actions: a company's (with --isin) or the calendar's (one
    /// page, or every page with --all).
    Actions(ActionsArgs),
    /// A security's end-of-day prices, oldest first, adjusted for splits
    /// and bonuses unless --adjust says otherwise: as JSON, CSV, or a chart
    /// of the closes (--format table).
    Prices(PricesArgs),
    /// Your key's tier, limits and usage, as JSON; with --daily, a month
    /// day by day as a bar chart.
    Usage(UsageArgs),
}

/// Runs `mds get …`.
pub(crate) async fn run(command: GetCommand) -> anyhow::Result<()> {
    let client = client()?;
    match command {
        GetCommand::Companies(args) => companies(&client, args).await,
        GetCommand::Company { isin, history, as_of } => {
            // Checked here, not by a request that would count against the quota.
            let isin = mds_client::Isin::parse(&isin)?;
            let json = match (history, as_of) {
                (true, _) => serde_json::to_string_pretty(&client.history(isin.as_str()).await?)?,
                (false, Some(day)) => serde_json::to_string_pretty(&client.company_as_of(isin.as_str(), day).await?)?,
                (false, None) => serde_json::to_string_pretty(&client.company(isin.as_str()).await?)?,
            };
            outln!("{json}")?;
            Ok(())
        }
        GetCommand::Symbol { symbol, exchange } => {
            let found = client.symbol(&symbol, exchange).await?;
            outln!("{}", serde_json::to_string_pretty(&found)?)?;
            Ok(())
        }
        GetCommand::Changes(args) => changes::run(&client, args).await,
        GetCommand::Article { slug } => {
            let article = client.article(&slug).await?;
            outln!("{}", serde_json::to_string_pretty(&article)?)?;
            Ok(())
        }
        GetCommand::News(args) => news(&client, args).await,
        GetCommand::Actions(args) => actions(&client, args).await,
        GetCommand::Prices(args) => prices(&client, args).await,
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
                let chart = usage_chart::render(&report);
                io::stdout().lock().write_all(chart.as_bytes())?;
            }
            Ok(())
        }
    }
}

/// The client from the environment.
pub(crate) fn client() -> anyhow::Result<Client> {
    let (key, base) = key_and_base()?;
    Ok(Client::builder().base_url(base).api_key(key).build()?)
}

/// The API key and the base URL from the environment (`mds get`, `mds mcp`).
pub(crate) fn key_and_base() -> anyhow::Result<(String, String)> {
    let key = match std::env::var(KEY_ENV) {
        Ok(k) if !k.trim().is_empty() => k.trim().to_owned(),
        _ => anyhow::bail!("{KEY_ENV} is not set: export your API key (mds_live_…) in it"),
    };
    let base = std::env::var(BASE_ENV).unwrap_or_else(|_| mds_client::DEFAULT_BASE_URL.to_owned());
    Ok((key, base))
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
    let req = with_flags!(
        client.companies(),
        a: letter, industry, exchange, market_cap, search, sort, ticker, status, as_of
    )
    .with_match();
    let out = Output::new(sink(a.paging.output.as_deref())?, a.format);
    list(req, a.paging, "companies", out).await
}

async fn news(client: &Client, a: NewsArgs) -> anyhow::Result<()> {
    let req = with_flags!(
        client.news_list(),
        a: isin, ticker, category, tag, published_after, published_before, q, sort
    );
    let out = JsonRows::new(sink(a.paging.output.as_deref())?, a.format == NewsFormat::Jsonl);
    list(req, a.paging, "articles", out).await
}

async fn actions(client: &Client, a: ActionsArgs) -> anyhow::Result<()> {
    let mut out = JsonRows::new(sink(a.paging.output.as_deref())?, a.format == NewsFormat::Jsonl);
    if let Some(isin) = &a.isin {
        // Checked here, not by a request that would count against the quota.
        let isin = mds_client::Isin::parse(isin)?;
        let mut req = client.company_actions(isin.as_str()).lineage(!a.no_lineage);
        req = with_flags!(req, a: action_type, from, to);
        let found = req.send().await?;
        paging::Rows::rows(&mut out, &found.data)?;
        paging::Rows::<mds_client::CorporateAction>::finish(&mut out)?;
        return Ok(());
    }
    let mut req = with_flags!(client.actions(), a: action_type, exchange);
    // The calendar names its bounds `ex_date_from` and `ex_date_to`.
    if let Some(d) = a.from {
        req = req.ex_date_from(d);
    }
    if let Some(d) = a.to {
        req = req.ex_date_to(d);
    }
    list(req, a.paging, "actions", out).await
}

async fn prices(client: &Client, a: PricesArgs) -> anyhow::Result<()> {
    // Checked here, not by a request that would count against the quota.
    let isin = mds_client::Isin::parse(&a.isin)?;
    let req = client.company_prices(isin.as_str()).lineage(!a.no_lineage);
    let found = with_flags!(req, a: from, to, adjust).send().await?;
    let text = match a.format {
        PricesFormat::Json => serde_json::to_string_pretty(&found)? + "\n",
        PricesFormat::Csv => {
            let mut csv = String::new();
            mds_client::Bar::csv_header(&mut csv);
            for b in &found.bars {
                b.write_csv(&mut csv);
            }
            csv
        }
        PricesFormat::Table => price_chart::render(&found),
    };
    io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

//! `mds serve` and `mds demo`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mds_domain::{AccountName, Environment, NewsFilter, TierName};
use mds_http::middleware::trace::otlp::{Tracer, traces_url};
use mds_http::{AppState, HttpConfig, Server, ServerConfig, shutdown_signal};
use mds_limits::SharedConfig;
use mds_node::admin::{AdminError, Audited};
use mds_node::webhooks::WebhookConfig;
use mds_node::{KeyCacheConfig, NodeConfig};
use mds_store::{DatabaseUrl, Store};

use super::{open_dated, open_migrated, parse_listen};

/// Options of `serve` and `demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Format of the log on stderr: `text` (one line a human reads) or
    /// `json` (one object per line: timestamp, level, target, message and
    /// the request's fields).
    #[arg(long, env = "MDS_LOG_FORMAT", value_enum, default_value = "text")]
    pub(crate) log_format: super::logging::LogFormat,
    /// Log lines held while stderr is slow; past that, access-log lines
    /// are dropped (counted in `mds_log_lines_dropped_total`) rather than
    /// make a request wait.
    #[arg(long, env = "MDS_LOG_BUFFER_LINES", default_value_t = 8192, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub(crate) log_buffer_lines: usize,
    /// Base URL of an OpenTelemetry receiver (`http://collector:4318`):
    /// each request's span is sent to it over OTLP/HTTP (JSON), at this URL
    /// with `/v1/traces` appended. Off by default.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_parser = traces_url)]
    otlp_endpoint: Option<reqwest::Url>,
    /// Address to listen on.
    #[arg(long, env = "MDS_LISTEN", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    listen: SocketAddr,
    /// Address of the admin listener (the admin API under /admin/v1, with
    /// admin tokens, and /metrics, which then leaves --listen); off by
    /// default.
    #[arg(long, env = "MDS_ADMIN_LISTEN", value_parser = parse_listen)]
    admin_listen: Option<SocketAddr>,
    /// Seconds a request may take before it is answered 503.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    request_timeout: u64,
    /// Seconds a request's head may take from its first byte before the
    /// connection is closed (half-sent requests).
    #[arg(long, env = "MDS_HEADER_READ_TIMEOUT", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    header_read_timeout: u64,
    /// Seconds a connection may stay open with no request in flight and no
    /// byte moved (idle keep-alive, a client that stopped reading).
    #[arg(long, env = "MDS_IDLE_TIMEOUT", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    idle_timeout: u64,
    /// Most client connections open at once (lowered to fit the open-file
    /// limit); at the cap, the one waiting longest between requests is
    /// closed to make room.
    #[arg(long, env = "MDS_MAX_CONNECTIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Seconds a shutdown (SIGTERM) lets requests in flight finish before it
    /// closes their connections; the final usage flush follows either way.
    #[arg(long, env = "MDS_SHUTDOWN_GRACE", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=600))]
    shutdown_grace: u64,
    /// Serve without rate limits, quotas and metering: only to measure their cost.
    #[arg(long)]
    no_limits: bool,
    /// MiB of company pages kept per catalog version, and again of news
    /// list pages per news generation, to answer a query asked before
    /// without making its page again; 0 keeps none.
    #[arg(long, env = "MDS_PAGE_CACHE_MIB", default_value_t = 8, value_parser = clap::value_parser!(u64).range(0..=4096))]
    page_cache_mib: u64,
    /// MiB of securities' whole price series kept per prices and actions
    /// generation, so that a series asked again with other dates or
    /// another adjustment is cut from memory, not read from the store; as
    /// much again of the market's days (`/v1/prices`); 0 keeps none.
    #[arg(long, env = "MDS_PRICE_SERIES_MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(0..=65536))]
    price_series_mib: u64,
    /// Redis shared by all nodes for rate limits and monthly counters
    /// (`redis://host:6379`); without it each node limits alone.
    #[arg(long, env = "MDS_REDIS_URL", hide_env_values = true)]
    redis: Option<String>,
    /// How many nodes share the limits: while Redis is unreachable each node
    /// allows this share of a key's per-minute limit.
    #[arg(long, env = "MDS_NODES", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    nodes: u32,
    /// With `--redis`: how long (ms) a node admits from a lease of a key's
    /// tokens before it gives back what it did not use; the longest one
    /// node can hold tokens another node is refused for.
    #[arg(long, env = "MDS_LEASE_TTL_MS", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    lease_ttl_ms: u64,
    /// The most keys a node keeps in memory (those used most recently); a
    /// key it does not keep is looked up in the store.
    #[arg(long, env = "MDS_KEY_CACHE", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(2..=100_000_000))]
    key_cache: u64,
    /// Store lookups a second a node may make for keys it does not keep
    /// (also the burst); beyond it such a key gets `503` with
    /// `Retry-After: 1`, so a flood of made-up keys cannot flood the store.
    #[arg(long, env = "MDS_KEY_LOOKUPS_PER_SECOND", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    key_lookups_per_second: u32,
    /// Directory where the node appends the usage counts it has not yet
    /// written to the store (one node per directory): a node killed and
    /// restarted on it loses no count. Off by default (a crash then loses
    /// up to one flush interval, ~1 s, of counts).
    #[arg(long, env = "MDS_SPILL_DIR")]
    spill_dir: Option<std::path::PathBuf>,
    /// With `--redis`: do not mirror the counts not yet written to the
    /// store into Redis (every 50 ms). With the mirror, a node that dies
    /// and never returns loses at most ~50 ms of its traffic, another node
    /// giving the store the rest; without, up to one flush interval (~1 s).
    #[arg(long, env = "MDS_NO_USAGE_MIRROR")]
    no_usage_mirror: bool,
    /// How many days the event log keeps events (`GET /v1/events`,
    /// streams, webhook replays); older ones are pruned, and a `since`
    /// among them is `410 events_expired`.
    #[arg(long, env = "MDS_EVENTS_RETENTION_DAYS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3650))]
    events_retention_days: u32,
    /// Let webhooks reach `http` URLs and private, loopback and link-local
    /// addresses: for development and tests only (said in the log).
    #[arg(long, env = "MDS_WEBHOOKS_ALLOW_PRIVATE")]
    webhooks_allow_private: bool,
    /// The browser origins `POST /mcp` accepts, comma-separated
    /// (`https://agent.example`); a request with another `Origin` is `403`,
    /// one without is accepted. Default: none.
    #[arg(long, env = "MDS_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    mcp_allowed_origins: Vec<String>,
    /// Bring the schema up to date before serving (a single node's unit
    /// passes it; several nodes run `mds migrate` once first). Without it,
    /// `mds serve` refuses a schema behind it with "run `mds migrate`".
    /// `mds demo` always migrates its own store.
    #[arg(long)]
    migrate: bool,
}

impl ServeArgs {
    fn config(&self, url: &DatabaseUrl) -> HttpConfig {
        if self.no_limits {
            tracing::warn!("rate limits, quotas and metering are OFF (--no-limits)");
        }
        if self.webhooks_allow_private {
            tracing::warn!(
                "webhooks may reach http URLs and private, loopback and link-local addresses \
                 (--webhooks-allow-private): development only"
            );
        }
        HttpConfig {
            request_timeout: Duration::from_secs(self.request_timeout),
            server: ServerConfig {
                header_read_timeout: Duration::from_secs(self.header_read_timeout),
                idle_timeout: Duration::from_secs(self.idle_timeout),
                max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
                shutdown_grace: Duration::from_secs(self.shutdown_grace),
            },
            node: NodeConfig {
                limits: !self.no_limits,
                page_cache_bytes: usize::try_from(self.page_cache_mib << 20).unwrap_or(usize::MAX),
                price_series_bytes: usize::try_from(self.price_series_mib << 20).unwrap_or(usize::MAX),
                key_cache: KeyCacheConfig {
                    capacity: usize::try_from(self.key_cache).unwrap_or(usize::MAX),
                    lookups_per_second: self.key_lookups_per_second,
                    ..KeyCacheConfig::default()
                },
                shared: self.redis.as_ref().map(|url| SharedConfig {
                    nodes: self.nodes,
                    lease_ttl: Duration::from_millis(self.lease_ttl_ms),
                    mirror: !self.no_usage_mirror,
                    ..SharedConfig::new(url.clone())
                }),
                spill_dir: self.spill_dir.clone(),
                events_retention: chrono::TimeDelta::days(i64::from(self.events_retention_days)),
                webhooks: WebhookConfig {
                    allow_private: self.webhooks_allow_private,
                    database: Some(url.clone()),
                    ..WebhookConfig::default()
                },
                ..NodeConfig::default()
            },
            mcp_allowed_origins: self
                .mcp_allowed_origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_owned())
                .filter(|o| !o.is_empty())
                .collect(),
            ..HttpConfig::default()
        }
    }
}

/// `mds serve`.
pub(crate) async fn serve(url: &DatabaseUrl, args: ServeArgs) -> anyhow::Result<()> {
    let config = args.config(url);
    // The store dates what it writes by the node's clock.
    let clock = config.node.clock.clone();
    let store = if args.migrate { open_migrated(url, clock).await? } else { open_dated(url, clock).await? };
    run_server(store, config, &args, |addr| tracing::info!(%addr, "serving")).await
}

/// Serves `store` with `config` until a shutdown signal.
async fn run_server(
    store: Arc<dyn Store>,
    mut config: HttpConfig,
    args: &ServeArgs,
    on_bound: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    if let Some(endpoint) = &args.otlp_endpoint {
        config.traces = Some(Tracer::start(endpoint.clone()).context("cannot start the trace exporter")?);
        tracing::info!(%endpoint, "exporting a span per request over OTLP/HTTP");
    }
    let tracer = config.traces.clone();
    let state = AppState::load(store, config).await.context("cannot load data from the store")?;
    let mut server =
        Server::bind(args.listen, state).await.with_context(|| format!("cannot listen on {}", args.listen))?;
    if let Some(admin) = args.admin_listen {
        server = server.with_admin(admin).await.with_context(|| format!("cannot listen on {admin} (admin)"))?;
        if let Some(addr) = server.admin_addr() {
            tracing::info!(admin = %addr?, "serving the admin API and /metrics");
        }
    }
    on_bound(server.local_addr()?);
    let served = server.run(shutdown_signal()).await.context("server failed");
    if let Some(tracer) = tracer {
        // The last requests' spans, before the process ends.
        tracer.flush(Duration::from_secs(2)).await;
    }
    served
}

/// The demo's price line: TTL's split-adjusted series through its split.
const TTL_PRICES: &str = "/v1/companies/INE592B01024/prices?from=2025-01-27&to=2025-02-25";
/// The demo's chart line: the same series as a terminal chart.
const TTL_CHART: &str = "mds get prices INE592B01024 --from 2025-01-27 --to 2025-02-25 --format table";

/// The demo account's name.
const DEMO_ACCOUNT: &str = "demo";
/// The tier of demo keys.
const DEMO_TIER: &str = "pro";

/// `mds demo`: loads the demo data into an empty store (the exchange lists
/// of 2024 and 2026 and NSE's change files, with their identity history,
/// the four corporate-action files, NSE's daily price files of
/// `data/prices/`, the news),
/// issues a demo key, prints it with curl lines (the company list, the news
/// list, the newest article with its body, a company's history, the
/// master as of a past day and a split-adjusted price series through a split)
/// and the command that charts that series, then serves.
pub(crate) async fn demo(url: &DatabaseUrl, args: ServeArgs) -> anyhow::Result<()> {
    let config = args.config(url);
    let store = open_migrated(url, config.node.clock.clone()).await?;
    if store.company_count().await? == 0 {
        // As an operator would, through the same node operation as `mds
        // import`: the 2024 lists, the 2026 ones, the change files, NSE's
        // and BSE's action files, NSE's daily price files, the news.
        let summaries = super::import::import_all(&store, &mds_import::demo::imports())
            .await
            .context("cannot load the demo's files")?;
        summaries.iter().for_each(super::import::warn);
        let days = store.price_days().await?;
        eprintln!(
            "loaded {} companies (NSE and BSE of {}, NSE of {}, NSE's change files), {} corporate actions (NSE's \
             and BSE's files), {} bars of {} trading days (NSE's daily files, {} to {}) and {} news articles into \
             {url}",
            store.company_count().await?,
            mds_import::demo::DAY_2024,
            mds_import::demo::DAY_2026,
            store.action_count().await?,
            days.iter().map(|d| d.bars).sum::<u64>(),
            days.len(),
            days.first().map_or_else(String::new, |d| d.date.to_string()),
            days.last().map_or_else(String::new, |d| d.date.to_string()),
            store.article_count().await?
        );
    } else {
        eprintln!("reusing the data already in {url}");
    }
    // The account and key through the audited operations, as `mds accounts
    // create` and `mds keys create` make them: the audit log shows them.
    let account = AccountName::parse(DEMO_ACCOUNT).expect("valid name");
    match Audited::cli(&*store).create_account(&account).await {
        Ok(_) | Err(AdminError::Conflict(_)) => {}
        Err(e) => return Err(e).context("cannot create the demo account"),
    }
    let tier = TierName::parse(DEMO_TIER).expect("valid name");
    let (key, _) = Audited::cli(&*store)
        .issue_key(&account, &tier, Environment::Live, None)
        .await
        .context("cannot issue the demo key")?;
    let secret = key.expose_secret().to_owned();
    // The newest article, so the lines go from the list to an article.
    let newest = store.news_page(&NewsFilter::default(), None, 1).await.context("cannot read the news list")?;
    let article = newest.first().map(|a| a.slug.clone());
    run_server(store, config, &args, move |addr| {
        println!("Demo key (account \"{DEMO_ACCOUNT}\", tier \"{DEMO_TIER}\"; a new one each run, shown only now):");
        println!("  {secret}");
        println!("Try:");
        let curl = |path: &str| println!("  curl -H \"Authorization: Bearer {secret}\" \"http://{addr}{path}\"");
        curl("/v1/companies?limit=3");
        curl("/v1/news?limit=3");
        if let Some(slug) = &article {
            curl(&format!("/v1/news/{slug}"));
        }
        // Identity over time: Bajaj Finance's pre-split ISIN, and the master
        // as it stood before TATAMOTORS became TMPV.
        curl("/v1/companies/INE296A01024/history");
        curl("/v1/companies?as_of=2024-06-01&ticker=TATAMOTORS");
        // End-of-day prices continued through TTL's split and ISIN change
        // (ex 2025-02-12), split-adjusted, the factor shown; and as a chart.
        curl(TTL_PRICES);
        println!("  MDS_API_KEY={secret} MDS_BASE_URL=http://{addr} {TTL_CHART}");
        println!("Serving on http://{addr} (Ctrl-C to stop)");
    })
    .await
}

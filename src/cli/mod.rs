//! The operator CLI: one subcommand per job, each in its own module.
//!
//! The commands that open the store take `--database URL` before the
//! command (env `MDS_DATABASE_URL`; default an embedded SQLite file); the
//! client commands (`get`, `events`, `mcp`) call the API and refuse it. Commands refuse bad input with a one-line reason
//! and a non-zero exit, and write nothing they refuse. Only `mds migrate`
//! (and `mds serve --migrate`, and `mds demo` on its own store) changes the
//! schema; every other command refuses a schema behind it with "run `mds
//! migrate`" (contract section 16).

/// `println!` that returns the write error instead of panicking, so output
/// piped into a command that exits early (`| head`) ends the command quietly.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

mod admin;
mod events;
mod get;
mod import;
pub(crate) mod logging;
mod mcp;
mod serve;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use mds_limits::{Clock, SystemClock};
use mds_store::{DatabaseUrl, Store, url::DEFAULT_DATABASE_URL};

/// `mds`: market-data API service.
#[derive(Debug, Parser)]
#[command(name = "mds", version, about = "Market-data API service: serve it, load its data, manage its keys.")]
pub(crate) struct Cli {
    /// Database URL: a SQLite file (`sqlite://mds.db?mode=rwc`, or a plain
    /// path) or `postgres://…`. For the commands that open the store (all
    /// but `get`, `events` and `mcp`, which call the API).
    #[arg(long, env = "MDS_DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    database: String,
    /// Whether `--database` was written on the command line (not taken
    /// from the environment or the default): a client command refuses it.
    #[arg(skip)]
    database_given: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One-command start: embedded store, demo data, a demo key, then serve.
    Demo(serve::ServeArgs),
    /// Serve the API (`--migrate`: bring the schema up to date first).
    Serve(serve::ServeArgs),
    /// Create or upgrade the schema: the one command that changes it.
    Migrate,
    /// Load files of one import format (companies, news, the exchanges'
    /// lists and change files, corporate actions), all or nothing.
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Manage tiers (rate limit and monthly quota).
    #[command(subcommand)]
    Tiers(admin::TiersCommand),
    /// Manage accounts and their entitlement.
    #[command(subcommand)]
    Accounts(admin::AccountsCommand),
    /// Issue, list and revoke API keys.
    #[command(subcommand)]
    Keys(admin::KeysCommand),
    /// Make, list and revoke admin tokens (for `serve --admin-listen`).
    #[command(subcommand)]
    AdminTokens(admin::AdminTokensCommand),
    /// Call the API as a client (key from env MDS_API_KEY, base URL from MDS_BASE_URL).
    #[command(subcommand)]
    Get(get::GetCommand),
    /// Follow the event stream in a terminal, or forward it, signed, to a
    /// local webhook receiver (key from env MDS_API_KEY, base URL from
    /// MDS_BASE_URL).
    #[command(subcommand)]
    Events(events::EventsCommand),
    /// Serve the MCP tools on stdio for a desktop agent, calling a running
    /// service (key from env MDS_API_KEY, base URL from MDS_BASE_URL).
    Mcp,
}

impl Cli {
    /// The command line, parsed (exits with clap's message when it is bad).
    pub(crate) fn from_env() -> Cli {
        let matches = <Cli as clap::CommandFactory>::command().get_matches();
        let mut cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
        cli.database_given = matches.value_source("database") == Some(clap::parser::ValueSource::CommandLine);
        cli
    }
}

/// Runs the parsed command.
pub(crate) async fn run(cli: Cli) -> anyhow::Result<()> {
    let url = DatabaseUrl::new(&cli.database);
    let client = match &cli.command {
        Command::Get(_) => Some("get"),
        Command::Events(_) => Some("events"),
        Command::Mcp => Some("mcp"),
        _ => None,
    };
    if let (Some(name), true) = (client, cli.database_given) {
        anyhow::bail!("`mds {name}` calls the API (MDS_BASE_URL, MDS_API_KEY) and opens no database: drop --database");
    }
    match cli.command {
        Command::Demo(args) => serve::demo(&url, args).await,
        Command::Serve(args) => serve::serve(&url, args).await,
        Command::Migrate => {
            let store = connect(&url, Arc::new(SystemClock)).await?;
            let before = store.schema().await.with_context(|| format!("cannot read the schema of {url}"))?;
            store.migrate().await.with_context(|| format!("cannot migrate {url}"))?;
            let after = store.schema().await.with_context(|| format!("cannot read the schema of {url}"))?;
            match after.applied.len() - before.applied.len() {
                0 => outln!("schema is up to date in {url} (version {})", after.version())?,
                n => outln!(
                    "applied {n} migration{} to {url}: schema version {} (was {})",
                    if n == 1 { "" } else { "s" },
                    after.version(),
                    before.version()
                )?,
            }
            Ok(())
        }
        Command::Import(c) => import::run(&open(&url).await?, c).await,
        Command::Tiers(c) => admin::tiers(&open(&url).await?, c).await,
        Command::Accounts(c) => admin::accounts(&open(&url).await?, c).await,
        Command::Keys(c) => admin::keys(&open(&url).await?, c).await,
        Command::AdminTokens(c) => admin::admin_tokens(&open(&url).await?, c).await,
        Command::Get(c) => get::run(c).await,
        Command::Events(c) => events::run(c).await,
        Command::Mcp => mcp::run().await,
    }
}

/// The exit status of a failed command: [`get::changes::EXIT_TOKEN_EXPIRED`]
/// when the service refused a sync token as expired (a script then syncs
/// from scratch), else 1.
pub(crate) fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain().any(|c| c.is::<get::changes::TokenExpired>()) { get::changes::EXIT_TOKEN_EXPIRED } else { 1 }
}

/// Opens the store, its schema as it is; what it writes is dated by
/// `clock` (a served node's own, `NodeConfig::clock`; the system's for the
/// operator commands).
async fn connect(url: &DatabaseUrl, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<dyn Store>> {
    mds_store::open_with_clock(url, clock).await.with_context(|| format!("cannot open {url}"))
}

/// Opens the store dated by the system clock, refusing a schema behind this
/// build ("run `mds migrate`") or ahead of it and not usable by it
/// ("upgrade mds").
async fn open(url: &DatabaseUrl) -> anyhow::Result<Arc<dyn Store>> {
    open_dated(url, Arc::new(SystemClock)).await
}

/// [`open`], what the store writes dated by `clock`.
async fn open_dated(url: &DatabaseUrl, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<dyn Store>> {
    let store = connect(url, clock).await?;
    let schema = store.schema().await.with_context(|| format!("cannot read the schema of {url}"))?;
    schema.current().with_context(|| format!("cannot use {url}"))?;
    Ok(store)
}

/// Opens the store, dated by `clock`, and brings its schema up to date
/// (`mds serve --migrate`, `mds demo`).
async fn open_migrated(url: &DatabaseUrl, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<dyn Store>> {
    let store = connect(url, clock).await?;
    store.migrate().await.with_context(|| format!("cannot migrate {url}"))?;
    Ok(store)
}

/// Parses a listen address (`127.0.0.1:8080`, `[::1]:0`).
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| format!("not a socket address (like 127.0.0.1:8080): {s:?}"))
}

/// `12345` → `12,345`.
fn thousands(n: u64) -> String {
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
}

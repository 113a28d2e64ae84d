//! `mds import`: loads companies, news, exchange snapshots or NSE's change
//! files, all or nothing. Every
//! bad row is reported with its line (on stderr), then one line says why
//! nothing was written. After an import that may have changed companies or
//! news, the company catalog or the news index of the new generation is
//! built and its snapshot saved in the store, for the serving nodes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Subcommand;
use mds_import::ImportError;
use mds_store::{IdentityImport, Store, UpsertSummary};

/// `mds import …`
#[derive(Debug, Subcommand)]
pub(crate) enum ImportCommand {
    /// Companies: CSV (header = V1Company field names) or JSON Lines; upsert by ISIN.
    Companies {
        /// The file.
        file: PathBuf,
    },
    /// News: JSON Lines of articles; upsert by slug.
    News {
        /// The file.
        file: PathBuf,
    },
    /// The exchanges' own daily files, each a full snapshot of its list as of one day,
    /// merged by ISIN; upsert by ISIN, and the identity events derived again. A snapshot
    /// older than the latest imported for its list is refused, nothing written.
    Exchanges {
        /// NSE's main board equity list (EQUITY_L.csv).
        #[arg(long)]
        nse: PathBuf,
        /// NSE's SME equity list (SME_EQUITY_L.csv).
        #[arg(long)]
        nse_sme: Option<PathBuf>,
        /// BSE's equity list (Equity.csv). Without it, companies keep their stored BSE
        /// listing and classification.
        #[arg(long)]
        bse: Option<PathBuf>,
        /// The day the lists are of (YYYY-MM-DD). Without it, the day in the NSE file's
        /// name (DDMMYYYY or YYYY-MM-DD), else today (said on stderr).
        #[arg(long, value_name = "YYYY-MM-DD")]
        as_of: Option<chrono::NaiveDate>,
        /// A market-capitalisation file in NSE's MCAP shape; sets market_cap_band by rank
        /// and each company's market cap (in crore).
        #[arg(long)]
        mcap: Option<PathBuf>,
        /// The day the market-capitalisation figures are of (YYYY-MM-DD). Without it, the
        /// day in the file's name (DDMMYYYY or YYYY-MM-DD, as NSE and its mirrors name
        /// them), else unknown.
        #[arg(long, value_name = "YYYY-MM-DD", requires = "mcap")]
        mcap_as_of: Option<chrono::NaiveDate>,
    },
    /// NSE's cumulative change files (symbolchange.csv, namechange.csv), with or without
    /// their header line; rows already stored are skipped, and the identity events are
    /// derived again. A bad line: its number, nothing imported.
    #[command(name = "nse-changes")]
    NseChanges {
        /// The symbol-change file.
        #[arg(long, required_unless_present = "names")]
        symbols: Option<PathBuf>,
        /// The name-change file.
        #[arg(long)]
        names: Option<PathBuf>,
    },
    /// NSE's corporate-actions CSV files (plain or .zst): each row resolved to the ISIN of
    /// its ex-date, NSE and BSE publications of one action made one; rows stored before
    /// change nothing. A bad line: its number, nothing imported.
    #[command(name = "nse-actions")]
    NseActions {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// List the rows resolved to no ISIN.
        #[arg(long)]
        verbose: bool,
    },
    #[command(name = "nse-bhavcopy")]
    NseBhavcopy(super::import_prices::NseBhavcopy),
    /// BSE's corporate-actions CSV files (plain or .zst), as `nse-actions`.
    #[command(name = "bse-actions")]
    BseActions {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// List the rows resolved to no ISIN.
        #[arg(long)]
        verbose: bool,
    },
}

/// Runs an import command.
pub(crate) async fn run(store: &Arc<dyn Store>, cmd: ImportCommand) -> anyhow::Result<()> {
    match cmd {
        ImportCommand::Companies { file } => {
            // Checked whole first (every bad row reported, nothing written),
            // then handed to the store a chunk at a time in one transaction:
            // the rows of a large file are never all in memory.
            let bytes = read(&file)?;
            parse(&file, &bytes, mds_import::check_companies)?;
            let mut chunks = mds_import::companies_in_chunks(&bytes, IMPORT_CHUNK);
            let s = store.upsert_company_chunks(&mut chunks).await.context("nothing was imported")?;
            drop(chunks);
            drop(bytes);
            report("companies", &file, s)?;
            snapshot_catalog(store).await;
        }
        ImportCommand::News { file } => {
            // Read a line at a time and handed to the store a chunk at a
            // time in one transaction: the file is never all in memory. A
            // bad line found half-way rolls back what was handed before.
            let reader = std::fs::File::open(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let mut refused = None;
            let mut chunks = mds_import::articles_in_chunks(std::io::BufReader::new(reader), IMPORT_CHUNK)
                .map(|chunk| chunk.map_err(|e| mds_store::StoreError::Invalid(refused.insert(e).summary())));
            let upserted = store.upsert_article_chunks(&mut chunks).await;
            drop(chunks);
            if let Some(e) = refused {
                return Err(refusal(&file, e));
            }
            report("articles", &file, upserted.context("nothing was imported")?)?;
            snapshot_news(store).await;
        }
        ImportCommand::Exchanges { nse, nse_sme, bse, as_of, mcap, mcap_as_of } => {
            // The NSE lists read packed, a record at a time, each file's
            // bytes dropped once read; the companies are made of the lists
            // an ISIN range at a time, as the store derives that range.
            let nse_list = parse(&nse, &read(&nse)?, mds_import::parse_nse_rows)?;
            let sme_list = match nse_sme.as_deref() {
                None => None,
                Some(f) => Some(parse(f, &read(f)?, mds_import::parse_nse_sme_rows)?),
            };
            let bse_list = match bse.as_deref() {
                None => None,
                Some(f) => Some(parse(f, &read(f)?, mds_import::parse_bse_equity_list)?),
            };
            let mcap_list = match mcap.as_deref() {
                None => None,
                Some(m) => {
                    let day = mcap_as_of.or_else(|| day_in_name(m));
                    Some(parse(m, &read(m)?, mds_import::parse_nse_mcap)?.with_as_of(day))
                }
            };
            let as_of = match as_of.or_else(|| day_in_name(&nse)) {
                Some(d) => d,
                None => {
                    let today = chrono::Utc::now().date_naive();
                    eprintln!(
                        "note: no --as-of and no date in {}'s name: the lists are taken as of today, {today}",
                        nse.display()
                    );
                    today
                }
            };
            let snapshots = mds_import::snapshot_import(nse_list, sme_list, bse_list, mcap_list, as_of)
                .map_err(|e| anyhow::anyhow!("{e}; nothing was imported"))?;
            for note in &snapshots.notes {
                eprintln!("note: {note}");
            }
            let s = store.import_snapshots(&snapshots.import).await.context("nothing was imported")?;
            let files: Vec<String> = [Some(&nse), nse_sme.as_ref(), bse.as_ref()]
                .into_iter()
                .flatten()
                .map(|f| f.display().to_string())
                .collect();
            outln!(
                "imported {} companies from {} as of {as_of} ({} new, {} updated, {} unchanged; {} rows without an ISIN skipped)",
                snapshots.import.companies.len(),
                files.join(", "),
                s.companies.inserted,
                s.companies.updated,
                s.companies.unchanged,
                snapshots.skipped_without_isin
            )?;
            report_identity(&s)?;
            drop(snapshots);
            if s.generation.is_some() {
                snapshot_catalog(store).await;
            }
        }
        ImportCommand::NseChanges { symbols, names } => {
            let symbol_rows = match symbols.as_deref() {
                None => Vec::new(),
                Some(f) => parse(f, &read(f)?, mds_import::parse_symbol_changes)?,
            };
            let name_rows = match names.as_deref() {
                None => Vec::new(),
                Some(f) => parse(f, &read(f)?, mds_import::parse_name_changes)?,
            };
            let s = store.import_nse_changes(&symbol_rows, &name_rows).await.context("nothing was imported")?;
            outln!(
                "imported {} symbol changes and {} name changes ({} new to the store)",
                symbol_rows.len(),
                name_rows.len(),
                s.change_rows
            )?;
            report_identity(&s)?;
            drop((symbol_rows, name_rows));
            if s.generation.is_some() {
                snapshot_catalog(store).await;
            }
        }
        ImportCommand::NseActions { files, verbose } => {
            super::import_actions::run(store, mds_domain::Exchange::Nse, &files, verbose).await?;
        }
        ImportCommand::NseBhavcopy(args) => super::import_prices::run(store, args).await?,
        ImportCommand::BseActions { files, verbose } => {
            super::import_actions::run(store, mds_domain::Exchange::Bse, &files, verbose).await?;
        }
    }
    Ok(())
}

/// A day in a file's name (DDMMYYYY or YYYY-MM-DD), as NSE and its mirrors
/// name their files.
fn day_in_name(file: &Path) -> Option<chrono::NaiveDate> {
    file.file_name().and_then(|n| n.to_str()).and_then(mds_import::exchange::mcap_day_from_file_name)
}

/// The second line of an identity import's report: what it did to the
/// snapshots, the events and the companies' stamps.
fn report_identity(s: &IdentityImport) -> std::io::Result<()> {
    outln!(
        "identity: {} snapshots added ({} rows new or changed, {} gone or changed), {} events stored, {} ISINs whose events changed; {}",
        s.snapshots,
        s.runs_opened,
        s.runs_closed,
        s.events,
        s.isins_changed,
        match s.generation {
            Some(g) => format!("companies generation {g}"),
            None => "no company changed".to_owned(),
        }
    )
}

/// Builds the new company catalog and saves its snapshot in the store, so
/// serving nodes load it instead of each building it. The import itself has
/// succeeded either way: a failure here is a warning (nodes then build).
async fn snapshot_catalog(store: &Arc<dyn Store>) {
    let result = async {
        let generation = store.generations().await?.companies;
        mds_node::catalog_load::rebuild(store, generation).await
    };
    if let Err(e) = result.await {
        eprintln!("warning: the catalog snapshot was not saved ({e}); serving nodes will build the catalog themselves");
    }
}

/// Builds the news index of the store's news generation and saves its
/// snapshot in the store, so serving nodes load it instead of each reading
/// every article. The import holds nothing else by then (its chunks and
/// file are dropped), and the index is dropped once encoded. The import
/// has succeeded either way: a failure here is a warning (nodes then build).
async fn snapshot_news(store: &Arc<dyn Store>) {
    let result = async {
        let generation = store.generations().await?.news;
        mds_node::news_load::rebuild(&**store, generation).await
    };
    match result.await {
        Ok(true) => {}
        Ok(false) => eprintln!(
            "warning: the news changed while its index was built, so no news index snapshot was saved; serving nodes will build the news index themselves"
        ),
        Err(e) => eprintln!(
            "warning: the news index snapshot was not saved ({e}); serving nodes will build the news index themselves"
        ),
    }
}

/// Rows (companies, articles) handed to the store at a time by an import.
const IMPORT_CHUNK: usize = 5_000;

/// The bytes of an import file.
pub(super) fn read(file: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
}

/// Parses (or checks) the bytes of `file`; on failure prints every row error
/// and returns the one-line reason.
fn parse<T>(file: &Path, bytes: &[u8], parser: impl Fn(&[u8]) -> Result<T, ImportError>) -> anyhow::Result<T> {
    parser(bytes).map_err(|e| refusal(file, e))
}

/// Prints every row error of the refused `file` and returns the one-line
/// reason.
pub(super) fn refusal(file: &Path, e: ImportError) -> anyhow::Error {
    for r in e.rows() {
        eprintln!("{}:{}: {}", file.display(), r.line, r.message);
    }
    anyhow::anyhow!("{}: {}; nothing was imported", file.display(), e.summary())
}

fn report(what: &str, file: &Path, s: UpsertSummary) -> std::io::Result<()> {
    outln!(
        "imported {} {what} from {} ({} new, {} updated, {} unchanged)",
        s.inserted + s.updated + s.unchanged,
        file.display(),
        s.inserted,
        s.updated,
        s.unchanged
    )
}

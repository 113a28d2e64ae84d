//! `mds import`: loads companies or news from a file, all or nothing. Every
//! bad row is reported with its line (on stderr), then one line says why
//! nothing was written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Subcommand;
use mds_import::ImportError;
use mds_store::{Store, UpsertSummary};

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
    /// The exchanges' own daily files, merged by ISIN; upsert by ISIN.
    Exchanges {
        /// NSE's equity list (EQUITY_L.csv).
        #[arg(long)]
        nse: PathBuf,
        /// BSE's equity list (Equity.csv).
        #[arg(long)]
        bse: PathBuf,
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
        }
        ImportCommand::Exchanges { nse, bse, mcap, mcap_as_of } => {
            let nse_list = parse(&nse, &read(&nse)?, mds_import::parse_nse_equity_list)?;
            let bse_list = parse(&bse, &read(&bse)?, mds_import::parse_bse_equity_list)?;
            let mcap_list = match mcap.as_deref() {
                None => None,
                Some(m) => {
                    let day = mcap_as_of.or_else(|| {
                        m.file_name().and_then(|n| n.to_str()).and_then(mds_import::exchange::mcap_day_from_file_name)
                    });
                    Some(parse(m, &read(m)?, mds_import::parse_nse_mcap)?.with_as_of(day))
                }
            };
            let merged = mds_import::merge(&nse_list, &bse_list, mcap_list.as_ref());
            for note in &merged.notes {
                eprintln!("note: {note}");
            }
            let s = store.upsert_companies(&merged.companies).await.context("nothing was imported")?;
            outln!(
                "imported {} companies from {} and {} ({} new, {} updated, {} unchanged; {} rows without an ISIN skipped)",
                merged.companies.len(),
                nse.display(),
                bse.display(),
                s.inserted,
                s.updated,
                s.unchanged,
                merged.skipped_without_isin
            )?;
            drop(merged);
            snapshot_catalog(store).await;
        }
    }
    Ok(())
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

/// Rows (companies, articles) handed to the store at a time by an import.
const IMPORT_CHUNK: usize = 5_000;

/// The bytes of an import file.
fn read(file: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
}

/// Parses (or checks) the bytes of `file`; on failure prints every row error
/// and returns the one-line reason.
fn parse<T>(file: &Path, bytes: &[u8], parser: impl Fn(&[u8]) -> Result<T, ImportError>) -> anyhow::Result<T> {
    parser(bytes).map_err(|e| refusal(file, e))
}

/// Prints every row error of the refused `file` and returns the one-line
/// reason.
fn refusal(file: &Path, e: ImportError) -> anyhow::Error {
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

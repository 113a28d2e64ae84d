//! The write of NSE's daily price files (`mds import nse-bhavcopy
//! PATH...`, contract 14.1; the format is [`mds_import::bhavcopy::FORMAT`],
//! its input [`Input::Prices`](mds_import::format::Input::Prices)): the
//! days of either format, from files, directories and archives, made into
//! bars and written to the store in one transaction: every day or none,
//! each day written announced by a `prices.published` event in it.
//!
//! # How a run goes
//! - A thread reads the files ([`DayFiles::for_each_day`]: each daily file
//!   parsed, equity series only, the others skipped and counted) and
//!   resolves its rows to ISINs ([`Resolver`]), handing one file's day at
//!   a time over a bounded channel: a run holds a few days, never an
//!   archive.
//! - The store writes each day handed
//!   ([`PriceStore::import_days`](mds_store::PriceStore::import_days)),
//!   merged with what the day holds by [`merge_day`], in one transaction.
//!   A bad file ends the run with its reason ([`ImportFailure::Refused`]),
//!   nothing written.
//! - [`summary`]: what was read, resolved, paired and written, with counts
//!   that add up a row at a time.
//!
//! # Resolution
//! An ISIN-keyed (UDiFF) row names its ISIN: `isin_source: "file"`. A
//! symbol-keyed (`sec_bhavdata_full`) row's ISIN is the one whose NSE period
//! of the symbol (section 10, the catalog's) holds the row's day, periods
//! being half-open (on the day a split's new ISIN takes the symbol over, the
//! new one): `isin_source: "symbol"`. A row no period holds is unresolved,
//! and so are two rows of one file that resolve to one ISIN and series
//! (ambiguous): counted and listed, never guessed, never stored.
//!
//! # The two formats of one day ([`merge_day`])
//! The two formats' rows are one bar when day, symbol and series agree (or
//! day, ISIN and series). The ISIN-keyed row wins, whichever is imported
//! last, and where the two disagree on a published figure
//! ([`mds_import::bhavcopy::check`]) the disagreement is reported; the
//! figures only the symbol-keyed file has (`last` when the ISIN-keyed file
//! left it empty, the delivery figures) are taken from it. A day handed in
//! one format replaces what the day held in that format and keeps what it
//! held in the other, so importing the same files again, or in another
//! order, gives the same day (unchanged: nothing written).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use chrono::NaiveDate;
use mds_catalog::{Catalog, ChangeStamp};
use mds_domain::prices::{IsinSource, Series};
use mds_domain::snapshot::daily::Daily;
use mds_domain::{Exchange, Isin, SymbolPeriod, Ticker};
use mds_import::bhavcopy::check::{Disagreement, compare};
use mds_import::bhavcopy::{BhavRow, BhavcopyError, DayFile, DayFiles, Format, Skipped};
use mds_store::{DayBars, IdentityNow, PriceImport, PriceStep, Store, StoreError, StoredBar, SymbolPeriods, SymbolRow};

use super::{Counts, ImportFailure, Summary};

/// Daily files read ahead of the store: enough to keep the reading thread
/// and the writes busy at once, few enough to hold a handful of days.
const READ_AHEAD: usize = 4;

/// A symbol-keyed row left without an ISIN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedRow {
    /// The file it is in (`archive:member` for an archive's member),
    /// shared by the rows of one file.
    pub file: Arc<str>,
    /// Its line (1 = the header).
    pub line: usize,
    /// Its day.
    pub date: NaiveDate,
    /// The symbol.
    pub symbol: Ticker,
    /// The series.
    pub series: Series,
    /// Why: no ISIN carried the symbol that day, or another row of the
    /// file resolved to the same ISIN and series.
    pub ambiguous: bool,
}

/// What an import of daily files read and did. The counts add up:
/// `rows_read = isin_keyed + symbol_keyed + skipped.total()`,
/// `symbol_keyed = resolved + unresolved.len()`, and a row at a time
/// ([`BhavcopyImport::counts`]) `rows_read = rows.new + rows.changed +
/// rows.unchanged + rows.set_aside`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BhavcopyImport {
    /// UDiFF files read.
    pub udiff_files: u64,
    /// `sec_bhavdata_full` files read.
    pub secbhav_files: u64,
    /// Data rows read (the header aside).
    pub rows_read: u64,
    /// Rows left out: not of an equity series, or funds' (`INF…`).
    pub skipped: Skipped,
    /// Equity rows of ISIN-keyed files.
    pub isin_keyed: u64,
    /// Equity rows of symbol-keyed files.
    pub symbol_keyed: u64,
    /// Symbol-keyed rows resolved to an ISIN.
    pub resolved: u64,
    /// Symbol-keyed rows resolved to none, in the order read.
    pub unresolved: Vec<UnresolvedRow>,
    /// Bars of one format met by the other format's row of the same bar
    /// (the ISIN-keyed row kept).
    pub same_bar: u64,
    /// Every published figure on which such a pair differs.
    pub disagreements: Vec<Disagreement>,
    /// The distinct days of the files, with the bars each holds after
    /// the import: ISIN-keyed, then symbol-keyed.
    pub days: BTreeMap<NaiveDate, (u64, u64)>,
    /// What the store did with the days handed (one per file).
    pub store: PriceImport,
    /// The rows read, each once: an equity bar of a day new to the store,
    /// of a day it changed, or of a day left as it was; or set aside (a
    /// row of another series or a fund's, a symbol-keyed row resolved to no
    /// ISIN, a symbol-keyed row that is the same bar as an ISIN-keyed one).
    pub rows: Counts,
}

impl BhavcopyImport {
    /// Bars held by the days of the import, ISIN-keyed and symbol-keyed.
    pub fn bars_held(&self) -> (u64, u64) {
        self.days.values().fold((0, 0), |(f, s), (df, ds)| (f + df, s + ds))
    }

    /// The rows read, each once (see [`BhavcopyImport::rows`]).
    pub fn counts(&self) -> Counts {
        self.rows
    }
}

/// Resolves symbol-keyed rows to ISINs through the catalog's symbol
/// periods (section 10), each symbol's periods looked up once.
pub struct Resolver {
    catalog: Arc<Catalog>,
    periods: HashMap<Ticker, Vec<SymbolPeriod>>,
}

impl Resolver {
    /// A resolver over the catalog's periods.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        Resolver { catalog, periods: HashMap::new() }
    }

    /// The ISIN whose NSE period of `symbol` holds `date`; `None` when no
    /// period does, or (never seen in the data, but not guessed) when two
    /// ISINs' periods do.
    pub fn isin_on(&mut self, symbol: &Ticker, date: NaiveDate) -> Option<Isin> {
        let catalog = &self.catalog;
        let periods = self
            .periods
            .entry(symbol.clone())
            .or_insert_with(|| catalog.symbol_history(Exchange::Nse, symbol).map(|h| h.periods).unwrap_or_default());
        let mut holding = periods.iter().filter(|p| p.from <= date && p.to.is_none_or(|to| date < to));
        let first = holding.next()?;
        holding.all(|p| p.isin == first.isin).then(|| first.isin.clone())
    }

    /// The bars of a file read and its rows left unresolved, with those
    /// rows as the store keeps them (to resolve when a later import makes
    /// their ISIN known).
    fn day_kept(&mut self, file: &str, day: &DayFile) -> ((Vec<StoredBar>, Vec<UnresolvedRow>), Vec<SymbolRow>) {
        let (bars, lost) = self.resolve(file, day);
        let by_line: HashMap<usize, &BhavRow> = day.rows.iter().map(|r| (r.line, r)).collect();
        let kept = lost
            .iter()
            .filter_map(|u| by_line.get(&u.line))
            .map(|r| SymbolRow { symbol: r.symbol.clone(), series: r.series, figures: r.figures })
            .collect();
        ((bars, lost), kept)
    }

    /// The bars of a file read, and its rows left unresolved.
    fn resolve(&mut self, file: &str, day: &DayFile) -> (Vec<StoredBar>, Vec<UnresolvedRow>) {
        let file: Arc<str> = Arc::from(file);
        let unresolved = |r: &BhavRow, ambiguous| UnresolvedRow {
            file: Arc::clone(&file),
            line: r.line,
            date: r.date,
            symbol: r.symbol.clone(),
            series: r.series,
            ambiguous,
        };
        let stored = |r: &BhavRow, isin: Isin, isin_source| StoredBar {
            isin,
            series: r.series,
            symbol: r.symbol.clone(),
            isin_source,
            figures: r.figures,
        };
        let mut bars = Vec::with_capacity(day.rows.len());
        let mut lost = Vec::new();
        if day.format == Format::Udiff {
            for r in &day.rows {
                // The parser gives every UDiFF row its ISIN.
                if let Some(isin) = &r.isin {
                    bars.push(stored(r, isin.clone(), IsinSource::File));
                }
            }
            return (bars, lost);
        }
        let mut rows_of: Vec<&BhavRow> = Vec::with_capacity(day.rows.len());
        for r in &day.rows {
            match self.isin_on(&r.symbol, r.date) {
                Some(isin) => {
                    bars.push(stored(r, isin, IsinSource::Symbol));
                    rows_of.push(r);
                }
                None => lost.push(unresolved(r, false)),
            }
        }
        // Two symbols of one day resolved to one ISIN and series: neither
        // is guessed to be the bar.
        let mut seen: HashMap<(&str, Series), usize> = HashMap::new();
        for b in &bars {
            *seen.entry((b.isin.as_str(), b.series)).or_default() += 1;
        }
        let twice: HashSet<(String, Series)> =
            seen.into_iter().filter(|(_, n)| *n > 1).map(|((i, s), _)| (i.to_owned(), s)).collect();
        if !twice.is_empty() {
            let mut kept = Vec::with_capacity(bars.len());
            for (b, r) in bars.into_iter().zip(rows_of) {
                if twice.contains(&(b.isin.as_str().to_owned(), b.series)) {
                    lost.push(unresolved(r, true));
                } else {
                    kept.push(b);
                }
            }
            bars = kept;
            lost.sort_by_key(|u| u.line);
        }
        (bars, lost)
    }
}

/// What one day's merge found: pairs of one bar in both formats and the
/// figures they disagree on.
#[derive(Debug, Default)]
pub struct MergeFound {
    /// Bars met in both formats.
    pub same_bar: u64,
    /// The figures on which they differ.
    pub disagreements: Vec<Disagreement>,
}

/// What a day becomes when `handed` (every bar of one format: ISIN-keyed
/// when `handed_is_file`) meets what it `held`: the ISIN-keyed bars
/// (handed, or else held), with the figures they lack taken from the
/// symbol-keyed row of the same bar; and the symbol-keyed bars (handed, or
/// else held) that are not the same bar as an ISIN-keyed one (same symbol
/// and series, or same ISIN and series).
pub fn merge_day(handed: DayBars, handed_is_file: bool, held: DayBars, found: &mut MergeFound) -> DayBars {
    let date = handed.date;
    let (mut file, symbol_side, fill_from): (Vec<StoredBar>, Vec<StoredBar>, Vec<StoredBar>) = if handed_is_file {
        let (held_file, held_symbol): (Vec<_>, Vec<_>) =
            held.bars.into_iter().partition(|b| b.isin_source == IsinSource::File);
        // The held ISIN-keyed bars carry what an earlier symbol-keyed row
        // filled in; the held symbol-keyed ones are such rows.
        let mut fill = held_file;
        fill.extend(held_symbol.iter().cloned());
        (handed.bars, held_symbol, fill)
    } else {
        let held_file: Vec<_> = held.bars.into_iter().filter(|b| b.isin_source == IsinSource::File).collect();
        let fill = handed.bars.clone();
        (held_file, handed.bars, fill)
    };
    let fill: HashMap<(&str, Series), &StoredBar> =
        fill_from.iter().map(|b| ((b.symbol.as_str(), b.series), b)).collect();
    for f in &mut file {
        if let Some(s) = fill.get(&(f.symbol.as_str(), f.series)) {
            let (to, from) = (&mut f.figures, &s.figures);
            to.last = to.last.or(from.last);
            to.delivery_qty = to.delivery_qty.or(from.delivery_qty);
            to.delivery_pct = to.delivery_pct.or(from.delivery_pct);
        }
    }
    let by_symbol: HashMap<(&str, Series), &StoredBar> =
        file.iter().map(|b| ((b.symbol.as_str(), b.series), b)).collect();
    let by_isin: HashSet<(&str, Series)> = file.iter().map(|b| (b.isin.as_str(), b.series)).collect();
    let row = |b: &StoredBar| BhavRow {
        line: 0,
        date,
        symbol: b.symbol.clone(),
        series: b.series,
        isin: Some(b.isin.clone()),
        figures: b.figures,
    };
    let (mut isin_rows, mut symbol_rows) = (Vec::new(), Vec::new());
    let mut kept = Vec::new();
    for s in symbol_side {
        if let Some(f) = by_symbol.get(&(s.symbol.as_str(), s.series)) {
            found.same_bar += 1;
            isin_rows.push(row(f));
            symbol_rows.push(row(&s));
        } else if by_isin.contains(&(s.isin.as_str(), s.series)) {
            found.same_bar += 1;
        } else {
            kept.push(s);
        }
    }
    found.disagreements.extend(compare(&isin_rows, &symbol_rows).disagreements);
    drop((by_symbol, by_isin));
    file.extend(kept);
    DayBars { date, bars: file }
}

/// A file's day as read and resolved, handed from the reading thread.
struct Read {
    format: Format,
    date: NaiveDate,
    bars: Vec<StoredBar>,
    unresolved: Vec<UnresolvedRow>,
    /// The unresolved rows as the store keeps them.
    kept: Vec<SymbolRow>,
    rows: u64,
    skipped: Skipped,
}

/// What the reading thread hands on.
enum Message {
    /// A file's day.
    Day(Read),
    /// Every ISIN-keyed file was read: their `(ISIN, symbol)` pairs,
    /// folded; the symbol-keyed files follow once the store has folded them
    /// into the identity history.
    Daily(Daily),
    /// A file or path refused: the import writes nothing.
    Failed(BhavcopyError),
    /// Every file was read.
    Done,
}

/// Imports the daily `files` into the store, resolving symbol-keyed rows
/// through the periods of `catalog`; every day or none, each day written
/// announced (`prices.published`) in the same transaction.
///
/// The ISIN-keyed files are read first: their days written, and their
/// `(ISIN, symbol)` pairs folded (first and last day of each) and handed
/// to the store, which folds them into the identity history and derives it
/// once (14.1). When that changed the history, a catalog of the history as
/// the transaction holds it is made: the symbol-keyed files are resolved
/// through its periods, and the stored symbol-keyed rows of the symbols
/// whose periods moved are resolved again ([`moved_symbols`]).
pub async fn import_bhavcopy(
    store: &Arc<dyn Store>,
    catalog: Arc<Catalog>,
    files: DayFiles,
) -> Result<BhavcopyImport, ImportFailure> {
    let (send, receive) = mpsc::sync_channel::<Message>(READ_AHEAD);
    let (send_catalog, receive_catalog) = mpsc::channel::<Option<Arc<Catalog>>>();
    let before = Arc::clone(&catalog);
    let reader = std::thread::Builder::new()
        .name("bhavcopy-read".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            let mut resolver = Resolver::new(catalog);
            let mut daily = Daily::default();
            let mut gone = false;
            let hand = |name: &str, day: DayFile, resolver: &mut Resolver, gone: &mut bool| {
                let ((bars, unresolved), kept) = resolver.day_kept(name, &day);
                let rows = (day.rows.len() as u64) + day.skipped.total();
                let read =
                    Read { format: day.format, date: day.date, bars, unresolved, kept, rows, skipped: day.skipped };
                if send.send(Message::Day(read)).is_err() {
                    // The import ended (the store failed): stop reading.
                    *gone = true;
                    return Err(BhavcopyError::Io { path: name.to_owned(), source: std::io::ErrorKind::Other.into() });
                }
                Ok(())
            };
            let first = files.for_each_day_of(Format::Udiff, &mut |name, day| {
                daily.fold_day(day.date, day.rows.iter().filter_map(|r| r.isin.as_ref().map(|i| (i, &r.symbol))));
                hand(name, day, &mut resolver, &mut gone)
            });
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "price import: ISIN-keyed files read");
            let result = match first {
                Ok(_) => {
                    if send.send(Message::Daily(daily)).is_err() {
                        return;
                    }
                    match receive_catalog.recv() {
                        Ok(Some(c)) => resolver = Resolver::new(c),
                        Ok(None) => {}
                        Err(_) => return,
                    }
                    files.for_each_day_of(Format::SecBhavdataFull, &mut |name, day| {
                        hand(name, day, &mut resolver, &mut gone)
                    })
                }
                Err(e) => Err(e),
            };
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "price import: every file read");
            if !gone {
                let _ = send.send(match result {
                    Ok(_) => Message::Done,
                    Err(e) => Message::Failed(e),
                });
            }
        })
        .map_err(|e| StoreError::Invalid(format!("cannot start reading the files: {e}")))?;

    let mut out = BhavcopyImport::default();
    let mut refused: Option<BhavcopyError> = None;
    let handed_is_file = AtomicBool::new(false);
    let mut found = MergeFound::default();
    let mut made: BTreeMap<NaiveDate, (u64, u64)> = BTreeMap::new();
    let mut rows = Counts::default();
    let written = {
        let (out, refused, handed_is_file) = (&mut out, &mut refused, &handed_is_file);
        // Ends at `Done` only: a reader that stopped without it (a panic)
        // fails the import rather than committing the days before.
        let mut finished = false;
        let mut pending: Option<PriceStep> = None;
        let mut days = std::iter::from_fn(move || {
            if let Some(step) = pending.take() {
                return Some(Ok(step));
            }
            if finished {
                return None;
            }
            let read = match receive.recv() {
                Ok(Message::Day(read)) => read,
                Ok(Message::Daily(daily)) => return Some(Ok(PriceStep::Daily(daily))),
                Ok(Message::Done) => {
                    finished = true;
                    return None;
                }
                Ok(Message::Failed(e)) => {
                    finished = true;
                    let reason = e.to_string();
                    *refused = Some(e);
                    return Some(Err(StoreError::Invalid(reason)));
                }
                Err(_) => {
                    finished = true;
                    return Some(Err(StoreError::Invalid("the files' reader stopped before the end".into())));
                }
            };
            match read.format {
                Format::Udiff => {
                    out.udiff_files += 1;
                    out.isin_keyed += read.bars.len() as u64;
                }
                Format::SecBhavdataFull => {
                    out.secbhav_files += 1;
                    out.symbol_keyed += (read.bars.len() + read.unresolved.len()) as u64;
                    out.resolved += read.bars.len() as u64;
                    pending = Some(PriceStep::Unresolved { date: read.date, rows: read.kept });
                }
            }
            out.rows_read += read.rows;
            out.skipped.add(&read.skipped);
            out.unresolved.extend(read.unresolved);
            handed_is_file.store(read.format == Format::Udiff, Ordering::Relaxed);
            Some(Ok(PriceStep::Day(DayBars { date: read.date, bars: read.bars })))
        });
        let mut merge = |handed: DayBars, held: DayBars| {
            let is_file = handed_is_file.load(Ordering::Relaxed);
            let handed_rows = handed.bars.len() as u64;
            let paired_before = found.same_bar;
            // What the day held, to tell what the store will do with it
            // (it writes the day unless it is exactly what it holds).
            let held_bars = (!held.bars.is_empty()).then(|| held.bars.clone());
            let mut day = merge_day(handed, is_file, held, &mut found);
            day.sort();
            // A handed symbol-keyed row met by an ISIN-keyed one is not
            // stored as itself; every other handed row is the day's bar.
            let dropped = if is_file { 0 } else { found.same_bar - paired_before };
            let kept = handed_rows - dropped;
            rows.set_aside += dropped;
            match held_bars {
                None => rows.new += kept,
                Some(h) if h == day.bars => rows.unchanged += kept,
                Some(_) => rows.changed += kept,
            }
            let file = day.bars.iter().filter(|b| b.isin_source == IsinSource::File).count() as u64;
            made.insert(day.date, (file, day.bars.len() as u64 - file));
            day
        };
        // The history as the ISIN-keyed files left it: a catalog of it for
        // the symbol-keyed files, and the symbols whose periods it moved.
        let mut identity = |now: Option<IdentityNow>| -> Vec<SymbolPeriods> {
            tracing::debug!(changed = now.is_some(), "price import: the ISIN-keyed files folded into the history");
            let t = std::time::Instant::now();
            let Some(now) = now else {
                let _ = send_catalog.send(None);
                return Vec::new();
            };
            let rows = now.companies.into_iter().map(|c| (ChangeStamp::default(), c)).collect();
            let after = Arc::new(Catalog::from_stamped_with_history(rows, now.events));
            let moved = moved_symbols(&before, &after);
            tracing::debug!(
                ms = t.elapsed().as_millis() as u64,
                moved = moved.len(),
                "price import: the history's catalog"
            );
            let _ = send_catalog.send(Some(after));
            moved
        };
        store.import_prices(&mut days, &mut merge, &mut identity).await
    };
    // The receiver went with `days`: the reader stops at its next file.
    let _ = reader.join();
    if let Some(e) = refused {
        return Err(ImportFailure::Refused(e.refusal()));
    }
    out.store = written?;
    out.same_bar = found.same_bar;
    out.disagreements = found.disagreements;
    out.days = made;
    rows.read = out.rows_read;
    rows.set_aside += out.skipped.total() + out.unresolved.len() as u64;
    out.rows = rows;
    Ok(out)
}

/// The NSE symbols whose periods differ between the catalogs `before` and
/// `after` (section 10.2), each with its periods in `after` (none: no
/// ISIN carries it any more): the symbols whose symbol-keyed rows are to
/// be resolved again (contract 10.3).
pub fn moved_symbols(before: &Catalog, after: &Catalog) -> Vec<SymbolPeriods> {
    let mut old: HashMap<String, Vec<(Isin, NaiveDate, Option<NaiveDate>)>> =
        before.symbol_periods(Exchange::Nse).into_iter().collect();
    let was = |ps: Option<Vec<(Isin, NaiveDate, Option<NaiveDate>)>>| {
        let mut v: Vec<Isin> = ps.unwrap_or_default().into_iter().map(|p| p.0).collect();
        v.sort();
        v.dedup();
        v
    };
    let mut out = Vec::new();
    for (symbol, periods) in after.symbol_periods(Exchange::Nse) {
        let before = old.remove(&symbol);
        if before.as_ref() != Some(&periods) {
            if let Ok(t) = Ticker::parse(&symbol) {
                out.push(SymbolPeriods { symbol: t, periods, was: was(before) });
            }
        }
    }
    for (symbol, periods) in old {
        if let Ok(t) = Ticker::parse(&symbol) {
            out.push(SymbolPeriods { symbol: t, periods: Vec::new(), was: was(Some(periods)) });
        }
    }
    out.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    out
}

/// How many series of skipped rows are named without `--verbose`.
const SERIES_LISTED: usize = 5;

/// How many disagreements are listed without `--verbose`.
const DISAGREEMENTS_LISTED: usize = 20;

/// The write of [`Input::Prices`](mds_import::format::Input::Prices):
/// the files imported with the catalog of the store's companies
/// generation (its symbol periods), and the summary.
pub(super) async fn write(store: &Arc<dyn Store>, files: DayFiles, verbose: bool) -> Result<Summary, ImportFailure> {
    let generation = store.generations().await?.companies;
    let (catalog, _) = crate::catalog_load::load(store, generation).await?;
    let done = import_bhavcopy(store, catalog, files).await?;
    Ok(summary(&done, verbose))
}

/// `12345` as `12,345`.
fn n(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The summary of an import: what was read, resolved, paired and written
/// (stdout), the disagreements (notes, stderr; the first
/// [`DISAGREEMENTS_LISTED`] unless `verbose`), and with `verbose` every row
/// resolved to no ISIN; its counts are [`BhavcopyImport::counts`].
pub fn summary(d: &BhavcopyImport, verbose: bool) -> Summary {
    let mut lines = Vec::new();
    let mut notes = Vec::new();
    if verbose {
        for u in &d.unresolved {
            let why = if u.ambiguous { "another row resolved to the same ISIN and series" } else { "no ISIN that day" };
            lines.push(format!("unresolved: {}:{}: {} {} {} ({why})", u.file, u.line, u.date, u.symbol, u.series));
        }
    }
    let listed = if verbose { d.disagreements.len() } else { d.disagreements.len().min(DISAGREEMENTS_LISTED) };
    for x in &d.disagreements[..listed] {
        notes.push(format!(
            "disagreement: {} {} {}: {} is {} in the ISIN-keyed file (kept), {} in the symbol-keyed one",
            x.date, x.symbol, x.series, x.field, x.isin_keyed, x.symbol_keyed
        ));
    }
    if listed < d.disagreements.len() {
        notes.push(format!("({} more disagreements: --verbose lists them)", d.disagreements.len() - listed));
    }
    // The series skipped, most rows first (all with --verbose).
    let mut by_series: Vec<_> = d.skipped.by_series.iter().collect();
    by_series.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown = if verbose { by_series.len() } else { by_series.len().min(SERIES_LISTED) };
    let mut skipped: Vec<String> = by_series[..shown].iter().map(|(s, k)| format!("{} {s}", n(**k))).collect();
    if shown < by_series.len() {
        let rest: u64 = by_series[shown..].iter().map(|(_, k)| **k).sum();
        skipped.push(format!("{} of {} other series", n(rest), by_series.len() - shown));
    }
    if d.skipped.funds > 0 {
        skipped.push(format!("{} funds", n(d.skipped.funds)));
    }
    lines.push(format!(
        "read {} files ({} UDiFF, {} sec_bhavdata_full) of {} days: {} rows = {} equity + {} skipped{}",
        n(d.udiff_files + d.secbhav_files),
        n(d.udiff_files),
        n(d.secbhav_files),
        n(d.days.len() as u64),
        n(d.rows_read),
        n(d.isin_keyed + d.symbol_keyed),
        n(d.skipped.total()),
        if skipped.is_empty() { String::new() } else { format!(" ({})", skipped.join(", ")) }
    ));
    let ambiguous = d.unresolved.iter().filter(|u| u.ambiguous).count() as u64;
    lines.push(format!(
        "equity rows: {} ISIN-keyed + {} symbol-keyed ({} resolved + {} unresolved, {} of them ambiguous)",
        n(d.isin_keyed),
        n(d.symbol_keyed),
        n(d.resolved),
        n(d.unresolved.len() as u64),
        n(ambiguous)
    ));
    lines.push(format!(
        "the same bar in both formats: {} (the ISIN-keyed row kept); {} figures disagree",
        n(d.same_bar),
        n(d.disagreements.len() as u64)
    ));
    let (file, symbol) = d.bars_held();
    let s = &d.store;
    lines.push(format!(
        "days handed (one a file): {} new + {} replaced + {} unchanged; the {} days hold {} bars = {} ISIN-keyed + {} \
         symbol-keyed; {} bars written",
        n(s.new),
        n(s.replaced),
        n(s.unchanged),
        n(d.days.len() as u64),
        n(file + symbol),
        n(file),
        n(symbol),
        n(s.bars_written)
    ));
    let r = &d.rows;
    lines.push(format!(
        "rows: {} read = {} of new days + {} of changed days + {} of unchanged days + {} set aside ({} skipped, {} \
         unresolved, {} the same bar as an ISIN-keyed row)",
        n(r.read),
        n(r.new),
        n(r.changed),
        n(r.unchanged),
        n(r.set_aside),
        n(d.skipped.total()),
        n(d.unresolved.len() as u64),
        n(r.set_aside - d.skipped.total() - d.unresolved.len() as u64),
    ));
    if s.identity_changed {
        let r = &s.rebound;
        lines.push(format!(
            "identity: the ISIN-keyed files changed the history (14.1); stored symbol-keyed rows resolved again: {} \
             bars moved, {} kept rows resolved, {} set aside, over {} days",
            n(r.moved),
            n(r.resolved),
            n(r.set_aside),
            n(r.days)
        ));
    }
    if s.unresolved_kept > 0 {
        lines.push(format!(
            "{} unresolved rows kept, resolved when a later import makes their ISIN known",
            n(s.unresolved_kept)
        ));
    }
    Summary { notes, lines, counts: d.rows, ..Summary::default() }
}

//! End-of-day prices (contract section 14): days of bars written whole, in
//! one transaction an import, and the reads of the routes (one lineage's
//! series, the market on a day, the days held).
//!
//! An import hands days one at a time; each is merged with what its day
//! holds now (by the caller's rule, so the two formats' rows of a day make
//! one set of bars whichever is imported last), compared with it, and
//! written only when it differs: the day's rows deleted and the new ones
//! written in one statement run (`dialect::insert_bars`: multi-row
//! `VALUES` on SQLite, `COPY` on PostgreSQL), with its count in
//! `bar_days`. An import that wrote a day bumps the `prices` generation in
//! its transaction, which nodes follow to drop what they keep of the
//! price routes' answers. Each day an import wrote gets one `prices.published` event
//! (`{"date", "exchange", "bars"}`, the bars it holds after the import),
//! appended to the log in the import's transaction; a day left as it was
//! gets none.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use mds_domain::clock::Clock;
use mds_domain::prices::{BARS_EXCHANGE, Bar, Figures, IsinSource, Paise, Percent, PricesPublished, Series};
use mds_domain::{Isin, Ticker};
use sqlx::Row;

use super::{Conn, DbRow, Pool, begin_read, begin_write, db, dialect, events, execute, fetch_all};
use crate::prices::{day_number, day_of_number};
use crate::rows::{RowExt, corrupt, undecodable};
use crate::{
    DayBars, IdentityNow, PriceDay, PriceImport, PriceStep, Rebound, StoreResult, StoredBar, SymbolPeriods, SymbolRow,
};

/// The columns a stored bar is read from (its day aside).
const READ_COLUMNS: &str = "isin, series, symbol, isin_source, open, high, low, close, last, prev_close, volume, \
                            turnover, trades, delivery_qty, delivery_pct";

/// [`crate::PriceStore::import_days`].
pub(crate) async fn import(
    pool: &Pool,
    days: &mut (dyn Iterator<Item = StoreResult<DayBars>> + Send),
    merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
    clock: &dyn Clock,
) -> StoreResult<PriceImport> {
    let mut steps = days.map(|d| d.map(PriceStep::Day));
    import_prices(pool, &mut steps, merge, &mut |_| Vec::new(), clock).await
}

/// [`crate::PriceStore::import_prices`].
pub(crate) async fn import_prices(
    pool: &Pool,
    steps: &mut (dyn Iterator<Item = StoreResult<PriceStep>> + Send),
    merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
    identity: &mut (dyn FnMut(Option<IdentityNow>) -> Vec<SymbolPeriods> + Send),
    clock: &dyn Clock,
) -> StoreResult<PriceImport> {
    let mut tx = begin_write(pool).await?;
    dialect::lock_prices(&mut tx).await?;
    let mut out = PriceImport::default();
    // The days written, with the bars each holds last (a day handed twice
    // is announced once).
    let mut published: BTreeMap<NaiveDate, u64> = BTreeMap::new();
    for step in steps {
        match step? {
            PriceStep::Day(handed) => write_day(&mut tx, handed, merge, &mut out, &mut published).await?,
            PriceStep::Unresolved { date, rows } => {
                out.unresolved_kept += rows.len() as u64;
                keep_unresolved(&mut tx, date, &rows).await?;
            }
            PriceStep::Daily(days) => {
                let changed = super::identity::fold_daily(&mut tx, &days, clock).await?;
                out.identity_changed |= changed;
                let now = match changed {
                    true => Some(super::identity::now(&mut tx).await?),
                    false => None,
                };
                let moved = identity(now);
                let r = rebind(&mut tx, &moved, &mut published).await?;
                out.rebound = r;
            }
        }
    }
    let drafts: Vec<_> = published
        .into_iter()
        .map(|(date, bars)| PricesPublished { date, exchange: BARS_EXCHANGE, bars }.draft())
        .collect();
    events::append(&mut tx, clock.now(), &drafts).await?;
    if out.new + out.replaced + out.rebound.days > 0 {
        super::meta::bump_unseeded_generation(&mut tx, crate::rows::META_GENERATION_PRICES).await?;
    }
    tx.commit().await.map_err(db)?;
    Ok(out)
}

/// Writes a day handed (see [`crate::PriceStore::import_days`]).
async fn write_day(
    tx: &mut Conn,
    handed: DayBars,
    merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
    out: &mut PriceImport,
    published: &mut BTreeMap<NaiveDate, u64>,
) -> StoreResult<()> {
    let date = handed.date;
    let held = read_day(tx, date).await?;
    let was_held = !held.bars.is_empty();
    let held_count = held.bars.len() as u64;
    let mut made = merge(handed, held.clone());
    made.date = date;
    made.sort();
    if made.bars == held.bars {
        out.unchanged += 1;
        return Ok(());
    }
    let day = day_number(date);
    execute(tx, sqlx::query("DELETE FROM bars WHERE day = $1").bind(day)).await?;
    dialect::insert_bars(tx, day, &made.bars).await?;
    count_day(tx, day, made.bars.len() as u64).await?;
    if was_held {
        out.replaced += 1;
        out.bars_removed += held_count;
    } else {
        out.new += 1;
    }
    out.bars_written += made.bars.len() as u64;
    published.insert(date, made.bars.len() as u64);
    Ok(())
}

/// Records that the day `day` holds `bars` bars (none: not held).
async fn count_day(tx: &mut Conn, day: i64, bars: u64) -> StoreResult<()> {
    if bars == 0 {
        execute(tx, sqlx::query("DELETE FROM bar_days WHERE day = $1").bind(day)).await?;
    } else {
        execute(
            tx,
            sqlx::query(
                "INSERT INTO bar_days (day, bars) VALUES ($1, $2) ON CONFLICT (day) DO UPDATE SET bars = excluded.bars",
            )
            .bind(day)
            .bind(bars as i64),
        )
        .await?;
    }
    Ok(())
}

/// The columns of `bars_unresolved`.
const KEPT_COLUMNS: &str = "day, symbol, series, open, high, low, close, last, prev_close, volume, turnover, trades, \
                            delivery_qty, delivery_pct";

/// A kept row's values, as text, in [`KEPT_COLUMNS`] order.
fn kept_values(day: i64, r: &SymbolRow) -> Vec<Option<String>> {
    let f = &r.figures;
    let n = |v: i64| Some(v.to_string());
    vec![
        n(day),
        Some(r.symbol.as_str().to_owned()),
        Some(r.series.as_str().to_owned()),
        n(f.open.units()),
        n(f.high.units()),
        n(f.low.units()),
        n(f.close.units()),
        f.last.map(|p| p.units().to_string()),
        n(f.prev_close.units()),
        Some(f.volume.to_string()),
        n(f.turnover.units()),
        Some(f.trades.to_string()),
        f.delivery_qty.map(|q| q.to_string()),
        f.delivery_pct.map(|p| p.units().to_string()),
    ]
}

/// Inserts kept rows (`(day, row)`), ignoring one a day already keeps.
async fn insert_kept(tx: &mut Conn, rows: &[(i64, &SymbolRow)]) -> StoreResult<()> {
    let b = Some("BIGINT");
    let casts = [b, None, None, b, b, b, b, b, b, b, b, b, b, b];
    let head = format!("INSERT INTO bars_unresolved ({KEPT_COLUMNS})");
    // A few rows a statement: SQLite's driver finds each numbered
    // placeholder by name, a cost that grows with the square of their count.
    for run in rows.chunks(KEPT_RUN) {
        let values: Vec<Vec<Option<String>>> = run.iter().map(|(d, r)| kept_values(*d, r)).collect();
        super::identity::insert_rows(tx, &head, &casts, &values, Some("(day, symbol, series)")).await?;
    }
    Ok(())
}

/// Kept rows written per statement (14 values each).
const KEPT_RUN: usize = 16;

/// Replaces the rows `date` kept unresolved by `rows`.
async fn keep_unresolved(tx: &mut Conn, date: NaiveDate, rows: &[SymbolRow]) -> StoreResult<()> {
    let day = day_number(date);
    execute(tx, sqlx::query("DELETE FROM bars_unresolved WHERE day = $1").bind(day)).await?;
    let rows: Vec<(i64, &SymbolRow)> = rows.iter().map(|r| (day, r)).collect();
    insert_kept(tx, &rows).await
}

/// A kept row of `bars_unresolved`, with its day.
fn kept_row(r: &DbRow) -> StoreResult<(i64, SymbolRow)> {
    let symbol = r.text("symbol")?;
    let series = r.text("series")?;
    let bad = |col: &str, v: &str| corrupt(format_args!("bars_unresolved {symbol}: {col} {v:?}"));
    let bar = stored_figures(r)?;
    Ok((
        r.int("day")?,
        SymbolRow {
            symbol: Ticker::parse(&symbol).map_err(|_| bad("symbol", &symbol))?,
            series: Series::parse(&series).map_err(|_| bad("series", &series))?,
            figures: bar,
        },
    ))
}

/// [`crate::PriceStore::rebind_symbols`].
pub(crate) async fn rebind_symbols(pool: &Pool, symbols: &[SymbolPeriods], clock: &dyn Clock) -> StoreResult<Rebound> {
    let mut tx = begin_write(pool).await?;
    dialect::lock_prices(&mut tx).await?;
    let mut published = BTreeMap::new();
    let out = rebind(&mut tx, symbols, &mut published).await?;
    let drafts: Vec<_> = published
        .into_iter()
        .map(|(date, bars)| PricesPublished { date, exchange: BARS_EXCHANGE, bars }.draft())
        .collect();
    events::append(&mut tx, clock.now(), &drafts).await?;
    if out.days > 0 {
        super::meta::bump_unseeded_generation(&mut tx, crate::rows::META_GENERATION_PRICES).await?;
    }
    tx.commit().await.map_err(db)?;
    Ok(out)
}

/// Resolves again the stored symbol-keyed bars and kept rows of each of
/// `symbols` through its periods ([`SymbolPeriods::isin_on`]), in the
/// caller's transaction; the days changed go to `published`.
async fn rebind(
    tx: &mut Conn,
    symbols: &[SymbolPeriods],
    published: &mut BTreeMap<NaiveDate, u64>,
) -> StoreResult<Rebound> {
    let mut out = Rebound::default();
    let mut touched: std::collections::BTreeSet<i64> = std::collections::BTreeSet::new();
    for sp in symbols {
        // Its bars are of the ISINs its periods named before (`bars_isin`).
        let mut rows = Vec::new();
        for run in sp.was.chunks(100) {
            let marks: Vec<String> = (0..run.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT day, {READ_COLUMNS} FROM bars WHERE isin IN ({}) AND symbol = $1 AND isin_source = 'symbol' \
                 ORDER BY day, series",
                marks.join(", ")
            );
            let mut q = sqlx::query(&sql).bind(sp.symbol.as_str());
            for i in run {
                q = q.bind(i.as_str());
            }
            rows.extend(fetch_all(tx, q).await?);
        }
        let mut placing: Vec<(i64, Option<Isin>, SymbolRow)> = Vec::new();
        for r in &rows {
            let day = r.int("day")?;
            let bar = stored_bar(r)?;
            let date = day_of_number(day).ok_or_else(|| corrupt(format_args!("bars: day {day}")))?;
            let now = sp.isin_on(date);
            if now == Some(&bar.isin) {
                continue;
            }
            let del = "DELETE FROM bars WHERE day = $1 AND isin = $2 AND series = $3";
            execute(tx, sqlx::query(del).bind(day).bind(bar.isin.as_str()).bind(bar.series.as_str())).await?;
            touched.insert(day);
            out.moved += 1;
            let row = SymbolRow { symbol: bar.symbol, series: bar.series, figures: bar.figures };
            placing.push((day, now.cloned(), row));
        }
        let sql = format!("SELECT {KEPT_COLUMNS} FROM bars_unresolved WHERE symbol = $1 ORDER BY day, series");
        let kept = fetch_all(tx, sqlx::query(&sql).bind(sp.symbol.as_str())).await?;
        for r in &kept {
            let (day, row) = kept_row(r)?;
            let date = day_of_number(day).ok_or_else(|| corrupt(format_args!("bars_unresolved: day {day}")))?;
            let Some(isin) = sp.isin_on(date) else { continue };
            let del = "DELETE FROM bars_unresolved WHERE day = $1 AND symbol = $2 AND series = $3";
            execute(tx, sqlx::query(del).bind(day).bind(row.symbol.as_str()).bind(row.series.as_str())).await?;
            out.resolved += 1;
            placing.push((day, Some(isin.clone()), row));
        }
        // Each row to its ISIN's bar, unless the day holds one of that
        // ISIN and series already (the ISIN-keyed row of the same bar, or
        // another symbol's: then kept, never guessed).
        let mut unplaced: Vec<(i64, SymbolRow)> = Vec::new();
        for (day, isin, row) in placing {
            let Some(isin) = isin else {
                out.set_aside += 1;
                unplaced.push((day, row));
                continue;
            };
            let held = fetch_all(
                tx,
                sqlx::query("SELECT isin_source FROM bars WHERE day = $1 AND isin = $2 AND series = $3")
                    .bind(day)
                    .bind(isin.as_str())
                    .bind(row.series.as_str()),
            )
            .await?;
            if let Some(h) = held.first() {
                out.set_aside += 1;
                if h.text("isin_source")? != IsinSource::File.as_str() {
                    unplaced.push((day, row));
                }
                continue;
            }
            let bar = StoredBar {
                isin,
                series: row.series,
                symbol: row.symbol,
                isin_source: IsinSource::Symbol,
                figures: row.figures,
            };
            dialect::insert_bars(tx, day, std::slice::from_ref(&bar)).await?;
            touched.insert(day);
        }
        let refs: Vec<(i64, &SymbolRow)> = unplaced.iter().map(|(d, r)| (*d, r)).collect();
        insert_kept(tx, &refs).await?;
    }
    for day in touched {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM bars WHERE day = $1")
            .bind(day)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?;
        count_day(tx, day, n as u64).await?;
        if let Some(date) = day_of_number(day) {
            published.insert(date, n as u64);
        }
        out.days += 1;
    }
    Ok(out)
}

/// What `date` holds, by ISIN then series (no bars when it holds none).
async fn read_day(conn: &mut Conn, date: NaiveDate) -> StoreResult<DayBars> {
    let sql = format!("SELECT {READ_COLUMNS} FROM bars WHERE day = $1 ORDER BY isin, series");
    let rows = fetch_all(conn, sqlx::query(&sql).bind(day_number(date))).await?;
    let bars = rows.iter().map(stored_bar).collect::<StoreResult<Vec<_>>>()?;
    Ok(DayBars { date, bars })
}

/// A nullable integer column.
fn opt_int(r: &DbRow, col: &str) -> StoreResult<Option<i64>> {
    r.try_get::<Option<i64>, _>(col).map_err(undecodable)
}

/// A count column (never negative as written).
fn count(r: &DbRow, col: &str) -> StoreResult<u64> {
    let n = r.int(col)?;
    u64::try_from(n).map_err(|_| corrupt(format_args!("bars: {col} is negative ({n})")))
}

/// A stored bar of a row of [`READ_COLUMNS`].
fn stored_bar(r: &DbRow) -> StoreResult<StoredBar> {
    let isin = r.text("isin")?;
    let bad = |col: &str, e: &dyn std::fmt::Display| corrupt(format_args!("bars {isin}: {col}: {e}"));
    let series = r.text("series")?;
    let symbol = r.text("symbol")?;
    let source = r.text("isin_source")?;
    let figures = stored_figures(r)?;
    Ok(StoredBar {
        isin: Isin::parse(&isin).map_err(|e| bad("isin", &e))?,
        series: Series::parse(&series).map_err(|e| bad("series", &e))?,
        symbol: Ticker::parse(&symbol).map_err(|e| bad("symbol", &e))?,
        isin_source: source.parse::<IsinSource>().map_err(|e| bad("isin_source", &e))?,
        figures,
    })
}

/// The figures of a row of `bars` or `bars_unresolved`.
fn stored_figures(r: &DbRow) -> StoreResult<Figures> {
    Ok(Figures {
        open: Paise::from_units(r.int("open")?),
        high: Paise::from_units(r.int("high")?),
        low: Paise::from_units(r.int("low")?),
        close: Paise::from_units(r.int("close")?),
        last: opt_int(r, "last")?.map(Paise::from_units),
        prev_close: Paise::from_units(r.int("prev_close")?),
        volume: count(r, "volume")?,
        turnover: Paise::from_units(r.int("turnover")?),
        trades: count(r, "trades")?,
        delivery_qty: opt_int(r, "delivery_qty")?
            .map(|n| u64::try_from(n).map_err(|_| corrupt(format_args!("delivery_qty is negative ({n})"))))
            .transpose()?,
        delivery_pct: opt_int(r, "delivery_pct")?.map(Percent::from_units),
    })
}

/// A stored day number as a day.
fn date_of(n: i64) -> StoreResult<NaiveDate> {
    day_of_number(n).ok_or_else(|| corrupt(format_args!("bars: not a day: {n}")))
}

/// [`crate::PriceStore::day_bars`].
pub(crate) async fn day_bars(pool: &Pool, date: NaiveDate) -> StoreResult<DayBars> {
    let mut tx = begin_read(pool).await?;
    read_day(&mut tx, date).await
}

/// [`crate::PriceStore::bars_of`].
pub(crate) async fn bars_of(pool: &Pool, isins: &[Isin], from: NaiveDate, to: NaiveDate) -> StoreResult<Vec<Bar>> {
    if isins.is_empty() || from > to {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (3..isins.len() + 3).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT day, {READ_COLUMNS} FROM bars WHERE isin IN ({}) AND day >= $1 AND day <= $2 \
         ORDER BY day, isin, series",
        marks.join(", ")
    );
    let mut q = sqlx::query(&sql).bind(day_number(from)).bind(day_number(to));
    for isin in isins {
        q = q.bind(isin.as_str());
    }
    let mut tx = begin_read(pool).await?;
    let rows = fetch_all(&mut tx, q).await?;
    rows.iter().map(|r| Ok(stored_bar(r)?.bar(date_of(r.int("day")?)?))).collect()
}

/// [`crate::PriceStore::market_page`].
pub(crate) async fn market_page(
    pool: &Pool,
    date: NaiveDate,
    series: Option<Series>,
    after: Option<(&Isin, Series)>,
    limit: usize,
) -> StoreResult<Vec<Bar>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut binds: Vec<String> = Vec::new();
    let mut bind = |v: &str| {
        binds.push(v.to_owned());
        format!("${}", binds.len() + 1)
    };
    let mut w = vec!["day = $1".to_owned()];
    if let Some(s) = series {
        w.push(format!("series = {}", bind(s.as_str())));
    }
    if let Some((isin, s)) = after {
        let i = bind(isin.as_str());
        let s = bind(s.as_str());
        w.push(format!("(isin > {i} OR (isin = {i} AND series > {s}))"));
    }
    let sql = format!("SELECT {READ_COLUMNS} FROM bars WHERE {} ORDER BY isin, series LIMIT {limit}", w.join(" AND "));
    let mut q = sqlx::query(&sql).bind(day_number(date));
    for v in &binds {
        q = q.bind(v.as_str());
    }
    let mut tx = begin_read(pool).await?;
    let rows = fetch_all(&mut tx, q).await?;
    rows.iter().map(|r| Ok(stored_bar(r)?.bar(date))).collect()
}

/// [`crate::PriceStore::price_days`].
pub(crate) async fn days(pool: &Pool) -> StoreResult<Vec<PriceDay>> {
    let mut tx = begin_read(pool).await?;
    let rows = fetch_all(&mut tx, sqlx::query("SELECT day, bars FROM bar_days ORDER BY day")).await?;
    rows.iter()
        .map(|r| {
            let bars = r.int("bars")?;
            Ok(PriceDay {
                date: date_of(r.int("day")?)?,
                bars: u64::try_from(bars).map_err(|_| corrupt(format_args!("bar_days: bars is negative ({bars})")))?,
            })
        })
        .collect()
}

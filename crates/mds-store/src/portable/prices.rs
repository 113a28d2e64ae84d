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
use crate::{DayBars, PriceDay, PriceImport, StoreResult, StoredBar};

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
    let mut tx = begin_write(pool).await?;
    dialect::lock_prices(&mut tx).await?;
    let mut out = PriceImport::default();
    // The days written, with the bars each holds last (a day handed twice
    // is announced once).
    let mut published: BTreeMap<NaiveDate, u64> = BTreeMap::new();
    for handed in days {
        let handed = handed?;
        let date = handed.date;
        let held = read_day(&mut tx, date).await?;
        let was_held = !held.bars.is_empty();
        let held_count = held.bars.len() as u64;
        let mut made = merge(handed, held.clone());
        made.date = date;
        made.sort();
        if made.bars == held.bars {
            out.unchanged += 1;
            continue;
        }
        let day = day_number(date);
        execute(&mut tx, sqlx::query("DELETE FROM bars WHERE day = $1").bind(day)).await?;
        dialect::insert_bars(&mut tx, day, &made.bars).await?;
        if made.bars.is_empty() {
            execute(&mut tx, sqlx::query("DELETE FROM bar_days WHERE day = $1").bind(day)).await?;
        } else {
            execute(
                &mut tx,
                sqlx::query(
                    "INSERT INTO bar_days (day, bars) VALUES ($1, $2) \
                     ON CONFLICT (day) DO UPDATE SET bars = excluded.bars",
                )
                .bind(day)
                .bind(made.bars.len() as i64),
            )
            .await?;
        }
        if was_held {
            out.replaced += 1;
            out.bars_removed += held_count;
        } else {
            out.new += 1;
        }
        out.bars_written += made.bars.len() as u64;
        published.insert(date, made.bars.len() as u64);
    }
    let drafts: Vec<_> = published
        .into_iter()
        .map(|(date, bars)| PricesPublished { date, exchange: BARS_EXCHANGE, bars }.draft())
        .collect();
    events::append(&mut tx, clock.now(), &drafts).await?;
    if out.new + out.replaced > 0 {
        super::meta::bump_unseeded_generation(&mut tx, crate::rows::META_GENERATION_PRICES).await?;
    }
    tx.commit().await.map_err(db)?;
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
    let figures = Figures {
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
            .map(|n| u64::try_from(n).map_err(|_| bad("delivery_qty", &"is negative")))
            .transpose()?,
        delivery_pct: opt_int(r, "delivery_pct")?.map(Percent::from_units),
    };
    Ok(StoredBar {
        isin: Isin::parse(&isin).map_err(|e| bad("isin", &e))?,
        series: Series::parse(&series).map_err(|e| bad("series", &e))?,
        symbol: Ticker::parse(&symbol).map_err(|e| bad("symbol", &e))?,
        isin_source: source.parse::<IsinSource>().map_err(|e| bad("isin_source", &e))?,
        figures,
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

//! Identity over time (contract section 10): exchange snapshots (their days
//! and their rows as runs), NSE's change files, and the identity events
//! derived from them (`migrations/*/0012_identity.sql`).
//!
//! An import (of snapshots, or of change files) is one write transaction:
//! 1. the inputs are written: a snapshot's day and the runs it opens and
//!    closes (`mds_domain::snapshot::apply_snapshot`, against the series'
//!    open runs read a page at a time in ISIN order), or the change rows;
//! 2. the events and statuses are derived again from every run and change
//!    row (`mds_domain::snapshot::derive`: pure, so the result does not
//!    depend on the order things were imported in), a range of issuers at
//!    a time: an ISIN's events depend on its issuer's runs and the change
//!    rows only (`derive::issuer`), so each range's runs are derived
//!    against every change row (`derive::Deriver`) and compared with the
//!    range's stored events and companies before the next range is read;
//! 3. the ISINs whose events differ from the stored ones get theirs
//!    rewritten; the companies given, and the stored ones whose status
//!    or listings moved (a listing gone from its series' latest snapshot is
//!    `delisted`; each listing's `last_seen`, `snapshot::apply_listings`),
//!    are written when they differ; every company written or whose
//!    events changed is stamped with a new `companies` generation, so nodes
//!    reload and the change feed carries it, and gets a `company.changed`
//!    event with the identity events it gained (when its detail or its
//!    events changed): those of the companies written first, in ISIN
//!    order, then those of the companies only restamped (kept in a TEMP
//!    table until the last range, `events::DEFERRED`).
//!
//! So an import holds its inputs (a snapshot's rows packed,
//! `SnapshotRows`; its companies made a range at a time, when the range
//! is derived, `Companies`), the change rows and one range of runs, events
//! and companies, not the whole store.
//!
//! Nothing changed (the same snapshot again, change rows all known): the
//! transaction is rolled back and no generation moves.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::NaiveDate;
use futures_util::TryStreamExt;
use mds_domain::actions::{Action, CorporateAction};
use mds_domain::clock::Clock;
use mds_domain::snapshot::daily::{Daily, DailySeen};
use mds_domain::snapshot::derive::{Derived, Deriver, SplitAction, issuer};
use mds_domain::snapshot::{
    Companies, NameChange, Run, Series, SnapshotRow, SnapshotRows, SymbolChange, apply_listings, carry_over, inherit,
    take_last_day,
};
use mds_domain::{Company, CompanyChanged, CompanyStatus, EventDraft, IdentityChange, IdentityEvent, Isin, Ticker};

use super::catalog::{UpsertStamp, begin_upsert};
use super::events::{self, detail_with_links};
use super::{Conn, Pool, begin_read, begin_write, db, dialect, execute, fetch_all};
use crate::rows::{self, COMPANY_COLUMNS, RowExt, corrupt};
use crate::{IdentityImport, SnapshotImport, StoreError, StoreResult};

/// Every identity event, grouped by ISIN (ascending), each ISIN's oldest
/// first (by date, then in the order they were made).
///
/// Read as a stream into the list (the rows come in that order), so only
/// the list is held.
pub(crate) async fn events(pool: &Pool) -> StoreResult<Vec<(Isin, IdentityEvent)>> {
    let mut out: Vec<(Isin, IdentityEvent)> = Vec::new();
    events_each(pool, &mut |isin, e| {
        let isin = match out.last() {
            Some((last, _)) if *last == isin => last.clone(),
            _ => isin,
        };
        out.push((isin, e));
    })
    .await?;
    out.shrink_to_fit();
    Ok(out)
}

/// [`events`], each handed to `each` as it is read (the catalog build
/// packs them as they come, `mds_catalog::PackedEvents`).
pub(crate) async fn events_each(pool: &Pool, each: &mut (dyn FnMut(Isin, IdentityEvent) + Send)) -> StoreResult<()> {
    let mut tx = begin_read(pool).await?;
    let mut rows =
        sqlx::query_as::<_, (String, String)>("SELECT isin, event_json FROM identity_events ORDER BY isin, seq")
            .fetch(&mut *tx);
    while let Some((isin, json)) = rows.try_next().await.map_err(db)? {
        let i = Isin::parse(&isin).map_err(|e| corrupt(format_args!("identity_events: {e}")))?;
        each(i, event(&isin, &json)?);
    }
    Ok(())
}

/// An `identity_events` row's event.
fn event(isin: &str, json: &str) -> StoreResult<IdentityEvent> {
    serde_json::from_str(json)
        .map_err(|e| corrupt(format_args!("identity_events {isin}: event_json does not decode ({e})")))
}

/// The days of the snapshots imported, per series, oldest first.
pub(crate) async fn snapshot_days(pool: &Pool) -> StoreResult<Vec<(Series, NaiveDate)>> {
    let rs: Vec<(String, String)> =
        sqlx::query_as("SELECT series, as_of FROM identity_snapshots ORDER BY series, as_of")
            .fetch_all(pool)
            .await
            .map_err(db)?;
    let mut out = rs
        .into_iter()
        .map(|(s, d)| {
            Ok((s.parse::<Series>().map_err(|e| corrupt(format_args!("identity_snapshots: {e}")))?, day(&d)?))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    out.sort();
    Ok(out)
}

/// [`crate::IdentityStore::import_snapshots`].
pub(crate) async fn import_snapshots(
    pool: &Pool,
    import: &SnapshotImport,
    clock: &dyn Clock,
) -> StoreResult<IdentityImport> {
    let mut tx = begin_write(pool).await?;
    dialect::lock_identity(&mut tx).await?;
    let mut summary = IdentityImport::default();
    let latest = latest_days(&mut tx).await?;
    for (series, _) in &import.series {
        if let Some(l) = latest.get(series).filter(|l| **l > import.as_of) {
            return Err(StoreError::Invalid(format!(
                "the {} is as of {}, older than the latest {} snapshot imported, of {l}",
                series.file(),
                import.as_of,
                series.as_str()
            )));
        }
    }
    for (series, rows) in &import.series {
        apply(&mut tx, *series, import.as_of, rows, latest.get(series).copied(), &mut summary, clock).await?;
    }
    let carry = Carry { bse_given: import.bse_given, mcap_given: import.mcap_given };
    let changed = rederive(&mut tx, Some((&import.companies, carry)), &mut summary, clock).await?;
    if changed || summary.snapshots > 0 || summary.runs_opened + summary.runs_closed > 0 {
        tx.commit().await.map_err(db)?;
    }
    Ok(summary)
}

/// [`crate::IdentityStore::import_nse_changes`].
pub(crate) async fn import_changes(
    pool: &Pool,
    symbols: &[SymbolChange],
    names: &[NameChange],
    clock: &dyn Clock,
) -> StoreResult<IdentityImport> {
    let mut tx = begin_write(pool).await?;
    dialect::lock_identity(&mut tx).await?;
    let mut summary = IdentityImport::default();
    for s in symbols {
        summary.change_rows += execute(
            &mut tx,
            sqlx::query(
                "INSERT INTO nse_symbol_changes (old_symbol, new_symbol, changed_on, company) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (old_symbol, new_symbol, changed_on) DO NOTHING",
            )
            .bind(s.from.as_str())
            .bind(s.to.as_str())
            .bind(s.date.to_string())
            .bind(s.company.as_str()),
        )
        .await?;
    }
    for n in names {
        summary.change_rows += execute(
            &mut tx,
            sqlx::query(
                "INSERT INTO nse_name_changes (symbol, prev_name, new_name, changed_on) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (symbol, prev_name, new_name, changed_on) DO NOTHING",
            )
            .bind(n.symbol.as_str())
            .bind(n.from.as_str())
            .bind(n.to.as_str())
            .bind(n.date.to_string()),
        )
        .await?;
    }
    if summary.change_rows == 0 {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM identity_events").fetch_one(&mut *tx).await.map_err(db)?;
        summary.events = n.unsigned_abs();
        return Ok(summary);
    }
    rederive(&mut tx, None, &mut summary, clock).await?;
    tx.commit().await.map_err(db)?;
    Ok(summary)
}

/// The day of every snapshot imported, of every series.
async fn all_days(conn: &mut Conn) -> StoreResult<Vec<(Series, NaiveDate)>> {
    let rs: Vec<(String, String)> =
        sqlx::query_as("SELECT series, as_of FROM identity_snapshots").fetch_all(&mut *conn).await.map_err(db)?;
    rs.into_iter()
        .map(|(s, d)| {
            Ok((s.parse::<Series>().map_err(|e| corrupt(format_args!("identity_snapshots: {e}")))?, day(&d)?))
        })
        .collect()
}

/// The latest snapshot day of each series.
async fn latest_days(conn: &mut Conn) -> StoreResult<HashMap<Series, NaiveDate>> {
    let rs: Vec<(String, String)> = sqlx::query_as("SELECT series, MAX(as_of) FROM identity_snapshots GROUP BY series")
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?;
    rs.into_iter()
        .map(|(s, d)| {
            Ok((s.parse::<Series>().map_err(|e| corrupt(format_args!("identity_snapshots: {e}")))?, day(&d)?))
        })
        .collect()
}

/// Applies the snapshot of `series` as of `as_of` (at or after `latest`,
/// the series' latest day): closes and opens runs, records the day. A
/// snapshot of the latest day replaces that one (its runs are undone
/// first), unless it is the same, which changes nothing.
async fn apply(
    conn: &mut Conn,
    series: Series,
    as_of: NaiveDate,
    rows: &SnapshotRows,
    latest: Option<NaiveDate>,
    summary: &mut IdentityImport,
    clock: &dyn Clock,
) -> StoreResult<()> {
    let s = series.as_str();
    let d = as_of.to_string();
    if latest == Some(as_of) {
        let (closed, opened) = snapshot_diff(conn, series, rows).await?;
        if closed.is_empty() && opened.is_empty() {
            return Ok(());
        }
        execute(conn, sqlx::query("DELETE FROM identity_runs WHERE series = $1 AND since = $2").bind(s).bind(&d))
            .await?;
        execute(
            conn,
            sqlx::query("UPDATE identity_runs SET until = NULL WHERE series = $1 AND until = $2").bind(s).bind(&d),
        )
        .await?;
        execute(conn, sqlx::query("DELETE FROM identity_snapshots WHERE series = $1 AND as_of = $2").bind(s).bind(&d))
            .await?;
    }
    let (closed, opened) = snapshot_diff(conn, series, rows).await?;
    let closed_isins: Vec<&str> = closed.iter().map(Isin::as_str).collect();
    for_isins(
        conn,
        "UPDATE identity_runs SET until = $1 WHERE series = $2 AND until IS NULL AND isin IN",
        &[&d, s],
        &closed_isins,
    )
    .await?;
    let insert = "INSERT INTO identity_runs (series, isin, since, symbol, name, face_value, listed_on)";
    for part in opened.chunks(ROWS_HELD) {
        let values: Vec<Vec<Option<String>>> = part.iter().map(|&i| run_values(s, &d, &rows.get(i))).collect();
        insert_rows(conn, insert, &[None; 7], &values, None).await?;
    }
    execute(
        conn,
        sqlx::query("INSERT INTO identity_snapshots (series, as_of, rows, imported_at) VALUES ($1, $2, $3, $4)")
            .bind(s)
            .bind(&d)
            .bind(rows.len() as i64)
            .bind(rows::ts(&clock.now())),
    )
    .await?;
    summary.snapshots += 1;
    summary.runs_opened += opened.len() as u64;
    summary.runs_closed += closed.len() as u64;
    Ok(())
}

/// The values of the `identity_runs` row of `r` in `series` since `since`.
fn run_values(series: &str, since: &str, r: &SnapshotRow) -> Vec<Option<String>> {
    vec![
        Some(series.to_owned()),
        Some(r.isin.as_str().to_owned()),
        Some(since.to_owned()),
        Some(r.symbol.as_str().to_owned()),
        Some(r.name.clone()),
        r.face_value.map(|f| f.to_string()),
        r.listed_on.map(|l| l.to_string()),
    ]
}

/// Rows made into values at once for [`insert_rows`] (so the values of a
/// million rows are not all held).
const ROWS_HELD: usize = 5_000;

/// Rows (text or `NULL` each, as many as the statement's columns) per
/// statement of [`insert_rows`].
const INSERT_RUN: usize = 200;
/// ISINs per statement of [`for_isins`].
const ISIN_RUN: usize = 500;

/// `insert` (`INSERT INTO t (cols)`) of `rows`, many a statement: `VALUES
/// ($1, …), (…)`. Every value is bound as text; a column whose entry in
/// `casts` is a type gets `CAST($n AS type)` (the same in both dialects).
/// With `ignoring` (a key, `(col, …)`), a row whose key is held already
/// is left as it is.
pub(crate) async fn insert_rows(
    conn: &mut Conn,
    insert: &str,
    casts: &[Option<&str>],
    rows: &[Vec<Option<String>>],
    ignoring: Option<&str>,
) -> StoreResult<()> {
    let tail = ignoring.map(|key| format!(" ON CONFLICT {key} DO NOTHING")).unwrap_or_default();
    for run in rows.chunks(INSERT_RUN) {
        let mut n = 0;
        let tuples: Vec<String> = run
            .iter()
            .map(|_| {
                let cells: Vec<String> = casts
                    .iter()
                    .map(|c| {
                        n += 1;
                        match c {
                            None => format!("${n}"),
                            Some(t) => format!("CAST(${n} AS {t})"),
                        }
                    })
                    .collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        let sql = format!("{insert} VALUES {}{tail}", tuples.join(", "));
        let mut q = sqlx::query(&sql);
        for row in run {
            for v in row {
                q = q.bind(v.as_deref());
            }
        }
        execute(conn, q).await?;
    }
    Ok(())
}

/// `head (…ISINs…)`, `head` ending in `isin IN` and taking `params` first
/// (`$1`, …), for `isins` a few hundred at a time.
async fn for_isins(conn: &mut Conn, head: &str, params: &[&str], isins: &[&str]) -> StoreResult<()> {
    for run in isins.chunks(ISIN_RUN) {
        let list: Vec<String> = (0..run.len()).map(|i| format!("${}", params.len() + i + 1)).collect();
        let sql = format!("{head} ({})", list.join(", "));
        let mut q = sqlx::query(&sql);
        for p in params.iter().chain(run) {
            q = q.bind(*p);
        }
        execute(conn, q).await?;
    }
    Ok(())
}

/// Open runs read per statement by [`snapshot_diff`]. Few in a debug
/// build, so the tests' files (a few thousand rows) are read in many pages.
const OPEN_PAGE: i64 = if cfg!(debug_assertions) { 300 } else { 20_000 };

/// What the snapshot of `series` whose rows are `rows` does to its open
/// runs (`apply_snapshot`): the ISINs whose run ends and the rows (by
/// ISIN) that open one, the open runs read a page at a time in ISIN order
/// and compared with the rows of their ISINs' range
/// (`SnapshotRows::apply_to`).
async fn snapshot_diff(conn: &mut Conn, series: Series, rows: &SnapshotRows) -> StoreResult<(Vec<Isin>, Vec<usize>)> {
    let sql = "SELECT series, isin, since, until, symbol, name, face_value, listed_on FROM identity_runs \
               WHERE series = $1 AND until IS NULL AND isin > $2 ORDER BY isin LIMIT $3";
    let (mut closed, mut opened) = (Vec::new(), Vec::new());
    let mut after = String::new();
    let mut rest = 0;
    loop {
        let rs = fetch_all(conn, sqlx::query(sql).bind(series.as_str()).bind(&after).bind(OPEN_PAGE)).await?;
        let last = rs.len() < OPEN_PAGE as usize;
        let open: HashMap<Isin, SnapshotRow> =
            rs.iter().map(|r| run(r).map(|r| (r.row.isin.clone(), r.row))).collect::<StoreResult<_>>()?;
        let upto = match open.keys().max() {
            Some(m) if !last => m.as_str().to_owned(),
            _ => {
                // The last page: every row left is compared with it.
                let (c, o) = rows.apply_to(&open, rest..rows.len());
                closed.extend(c);
                opened.extend(o);
                break;
            }
        };
        let mut n = rows.below(&upto);
        if n < rows.len() && rows.isin(n) == upto {
            n += 1;
        }
        let (c, o) = rows.apply_to(&open, rest..n.max(rest));
        closed.extend(c);
        opened.extend(o);
        rest = n.max(rest);
        after = upto;
    }
    closed.sort();
    Ok((closed, opened))
}

/// Runs read per series and statement by [`runs_from`] (at least). Few in
/// a debug build, so the tests' files make many ranges.
const RUN_PAGE: i64 = if cfg!(debug_assertions) { 300 } else { 20_000 };

/// The runs of the issuers ([`issuer`]) from `lo` on, as many whole
/// issuers as about [`RUN_PAGE`] runs per series hold, and the issuer the
/// next range starts at (`None`: these are the last). Each series is read
/// in its key's order (`series, isin, since`).
async fn runs_from(conn: &mut Conn, lo: &str) -> StoreResult<(Vec<Run>, Option<String>)> {
    let sql = "SELECT series, isin, since, until, symbol, name, face_value, listed_on FROM identity_runs \
               WHERE series = $1 AND isin >= $2 ORDER BY isin, since LIMIT $3";
    let mut page = RUN_PAGE;
    loop {
        let mut runs = Vec::new();
        let mut hi: Option<String> = None;
        for series in Series::ALL {
            let rs = fetch_all(conn, sqlx::query(sql).bind(series.as_str()).bind(lo).bind(page)).await?;
            let full = rs.len() as i64 == page;
            for r in &rs {
                runs.push(run(r)?);
            }
            // A full page may end inside an issuer: the range ends before it.
            if let Some(last) = runs.last().filter(|_| full) {
                let next = issuer(&last.row.isin);
                if hi.as_deref().is_none_or(|h| next < h) {
                    hi = Some(next.to_owned());
                }
            }
        }
        match hi {
            // One issuer has more runs than a page: read more at once.
            Some(h) if h.as_str() <= lo => page *= 2,
            Some(h) => {
                runs.retain(|r| r.row.isin.as_str() < h.as_str());
                return Ok((runs, Some(h)));
            }
            None => return Ok((runs, None)),
        }
    }
}

/// `WHERE` of the ISINs of the issuers from `lo` to (not including) `hi`
/// (to the last when `None`): `$1` and `$2`.
fn in_range(hi: Option<&str>) -> &'static str {
    match hi {
        Some(_) => "isin >= $1 AND isin < $2",
        None => "isin >= $1",
    }
}

/// A day as stored.
fn day(s: &str) -> StoreResult<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| corrupt(format_args!("identity: not a day: {s:?}")))
}

/// An `identity_runs` row.
fn run(r: &super::DbRow) -> StoreResult<Run> {
    let isin = r.text("isin")?;
    let bad = |what: &str, v: &str| corrupt(format_args!("identity_runs {isin}: {what} {v:?}"));
    let series = r.text("series")?;
    let symbol = r.text("symbol")?;
    let face = r.opt_text("face_value")?;
    Ok(Run {
        series: series.parse().map_err(|_| bad("series", &series))?,
        row: SnapshotRow {
            isin: Isin::parse(&isin).map_err(|_| bad("isin", &isin))?,
            symbol: Ticker::parse(&symbol).map_err(|_| bad("symbol", &symbol))?,
            name: r.text("name")?,
            face_value: face.as_deref().map(|f| f.parse::<f64>().map_err(|_| bad("face_value", f))).transpose()?,
            listed_on: r.opt_text("listed_on")?.as_deref().map(day).transpose()?,
        },
        since: day(&r.text("since")?)?,
        until: r.opt_text("until")?.as_deref().map(day).transpose()?,
    })
}

/// Every change-file row.
async fn change_rows(conn: &mut Conn) -> StoreResult<(Vec<SymbolChange>, Vec<NameChange>)> {
    let rs: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT old_symbol, new_symbol, changed_on, company FROM nse_symbol_changes \
         ORDER BY changed_on, old_symbol, new_symbol",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(db)?;
    let ticker = |t: &str| Ticker::parse(t).map_err(|_| corrupt(format_args!("nse change rows: symbol {t:?}")));
    let symbols = rs
        .into_iter()
        .map(|(f, t, d, c)| Ok(SymbolChange { from: ticker(&f)?, to: ticker(&t)?, date: day(&d)?, company: c }))
        .collect::<StoreResult<Vec<_>>>()?;
    let rs: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT symbol, prev_name, new_name, changed_on FROM nse_name_changes \
         ORDER BY changed_on, symbol, prev_name, new_name",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(db)?;
    let names = rs
        .into_iter()
        .map(|(s, f, t, d)| Ok(NameChange { symbol: ticker(&s)?, from: f, to: t, date: day(&d)? }))
        .collect::<StoreResult<Vec<_>>>()?;
    Ok((symbols, names))
}

/// A split or consolidation as the derivation reads it (`None` for any
/// other action).
pub(crate) fn split_action(a: &CorporateAction) -> Option<SplitAction> {
    match &a.action {
        Action::Split { split: f } | Action::Consolidation { consolidation: f } => Some(SplitAction {
            isin: a.isin.clone(),
            ex_date: a.ex_date,
            face_value_from: f.face_value_from,
            face_value_to: f.face_value_to,
            new_isin: f.new_isin.clone(),
        }),
        _ => None,
    }
}

/// Every stored split and consolidation (contract 13), which date the
/// `isin_changed` events and link old ISINs to their successors (10.3).
async fn split_actions(conn: &mut Conn) -> StoreResult<Vec<SplitAction>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, action_json FROM corporate_actions WHERE type IN ('split', 'consolidation') ORDER BY id",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(db)?;
    let mut out = Vec::with_capacity(rows.len());
    for (id, json) in rows {
        let a: CorporateAction = serde_json::from_str(&json)
            .map_err(|e| corrupt(format_args!("corporate_actions {id}: action_json does not decode ({e})")))?;
        out.extend(split_action(&a));
    }
    Ok(out)
}

/// [`crate::ActionStore::date_by_splits`], in the caller's transaction.
pub(crate) async fn date_by_splits(
    conn: &mut Conn,
    splits: &[CorporateAction],
    clock: &dyn Clock,
) -> StoreResult<bool> {
    let splits: Vec<SplitAction> = splits.iter().filter_map(split_action).collect();
    if splits.is_empty() {
        return Ok(false);
    }
    dialect::lock_identity(&mut *conn).await?;
    rederive_with(conn, None, &mut IdentityImport::default(), splits, clock).await
}

/// Derives the identity events again with an action import's `splits`
/// beside the stored ones (contract 10.3: a split dates its ISIN change,
/// and links an old ISIN to its successor), in the import's transaction;
/// then the successor each of them leads to on its ex-date, by
/// `(ISIN, ex-date)`, for its `new_isin`. Whether anything was written.
pub(crate) async fn rederive_for_splits(
    conn: &mut Conn,
    splits: Vec<SplitAction>,
    clock: &dyn Clock,
) -> StoreResult<(bool, HashMap<(Isin, NaiveDate), Isin>)> {
    dialect::lock_identity(&mut *conn).await?;
    let keys: Vec<(Isin, NaiveDate)> = splits.iter().map(|s| (s.isin.clone(), s.ex_date)).collect();
    let mut summary = IdentityImport::default();
    let wrote = rederive_with(conn, None, &mut summary, splits, clock).await?;
    let mut isins: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    isins.sort_unstable();
    isins.dedup();
    let mut next = successors_of(conn, &isins).await?;
    next.retain(|k, _| keys.contains(k));
    Ok((wrote, next))
}

/// The ISIN that took over from each of `isins` (sorted, distinct), by
/// the ISIN and the day: their `isin_changed` events from them.
pub(crate) async fn successors_of(conn: &mut Conn, isins: &[&str]) -> StoreResult<HashMap<(Isin, NaiveDate), Isin>> {
    let mut next = HashMap::new();
    for chunk in isins.chunks(500) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let sql = format!("SELECT isin, event_json FROM identity_events WHERE isin IN ({})", marks.join(", "));
        let mut q = sqlx::query_as::<_, (String, String)>(&sql);
        for i in chunk {
            q = q.bind(*i);
        }
        for (isin, json) in q.fetch_all(&mut *conn).await.map_err(db)? {
            let e = event(&isin, &json)?;
            if let IdentityChange::IsinChanged { from, to, .. } = e.change {
                if from.as_str() == isin {
                    next.insert((from, e.date), to);
                }
            }
        }
    }
    Ok(next)
}

/// What NSE's ISIN-keyed daily files have shown (contract 14.1): their
/// `(ISIN, symbol)` pairs with their first and last days, and their days.
async fn daily(conn: &mut Conn) -> StoreResult<Daily> {
    let rows: Vec<(String, String, String, String)> =
        sqlx::query_as("SELECT isin, symbol, first_day, last_day FROM identity_daily ORDER BY isin, first_day, symbol")
            .fetch_all(&mut *conn)
            .await
            .map_err(db)?;
    let mut pairs = Vec::with_capacity(rows.len());
    for (isin, symbol, first, last) in rows {
        let bad = |what: &str, v: &str| corrupt(format_args!("identity_daily {isin}: {what} {v:?}"));
        pairs.push(DailySeen {
            isin: Isin::parse(&isin).map_err(|_| bad("isin", &isin))?,
            symbol: Ticker::parse(&symbol).map_err(|_| bad("symbol", &symbol))?,
            first: day(&first)?,
            last: day(&last)?,
        });
    }
    let days: Vec<(String,)> =
        sqlx::query_as("SELECT day FROM identity_daily_days ORDER BY day").fetch_all(&mut *conn).await.map_err(db)?;
    let days = days.iter().map(|(d,)| day(d)).collect::<StoreResult<Vec<_>>>()?;
    Ok(Daily::new(pairs, days))
}

/// Folds the `(ISIN, symbol)` pairs of ISIN-keyed daily files (with
/// their first and last days, and the files' days) into the identity history, in the caller's transaction, and derives it
/// again once when they changed it (a new day, a pair new or seen beyond
/// its days). Whether the history changed.
pub(crate) async fn fold_daily(conn: &mut Conn, given: &Daily, clock: &dyn Clock) -> StoreResult<bool> {
    if given.is_empty() {
        return Ok(false);
    }
    dialect::lock_identity(&mut *conn).await?;
    let mut d = daily(conn).await?;
    let before = d.clone();
    if !d.merge(given) {
        return Ok(false);
    }
    let old: HashMap<(&Isin, &Ticker), (NaiveDate, NaiveDate)> =
        before.pairs.iter().map(|p| ((&p.isin, &p.symbol), (p.first, p.last))).collect();
    let mut write: Vec<Vec<Option<String>>> = Vec::new();
    for p in &d.pairs {
        if old.get(&(&p.isin, &p.symbol)) != Some(&(p.first, p.last)) {
            let (i, s) = (p.isin.as_str(), p.symbol.as_str());
            execute(conn, sqlx::query("DELETE FROM identity_daily WHERE isin = $1 AND symbol = $2").bind(i).bind(s))
                .await?;
            write.push(vec![Some(i.into()), Some(s.into()), Some(p.first.to_string()), Some(p.last.to_string())]);
        }
    }
    let casts = [None, None, None, None];
    insert_rows(conn, "INSERT INTO identity_daily (isin, symbol, first_day, last_day)", &casts, &write, None).await?;
    let new_days: Vec<Vec<Option<String>>> =
        d.days.iter().filter(|x| before.days.binary_search(x).is_err()).map(|x| vec![Some(x.to_string())]).collect();
    insert_rows(conn, "INSERT INTO identity_daily_days (day)", &[None], &new_days, None).await?;
    drop(d);
    rederive(conn, None, &mut IdentityImport::default(), clock).await
}

/// Every company and identity event, as the caller's transaction holds
/// them (what a catalog of the history is built of).
pub(crate) async fn now(conn: &mut Conn) -> StoreResult<crate::IdentityNow> {
    let sql = format!("SELECT {} FROM companies ORDER BY isin", COMPANY_COLUMNS.join(", "));
    let mut companies = Vec::new();
    {
        let mut rs = sqlx::query(&sql).fetch(&mut *conn);
        while let Some(r) = rs.try_next().await.map_err(db)? {
            companies.push(rows::company(&r)?);
        }
    }
    let mut events = Vec::new();
    let mut rs =
        sqlx::query_as::<_, (String, String)>("SELECT isin, event_json FROM identity_events ORDER BY isin, seq")
            .fetch(&mut *conn);
    while let Some((isin, json)) = rs.try_next().await.map_err(db)? {
        let i = Isin::parse(&isin).map_err(|e| corrupt(format_args!("identity_events: {e}")))?;
        events.push((i, event(&isin, &json)?));
    }
    Ok(crate::IdentityNow { companies, events })
}

/// The stored events of the issuers from `lo` to `hi` ([`in_range`]), by
/// ISIN, each ISIN's in order (read as a stream).
async fn stored_events_in(
    conn: &mut Conn,
    lo: &str,
    hi: Option<&str>,
) -> StoreResult<BTreeMap<Isin, Vec<IdentityEvent>>> {
    let sql = format!("SELECT isin, event_json FROM identity_events WHERE {} ORDER BY isin, seq", in_range(hi));
    let mut q = sqlx::query_as::<_, (String, String)>(&sql).bind(lo);
    if let Some(h) = hi {
        q = q.bind(h);
    }
    let mut rows = q.fetch(&mut *conn);
    let mut out: BTreeMap<Isin, Vec<IdentityEvent>> = BTreeMap::new();
    while let Some((isin, json)) = rows.try_next().await.map_err(db)? {
        let i = Isin::parse(&isin).map_err(|e| corrupt(format_args!("identity_events: {e}")))?;
        out.entry(i).or_default().push(event(&isin, &json)?);
    }
    Ok(out)
}

/// The stored companies of the issuers from `lo` to `hi` ([`in_range`]),
/// by ISIN (read as a stream).
async fn stored_companies_in(conn: &mut Conn, lo: &str, hi: Option<&str>) -> StoreResult<HashMap<Isin, Company>> {
    let sql = format!("SELECT {} FROM companies WHERE {}", COMPANY_COLUMNS.join(", "), in_range(hi));
    let mut out = HashMap::new();
    let mut q = sqlx::query(&sql).bind(lo);
    if let Some(h) = hi {
        q = q.bind(h);
    }
    let mut rs = q.fetch(&mut *conn);
    while let Some(r) = rs.try_next().await.map_err(db)? {
        let c = rows::company(&r)?;
        out.insert(c.isin.clone(), c);
    }
    Ok(out)
}

/// What an exchange import's companies keep of the stored ones.
#[derive(Clone, Copy)]
struct Carry {
    bse_given: bool,
    mcap_given: bool,
}

/// What [`rederive`] writes once something is to be written: the time
/// and the `companies` stamp of the import, and the `company.changed`
/// events of restamped companies, kept to follow those of the companies
/// written ([`events::DEFERRED`]).
struct Writing {
    now: chrono::DateTime<chrono::Utc>,
    stamp: UpsertStamp,
    deferred: u64,
}

/// Derives the events and statuses again and writes what changed (see the
/// module's steps 2 and 3), `given` being the companies an exchange import
/// made (with `carry`), asked for a range at a time. Whether anything was
/// written.
///
/// A range of issuers at a time ([`runs_from`]): their runs derived
/// against every change row (`Deriver`), compared with their stored events
/// and companies, and what changed written, before the next range is read.
/// An ISIN's events and status depend on its issuer's runs only
/// (`mds_domain::snapshot::derive::issuer`), so this writes what deriving
/// every run at once would.
async fn rederive(
    conn: &mut Conn,
    given: Option<(&Companies, Carry)>,
    summary: &mut IdentityImport,
    clock: &dyn Clock,
) -> StoreResult<bool> {
    rederive_with(conn, given, summary, Vec::new(), clock).await
}

/// [`rederive`] with `extra`, splits and consolidations not stored yet (an
/// action import's, before it writes them), beside the stored ones.
async fn rederive_with(
    conn: &mut Conn,
    given: Option<(&Companies, Carry)>,
    summary: &mut IdentityImport,
    extra: Vec<SplitAction>,
    clock: &dyn Clock,
) -> StoreResult<bool> {
    let (symbols, names) = change_rows(conn).await?;
    let mut splits = split_actions(conn).await?;
    splits.extend(extra);
    let prep = Deriver::new(&symbols, &names)
        .with_days(&all_days(conn).await?)
        .with_splits(splits)
        .with_daily(daily(conn).await?);
    let carry = given.map(|(_, c)| c);
    let mut writing: Option<Writing> = None;
    let mut wrote = false;
    let mut lo = String::new();
    loop {
        let (runs, hi) = runs_from(conn, &lo).await?;
        let derived = prep.derive_range(&runs, &lo, hi.as_deref());
        drop(runs);
        let given_here = given.map(|(g, _)| g.range(&lo, hi.as_deref())).unwrap_or_default();
        wrote |= rederive_range(conn, &lo, hi.as_deref(), &derived, &given_here, carry, &mut writing, summary, clock)
            .await?;
        match hi {
            Some(h) => lo = h,
            None => break,
        }
    }
    if let Some(w) = writing.filter(|w| w.deferred > 0) {
        events::append_deferred(conn, w.now).await?;
    }
    Ok(wrote)
}

/// [`rederive`] of the issuers from `lo` to `hi` ([`in_range`]), `derived`
/// of their runs, `given` the import's companies among them (by ISIN).
#[allow(clippy::too_many_arguments)]
async fn rederive_range(
    conn: &mut Conn,
    lo: &str,
    hi: Option<&str>,
    derived: &Derived,
    given: &[Company],
    carry: Option<Carry>,
    writing: &mut Option<Writing>,
    summary: &mut IdentityImport,
    clock: &dyn Clock,
) -> StoreResult<bool> {
    let stored_ev = stored_events_in(conn, lo, hi).await?;
    let stored = stored_companies_in(conn, lo, hi).await?;

    // Events: the ISINs whose list differs.
    let mut moved: Vec<&Isin> = Vec::new();
    for isin in stored_ev.keys().chain(derived.events.keys()).collect::<std::collections::BTreeSet<_>>() {
        if stored_ev.get(isin) != derived.events.get(isin) {
            moved.push(isin);
        }
    }

    // Companies: the given ones (with what they keep), and every stored one
    // the derivation speaks of, as the snapshots and events leave them
    // (status, listings; a superseded one's last day; a successor's
    // inheritance, after its predecessor's, in ISIN order); written when
    // they differ from the stored ones.
    let mut next: BTreeMap<Isin, (Company, bool)> = BTreeMap::new();
    for c in given {
        let mut c = c.clone();
        if let (Some(s), Some(k)) = (stored.get(&c.isin), carry) {
            carry_over(&mut c, s, k.bse_given, k.mcap_given);
        }
        let fallback = stored.get(&c.isin).map_or(CompanyStatus::Active, |s| s.details.status);
        c.details.status = derived.status.get(&c.isin).copied().unwrap_or(fallback);
        next.insert(c.isin.clone(), (c, true));
    }
    for (isin, st) in &derived.status {
        if let (false, Some(s)) = (next.contains_key(isin), stored.get(isin)) {
            let mut c = s.clone();
            c.details.status = *st;
            next.insert(isin.clone(), (c, false));
        }
    }
    // An ISIN only NSE's daily files showed (14.1): a company of its own,
    // named as its successor is (the files give no name), else by its
    // symbol, whichever was imported first; its NSE listing as the files
    // leave it.
    for (isin, symbol) in &derived.daily_only {
        let successor = derived.events.get(isin).into_iter().flatten().find_map(|e| match &e.change {
            IdentityChange::IsinChanged { from, to, .. } if from == isin => Some(to),
            _ => None,
        });
        let name = successor
            .and_then(|s| next.get(s).map(|(c, _)| c).or_else(|| stored.get(s)))
            .map_or_else(|| symbol.as_str().to_owned(), |c| c.name.clone());
        if let Some((c, false)) = next.get_mut(isin) {
            c.name = name;
            continue;
        }
        if next.contains_key(isin) || stored.contains_key(isin) {
            continue;
        }
        let details = mds_domain::detail::CompanyDetails {
            listings: vec![mds_domain::Listing::bare(mds_domain::Exchange::Nse, symbol.as_str())],
            status: derived.status.get(isin).copied().unwrap_or(CompanyStatus::Delisted),
            ..mds_domain::detail::CompanyDetails::default()
        };
        let c = Company {
            isin: isin.clone(),
            ticker: symbol.clone(),
            name,
            industry: None,
            sector: None,
            is_bse: false,
            is_nse: false,
            market_cap_band: None,
            logo_url: None,
            details,
        };
        next.insert(isin.clone(), (c, false));
    }
    let isins: Vec<Isin> = next.keys().cloned().collect();
    for isin in &isins {
        let events = derived.events.get(isin).map(Vec::as_slice).unwrap_or_default();
        let predecessor = events.iter().rev().find_map(|e| match &e.change {
            IdentityChange::IsinChanged { from, to, .. } if to == isin => Some(from),
            _ => None,
        });
        let before = predecessor.and_then(|p| next.get(p).map(|(c, _)| c).or_else(|| stored.get(p))).cloned();
        let Some((c, _)) = next.get_mut(isin) else { continue };
        if let Some(seen) = derived.listings.get(isin) {
            apply_listings(c, seen);
        }
        if c.details.status == CompanyStatus::Superseded {
            take_last_day(c, events, derived.last_day.get(isin));
        }
        if let Some(before) = &before {
            inherit(c, before);
        }
    }
    let mut writes: Vec<Company> = Vec::new();
    for (isin, (c, was_given)) in next {
        match (stored.get(&isin), was_given) {
            (Some(s), true) if c == *s => summary.companies.unchanged += 1,
            (Some(s), false) if c == *s => {}
            (Some(_), _) => {
                summary.companies.updated += 1;
                writes.push(c);
            }
            (None, _) => {
                summary.companies.inserted += 1;
                writes.push(c);
            }
        }
    }
    let written: HashSet<Isin> = writes.iter().map(|c| c.isin.clone()).collect();
    let restamp: Vec<&Isin> =
        moved.iter().copied().filter(|i| !written.contains(*i) && stored.contains_key(*i)).collect();
    summary.isins_changed += moved.len() as u64;
    summary.restamped += restamp.len() as u64;
    summary.events += derived.events.values().map(|v| v.len() as u64).sum::<u64>();

    if moved.is_empty() && writes.is_empty() {
        return Ok(false);
    }
    let moved_isins: Vec<&str> = moved.iter().map(|i| i.as_str()).collect();
    for_isins(conn, "DELETE FROM identity_events WHERE isin IN", &[], &moved_isins).await?;
    let mut values: Vec<Vec<Option<String>>> = Vec::new();
    for isin in &moved {
        for (seq, e) in derived.events.get(*isin).into_iter().flatten().enumerate() {
            let json = serde_json::to_string(e).expect("an event always serialises");
            values.push(vec![Some(isin.as_str().to_owned()), Some(seq.to_string()), Some(json)]);
        }
    }
    insert_rows(
        conn,
        "INSERT INTO identity_events (isin, seq, event_json)",
        &[None, Some("BIGINT"), None],
        &values,
        None,
    )
    .await?;
    drop(values);
    if !writes.is_empty() || !restamp.is_empty() {
        if writing.is_none() {
            let now = clock.now();
            let stamp = begin_upsert::<Company>(conn, now).await?.expect("companies carry change stamps");
            summary.generation = Some(stamp.seq());
            *writing = Some(Writing { now, stamp, deferred: 0 });
        }
        let w = writing.as_mut().expect("made above");
        let (now, stamp) = (w.now, &w.stamp);
        writes.sort_by(|a, b| a.isin.cmp(&b.isin));
        dialect::write_companies(conn, &writes, stamp).await?;
        let (at, seq) = stamp.parts();
        let seq = seq.to_string();
        let restamp_keys: Vec<&str> = restamp.iter().map(|i| i.as_str()).collect();
        let sql = "UPDATE companies SET updated_at = $1, change_seq = CAST($2 AS BIGINT) WHERE isin IN";
        for_isins(conn, sql, &[at, &seq], &restamp_keys).await?;
        let draft = |c: &Company| change_draft(c, stored.get(&c.isin), &stored_ev, derived, now);
        // The written companies' events now; the restamped ones' after
        // every range's written ones, as one list would have them.
        let drafts: Vec<EventDraft> = writes.iter().filter_map(draft).collect();
        let later: Vec<EventDraft> = restamp.iter().filter_map(|i| stored.get(*i)).filter_map(draft).collect();
        events::append(conn, now, &drafts).await?;
        w.deferred = events::defer(conn, w.deferred, &later).await?;
    }
    Ok(true)
}

/// The `company.changed` of `c` (as written or restamped, `stored` before),
/// its events going from the stored ones to the derived ones; `None` when
/// neither its detail nor its events changed.
fn change_draft(
    c: &Company,
    stored: Option<&Company>,
    stored_ev: &BTreeMap<Isin, Vec<IdentityEvent>>,
    derived: &Derived,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<EventDraft> {
    let old_events = stored_ev.get(&c.isin).map(Vec::as_slice).unwrap_or_default();
    let new_events = derived.events.get(&c.isin).map(Vec::as_slice).unwrap_or_default();
    let before = stored.map(|s| detail_with_links(s, now, old_events));
    let after = detail_with_links(c, now, new_events);
    let gained: Vec<IdentityEvent> = new_events.iter().filter(|e| !old_events.contains(e)).cloned().collect();
    let change = CompanyChanged::between(before.as_ref(), after, gained);
    // A newer list that only saw a listing again (its `last_seen` moved)
    // is no change to announce: each daily list would otherwise announce
    // every company it shows.
    let unseen = |c: &Company| {
        c.details.listings.iter().map(|l| mds_domain::Listing { last_seen: None, ..l.clone() }).collect::<Vec<_>>()
    };
    let only_seen = change.changed == ["listings"] && stored.is_some_and(|s| unseen(s) == unseen(c));
    (!(change.changed.is_empty() || only_seen) || !change.events.is_empty()).then(|| change.draft())
}

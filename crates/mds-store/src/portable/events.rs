//! The event log (contract 11.1): events appended in the transaction of
//! the change that makes them, and read in id order.
//!
//! - [`append`]: numbers drafts in commit order. The ids come from the
//!   table's identity column; on PostgreSQL the appending transaction first
//!   takes an advisory lock held to its commit (`dialect::lock_events`), so
//!   no transaction can commit a lower id after a reader saw a higher one.
//! - An upsert of companies or articles announces what it changed: the
//!   backend copies the stored rows of the keys it was given into the TEMP
//!   table [`BEFORE`] (with whether each existed, [`before_select`]);
//!   [`announce`] compares each with the row the upsert leaves by the
//!   upsert's own rule (`catalog::differs`) and makes a `company.changed`,
//!   `article.published` or `article.updated` for each row inserted or
//!   changed. PostgreSQL does it in the upsert's transaction, after the
//!   writes. SQLite, whose one write lock other writers (a key revoked)
//!   wait for, does it before taking the lock: it runs the upsert's own
//!   statement on a TEMP copy of the rows ([`AFTER`]) and stages the events
//!   ([`STAGED`]); under the lock, when no other upsert of the table
//!   committed meanwhile (its change counter did not move), it copies them
//!   into the log ([`append_staged`]) in one statement, else it announces
//!   again against the table itself.
//! - [`page`]: the log after an id, filtered, with the latest id issued and
//!   the highest id retention has removed, read in one transaction.
//! - [`prune`]: removes the events older than a time and records how far
//!   it went (`meta.events_pruned_through`), in one transaction.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mds_domain::{
    Article, Company, CompanyChanged, CompanyDetail, Event, EventDraft, EventFilter, EventId, EventSubject, EventType,
    IdentityEvent, Isin, StoredEvent,
};

use super::catalog::{Upserted, differs};
use super::{Conn, DbRow, Pool, begin_read, begin_write, db, dialect, execute, fetch_all};
use crate::rows::{self, ARTICLE_COLUMNS, COMPANY_COLUMNS, COMPANY_STAMP_COLUMNS};
use crate::{EventLogPage, StoreResult};

/// The TEMP table of the stored rows an upsert was given the keys of.
pub(crate) const BEFORE: &str = "mds_upsert_before";

/// Its column saying whether the key was stored.
const EXISTED: &str = "mds_existed";

/// The `meta` key of the highest event id retention removed.
const PRUNED_THROUGH: &str = "events_pruned_through";

/// Drafts per `INSERT`.
const RUN: usize = 200;

/// Rows announced per read.
const PAGE: i64 = 500;

/// Which events an upsert of a table announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Announce {
    /// `company.changed`.
    Companies,
    /// `article.published` and `article.updated`.
    Articles,
}

/// `SELECT` of [`BEFORE`]'s rows for the keys of `keys` (a table or a
/// subquery, aliased `g`, whose column `k` is the key): the key, whether
/// it is stored ([`EXISTED`]) and the stored columns of `T` (`NULL` when
/// not).
pub(crate) fn before_select<T: Upserted>(keys: &str) -> String {
    let key = T::COLUMNS[0];
    let cols: Vec<String> = T::COLUMNS[1..].iter().map(|c| format!("t.{c}")).collect();
    format!(
        "SELECT g.k AS {key}, (t.{key} IS NOT NULL) AS {EXISTED}, {} FROM {keys} LEFT JOIN {} AS t ON t.{key} = g.k",
        cols.join(", "),
        T::TABLE
    )
}

/// Appends `drafts` to the log at `at`, in the caller's write transaction.
pub(crate) async fn append(conn: &mut Conn, at: DateTime<Utc>, drafts: &[EventDraft]) -> StoreResult<()> {
    if drafts.is_empty() {
        return Ok(());
    }
    dialect::lock_events(conn).await?;
    let into = "events (created_at, type, isin, ticker, tags_json, data_json)";
    insert_drafts(conn, into, Lead::At(&rows::ts(&at)), drafts).await.map(|_| ())
}

/// What each row an [`insert_drafts`] writes starts with, before the
/// draft's type, ISIN, ticker, tags and data.
#[derive(Debug, Clone, Copy)]
enum Lead<'a> {
    /// Nothing.
    Nothing,
    /// The time of the append (the same for every row).
    At(&'a str),
    /// The row's place: one more than this for the first row, and so on.
    Seq(u64),
}

/// `INSERT INTO {into} VALUES …` of `drafts` in runs, each row starting
/// with what `lead` says; the last place given (with [`Lead::Seq`]).
async fn insert_drafts(conn: &mut Conn, into: &str, mut lead: Lead<'_>, drafts: &[EventDraft]) -> StoreResult<u64> {
    let width = 5 + usize::from(!matches!(lead, Lead::Nothing));
    for run in drafts.chunks(RUN) {
        let values: Vec<String> = (0..run.len())
            .map(|i| {
                let mut cols: Vec<String> = (1..=width).map(|c| format!("${}", i * width + c)).collect();
                if matches!(lead, Lead::Seq(_)) {
                    cols[0] = format!("CAST({} AS BIGINT)", cols[0]);
                }
                format!("({})", cols.join(", "))
            })
            .collect();
        let sql = format!("INSERT INTO {into} VALUES {}", values.join(", "));
        let mut q = sqlx::query(&sql);
        for d in run {
            match &mut lead {
                Lead::Nothing => {}
                Lead::At(at) => q = q.bind(*at),
                Lead::Seq(seq) => {
                    *seq += 1;
                    q = q.bind(seq.to_string());
                }
            }
            q = q
                .bind(d.kind.as_str())
                .bind(d.subject.isin.as_ref().map(|i| i.as_str().to_owned()))
                .bind(d.subject.ticker.clone())
                .bind(rows::tags_json(&d.subject.tags))
                .bind(d.data.as_str());
        }
        execute(conn, q).await?;
    }
    Ok(match lead {
        Lead::Seq(seq) => seq,
        _ => 0,
    })
}

/// Where an upsert's events go: appended to the log now (in the upsert's
/// write transaction), or staged in the TEMP table [`STAGED`] to be copied
/// into the log by [`append_staged`] in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sink {
    /// Appended to the log.
    Log,
    /// Staged.
    Staged,
}

/// The TEMP table of the rows an upsert's keys will hold after it, made
/// outside the write lock by the upsert's own statement (SQLite, see
/// `dialect::upsert_chunks`).
#[allow(dead_code, reason = "used by the SQLite backend only")]
pub(crate) const AFTER: &str = "mds_upsert_after";

/// The TEMP table of events made before the write lock, in order.
pub(crate) const STAGED: &str = "mds_upsert_events";

/// Makes an event for every key of [`BEFORE`] whose row in `after` (the
/// table itself once the upsert wrote, or [`AFTER`]) is new or differs by
/// the upsert's own rule (`catalog::differs`), at `at` (the upsert's time),
/// into `sink`.
pub(crate) async fn announce<T: Upserted>(
    conn: &mut Conn,
    after_table: &str,
    at: DateTime<Utc>,
    sink: Sink,
) -> StoreResult<()> {
    let key = T::COLUMNS[0];
    let changed = differs("b", "t", T::COLUMNS, T::KEPT_WHEN_NULL);
    let sql = format!(
        "SELECT b.{key} AS k FROM {BEFORE} AS b JOIN {after_table} AS t ON t.{key} = b.{key} \
         WHERE b.{key} > $1 AND (NOT b.{EXISTED} OR {changed}) ORDER BY b.{key} LIMIT {PAGE}"
    );
    if sink == Sink::Staged {
        let create = format!(
            "CREATE TEMP TABLE {STAGED} (seq INTEGER PRIMARY KEY, type TEXT, isin TEXT, ticker TEXT, \
             tags_json TEXT, data_json TEXT)"
        );
        execute(conn, sqlx::query(&create)).await?;
    }
    let mut last = String::new();
    loop {
        let keys: Vec<String> = sqlx::query_scalar(&sql).bind(last.as_str()).fetch_all(&mut *conn).await.map_err(db)?;
        let Some(k) = keys.last() else { break };
        last = k.clone();
        let drafts = match T::ANNOUNCE {
            Announce::Companies => company_drafts(conn, after_table, &keys, at).await?,
            Announce::Articles => article_drafts(conn, after_table, &keys).await?,
        };
        match sink {
            Sink::Log => append(conn, at, &drafts).await?,
            Sink::Staged => stage(conn, &drafts).await?,
        }
    }
    Ok(())
}

/// Inserts `drafts` into [`STAGED`], after what it holds.
async fn stage(conn: &mut Conn, drafts: &[EventDraft]) -> StoreResult<()> {
    insert_drafts(conn, &format!("{STAGED} (type, isin, ticker, tags_json, data_json)"), Lead::Nothing, drafts)
        .await
        .map(|_| ())
}

/// Appends the events of [`STAGED`] to the log at `at`, in order, in the
/// caller's write transaction.
pub(crate) async fn append_staged(conn: &mut Conn, at: DateTime<Utc>) -> StoreResult<()> {
    append_from(conn, STAGED, at).await
}

/// Appends the rows of the TEMP table `table` to the log at `at`, in the
/// order of their `seq`, in the caller's write transaction.
async fn append_from(conn: &mut Conn, table: &str, at: DateTime<Utc>) -> StoreResult<()> {
    dialect::lock_events(conn).await?;
    let sql = format!(
        "INSERT INTO events (type, created_at, isin, ticker, tags_json, data_json) \
         SELECT type, $1, isin, ticker, tags_json, data_json FROM {table} ORDER BY seq"
    );
    execute(conn, sqlx::query(&sql).bind(rows::ts(&at))).await?;
    Ok(())
}

/// The TEMP table of events an identity import made to be appended after
/// others it makes later ([`defer`], [`append_deferred`]).
pub(crate) const DEFERRED: &str = "mds_identity_deferred";

/// Keeps `drafts` in [`DEFERRED`] after the `held` it holds (made empty
/// first when `held` is 0), in order; how many it holds now.
pub(crate) async fn defer(conn: &mut Conn, held: u64, drafts: &[EventDraft]) -> StoreResult<u64> {
    if drafts.is_empty() {
        return Ok(held);
    }
    if held == 0 {
        let create = format!(
            "CREATE TEMP TABLE IF NOT EXISTS {DEFERRED} (seq BIGINT PRIMARY KEY, type TEXT, isin TEXT, ticker TEXT, \
             tags_json TEXT, data_json TEXT)"
        );
        execute(conn, sqlx::query(&create)).await?;
        execute(conn, sqlx::query(&format!("DELETE FROM {DEFERRED}"))).await?;
    }
    let into = format!("{DEFERRED} (seq, type, isin, ticker, tags_json, data_json)");
    insert_drafts(conn, &into, Lead::Seq(held), drafts).await
}

/// Appends the events of [`DEFERRED`] to the log at `at`, in order, and
/// drops the table, in the caller's write transaction.
pub(crate) async fn append_deferred(conn: &mut Conn, at: DateTime<Utc>) -> StoreResult<()> {
    append_from(conn, DEFERRED, at).await?;
    execute(conn, sqlx::query(&format!("DROP TABLE {DEFERRED}"))).await?;
    Ok(())
}

/// `SELECT cols FROM table WHERE key IN (keys…) ORDER BY key`, a few
/// hundred keys (so an upsert's events are numbered in key order).
async fn rows_of(conn: &mut Conn, cols: &[&str], table: &str, keys: &[String]) -> StoreResult<Vec<DbRow>> {
    let list: Vec<String> = (1..=keys.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT {} FROM {table} WHERE {} IN ({}) ORDER BY {}",
        cols.join(", "),
        cols[0],
        list.join(", "),
        cols[0]
    );
    let mut q = sqlx::query(&sql);
    for k in keys {
        q = q.bind(k.as_str());
    }
    fetch_all(conn, q).await
}

/// The stored rows of [`BEFORE`] among `keys`, by key.
async fn before_rows(conn: &mut Conn, cols: &[&str], keys: &[String]) -> StoreResult<Vec<DbRow>> {
    let mut with_flag: Vec<&str> = cols.to_vec();
    with_flag.push(EXISTED);
    let rs = rows_of(conn, &with_flag, BEFORE, keys).await?;
    let mut out = Vec::with_capacity(rs.len());
    for r in rs {
        let existed: bool = sqlx::Row::try_get(&r, EXISTED).map_err(db)?;
        if existed {
            out.push(r);
        }
    }
    Ok(out)
}

/// The `company.changed` drafts of the companies with ISINs `keys`.
async fn company_drafts(
    conn: &mut Conn,
    after_table: &str,
    keys: &[String],
    at: DateTime<Utc>,
) -> StoreResult<Vec<EventDraft>> {
    let mut before: HashMap<Isin, Company> = HashMap::new();
    for r in before_rows(conn, COMPANY_COLUMNS, keys).await? {
        let c = rows::company(&r)?;
        before.insert(c.isin.clone(), c);
    }
    let cols: Vec<&str> = COMPANY_COLUMNS.iter().chain(&COMPANY_STAMP_COLUMNS).copied().collect();
    let now = rows_of(conn, &cols, after_table, keys).await?;
    let events = identity_events_of(conn, keys).await?;
    let mut drafts = Vec::with_capacity(now.len());
    for r in &now {
        let after = rows::stored_company(r)?;
        let history = events.get(&after.company.isin).map(Vec::as_slice).unwrap_or_default();
        let detail = |c: &Company| detail_with_links(c, at, history);
        let old = before.get(&after.company.isin).map(detail);
        let new = detail_with_links(&after.company, after.updated_at, history);
        drafts.push(CompanyChanged::between(old.as_ref(), new, Vec::new()).draft());
    }
    Ok(drafts)
}

/// The identity events of the ISINs `keys`, in order.
async fn identity_events_of(conn: &mut Conn, keys: &[String]) -> StoreResult<HashMap<Isin, Vec<IdentityEvent>>> {
    let list: Vec<String> = (1..=keys.len()).map(|i| format!("${i}")).collect();
    let sql =
        format!("SELECT isin, event_json FROM identity_events WHERE isin IN ({}) ORDER BY isin, seq", list.join(", "));
    let mut q = sqlx::query(&sql);
    for k in keys {
        q = q.bind(k.as_str());
    }
    let mut out: HashMap<Isin, Vec<IdentityEvent>> = HashMap::new();
    for r in fetch_all(conn, q).await? {
        let (isin, json): (String, String) = (sqlx::Row::get(&r, 0), sqlx::Row::get(&r, 1));
        let isin = Isin::parse(&isin).map_err(|e| rows::corrupt(format_args!("identity_events: {e}")))?;
        let e = serde_json::from_str(&json)
            .map_err(|e| rows::corrupt(format_args!("identity_events {isin}: does not decode ({e})")))?;
        out.entry(isin).or_default().push(e);
    }
    Ok(out)
}

/// The detail of `company` as served, with `superseded_by` and
/// `supersedes` from its identity events.
pub(crate) fn detail_with_links(
    company: &Company,
    updated_at: DateTime<Utc>,
    events: &[IdentityEvent],
) -> CompanyDetail {
    let mut d = CompanyDetail::of(company, updated_at);
    (d.superseded_by, d.supersedes) = mds_domain::identity::links(&company.isin, events);
    d
}

/// The `article.published` and `article.updated` drafts of the articles
/// with slugs `keys`.
async fn article_drafts(conn: &mut Conn, after_table: &str, keys: &[String]) -> StoreResult<Vec<EventDraft>> {
    let mut existed: HashMap<String, ()> = HashMap::new();
    for r in before_rows(conn, &ARTICLE_COLUMNS[..1], keys).await? {
        existed.insert(sqlx::Row::try_get(&r, ARTICLE_COLUMNS[0]).map_err(db)?, ());
    }
    let now = rows_of(conn, ARTICLE_COLUMNS, after_table, keys).await?;
    let mut drafts = Vec::with_capacity(now.len());
    for r in &now {
        let article = rows::article(r)?;
        let kind = match existed.contains_key(article.slug.as_str()) {
            true => EventType::ArticleUpdated,
            false => EventType::ArticlePublished,
        };
        drafts.push(article_draft(kind, article));
    }
    Ok(drafts)
}

/// The draft of an article event: the article as the news list shows it.
fn article_draft(kind: EventType, article: Article) -> EventDraft {
    let (summary, _body) = article.into_parts();
    EventDraft {
        kind,
        subject: EventSubject {
            isin: summary.isin.clone(),
            ticker: summary.ticker.as_ref().map(|t| t.to_ascii_uppercase()),
            tags: summary.tags.clone(),
        },
        data: serde_json::to_string(&summary).expect("an article always serialises"),
    }
}

/// The columns an event row is read by.
const EVENT_COLUMNS: &str = "id, type, created_at, isin, ticker, tags_json, data_json";

/// An `events` row.
fn stored_event(r: &DbRow) -> StoreResult<StoredEvent> {
    use sqlx::Row;
    let id: i64 = r.try_get("id").map_err(db)?;
    let kind: String = r.try_get("type").map_err(db)?;
    let kind = EventType::from_wire(&kind).ok_or_else(|| rows::corrupt(format_args!("events {id}: type {kind:?}")))?;
    let created_at = rows::instant("events", "created_at", &r.try_get::<String, _>("created_at").map_err(db)?)?;
    let isin: Option<String> = r.try_get("isin").map_err(db)?;
    let isin =
        isin.map(|i| Isin::parse(&i)).transpose().map_err(|e| rows::corrupt(format_args!("events {id}: {e}")))?;
    let tags: Vec<String> = serde_json::from_str(&r.try_get::<String, _>("tags_json").map_err(db)?)
        .map_err(|e| rows::corrupt(format_args!("events {id}: tags_json ({e})")))?;
    let data = serde_json::from_str(&r.try_get::<String, _>("data_json").map_err(db)?)
        .map_err(|e| rows::corrupt(format_args!("events {id}: data_json ({e})")))?;
    Ok(StoredEvent {
        event: Event { id: EventId(id), kind, created_at, data },
        subject: EventSubject { isin, ticker: r.try_get("ticker").map_err(db)?, tags },
    })
}

/// At most `limit` events of the log after `after` passing `filter`, with
/// the latest id issued and how far retention went, in one read.
pub(crate) async fn page(pool: &Pool, after: EventId, filter: &EventFilter, limit: usize) -> StoreResult<EventLogPage> {
    let mut tx = begin_read(pool).await?;
    let mut w = vec!["id > $1".to_owned(), "endpoint_id IS NULL".to_owned()];
    let mut values: Vec<String> = Vec::new();
    let bind = |v: &str, values: &mut Vec<String>| {
        values.push(v.to_owned());
        format!("${}", values.len() + 2)
    };
    let list =
        |vs: Vec<&str>, values: &mut Vec<String>| -> Vec<String> { vs.into_iter().map(|v| bind(v, values)).collect() };
    if !filter.types.is_empty() {
        let l = list(filter.types.iter().map(|t| t.as_str()).collect(), &mut values);
        w.push(format!("type IN ({})", l.join(", ")));
    }
    if !filter.isins.is_empty() {
        let l = list(filter.isins.iter().map(|i| i.as_str()).collect(), &mut values);
        w.push(format!("isin IN ({})", l.join(", ")));
    }
    if !filter.tickers.is_empty() {
        let l = list(filter.tickers.iter().map(String::as_str).collect(), &mut values);
        w.push(format!("ticker IN ({})", l.join(", ")));
    }
    if !filter.tags.is_empty() {
        let l = list(filter.tags.iter().map(String::as_str).collect(), &mut values);
        let any: Vec<String> = l.iter().map(|p| dialect::has_tag(p)).collect();
        w.push(format!("({})", any.join(" OR ")));
    }
    let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE {} ORDER BY id LIMIT $2", w.join(" AND "));
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut q = sqlx::query(&sql).bind(after.number()).bind(limit);
    for v in &values {
        q = q.bind(v.as_str());
    }
    let events = fetch_all(&mut tx, q).await?.iter().map(stored_event).collect::<StoreResult<Vec<_>>>()?;
    let latest: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM events").fetch_one(&mut *tx).await.map_err(db)?;
    let pruned = super::meta::read_generation(&mut tx, PRUNED_THROUGH).await?;
    tx.commit().await.map_err(db)?;
    Ok(EventLogPage { events, latest: EventId(latest.unwrap_or(0).max(pruned)), pruned_through: EventId(pruned) })
}

/// Every event of the log after `after`, at most `limit`, in id order:
/// what a node's streams are fed from.
pub(crate) async fn after(pool: &Pool, after: EventId, limit: usize) -> StoreResult<Vec<StoredEvent>> {
    let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE id > $1 AND endpoint_id IS NULL ORDER BY id LIMIT $2");
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rs = sqlx::query(&sql).bind(after.number()).bind(limit).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(stored_event).collect()
}

/// The last event created before `$1`, found in the `created_at` index.
/// `MAX(id + 0)`, not `MAX(id)`: on the bare key, SQLite answers a `MAX`
/// by walking the table back from its end, testing each row's
/// `created_at`, and when nothing is that old it walks every row (a
/// million events: 0.4 s warm, seconds cold, with the write lock held,
/// so every metering flush waited). The expression turns that walk off,
/// and the range in the index holds only what is to be pruned.
pub(crate) const LAST_BEFORE: &str = "SELECT MAX(id + 0) FROM events WHERE created_at < $1";

/// Removes the events created before `before`; returns how many.
pub(crate) async fn prune(pool: &Pool, before: DateTime<Utc>) -> StoreResult<u64> {
    let mut tx = begin_write(pool).await?;
    let upto: Option<i64> =
        sqlx::query_scalar(LAST_BEFORE).bind(rows::ts(&before)).fetch_one(&mut *tx).await.map_err(db)?;
    let Some(upto) = upto else { return Ok(0) };
    let n = execute(&mut tx, sqlx::query("DELETE FROM events WHERE id <= $1").bind(upto)).await?;
    let sql = "UPDATE meta SET value = $2 WHERE key = $1 AND CAST(value AS BIGINT) < CAST($2 AS BIGINT)";
    execute(&mut tx, sqlx::query(sql).bind(PRUNED_THROUGH).bind(upto.to_string())).await?;
    tx.commit().await.map_err(db)?;
    Ok(n)
}

/// [`crate::EventStore::open_stream`], in the caller's write transaction:
/// the key's streams are counted under a lock on the key
/// (`dialect::lock_key_streams`), so two nodes opening at once cannot both
/// pass the count.
pub(crate) async fn open_stream(conn: &mut Conn, lease: &crate::StreamLease) -> StoreResult<bool> {
    let crate::StreamLease { id, key, node, now, until, max } = lease;
    dialect::lock_key_streams(conn, key.as_str()).await?;
    let open: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM event_streams WHERE key_prefix = $1 AND lease_until > $2")
        .bind(key.as_str())
        .bind(rows::ts(now))
        .fetch_one(&mut *conn)
        .await
        .map_err(db)?;
    if open.unsigned_abs() >= *max as u64 {
        return Ok(false);
    }
    execute(
        conn,
        sqlx::query("DELETE FROM event_streams WHERE key_prefix = $1 AND lease_until <= $2")
            .bind(key.as_str())
            .bind(rows::ts(now)),
    )
    .await?;
    let sql = "INSERT INTO event_streams (id, key_prefix, node, lease_until) VALUES ($1, $2, $3, $4)";
    execute(conn, sqlx::query(sql).bind(id).bind(key.as_str()).bind(node).bind(rows::ts(until))).await?;
    Ok(true)
}

/// [`crate::EventStore::renew_streams`].
pub(crate) async fn renew_streams(pool: &Pool, node: &str, until: DateTime<Utc>) -> StoreResult<u64> {
    let sql = "UPDATE event_streams SET lease_until = $2 WHERE node = $1";
    sqlx::query(sql).bind(node).bind(rows::ts(&until)).execute(pool).await.map_err(db).map(|r| r.rows_affected())
}

/// [`crate::EventStore::close_stream`].
pub(crate) async fn close_stream(pool: &Pool, id: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM event_streams WHERE id = $1").bind(id).execute(pool).await.map_err(db)?;
    Ok(())
}

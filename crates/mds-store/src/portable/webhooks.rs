//! Webhook endpoints and their delivery cursors (contract section 11.2;
//! what a cursor means: [`crate::webhooks`]).
//!
//! - The times this module compares in SQL (`next_attempt_at`,
//!   `lease_until`) are written fixed-width ([`at`]), so text order is time
//!   order.
//! - [`claim`]: in one write transaction, the enabled endpoints with no live
//!   lease, no retry scheduled later, and an event after their cursor
//!   (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two nodes' claims never
//!   take the same row); for each, the events after its cursor are read in
//!   id order, keeping those that pass its filter (or are its own `ping`)
//!   up to the run asked for: the endpoint is claimed with a lease and
//!   that run; if none passes, the cursor moves past them.
//! - [`finish`]: each attempt's row and outcome, in order, only while the
//!   claim's owner still holds the lease and the attempt's event is still
//!   in flight (a replay or a lapse ends both); then the lease is
//!   released. A run's attempts are one transaction, not one each.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, Actor, Event, EventFilter, EventId, EventSubject, EventType, Isin};
use serde_json::{Value, json};

use super::{Conn, DbRow, Pool, begin_write, db, dialect, execute, fetch_all};
use crate::rows::{self, RowExt};
use crate::webhooks::ATTEMPTS_KEPT;
use crate::{
    DeliveryOutcome, NewWebhook, StoreError, StoreResult, WebhookAttempt, WebhookDelivery, WebhookEndpoint,
    WebhookPatch,
};

/// Events read per step of a claim's scan.
const SCAN: i64 = 200;

/// The columns an endpoint is read by (`a.name`: its account's name).
const COLUMNS: &str = "w.id, a.name AS account, w.url, w.description, w.filter_json, w.secret, w.old_secret, \
     w.old_secret_until, w.created_at, w.updated_at, w.disabled_at, w.disabled_reason, w.delivered_through, \
     w.attempt, w.next_attempt_at, w.failing_since";

/// `FROM` an endpoint with its account.
const FROM: &str = "webhook_endpoints AS w JOIN accounts AS a ON a.id = w.account_id";

/// An instant as this module stores it: fixed width, so text order is
/// time order.
fn at(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// A filter as stored (`filter_json`).
fn filter_json(f: &EventFilter) -> String {
    json!({
        "types": f.types.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        "isins": f.isins.iter().map(Isin::as_str).collect::<Vec<_>>(),
        "tickers": f.tickers,
        "tags": f.tags,
    })
    .to_string()
}

/// A stored filter.
fn filter_of(id: &str, s: &str) -> StoreResult<EventFilter> {
    let bad = |what: &dyn std::fmt::Display| rows::corrupt(format_args!("webhook_endpoints {id}: filter_json {what}"));
    let v: Value = serde_json::from_str(s).map_err(|e| bad(&e))?;
    let list = |k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let types = list("types")
        .iter()
        .map(|t| EventType::from_wire(t).ok_or_else(|| bad(&format_args!("type {t:?}"))))
        .collect::<StoreResult<_>>()?;
    let isins = list("isins").iter().map(|i| Isin::parse(i).map_err(|e| bad(&e))).collect::<StoreResult<_>>()?;
    Ok(EventFilter { types, isins, tickers: list("tickers"), tags: list("tags") })
}

/// An endpoint row (read by [`COLUMNS`]).
fn endpoint(r: &DbRow) -> StoreResult<WebhookEndpoint> {
    const T: &str = "webhook_endpoints";
    let id = r.text("id")?;
    let instant = |c: &str| -> StoreResult<DateTime<Utc>> { rows::instant(T, c, &r.text(c)?) };
    let opt = |c: &str| -> StoreResult<Option<DateTime<Utc>>> { rows::opt_instant(T, c, r.opt_text(c)?) };
    let account = AccountName::parse(&r.text("account")?).map_err(|e| rows::corrupt(format_args!("{T} {id}: {e}")))?;
    let old_secret = match (r.opt_text("old_secret")?, opt("old_secret_until")?) {
        (Some(s), Some(until)) => Some((s, until)),
        _ => None,
    };
    let disabled =
        opt("disabled_at")?.map(|t| Ok::<_, StoreError>((t, r.opt_text("disabled_reason")?.unwrap_or_default())));
    Ok(WebhookEndpoint {
        filter: filter_of(&id, &r.text("filter_json")?)?,
        account,
        url: r.text("url")?,
        description: r.opt_text("description")?,
        secret: r.text("secret")?,
        old_secret,
        created_at: instant("created_at")?,
        updated_at: instant("updated_at")?,
        disabled: disabled.transpose()?,
        delivered_through: EventId(r.int("delivered_through")?),
        attempt: u32::try_from(r.int("attempt")?).unwrap_or(u32::MAX),
        next_attempt_at: opt("next_attempt_at")?,
        failing_since: opt("failing_since")?,
        id,
    })
}

/// The endpoint `id`, read on `conn`.
async fn one(conn: &mut Conn, id: &str) -> StoreResult<Option<WebhookEndpoint>> {
    let sql = format!("SELECT {COLUMNS} FROM {FROM} WHERE w.id = $1");
    fetch_all(conn, sqlx::query(&sql).bind(id)).await?.first().map(endpoint).transpose()
}

/// The highest event id issued (or pruned), read on `conn`.
async fn latest_event(conn: &mut Conn) -> StoreResult<i64> {
    let latest: Option<i64> =
        sqlx::query_scalar("SELECT MAX(id) FROM events").fetch_one(&mut *conn).await.map_err(db)?;
    let pruned = super::meta::read_generation(conn, "events_pruned_through").await?;
    Ok(latest.unwrap_or(0).max(pruned))
}

/// Creates an endpoint (see `WebhookStore::create_webhook`).
pub(crate) async fn create(conn: &mut Conn, new: &NewWebhook, max: usize) -> StoreResult<WebhookEndpoint> {
    let account: Option<i64> = sqlx::query_scalar("SELECT id FROM accounts WHERE name = $1")
        .bind(new.account.as_str())
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?;
    let account =
        account.ok_or_else(|| StoreError::NotFound(format!("no account named {:?}", new.account.as_str())))?;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = $1")
        .bind(account)
        .fetch_one(&mut *conn)
        .await
        .map_err(db)?;
    if usize::try_from(count).unwrap_or(usize::MAX) >= max {
        return Err(StoreError::Conflict(format!("an account has at most {max} webhook endpoints")));
    }
    // Only events committed from now on: on PostgreSQL the events lock
    // orders this read after every appending transaction before it.
    dialect::lock_events(conn).await?;
    let through = latest_event(conn).await?;
    let now = at(&new.now);
    let sql = "INSERT INTO webhook_endpoints (id, account_id, url, description, filter_json, secret, created_at, \
               updated_at, delivered_through) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)";
    let q = sqlx::query(sql)
        .bind(new.id.as_str())
        .bind(account)
        .bind(new.url.as_str())
        .bind(new.description.as_deref())
        .bind(filter_json(&new.filter))
        .bind(new.secret.as_str())
        .bind(now.as_str())
        .bind(through);
    execute(conn, q).await?;
    one(conn, &new.id).await?.ok_or_else(|| StoreError::NotFound(new.id.clone()))
}

/// The endpoints of `account` (all: `None`), oldest first.
pub(crate) async fn list(pool: &Pool, account: Option<&AccountName>) -> StoreResult<Vec<WebhookEndpoint>> {
    let sql = format!("SELECT {COLUMNS} FROM {FROM} WHERE ($1 IS NULL OR a.name = $1) ORDER BY w.created_at, w.id");
    let rs = sqlx::query(&sql).bind(account.map(AccountName::as_str)).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(endpoint).collect()
}

/// The endpoint `id`.
pub(crate) async fn get(pool: &Pool, id: &str) -> StoreResult<Option<WebhookEndpoint>> {
    let mut conn = pool.acquire().await.map_err(db)?;
    one(&mut conn, id).await
}

/// Applies `patch` (see `WebhookStore::update_webhook`).
pub(crate) async fn update(
    conn: &mut Conn,
    id: &str,
    patch: &WebhookPatch,
    now: DateTime<Utc>,
) -> StoreResult<Option<WebhookEndpoint>> {
    let Some(before) = one(conn, id).await? else { return Ok(None) };
    let url = patch.url.clone().unwrap_or(before.url);
    let description = patch.description.clone().unwrap_or(before.description);
    let filter = patch.filter.as_ref().unwrap_or(&before.filter);
    let now = at(&now);
    let sql =
        "UPDATE webhook_endpoints SET url = $2, description = $3, filter_json = $4, updated_at = $5 WHERE id = $1";
    let q = sqlx::query(sql).bind(id).bind(url).bind(description).bind(filter_json(filter)).bind(now.as_str());
    execute(conn, q).await?;
    match patch.enabled {
        Some(true) if before.disabled.is_some() => {
            let sql = "UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, attempt = 0, \
                       next_attempt_at = NULL, failing_since = NULL, lease_owner = NULL, lease_until = NULL \
                       WHERE id = $1";
            execute(conn, sqlx::query(sql).bind(id)).await?;
        }
        Some(false) if before.disabled.is_none() => disable(conn, id, "disabled by its owner", &now).await?,
        _ => {}
    }
    one(conn, id).await
}

/// Disables `id` for `reason` at `now` (stored form), ending any lease.
async fn disable(conn: &mut Conn, id: &str, reason: &str, now: &str) -> StoreResult<()> {
    let sql = "UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3, attempt = 0, \
               next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = $1";
    execute(conn, sqlx::query(sql).bind(id).bind(now).bind(reason)).await?;
    Ok(())
}

/// Deletes `id`, its attempts and its pings.
pub(crate) async fn delete(conn: &mut Conn, id: &str) -> StoreResult<bool> {
    execute(conn, sqlx::query("DELETE FROM webhook_attempts WHERE endpoint_id = $1").bind(id)).await?;
    execute(conn, sqlx::query("DELETE FROM events WHERE endpoint_id = $1").bind(id)).await?;
    Ok(execute(conn, sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1").bind(id)).await? > 0)
}

/// Rotates the secret of `id`.
pub(crate) async fn rotate(
    conn: &mut Conn,
    id: &str,
    secret: &str,
    old_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> StoreResult<Option<WebhookEndpoint>> {
    let sql = "UPDATE webhook_endpoints SET old_secret = secret, old_secret_until = $3, secret = $2, \
               updated_at = $4 WHERE id = $1";
    let q = sqlx::query(sql).bind(id).bind(secret).bind(at(&old_until)).bind(at(&now));
    if execute(conn, q).await? == 0 {
        return Ok(None);
    }
    one(conn, id).await
}

/// Sets the cursor of `id` back to `since`.
pub(crate) async fn replay(conn: &mut Conn, id: &str, since: EventId) -> StoreResult<Option<WebhookEndpoint>> {
    // Never forward: what is pending stays pending.
    let sql = "UPDATE webhook_endpoints SET \
               delivered_through = CASE WHEN $2 < delivered_through THEN $2 ELSE delivered_through END, \
               attempt = 0, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = $1";
    if execute(conn, sqlx::query(sql).bind(id).bind(since.number())).await? == 0 {
        return Ok(None);
    }
    one(conn, id).await
}

/// Appends a `ping` for `id` only.
pub(crate) async fn ping(conn: &mut Conn, id: &str, now: DateTime<Utc>) -> StoreResult<Option<EventId>> {
    if one(conn, id).await?.is_none() {
        return Ok(None);
    }
    dialect::lock_events(conn).await?;
    let data = json!({"webhook_id": id}).to_string();
    let sql = "INSERT INTO events (type, created_at, data_json, endpoint_id) VALUES ($1, $2, $3, $4)";
    let q = sqlx::query(sql).bind(EventType::Ping.as_str()).bind(rows::ts(&now)).bind(data).bind(id);
    execute(conn, q).await?;
    let n: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM events WHERE endpoint_id = $1")
        .bind(id)
        .fetch_one(&mut *conn)
        .await
        .map_err(db)?;
    Ok(n.map(EventId))
}

/// The latest attempts of `id`, newest first.
pub(crate) async fn attempts(pool: &Pool, id: &str, limit: usize) -> StoreResult<Vec<WebhookAttempt>> {
    let sql = "SELECT event_id, attempt, attempted_at, status, error, duration_ms FROM webhook_attempts \
               WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2";
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rs = sqlx::query(sql).bind(id).bind(limit).fetch_all(pool).await.map_err(db)?;
    rs.iter()
        .map(|r| {
            let status: Option<i64> = sqlx::Row::try_get(r, "status").map_err(db)?;
            Ok(WebhookAttempt {
                event_id: EventId(r.int("event_id")?),
                attempt: u32::try_from(r.int("attempt")?).unwrap_or(u32::MAX),
                attempted_at: rows::instant("webhook_attempts", "attempted_at", &r.text("attempted_at")?)?,
                status: status.and_then(|s| u16::try_from(s).ok()),
                error: r.opt_text("error")?,
                duration_ms: u64::try_from(r.int("duration_ms")?).unwrap_or(0),
            })
        })
        .collect()
}

/// Disables `id`, audited.
pub(crate) async fn disable_audited(
    conn: &mut Conn,
    id: &str,
    reason: &str,
    actor: &Actor,
    now: DateTime<Utc>,
) -> StoreResult<Option<WebhookEndpoint>> {
    let Some(before) = one(conn, id).await? else { return Ok(None) };
    disable(conn, id, reason, &at(&now)).await?;
    let after = one(conn, id).await?;
    let view = |e: &WebhookEndpoint| json!({"account": e.account.as_str(), "url": e.url, "disabled_reason": e.disabled.as_ref().map(|d| &d.1)});
    super::admin::audit(conn, actor, now, "webhook.disable", &id, Some(view(&before)), after.as_ref().map(view))
        .await?;
    Ok(after)
}

/// Claims due deliveries (see the module docs).
pub(crate) async fn claim(
    pool: &Pool,
    owner: &str,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: usize,
    run: usize,
) -> StoreResult<Vec<WebhookDelivery>> {
    let mut tx = begin_write(pool).await?;
    let now_s = at(&now);
    let sql = format!(
        "SELECT w.id FROM webhook_endpoints AS w WHERE w.disabled_at IS NULL \
         AND (w.lease_until IS NULL OR w.lease_until < $1) \
         AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= $1) \
         AND EXISTS (SELECT 1 FROM events AS e WHERE e.id > w.delivered_through \
             AND (e.endpoint_id IS NULL OR e.endpoint_id = w.id)) \
         ORDER BY w.id LIMIT $2{}",
        dialect::SKIP_LOCKED
    );
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let ids: Vec<String> =
        sqlx::query_scalar(&sql).bind(now_s.as_str()).bind(limit).fetch_all(&mut *tx).await.map_err(db)?;
    let mut out = Vec::new();
    for id in ids {
        let Some(ep) = one(&mut tx, &id).await? else { continue };
        match next_events(&mut tx, &ep, run.max(1)).await? {
            Scan::Found(events) => {
                let sql = "UPDATE webhook_endpoints SET lease_owner = $2, lease_until = $3 WHERE id = $1";
                execute(&mut tx, sqlx::query(sql).bind(&id).bind(owner).bind(at(&lease_until))).await?;
                out.push(WebhookDelivery { endpoint: ep, events });
            }
            Scan::Skipped(through) => {
                let sql = "UPDATE webhook_endpoints SET delivered_through = $2 WHERE id = $1 AND attempt = 0";
                execute(&mut tx, sqlx::query(sql).bind(&id).bind(through)).await?;
            }
        }
    }
    tx.commit().await.map_err(db)?;
    Ok(out)
}

/// What a scan after an endpoint's cursor found.
enum Scan {
    /// The next events it is to receive, in id order (at least one).
    Found(Vec<Event>),
    /// None it is to receive up to this id.
    Skipped(i64),
}

/// The next events (up to `run`) after `ep`'s cursor that its filter
/// admits (or its own pings), scanning at most a few steps.
async fn next_events(conn: &mut Conn, ep: &WebhookEndpoint, run: usize) -> StoreResult<Scan> {
    let sql = "SELECT id, type, created_at, isin, ticker, tags_json, data_json, endpoint_id FROM events \
               WHERE id > $1 AND (endpoint_id IS NULL OR endpoint_id = $2) ORDER BY id LIMIT $3";
    let mut after = ep.delivered_through.number();
    let mut found = Vec::new();
    for _ in 0..5 {
        let rs = fetch_all(conn, sqlx::query(sql).bind(after).bind(ep.id.as_str()).bind(SCAN)).await?;
        let Some(last) = rs.last() else { break };
        after = last.int("id")?;
        for r in &rs {
            let id = r.int("id")?;
            let kind = r.text("type")?;
            let kind =
                EventType::from_wire(&kind).ok_or_else(|| rows::corrupt(format_args!("events {id}: type {kind:?}")))?;
            let isin = r.opt_text("isin")?.map(|i| Isin::parse(&i)).transpose();
            let isin = isin.map_err(|e| rows::corrupt(format_args!("events {id}: {e}")))?;
            let tags: Vec<String> = serde_json::from_str(&r.text("tags_json")?)
                .map_err(|e| rows::corrupt(format_args!("events {id}: tags_json ({e})")))?;
            let subject = EventSubject { isin, ticker: r.opt_text("ticker")?, tags };
            let own_ping = r.opt_text("endpoint_id")?.is_some();
            if own_ping || (kind != EventType::Ping && ep.filter.admits(kind, &subject)) {
                let data = serde_json::from_str(&r.text("data_json")?)
                    .map_err(|e| rows::corrupt(format_args!("events {id}: data_json ({e})")))?;
                let created_at = rows::instant("events", "created_at", &r.text("created_at")?)?;
                found.push(Event { id: EventId(id), kind, created_at, data });
                if found.len() == run {
                    return Ok(Scan::Found(found));
                }
            }
        }
        if !found.is_empty() || i64::try_from(rs.len()).unwrap_or(0) < SCAN {
            break;
        }
    }
    Ok(if found.is_empty() { Scan::Skipped(after) } else { Scan::Found(found) })
}

/// Records a run's attempts and applies their outcomes, then releases the
/// lease (see the module docs): the outcomes are folded into one update of
/// the endpoint ([`Fold`]) and the attempts are one insert, so a run costs
/// three statements however long it is.
pub(crate) async fn finish(
    conn: &mut Conn,
    owner: &str,
    endpoint: &str,
    attempts: &[(WebhookAttempt, DeliveryOutcome)],
) -> StoreResult<bool> {
    // A run is in id order; an attempt out of order ends it there.
    let Some((first, _)) = attempts.first() else { return Ok(false) };
    let run = &attempts[..1 + attempts.windows(2).take_while(|w| w[0].0.event_id < w[1].0.event_id).count()];
    let fold = run.iter().fold(Fold::default(), |f, (a, o)| f.then(a, o));
    // Each assignment with the values it binds (`?`: the next of them).
    let mut sets: Vec<(&str, String, Vec<Bound>)> = Vec::new();
    if let Some(through) = fold.through {
        sets.push(("delivered_through", "?".into(), vec![Bound::Int(through)]));
    }
    match fold.attempt {
        Count::Unchanged => {}
        Count::Plus(k) => sets.push(("attempt", format!("attempt + {k}"), vec![])),
        Count::Is(k) => sets.push(("attempt", k.to_string(), vec![])),
    }
    if let Some(next) = fold.next {
        sets.push(("next_attempt_at", "?".into(), vec![Bound::Text(next)]));
    }
    match fold.failing {
        Since::Unchanged => {}
        Since::Null => sets.push(("failing_since", "NULL".into(), vec![])),
        Since::AtLeast(t) => {
            sets.push(("failing_since", "COALESCE(failing_since, ?)".into(), vec![Bound::Text(Some(t))]))
        }
        Since::Is(t) => sets.push(("failing_since", "?".into(), vec![Bound::Text(Some(t))])),
    }
    if let Some((when, why)) = fold.disabled {
        sets.push(("disabled_at", "?".into(), vec![Bound::Text(Some(when))]));
        sets.push(("disabled_reason", "?".into(), vec![Bound::Text(Some(why))]));
    }
    let mut assignments = String::new();
    let mut bound = Vec::new();
    for (column, expr, values) in sets {
        let mut expr = expr;
        for v in values {
            expr = expr.replacen('?', &format!("${}", 4 + bound.len()), 1);
            bound.push(v);
        }
        assignments.push_str(&format!("{column} = {expr}, "));
    }
    // The lease is held and the first event still in flight (`$3`: a
    // replay moved the cursor back and released the lease, or another node
    // moved it past).
    let sql = format!(
        "UPDATE webhook_endpoints SET {assignments}lease_owner = NULL, lease_until = NULL \
         WHERE id = $1 AND lease_owner = $2 AND delivered_through < $3"
    );
    let mut q = sqlx::query(&sql).bind(endpoint).bind(owner).bind(first.event_id.number());
    for v in bound {
        q = match v {
            Bound::Int(n) => q.bind(n),
            Bound::Text(t) => q.bind(t),
        };
    }
    if execute(conn, q).await? == 0 {
        return Ok(false);
    }
    let rows: Vec<String> = (0..run.len())
        .map(|i| {
            format!(
                "(${}, ${}, ${}, ${}, ${}, ${}, ${})",
                7 * i + 1,
                7 * i + 2,
                7 * i + 3,
                7 * i + 4,
                7 * i + 5,
                7 * i + 6,
                7 * i + 7
            )
        })
        .collect();
    let sql = format!(
        "INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, attempted_at, status, error, duration_ms) \
         VALUES {}",
        rows.join(", ")
    );
    let mut q = sqlx::query(&sql);
    for (a, _) in run {
        q = q
            .bind(endpoint)
            .bind(a.event_id.number())
            .bind(i64::from(a.attempt))
            .bind(at(&a.attempted_at))
            .bind(a.status.map(i64::from))
            .bind(a.error.as_deref())
            .bind(i64::try_from(a.duration_ms).unwrap_or(i64::MAX));
    }
    execute(conn, q).await?;
    let sql = "DELETE FROM webhook_attempts WHERE endpoint_id = $1 AND id <= (SELECT id FROM webhook_attempts \
               WHERE endpoint_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)";
    let kept = i64::try_from(ATTEMPTS_KEPT).unwrap_or(i64::MAX);
    execute(conn, sqlx::query(sql).bind(endpoint).bind(kept)).await?;
    Ok(true)
}

/// A value an update binds.
enum Bound {
    /// An integer.
    Int(i64),
    /// Text, or `NULL`.
    Text(Option<String>),
}

/// What a run's outcomes, applied one after another, do to an endpoint's
/// delivery columns, relative to their values before it where they must
/// be.
#[derive(Default)]
struct Fold {
    /// The cursor: the last event delivered or given up.
    through: Option<i64>,
    /// Attempts at the event in flight.
    attempt: Count,
    /// When the next attempt is due (`Some(None)`: cleared).
    next: Option<Option<String>>,
    /// The first failure since the last success.
    failing: Since,
    /// When and why it was disabled.
    disabled: Option<(String, String)>,
}

/// A fold's `attempt`.
#[derive(Default, Clone, Copy)]
enum Count {
    /// As it was.
    #[default]
    Unchanged,
    /// As it was, plus this many.
    Plus(u32),
    /// This many.
    Is(u32),
}

/// A fold's `failing_since`.
#[derive(Default)]
enum Since {
    /// As it was.
    #[default]
    Unchanged,
    /// Cleared.
    Null,
    /// As it was if set, else this instant.
    AtLeast(String),
    /// This instant.
    Is(String),
}

impl Fold {
    /// The fold after one more attempt `a` with outcome `o`.
    fn then(mut self, a: &WebhookAttempt, o: &DeliveryOutcome) -> Self {
        let tried = at(&a.attempted_at);
        let failed = |s: Since| match s {
            Since::Unchanged => Since::AtLeast(tried.clone()),
            Since::Null => Since::Is(tried.clone()),
            kept => kept,
        };
        match o {
            DeliveryOutcome::Delivered => {
                self.through = Some(a.event_id.number());
                (self.attempt, self.next, self.failing) = (Count::Is(0), Some(None), Since::Null);
            }
            DeliveryOutcome::Retry(next) => {
                self.attempt = match self.attempt {
                    Count::Unchanged => Count::Plus(1),
                    Count::Plus(k) => Count::Plus(k + 1),
                    Count::Is(k) => Count::Is(k + 1),
                };
                self.next = Some(Some(at(next)));
                self.failing = failed(self.failing);
            }
            DeliveryOutcome::GiveUp => {
                self.through = Some(a.event_id.number());
                (self.attempt, self.next) = (Count::Is(0), Some(None));
                self.failing = failed(self.failing);
            }
            DeliveryOutcome::Disable(reason) => {
                (self.attempt, self.next) = (Count::Is(0), Some(None));
                self.disabled = Some((tried.clone(), reason.clone()));
            }
        }
        self
    }
}

/// How many enabled endpoints have a delivery pending.
pub(crate) async fn pending(pool: &Pool) -> StoreResult<u64> {
    let sql = "SELECT COUNT(*) FROM webhook_endpoints AS w WHERE w.disabled_at IS NULL \
               AND (w.next_attempt_at IS NOT NULL OR EXISTS (SELECT 1 FROM events AS e \
               WHERE e.id > w.delivered_through AND (e.endpoint_id IS NULL OR e.endpoint_id = w.id)))";
    let n: i64 = sqlx::query_scalar(sql).fetch_one(pool).await.map_err(db)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

//! Corporate actions (contract section 13): an import's actions and
//! unresolved rows written in one transaction, and the reads of the routes
//! (one ISIN lineage's actions, the calendar's keyset pages).
//!
//! A stored action is its JSON (`action_json`, the wire record) beside the
//! columns the reads filter and sort by. An import compares, for each
//! action, the JSON the stored action would become with the JSON stored, as
//! text: the same rows imported again write nothing. Each action inserted
//! gets a `corporate_action.added` event and each one changed a
//! `corporate_action.changed` (contract 13.3), appended to the log in the
//! import's transaction; an action left as it was gets none. Rows resolved
//! again to another ISIN move their publications there; an action left
//! with none is removed, announced by `corporate_action.removed` after the
//! actions that replace it.
//!
//! An import that stores or changes an action bumps the `actions`
//! generation in its transaction, which nodes follow to drop the pages
//! they keep of the actions routes.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::Isin;
use mds_domain::actions::{ActionId, CorporateAction, Source};
use mds_domain::clock::Clock;

use super::{Conn, Pool, begin_read, begin_write, db, events, execute, fetch_all};
use crate::rows::RowExt;
use crate::rows::corrupt;
use crate::{
    ActionFilter, ActionImport, ActionMove, ActionsMoved, KeptUnresolved, ResolvedRow, StoreError, StoreResult,
    UnresolvedAction,
};

/// Ids looked up in one statement.
const CHUNK: usize = 500;

/// The columns an action is read from.
const COLUMNS: &str = "action_json";

/// `sources` as stored: `nse`, `bse` or `nse,bse`.
fn sources(a: &CorporateAction) -> String {
    a.sources.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
}

/// An action's JSON, as stored.
fn json(a: &CorporateAction) -> StoreResult<String> {
    serde_json::to_string(a).map_err(|e| StoreError::Invalid(format!("action {} does not encode: {e}", a.id)))
}

/// A stored action's JSON decoded.
fn decode(id: &str, json: &str) -> StoreResult<CorporateAction> {
    serde_json::from_str(json)
        .map_err(|e| corrupt(format_args!("corporate_actions {id}: action_json does not decode ({e})")))
}

/// A day as stored.
fn day(s: &str) -> StoreResult<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| corrupt(format_args!("corporate actions: not a day: {s:?}")))
}

/// [`crate::ActionStore::import_actions`].
pub(crate) async fn import(
    pool: &Pool,
    actions: &[CorporateAction],
    unresolved: &[KeptUnresolved],
    resolved: &[ResolvedRow],
    clock: &dyn Clock,
) -> StoreResult<ActionImport> {
    let mut tx = begin_write(pool).await?;
    let out = import_in(&mut tx, actions, unresolved, resolved, clock).await?;
    tx.commit().await.map_err(db)?;
    Ok(out)
}

/// [`crate::ActionStore::import_actions`] in the caller's transaction.
async fn import_in(
    tx: &mut Conn,
    actions: &[CorporateAction],
    unresolved: &[KeptUnresolved],
    resolved: &[ResolvedRow],
    clock: &dyn Clock,
) -> StoreResult<ActionImport> {
    let mut out = ActionImport::default();
    let mut drafts = Vec::new();
    // The same id twice in one call: the later joins the earlier.
    let mut given: Vec<CorporateAction> = Vec::with_capacity(actions.len());
    let mut at: HashMap<&ActionId, usize> = HashMap::new();
    for a in actions {
        match at.get(&a.id) {
            Some(&i) => given[i].absorb(a),
            None => {
                at.insert(&a.id, given.len());
                given.push(a.clone());
            }
        }
    }
    // Splits and consolidations date ISIN changes and link old ISINs to
    // their successors (contract 10.3): the identity is derived again with
    // them, and each learns the successor it leads to (`new_isin`).
    let splits: Vec<_> = given.iter().filter_map(super::identity::split_action).collect();
    if !splits.is_empty() {
        let (wrote, next) = super::identity::rederive_for_splits(tx, splits, clock).await?;
        out.identity_changed = wrote;
        for a in &mut given {
            if let Some(n) = next.get(&(a.isin.clone(), a.ex_date)) {
                a.action.set_new_isin(n);
            }
        }
    }
    for chunk in given.chunks(CHUNK) {
        let stored = stored_json(tx, chunk).await?;
        let mut new = Vec::new();
        for a in chunk {
            match stored.get(a.id.as_str()) {
                None => {
                    new.push(a);
                    drafts.push(a.added());
                    out.new += 1;
                }
                Some(old_json) => {
                    let mut merged = decode(a.id.as_str(), old_json)?;
                    merged.absorb(a);
                    let new_json = json(&merged)?;
                    if new_json == *old_json {
                        out.unchanged += 1;
                    } else {
                        update(tx, &merged, &new_json).await?;
                        drafts.push(merged.changed());
                        out.changed += 1;
                    }
                }
            }
        }
        insert(tx, &new).await?;
    }
    out.unresolved_new = insert_unresolved(tx, unresolved).await?;
    let keys: Vec<UnresolvedAction> = resolved.iter().map(|r| r.key.clone()).collect();
    out.unresolved_resolved = remove_resolved(tx, &keys).await?;
    keep_rows(tx, resolved).await?;
    events::append(tx, clock.now(), &drafts).await?;
    if out.new + out.changed > 0 {
        super::meta::bump_unseeded_generation(tx, crate::rows::META_GENERATION_ACTIONS).await?;
    }
    Ok(out)
}

/// Keeps the rows resolved with the ISIN each was resolved to (the
/// latest resolution replaces an earlier one), [`UNRESOLVED_RUN`] a
/// statement.
async fn keep_rows(conn: &mut Conn, rows: &[ResolvedRow]) -> StoreResult<()> {
    // A row repeated (overlapping files) once: a statement may not write a
    // key twice.
    let mut seen = std::collections::HashSet::with_capacity(rows.len());
    let rows: Vec<&ResolvedRow> = rows
        .iter()
        .filter(|r| seen.insert((r.key.source, r.key.code.as_str(), r.key.ex_date, r.key.purpose.as_str())))
        .collect();
    for run in rows.chunks(UNRESOLVED_RUN) {
        let sql = format!(
            "INSERT INTO corporate_action_rows (source, code, ex_date, purpose, security_id, isin) VALUES {} \
             ON CONFLICT (source, code, ex_date, purpose) DO UPDATE \
             SET security_id = excluded.security_id, isin = excluded.isin",
            values(run.len(), 6)
        );
        let mut q = sqlx::query(&sql);
        for r in run {
            q = q
                .bind(r.key.source.as_str())
                .bind(r.key.code.as_str())
                .bind(r.key.ex_date.to_string())
                .bind(r.key.purpose.as_str())
                .bind(r.security_id.clone().unwrap_or_default())
                .bind(r.isin.as_str());
        }
        execute(conn, q).await?;
    }
    Ok(())
}

/// [`crate::ActionStore::action_rows`].
pub(crate) async fn rows(pool: &Pool) -> StoreResult<Vec<ResolvedRow>> {
    let rs = keyed(pool, "security_id, isin", "corporate_action_rows").await?;
    rs.iter()
        .map(|r| {
            let isin = r.text("isin")?;
            let security_id = r.text("security_id")?;
            Ok(ResolvedRow {
                key: key_of(r, "corporate_action_rows", String::new(), 0)?,
                security_id: (!security_id.is_empty()).then_some(security_id),
                isin: Isin::parse(&isin)
                    .map_err(|_| corrupt(format_args!("corporate_action_rows: not an ISIN: {isin}")))?,
            })
        })
        .collect()
}

/// Every row of `table`, a table of rows keyed by exchange, code, ex-date
/// and text, with those and the columns `more`, in that order.
async fn keyed(pool: &Pool, more: &str, table: &str) -> StoreResult<Vec<super::DbRow>> {
    let mut tx = begin_read(pool).await?;
    let sql =
        format!("SELECT source, code, ex_date, purpose, {more} FROM {table} ORDER BY source, code, ex_date, purpose");
    fetch_all(&mut tx, sqlx::query(&sql)).await
}

/// The key of a row of `table` read by [`keyed`], with `file` and `line`.
fn key_of(r: &super::DbRow, table: &str, file: String, line: u64) -> StoreResult<UnresolvedAction> {
    let source = r.text("source")?;
    Ok(UnresolvedAction {
        source: source.parse::<Source>().map_err(|e| corrupt(format_args!("{table}: {e}")))?,
        code: r.text("code")?,
        ex_date: day(&r.text("ex_date")?)?,
        purpose: r.text("purpose")?,
        file,
        line,
    })
}

/// [`crate::ActionStore::move_actions`], in the caller's transaction.
pub(crate) async fn move_actions(
    conn: &mut Conn,
    moves: &[ActionMove],
    actions: &[CorporateAction],
    resolved: &[ResolvedRow],
    clock: &dyn Clock,
) -> StoreResult<ActionsMoved> {
    let mut out = ActionsMoved::default();
    let mut arrived: Vec<CorporateAction> = Vec::new();
    let mut rows = Vec::with_capacity(moves.len());
    // The actions left behind, as they become (written once, at the end),
    // and the ids each one's moved publications arrived at.
    let mut left: Vec<CorporateAction> = Vec::new();
    let mut successors: HashMap<ActionId, Vec<ActionId>> = HashMap::new();
    for m in moves {
        let key = &m.row.key;
        let rs = fetch_all(
            conn,
            sqlx::query("SELECT id, action_json FROM corporate_actions WHERE isin = $1 AND ex_date = $2 ORDER BY id")
                .bind(m.row.isin.as_str())
                .bind(key.ex_date.to_string()),
        )
        .await?;
        let mut published = Vec::new();
        for r in &rs {
            let id = r.text("id")?;
            let a = match left.iter().position(|a| a.id.as_str() == id) {
                Some(i) => left.swap_remove(i),
                None => decode(&id, &r.text("action_json")?)?,
            };
            match a.sources.contains(&key.source) {
                true => published.push(a),
                false => left.push(a),
            }
        }
        // Its own text's, when the exchange published several that day.
        if published.iter().any(|a| a.purpose == key.purpose) {
            let (own, others): (Vec<_>, Vec<_>) = published.into_iter().partition(|a| a.purpose == key.purpose);
            left.extend(others);
            published = own;
        }
        for mut a in published {
            let mut moved = a.clone();
            moved.sources = vec![key.source];
            moved.purpose.clone_from(&key.purpose);
            moved.isin = m.to.clone();
            moved.symbol = m.symbol.clone();
            moved.action.replace_new_isin(m.successor.as_ref());
            moved.id = ActionId::of(&moved.isin, moved.ex_date, &moved.action);
            successors.entry(a.id.clone()).or_default().push(moved.id.clone());
            a.sources.retain(|s| *s != key.source);
            left.push(a);
            out.moved += 1;
            arrived.push(moved);
        }
        rows.push(ResolvedRow { isin: m.to.clone(), ..m.row.clone() });
    }
    // What is left behind: removed when no exchange's source is left
    // (announced once the actions replacing it are), else written (and
    // announced) when it lost one.
    let mut drafts = Vec::new();
    let mut removed = Vec::new();
    for a in left {
        if a.sources.is_empty() {
            // Announced as it was last stored, its sources still on it.
            let gone = fetch_all(
                conn,
                sqlx::query("DELETE FROM corporate_actions WHERE id = $1 RETURNING action_json").bind(a.id.as_str()),
            )
            .await?;
            let mut to = successors.remove(&a.id).unwrap_or_default();
            to.sort();
            to.dedup();
            for r in &gone {
                removed.push(decode(a.id.as_str(), &r.text("action_json")?)?.removed(to.clone()));
            }
            continue;
        }
        let new_json = json(&a)?;
        let old = stored_json(conn, std::slice::from_ref(&a)).await?;
        if old.get(a.id.as_str()) != Some(&new_json) {
            update(conn, &a, &new_json).await?;
            drafts.push(a.changed());
        }
    }
    out.rows = rows.len() as u64;
    events::append(conn, clock.now(), &drafts).await?;
    // Stored at their new ISIN as an import stores them.
    let s = import_in(conn, &arrived, &[], &rows, clock).await?;
    out.new = s.new;
    out.joined = out.moved - s.new;
    out.identity_changed = s.identity_changed;
    events::append(conn, clock.now(), &removed).await?;
    if out.moved > 0 {
        super::meta::bump_unseeded_generation(conn, crate::rows::META_GENERATION_ACTIONS).await?;
    }
    // The rows kept unresolved that resolve now: their actions stored as
    // an import stores them, the rows moved to the resolved ones kept.
    if !actions.is_empty() || !resolved.is_empty() {
        out.resolved = import_in(conn, actions, &[], resolved, clock).await?;
        out.identity_changed |= out.resolved.identity_changed;
    }
    Ok(out)
}

/// Unresolved rows per `INSERT`.
const UNRESOLVED_RUN: usize = 100;

/// Stores the unresolved rows not stored before, [`UNRESOLVED_RUN`] a
/// statement; how many were new. A row stored before with none of what
/// resolving it needs (kept before migration 20) is given what this one
/// has ([`fill_facts`]). A line past what the store holds refuses them all.
async fn insert_unresolved(conn: &mut Conn, unresolved: &[KeptUnresolved]) -> StoreResult<u64> {
    let mut lines = Vec::with_capacity(unresolved.len());
    for KeptUnresolved { row: u, .. } in unresolved {
        lines.push(i64::try_from(u.line).map_err(|_| {
            StoreError::Invalid(format!("{}: line {} is past the largest line stored", u.file, u.line))
        })?);
    }
    let mut new = 0;
    for (run, lines) in unresolved.chunks(UNRESOLVED_RUN).zip(lines.chunks(UNRESOLVED_RUN)) {
        let sql = format!(
            "INSERT INTO corporate_action_unresolved \
             (source, code, ex_date, purpose, file, line, security_id, series, face_value, record_date) VALUES {} \
             ON CONFLICT DO NOTHING",
            values(run.len(), 10)
        );
        let mut q = sqlx::query(&sql);
        for (k, line) in run.iter().zip(lines) {
            let u = &k.row;
            q = q
                .bind(u.source.as_str())
                .bind(u.code.as_str())
                .bind(u.ex_date.to_string())
                .bind(u.purpose.as_str())
                .bind(u.file.as_str())
                .bind(*line);
            for f in facts(k) {
                q = q.bind(f);
            }
        }
        new += execute(conn, q).await?;
        fill_facts(conn, run).await?;
    }
    Ok(new)
}

/// What a kept row stores besides its key, file and line, as stored
/// (migration 20): its security id, series, face value (as Rust's `f64`
/// writes it, which round-trips) and record date, `''` for none.
fn facts(k: &KeptUnresolved) -> [String; 4] {
    [
        k.security_id.clone().unwrap_or_default(),
        k.series.clone().unwrap_or_default(),
        k.face_value.map(|f| f.to_string()).unwrap_or_default(),
        k.record_date.map(|d| d.to_string()).unwrap_or_default(),
    ]
}

/// Gives the rows of `run` stored with none of their facts (security id,
/// series, face value, record date: rows kept before migration 20) what
/// the same rows read now have, in one statement. A row stored with any
/// of them keeps what it has.
async fn fill_facts(conn: &mut Conn, run: &[KeptUnresolved]) -> StoreResult<()> {
    let with: Vec<(&KeptUnresolved, [String; 4])> =
        run.iter().map(|k| (k, facts(k))).filter(|(_, f)| f.iter().any(|v| !v.is_empty())).collect();
    if with.is_empty() {
        return Ok(());
    }
    let t = "corporate_action_unresolved";
    let sql = format!(
        "UPDATE {t} SET security_id = v.column5, series = v.column6, face_value = v.column7, record_date = v.column8 \
         FROM (VALUES {}) AS v \
         WHERE {t}.source = v.column1 AND {t}.code = v.column2 AND {t}.ex_date = v.column3 \
         AND {t}.purpose = v.column4 AND {t}.security_id = '' AND {t}.series = '' \
         AND {t}.face_value = '' AND {t}.record_date = ''",
        values(with.len(), 8)
    );
    let mut q = sqlx::query(&sql);
    for (k, facts) in with {
        let u = &k.row;
        q = q.bind(u.source.as_str()).bind(u.code.as_str()).bind(u.ex_date.to_string()).bind(u.purpose.as_str());
        for f in facts {
            q = q.bind(f);
        }
    }
    execute(conn, q).await?;
    Ok(())
}

/// Removes the stored unresolved rows that `resolved` names (exchange,
/// code, ex-date and text); how many. The stored ones are read first (few:
/// only what no import could resolve), so a re-import that resolves every
/// row costs one read, not a statement a row.
async fn remove_resolved(conn: &mut Conn, resolved: &[UnresolvedAction]) -> StoreResult<u64> {
    let rs =
        fetch_all(conn, sqlx::query("SELECT source, code, ex_date, purpose FROM corporate_action_unresolved")).await?;
    let mut stored = std::collections::HashSet::with_capacity(rs.len());
    for r in &rs {
        stored.insert((r.text("source")?, r.text("code")?, r.text("ex_date")?, r.text("purpose")?));
    }
    let mut removed = 0;
    for r in resolved {
        let key = (r.source.as_str().to_owned(), r.code.clone(), r.ex_date.to_string(), r.purpose.clone());
        if !stored.remove(&key) {
            continue;
        }
        removed += execute(
            conn,
            sqlx::query(
                "DELETE FROM corporate_action_unresolved \
                 WHERE source = $1 AND code = $2 AND ex_date = $3 AND purpose = $4",
            )
            .bind(key.0)
            .bind(key.1)
            .bind(key.2)
            .bind(key.3),
        )
        .await?;
    }
    Ok(removed)
}

/// The stored JSON of those of `chunk` stored, by id.
async fn stored_json(conn: &mut Conn, chunk: &[CorporateAction]) -> StoreResult<HashMap<String, String>> {
    let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
    let sql = format!("SELECT id, action_json FROM corporate_actions WHERE id IN ({})", marks.join(", "));
    let mut q = sqlx::query(&sql);
    for a in chunk {
        q = q.bind(a.id.as_str());
    }
    fetch_all(conn, q).await?.iter().map(|r| Ok((r.text("id")?, r.text("action_json")?))).collect()
}

/// The `VALUES` of a multi-row `INSERT` of `rows` rows of `width`
/// parameters each: `($1, $2), ($3, $4)`.
fn values(rows: usize, width: usize) -> String {
    let row = |i: usize| {
        let marks: Vec<String> = (1..=width).map(|c| format!("${}", i * width + c)).collect();
        format!("({})", marks.join(", "))
    };
    (0..rows).map(row).collect::<Vec<_>>().join(", ")
}

/// New actions per `INSERT` (8 values each, well within both backends'
/// limits on a statement's parameters).
const INSERT_RUN: usize = 100;

/// Stores new actions, [`INSERT_RUN`] a statement.
async fn insert(conn: &mut Conn, new: &[&CorporateAction]) -> StoreResult<()> {
    for run in new.chunks(INSERT_RUN) {
        let sql = format!(
            "INSERT INTO corporate_actions (id, isin, symbol, type, ex_date, sources, new_isin, action_json) VALUES {}",
            values(run.len(), 8)
        );
        let mut q = sqlx::query(&sql);
        for a in run {
            q = q
                .bind(a.id.as_str())
                .bind(a.isin.as_str())
                .bind(a.symbol.as_str())
                .bind(a.action.action_type().as_str())
                .bind(a.ex_date.to_string())
                .bind(sources(a))
                .bind(a.action.new_isin().map(|i| i.as_str().to_owned()))
                .bind(json(a)?);
        }
        execute(conn, q).await?;
    }
    Ok(())
}

/// [`crate::ActionStore::follow_successors`], in the caller's
/// transaction.
pub(crate) async fn follow_successors(conn: &mut Conn, clock: &dyn Clock) -> StoreResult<u64> {
    let rows = fetch_all(
        conn,
        sqlx::query(
            "SELECT id, action_json FROM corporate_actions WHERE type IN ('split', 'consolidation') ORDER BY id",
        ),
    )
    .await?;
    let mut splits = Vec::with_capacity(rows.len());
    for r in &rows {
        splits.push(decode(&r.text("id")?, &r.text("action_json")?)?);
    }
    let mut isins: Vec<&str> = splits.iter().map(|a| a.isin.as_str()).collect();
    isins.sort_unstable();
    isins.dedup();
    let next = super::identity::successors_of(conn, &isins).await?;
    let mut drafts = Vec::new();
    for mut a in splits {
        let Some(successor) = next.get(&(a.isin.clone(), a.ex_date)) else { continue };
        if a.action.new_isin() == Some(successor) {
            continue;
        }
        a.action.replace_new_isin(Some(successor));
        update(conn, &a, &json(&a)?).await?;
        drafts.push(a.changed());
    }
    events::append(conn, clock.now(), &drafts).await?;
    if !drafts.is_empty() {
        super::meta::bump_unseeded_generation(conn, crate::rows::META_GENERATION_ACTIONS).await?;
    }
    Ok(drafts.len() as u64)
}

/// Replaces a stored action (same id, so same ISIN, type and ex-date).
async fn update(conn: &mut Conn, a: &CorporateAction, json: &str) -> StoreResult<()> {
    execute(
        conn,
        sqlx::query("UPDATE corporate_actions SET sources = $2, new_isin = $3, action_json = $4 WHERE id = $1")
            .bind(a.id.as_str())
            .bind(sources(a))
            .bind(a.action.new_isin().map(|i| i.as_str().to_owned()))
            .bind(json),
    )
    .await?;
    Ok(())
}

/// The text values a read binds, `$1`, `$2`, … in order.
#[derive(Default)]
struct Binds(Vec<String>);

impl Binds {
    /// A placeholder for `value`.
    fn bind(&mut self, value: impl Into<String>) -> String {
        self.0.push(value.into());
        format!("${}", self.0.len())
    }
}

/// The conditions of `filter`, as SQL over `corporate_actions`.
fn conditions(filter: &ActionFilter, b: &mut Binds) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(t) = filter.action_type {
        w.push(format!("type = {}", b.bind(t.as_str())));
    }
    if let Some(d) = filter.from {
        w.push(format!("ex_date >= {}", b.bind(d.to_string())));
    }
    if let Some(d) = filter.to {
        w.push(format!("ex_date <= {}", b.bind(d.to_string())));
    }
    if let Some(s) = filter.source {
        // `nse`, `bse` or `nse,bse`: the one source, or both.
        w.push(format!("(sources = {} OR sources = 'nse,bse')", b.bind(s.as_str())));
    }
    w
}

/// Runs a read and decodes its actions.
async fn read(pool: &Pool, sql: &str, b: &Binds) -> StoreResult<Vec<CorporateAction>> {
    let mut tx = begin_read(pool).await?;
    let mut q = sqlx::query(sql);
    for v in &b.0 {
        q = q.bind(v.as_str());
    }
    let rs = fetch_all(&mut tx, q).await?;
    rs.iter().map(|r| decode("", &r.text("action_json")?)).collect()
}

/// [`crate::ActionStore::actions_of`].
pub(crate) async fn of(pool: &Pool, isins: &[Isin], filter: &ActionFilter) -> StoreResult<Vec<CorporateAction>> {
    if isins.is_empty() {
        return Ok(Vec::new());
    }
    let mut b = Binds::default();
    let marks: Vec<String> = isins.iter().map(|i| b.bind(i.as_str())).collect();
    let mut w = vec![format!("isin IN ({})", marks.join(", "))];
    w.extend(conditions(filter, &mut b));
    let sql = format!("SELECT {COLUMNS} FROM corporate_actions WHERE {} ORDER BY ex_date DESC, id", w.join(" AND "));
    read(pool, &sql, &b).await
}

/// [`crate::ActionStore::action_page`].
pub(crate) async fn page(
    pool: &Pool,
    filter: &ActionFilter,
    after: Option<(NaiveDate, &ActionId)>,
    limit: usize,
) -> StoreResult<Vec<CorporateAction>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut b = Binds::default();
    let mut w = conditions(filter, &mut b);
    if let Some((d, id)) = after {
        let d = b.bind(d.to_string());
        let id = b.bind(id.as_str());
        w.push(format!("ex_date >= {d} AND (ex_date > {d} OR id > {id})"));
    }
    let filter = if w.is_empty() { String::new() } else { format!(" WHERE {}", w.join(" AND ")) };
    let sql = format!("SELECT {COLUMNS} FROM corporate_actions{filter} ORDER BY ex_date, id LIMIT {limit}");
    read(pool, &sql, &b).await
}

/// [`crate::ActionStore::action_count`].
pub(crate) async fn count(pool: &Pool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM corporate_actions").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

/// [`crate::ActionStore::unresolved_actions`].
pub(crate) async fn unresolved(pool: &Pool) -> StoreResult<Vec<UnresolvedAction>> {
    Ok(kept_unresolved(pool).await?.into_iter().map(|k| k.row).collect())
}

/// [`crate::ActionStore::kept_unresolved`]: '' read as none (migration 20).
pub(crate) async fn kept_unresolved(pool: &Pool) -> StoreResult<Vec<KeptUnresolved>> {
    let table = "corporate_action_unresolved";
    let rs = keyed(pool, "file, line, security_id, series, face_value, record_date", table).await?;
    let some = |s: String| (!s.is_empty()).then_some(s);
    rs.iter()
        .map(|r| {
            let face_value = match some(r.text("face_value")?) {
                None => None,
                Some(f) => Some(f.parse::<f64>().map_err(|_| corrupt(format_args!("{table}: face value {f:?}")))?),
            };
            let record_date = match some(r.text("record_date")?) {
                None => None,
                Some(d) => Some(day(&d)?),
            };
            Ok(KeptUnresolved {
                row: key_of(r, table, r.text("file")?, r.int("line")?.unsigned_abs())?,
                security_id: some(r.text("security_id")?),
                series: some(r.text("series")?),
                face_value,
                record_date,
            })
        })
        .collect()
}

//! The admin lists a page at a time (tiers, accounts, keys, the audit
//! log), in the list shape of the public API: at most `limit` items, and a
//! `next_cursor` while more follow.
//!
//! One cursor machinery for all four: a page's last position sealed with
//! the store's cursor secret ([`CursorCodec::seal`], as the news list's
//! cursors are) under a scope naming the list and its filters (the keys'
//! `account`), so every node reads every node's cursors and a cursor of
//! another list or filter is refused (`AdminError::InvalidCursor`). Each
//! list is read by keyset from the position: items added while a client
//! pages never cause a duplicate or a skip of items that existed
//! throughout.

use chrono::{DateTime, Utc};
use mds_catalog::CursorCodec;
use mds_domain::time::parse_rfc3339;
use mds_domain::{Account, AccountName, AuditEntry, KeyPrefix, Limit, Tier, TierName};
use mds_store::{KeyRecord, Store, StoreError};

use super::{AdminError, AdminResult, invalid};

/// One page of an admin list.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// Whether more follow.
    pub has_more: bool,
    /// The cursor of the next page when `has_more`, else `None`.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// The same page with each item made by `f` (the cursor still
    /// names the last item's position).
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page { data: self.data.into_iter().map(f).collect(), has_more: self.has_more, next_cursor: self.next_cursor }
    }
}

/// The codec sealing the lists' cursors, keyed with the store's cursor
/// secret (what a serving node holds as `Node::cursors`), for callers
/// without a node: the CLI's list commands walk the pages with it.
pub async fn cursor_codec(store: &dyn Store) -> AdminResult<CursorCodec> {
    Ok(CursorCodec::new(&store.cursor_secret().await?))
}

/// The position `cursor` holds in the list `scope` names, read by `read`
/// (`None` without a cursor). A cursor not sealed for `scope`, altered, or
/// holding no position `read` takes is `InvalidCursor`.
fn open<P>(
    cursors: &CursorCodec,
    scope: &[u8],
    cursor: Option<&str>,
    read: impl FnOnce(&[u8]) -> Option<P>,
) -> AdminResult<Option<P>> {
    let Some(cursor) = cursor else { return Ok(None) };
    let forged = || AdminError::InvalidCursor(mds_catalog::CursorError::Forged.to_string());
    match cursors.open(scope, cursor) {
        Ok(bytes) => read(&bytes).map(Some).ok_or_else(forged),
        Err(e) => Err(AdminError::InvalidCursor(e.to_string())),
    }
}

/// The page of `limit` items out of `rows` (read with one more than
/// `limit`, to tell whether more follow), its cursor sealing the last
/// item's `position`.
fn page<T>(
    cursors: &CursorCodec,
    scope: &[u8],
    mut rows: Vec<T>,
    limit: usize,
    position: impl FnOnce(&T) -> Vec<u8>,
) -> Page<T> {
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = match rows.last() {
        Some(last) if has_more => Some(cursors.seal(scope, &position(last))),
        _ => None,
    };
    Page { data: rows, has_more, next_cursor }
}

fn utf8(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// A page of the tiers, by name, after the tier `cursor` names.
pub async fn tiers_page(
    store: &dyn Store,
    cursors: &CursorCodec,
    cursor: Option<&str>,
    limit: Limit,
) -> AdminResult<Page<Tier>> {
    const SCOPE: &[u8] = b"admin/tiers";
    let after = open(cursors, SCOPE, cursor, |b| utf8(b).and_then(|s| TierName::parse(s).ok()))?;
    let rows = store.tiers_after(after.as_ref(), limit.get() + 1).await?;
    Ok(page(cursors, SCOPE, rows, limit.get(), |t| t.name.as_str().as_bytes().to_vec()))
}

/// A page of the accounts, by name, after the account `cursor` names.
pub async fn accounts_page(
    store: &dyn Store,
    cursors: &CursorCodec,
    cursor: Option<&str>,
    limit: Limit,
) -> AdminResult<Page<Account>> {
    const SCOPE: &[u8] = b"admin/accounts";
    let after = open(cursors, SCOPE, cursor, |b| utf8(b).and_then(|s| AccountName::parse(s).ok()))?;
    let rows = store.accounts_after(after.as_ref(), limit.get() + 1).await?;
    Ok(page(cursors, SCOPE, rows, limit.get(), |a| a.name.as_str().as_bytes().to_vec()))
}

/// A page of the keys, revoked ones included, optionally of one account
/// (an unknown one is `Invalid` naming `account`), by creation, after the
/// key `cursor` names. A cursor is bound to `account`: one of another
/// account's list, or of the whole list, is `InvalidCursor`.
pub async fn keys_page(
    store: &dyn Store,
    cursors: &CursorCodec,
    account: Option<&AccountName>,
    cursor: Option<&str>,
    limit: Limit,
) -> AdminResult<Page<KeyRecord>> {
    let scope = match account {
        Some(a) => format!("admin/keys?account={a}"),
        None => "admin/keys".to_owned(),
    };
    // The position: the key's `created_at` (as the store orders it), a
    // newline, its prefix.
    let after = open(cursors, scope.as_bytes(), cursor, |b| {
        let (at, prefix) = utf8(b)?.split_once('\n')?;
        Some((parse_rfc3339(at).ok()?, KeyPrefix::parse(prefix).ok()?))
    })?;
    let after: Option<(DateTime<Utc>, &KeyPrefix)> = after.as_ref().map(|(at, p)| (*at, p));
    let rows = match store.keys_after(account, after, limit.get() + 1).await {
        Ok(rows) => rows,
        Err(StoreError::NotFound(m)) => return Err(invalid("account", m)),
        Err(e) => return Err(e.into()),
    };
    Ok(page(cursors, scope.as_bytes(), rows, limit.get(), |k| {
        format!("{}\n{}", mds_domain::time::format_utc(&k.created_at), k.prefix).into_bytes()
    }))
}

/// A page of the audit log, newest first, after the entry `cursor` names
/// (from the newest without one); entries added while a client pages come
/// before its position and never shift it.
pub async fn audit_page(
    store: &dyn Store,
    cursors: &CursorCodec,
    cursor: Option<&str>,
    limit: Limit,
) -> AdminResult<Page<AuditEntry>> {
    const SCOPE: &[u8] = b"admin/audit";
    let before = open(cursors, SCOPE, cursor, |b| <[u8; 8]>::try_from(b).ok().map(i64::from_be_bytes))?;
    let rows = store.audit_log(before, limit.get() + 1).await?;
    Ok(page(cursors, SCOPE, rows, limit.get(), |e| e.id.to_be_bytes().to_vec()))
}

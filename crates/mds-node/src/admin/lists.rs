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
use mds_domain::{Account, AccountName, AuditEntry, KeyPrefix, Limit, Page, Tier, TierName};
use mds_store::{KeyRecord, Store, StoreError};

use super::{AdminError, AdminResult, invalid};

/// The codec sealing the lists' cursors, keyed with the store's cursor
/// secret (what a serving node holds as `Node::cursors`), for callers
/// without a node: the CLI's list commands walk the pages with it.
pub async fn cursor_codec(store: &dyn Store) -> AdminResult<CursorCodec> {
    Ok(CursorCodec::new(&store.cursor_secret().await?))
}

/// Which page of a list is asked: the items after the position `cursor`
/// holds (from the start without one), at most `limit` of them, the
/// cursors opened and sealed with `cursors`.
#[derive(Clone, Copy)]
pub struct PageAsk<'a> {
    /// The codec of the lists' cursors ([`cursor_codec`], or a node's).
    pub cursors: &'a CursorCodec,
    /// The `next_cursor` of the page before, if any.
    pub cursor: Option<&'a str>,
    /// How many items at the most.
    pub limit: Limit,
}

impl<'a> PageAsk<'a> {
    /// The largest page after `cursor` (the first without one): what a walk
    /// through every page asks.
    pub fn largest(cursors: &'a CursorCodec, cursor: Option<&'a str>) -> Self {
        PageAsk { cursors, cursor, limit: Limit::MAX }
    }
}

/// The page `ask` names of the list `scope` names: the position its cursor
/// holds, read by `read` (from the start without a cursor; a cursor not
/// sealed for `scope`, altered, or holding no position `read` takes is
/// `InvalidCursor`), then at most `limit` items after it, asked of `rows`
/// with one more (to tell whether more follow), the next cursor sealing
/// the last item's `position`.
async fn read_page<P, T, Rows>(
    ask: PageAsk<'_>,
    scope: &[u8],
    read: impl FnOnce(&[u8]) -> Option<P>,
    rows: impl FnOnce(Option<P>, usize) -> Rows,
    position: impl FnOnce(&T) -> Vec<u8>,
) -> AdminResult<Page<T>>
where
    Rows: Future<Output = AdminResult<Vec<T>>>,
{
    let PageAsk { cursors, cursor, limit } = ask;
    let after = match cursor.map(|c| cursors.open(scope, c)) {
        None => None,
        Some(Ok(bytes)) => {
            Some(read(&bytes).ok_or_else(|| AdminError::InvalidCursor(mds_catalog::CursorError::Forged.to_string()))?)
        }
        Some(Err(e)) => return Err(AdminError::InvalidCursor(e.to_string())),
    };
    let mut rows = rows(after, limit.get() + 1).await?;
    let (has_more, next_cursor) =
        crate::keyset::cut(&mut rows, limit.get(), |last| cursors.seal(scope, &position(last)));
    Ok(Page::new(rows, next_cursor, has_more))
}

/// A position that is a name, read by `parse`.
fn named<N>(parse: fn(&str) -> Result<N, String>) -> impl FnOnce(&[u8]) -> Option<N> {
    move |bytes| parse(std::str::from_utf8(bytes).ok()?).ok()
}

/// The page `ask` names of the tiers, by name (a cursor holds a name).
pub async fn tiers_page(store: &dyn Store, ask: PageAsk<'_>) -> AdminResult<Page<Tier>> {
    let rows = |after: Option<TierName>, n| async move { Ok(store.tiers_after(after.as_ref(), n).await?) };
    let name = |t: &Tier| t.name.as_str().as_bytes().to_vec();
    read_page(ask, b"admin/tiers", named(TierName::parse), rows, name).await
}

/// The page `ask` names of the accounts, by name (a cursor holds a name).
pub async fn accounts_page(store: &dyn Store, ask: PageAsk<'_>) -> AdminResult<Page<Account>> {
    let rows = |after: Option<AccountName>, n| async move { Ok(store.accounts_after(after.as_ref(), n).await?) };
    let name = |a: &Account| a.name.as_str().as_bytes().to_vec();
    read_page(ask, b"admin/accounts", named(AccountName::parse), rows, name).await
}

/// The page `ask` names of the keys, revoked ones included, optionally of
/// one account (an unknown one is `Invalid` naming `account`), by creation
/// (a cursor holds a key's position). A cursor is bound to `account`: one
/// of another account's list, or of the whole list, is `InvalidCursor`.
pub async fn keys_page(
    store: &dyn Store,
    account: Option<&AccountName>,
    ask: PageAsk<'_>,
) -> AdminResult<Page<KeyRecord>> {
    let scope = match account {
        Some(a) => format!("admin/keys?account={a}"),
        None => "admin/keys".to_owned(),
    };
    // The position: the key's `created_at` (as the store orders it), a
    // newline, its prefix.
    let read = |b: &[u8]| {
        let (at, prefix) = std::str::from_utf8(b).ok()?.split_once('\n')?;
        Some((parse_rfc3339(at).ok()?, KeyPrefix::parse(prefix).ok()?))
    };
    let rows = |after: Option<(DateTime<Utc>, KeyPrefix)>, n| async move {
        match store.keys_after(account, after.as_ref().map(|(at, p)| (*at, p)), n).await {
            Ok(rows) => Ok(rows),
            Err(StoreError::NotFound(m)) => Err(invalid("account", m)),
            Err(e) => Err(e.into()),
        }
    };
    let position =
        |k: &KeyRecord| format!("{}\n{}", mds_domain::time::format_utc(&k.created_at), k.prefix).into_bytes();
    read_page(ask, scope.as_bytes(), read, rows, position).await
}

/// The page `ask` names of the audit log, newest first (a cursor holds an
/// entry; from the newest without one); entries added while a client pages
/// come before its position and never shift it.
pub async fn audit_page(store: &dyn Store, ask: PageAsk<'_>) -> AdminResult<Page<AuditEntry>> {
    let read = |b: &[u8]| <[u8; 8]>::try_from(b).ok().map(i64::from_be_bytes);
    let rows = |before, n| async move { Ok(store.audit_log(before, n).await?) };
    read_page(ask, b"admin/audit", read, rows, |e| e.id.to_be_bytes().to_vec()).await
}

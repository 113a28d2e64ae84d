//! `GET /v1/companies/changes`: the company master in change order, then
//! only what changed (contract section 7.2), walked in the node's catalog.
//!
//! A sync token is the `companies` generation the walk was served at and
//! that generation's random nonce (the store's `generation_nonces`), sealed
//! by the cursor codec ([`mds_catalog::CursorCodec::seal`]) in its own
//! scope; a cursor holds the last `(generation, ISIN)` served and is sealed
//! in the scope of the token it walks from, so it is refused with another
//! `since`. Companies are never deleted, so a token is good for as long as
//! the store keeps its history: it is refused `410 sync_token_expired` when
//! the store's history was replaced after it was issued (restored from an
//! older copy): its generation is one the store has not reached, or one the
//! store has reached again with another nonce. A node whose catalog is
//! behind a token's generation (another node served it) answers with no
//! rows and the same token. A page's `ETag` is derived from what makes it
//! (catalog version, walk, position, limit), as a list page's is, not
//! hashed from its bytes.

use axum::extract::{RawQuery, State};
use axum::http::HeaderValue;
use axum::response::Response;
use mds_catalog::ChangeKey;
use mds_domain::params::ChangesQueryParams;
use mds_domain::{ErrorCode, page as envelope};
use mds_node::catalog::CatalogVersion;
use mds_node::metrics::Event;
use mds_node::tagged::Tagged;
use sha2::Digest;

use super::tagged;
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// The scope a sync token is sealed in.
const TOKEN_SCOPE: &[u8] = b"mds changes token";

/// The page cache's key of a changes query (the cache is shared with the
/// list, whose keys are bare query strings: this one cannot be one).
fn cache_key(raw: &str) -> String {
    format!("\0changes?{raw}")
}

/// The scope of the cursors of a walk from generation `since`.
fn cursor_scope(since: i64) -> Vec<u8> {
    let mut s = b"mds changes cursor\0".to_vec();
    s.extend_from_slice(&since.to_le_bytes());
    s
}

/// The sync token of generation `g` with its `nonce`.
fn token(state: &AppState, g: i64, nonce: i64) -> String {
    let mut bytes = g.to_le_bytes().to_vec();
    bytes.extend_from_slice(&nonce.to_le_bytes());
    state.cursors.seal(TOKEN_SCOPE, &bytes)
}

/// The generation and nonce in the opened bytes of a sync token; `None`
/// for an earlier form of one (a bare generation).
fn token_parts(b: &[u8]) -> Option<(i64, i64)> {
    let (g, n) = b.split_at_checked(8)?;
    Some((i64::from_le_bytes(g.try_into().ok()?), i64::from_le_bytes(n.try_into().ok()?)))
}

/// `410 sync_token_expired`.
fn expired() -> ApiError {
    ApiError::new(
        ErrorCode::SyncTokenExpired,
        "the store no longer holds the history this sync token needs; sync again without `since`",
    )
    .with_param("since")
}

/// Handler.
#[utoipa::path(
    get,
    path = "/v1/companies/changes",
    description = "Without `since`: every company, as `V1CompanyDetail`, page by page in change order. With \
`since` (the `sync_token` of an earlier walk's last page): only the companies created or changed after it, \
each once in its latest form. The last page (`has_more: false`) carries the `sync_token` to pass next time. \
`410 sync_token_expired` means the token is older than the history the store keeps: sync from scratch.",
    params(mds_domain::params::SyncParams, mds_domain::PageParams),
    responses(
        (status = 200, description = "A page of changed companies.", body = crate::openapi::ChangesPage, content_type = "application/json"),
        (status = 400, response = crate::openapi::ChangesBadRequest),
        (status = 410, response = crate::openapi::SyncTokenExpired),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let catalog = state.catalog();
    let key = cache_key(raw.as_deref().unwrap_or(""));
    if let Some(served) = catalog.pages().get(&key) {
        state.metrics.event(Event::PageCacheHit);
        return Ok(tagged(served));
    }
    let req = parse_query::<ChangesQueryParams>(raw.as_deref())?;
    let generation = catalog.generation();
    let (since, nonce) = match &req.filter.since {
        None => (0, 0),
        Some(t) => match state.cursors.open(TOKEN_SCOPE, t) {
            Err(_) => {
                return Err(invalid_cursor(
                    "since",
                    "sync token was not issued by this service or has been altered; sync again without it",
                ));
            }
            // A genuine token of an earlier form (a bare generation): it
            // cannot be checked against the history, so it is expired.
            Ok(bytes) => token_parts(&bytes).ok_or_else(expired)?,
        },
    };
    let after = match &req.page.cursor {
        None => None,
        Some(c) => Some(open_cursor(&state, since, c)?),
    };
    if since <= generation {
        // A generation this catalog knows: the token must carry its nonce.
        if catalog.nonce(since) != nonce {
            return Err(expired());
        }
    } else if state.store.generations().await?.companies < since {
        return Err(expired());
    }
    let page = catalog.changes(since, after.as_ref(), req.page.limit.get());
    let next_cursor = page.next.as_ref().map(|k| seal_cursor(&state, since, k));
    // A node behind the token's generation hands the token back as it is.
    let sync_token = (!page.has_more()).then(|| match since > generation {
        true => token(&state, since, nonce),
        false => token(&state, generation, catalog.nonce(generation)),
    });
    let mut body = Vec::with_capacity(1024);
    envelope::write_json(&mut body, |b| page.write_rows(b), next_cursor.as_deref(), page.has_more());
    // `{"data":…,"has_more":…}` → `…,"sync_token":…}`
    body.pop();
    body.extend_from_slice(b",\"sync_token\":");
    serde_json::to_writer(&mut body, &sync_token).map_err(|e| ApiError::internal(&e))?;
    body.push(b'}');
    let served =
        Tagged { body: body.into(), etag: page_tag(&catalog, since, nonce, after.as_ref(), req.page.limit.get()) };
    state.metrics.event(Event::PageCacheMiss);
    catalog.pages().put(&key, served.clone());
    Ok(tagged(served))
}

/// The strong `ETag` of a change page, without hashing the page: what it
/// holds is a function of the catalog version, the walk's start (`since`
/// and its nonce), the position and the limit (and of the cursor secret and
/// this build, which a catalog version's id outlives on no node), as a list
/// page's is.
fn page_tag(catalog: &CatalogVersion, since: i64, nonce: i64, after: Option<&ChangeKey>, limit: usize) -> HeaderValue {
    catalog.derived_tag(b"mds changes page\0", |h| {
        h.update(since.to_le_bytes());
        h.update(nonce.to_le_bytes());
        match after {
            Some(k) => {
                h.update([1]);
                h.update(k.seq.to_le_bytes());
                h.update(k.isin.as_bytes());
            }
            None => h.update([0]),
        }
        h.update((limit as u64).to_le_bytes());
    })
}

fn invalid_cursor(param: &'static str, detail: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidCursor, detail.to_owned()).with_param(param)
}

/// The cursor after `k` in a walk from `since`: its generation and ISIN.
fn seal_cursor(state: &AppState, since: i64, k: &ChangeKey) -> String {
    let mut pos = k.seq.to_le_bytes().to_vec();
    pos.extend_from_slice(k.isin.as_bytes());
    state.cursors.seal(&cursor_scope(since), &pos)
}

/// The position a cursor of a walk from `since` holds.
fn open_cursor(state: &AppState, since: i64, c: &str) -> Result<ChangeKey, ApiError> {
    let pos = state.cursors.open(&cursor_scope(since), c).map_err(|e| invalid_cursor("cursor", &e.to_string()))?;
    let bad = || {
        invalid_cursor("cursor", "cursor was not issued by this service or has been altered; start again without it")
    };
    let (seq, isin) = pos.split_at_checked(8).ok_or_else(bad)?;
    let seq = i64::from_le_bytes(seq.try_into().map_err(|_| bad())?);
    let isin = std::str::from_utf8(isin).map_err(|_| bad())?.to_owned();
    Ok(ChangeKey { seq, isin })
}

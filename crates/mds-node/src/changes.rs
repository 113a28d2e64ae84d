//! The change feed (`GET /v1/companies/changes`): the company master in
//! change order, then only what changed (contract section 7.2), walked in
//! the node's catalog.
//!
//! A sync token is the `companies` generation the walk was served at and
//! that generation's random nonce (the store's `generation_nonces`), sealed
//! by the cursor codec ([`mds_catalog::CursorCodec::seal`]) in its own
//! scope; a cursor holds the last `(generation, ISIN)` served and is sealed
//! in the scope of the token it walks from, so it is refused with another
//! `since`. Companies are never deleted, so a token is good for as long as
//! the store keeps its history: it is refused ([`ReadError::SyncTokenExpired`])
//! when the store's history was replaced after it was issued (restored from
//! an older copy): its generation is one the store has not reached, or one
//! the store has reached again with another nonce. A node whose catalog is
//! behind a token's generation (another node served it) answers with no
//! rows and the same token. A page's `ETag` is derived from what makes it
//! (catalog version, walk, position, limit), as a list page's is, not
//! hashed from its bytes. Pages are kept per query and catalog version, as
//! the company list's are.

use http::HeaderValue;
use mds_catalog::ChangeKey;
use mds_domain::page as envelope;
use mds_domain::params::ChangesQueryParams;
use sha2::Digest;

use crate::catalog::CatalogVersion;
use crate::error::ReadError;
use crate::lists::{KeptList, Shelf};
use crate::node::Node;
use crate::pages::List;
use crate::tagged::Tagged;

/// The scope a sync token is sealed in.
const TOKEN_SCOPE: &[u8] = b"mds changes token";

/// The scope of the cursors of a walk from generation `since`.
fn cursor_scope(since: i64) -> Vec<u8> {
    let mut s = b"mds changes cursor\0".to_vec();
    s.extend_from_slice(&since.to_le_bytes());
    s
}

/// The generation and nonce in the opened bytes of a sync token; `None`
/// for an earlier form of one (a bare generation).
fn token_parts(b: &[u8]) -> Option<(i64, i64)> {
    let (g, n) = b.split_at_checked(8)?;
    Some((i64::from_le_bytes(g.try_into().ok()?), i64::from_le_bytes(n.try_into().ok()?)))
}

/// The change feed's pages ([`Node::page`]): walked in the catalog and
/// kept by its version.
impl KeptList for ChangesQueryParams {
    const LIST: List = List::CompanyChanges;
    const SHELF: Shelf = Shelf::Catalog;

    async fn make(&self, node: &Node, catalog: &CatalogVersion, _: Option<i64>) -> Result<(Tagged, bool), ReadError> {
        Ok((node.make_changes_page(catalog, self).await?, true))
    }
}

impl Node {
    /// The page of `catalog` for `req`, made.
    async fn make_changes_page(&self, catalog: &CatalogVersion, req: &ChangesQueryParams) -> Result<Tagged, ReadError> {
        let generation = catalog.generation();
        let (since, nonce) = match &req.filter.since {
            None => (0, 0),
            Some(t) => match self.cursors().open(TOKEN_SCOPE, t) {
                Err(_) => {
                    return Err(ReadError::InvalidCursor {
                        param: "since",
                        detail: "sync token was not issued by this service or has been altered; sync again without it"
                            .into(),
                    });
                }
                // A genuine token of an earlier form (a bare generation): it
                // cannot be checked against the history, so it is expired.
                Ok(bytes) => token_parts(&bytes).ok_or(ReadError::SyncTokenExpired)?,
            },
        };
        let after = match &req.page.cursor {
            None => None,
            Some(c) => Some(self.open_change_cursor(since, c)?),
        };
        if since <= generation {
            // A generation this catalog knows: the token must carry its nonce.
            if catalog.nonce(since) != nonce {
                return Err(ReadError::SyncTokenExpired);
            }
        } else if self.store().generations().await?.companies < since {
            return Err(ReadError::SyncTokenExpired);
        }
        let page = catalog.changes(since, after.as_ref(), req.page.limit.get());
        let next_cursor = page.next.as_ref().map(|k| self.seal_change_cursor(since, k));
        // A node behind the token's generation hands the token back as it is.
        let sync_token = (!page.has_more()).then(|| match since > generation {
            true => self.sync_token(since, nonce),
            false => self.sync_token(generation, catalog.nonce(generation)),
        });
        let mut body = Vec::with_capacity(1024);
        envelope::write_json(&mut body, |b| page.write_rows(b), next_cursor.as_deref(), page.has_more(), None);
        // `{"data":…,"has_more":…}` → `…,"sync_token":…}`
        body.pop();
        body.extend_from_slice(b",\"sync_token\":");
        serde_json::to_writer(&mut body, &sync_token).expect("a string serializes");
        body.push(b'}');
        Ok(Tagged { body: body.into(), etag: page_tag(catalog, since, nonce, after.as_ref(), req.page.limit.get()) })
    }

    /// The sync token of generation `g` with its `nonce`.
    fn sync_token(&self, g: i64, nonce: i64) -> String {
        let mut bytes = g.to_le_bytes().to_vec();
        bytes.extend_from_slice(&nonce.to_le_bytes());
        self.cursors().seal(TOKEN_SCOPE, &bytes)
    }

    /// The cursor after `k` in a walk from `since`: its generation and ISIN.
    fn seal_change_cursor(&self, since: i64, k: &ChangeKey) -> String {
        let mut pos = k.seq.to_le_bytes().to_vec();
        pos.extend_from_slice(k.isin.as_bytes());
        self.cursors().seal(&cursor_scope(since), &pos)
    }

    /// The position a cursor of a walk from `since` holds.
    fn open_change_cursor(&self, since: i64, c: &str) -> Result<ChangeKey, ReadError> {
        let pos = self.cursors().open(&cursor_scope(since), c).map_err(ReadError::cursor)?;
        let bad =
            || ReadError::cursor("cursor was not issued by this service or has been altered; start again without it");
        let (seq, isin) = pos.split_at_checked(8).ok_or_else(bad)?;
        let seq = i64::from_le_bytes(seq.try_into().map_err(|_| bad())?);
        let isin = std::str::from_utf8(isin).map_err(|_| bad())?.to_owned();
        Ok(ChangeKey { seq, isin })
    }
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

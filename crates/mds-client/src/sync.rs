//! The sync helper: keeps a local copy of the company master up to date
//! from the change feed (the delta-sync pattern), starting over when the
//! service no longer holds the history a token needs.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use mds_domain::{CompanyDetail, ErrorCode, Isin};

use crate::changes::no_token;
use crate::client::Client;
use crate::error::Result;

/// The page size a sync walks with: the largest the API allows, so a walk
/// takes the fewest requests.
pub const SYNC_PAGE_SIZE: u16 = 200;

/// A local copy of the company master that [`Client::sync`] keeps up to
/// date: implemented for `BTreeMap` and `HashMap` keyed by ISIN; implement
/// it for your own index if you keep one.
pub trait Replica {
    /// Inserts `detail`, or replaces the record of its ISIN.
    fn upsert(&mut self, detail: CompanyDetail);
    /// Forgets every record (before a sync from scratch).
    fn clear(&mut self);
}

impl Replica for BTreeMap<Isin, CompanyDetail> {
    fn upsert(&mut self, detail: CompanyDetail) {
        self.insert(detail.company.isin.clone(), detail);
    }

    fn clear(&mut self) {
        BTreeMap::clear(self);
    }
}

impl<S: BuildHasher> Replica for HashMap<Isin, CompanyDetail, S> {
    fn upsert(&mut self, detail: CompanyDetail) {
        self.insert(detail.company.isin.clone(), detail);
    }

    fn clear(&mut self) {
        HashMap::clear(self);
    }
}

/// What one [`Client::sync`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncReport {
    /// The token to store and pass as `since` next time.
    pub sync_token: String,
    /// The ISINs upserted into the replica, in change order, each once.
    pub changed: Vec<Isin>,
    /// Whether the replica was filled from scratch: no token was given, or
    /// the one given had expired (then the replica was cleared first).
    pub from_scratch: bool,
    /// Whether the service refused the given token with `410
    /// sync_token_expired` (it no longer holds the history the token
    /// needs), so the sync started over from scratch.
    pub token_expired: bool,
}

impl Client {
    /// Brings `replica` up to date from `since` (a `sync_token` stored by an
    /// earlier sync; `None` walks every company) and returns the new token
    /// in the report. Every page of the change feed is walked and each row
    /// upserted as its page arrives.
    ///
    /// If the service answers `410 sync_token_expired`, the replica is
    /// cleared and filled from scratch, and the report says so
    /// (`token_expired`, `from_scratch`). Any other error is returned; the
    /// replica then holds some of the changes, which is harmless: keep the
    /// old token and sync again (upserts are idempotent).
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// use std::collections::BTreeMap;
    /// let mut companies = BTreeMap::new();
    /// let mut token: Option<String> = None; // load it from where you keep it
    /// let report = client.sync(&mut companies, token.as_deref()).await?;
    /// if report.token_expired {
    ///     eprintln!("token expired: synced {} companies from scratch", companies.len());
    /// }
    /// token = Some(report.sync_token); // store it for next time
    /// # Ok(()) }
    /// ```
    pub async fn sync<R: Replica + ?Sized>(&self, replica: &mut R, since: Option<&str>) -> Result<SyncReport> {
        match self.walk(replica, since).await {
            Err(e) if since.is_some() && e.code() == Some(ErrorCode::SyncTokenExpired) => {
                replica.clear();
                let (sync_token, changed) = self.walk(replica, None).await?;
                Ok(SyncReport { sync_token, changed, from_scratch: true, token_expired: true })
            }
            walked => {
                let (sync_token, changed) = walked?;
                Ok(SyncReport { sync_token, changed, from_scratch: since.is_none(), token_expired: false })
            }
        }
    }

    /// Walks the feed from `since`, upserting each row: the last page's
    /// token and the ISINs upserted.
    async fn walk<R: Replica + ?Sized>(&self, replica: &mut R, since: Option<&str>) -> Result<(String, Vec<Isin>)> {
        let mut pages = self.changes(since).limit(SYNC_PAGE_SIZE).pages();
        let mut changed = Vec::new();
        while let Some(page) = pages.next_page().await? {
            for detail in page.data {
                changed.push(detail.company.isin.clone());
                replica.upsert(detail);
            }
        }
        let token = pages.sync_token().ok_or_else(no_token)?.to_owned();
        Ok((token, changed))
    }
}

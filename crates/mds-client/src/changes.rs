//! `GET /v1/companies/changes`: the change feed, one page or every page to
//! the `sync_token` of the last one.
//!
//! The parameter names and the page are those of [`mds_domain::params`]
//! and [`mds_domain::ChangesPage`], the definitions the server parses and
//! writes with. There is no `stream()` of rows, as the companies list has:
//! what a walk of the feed is for is the token at its end, which a stream
//! of rows would drop. [`Client::sync`](crate::Client::sync) keeps a local
//! copy up to date with it.

use mds_domain::params::{CURSOR, LIMIT, SINCE};
use mds_domain::{ChangesPage, CompanyDetail};

use crate::client::Client;
use crate::error::{Error, Result};

/// A `GET /v1/companies/changes` request: every company (no `since`), or
/// only those created or changed after the walk that issued `since`, in
/// change order, each once in its latest form.
///
/// ```no_run
/// # async fn example(client: mds_client::Client, token: Option<String>) -> Result<(), mds_client::Error> {
/// // Every page, walked by hand; the last one carries the token.
/// let mut pages = client.changes(token.as_deref()).limit(200).pages();
/// while let Some(page) = pages.next_page().await? {
///     println!("{} changed companies", page.data.len());
/// }
/// let next_time = pages.sync_token().expect("the walk ended").to_owned();
/// // Or all of it at once.
/// let all = client.changes(Some(&next_time)).all().await?;
/// println!("{} changed since; next token {}", all.data.len(), all.sync_token);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ChangesRequest {
    client: Client,
    since: Option<String>,
    limit: Option<u16>,
    cursor: Option<String>,
}

impl ChangesRequest {
    pub(crate) fn new(client: Client, since: Option<&str>) -> Self {
        ChangesRequest { client, since: since.map(str::to_owned), limit: None, cursor: None }
    }

    /// Rows per page, 1 to 200 (the server's default is 50). A bad value
    /// comes back as the server's `400 invalid_parameter`.
    pub fn limit(mut self, limit: u16) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Starts at this cursor (a `next_cursor` of a page of the same walk,
    /// that is with the same `since`).
    pub fn cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// Fetches one page. A `since` the service did not issue is
    /// [`Error::Api`] `400 invalid_cursor` (`param` `since`); one older than
    /// the history the service keeps is `410 sync_token_expired`: walk again
    /// without it.
    pub async fn send(&self) -> Result<ChangesPage> {
        self.fetch(self.cursor.as_deref()).await
    }

    async fn fetch(&self, cursor: Option<&str>) -> Result<ChangesPage> {
        let mut url = self.client.url(&["v1", "companies", "changes"]);
        {
            let mut q = url.query_pairs_mut();
            if let Some(s) = &self.since {
                q.append_pair(SINCE, s);
            }
            if let Some(l) = self.limit {
                q.append_pair(LIMIT, &l.to_string());
            }
            if let Some(c) = cursor {
                q.append_pair(CURSOR, c);
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        self.client.get_json(url).await
    }

    /// Every page from the start (or from [`cursor`](Self::cursor)), one
    /// [`ChangesPages::next_page`] call at a time.
    pub fn pages(self) -> ChangesPages {
        let cursor = self.cursor.clone();
        ChangesPages { request: self, cursor, sync_token: None, done: false }
    }

    /// Every changed company of the walk and the token of its last page.
    pub async fn all(self) -> Result<Changes> {
        let mut data = Vec::new();
        let mut pages = self.pages();
        while let Some(page) = pages.next_page().await? {
            data.extend(page.data);
        }
        let sync_token = pages.sync_token.ok_or_else(no_token)?;
        Ok(Changes { data, sync_token })
    }
}

/// The error of a walk that ended without a token (a server that breaks
/// the contract): the rows cannot be trusted to be complete.
pub(crate) fn no_token() -> Error {
    Error::Decode(<serde_json::Error as serde::de::Error>::custom("the last page of the change feed has no sync_token"))
}

/// The pages of a [`ChangesRequest`], fetched on demand.
#[derive(Debug)]
pub struct ChangesPages {
    request: ChangesRequest,
    cursor: Option<String>,
    sync_token: Option<String>,
    done: bool,
}

impl ChangesPages {
    /// The next page, or `None` after the last one. After an error, calling
    /// again retries the same page.
    pub async fn next_page(&mut self) -> Result<Option<ChangesPage>> {
        if self.done {
            return Ok(None);
        }
        let page = self.request.fetch(self.cursor.as_deref()).await?;
        match (&page.next_cursor, page.has_more) {
            (Some(c), true) => self.cursor = Some(c.clone()),
            _ => {
                self.done = true;
                self.sync_token.clone_from(&page.sync_token);
            }
        }
        Ok(Some(page))
    }

    /// The cursor the next call will send (`None` before the first page of
    /// a request without a cursor, and after the last page).
    pub fn cursor(&self) -> Option<&str> {
        if self.done { None } else { self.cursor.as_deref() }
    }

    /// The token of the last page, to pass as `since` next time: `None`
    /// until the last page has been fetched.
    pub fn sync_token(&self) -> Option<&str> {
        self.sync_token.as_deref()
    }
}

/// A whole walk of the change feed ([`ChangesRequest::all`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Changes {
    /// The changed companies, in change order, each once.
    pub data: Vec<CompanyDetail>,
    /// The token of the last page: pass it as `since` next time.
    pub sync_token: String,
}

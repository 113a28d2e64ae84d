//! What the list requests share (`GET /v1/companies`, `GET /v1/news`): the
//! request ([`ListRequest`], whose filters each list adds in its own
//! module), the query being built, one page of it, and every page
//! ([`Pages`]), every row as a stream or a vector, following `next_cursor`
//! to the last page.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;

use futures_util::Stream;
use mds_domain::params::{CURSOR, LIMIT};
use mds_domain::{Company, Page};
use serde::de::DeserializeOwned;

use crate::client::Client;
use crate::error::Result;

/// A list request of rows `T`: the filters of its list
/// ([`CompaniesRequest`](crate::CompaniesRequest),
/// [`NewsListRequest`](crate::NewsListRequest)), the page size and the
/// cursor; then one page, every page, or every row.
#[must_use]
pub struct ListRequest<T> {
    query: ListQuery,
    rows: PhantomData<fn() -> T>,
}

impl<T> Clone for ListRequest<T> {
    fn clone(&self) -> Self {
        ListRequest { query: self.query.clone(), rows: PhantomData }
    }
}

impl<T> fmt::Debug for ListRequest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListRequest").field("query", &self.query).finish()
    }
}

impl<T> ListRequest<T> {
    /// A request of the list at `path` (segments), without parameters.
    pub(crate) fn new(client: Client, path: &'static [&'static str]) -> Self {
        ListRequest { query: ListQuery::new(client, path), rows: PhantomData }
    }

    /// Sets the parameter `name` (a filter of this list).
    pub(crate) fn set(self, name: &'static str, value: String) -> Self {
        ListRequest { query: self.query.set(name, value), rows: PhantomData }
    }

    /// The same request, its rows read as `U` (a fuller view of the same
    /// JSON).
    pub(crate) fn rows<U>(self) -> ListRequest<U> {
        ListRequest { query: self.query, rows: PhantomData }
    }

    /// Rows per page, 1 to 200 (the server's default is 50).
    pub fn limit(self, limit: u16) -> Self {
        self.set(LIMIT, limit.to_string())
    }

    /// Starts at this cursor (a `next_cursor` from a page with the same filters).
    pub fn cursor(self, cursor: impl Into<String>) -> Self {
        ListRequest { query: self.query.cursor(cursor.into()), rows: PhantomData }
    }
}

impl<T: DeserializeOwned + Send + 'static> ListRequest<T> {
    /// Fetches one page.
    pub async fn send(&self) -> Result<Page<T>> {
        self.query.send().await
    }

    /// Every page from the start (or from [`cursor`](Self::cursor)), one
    /// [`Pages::next_page`] call at a time.
    pub fn pages(self) -> Pages<T> {
        self.query.pages()
    }

    /// Every matching row, following `next_cursor` to the last page. The
    /// stream ends after the first error, which it yields.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// use futures_util::StreamExt as _;
    /// let mut companies = std::pin::pin!(client.companies().search("bank").limit(200).stream());
    /// while let Some(c) = companies.next().await {
    ///     println!("{}", c?.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn stream(self) -> impl Stream<Item = Result<T>> + Send + 'static {
        self.pages().stream()
    }

    /// Every matching row in one vector (all pages).
    pub async fn all(self) -> Result<Vec<T>> {
        self.pages().all().await
    }
}

/// A list request's path and query parameters (a name given twice keeps
/// the last value), and the cursor it starts at.
#[derive(Debug, Clone)]
pub(crate) struct ListQuery {
    client: Client,
    path: &'static [&'static str],
    params: Vec<(&'static str, String)>,
    cursor: Option<String>,
}

impl ListQuery {
    /// A request of the list at `path` (segments), without parameters.
    pub(crate) fn new(client: Client, path: &'static [&'static str]) -> Self {
        ListQuery { client, path, params: Vec::new(), cursor: None }
    }

    /// Sets the parameter `name`.
    pub(crate) fn set(mut self, name: &'static str, value: String) -> Self {
        self.params.retain(|(n, _)| *n != name);
        self.params.push((name, value));
        self
    }

    /// Starts at `cursor`.
    pub(crate) fn cursor(mut self, cursor: String) -> Self {
        self.cursor = Some(cursor);
        self
    }

    /// The page at `cursor` (the first without one).
    pub(crate) async fn fetch<T: DeserializeOwned>(&self, cursor: Option<&str>) -> Result<Page<T>> {
        let mut url = self.client.url(self.path);
        {
            let mut q = url.query_pairs_mut();
            for (k, v) in &self.params {
                q.append_pair(k, v);
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

    /// The page the request starts at.
    pub(crate) async fn send<T: DeserializeOwned>(&self) -> Result<Page<T>> {
        self.fetch(self.cursor.as_deref()).await
    }

    /// Every page from where the request starts.
    pub(crate) fn pages<T>(self) -> Pages<T> {
        let cursor = self.cursor.clone();
        Pages { query: self, cursor, done: false, rows: PhantomData }
    }
}

/// The pages of a list request (of companies unless said otherwise),
/// fetched on demand.
pub struct Pages<T = Company> {
    query: ListQuery,
    cursor: Option<String>,
    done: bool,
    rows: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Pages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pages")
            .field("query", &self.query)
            .field("cursor", &self.cursor)
            .field("done", &self.done)
            .finish()
    }
}

impl<T: DeserializeOwned> Pages<T> {
    /// The next page, or `None` after the last one. After an error, calling
    /// again retries the same page.
    pub async fn next_page(&mut self) -> Result<Option<Page<T>>> {
        if self.done {
            return Ok(None);
        }
        let page = self.query.fetch(self.cursor.as_deref()).await?;
        match (&page.next_cursor, page.has_more) {
            (Some(c), true) => self.cursor = Some(c.clone()),
            _ => self.done = true,
        }
        Ok(Some(page))
    }

    /// The cursor the next call will send (`None` before the first page of
    /// a request without a cursor, and after the last page).
    pub fn cursor(&self) -> Option<&str> {
        if self.done { None } else { self.cursor.as_deref() }
    }

    /// Every row of every page, as they arrive; ends after the first error,
    /// which it yields.
    pub(crate) fn stream(self) -> impl Stream<Item = Result<T>> + Send + 'static
    where
        T: Send + 'static,
    {
        let state = (self, VecDeque::new(), false);
        futures_util::stream::unfold(state, |(mut pages, mut buf, failed)| async move {
            if failed {
                return None;
            }
            loop {
                if let Some(row) = buf.pop_front() {
                    return Some((Ok(row), (pages, buf, false)));
                }
                match pages.next_page().await {
                    Ok(Some(page)) => buf.extend(page.data),
                    Ok(None) => return None,
                    Err(e) => return Some((Err(e), (pages, buf, true))),
                }
            }
        })
    }

    /// Every row of every page, in one vector.
    pub(crate) async fn all(mut self) -> Result<Vec<T>> {
        let mut out = Vec::new();
        while let Some(page) = self.next_page().await? {
            out.extend(page.data);
        }
        Ok(out)
    }
}

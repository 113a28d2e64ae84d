//! What the list requests share (`GET /v1/companies`, `GET /v1/news`): the
//! query being built, one page of it, and every page ([`Pages`]), every row
//! as a stream or a vector, following `next_cursor` to the last page.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;

use futures_util::Stream;
use mds_domain::params::CURSOR;
use mds_domain::{Company, Page};
use serde::de::DeserializeOwned;

use crate::client::Client;
use crate::error::Result;

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

//! `GET /v1/news`: the filters of the news list's request; the page size,
//! one page and every page as every list request has them ([`ListRequest`]).
//!
//! The parameter names, the listed article ([`ArticleSummary`]) and the
//! page envelope are those of [`mds_domain::news`] and [`mds_domain`], the
//! definitions the server parses and writes with. Text values are sent as
//! given and checked by the server (a bad one comes back as its `400`);
//! instants are typed and sent in the wire format.

use chrono::{DateTime, Utc};
use mds_domain::news::{CATEGORY, ISIN, PUBLISHED_AFTER, PUBLISHED_BEFORE, Q, TAG};
use mds_domain::params::{SORT, TICKER};
use mds_domain::time::format_utc;
use mds_domain::{ArticleSummary, NewsSort};

use crate::list::ListRequest;

/// A `GET /v1/news` request: articles newest first, without their body;
/// filters combine with AND. A bad value (an invalid ISIN, a limit over
/// 200) comes back as [`Error::Api`](crate::Error::Api) with code
/// `invalid_parameter`.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// // One page.
/// let page = client.news_list().ticker("RELIANCE").limit(10).send().await?;
/// // A full-text search, most relevant first.
/// let found = client.news_list().q("\"net profit\" reliance").limit(5).send().await?;
/// // Every article about a company, then one with its body.
/// let about = client.news_list().isin("INE002A01018").all().await?;
/// if let Some(first) = about.first() {
///     let article = client.article(first.slug.as_str()).await?;
///     println!("{}", article.body.unwrap_or_default());
/// }
/// # Ok(()) }
/// ```
pub type NewsListRequest = ListRequest<ArticleSummary>;

/// The filters of `GET /v1/news`.
impl NewsListRequest {
    /// About the company with this ISIN (case-insensitive).
    pub fn isin(self, isin: impl Into<String>) -> Self {
        self.set(ISIN, isin.into())
    }

    /// About the company with this ticker (exact, case-insensitive).
    pub fn ticker(self, ticker: impl Into<String>) -> Self {
        self.set(TICKER, ticker.into())
    }

    /// In this category (exact, case-sensitive).
    pub fn category(self, category: impl Into<String>) -> Self {
        self.set(CATEGORY, category.into())
    }

    /// Carrying this tag (exact, case-sensitive).
    pub fn tag(self, tag: impl Into<String>) -> Self {
        self.set(TAG, tag.into())
    }

    /// Full-text search over headline, sub-headline, excerpt and body:
    /// words (all required), `"a phrase"`, `prefix*`; case and accents
    /// folded. Ranked by relevance unless [`sort`](Self::sort) says
    /// [`NewsSort::PublishedAt`].
    pub fn q(self, text: impl Into<String>) -> Self {
        self.set(Q, text.into())
    }

    /// The order of a search: [`NewsSort::Relevance`] (the default with
    /// [`q`](Self::q); refused without it) or [`NewsSort::PublishedAt`]
    /// (newest first).
    pub fn sort(self, sort: NewsSort) -> Self {
        self.set(SORT, sort.as_str().to_owned())
    }

    /// Published strictly after this instant (undated articles are left out).
    pub fn published_after(self, t: DateTime<Utc>) -> Self {
        self.set(PUBLISHED_AFTER, format_utc(&t))
    }

    /// Published strictly before this instant, which must be later than
    /// [`published_after`](Self::published_after) (undated articles are
    /// left out).
    pub fn published_before(self, t: DateTime<Utc>) -> Self {
        self.set(PUBLISHED_BEFORE, format_utc(&t))
    }
}

//! The client, its builder, and the request loop with retries.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mds_domain::daily::V1UsageDaily;
use mds_domain::facets::{Industries, NewsFacets};
use mds_domain::usage::{BillingMonth, V1Usage};
use mds_domain::{Article, CompanyDetail, CompanyHistory, Exchange, Problem, Slug, SymbolHistory};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde::de::DeserializeOwned;

use crate::changes::ChangesRequest;
use crate::companies::CompaniesRequest;
use crate::error::{Error, Result};
use crate::news_list::NewsListRequest;

/// The base URL used when none is given: a local `mds demo` or `mds serve`.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080";
/// Default timeout of one attempt (connect, send, read the whole body).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of retries after the first attempt (for `429` and `503`).
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Default first backoff delay when a response has no `Retry-After`.
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
/// Default longest wait before a retry.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);

/// What the client tells a retry hook before it waits and retries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryEvent {
    /// The attempt that failed, from 1.
    pub attempt: u32,
    /// Its status: `429` or `503`.
    pub status: u16,
    /// How long the client waits before the next attempt.
    pub delay: Duration,
    /// The problem `code` of the failed attempt, when it had one
    /// (`rate_limited`, `unavailable`, ...).
    pub code: Option<String>,
}

type RetryHook = Arc<dyn Fn(&RetryEvent) + Send + Sync>;

/// A client of the mds API. Cheap to clone (clones share one connection
/// pool); build it with [`Client::builder`].
///
/// ```no_run
/// # async fn example() -> Result<(), mds_client::Error> {
/// let client = mds_client::Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .api_key(std::env::var("MDS_API_KEY").unwrap_or_default())
///     .build()?;
/// let usage = client.usage().await?;
/// println!("{} of {} requests left", usage.current_month.remaining, usage.current_month.quota);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    base: Url,
    auth: HeaderValue,
    timeout: Duration,
    max_retries: u32,
    backoff: Duration,
    max_delay: Duration,
    on_retry: Option<RetryHook>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base.as_str())
            .field("api_key", &"<redacted>")
            .field("timeout", &self.inner.timeout)
            .field("max_retries", &self.inner.max_retries)
            .field("backoff", &self.inner.backoff)
            .field("max_delay", &self.inner.max_delay)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Client`]. Only the API key is required.
#[must_use]
pub struct ClientBuilder {
    base_url: String,
    api_key: Option<String>,
    timeout: Duration,
    max_retries: u32,
    backoff: Duration,
    max_delay: Duration,
    user_agent: String,
    no_proxy: bool,
    on_retry: Option<RetryHook>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("max_delay", &self.max_delay)
            .field("user_agent", &self.user_agent)
            .field("no_proxy", &self.no_proxy)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff: DEFAULT_BACKOFF,
            max_delay: DEFAULT_MAX_DELAY,
            user_agent: concat!("mds-client/", env!("CARGO_PKG_VERSION")).to_owned(),
            no_proxy: false,
            on_retry: None,
        }
    }
}

impl ClientBuilder {
    /// The API's base URL, without `/v1` (default [`DEFAULT_BASE_URL`]).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The API key (`mds_live_…` or `mds_test_…`), sent as
    /// `Authorization: Bearer`. It is never shown by `Debug`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Timeout of one attempt, from connecting to the end of the body
    /// (default [`DEFAULT_TIMEOUT`]). Waits between retries are not part of it.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Retries after the first attempt for `429` and `503` (default
    /// [`DEFAULT_MAX_RETRIES`]; `0` turns retrying off). Other statuses are
    /// never retried.
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// First delay of the exponential backoff (doubled on each retry), used
    /// when a `429`/`503` carries no `Retry-After` (default [`DEFAULT_BACKOFF`]).
    pub fn backoff(mut self, first: Duration) -> Self {
        self.backoff = first;
        self
    }

    /// Longest wait before a retry (default [`DEFAULT_MAX_DELAY`]). Backoff
    /// delays are capped at it; a `Retry-After` longer than it (a monthly
    /// quota used up, say) is not shortened: the client gives up at once and
    /// returns that response's error.
    pub fn max_delay(mut self, max: Duration) -> Self {
        self.max_delay = max;
        self
    }

    /// The `User-Agent` header (default `mds-client/<version>`).
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// Ignores proxy settings from the environment (`HTTP_PROXY`, ...).
    pub fn no_proxy(mut self) -> Self {
        self.no_proxy = true;
        self
    }

    /// Calls `hook` before each retry, e.g. to log it.
    pub fn on_retry(mut self, hook: impl Fn(&RetryEvent) + Send + Sync + 'static) -> Self {
        self.on_retry = Some(Arc::new(hook));
        self
    }

    /// Builds the client. Fails with [`Error::Config`] without an API key,
    /// with a key that cannot be a header value, or with a base URL that is
    /// not `http(s)://…`.
    pub fn build(self) -> Result<Client> {
        let key = self.api_key.ok_or_else(|| Error::Config("no API key given".into()))?;
        if key.is_empty() {
            return Err(Error::Config("the API key is empty".into()));
        }
        let mut auth = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| Error::Config("the API key holds characters a header cannot carry".into()))?;
        auth.set_sensitive(true);
        let base = Url::parse(&self.base_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.query().is_none())
            .ok_or_else(|| {
                Error::Config(format!("base URL must be http(s)://host[:port][/path]: {:?}", self.base_url))
            })?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, application/problem+json"));
        let mut http =
            reqwest::Client::builder().timeout(self.timeout).user_agent(self.user_agent).default_headers(headers);
        if self.no_proxy {
            http = http.no_proxy();
        }
        let http = http.build().map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                base,
                auth,
                timeout: self.timeout,
                max_retries: self.max_retries,
                backoff: self.backoff,
                max_delay: self.max_delay,
                on_retry: self.on_retry,
            }),
        })
    }
}

impl Client {
    /// A builder with the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// `GET /v1/companies`: set filters on the returned request, then
    /// [`send`](CompaniesRequest::send) it for one page or
    /// [`stream`](CompaniesRequest::stream) every match.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// use mds_client::{Exchange, MarketCapBand};
    /// let page = client.companies().exchange(Exchange::Nse).market_cap(MarketCapBand::Large).limit(10).send().await?;
    /// for c in &page.data {
    ///     println!("{} {}", c.ticker, c.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn companies(&self) -> CompaniesRequest {
        CompaniesRequest::new(self.clone(), &["v1", "companies"])
    }

    /// `GET /v1/companies/{isin}`: one company with everything the service
    /// knows about it (listings, classification, market cap, `updated_at`).
    /// The ISIN is matched case-insensitively; a malformed or unknown one is
    /// [`Error::Api`] with status `404` and code `not_found` (one that
    /// cannot even be a path segment, `""`, `.` or `..`, is
    /// [`Error::InvalidArgument`] without a request).
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// let d = client.company("INE002A01018").await?;
    /// for l in &d.listings {
    ///     println!("{} {} {:?}", l.exchange, l.symbol, l.status);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn company(&self, isin: &str) -> Result<CompanyDetail> {
        self.get_json(self.resource_url(&["v1", "companies"], isin, "an ISIN")?).await
    }

    /// `GET /v1/companies/{isin}?as_of=`: the company as it stood at the end
    /// of `day` (its ticker and name of that day; the fields not tracked
    /// over time are today's); `404` when it was not listed then.
    pub async fn company_as_of(&self, isin: &str, day: chrono::NaiveDate) -> Result<CompanyDetail> {
        let mut url = self.resource_url(&["v1", "companies"], isin, "an ISIN")?;
        url.query_pairs_mut().append_pair(mds_domain::params::AS_OF, &day.format("%Y-%m-%d").to_string());
        self.get_json(url).await
    }

    /// `GET /v1/companies/{isin}/history`: the company's identity events,
    /// oldest first (none for a company the service holds no history for).
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// for e in client.history("INE296A01024").await?.events {
    ///     println!("{} {}", e.date, e.change.kind());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn history(&self, isin: &str) -> Result<CompanyHistory> {
        let mut url = self.resource_url(&["v1", "companies"], isin, "an ISIN")?;
        url.path_segments_mut().expect("an http(s) URL has segments").push("history");
        self.get_json(url).await
    }

    /// `GET /v1/symbols/{symbol}?exchange=`: every ISIN that carried the
    /// symbol on `exchange`, with when; `404` for a symbol never seen.
    pub async fn symbol(&self, symbol: &str, exchange: Exchange) -> Result<SymbolHistory> {
        let mut url = self.resource_url(&["v1", "symbols"], symbol, "a symbol")?;
        url.query_pairs_mut().append_pair(mds_domain::params::SYMBOL_EXCHANGE, exchange.as_str());
        self.get_json(url).await
    }

    /// `GET /v1/companies/changes`: the change feed from `since` (the
    /// `sync_token` of an earlier walk; `None` for every company). Set the
    /// page size on the returned request, then [`send`](ChangesRequest::send)
    /// it for one page, walk its [`pages`](ChangesRequest::pages), or take
    /// [`all`](ChangesRequest::all) of it; or let [`Client::sync`] keep a
    /// local copy up to date.
    pub fn changes(&self, since: Option<&str>) -> ChangesRequest {
        ChangesRequest::new(self.clone(), since)
    }

    /// `GET /v1/news`: set filters on the returned request, then
    /// [`send`](NewsListRequest::send) it for one page of articles (newest
    /// first, without their body) or [`all`](NewsListRequest::all) for
    /// every match.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// for a in client.news_list().ticker("TCS").category("earnings").all().await? {
    ///     println!("{:?} {}", a.published_at, a.headline);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn news_list(&self) -> NewsListRequest {
        NewsListRequest::new(self.clone(), &["v1", "news"])
    }

    /// `GET /v1/actions`: the corporate-action calendar; set filters on the
    /// returned request, then [`send`](crate::ActionsRequest::send) it for
    /// one page or take [`all`](crate::ActionsRequest::all) of it.
    pub fn actions(&self) -> crate::ActionsRequest {
        crate::ActionsRequest::new(self.clone(), &["v1", "actions"])
    }

    /// `GET /v1/companies/{isin}/actions`: the company's corporate actions,
    /// with (by default) those of the ISINs it superseded; set filters on
    /// the returned request, then [`send`](crate::CompanyRequest::send) it.
    pub fn company_actions(&self, isin: &str) -> crate::CompanyActionsRequest {
        crate::CompanyRequest::new(self.clone(), isin, "actions")
    }

    /// `GET /v1/companies/{isin}/prices`: the security's end-of-day bars,
    /// oldest first, adjusted (by default for splits and bonuses) and
    /// continued through the ISINs it superseded; set `from`, `to`,
    /// `adjust` and `lineage` on the returned request, then
    /// [`send`](crate::CompanyRequest::send) it.
    pub fn company_prices(&self, isin: &str) -> crate::CompanyPricesRequest {
        crate::CompanyRequest::new(self.clone(), isin, "prices")
    }

    /// `GET /v1/prices?date=`: the market on `date`, by ISIN then series;
    /// filter by series, then take one page or [`all`](crate::MarketDayRequest::all)
    /// of it (the cursors followed).
    pub fn market_day(&self, date: chrono::NaiveDate) -> crate::MarketDayRequest {
        crate::MarketDayRequest::new(self.clone(), &["v1", "prices"])
            .set(mds_domain::price_query::DATE, crate::part::day(date))
    }

    /// `GET /v1/news/{slug}`: one article with its body. An unknown slug is
    /// [`Error::Api`] with status `404` and code `not_found`; a string that
    /// cannot be a slug ([`Slug`]: 1 to 200 characters of `a-z`, `0-9` and
    /// `-`) is [`Error::InvalidArgument`] without a request, so it never
    /// counts against the quota.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// let article = client.article("some-slug").await?;
    /// println!("{}", article.headline);
    /// # Ok(()) }
    /// ```
    pub async fn article(&self, slug: &str) -> Result<Article> {
        let slug = Slug::parse(slug).map_err(|e| Error::InvalidArgument(format!("{e}: {slug:?}")))?;
        self.get_json(self.resource_url(&["v1", "news"], slug.as_str(), "a slug")?).await
    }

    /// `GET /v1/industries`: the four-level classification of the active
    /// companies, with how many are at each node (the values
    /// [`CompaniesRequest::industry`](crate::CompaniesRequest::industry)
    /// takes).
    pub async fn industries(&self) -> Result<Industries> {
        self.get_json(self.url(&["v1", "industries"])).await
    }

    /// `GET /v1/news/facets`: every news category and tag, with how many
    /// articles carry each.
    pub async fn news_facets(&self) -> Result<NewsFacets> {
        self.get_json(self.url(&["v1", "news", "facets"])).await
    }

    /// `GET /v1/usage`: your key's tier, limits, and requests this month and
    /// the twelve before.
    pub async fn usage(&self) -> Result<V1Usage> {
        self.get_json(self.url(&["v1", "usage"])).await
    }

    /// `GET /v1/usage/daily`: where your quota went in `month` (`None`: this
    /// month), day by day: requests, `304`s and requests by route. The
    /// current month or one of the twelve before it; another is
    /// [`Error::Api`] with status `400` and code `invalid_parameter`.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// let october = "2026-10".parse().expect("a month");
    /// for day in client.usage_daily(Some(october)).await?.days {
    ///     println!("{} {} ({} not modified)", day.date, day.requests, day.not_modified);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn usage_daily(&self, month: Option<BillingMonth>) -> Result<V1UsageDaily> {
        let mut url = self.url(&["v1", "usage", "daily"]);
        if let Some(m) = month {
            url.query_pairs_mut().append_pair(mds_domain::daily::MONTH, &m.to_string());
        }
        self.get_json(url).await
    }

    /// `GET /v1/events`: the event log, oldest first; set filters and a
    /// position (`since`) on the returned request, then
    /// [`send`](crate::EventsRequest::send) it or walk every page.
    pub fn events(&self) -> crate::EventsRequest {
        crate::EventsRequest::new(self.clone(), &["v1", "events"])
    }

    /// `GET /v1/events/stream`: set filters and a position on the returned
    /// request, then [`follow`](crate::EventStreamRequest::follow) it.
    pub fn event_stream(&self) -> crate::EventStreamRequest {
        crate::EventStreamRequest::new(self.clone())
    }

    /// The HTTP client requests go through.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }

    /// The `Authorization` header value (marked sensitive).
    pub(crate) fn auth_header(&self) -> HeaderValue {
        self.inner.auth.clone()
    }

    /// The wait before the `attempt`-th retry (from 1) without a
    /// `Retry-After`.
    pub(crate) fn backoff_for(&self, attempt: u32) -> Duration {
        backoff_delay(self.inner.backoff, attempt, self.inner.max_delay)
    }

    /// The base URL joined with path segments (each percent-encoded).
    pub(crate) fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.inner.base.clone();
        url.path_segments_mut().expect("an http(s) URL has segments").pop_if_empty().extend(segments);
        url
    }

    /// The URL of one resource: `segments`, then `id` (an ISIN, a slug)
    /// percent-encoded. An `id` that is empty, `.` or `..` cannot be a path
    /// segment (URL parsing drops or climbs it, so the request would reach
    /// another route): it is [`Error::InvalidArgument`], and nothing is sent.
    pub(crate) fn resource_url(&self, segments: &[&str], id: &str, what: &str) -> Result<Url> {
        if matches!(id, "" | "." | "..") {
            return Err(Error::InvalidArgument(format!("{id:?} cannot be {what}")));
        }
        let mut url = self.url(segments);
        url.path_segments_mut().expect("an http(s) URL has segments").push(id);
        Ok(url)
    }

    /// `GET url` with the key; decodes the JSON body of a success. Retries
    /// `429` and `503` as configured.
    pub(crate) async fn get_json<T: DeserializeOwned>(&self, url: Url) -> Result<T> {
        let inner = &*self.inner;
        let mut attempt: u32 = 1;
        loop {
            let resp = inner
                .http
                .get(url.clone())
                .header(AUTHORIZATION, inner.auth.clone())
                .send()
                .await
                .map_err(|e| self.transport(e))?;
            let status = resp.status();
            let retry_after = retry_after(resp.headers());
            let body = resp.bytes().await.map_err(|e| self.transport(e))?;
            if status.is_success() {
                return serde_json::from_slice(&body).map_err(Error::Decode);
            }
            let err = match serde_json::from_slice::<Problem>(&body) {
                Ok(problem) => Error::Api { status: status.as_u16(), problem: Box::new(problem) },
                Err(_) => Error::UnexpectedResponse {
                    status: status.as_u16(),
                    body: String::from_utf8_lossy(&body[..body.len().min(512)]).into_owned(),
                },
            };
            let retryable = matches!(status, StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE);
            if !retryable || attempt > inner.max_retries {
                return Err(err);
            }
            let delay = match retry_after {
                // Never earlier than the server asks; if that is longer than
                // we are willing to wait, give up now.
                Some(d) if d > inner.max_delay => return Err(err),
                Some(d) => d,
                None => backoff_delay(inner.backoff, attempt, inner.max_delay),
            };
            if let Some(hook) = &inner.on_retry {
                hook(&RetryEvent {
                    attempt,
                    status: status.as_u16(),
                    delay,
                    code: err.problem().map(|p| p.code.clone()),
                });
            }
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    fn transport(&self, e: reqwest::Error) -> Error {
        if e.is_timeout() { Error::Timeout(self.inner.timeout) } else { Error::Transport(e.without_url()) }
    }
}

/// `first · 2^(attempt−1)`, at most `max`.
fn backoff_delay(first: Duration, attempt: u32, max: Duration) -> Duration {
    first.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1))).min(max)
}

/// `Retry-After` in seconds (the form mds sends); an HTTP date or garbage
/// counts as absent.
fn retry_after(h: &HeaderMap) -> Option<Duration> {
    h.get(RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let ms = Duration::from_millis;
        assert_eq!(backoff_delay(ms(100), 1, ms(1000)), ms(100));
        assert_eq!(backoff_delay(ms(100), 2, ms(1000)), ms(200));
        assert_eq!(backoff_delay(ms(100), 4, ms(1000)), ms(800));
        assert_eq!(backoff_delay(ms(100), 5, ms(1000)), ms(1000));
        assert_eq!(backoff_delay(ms(100), 60, ms(1000)), ms(1000));
    }

    #[test]
    fn retry_after_is_seconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = "mds_live_0123456789abcdefghijABCDEFGHIJxyzXYZ123";
        let b = Client::builder().api_key(key).base_url("http://example.test/");
        assert!(!format!("{b:?}").contains(key));
        let c = b.build().unwrap();
        let s = format!("{c:?}");
        assert!(!s.contains(key) && !s.contains("0123456789abcdef"), "{s}");
        assert!(s.contains("<redacted>"), "{s}");
    }

    #[test]
    fn urls_join_segments_and_encode_them() {
        let c = Client::builder().api_key("k").base_url("http://h:1/api/").build().unwrap();
        assert_eq!(c.url(&["v1", "usage"]).as_str(), "http://h:1/api/v1/usage");
        let c = Client::builder().api_key("k").base_url("http://h:1").build().unwrap();
        assert_eq!(c.url(&["v1", "news", "a/b?c"]).as_str(), "http://h:1/v1/news/a%2Fb%3Fc");
        assert_eq!(c.url(&["v1", "companies", "../usage"]).as_str(), "http://h:1/v1/companies/..%2Fusage");
        for id in ["", ".", ".."] {
            let url = c.resource_url(&["v1", "companies"], id, "an ISIN");
            assert!(matches!(url, Err(Error::InvalidArgument(_))), "{id:?}");
        }
        let url = c.resource_url(&["v1", "companies"], "a.b/c", "an ISIN").unwrap();
        assert_eq!(url.as_str(), "http://h:1/v1/companies/a.b%2Fc");
    }

    #[test]
    fn build_refuses_bad_settings() {
        assert!(matches!(Client::builder().build(), Err(Error::Config(_))));
        assert!(matches!(Client::builder().api_key("k").base_url("ftp://x").build(), Err(Error::Config(_))));
        assert!(matches!(Client::builder().api_key("k\n").build(), Err(Error::Config(_))));
    }
}

//! A request of one company's part (`GET /v1/companies/{isin}/{part}`,
//! its `actions` or its `prices`): the span and lineage both parts take
//! ([`CompanyRequest`]; each part adds its own filters in its module),
//! then the answer, read as its record.

use std::marker::PhantomData;

use chrono::NaiveDate;
use mds_domain::action_query::{FROM, LINEAGE, TO};
use serde::de::DeserializeOwned;

use crate::client::Client;
use crate::error::Result;

/// A day as the wire writes it (`YYYY-MM-DD`).
pub(crate) fn day(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// A `GET /v1/companies/{isin}/{part}` request answered by a `T`
/// ([`CompanyActionsRequest`](crate::CompanyActionsRequest),
/// [`CompanyPricesRequest`](crate::CompanyPricesRequest)), with its query
/// parameters (a name given twice keeps the last value).
#[must_use]
#[derive(Debug, Clone)]
pub struct CompanyRequest<T> {
    client: Client,
    isin: String,
    part: &'static str,
    params: Vec<(&'static str, String)>,
    answer: PhantomData<fn() -> T>,
}

impl<T> CompanyRequest<T> {
    /// A request of `isin`'s `part`, with the server's defaults.
    pub(crate) fn new(client: Client, isin: &str, part: &'static str) -> Self {
        CompanyRequest { client, isin: isin.to_owned(), part, params: Vec::new(), answer: PhantomData }
    }

    /// Sets the parameter `name`.
    pub(crate) fn set(mut self, name: &'static str, value: String) -> Self {
        self.params.retain(|(n, _)| *n != name);
        self.params.push((name, value));
        self
    }

    /// The first day (inclusive): of the actions, the earliest ex-date; of
    /// the prices, the first bar (by default a year before `to`).
    pub fn from(self, d: NaiveDate) -> Self {
        self.set(FROM, day(d))
    }

    /// The last day (inclusive): of the actions, the latest ex-date; of the
    /// prices, the last bar (by default the last day loaded).
    pub fn to(self, d: NaiveDate) -> Self {
        self.set(TO, day(d))
    }

    /// `false`: this ISIN's actions or bars only; `true` (the server's
    /// default): also those of the ISINs it superseded, the series
    /// continued through them.
    pub fn lineage(self, lineage: bool) -> Self {
        self.set(LINEAGE, lineage.to_string())
    }
}

impl<T: DeserializeOwned> CompanyRequest<T> {
    /// Fetches the part. A malformed or unknown ISIN is
    /// [`Error::Api`](crate::Error::Api) with status `404`; a bad span of
    /// prices (`to` before `from`, more than ten years) status `400`.
    pub async fn send(&self) -> Result<T> {
        let mut url = self.client.resource_url(&["v1", "companies"], &self.isin, "an ISIN")?;
        url.path_segments_mut().expect("an http(s) URL has segments").push(self.part);
        if !self.params.is_empty() {
            let mut q = url.query_pairs_mut();
            for (n, v) in &self.params {
                q.append_pair(n, v);
            }
        }
        self.client.get_json(url).await
    }
}

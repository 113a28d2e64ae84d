//! What lists the values of the exact-match filters (contract section
//! 15): the classification tree (`GET /v1/industries`,
//! [`Node::industries`]) from the catalog, and the news categories and
//! tags (`GET /v1/news/facets`, [`Node::news_facets`]) from the news
//! index. Each answer is a function of what it is made from, so it is
//! made once and kept as the lists' pages are: per catalog version, per
//! news generation. Its `ETag` hashes the body, so it is the same on every
//! node and across imports that leave it as it was.

use std::collections::HashMap;

use mds_domain::NewsFilter;
use mds_domain::facets::NewsFacets;
use mds_domain::news::NewsKey;

use crate::error::ReadError;
use crate::node::Node;
use crate::pages::{List, PageKey};
use crate::tagged::Tagged;

/// Articles read from the store at a time while the news index lags.
const BATCH: usize = 5_000;

impl Node {
    /// The classification tree of the catalog's active companies
    /// (`V1Industries`).
    pub fn industries(&self) -> Tagged {
        match self.kept_page(List::Industries, None) {
            Ok(kept) => kept,
            Err(miss) => {
                let json = serde_json::to_vec(&miss.catalog.industries()).expect("the tree serializes");
                self.keep_page(miss, Tagged::hashed(json))
            }
        }
    }

    /// The news categories and tags with their article counts
    /// (`V1NewsFacets`): from the news index when it holds the generation
    /// followed, else counted from the store's articles (only while the
    /// node's index lags the generation: after an import, or at start).
    pub async fn news_facets(&self) -> Result<Tagged, ReadError> {
        let key = PageKey::new(List::NewsFacets, None);
        // Taken before the store is read: see `NewsPages::current`.
        let (followed, pages) = self.news_pages().current();
        if let Some(kept) = pages.get(key) {
            return Ok(kept);
        }
        let facets = match self.news_index().filter(|i| Some(i.generation()) == followed) {
            Some(index) => index.facets(),
            None => self.store_facets().await?,
        };
        let page = Tagged::hashed(serde_json::to_vec(&facets).expect("facets serialize"));
        pages.put(key, page.clone());
        Ok(page)
    }

    /// The facets counted from a walk of the store's articles.
    pub(crate) async fn store_facets(&self) -> Result<NewsFacets, ReadError> {
        let (mut categories, mut tags) = (HashMap::<String, u64>::new(), HashMap::<String, u64>::new());
        let everything = NewsFilter::default();
        let mut after = None;
        loop {
            let batch = self.store().news_page(&everything, after.as_ref(), BATCH).await?;
            after = batch.last().map(NewsKey::of);
            for a in &batch {
                if let Some(c) = &a.category {
                    *categories.entry(c.clone()).or_default() += 1;
                }
                let mut seen: Vec<&str> = a.tags.iter().map(String::as_str).collect();
                seen.sort_unstable();
                seen.dedup();
                for t in seen {
                    *tags.entry(t.to_owned()).or_default() += 1;
                }
            }
            if batch.len() < BATCH {
                break;
            }
        }
        Ok(NewsFacets::new(
            categories.iter().map(|(k, &n)| (k.as_str(), n)),
            tags.iter().map(|(k, &n)| (k.as_str(), n)),
        ))
    }
}

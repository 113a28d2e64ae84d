//! The lists answered a page at a time by their raw query, their pages
//! kept ([`Node::page`], one operation for all of them): the company list,
//! the change feed, the news list and the actions calendar.
//!
//! A page is looked for by its list and the query string as sent
//! ([`PageKey`]) before anything is parsed; only when it is not kept is
//! the query parsed (by the caller's parser, so a bad query fails as the
//! caller's error) and the page made and kept. What differs per list is
//! its query type's [`KeptList`]: which [`List`] it is, where its pages are
//! kept ([`Shelf`]) and how a page is made.

use std::future::Future;

use crate::catalog::CatalogVersion;
use crate::error::ReadError;
use crate::node::Node;
use crate::pages::{List, PageKey};
use crate::tagged::Tagged;

/// Where a list's pages are kept, which decides how long they are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shelf {
    /// In the catalog version's cache of pages: made from that
    /// catalog with no store access, until an import makes a new version;
    /// counted as page cache hits and misses.
    Catalog,
    /// Per news generation ([`crate::news_list::NewsPages`]).
    News,
    /// Per actions and prices generation (the actions routes' pages),
    /// and per catalog generation within it.
    Actions,
}

/// The query of a list whose pages the node keeps: which list, where its
/// pages are kept and how a page is made for it.
pub trait KeptList: Sized {
    /// The list its pages are kept under.
    const LIST: List;
    /// Where they are kept.
    const SHELF: Shelf;

    /// The page for this query, with whether to keep it: made from
    /// `catalog` (the version it is kept in, on the [`Shelf::Catalog`]),
    /// or at the generation `followed` when the page was looked for (on a
    /// shelf kept per generation; `None` before the first).
    fn make(
        &self,
        node: &Node,
        catalog: &CatalogVersion,
        followed: Option<i64>,
    ) -> impl Future<Output = Result<(Tagged, bool), ReadError>> + Send;
}

/// The key a page kept per catalog generation is kept under: the
/// catalog's generation, then each of `parts` (an ISIN, a format, the raw
/// query as sent) after a NUL, which none of them holds. Every answer that
/// reads the catalog's ISIN links (a company's lineage, a factor's
/// security) and is kept per a store generation the catalog does not
/// move (actions, prices) is kept under this key, so an import of lists
/// that adds a link is not answered from before it.
pub(crate) fn per_catalog(catalog: &CatalogVersion, parts: &[&str]) -> String {
    let mut key = catalog.generation().to_string();
    for part in parts {
        key.push('\0');
        key.push_str(part);
    }
    key
}

impl Node {
    /// The page of the list of `Q` asked with the query string `raw`: kept,
    /// or parsed by `parse` and made (and kept).
    pub async fn page<Q: KeptList, E: From<ReadError>>(
        &self,
        raw: Option<&str>,
        parse: impl FnOnce(Option<&str>) -> Result<Q, E>,
    ) -> Result<Tagged, E> {
        let kept_as;
        let (pages, key) = match Q::SHELF {
            Shelf::Catalog => {
                let miss = match self.kept_page(Q::LIST, raw) {
                    Ok(kept) => return Ok(kept),
                    Err(miss) => miss,
                };
                let (page, _) = parse(raw)?.make(self, &miss.catalog, None).await?;
                return Ok(self.keep_page(miss, page));
            }
            Shelf::News => (self.news_pages(), PageKey::new(Q::LIST, raw)),
            Shelf::Actions => {
                // A calendar page's factors are read through the catalog's
                // ISIN links (contract 13.2), which an import of lists
                // changes without moving the actions or prices generation:
                // its pages are kept per catalog generation too, as a
                // company's actions are.
                kept_as = per_catalog(&self.catalog_version(), &[raw.unwrap_or("")]);
                (self.action_pages(), PageKey { list: Q::LIST, query: &kept_as })
            }
        };
        let make = async |followed| Ok(parse(raw)?.make(self, &self.catalog_version(), followed).await?);
        pages.kept_or_made(key, make).await
    }
}

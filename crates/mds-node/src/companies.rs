//! The company list (`GET /v1/companies`) and one company's detail (`GET
//! /v1/companies/{isin}`), made from the node's catalog with no store
//! access.
//!
//! A list page is made once per query and catalog version, then served
//! from the version's kept pages ([`crate::pages`]). Its strong `ETag` is
//! derived from what makes it (catalog version, filters, position, limit),
//! not hashed from its bytes, and so is a detail's (catalog version, ISIN).

use std::sync::Arc;

use chrono::NaiveDate;
use http::HeaderValue;
use mds_catalog::SortKey;
use mds_domain::facets::Hint;
use mds_domain::identity::not_after_today;
use mds_domain::params::{AS_OF, CompaniesQueryParams, DetailParams, INDUSTRY};
use mds_domain::{Isin, ParamError, page as envelope};
use sha2::Digest;

use crate::catalog::CatalogVersion;
use crate::error::ReadError;
use crate::lists::{KeptList, Shelf};
use crate::metrics::Event;
use crate::node::Node;
use crate::pages::{List, PageKey};
use crate::tagged::Tagged;

/// A page the catalog does not keep ([`Node::kept_page`]): the catalog to
/// make it from, and where to keep it once made ([`Node::keep_page`]).
pub(crate) struct Miss<'q> {
    /// The catalog the page is made from, and kept in.
    pub(crate) catalog: arc_swap::Guard<Arc<CatalogVersion>>,
    /// Where it is kept.
    key: PageKey<'q>,
}

/// The company list's pages ([`Node::page`]): made from the catalog and
/// kept by its version.
impl KeptList for CompaniesQueryParams {
    const LIST: List = List::Companies;
    const SHELF: Shelf = Shelf::Catalog;

    async fn make(&self, node: &Node, catalog: &CatalogVersion, _: Option<i64>) -> Result<(Tagged, bool), ReadError> {
        Ok((node.make_companies_page(catalog, self)?, true))
    }
}

impl Node {
    /// The page of `list` asked with the query string `raw` as the
    /// catalog keeps it, counted as a hit; else what making and keeping it
    /// takes.
    pub(crate) fn kept_page<'q>(&self, list: List, raw: Option<&'q str>) -> Result<Tagged, Miss<'q>> {
        let catalog = self.catalog();
        let key = PageKey::new(list, raw);
        match catalog.pages().get(key) {
            Some(kept) => {
                self.metrics().event(Event::PageCacheHit);
                Ok(kept)
            }
            None => Err(Miss { catalog, key }),
        }
    }

    /// Keeps `page`, made for `miss`, counted as a miss.
    pub(crate) fn keep_page(&self, miss: Miss<'_>, page: Tagged) -> Tagged {
        self.metrics().event(Event::PageCacheMiss);
        miss.catalog.pages().put(miss.key, page.clone());
        page
    }

    /// The page of `catalog` for `req`, made.
    fn make_companies_page(&self, catalog: &CatalogVersion, req: &CompaniesQueryParams) -> Result<Tagged, ReadError> {
        if let Some(day) = req.filter.as_of {
            self.check_as_of(day)?;
        }
        let after = match &req.page.cursor {
            Some(c) => Some(self.cursors().decode(&req.filter, c).map_err(ReadError::cursor)?),
            None => None,
        };
        let page = catalog.page(&req.filter, after.as_ref(), req.page.limit.get());
        let next_cursor = page.next.as_ref().map(|k| self.cursors().encode(&req.filter, k));
        // An industry no row carries (contract section 15): the nearest that some do.
        let hint = match &req.filter.industry {
            Some(i) if page.is_empty() && !catalog.has_industry(i.as_str()) => {
                Some(Hint::new(INDUSTRY, i.as_str(), catalog.industry_names()))
            }
            _ => None,
        };
        let mut body = Vec::with_capacity(256);
        envelope::write_json(&mut body, |b| page.write_rows(b), next_cursor.as_deref(), page.has_more(), hint.as_ref());
        // Exactly as long as the page (the spare capacity is given back), so
        // that what the page cache counts is what it holds.
        Ok(Tagged { body: body.into_boxed_slice().into(), etag: page_tag(catalog, req, after.as_ref()) })
    }

    /// Refuses an `as_of` after today by the node's clock (the rest of
    /// its rules are checked where it is parsed).
    pub(crate) fn check_as_of(&self, day: NaiveDate) -> Result<(), ReadError> {
        let today = self.config().clock.now().date_naive();
        not_after_today(day, today).map(|_| ()).map_err(|detail| ReadError::Param(ParamError { param: AS_OF, detail }))
    }

    /// The detail record of the company with `isin` (`V1CompanyDetail`),
    /// if the catalog has it; with `as_of`, as it stood at the end of that
    /// day (`None` when it was not listed then).
    pub fn company(&self, isin: &Isin, params: &DetailParams) -> Result<Option<Tagged>, ReadError> {
        if let Some(day) = params.as_of {
            self.check_as_of(day)?;
        }
        let catalog = self.catalog();
        let Some(row) = catalog.find_isin(isin.as_str()) else { return Ok(None) };
        let mut body = Vec::new();
        match params.as_of {
            None => catalog.write_detail(row, &mut body),
            Some(day) => {
                if !catalog.write_detail_on(row, day, &mut body) {
                    return Ok(None);
                }
            }
        }
        // What the record holds is a function of the catalog version, the
        // row and the day: the tag derives from those (as a list page's
        // does), not from hashing the body.
        let etag = catalog.derived_tag(b"mds company\0", |h| {
            h.update(isin.as_str().as_bytes());
            if let Some(day) = params.as_of {
                h.update(day.format("%Y-%m-%d").to_string().as_bytes());
            }
        });
        Ok(Some(Tagged { body: body.into(), etag }))
    }
}

/// The strong `ETag` of a page, without hashing the page: what a page holds
/// is a function of the catalog version, the filters, the position and the
/// limit (and of the cursor secret and this build, which a catalog
/// version's id outlives on no node), so the tag is 16 bytes of a SHA-256
/// of those. A new catalog (an import, or a restart) gives every page a new
/// tag, whether or not its rows changed.
fn page_tag(catalog: &CatalogVersion, req: &CompaniesQueryParams, after: Option<&SortKey>) -> HeaderValue {
    let filter = req.filter.canonical();
    catalog.derived_tag(b"mds companies page\0", |h| {
        h.update((filter.len() as u64).to_le_bytes());
        h.update(filter.as_bytes());
        match after {
            Some(k) => {
                h.update([1]);
                h.update((k.ticker.len() as u64).to_le_bytes());
                h.update(k.ticker.as_bytes());
                h.update(k.isin.as_bytes());
                // A relevance position's rank (a cursor of an older
                // catalog may carry another one for the same row).
                if let Some(rank) = k.rank {
                    h.update(rank.to_le_bytes());
                }
            }
            None => h.update([0]),
        }
        h.update((req.page.limit.get() as u64).to_le_bytes());
    })
}

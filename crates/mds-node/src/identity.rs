//! Identity over time (contract 10.2): a company's identity events (`GET
//! /v1/companies/{isin}/history`) and the companies that carried a symbol
//! (`GET /v1/symbols/{symbol}`), both from the node's catalog, which
//! holds them as built from the store's events (no store read on the
//! request path). Their tags derive from the catalog version and what was
//! asked, as a company detail's do; like list pages, each answer is made
//! once per catalog version and then served from the version's kept pages
//! ([`crate::pages`]).

use mds_domain::{Exchange, Isin, Ticker};
use sha2::Digest;

use crate::catalog::CatalogVersion;
use crate::node::Node;
use crate::pages::List;
use crate::tagged::Tagged;

impl Node {
    /// The history of the company with `isin` (`V1CompanyHistory`, its
    /// events oldest first, none when the store holds none for it), if the
    /// catalog has the company.
    pub fn company_history(&self, isin: &Isin) -> Option<Tagged> {
        self.lookup(List::History, isin.as_str(), |catalog| {
            let body = catalog.history_json(isin.as_str())?;
            let etag = catalog.derived_tag(b"mds company history\0", |h| h.update(isin.as_str().as_bytes()));
            Some(Tagged { body: body.into_boxed_slice().into(), etag })
        })
    }

    /// Every company that carried `symbol` on `exchange`
    /// (`V1SymbolHistory`), if any did.
    pub fn symbol_history(&self, symbol: &Ticker, exchange: Exchange) -> Option<Tagged> {
        let key = [exchange.as_str(), " ", symbol.as_str()].concat();
        self.lookup(List::Symbols, &key, |catalog| {
            let body = catalog.symbol_history_json(exchange, symbol.as_str())?;
            let etag = catalog.derived_tag(b"mds symbol\0", |h| {
                h.update(exchange.as_str().as_bytes());
                h.update([0]);
                h.update(symbol.as_str().as_bytes());
            });
            Some(Tagged { body: body.into_boxed_slice().into(), etag })
        })
    }

    /// The answer kept under `key` in `list`, else the one `make` makes
    /// from the catalog (kept, when there is one: an unknown ISIN or
    /// symbol is not).
    fn lookup(&self, list: List, key: &str, make: impl FnOnce(&CatalogVersion) -> Option<Tagged>) -> Option<Tagged> {
        match self.kept_page(list, Some(key)) {
            Ok(kept) => Some(kept),
            Err(miss) => {
                let made = make(&miss.catalog)?;
                Some(self.keep_page(miss, made))
            }
        }
    }
}

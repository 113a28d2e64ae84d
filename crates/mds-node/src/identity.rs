//! Identity over time (contract 10.2): a company's identity events (`GET
//! /v1/companies/{isin}/history`) and the companies that carried a symbol
//! (`GET /v1/symbols/{symbol}`), both from the node's catalog, which
//! holds them as built from the store's events (no store read on the
//! request path). Their tags derive from the catalog version and what was
//! asked, as a company detail's do.

use mds_domain::{Exchange, Isin, Ticker};
use sha2::Digest;

use crate::node::Node;
use crate::tagged::Tagged;

impl Node {
    /// The history of the company with `isin` (`V1CompanyHistory`, its
    /// events oldest first, none when the store holds none for it), if the
    /// catalog has the company.
    pub fn company_history(&self, isin: &Isin) -> Option<Tagged> {
        let catalog = self.catalog();
        let history = catalog.history(isin)?;
        let body = serde_json::to_vec(&history).expect("a history serialises");
        let etag = catalog.derived_tag(b"mds company history\0", |h| h.update(isin.as_str().as_bytes()));
        Some(Tagged { body: body.into(), etag })
    }

    /// Every company that carried `symbol` on `exchange`
    /// (`V1SymbolHistory`), if any did.
    pub fn symbol_history(&self, symbol: &Ticker, exchange: Exchange) -> Option<Tagged> {
        let catalog = self.catalog();
        let periods = catalog.symbol_history(exchange, symbol)?;
        let body = serde_json::to_vec(&periods).expect("a symbol history serialises");
        let etag = catalog.derived_tag(b"mds symbol\0", |h| {
            h.update(exchange.as_str().as_bytes());
            h.update([0]);
            h.update(symbol.as_str().as_bytes());
        });
        Some(Tagged { body: body.into(), etag })
    }
}

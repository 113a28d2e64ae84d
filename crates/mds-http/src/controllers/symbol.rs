//! `GET /v1/symbols/{symbol}`: every company that has carried a symbol on
//! an exchange, with when (`V1SymbolHistory`, contract 10.2), from the
//! node's catalog ([`Node::symbol_history`](mds_node::Node::symbol_history)).

use axum::extract::State;
use axum::response::Response;
use mds_domain::{SymbolParams, Ticker};

use super::{PathId, found};
use crate::error::ApiError;
use crate::state::AppState;

/// Handler. A symbol that cannot exist is answered `404` like one never
/// seen.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "Every ISIN that has carried this symbol on the exchange (`nse` by default; on `bse`, the \
security id), each with `from` and `to` (half-open: `to` is the first day it no longer carried it, `null` while \
current) and its name at the end of the period; ordered by `to` descending (`null` first), then `from` \
descending. An ISIN that took the symbol over at an ISIN change starts on that change's date. Periods come from \
the identity history: a symbol no event names (never seen, or carried only by companies loaded without history) \
is `404`.",
    params(crate::components::SymbolPath, SymbolParams),
    responses(
        (status = 200, description = "The symbol's holders over time.", body = mds_domain::SymbolHistory, content_type = "application/json"),
        (status = 400, response = crate::components::SymbolBadRequest),
    )
)]
pub async fn show(State(state): State<AppState>, at: PathId<Ticker, SymbolParams>) -> Result<Response, ApiError> {
    let PathId(symbol, params) = at;
    found::<Ticker>(state.node().symbol_history(&symbol, params.exchange()))
}

#[cfg(test)]
mod tests {
    use crate::controllers::testing::assert_refused;
    use crate::params::parse_query;

    #[test]
    fn exchange_is_nse_or_bse() {
        assert_refused(parse_query::<mds_domain::SymbolParams>, &[("exchange=lse", "exchange")], &["as_of=2024-01-01"]);
        let p = parse_query::<mds_domain::SymbolParams>(None).unwrap();
        assert_eq!(p.exchange(), mds_domain::Exchange::Nse);
    }
}

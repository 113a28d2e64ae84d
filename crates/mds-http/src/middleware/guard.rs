//! The guard of the keyed `/v1` routes, run by the [`envelope`](super::envelope)
//! around them. Before: a key in the query string is refused (`400`), the
//! bearer key is authenticated (`401`), the limits admit the request
//! (`429`). After: a matching `If-None-Match` gets `304`
//! ([`etag::not_modified`]), the quota reservation is counted or released,
//! and the rate-limit headers are added.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};

use super::etag;
use mds_limits::Charge;
use mds_node::KeyContext;

use crate::auth;
use crate::ratelimit::{self, Admission};
use crate::route::Route;
use crate::state::AppState;

/// A request the guard let through, to finish once answered.
pub struct Passed {
    ctx: Arc<KeyContext>,
    admission: Admission,
    if_none_match: Option<HeaderValue>,
}

/// A request the guard refused.
pub struct Refused {
    /// The caller, when its key was valid (for the access log).
    pub key: Option<Arc<KeyContext>>,
    /// The answer (a problem).
    pub response: Response,
}

impl Refused {
    fn new(key: Option<&Arc<KeyContext>>, error: impl IntoResponse) -> Self {
        Refused { key: key.cloned(), response: error.into_response() }
    }
}

/// Guards `req` to `route`, whose requests take `charge` from the quota:
/// `Ok(Some(_))` to serve it and [`Passed::finish`] the answer, `Ok(None)`
/// to serve it as is (a method the route does not answer: the router
/// answers `405`), `Err(_)` to answer with the refusal.
pub async fn admit(
    state: &AppState,
    req: &mut Request,
    route: &Route,
    charge: Charge,
) -> Result<Option<Passed>, Refused> {
    auth::refuse_key_in_query(req.uri()).map_err(|e| Refused::new(None, e))?;
    if !route.answers(req.method()) {
        return Ok(None);
    }
    let ctx = auth::authenticate(state, req.headers()).await.map_err(|e| Refused::new(None, e))?;
    let admission = ratelimit::admit(state, &ctx, charge).await.map_err(|e| Refused::new(Some(&ctx), e))?;
    // Only a `GET` can be answered `304`.
    let if_none_match = req.headers().get(header::IF_NONE_MATCH).filter(|_| req.method() == Method::GET).cloned();
    // For the handlers (`/v1/usage` reports on the calling key).
    req.extensions_mut().insert(ctx.clone());
    Ok(Some(Passed { ctx, admission, if_none_match }))
}

impl Passed {
    /// The caller.
    pub fn key(&self) -> &Arc<KeyContext> {
        &self.ctx
    }

    /// The answer to the request: `304` if the caller holds it, the quota
    /// settled, the rate-limit headers on.
    pub fn finish(self, resp: Response) -> Response {
        let mut resp = match &self.if_none_match {
            Some(inm) => etag::not_modified(inm, resp),
            None => resp,
        };
        self.admission.settle(&self.ctx, &mut resp);
        resp
    }
}

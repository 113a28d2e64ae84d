//! The handlers of the admin API: each reads its path, query and body,
//! runs the operation of [`mds_node::admin`] as the calling token and
//! answers JSON (`GET`s with an `ETag`).

use axum::extract::State;
use axum::response::Response;
use mds_node::Tagged;
use mds_node::admin as ops;
use serde_json::json;

use super::problems::from_admin;
use crate::controllers::tagged;
use crate::error::ApiError;
use crate::state::AppState;

/// `GET /admin/v1/tiers`: every tier, by name.
pub async fn list_tiers(State(state): State<AppState>) -> Result<Response, ApiError> {
    let tiers = ops::tiers(&*state.store).await.map_err(from_admin)?;
    Ok(tagged(Tagged::hashed(list(&tiers).into_bytes())))
}

/// A whole list in the list shape of the public API: `{"data", "has_more":
/// false, "next_cursor": null}`.
fn list<T: serde::Serialize>(items: &[T]) -> String {
    json!({"data": items, "has_more": false, "next_cursor": null}).to_string()
}

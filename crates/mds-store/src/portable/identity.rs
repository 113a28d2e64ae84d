//! Identity over time (contract section 10): the identity events.
//!
//! SEAM: the identity-data work replaces this with the snapshot, change-file
//! and event tables; until then the store holds no events.

use mds_domain::{IdentityEvent, Isin};

use super::Pool;
use crate::StoreResult;

/// Every identity event, grouped by ISIN, each ISIN's oldest first.
pub(crate) async fn events(_pool: &Pool) -> StoreResult<Vec<(Isin, IdentityEvent)>> {
    Ok(Vec::new())
}

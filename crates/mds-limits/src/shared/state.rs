//! One key's leasing on this node ([`KeyLease`]: the lease held, the one
//! ended and not yet settled, the running total of requests counted outside
//! leases), and [`Release`], a released request given back without a
//! network call.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mds_domain::usage::BillingMonth;

use super::decide::Blocked;
use crate::lease::Held;
use crate::limiter::Limits;

/// One key's leasing on this node.
#[derive(Debug, Default)]
pub(super) struct LeaseState {
    /// The last attempt's sequence number.
    pub(super) seq: u64,
    /// The lease admitting now, if any.
    pub(super) held: Option<Held>,
    /// A lease that ended but Redis has not been told how much of it was
    /// spent (the script that would have said so failed).
    pub(super) ended: Option<Held>,
    /// The next lease's size.
    pub(super) size: u64,
    /// Requests counted outside leases this month (running total), and the
    /// total Redis has acknowledged.
    pub(super) adj: i64,
    pub(super) adj_acked: i64,
    pub(super) adj_month: Option<BillingMonth>,
    pub(super) blocked: Option<Blocked>,
    /// The limits of the last lease asked for (what a lease given back was
    /// taken under).
    pub(super) limits: Option<Limits>,
    /// What the last script that succeeded told Redis of this node's
    /// requests not in the store: the month, how many, and when it was
    /// sent (the limiter's monotonic clock). While some are, the record is
    /// touched every half lease TTL, so Redis never takes a live node for
    /// a dead one; once none are, Redis is told so.
    pub(super) told: Option<(BillingMonth, u64, Duration)>,
}

/// One key's lease, and the lock that lets one request at a time renew it.
#[derive(Debug, Default)]
pub(crate) struct KeyLease {
    pub(super) state: Mutex<LeaseState>,
    pub(super) renewing: tokio::sync::Mutex<()>,
}

impl KeyLease {
    /// Locks the state (a poisoned lock is still consistent: nothing under
    /// it is left half-done).
    pub(super) fn lock(&self) -> MutexGuard<'_, LeaseState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A released request (a `304`, a `5xx`) given back: into the lease it
/// came from while that lease admits, else onto the node's running total,
/// which the next script carries to Redis. Never a network call.
#[derive(Debug)]
pub(crate) struct Release {
    pub(super) lease: Arc<KeyLease>,
    /// The lease it was admitted from; `None` when admitted locally.
    pub(super) seq: Option<u64>,
    pub(super) month: BillingMonth,
}

impl Release {
    /// Gives the request back.
    pub(crate) fn apply(self) {
        let mut s = self.lease.lock();
        if let (Some(seq), Some(h)) = (self.seq, s.held.as_mut()) {
            if h.seq == seq && h.mon.used > 0 {
                h.mon.used -= 1;
                return;
            }
        }
        if s.adj_month == Some(self.month) {
            s.adj -= 1;
        }
    }
}

//! The injectable clock limits and billing months read: the one clock of
//! a node, defined in `mds-domain` ([`mds_domain::clock`]) so that the
//! store, below this crate, reads the same one.

pub use mds_domain::clock::{Clock, ManualClock, SystemClock};

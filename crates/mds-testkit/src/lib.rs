//! What the tests of mds share, in one place, compiled only for tests (every
//! crate that uses it has it among its dev-dependencies; nothing ships it).
//!
//! # Layout
//! - [`fixtures`]: valid ISINs built with the `isin` crate, the `i`-th
//!   company of a series.
//! - [`store`]: the storage test suite every backend runs
//!   ([`store_test_suite!`]).
//! - [`pg`]: a PostgreSQL database per test, for the suite and for any
//!   crate's tests that run on PostgreSQL.

pub mod fixtures;
pub mod pg;
pub mod store;

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
//! - [`raw`]: a raw connection to the database under test, for the suite's
//!   functions that change it behind the store's back.
//! - [`next_schema`]: a schema one expand-only version ahead of this
//!   build, to run this build's code on (section 16's upgrades).
//! - [`rng`]: a small deterministic random generator for randomised tests.
//! - [`redis`]: a private `redis-server` to stop, kill and restart.
//! - [`faketime`]: where libfaketime is, for processes under a fake clock.
//! - [`keys`]: a key issued for a test, unaudited ([`keys::issue_key`]).
//! - [`arb`]: proptest strategies of the wire records (an article).

pub mod arb;
pub mod faketime;
pub mod fixtures;
pub mod keys;
pub mod next_schema;
pub mod pg;
pub mod raw;
pub mod redis;
pub mod rng;
pub mod store;

//! The `mds` binary: serves and administers the market-data API.
fn main() {}

//! What a [`PageCache`] holds, measured at the allocator: filled far past
//! its bound with the smallest pages (where bookkeeping outweighs the
//! bytes), the heap it keeps stays within the bound.

use std::alloc::System;

use mds_node::Tagged;
use mds_node::pages::{List, PageCache, PageKey};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live(region: &Region<'_, System>) -> isize {
    let s = region.change();
    s.bytes_allocated as isize - s.bytes_deallocated as isize + s.bytes_reallocated
}

#[test]
fn the_heap_a_full_cache_keeps_stays_within_its_bound() {
    const BOUND: usize = 4 << 20;
    let empty = br#"{"data":[],"next_cursor":null,"has_more":false}"#;
    let region = Region::new(GLOBAL);
    let cache = PageCache::new(BOUND);
    let mut peak = 0;
    for i in 0..400_000 {
        let query = format!("search=zz{i}&limit=50");
        cache.put(PageKey { list: List::Companies, query: &query }, Tagged::hashed(empty.to_vec()));
        if i % 1000 == 0 {
            peak = peak.max(live(&region));
        }
    }
    peak = peak.max(live(&region));
    assert!(cache.len() > 1000, "it keeps pages: {}", cache.len());
    assert!(
        peak <= BOUND as isize,
        "held {peak} bytes at most with a bound of {BOUND} ({:.2}×), {} pages",
        peak as f64 / BOUND as f64,
        cache.len()
    );
}

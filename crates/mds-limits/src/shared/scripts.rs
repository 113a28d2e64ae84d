//! The two Lua scripts a [`SharedLimiter`](super::SharedLimiter) runs in
//! Redis, loaded from `lease.lua` and `seed.lua`: what they take and what
//! they answer (`protocol` sends them).

/// The lease script. `KEYS[1]`: the GCRA TAT (µs); `KEYS[2]`: the month's
/// counter (spent plus leased); `KEYS[3]`: the month's lease records, a hash
/// of node id → `"seq granted_min granted_month adjustments at pending"`
/// (`at`: when, µs; `pending`: the node's requests of the key and month not
/// in the store then), and `_seeded` (the store's `usage` generation the
/// counter was seeded as of).
///
/// `ARGV`: 1 node id, 2 this attempt's sequence number, 3 the lease the node
/// settles (its sequence number, 0 for none), 4 and 5 the per-minute and
/// month tokens it spent of it, 6 the node's running total of requests
/// counted outside leases this month, 7 what to add to the counter when
/// Redis has no record of the node (-1: not known yet), 8 per-minute tokens
/// wanted (0: only settle), 9 limit per minute, 10 monthly quota, 11 nodes
/// sharing the key, 12 now in µs (0: use Redis's `TIME`), 13 the expiry of
/// the counter and records (s), 14 month tokens wanted (granted only with
/// per-minute tokens, and no more of them: a counted request needs one of
/// each, a refused request reserves nothing), 15 the node's requests of
/// the key and month not in the store now, 16 the age (µs) past which
/// another node's record that holds tokens or such requests is reclaimed
/// (0: never), 17 the seed generation argument 7 was counted against, 18
/// with usage mirrors, how long (µs) such a record waits for its node's
/// mirror to be taken over before it is reclaimed all the same (0: no
/// mirrors, no wait; a takeover marks the record, `at` 0, reclaimable).
/// A record a seed kept holds a seventh field, the reservation the seed
/// made for it: its node's next script is answered as if it had no record
/// (-3 until it says what it counted that the seed lacks), and what it
/// says replaces the reservation.
///
/// First, another node's record older than argument 16 that holds tokens
/// or requests not in the store is reclaimed: dropped, its per-minute
/// tokens given back to the GCRA, and, when it held month tokens or
/// requests, the counter dropped too (answer -1, `extra` the records
/// reclaimed): seeded again from the ledger, with every live node adding
/// what it has that the ledger lacks, the counter is again the ledger plus
/// live leases, and the dead node's unflushed requests (lost, not billed)
/// and unspent tokens are out of it.
///
/// Answers `{status, granted_min, granted_month, remaining, reset_us,
/// retry_us, counter, extra}`: status 1 done (`extra` 0); -1 unseeded (the
/// counter is missing, or was dropped by a reclaim: seed it and run again);
/// -2 stale (the record is at or past this attempt, whose sequence number
/// is then in `extra`'s place; nothing changed); -3 no record of this node,
/// and argument 7 is -1 or was counted against another seed than the
/// counter's (then `extra` holds the counter's seed generation, -1 if
/// unknown: run again with what the node counted that the seed could not
/// see; nothing changed). So a script that arrives late, after a reclaim
/// or a reseed, changes nothing: a lease is never given back twice, and
/// what a node adds is counted against the seed it was counted for.
pub const LEASE_LUA: &str = include_str!("lease.lua");

/// Seeds a month's counter that is missing: `KEYS[1]` the counter,
/// `KEYS[2]` the month's lease records. `ARGV`: the count, its expiry (s),
/// the store's `usage` generation the count is as of. Only when the
/// counter is still missing (another node may have seeded it meanwhile):
/// sets it to the count plus, for every node with a record, what that node
/// may still admit or has not flushed (its lease's month tokens and its
/// requests not in the store when it last wrote), each noted in its record
/// as a reservation until the node's next script replaces it with what it
/// counted that the seed lacks; notes the seed's generation. So between a
/// seed and a live node's next script, that node's lease is still
/// reserved: no other node leases its tokens again (the survivors of a
/// crash once admitted up to 1,720 of a quota of 1,500 so).
pub const SEED_LUA: &str = include_str!("seed.lua");

/// Adds segments to a node's usage mirror ([`crate::mirror`]). `KEYS[1]`:
/// the mirror, a hash of `<batch id>\t<key>\t<day>\t<route>` → `"requests
/// not_modified"`, and `_seq` (the last segment added), `_at` (when it was
/// last pushed, µs), `_idle` and `_seen` (how long it has not been pushed,
/// as takers saw it), `_lease` (the node's id in lease records), `_taken`
/// (`"<taker> <µs>"` once taken over), `_done` (the taker gave the store
/// what it took).
///
/// `ARGV`: 1 now in µs (0: Redis's `TIME`), 2 the mirror's expiry (s), 3
/// the node's lease id, 4 how many batch ids follow to drop (the store has
/// them), those ids, then segments: its sequence number, its number of
/// entries, and per entry the field, requests, `304`s. A segment at or
/// below `_seq` was added before and is skipped, so a push sent again adds
/// nothing twice.
///
/// Answers `{1}`, or, when the mirror was taken over, `{-1, field, value,
/// …}`: what was taken (nothing added).
pub const MIRROR_LUA: &str = include_str!("mirror.lua");

/// Takes a node's usage mirror over. `KEYS[1]`: the mirror. `ARGV`: 1 now
/// (µs, 0: `TIME`), 2 the taker's id, 3 how long (µs) it must have gone
/// unpushed, 4 the most one look adds to that (µs; so a Redis that was
/// itself stopped does not make every mirror look stale at once), 5 mode
/// (0: only if stale; 1: the node's own restart, at once), 6 after how
/// long (µs) a takeover not marked done may be taken again (its taker
/// died), 7 the expiry (s) of the taken mirror.
///
/// Answers `{3}` (no such mirror), `{0}` (nothing to take), `{1, lease id, field, value, …}` (taken
/// now), or in mode 1 `{2, lease id, field, value, …}` (taken before by
/// another node: what it took).
pub const TAKE_LUA: &str = include_str!("take.lua");

/// After a takeover was given to the store: `KEYS[1]` a month's counter,
/// `KEYS[2]` its lease records; `ARGV` 1 the taken node's lease id, 2 the
/// store's `usage` generation after the apply. The node's record, if any,
/// is made reclaimable at once (the next script reclaims it and seeds the
/// counter again from the ledger, which now holds the taken counts);
/// without one, a counter seeded before the apply is dropped (seeded again).
pub const FORGET_LUA: &str = include_str!("forget.lua");

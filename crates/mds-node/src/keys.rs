//! The node's key cache (contract section 2.1): the keys this node has
//! seen recently, each with its resolved [`KeyContext`], and the prefixes
//! it recently found to have no active key, both bounded; the store stays
//! the source of truth.
//!
//! - A key the cache does not hold is looked up in the store (one indexed
//!   read) before it is refused, so a key works on every node the moment it
//!   is issued. Lookups are budgeted per node ([`Budget`]): a flood of
//!   made-up well-formed keys costs the store at most the budget's reads a
//!   second, each made-up prefix is then remembered as absent, and callers
//!   whose keys are held never wait on the store.
//! - Changes reach the cache from the store's change log ([`Node::refresh_keys`]
//!   reads "what changed since the generation applied"): the held keys a
//!   change touched are read again, tiers and accounts (few) are re-read
//!   whole when one of them changed, and nothing else is read, so a change
//!   costs what changed. A node behind the pruned log re-reads what it
//!   holds.
//! - No stale entry outlives a change: every entry is read at a known
//!   `auth` generation, and one read before the generation the cache has
//!   applied is served but not kept (a change between the two might be
//!   missing from it).
//!
//! The stored SHA-256 is compared in constant time ([`mds_domain::KeyHash`]).
//! A key's expiry is in its context and checked on every request by the
//! node ([`crate::node::Node::authenticate`]), so an expired key is refused
//! from the instant it expires, on every node, with nothing to reload.
//!
//! [`Node::refresh_keys`]: crate::node::Node::refresh_keys

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use http::HeaderValue;
use mds_domain::account::enforced_tier;
use mds_domain::{AccountName, ApiKey, Environment, KeyHash, KeyPrefix, Tier, TierName};
use mds_store::{ActiveKey, AuthDirectory, KeyLookup};

/// Who is calling and within which limits: what authentication yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyContext {
    /// The key's public prefix.
    pub prefix: KeyPrefix,
    /// Owning account.
    pub account: AccountName,
    /// `live` or `test`.
    pub environment: Environment,
    /// The tier the key was issued on.
    pub plan_tier: TierName,
    /// The tier enforced now: the plan tier, or `evaluation` when the
    /// account is not entitled.
    pub tier: Tier,
    /// Whether the account's plan covers API access.
    pub entitled: bool,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// When the key stops working, if it expires: from then on it is
    /// refused as if revoked.
    pub expires_at: Option<DateTime<Utc>>,
    /// The `RateLimit-Policy` header value of the enforced tier, made once.
    pub rate_limit_policy: HeaderValue,
    /// The `X-RateLimit-Limit` header value of the enforced tier, made once.
    pub rate_limit_limit: HeaderValue,
}

impl KeyContext {
    /// The context of the key `record` (its prefix, account, environment,
    /// plan tier, creation) under the entitlement and plan tier given, the
    /// plan tier `None` when it is gone.
    fn resolve(base: &KeyContext, entitled: bool, plan: Option<&Tier>, evaluation: &Tier) -> KeyContext {
        let tier = enforced_tier(entitled, plan, evaluation).clone();
        KeyContext {
            prefix: base.prefix.clone(),
            account: base.account.clone(),
            environment: base.environment,
            plan_tier: base.plan_tier.clone(),
            entitled,
            created_at: base.created_at,
            expires_at: base.expires_at,
            rate_limit_policy: HeaderValue::from_str(&format!(
                "\"minute\";q={};w=60, \"month\";q={}",
                tier.rate_limit_per_minute, tier.monthly_quota
            ))
            .expect("ASCII"),
            rate_limit_limit: HeaderValue::from(tier.rate_limit_per_minute),
            tier,
        }
    }

    /// The context of an active key as the store resolved it.
    fn of_active(k: &ActiveKey, evaluation: &Tier) -> KeyContext {
        let r = &k.record;
        let base = KeyContext {
            prefix: r.prefix.clone(),
            account: r.account.clone(),
            environment: r.environment,
            plan_tier: r.tier.clone(),
            tier: evaluation.clone(),
            entitled: k.entitled,
            created_at: r.created_at,
            expires_at: r.expires_at,
            rate_limit_policy: HeaderValue::from_static(""),
            rate_limit_limit: HeaderValue::from_static(""),
        };
        KeyContext::resolve(&base, k.entitled, Some(&k.plan_tier), evaluation)
    }
}

/// Bounds and budget of a node's key cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyCacheConfig {
    /// The most keys held (the least recently used go first, roughly).
    pub capacity: usize,
    /// The most prefixes remembered as having no active key.
    pub absent_capacity: usize,
    /// How long a prefix is remembered as absent (a key issued with it
    /// meanwhile is learnt from the change log sooner).
    pub absent_ttl: Duration,
    /// Store lookups a second this node may make for keys it does not
    /// hold (also the burst); beyond it such keys get `503`.
    pub lookups_per_second: u32,
}

impl Default for KeyCacheConfig {
    fn default() -> Self {
        KeyCacheConfig {
            capacity: 100_000,
            absent_capacity: 100_000,
            absent_ttl: Duration::from_secs(60),
            lookups_per_second: 500,
        }
    }
}

/// A map of at most about `capacity` entries that forgets the least
/// recently used half at a time: entries live in a young and an old half;
/// when the young one is full it becomes the old one (the previous old one
/// is dropped), and an entry found in the old half moves back to the young.
struct Bounded<K, V> {
    young: HashMap<K, V>,
    old: HashMap<K, V>,
    half: usize,
}

impl<K: Hash + Eq, V> Bounded<K, V> {
    fn new(capacity: usize) -> Self {
        Bounded { young: HashMap::new(), old: HashMap::new(), half: (capacity / 2).max(1) }
    }

    fn get<Q: Hash + Eq + ?Sized>(&self, k: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.young.get(k).or_else(|| self.old.get(k))
    }

    fn in_old<Q: Hash + Eq + ?Sized>(&self, k: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
    {
        !self.young.contains_key(k) && self.old.contains_key(k)
    }

    fn promote<Q: Hash + Eq + ?Sized>(&mut self, k: &Q)
    where
        K: std::borrow::Borrow<Q>,
    {
        if let Some((k, v)) = self.old.remove_entry(k) {
            self.insert(k, v);
        }
    }

    fn insert(&mut self, k: K, v: V) {
        self.old.remove(&k);
        if self.young.len() >= self.half && !self.young.contains_key(&k) {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(k, v);
    }

    fn remove<Q: Hash + Eq + ?Sized>(&mut self, k: &Q)
    where
        K: std::borrow::Borrow<Q>,
    {
        self.young.remove(k);
        self.old.remove(k);
    }

    fn clear(&mut self) {
        self.young.clear();
        self.old.clear();
    }

    fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    fn keys(&self) -> impl Iterator<Item = &K> {
        self.young.keys().chain(self.old.keys())
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.young.values_mut().chain(self.old.values_mut())
    }

    fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        self.young.retain(|_, v| keep(v));
        self.old.retain(|_, v| keep(v));
    }
}

/// Tiers and accounts as the cache resolves keys with them.
#[derive(Default)]
struct Directory {
    tiers: HashMap<String, Tier>,
    entitled: HashMap<String, bool>,
    evaluation: Option<Tier>,
}

impl Directory {
    fn new(d: &AuthDirectory) -> Self {
        let tiers: HashMap<String, Tier> = d.tiers.iter().map(|t| (t.name.as_str().to_owned(), t.clone())).collect();
        Directory {
            evaluation: tiers.get(TierName::evaluation().as_str()).cloned(),
            entitled: d.accounts.iter().map(|a| (a.name.as_str().to_owned(), a.entitled)).collect(),
            tiers,
        }
    }

    /// The evaluation tier: the store's, or the shipped default if the
    /// store has lost its own.
    fn evaluation(&self) -> Tier {
        self.evaluation.clone().unwrap_or_else(Tier::default_evaluation)
    }

    /// `ctx` resolved again under this directory.
    fn resolve(&self, ctx: &KeyContext) -> KeyContext {
        let entitled = self.entitled.get(ctx.account.as_str()).copied().unwrap_or(false);
        KeyContext::resolve(ctx, entitled, self.tiers.get(ctx.plan_tier.as_str()), &self.evaluation())
    }
}

struct Entry {
    hash: KeyHash,
    context: Arc<KeyContext>,
    /// The `auth` generation of the store read it came from: it reflects
    /// every change up to there, so a change log read up to that
    /// generation or before has nothing to drop of it.
    seen: i64,
}

struct Inner {
    /// The `auth` generation whose changes the cache reflects; `None`
    /// before the first load.
    applied: Option<i64>,
    directory: Directory,
    keys: Bounded<String, Entry>,
    /// Prefixes with no active key, and when that was read.
    absent: Bounded<String, Instant>,
}

/// What the cache alone says of a key.
#[derive(Debug, Clone)]
pub enum Cached {
    /// Held, and the key matches: its context.
    Found(Arc<KeyContext>),
    /// Refused without a lookup: its prefix is held for another key, or
    /// every prefix it may have is known to have no active key.
    Refused,
    /// Not known: to be looked up in the store.
    Unknown,
}

/// Store lookups a node may make for keys it does not hold: a token bucket
/// of `rate` a second, holding at most `rate`.
pub struct Budget {
    rate: f64,
    state: Mutex<(f64, Instant)>,
}

impl Budget {
    fn new(rate: u32) -> Self {
        let rate = f64::from(rate.max(1));
        Budget { rate, state: Mutex::new((rate, Instant::now())) }
    }

    /// Takes one lookup from the budget; false when it is spent.
    fn take(&self) -> bool {
        let mut s = self.state.lock().expect("not poisoned");
        let now = Instant::now();
        s.0 = (s.0 + now.duration_since(s.1).as_secs_f64() * self.rate).min(self.rate);
        s.1 = now;
        if s.0 >= 1.0 {
            s.0 -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The keys a node has seen, the prefixes it found absent, and the tiers
/// and accounts their limits come from.
pub struct KeyCache {
    config: KeyCacheConfig,
    inner: RwLock<Inner>,
    budget: Budget,
}

/// A change log read, to apply to the cache ([`KeyCache::apply`]).
pub struct Refresh {
    /// The generation the changes were read up to.
    pub generation: i64,
    /// Whether the changes are all of them since the generation applied
    /// (else every held key was read again and the rest is dropped).
    pub complete: bool,
    /// The prefixes the changes touched.
    pub changed: Vec<String>,
    /// Tiers and accounts, when one of them changed.
    pub directory: Option<AuthDirectory>,
    /// The held keys among the changed ones (or all held ones), asked
    /// again ...
    pub reread_asked: Vec<String>,
    /// ... and what was found of them.
    pub reread: KeyLookup,
}

impl KeyCache {
    /// An empty cache, not loaded yet.
    pub fn new(config: KeyCacheConfig) -> Self {
        KeyCache {
            inner: RwLock::new(Inner {
                applied: None,
                directory: Directory::default(),
                keys: Bounded::new(config.capacity),
                absent: Bounded::new(config.absent_capacity),
            }),
            budget: Budget::new(config.lookups_per_second),
            config,
        }
    }

    /// The `auth` generation the cache reflects (`None` before the first
    /// load).
    pub fn applied(&self) -> Option<i64> {
        self.inner.read().expect("not poisoned").applied
    }

    /// How many keys are held.
    pub fn len(&self) -> usize {
        self.inner.read().expect("not poisoned").keys.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The prefixes of the held keys.
    pub fn held(&self) -> Vec<String> {
        self.inner.read().expect("not poisoned").keys.keys().cloned().collect()
    }

    /// What the cache says of `key`, without the store: looked up by its
    /// prefix (the 17-character one of keys issued now, else the
    /// 12-character one of keys issued before), then its hash compared.
    pub fn get(&self, key: &ApiKey) -> Cached {
        let hash = key.hash();
        let candidates = key.prefix_candidates();
        let mut refused = 0;
        let promote = {
            let inner = self.inner.read().expect("not poisoned");
            // The clock is read only for a prefix not held: a found key,
            // every request's case, reads none.
            let mut now = None;
            let mut promote = None;
            for prefix in candidates {
                match inner.keys.get(prefix) {
                    Some(e) if e.hash == hash && e.context.environment == key.environment() => {
                        if !inner.keys.in_old(prefix) {
                            return Cached::Found(e.context.clone());
                        }
                        promote = Some((prefix, e.context.clone()));
                        break;
                    }
                    // Held for another key: not this one's prefix.
                    Some(_) => refused += 1,
                    None => {
                        let now = *now.get_or_insert_with(Instant::now);
                        if inner.absent.get(prefix).is_some_and(|at| now.duration_since(*at) < self.config.absent_ttl) {
                            refused += 1;
                        }
                    }
                }
            }
            promote
        };
        match promote {
            Some((prefix, context)) => {
                self.inner.write().expect("not poisoned").keys.promote(prefix);
                Cached::Found(context)
            }
            None if refused == candidates.len() => Cached::Refused,
            None => Cached::Unknown,
        }
    }

    /// Takes a store lookup from the node's budget; false when it is spent.
    pub fn take_lookup(&self) -> bool {
        self.budget.take()
    }

    /// Keeps what a store lookup of `asked` found (if it was read at or
    /// after the generation applied: an older read may miss a change) and
    /// returns the context of `key` if it is an active key.
    pub fn learn(&self, key: &ApiKey, asked: &[&str], found: &KeyLookup) -> Option<Arc<KeyContext>> {
        let hash = key.hash();
        let mut inner = self.inner.write().expect("not poisoned");
        let evaluation = inner.directory.evaluation();
        let keep = inner.applied.is_some_and(|a| found.generation >= a);
        let mut out = None;
        for k in &found.keys {
            let context = Arc::new(KeyContext::of_active(k, &evaluation));
            if k.record.hash == hash && k.record.environment == key.environment() {
                out = Some(context.clone());
            }
            if keep {
                let entry = Entry { hash: k.record.hash, context, seen: found.generation };
                inner.keys.insert(k.record.prefix.as_str().to_owned(), entry);
            }
        }
        if keep {
            let now = Instant::now();
            for p in asked {
                if !found.keys.iter().any(|k| k.record.prefix.as_str() == *p) {
                    inner.absent.insert((*p).to_owned(), now);
                }
            }
        }
        out
    }

    /// Loads the directory (tiers and accounts) at first, holding no key.
    pub fn load(&self, directory: &AuthDirectory) {
        let mut inner = self.inner.write().expect("not poisoned");
        inner.directory = Directory::new(directory);
        inner.keys.clear();
        inner.absent.clear();
        inner.applied = Some(directory.generation);
    }

    /// Applies a change log read: drops what the changes touched (all of
    /// it when they are not complete), keeps what was read again, and
    /// resolves every held key again when the directory changed.
    ///
    /// A key learned from a read at or after `r.generation` (a request's
    /// lookup while the log was being read) already reflects those
    /// changes and stays; a read older than the generation applied (two
    /// refreshes crossing) changes nothing.
    pub fn apply(&self, r: &Refresh) {
        let mut inner = self.inner.write().expect("not poisoned");
        if inner.applied.is_some_and(|a| a > r.generation) {
            return;
        }
        let older = |e: &Entry| e.seen < r.generation;
        if r.complete {
            for p in &r.changed {
                if inner.keys.get(p.as_str()).is_some_and(older) {
                    inner.keys.remove(p.as_str());
                }
                inner.absent.remove(p.as_str());
            }
        } else {
            inner.keys.retain(|e| !older(e));
            inner.absent.clear();
        }
        if let Some(d) = &r.directory {
            inner.directory = Directory::new(d);
            let Inner { directory, keys, .. } = &mut *inner;
            for e in keys.values_mut() {
                e.context = Arc::new(directory.resolve(&e.context));
            }
        }
        let evaluation = inner.directory.evaluation();
        for k in &r.reread.keys {
            let context = Arc::new(KeyContext::of_active(k, &evaluation));
            let entry = Entry { hash: k.record.hash, context, seen: r.reread.generation };
            inner.keys.insert(k.record.prefix.as_str().to_owned(), entry);
        }
        // A held key read again and not found (revoked): known absent, so
        // its next request costs no lookup.
        let now = Instant::now();
        for p in &r.reread_asked {
            if !r.reread.keys.iter().any(|k| k.record.prefix.as_str() == p) {
                inner.absent.insert(p.clone(), now);
            }
        }
        inner.applied = Some(r.generation);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_forgets_the_least_recently_used_half() {
        let mut b: Bounded<u32, ()> = Bounded::new(4);
        for k in 0..4 {
            b.insert(k, ());
        }
        assert_eq!(b.len(), 4);
        // 0 and 1 are the old half; using 0 brings it back, and the half it
        // joins is full, so 2 and 3 become the old half and 1 goes.
        assert!(b.in_old(&0) && b.in_old(&1) && !b.in_old(&2));
        b.promote(&0);
        assert!(b.get(&1).is_none(), "the least recently used is gone");
        assert!([0, 2, 3].iter().all(|k| b.get(k).is_some()));
        assert_eq!(b.len(), 3);
        for k in 10..100 {
            b.insert(k, ());
            assert!(b.len() <= 4, "bounded");
        }
    }

    fn active(key: &ApiKey) -> ActiveKey {
        ActiveKey {
            record: mds_store::KeyRecord {
                prefix: key.prefix(),
                hash: key.hash(),
                account: AccountName::parse("acme").unwrap(),
                tier: TierName::parse("pro").unwrap(),
                environment: key.environment(),
                created_at: Utc::now(),
                revoked_at: None,
                expires_at: None,
            },
            entitled: true,
            plan_tier: Tier { name: TierName::parse("pro").unwrap(), rate_limit_per_minute: 600, monthly_quota: 1 },
        }
    }

    fn loaded_at(generation: i64) -> KeyCache {
        let cache = KeyCache::new(KeyCacheConfig::default());
        cache.load(&AuthDirectory { generation, ..AuthDirectory::default() });
        cache
    }

    #[test]
    fn a_lookup_read_before_the_applied_generation_is_served_not_kept() {
        let key = ApiKey::generate(Environment::Live);
        let cache = loaded_at(10);
        let asked = key.prefix_candidates();
        let stale = KeyLookup { generation: 9, keys: vec![active(&key)] };
        assert!(cache.learn(&key, &asked, &stale).is_some(), "served");
        assert!(matches!(cache.get(&key), Cached::Unknown), "not kept");
        let fresh = KeyLookup { generation: 10, keys: vec![active(&key)] };
        let ctx = cache.learn(&key, &asked, &fresh).expect("served");
        assert_eq!(ctx.tier.rate_limit_per_minute, 600);
        assert!(matches!(cache.get(&key), Cached::Found(_)), "kept");
        // Nothing found, read before the applied generation: not remembered
        // as absent either.
        let other = ApiKey::generate(Environment::Live);
        let none = KeyLookup { generation: 9, keys: vec![] };
        assert!(cache.learn(&other, &other.prefix_candidates(), &none).is_none());
        assert!(matches!(cache.get(&other), Cached::Unknown));
        let none = KeyLookup { generation: 11, keys: vec![] };
        assert!(cache.learn(&other, &other.prefix_candidates(), &none).is_none());
        assert!(matches!(cache.get(&other), Cached::Refused), "remembered as absent");
    }

    /// The race `tests/suite/http_keys.rs` once lost (a held key gone, so one
    /// fewer read again): a request learns a key while the reload task
    /// reads the change log up to the key's issue, then the task applies.
    #[test]
    fn a_key_learned_while_the_log_was_read_stays() {
        let [a, b] = [(); 2].map(|_| ApiKey::generate(Environment::Live));
        let cache = loaded_at(1);
        // Both issued (generations 2 and 3); the task reads the log up to
        // 3 while `a` is held and `b` not yet; then a request learns `b`.
        cache.learn(&a, &a.prefix_candidates(), &KeyLookup { generation: 3, keys: vec![active(&a)] });
        let read = |generation: i64, complete: bool, changed: Vec<String>| Refresh {
            generation,
            complete,
            changed,
            directory: None,
            reread_asked: vec![],
            reread: KeyLookup { generation, keys: vec![] },
        };
        let changed = vec![a.prefix_str().to_owned(), b.prefix_str().to_owned()];
        let to_3 = read(3, true, changed);
        cache.learn(&b, &b.prefix_candidates(), &KeyLookup { generation: 3, keys: vec![active(&b)] });
        cache.apply(&to_3);
        assert!(matches!(cache.get(&a), Cached::Found(_)), "learned at 3: reflects the changes to 3");
        assert!(matches!(cache.get(&b), Cached::Found(_)), "learned during the read: kept");
        // Behind the log at 5: what was learned before 5 goes.
        cache.apply(&read(5, false, vec![]));
        assert_eq!(cache.len(), 0);
        cache.learn(&a, &a.prefix_candidates(), &KeyLookup { generation: 6, keys: vec![active(&a)] });
        // A slower refresh read up to 4 applies after: it changes nothing.
        cache.apply(&read(4, false, vec![]));
        assert_eq!(cache.applied(), Some(5));
        assert!(matches!(cache.get(&a), Cached::Found(_)));
    }

    #[test]
    fn applying_changes_drops_what_they_touched_or_everything_when_incomplete() {
        let [a, b, c] = [(); 3].map(|_| ApiKey::generate(Environment::Live));
        let cache = loaded_at(1);
        for k in [&a, &b] {
            cache.learn(k, &k.prefix_candidates(), &KeyLookup { generation: 1, keys: vec![active(k)] });
        }
        cache.learn(&c, &c.prefix_candidates(), &KeyLookup { generation: 1, keys: vec![] });
        assert!(matches!(cache.get(&c), Cached::Refused));
        // `a` revoked (read again: gone), `c` issued (no longer absent).
        cache.apply(&Refresh {
            generation: 3,
            complete: true,
            changed: vec![a.prefix_str().to_owned(), c.prefix_str().to_owned()],
            directory: None,
            reread_asked: vec![a.prefix_str().to_owned()],
            reread: KeyLookup { generation: 3, keys: vec![] },
        });
        assert_eq!(cache.applied(), Some(3));
        assert!(matches!(cache.get(&a), Cached::Refused), "read again, gone: known absent");
        assert!(matches!(cache.get(&b), Cached::Found(_)));
        assert!(matches!(cache.get(&c), Cached::Unknown));
        // Behind the log: only what was read again is held.
        cache.apply(&Refresh {
            generation: 9,
            complete: false,
            changed: vec![],
            directory: Some(AuthDirectory { generation: 9, ..AuthDirectory::default() }),
            reread_asked: vec![],
            reread: KeyLookup { generation: 9, keys: vec![] },
        });
        assert!(cache.is_empty());
    }

    #[test]
    fn budget_allows_its_rate_then_refuses() {
        let b = Budget::new(3);
        assert!((0..3).all(|_| b.take()));
        assert!(!b.take());
    }
}

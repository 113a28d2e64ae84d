//! Keys at scale (contract section 2.1) through the real server, on the
//! backend `MDS_TEST_BACKEND` names: a key works the moment it is issued,
//! with no reload of any kind; keys the node does not hold cost at most the
//! node's lookup budget of store reads (a flood of made-up keys gets `503`
//! beyond it, never a store read per request), and a made-up key asked
//! again is refused from the negative cache; a change reads again only the
//! held keys it touched; a node behind the pruned change log reads again
//! what it holds; two nodes on one store follow the same log.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use common::{Node, TestDatabase, assert_problem, new_key};
use mds_domain::{AccountName, Actor, ApiKey, Environment};
use mds_http::HttpConfig;
use mds_limits::ManualClock;
use mds_node::admin as ops;
use mds_store::Store;

/// What these tests ask of a node.
impl Node {
    async fn status(&self, key: &str) -> u16 {
        self.get(key).await.status().as_u16()
    }

    async fn get(&self, key: &str) -> reqwest::Response {
        client().get(format!("{}/v1/companies?limit=1", self.base)).bearer_auth(key).send().await.unwrap()
    }

    /// The value of a counter of `/metrics`.
    async fn metric(&self, name: &str) -> u64 {
        let text = client().get(format!("{}/metrics", self.base)).send().await.unwrap().text().await.unwrap();
        common::series(&text, name)
    }

    /// Waits until `key` answers `status`, at most 1 s (the contract's
    /// bound for a change to reach every node).
    async fn within_a_second(&self, key: &str, status: u16) {
        let t0 = Instant::now();
        while self.status(key).await != status {
            assert!(t0.elapsed() < Duration::from_secs(1), "not {status} within 1 s");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A new live key of `acme` on `pro`.
async fn pro_key(store: &dyn Store) -> String {
    new_key(store, "acme", "pro", Environment::Live).await
}

/// Two live keys of `acme` on `pro`, each served once by `node` (which
/// then holds both).
async fn two_held_keys(node: &Node, store: &dyn Store) -> (String, String) {
    let (a, b) = (pro_key(store).await, pro_key(store).await);
    assert_eq!((node.status(&a).await, node.status(&b).await), (200, 200));
    (a, b)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Settings following the store every `reload` (the first load is at
/// start), with a budget of `lookups` key lookups a second.
fn config(reload: Duration, lookups: u32) -> HttpConfig {
    let mut c = common::reloading_every(reload);
    c.node.key_cache.lookups_per_second = lookups;
    c
}

/// A node with `config(reload, lookups)` on a [`store`] of its own.
async fn node_on_a_new_store(reload: Duration, lookups: u32) -> (Arc<dyn Store>, TestDatabase, Node) {
    let (store, db) = store().await;
    let node = Node::start(store.clone(), config(reload, lookups)).await;
    (store, db, node)
}

/// A store of its own with the demo companies and account `acme`.
async fn store() -> (Arc<dyn Store>, TestDatabase) {
    let (url, db) = TestDatabase::create().await;
    let store = mds_store::open(&url).await.expect("open store");
    store.migrate().await.expect("migrate");
    store.upsert_companies(&mds_import::demo_companies()).await.unwrap();
    store.create_account(&AccountName::parse("acme").unwrap(), Utc::now()).await.unwrap();
    (store, db)
}

fn prefix(key: &str) -> mds_domain::KeyPrefix {
    ApiKey::parse(key).unwrap().prefix()
}

/// A well-formed key no one issued.
fn made_up() -> String {
    ApiKey::generate(Environment::Live).expose_secret().to_owned()
}

#[tokio::test]
async fn a_new_key_works_at_once_and_a_made_up_one_is_asked_once() {
    // No reload after the first load: whatever the node learns, it learns
    // from the request.
    let (store, _db, node) = node_on_a_new_store(Duration::from_secs(3600), 100).await;
    let key = pro_key(&*store).await;
    assert_eq!(node.status(&key).await, 200, "a key works the moment it is issued");
    assert_eq!(node.metric("mds_key_lookups_total").await, 1);
    for _ in 0..5 {
        assert_eq!(node.status(&key).await, 200);
    }
    assert_eq!(node.metric("mds_key_lookups_total").await, 1, "then it is held");
    assert_eq!(node.metric("mds_key_cache_hits_total").await, 5);

    let nobody = made_up();
    let r = node.get(&nobody).await;
    assert_problem(r, 401, "invalid_api_key").await;
    for _ in 0..20 {
        assert_eq!(node.status(&nobody).await, 401);
    }
    assert_eq!(node.metric("mds_key_lookups_total").await, 2, "a made-up key is asked of the store once");
    assert_eq!(node.metric("mds_key_negative_hits_total").await, 20);
    node.stop().await;
}

#[tokio::test]
async fn a_flood_of_made_up_keys_costs_the_store_at_most_the_lookup_budget() {
    let budget = 20;
    let (store, _db, node) = node_on_a_new_store(Duration::from_millis(100), budget).await;
    let key = pro_key(&*store).await;
    assert_eq!(node.status(&key).await, 200);
    let before = node.metric("mds_key_lookups_total").await;

    let t0 = Instant::now();
    let mut flood = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let base = node.base.clone();
        flood.spawn(async move {
            let c = client();
            let (mut refused, mut unavailable) = (0u32, 0u32);
            for _ in 0..40 {
                let r = c.get(format!("{base}/v1/companies?limit=1")).bearer_auth(made_up()).send().await.unwrap();
                match r.status().as_u16() {
                    401 => refused += 1,
                    503 => {
                        assert_eq!(r.headers()["retry-after"], "1");
                        let b: serde_json::Value = r.json().await.unwrap();
                        assert_eq!(b["code"], "unavailable");
                        unavailable += 1;
                    }
                    s => panic!("a made-up key got {s}"),
                }
            }
            (refused, unavailable)
        });
    }
    // Meanwhile the held key is served as ever.
    let mut held_ok = 0;
    while !flood.is_empty() {
        if node.status(&key).await == 200 {
            held_ok += 1;
        }
        if let Some(done) = flood.try_join_next() {
            done.unwrap();
        }
        tokio::task::yield_now().await;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let lookups = node.metric("mds_key_lookups_total").await - before;
    let throttled = node.metric("mds_key_lookups_throttled_total").await;
    let bound = f64::from(budget) * (1.0 + elapsed) + 1.0;
    assert!((lookups as f64) <= bound, "{lookups} store lookups in {elapsed:.2} s; the budget allows {bound:.0}");
    assert!(throttled > 0, "320 made-up keys overran a budget of {budget}/s in {elapsed:.2} s");
    assert_eq!(lookups + throttled, 320, "every made-up key was either looked up or throttled");
    assert!(held_ok > 0, "the held key was served during the flood");
    assert_eq!(node.status(&key).await, 200);
    node.stop().await;
}

#[tokio::test]
async fn a_change_reads_again_only_the_held_keys_it_touched() {
    // No reload but the ones this test makes: a reload task running beside
    // them could count its rereads after the count the test reads (it did
    // on a loaded machine, when this test waited 300 ms for the task).
    let (store, _db, node) = node_on_a_new_store(Duration::from_secs(3600), 100).await;
    let refresh = async || node.state.node().refresh_keys().await.unwrap();
    let (a, b) = two_held_keys(&node, &*store).await;
    // Up to date (the reload task's first run may have been after the
    // keys were made, or not).
    refresh().await;
    let rereads = node.metric("mds_key_rereads_total").await;

    // Keys it does not hold: nothing to read.
    for _ in 0..3 {
        pro_key(&*store).await;
    }
    assert!(refresh().await, "three creations applied");
    assert_eq!(node.metric("mds_key_rereads_total").await, rereads, "keys not held cost no read");

    store.revoke_key(&prefix(&a), Utc::now()).await.unwrap();
    assert!(refresh().await);
    assert_eq!(node.metric("mds_key_rereads_total").await, rereads + 1, "the revoked key only");
    assert_eq!(node.status(&a).await, 401);
    assert_eq!(node.status(&b).await, 200);
    node.stop().await;
}

#[tokio::test]
async fn an_entitlement_change_reaches_a_held_key_s_limits_within_a_second() {
    let (store, _db, node) = node_on_a_new_store(Duration::from_millis(50), 100).await;
    let (_, b) = two_held_keys(&node, &*store).await;
    let limit = |r: &reqwest::Response| r.headers()["x-ratelimit-limit"].to_str().unwrap().to_owned();
    let pro = limit(&node.get(&b).await);
    store.set_account_entitled(&AccountName::parse("acme").unwrap(), false, Utc::now()).await.unwrap();
    let t0 = Instant::now();
    while limit(&node.get(&b).await) == pro {
        assert!(t0.elapsed() < Duration::from_secs(1), "the evaluation tier not enforced within 1 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let evaluation = store.tiers().await.unwrap().into_iter().find(|t| t.name.as_str() == "evaluation").unwrap();
    assert_eq!(limit(&node.get(&b).await), evaluation.rate_limit_per_minute.to_string());
    node.stop().await;
}

#[tokio::test]
async fn a_node_behind_the_pruned_change_log_reads_again_what_it_holds() {
    // No reload but the ones this test makes.
    let (store, _db, node) = node_on_a_new_store(Duration::from_secs(3600), 100).await;
    let (a, b) = two_held_keys(&node, &*store).await;
    // Up to date (the reload task's first run may have been after the
    // keys were made, or not).
    node.state.node().refresh_keys().await.unwrap();

    store.revoke_key(&prefix(&a), Utc::now()).await.unwrap();
    let now = store.generations().await.unwrap().auth;
    assert!(store.prune_auth_changes(now).await.unwrap() > 0);
    assert_eq!(node.status(&a).await, 200, "held, and the node has not looked since");
    let rereads = node.metric("mds_key_rereads_total").await;
    assert!(node.state.node().refresh_keys().await.unwrap());
    assert_eq!(node.metric("mds_key_rereads_total").await, rereads + 2, "every held key");
    assert_eq!(node.status(&a).await, 401, "the revocation the log no longer says");
    let hits = node.metric("mds_key_cache_hits_total").await;
    assert_eq!(node.status(&b).await, 200);
    assert_eq!(node.metric("mds_key_cache_hits_total").await, hits + 1, "still held");
    node.stop().await;
}

#[tokio::test]
async fn two_nodes_on_one_store_follow_the_same_change_log() {
    let (store, _db) = store().await;
    let cfg = || config(Duration::from_millis(100), 100);
    let (n1, n2) = (Node::start(store.clone(), cfg()).await, Node::start(store.clone(), cfg()).await);
    let key = pro_key(&*store).await;
    assert_eq!((n1.status(&key).await, n2.status(&key).await), (200, 200), "at once on both");
    store.revoke_key(&prefix(&key), Utc::now()).await.unwrap();
    let t0 = Instant::now();
    n1.within_a_second(&key, 401).await;
    n2.within_a_second(&key, 401).await;
    assert!(t0.elapsed() < Duration::from_secs(1), "refused on both within 1 s");
    n1.stop().await;
    n2.stop().await;
}

#[tokio::test]
async fn an_expired_key_is_refused_from_the_instant_it_expires() {
    let (store, _db) = store().await;
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-11-20T10:00:00Z").unwrap().to_utc();
    let clock = Arc::new(ManualClock::new(t0));
    let mut cfg = config(Duration::from_secs(3600), 100);
    cfg.node.clock = clock.clone();
    let node = Node::start(store.clone(), cfg).await;
    let acme = AccountName::parse("acme").unwrap();
    let pro = mds_domain::TierName::parse("pro").unwrap();
    let expires = t0 + chrono::Duration::seconds(60);
    let (key, _) = mds_node::admin::Audited { store: &*store, actor: &Actor::Cli, now: t0 }
        .issue_key(&acme, &pro, Environment::Live, Some(expires))
        .await
        .unwrap();
    let key = key.expose_secret().to_owned();
    assert_eq!(node.status(&key).await, 200);
    clock.set(expires - chrono::Duration::milliseconds(1));
    assert_eq!(node.status(&key).await, 200, "held until its last instant");
    // No reload: the node checks the expiry it holds on every request.
    clock.set(expires);
    assert_problem(node.get(&key).await, 401, "invalid_api_key").await;
    let past = mds_node::admin::Audited { store: &*store, actor: &Actor::Cli, now: expires }
        .issue_key(&acme, &pro, Environment::Live, Some(t0))
        .await;
    assert!(
        matches!(past, Err(ops::AdminError::Invalid { param: "expires_at", .. })),
        "an expiry in the past is refused: {past:?}"
    );
    node.stop().await;
}

#[tokio::test]
async fn a_rolled_key_works_for_its_window_beside_the_new_one() {
    let (store, _db) = store().await;
    let t0 = Utc::now();
    let clock = Arc::new(ManualClock::new(t0));
    let mut cfg = config(Duration::from_millis(50), 100);
    cfg.node.clock = clock.clone();
    let node = Node::start(store.clone(), cfg).await;
    let old = pro_key(&*store).await;
    assert_eq!(node.status(&old).await, 200, "held before the roll");
    let (new, rolled) = mds_node::admin::Audited { store: &*store, actor: &Actor::Cli, now: t0 }
        .roll_key(&prefix(&old), chrono::Duration::seconds(3600))
        .await
        .unwrap();
    let new = new.expose_secret().to_owned();
    assert_eq!(rolled.new.account.as_str(), "acme");
    assert_eq!(node.status(&new).await, 200, "the new key works at once");
    // The held old key learns its expiry from the change log within 1 s.
    clock.set(t0 + chrono::Duration::seconds(3600));
    node.within_a_second(&old, 401).await;
    assert_eq!(node.status(&new).await, 200);
    let u: serde_json::Value = node_json(&node, "/v1/usage", &new).await;
    assert_eq!(u["tier"], "pro");
    node.stop().await;
}

async fn node_json(node: &Node, path: &str, key: &str) -> serde_json::Value {
    let r = client().get(format!("{}{path}", node.base)).bearer_auth(key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

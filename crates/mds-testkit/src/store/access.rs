//! Suite functions for the schema, tiers, the change counters, accounts and
//! keys.

use super::*;

/// Migrating a new store seeds the counters at `{companies: 0, news: 0,
/// auth: 1}` (the default tiers were seeded); migrating again changes
/// nothing: not the counters, not the cursor secret (32 bytes, not all zero),
/// not the tiers.
pub async fn migrate_is_idempotent(store: &dyn Store) {
    migrated(store).await;
    store.ping().await.expect("ping");
    let g = generations(store).await;
    assert_eq!(g, Generations { companies: 0, news: 0, auth: 1, usage: 0, actions: 0, prices: 0 });
    let secret = store.cursor_secret().await.expect("cursor secret");
    assert_eq!(secret.len(), 32);
    assert!(secret.iter().any(|&b| b != 0), "cursor secret is all zero");
    let tiers = store.tiers().await.expect("tiers");

    migrated(store).await;
    migrated(store).await;
    assert_eq!(generations(store).await, g);
    assert_eq!(store.cursor_secret().await.expect("cursor secret"), secret);
    assert_eq!(store.tiers().await.expect("tiers"), tiers);
}

/// A new store has exactly the default tiers, ordered by name, each with one
/// history entry from the migration; migrating again neither duplicates them,
/// nor undoes an operator's change to one, nor adds to their history.
pub async fn default_tiers_are_seeded_once(store: &dyn Store) {
    let before = Utc::now();
    migrated(store).await;
    let after = Utc::now();
    let defaults = default_tiers_by_name();
    assert_eq!(store.tiers().await.expect("tiers"), defaults);
    let names: Vec<&str> = defaults.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["enterprise", "evaluation", "pro", "starter"]);

    create_accounts(store, &["acme"]).await;
    let k = new_key("mds_live_d01", 1, "acme", "pro", "2026-01-02T00:00:00Z");
    store.create_key(&k).await.expect("create key");
    let h = store.quota_history(&k.prefix).await.expect("quota history");
    assert_eq!(h.plan_tier.len(), 1, "{h:?}");
    assert_eq!(h.plan_tier[0].1, 1_000_000);
    assert_eq!(h.evaluation.len(), 1, "{h:?}");
    assert_eq!(h.evaluation[0].1, 1_000);
    for (seeded, _) in [h.plan_tier[0], h.evaluation[0]] {
        assert!(before <= seeded && seeded <= after, "seeded at {seeded}, migrated in {before}..{after}");
    }

    let pro = Tier { name: tier_name("pro"), rate_limit_per_minute: 1, monthly_quota: 2 };
    assert!(!store.set_tier(&pro, t0()).await.expect("set tier"));
    let h = store.quota_history(&k.prefix).await.expect("quota history");
    migrated(store).await;
    let tiers = store.tiers().await.expect("tiers");
    assert_eq!(tiers.len(), 4);
    assert_eq!(tiers.iter().find(|t| t.name.as_str() == "pro"), Some(&pro));
    assert_eq!(store.quota_history(&k.prefix).await.expect("quota history"), h);
}

/// `set_tier` creates (true), then changes (false); tiers stay ordered by
/// name; a quota beyond `i64::MAX` is `Invalid` and changes nothing.
pub async fn set_tier_creates_then_updates(store: &dyn Store) {
    migrated(store).await;
    let gold = Tier { name: tier_name("gold"), rate_limit_per_minute: 120, monthly_quota: 200_000 };
    assert!(store.set_tier(&gold, t0()).await.expect("create tier"));
    let gold2 = Tier { rate_limit_per_minute: 240, monthly_quota: 9_000_000_000_000, ..gold.clone() };
    assert!(!store.set_tier(&gold2, t0()).await.expect("update tier"));

    let mut expected = default_tiers_by_name();
    expected.insert(2, gold2.clone()); // enterprise < evaluation < gold < pro
    assert_eq!(store.tiers().await.expect("tiers"), expected);

    let g = generations(store).await;
    let huge = Tier { monthly_quota: u64::MAX, ..gold.clone() };
    assert!(matches!(store.set_tier(&huge, t0()).await, Err(StoreError::Invalid(_))));
    assert_eq!(store.tiers().await.expect("tiers"), expected);
    assert_eq!(generations(store).await, g);
}

/// Which change counter a mutation must bump.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Companies,
    News,
    Auth,
    Usage,
}

/// Every mutation raises exactly the change counter of its kind (company
/// upserts `companies`, article upserts `news`, tiers, accounts and keys
/// `auth`, usage batches `usage`) and no other; reads, refused mutations and
/// revoking a revoked key raise none.
pub async fn each_mutation_bumps_only_its_own_generation(store: &dyn Store) {
    migrated(store).await;
    let mut g = generations(store).await;

    async fn bumped(store: &dyn Store, before: &mut Generations, kind: Kind, what: &str) {
        let now = generations(store).await;
        let (own_before, own_now) = match kind {
            Kind::Companies => (before.companies, now.companies),
            Kind::News => (before.news, now.news),
            Kind::Auth => (before.auth, now.auth),
            Kind::Usage => (before.usage, now.usage),
        };
        assert!(own_now > own_before, "{what} did not raise the {kind:?} counter ({before:?} -> {now:?})");
        let mut others_now = now;
        match kind {
            Kind::Companies => others_now.companies = before.companies,
            Kind::News => others_now.news = before.news,
            Kind::Auth => others_now.auth = before.auth,
            Kind::Usage => others_now.usage = before.usage,
        }
        assert_eq!(others_now, *before, "{what} changed another counter than {kind:?} ({before:?} -> {now:?})");
        *before = now;
    }
    async fn unchanged(store: &dyn Store, before: Generations, what: &str) {
        assert_eq!(generations(store).await, before, "{what} changed a counter");
    }

    let c = company("INE117A0102", "ABB", "ABB India");
    store.upsert_companies(std::slice::from_ref(&c)).await.expect("insert company");
    bumped(store, &mut g, Kind::Companies, "inserting a company").await;
    store.upsert_companies(&[Company { name: "ABB India Ltd".into(), ..c }]).await.expect("update company");
    bumped(store, &mut g, Kind::Companies, "updating a company").await;
    store.upsert_articles(&[bare_article("a-1")]).await.expect("insert article");
    bumped(store, &mut g, Kind::News, "inserting an article").await;
    store.upsert_articles(&[full_article("a-1")]).await.expect("update article");
    bumped(store, &mut g, Kind::News, "updating an article").await;
    let gold = Tier { name: tier_name("gold"), rate_limit_per_minute: 1, monthly_quota: 1 };
    store.set_tier(&gold, t0()).await.expect("create tier");
    bumped(store, &mut g, Kind::Auth, "creating a tier").await;
    store.set_tier(&Tier { monthly_quota: 2, ..gold.clone() }, t0()).await.expect("update tier");
    bumped(store, &mut g, Kind::Auth, "changing a tier").await;
    store.set_tier(&Tier { monthly_quota: 2, ..gold }, t0()).await.expect("set a tier as it is");
    bumped(store, &mut g, Kind::Auth, "setting a tier to what it is").await;
    let acme = account_name("acme");
    store.create_account(&acme, at("2026-01-01T00:00:00Z")).await.expect("create account");
    bumped(store, &mut g, Kind::Auth, "creating an account").await;
    store.set_account_entitled(&acme, false, at("2026-01-01T01:00:00Z")).await.expect("entitle");
    bumped(store, &mut g, Kind::Auth, "setting entitlement").await;
    let k = new_key("mds_live_g01", 1, "acme", "gold", "2026-01-02T00:00:00Z");
    store.create_key(&k).await.expect("create key");
    bumped(store, &mut g, Kind::Auth, "creating a key").await;
    let usage = batch("gen:1", vec![delta("mds_live_g01", 2026, 1, 5)]);
    assert!(store.apply_usage(&usage).await.expect("apply usage"));
    bumped(store, &mut g, Kind::Usage, "applying usage").await;
    store.revoke_key(&k.prefix, at("2026-01-03T00:00:00Z")).await.expect("revoke");
    bumped(store, &mut g, Kind::Auth, "revoking a key").await;

    // Reads.
    store.ping().await.expect("ping");
    store.generations().await.expect("generations");
    store.cursor_secret().await.expect("cursor secret");
    store.companies().await.expect("companies");
    store.article(&slug("a-1")).await.expect("article");
    store.article_count().await.expect("article count");
    store.tiers().await.expect("tiers");
    store.accounts().await.expect("accounts");
    store.keys(None).await.expect("keys");
    store.keys(Some(&acme)).await.expect("keys of acme");
    store.auth_directory().await.expect("auth directory");
    store.key_lookup(&[k.prefix.as_str()]).await.expect("key lookup");
    store.auth_changes(0).await.expect("auth changes");
    store.usage(&k.prefix, month(2026, 1), month(2026, 12)).await.expect("usage");
    store.quota_history(&k.prefix).await.expect("quota history");
    unchanged(store, g, "reading").await;

    // No-ops and refusals.
    store.revoke_key(&k.prefix, at("2026-01-04T00:00:00Z")).await.expect("revoke again");
    unchanged(store, g, "revoking a revoked key").await;
    assert!(!store.apply_usage(&usage).await.expect("apply usage again"));
    assert!(store.create_account(&acme, at("2026-01-05T00:00:00Z")).await.is_err());
    assert!(store.create_key(&new_key("mds_live_g02", 2, "nobody", "gold", "2026-01-05T00:00:00Z")).await.is_err());
    assert!(store.create_key(&k).await.is_err());
    assert!(store.set_account_entitled(&account_name("nobody"), true, t0()).await.is_err());
    assert!(store.revoke_key(&prefix("mds_live_zzz"), at("2026-01-05T00:00:00Z")).await.is_err());
    let huge = Tier { name: tier_name("gold"), rate_limit_per_minute: 1, monthly_quota: u64::MAX };
    assert!(store.set_tier(&huge, t0()).await.is_err());
    assert!(store.apply_usage(&batch("gen:2", vec![delta("mds_live_zzz", 2026, 1, 1)])).await.is_err());
    unchanged(store, g, "a refused mutation").await;
}

/// Accounts: created entitled, a taken name is a `Conflict`, listed by name,
/// entitlement set and read back, unknown names `NotFound`.
pub async fn accounts_create_list_and_entitle(store: &dyn Store) {
    migrated(store).await;
    let t = at("2026-03-04T05:06:07.5Z");
    let acme = store.create_account(&account_name("acme"), t).await.expect("create");
    assert_eq!(acme, Account { name: account_name("acme"), entitled: true, created_at: t });
    expect_conflict(
        store.create_account(&account_name("acme"), at("2026-03-05T00:00:00Z")).await,
        "an account named \"acme\" already exists",
    );
    let t2 = at("2026-03-06T00:00:00Z");
    store.create_account(&account_name("beta"), t2).await.expect("create");
    store.create_account(&account_name("alpha"), t2).await.expect("create");

    let off = store.set_account_entitled(&account_name("alpha"), false, t0()).await.expect("entitle");
    assert_eq!(off, Account { name: account_name("alpha"), entitled: false, created_at: t2 });
    assert_eq!(
        store.accounts().await.expect("accounts"),
        vec![acme.clone(), off.clone(), Account { name: account_name("beta"), entitled: true, created_at: t2 },]
    );
    let on = store.set_account_entitled(&account_name("alpha"), true, t0()).await.expect("entitle");
    assert!(on.entitled);
    assert_eq!(store.accounts().await.expect("accounts")[1], on);

    expect_not_found(
        store.set_account_entitled(&account_name("ghost"), false, t0()).await,
        "no account named \"ghost\"",
    );
}

/// `create_key` needs an existing account and tier (`NotFound`) and a free
/// prefix (`Conflict`), and stores exactly what it was given.
pub async fn create_key_checks_account_tier_and_prefix(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    expect_not_found(
        store.create_key(&new_key("mds_live_k01", 1, "ghost", "pro", "2026-02-01T00:00:00Z")).await,
        "no account named \"ghost\"",
    );
    expect_not_found(
        store.create_key(&new_key("mds_live_k01", 1, "acme", "gold", "2026-02-01T00:00:00Z")).await,
        "no tier named \"gold\"",
    );
    assert!(store.keys(None).await.expect("keys").is_empty());

    let k = new_key("mds_live_k01", 1, "acme", "pro", "2026-02-01T00:00:00.123456Z");
    assert_eq!(store.create_key(&k).await.expect("create"), record(&k, None));
    let t = new_key("mds_test_k02", 2, "acme", "evaluation", "2026-02-02T00:00:00Z");
    assert_eq!(store.create_key(&t).await.expect("create"), record(&t, None));

    expect_conflict(
        store.create_key(&new_key("mds_live_k01", 3, "acme", "starter", "2026-02-03T00:00:00Z")).await,
        "a key with prefix \"mds_live_k01\" already exists",
    );
    assert_eq!(store.keys(None).await.expect("keys"), vec![record(&k, None), record(&t, None)]);
}

/// Revoking sets `revoked_at`; revoking again returns the key with its
/// original `revoked_at`; an unknown prefix is `NotFound`.
pub async fn revoke_key_is_idempotent(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    let k = new_key("mds_live_r01", 5, "acme", "starter", "2026-02-01T00:00:00Z");
    store.create_key(&k).await.expect("create");
    let t1 = at("2026-02-10T12:00:00.5Z");
    assert_eq!(store.revoke_key(&k.prefix, t1).await.expect("revoke"), record(&k, Some(t1)));
    assert_eq!(
        store.revoke_key(&k.prefix, at("2026-02-11T00:00:00Z")).await.expect("revoke again"),
        record(&k, Some(t1))
    );
    assert_eq!(store.keys(None).await.expect("keys"), vec![record(&k, Some(t1))]);
    expect_not_found(store.revoke_key(&prefix("mds_live_zzz"), t1).await, "no key with prefix \"mds_live_zzz\"");
}

/// A key issued with an expiry keeps it; rolling a key stores a new one on
/// its account, tier and environment and makes the old one expire at the
/// end of the window (or sooner, if it expired sooner), logging both; a
/// revoked, expired or unknown key cannot be rolled, nor can a key be rolled
/// into one of the other environment or with a prefix taken.
pub async fn roll_key_issues_a_new_key_and_expires_the_old(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    let exp = at("2026-03-01T00:00:00Z");
    let k =
        KeyRecord { expires_at: Some(exp), ..new_key("mds_live_x01", 1, "acme", "starter", "2026-02-01T00:00:00Z") };
    assert_eq!(store.create_key(&k).await.expect("create"), record(&k, None));
    assert_eq!(store.keys(None).await.expect("keys")[0].expires_at, Some(exp));
    let found = store.key_lookup(&["mds_live_x01"]).await.expect("lookup");
    assert_eq!(found.keys[0].record.expires_at, Some(exp), "a node learns the expiry");

    let g = store.generations().await.expect("generations").auth;
    let now = at("2026-02-10T00:00:00Z");
    let rolled = store
        .roll_key(&k.prefix, (&prefix("mds_live_x02"), hash(2)), now, at("2026-02-11T00:00:00Z"))
        .await
        .expect("roll");
    assert_eq!(rolled.old, KeyRecord { expires_at: Some(at("2026-02-11T00:00:00Z")), ..record(&k, None) });
    let new = KeyRecord { created_at: now, ..new_key("mds_live_x02", 2, "acme", "starter", "2026-02-10T00:00:00Z") };
    assert_eq!(rolled.new, record(&new, None), "same account, tier and environment; no expiry");
    assert_eq!(store.keys(None).await.expect("keys"), vec![rolled.old.clone(), rolled.new.clone()]);
    let changes = store.auth_changes(g).await.expect("changes");
    assert_eq!(changes.keys, vec!["mds_live_x02".to_owned(), "mds_live_x01".to_owned()], "both keys logged");

    // A window past the key's own expiry keeps the sooner one.
    let again = store
        .roll_key(&prefix("mds_live_x02"), (&prefix("mds_live_x03"), hash(3)), now, at("2027-01-01T00:00:00Z"))
        .await
        .expect("roll the new one");
    assert_eq!(again.old.expires_at, Some(at("2027-01-01T00:00:00Z")));
    let sooner = store
        .roll_key(&k.prefix, (&prefix("mds_live_x04"), hash(4)), now, at("2027-01-01T00:00:00Z"))
        .await
        .expect("roll again within its window");
    assert_eq!(sooner.old.expires_at, Some(at("2026-02-11T00:00:00Z")), "the sooner expiry stays");

    let later = at("2026-02-12T00:00:00Z");
    expect_conflict(
        store.roll_key(&k.prefix, (&prefix("mds_live_x05"), hash(5)), later, later).await,
        "key \"mds_live_x01\" has expired",
    );
    store.revoke_key(&prefix("mds_live_x03"), now).await.expect("revoke");
    for (old, new, sentence) in [
        ("mds_live_x03", "mds_live_x05", "key \"mds_live_x03\" is revoked"),
        ("mds_live_x04", "mds_test_x05", "the new key is not a live key"),
        ("mds_live_x04", "mds_live_x02", "a key with prefix \"mds_live_x02\" already exists"),
    ] {
        expect_conflict(store.roll_key(&prefix(old), (&prefix(new), hash(5)), now, now).await, sentence);
    }
    expect_not_found(
        store.roll_key(&prefix("mds_live_zzz"), (&prefix("mds_live_x05"), hash(5)), now, now).await,
        "no key with prefix \"mds_live_zzz\"",
    );
    assert_eq!(store.keys(None).await.expect("keys").len(), 4, "nothing half-written");
}

/// `keys` lists revoked keys too, by creation then prefix; with an account,
/// only its keys (`[]` for an account without keys, `NotFound` for none).
pub async fn keys_filter_by_account(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme", "beta", "idle"]).await;
    let a1 = new_key("mds_live_a01", 1, "acme", "pro", "2026-02-03T00:00:00Z");
    let a2 = new_key("mds_live_a02", 2, "acme", "pro", "2026-02-01T00:00:00Z");
    let a3 = new_key("mds_live_a00", 3, "acme", "starter", "2026-02-01T00:00:00Z");
    let b1 = new_key("mds_test_b01", 4, "beta", "evaluation", "2026-02-02T00:00:00Z");
    for k in [&a1, &a2, &a3, &b1] {
        store.create_key(k).await.expect("create");
    }
    let t = at("2026-02-04T00:00:00Z");
    store.revoke_key(&a2.prefix, t).await.expect("revoke");

    assert_eq!(
        store.keys(None).await.expect("keys"),
        vec![record(&a3, None), record(&a2, Some(t)), record(&b1, None), record(&a1, None)]
    );
    assert_eq!(
        store.keys(Some(&account_name("acme"))).await.expect("keys"),
        vec![record(&a3, None), record(&a2, Some(t)), record(&a1, None)]
    );
    assert_eq!(store.keys(Some(&account_name("beta"))).await.expect("keys"), vec![record(&b1, None)]);
    assert_eq!(store.keys(Some(&account_name("idle"))).await.expect("keys"), vec![]);
    expect_not_found(store.keys(Some(&account_name("ghost"))).await, "no account named \"ghost\"");
}

/// The admin lists' pages: tiers and accounts by name, keys in the order
/// of `keys` (ties of `created_at` broken by prefix), each after a
/// position, at most `limit`; pages walked to the end give the whole list
/// once; an unknown account is `NotFound`.
pub async fn admin_lists_page_by_keyset(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme", "beta", "idle"]).await;
    let tiers = store.tiers_after(None, 2).await.expect("tiers");
    assert_eq!(tiers, default_tiers_by_name()[..2].to_vec());
    let rest = store.tiers_after(Some(&tiers[1].name), 10).await.expect("tiers");
    assert_eq!(rest, default_tiers_by_name()[2..].to_vec());
    let names = |a: Vec<Account>| a.into_iter().map(|a| a.name.as_str().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(store.accounts_after(None, 1).await.expect("accounts")), ["acme"]);
    assert_eq!(names(store.accounts_after(Some(&account_name("acme")), 5).await.expect("accounts")), ["beta", "idle"]);
    assert_eq!(
        names(store.accounts_after(Some(&account_name("idle")), 5).await.expect("accounts")),
        Vec::<String>::new()
    );

    let keys = [
        new_key("mds_live_p03", 1, "acme", "pro", "2026-02-01T00:00:00Z"),
        new_key("mds_live_p01", 2, "acme", "pro", "2026-02-01T00:00:00Z"),
        new_key("mds_live_p02", 3, "beta", "pro", "2026-02-01T00:00:00Z"),
        new_key("mds_live_p00", 4, "acme", "starter", "2026-02-01T00:00:01Z"),
        new_key("mds_live_p04", 5, "beta", "pro", "2026-01-31T23:59:59.5Z"),
    ];
    for k in &keys {
        store.create_key(k).await.expect("create");
    }
    for (account, limit) in [(None, 1), (None, 2), (Some(account_name("acme")), 2), (Some(account_name("idle")), 3)] {
        let whole = store.keys(account.as_ref()).await.expect("keys");
        let mut walked: Vec<KeyRecord> = Vec::new();
        loop {
            let after = walked.last().map(|k| (k.created_at, &k.prefix));
            let page = store.keys_after(account.as_ref(), after, limit).await.expect("page");
            assert!(page.len() <= limit);
            let done = page.len() < limit;
            walked.extend(page);
            if done {
                break;
            }
        }
        assert_eq!(walked, whole, "{account:?} by {limit}");
    }
    let order: Vec<String> =
        store.keys(None).await.expect("keys").into_iter().map(|k| k.prefix.as_str().to_owned()).collect();
    assert_eq!(order, ["mds_live_p04", "mds_live_p01", "mds_live_p02", "mds_live_p03", "mds_live_p00"]);
    expect_not_found(store.keys_after(Some(&account_name("ghost")), None, 5).await, "no account named \"ghost\"");
}

/// The directory holds every account with its entitlement and every tier;
/// a key lookup finds the active keys among the prefixes asked, with their
/// account's entitlement and plan tier, and nothing for a revoked or
/// unknown prefix; both say the generation they were read at.
pub async fn auth_directory_and_key_lookup(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme", "beta"]).await;
    let gold = Tier { name: tier_name("gold"), rate_limit_per_minute: 77, monthly_quota: 7_777 };
    store.set_tier(&gold, t0()).await.expect("set tier");
    let a1 = new_key("mds_live_s01", 1, "acme", "gold", "2026-02-01T00:00:00Z");
    let a2 = new_key("mds_live_s02", 2, "acme", "pro", "2026-02-02T00:00:00Z");
    let b1 = new_key("mds_test_s03", 3, "beta", "pro", "2026-02-03T00:00:00Z");
    for k in [&a1, &a2, &b1] {
        store.create_key(k).await.expect("create");
    }
    store.revoke_key(&a2.prefix, at("2026-02-04T00:00:00Z")).await.expect("revoke");
    let beta = store.set_account_entitled(&account_name("beta"), false, t0()).await.expect("entitle");
    let generation = store.generations().await.expect("generations").auth;

    let dir = store.auth_directory().await.expect("directory");
    assert_eq!(dir.generation, generation);
    let acme = Account { name: account_name("acme"), entitled: true, created_at: at("2026-01-01T00:00:00Z") };
    assert_eq!(dir.accounts, vec![acme, beta]);
    let mut tiers = default_tiers_by_name();
    tiers.insert(2, gold.clone());
    assert_eq!(dir.tiers, tiers);
    assert_eq!(dir.tiers, store.tiers().await.expect("tiers"));

    let pro = store.tiers().await.expect("tiers").into_iter().find(|t| t.name.as_str() == "pro").expect("pro");
    let found =
        store.key_lookup(&["mds_test_s03", "mds_live_s02", "mds_live_s01", "mds_live_zzz"]).await.expect("lookup");
    assert_eq!(found.generation, generation);
    let mut keys = found.keys;
    keys.sort_by(|x, y| x.record.prefix.as_str().cmp(y.record.prefix.as_str()));
    assert_eq!(
        keys,
        vec![
            ActiveKey { record: record(&a1, None), entitled: true, plan_tier: gold },
            ActiveKey { record: record(&b1, None), entitled: false, plan_tier: pro },
        ],
        "active keys only, with entitlement and plan tier"
    );
    assert!(store.key_lookup(&[]).await.expect("lookup").keys.is_empty());
    // More prefixes than one statement binds.
    let many: Vec<String> = (0..1_200).map(|i| format!("mds_live_{i:03}")).collect();
    let mut asked: Vec<&str> = many.iter().map(String::as_str).collect();
    asked.push("mds_live_s01");
    assert_eq!(store.key_lookup(&asked).await.expect("lookup").keys.len(), 1);
}

/// The auth change log says, for any generation, which keys changed after
/// it and whether a tier or account did; it is complete while it reaches
/// back to that generation, and not once pruned past it (or for a
/// generation the store has not reached).
pub async fn auth_changes_say_what_changed_since(store: &dyn Store) {
    migrated(store).await;
    let g0 = store.generations().await.expect("generations").auth;
    let none = store.auth_changes(g0).await.expect("changes");
    assert_eq!(none, AuthChanges { generation: g0, complete: true, keys: vec![], directory: false });

    create_accounts(store, &["acme"]).await;
    let g1 = store.generations().await.expect("generations").auth;
    let k1 = new_key("mds_live_c01", 1, "acme", "pro", "2026-02-01T00:00:00Z");
    let k2 = new_key("mds_live_c02", 2, "acme", "pro", "2026-02-01T00:00:00Z");
    store.create_key(&k1).await.expect("create");
    store.create_key(&k2).await.expect("create");
    let g2 = store.generations().await.expect("generations").auth;
    store.revoke_key(&k1.prefix, at("2026-02-02T00:00:00Z")).await.expect("revoke");
    let g3 = store.generations().await.expect("generations").auth;
    assert!(g0 < g1 && g1 < g2 && g2 < g3);

    // Complete changes up to g3: the keys changed, whether the directory did.
    let complete = |keys: &[&str], directory| AuthChanges {
        generation: g3,
        complete: true,
        keys: keys.iter().map(|k| (*k).to_owned()).collect(),
        directory,
    };
    let both = ["mds_live_c01", "mds_live_c02"];
    assert_eq!(store.auth_changes(g0).await.expect("changes"), complete(&both, true), "each key once");
    assert_eq!(store.auth_changes(g1).await.expect("changes"), complete(&both, false));
    assert_eq!(store.auth_changes(g2).await.expect("changes"), complete(&["mds_live_c01"], false));
    store.revoke_key(&k1.prefix, at("2026-02-03T00:00:00Z")).await.expect("revoke again");
    assert_eq!(store.generations().await.expect("generations").auth, g3, "a no-op logs nothing");
    let c = store.auth_changes(g3 + 5).await.expect("changes");
    assert!(!c.complete, "a generation the store has not reached (a restored store) is not covered");

    // Pruned up to g2: the log covers g2 and after, not g1.
    assert!(store.prune_auth_changes(g2).await.expect("prune") > 0);
    assert!(store.auth_changes(g2).await.expect("changes").complete);
    let c = store.auth_changes(g1).await.expect("changes");
    assert!(!c.complete, "pruned past g1: {c:?}");
    assert_eq!(c.generation, g3);
}

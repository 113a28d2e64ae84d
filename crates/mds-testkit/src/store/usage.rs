//! Suite functions for usage counts and quota history.

use super::*;

/// Every month of every year.
const ALL: (BillingMonth, BillingMonth) = (BillingMonth { year: 1, month: 1 }, BillingMonth { year: 9999, month: 12 });

/// Accounts `acme` and `beta`, and keys `mds_live_u01` (acme, pro),
/// `mds_live_u02` (acme, starter) and `mds_test_u03` (beta, evaluation).
async fn usage_keys(store: &dyn Store) {
    create_accounts(store, &["acme", "beta"]).await;
    for k in [
        new_key("mds_live_u01", 1, "acme", "pro", "2026-01-01T00:00:00Z"),
        new_key("mds_live_u02", 2, "acme", "starter", "2026-01-02T00:00:00Z"),
        new_key("mds_test_u03", 3, "beta", "evaluation", "2026-01-03T00:00:00Z"),
    ] {
        store.create_key(&k).await.expect("create key");
    }
}

/// Counts add up per key and month over batches; a key and month given twice
/// in one batch count twice; a zero count stores a zero; a revoked key still
/// takes counts (requests made before the revocation reached the store).
pub async fn apply_usage_adds_across_months_and_keys(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let first = batch(
        "node-a:1",
        vec![
            delta("mds_live_u01", 2026, 10, 5),
            delta("mds_live_u01", 2026, 11, 7),
            delta("mds_live_u02", 2026, 11, 3),
        ],
    );
    assert!(store.apply_usage(&first).await.expect("apply first"));
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 10), 5), (month(2026, 11), 7)]);
    assert_eq!(usage_of(store, "mds_live_u02", ALL.0, ALL.1).await, vec![(month(2026, 11), 3)]);
    assert_eq!(usage_of(store, "mds_test_u03", ALL.0, ALL.1).await, vec![]);

    store.revoke_key(&prefix("mds_live_u02"), at("2026-11-30T00:00:00Z")).await.expect("revoke");
    let second = batch(
        "node-b:1",
        vec![
            delta("mds_live_u01", 2026, 11, 10),
            delta("mds_live_u02", 2026, 12, 1),
            delta("mds_live_u01", 2026, 11, 2),
            delta("mds_test_u03", 2027, 1, 0),
            delta("mds_live_u02", 2026, 11, 4_000_000_000),
        ],
    );
    assert!(store.apply_usage(&second).await.expect("apply second"));
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 10), 5), (month(2026, 11), 19)]);
    assert_eq!(
        usage_of(store, "mds_live_u02", ALL.0, ALL.1).await,
        vec![(month(2026, 11), 4_000_000_003), (month(2026, 12), 1)]
    );
    assert_eq!(usage_of(store, "mds_test_u03", ALL.0, ALL.1).await, vec![(month(2027, 1), 0)]);

    // An empty batch is applied (and remembered) like any other.
    assert!(store.apply_usage(&batch("node-a:2", vec![])).await.expect("apply empty"));
    assert!(!store.apply_usage(&batch("node-a:2", vec![])).await.expect("apply empty again"));
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 10), 5), (month(2026, 11), 19)]);
}

/// Every batch applied bumps the `usage` generation (what nodes follow to
/// know the counts they keep are out of date) and nothing else; a batch
/// applied before, or refused, bumps nothing.
pub async fn apply_usage_bumps_the_usage_generation(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let before = generations(store).await;
    assert!(store.apply_usage(&batch("gen:1", vec![delta("mds_live_u01", 2026, 11, 5)])).await.expect("apply"));
    let after = generations(store).await;
    assert_eq!(after, Generations { usage: before.usage + 1, ..before });
    assert!(!store.apply_usage(&batch("gen:1", vec![delta("mds_live_u01", 2026, 11, 5)])).await.expect("again"));
    assert!(store.apply_usage(&batch("gen:2", vec![delta("mds_live_zzz", 2026, 11, 1)])).await.is_err());
    assert_eq!(generations(store).await, after);
    assert!(store.apply_usage(&batch("gen:3", vec![])).await.expect("apply empty"));
    assert_eq!(generations(store).await.usage, after.usage + 1);
}

/// Thousands of deltas in one batch (more than any backend's statement
/// batch), then an overlapping batch: every count exact.
pub async fn apply_usage_in_large_batches(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let keys = ["mds_live_u01", "mds_live_u02", "mds_test_u03"];
    // 3 keys x 900 months (1950-01 .. 2024-12) = 2700 deltas.
    let months: Vec<BillingMonth> = std::iter::successors(Some(month(1950, 1)), |m| Some(m.next())).take(900).collect();
    assert_eq!(months[899], month(2024, 12));
    let mut deltas = Vec::new();
    for (i, m) in months.iter().enumerate() {
        for (j, k) in keys.iter().enumerate() {
            deltas.push(UsageDelta::counted(prefix(k), m.first_day(), "/v1/companies", (i * 3 + j) as u64 + 1));
        }
    }
    assert!(store.apply_usage(&batch("big:1", deltas)).await.expect("apply big"));
    // The last 400 months again, key u02 only, +1000 each.
    let again: Vec<UsageDelta> = months[500..]
        .iter()
        .map(|m| UsageDelta::counted(prefix(keys[1]), m.first_day(), "/v1/companies", 1000))
        .collect();
    assert!(store.apply_usage(&batch("big:2", again)).await.expect("apply again"));

    for (j, k) in keys.iter().enumerate() {
        let got = usage_of(store, k, ALL.0, ALL.1).await;
        let want: Vec<(BillingMonth, u64)> = months
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let extra = if j == 1 && i >= 500 { 1000 } else { 0 };
                (*m, (i * 3 + j) as u64 + 1 + extra)
            })
            .collect();
        assert_eq!(got, want, "counts of {k}");
    }
}

/// A batch id applied before is not applied again (true, then false), even
/// with other deltas, and is answered with the `usage` generation it was
/// applied at, as [`UsageStore::usage_batch_applied`] says (`None` for an
/// id never applied); ids are 1 to 100 characters, else `Invalid`.
pub async fn apply_usage_counts_a_batch_once(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let b = batch("node-a:17", vec![delta("mds_live_u01", 2026, 11, 5), delta("mds_live_u02", 2026, 11, 1)]);
    assert_eq!(store.usage_batch_applied("node-a:17").await.expect("not yet"), None);
    let first = store.apply_usage_batch(&b).await.expect("apply");
    assert!(first.fresh);
    assert_eq!(store.usage_batch_applied("node-a:17").await.expect("applied"), Some(first.generation));
    // Later batches move the generation on; the first is still told its own.
    assert!(store.apply_usage(&batch("node-c:1", vec![delta("mds_live_u02", 2026, 11, 0)])).await.expect("later"));
    let again = store.apply_usage_batch(&b).await.expect("apply again");
    assert!(!again.fresh);
    assert_eq!(again.generation, first.generation, "a batch applied before is told the generation it was applied at");
    let other = batch("node-a:17", vec![delta("mds_live_u01", 2026, 11, 100), delta("mds_live_u01", 2026, 12, 1)]);
    assert!(!store.apply_usage(&other).await.expect("same id, other deltas"));
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 11), 5)]);
    assert_eq!(usage_of(store, "mds_live_u02", ALL.0, ALL.1).await, vec![(month(2026, 11), 1)]);

    // Another id with the same deltas counts.
    assert!(store.apply_usage(&batch("node-b:17", b.deltas.clone())).await.expect("apply other id"));
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 11), 10)]);

    let longest = "x".repeat(100);
    assert!(store.apply_usage(&batch(&longest, vec![delta("mds_live_u01", 2026, 11, 1)])).await.expect("100 chars"));
    assert!(!store.apply_usage(&batch(&longest, vec![])).await.expect("100 chars again"));
    expect_invalid(store.apply_usage(&batch("", b.deltas.clone())).await, "a usage batch id must not be empty");
    expect_invalid(
        store.apply_usage(&batch(&"x".repeat(101), b.deltas.clone())).await,
        "a usage batch id must be at most 100 characters (got 101)",
    );
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 11), 11)]);
}

/// A delta naming an unknown key makes the whole batch `NotFound` (naming the
/// first unknown prefix): none of its deltas count, and its id is not
/// remembered, so the batch without the unknown key can be applied.
pub async fn apply_usage_with_an_unknown_key_applies_nothing(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    assert!(store.apply_usage(&batch("n:1", vec![delta("mds_live_u01", 2026, 11, 5)])).await.expect("apply"));

    let bad = batch(
        "n:2",
        vec![
            delta("mds_live_u01", 2026, 11, 1),
            delta("mds_live_u02", 2026, 12, 1),
            delta("mds_live_zz1", 2026, 11, 1),
            delta("mds_live_u01", 2026, 12, 1),
            delta("mds_live_zz2", 2026, 11, 1),
        ],
    );
    expect_not_found(store.apply_usage(&bad).await, "no key with prefix \"mds_live_zz1\"");
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 11), 5)]);
    assert_eq!(usage_of(store, "mds_live_u02", ALL.0, ALL.1).await, vec![]);

    let good = batch("n:2", vec![delta("mds_live_u01", 2026, 11, 1), delta("mds_live_u01", 2026, 12, 1)]);
    assert!(store.apply_usage(&good).await.expect("apply without the unknown key"));
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 11), 6), (month(2026, 12), 1)]);
}

/// `usage` returns the months of `from..=to` that have counts, oldest first,
/// of that key only; `[]` when there are none or `from > to`; `NotFound` for
/// an unknown key.
pub async fn usage_filters_and_orders_months(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let b = batch(
        "n:1",
        vec![
            delta("mds_live_u01", 2026, 12, 12),
            delta("mds_live_u01", 2025, 12, 1),
            delta("mds_live_u01", 2027, 1, 13),
            delta("mds_live_u01", 2026, 3, 3),
            delta("mds_live_u01", 2026, 1, 10),
            delta("mds_live_u02", 2026, 2, 99),
        ],
    );
    assert!(store.apply_usage(&b).await.expect("apply"));
    let u = |from: BillingMonth, to: BillingMonth| usage_of(store, "mds_live_u01", from, to);
    assert_eq!(
        u(month(2026, 1), month(2026, 12)).await,
        vec![(month(2026, 1), 10), (month(2026, 3), 3), (month(2026, 12), 12)]
    );
    assert_eq!(
        u(ALL.0, ALL.1).await,
        vec![
            (month(2025, 12), 1),
            (month(2026, 1), 10),
            (month(2026, 3), 3),
            (month(2026, 12), 12),
            (month(2027, 1), 13)
        ]
    );
    assert_eq!(u(month(2025, 12), month(2025, 12)).await, vec![(month(2025, 12), 1)]);
    assert_eq!(u(month(2026, 12), month(2027, 1)).await, vec![(month(2026, 12), 12), (month(2027, 1), 13)]);
    assert_eq!(u(month(2026, 2), month(2026, 2)).await, vec![]);
    assert_eq!(u(month(2026, 4), month(2026, 11)).await, vec![]);
    assert_eq!(u(month(2026, 12), month(2026, 1)).await, vec![]);
    assert_eq!(usage_of(store, "mds_live_u02", ALL.0, ALL.1).await, vec![(month(2026, 2), 99)]);
    assert_eq!(usage_of(store, "mds_test_u03", ALL.0, ALL.1).await, vec![]);
    expect_not_found(store.usage(&prefix("mds_live_zzz"), ALL.0, ALL.1).await, "no key with prefix \"mds_live_zzz\"");
}

/// A batch's days go into the daily ledger (a key, day and route given
/// twice summed; `304`s beside requests; a day of `304`s only counts no
/// request) and their sums into the months, so a month's count is the sum
/// of its days, batch after batch; a batch applied again changes neither.
pub async fn apply_usage_keeps_a_daily_ledger_that_adds_up_to_the_months(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let first = batch(
        "node-a:1",
        vec![
            day_delta("mds_live_u01", "2026-11-03", "/v1/companies", 5, 1),
            day_delta("mds_live_u01", "2026-11-03", "/v1/news/{slug}", 2, 0),
            day_delta("mds_live_u01", "2026-11-03", "/v1/companies", 1, 2),
            day_delta("mds_live_u01", "2026-11-30", "/v1/companies", 0, 4),
            day_delta("mds_live_u01", "2026-12-01", "/v1/companies", 9, 0),
            day_delta("mds_live_u02", "2026-11-03", "/v1/companies", 3, 0),
        ],
    );
    assert!(store.apply_usage(&first).await.expect("apply"));
    assert!(!store.apply_usage(&first).await.expect("apply again"));
    let second = batch(
        "node-b:1",
        vec![
            day_delta("mds_live_u01", "2026-11-03", "/v1/companies", 10, 0),
            day_delta("mds_live_u01", "2026-11-04", "/v1/companies", 1, 1),
        ],
    );
    assert!(store.apply_usage(&second).await.expect("apply second"));

    assert_eq!(
        days_of(store, "mds_live_u01", "2026-11-01", "2026-12-31").await,
        vec![
            entry("2026-11-03", "/v1/companies", 16, 3),
            entry("2026-11-03", "/v1/news/{slug}", 2, 0),
            entry("2026-11-04", "/v1/companies", 1, 1),
            entry("2026-11-30", "/v1/companies", 0, 4),
            entry("2026-12-01", "/v1/companies", 9, 0),
        ]
    );
    assert_eq!(
        days_of(store, "mds_live_u02", "2026-11-01", "2026-12-31").await,
        vec![entry("2026-11-03", "/v1/companies", 3, 0)]
    );
    assert_eq!(days_of(store, "mds_test_u03", "2026-11-01", "2026-12-31").await, vec![]);
    // The months are the sums of their days.
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![(month(2026, 11), 19), (month(2026, 12), 9)]);
    for k in ["mds_live_u01", "mds_live_u02"] {
        for (m, n) in usage_of(store, k, ALL.0, ALL.1).await {
            let days = store.usage_days(&prefix(k), m.first_day(), m.last_day()).await.expect("days");
            assert_eq!(days.iter().map(|d| d.requests).sum::<u64>(), n, "{k} {m}");
        }
    }
}

/// `usage_days` returns the entries of `from..=to` of that key only, by day
/// then route (whatever order they were added in); `[]` when there are
/// none or `from > to`; `NotFound` for an unknown key.
pub async fn usage_days_filter_and_order_days_then_routes(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let b = batch(
        "n:1",
        vec![
            day_delta("mds_live_u01", "2026-12-01", "/v1/news/{slug}", 1, 0),
            day_delta("mds_live_u01", "2026-11-30", "/v1/news/{slug}", 2, 0),
            day_delta("mds_live_u01", "2026-11-30", "/v1/companies", 3, 0),
            day_delta("mds_live_u01", "2026-10-31", "/v1/companies", 4, 0),
            day_delta("mds_live_u01", "2026-11-01", "/v1/news/{slug}", 5, 0),
            day_delta("mds_live_u01", "2026-11-01", "/v1/companies/{isin}", 6, 0),
            day_delta("mds_live_u02", "2026-11-15", "/v1/companies", 7, 0),
        ],
    );
    assert!(store.apply_usage(&b).await.expect("apply"));
    let days = |from, to| days_of(store, "mds_live_u01", from, to);
    assert_eq!(
        days("2026-11-01", "2026-11-30").await,
        vec![
            entry("2026-11-01", "/v1/companies/{isin}", 6, 0),
            entry("2026-11-01", "/v1/news/{slug}", 5, 0),
            entry("2026-11-30", "/v1/companies", 3, 0),
            entry("2026-11-30", "/v1/news/{slug}", 2, 0),
        ]
    );
    assert_eq!(days("2026-10-31", "2026-10-31").await, vec![entry("2026-10-31", "/v1/companies", 4, 0)]);
    assert_eq!(days("2026-12-01", "2027-12-31").await, vec![entry("2026-12-01", "/v1/news/{slug}", 1, 0)]);
    assert_eq!(days("0001-01-01", "9999-12-31").await.len(), 6);
    assert_eq!(days("2026-11-02", "2026-11-29").await, vec![]);
    assert_eq!(days("2026-11-30", "2026-11-01").await, vec![]);
    expect_not_found(
        store.usage_days(&prefix("mds_live_zzz"), date("2026-11-01"), date("2026-11-30")).await,
        "no key with prefix \"mds_live_zzz\"",
    );
}

/// A route label that is empty or over 200 characters, or a day past the
/// year 9999, makes the whole batch `Invalid`: nothing of it is written, and
/// its id is not remembered.
pub async fn apply_usage_refuses_bad_routes_and_days_whole(store: &dyn Store) {
    migrated(store).await;
    usage_keys(store).await;
    let good = day_delta("mds_live_u01", "2026-11-03", "/v1/companies", 1, 0);
    let long: &'static str = "/".repeat(201).leak();
    let far = UsageDelta { day: date("+10000-01-01"), ..good.clone() };
    for (bad, sentence) in [
        (UsageDelta { route: "".into(), ..good.clone() }, "a usage route must be 1 to 200 characters (got 0)"),
        (UsageDelta { route: long.into(), ..good.clone() }, "a usage route must be 1 to 200 characters (got 201)"),
        (far, "a usage day must be in the years 1 to 9999 (got +10000-01-01)"),
    ] {
        expect_invalid(store.apply_usage(&batch("n:1", vec![good.clone(), bad])).await, sentence);
    }
    assert_eq!(usage_of(store, "mds_live_u01", ALL.0, ALL.1).await, vec![]);
    assert_eq!(days_of(store, "mds_live_u01", "0001-01-01", "9999-12-31").await, vec![]);
    assert!(store.apply_usage(&batch("n:1", vec![good])).await.expect("the id was not remembered"));
    assert_eq!(
        days_of(store, "mds_live_u01", "0001-01-01", "9999-12-31").await,
        vec![entry("2026-11-03", "/v1/companies", 1, 0)]
    );
}

/// `quota_history` lists every `set_tier` of the key's tier and of the
/// evaluation tier, and every entitlement change of its account, oldest
/// first by the `now` they were made at (not by call order; equal instants in
/// call order); other tiers and accounts do not show; refused changes leave
/// no trace. `quota_for` reads the quota a month closed under from it.
///
/// The changes are made in the 2090s, after the default tiers were seeded by
/// `migrate` (at the real time), so the seeded entry comes first.
pub async fn quota_history_follows_tier_and_entitlement_changes(store: &dyn Store) {
    let before = Utc::now();
    migrated(store).await;
    let after = Utc::now();
    let gold =
        |rate: u32, quota: u64| Tier { name: tier_name("gold"), rate_limit_per_minute: rate, monthly_quota: quota };
    assert!(store.set_tier(&gold(60, 50_000), at("2096-01-01T00:00:00Z")).await.expect("create gold"));
    let acme = account_name("acme");
    store.create_account(&acme, at("2096-02-01T00:00:00Z")).await.expect("create acme");
    let k = new_key("mds_live_h01", 1, "acme", "gold", "2096-02-01T00:00:00Z");
    let p = new_key("mds_live_h02", 2, "acme", "pro", "2096-02-02T00:00:00Z");
    store.create_key(&k).await.expect("create key");
    store.create_key(&p).await.expect("create key");

    // Made in this order, effective in another.
    assert!(!store.set_tier(&gold(60, 70_000), at("2096-06-15T00:00:00.5Z")).await.expect("set gold"));
    assert!(!store.set_tier(&gold(60, 80_000), at("2096-06-15T00:00:00Z")).await.expect("set gold"));
    assert!(!store.set_tier(&gold(120, 80_000), at("2096-06-15T00:00:00Z")).await.expect("set gold rate"));
    assert!(!store.set_tier(&gold(120, 90_000), at("2096-12-01T00:00:00Z")).await.expect("set gold"));
    store.set_account_entitled(&acme, false, at("2096-09-10T00:00:00Z")).await.expect("unentitle");
    store.set_account_entitled(&acme, true, at("2096-10-01T00:00:00Z")).await.expect("entitle");
    store.set_account_entitled(&acme, true, at("2096-10-15T00:00:00Z")).await.expect("entitle again");
    let evaluation = Tier { name: tier_name("evaluation"), rate_limit_per_minute: 10, monthly_quota: 2_000 };
    assert!(!store.set_tier(&evaluation, at("2096-08-01T00:00:00Z")).await.expect("set evaluation"));

    // Noise: other tiers and accounts, refused changes.
    let pro = Tier { name: tier_name("pro"), rate_limit_per_minute: 600, monthly_quota: 2_000_000 };
    assert!(!store.set_tier(&pro, at("2096-05-01T00:00:00Z")).await.expect("set pro"));
    store.create_account(&account_name("beta"), at("2096-03-01T00:00:00Z")).await.expect("create beta");
    store.set_account_entitled(&account_name("beta"), false, at("2096-04-01T00:00:00Z")).await.expect("beta");
    assert!(store.set_tier(&gold(1, u64::MAX), at("2096-11-01T00:00:00Z")).await.is_err());
    assert!(store.set_account_entitled(&account_name("ghost"), false, at("2096-11-01T00:00:00Z")).await.is_err());

    let h = store.quota_history(&k.prefix).await.expect("quota history");
    assert_eq!(
        h.plan_tier,
        vec![
            (at("2096-01-01T00:00:00Z"), 50_000),
            (at("2096-06-15T00:00:00Z"), 80_000),
            (at("2096-06-15T00:00:00Z"), 80_000),
            (at("2096-06-15T00:00:00.5Z"), 70_000),
            (at("2096-12-01T00:00:00Z"), 90_000),
        ]
    );
    assert_eq!(h.evaluation.len(), 2, "{h:?}");
    let (seeded, quota) = h.evaluation[0];
    assert!(before <= seeded && seeded <= after, "evaluation seeded at {seeded}, migrated in {before}..{after}");
    assert_eq!(quota, 1_000);
    assert_eq!(h.evaluation[1], (at("2096-08-01T00:00:00Z"), 2_000));
    let entitled = vec![
        (at("2096-02-01T00:00:00Z"), true),
        (at("2096-09-10T00:00:00Z"), false),
        (at("2096-10-01T00:00:00Z"), true),
        (at("2096-10-15T00:00:00Z"), true),
    ];
    assert_eq!(h.entitled, entitled);

    let quotas: Vec<u64> = (1..=12).map(|m| h.quota_for(month(2096, m))).collect();
    assert_eq!(
        quotas,
        [50_000, 50_000, 50_000, 50_000, 50_000, 70_000, 70_000, 70_000, 2_000, 70_000, 70_000, 90_000],
        "quota per month of 2096"
    );
    assert_eq!(h.quota_for(month(2095, 6)), 50_000, "before any record: the first");

    // Another key of the same account: its own tier, the same evaluation
    // tier and entitlement.
    let hp = store.quota_history(&p.prefix).await.expect("quota history");
    assert_eq!(hp.plan_tier.len(), 2, "{hp:?}");
    assert_eq!(hp.plan_tier[0].1, 1_000_000);
    assert_eq!(hp.plan_tier[1], (at("2096-05-01T00:00:00Z"), 2_000_000));
    assert_eq!(hp.evaluation, h.evaluation);
    assert_eq!(hp.entitled, entitled);
    assert_eq!(hp.quota_for(month(2096, 4)), 1_000_000);
    assert_eq!(hp.quota_for(month(2096, 9)), 2_000);
    assert_eq!(hp.quota_for(month(2096, 10)), 2_000_000);
}

/// `quota_history` of an unknown prefix is `NotFound`; a revoked key keeps
/// its history (its past months still need their quota).
pub async fn quota_history_of_unknown_and_revoked_keys(store: &dyn Store) {
    migrated(store).await;
    expect_not_found(store.quota_history(&prefix("mds_live_zzz")).await, "no key with prefix \"mds_live_zzz\"");

    let starter = Tier { name: tier_name("starter"), rate_limit_per_minute: 60, monthly_quota: 60_000 };
    assert!(!store.set_tier(&starter, at("2096-03-01T00:00:00Z")).await.expect("set starter"));
    store.create_account(&account_name("acme"), at("2096-02-01T00:00:00Z")).await.expect("create acme");
    let k = new_key("mds_live_v01", 1, "acme", "starter", "2096-02-01T00:00:00Z");
    store.create_key(&k).await.expect("create key");
    let live = store.quota_history(&k.prefix).await.expect("quota history");
    store.revoke_key(&k.prefix, at("2096-04-01T00:00:00Z")).await.expect("revoke");

    let revoked = store.quota_history(&k.prefix).await.expect("quota history of a revoked key");
    assert_eq!(revoked, live);
    assert_eq!(revoked.plan_tier.len(), 2, "{revoked:?}");
    assert_eq!(revoked.plan_tier[0].1, 50_000);
    assert_eq!(revoked.plan_tier[1], (at("2096-03-01T00:00:00Z"), 60_000));
    assert_eq!(revoked.entitled, vec![(at("2096-02-01T00:00:00Z"), true)]);
    assert_eq!(revoked.quota_for(month(2096, 2)), 50_000);
    assert_eq!(revoked.quota_for(month(2096, 3)), 60_000);
    let none = QuotaHistory::default();
    assert_ne!(revoked, none);
}

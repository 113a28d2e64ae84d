//! Suite functions that read or change the database behind the store's
//! back (a corrupt row, a trigger, an old batch id, a newer schema, a
//! version 1 store) through a [`Raw`] connection, and one that closes the
//! store. Like the rest of the suite, each gets a fresh store and migrates
//! it itself.

use super::*;
use crate::raw::{Closable, Dialect, Raw};

/// Rows that do not decode (a bad ISIN, a counter that is not a number, a
/// rate limit beyond `u32`) are database errors naming what is wrong, not
/// panics.
pub async fn corrupt_rows_are_errors_not_panics(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    raw.execute(
        "INSERT INTO companies (isin, ticker, name, is_bse, is_nse) VALUES ('NOT-AN-ISIN', 'X', 'X', true, false)",
    )
    .await;
    let err = store.companies().await.expect_err("corrupt ISIN");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("NOT-AN-ISIN"), "{err}");

    raw.execute("UPDATE meta SET value = 'many' WHERE key = 'generation_news'").await;
    let err = store.generations().await.expect_err("corrupt counter");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("generation_news"), "{err}");

    raw.execute("INSERT INTO tiers (name, rate_limit_per_minute, monthly_quota) VALUES ('huge', 5000000000, 5)").await;
    assert!(matches!(store.tiers().await, Err(StoreError::Database(_))));
}

/// A row that fails deep in an upsert (past the first statements' runs)
/// leaves no row and no bumped counter behind.
pub async fn a_failed_upsert_writes_nothing(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    raw.execute(match raw.dialect() {
        Dialect::Sqlite => {
            "CREATE TRIGGER boom BEFORE INSERT ON companies WHEN NEW.ticker = 'BOOM' \
             BEGIN SELECT RAISE(ABORT, 'boom'); END"
        }
        Dialect::Postgres => {
            "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN IF NEW.ticker = 'BOOM' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$; \
             CREATE TRIGGER boom BEFORE INSERT ON companies FOR EACH ROW EXECUTE FUNCTION boom();"
        }
    })
    .await;
    let g = generations(store).await;
    let rows: Vec<Company> =
        (0..12_000).map(|i| crate::fixtures::company(i, if i == 11_000 { "BOOM" } else { "OK" })).collect();
    let err = store.upsert_companies(&rows).await.expect_err("trigger aborts");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(store.companies().await.unwrap().is_empty());
    assert_eq!(generations(store).await, g);
}

/// A database migrated by a newer mds (contract section 16): used while it
/// says this build may use it (its migrations expand-only), then refused,
/// naming its version, once a migration contracted it past this build.
pub async fn a_schema_newer_than_this_build_is_refused(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    raw.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (999, 'later')").await;
    store.migrate().await.expect("an expand-only newer schema is used");
    let state = store.schema().await.expect("schema state");
    assert!(state.ahead() && state.current().is_ok(), "{state:?}");
    raw.execute("INSERT INTO meta (key, value) VALUES ('schema_oldest_code', '999')").await;
    match store.migrate().await {
        Err(StoreError::Invalid(m)) => assert!(m.contains("version 999") && m.contains("upgrade mds"), "{m}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    let refused = store.schema().await.expect("schema state").current();
    assert!(matches!(refused, Err(StoreError::Invalid(_))), "{refused:?}");
}

/// A closed store is unavailable.
pub async fn a_closed_store_is_unavailable<S: Store + Closable>(store: &S, _raw: &mut dyn Raw) {
    migrated(store).await;
    store.close().await;
    assert!(matches!(store.ping().await, Err(StoreError::Unavailable(_))));
}

/// Applied batch ids are kept a week: within it a batch counts once, past
/// it the id is pruned and forgotten.
pub async fn applied_batch_ids_are_pruned_after_a_week(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    let key = new_key("mds_live_aaa", 1, "acme", "evaluation", "2026-01-01T00:00:00Z");
    store.create_key(&key).await.expect("create key");
    let nov = month(2026, 11);
    let one = |id: &str| batch(id, vec![UsageDelta::counted(key.prefix.clone(), nov.first_day(), "/v1/companies", 1)]);
    assert!(store.apply_usage(&one("old")).await.unwrap());
    assert!(store.apply_usage(&one("recent")).await.unwrap());
    let ts = |days: i64| mds_domain::time::format_utc(&(Utc::now() - chrono::TimeDelta::days(days)));
    for (id, days) in [("old", 8), ("recent", 6)] {
        raw.execute(&format!("UPDATE usage_batches SET applied_at = '{}' WHERE id = '{id}'", ts(days))).await;
    }

    assert!(store.apply_usage(&one("new")).await.unwrap());
    assert_eq!(raw.texts("SELECT id FROM usage_batches ORDER BY id").await, ["new", "recent"]);
    // Within the week a batch counts once; past it, the id is forgotten.
    assert!(!store.apply_usage(&one("recent")).await.unwrap());
    assert!(store.apply_usage(&one("old")).await.unwrap());
    assert_eq!(store.usage(&key.prefix, nov, nov).await.unwrap(), vec![(nov, 4)]);
}

/// A batch refused for an unknown key leaves neither its id nor a count.
pub async fn a_refused_usage_batch_leaves_no_row_behind(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    let refused = batch("n:1", vec![delta("mds_live_zzz", 2026, 11, 1)]);
    assert!(matches!(store.apply_usage(&refused).await, Err(StoreError::NotFound(_))));
    for table in ["usage_batches", "usage_counts", "usage_daily", "usage_routes"] {
        assert_eq!(raw.int(&format!("SELECT COUNT(*) FROM {table}")).await, 0, "{table}");
    }
}

/// A walk of the companies stops at the first row that does not decode,
/// with that row's error, after handing over the rows before it.
pub async fn companies_sorted_stop_at_the_first_corrupt_row(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    let series = crate::fixtures::company;
    store.upsert_companies(&[series(1, "A"), series(2, "Z")]).await.unwrap();
    raw.execute(
        "INSERT INTO companies (isin, ticker, name, is_bse, is_nse) VALUES ('NOT-AN-ISIN', 'M', 'M', true, false)",
    )
    .await;
    let mut seen = Vec::new();
    let err =
        store.companies_sorted(&mut |c| seen.push(c.company.ticker.as_str().to_owned())).await.expect_err("corrupt");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("NOT-AN-ISIN"), "{err}");
    assert_eq!(seen, ["A"]);
    assert_eq!(store.company_count().await.unwrap(), 3);
}

/// Keys are stored as their prefix and the hex of their hash, never the
/// secret.
pub async fn keys_are_stored_as_hashes(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    let key = mds_domain::ApiKey::generate(Environment::Live);
    let new = KeyRecord {
        prefix: key.prefix(),
        hash: key.hash(),
        ..new_key("mds_live_aaa", 1, "acme", "evaluation", "2026-01-01T00:00:00Z")
    };
    store.create_key(&new).await.expect("create key");
    let stored = raw.texts("SELECT prefix || ' ' || hash_hex FROM api_keys").await;
    let [stored] = &stored[..] else { panic!("one key: {stored:?}") };
    let (prefix, hash_hex) = stored.split_once(' ').expect("prefix and hash");
    assert_eq!(prefix, key.prefix().as_str());
    assert_eq!(hash_hex, key.hash().to_hex());
    assert!(!hash_hex.contains(&key.expose_secret()[12..]));
}

/// The rows a store of schema version 1 held, beside its schema: its seed
/// (one tier changed by an operator), an entitled and a not entitled
/// account, a key.
const VERSION_1_ROWS: &str = "INSERT INTO schema_migrations VALUES (1, '2025-01-01T00:00:00+00:00'); \
     INSERT INTO meta VALUES ('generation', '41'), \
         ('cursor_secret', '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'); \
     INSERT INTO tiers VALUES ('evaluation', 10, 1000), ('starter', 60, 55555), ('pro', 600, 1000000), \
         ('enterprise', 6000, 100000000); \
     INSERT INTO accounts (name, entitled, created_at) VALUES \
         ('acme', true, '2025-03-04T05:06:07+00:00'), ('beta', false, '2025-05-01T00:00:00.500+00:00'); \
     INSERT INTO api_keys (prefix, hash_hex, account_id, tier, environment, created_at) \
         SELECT 'mds_live_old', 'abababababababababababababababababababababababababababababababab', id, \
             'starter', 'live', '2025-05-02T00:00:00+00:00' FROM accounts WHERE name = 'beta';";

/// A store of schema version 1 is upgraded: the counters continue from the
/// old one, the quota and entitlement history is backfilled, the old key
/// counts usage, and migrating again changes nothing.
pub async fn a_version_1_store_is_upgraded_with_its_history_backfilled(store: &dyn Store, raw: &mut dyn Raw) {
    let (schema, migrations_table) = match raw.dialect() {
        Dialect::Sqlite => (
            include_str!("../../../mds-store/migrations/sqlite/0001_initial.sql"),
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
        ),
        Dialect::Postgres => (
            include_str!("../../../mds-store/migrations/postgres/0001_initial.sql"),
            "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT COLLATE \"C\" NOT NULL)",
        ),
    };
    raw.execute(schema).await;
    raw.execute(&format!("{migrations_table}; {VERSION_1_ROWS}")).await;

    store.migrate().await.expect("migrate to the latest version");
    // Each counter continues from the old one, plus one; the seed found
    // every default tier, so it bumped nothing.
    let g = generations(store).await;
    assert_eq!(g, Generations { companies: 42, news: 42, auth: 42, usage: 0, actions: 0, prices: 0 });
    assert_eq!(
        raw.int("SELECT COUNT(*) FROM meta WHERE key = 'generation'").await,
        0,
        "the counter of version 1 is removed"
    );
    let versions =
        raw.texts("SELECT CAST(version AS TEXT) FROM schema_migrations ORDER BY CAST(version AS BIGINT)").await;
    assert_eq!(
        versions,
        ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20"]
    );

    let key = prefix("mds_live_old");
    let h = store.quota_history(&key).await.expect("quota history");
    assert_eq!(
        h,
        QuotaHistory {
            plan_tier: vec![(at("1970-01-01T00:00:00Z"), 55_555)],
            evaluation: vec![(at("1970-01-01T00:00:00Z"), 1_000)],
            entitled: vec![(at("2025-05-01T00:00:00.5Z"), false)],
        }
    );
    let acme_rows = raw
        .texts(
            "SELECT h.effective_from || CASE WHEN h.entitled THEN ' entitled' ELSE ' not entitled' END \
             FROM entitlement_history h JOIN accounts a ON a.id = h.account_id WHERE a.name = 'acme'",
        )
        .await;
    assert_eq!(acme_rows, ["2025-03-04T05:06:07+00:00 entitled"]);

    // The old key counts usage.
    let nov = month(2026, 11);
    let one = batch("n:1", vec![UsageDelta::counted(key.clone(), nov.first_day(), "/v1/companies", 3)]);
    assert!(store.apply_usage(&one).await.unwrap());
    assert_eq!(store.usage(&key, nov, nov).await.unwrap(), vec![(nov, 3)]);

    store.migrate().await.expect("migrate again");
    assert_eq!(generations(store).await, Generations { usage: 1, ..g });
    assert_eq!(store.quota_history(&key).await.unwrap(), h);
}

/// A store counted in before the daily ledger (schema version 3) is
/// upgraded: each month's count goes on its first day under
/// [`UNATTRIBUTED_ROUTE`](mds_domain::daily::UNATTRIBUTED_ROUTE), so the
/// days add up to the months; a zero count adds no entry; new counts go on
/// their own days and routes beside it; migrating again changes nothing.
pub async fn a_store_counted_before_the_daily_ledger_keeps_its_counts_in_it(store: &dyn Store, raw: &mut dyn Raw) {
    let (schema, migrations_table) = match raw.dialect() {
        Dialect::Sqlite => (
            [
                include_str!("../../../mds-store/migrations/sqlite/0001_initial.sql"),
                include_str!("../../../mds-store/migrations/sqlite/0002_usage.sql"),
                include_str!("../../../mds-store/migrations/sqlite/0003_catalog_snapshot.sql"),
            ],
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
        ),
        Dialect::Postgres => (
            [
                include_str!("../../../mds-store/migrations/postgres/0001_initial.sql"),
                include_str!("../../../mds-store/migrations/postgres/0002_usage.sql"),
                include_str!("../../../mds-store/migrations/postgres/0003_catalog_snapshot.sql"),
            ],
            "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT COLLATE \"C\" NOT NULL)",
        ),
    };
    raw.execute(schema[0]).await;
    raw.execute(&format!("{migrations_table}; {VERSION_1_ROWS}")).await;
    raw.execute(schema[1]).await;
    raw.execute(schema[2]).await;
    raw.execute(
        "INSERT INTO schema_migrations VALUES (2, '2025-06-01T00:00:00+00:00'), (3, '2025-07-01T00:00:00+00:00'); \
         INSERT INTO usage_counts (key_id, month, requests) SELECT id, 202610, 5 FROM api_keys; \
         INSERT INTO usage_counts (key_id, month, requests) SELECT id, 202611, 3 FROM api_keys; \
         INSERT INTO usage_counts (key_id, month, requests) SELECT id, 202609, 0 FROM api_keys;",
    )
    .await;

    store.migrate().await.expect("migrate to the latest version");
    let key = prefix("mds_live_old");
    let all = || store.usage_days(&key, date("2026-01-01"), date("2026-12-31"));
    let unattributed = mds_domain::daily::UNATTRIBUTED_ROUTE;
    assert_eq!(
        all().await.expect("days"),
        vec![entry("2026-10-01", unattributed, 5, 0), entry("2026-11-01", unattributed, 3, 0)]
    );
    let nov = month(2026, 11);
    assert_eq!(
        store.usage(&key, month(2026, 9), nov).await.unwrap(),
        vec![(month(2026, 9), 0), (month(2026, 10), 5), (nov, 3)]
    );

    let b = batch("n:1", vec![UsageDelta::counted(key.clone(), date("2026-11-01"), "/v1/companies", 2)]);
    assert!(store.apply_usage(&b).await.unwrap());
    let after = vec![
        entry("2026-10-01", unattributed, 5, 0),
        entry("2026-11-01", "/v1/companies", 2, 0),
        entry("2026-11-01", unattributed, 3, 0),
    ];
    assert_eq!(all().await.expect("days"), after);
    assert_eq!(store.usage(&key, nov, nov).await.unwrap(), vec![(nov, 5)]);

    store.migrate().await.expect("migrate again");
    assert_eq!(all().await.expect("days"), after);
    assert_eq!(raw.int("SELECT COUNT(*) FROM usage_routes").await, 2);
}

/// Each route template is stored once, however many keys, days and batches
/// use it; ledger rows refer to it.
pub async fn route_templates_are_stored_once(store: &dyn Store, raw: &mut dyn Raw) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    for (i, k) in ["mds_live_r01", "mds_live_r02"].iter().enumerate() {
        store.create_key(&new_key(k, i as u8 + 1, "acme", "pro", "2026-01-01T00:00:00Z")).await.expect("create key");
    }
    for (n, d) in ["2026-11-01", "2026-11-02", "2026-11-03"].iter().enumerate() {
        let mut deltas = Vec::new();
        for k in ["mds_live_r01", "mds_live_r02"] {
            deltas.push(day_delta(k, d, "/v1/companies", 1, 0));
            deltas.push(day_delta(k, d, "/v1/news/{slug}", 0, 1));
        }
        assert!(store.apply_usage(&batch(&format!("n:{n}"), deltas)).await.unwrap());
    }
    assert_eq!(raw.texts("SELECT template FROM usage_routes ORDER BY id").await, ["/v1/companies", "/v1/news/{slug}"]);
    assert_eq!(raw.int("SELECT COUNT(*) FROM usage_daily").await, 12);
}

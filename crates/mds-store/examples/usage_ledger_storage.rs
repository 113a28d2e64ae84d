//! Storage cost of the daily usage ledger: fills a fresh store with KEYS keys
//! each using ROUTES routes on every one of DAYS days (one `apply_usage`
//! batch per day, as the flushes of a day add up to), then reports the rows
//! and the bytes of the ledger's tables and indexes, and how long a day's
//! batch took. Run by `bench/usage-ledger-storage.sh`.
//!
//! ```text
//! cargo run --release -p mds-store --example usage_ledger_storage -- sqlite [KEYS] [DAYS] [ROUTES]
//! MDS_TEST_POSTGRES_URL=postgres://… cargo run --release -p mds-store --example usage_ledger_storage -- postgres [KEYS] [DAYS] [ROUTES]
//! ```
//!
//! SQLite bytes are the pages of each table and index (`dbstat`); PostgreSQL
//! bytes are `pg_relation_size` of each table and index, after a `VACUUM`.

use std::time::Instant;

use chrono::{Days, NaiveDate, Utc};
use mds_domain::{AccountName, Environment, KeyHash, KeyPrefix, TierName};
use mds_store::{DatabaseUrl, KeyRecord, UsageBatch, UsageDelta};

/// The data routes a key may use, in the order keys take them.
const ROUTES: [&str; 5] =
    ["/v1/companies", "/v1/news/{slug}", "/v1/companies/{isin}", "/v1/news", "/v1/companies/changes"];

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let backend = args.next().unwrap_or_else(|| "sqlite".into());
    let num = |a: Option<String>, default: usize| a.map_or(default, |s| s.parse().expect("a number"));
    let (keys, days, routes) = (num(args.next(), 10_000), num(args.next(), 31), num(args.next(), 2));
    assert!((1..=ROUTES.len()).contains(&routes), "ROUTES is 1 to {}", ROUTES.len());

    let dir = tempfile::tempdir().expect("temp dir");
    let pg = match backend.as_str() {
        "postgres" => {
            let admin = mds_testkit::pg::admin_url().expect("MDS_TEST_POSTGRES_URL names the server");
            Some(mds_testkit::pg::TestDb::create(&admin).await)
        }
        "sqlite" => None,
        other => panic!("backend is sqlite or postgres, not {other}"),
    };
    let url = match &pg {
        Some(db) => db.url().clone(),
        None => DatabaseUrl::new(dir.path().join("ledger.db").to_str().expect("a UTF-8 path")),
    };
    let store = mds_store::open(&url).await.expect("open");
    store.migrate().await.expect("migrate");
    let acme = AccountName::parse("acme").unwrap();
    store.create_account(&acme, Utc::now()).await.expect("account");
    let t = Instant::now();
    let mut prefixes = Vec::with_capacity(keys);
    for i in 0..keys {
        let prefix = KeyPrefix::parse(&format!("mds_live_{i:08}")).unwrap();
        let mut hash = [0u8; 32];
        hash[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let key = KeyRecord {
            prefix: prefix.clone(),
            hash: KeyHash(hash),
            account: acme.clone(),
            tier: TierName::parse("pro").unwrap(),
            environment: Environment::Live,
            created_at: Utc::now(),
            revoked_at: None,
            expires_at: None,
        };
        store.create_key(&key).await.expect("key");
        prefixes.push(prefix);
    }
    eprintln!("{keys} keys made in {:.1} s", t.elapsed().as_secs_f64());

    let first = NaiveDate::from_ymd_opt(2026, 10, 1).unwrap();
    let mut batch_ms = Vec::with_capacity(days);
    for d in 0..days {
        let day = first.checked_add_days(Days::new(d as u64)).unwrap();
        let mut deltas = Vec::with_capacity(keys * routes);
        for (i, p) in prefixes.iter().enumerate() {
            for (r, route) in ROUTES[..routes].iter().enumerate() {
                let requests = 1 + ((i * 7 + d * 13 + r * 5) % 500) as u64;
                deltas.push(UsageDelta {
                    key: p.clone(),
                    day,
                    route: (*route).into(),
                    requests,
                    not_modified: requests / 10,
                });
            }
        }
        let t = Instant::now();
        store.apply_usage(&UsageBatch { id: format!("bench:{d}"), deltas }).await.expect("apply");
        batch_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    batch_ms.sort_by(f64::total_cmp);
    let median = batch_ms[batch_ms.len() / 2];

    let sizes = match &pg {
        Some(db) => postgres_sizes(db).await,
        None => sqlite_sizes(&url).await,
    };
    let rows = sizes.iter().find(|s| s.0 == "usage_daily rows").map_or(0, |s| s.1);
    println!("backend {backend}: {keys} keys x {days} days x {routes} routes");
    println!(
        "  one day's batch ({} entries): median {median:.0} ms, max {:.0} ms",
        keys * routes,
        batch_ms[batch_ms.len() - 1]
    );
    for (what, n) in &sizes {
        println!("  {what}: {n}");
    }
    let ledger: u64 = sizes.iter().filter(|s| s.0.starts_with("bytes usage_daily")).map(|s| s.1).sum();
    println!(
        "  ledger bytes (table and indexes): {ledger} ({:.1} MiB, {:.1} bytes a row)",
        ledger as f64 / 1048576.0,
        ledger as f64 / rows.max(1) as f64
    );
}

/// Rows of the ledger and bytes of each usage table and index, by `dbstat`.
async fn sqlite_sizes(url: &DatabaseUrl) -> Vec<(String, u64)> {
    use sqlx::Connection;
    let path = url.expose().trim_start_matches("sqlite://");
    let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{path}")).await.expect("raw connection");
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut c).await.expect("checkpoint");
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM usage_daily").fetch_one(&mut c).await.expect("count");
    let mut out = vec![("usage_daily rows".to_owned(), rows as u64)];
    let rs: Vec<(String, i64)> = sqlx::query_as(
        "SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'usage%' OR name LIKE 'sqlite_autoindex_usage%' \
         GROUP BY name ORDER BY name",
    )
    .fetch_all(&mut c)
    .await
    .expect("dbstat (SQLite built with SQLITE_ENABLE_DBSTAT_VTAB)");
    out.extend(rs.into_iter().map(|(name, n)| (format!("bytes {}", name.replace("sqlite_autoindex_", "")), n as u64)));
    out
}

/// Rows of the ledger and bytes of each usage table and index, after a
/// `VACUUM` (so the visibility map and free space are settled).
async fn postgres_sizes(db: &mds_testkit::pg::TestDb) -> Vec<(String, u64)> {
    let mut c = db.raw().await;
    sqlx::query("VACUUM ANALYZE").execute(&mut c).await.expect("vacuum");
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM usage_daily").fetch_one(&mut c).await.expect("count");
    let mut out = vec![("usage_daily rows".to_owned(), rows as u64)];
    let rs: Vec<(String, i64)> = sqlx::query_as(
        "SELECT c.relname::text, pg_relation_size(c.oid) FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND c.relname LIKE 'usage%' AND c.relkind IN ('r', 'i') ORDER BY 1",
    )
    .fetch_all(&mut c)
    .await
    .expect("sizes");
    out.extend(rs.into_iter().map(|(name, n)| (format!("bytes {name}"), n as u64)));
    out
}

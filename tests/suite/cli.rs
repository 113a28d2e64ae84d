//! The operator CLI, run as the real `mds` binary on a real SQLite file:
//! output shapes, one-line errors with non-zero exits, and nothing written
//! by a refused command.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mds_store::DatabaseUrl;
use sqlx::Connection;
use tempfile::TempDir;

struct Cli {
    dir: TempDir,
}

impl Cli {
    /// A new directory with a store migrated, as an operator starts.
    fn new() -> Self {
        let cli = Cli::bare();
        cli.ok(&["migrate"]);
        cli
    }

    /// A new directory with no store yet.
    fn bare() -> Self {
        Cli { dir: tempfile::tempdir().unwrap() }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("mds.db")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mds"))
            .args(args)
            .env("MDS_DATABASE_URL", self.db())
            .env("MDS_LOG", "warn")
            .output()
            .expect("run mds")
    }

    /// Runs and asserts success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(o.status.success(), "mds {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    }

    /// Runs and asserts failure with a one-line reason as the last stderr
    /// line; returns all of stderr.
    fn fails(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(!o.status.success(), "mds {args:?} should fail");
        let err = String::from_utf8(o.stderr).unwrap();
        let last = err.trim_end().lines().last().unwrap_or_default().to_owned();
        assert!(last.starts_with("error:"), "last line is the reason: {err}");
        err
    }

    fn write(&self, name: &str, content: &[u8]) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        p.to_str().unwrap().to_owned()
    }

    async fn store(&self) -> std::sync::Arc<dyn mds_store::Store> {
        mds_store::open(&DatabaseUrl::new(self.db().to_str().unwrap())).await.unwrap()
    }
}

/// Contract section 16: only `mds migrate` changes the schema. Every other
/// command on a store behind its build refuses with "run `mds migrate`"
/// and changes nothing (a store with no schema stays without one); `mds
/// serve` too, unless given `--migrate`.
#[tokio::test]
async fn only_migrate_changes_the_schema() {
    let cli = Cli::bare();
    for args in [&["keys", "list"][..], &["tiers", "list"], &["accounts", "create", "acme"], &["serve"]] {
        let err = cli.fails(args);
        assert!(err.contains("the database has no schema yet; run `mds migrate`"), "{args:?}: {err}");
    }
    let mut raw = sqlx::SqliteConnection::connect(cli.db().to_str().unwrap()).await.unwrap();
    let tables: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master").fetch_one(&mut raw).await.unwrap();
    assert_eq!(tables, 0, "no command but migrate made a table");

    let out = cli.ok(&["migrate"]);
    assert!(out.starts_with("applied ") && out.contains("schema version"), "{out}");
    // One migration undone: behind again, and said how far.
    let latest: i64 =
        sqlx::query_scalar("SELECT MAX(version) FROM schema_migrations").fetch_one(&mut raw).await.unwrap();
    sqlx::query("DELETE FROM schema_migrations WHERE version = $1").bind(latest).execute(&mut raw).await.unwrap();
    let err = cli.fails(&["keys", "list"]);
    let behind =
        format!("is at version {} and this mds needs {latest} (1 migration to apply); run `mds migrate`", latest - 1);
    assert!(err.contains(&behind), "{err}");
    sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, '2026-11-29T00:00:00.000000Z')")
        .bind(latest)
        .execute(&mut raw)
        .await
        .unwrap();
    assert!(cli.ok(&["keys", "list"]).starts_with("PREFIX"));
    // `serve --migrate` on a store with no schema makes it, then serves.
    let cli = Cli::bare();
    let log = cli.dir.path().join("serve.log");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_mds"))
        .args(["serve", "--migrate", "--listen", "127.0.0.1:0"])
        .env("MDS_DATABASE_URL", cli.db())
        .env("MDS_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // Until it says it serves, which it does once migrated, or exits. No
    // shorter bound than a hang's: each migration commits with an fsync,
    // and on a disk still writing back a build (a fresh clone's first test
    // run) one fsync can take seconds.
    let t = std::time::Instant::now();
    loop {
        let served = std::fs::read_to_string(&log).unwrap_or_default();
        if served.contains("serving") {
            break;
        }
        let exited = serve.try_wait().unwrap();
        assert!(exited.is_none(), "serve --migrate exited ({exited:?}): {served}");
        assert!(t.elapsed() < std::time::Duration::from_secs(300), "serve --migrate hangs: {served}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(cli.ok(&["keys", "list"]).starts_with("PREFIX"), "migrated before it serves");
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(cli.ok(&["migrate"]).starts_with("schema is up to date"));
}

#[test]
fn migrate_is_idempotent_and_tiers_are_data() {
    let cli = Cli::new();
    cli.ok(&["migrate"]);
    cli.ok(&["migrate"]);
    let list = cli.ok(&["tiers", "list"]);
    for t in ["evaluation", "starter", "pro", "enterprise"] {
        assert!(list.contains(t), "{list}");
    }
    let e = cli.fails(&["tiers", "set", "gold"]);
    assert!(e.contains("--rate-limit-per-minute"), "{e}");
    assert!(
        cli.ok(&["tiers", "set", "gold", "--rate-limit-per-minute", "120", "--monthly-quota", "200000"])
            .starts_with("created")
    );
    assert!(cli.ok(&["tiers", "set", "gold", "--monthly-quota", "300000"]).starts_with("updated"));
    let json = cli.ok(&["tiers", "list", "--json"]);
    let gold: serde_json::Value = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["name"] == "gold")
        .unwrap();
    assert_eq!(gold, serde_json::json!({"name": "gold", "rate_limit_per_minute": 120, "monthly_quota": 300000}));
    let o = cli.run(&["tiers", "set", "gold", "--rate-limit-per-minute", "0"]);
    assert!(!o.status.success());
    let o = cli.run(&["tiers", "set", "Bad Name", "--rate-limit-per-minute", "1", "--monthly-quota", "1"]);
    assert!(!o.status.success());
}

#[test]
fn accounts_and_entitlement() {
    let cli = Cli::new();
    cli.ok(&["accounts", "create", "acme"]);
    let e = cli.fails(&["accounts", "create", "acme"]);
    assert!(e.contains("already exists"), "{e}");
    cli.ok(&["accounts", "set", "acme", "--entitled", "false"]);
    let e = cli.fails(&["accounts", "set", "nobody", "--entitled", "true"]);
    assert!(e.contains("nobody"), "{e}");
    let v: serde_json::Value = serde_json::from_str(cli.ok(&["accounts", "list", "--json"]).trim()).unwrap();
    assert_eq!(v["name"], "acme");
    assert_eq!(v["entitled"], false);
    let table = cli.ok(&["accounts", "list"]);
    assert!(table.lines().next().unwrap().starts_with("NAME"));
}

/// The list commands walk the admin lists' pages (200 at a time) to the
/// end: every account and key once, in order.
#[tokio::test]
async fn list_commands_print_every_page() {
    let cli = Cli::new();
    cli.ok(&["migrate"]);
    let store = cli.store().await;
    let now = chrono::Utc::now();
    let mut names: Vec<String> = (0..205).map(|i| format!("a{i:03}")).collect();
    for n in &names {
        store.create_account(&mds_domain::AccountName::parse(n).unwrap(), now).await.unwrap();
    }
    for _ in 0..203 {
        let key = mds_domain::ApiKey::generate(mds_domain::Environment::Live);
        let new = mds_store::KeyRecord {
            prefix: key.prefix(),
            hash: key.hash(),
            account: mds_domain::AccountName::parse("a007").unwrap(),
            tier: mds_domain::TierName::parse("pro").unwrap(),
            environment: mds_domain::Environment::Live,
            created_at: now,
            revoked_at: None,
            expires_at: None,
        };
        store.create_key(&new).await.unwrap();
    }
    let field = |out: &str, f: &str| -> Vec<String> {
        out.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()[f].as_str().unwrap().to_owned())
            .collect()
    };
    names.sort();
    assert_eq!(field(&cli.ok(&["accounts", "list", "--json"]), "name"), names);
    let keys: Vec<String> = store.keys(None).await.unwrap().into_iter().map(|k| k.prefix.as_str().to_owned()).collect();
    assert_eq!(keys.len(), 203);
    assert_eq!(field(&cli.ok(&["keys", "list", "--json"]), "key_prefix"), keys);
    assert_eq!(field(&cli.ok(&["keys", "list", "--account", "a007", "--json"]), "key_prefix"), keys);
    assert_eq!(cli.ok(&["keys", "list", "--account", "a008", "--json"]), "");
}

#[tokio::test]
async fn keys_are_printed_once_and_stored_as_hashes() {
    let cli = Cli::new();
    cli.ok(&["accounts", "create", "acme"]);
    let out = cli.ok(&["keys", "create", "--account", "acme", "--tier", "pro"]);
    let key = out.trim_end().lines().last().unwrap();
    let parsed = mds_domain::ApiKey::parse(key).expect("the last line is the key alone");
    assert_eq!(parsed.environment(), mds_domain::Environment::Live);
    let out = cli.ok(&["keys", "create", "--account", "acme", "--tier", "starter", "--environment", "test", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let test_key = v["key"].as_str().unwrap();
    assert!(test_key.starts_with("mds_test_"));
    assert_eq!(v["key_prefix"], &test_key[..17]);
    // The key is nowhere in the database file; its prefix is.
    let db = std::fs::read(cli.db()).unwrap_or_default();
    let wal = std::fs::read(cli.db().with_extension("db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(!contains(bytes, key.as_bytes()) && !contains(bytes, test_key.as_bytes()));
    }
    let list = cli.ok(&["keys", "list", "--account", "acme"]);
    assert!(list.contains(&key[..17]) && !list.contains(key));
    cli.fails(&["keys", "create", "--account", "nobody", "--tier", "pro"]);
    cli.fails(&["keys", "create", "--account", "acme", "--tier", "platinum"]);
    cli.fails(&["keys", "list", "--account", "nobody"]);
    let out = cli.ok(&["keys", "revoke", &key[..17]]);
    assert!(out.starts_with("revoked"), "{out}");
    let out = cli.ok(&["keys", "revoke", &key[..17]]);
    assert!(out.contains("already revoked"), "{out}");
    let e = cli.fails(&["keys", "revoke", "mds_live_ZZZ"]);
    assert!(e.contains("no key"), "{e}");
    assert!(!cli.run(&["keys", "revoke", "not-a-prefix"]).status.success());
    let store = cli.store().await;
    let keys = store.keys(None).await.unwrap();
    assert_eq!(keys.len(), 2);
    assert!(keys.iter().find(|k| k.prefix.as_str() == &key[..17]).unwrap().revoked_at.is_some());
}

#[tokio::test]
async fn keys_expire_and_roll_with_one_line_refusals() {
    let cli = Cli::new();
    cli.ok(&["accounts", "create", "acme"]);
    let e =
        cli.fails(&["keys", "create", "--account", "acme", "--tier", "pro", "--expires-at", "2020-01-01T00:00:00Z"]);
    assert!(e.contains("expires_at must be in the future"), "{e}");
    let o = cli.run(&["keys", "create", "--account", "acme", "--tier", "pro", "--expires-at", "tomorrow"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--expires-at"));
    let json = cli.ok(&[
        "keys",
        "create",
        "--account",
        "acme",
        "--tier",
        "pro",
        "--expires-at",
        "2099-01-01T00:00:00Z",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["expires_at"], "2099-01-01T00:00:00+00:00");
    let old = v["key"].as_str().unwrap().to_owned();

    let new = cli.ok(&["keys", "roll", &old[..17], "--expires-in", "3600"]).trim().to_owned();
    assert!(new.starts_with("mds_live_") && new != old);
    let json = cli.ok(&["keys", "roll", &new[..17], "--expires-in", "0", "--json"]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["rolled_key_prefix"], &new[..17]);
    assert_eq!((v["account"].as_str(), v["tier"].as_str()), (Some("acme"), Some("pro")));
    assert!(v["key"].as_str().unwrap().starts_with(v["key_prefix"].as_str().unwrap()));
    // The key rolled with no window has expired: it cannot be rolled again.
    let e = cli.fails(&["keys", "roll", &new[..17]]);
    assert!(e.contains("has expired"), "{e}");
    let e = cli.fails(&["keys", "roll", "mds_live_ZZZZZZZZ"]);
    assert!(e.contains("no key"), "{e}");
    let list = cli.ok(&["keys", "list", "--json"]);
    let keys: Vec<serde_json::Value> = list.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(keys.len(), 3, "a refused roll writes nothing");
    let first = keys.iter().find(|k| k["key_prefix"] == old[..17]).unwrap();
    assert_ne!(first["expires_at"], "2099-01-01T00:00:00+00:00", "the window, sooner than its own expiry");
}

#[tokio::test]
async fn admin_tokens_are_printed_once_and_every_change_is_audited() {
    let cli = Cli::new();
    let out = cli.ok(&["admin-tokens", "create", "billing"]);
    let token = out.trim_end().lines().last().unwrap().to_owned();
    mds_domain::AdminToken::parse(&token).expect("the last line is the token alone");
    let db = std::fs::read(cli.db()).unwrap_or_default();
    let wal = std::fs::read(cli.db().with_extension("db-wal")).unwrap_or_default();
    assert!(!contains(&db, token.as_bytes()) && !contains(&wal, token.as_bytes()), "stored hashed");
    let e = cli.fails(&["admin-tokens", "create", "billing"]);
    assert!(e.contains("exists"), "{e}");
    cli.fails(&["admin-tokens", "create", "cli"]);
    let list = cli.ok(&["admin-tokens", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_str(list.trim()).unwrap();
    assert_eq!(v["name"], "billing");
    assert_eq!(v["prefix"], &token[..18]);
    assert!(!list.contains(&token));
    cli.ok(&["admin-tokens", "revoke", "billing"]);
    cli.fails(&["admin-tokens", "revoke", "billing"]);
    let table = cli.ok(&["admin-tokens", "list"]);
    assert!(table.lines().nth(1).unwrap().starts_with("billing"), "{table}");

    // The CLI's changes of tiers, accounts and keys are in the audit log as
    // made by `cli`, with the records before and after.
    cli.ok(&["tiers", "set", "gold", "--rate-limit-per-minute", "10", "--monthly-quota", "100"]);
    cli.ok(&["tiers", "set", "gold", "--monthly-quota", "200"]);
    cli.ok(&["accounts", "create", "acme"]);
    cli.ok(&["accounts", "set", "acme", "--entitled", "false"]);
    let key = cli.ok(&["keys", "create", "--account", "acme", "--tier", "gold"]);
    cli.ok(&["keys", "revoke", &key.trim()[..17]]);
    cli.ok(&["keys", "revoke", &key.trim()[..17]]);
    // Refused commands write no entry.
    cli.fails(&["accounts", "create", "acme"]);
    cli.fails(&["keys", "create", "--account", "acme", "--tier", "platinum"]);
    let store = cli.store().await;
    let log = store.audit_log(None, 100).await.unwrap();
    let seen: Vec<(&str, &str, &str)> =
        log.iter().rev().map(|e| (e.actor.as_str(), e.action.as_str(), e.target.as_str())).collect();
    let prefix = format!("key:{}", &key.trim()[..17]);
    assert_eq!(
        seen,
        [
            ("cli", "admin_token.create", "admin_token:billing"),
            ("cli", "admin_token.revoke", "admin_token:billing"),
            ("cli", "tier.create", "tier:gold"),
            ("cli", "tier.update", "tier:gold"),
            ("cli", "account.create", "account:acme"),
            ("cli", "account.update", "account:acme"),
            ("cli", "key.create", prefix.as_str()),
            ("cli", "key.revoke", prefix.as_str()),
        ]
    );
    let update = &log[4];
    assert_eq!(update.before.as_ref().unwrap()["monthly_quota"], 100);
    assert_eq!(update.after.as_ref().unwrap()["monthly_quota"], 200);
    let entitled = &log[2];
    assert_eq!(entitled.before.as_ref().unwrap()["entitled"], true);
    assert_eq!(entitled.after.as_ref().unwrap()["entitled"], false);
    assert!(log[0].before.as_ref().unwrap()["revoked_at"].is_null());
    assert!(log[0].after.as_ref().unwrap()["revoked_at"].is_string());
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn company_imports_are_all_or_nothing_with_every_bad_line() {
    let cli = Cli::new();
    let good = cli.write(
        "good.csv",
        b"isin,ticker,name,industry,sector,is_bse,is_nse,market_cap_band,logo_url\n\
          INE117A01022,ABB,ABB India Limited,Electrical Equipment,Capital Goods,true,true,large_cap,\n\
          INE144J01027,20MICRONS,20 Microns Limited,,,true,false,,https://example.com/20m.svg\n",
    );
    let out = cli.ok(&["import", "companies", &good]);
    assert!(out.contains("imported 2 companies") && out.contains("2 new"), "{out}");
    let out = cli.ok(&["import", "companies", &good]);
    assert!(out.contains("(0 new, 0 updated, 2 unchanged)"), "the same rows again change nothing: {out}");
    let bad = cli.write(
        "bad.csv",
        b"isin,ticker,name,is_bse,is_nse\n\
          INE002A01018,RELIANCE,Reliance Industries,true,true\n\
          INE002A01019,BADISIN,Bad Check Digit,true,true\n\
          INE009A01021,INFY,Infosys,maybe,true\n\
          INE002A01018,RELIANCE,Reliance Again,true,true\n",
    );
    let e = cli.fails(&["import", "companies", &bad]);
    for line in [":3:", ":4:", ":5:"] {
        assert!(e.contains(line), "{line} in {e}");
    }
    assert!(e.contains("nothing was imported"));
    let companies = cli.store().await.companies().await.unwrap();
    assert_eq!(companies.len(), 2, "the good row of the bad file was not written");
    for (name, content) in [
        ("empty.csv", &b""[..]),
        ("header.csv", b"isin,ticker,name,is_bse,is_nse\n"),
        ("wrong.csv", b"isin,symbol,name,is_bse,is_nse\nINE002A01018,RELIANCE,R,true,true\n"),
        ("latin1.csv", b"isin,ticker,name,is_bse,is_nse\nINE002A01018,RELIANCE,Nestl\xe9,true,true\n"),
    ] {
        let f = cli.write(name, content);
        cli.fails(&["import", "companies", &f]);
    }
    cli.fails(&["import", "companies", "/no/such/file.csv"]);
    assert_eq!(cli.store().await.companies().await.unwrap().len(), 2);
}

#[tokio::test]
async fn news_and_exchange_imports() {
    let cli = Cli::new();
    let news = cli.write(
        "news.jsonl",
        br#"{"slug":"abb-wins-order","headline":"ABB wins order","tags":["orders"],"published_at":"2026-11-20T09:15:00+05:30"}
{"slug":"second","headline":"Second"}
"#,
    );
    let out = cli.ok(&["import", "news", &news]);
    assert!(out.contains("imported 2 articles"), "{out}");
    let store = cli.store().await;
    let a = store.article(&mds_domain::Slug::parse("abb-wins-order").unwrap()).await.unwrap().unwrap();
    assert_eq!(mds_domain::time::format_utc(&a.published_at.unwrap()), "2026-11-20T03:45:00+00:00");
    let bad = cli.write(
        "bad.jsonl",
        b"{\"slug\":\"ok-one\",\"headline\":\"x\"}\n{\"slug\":\"Bad Slug\",\"headline\":\"x\"}\nnot json\n",
    );
    let e = cli.fails(&["import", "news", &bad]);
    assert!(e.contains(":2:") && e.contains(":3:"), "{e}");
    assert_eq!(store.article_count().await.unwrap(), 2);

    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo");
    let p = |f: &str| demo.join(f).to_str().unwrap().to_owned();
    let out = cli.ok(&[
        "import",
        "exchanges",
        "--nse",
        &p("nse_EQUITY_L_2024-01.csv"),
        "--bse",
        &p("bse_Equity_2024-01.csv"),
        "--mcap",
        &p("nse_mcap_2024-03-28.csv"),
        "--as-of",
        "2024-01-30",
    ]);
    assert!(out.contains("skipped"), "{out}");
    let companies = store.companies().await.unwrap();
    // The lists' companies, each listing last seen in these lists.
    let mut want = mds_import::demo_companies();
    for l in want.iter_mut().flat_map(|c| &mut c.details.listings) {
        l.last_seen = chrono::NaiveDate::from_ymd_opt(2024, 1, 30);
    }
    assert_eq!(companies, want);
}

/// `mds import exchanges` with `--as-of` (or the day in the file's name),
/// `--nse-sme` and no `--bse`, then `mds import nse-changes`: a bad line is
/// named and nothing is imported, a re-import changes nothing, an older
/// snapshot is refused naming both days.
#[tokio::test]
async fn identity_imports_from_the_command_line() {
    let cli = Cli::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo");
    let p = |f: &str| demo.join(f).to_str().unwrap().to_owned();
    let (nse24, bse24) = (p("nse_EQUITY_L_2024-01.csv"), p("bse_Equity_2024-01.csv"));
    let first: [&str; 8] = ["import", "exchanges", "--nse", &nse24, "--bse", &bse24, "--as-of", "2024-01-30"];
    let out = cli.ok(&first);
    assert!(out.contains("as of 2024-01-30") && out.contains("2 snapshots added"), "{out}");
    let out = cli.ok(&[
        "import",
        "exchanges",
        "--nse",
        &p("nse_EQUITY_L_2026-05-17.csv"),
        "--nse-sme",
        &p("nse_SME_EQUITY_L_2026-05-17.csv"),
    ]);
    assert!(out.contains("as of 2026-05-17"), "{out}");
    let store = cli.store().await;
    let observed = store.identity_events().await.unwrap();

    let bad = cli.write("symbolchange.csv", b"ETERNAL LIMITED,ZOMATO,ETERNAL,09-APR-2025\nX,A,B,2025-13-01\n");
    let e = cli.fails(&["import", "nse-changes", "--symbols", &bad, "--names", &p("nse_namechange_2026-05-17.csv")]);
    assert!(e.contains("symbolchange.csv:2:") && e.contains("nothing was imported"), "{e}");
    assert_eq!(store.identity_events().await.unwrap(), observed);

    let changes: [&str; 6] = [
        "import",
        "nse-changes",
        "--symbols",
        &p("nse_symbolchange_2026-05-17.csv"),
        "--names",
        &p("nse_namechange_2026-05-17.csv"),
    ];
    let out = cli.ok(&changes);
    assert!(out.contains("3076 new to the store"), "{out}");
    let events = store.identity_events().await.unwrap();
    assert_ne!(events, observed);
    let g = store.generations().await.unwrap();
    let out = cli.ok(&changes);
    assert!(out.contains("0 new to the store") && out.contains("no company changed"), "{out}");

    let e = cli.fails(&first);
    assert!(e.contains("2024-01-30") && e.contains("2026-05-17") && e.contains("nothing was imported"), "{e}");
    assert_eq!(store.generations().await.unwrap(), g);
    assert_eq!(store.identity_events().await.unwrap(), events);

    // A name with only a month (section 10.3): refused, asking for
    // --as-of, nothing written.
    let e = cli.fails(&["import", "exchanges", "--nse", &nse24]);
    assert!(e.contains("--as-of") && e.contains("2024-01") && e.contains("nothing was imported"), "{e}");
    assert_eq!(store.generations().await.unwrap(), g);
    assert_eq!(store.snapshot_days().await.unwrap().len(), 4);

    // No --as-of and no day in the name: today, said on stderr.
    let undated = cli.write("EQUITY_L.csv", &std::fs::read(p("nse_EQUITY_L_2026-05-17.csv")).unwrap());
    let o = cli.run(&["import", "exchanges", "--nse", &undated]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("as of today"));
}

/// `mds import nse-bhavcopy PATH...`, a registered format like the others:
/// a day of each format from the repository's archives (`data/prices/`),
/// symbol-keyed rows resolved through the 2026 lists, the summary on
/// stdout, `--verbose` listing the unresolved rows; the same files again
/// change nothing; a bad file is named with its line and nothing is
/// written.
#[tokio::test]
async fn price_imports_from_the_command_line() {
    let cli = Cli::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo");
    let p = |f: &str| demo.join(f).to_str().unwrap().to_owned();
    cli.ok(&["import", "exchanges", "--nse", &p("nse_EQUITY_L_2026-05-17.csv"), "--as-of", "2026-05-17"]);
    let help = String::from_utf8(cli.run(&["import", "--help"]).stdout).unwrap();
    assert!(help.contains("nse-bhavcopy"), "{help}");

    let prices = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/prices");
    let dir = cli.dir.path().join("days");
    std::fs::create_dir(&dir).unwrap();
    let archives = [
        prices.join("nse_udiff_2025-01-01_2025-03-07.tar.zst"),
        prices.join("nse_sec_bhavdata_full_2025-08-21_2026-08-21.tar.zst"),
    ];
    mds_import::bhavcopy::archive::for_each_file(&archives, &mut |name, bytes| {
        if name.ends_with("2025-02-12.csv") || name.ends_with("2025-08-21.csv") {
            std::fs::write(dir.join(name.rsplit('/').next().unwrap()), bytes).unwrap();
        }
        Ok(())
    })
    .unwrap();
    let days = dir.to_str().unwrap();
    let out = cli.ok(&["import", "nse-bhavcopy", days, "--verbose"]);
    assert!(out.contains("read 2 files (1 UDiFF, 1 sec_bhavdata_full) of 2 days"), "{out}");
    assert!(out.contains("2 new + 0 replaced + 0 unchanged"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("unresolved: ")), "--verbose lists them: {out}");
    let store = cli.store().await;
    let held = store.price_days().await.unwrap();
    assert_eq!(held.len(), 2);
    let out = cli.ok(&["import", "nse-bhavcopy", days]);
    assert!(out.contains("0 new + 0 replaced + 2 unchanged"), "{out}");
    assert!(!out.contains("unresolved: "), "{out}");

    let bad = cli.write(
        "bad.csv",
        b"SYMBOL,SERIES,DATE1,PREV_CLOSE,OPEN_PRICE,HIGH_PRICE,LOW_PRICE,LAST_PRICE,CLOSE_PRICE,AVG_PRICE,\
          TTL_TRD_QNTY,TURNOVER_LACS,NO_OF_TRADES,DELIV_QTY,DELIV_PER\n\
          RELIANCE, EQ, 22-Aug-2025,1400,1401,1410,1395,1405,abc,1404,100,14.04,10, 50, 50.00\n",
    );
    let e = cli.fails(&["import", "nse-bhavcopy", days, &bad]);
    assert!(e.contains("bad.csv:2: CLOSE_PRICE") && e.contains("nothing was imported"), "{e}");
    assert_eq!(store.price_days().await.unwrap(), held);
    let e = cli.fails(&["import", "nse-bhavcopy", "/no/such/dir"]);
    assert!(e.contains("/no/such/dir") && e.contains("nothing was imported"), "{e}");
}

#[tokio::test]
async fn output_into_a_closed_pipe_ends_quietly() {
    let cli = Cli::new();
    cli.ok(&["migrate"]);
    // More output than a pipe buffers (64 KiB), so the writer meets the closed pipe.
    let store = cli.store().await;
    for i in 0..2_000 {
        let name = mds_domain::AccountName::parse(&format!("account-with-a-long-name-{i:05}")).unwrap();
        store.create_account(&name, chrono::Utc::now()).await.unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_mds"))
        .args(["accounts", "list"])
        .env("MDS_DATABASE_URL", cli.db())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close the pipe, as `| head -1` does.
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(first.starts_with("NAME"));
    assert!(out.status.success(), "{:?}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

/// What a store holds that an import could change: its generations, its
/// companies, and how many articles it has and those of the demo file.
#[derive(Debug, PartialEq)]
struct Held {
    generations: mds_store::Generations,
    companies: Vec<mds_domain::Company>,
    articles: u64,
    demo_articles: Vec<Option<mds_domain::Article>>,
}

async fn held(store: &dyn mds_store::Store) -> Held {
    let mut demo_articles = Vec::new();
    for a in mds_import::demo_articles() {
        demo_articles.push(store.article(&a.slug).await.unwrap());
    }
    Held {
        generations: store.generations().await.unwrap(),
        companies: store.companies().await.unwrap(),
        articles: store.article_count().await.unwrap(),
        demo_articles,
    }
}

/// An import file of the demo data's first lines with one line replaced by
/// arbitrary text, or one byte set to any value, or cut short; or, so that
/// accepted files are tried too, one line dropped, or the file as it is.
fn damaged(base: Vec<u8>) -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let line = (any::<proptest::sample::Index>(), prop_oneof![any::<String>(), "[a-z0-9,\":{} -]{0,40}"]);
    let byte = (any::<proptest::sample::Index>(), any::<u8>());
    (0..5u8, line, byte, any::<proptest::sample::Index>()).prop_map(move |(how, (at, text), (i, b), cut)| {
        let mut lines: Vec<Vec<u8>> = base.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        match how {
            0 => {
                let at = at.index(lines.len());
                lines[at] = text.into_bytes();
                lines.join(&b'\n')
            }
            1 => {
                let mut f = base.clone();
                let i = i.index(f.len());
                f[i] = b;
                f
            }
            2 => base[..cut.index(base.len())].to_vec(),
            3 => {
                lines.remove(1 + at.index(lines.len() - 1));
                lines.join(&b'\n')
            }
            _ => base.clone(),
        }
    })
}

/// Whatever an import file holds, `mds import` writes what it says or,
/// refusing it, nothing: every file kind, on a real SQLite store that
/// already holds data, the store compared before and after each run.
#[test]
fn a_refused_import_writes_nothing() {
    use proptest::prelude::*;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let cli = Cli::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo");
    let head = |file: &str, n: usize| -> Vec<u8> {
        let bytes = std::fs::read(demo.join(file)).unwrap();
        bytes.split_inclusive(|&b| b == b'\n').take(n).flatten().copied().collect()
    };
    let (nse, bse, mcap) =
        (head("nse_EQUITY_L_2024-01.csv", 8), head("bse_Equity_2024-01.csv", 8), head("nse_mcap_2024-03-28.csv", 8));
    let companies: Vec<_> = mds_import::demo_companies().into_iter().take(5).collect();
    let mut csv = mds_import::csv_header();
    for c in &companies {
        csv = format!("{csv}\n{}", mds_import::csv_row(c));
    }
    let jsonl: String = companies.iter().map(|c| serde_json::to_string(c).unwrap() + "\n").collect();
    let news = head("news.jsonl", 3);
    // The store holds data already, so "nothing written" is not "empty".
    cli.ok(&["import", "news", &cli.write("news.jsonl", &head("news.jsonl", 2))]);
    cli.ok(&[
        "import",
        "companies",
        &cli.write("c.csv", b"isin,ticker,name,is_bse,is_nse\nINE117A01022,ABB,ABB India Limited,true,true\n"),
    ]);
    let store = rt.block_on(cli.store());

    let files = prop_oneof![
        damaged(csv.into_bytes()).prop_map(|f| ("companies", f)),
        damaged(jsonl.into_bytes()).prop_map(|f| ("companies", f)),
        damaged(news).prop_map(|f| ("news", f)),
        damaged(nse.clone()).prop_map(|f| ("nse", f)),
        damaged(bse.clone()).prop_map(|f| ("bse", f)),
        damaged(mcap.clone()).prop_map(|f| ("mcap", f)),
    ];
    let config = ProptestConfig { cases: 36, failure_persistence: None, ..ProptestConfig::default() };
    let (refused, accepted) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    proptest::test_runner::TestRunner::new(config)
        .run(&files, |(kind, bytes)| {
            let before = rt.block_on(held(&*store));
            let file = cli.write("import.file", &bytes);
            let (ok_nse, ok_bse, ok_mcap) =
                (cli.write("nse.csv", &nse), cli.write("bse.csv", &bse), cli.write("m.csv", &mcap));
            let args: Vec<&str> = match kind {
                "companies" | "news" => vec!["import", kind, &file],
                "nse" => vec!["import", "exchanges", "--nse", &file, "--bse", &ok_bse, "--mcap", &ok_mcap],
                "bse" => vec!["import", "exchanges", "--nse", &ok_nse, "--bse", &file, "--mcap", &ok_mcap],
                _ => vec!["import", "exchanges", "--nse", &ok_nse, "--bse", &ok_bse, "--mcap", &file],
            };
            let out = cli.run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            prop_assert!(!stderr.contains("panicked"), "{stderr}");
            let after = rt.block_on(held(&*store));
            if out.status.success() {
                accepted.set(accepted.get() + 1);
                if kind == "companies" {
                    for c in mds_import::parse_companies(&bytes).unwrap() {
                        let stored = after.companies.iter().find(|s| s.isin == c.isin);
                        prop_assert_eq!(stored.map(|s| (&s.ticker, &s.name)), Some((&c.ticker, &c.name)));
                    }
                }
                if kind == "news" {
                    for a in mds_import::parse_articles(&bytes).unwrap() {
                        let stored = rt.block_on(store.article(&a.slug)).unwrap();
                        prop_assert_eq!(stored.map(|s| s.headline), Some(a.headline));
                    }
                }
            } else {
                refused.set(refused.get() + 1);
                prop_assert!(stderr.contains("nothing was imported"), "{stderr}");
                prop_assert_eq!(&after, &before, "a refused {} import wrote: {}", kind, stderr);
            }
            Ok(())
        })
        .unwrap();
    let (refused, accepted) = (refused.get(), accepted.get());
    assert!(refused > 0 && accepted > 0, "both sides were tried: {refused} refused, {accepted} accepted");
}

/// A bad line after the first chunk the import has handed to the store
/// (5,000 articles) rolls back those chunks: nothing is written, and every
/// problem is reported with its line.
#[tokio::test]
async fn a_news_file_bad_after_its_first_chunk_writes_nothing() {
    let cli = Cli::new();
    let mut file = String::new();
    for i in 0..5_200 {
        file.push_str(&format!("{{\"slug\":\"article-{i}\",\"headline\":\"Headline {i}\"}}\n"));
    }
    file.push_str("{\"slug\":\"article-7\",\"headline\":\"again\"}\n");
    let path = cli.write("late.jsonl", file.as_bytes());
    let e = cli.fails(&["import", "news", &path]);
    assert!(e.contains(":5201: duplicate slug article-7: it is already on line 8"), "{e}");
    assert!(e.contains("nothing was imported"), "{e}");
    assert_eq!(cli.store().await.article_count().await.unwrap(), 0);

    let good = cli.write("good.jsonl", file.lines().take(5_200).collect::<Vec<_>>().join("\n").as_bytes());
    let out = cli.ok(&["import", "news", &good]);
    assert!(out.contains("imported 5200 articles"), "{out}");
    assert_eq!(cli.store().await.article_count().await.unwrap(), 5_200);
}

/// `mds import nse-actions` and `bse-actions` on the real files of
/// `data/actions`, after the demo identity data: the summary adds up,
/// a re-import changes nothing, BSE's publications join NSE's actions,
/// unresolved rows are listed by `--verbose`, and a malformed line is
/// refused with its number, nothing written.
#[tokio::test]
async fn action_imports_resolve_merge_and_are_idempotent() {
    let cli = Cli::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let p = |f: &str| root.join(f).to_str().unwrap().to_owned();
    cli.ok(&[
        "import",
        "exchanges",
        "--nse",
        &p("demo/nse_EQUITY_L_2024-01.csv"),
        "--bse",
        &p("demo/bse_Equity_2024-01.csv"),
        "--as-of",
        "2024-01-31",
    ]);
    cli.ok(&["import", "exchanges", "--nse", &p("demo/nse_EQUITY_L_2026-05-17.csv")]);
    cli.ok(&["import", "nse-changes", "--symbols", &p("demo/nse_symbolchange_2026-05-17.csv")]);
    let nse = [
        "import",
        "nse-actions",
        &p("actions/nse_CF-CA-equities_2016-01-05_to_2025-07-18.csv.zst"),
        &p("actions/nse_CF-CA-equities_2025-07-15_to_2026-07-15.csv.zst"),
    ];
    let out = cli.ok(&nse);
    let num = |out: &str, before: &str| -> u64 {
        let at = out.find(before).unwrap_or_else(|| panic!("{before:?} in {out}"));
        out[..at].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty()).unwrap().parse().unwrap()
    };
    assert_eq!(num(&out, " rows from"), num(&out, " resolved (") + num(&out, " unresolved"), "{out}");
    let actions = num(&out, " from the rows");
    assert_eq!(actions, num(&out, " distinct") + num(&out, " repeated") + num(&out, " merged across"), "{out}");
    assert_eq!(num(&out, " new,"), num(&out, " distinct"), "{out}");
    let store = cli.store().await;
    let stored = store.action_count().await.unwrap();
    assert_eq!(stored, num(&out, " distinct"));
    // Issue 42's target: at least 99% of the EQ rows going ex from 2024 on
    // (the span the lists cover) resolved to an ISIN.
    let since = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
    let mut eq_rows = std::collections::HashSet::new();
    for f in &nse[2..] {
        let bytes = mds_import::format::Source::Path(PathBuf::from(*f)).decompressed().unwrap();
        for r in mds_import::actions::nse::read(&bytes).unwrap() {
            if r.series.as_deref() == Some("EQ") && r.ex_date >= since {
                eq_rows.insert((r.symbol.as_str().to_owned(), r.ex_date, r.purpose));
            }
        }
    }
    let kept = store.kept_unresolved().await.unwrap();
    let unresolved =
        kept.iter().filter(|k| eq_rows.contains(&(k.row.code.clone(), k.row.ex_date, k.row.purpose.clone()))).count();
    assert!(eq_rows.len() > 4000, "{} EQ rows from 2024 on", eq_rows.len());
    assert!(unresolved * 100 <= eq_rows.len(), "{unresolved} of {} EQ rows from 2024 on unresolved", eq_rows.len());
    // Again: nothing changes.
    let again = cli.ok(&nse);
    assert!(again.contains(" 0 new, 0 changed,") && again.contains("0 new to the store"), "{again}");
    // BSE's: some join NSE's actions (changed), the rest are new.
    let bse = cli.ok(&[
        "import",
        "bse-actions",
        "--verbose",
        &p("actions/bse_Corporate_Actions_2025-07-15_to_2026-07-15.csv.zst"),
        &p("actions/bse_Corporate_Actions_2026-07-23_to_2026-08-31.csv.zst"),
    ]);
    assert!(num(&bse, " changed,") > 0 && bse.contains("unresolved: "), "{bse}");
    let both = store.action_page(&mds_store::ActionFilter::default(), None, 100_000).await.unwrap();
    assert!(both.iter().any(|a| a.sources.len() == 2));
    let count = store.action_count().await.unwrap();
    // A malformed line: its number, nothing written.
    let bad = cli.write(
        "bad.csv",
        b"\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"\n\"INFY\",\"Infosys\",\"EQ\",\"Dividend - Rs 99 Per Share\",\"5\",\"01-Jan-2026\",\"-\",\"-\",\"-\"\n\"INFY\",\"Infosys\",\"EQ\",\"Bonus 1:1\",\"5\",\"2026-13-01\",\"-\",\"-\",\"-\"\n",
    );
    let e = cli.fails(&["import", "nse-actions", &bad]);
    assert!(e.contains("bad.csv:3:") && e.contains("nothing was imported"), "{e}");
    assert_eq!(store.action_count().await.unwrap(), count);
}

/// `--database` is offered only where a command opens the store: the client
/// commands call the API and refuse it, in one line, whichever place it is
/// written; the environment's URL (an operator's shell) does not trouble them.
#[test]
fn client_commands_take_no_database() {
    let cli = Cli::bare();
    for command in [&["get", "usage"][..], &["events", "tail"], &["mcp"]] {
        let mut before = vec!["--database", "sqlite://elsewhere.db"];
        before.extend_from_slice(command);
        let err = cli.fails(&before);
        assert!(err.contains("opens no database"), "{command:?}: {err}");
        let mut after = command.to_vec();
        after.extend_from_slice(&["--database", "sqlite://elsewhere.db"]);
        let o = cli.run(&after);
        assert!(!o.status.success(), "{after:?} takes no --database");
        assert!(String::from_utf8_lossy(&o.stderr).contains("unexpected argument '--database'"), "{after:?}");
        let help = cli.ok(&[command[0], "--help"]);
        assert!(!help.contains("--database"), "`mds {} --help` offers no --database: {help}", command[0]);
    }
    assert!(!cli.dir.path().join("elsewhere.db").exists());
    // A store command still takes it.
    assert!(cli.ok(&["--help"]).contains("--database"));
}

//! Test harness: the real server on a loopback port over a real SQLite file,
//! one database per test (zero-to-production's `spawn_app`).

#![allow(dead_code, unreachable_pub)]

pub mod cluster;
pub mod faults;
pub mod prices;
pub mod process;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use mds_domain::{AccountName, Article, Company, Environment, TierName};
use mds_http::{AppState, HttpConfig, Server};
use mds_store::{DatabaseUrl, Store};
use tempfile::TempDir;
use tokio::sync::oneshot;

/// A running server with its store and a valid key.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The bound address.
    pub addr: SocketAddr,
    /// The store the server reads.
    pub store: Arc<dyn Store>,
    /// A live key of account `acme` on tier `pro`.
    pub key: String,
    /// `http://127.0.0.1:PORT` of the admin listener, when
    /// [`Options::admin`] asked for one.
    pub admin_base: Option<String>,
    /// An HTTP client that does not decompress, so tests see the bytes.
    pub client: reqwest::Client,
    /// The database URL.
    pub url: DatabaseUrl,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _db: Arc<TestDatabase>,
}

/// Where a test's store lives; dropped with the test.
pub enum TestDatabase {
    /// A SQLite file in a temporary directory.
    Sqlite(TempDir),
    /// A PostgreSQL database of its own.
    Postgres(mds_testkit::pg::TestDb),
}

impl TestDatabase {
    /// A new empty database on the backend named by `MDS_TEST_BACKEND`
    /// (`postgres`, which needs `MDS_TEST_POSTGRES_URL`; anything else or
    /// unset: SQLite), so the same HTTP suites run on both backends.
    pub async fn create() -> (DatabaseUrl, TestDatabase) {
        if std::env::var("MDS_TEST_BACKEND").as_deref() == Ok("postgres") {
            let admin = mds_testkit::pg::admin_url().expect("MDS_TEST_BACKEND=postgres needs MDS_TEST_POSTGRES_URL");
            let db = mds_testkit::pg::TestDb::create(&admin).await;
            (db.url().clone(), TestDatabase::Postgres(db))
        } else {
            let dir = tempfile::tempdir().expect("temp dir");
            let url = DatabaseUrl::new(dir.path().join("mds.db").to_str().unwrap());
            (url, TestDatabase::Sqlite(dir))
        }
    }
}

/// Wraps the store the server gets.
pub type StoreWrapper = Box<dyn FnOnce(Arc<dyn Store>) -> Arc<dyn Store> + Send>;

/// Starts the app behind a fault injector, returned with it.
pub async fn spawn_faulty(config: HttpConfig) -> (TestApp, Arc<faults::Faulty>) {
    with_faults(Options { config, ..Options::default() }, spawn_with).await
}

/// What `start` starts with `opts`, its store behind a fault injector,
/// returned with it.
pub async fn with_faults<T, F: Future<Output = T>>(
    opts: Options,
    start: impl FnOnce(Options) -> F,
) -> (T, Arc<faults::Faulty>) {
    let slot = Arc::new(std::sync::Mutex::new(None));
    let s2 = slot.clone();
    let wrap: StoreWrapper = Box::new(move |s| {
        let f = faults::Faulty::new(s);
        *s2.lock().unwrap() = Some(f.clone());
        f
    });
    let started = start(Options { wrap: Some(wrap), ..opts }).await;
    let f = slot.lock().unwrap().clone().expect("wrapped");
    (started, f)
}

/// Options for [`spawn_with`].
pub struct Options {
    /// Companies loaded before the server starts.
    pub companies: Vec<Company>,
    /// Articles loaded before the server starts.
    pub articles: Vec<Article>,
    /// HTTP settings.
    pub config: HttpConfig,
    /// Wraps the store (e.g. in a fault injector) before the server gets it.
    pub wrap: Option<StoreWrapper>,
    /// Also serve the admin listener (on another port).
    pub admin: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            companies: mds_import::demo_companies(),
            articles: mds_import::demo_articles(),
            config: reloading_every(Duration::from_millis(100)),
            wrap: None,
            admin: false,
        }
    }
}

/// The default settings, but following the store every `interval`.
pub fn reloading_every(interval: Duration) -> HttpConfig {
    let mut config = HttpConfig::default();
    config.node.reload_interval = interval;
    config
}

/// Starts the app on the demo companies and articles.
pub async fn spawn() -> TestApp {
    spawn_with(Options::default()).await
}

/// Starts the app with options.
pub async fn spawn_with(opts: Options) -> TestApp {
    let (url, db) = TestDatabase::create().await;
    // As `mds serve` opens it: dated by the node's clock.
    let store = mds_store::open_with_clock(&url, opts.config.node.clock.clone()).await.expect("open store");
    store.migrate().await.expect("migrate");
    store.upsert_companies(&opts.companies).await.expect("companies");
    store.upsert_articles(&opts.articles).await.expect("articles");
    let account = AccountName::parse("acme").unwrap();
    store.create_account(&account, Utc::now()).await.unwrap();
    let key = new_key(&*store, "acme", "pro", Environment::Live).await;
    let mut config = opts.config;
    let served: Arc<dyn Store> = match opts.wrap {
        Some(w) => w(store.clone()),
        None => {
            // As `mds serve` does: deliveries open a pool of their own (a
            // wrapped store keeps them on the node's, faults and all).
            config.node.webhooks.database.get_or_insert_with(|| url.clone());
            store.clone()
        }
    };
    let state = AppState::load(served, config).await.expect("load state");
    let mut server = Server::bind("127.0.0.1:0".parse().unwrap(), state).await.expect("bind");
    if opts.admin {
        server = server.with_admin("127.0.0.1:0".parse().unwrap()).await.expect("bind admin");
    }
    let admin_base = server.admin_addr().map(|a| format!("http://{}", a.unwrap()));
    let addr = server.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async move {
        let _ = rx.await;
    }));
    TestApp {
        base: format!("http://{addr}"),
        addr,
        store,
        key,
        admin_base,
        client: reqwest::Client::builder().no_proxy().build().unwrap(),
        url,
        stop: Some(tx),
        task: Some(task),
        _db: Arc::new(db),
    }
}

/// A server on a given store, with its state at hand (for tests that run
/// several on one store, or reach into the node); stopped gracefully (its
/// final flush) by [`Node::stop`].
pub struct Node {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The server's state.
    pub state: AppState,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Node {
    /// Loads a node on `store` and serves it on a free loopback port.
    pub async fn start(store: Arc<dyn Store>, config: HttpConfig) -> Node {
        let state = AppState::load(store, config).await.expect("load state");
        let server = Server::bind(SocketAddr::from(([127, 0, 0, 1], 0)), state.clone()).await.expect("bind");
        let base = format!("http://{}", server.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Node { base, state, stop, task }
    }

    /// Stops the server and waits for it.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

/// Issues a key straight into the store and returns it.
pub async fn new_key(store: &dyn Store, account: &str, tier: &str, env: Environment) -> String {
    new_key_at(store, account, tier, env, Utc::now()).await
}

/// Issues a key created at a given instant, as `mds keys create` does.
pub async fn new_key_at(
    store: &dyn Store,
    account: &str,
    tier: &str,
    env: Environment,
    created_at: chrono::DateTime<Utc>,
) -> String {
    let (account, tier) = (AccountName::parse(account).unwrap(), TierName::parse(tier).unwrap());
    let key = mds_testkit::keys::issue_key(store, &account, &tier, env, created_at).await.expect("issue key");
    key.expose_secret().to_owned()
}

/// The value of series `name` (with its labels, as written) in the
/// Prometheus text `text`.
pub fn series(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.trim().parse::<f64>().ok()))
        .unwrap_or_else(|| panic!("no series {name}")) as u64
}

impl TestApp {
    /// The value of series `name` in the node's `/metrics`.
    pub async fn metric(&self, name: &str) -> u64 {
        series(&self.get_open("/metrics").await.text().await.expect("metrics"), name)
    }

    /// `GET path` with the app's key.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.get_with_key(path, &self.key).await
    }

    /// `GET path` with a given key.
    pub async fn get_with_key(&self, path: &str, key: &str) -> reqwest::Response {
        self.client.get(format!("{}{path}", self.base)).bearer_auth(key).send().await.expect("request")
    }

    /// `GET path` with the app's key and extra `headers`.
    pub async fn get_with_headers(&self, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        self.get_with_key_and_headers(path, &self.key, headers).await
    }

    /// `GET path` with a given key and extra `headers`.
    pub async fn get_with_key_and_headers(&self, path: &str, key: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut rb = self.client.get(format!("{}{path}", self.base)).bearer_auth(key);
        for (name, value) in headers {
            rb = rb.header(*name, *value);
        }
        rb.send().await.expect("request")
    }

    /// `GET path` without a key (the open routes).
    pub async fn get_open(&self, path: &str) -> reqwest::Response {
        self.client.get(format!("{}{path}", self.base)).send().await.expect("request")
    }

    /// `method url` (a whole URL, of either listener) with `token` as the
    /// bearer and `body`, if any, as JSON.
    pub async fn call(
        &self,
        method: reqwest::Method,
        url: &str,
        token: &str,
        body: Option<&serde_json::Value>,
    ) -> reqwest::Response {
        let mut r = self.client.request(method, url).bearer_auth(token);
        if let Some(b) = body {
            r = r.json(b);
        }
        r.send().await.expect("request")
    }

    /// `GET path` and its JSON body, asserting the status.
    pub async fn get_json(&self, path: &str, status: u16) -> serde_json::Value {
        let r = self.get(path).await;
        assert_eq!(r.status().as_u16(), status, "GET {path}");
        r.json().await.expect("json body")
    }

    /// Every page of the list at `path` (its query carries the `limit` and
    /// the filters), following `next_cursor` from the first page: the rows
    /// and the last page. On the way, `check` sees every page, and each page
    /// is checked: at most `limit` rows, full before the last, `has_more`
    /// and `next_cursor` agreeing.
    pub async fn walk_pages(
        &self,
        path: &str,
        limit: usize,
        mut check: impl FnMut(&serde_json::Value),
    ) -> (Vec<serde_json::Value>, serde_json::Value) {
        let mut rows = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..10_000 {
            let page = match &cursor {
                Some(c) => self.get_json(&format!("{path}&cursor={c}"), 200).await,
                None => self.get_json(path, 200).await,
            };
            check(&page);
            let data = page["data"].as_array().unwrap();
            assert!(data.len() <= limit);
            rows.extend(data.iter().cloned());
            match (page["has_more"].as_bool().unwrap(), &page["next_cursor"]) {
                (true, serde_json::Value::String(c)) => {
                    assert_eq!(data.len(), limit, "a page before the last is full");
                    cursor = Some(c.clone());
                }
                (false, serde_json::Value::Null) => return (rows, page),
                other => panic!("has_more/next_cursor disagree: {other:?}"),
            }
        }
        panic!("the walk of {path} did not end");
    }

    /// Asserts that `GET path?query` is refused with `400`, the problem
    /// `code` and the parameter `param`, for each `(query, code, param)`.
    pub async fn assert_params_refused<Q: AsRef<str>>(
        &self,
        path: &str,
        cases: impl IntoIterator<Item = (Q, &str, &str)>,
    ) {
        for (q, code, param) in cases {
            let q = q.as_ref();
            let b = assert_problem(self.get(&format!("{path}?{q}")).await, 400, code).await;
            assert_eq!(b["param"], param, "{q}: {b}");
        }
    }

    /// Polls `GET path` with `key` until it answers `status`; panics after 5 s.
    pub async fn wait_for_status(&self, path: &str, key: &str, status: u16) {
        let t = std::time::Instant::now();
        while self.get_with_key(path, key).await.status().as_u16() != status {
            assert!(t.elapsed() < Duration::from_secs(5), "GET {path} never answered {status}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The requests of `key` this month, as `GET /v1/usage` (which is not
    /// counted) reports them.
    pub async fn requests_of(&self, key: &str) -> u64 {
        let v: serde_json::Value = self.get_with_key("/v1/usage", key).await.json().await.expect("usage body");
        v["current_month"]["requests"].as_u64().expect("a count of requests")
    }

    /// What the app's key has counted so far, as `GET /v1/usage` and `GET
    /// /v1/usage/daily` (neither of which is counted) report it, each
    /// asserted to answer 200.
    pub async fn counted(&self) -> Counted {
        let month = self.get_json("/v1/usage", 200).await["current_month"]["requests"].as_i64().unwrap();
        let daily = self.get_json("/v1/usage/daily", 200).await;
        let today = &daily["days"].as_array().unwrap().last().unwrap()["by_route"];
        Counted { month, today: serde_json::from_value(today.clone()).expect("counts by route") }
    }

    /// The Rust client (`mds-client`) of this server, with the app's key.
    pub fn rust_client(&self) -> mds_client::Client {
        mds_client::Client::builder().base_url(&self.base).api_key(&self.key).no_proxy().build().expect("client")
    }

    /// Runs `mds get ARGS` against this server with the app's key (awaited:
    /// the server answers on this test's runtime); asserts it succeeds; its
    /// standard output.
    pub async fn mds_get(&self, args: &[&str]) -> String {
        let o = tokio::process::Command::new(env!("CARGO_BIN_EXE_mds"))
            .arg("get")
            .args(args)
            .env("MDS_API_KEY", &self.key)
            .env("MDS_BASE_URL", &self.base)
            .env("MDS_LOG", "warn")
            .output()
            .await
            .expect("run mds get");
        assert!(o.status.success(), "mds get {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).expect("utf-8 output")
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            t.await.unwrap().unwrap();
        }
    }
}

/// A key's counts, from [`TestApp::counted`], or what the requests between
/// two of those counted ([`Counted::since`]).
pub struct Counted {
    /// The requests of the current month.
    pub month: i64,
    /// Today's requests by route template (the daily report's last day).
    today: std::collections::BTreeMap<String, i64>,
}

impl Counted {
    /// Today's requests under `route`, a route template such as
    /// `/v1/companies/{isin}/actions`; panics when the report lacks it.
    pub fn on(&self, route: &str) -> i64 {
        *self.today.get(route).unwrap_or_else(|| panic!("no count of {route} in {:?}", self.today))
    }

    /// What was counted after `before`: these counts less its (a route
    /// `before` lacks was first counted since).
    pub fn since(&self, before: &Counted) -> Counted {
        let earlier = |r: &str| before.today.get(r).copied().unwrap_or(0);
        let today = self.today.iter().map(|(r, n)| (r.clone(), n - earlier(r))).collect();
        Counted { month: self.month - before.month, today }
    }
}

/// Cases of [`TestApp::assert_params_refused`] from a table of groups:
/// each `(param, queries)`, every query refused with `code` naming `param`.
pub fn naming<'a>(
    code: &'a str,
    groups: &'a [(&'a str, &'a [&'a str])],
) -> impl Iterator<Item = (&'a str, &'a str, &'a str)> {
    groups.iter().flat_map(move |&(param, queries)| queries.iter().map(move |&q| (q, code, param)))
}

/// Asserts a problem+json response and returns its body.
pub async fn assert_problem(r: reqwest::Response, status: u16, code: &str) -> serde_json::Value {
    assert_eq!(r.status().as_u16(), status, "status");
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let rid = r.headers().get("x-request-id").expect("x-request-id").to_str().unwrap().to_owned();
    let body: serde_json::Value = r.json().await.expect("problem body");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status);
    assert_eq!(body["type"], format!("/problems/{code}"));
    assert!(body["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(body["detail"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(body["request_id"], rid.as_str());
    body
}

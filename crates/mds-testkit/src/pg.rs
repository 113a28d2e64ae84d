//! A PostgreSQL database per test, for the storage suite and for any crate's
//! tests that run on PostgreSQL: [`TestDb`] creates an empty database on the
//! server named by `MDS_TEST_POSTGRES_URL` and drops it with the guard.

use sqlx::{Connection, PgConnection};

use mds_store::DatabaseUrl;
use mds_store::postgres::PgStore;

/// The variable naming the administration database of the test server.
pub const ENV: &str = "MDS_TEST_POSTGRES_URL";

/// The administration URL, or `None` (saying the test is skipped).
pub fn admin_url() -> Option<String> {
    match std::env::var(ENV) {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_owned()),
        _ => {
            eprintln!("skipped: {ENV} is not set");
            None
        }
    }
}

/// `url` naming database `name` instead of its own.
pub fn with_database(url: &str, name: &str) -> String {
    let authority_at = url.find("://").map_or(0, |i| i + 3);
    let (scheme, rest) = url.split_at(authority_at);
    let (before_query, query) = rest.split_at(rest.find('?').unwrap_or(rest.len()));
    let authority = before_query.split('/').next().unwrap_or_default();
    format!("{scheme}{authority}/{name}{query}")
}

/// A database of one test, dropped (best effort, connections and all) when
/// this guard is.
pub struct TestDb {
    admin: String,
    name: String,
    url: DatabaseUrl,
}

impl TestDb {
    /// The database's URL.
    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Creates an empty database. Where the server has ICU, its default
    /// collation is `en-US`, which orders `_`, `-` and digits unlike bytes:
    /// a query that leans on the default collation for byte order fails.
    pub async fn create(admin: &str) -> TestDb {
        let name = format!("mds_test_{:016x}", rand::random::<u64>());
        let mut conn = PgConnection::connect(admin).await.unwrap_or_else(|e| panic!("connect to {ENV}: {e}"));
        let icu = format!("CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'");
        if sqlx::query(&icu).execute(&mut conn).await.is_err() {
            sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.expect("create test database");
        }
        conn.close().await.ok();
        TestDb { admin: admin.to_owned(), url: DatabaseUrl::new(&with_database(admin, &name)), name }
    }

    /// A store on the database.
    pub async fn store(&self) -> PgStore {
        PgStore::connect(&self.url).await.expect("connect to the test database")
    }

    /// A raw connection to the database.
    pub async fn raw(&self) -> PgConnection {
        PgConnection::connect(self.url.expose()).await.expect("raw connection")
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // Drop runs inside the test's runtime, which cannot be blocked on:
        // drop the database from a thread with a runtime of its own.
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            rt.block_on(async {
                let mut conn = PgConnection::connect(&admin).await.map_err(|e| e.to_string())?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                conn.close().await.ok();
                Ok(())
            })
        })
        .join();
        if let Ok(Err(e)) | Err(e) = dropped.map_err(|_| "panicked".to_owned()) {
            eprintln!("could not drop test database {}: {e}", self.name);
        }
    }
}

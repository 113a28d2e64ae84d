//! A schema one version ahead of this build, for the tests of contract
//! section 16 (a node one version older keeps serving and restarting on
//! the newer schema): [`add_expand_only_version`] applies, to a migrated
//! SQLite store, what an expand-only migration may do: a nullable column
//! and a column with a default on every table, a new table and an index,
//! recorded as the next version in `schema_migrations`. This build's code
//! is then the older code on that store.

use sqlx::{Row, SqliteConnection};

/// Applies the next version (the highest applied + 1) to the migrated
/// SQLite store on `conn`, as an expand-only migration would; returns the
/// version.
pub async fn add_expand_only_version(conn: &mut SqliteConnection) -> i64 {
    let latest: i64 = sqlx::query_scalar("SELECT MAX(version) FROM schema_migrations")
        .fetch_one(&mut *conn)
        .await
        .expect("a migrated store");
    let tables: Vec<String> = sqlx::query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name <> 'schema_migrations' ORDER BY name",
    )
    .fetch_all(&mut *conn)
    .await
    .expect("tables")
    .iter()
    .map(|r| r.get(0))
    .collect();
    assert!(tables.len() > 10, "a migrated store: {tables:?}");
    for t in &tables {
        for column in ["next_note TEXT", "next_flag INTEGER NOT NULL DEFAULT 0"] {
            sqlx::query(&format!("ALTER TABLE \"{t}\" ADD COLUMN {column}"))
                .execute(&mut *conn)
                .await
                .unwrap_or_else(|e| panic!("{t}: {e}"));
        }
    }
    for sql in [
        "CREATE TABLE next_things (id INTEGER PRIMARY KEY, what TEXT NOT NULL)",
        "CREATE INDEX next_things_what ON next_things (what)",
    ] {
        sqlx::query(sql).execute(&mut *conn).await.expect(sql);
    }
    let version = latest + 1;
    sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, '2099-01-01T00:00:00.000000Z')")
        .bind(version)
        .execute(&mut *conn)
        .await
        .expect("record");
    version
}

/// Deletes the rows the seed of `migrate` writes (the default tiers and
/// their history, the change counters, the cursor secret, the seed's auth
/// change), leaving those the migrations wrote: the store is then as a
/// store with that schema and nothing seeded yet, and the next `migrate`
/// seeds it, as the storage suite expects of a fresh store.
pub async fn unseed(conn: &mut SqliteConnection) {
    for sql in [
        "DELETE FROM tier_history",
        "DELETE FROM tiers",
        "DELETE FROM auth_changes",
        "DELETE FROM meta WHERE key = 'cursor_secret' OR key LIKE 'generation_%'",
    ] {
        sqlx::query(sql).execute(&mut *conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

//! Suite functions on several stores opened on one database (several
//! processes on one SQLite file, several nodes on one PostgreSQL database).
//! Each gets a fresh store and a function that opens another store on the
//! same database.

use std::future::Future;

use super::*;

/// What one store writes, another on the same database reads at once; the
/// cursor secret is made once, whoever migrates first.
pub async fn two_stores_on_one_database_see_each_others_writes<S, F>(a: &S, open: impl Fn() -> F)
where
    S: Store,
    F: Future<Output = S>,
{
    let b = open().await;
    a.migrate().await.expect("migrate a");
    b.migrate().await.expect("migrate b");
    assert_eq!(a.cursor_secret().await.unwrap(), b.cursor_secret().await.unwrap());
    assert_eq!(a.generations().await.unwrap(), b.generations().await.unwrap());

    let before = b.generations().await.unwrap();
    let acme = account_name("acme");
    a.create_account(&acme, Utc::now()).await.expect("create on a");
    let after = b.generations().await.unwrap();
    assert!(after.auth > before.auth);
    assert_eq!((after.companies, after.news), (before.companies, before.news));
    assert_eq!(b.accounts().await.unwrap(), a.accounts().await.unwrap());
    assert_eq!(b.accounts().await.unwrap().len(), 1);

    b.set_account_entitled(&acme, false, Utc::now()).await.expect("entitle on b");
    assert!(!a.accounts().await.unwrap()[0].entitled);
    assert_eq!(a.generations().await.unwrap(), b.generations().await.unwrap());

    // A third store opened later reads the same secret: it is made once.
    let c = open().await;
    c.migrate().await.expect("migrate c");
    assert_eq!(c.cursor_secret().await.unwrap(), a.cursor_secret().await.unwrap());
}

//! The operator sentences of store errors, the same for every backend.

#[allow(unused_imports)]
use super::*;

/// `no account named "x"`.
pub(crate) fn no_account(name: &AccountName) -> StoreError {
    StoreError::NotFound(format!("no account named \"{name}\""))
}

/// `no tier named "x"`.
pub(crate) fn no_tier(name: &TierName) -> StoreError {
    StoreError::NotFound(format!("no tier named \"{name}\""))
}

/// `no key with prefix "x"`.
pub(crate) fn no_key(prefix: &KeyPrefix) -> StoreError {
    StoreError::NotFound(format!("no key with prefix \"{prefix}\""))
}

/// `an account named "x" already exists`.
pub(crate) fn account_exists(name: &AccountName) -> StoreError {
    StoreError::Conflict(format!("an account named \"{name}\" already exists"))
}

/// `a key with prefix "x" already exists`.
pub(crate) fn prefix_exists(prefix: &KeyPrefix) -> StoreError {
    StoreError::Conflict(format!("a key with prefix \"{prefix}\" already exists"))
}

/// A second key with the same hash: only a caller that stores one key twice.
pub(crate) fn hash_exists() -> StoreError {
    StoreError::Conflict("a key with the same hash already exists".into())
}

/// The schema or its seed rows are missing.
pub(crate) fn not_migrated() -> StoreError {
    StoreError::Invalid("the store has no mds schema yet; run `mds migrate`".into())
}

/// A stored value that does not decode.
pub(crate) fn corrupt(what: impl Display) -> StoreError {
    undecodable(sqlx::Error::Decode(format!("corrupt row: {what}").into()))
}

/// A column that does not decode as the type asked for.
pub(crate) fn undecodable(e: sqlx::Error) -> StoreError {
    StoreError::Database(Cause::new(e))
}

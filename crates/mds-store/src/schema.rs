//! Where a store's schema stands against this build's migrations
//! ([`SchemaState`]), and the rule of who may use it (contract section 16):
//! only `mds migrate` (or `mds serve --migrate`, `mds demo`) changes the
//! schema; every other command refuses a schema behind its build with
//! "run `mds migrate`".
//!
//! Migrations are expand-only between consecutive versions (they add
//! tables, columns with defaults or nullable, indexes; never drop, rename
//! or retype), so a build one version older keeps working on the newer
//! schema: a schema ahead of this build is used as long as it says it is
//! (its oldest compatible code, the `meta` row `schema_oldest_code`, is
//! not newer than this build). A migration that contracts the schema (a
//! file holding the line `-- mds: contract`) raises that row to its own
//! version, so older builds refuse it with "upgrade mds".

use crate::StoreError;

/// The `meta` key of the oldest migration version whose code may use the
/// schema (absent: every code that knows the schema's first migration).
pub(crate) const META_SCHEMA_OLDEST_CODE: &str = "schema_oldest_code";

/// The marker line of a migration that older code cannot use the schema
/// after (a drop, a rename, a new constraint on existing rows).
pub(crate) const CONTRACT_MARKER: &str = "-- mds: contract";

/// A store's schema against this build's migrations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaState {
    /// The versions applied, ascending (empty: no schema yet).
    pub applied: Vec<i64>,
    /// The latest version this build knows.
    pub known: i64,
    /// This build's versions not applied, ascending.
    pub missing: Vec<i64>,
    /// The oldest migration version whose code may use the schema.
    pub oldest_code: i64,
}

impl SchemaState {
    /// The latest version applied (0: none).
    pub fn version(&self) -> i64 {
        self.applied.last().copied().unwrap_or(0)
    }

    /// Whether the schema is ahead of this build.
    pub fn ahead(&self) -> bool {
        self.version() > self.known
    }

    /// Refuses a schema this build cannot use: one ahead of it that says
    /// older code may not use it ("upgrade mds").
    pub fn usable(&self) -> Result<(), StoreError> {
        if self.ahead() && self.oldest_code > self.known {
            return Err(StoreError::Invalid(format!(
                "the database schema is at version {}, which this mds build (it knows up to {}) may not use; \
                 upgrade mds",
                self.version(),
                self.known
            )));
        }
        Ok(())
    }

    /// Refuses a schema this build cannot use, and one behind it ("run
    /// `mds migrate`"): what a command other than `mds migrate` checks.
    pub fn current(&self) -> Result<(), StoreError> {
        self.usable()?;
        match self.missing.as_slice() {
            [] => Ok(()),
            _ if self.applied.is_empty() => {
                Err(StoreError::Invalid("the database has no schema yet; run `mds migrate`".to_owned()))
            }
            missing => Err(StoreError::Invalid(format!(
                "the database schema is at version {} and this mds needs {} ({} migration{} to apply); \
                 run `mds migrate`",
                self.version(),
                self.known,
                missing.len(),
                if missing.len() == 1 { "" } else { "s" }
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(applied: &[i64], known: i64, oldest_code: i64) -> SchemaState {
        let missing = (1..=known).filter(|v| !applied.contains(v)).collect();
        SchemaState { applied: applied.to_vec(), known, missing, oldest_code }
    }

    #[test]
    fn a_schema_behind_is_refused_with_run_mds_migrate() {
        let e = state(&[], 3, 0).current().unwrap_err().to_string();
        assert!(e.contains("no schema yet; run `mds migrate`"), "{e}");
        let e = state(&[1, 2], 3, 0).current().unwrap_err().to_string();
        assert!(e.contains("at version 2 and this mds needs 3 (1 migration to apply); run `mds migrate`"), "{e}");
        assert!(state(&[1, 2], 3, 0).usable().is_ok(), "migrate may bring it up");
        assert!(state(&[1, 2, 3], 3, 0).current().is_ok());
    }

    #[test]
    fn a_schema_ahead_is_used_unless_it_contracted_past_this_build() {
        assert!(state(&[1, 2, 3, 4], 3, 0).current().is_ok(), "one expand-only version ahead");
        assert!(state(&[1, 2, 3, 4, 5], 3, 3).current().is_ok(), "contracted, but for code from 3");
        let e = state(&[1, 2, 3, 4], 3, 4).current().unwrap_err().to_string();
        assert!(e.contains("at version 4, which this mds build (it knows up to 3) may not use; upgrade mds"), "{e}");
    }
}

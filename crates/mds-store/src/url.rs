//! The database URL, with a `Debug` and `Display` that mask the password.

use std::fmt;

/// Which backend a URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite:PATH`, `sqlite://PATH` or a bare file path.
    Sqlite,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
}

/// A database URL. Keep it in this type so it is never printed with its password.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl(String);

/// The default: an embedded SQLite file in the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://mds.db?mode=rwc";

impl DatabaseUrl {
    /// Wraps a URL; a bare path is taken as a SQLite file.
    pub fn new(s: &str) -> Self {
        let s = s.trim();
        if s.starts_with("sqlite:") || s.starts_with("postgres://") || s.starts_with("postgresql://") {
            DatabaseUrl(s.to_owned())
        } else {
            DatabaseUrl(format!("sqlite://{s}?mode=rwc"))
        }
    }

    /// The backend the URL selects.
    pub fn backend(&self) -> Backend {
        if self.0.starts_with("sqlite:") { Backend::Sqlite } else { Backend::Postgres }
    }

    /// Whether it names a private in-memory SQLite database (which only the
    /// store that opened it sees).
    pub fn is_in_memory(&self) -> bool {
        self.backend() == Backend::Sqlite && (self.0.contains(":memory:") || self.0.contains("mode=memory"))
    }

    /// The URL with its password. Only for handing to the driver.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The driver's connect options of `backend` (its name, for the
    /// sentence) parsed from the URL, logging statements slower than
    /// [`SLOW_STATEMENT`](crate::SLOW_STATEMENT); a URL the driver refuses
    /// is [`StoreError::Invalid`](crate::StoreError::Invalid), shown masked.
    pub(crate) fn connect_options<O: sqlx::ConnectOptions>(&self, backend: &str) -> crate::StoreResult<O> {
        let options = O::from_str(self.expose())
            .map_err(|e| crate::StoreError::Invalid(format!("not a usable {backend} database URL ({e}): {self}")))?;
        Ok(options.log_slow_statements(log::LevelFilter::Info, crate::SLOW_STATEMENT))
    }

    fn masked(&self) -> String {
        // scheme://user:password@host → scheme://user:***@host
        if let Some(scheme_end) = self.0.find("://") {
            let rest = &self.0[scheme_end + 3..];
            let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
            if let Some(at) = rest[..auth_end].rfind('@') {
                if let Some(colon) = rest[..at].find(':') {
                    return format!("{}{}:***{}", &self.0[..scheme_end + 3], &rest[..colon], &rest[at..]);
                }
            }
        }
        self.0.clone()
    }
}

impl Default for DatabaseUrl {
    fn default() -> Self {
        DatabaseUrl(DEFAULT_DATABASE_URL.to_owned())
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({})", self.masked())
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_is_masked() {
        let u = DatabaseUrl::new("postgres://mds:s3cret@db.internal:5432/mds?sslmode=require");
        assert_eq!(format!("{u}"), "postgres://mds:***@db.internal:5432/mds?sslmode=require");
        assert!(!format!("{u:?}").contains("s3cret"));
        assert_eq!(u.backend(), Backend::Postgres);
        assert!(u.expose().contains("s3cret"));
    }

    #[test]
    fn urls_without_password_are_unchanged() {
        let u = DatabaseUrl::new("postgres://postgres@127.0.0.1/test");
        assert_eq!(u.to_string(), "postgres://postgres@127.0.0.1/test");
        assert_eq!(DatabaseUrl::new("data/x.db").expose(), "sqlite://data/x.db?mode=rwc");
        assert_eq!(DatabaseUrl::new("data/x.db").backend(), Backend::Sqlite);
    }
}

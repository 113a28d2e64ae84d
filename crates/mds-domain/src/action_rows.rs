//! The rows of the exchanges' corporate-action files as an import resolves
//! and keeps them (contract 13.1, 10.3): a row resolved to no ISIN, kept
//! with what resolving it again needs, and a row resolved, kept with the
//! ISIN it was resolved to. One definition for the reader that makes them
//! (`mds-import`), the store that keeps them and the node that resolves
//! them again.

use chrono::NaiveDate;

use crate::actions::Source;
use crate::isin::Isin;

/// A row of an exchange's file that was resolved to no ISIN: kept, counted
/// and listed, never guessed. One per exchange, code, ex-date and text;
/// the file and line are where it was first seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedAction {
    /// The exchange whose file it is in.
    pub source: Source,
    /// NSE's symbol, or BSE's security code, as written.
    pub code: String,
    /// Its ex-date.
    pub ex_date: NaiveDate,
    /// Its text, as published.
    pub purpose: String,
    /// The file it was read from, as named on the command line.
    pub file: String,
    /// Its line in that file (1 = the header).
    pub line: u64,
}

/// A row resolved to no ISIN kept with what a later import needs to
/// resolve it and read its actions (contract 10.3; the store's migration
/// 20): the import that makes its ISIN known stores them.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptUnresolved {
    /// The row.
    pub row: UnresolvedAction,
    /// BSE's security id (its `Security Name` column); `None` for NSE (and
    /// rows kept before migration 20, until their file is imported again).
    pub security_id: Option<String>,
    /// NSE's series; `None` for BSE, none given, or kept before.
    pub series: Option<String>,
    /// NSE's face value; `None` for BSE, none given, or kept before.
    pub face_value: Option<f64>,
    /// Its record date; `None` when none, or kept before.
    pub record_date: Option<NaiveDate>,
}

/// A row of an exchange's file that was resolved to an ISIN, kept with
/// what resolved it, so that an import that changes the identity history
/// resolves it again (contract 10.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRow {
    /// The row's key: its exchange, code (NSE's symbol or BSE's security
    /// code, as written), ex-date and text (the file and line are where it
    /// was read, not stored).
    pub key: UnresolvedAction,
    /// BSE's security id (its `Security Name` column); `None` for NSE.
    pub security_id: Option<String>,
    /// The ISIN it was resolved to.
    pub isin: Isin,
}

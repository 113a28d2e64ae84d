//! What the crate's unit tests share.

use chrono::NaiveDate;

/// The day `s` (`YYYY-MM-DD`). Panics on anything else.
pub(crate) fn day(s: &str) -> NaiveDate {
    s.parse().expect("a day, YYYY-MM-DD")
}

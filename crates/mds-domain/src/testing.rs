//! What the crate's unit tests share.

use chrono::NaiveDate;

/// The day `s` (`YYYY-MM-DD`). Panics on anything else.
pub(crate) fn day(s: &str) -> NaiveDate {
    s.parse().expect("a day, YYYY-MM-DD")
}

/// Asserts that `Q` refuses each query of `cases` (its pairs) with an
/// error naming the parameter given.
pub(crate) fn refused<Q: crate::params::QueryParams + std::fmt::Debug>(cases: &[(&[(&str, &str)], &str)]) {
    for (pairs, param) in cases {
        assert_eq!(Q::from_pairs(pairs).unwrap_err().param, *param, "{pairs:?}");
    }
}

/// The names of `P`'s parameters in the OpenAPI document, in order.
#[cfg(feature = "openapi")]
pub(crate) fn param_names<P: utoipa::IntoParams>() -> Vec<String> {
    P::into_params(|| None).into_iter().map(|p| p.name).collect()
}

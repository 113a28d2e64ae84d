//! Query-string parsing shared by the endpoints: a parameter the endpoint
//! does not define is `400 unknown_parameter` (with a suggestion when it
//! looks like a typo), one given twice is `400 invalid_parameter`.

use std::borrow::Cow;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use mds_domain::ErrorCode;
use mds_domain::params::QueryParams;

use crate::error::ApiError;

/// The query parameters of one request, each defined and given once.
#[derive(Debug, Default)]
pub struct Params<'a> {
    pairs: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

impl<'a> Params<'a> {
    /// Parses `raw` and checks every name against `allowed`.
    pub fn parse(raw: Option<&'a str>, allowed: &[&str]) -> Result<Self, ApiError> {
        let pairs: Vec<_> = raw.map(|q| form_urlencoded::parse(q.as_bytes()).collect()).unwrap_or_default();
        for (i, (k, _)) in pairs.iter().enumerate() {
            if !allowed.contains(&k.as_ref()) {
                return Err(unknown(k, allowed));
            }
            if pairs[..i].iter().any(|(seen, _)| seen == k) {
                return Err(ApiError::invalid_parameter(k, format!("{k} must be given at most once")));
            }
        }
        Ok(Params { pairs })
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_ref())
    }
}

/// Parses a route's query string: its names with [`Params`] (unknown or
/// repeated ones are refused), its values with `T`.
pub fn parse_query<T: QueryParams>(raw: Option<&str>) -> Result<T, ApiError> {
    let p = Params::parse(raw, T::NAMES)?;
    Ok(T::parse(|name| p.get(name))?)
}

/// The query of a request parsed as `T` ([`parse_query`]), as an
/// extractor; `Query<()>` for a route that takes none.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: QueryParams + Send, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse_query(parts.uri.query()).map(Query)
    }
}

fn unknown(name: &str, allowed: &[&str]) -> ApiError {
    let shown: String = name.chars().take(40).collect();
    let detail = if allowed.is_empty() {
        format!("unknown query parameter {shown:?}; this endpoint takes no query parameters")
    } else {
        // A name within two edits of a parameter is at most two characters
        // longer than it: no longer name is compared (a 65 KB name cost
        // 13 ms of edit distance).
        let longest = allowed.iter().map(|a| a.len()).max().unwrap_or(0);
        let hint = allowed
            .iter()
            .filter(|_| name.len() <= (longest + 2) * 4)
            .map(|a| (distance(name, a), a))
            .filter(|(d, _)| *d <= 2)
            .min()
            .map(|(_, a)| format!(" (did you mean {a:?}?)"))
            .unwrap_or_default();
        format!("unknown query parameter {shown:?}{hint}; this endpoint takes {}", allowed.join(", "))
    };
    ApiError::new(ErrorCode::UnknownParameter, detail).with_param(&shown)
}

/// Levenshtein distance, for typo suggestions on short names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_a_suggestion() {
        let e = Params::parse(Some("industy=Banks"), &["industry", "letter"]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownParameter);
        assert_eq!(distance("industy", "industry"), 1);
        assert!(format!("{:?}", e).contains("did you mean"));
        // A name far longer than any parameter gets no suggestion (and no
        // edit distance is computed for it).
        let long = format!("{}=1", "industry".repeat(8_000));
        let e = Params::parse(Some(&long), &["industry", "letter"]).unwrap_err();
        assert!(!format!("{:?}", e).contains("did you mean"));
    }

    #[test]
    fn repeats_are_refused_and_values_decoded() {
        assert_eq!(Params::parse(Some("a=1&a=2"), &["a"]).unwrap_err().code(), ErrorCode::InvalidParameter);
        let p = Params::parse(Some("a=M%26M&b=x+y"), &["a", "b"]).unwrap();
        assert_eq!(p.get("a"), Some("M&M"));
        assert_eq!(p.get("b"), Some("x y"));
        assert_eq!(p.get("c"), None);
        assert!(Params::parse(None, &[]).is_ok());
        assert!(Params::parse(Some("x=1"), &[]).is_err());
    }
}

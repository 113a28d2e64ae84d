//! How values are stored: instants, tags, integers, and the runs an upsert
//! writes in.

#[allow(unused_imports)]
use super::*;

/// An instant as stored.
pub(crate) fn ts(t: &DateTime<Utc>) -> String {
    format_utc(t)
}

/// An optional instant as stored.
pub(crate) fn ts_opt(t: &Option<DateTime<Utc>>) -> Option<String> {
    t.as_ref().map(format_utc)
}

/// A company's details as stored: their JSON, or `NULL` when nothing is
/// known (so a company imported without details compares equal to one
/// stored before details existed).
pub(crate) fn details_json(d: &CompanyDetails) -> Option<String> {
    (!d.is_empty()).then(|| serde_json::to_string(d).expect("details always serialise"))
}

/// Tags as stored: a JSON array of strings.
pub(crate) fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).expect("a list of strings always serialises")
}

/// One column's value of a row, as both backends bind it.
#[derive(Debug)]
pub(crate) enum Value<'a> {
    /// Text of the row's own (`None`: `NULL`).
    Text(Option<&'a str>),
    /// Text made for the statement: JSON, an instant (`None`: `NULL`).
    Made(Option<String>),
    /// A boolean.
    Bool(bool),
}

/// A row kind's values as stored, in the order of its column list
/// ([`COMPANY_COLUMNS`], [`ARTICLE_COLUMNS`]): the one place that order
/// meets the fields.
pub(crate) trait Values {
    /// The row's values, a column each.
    fn values(&self) -> Vec<Value<'_>>;
}

impl Values for Company {
    fn values(&self) -> Vec<Value<'_>> {
        vec![
            Value::Text(Some(self.isin.as_str())),
            Value::Text(Some(self.ticker.as_str())),
            Value::Text(Some(self.name.as_str())),
            Value::Text(self.industry.as_deref()),
            Value::Text(self.sector.as_deref()),
            Value::Bool(self.is_bse),
            Value::Bool(self.is_nse),
            Value::Text(self.market_cap_band.map(|b| b.as_str())),
            Value::Text(self.logo_url.as_deref()),
            Value::Made(details_json(&self.details)),
        ]
    }
}

impl Values for Article {
    fn values(&self) -> Vec<Value<'_>> {
        vec![
            Value::Text(Some(self.slug.as_str())),
            Value::Text(Some(self.headline.as_str())),
            Value::Text(self.subheadline.as_deref()),
            Value::Text(self.excerpt.as_deref()),
            Value::Text(self.body.as_deref()),
            Value::Text(self.category.as_deref()),
            Value::Made(Some(tags_json(&self.tags))),
            Value::Text(self.isin.as_ref().map(|i| i.as_str())),
            Value::Text(self.ticker.as_deref()),
            Value::Text(self.company_name.as_deref()),
            Value::Text(self.author_name.as_deref()),
            Value::Text(self.hero_image.as_deref()),
            Value::Text(self.url.as_deref()),
            Value::Made(ts_opt(&self.published_at)),
            Value::Made(ts_opt(&self.updated_at)),
        ]
    }
}

/// A count or limit as stored (`BIGINT`); `Invalid` beyond `i64::MAX`.
pub(crate) fn to_bigint(what: &str, v: u64) -> StoreResult<i64> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{what} must be at most {} (got {v})", i64::MAX)))
}

/// Splits `rows` into runs of at most `max` rows in which no key repeats, in
/// order. One multi-row `INSERT … ON CONFLICT DO UPDATE` per run then behaves
/// like row-by-row upserts (PostgreSQL refuses to touch one row twice in a
/// statement), and a key seen again later counts as an update.
pub(crate) fn chunks_by_key<'a, T>(rows: &'a [T], max: usize, key: impl Fn(&'a T) -> &'a str) -> Vec<&'a [T]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut seen = HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let k = key(row);
        if i - start == max || seen.contains(k) {
            out.push(&rows[start..i]);
            start = i;
            seen.clear();
        }
        seen.insert(k);
    }
    if start < rows.len() {
        out.push(&rows[start..]);
    }
    out
}

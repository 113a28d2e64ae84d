//! Stored rows back into domain values, over any `sqlx` row type.

#[allow(unused_imports)]
use super::*;

/// Typed column access over any `sqlx` row, with errors as [`StoreError`].
pub(crate) trait RowExt {
    /// A non-null text column.
    fn text(&self, col: &str) -> StoreResult<String>;
    /// A nullable text column.
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>>;
    /// A 0/1 (or boolean) column.
    fn flag(&self, col: &str) -> StoreResult<bool>;
    /// An integer column.
    fn int(&self, col: &str) -> StoreResult<i64>;
}

impl<R> RowExt for R
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, col: &str) -> StoreResult<String> {
        self.try_get(col).map_err(undecodable)
    }

    fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
        self.try_get(col).map_err(undecodable)
    }

    fn flag(&self, col: &str) -> StoreResult<bool> {
        self.try_get(col).map_err(undecodable)
    }

    fn int(&self, col: &str) -> StoreResult<i64> {
        self.try_get(col).map_err(undecodable)
    }
}

pub(crate) fn instant(table: &str, col: &str, s: &str) -> StoreResult<DateTime<Utc>> {
    parse_rfc3339(s).map_err(|e| corrupt(format_args!("{table}.{col} is not an RFC 3339 instant ({e}): {s:?}")))
}

pub(crate) fn opt_instant(table: &str, col: &str, s: Option<String>) -> StoreResult<Option<DateTime<Utc>>> {
    s.map(|s| instant(table, col, &s)).transpose()
}

/// A `companies` row.
pub(crate) fn company(r: &impl RowExt) -> StoreResult<Company> {
    let isin = r.text("isin")?;
    let ticker = r.text("ticker")?;
    let band = r
        .opt_text("market_cap_band")?
        .map(|b| b.parse::<MarketCapBand>())
        .transpose()
        .map_err(|e| corrupt(format_args!("companies {isin}: {e}")))?;
    Ok(Company {
        isin: Isin::parse(&isin).map_err(|e| corrupt(format_args!("companies: {e}")))?,
        ticker: Ticker::parse(&ticker).map_err(|e| corrupt(format_args!("companies {isin}: {e}: {ticker:?}")))?,
        name: r.text("name")?,
        industry: r.opt_text("industry")?,
        sector: r.opt_text("sector")?,
        is_bse: r.flag("is_bse")?,
        is_nse: r.flag("is_nse")?,
        market_cap_band: band,
        logo_url: r.opt_text("logo_url")?,
        details: match r.opt_text("details_json")? {
            None => CompanyDetails::default(),
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| corrupt(format_args!("companies {isin}: details_json does not decode ({e})")))?,
        },
    })
}

/// A `companies` row with its stamps ([`COMPANY_STAMP_COLUMNS`] selected too).
pub(crate) fn stored_company(r: &impl RowExt) -> StoreResult<StoredCompany> {
    let company = company(r)?;
    let updated_at = instant("companies", "updated_at", &r.text("updated_at")?)?;
    Ok(StoredCompany { company, updated_at, change_seq: r.int("change_seq")? })
}

/// An `articles` row.
pub(crate) fn article(r: &impl RowExt) -> StoreResult<Article> {
    Ok(Article::from_parts(article_summary(r)?, r.opt_text("body")?))
}

/// An article as the news list shows it, from a row of (at least) the
/// columns of [`ARTICLE_SUMMARY_COLUMNS`](super::ARTICLE_SUMMARY_COLUMNS).
/// An article's searchable text (`news_texts`).
pub(crate) fn article_text(r: &impl RowExt) -> StoreResult<ArticleText> {
    let slug = r.text("slug")?;
    Ok(ArticleText {
        headline: r.text("headline")?,
        subheadline: r.opt_text("subheadline")?,
        excerpt: r.opt_text("excerpt")?,
        body: r.opt_text("body")?,
        slug: Slug::parse(&slug).map_err(|e| corrupt(format_args!("articles: {e}: {slug:?}")))?,
    })
}

pub(crate) fn article_summary(r: &impl RowExt) -> StoreResult<ArticleSummary> {
    let slug = r.text("slug")?;
    let tags = r.text("tags_json")?;
    let isin = r
        .opt_text("isin")?
        .map(|s| Isin::parse(&s))
        .transpose()
        .map_err(|e| corrupt(format_args!("articles {slug}: {e}")))?;
    Ok(ArticleSummary {
        headline: r.text("headline")?,
        subheadline: r.opt_text("subheadline")?,
        excerpt: r.opt_text("excerpt")?,
        category: r.opt_text("category")?,
        tags: serde_json::from_str(&tags)
            .map_err(|e| corrupt(format_args!("articles {slug}: tags_json is not a list of strings ({e})")))?,
        isin,
        ticker: r.opt_text("ticker")?,
        company_name: r.opt_text("company_name")?,
        author_name: r.opt_text("author_name")?,
        hero_image: r.opt_text("hero_image")?,
        url: r.opt_text("url")?,
        published_at: opt_instant("articles", "published_at", r.opt_text("published_at")?)?,
        updated_at: opt_instant("articles", "updated_at", r.opt_text("updated_at")?)?,
        slug: Slug::parse(&slug).map_err(|e| corrupt(format_args!("articles: {e}: {slug:?}")))?,
    })
}

/// A `tiers` row (`name`, `rate_limit_per_minute`, `monthly_quota`).
pub(crate) fn tier(r: &impl RowExt) -> StoreResult<Tier> {
    let name = r.text("name")?;
    let rate = r.int("rate_limit_per_minute")?;
    let quota = r.int("monthly_quota")?;
    Ok(Tier {
        rate_limit_per_minute: u32::try_from(rate)
            .map_err(|_| corrupt(format_args!("tiers {name}: rate_limit_per_minute out of range: {rate}")))?,
        monthly_quota: u64::try_from(quota)
            .map_err(|_| corrupt(format_args!("tiers {name}: monthly_quota out of range: {quota}")))?,
        name: TierName::parse(&name).map_err(|e| corrupt(format_args!("tiers: {e}")))?,
    })
}

/// An `accounts` row (`name`, `entitled`, `created_at`).
pub(crate) fn account(r: &impl RowExt) -> StoreResult<Account> {
    let name = r.text("name")?;
    Ok(Account {
        entitled: r.flag("entitled")?,
        created_at: instant("accounts", "created_at", &r.text("created_at")?)?,
        name: AccountName::parse(&name).map_err(|e| corrupt(format_args!("accounts: {e}")))?,
    })
}

/// An `api_keys` row joined with its account's name as `account`.
pub(crate) fn key_record(r: &impl RowExt) -> StoreResult<KeyRecord> {
    let prefix = r.text("prefix")?;
    let prefix = KeyPrefix::parse(&prefix).map_err(|e| corrupt(format_args!("api_keys: {e}")))?;
    let hash = r.text("hash_hex")?;
    let account = r.text("account")?;
    let tier = r.text("tier")?;
    let environment = r.text("environment")?;
    Ok(KeyRecord {
        hash: KeyHash::from_hex(&hash)
            .ok_or_else(|| corrupt(format_args!("api_keys {prefix}: hash_hex is not 32 bytes of hex")))?,
        account: AccountName::parse(&account).map_err(|e| corrupt(format_args!("api_keys {prefix}: {e}")))?,
        tier: TierName::parse(&tier).map_err(|e| corrupt(format_args!("api_keys {prefix}: {e}")))?,
        environment: Environment::parse(&environment).map_err(|e| corrupt(format_args!("api_keys {prefix}: {e}")))?,
        created_at: instant("api_keys", "created_at", &r.text("created_at")?)?,
        revoked_at: opt_instant("api_keys", "revoked_at", r.opt_text("revoked_at")?)?,
        expires_at: opt_instant("api_keys", "expires_at", r.opt_text("expires_at")?)?,
        prefix,
    })
}

/// The stored cursor secret (hex of 32 bytes).
pub(crate) fn cursor_secret(value: &str) -> StoreResult<Vec<u8>> {
    match mds_domain::hex::decode(value) {
        Some(bytes) if bytes.len() == CURSOR_SECRET_LEN => Ok(bytes),
        _ => Err(corrupt("meta.cursor_secret is not 32 bytes of hex")),
    }
}

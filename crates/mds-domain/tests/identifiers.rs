//! The domain's validated identifiers and names, each checked against the
//! values it accepts (with the form it keeps of them) and the values it
//! refuses: one table, one check.

use mds_domain::{AccountName, Industry, Isin, Letter, Limit, SearchTerm, Slug, Ticker, TierName};

/// Checks `parse` (of the identifier `what`): each of `accepts` parses to
/// the form `kept` shows, and each of `refuses` is refused.
fn check<T, E>(
    what: &str,
    parse: fn(&str) -> Result<T, E>,
    kept: fn(&T) -> String,
    accepts: &[(&str, &str)],
    refuses: &[&str],
) {
    for (input, form) in accepts {
        let Ok(v) = parse(input) else { panic!("{what} refused {input:?}") };
        assert_eq!(kept(&v), *form, "{what} of {input:?}");
    }
    for input in refuses {
        assert!(parse(input).is_err(), "{what} accepted {input:?}");
    }
}

#[test]
fn each_identifier_accepts_its_values_and_refuses_the_rest() {
    let (x200, x201) = ("x".repeat(200), "x".repeat(201));
    let (slug200, slug201) = ("a".repeat(200), "a".repeat(201));
    // ISIN: the check digit is verified; case and surrounding space are not kept.
    let isins = [("INE117A01022", "INE117A01022"), (" ine144j01027 ", "INE144J01027")];
    check("isin", Isin::parse, |v| v.as_str().to_owned(), &isins, &["INE117A01023", "NA", "-", ""]);
    let tickers = [(" m&m ", "M&M"), ("20microns", "20MICRONS")];
    check("ticker", Ticker::parse, |v| v.as_str().to_owned(), &tickers, &["", "TWO WORDS", &"X".repeat(33)]);
    check("letter", Letter::parse, |v| v.as_char().to_string(), &[("a", "A"), ("2", "2")], &["", "AB", "-", "é", " "]);
    let bad_limits = ["0", "201", "-1", "1.5", "", "abc", "+5", "0200", "050", " 5"];
    check("limit", Limit::parse, |v| v.get().to_string(), &[("1", "1"), ("200", "200")], &bad_limits);
    // An industry is matched exactly: kept as given, spaces included.
    let industries = [(" Banks ", " Banks "), (&x200[..], &x200[..])];
    check("industry", Industry::parse, |v| v.as_str().to_owned(), &industries, &["", &x201]);
    let terms = [("  NESTLÉ ", "nestlé"), ("éé", "éé")];
    check("search", SearchTerm::parse, |v| v.as_str().to_owned(), &terms, &[" a ", &"x".repeat(101)]);
    check("tier", TierName::parse, |v| v.as_str().to_owned(), &[("pro", "pro")], &[]);
    let accounts = [("acme-corp_2", "acme-corp_2")];
    check(
        "account",
        AccountName::parse,
        |v| v.as_str().to_owned(),
        &accounts,
        &["", "Pro", "-x", "a b", &"a".repeat(65)],
    );
    let slugs = [("reliance-q2-results-2026", "reliance-q2-results-2026"), (&slug200[..], &slug200[..])];
    check("slug", Slug::parse, |v| v.as_str().to_owned(), &slugs, &["Upper", "a_b", "", &slug201]);
    assert_eq!(Limit::default().get(), 50);
}

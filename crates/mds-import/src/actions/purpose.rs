//! The `PURPOSE` text of a corporate-action row read into typed actions
//! ([`parse`]). The rules are in the module header of [`super`].

use mds_domain::actions::{Action, Bonus, Buyback, Dividend, DividendKind, FaceValueChange, Rights};

/// Why a row is read as `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OtherReason {
    /// Only a meeting or a book closure ("Annual General Meeting").
    Meeting,
    /// A fund's distribution (InvIT, REIT: "Distribution - Rs 2 Per Unit",
    /// "Income Distribution (InvIT)"), or a row of a fund series.
    Fund,
    /// A debt payment ("Interest Payment", "Redemption"), or a row of a
    /// debt series.
    Debt,
    /// A scheme of arrangement, amalgamation, capital reduction or
    /// resolution plan: no figures a price can be adjusted by.
    Restructuring,
    /// A bonus, rights issue or buyback of something other than equity
    /// shares (debentures, preference shares, bonds).
    NotShares,
    /// Text none of the rules reads.
    Unrecognised,
}

impl OtherReason {
    /// A short name, for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            OtherReason::Meeting => "meeting",
            OtherReason::Fund => "fund",
            OtherReason::Debt => "debt",
            OtherReason::Restructuring => "restructuring",
            OtherReason::NotShares => "not_shares",
            OtherReason::Unrecognised => "unrecognised",
        }
    }
}

/// One action read from a `PURPOSE` text: `reason` is `Some` exactly when
/// `action` is [`Action::Other`].
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedAction {
    /// The type and its figures.
    pub action: Action,
    /// Why it is `other`.
    pub reason: Option<OtherReason>,
}

impl ParsedAction {
    /// A typed action.
    fn typed(action: Action) -> Self {
        ParsedAction { action, reason: None }
    }

    /// An `other` action, for `reason`.
    pub fn other(reason: OtherReason) -> Self {
        ParsedAction { action: Action::Other, reason: Some(reason) }
    }
}

/// Reads a `PURPOSE` text into its actions, in the order written; never
/// empty (a text with no typed action is one `other`, with its reason).
/// `face_value` (the row's `FACE VALUE` column, INR) prices rights issues
/// ("@ Premium Rs 11" on a face value of 1 is 12) and percentage dividends.
pub fn parse(text: &str, face_value: Option<f64>) -> Vec<ParsedAction> {
    let t = normalise(text);
    if let Some(reason) = fund_or_debt(&t) {
        return vec![ParsedAction::other(reason)];
    }
    let mut typed = Vec::new();
    let mut others = Vec::new();
    let mut previous: Option<Action> = None;
    for segment in t.split(['/', '&', '+']).map(str::trim).filter(|s| !s.is_empty()) {
        match read_segment(segment, face_value, previous.as_ref()) {
            Piece::Actions(actions) => {
                previous = actions.last().cloned();
                typed.extend(actions.into_iter().map(ParsedAction::typed));
            }
            Piece::Other(reason) => others.push(reason),
        }
    }
    if typed.is_empty() {
        // The most telling reason: anything before a meeting.
        let reason = others.iter().copied().find(|r| *r != OtherReason::Meeting).or(others.first().copied());
        return vec![ParsedAction::other(reason.unwrap_or(OtherReason::Unrecognised))];
    }
    typed
}

/// What one segment (between `/`, `&`, `+`, "and", "plus") holds.
enum Piece {
    Actions(Vec<Action>),
    Other(OtherReason),
}

/// Lower case, non-ASCII characters and `/-` (as in "Rs 10/-") as spaces,
/// "and" and "plus" between actions as `/`, runs of white space as one,
/// "ividend" without its "d" as "dividend".
fn normalise(text: &str) -> String {
    let lower: String = text
        .chars()
        .map(|c| if c.is_ascii() && !c.is_ascii_control() { c.to_ascii_lowercase() } else { ' ' })
        .collect();
    let spaced = lower.replace("/-", " ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let mut out = String::with_capacity(spaced.len());
    for word in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(if word == "and" || word == "plus" { "/" } else { word });
    }
    // A dividend with its first letter lost ("Meeting/Ividend").
    let lost: Vec<usize> =
        out.match_indices("ividend").map(|(i, _)| i).filter(|&i| i == 0 || out.as_bytes()[i - 1] != b'd').collect();
    for i in lost.into_iter().rev() {
        out.insert(i, 'd');
    }
    out
}

/// Whether `t` holds any of `words`.
fn has(t: &str, words: &[&str]) -> bool {
    words.iter().any(|w| t.contains(w))
}

/// A fund's distribution or a debt payment: the whole row is `other`.
fn fund_or_debt(t: &str) -> Option<OtherReason> {
    let fund_word =
        t.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| matches!(w, "invit" | "invits" | "reit" | "reits"));
    if fund_word || has(t, &["per unit", "distribution", "return of capital", "return on capital"]) {
        return Some(OtherReason::Fund);
    }
    // "Interest Dividend - Re 0.30/- Per Share" is a dividend of a share.
    if has(t, &["nterest", "interst", "redemption", "coupon"]) && !t.contains("per share") {
        return Some(OtherReason::Debt);
    }
    None
}

/// Words of instruments other than equity shares.
const NOT_SHARES: &[&str] = &["debenture", "ncrps", "preference", "bond", "convertible"];

/// The actions of one segment.
fn read_segment(s: &str, face_value: Option<f64>, previous: Option<&Action>) -> Piece {
    if has(s, &["split", "splt", "sub-division", "sub division", "subdivision"]) {
        return Piece::Actions(vec![face_value_change(s, false)]);
    }
    if has(s, &["reduction"]) {
        return Piece::Other(OtherReason::Restructuring);
    }
    if has(s, &["consolidation"]) {
        return Piece::Actions(vec![face_value_change(s, true)]);
    }
    if has(s, &["bonus"]) {
        if has(s, NOT_SHARES) {
            return Piece::Other(OtherReason::NotShares);
        }
        return Piece::Actions(vec![bonus(s)]);
    }
    if has(s, &["right"]) {
        if has(s, NOT_SHARES) {
            return Piece::Other(OtherReason::NotShares);
        }
        return Piece::Actions(vec![rights(s, face_value)]);
    }
    if has(s, &["buy back", "buyback", "buy-back"]) {
        if has(s, NOT_SHARES) {
            return Piece::Other(OtherReason::NotShares);
        }
        let price = numbers(s).first().map(|n| n.value);
        return Piece::Actions(vec![Action::Buyback { buyback: Buyback { price } }]);
    }
    if has(s, &["demerger", "de-merger", "spin off", "spin-off", "spinoff"]) {
        return Piece::Actions(vec![Action::Demerger]);
    }
    if s.contains("div") {
        return Piece::Actions(dividends(s, face_value));
    }
    if has(s, &["amalgamation", "merger", "scheme", "sheme", "arrangement", "arangement", "resolution plan"]) {
        return Piece::Other(OtherReason::Restructuring);
    }
    // "2:1 partly paid ... @ premium Rs 5" after a rights segment: another
    // part of the same issue.
    if ratio(s).is_some() {
        match previous {
            Some(Action::Rights { .. }) => return Piece::Actions(vec![rights(s, face_value)]),
            Some(Action::Bonus { .. }) => return Piece::Actions(vec![bonus(s)]),
            _ => {}
        }
    }
    if has(s, &["meet", "meting", "meeing", "general m", "agm", "egm", "book clos", "annual clos"]) {
        return Piece::Other(OtherReason::Meeting);
    }
    Piece::Other(OtherReason::Unrecognised)
}

/// A split or consolidation: the first two numbers are the face values
/// from and to. A "split" to a higher face value is a consolidation.
fn face_value_change(s: &str, consolidation: bool) -> Action {
    let n = numbers(s);
    let (from, to) = match (n.first(), n.get(1)) {
        (Some(a), Some(b)) => (Some(a.value), Some(b.value)),
        _ => (None, None),
    };
    let figures = FaceValueChange { face_value_from: from, face_value_to: to, new_isin: None };
    let up = matches!((from, to), (Some(f), Some(t)) if t > f);
    if consolidation || up {
        Action::Consolidation { consolidation: figures }
    } else {
        Action::Split { split: figures }
    }
}

/// A bonus issue.
fn bonus(s: &str) -> Action {
    let (ratio_new, ratio_held) = ratio(s).map_or((None, None), |(a, b)| (Some(a), Some(b)));
    Action::Bonus { bonus: Bonus { ratio_new, ratio_held } }
}

/// A rights issue: the ratio, and the price: face value + the premium
/// ("@ Premium Rs 11"), or the price itself when one is given without the
/// word premium ("@ Rs 120").
fn rights(s: &str, face_value: Option<f64>) -> Action {
    let (ratio_new, ratio_held) = ratio(s).map_or((None, None), |(a, b)| (Some(a), Some(b)));
    let after = |words: &[&str]| {
        words
            .iter()
            .filter_map(|w| s.find(w).map(|i| i + w.len()))
            .min()
            .and_then(|i| numbers(&s[i..]).first().map(|n| n.value))
    };
    let price = match after(&["premium", "prem", "prm"]) {
        Some(premium) => face_value.map(|fv| round4(fv + premium)),
        None => after(&["@", " at "]),
    };
    Action::Rights { rights: Rights { ratio_new, ratio_held, price } }
}

/// Every dividend of a segment: one per dividend word ("div", "dividend"
/// and misspellings), each with the first amount after it and the kind
/// the words before it name.
fn dividends(s: &str, face_value: Option<f64>) -> Vec<Action> {
    let starts: Vec<usize> = s.match_indices("div").map(|(i, _)| i).collect();
    let mut out = Vec::new();
    let mut cursor = 0;
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(s.len());
        let prefix = &s[cursor.min(start)..start];
        let span = &s[start..end];
        let found = numbers(span).into_iter().next();
        let amount = found
            .as_ref()
            .and_then(|n| if n.percent { face_value.map(|fv| round4(fv * n.value / 100.0)) } else { Some(n.value) });
        cursor = found.map_or(start + 3, |n| start + n.end);
        // "Dividend Rs 8.50 (Including Special Dividend Of Rs 2)": a part
        // of the amount before, not an action of its own.
        if prefix.contains("includ") {
            continue;
        }
        out.push(Action::Dividend { dividend: Dividend { amount, kind: kind(prefix) } });
    }
    out
}

/// The kind the words before a dividend word name: special is the most
/// specific ("Special Interim Dividend" is special).
fn kind(prefix: &str) -> Option<DividendKind> {
    let words: Vec<&str> = prefix.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let any = |f: &dyn Fn(&str) -> bool| words.iter().any(|w| f(w));
    if any(&|w| w.starts_with("spl") || w.starts_with("specia")) {
        Some(DividendKind::Special)
    } else if any(&|w| w.starts_with("final")) {
        Some(DividendKind::Final)
    } else if any(&|w| w.starts_with("int") || w.starts_with("iint") || w == "inerim" || w.starts_with("nterim")) {
        Some(DividendKind::Interim)
    } else {
        None
    }
}

/// Rounds to four decimals (sums of published two- and four-decimal
/// figures, without the binary noise of `f64` addition).
fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

/// A number in a text.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Number {
    value: f64,
    /// Followed by `%`.
    percent: bool,
    /// Byte offset just past it.
    end: usize,
}

/// At most this many digits before the decimal point make a figure.
const MAX_WHOLE_DIGITS: usize = 9;
/// At most this many after it (the files have four).
const MAX_DECIMALS: usize = 6;

/// The numbers of `s`, in order: digits with at most one decimal point,
/// `,` between digit groups of three ignored; the digits of a ratio
/// (`2:1`) are numbers too. A longer number than [`MAX_WHOLE_DIGITS`] and
/// [`MAX_DECIMALS`] allow is no figure and is left out, so every figure is
/// exact as JSON (at most 15 significant digits, which a JSON parser reads
/// back exactly).
fn numbers(s: &str) -> Vec<Number> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut text = String::new();
        let mut seen_point = false;
        while i < b.len() {
            let c = b[i];
            let next_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if c.is_ascii_digit() {
                text.push(char::from(c));
            } else if c == b'.' && !seen_point && next_digit {
                seen_point = true;
                text.push('.');
            } else if c == b','
                && !seen_point
                && b.len() >= i + 4
                && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
                && !b.get(i + 4).is_some_and(u8::is_ascii_digit)
            {
                // a thousands separator: skip it
            } else {
                break;
            }
            i += 1;
        }
        let percent = s[i..].trim_start().starts_with('%');
        let (whole, decimals) = text.split_once('.').map_or((text.len(), 0), |(w, d)| (w.len(), d.len()));
        if whole > MAX_WHOLE_DIGITS || decimals > MAX_DECIMALS {
            continue;
        }
        if let Ok(value) = text.parse::<f64>() {
            out.push(Number { value, percent, end: i });
        }
    }
    out
}

/// The first ratio `a:b` of `s` (spaces around `:` allowed), both whole
/// numbers above zero.
fn ratio(s: &str) -> Option<(u32, u32)> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices(':') {
        let mut l = i;
        while l > 0 && b[l - 1] == b' ' {
            l -= 1;
        }
        let mut ls = l;
        while ls > 0 && b[ls - 1].is_ascii_digit() {
            ls -= 1;
        }
        let mut r = i + 1;
        while r < b.len() && b[r] == b' ' {
            r += 1;
        }
        let mut re = r;
        while re < b.len() && b[re].is_ascii_digit() {
            re += 1;
        }
        if let (Ok(a), Ok(h)) = (s[ls..l].parse::<u32>(), s[r..re].parse::<u32>()) {
            if a > 0 && h > 0 {
                return Some((a, h));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str, face_value: Option<f64>) -> Action {
        let mut all = parse(text, face_value);
        assert_eq!(all.len(), 1, "{text}: {all:?}");
        all.remove(0).action
    }

    fn dividend(amount: Option<f64>, kind: Option<DividendKind>) -> Action {
        Action::Dividend { dividend: Dividend { amount, kind } }
    }

    #[test]
    fn percentages_are_of_the_face_value() {
        assert_eq!(one("Dividend 50%", Some(10.0)), dividend(Some(5.0), None));
        assert_eq!(one("Final Dividend - 15 %", None), dividend(None, Some(DividendKind::Final)));
    }

    #[test]
    fn rights_prices() {
        let rights = |price| Action::Rights { rights: Rights { ratio_new: Some(2), ratio_held: Some(1), price } };
        assert_eq!(one("Rights 2:1 @ Premium Rs 11/-", Some(1.0)), rights(Some(12.0)));
        assert_eq!(one("Rights 2:1 @ Premium Rs 11/-", None), rights(None));
        assert_eq!(one("Rights 2:1 @ Rs 120", Some(10.0)), rights(Some(120.0)));
        assert_eq!(one("Rights 2:1", Some(10.0)), rights(None));
    }

    #[test]
    fn what_becomes_other() {
        let reason = |text: &str| parse(text, None)[0].reason;
        assert_eq!(reason("Annual General Meeting"), Some(OtherReason::Meeting));
        assert_eq!(reason("Interest Payment"), Some(OtherReason::Debt));
        assert_eq!(reason("Distribution - Rs 2 Per Unit"), Some(OtherReason::Fund));
        assert_eq!(reason("Income Distribution REITs"), Some(OtherReason::Fund));
        assert_eq!(reason("Meeting (Invitation To Shareholders)"), Some(OtherReason::Meeting));
        assert_eq!(reason("Scheme Of Arrangement"), Some(OtherReason::Restructuring));
        assert_eq!(reason("Bonus NCRPS 1:116"), Some(OtherReason::NotShares));
        assert_eq!(reason("Change In Registrar"), Some(OtherReason::Unrecognised));
        assert_eq!(reason(""), Some(OtherReason::Unrecognised));
        // A meeting beside an action is no action of its own.
        assert_eq!(parse("Annual General Meeting/Dividend - Rs 5 Per Share", None).len(), 1);
    }

    #[test]
    fn several_actions_a_row() {
        let all: Vec<Action> =
            parse("Annual General Meeting/Dividend - Rs 5 Per Share/Special Dividend - Rs 2 Per Share", None)
                .into_iter()
                .map(|p| p.action)
                .collect();
        assert_eq!(all, vec![dividend(Some(5.0), None), dividend(Some(2.0), Some(DividendKind::Special))]);
        let all: Vec<Action> = parse("Dividend - Rs 6 Per Share & Special Dividend Rs 3 Per Share", None)
            .into_iter()
            .map(|p| p.action)
            .collect();
        assert_eq!(all, vec![dividend(Some(6.0), None), dividend(Some(3.0), Some(DividendKind::Special))]);
        // "Including" is a part of the amount before it.
        assert_eq!(
            one("Dividend-Rs.8.50 Per Share (Including Special Dividend Of Rs.2/- Per Share).", None),
            dividend(Some(8.5), None)
        );
    }

    #[test]
    fn splits_and_consolidations() {
        let fv = |from, to| FaceValueChange { face_value_from: Some(from), face_value_to: Some(to), new_isin: None };
        assert_eq!(
            one("Face Value Split (Sub-Division) - From Rs 2/- Per Share To Re 1/- Per Share", None),
            Action::Split { split: fv(2.0, 1.0) }
        );
        assert_eq!(one("Fv Splt Frm Rs 10 To Rs 2", None), Action::Split { split: fv(10.0, 2.0) });
        assert_eq!(
            one("Consolidation Of Equity Shares From Re 1 Per Share To Rs 10 Per Share", None),
            Action::Consolidation { consolidation: fv(1.0, 10.0) }
        );
        assert_eq!(
            one("Stock Split From Rs.1/- to Rs.10/-", None),
            Action::Consolidation { consolidation: fv(1.0, 10.0) }
        );
    }

    #[test]
    fn overlong_numbers_are_no_figures() {
        assert_eq!(one("Dividend - Rs 1234567890 Per Share", None), dividend(None, None));
        assert_eq!(one("Dividend - Rs 0.1234567 Per Share", None), dividend(None, None));
        assert_eq!(one("Dividend - Rs 123456789.123456 Per Share", None), dividend(Some(123_456_789.123_456), None));
    }

    #[test]
    fn numbers_read_decimals_thousands_and_percentages() {
        let n = numbers("rs.1,500.50 per share 20 % and 3.");
        assert_eq!(n.iter().map(|n| n.value).collect::<Vec<_>>(), vec![1500.5, 20.0, 3.0]);
        assert!(n[1].percent && !n[0].percent);
        assert_eq!(numbers("rs 1,50").iter().map(|n| n.value).collect::<Vec<_>>(), vec![1.0, 50.0]);
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio("bonus 1:2"), Some((1, 2)));
        assert_eq!(ratio("rights 3 : 10 @ premium"), Some((3, 10)));
        assert_eq!(ratio("rights:1 ccd"), None);
        assert_eq!(ratio("bonus 0:1"), None);
    }

    #[test]
    fn kinds() {
        assert_eq!(kind("special interim "), Some(DividendKind::Special));
        assert_eq!(kind("third interim "), Some(DividendKind::Interim));
        assert_eq!(kind("int "), Some(DividendKind::Interim));
        assert_eq!(kind("annual general meeting"), None);
        assert_eq!(kind("final "), Some(DividendKind::Final));
    }
}

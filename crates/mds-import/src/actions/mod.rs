//! The exchanges' corporate-action files (contract section 13), read into
//! typed actions; no store: ISINs are resolved by the caller.
//!
//! - [`nse`]: NSE's CSV (`"SYMBOL","COMPANY NAME","SERIES","PURPOSE",…`,
//!   a BOM, `DD-Mon-YYYY` dates, `-` for none), [`nse::read`].
//! - [`bse`]: BSE's CSV, columns found by name in any order,
//!   [`bse::read`].
//! - [`purpose`]: the `PURPOSE` text read into actions,
//!   [`purpose::parse`].
//! - [`batch`]: one import command's files read, resolved and merged,
//!   with the counts of its summary.
//! - [`resolve`]: rows resolved to the ISIN of their ex-date, given the
//!   identity history ([`resolve::Identity`]).
//! - [`merge`](mod@merge): rows resolved to an ISIN made actions, NSE and
//!   BSE publications of one action made one ([`merge::merge`]).
//!
//! # How the text is read (decisions)
//!
//! - **Several actions a row.** The text is split at `/`, `&`, `+`, "and"
//!   and "plus" ("Rs 10/-" is not a split point); each part is read on its
//!   own, and a part may still hold several dividends ("Interim Dividend -
//!   Rs 5 Per Share Special Dividend - Rs 3 Per Share" is two).
//! - **What becomes `other`.** Every row gives at least one action, so
//!   nothing the exchange published is dropped: a row with no typed action
//!   is one `other` with a reason ([`purpose::OtherReason`]): a meeting or
//!   book closure alone ("Annual General Meeting"); a fund's distribution
//!   ("Distribution - Rs 2 Per Unit", "Income Distribution (InvIT)"); a debt
//!   payment ("Interest Payment", "Redemption"); a scheme of arrangement,
//!   amalgamation, capital reduction or resolution plan; a bonus, rights or
//!   buyback of debentures, preference shares or bonds; or text no rule
//!   reads. Rows of fund series (NSE `IV`, `RR`) and debt series (`GS`,
//!   `GB`, `TB`, `H*`, `N*`, `Y*`, `Z*`) are `other` whatever their text
//!   says (contract 13.1). A meeting beside a typed action ("Annual General
//!   Meeting/Dividend - Rs 5 Per Share") is not an action of its own; the
//!   text is kept in `purpose` all the same.
//! - **Figures not given are `null`**, never guessed: "Interim Dividend"
//!   is a dividend with `amount: null`; a rights issue with no ratio has
//!   null ratios.
//! - **Dividends.** The amount is the first number after the word
//!   "dividend" (or "div" and the misspellings the files have): "Rs 44",
//!   "Re 0.25", "Rs. - 1.0000", "Rs.5/-". A percentage ("Dividend 50%",
//!   none in the real files) is of the face value: the `FACE VALUE` column
//!   times the percentage, `null` without one. The kind is the word before
//!   it: special ("Special", "Spl"; a "Special Interim Dividend" is
//!   special, the most specific), final, interim ("Interim", "Int" and
//!   misspellings), else `null`.
//! - **Splits and consolidations.** The first two numbers are the face
//!   values from and to ("From Rs 10/- Per Share To Rs 2/- Per Share", "Fv
//!   Splt Frm Rs 10 To Rs 5"); a "split" to a higher face value is a
//!   consolidation.
//! - **Bonus and rights**: the first `new:held` ratio ("Bonus 1:2" is one
//!   new share for every two held). A rights issue's `price` is the face
//!   value (the row's `FACE VALUE` column; BSE's file has none) plus the
//!   premium ("@ Premium Rs 11/-"), `null` when the face value is not
//!   known; a price given without the word premium ("@ Rs 120") is the
//!   price itself.
//! - **Buybacks**: the first number, if any, is the price.
//! - "Demerger", "De-merger", "Spin Off" are demergers.
//!
//! # Merging (decisions)
//!
//! - Publications are one action when ISIN, type, ex-date and figures agree
//!   (contract 13.1); a publication without any of its type's figures
//!   (BSE's "Right Issue of Equity Shares") agrees with any: it joins the
//!   one action with figures of its ISIN, type and ex-date, if there is
//!   exactly one ([`merge::merge`]).
//! - The id ([`mds_domain::actions::ActionId`]) hashes ISIN, type,
//!   ex-date and figures; a dividend's kind, a split's `new_isin`, the
//!   purpose and the sources are not in it, so they may change without
//!   changing the id.

pub mod batch;
pub mod bse;
pub mod merge;
pub mod nse;
pub mod purpose;
pub mod resolve;

use chrono::NaiveDate;
use mds_domain::Exchange;

use crate::format::{Arg, ArgKind, Format, Given, Input, Read, Refusal};

pub use merge::{Merged, ResolvedAction, merge};
pub use purpose::{OtherReason, ParsedAction};
pub use resolve::{Identity, Resolved, resolve_bse, resolve_nse};

/// `mds import nse-actions FILE... [--verbose]`.
pub const NSE_FORMAT: Format = Format {
    name: "nse-actions",
    about: "NSE's corporate-actions CSV files (plain or .zst): each row resolved to the ISIN of its ex-date, NSE \
            and BSE publications of one action made one; rows stored before change nothing. A bad line: its \
            number, nothing imported.",
    args: ACTION_ARGS,
    read: |given, _today| action_files(Exchange::Nse, given),
};

/// `mds import bse-actions FILE... [--verbose]`.
pub const BSE_FORMAT: Format = Format {
    name: "bse-actions",
    about: "BSE's corporate-actions CSV files (plain or .zst), as `nse-actions`.",
    args: ACTION_ARGS,
    read: |given, _today| action_files(Exchange::Bse, given),
};

/// The arguments of both action formats.
const ACTION_ARGS: &[Arg] = &[
    Arg { name: "files", kind: ArgKind::Files, help: "The files." },
    Arg { name: "verbose", kind: ArgKind::Switch, help: "List the rows resolved to no ISIN." },
];

/// The files of an actions format (`files`), decompressed and named, for
/// [`crate::actions::batch::read_files`].
fn action_files(exchange: Exchange, given: &Given) -> Result<Read, Refusal> {
    let sources = given.many("files");
    if sources.is_empty() {
        return Err(Refusal::message("no file given"));
    }
    let mut files = Vec::with_capacity(sources.len());
    for s in sources {
        files.push((s.name(), s.decompressed()?));
    }
    let read = crate::actions::batch::read_files(exchange, &files)
        .map_err(|(file, error)| Refusal { file: Some(file), error })?;
    Ok(Input::Actions { files: read, count: sources.len(), list_unresolved: given.is_on("verbose") }.into())
}

/// A date cell in `format` (`%d-%b-%Y` or `%d %b %Y`, `example` showing
/// it): `-` and empty are none.
fn date(cell: Option<&str>, format: &str, example: &str, column: &str) -> Result<Option<NaiveDate>, String> {
    match cell.filter(|c| *c != "-") {
        None => Ok(None),
        Some(c) => NaiveDate::parse_from_str(c, format)
            .map(Some)
            .map_err(|_| format!("{column} must be a day such as {example}, or - (got {c:?})")),
    }
}

/// A required `PURPOSE` cell: not empty, at most 2,000 characters.
fn purpose_text(cell: &str, column: &str) -> Result<String, String> {
    match cell.chars().count() {
        0 => Err(format!("{column} is empty")),
        n if n > 2000 => Err(format!("{column} is {n} characters long; at most 2000")),
        _ => Ok(cell.to_owned()),
    }
}

/// What an NSE series says of its rows' actions.
fn series_reason(series: Option<&str>) -> Option<OtherReason> {
    let s = series?;
    match s {
        "IV" | "RR" => Some(OtherReason::Fund),
        "GS" | "GB" | "TB" => Some(OtherReason::Debt),
        _ if s.len() == 2 && matches!(s.as_bytes()[0], b'H' | b'N' | b'Y' | b'Z') => Some(OtherReason::Debt),
        _ => None,
    }
}

/// The actions of an NSE row: its series' rule, else its text.
pub fn nse_actions(row: &nse::NseActionRow) -> Vec<ParsedAction> {
    row_actions(row.series.as_deref(), &row.purpose, row.face_value)
}

/// The actions of a BSE row (its file has no series or face value).
pub fn bse_actions(row: &bse::BseActionRow) -> Vec<ParsedAction> {
    row_actions(None, &row.purpose, None)
}

/// The actions of a row of either exchange given its series, text and
/// face value (BSE's file has neither series nor face value): the series'
/// rule, else the text. The one reading of a row, whether read from a file
/// or kept unresolved by an earlier import.
pub fn row_actions(series: Option<&str>, purpose: &str, face_value: Option<f64>) -> Vec<ParsedAction> {
    match series_reason(series) {
        Some(reason) => vec![ParsedAction::other(reason)],
        None => purpose::parse(purpose, face_value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series() {
        assert_eq!(series_reason(Some("EQ")), None);
        assert_eq!(series_reason(Some("DR")), None);
        assert_eq!(series_reason(Some("SM")), None);
        assert_eq!(series_reason(Some("IV")), Some(OtherReason::Fund));
        assert_eq!(series_reason(Some("GS")), Some(OtherReason::Debt));
        assert_eq!(series_reason(Some("H6")), Some(OtherReason::Debt));
        assert_eq!(series_reason(None), None);
    }

    #[test]
    fn dates() {
        let d = |c| date(Some(c), "%d-%b-%Y", "05-Jan-2016", "EX-DATE");
        assert_eq!(d("05-Jan-2016"), Ok(NaiveDate::from_ymd_opt(2016, 1, 5)));
        assert_eq!(d("05-JAN-2016"), Ok(NaiveDate::from_ymd_opt(2016, 1, 5)));
        assert_eq!(d("-"), Ok(None));
        assert!(d("2016-01-05").unwrap_err().contains("05-Jan-2016"));
    }
}

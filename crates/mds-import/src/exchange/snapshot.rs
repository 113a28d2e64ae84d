//! The exchange lists as snapshots of their series (NSE main board, NSE
//! SME, BSE) as of a day, with the companies merged of them: what `mds
//! import exchanges` hands the store (`mds_domain::snapshot::SnapshotImport`).
//! The NSE lists come packed ([`NseRows`]) and the companies are made an
//! ISIN range at a time ([`ExchangeCompanies`]), so that neither a list's
//! rows nor its companies are all held as records.

use chrono::NaiveDate;
use mds_domain::snapshot::{Companies, Series, SnapshotImport, SnapshotRowsBuilder};

use super::bse::{BseEquityList, BseTickerSource};
use super::mcap::McapList;
use super::packed::{ExchangeCompanies, NseRows};
use crate::format::{
    Arg, ArgKind, Format, Given, Input, NameDay, Read, Refusal, Source, day_in_name, list_day_in_name,
};

/// The snapshots of an exchange import and what the merge reported.
#[derive(Debug, Clone, PartialEq)]
pub struct ExchangeSnapshots {
    /// What the store is handed.
    pub import: SnapshotImport,
    /// How many rows were skipped for want of an ISIN.
    pub skipped_without_isin: usize,
    /// The merge's notes (skipped rows, BSE tickers that are codes).
    pub notes: Vec<String>,
}

/// The snapshots of the lists given, as of `as_of`, and the companies
/// merged of them (the SME list's securities as NSE listings beside the
/// main board's; what [`merge`](super::merge) makes, with the same notes).
/// `Err` names an ISIN both NSE lists carry.
pub fn snapshot_import(
    nse: NseRows,
    sme: Option<NseRows>,
    bse: Option<BseEquityList>,
    mcap: Option<McapList>,
    as_of: NaiveDate,
) -> Result<ExchangeSnapshots, String> {
    if let Some(sme) = &sme {
        // The first such SME row in file order (the lowest line).
        let both =
            (0..sme.len()).filter_map(|i| nse.find(sme.rows.isin(i)).map(|m| (sme.line(i), i, nse.line(m)))).min();
        if let Some((line, i, m)) = both {
            return Err(format!(
                "ISIN {} is on both the main board list (line {m}) and the SME list (line {line})",
                sme.rows.isin(i)
            ));
        }
    }
    let mut notes = Vec::new();
    let nse_skipped = nse.skipped_without_isin.iter().chain(sme.iter().flat_map(|s| &s.skipped_without_isin));
    let bse_skipped = bse.iter().flat_map(|b| &b.skipped_without_isin);
    for (file, s) in nse_skipped.map(|s| ("NSE list", s)).chain(bse_skipped.map(|s| ("BSE list", s))) {
        notes.push(format!("{file} line {}: skipped, no ISIN (ISIN cell {:?})", s.line, s.isin));
    }
    let skipped_without_isin = notes.len();
    let on_nse = |isin: &str| nse.find(isin).is_some() || sme.as_ref().is_some_and(|s| s.find(isin).is_some());
    for b in bse.iter().flat_map(|b| &b.listings).filter(|b| !on_nse(b.isin.as_str())) {
        if b.ticker_source == BseTickerSource::SecurityCode {
            notes.push(format!(
                "BSE list line {}: Security Id {:?} is not a valid ticker; the Security Code {} is the ticker of {}",
                b.line, b.security_id, b.ticker, b.isin
            ));
        }
    }
    let mut series = vec![(Series::NseMain, nse.rows.clone())];
    if let Some(sme) = &sme {
        series.push((Series::NseSme, sme.rows.clone()));
    }
    let (bse_given, mcap_given) = (bse.is_some(), mcap.is_some());
    let bse = bse.map(|b| b.listings).unwrap_or_default();
    if bse_given {
        let mut rows = SnapshotRowsBuilder::default();
        for b in &bse {
            rows.push(&b.isin, &b.ticker, &b.name, b.face_value, None);
        }
        series.push((Series::Bse, rows.finish()));
    }
    let lists = [Some(nse), sme].into_iter().flatten().collect();
    Ok(ExchangeSnapshots {
        import: SnapshotImport {
            as_of,
            series,
            companies: Companies::new(ExchangeCompanies::new(lists, bse, mcap)),
            bse_given,
            mcap_given,
        },
        skipped_without_isin,
        notes,
    })
}

/// `mds import exchanges --nse FILE [--nse-sme FILE] [--bse FILE]
/// [--as-of DAY] [--mcap FILE [--mcap-as-of DAY]]`.
pub const FORMAT: Format = Format {
    name: "exchanges",
    about: "The exchanges' own daily files, each a full snapshot of its list as of one day, merged by ISIN; \
            upsert by ISIN, and the identity events derived again. A snapshot older than the latest imported for \
            its list is refused, nothing written.",
    args: &[
        Arg {
            name: "nse",
            kind: ArgKind::FileOption { required: true },
            help: "NSE's main board equity list (EQUITY_L.csv).",
        },
        Arg {
            name: "nse-sme",
            kind: ArgKind::FileOption { required: false },
            help: "NSE's SME equity list (SME_EQUITY_L.csv).",
        },
        Arg {
            name: "bse",
            kind: ArgKind::FileOption { required: false },
            help: "BSE's equity list (Equity.csv). Without it, companies keep their stored BSE listing and \
                   classification.",
        },
        Arg {
            name: "as-of",
            kind: ArgKind::Day,
            help: "The day the lists are of (YYYY-MM-DD). Without it, the day written in the lists' names \
                   (YYYY-MM-DD, DD-MM-YYYY, DDMMYYYY or YYYYMMDD; a name with only a month is refused), else \
                   today (said on stderr).",
        },
        Arg {
            name: "mcap",
            kind: ArgKind::FileOption { required: false },
            help: "A market-capitalisation file in NSE's MCAP shape; sets market_cap_band by rank and each \
                   company's market cap (in crore).",
        },
        Arg {
            name: "mcap-as-of",
            kind: ArgKind::Day,
            help: "The day the market-capitalisation figures are of (YYYY-MM-DD). Without it, the day in the \
                   file's name (DDMMYYYY or YYYY-MM-DD, as NSE and its mirrors name them), else unknown.",
        },
    ],
    read: read_format,
};

/// [`FORMAT`]'s reading: the NSE lists read packed, a record at a time,
/// each file's bytes dropped once read; the companies are made of the lists
/// an ISIN range at a time, as the store derives that range.
fn read_format(given: &Given, today: NaiveDate) -> Result<Read, Refusal> {
    use super::{parse_bse_equity_list, parse_nse_mcap, parse_nse_rows, parse_nse_sme_rows};
    let nse = given.required("nse")?;
    let mcap_as_of = given.day_of("mcap-as-of");
    if mcap_as_of.is_some() && given.one("mcap").is_none() {
        return Err(Refusal::message("--mcap-as-of is the day of --mcap's file: give --mcap"));
    }
    let lists: Vec<&Source> = [Some(nse), given.one("nse-sme"), given.one("bse")].into_iter().flatten().collect();
    let mut notes = Vec::new();
    let as_of = match given.day_of("as-of") {
        Some(d) => d,
        None => lists_day(&lists, today, &mut notes)?,
    };
    let nse_list = nse.parse(parse_nse_rows)?;
    let sme_list = given.one("nse-sme").map(|f| f.parse(parse_nse_sme_rows)).transpose()?;
    let bse_list = given.one("bse").map(|f| f.parse(parse_bse_equity_list)).transpose()?;
    let mcap_list = match given.one("mcap") {
        None => None,
        Some(m) => Some(m.parse(parse_nse_mcap)?.with_as_of(mcap_as_of.or_else(|| day_in_name(m)))),
    };
    let snapshots = snapshot_import(nse_list, sme_list, bse_list, mcap_list, as_of).map_err(Refusal::message)?;
    notes.extend(snapshots.notes.iter().cloned());
    let files = lists.into_iter().map(Source::name).collect();
    Ok(Read { input: Input::Snapshots { snapshots, files }, notes })
}

/// The day of the exchange lists given without `--as-of` (contract section
/// 10.3): the full day written in their names. A name with only part of a
/// day (`2024-01`), or lists whose names give different days, are refused,
/// asking for `--as-of`; a list whose name has no day is taken as of the
/// others' day (said in `notes`); no day in any name means `today` (said).
fn lists_day(lists: &[&Source], today: NaiveDate, notes: &mut Vec<String>) -> Result<NaiveDate, Refusal> {
    let mut days: Vec<(NaiveDate, String)> = Vec::new();
    let mut undated = Vec::new();
    for file in lists {
        match file.file_name().map_or(NameDay::None, list_day_in_name) {
            NameDay::Full(d) => days.push((d, file.name())),
            NameDay::Partial(written) => {
                return Err(Refusal::message(format!(
                    "{}'s name gives no full day ({written:?}): say which day the lists are of with --as-of \
                     YYYY-MM-DD",
                    file.name()
                )));
            }
            NameDay::None => undated.push(file.name()),
        }
    }
    match days.as_slice() {
        [] => {
            notes.push(format!(
                "no --as-of and no date in the lists' names ({}): the lists are taken as of today, {today}",
                undated.join(", ")
            ));
            Ok(today)
        }
        [(d, first), rest @ ..] => {
            if let Some((other, name)) = rest.iter().find(|(e, _)| e != d) {
                return Err(Refusal::message(format!(
                    "the lists' names give different days ({first}: {d}, {name}: {other}): import them \
                     separately, or say which day they are of with --as-of YYYY-MM-DD"
                )));
            }
            if !undated.is_empty() {
                notes.push(format!("no date in {}'s name: taken as of {d}, the day of {first}", undated.join(", ")));
            }
            Ok(*d)
        }
    }
}

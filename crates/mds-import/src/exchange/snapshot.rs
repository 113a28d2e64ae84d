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

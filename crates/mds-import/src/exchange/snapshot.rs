//! The exchange lists as snapshots of their series (NSE main board, NSE
//! SME, BSE) as of a day, with the companies merged of them: what `mds
//! import exchanges` hands the store (`mds_domain::snapshot::SnapshotImport`).

use chrono::NaiveDate;
use mds_domain::snapshot::{Series, SnapshotImport, SnapshotRow};

use super::bse::BseEquityList;
use super::mcap::McapList;
use super::merge::merge;
use super::nse::NseEquityList;
use super::table::EquityList;

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

/// The rows of an NSE list as a snapshot.
fn nse_rows(list: &NseEquityList) -> Vec<SnapshotRow> {
    list.listings
        .iter()
        .map(|n| SnapshotRow {
            isin: n.isin.clone(),
            symbol: n.symbol.clone(),
            name: n.name.clone(),
            face_value: n.face_value,
            listed_on: n.listed_on,
        })
        .collect()
}

/// The snapshots of the lists given, as of `as_of`, and the companies
/// merged of them (the SME list's securities as NSE listings beside the
/// main board's). `Err` names an ISIN both NSE lists carry.
pub fn snapshot_import(
    nse: &NseEquityList,
    sme: Option<&NseEquityList>,
    bse: Option<&BseEquityList>,
    mcap: Option<&McapList>,
    as_of: NaiveDate,
) -> Result<ExchangeSnapshots, String> {
    // The main board's rows, and the SME list's beside them (a copy only
    // when there is an SME list).
    let with_sme;
    let both = match sme {
        None => nse,
        Some(sme) => {
            let main: std::collections::HashMap<_, _> = nse.listings.iter().map(|n| (&n.isin, n.line)).collect();
            if let Some((s, m)) = sme.listings.iter().find_map(|s| main.get(&s.isin).map(|m| (s, m))) {
                return Err(format!(
                    "ISIN {} is on both the main board list (line {m}) and the SME list (line {})",
                    s.isin, s.line
                ));
            }
            let mut b = nse.clone();
            b.listings.extend(sme.listings.iter().cloned());
            b.skipped_without_isin.extend(sme.skipped_without_isin.iter().cloned());
            with_sme = b;
            &with_sme
        }
    };
    let none = EquityList { listings: Vec::new(), skipped_without_isin: Vec::new() };
    let merged = merge(both, bse.unwrap_or(&none), mcap);
    let mut series = vec![(Series::NseMain, nse_rows(nse))];
    if let Some(sme) = sme {
        series.push((Series::NseSme, nse_rows(sme)));
    }
    if let Some(bse) = bse {
        let rows = bse
            .listings
            .iter()
            .map(|b| SnapshotRow {
                isin: b.isin.clone(),
                symbol: b.ticker.clone(),
                name: b.name.clone(),
                face_value: b.face_value,
                listed_on: None,
            })
            .collect();
        series.push((Series::Bse, rows));
    }
    Ok(ExchangeSnapshots {
        import: SnapshotImport {
            as_of,
            series,
            companies: merged.companies,
            bse_given: bse.is_some(),
            mcap_given: mcap.is_some(),
        },
        skipped_without_isin: merged.skipped_without_isin,
        notes: merged.notes,
    })
}

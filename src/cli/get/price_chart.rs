//! The terminal chart of `mds get prices --format table`: one row a bar,
//! oldest first, with its day and close, then a bar of the close on a
//! scale from the period's lowest close (one cell) to its highest (the
//! widest bar), so the moves show rather than the distance from zero. A
//! row whose day is an adjustment's ex-date names it, and the first row of
//! another ISIN (a series continued through an ISIN change) names the
//! ISIN.

use mds_client::CompanyPrices;

use super::chart::{WIDTH, bar, cells};

/// The chart of `prices`, as lines of text.
pub(crate) fn render(prices: &CompanyPrices) -> String {
    let bars = &prices.bars;
    let (Some(first), Some(last)) = (bars.first(), bars.last()) else {
        return format!("{}: no bars in the period asked ({} adjusted)\n", prices.isin, prices.adjust.as_str());
    };
    let low = bars.iter().map(|b| b.close).min().expect("bars");
    let high = bars.iter().map(|b| b.close).max().expect("bars");
    let mut out = format!(
        "{} closes, {} to {}, adjust={}: {} bars, low {low}, high {high}\n",
        prices.isin,
        first.date,
        last.date,
        prices.adjust.as_str(),
        bars.len()
    );
    for a in &prices.adjustments {
        out.push_str(&format!(
            "adjusted: {} {} ×{} before {}\n",
            a.action_type.as_str(),
            a.action_id,
            a.factor,
            a.ex_date
        ));
    }
    out.push_str(&format!("{:<10}  {:>12}\n", "day", "close"));
    let range = u64::try_from(high.units() - low.units()).unwrap_or(0).max(1);
    let mut isin = None;
    for b in bars {
        // The lowest close is one cell; the rest of the width scales the range.
        let above = u64::try_from(b.close.units() - low.units()).unwrap_or(0);
        let eighths = 8 + cells(above, range) * (WIDTH - 1) / WIDTH;
        let mut line = format!("{}  {:>12}  {}", b.date, b.close.to_string(), bar(eighths, None));
        let mut notes: Vec<String> = prices
            .adjustments
            .iter()
            .filter(|a| a.ex_date == b.date)
            .map(|a| format!("{} ×{}", a.action_type.as_str(), a.factor))
            .collect();
        if isin.is_some_and(|i| i != &b.isin) {
            notes.push(format!("now {}", b.isin));
        }
        isin = Some(&b.isin);
        if !notes.is_empty() {
            line = format!("{}  {}", line.trim_end(), notes.join(", "));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use mds_client::{Adjust, Adjustment, Bar};

    use super::*;

    fn bar_of(date: &str, isin: &str, close: &str) -> Bar {
        mds_testkit::fixtures::flat_bar(date, isin, close, 1)
    }

    #[test]
    fn closes_scale_from_the_lowest_and_ex_dates_and_isin_changes_are_named() {
        let prices = CompanyPrices {
            isin: mds_client::Isin::parse("INE592B01024").unwrap(),
            adjust: Adjust::Split,
            bars: vec![
                bar_of("2025-02-10", "INE592B01016", "10.00"),
                bar_of("2025-02-11", "INE592B01016", "20.00"),
                bar_of("2025-02-12", "INE592B01024", "15.00"),
            ],
            adjustments: vec![Adjustment {
                action_id: mds_domain::actions::ActionId::parse("ca_0123456789abcdef").unwrap(),
                ex_date: "2025-02-12".parse().unwrap(),
                action_type: mds_client::ActionType::Split,
                factor: 0.1,
            }],
        };
        let text = render(&prices);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "INE592B01024 closes, 2025-02-10 to 2025-02-12, adjust=split: 3 bars, low 10.00, high 20.00"
        );
        assert_eq!(lines[1], "adjusted: split ca_0123456789abcdef ×0.1 before 2025-02-12");
        assert_eq!(lines[2], "day                close");
        assert_eq!(lines[3], "2025-02-10         10.00  █");
        assert_eq!(lines[4], format!("2025-02-11         20.00  {}", "█".repeat(WIDTH)));
        // Half the range above the lowest: one cell and half of the other 39.
        assert_eq!(lines[5], format!("2025-02-12         15.00  {}▌  split ×0.1, now INE592B01024", "█".repeat(20)));
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn no_bars_says_so() {
        let prices = CompanyPrices {
            isin: mds_client::Isin::parse("INE592B01024").unwrap(),
            adjust: Adjust::Unadjusted,
            bars: Vec::new(),
            adjustments: Vec::new(),
        };
        assert_eq!(render(&prices), "INE592B01024: no bars in the period asked (none adjusted)\n");
    }
}

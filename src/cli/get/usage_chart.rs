//! The terminal bar chart of `mds get usage --daily`: one row a day, with
//! its requests, its `304`s and the share of the month's quota used by the
//! end of that day, then a bar of its requests. A vertical line down the
//! bars marks the quota's daily share (the quota divided by the days of the
//! month): a day whose bar crosses it used the quota faster than the month
//! allows, and the last column says where the month stands against the
//! whole quota.

use chrono::Datelike;
use mds_client::{BillingMonth, V1UsageDaily};

use super::chart::{MARK, bar, cells};
use crate::cli::thousands;

/// The chart of `report`, as lines of text.
pub(crate) fn render(report: &V1UsageDaily) -> String {
    let month = BillingMonth::of(report.period_start);
    let days_in_month = u64::from(month.last_day().day());
    let share = report.quota.div_ceil(days_in_month.max(1));
    let mut out = format!(
        "{} in {month} (UTC): {} requests of a monthly quota of {}{}\n",
        report.key_prefix,
        thousands(report.requests),
        thousands(report.quota),
        percent(report.requests, report.quota).map(|p| format!(" ({p} used)")).unwrap_or_default(),
    );
    if share > 0 {
        out.push_str(&format!(
            "{MARK} marks the quota's daily share, {} a day: a longer bar uses the quota faster than the month allows\n",
            thousands(share)
        ));
    }
    let largest = report.days.iter().map(|d| d.requests).max().unwrap_or(0).max(share).max(1);
    let mark = (share > 0).then(|| cells(share, largest).div_ceil(8).saturating_sub(1));
    out.push_str(&format!("{:<10}  {:>11}  {:>7}  {:>6}\n", "day", "requests", "304s", "quota"));
    let mut cumulative = 0;
    for d in &report.days {
        cumulative += d.requests;
        let used = percent(cumulative, report.quota).unwrap_or_else(|| "-".into());
        let line = format!(
            "{}  {:>11}  {:>7}  {used:>6}  {}",
            d.date,
            thousands(d.requests),
            thousands(d.not_modified),
            bar(cells(d.requests, largest), mark)
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `part` as a percentage of `whole` to one decimal, `None` when `whole` is 0.
fn percent(part: u64, whole: u64) -> Option<String> {
    (whole > 0).then(|| format!("{:.1}%", part as f64 * 100.0 / whole as f64))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mds_client::V1UsageDay;

    use super::*;

    fn day(date: &str, requests: u64, not_modified: u64) -> V1UsageDay {
        V1UsageDay { date: date.parse().unwrap(), requests, not_modified, by_route: BTreeMap::new() }
    }

    /// The report of key `mds_live_abcdefgh` for the month starting at `period_start`.
    fn report(period_start: &str, quota: u64, requests: u64, days: Vec<V1UsageDay>) -> V1UsageDaily {
        V1UsageDaily {
            key_prefix: "mds_live_abcdefgh".into(),
            period_start: period_start.parse().unwrap(),
            quota,
            requests,
            days,
        }
    }

    #[test]
    fn bars_scale_to_the_busiest_day_and_the_quota_is_marked() {
        // A quota of 3,000 in a 30-day month: 100 a day.
        let days = vec![
            day("2026-11-01", 200, 3),
            day("2026-11-02", 0, 0),
            day("2026-11-03", 50, 1_200),
            day("2026-11-04", 1, 0),
        ];
        let report = report("2026-11-01T00:00:00Z", 3_000, 251, days);
        let text = render(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "mds_live_abcdefgh in 2026-11 (UTC): 251 requests of a monthly quota of 3,000 (8.4% used)"
        );
        assert_eq!(
            lines[1],
            "│ marks the quota's daily share, 100 a day: a longer bar uses the quota faster than the month allows"
        );
        assert_eq!(lines[2], "day            requests     304s   quota");
        // 200 is the widest bar (40 cells); the share (100) is the 20th cell.
        let full = format!("{}│{}", "█".repeat(19), "█".repeat(20));
        assert_eq!(lines[3], format!("2026-11-01          200        3    6.7%  {full}"));
        assert_eq!(lines[4], format!("2026-11-02            0        0    6.7%  {}│", " ".repeat(19)));
        assert_eq!(lines[5], format!("2026-11-03           50    1,200    8.3%  {}│", "█".repeat(10) + &" ".repeat(9)));
        assert_eq!(lines[6], format!("2026-11-04            1        0    8.4%  ▎{}│", " ".repeat(18)));
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn no_quota_no_mark() {
        let report = report("2026-02-01T00:00:00Z", 0, 0, vec![day("2026-02-01", 0, 0)]);
        let text = render(&report);
        assert_eq!(
            text,
            "mds_live_abcdefgh in 2026-02 (UTC): 0 requests of a monthly quota of 0\nday            requests     304s   quota\n2026-02-01            0        0       -\n"
        );
    }
}

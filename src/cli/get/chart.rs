//! The drawing the terminal charts of `mds get` share (`usage --daily`,
//! `prices --format table`): one row an item, a horizontal bar of
//! [`WIDTH`] cells drawn in eighths of a cell, and an optional vertical
//! mark down the bars.

/// Columns of the widest bar.
pub(super) const WIDTH: usize = 40;
/// A bar's last cell, in eighths of a cell.
const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
/// The vertical mark down the bars (the usage chart's daily share).
pub(super) const MARK: char = '│';

/// The length of a bar of `n` on a scale whose widest bar is `largest`, in
/// eighths of a cell (a non-zero count shows at least one eighth).
pub(super) fn cells(n: u64, largest: u64) -> usize {
    let eighths = (u128::from(n) * (WIDTH as u128 * 8)).div_ceil(u128::from(largest));
    usize::try_from(eighths).unwrap_or(WIDTH * 8).min(WIDTH * 8)
}

/// A bar `eighths` long, with [`MARK`] at cell `mark`.
pub(super) fn bar(eighths: usize, mark: Option<usize>) -> String {
    (0..WIDTH)
        .map(|i| {
            if Some(i) == mark {
                MARK
            } else if eighths >= (i + 1) * 8 {
                '█'
            } else if eighths > i * 8 {
                EIGHTHS[eighths - i * 8]
            } else {
                ' '
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_cells_are_eighths() {
        assert_eq!(bar(0, None), " ".repeat(WIDTH));
        assert_eq!(bar(12, None).trim_end(), "█▌");
        assert_eq!(bar(WIDTH * 8, Some(0)), format!("│{}", "█".repeat(WIDTH - 1)));
        assert_eq!(cells(1, 1_000_000), 1, "a request shows");
        assert_eq!(cells(u64::MAX, u64::MAX), WIDTH * 8);
    }
}

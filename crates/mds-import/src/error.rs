//! What an import reports when a file is refused.
//!
//! An import is all-or-nothing, so a refused file is fixed and imported again.
//! To make that one round trip, the parsers check every row and report every
//! problem they find, each with the 1-based physical line of the file it is on
//! (the header is line 1), rather than stopping at the first.

/// One problem on one line of a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RowError {
    /// 1-based physical line of the file; for a CSV record that spans several
    /// lines (a quoted field with a line break), the line it starts on.
    pub line: usize,
    /// What is wrong, as a sentence an operator can act on.
    pub message: String,
}

impl RowError {
    /// A problem on `line`.
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        RowError { line, message: message.into() }
    }

    /// Adds each problem that is there (`Some`) as an error on `line`.
    pub(crate) fn push_all(
        errors: &mut Vec<RowError>,
        line: usize,
        problems: impl IntoIterator<Item = Option<String>>,
    ) {
        errors.extend(problems.into_iter().flatten().map(|m| RowError::new(line, m)));
    }
}

/// Why a file was refused. Displays as the file-level message, or as one
/// `line N: message` line per row error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The file as a whole cannot be used (it is empty, or has a header but
    /// no rows).
    #[error("{0}")]
    File(String),
    /// Problems on individual lines: every one found, sorted by line (problems
    /// on the same line keep the order they were found in). Never empty.
    #[error("{}", one_per_line(.0))]
    Rows(Vec<RowError>),
}

fn one_per_line(rows: &[RowError]) -> String {
    rows.iter().map(RowError::to_string).collect::<Vec<_>>().join("\n")
}

impl ImportError {
    /// A file-level error.
    pub(crate) fn file(message: impl Into<String>) -> Self {
        ImportError::File(message.into())
    }

    /// `Ok(())` when `errors` is empty, else the errors sorted by line.
    pub(crate) fn check(mut errors: Vec<RowError>) -> Result<(), ImportError> {
        if errors.is_empty() {
            return Ok(());
        }
        errors.sort_by_key(|e| e.line);
        Err(ImportError::Rows(errors))
    }

    /// The line-level problems (empty for a file-level error).
    pub fn rows(&self) -> &[RowError] {
        match self {
            ImportError::File(_) => &[],
            ImportError::Rows(rows) => rows,
        }
    }

    /// The distinct lines with problems, ascending.
    pub fn lines(&self) -> Vec<usize> {
        let mut lines: Vec<usize> = self.rows().iter().map(|e| e.line).collect();
        lines.dedup();
        lines
    }

    /// A one-line summary, for a command's final line of output
    /// (`3 errors on 2 lines, the first on line 4`).
    pub fn summary(&self) -> String {
        match self {
            ImportError::File(message) => message.clone(),
            ImportError::Rows(rows) => {
                let lines = self.lines();
                let first = rows.first().map_or(0, |e| e.line);
                match (rows.len(), lines.len()) {
                    (1, _) => format!("1 error, on line {first}"),
                    (n, 1) => format!("{n} errors, on line {first}"),
                    (n, l) => format!("{n} errors on {l} lines, the first on line {first}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_by_line_and_printed_one_per_line() {
        let err =
            ImportError::check(vec![RowError::new(7, "b"), RowError::new(2, "a"), RowError::new(7, "c")]).unwrap_err();
        assert_eq!(err.to_string(), "line 2: a\nline 7: b\nline 7: c");
        assert_eq!(err.lines(), vec![2, 7]);
        assert_eq!(err.summary(), "3 errors on 2 lines, the first on line 2");
    }

    #[test]
    fn no_errors_is_ok() {
        assert_eq!(ImportError::check(Vec::new()), Ok(()));
    }

    #[test]
    fn file_error_prints_its_message() {
        let err = ImportError::file("the file is empty");
        assert_eq!(err.to_string(), "the file is empty");
        assert!(err.rows().is_empty());
        assert_eq!(err.summary(), "the file is empty");
    }
}

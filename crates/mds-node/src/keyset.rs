//! What the keyset lists share (the news list, the actions calendar, the
//! market on a day, the admin lists): a position sealed in a cursor under
//! the list's scope ([`Keyset`], [`Node::cursor_after`],
//! [`Node::resume_after`]), and a page cut from rows read one past it
//! ([`cut`]).

use mds_catalog::CursorError;

use crate::error::ReadError;
use crate::node::Node;

/// The filters of a keyset list, to which its cursors are bound, and the
/// key of its order that a cursor seals.
pub(crate) trait Keyset {
    /// The list's name, the first part of its cursors' scope.
    const LIST: &'static [u8];
    /// The key of the list's order: what a cursor resumes after.
    type Key;
    /// The filters' canonical form, the rest of the scope.
    fn canonical(&self) -> String;
    /// The key as sealed.
    fn key_bytes(key: &Self::Key) -> Vec<u8>;
    /// The key of sealed bytes (genuine ones: their tag was checked).
    fn key_of(bytes: &[u8]) -> Result<Self::Key, CursorError>;
}

/// The scope a cursor of `filter`'s list is sealed in: the list's name and
/// the filters.
pub(crate) fn scope<F: Keyset>(filter: &F) -> Vec<u8> {
    let mut s = F::LIST.to_vec();
    s.push(0);
    s.extend_from_slice(filter.canonical().as_bytes());
    s
}

/// Rows read one past `limit` (to learn whether more follow) cut to
/// `limit`: whether more follow, and while they do the cursor that resumes
/// after the last row kept, made by `cursor`.
pub(crate) fn cut<T>(rows: &mut Vec<T>, limit: usize, cursor: impl FnOnce(&T) -> String) -> (bool, Option<String>) {
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = match rows.last() {
        Some(last) if has_more => Some(cursor(last)),
        _ => None,
    };
    (has_more, next_cursor)
}

impl Node {
    /// The cursor that resumes `filter`'s list after `key`.
    pub(crate) fn cursor_after<F: Keyset>(&self, filter: &F, key: &F::Key) -> String {
        self.cursors().seal(&scope(filter), &F::key_bytes(key))
    }

    /// The key `cursor` (if any) resumes `filter`'s list after, if it is
    /// ours and was issued for `filter`; else `400 invalid_cursor`.
    pub(crate) fn resume_after<F: Keyset>(
        &self,
        filter: &F,
        cursor: Option<&str>,
    ) -> Result<Option<F::Key>, ReadError> {
        let key = cursor.map(|c| self.cursors().open(&scope(filter), c).and_then(|b| F::key_of(&b))).transpose();
        key.map_err(ReadError::cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_page_knows_whether_more_follow() {
        let mut rows = vec![1, 2, 3];
        assert_eq!(cut(&mut rows, 2, |r| r.to_string()), (true, Some("2".to_owned())));
        assert_eq!(rows, [1, 2]);
        assert_eq!(cut(&mut rows, 2, |r| r.to_string()), (false, None));
        assert_eq!(cut(&mut Vec::<u8>::new(), 2, |r| r.to_string()), (false, None));
    }
}

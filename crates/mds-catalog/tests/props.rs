//! Property tests of the cursors and sealed tokens clients send back (outside
//! input): the company list's cursors ([`CursorCodec::decode`]) and every
//! sealed position ([`CursorCodec::open`]: the change feed's sync tokens and
//! cursors, the admin lists' cursors).
//!
//! Whatever the text, opening never panics and accepts nothing it did not
//! issue; what it issued opens to the same position, only under the filters
//! (or scope) it was issued for; and any one character changed is refused.
//! (The news list's cursor is sealed in `mds-node`, and the sync token's
//! payload, a generation and a nonce, is read in the serving crates; both
//! go through [`CursorCodec::open`] first.)

use mds_catalog::{CursorCodec, CursorError, SortKey};
use mds_domain::{CompanyFilter, Exchange, Letter, SearchTerm};
use proptest::prelude::*;
use proptest::sample::Index;

const SECRET: &[u8] = b"a secret every node shares";

/// A sort key as the catalog makes them: a ticker and an ISIN.
fn sort_key() -> impl Strategy<Value = SortKey> {
    ("[A-Z0-9&-]{1,32}", "[A-Z]{2}[A-Z0-9]{9}[0-9]").prop_map(|(ticker, isin)| SortKey::new(ticker, isin))
}

/// Filters: a few of each kind, so two draws are often equal and often not.
fn filter() -> impl Strategy<Value = CompanyFilter> {
    (
        proptest::option::of(prop::sample::select(vec!["A", "B", "7"])),
        proptest::option::of(prop::sample::select(vec![Exchange::Bse, Exchange::Nse])),
        proptest::option::of(prop::sample::select(vec!["bank", "tata", "nestlé"])),
    )
        .prop_map(|(letter, exchange, search)| CompanyFilter {
            letter: letter.map(|l| Letter::parse(l).unwrap()),
            exchange,
            search: search.map(|s| SearchTerm::parse(s).unwrap()),
            ..CompanyFilter::default()
        })
}

/// Text sent as a cursor: anything, base64url-looking, or too long.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[A-Za-z0-9_-]{0,120}", "[A-Za-z0-9_=+/-]{60,600}",]
}

/// `s` with the character at `at` replaced by `to` (`None` when that
/// changes nothing).
fn changed(s: &str, at: Index, to: char) -> Option<String> {
    let mut chars: Vec<char> = s.chars().collect();
    let i = at.index(chars.len());
    (chars[i] != to).then(|| {
        chars[i] = to;
        chars.into_iter().collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_text_is_refused_as_a_cursor_without_panicking(s in text(), f in filter(), scope in any::<Vec<u8>>()) {
        let codec = CursorCodec::new(SECRET);
        prop_assert!(codec.decode(&f, &s).is_err());
        prop_assert!(codec.open(&scope, &s).is_err());
    }

    #[test]
    fn a_list_cursor_opens_only_under_its_filters(
        key in sort_key(),
        issued in filter(),
        asked in filter(),
        at in any::<Index>(),
        to in any::<char>(),
    ) {
        let codec = CursorCodec::new(SECRET);
        let cursor = codec.encode(&issued, &key);
        prop_assert_eq!(codec.decode(&issued, &cursor), Ok(key));
        if issued.canonical() != asked.canonical() {
            prop_assert_eq!(codec.decode(&asked, &cursor), Err(CursorError::OtherFilters));
        }
        prop_assert!(CursorCodec::new(b"another secret").decode(&issued, &cursor).is_err());
        if let Some(bad) = changed(&cursor, at, to) {
            // Base64 without padding has slack bits in its last character:
            // a change there can decode to the same bytes, the same cursor.
            if let Ok(k) = codec.decode(&issued, &bad) {
                prop_assert_eq!(Some(k), codec.decode(&issued, &cursor).ok());
            }
        }
    }

    /// Sealed positions (sync tokens: a generation and a nonce; change-feed
    /// cursors: a sequence and an ISIN; admin-list cursors).
    #[test]
    fn a_sealed_position_opens_only_under_its_scope(
        position in prop_oneof![
            (any::<i64>(), any::<i64>()).prop_map(|(g, n)| [g.to_le_bytes(), n.to_le_bytes()].concat()),
            prop::collection::vec(any::<u8>(), 0..300),
        ],
        scope in prop::collection::vec(any::<u8>(), 0..40),
        other in prop::collection::vec(any::<u8>(), 0..40),
        at in any::<Index>(),
        to in any::<char>(),
    ) {
        let codec = CursorCodec::new(SECRET);
        let token = codec.seal(&scope, &position);
        prop_assert_eq!(codec.open(&scope, &token), Ok(position.clone()));
        if other != scope {
            prop_assert_eq!(codec.open(&other, &token), Err(CursorError::OtherFilters));
        }
        if let Some(bad) = changed(&token, at, to) {
            if let Ok(p) = codec.open(&scope, &bad) {
                prop_assert_eq!(p, position, "only a slack-bit change opens, to the same position");
            }
        }
    }
}

//! Opaque pagination cursors: a keyset position bound to the filters that
//! produced it, signed with HMAC-SHA256.
//!
//! Layout before base64url (no padding):
//! `version(1) | filters digest(16) | ticker length(1) | ticker | isin(12) | tag(16)`,
//! or, in the relevance order of a search, `version(3) | filters digest(16)
//! | rank(8, little-endian) | ticker length(1) | ticker | isin(12) | tag(16)`,
//! where the tag is HMAC-SHA256 over everything before it, truncated to 16
//! bytes, under a secret every node sharing a store shares.
//!
//! Other lists seal their own positions with the same codec
//! ([`CursorCodec::seal`]): `version(2) | scope digest(16) | position | tag(16)`,
//! the scope naming the list and its filters, so a cursor of one list or
//! filter set is refused by every other.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::catalog::SortKey;
use mds_domain::{CompanyFilter, Isin};

const VERSION: u8 = 1;
/// The version byte of a position in the relevance order (with its rank).
const RANKED: u8 = 3;
/// The version byte of a sealed position ([`CursorCodec::seal`]).
const SEALED: u8 = 2;
/// The longest sealed cursor accepted, in characters.
const SEALED_MAX_LEN: usize = 512;
const DIGEST_LEN: usize = 16;
const TAG_LEN: usize = 16;

/// Why a cursor is refused. Each maps to `400 invalid_cursor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    /// Not issued by this service, or altered.
    #[error("cursor was not issued by this service or has been altered; start again without a cursor")]
    Forged,
    /// Issued for other filters.
    #[error("cursor was issued for different filters; pass the same filters as the request that returned it")]
    OtherFilters,
}

/// Encodes and checks cursors under one secret.
#[derive(Clone)]
pub struct CursorCodec {
    /// The HMAC keyed with the secret, cloned for each tag: keying hashes
    /// the padded secret twice, which is then done once, not per cursor.
    keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorCodec(…)")
    }
}

impl CursorCodec {
    /// A codec signing with `secret`.
    pub fn new(secret: &[u8]) -> Self {
        CursorCodec { keyed: Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length") }
    }

    /// The cursor that resumes after `key` under `filter`.
    pub fn encode(&self, filter: &CompanyFilter, key: &SortKey) -> String {
        let t = key.ticker.as_bytes();
        let mut buf = Vec::with_capacity(1 + DIGEST_LEN + 8 + 1 + t.len() + Isin::LEN + TAG_LEN);
        buf.push(if key.rank.is_some() { RANKED } else { VERSION });
        buf.extend_from_slice(&digest(filter));
        if let Some(rank) = key.rank {
            buf.extend_from_slice(&rank.to_le_bytes());
        }
        buf.push(t.len() as u8);
        buf.extend_from_slice(t);
        buf.extend_from_slice(key.isin.as_bytes());
        let tag = self.tag(&buf);
        buf.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// The position a cursor resumes after, if it is genuine and was issued
    /// for `filter`.
    pub fn decode(&self, filter: &CompanyFilter, cursor: &str) -> Result<SortKey, CursorError> {
        if cursor.len() > 256 {
            return Err(CursorError::Forged);
        }
        let buf = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| CursorError::Forged)?;
        if buf.len() < 1 + DIGEST_LEN + 1 + Isin::LEN + TAG_LEN {
            return Err(CursorError::Forged);
        }
        let (body, tag) = buf.split_at(buf.len() - TAG_LEN);
        if self.tag(body).ct_eq(tag).unwrap_u8() != 1 || (body[0] != VERSION && body[0] != RANKED) {
            return Err(CursorError::Forged);
        }
        let (rank, at) = if body[0] == RANKED {
            let bytes = body.get(1 + DIGEST_LEN..1 + DIGEST_LEN + 8).ok_or(CursorError::Forged)?;
            (Some(u64::from_le_bytes(bytes.try_into().expect("8 bytes"))), 1 + DIGEST_LEN + 8)
        } else {
            (None, 1 + DIGEST_LEN)
        };
        let tlen = *body.get(at).ok_or(CursorError::Forged)? as usize;
        let rest = &body[at + 1..];
        if rest.len() != tlen + Isin::LEN {
            return Err(CursorError::Forged);
        }
        if body[1..1 + DIGEST_LEN] != digest(filter) {
            return Err(CursorError::OtherFilters);
        }
        let ticker = std::str::from_utf8(&rest[..tlen]).map_err(|_| CursorError::Forged)?;
        let isin = std::str::from_utf8(&rest[tlen..]).map_err(|_| CursorError::Forged)?;
        Ok(SortKey { ticker: ticker.to_owned(), isin: isin.to_owned(), rank })
    }

    /// The cursor of an opaque `position` in the list and filters `scope`
    /// names (the list's name, then its filters' canonical form): what
    /// [`open`](Self::open) gives back for the same scope. A position is at
    /// most a few hundred bytes.
    pub fn seal(&self, scope: &[u8], position: &[u8]) -> String {
        let mut buf = Vec::with_capacity(1 + DIGEST_LEN + position.len() + TAG_LEN);
        buf.push(SEALED);
        buf.extend_from_slice(&scope_digest(scope));
        buf.extend_from_slice(position);
        let tag = self.tag(&buf);
        buf.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// The position a cursor made by [`seal`](Self::seal) holds, if it is
    /// genuine and was sealed for `scope`.
    pub fn open(&self, scope: &[u8], cursor: &str) -> Result<Vec<u8>, CursorError> {
        if cursor.len() > SEALED_MAX_LEN {
            return Err(CursorError::Forged);
        }
        let buf = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| CursorError::Forged)?;
        if buf.len() < 1 + DIGEST_LEN + TAG_LEN {
            return Err(CursorError::Forged);
        }
        let (body, tag) = buf.split_at(buf.len() - TAG_LEN);
        if self.tag(body).ct_eq(tag).unwrap_u8() != 1 || body[0] != SEALED {
            return Err(CursorError::Forged);
        }
        if body[1..1 + DIGEST_LEN] != scope_digest(scope) {
            return Err(CursorError::OtherFilters);
        }
        Ok(body[1 + DIGEST_LEN..].to_vec())
    }

    fn tag(&self, body: &[u8]) -> [u8; TAG_LEN] {
        let mut mac = self.keyed.clone();
        mac.update(body);
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(&full[..TAG_LEN]);
        out
    }
}

fn digest(filter: &CompanyFilter) -> [u8; DIGEST_LEN] {
    scope_digest(filter.canonical().as_bytes())
}

fn scope_digest(scope: &[u8]) -> [u8; DIGEST_LEN] {
    let full = Sha256::digest(scope);
    let mut out = [0u8; DIGEST_LEN];
    out.copy_from_slice(&full[..DIGEST_LEN]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mds_domain::{Exchange, SearchTerm};

    fn key() -> SortKey {
        SortKey::new("M&M", "INE101A01026")
    }

    #[test]
    fn a_relevance_position_keeps_its_rank() {
        let c = CursorCodec::new(b"secret");
        let f = CompanyFilter { search: Some(SearchTerm::parse("mahindra").unwrap()), ..Default::default() };
        let k = SortKey { rank: Some(0x2_8000_0001), ..key() };
        assert_eq!(c.decode(&f, &c.encode(&f, &k)).unwrap(), k);
        // Bound to the order: the same search in ticker order refuses it.
        let by_ticker = CompanyFilter { sort: Some(mds_domain::CompanySort::Ticker), ..f.clone() };
        assert_eq!(c.decode(&by_ticker, &c.encode(&f, &k)), Err(CursorError::OtherFilters));
    }

    #[test]
    fn round_trips_under_the_same_filters() {
        let c = CursorCodec::new(b"secret");
        let f = CompanyFilter { search: Some(SearchTerm::parse("mahindra").unwrap()), ..Default::default() };
        let s = c.encode(&f, &key());
        assert!(s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(c.decode(&f, &s).unwrap(), key());
    }

    #[test]
    fn refuses_other_filters_foreign_secrets_and_tampering() {
        let c = CursorCodec::new(b"secret");
        let f = CompanyFilter::default();
        let s = c.encode(&f, &key());
        let g = CompanyFilter { exchange: Some(Exchange::Bse), ..Default::default() };
        assert_eq!(c.decode(&g, &s), Err(CursorError::OtherFilters));
        assert_eq!(CursorCodec::new(b"other").decode(&f, &s), Err(CursorError::Forged));
        let mut raw = URL_SAFE_NO_PAD.decode(&s).unwrap();
        let i = raw.len() - TAG_LEN - 1;
        raw[i] ^= 1;
        assert_eq!(c.decode(&f, &URL_SAFE_NO_PAD.encode(&raw)), Err(CursorError::Forged));
        for junk in ["", "abc", "!!!!", &"A".repeat(300)] {
            assert_eq!(c.decode(&f, junk), Err(CursorError::Forged), "{junk:?}");
        }
    }

    #[test]
    fn sealed_positions_open_only_in_their_scope() {
        let c = CursorCodec::new(b"secret");
        let s = c.seal(b"news\0isin=x", b"\x01position");
        assert!(s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(c.open(b"news\0isin=x", &s).unwrap(), b"\x01position");
        assert_eq!(c.open(b"news\0isin=y", &s), Err(CursorError::OtherFilters));
        assert_eq!(CursorCodec::new(b"other").open(b"news\0isin=x", &s), Err(CursorError::Forged));
        let mut raw = URL_SAFE_NO_PAD.decode(&s).unwrap();
        raw[1 + DIGEST_LEN] ^= 1;
        assert_eq!(c.open(b"news\0isin=x", &URL_SAFE_NO_PAD.encode(&raw)), Err(CursorError::Forged));
        // A company cursor is no sealed position, and a sealed one no
        // company cursor, even under a scope digesting alike.
        let f = CompanyFilter::default();
        let company = c.encode(&f, &key());
        assert_eq!(c.open(f.canonical().as_bytes(), &company), Err(CursorError::Forged));
        let sealed = c.seal(f.canonical().as_bytes(), b"\x03ABC123456789012");
        assert_eq!(c.decode(&f, &sealed), Err(CursorError::Forged));
        assert_eq!(c.open(b"", &"A".repeat(600)), Err(CursorError::Forged));
    }
}

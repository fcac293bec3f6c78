//! The lease set's layout: a plain sorted set, member the lease id, score
//! the lease's absolute expiry in whole ms, plus the [`HEADER`] member at
//! score 0. Read through [`LeaseView`], written as [`LeaseWrite`] data.
//!
//! The header is what makes a sorted set rl's lease set: a sorted set of
//! names scored by time (a leaderboard, a schedule) has the shape of
//! leases, and without the header rl would take its past entries for
//! expired leases and remove them. No lease id can be the header (it
//! holds a space), and no expiry is 0, so it always sorts first and is
//! never counted, removed or moved as a lease. The host writes it with the
//! first lease and removes it with the last entry.
//!
//! Telling a lease set from an RL.SLIDE log (both are sorted sets with a
//! TTL): every member of a log is an integer (`score * 1e6 + n`), and no
//! lease id is one (caller ids that read as integers are refused, rl's own
//! ids hold a `-` after a digit). Every entry a call reads is checked, so a
//! log is refused by the lease commands as soon as any of its entries is
//! read, and the log's commands refuse a lease set as foreign.

use smallvec::SmallVec;

use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::slide::log::MEMBERS_PER_MS;

/// The member every lease set holds, at score [`HEADER_SCORE`].
pub const HEADER: &[u8] = b"rl leases";

/// The header's score: below every expiry (a lease's score is at least 1).
pub const HEADER_SCORE: i64 = 0;

/// Longest lease id, in bytes.
pub const MAX_ID_LEN: usize = 64;

/// Latest expiry rl writes (2^53 ms): every score is then a whole number
/// that a double holds exactly. A key holding a later or non-whole score
/// was not written by rl.
pub const MAX_SCORE_MS: i64 = 1 << 53;

/// A lease id: 1 to [`MAX_ID_LEN`] printable ASCII bytes without spaces,
/// never an integer. Fixed size, so requests stay `Copy` and ids need no
/// heap.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LeaseId {
    len: u8,
    bytes: [u8; MAX_ID_LEN],
}

impl std::fmt::Debug for LeaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LeaseId({:?})", String::from_utf8_lossy(self.as_bytes()))
    }
}

impl LeaseId {
    /// An id the caller named (`ID`, or `lease` of RL.RELEASE and RL.RENEW);
    /// the error names `arg`.
    pub fn named(bytes: &[u8], arg: &'static str) -> Result<LeaseId, RlError> {
        LeaseId::valid(bytes).ok_or(RlError::BadLeaseId { arg })
    }

    fn valid(bytes: &[u8]) -> Option<LeaseId> {
        if bytes.is_empty()
            || bytes.len() > MAX_ID_LEN
            || !bytes.iter().all(|b| (0x21..=0x7e).contains(b))
            || looks_integer(bytes)
        {
            return None;
        }
        let mut id = LeaseId {
            len: bytes.len() as u8,
            bytes: [0; MAX_ID_LEN],
        };
        id.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(id)
    }

    /// The id rl makes for a lease taken at `now_ms`: the time and a
    /// 64-bit nonce, both in base 36, joined by `-` (at most 26 bytes).
    /// See `docs/design.md` ("Lease ids") for why it is never one handed
    /// out before.
    pub fn generated(now_ms: i64, nonce: u64) -> LeaseId {
        let mut id = LeaseId {
            len: 0,
            bytes: [0; MAX_ID_LEN],
        };
        id.push_base36(now_ms.max(0) as u64);
        id.push(b'-');
        id.push_base36(nonce);
        id
    }

    fn push(&mut self, b: u8) {
        self.bytes[self.len as usize] = b;
        self.len += 1;
    }

    fn push_base36(&mut self, mut v: u64) {
        let mut digits = [0u8; 13];
        let mut n = 0;
        loop {
            digits[n] = b"0123456789abcdefghijklmnopqrstuvwxyz"[(v % 36) as usize];
            n += 1;
            v /= 36;
            if v == 0 {
                break;
            }
        }
        for &d in digits[..n].iter().rev() {
            self.push(d);
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// `-?[0-9]+`: what could be an RL.SLIDE member (or read as an integer by
/// the server).
fn looks_integer(bytes: &[u8]) -> bool {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// One stored lease: its id and its absolute expiry in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseEntry {
    pub id: LeaseId,
    pub expiry: i64,
}

/// Checks one stored entry (its member's bytes, its score as whole ms, a
/// score that is not a whole finite number reading as `i64::MIN`): a
/// lease rl could have written, an RL.SLIDE log's entry, or neither.
pub fn classify(member: &[u8], score: i64) -> Result<LeaseEntry, RlError> {
    if looks_integer(member) {
        let slide_like = std::str::from_utf8(member)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .is_some_and(|m| m.div_euclid(MEMBERS_PER_MS) == score);
        return Err(if slide_like {
            RlError::WrongKind {
                found: "RL.SLIDE",
                wanted: "lease",
            }
        } else {
            RlError::ForeignZset
        });
    }
    match LeaseId::valid(member) {
        Some(id) if (1..=MAX_SCORE_MS).contains(&score) => Ok(LeaseEntry { id, expiry: score }),
        _ => Err(RlError::ForeignZset),
    }
}

/// Read access to a lease set, in score (expiry) order. Every entry
/// returned has been checked with [`classify`]; each answer costs bounded
/// work (counting is by score, never a walk of every member).
pub trait LeaseView {
    /// Leases held at `now`: entries with an expiry `> now` (every one
    /// walked is checked; past a few, the server counts them by score).
    fn held(&mut self, now: i64) -> Result<u64, RlError>;
    /// The first `n` held leases (expiry `> now`), earliest first.
    fn first_held(&mut self, now: i64, n: usize) -> Result<SmallVec<[LeaseEntry; 2]>, RlError>;
    /// The `k`-th held lease (1-based, earliest first) when `held` leases
    /// are held at `now` (as [`LeaseView::held`] answered), found by rank
    /// in O(log N) and checked; `None` when fewer are held.
    fn nth_held(&mut self, now: i64, held: u64, k: u64) -> Result<Option<LeaseEntry>, RlError>;
    /// The first `n` expired entries (expiry `<= now`), oldest first.
    fn expired(&mut self, now: i64, n: usize) -> Result<SmallVec<[LeaseEntry; 4]>, RlError>;
    /// The last `n` entries, latest expiry first.
    fn newest(&mut self, n: usize) -> Result<SmallVec<[LeaseEntry; 2]>, RlError>;
    /// The stored expiry of `id`, checked; `None` when the set lacks it.
    fn expiry_of(&mut self, id: &LeaseId) -> Result<Option<i64>, RlError>;
    /// 64 bits for a new id, never drawn the same way twice (the host: a
    /// keyed hash of a counter, keyed by the process's random seed).
    fn nonce(&mut self) -> u64;
}

/// What a call writes: one lease added or moved, expired ones removed by
/// explicit member, and the key's expiry. Replicated as `ZADD key expiry
/// id`, `ZREM key id ...`, `PEXPIREAT key at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseWrite {
    /// The lease to add or move, and its new expiry.
    pub set: Option<LeaseEntry>,
    /// Leases to remove (expired ones, or the released one).
    pub remove: SmallVec<[LeaseId; 4]>,
    /// The key must live until its latest lease ends (`None`: a removal
    /// never makes a lease later, the expiry stays).
    pub expiry: Option<Expiry>,
}

/// An in-memory lease set with sorted-set semantics (tests, benches).
#[derive(Debug, Clone, Default)]
pub struct MemoryLeases {
    /// `(expiry, member)`, sorted as a sorted set orders them.
    entries: Vec<(i64, Vec<u8>)>,
    nonces: u64,
}

impl MemoryLeases {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn entries(&self) -> &[(i64, Vec<u8>)] {
        &self.entries
    }

    /// Adds or moves an entry as any writer would (tests).
    pub fn insert(&mut self, score: i64, member: &[u8]) {
        self.entries.retain(|(_, m)| m != member);
        self.entries.push((score, member.to_vec()));
        self.entries.sort();
    }

    /// Draws nonces from `n` on (a test may make them repeat).
    pub fn set_nonces(&mut self, n: u64) {
        self.nonces = n;
    }

    /// Applies a write the way the host does: the set first, then the
    /// removals.
    pub fn apply(&mut self, w: &LeaseWrite) {
        if let Some(e) = &w.set {
            self.insert(e.expiry, e.id.as_bytes());
        }
        self.entries
            .retain(|(_, m)| !w.remove.iter().any(|id| id.as_bytes() == m.as_slice()));
    }

    fn checked<const N: usize>(
        it: impl Iterator<Item = (i64, Vec<u8>)>,
    ) -> Result<SmallVec<[LeaseEntry; N]>, RlError>
    where
        [LeaseEntry; N]: smallvec::Array<Item = LeaseEntry>,
    {
        it.map(|(s, m)| classify(&m, s)).collect()
    }
}

impl LeaseView for MemoryLeases {
    fn held(&mut self, now: i64) -> Result<u64, RlError> {
        let held = self.entries.iter().filter(|(s, _)| *s > now);
        for (s, m) in held.clone() {
            classify(m, *s)?;
        }
        Ok(held.count() as u64)
    }
    fn first_held(&mut self, now: i64, n: usize) -> Result<SmallVec<[LeaseEntry; 2]>, RlError> {
        let it = self
            .entries
            .iter()
            .filter(|(s, _)| *s > now)
            .take(n)
            .cloned();
        Self::checked(it)
    }
    fn nth_held(&mut self, now: i64, held: u64, k: u64) -> Result<Option<LeaseEntry>, RlError> {
        if k == 0 || k > held {
            return Ok(None);
        }
        let mut it = self.entries.iter().filter(|(s, _)| *s > now);
        match it.nth(k as usize - 1) {
            Some((s, m)) => classify(m, *s).map(Some),
            None => Ok(None),
        }
    }
    fn expired(&mut self, now: i64, n: usize) -> Result<SmallVec<[LeaseEntry; 4]>, RlError> {
        let it = self
            .entries
            .iter()
            .take_while(|(s, _)| *s <= now)
            .take(n)
            .cloned();
        Self::checked(it)
    }
    fn newest(&mut self, n: usize) -> Result<SmallVec<[LeaseEntry; 2]>, RlError> {
        Self::checked(self.entries.iter().rev().take(n).cloned())
    }
    fn expiry_of(&mut self, id: &LeaseId) -> Result<Option<i64>, RlError> {
        match self.entries.iter().find(|(_, m)| m == id.as_bytes()) {
            Some((s, m)) => classify(m, *s).map(|e| Some(e.expiry)),
            None => Ok(None),
        }
    }
    fn nonce(&mut self) -> u64 {
        self.nonces += 1;
        self.nonces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_compact_and_never_integers() {
        let id = LeaseId::generated(1_700_000_000_000, u64::MAX);
        assert_eq!(id.as_bytes(), b"loyw3v28-3w5e11264sgsf");
        assert!(id.as_bytes().len() <= 26);
        assert_eq!(LeaseId::generated(0, 0).as_bytes(), b"0-0");
        assert!(classify(b"0-0", 5).is_ok());
    }

    #[test]
    fn stored_entries_are_classified() {
        let slide = RlError::WrongKind {
            found: "RL.SLIDE",
            wanted: "lease",
        };
        let cases: &[(&[u8], i64, Result<(), RlError>)] = &[
            (b"job-1", 1000, Ok(())),
            (b"job-1", 0, Err(RlError::ForeignZset)),
            (b"job-1", i64::MIN, Err(RlError::ForeignZset)),
            (b"job-1", MAX_SCORE_MS + 1, Err(RlError::ForeignZset)),
            (b"1000000005", 1000, Err(slide)),
            (b"17", 1000, Err(RlError::ForeignZset)),
            (b"has space", 1000, Err(RlError::ForeignZset)),
            (&[b'x'; 65], 1000, Err(RlError::ForeignZset)),
        ];
        for (member, score, want) in cases {
            assert_eq!(
                classify(member, *score).map(|_| ()),
                *want,
                "{:?}",
                String::from_utf8_lossy(member)
            );
        }
    }
}

//! A lease set as the host holds it: a plain sorted set (member the lease
//! id, score its absolute expiry in ms, and the header `rl leases` at score
//! 0), read and written through the low-level key API; writes replicated as
//! `ZADD key expiry id` (`ZADD key 0 "rl leases" expiry id` for a new set),
//! `ZREM key id ...` and `PEXPIREAT key at`, every value explicit.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use smallvec::SmallVec;

use super::call;
use super::context::CommandCtx;
use super::ffi;
use super::ffi::string_bytes;
use super::ffi::{api, OK};
use super::kept_strings;
use super::key::{Access, KeyKind, OpenKey};
use super::replicate;
use super::store::Store;
use super::zset_log::score_ms;
use crate::core::decimal::Line;
use crate::core::error::RlError;
use crate::core::lease::set::{
    classify, LeaseEntry, LeaseId, LeaseView, LeaseWrite, HEADER, HEADER_SCORE,
};

/// Held leases walked before a count goes through the server's `ZCOUNT`
/// (O(log N)) instead.
const WALK_MAX: u64 = 64;

/// rl's lease sets are sorted sets that always carry a TTL.
const ZSET: KeyKind = KeyKind {
    key_type: ffi::KEYTYPE_ZSET,
    without_ttl: Some(RlError::ForeignZset),
};

/// An open lease set. Closed on drop.
pub struct LeaseSet<'a> {
    key: OpenKey<'a>,
}

/// A server string we made, freed on drop.
struct Owned<'c> {
    cmd: &'c CommandCtx,
    raw: *mut ffi::Str,
}

impl<'c> Owned<'c> {
    fn new(cmd: &'c CommandCtx, bytes: &[u8]) -> Owned<'c> {
        // SAFETY: ctx is live; the server copies the bytes.
        let raw = unsafe { api!(CreateString)(cmd.raw, bytes.as_ptr().cast(), bytes.len()) };
        Owned { cmd, raw }
    }
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        // SAFETY: made by us, freed once.
        unsafe { api!(FreeString)(self.cmd.raw, self.raw) }
    }
}

/// The header member as a server string, made once without a context and
/// kept until unload ([`kept_strings::LEASE_HEADER`]): every lease call
/// looks it up.
fn header() -> *mut ffi::Str {
    kept_strings::LEASE_HEADER.borrow(0, || {
        // SAFETY: no context needed; the server copies the bytes.
        unsafe { api!(CreateString)(std::ptr::null_mut(), HEADER.as_ptr().cast(), HEADER.len()) }
    })
}

impl<'a> Store<'a> for LeaseSet<'a> {
    type Write = LeaseWrite;

    fn open(cmd: &'a CommandCtx, key_index: usize, access: Access) -> Result<Self, RlError> {
        let set = LeaseSet {
            key: OpenKey::open(cmd, key_index, access, &ZSET)?,
        };
        if !set.key.is_empty() {
            set.check_header()?;
        }
        Ok(set)
    }

    fn record(&mut self, write: &LeaseWrite) -> Result<(), RlError> {
        let cmd = self.key.cmd;
        let index = self.key.index;
        if let Some(set) = &write.set {
            // A new set gets its header with its first lease, in one ZADD.
            let new = self.key.is_empty();
            if new {
                self.add(header(), HEADER_SCORE)?;
            }
            let member = Owned::new(cmd, set.id.as_bytes());
            self.add(member.raw, set.expiry)?;
            cmd.notify(ffi::NOTIFY_ZSET, c"zadd", index);
            let mut digits: Line<21> = Line::new();
            digits.signed(set.expiry);
            let score = Owned::new(cmd, digits.as_slice());
            if new {
                let zero = Owned::new(cmd, b"0");
                replicate::zadd_pairs(cmd, index, &[zero.raw, header(), score.raw, member.raw]);
            } else {
                replicate::zadd(cmd, index, score.raw, &[member.raw]);
            }
        }
        let mut removed: SmallVec<[Owned; 4]> = SmallVec::new();
        for id in &write.remove {
            let member = Owned::new(cmd, id.as_bytes());
            if self.remove(member.raw) {
                removed.push(member);
            }
        }
        // Only the header left: it goes with the last entry, so no set of
        // a header alone outlives its leases.
        let last = !removed.is_empty() && self.len() == 1 && self.remove(header());
        if !removed.is_empty() {
            cmd.notify(ffi::NOTIFY_ZSET, c"zrem", index);
            if self.key.is_empty() {
                // As ZREM does when it removes the last member.
                cmd.notify(ffi::NOTIFY_GENERIC, c"del", index);
            }
            let mut raws: SmallVec<[*mut ffi::Str; 4]> = removed.iter().map(|m| m.raw).collect();
            if last {
                raws.push(header());
            }
            replicate::zrem(cmd, index, &raws);
        }
        if write.set.is_some() || !removed.is_empty() {
            cmd.signal_modified(index);
        }
        match &write.expiry {
            Some(expiry) if !self.key.is_empty() => self.key.keep_alive(expiry),
            _ => Ok(()),
        }
    }
}

impl<'c> LeaseSet<'c> {
    /// Adds or moves `member` to `score`.
    fn add(&self, member: *mut ffi::Str, score: i64) -> Result<(), RlError> {
        let mut flags: c_int = 0;
        // SAFETY: key open for writing; the member is live; the server
        // copies it.
        let status = unsafe { api!(ZsetAdd)(self.key.raw, score as f64, member, &mut flags) };
        if status != OK {
            return Err(RlError::Internal("could not add to the sorted set"));
        }
        Ok(())
    }

    /// Removes `member`; true when it was there.
    fn remove(&self, member: *mut ffi::Str) -> bool {
        let mut deleted: c_int = 0;
        // SAFETY: key open for writing; the member is live.
        let ok = unsafe { api!(ZsetRem)(self.key.raw, member, &mut deleted) } == OK;
        ok && deleted != 0
    }

    /// An existing key is a lease set only if it holds the header at score
    /// 0. Without it: an RL.SLIDE log's refusal when its first entry is
    /// one, else the refusal that names the missing header.
    fn check_header(&self) -> Result<(), RlError> {
        let mut score = 0.0;
        // SAFETY: key is an open sorted set; the header string is kept.
        let found = unsafe { api!(ZsetScore)(self.key.raw, header(), &mut score) } == OK;
        if found && score_ms(score) == HEADER_SCORE {
            return Ok(());
        }
        match self.walk::<1>(f64::NEG_INFINITY, f64::INFINITY, false, false, 1) {
            Err(e @ RlError::WrongKind { .. }) => Err(e),
            _ => Err(RlError::NoLeaseHeader),
        }
    }

    /// Walks up to `n` entries from one end of the score range `(min, max]`
    /// (`min_excl`) or `[min, max]`, each checked.
    fn walk<const N: usize>(
        &self,
        min: f64,
        max: f64,
        min_excl: bool,
        from_end: bool,
        n: usize,
    ) -> Result<SmallVec<[LeaseEntry; N]>, RlError>
    where
        [LeaseEntry; N]: smallvec::Array<Item = LeaseEntry>,
    {
        let mut out = SmallVec::new();
        if n == 0 || self.key.is_empty() {
            return Ok(out);
        }
        let raw = self.key.raw;
        // SAFETY: key is an open sorted set; the iterator is stopped below.
        unsafe {
            let first = if from_end {
                api!(ZsetLastInScoreRange)
            } else {
                api!(ZsetFirstInScoreRange)
            };
            if first(raw, min, max, c_int::from(min_excl), 0) != OK {
                return Ok(out);
            }
            let mut result = Ok(());
            while api!(ZsetRangeEndReached)(raw) == 0 && out.len() < n {
                let mut score = 0.0;
                let ele = api!(ZsetRangeCurrentElement)(raw, &mut score);
                if ele.is_null() {
                    break;
                }
                let entry = classify(string_bytes(ele), score_ms(score));
                api!(FreeString)(self.key.cmd.raw, ele);
                match entry {
                    Ok(e) => out.push(e),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
                let more = if from_end {
                    api!(ZsetRangePrev)(raw)
                } else {
                    api!(ZsetRangeNext)(raw)
                };
                if more == 0 {
                    break;
                }
            }
            api!(ZsetRangeStop)(raw);
            result.map(|()| out)
        }
    }

    fn len(&self) -> u64 {
        if self.key.is_empty() {
            return 0;
        }
        // SAFETY: key is open.
        unsafe { api!(ValueLength)(self.key.raw) as u64 }
    }
}

impl LeaseView for LeaseSet<'_> {
    fn held(&mut self, now: i64) -> Result<u64, RlError> {
        let total = self.len();
        if total == 0 {
            return Ok(0);
        }
        if total <= WALK_MAX {
            // Small sets: count by walking the held range, every entry
            // checked.
            return self
                .walk::<8>(now as f64, f64::INFINITY, true, false, WALK_MAX as usize)
                .map(|v| v.len() as u64);
        }
        match call::zcount_through(self.key.cmd, self.key.index, now) {
            Some(expired) => Ok(total.saturating_sub(expired)),
            None => Err(RlError::Internal("could not count the leases")),
        }
    }

    fn first_held(&mut self, now: i64, n: usize) -> Result<SmallVec<[LeaseEntry; 2]>, RlError> {
        self.walk(now as f64, f64::INFINITY, true, false, n)
    }

    // Leases' scores are above the header's 0: the ranges below start past
    // it.
    fn expired(&mut self, now: i64, n: usize) -> Result<SmallVec<[LeaseEntry; 4]>, RlError> {
        self.walk(HEADER_SCORE as f64, now as f64, true, false, n)
    }

    fn newest(&mut self, n: usize) -> Result<SmallVec<[LeaseEntry; 2]>, RlError> {
        self.walk(HEADER_SCORE as f64, f64::INFINITY, true, true, n)
    }

    fn nth_held(&mut self, now: i64, held: u64, k: u64) -> Result<Option<LeaseEntry>, RlError> {
        if k == 0 || k > held {
            return Ok(None);
        }
        // The entries up to `now` (the header among them) sort before the
        // held ones.
        let rank = self.len() - held + k - 1;
        match call::zentry_at_rank(self.key.cmd, self.key.index, rank, |m, s| {
            classify(m, score_ms(s))
        }) {
            Some(Ok(e)) if e.expiry > now => Ok(Some(e)),
            Some(Err(e)) => Err(e),
            _ => Err(RlError::Internal("could not read a lease by rank")),
        }
    }

    fn expiry_of(&mut self, id: &LeaseId) -> Result<Option<i64>, RlError> {
        if self.key.is_empty() {
            return Ok(None);
        }
        let member = Owned::new(self.key.cmd, id.as_bytes());
        let mut score = 0.0;
        // SAFETY: key is an open sorted set; the member string is ours.
        if unsafe { api!(ZsetScore)(self.key.raw, member.raw, &mut score) } != OK {
            return Ok(None);
        }
        classify(id.as_bytes(), score_ms(score)).map(|e| Some(e.expiry))
    }

    fn nonce(&mut self) -> u64 {
        nonce()
    }
}

/// 64 bits no earlier call of this process drew, and that another process
/// (a promoted replica, a restart) draws only by chance (2^-64 per pair):
/// a per-process counter put through a permutation of the 64-bit values
/// keyed by the process's random keys, so two counters never give one
/// nonce (a keyed hash alone could, 2^-64 per pair).
fn nonce() -> u64 {
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    permute(
        KEYS.get_or_init(RandomState::new),
        COUNTER.fetch_add(1, Ordering::Relaxed),
    )
}

/// A four-round Feistel network over the two 32-bit halves, SipHash under
/// `keys` its round function: a bijection whatever the round function, and
/// as hard to predict as SipHash.
fn permute(keys: &RandomState, v: u64) -> u64 {
    let (mut l, mut r) = ((v >> 32) as u32, v as u32);
    for round in 0..FEISTEL_ROUNDS {
        (l, r) = (r, l ^ feistel_round(keys, round, r));
    }
    (u64::from(l) << 32) | u64::from(r)
}

const FEISTEL_ROUNDS: u32 = 4;

fn feistel_round(keys: &RandomState, round: u32, half: u32) -> u32 {
    let mut h = keys.build_hasher();
    h.write_u32(round);
    h.write_u32(half);
    h.finish() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inverse undoes every round: `permute` is a bijection, so
    /// distinct counters give distinct nonces.
    #[test]
    fn nonces_are_a_permutation_of_the_counter() {
        let keys = RandomState::new();
        let unpermute = |v: u64| {
            let (mut l, mut r) = ((v >> 32) as u32, v as u32);
            for round in (0..FEISTEL_ROUNDS).rev() {
                (l, r) = (r ^ feistel_round(&keys, round, l), l);
            }
            (u64::from(l) << 32) | u64::from(r)
        };
        let mut seen = std::collections::HashSet::new();
        let probes = (0..100_000u64).chain([u64::MAX, 1 << 32, u64::MAX >> 32]);
        for v in probes {
            let n = permute(&keys, v);
            assert_eq!(unpermute(n), v);
            assert!(seen.insert(n), "{v} gave a nonce already drawn");
        }
        // Not the identity, nor the same under another process's keys.
        assert_ne!(permute(&keys, 1), 1);
        assert_ne!(permute(&keys, 1), permute(&RandomState::new(), 1));
    }
}

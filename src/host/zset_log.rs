//! The sliding log stored as a plain sorted set, read and written through
//! the low-level key API (no `RedisModule_Call` on the hot path).

use std::os::raw::c_int;

use super::ffi;

use smallvec::SmallVec;

use super::context::CommandCtx;
use super::ffi::api;
use super::ffi::OK;
use super::kept_strings;
use super::key_expiry;
use crate::core::decimal::Line;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::sliding_log::{Admission, LogView, MEMBERS_PER_MS};

/// An open sorted-set key. Closed on drop.
pub struct ZsetLog<'a> {
    cmd: &'a CommandCtx,
    key: *mut ffi::Key,
    key_index: usize,
}

/// What an admission wrote, as the server strings it added: the same
/// strings are handed to replication (no second formatting). Freed on drop.
pub struct Written {
    ctx: *mut ffi::Ctx,
    /// The entries' score, as a string.
    pub score: *mut ffi::Str,
    /// The members added, in order (one for a cost of 1: no heap vector).
    pub members: SmallVec<[*mut ffi::Str; 1]>,
}

impl Drop for Written {
    fn drop(&mut self) {
        for &s in self.members.iter().chain([&self.score]) {
            // SAFETY: each string was created by us and is freed once.
            unsafe { api!(FreeString)(self.ctx, s) }
        }
    }
}

impl<'a> ZsetLog<'a> {
    /// Opens the key at argument `key_index` for writing. Another type gets
    /// `WRONGTYPE` and is left untouched.
    pub fn open(cmd: &'a CommandCtx, key_index: usize) -> Result<Self, RlError> {
        let mode = (ffi::READ | ffi::WRITE) as c_int;
        // SAFETY: ctx and key name are valid for this call.
        let key = unsafe { api!(OpenKey)(cmd.raw, cmd.raw_arg(key_index), mode) };
        if key.is_null() {
            return Err(RlError::Internal("could not open the key"));
        }
        let log = ZsetLog {
            cmd,
            key,
            key_index,
        };
        // SAFETY: key is open.
        let kind = unsafe { api!(KeyType)(key) };
        if kind != ffi::KEYTYPE_EMPTY && kind != ffi::KEYTYPE_ZSET {
            return Err(RlError::WrongType);
        }
        Ok(log)
    }

    /// Opens the key at argument `key_index` for reading only (`RL.PEEK`):
    /// nothing can be written through it. A missing key reads as empty.
    pub fn open_read(cmd: &'a CommandCtx, key_index: usize) -> Result<Self, RlError> {
        // SAFETY: ctx and key name are valid for this call.
        let key = unsafe { api!(OpenKey)(cmd.raw, cmd.raw_arg(key_index), ffi::READ) };
        let log = ZsetLog {
            cmd,
            key,
            key_index,
        };
        if !log.is_empty() {
            // SAFETY: key is open.
            if unsafe { api!(KeyType)(key) } != ffi::KEYTYPE_ZSET {
                return Err(RlError::WrongType);
            }
        }
        Ok(log)
    }

    fn is_empty(&self) -> bool {
        // A key opened for reading is NULL when missing.
        // SAFETY: key is open.
        self.key.is_null() || unsafe { api!(KeyType)(self.key) == ffi::KEYTYPE_EMPTY }
    }

    /// Positions a range iterator; false when the range is empty. The caller
    /// must call `stop` after a true answer.
    fn start(&self, min: f64, max: f64, min_excl: bool, from_end: bool) -> bool {
        if self.is_empty() {
            return false;
        }
        // SAFETY: key is an open sorted set.
        unsafe {
            let f = if from_end {
                api!(ZsetLastInScoreRange)
            } else {
                api!(ZsetFirstInScoreRange)
            };
            // An empty range still answers OK, with the end already reached.
            if f(self.key, min, max, c_int::from(min_excl), 0) != OK {
                return false;
            }
            if api!(ZsetRangeEndReached)(self.key) != 0 {
                self.stop();
                return false;
            }
            true
        }
    }

    fn stop(&self) {
        // SAFETY: key is open; stopping an idle iterator is a no-op.
        unsafe { api!(ZsetRangeStop)(self.key) }
    }

    fn next(&self) -> bool {
        // SAFETY: an iterator is active on the open key.
        unsafe { api!(ZsetRangeNext)(self.key) != 0 }
    }

    /// The current element's score and, if asked, member (freed here).
    fn current(&self, want_member: bool) -> (f64, Option<*mut ffi::Str>) {
        let mut score = 0.0;
        // SAFETY: an iterator is active; the returned string is ours to free.
        unsafe {
            let ele = api!(ZsetRangeCurrentElement)(self.key, &mut score);
            if ele.is_null() {
                return (score, None);
            }
            if want_member {
                return (score, Some(ele));
            }
            api!(FreeString)(self.cmd.raw, ele);
            (score, None)
        }
    }

    /// Parses a member string as an integer and frees it.
    fn take_integer(&self, ele: *mut ffi::Str) -> Option<i64> {
        let mut value: i64 = 0;
        // SAFETY: ele came from the iterator and is ours; parsed, then freed.
        unsafe {
            let ok = api!(StringToLongLong)(ele, &mut value) == OK;
            api!(FreeString)(self.cmd.raw, ele);
            ok.then_some(value)
        }
    }

    /// Writes an admission's entries: new members at `at` (NX, skipping
    /// members that exist), then the eviction of stale entries (adding first,
    /// the key never empties between). The expiry is `keep_alive`'s, after
    /// replication of these. Nothing is written when a member cannot be
    /// numbered.
    pub fn apply(&mut self, a: &Admission) -> Result<Written, RlError> {
        // SAFETY: the string is made without a context, kept, and freed by
        // `Written` (one reference each).
        let score = kept_strings::SLIDE_SCORE.get(a.at, || unsafe {
            api!(CreateStringFromLongLong)(std::ptr::null_mut(), a.at)
        });
        let mut written = Written {
            ctx: self.cmd.raw,
            score,
            members: SmallVec::new(),
        };
        let mut candidate = a.first_member;
        let last_of_ms = a.at * MEMBERS_PER_MS + (MEMBERS_PER_MS - 1);
        while (written.members.len() as u64) < a.count {
            let added = if candidate > last_of_ms {
                Err(RlError::ForeignEntries)
            } else {
                self.add(a.at, candidate)
            };
            match added {
                Ok(Some(member)) => written.members.push(member),
                Ok(None) => {}
                Err(e) => {
                    // Members we could not number: undo ours, write nothing.
                    self.remove_members(&written.members);
                    return Err(e);
                }
            }
            candidate += 1;
        }
        self.cmd.notify(ffi::NOTIFY_ZSET, c"zadd", self.key_index);
        if let Some(cutoff) = a.evict_through {
            self.evict_through(cutoff);
            self.cmd
                .notify(ffi::NOTIFY_ZSET, c"zremrangebyscore", self.key_index);
        }
        self.cmd.signal_modified(self.key_index);
        Ok(written)
    }

    /// Moves the key's expiry if it falls short of `expiry` (after the
    /// entries were written and replicated).
    pub fn keep_alive(&mut self, expiry: &Expiry) -> Result<(), RlError> {
        key_expiry::keep_alive(self.cmd, self.key, self.key_index, expiry)
    }

    /// Adds one member unless it exists; the member string when added
    /// (ours to free), `None` when it existed.
    fn add(&mut self, score: i64, member: i64) -> Result<Option<*mut ffi::Str>, RlError> {
        // SAFETY: key is open for writing; the server copies the member; a
        // string we do not hand back is freed here.
        unsafe {
            // Formatted here: the server's own conversion is several times
            // slower for a member's 19 digits.
            let mut digits: Line<21> = Line::new();
            digits.signed(member);
            let text = digits.as_slice();
            let ele = api!(CreateString)(self.cmd.raw, text.as_ptr().cast(), text.len());
            let mut flags = ffi::ZADD_NX as c_int;
            let status = api!(ZsetAdd)(self.key, score as f64, ele, &mut flags);
            if status == OK && flags & ffi::ZADD_ADDED as c_int != 0 {
                return Ok(Some(ele));
            }
            api!(FreeString)(self.cmd.raw, ele);
            if status != OK {
                return Err(RlError::Internal("could not add to the sorted set"));
            }
            Ok(None)
        }
    }

    fn remove_members(&mut self, members: &[*mut ffi::Str]) {
        for &ele in members {
            // SAFETY: key is open for writing; the string stays ours.
            unsafe {
                api!(ZsetRem)(self.key, ele, std::ptr::null_mut());
            }
        }
    }

    /// Removes every entry with score `<= cutoff`. The iterator cannot
    /// survive removals, so members are collected first.
    fn evict_through(&mut self, cutoff: i64) {
        let mut stale = Vec::new();
        if self.start(f64::NEG_INFINITY, cutoff as f64, false, false) {
            loop {
                if let (_, Some(ele)) = self.current(true) {
                    stale.push(ele);
                }
                if !self.next() {
                    break;
                }
            }
            self.stop();
        }
        for ele in stale {
            // SAFETY: key is open; ele came from the iterator and is ours.
            unsafe {
                api!(ZsetRem)(self.key, ele, std::ptr::null_mut());
                api!(FreeString)(self.cmd.raw, ele);
            }
        }
    }
}

impl LogView for ZsetLog<'_> {
    fn entry_count(&mut self) -> u64 {
        if self.is_empty() {
            return 0;
        }
        // SAFETY: key is open.
        unsafe { api!(ValueLength)(self.key) as u64 }
    }

    fn count_through(&mut self, score: i64) -> u64 {
        if !self.start(f64::NEG_INFINITY, score as f64, false, false) {
            return 0;
        }
        let mut n = 1;
        while self.next() {
            n += 1;
        }
        self.stop();
        n
    }

    fn nth_after(&mut self, after: i64, n: u64) -> Option<i64> {
        if n == 0 || !self.start(after as f64, f64::INFINITY, true, false) {
            return None;
        }
        let mut found = true;
        for _ in 1..n {
            if !self.next() {
                found = false;
                break;
            }
        }
        let score = found.then(|| self.current(false).0 as i64);
        self.stop();
        score
    }

    fn newest_from(&mut self, min: i64) -> Option<(i64, Option<i64>)> {
        let min = if min == i64::MIN {
            f64::NEG_INFINITY
        } else {
            min as f64
        };
        if !self.start(min, f64::INFINITY, false, true) {
            return None;
        }
        let (score, ele) = self.current(true);
        self.stop();
        Some((score_ms(score), ele.and_then(|e| self.take_integer(e))))
    }
}

/// A score as whole ms; `as` saturates, so `+inf` reads as `i64::MAX`,
/// which the core refuses as a foreign entry.
fn score_ms(score: f64) -> i64 {
    score as i64
}

impl Drop for ZsetLog<'_> {
    fn drop(&mut self) {
        if self.key.is_null() {
            return;
        }
        // SAFETY: the key was opened by us and is closed once.
        unsafe { api!(CloseKey)(self.key) }
    }
}

//! The sliding log stored as a plain sorted set, read and written through
//! the low-level key API (no `RedisModule_Call` on the hot path).

use std::os::raw::c_int;

use super::ffi;

use smallvec::SmallVec;

use super::call;
use super::context::CommandCtx;
use super::ffi::api;
use super::ffi::OK;
use super::kept_strings;
use super::key::{Access, KeyKind, OpenKey};
use super::replicate;
use super::store::Store;
use crate::core::decimal::Line;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::slide::log::{
    member_integer, Admission, Entry, LogView, LogWrite, Oldest, BLOCK_MEMBER, BLOCK_MEMBER_TEXT,
    MEMBERS_PER_MS,
};

/// Entries an iterator walks before a count or an index goes through the
/// server's rank lookup (O(log N)) instead: a handful in the steady state,
/// a backlog after a burst and a pause.
const WALK_MAX: u64 = 64;

/// Logs of up to this many entries have their newest entry read by walking
/// from the oldest: one iterator reads both ends, where a second iterator
/// costs more than these steps (each range start checks both ends again).
const WALK_TO_NEWEST: u64 = 3;

/// An open sorted-set key. Closed on drop.
pub struct ZsetLog<'a> {
    key: OpenKey<'a>,
    /// The oldest entry, when `newest` read it on its way (a log of at most
    /// [`WALK_TO_NEWEST`] entries), so `oldest_through` need not read it
    /// again. Cleared by every write.
    oldest_seen: Option<Entry>,
    /// The entry count `ends` read, so the decision's count after it costs
    /// no second server call. Cleared by every write.
    count_seen: Option<u64>,
    /// The members of the stale entries `ends` read, oldest first, as the
    /// server strings it got: an admission removes these same entries, and
    /// removing them by these strings spares a second walk that reads each
    /// one again. Ours to free (by the eviction or on drop).
    stale_read: SmallVec<[*mut ffi::Str; 4]>,
}

impl Drop for ZsetLog<'_> {
    fn drop(&mut self) {
        self.free_stale_read();
    }
}

/// rl's logs are sorted sets that always carry a TTL.
const ZSET: KeyKind = KeyKind {
    key_type: ffi::KEYTYPE_ZSET,
    without_ttl: Some(RlError::ForeignZset),
};

/// What an admission wrote, as the server strings it added: the same
/// strings are handed to replication (no second formatting). Freed on drop.
struct Written {
    ctx: *mut ffi::Ctx,
    /// The entries' score, as a string: the kept one, borrowed (no
    /// reference of ours to take and drop on every admission). Only the
    /// replication of this admission reads it, right after the write,
    /// before any other admission could replace the kept string, and the
    /// server takes its own reference to what it replicates.
    score: *mut ffi::Str,
    /// The members added, in order (one for a cost of 1: no heap vector).
    members: SmallVec<[*mut ffi::Str; 1]>,
}

impl Drop for Written {
    fn drop(&mut self) {
        for &s in &self.members {
            // SAFETY: each string was created by us and is freed once.
            unsafe { api!(FreeString)(self.ctx, s) }
        }
    }
}

impl<'a> Store<'a> for ZsetLog<'a> {
    type Write = LogWrite;

    fn open(cmd: &'a CommandCtx, key_index: usize, access: Access) -> Result<Self, RlError> {
        let key = OpenKey::open(cmd, key_index, access, &ZSET)?;
        Ok(ZsetLog {
            key,
            oldest_seen: None,
            count_seen: None,
            stale_read: SmallVec::new(),
        })
    }

    fn record(&mut self, write: &LogWrite) -> Result<(), RlError> {
        self.oldest_seen = None;
        self.count_seen = None;
        let recorded = match write {
            LogWrite::Admit(admission) => self.admit(admission),
            LogWrite::Remove(members) => self.remove(members),
            LogWrite::Block { until, expiry } => self.block(*until, expiry),
            LogWrite::Unblock => {
                self.remove_block();
                Ok(())
            }
        };
        self.free_stale_read();
        recorded
    }
}

impl ZsetLog<'_> {
    /// An admission: the new members (`ZADD`), the stale ones removed by
    /// rank (`ZREMRANGEBYRANK`), then the expiry.
    fn admit(&mut self, admission: &Admission) -> Result<(), RlError> {
        let written = self.apply(admission)?;
        replicate::zadd(
            self.key.cmd,
            self.key.index,
            written.score,
            &written.members,
        );
        if admission.evict > 0 {
            replicate::zrem_oldest(self.key.cmd, self.key.index, admission.evict);
        }
        if admission.unblock {
            // After the entries are in: the key never empties between.
            self.remove_block();
        }
        self.key.keep_alive(&admission.expiry)
    }

    /// A block: the block's member at score `until` (`ZADD key until "rl
    /// block"`, its score replaced if an ended one is there), then the
    /// expiry.
    fn block(&mut self, until: i64, expiry: &Expiry) -> Result<(), RlError> {
        let mut score: Line<21> = Line::new();
        score.signed(until);
        let score = score.as_slice();
        // SAFETY: key is open for writing; both strings are ours, kept for
        // replication and freed below (the server copies the member).
        unsafe {
            let raw = self.key.cmd.raw;
            let ele = api!(CreateString)(
                raw,
                BLOCK_MEMBER_TEXT.as_ptr().cast(),
                BLOCK_MEMBER_TEXT.len(),
            );
            let s = api!(CreateString)(raw, score.as_ptr().cast(), score.len());
            let mut flags: c_int = 0;
            let status = api!(ZsetAdd)(self.key.raw, until as f64, ele, &mut flags);
            if status == OK {
                let cmd = self.key.cmd;
                cmd.notify(ffi::NOTIFY_ZSET, c"zadd", self.key.index);
                cmd.signal_modified(self.key.index);
                replicate::zadd(cmd, self.key.index, s, &[ele]);
            }
            api!(FreeString)(raw, ele);
            api!(FreeString)(raw, s);
            if status != OK {
                return Err(RlError::Internal("could not add to the sorted set"));
            }
        }
        self.key.keep_alive(expiry)
    }

    /// Removes the block's member, if there (`ZREM key "rl block"`).
    fn remove_block(&mut self) {
        let cmd = self.key.cmd;
        let mut deleted: c_int = 0;
        // SAFETY: key is open for writing; the string is ours, freed below.
        unsafe {
            let ele = api!(CreateString)(
                cmd.raw,
                BLOCK_MEMBER_TEXT.as_ptr().cast(),
                BLOCK_MEMBER_TEXT.len(),
            );
            if api!(ZsetRem)(self.key.raw, ele, &mut deleted) == OK && deleted != 0 {
                cmd.notify(ffi::NOTIFY_ZSET, c"zrem", self.key.index);
                if self.is_empty() {
                    // As ZREM does when it removes the last member.
                    cmd.notify(ffi::NOTIFY_GENERIC, c"del", self.key.index);
                }
                cmd.signal_modified(self.key.index);
                replicate::zrem(cmd, self.key.index, &[ele]);
            }
            api!(FreeString)(cmd.raw, ele);
        }
    }

    /// A refund: the named members removed and replicated as `ZREM key m1
    /// m2 ...`. The expiry is left: it covers the newest entry, which a
    /// removal never makes newer (the key may outlive its last entry's
    /// window by as much as before).
    fn remove(&mut self, members: &[i64]) -> Result<(), RlError> {
        let mut removed: SmallVec<[*mut ffi::Str; 4]> = SmallVec::new();
        for &member in members {
            let mut digits: Line<21> = Line::new();
            digits.signed(member);
            let text = digits.as_slice();
            let mut deleted: c_int = 0;
            // SAFETY: key is open for writing; the string is ours, kept for
            // replication and freed below.
            unsafe {
                let ele = api!(CreateString)(self.key.cmd.raw, text.as_ptr().cast(), text.len());
                if api!(ZsetRem)(self.key.raw, ele, &mut deleted) == OK && deleted != 0 {
                    removed.push(ele);
                } else {
                    api!(FreeString)(self.key.cmd.raw, ele);
                }
            }
        }
        if !removed.is_empty() {
            let cmd = self.key.cmd;
            cmd.notify(ffi::NOTIFY_ZSET, c"zrem", self.key.index);
            if self.is_empty() {
                // As ZREM does when it removes the last member.
                cmd.notify(ffi::NOTIFY_GENERIC, c"del", self.key.index);
            }
            cmd.signal_modified(self.key.index);
            replicate::zrem(cmd, self.key.index, &removed);
        }
        for ele in removed {
            // SAFETY: each string was created above and is freed once.
            unsafe { api!(FreeString)(self.key.cmd.raw, ele) }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.key.is_empty()
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
            if f(self.key.raw, min, max, c_int::from(min_excl), 0) != OK {
                return false;
            }
            if api!(ZsetRangeEndReached)(self.key.raw) != 0 {
                self.stop();
                return false;
            }
            true
        }
    }

    fn stop(&self) {
        // SAFETY: key is open; stopping an idle iterator is a no-op.
        unsafe { api!(ZsetRangeStop)(self.key.raw) }
    }

    fn next(&self) -> bool {
        // SAFETY: an iterator is active on the open key.
        unsafe { api!(ZsetRangeNext)(self.key.raw) != 0 }
    }

    /// The current element's score and, if asked, member (freed here).
    fn current(&self, want_member: bool) -> (f64, Option<*mut ffi::Str>) {
        let mut score = 0.0;
        // SAFETY: an iterator is active; the returned string is ours to free.
        unsafe {
            let ele = api!(ZsetRangeCurrentElement)(self.key.raw, &mut score);
            if ele.is_null() {
                return (score, None);
            }
            if want_member {
                return (score, Some(ele));
            }
            api!(FreeString)(self.key.cmd.raw, ele);
            (score, None)
        }
    }

    /// The current element, its member parsed.
    fn current_entry(&self) -> Entry {
        let (score, ele) = self.current(true);
        Entry {
            score: score_ms(score),
            member: ele.and_then(|e| self.take_integer(e)),
        }
    }

    /// Parses a member string as an integer and frees it.
    fn take_integer(&self, ele: *mut ffi::Str) -> Option<i64> {
        let value = integer(ele);
        // SAFETY: ele came from the iterator and is ours; parsed, then freed.
        unsafe { api!(FreeString)(self.key.cmd.raw, ele) };
        value
    }

    fn free_stale_read(&mut self) {
        for ele in self.stale_read.drain(..) {
            // SAFETY: each string came from the iterator, is ours and is
            // freed once (drained).
            unsafe { api!(FreeString)(self.key.cmd.raw, ele) }
        }
    }

    /// Writes an admission's entries: new members at `at` (NX, skipping
    /// members that exist), then the eviction of stale entries (adding first,
    /// the key never empties between). Nothing is written when a member
    /// cannot be numbered.
    fn apply(&mut self, a: &Admission) -> Result<Written, RlError> {
        // SAFETY: the string is made without a context and kept (freed
        // when another score replaces it, or at unload).
        let score = kept_strings::SLIDE_SCORE.borrow(a.at, || unsafe {
            api!(CreateStringFromLongLong)(std::ptr::null_mut(), a.at)
        });
        let mut written = Written {
            ctx: self.key.cmd.raw,
            score,
            members: SmallVec::new(),
        };
        // A member `at * 10^6 + n` reads as the score's digits and then `n`
        // in six digits (for `at` above 0): its text is made from the
        // score's string, which every admission in the ms shares, rather
        // than formatted whole.
        let score_digits = if a.at > 0 {
            super::ffi::string_bytes(score)
        } else {
            &[]
        };
        let mut candidate = a.first_member;
        let last_of_ms = a.at * MEMBERS_PER_MS + (MEMBERS_PER_MS - 1);
        while (written.members.len() as u64) < a.count {
            let added = if candidate > last_of_ms {
                Err(RlError::ForeignZset)
            } else {
                let mut digits: Line<21> = Line::new();
                if score_digits.is_empty() {
                    digits.signed(candidate);
                } else {
                    digits.bytes(score_digits);
                    digits.fixed((candidate - a.at * MEMBERS_PER_MS) as u64, 6);
                }
                self.add(a.at, digits.as_slice())
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
        self.key
            .cmd
            .notify(ffi::NOTIFY_ZSET, c"zadd", self.key.index);
        if a.evict > 0 {
            self.evict_oldest(a.evict);
            self.key
                .cmd
                .notify(ffi::NOTIFY_ZSET, c"zremrangebyrank", self.key.index);
        }
        self.key.cmd.signal_modified(self.key.index);
        Ok(written)
    }

    /// Adds one member, given as its decimal text, unless it exists; the
    /// member string when added (ours to free), `None` when it existed.
    /// (Formatted by the caller: the server's own conversion is several
    /// times slower for a member's 19 digits.)
    fn add(&mut self, score: i64, text: &[u8]) -> Result<Option<*mut ffi::Str>, RlError> {
        // SAFETY: key is open for writing; the server copies the member; a
        // string we do not hand back is freed here.
        unsafe {
            let ele = api!(CreateString)(self.key.cmd.raw, text.as_ptr().cast(), text.len());
            let mut flags = ffi::ZADD_NX as c_int;
            let status = api!(ZsetAdd)(self.key.raw, score as f64, ele, &mut flags);
            if status == OK && flags & ffi::ZADD_ADDED as c_int != 0 {
                return Ok(Some(ele));
            }
            api!(FreeString)(self.key.cmd.raw, ele);
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
                api!(ZsetRem)(self.key.raw, ele, std::ptr::null_mut());
            }
        }
    }

    /// Removes the `n` oldest entries (the core checked they are stale and
    /// rl's). The iterator cannot survive removals, so members are
    /// collected first.
    fn evict_oldest(&mut self, n: u64) {
        let mut stale: SmallVec<[*mut ffi::Str; 8]> = SmallVec::new();
        let n_read = usize::try_from(n).unwrap_or(usize::MAX);
        if self.stale_read.len() >= n_read {
            // The oldest `n` as `ends` read them (only entries were added
            // since): the same members, without reading them again.
            stale.extend(self.stale_read.drain(..n_read));
            self.free_stale_read();
        } else if self.start(f64::NEG_INFINITY, f64::INFINITY, false, false) {
            loop {
                if let (_, Some(ele)) = self.current(true) {
                    stale.push(ele);
                }
                if stale.len() as u64 >= n || !self.next() {
                    break;
                }
            }
            self.stop();
        }
        for ele in stale {
            // SAFETY: key is open; ele came from the iterator and is ours.
            unsafe {
                api!(ZsetRem)(self.key.raw, ele, std::ptr::null_mut());
                api!(FreeString)(self.key.cmd.raw, ele);
            }
        }
    }
}

impl LogView for ZsetLog<'_> {
    fn entry_count(&mut self) -> u64 {
        if let Some(n) = self.count_seen {
            return n;
        }
        if self.is_empty() {
            return 0;
        }
        // SAFETY: key is open.
        unsafe { api!(ValueLength)(self.key.raw) as u64 }
    }

    fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest {
        let mut out = Oldest::default();
        // The oldest entry as `newest` read it: the whole answer when it is
        // still in the window (nothing is stale), or when it is the only one.
        if let Some(oldest) = self.oldest_seen.take() {
            let only = self.entry_count() == 1;
            if oldest.score > cutoff || only {
                out.stale = u64::from(oldest.score <= cutoff);
                out.entries.push(oldest);
                return out;
            }
        }
        if !self.start(f64::NEG_INFINITY, f64::INFINITY, false, false) {
            return out;
        }
        let mut walked_past = false;
        loop {
            // The member is read only for an entry that may be kept: the
            // oldest, or one the admission may remove.
            let may_keep = out.entries.is_empty() || out.stale < max_read;
            let (score, ele) = self.current(may_keep);
            let member = ele.and_then(|e| self.take_integer(e));
            let stale = score <= cutoff as f64;
            if out.entries.is_empty() || (stale && out.stale < max_read) {
                out.entries.push(Entry {
                    score: score_ms(score),
                    member,
                });
            }
            if !stale {
                walked_past = true;
                break;
            }
            out.stale += 1;
            if out.stale >= max_read.max(WALK_MAX) || !self.next() {
                break;
            }
        }
        self.stop();
        // Walked as far as allowed and still among stale entries: the rest
        // are counted by the server's rank lookup.
        if !walked_past && out.stale >= max_read.max(WALK_MAX) && out.stale < self.entry_count() {
            if let Some(n) = call::zcount_through(self.key.cmd, self.key.index, cutoff) {
                out.stale = n;
            }
        }
        out
    }

    fn nth_after(&mut self, after: i64, rank: u64, n: u64) -> Option<i64> {
        if n == 0 {
            return None;
        }
        if n > WALK_MAX {
            // 0-based rank of the n-th entry after the `rank` stale ones.
            return call::zscore_at_rank(self.key.cmd, self.key.index, rank + n - 1).map(score_ms);
        }
        if !self.start(after as f64, f64::INFINITY, true, false) {
            return None;
        }
        let mut found = true;
        for _ in 1..n {
            if !self.next() {
                found = false;
                break;
            }
        }
        let score = found.then(|| score_ms(self.current(false).0));
        self.stop();
        score
    }

    fn newest_after(&mut self, after: i64, n: u64) -> SmallVec<[Entry; 4]> {
        let mut out = SmallVec::new();
        if n == 0 || !self.start(after as f64, f64::INFINITY, true, true) {
            return out;
        }
        loop {
            let (score, ele) = self.current(true);
            out.push(Entry {
                score: score_ms(score),
                member: ele.and_then(|e| self.take_integer(e)),
            });
            // SAFETY: an iterator is active on the open key.
            if out.len() as u64 >= n || unsafe { api!(ZsetRangePrev)(self.key.raw) } == 0 {
                break;
            }
        }
        self.stop();
        out
    }

    /// One pass from the oldest entry: the entries that left the window
    /// (as `oldest_through` reads them), then on to the newest when it is a
    /// step or two further, else from the other end. Each entry is read
    /// once, where `newest` then `oldest_through` read a log's oldest entry
    /// twice when it left the window.
    fn ends(&mut self, cutoff: i64, max_read: u64) -> (Option<Entry>, Oldest) {
        self.oldest_seen = None;
        self.free_stale_read();
        let mut out = Oldest::default();
        let len = self.entry_count();
        self.count_seen = Some(len);
        if len == 0 || !self.start(f64::NEG_INFINITY, f64::INFINITY, false, false) {
            return (None, out);
        }
        // The rank of the entry the iterator is on, and that entry when its
        // member was read.
        let mut rank: u64 = 0;
        let mut last: Option<Entry>;
        let mut walked_past = false;
        let mut active = true;
        loop {
            let may_keep = out.entries.is_empty() || out.stale < max_read;
            let (score, ele) = self.current(may_keep);
            let stale = score <= cutoff as f64;
            // An entry an admission may remove keeps its member string.
            let removable = stale && out.stale < max_read;
            let member = match ele {
                Some(e) if removable => {
                    self.stale_read.push(e);
                    integer(e)
                }
                Some(e) => self.take_integer(e),
                None => None,
            };
            let entry = Entry {
                score: score_ms(score),
                member,
            };
            last = may_keep.then_some(entry);
            if out.entries.is_empty() || (stale && out.stale < max_read) {
                out.entries.push(entry);
            }
            if !stale {
                walked_past = true;
                break;
            }
            out.stale += 1;
            if out.stale >= max_read.max(WALK_MAX) {
                break;
            }
            if !self.next() {
                active = false;
                break;
            }
            rank += 1;
        }
        let to_newest = (len - 1).saturating_sub(rank);
        let newest = match last {
            Some(e) if to_newest == 0 => Some(e),
            _ if active && to_newest < WALK_TO_NEWEST => {
                let mut reached = true;
                for _ in 0..to_newest {
                    if !self.next() {
                        reached = false;
                        break;
                    }
                }
                reached.then(|| self.current_entry())
            }
            _ => None,
        };
        self.stop();
        let newest = match newest {
            Some(e) => Some(e),
            None if self.start(f64::NEG_INFINITY, f64::INFINITY, false, true) => {
                let e = self.current_entry();
                self.stop();
                Some(e)
            }
            None => None,
        };
        // Walked as far as allowed and still among stale entries: the rest
        // are counted by the server's rank lookup.
        if !walked_past && out.stale >= max_read.max(WALK_MAX) && out.stale < len {
            if let Some(n) = call::zcount_through(self.key.cmd, self.key.index, cutoff) {
                out.stale = n;
            }
        }
        (newest, out)
    }

    fn newest(&mut self) -> Option<Entry> {
        self.oldest_seen = None;
        let len = self.entry_count();
        let from_oldest = (2..=WALK_TO_NEWEST).contains(&len);
        if !self.start(f64::NEG_INFINITY, f64::INFINITY, false, !from_oldest) {
            return None;
        }
        if from_oldest {
            self.oldest_seen = Some(self.current_entry());
            for _ in 1..len {
                if !self.next() {
                    break;
                }
            }
        }
        let newest = self.current_entry();
        self.stop();
        if len == 1 {
            self.oldest_seen = Some(newest);
        }
        Some(newest)
    }
}

/// A member string as an integer, if it is one (as the server parses it);
/// the block's member as [`BLOCK_MEMBER`], and the integer that stands
/// for it as no integer (not rl's).
fn integer(ele: *mut ffi::Str) -> Option<i64> {
    let mut len: usize = 0;
    // SAFETY: ele is a live server string; the pointer is read for `len`
    // bytes while ele lives.
    let bytes = unsafe {
        let ptr = api!(StringPtrLen)(ele, &mut len);
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    };
    match member_integer(bytes) {
        Some(value) => (value != BLOCK_MEMBER).then_some(value),
        None => (bytes == BLOCK_MEMBER_TEXT).then_some(BLOCK_MEMBER),
    }
}

/// A score as whole ms. rl writes whole, finite ms (log entries and
/// leases): anything else (`+inf`, a fraction) reads as `i64::MIN`, which
/// the core refuses as foreign.
pub(super) fn score_ms(score: f64) -> i64 {
    if !score.is_finite() || score.fract() != 0.0 {
        return i64::MIN;
    }
    score as i64
}

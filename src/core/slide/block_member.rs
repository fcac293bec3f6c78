//! A block on a sliding log: one member, [`BLOCK_MEMBER_TEXT`], whose score
//! is the block's end `T`. While it holds, `T > now >=` every entry's score
//! (entries are recorded at `now` or at the newest entry's score), so it is
//! the log's newest entry: the read every call makes of the newest shows
//! it, at no extra cost to a log without one. Once it has ended, the next
//! admission removes it (`ZREM`); until then [`SkipBlock`] reads the log
//! as if it were not there, so the count, the stale entries and the
//! eviction by rank (it has the highest rank: it never reaches it) stay
//! those of the entries alone.

use smallvec::SmallVec;

use super::log::{Entry, LogView, LogWrite, Oldest};
use crate::core::expiry::Expiry;
use crate::core::options::block;

/// A log read without its block's member. The block is found by the first
/// read of the newest entry ([`LogView::ends`] or [`LogView::newest`]),
/// which every call on a log makes first; the other reads rely on it.
pub struct SkipBlock<'a, V> {
    pub log: &'a mut V,
    /// The block's end, once the newest entry read showed one.
    pub block: Option<i64>,
}

impl<'a, V: LogView> SkipBlock<'a, V> {
    pub fn new(log: &'a mut V) -> Self {
        SkipBlock { log, block: None }
    }

    /// The newest entry that is not the block, `newest` as read.
    fn real_newest(&mut self, newest: Option<Entry>) -> Option<Entry> {
        match newest {
            Some(e) if e.is_block() => {
                self.block = Some(e.score);
                // The second newest: scores are all above i64::MIN.
                self.log.newest_after(i64::MIN, 2).get(1).copied()
            }
            other => other,
        }
    }

    /// `o` without the block's member (among the oldest when every entry
    /// has left the window), its count of stale entries without it.
    fn skip_in(&self, mut o: Oldest, cutoff: i64) -> Oldest {
        if let Some(t) = self.block {
            if t <= cutoff {
                o.stale = o.stale.saturating_sub(1);
            }
            o.entries.retain(|e| !e.is_block());
        }
        o
    }
}

impl<V: LogView> LogView for SkipBlock<'_, V> {
    fn entry_count(&mut self) -> u64 {
        self.log.entry_count() - u64::from(self.block.is_some())
    }
    fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest {
        let o = self.log.oldest_through(cutoff, max_read);
        self.skip_in(o, cutoff)
    }
    fn nth_after(&mut self, after: i64, rank: u64, n: u64) -> Option<i64> {
        // Past the entries: the block's member is the only one left.
        if self.block.is_some() && rank + n > self.entry_count() {
            return None;
        }
        self.log.nth_after(after, rank, n)
    }
    fn newest(&mut self) -> Option<Entry> {
        let newest = self.log.newest();
        self.real_newest(newest)
    }
    fn newest_after(&mut self, after: i64, n: u64) -> SmallVec<[Entry; 4]> {
        match self.block {
            Some(t) if t > after => {
                let mut walk = self.log.newest_after(after, n + 1);
                walk.retain(|e| !e.is_block());
                walk.truncate(n as usize);
                walk
            }
            _ => self.log.newest_after(after, n),
        }
    }
    fn ends(&mut self, cutoff: i64, max_read: u64) -> (Option<Entry>, Oldest) {
        let (newest, oldest) = self.log.ends(cutoff, max_read);
        let newest = self.real_newest(newest);
        let oldest = self.skip_in(oldest, cutoff);
        (newest, oldest)
    }
}

/// The write that blocks a log until `now + ms` (`BLOCK ms` on a denial,
/// `RL.BLOCK`), the entries as they are. Its end is also past the newest
/// entry (a clock that stepped back wrote entries after `now`), so the
/// block's member stays the newest. The key lives at least until the end.
pub fn block_write(newest: Option<Entry>, now: i64, ms: u64) -> LogWrite {
    let until = block::end(now, ms).max(newest.map_or(i64::MIN, |e| e.score.saturating_add(1)));
    LogWrite::Block {
        until,
        expiry: Expiry {
            needed_ms: until,
            slack_ms: 0,
        },
    }
}

/// The block's end a write sets (`i64::MIN` for a write that sets none).
pub fn write_until(write: &LogWrite) -> i64 {
    match write {
        LogWrite::Block { until, .. } => *until,
        _ => i64::MIN,
    }
}

//! Per-prefix counts (`rl.stats-prefixes`): for each configured prefix,
//! the limiter calls on keys that start with it, admitted, denied and
//! shadow-admitted, shown by `INFO rl` as `rl_prefix_<i>`.
//!
//! Counted after the call, from its keys and how it ended, only while the
//! list is set; with none set a call pays one load of a flag
//! ([`super::metrics::extra`]).

use std::sync::Mutex;

use smallvec::SmallVec;

use super::ffi;
use super::ffi::string_bytes;
use super::key_access::KeyAccess;
use super::metrics::{self, Ended};

/// One prefix's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixCounts {
    pub prefix: Vec<u8>,
    pub admitted: u64,
    pub denied: u64,
    /// Admitted in shadow mode though the limiter denied: a subset of
    /// `admitted`.
    pub shadow_denied: u64,
}

/// The configured prefixes, in their order. Only the main thread touches
/// it (commands, `CONFIG SET`, `INFO`): the lock never contends.
static STATS: Mutex<Vec<PrefixCounts>> = Mutex::new(Vec::new());

/// Takes a new list: a prefix already listed keeps its counts (a scraper's
/// counter does not reset because another prefix was added), a new one
/// starts at zero, one no longer listed is dropped.
pub fn replace(list: Vec<Vec<u8>>) {
    let Ok(mut stats) = STATS.lock() else {
        return;
    };
    let fresh: Vec<PrefixCounts> = list
        .into_iter()
        .map(|prefix| {
            stats
                .iter()
                .find(|c| c.prefix == prefix)
                .cloned()
                .unwrap_or(PrefixCounts {
                    prefix,
                    admitted: 0,
                    denied: 0,
                    shadow_denied: 0,
                })
        })
        .collect();
    metrics::set_prefix_stats(!fresh.is_empty());
    *stats = fresh;
}

/// A copy of the counters, for `INFO`.
pub fn read() -> Vec<PrefixCounts> {
    STATS.lock().map(|s| s.clone()).unwrap_or_default()
}

/// Counts one limiter call that ended `outcome` under every prefix one of
/// its keys starts with, once per prefix. `RL.PEEK` (a read), the counters
/// and the commands that answer rather than decide are not counted.
pub(crate) fn count(
    argv: *mut *mut ffi::Str,
    argc: usize,
    key: KeyAccess,
    outcome: Ended,
    shadowed: bool,
) {
    // A denial by a block is a denial, as the command's own counters say.
    if !matches!(outcome, Ended::Admitted | Ended::Denied | Ended::Blocked) {
        return;
    }
    // SAFETY: argv holds argc live strings for the whole call.
    let arg = |i: usize| (i < argc).then(|| string_bytes(unsafe { *argv.add(i) }));
    let (first, n) = match key {
        KeyAccess::ReadWriteUpdate => (1, 1),
        KeyAccess::ReadWriteUpdateKeyNum(at) => {
            let at = at as usize;
            // An admitted or denied call had a valid key count.
            let n = arg(at)
                .and_then(|b| std::str::from_utf8(b).ok()?.parse::<usize>().ok())
                .unwrap_or(0);
            (at + 1, n)
        }
        KeyAccess::ReadOnly | KeyAccess::ReadOnlyAt(_) | KeyAccess::ReadWriteUpdateAt(_) => return,
    };
    let keys: SmallVec<[&[u8]; 4]> = (first..first.saturating_add(n)).map_while(arg).collect();
    let Ok(mut stats) = STATS.lock() else {
        return;
    };
    for c in stats.iter_mut() {
        if !keys.iter().any(|k| k.starts_with(&c.prefix)) {
            continue;
        }
        if outcome == Ended::Admitted {
            c.admitted += 1;
            c.shadow_denied += u64::from(shadowed);
        } else {
            c.denied += 1;
        }
    }
}

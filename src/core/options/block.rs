//! Blocks: a key shut for a while after a breach (`BLOCK ms` on a limiter's
//! command) or by hand (`RL.BLOCK`), lifted early by `RL.UNBLOCK`.
//!
//! A block is one absolute instant, the ms it ends (`until`), kept in the
//! limiter's own key beside its state (the layouts are in each storage
//! kind's file: `string_key.rs` for THROTTLE and FIXED, `buckets/layout.rs`
//! for BUCKETS, `slide/block_member.rs` for SLIDE; `RL.BLOCK` and
//! `RL.UNBLOCK` on each in its limiter's `block.rs`). While `now < until`
//! every call on the key is denied before its state is read or
//! counted, with `retry_after_ms = until - now`; the end never moves while
//! the block holds (denials write nothing), so a client may cache it. The
//! first denial of a call that carries `BLOCK ms` writes the block, ending
//! at `now + ms`, and answers as the block does ([`breached`]); the state
//! itself stays as it was.

use crate::core::args::{positive, MAX_WINDOW_MS};
use crate::core::decision::Decision;
use crate::core::error::RlError;

/// Longest block in ms (about 31.7 years), as the longest window: every
/// block end stays exact in a double and far from integer overflow.
pub const MAX_BLOCK_MS: u64 = MAX_WINDOW_MS;

/// The block on a key at `now`, if one holds: the denial every call gets
/// until it ends. A block whose end has come holds no more.
pub fn holds(until_ms: Option<i64>, now_ms: i64) -> Option<Decision> {
    let until = until_ms?;
    if until <= now_ms {
        return None;
    }
    let left = until.saturating_sub(now_ms) as u64;
    Some(Decision {
        allowed: false,
        remaining: 0,
        retry_after_ms: left,
        reset_after_ms: left,
        blocked: true,
    })
}

/// What the denial that sets a block of `ms` answers: the block's own
/// denial, as every later call gets it until the block ends, so a caller
/// that waits its `retry_after_ms` is not denied again by the block its
/// breach set (and `WAIT` waits for the block's end, or not at all).
pub fn breached(ms: u64) -> Decision {
    Decision {
        allowed: false,
        remaining: 0,
        retry_after_ms: ms,
        reset_after_ms: ms,
        blocked: false,
    }
}

/// The end of a block that holds at `now`, `None` for none or one whose
/// end has come.
pub fn in_force(until_ms: Option<i64>, now_ms: i64) -> Option<i64> {
    until_ms.filter(|&u| u > now_ms)
}

/// The end of a block of `ms` from `now`.
pub fn end(now_ms: i64, ms: u64) -> i64 {
    now_ms.saturating_add(ms as i64)
}

/// The value of a `BLOCK ms` option, named in its error.
pub fn block_option(name: &'static str, value: &[u8]) -> Result<u64, RlError> {
    positive(value, name, MAX_BLOCK_MS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_block_holds_until_its_end_and_not_at_it() {
        assert_eq!(holds(None, 5), None);
        assert_eq!(holds(Some(5), 5), None);
        assert_eq!(holds(Some(4), 5), None);
        let d = holds(Some(1_005), 5).unwrap();
        assert_eq!(d.to_reply(), [0, 0, 1000, 1000]);
        assert!(d.blocked);
    }

    proptest! {
        /// While a block holds, every reply denies, and its wait counts down
        /// to the same end whatever the call (T never moves).
        #[test]
        fn a_block_never_admits_and_its_end_stays(until in 0i64..1_000_000, nows in proptest::collection::vec(0i64..1_000_000, 1..50)) {
            for now in nows {
                match holds(Some(until), now) {
                    Some(d) => {
                        prop_assert!(now < until);
                        prop_assert!(!d.allowed && d.blocked);
                        prop_assert_eq!(now + d.retry_after_ms as i64, until);
                    }
                    None => prop_assert!(now >= until),
                }
            }
        }
    }
}

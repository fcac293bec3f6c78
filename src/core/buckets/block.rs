//! `RL.BLOCK BUCKETS` and `RL.UNBLOCK BUCKETS`: the block's end in the
//! hash's header, the buckets as they are.

use super::decide::block_write;
use super::layout::{load_blocked, without_block, HashView, HashWrite, Kind, FIELD_HEADER};
use crate::core::error::RlError;
use crate::core::expiry::Expiry;

/// What `RL.UNBLOCK` does to a bucket hash: the header written back
/// without its block (the key's expiry kept: it covers the block's end,
/// and the hash does not store its window), or the key deleted when the
/// block was all it held (`RL.BLOCK` on a missing key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashChange {
    Set(Box<HashWrite>),
    Delete,
}

/// `RL.BLOCK`: the header as it is, blocked until `until`, after the
/// checks RL.BUCKETS makes of the key (a hash rl did not write, or
/// RL.COUNT's, is refused untouched).
pub fn block(view: &mut impl HashView, until: i64) -> Result<HashWrite, RlError> {
    load_blocked(view, Kind::Buckets)?;
    Ok(block_write(view, until))
}

/// `RL.UNBLOCK`: the change that lifts a block holding at `now_ms`;
/// `None` when none holds (nothing to write).
pub fn unblock(view: &mut impl HashView, now_ms: i64) -> Result<Option<HashChange>, RlError> {
    let (state, until) = load_blocked(view, Kind::Buckets)?;
    if crate::core::options::block::in_force(until, now_ms).is_none() {
        return Ok(None);
    }
    if state.is_none() {
        return Ok(Some(HashChange::Delete));
    }
    let stored = view.get(FIELD_HEADER).unwrap_or_default();
    Ok(Some(HashChange::Set(Box::new(HashWrite {
        header: without_block(&stored).into(),
        fields: Default::default(),
        delete: Vec::new(),
        // The expiry stays as it is: any key of rl's has one.
        expiry: Expiry {
            needed_ms: i64::MIN,
            slack_ms: 0,
        },
    }))))
}

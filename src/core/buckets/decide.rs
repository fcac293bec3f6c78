//! The RL.BUCKETS decision: admit if the window's total plus the cost fits
//! the limit; on a denial, the wait until enough of it leaves.

use super::layout::{load_blocked, with_block, without_block, HashView, HashWrite, Kind, State};
use super::layout::{Bytes, FIELD_HEADER};
use super::request::{BucketsRequest, MAX_BUCKETS};
use super::window::{read_bucket, resolve_precision, slide, write};
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::limiter::Outcome;
use crate::core::options::block;

/// Decides an RL.BUCKETS request at `now`, as one RL.BUCKETS call.
pub fn decide(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
) -> Result<Outcome<HashWrite>, RlError> {
    decide_within(view, req, now, MAX_BUCKETS)
}

/// Decides an RL.BUCKETS request at `now` for a window of at most
/// `max_buckets` buckets (RL.ALL shares [`MAX_BUCKETS`] between its BUCKETS
/// clauses, so one call reads a bounded number of fields). Pure: the hash
/// is only read, and every check that can fail happens before anything is
/// written.
///
/// A block the header carries that holds denies before any bucket is read
/// or counted; a denial of a request with `BLOCK ms` writes the block (the
/// state as it was) and answers as the block does.
pub fn decide_within(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
    max_buckets: u64,
) -> Result<Outcome<HashWrite>, RlError> {
    let (state, blocked_until) = load_blocked(view, Kind::Buckets)?;
    if let Some(decision) = block::holds(blocked_until, now) {
        return Ok(Outcome {
            decision,
            write: None,
        });
    }
    let mut out = decide_state(view, req, now, max_buckets, state.as_ref())?;
    if let (false, Some(ms)) = (out.decision.allowed, req.block_ms) {
        out.write = Some(block_write(view, block::end(now, ms)));
        out.decision = block::breached(ms);
    }
    Ok(out)
}

/// The write that blocks the key until `until`: its header as stored, the
/// block's item replaced (a missing key gets the kind's tag alone), the
/// key kept at least until the block's end. Nothing else changes.
pub fn block_write(view: &mut impl HashView, until: i64) -> HashWrite {
    let stored = view.get(FIELD_HEADER);
    let state = stored.as_deref().map_or(Kind::Buckets.tag(), without_block);
    HashWrite {
        header: with_block(state, Some(until)),
        fields: Default::default(),
        delete: Vec::new(),
        expiry: Expiry {
            needed_ms: until,
            slack_ms: 0,
        },
    }
}

/// `write` (an admission's, a charge's, a refund's) keeping a block that
/// holds at `now`: a charge or a refund moves units, it grants no access.
pub fn keep_block(write: &mut HashWrite, until: Option<i64>, now: i64) {
    if let Some(until) = block::in_force(until, now) {
        let header: Bytes = with_block(&write.header, Some(until));
        write.header = header;
        write.expiry.needed_ms = write.expiry.needed_ms.max(until);
    }
}

/// [`decide_within`] over a loaded state, its block left aside (RL.CHARGE
/// counts on a blocked key). Inlined: the write it returns (hundreds of
/// bytes) is not moved once more on the hot path.
#[inline(always)]
pub(super) fn decide_state(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
    max_buckets: u64,
    state: Option<&State>,
) -> Result<Outcome<HashWrite>, RlError> {
    let precision = resolve_precision(req.window_ms, req.precision, state)?;
    if max_buckets < MAX_BUCKETS && req.window_ms.div_ceil(precision) > max_buckets {
        return Err(RlError::SharedBuckets {
            max: max_buckets,
            total: MAX_BUCKETS,
        });
    }
    let win = slide(view, state, req.window_ms, precision, now)?;
    let held = win.totals.first().copied().unwrap_or(0);

    if held.saturating_add(req.cost) <= req.limit {
        let mut bucket = win.target_counts(1);
        bucket[0] = bucket[0].saturating_add(req.cost);
        let write = write(&win, Kind::Buckets, &bucket, &[held + req.cost], None);
        return Ok(Outcome {
            decision: Decision {
                allowed: true,
                remaining: req.limit - held - req.cost,
                retry_after_ms: 0,
                reset_after_ms: (write.expiry.needed_ms - now).max(0) as u64,
                blocked: false,
            },
            write: Some(write),
        });
    }

    // Denied: walk the counted buckets oldest first until enough cost
    // leaves; the request fits when that bucket leaves.
    let newest = win.newest.unwrap_or(win.target);
    let need = held.saturating_add(req.cost) - req.limit;
    let mut freed = 0u64;
    let mut retry_at = None;
    // A held bucket holds at least 1, so the walk reads at most `need` of
    // them (a hint to the store: the answers do not depend on it).
    view.will_read(win.held.bits_down().count().min(need as usize));
    // Oldest first: the held buckets (highest bit first), then the newest.
    let held_buckets = win.held.bits_down().map(|i| newest - 1 - i as i64);
    for b in held_buckets.chain([newest]) {
        freed = freed.saturating_add(read_bucket(view, &win, b, 1)?[0]);
        if freed >= need {
            retry_at = Some(win.leaves_at(b));
            break;
        }
    }
    let reset_at = win.leaves_at(newest);
    let retry_at = retry_at.unwrap_or(reset_at);
    Ok(Outcome {
        decision: Decision {
            allowed: false,
            remaining: req.limit.saturating_sub(held),
            retry_after_ms: (retry_at - now).max(1) as u64,
            reset_after_ms: (reset_at - now).max(0) as u64,
            blocked: false,
        },
        write: None,
    })
}

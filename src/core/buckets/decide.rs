//! The RL.BUCKETS decision: admit if the window's total plus the cost fits
//! the limit; on a denial, the wait until enough of it leaves.

use super::layout::{load, HashView, HashWrite, Kind};
use super::request::{BucketsRequest, MAX_BUCKETS};
use super::window::{read_bucket, resolve_precision, slide, write};
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::Outcome;

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
pub fn decide_within(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
    max_buckets: u64,
) -> Result<Outcome<HashWrite>, RlError> {
    let state = load(view, Kind::Buckets)?;
    let precision = resolve_precision(req.window_ms, req.precision, state.as_ref())?;
    if max_buckets < MAX_BUCKETS && req.window_ms.div_ceil(precision) > max_buckets {
        return Err(RlError::SharedBuckets {
            max: max_buckets,
            total: MAX_BUCKETS,
        });
    }
    let win = slide(view, state.as_ref(), req.window_ms, precision, now)?;
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

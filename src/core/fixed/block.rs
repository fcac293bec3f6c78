//! `RL.BLOCK FIXED` and `RL.UNBLOCK FIXED`: the window's count kept as it
//! is, with the block's end beside it (`string_key.rs`).

use super::decide::stored_state;
use crate::core::error::RlError;
use crate::core::limiter::Now;
use crate::core::string_key::{blocked, unblocked, StringChange, StringView, StringWrite};

/// The count (value and the window's end) and the block's end, read and
/// checked as RL.FIXED reads them; `None` for no key.
fn read(view: &impl StringView, now: Now) -> Result<Option<(StringWrite, Option<i64>)>, RlError> {
    let Some(bytes) = view.value() else {
        return Ok(None);
    };
    let s = stored_state(bytes, view.expire_at_ms())?;
    // A window over counts nothing: it ends now.
    let (count, end) = s.current(now.ms).unwrap_or((0, now.ms));
    Ok(Some((StringWrite::counter(count, end), s.blocked_until)))
}

/// `RL.BLOCK FIXED`: the count as it is, blocked until `until`; a missing
/// key gets a count of 0.
pub fn block(view: &impl StringView, now: Now, until: i64) -> Result<StringWrite, RlError> {
    let plain = match read(view, now)? {
        Some((w, _)) => w,
        None => StringWrite::counter(0, now.ms),
    };
    Ok(blocked(plain, until))
}

/// `RL.UNBLOCK FIXED`: the change that lifts a block holding at `now`.
pub fn unblock(view: &impl StringView, now: Now) -> Result<Option<StringChange>, RlError> {
    Ok(unblocked(read(view, now)?, now.ms))
}

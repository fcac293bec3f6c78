//! `RL.BLOCK THROTTLE` and `RL.UNBLOCK THROTTLE`: the TAT kept as it is,
//! with the block's end beside it (`string_key.rs`).

use super::gcra::{self, TatWrite};
use crate::core::error::RlError;
use crate::core::limiter::Now;
use crate::core::string_key::{blocked, unblocked, StringChange, StringView, StringWrite};

/// The TAT (value and own expiry) and the block's end, read and checked
/// as RL.THROTTLE reads them; `None` for no key.
fn read(view: &impl StringView) -> Result<Option<(StringWrite, Option<i64>)>, RlError> {
    let Some(bytes) = view.value() else {
        return Ok(None);
    };
    let (tat, until) = gcra::stored_with_block(bytes, view.expire_at_ms())?;
    let w = TatWrite::at(tat.into());
    Ok(Some((
        StringWrite::plain(tat.max(0) as u64, w.expire_at_ms),
        until,
    )))
}

/// `RL.BLOCK THROTTLE`: the TAT as it is, blocked until `until`; a missing
/// key gets an idle TAT at `now`.
pub fn block(view: &impl StringView, now: Now, until: i64) -> Result<StringWrite, RlError> {
    let plain = match read(view)? {
        Some((w, _)) => w,
        None => {
            let w = TatWrite::at(now.us.into());
            StringWrite::plain(now.us.max(0) as u64, w.expire_at_ms)
        }
    };
    Ok(blocked(plain, until))
}

/// `RL.UNBLOCK THROTTLE`: the change that lifts a block holding at `now`.
pub fn unblock(view: &impl StringView, now: Now) -> Result<Option<StringChange>, RlError> {
    Ok(unblocked(read(view)?, now.ms))
}

//! Moving a written key's expiry, only when it falls short (the policy is
//! `core::expiry`): most admissions of a busy key write and replicate no
//! `PEXPIREAT` at all.

use super::context::CommandCtx;
use super::ffi;
use super::ffi::{api, OK};
use super::replicate;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;

/// The open `key`'s absolute expiry in ms; `None` without a TTL.
pub(super) fn abs_expire(key: *mut ffi::Key) -> Option<i64> {
    // SAFETY: the caller passes a key it opened and has not closed.
    let at = unsafe { api!(GetAbsExpire)(key) };
    (at != ffi::NO_EXPIRE).then_some(at)
}

/// Moves the expiry of the open, just written `key` (argument `key_index`)
/// if its `current` one (read when the key was opened) falls short of `expiry`, then replicates the absolute time and
/// fires `expire` as PEXPIREAT would. Call after replicating the write
/// itself: a replica must have the key before it gets the expiry.
pub(super) fn keep_alive(
    cmd: &CommandCtx,
    key: *mut ffi::Key,
    key_index: usize,
    current: Option<i64>,
    expiry: &Expiry,
) -> Result<(), RlError> {
    let Some(at) = expiry.next(current) else {
        return Ok(());
    };
    // SAFETY: as above.
    if unsafe { api!(SetAbsExpire)(key, at) } != OK {
        return Err(RlError::Internal("could not set the expiry"));
    }
    cmd.notify(ffi::NOTIFY_GENERIC, c"expire", key_index);
    replicate::pexpireat(cmd, key_index, at);
    Ok(())
}

//! The one way rl opens a key: for reading or writing, checked to be of its
//! storage kind's type (and, where rl's keys always carry one, to have a
//! TTL) before anything reads it, closed on drop. Moving a written key's
//! expiry is here too, only when it falls short (the policy is
//! `core::expiry`): most admissions of a busy key write and replicate no
//! `PEXPIREAT` at all.

use std::os::raw::c_int;

use super::context::CommandCtx;
use super::ffi;
use super::ffi::{api, OK};
use super::replicate;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;

/// How a key is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only: nothing can be written through it (RL.PEEK, RL.TOTALS;
    /// these run on replicas and in read-only scripts).
    Read,
    /// For writing, so the store's `record` can follow.
    Write,
}

/// A storage kind's key type, and the refusal of a key of that type
/// without a TTL, where every key rl writes of that type has one.
pub struct KeyKind {
    pub key_type: c_int,
    pub without_ttl: Option<RlError>,
}

/// An open key of its kind (NULL: missing, opened for reading).
pub struct OpenKey<'a> {
    pub(super) cmd: &'a CommandCtx,
    pub(super) raw: *mut ffi::Key,
    pub(super) index: usize,
    /// The key's absolute expiry when opened.
    pub(super) expire_at_ms: Option<i64>,
}

impl<'a> OpenKey<'a> {
    /// Opens the key at argument `index`. A key of another type gets
    /// `WRONGTYPE`, one of this type that rl could not have written (no
    /// TTL) the kind's refusal; both are left untouched.
    pub fn open(
        cmd: &'a CommandCtx,
        index: usize,
        access: Access,
        kind: &KeyKind,
    ) -> Result<Self, RlError> {
        let mode = match access {
            Access::Read => ffi::READ,
            Access::Write => ffi::READ | ffi::WRITE,
        };
        // SAFETY: ctx and key name are valid for this call.
        let raw = unsafe { api!(OpenKey)(cmd.raw, cmd.raw_arg(index), mode) };
        // Opened for reading, a missing key comes back as NULL: an empty state.
        if raw.is_null() && access == Access::Write {
            return Err(RlError::Internal("could not open the key"));
        }
        let mut key = OpenKey {
            cmd,
            raw,
            index,
            expire_at_ms: None,
        };
        let key_type = if raw.is_null() {
            ffi::KEYTYPE_EMPTY
        } else {
            // SAFETY: the key is open.
            unsafe { api!(KeyType)(raw) }
        };
        if key_type == ffi::KEYTYPE_EMPTY {
            return Ok(key);
        }
        if key_type != kind.key_type {
            return Err(RlError::WrongType);
        }
        key.expire_at_ms = abs_expire(raw);
        if let (None, Some(refusal)) = (key.expire_at_ms, &kind.without_ttl) {
            return Err(refusal.clone());
        }
        Ok(key)
    }

    /// True for a missing key.
    pub fn is_empty(&self) -> bool {
        // SAFETY: the key is open when not NULL.
        self.raw.is_null() || unsafe { api!(KeyType)(self.raw) == ffi::KEYTYPE_EMPTY }
    }

    /// Moves the expiry of the just written key if the one it had when
    /// opened falls short of `expiry`, then replicates the absolute time
    /// and fires `expire` as PEXPIREAT would. Called by a store's `record`
    /// after replicating the write itself: a replica must have the key
    /// before it gets the expiry.
    pub(super) fn keep_alive(&mut self, expiry: &Expiry) -> Result<(), RlError> {
        let Some(at) = expiry.next(self.expire_at_ms) else {
            return Ok(());
        };
        // SAFETY: the key is open for writing (a write was just applied).
        if unsafe { api!(SetAbsExpire)(self.raw, at) } != OK {
            return Err(RlError::Internal("could not set the expiry"));
        }
        self.expire_at_ms = Some(at);
        self.cmd.notify(ffi::NOTIFY_GENERIC, c"expire", self.index);
        replicate::pexpireat(self.cmd, self.index, at);
        Ok(())
    }
}

/// The open `key`'s absolute expiry in ms; `None` without a TTL.
fn abs_expire(key: *mut ffi::Key) -> Option<i64> {
    // SAFETY: the caller passes a key it opened and has not closed.
    let at = unsafe { api!(GetAbsExpire)(key) };
    (at != ffi::NO_EXPIRE).then_some(at)
}

impl Drop for OpenKey<'_> {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // SAFETY: the key was opened here and is closed once.
        unsafe { api!(CloseKey)(self.raw) }
    }
}

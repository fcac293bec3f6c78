//! A limiter state kept as one plain string key (a throttle's TAT, a fixed
//! window's counter) with an absolute expiry, read and written through the
//! low-level key API (no `RedisModule_Call` on the hot path).
//!
//! Encoding matters for reads: `StringDMA` hands out a RAW value's buffer as
//! is, but first re-encodes an INT or EMBSTR value as RAW (invisible to DUMP,
//! TTL and replication, yet an allocation). So we write through
//! `StringTruncate` + `StringDMA`, which leaves the value RAW and updates it
//! in place: our own states are then read without any conversion, and only a
//! value someone else wrote (a SET, a replica's copy after a failover, an RDB
//! load) is converted, once, on its first read.

use super::context::CommandCtx;
use super::ffi;
use super::ffi::api;
use super::ffi::OK;
use super::key::{Access, KeyKind, OpenKey};
use super::replicate;
use super::store::Store;
use crate::core::decimal::Line;
use crate::core::error::RlError;
use crate::core::string_key::{step_to, StringChange};
use crate::core::string_key::{StringView, StringWrite};

/// An open string key. Closed on drop.
pub struct StringState<'a> {
    key: OpenKey<'a>,
}

/// A string without a TTL is refused by the core, which names the state
/// the command expected (a TAT, a counter).
const STRING: KeyKind = KeyKind {
    key_type: ffi::KEYTYPE_STRING,
    without_ttl: None,
};

impl<'a> Store<'a> for StringState<'a> {
    type Write = StringWrite;

    fn open(cmd: &'a CommandCtx, key_index: usize, access: Access) -> Result<Self, RlError> {
        let key = OpenKey::open(cmd, key_index, access, &STRING)?;
        Ok(StringState { key })
    }

    /// `SET key value PXAT at`: the value and its absolute expiry in one
    /// write and one replicated command, so there is no expiry to move
    /// after it. When only a count moves (a window's admission after its
    /// first, a refund), `INCR`/`INCRBY`: half the arguments to replicate
    /// and no expiry to set again.
    fn record(&mut self, w: &StringWrite) -> Result<(), RlError> {
        if let Some(bytes) = w.blocked_bytes() {
            return self.record_bytes(bytes.as_bytes(), w.key_expire_at_ms());
        }
        // Every check first: nothing may be written that is not replicated.
        if i64::try_from(w.value).is_err() {
            return Err(RlError::Internal("value above i64"));
        }
        let mut line: Line<20> = Line::new();
        line.unsigned(w.value, 1);
        match step_to(self.value(), self.key.expire_at_ms, w) {
            Some(step) => self.record_step(line.as_slice(), step),
            None => self.record_bytes(line.as_slice(), w.expire_at_ms),
        }
    }
}

impl StringView for StringState<'_> {
    /// The stored bytes; `None` when the key does not exist. Borrowed until
    /// the next write. (A value the server holds as an integer or embedded
    /// string is converted to a plain one on its first read: the same bytes,
    /// TTL and DUMP, only the in-memory encoding changes.)
    fn value(&self) -> Option<&[u8]> {
        if self.key.is_empty() {
            return None;
        }
        // SAFETY: key is open; a string key's DMA buffer stays valid and
        // unchanged until the key is written, which needs `&mut self`.
        unsafe {
            let mut len = 0;
            let ptr = api!(StringDMA)(self.key.raw, &mut len, ffi::READ);
            if ptr.is_null() {
                return None;
            }
            Some(std::slice::from_raw_parts(ptr.cast::<u8>(), len))
        }
    }

    fn expire_at_ms(&self) -> Option<i64> {
        self.key.expire_at_ms
    }
}

impl StringState<'_> {
    /// The value's bytes (a state's digits, or a blocked state), written
    /// and replicated as `SET key value PXAT at` with those same bytes.
    fn record_bytes(&mut self, bytes: &[u8], expire_at_ms: i64) -> Result<(), RlError> {
        self.write(bytes, expire_at_ms)?;
        replicate::set_pxat(self.key.cmd, self.key.index, bytes, expire_at_ms);
        Ok(())
    }

    /// Applies `RL.UNBLOCK`'s change: the state written back plain, or the
    /// key deleted (replicated as `DEL`).
    pub fn change(&mut self, change: &StringChange) -> Result<(), RlError> {
        match change {
            StringChange::Set(w) => self.record(w),
            StringChange::Delete => {
                let (raw, cmd, index) = (self.key.raw, self.key.cmd, self.key.index);
                // SAFETY: the key is open for writing and exists.
                if unsafe { api!(DeleteKey)(raw) } != OK {
                    return Err(RlError::Internal("could not delete the key"));
                }
                self.key.expire_at_ms = None;
                cmd.signal_modified(index);
                cmd.notify(ffi::NOTIFY_GENERIC, c"del", index);
                replicate::del(cmd, index);
                Ok(())
            }
        }
    }

    /// A count stepped by `step` to `digits`, its expiry kept: written in
    /// place and replicated as `INCR`/`INCRBY` (see [`step_to`]), with the
    /// event `INCRBY` fires.
    fn record_step(&mut self, digits: &[u8], step: i64) -> Result<(), RlError> {
        self.write_value(digits)?;
        let (cmd, index) = (self.key.cmd, self.key.index);
        cmd.signal_modified(index);
        cmd.notify(ffi::NOTIFY_STRING, c"incrby", index);
        replicate::incrby(cmd, index, step);
        Ok(())
    }

    /// Stores `digits` with the absolute expiry `expire_at_ms`, and
    /// signals the key as modified.
    fn write(&mut self, digits: &[u8], expire_at_ms: i64) -> Result<(), RlError> {
        self.write_value(digits)?;
        let (raw, cmd, index) = (self.key.raw, self.key.cmd, self.key.index);
        // SAFETY: key is open for writing and holds a string.
        if unsafe { api!(SetAbsExpire)(raw, expire_at_ms) } != OK {
            return Err(RlError::Internal("could not set the expiry"));
        }
        // A decision made over the same open key after this write (RL.REFUND's
        // peek) reads the expiry the key has now.
        self.key.expire_at_ms = Some(expire_at_ms);
        cmd.signal_modified(index);
        // The events `SET key value PXAT t` would fire.
        cmd.notify(ffi::NOTIFY_STRING, c"set", index);
        cmd.notify(ffi::NOTIFY_GENERIC, c"expire", index);
        Ok(())
    }

    /// Stores `digits` as the key's value, in place: an existing key keeps
    /// its expiry (the server resizes the value, or makes a plain copy of
    /// a shared or integer one, under the same key).
    fn write_value(&mut self, digits: &[u8]) -> Result<(), RlError> {
        let raw = self.key.raw;
        // SAFETY: key is open for writing and is empty or a string; the DMA
        // buffer is exactly `digits.len()` bytes after the truncate.
        unsafe {
            if api!(StringTruncate)(raw, digits.len()) != OK {
                return Err(RlError::Internal("could not size the string"));
            }
            let mut len = 0;
            let ptr = api!(StringDMA)(raw, &mut len, ffi::WRITE);
            if ptr.is_null() || len != digits.len() {
                return Err(RlError::Internal("could not write the string"));
            }
            std::ptr::copy_nonoverlapping(digits.as_ptr(), ptr.cast::<u8>(), len);
        }
        Ok(())
    }
}

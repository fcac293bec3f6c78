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

use std::os::raw::c_int;

use super::ffi;

use super::context::CommandCtx;
use super::ffi::api;
use super::ffi::OK;
use super::key_expiry;
use crate::core::decimal::Line;
use crate::core::error::RlError;

/// An open string key. Closed on drop.
pub struct StringState<'a> {
    cmd: &'a CommandCtx,
    key: *mut ffi::Key,
    key_index: usize,
}

impl<'a> StringState<'a> {
    /// Opens the key at argument `key_index` for writing. Another type gets
    /// `WRONGTYPE` and is left untouched.
    pub fn open(cmd: &'a CommandCtx, key_index: usize) -> Result<Self, RlError> {
        let mode = (ffi::READ | ffi::WRITE) as c_int;
        // SAFETY: ctx and key name are valid for this call.
        let key = unsafe { api!(OpenKey)(cmd.raw, cmd.raw_arg(key_index), mode) };
        if key.is_null() {
            return Err(RlError::Internal("could not open the key"));
        }
        let state = StringState {
            cmd,
            key,
            key_index,
        };
        // SAFETY: key is open.
        let kind = unsafe { api!(KeyType)(key) };
        if kind != ffi::KEYTYPE_EMPTY && kind != ffi::KEYTYPE_STRING {
            return Err(RlError::WrongType);
        }
        Ok(state)
    }

    /// Opens the key at argument `key_index` for reading only (`RL.PEEK`).
    /// A missing key reads as `None`.
    pub fn open_read(cmd: &'a CommandCtx, key_index: usize) -> Result<Self, RlError> {
        // SAFETY: ctx and key name are valid for this call.
        let key = unsafe { api!(OpenKey)(cmd.raw, cmd.raw_arg(key_index), ffi::READ) };
        let state = StringState {
            cmd,
            key,
            key_index,
        };
        if !key.is_null() {
            // SAFETY: key is open.
            let kind = unsafe { api!(KeyType)(key) };
            if kind != ffi::KEYTYPE_EMPTY && kind != ffi::KEYTYPE_STRING {
                return Err(RlError::WrongType);
            }
        }
        Ok(state)
    }

    /// The stored bytes; `None` when the key does not exist. Borrowed until
    /// the next write. (A value the server holds as an integer or embedded
    /// string is converted to a plain one on its first read: the same bytes,
    /// TTL and DUMP, only the in-memory encoding changes.)
    pub fn bytes(&self) -> Option<&[u8]> {
        if self.key.is_null() {
            return None;
        }
        // SAFETY: key is open; a string key's DMA buffer stays valid and
        // unchanged until the key is written, which needs `&mut self`.
        unsafe {
            if api!(KeyType)(self.key) == ffi::KEYTYPE_EMPTY {
                return None;
            }
            let mut len = 0;
            let ptr = api!(StringDMA)(self.key, &mut len, ffi::READ);
            if ptr.is_null() {
                return None;
            }
            Some(std::slice::from_raw_parts(ptr.cast::<u8>(), len))
        }
    }

    /// The key's absolute expiry in ms; `None` without a TTL.
    pub fn expire_at_ms(&self) -> Option<i64> {
        if self.key.is_null() {
            return None;
        }
        key_expiry::abs_expire(self.key)
    }

    /// Stores `value` in decimal with the absolute expiry `expire_at_ms`, and
    /// signals the key as modified.
    pub fn write(&mut self, value: u64, expire_at_ms: i64) -> Result<(), RlError> {
        let mut line: Line<20> = Line::new();
        line.unsigned(value, 1);
        let digits = line.as_slice();
        // SAFETY: key is open for writing and is empty or a string; the DMA
        // buffer is exactly `digits.len()` bytes after the truncate.
        unsafe {
            if api!(StringTruncate)(self.key, digits.len()) != OK {
                return Err(RlError::Internal("could not size the string"));
            }
            let mut len = 0;
            let ptr = api!(StringDMA)(self.key, &mut len, ffi::WRITE);
            if ptr.is_null() || len != digits.len() {
                return Err(RlError::Internal("could not write the string"));
            }
            std::ptr::copy_nonoverlapping(digits.as_ptr(), ptr.cast::<u8>(), len);
            if api!(SetAbsExpire)(self.key, expire_at_ms) != OK {
                return Err(RlError::Internal("could not set the expiry"));
            }
        }
        self.cmd.signal_modified(self.key_index);
        // The events `SET key value PXAT t` would fire.
        self.cmd.notify(ffi::NOTIFY_STRING, c"set", self.key_index);
        self.cmd
            .notify(ffi::NOTIFY_GENERIC, c"expire", self.key_index);
        Ok(())
    }
}

impl Drop for StringState<'_> {
    fn drop(&mut self) {
        if self.key.is_null() {
            return;
        }
        // SAFETY: the key was opened by us and is closed once.
        unsafe { api!(CloseKey)(self.key) }
    }
}

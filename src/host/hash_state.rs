//! Bucket state stored as a plain hash, read and written through the
//! low-level key API (`HashGet` / `HashSet`, no `RedisModule_Call`).

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::ptr;

use super::context::{string_bytes, CommandCtx};
use super::ffi;
use super::ffi::api;
use super::ffi::OK;
use crate::core::bucket_window::{HashView, HashWrite};
use crate::core::error::RlError;

/// An open hash key (NULL: missing, opened for reading). Closed on drop.
pub struct HashState<'a> {
    cmd: &'a CommandCtx,
    key: *mut ffi::Key,
    key_index: usize,
}

/// Field names are rl's own (digits, `-`, letters): never a NUL byte.
fn c_field(field: &[u8]) -> Result<CString, RlError> {
    CString::new(field).map_err(|_| RlError::Internal("field name with a NUL byte"))
}

impl<'a> HashState<'a> {
    /// Opens the key at argument `key_index`, for writing when `write`.
    /// Another type gets `WRONGTYPE` and is left untouched.
    pub fn open(cmd: &'a CommandCtx, key_index: usize, write: bool) -> Result<Self, RlError> {
        let mode = if write {
            ffi::READ | ffi::WRITE
        } else {
            ffi::READ
        };
        // SAFETY: ctx and key name are valid for this call.
        let key = unsafe { api!(OpenKey)(cmd.raw, cmd.raw_arg(key_index), mode) };
        // Opened for reading, a missing key comes back as NULL: an empty state.
        if key.is_null() && write {
            return Err(RlError::Internal("could not open the key"));
        }
        let state = HashState {
            cmd,
            key,
            key_index,
        };
        if key.is_null() {
            return Ok(state);
        }
        // SAFETY: key is open.
        let kind = unsafe { api!(KeyType)(key) };
        if kind != ffi::KEYTYPE_EMPTY && kind != ffi::KEYTYPE_HASH {
            return Err(RlError::WrongType);
        }
        Ok(state)
    }

    /// Writes the fields (absolute values), then removes the stale buckets
    /// (setting first, the hash never empties and keeps its key), sets the
    /// absolute expiry and signals the change.
    pub fn apply(&mut self, w: &HashWrite) -> Result<(), RlError> {
        for (field, value) in &w.set {
            let field = c_field(field)?;
            // SAFETY: key is open for writing; the value string is freed
            // after the server copied it; the argument list ends with NULL.
            unsafe {
                let v = api!(CreateString)(self.cmd.raw, value.as_ptr().cast(), value.len());
                api!(HashSet)(
                    self.key,
                    ffi::HASH_CFIELDS,
                    field.as_ptr(),
                    v,
                    ptr::null::<c_char>(),
                );
                api!(FreeString)(self.cmd.raw, v);
            }
        }
        for field in &w.delete {
            let field = c_field(field)?;
            // SAFETY: as above; HASH_DELETE is the documented marker value.
            unsafe {
                api!(HashSet)(
                    self.key,
                    ffi::HASH_CFIELDS,
                    field.as_ptr(),
                    ffi::HASH_DELETE,
                    ptr::null::<c_char>(),
                );
            }
        }
        // SAFETY: key is open and holds at least the fields just set.
        if unsafe { api!(SetAbsExpire)(self.key, w.expire_at_ms) } != OK {
            return Err(RlError::Internal("could not set the expiry"));
        }
        self.cmd.signal_modified(self.key_index);
        Ok(())
    }
}

impl HashView for HashState<'_> {
    fn exists(&mut self) -> bool {
        if self.key.is_null() {
            return false;
        }
        // SAFETY: key is open.
        unsafe { api!(KeyType)(self.key) != ffi::KEYTYPE_EMPTY }
    }

    fn get(&mut self, field: &[u8]) -> Option<Vec<u8>> {
        if self.key.is_null() {
            return None;
        }
        let field = c_field(field).ok()?;
        let mut value: *mut ffi::Str = ptr::null_mut();
        // SAFETY: key is open; the returned string is ours to free; the
        // argument list ends with NULL.
        unsafe {
            let status: c_int = api!(HashGet)(
                self.key,
                ffi::HASH_CFIELDS,
                field.as_ptr(),
                &mut value as *mut *mut ffi::Str,
                ptr::null::<c_char>(),
            );
            if status != OK || value.is_null() {
                return None;
            }
            let bytes = string_bytes(value).to_vec();
            api!(FreeString)(self.cmd.raw, value);
            Some(bytes)
        }
    }
}

impl Drop for HashState<'_> {
    fn drop(&mut self) {
        if self.key.is_null() {
            return;
        }
        // SAFETY: the key was opened by us and is closed once.
        unsafe { api!(CloseKey)(self.key) }
    }
}

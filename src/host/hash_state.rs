//! Bucket state stored as a plain hash, read and written through the
//! low-level key API (`HashGet` / `HashSet`, no `RedisModule_Call`).

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::ptr;

use smallvec::SmallVec;

use super::context::{string_bytes, CommandCtx};
use super::ffi;
use super::ffi::api;
use super::ffi::OK;
use super::kept_strings;
use super::key_expiry;
use crate::core::bucket_window::{Bytes, HashView, HashWrite, FIELD_HEADER};
use crate::core::error::RlError;
use crate::core::expiry::Expiry;

/// An open hash key (NULL: missing, opened for reading). Closed on drop.
pub struct HashState<'a> {
    cmd: &'a CommandCtx,
    key: *mut ffi::Key,
    key_index: usize,
    /// The key's absolute expiry when opened (every rl hash has one).
    expire_at_ms: Option<i64>,
}

/// Field names are rl's own (digits, `-`, letters): never a NUL byte.
fn c_field(field: &[u8]) -> Result<CString, RlError> {
    CString::new(field).map_err(|_| RlError::Internal("field name with a NUL byte"))
}

/// The header's field name as a server string, made once without a context
/// and kept until unload ([`kept_strings::HEADER_FIELD`]).
fn make_header_field() -> *mut ffi::Str {
    // SAFETY: no context needed; the server copies the bytes.
    unsafe {
        api!(CreateString)(
            ptr::null_mut(),
            FIELD_HEADER.as_ptr().cast(),
            FIELD_HEADER.len(),
        )
    }
}

/// Short field names (all of rl's metadata and bucket fields) are made
/// NUL-terminated on the stack: no allocation per read.
const STACK_FIELD: usize = 32;

/// What an admitted write put in the hash, as server strings: the same
/// strings are handed to replication (no second copy). Freed on drop.
pub struct Applied {
    ctx: *mut ffi::Ctx,
    /// `field, value, field, value, ...` as set (inline: no heap vector).
    pub set: SmallVec<[*mut ffi::Str; 6]>,
    /// The fields removed.
    pub delete: Vec<*mut ffi::Str>,
}

impl Drop for Applied {
    fn drop(&mut self) {
        for &s in self.set.iter().chain(&self.delete) {
            // SAFETY: each string was created by us and is freed once.
            unsafe { api!(FreeString)(self.ctx, s) }
        }
    }
}

impl<'a> HashState<'a> {
    /// Opens the key at argument `key_index`, for writing when `write`.
    /// Another type gets `WRONGTYPE`, a hash without a TTL is refused as
    /// not rl's; both are left untouched.
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
        let mut state = HashState {
            cmd,
            key,
            key_index,
            expire_at_ms: None,
        };
        if key.is_null() {
            return Ok(state);
        }
        // SAFETY: key is open.
        let kind = unsafe { api!(KeyType)(key) };
        if kind == ffi::KEYTYPE_EMPTY {
            return Ok(state);
        }
        if kind != ffi::KEYTYPE_HASH {
            return Err(RlError::WrongType);
        }
        // rl's bucket hashes always carry a TTL.
        state.expire_at_ms = key_expiry::abs_expire(key);
        if state.expire_at_ms.is_none() {
            return Err(RlError::ForeignHash);
        }
        Ok(state)
    }

    /// Writes the fields (absolute values), then removes the stale buckets
    /// (setting first, the hash never empties and keeps its key) and signals
    /// the change. Returns what it wrote, for replication. The expiry is
    /// `keep_alive`'s, after replication of these.
    pub fn apply(&mut self, w: &HashWrite) -> Result<Applied, RlError> {
        let raw = self.cmd.raw;
        let create = |b: &[u8]| {
            // SAFETY: ctx is live; the server copies the bytes.
            unsafe { api!(CreateString)(raw, b.as_ptr().cast(), b.len()) }
        };
        let mut applied = Applied {
            ctx: raw,
            set: SmallVec::new(),
            delete: Vec::with_capacity(w.delete.len()),
        };
        // The header first, by the kept string of its name.
        let header = (
            kept_strings::HEADER_FIELD.get(0, make_header_field),
            &w.header[..],
        );
        let others = w.fields.iter().map(|(f, v)| (create(f), &v[..]));
        for (f, value) in std::iter::once(header).chain(others) {
            applied.set.extend([f, create(value)]);
        }
        // Two pairs at a time: the usual admit that starts a bucket sets the
        // header and the bucket that just became older in one call.
        let end = ptr::null::<c_char>();
        for pairs in applied.set.chunks(4) {
            // SAFETY: key is open for writing; the server copies fields and
            // values; the argument list ends with NULL.
            unsafe {
                match *pairs {
                    [f, v, g, u] => api!(HashSet)(self.key, ffi::HASH_NONE, f, v, g, u, end),
                    [f, v] => api!(HashSet)(self.key, ffi::HASH_NONE, f, v, end),
                    _ => 0, // never: `set` holds whole pairs
                };
            }
        }
        for field in &w.delete {
            let f = create(field);
            applied.delete.push(f);
            // SAFETY: as above; HASH_DELETE is the documented marker value.
            unsafe {
                api!(HashSet)(
                    self.key,
                    ffi::HASH_NONE,
                    f,
                    ffi::HASH_DELETE,
                    ptr::null::<c_char>(),
                );
            }
        }
        self.cmd.signal_modified(self.key_index);
        // The events HSET and HDEL would fire.
        self.cmd.notify(ffi::NOTIFY_HASH, c"hset", self.key_index);
        if !w.delete.is_empty() {
            self.cmd.notify(ffi::NOTIFY_HASH, c"hdel", self.key_index);
        }
        Ok(applied)
    }

    /// Moves the key's expiry if it falls short of `expiry` (after the
    /// fields were written and replicated).
    pub fn keep_alive(&mut self, expiry: &Expiry) -> Result<(), RlError> {
        key_expiry::keep_alive(
            self.cmd,
            self.key,
            self.key_index,
            self.expire_at_ms,
            expiry,
        )
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

    fn get(&mut self, field: &[u8]) -> Option<Bytes> {
        if self.key.is_null() {
            return None;
        }
        let mut value: *mut ffi::Str = ptr::null_mut();
        let out = &mut value as *mut *mut ffi::Str;
        let end = ptr::null::<c_char>();
        // The header, read on every call, by the kept server string: the
        // server makes no string of its own for the name.
        let status: c_int = if field == FIELD_HEADER {
            let name = kept_strings::HEADER_FIELD.borrow(0, make_header_field);
            // SAFETY: key is open; the kept name lives through the call; the
            // returned string is ours to free; the argument list ends with NULL.
            unsafe { api!(HashGet)(self.key, ffi::HASH_NONE, name, out, end) }
        } else {
            let mut stack = [0u8; STACK_FIELD];
            let heap;
            let field_ptr: *const c_char = if field.len() < STACK_FIELD && !field.contains(&0) {
                stack[..field.len()].copy_from_slice(field);
                stack.as_ptr().cast()
            } else {
                heap = c_field(field).ok()?;
                heap.as_ptr()
            };
            // SAFETY: as above, with a NUL-terminated name that outlives the call.
            unsafe { api!(HashGet)(self.key, ffi::HASH_CFIELDS, field_ptr, out, end) }
        };
        // SAFETY: the string the server returned is ours to free.
        unsafe {
            if status != OK || value.is_null() {
                return None;
            }
            let bytes = Bytes::from_slice(string_bytes(value));
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

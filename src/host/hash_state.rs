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
use super::key::{Access, KeyKind, OpenKey};
use super::replicate;
use super::store::Store;
use crate::core::buckets::layout::{Bytes, HashView, HashWrite, FIELD_HEADER};
use crate::core::error::RlError;

/// An open hash key (NULL: missing, opened for reading). Closed on drop.
pub struct HashState<'a> {
    key: OpenKey<'a>,
}

/// rl's bucket hashes always carry a TTL.
const HASH: KeyKind = KeyKind {
    key_type: ffi::KEYTYPE_HASH,
    without_ttl: Some(RlError::ForeignHash),
};

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
struct Applied {
    ctx: *mut ffi::Ctx,
    /// `field, value, field, value, ...` as set (inline: no heap vector).
    set: SmallVec<[*mut ffi::Str; 6]>,
    /// The fields removed.
    delete: Vec<*mut ffi::Str>,
}

impl Drop for Applied {
    fn drop(&mut self) {
        for &s in self.set.iter().chain(&self.delete) {
            // SAFETY: each string was created by us and is freed once.
            unsafe { api!(FreeString)(self.ctx, s) }
        }
    }
}

impl<'a> Store<'a> for HashState<'a> {
    type Write = HashWrite;

    fn open(cmd: &'a CommandCtx, key_index: usize, access: Access) -> Result<Self, RlError> {
        let key = OpenKey::open(cmd, key_index, access, &HASH)?;
        Ok(HashState { key })
    }

    fn record(&mut self, write: &HashWrite) -> Result<(), RlError> {
        let applied = self.apply(write)?;
        replicate::hset(self.key.cmd, self.key.index, &applied.set);
        if !applied.delete.is_empty() {
            replicate::hdel(self.key.cmd, self.key.index, &applied.delete);
        }
        self.key.keep_alive(&write.expiry)
    }
}

impl HashState<'_> {
    /// Writes the fields (absolute values), then removes the stale buckets
    /// (setting first, the hash never empties and keeps its key) and signals
    /// the change. Returns what it wrote, for replication.
    fn apply(&mut self, w: &HashWrite) -> Result<Applied, RlError> {
        let raw = self.key.cmd.raw;
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
                    [f, v, g, u] => api!(HashSet)(self.key.raw, ffi::HASH_NONE, f, v, g, u, end),
                    [f, v] => api!(HashSet)(self.key.raw, ffi::HASH_NONE, f, v, end),
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
                    self.key.raw,
                    ffi::HASH_NONE,
                    f,
                    ffi::HASH_DELETE,
                    ptr::null::<c_char>(),
                );
            }
        }
        self.key.cmd.signal_modified(self.key.index);
        // The events HSET and HDEL would fire.
        self.key
            .cmd
            .notify(ffi::NOTIFY_HASH, c"hset", self.key.index);
        if !w.delete.is_empty() {
            self.key
                .cmd
                .notify(ffi::NOTIFY_HASH, c"hdel", self.key.index);
        }
        Ok(applied)
    }
}

impl HashView for HashState<'_> {
    fn exists(&mut self) -> bool {
        !self.key.is_empty()
    }

    fn get(&mut self, field: &[u8]) -> Option<Bytes> {
        if self.key.raw.is_null() {
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
            unsafe { api!(HashGet)(self.key.raw, ffi::HASH_NONE, name, out, end) }
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
            unsafe { api!(HashGet)(self.key.raw, ffi::HASH_CFIELDS, field_ptr, out, end) }
        };
        // SAFETY: the string the server returned is ours to free.
        unsafe {
            if status != OK || value.is_null() {
                return None;
            }
            let bytes = Bytes::from_slice(string_bytes(value));
            api!(FreeString)(self.key.cmd.raw, value);
            Some(bytes)
        }
    }
}

//! Bucket state stored as a plain hash, read and written through the
//! low-level key API (`HashGet` / `HashSet`, no `RedisModule_Call`).

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::ptr;

use smallvec::SmallVec;

use super::context::CommandCtx;
use super::ffi;
use super::ffi::api;
use super::ffi::string_bytes;
use super::ffi::OK;
use super::kept_strings;
use super::key::{Access, KeyKind, OpenKey};
use super::replicate;
use super::store::Store;
use crate::core::buckets::block::HashChange;
use crate::core::buckets::layout::{Bytes, HashView, HashWrite, FIELD_HEADER};
use crate::core::error::RlError;

/// An open hash key (NULL: missing, opened for reading). Closed on drop.
pub struct HashState<'a> {
    key: OpenKey<'a>,
    /// Every field and value of a small hash, when the call said it reads
    /// most of them. Cleared by every write.
    scanned: Option<Scanned>,
}

/// A hash read whole: its fields and values in one buffer, and their
/// places sorted by field (sorting the places moves 16 bytes each, not
/// the strings).
#[derive(Default)]
struct Scanned {
    bytes: Vec<u8>,
    /// (field start, field end, value end): the value follows its field.
    places: Vec<(u32, u32, u32)>,
}

impl Scanned {
    fn field(&self, p: &(u32, u32, u32)) -> &[u8] {
        &self.bytes[p.0 as usize..p.1 as usize]
    }

    fn get(&self, field: &[u8]) -> Option<Bytes> {
        let i = self
            .places
            .binary_search_by(|p| self.field(p).cmp(field))
            .ok()?;
        let (_, at, end) = self.places[i];
        Some(Bytes::from_slice(&self.bytes[at as usize..end as usize]))
    }
}

/// A call that will read at least this many fields, and at least half of
/// a small hash's, reads it whole. A small hash is a listpack, where the
/// server answers each read by a scan of the whole hash (about 3,000 to
/// 4,500 instructions at 60 fields, where reading one field of the whole
/// costs about 1,500): a denial walking most of a window's buckets pays one
/// pass instead of one per bucket.
const SCAN_MIN_READS: usize = 8;

/// Hashes of at most this many fields are read whole (the server's default
/// `hash-max-listpack-entries`); larger ones answer each read in O(1).
const SCAN_MAX_FIELDS: u64 = 128;

/// Collects one field and its value (`privdata`: the vector).
unsafe extern "C" fn collect_field(
    _key: *mut ffi::Key,
    field: *mut ffi::Str,
    value: *mut ffi::Str,
    privdata: *mut std::ffi::c_void,
) {
    // SAFETY: privdata is the `Scanned` that `scan` passed, live and not
    // aliased during the scan; the strings are live for this callback.
    let out = unsafe { &mut *privdata.cast::<Scanned>() };
    let start = out.bytes.len() as u32;
    out.bytes.extend_from_slice(string_bytes(field));
    let at = out.bytes.len() as u32;
    out.bytes.extend_from_slice(string_bytes(value));
    out.places.push((start, at, out.bytes.len() as u32));
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
        Ok(HashState { key, scanned: None })
    }

    fn record(&mut self, write: &HashWrite) -> Result<(), RlError> {
        self.scanned = None;
        let applied = self.apply(write)?;
        replicate::hset(self.key.cmd, self.key.index, &applied.set);
        if !applied.delete.is_empty() {
            replicate::hdel(self.key.cmd, self.key.index, &applied.delete);
        }
        self.key.keep_alive(&write.expiry)
    }
}

impl HashState<'_> {
    /// Applies `RL.UNBLOCK`'s change: the header written back, or the key
    /// (holding only a block) deleted, replicated as `DEL`.
    pub fn change(&mut self, change: &HashChange) -> Result<(), RlError> {
        match change {
            HashChange::Set(w) => self.record(w),
            HashChange::Delete => {
                self.scanned = None;
                let (raw, cmd, index) = (self.key.raw, self.key.cmd, self.key.index);
                // SAFETY: the key is open for writing and exists.
                if unsafe { api!(DeleteKey)(raw) } != OK {
                    return Err(RlError::Internal("could not delete the key"));
                }
                cmd.signal_modified(index);
                cmd.notify(ffi::NOTIFY_GENERIC, c"del", index);
                replicate::del(cmd, index);
                Ok(())
            }
        }
    }

    /// Every field and value of the hash, when it has at most
    /// [`SCAN_MAX_FIELDS`] fields (bounded work); `None` otherwise.
    fn scan(&self) -> Option<Scanned> {
        // SAFETY: the key is open and not NULL (checked by the caller).
        let len = unsafe { api!(ValueLength)(self.key.raw) } as u64;
        if len > SCAN_MAX_FIELDS {
            return None;
        }
        let mut fields = Scanned {
            bytes: Vec::with_capacity(len as usize * 24),
            places: Vec::with_capacity(len as usize),
        };
        // SAFETY: key is an open hash; the cursor is made and destroyed
        // here; the callback only pushes into `fields`, which outlives the
        // scan. A hash of at most SCAN_MAX_FIELDS fields ends the loop
        // within as many steps.
        unsafe {
            let cursor = api!(ScanCursorCreate)();
            let privdata = (&mut fields as *mut Scanned).cast();
            while api!(ScanKey)(self.key.raw, cursor, Some(collect_field), privdata) != 0 {}
            api!(ScanCursorDestroy)(cursor);
        }
        let mut places = std::mem::take(&mut fields.places);
        places.sort_unstable_by(|a, b| fields.field(a).cmp(fields.field(b)));
        fields.places = places;
        Some(fields)
    }

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
        // Up to three pairs at a time: the usual admit that starts a bucket
        // sets the header, the bucket that just became older and the new one
        // in one call (each call costs the server its own checks).
        let end = ptr::null::<c_char>();
        for pairs in applied.set.chunks(6) {
            // SAFETY: key is open for writing; the server copies fields and
            // values; the argument list ends with NULL.
            unsafe {
                match *pairs {
                    [f, v, g, u, h, w] => {
                        api!(HashSet)(self.key.raw, ffi::HASH_NONE, f, v, g, u, h, w, end)
                    }
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

    fn will_read(&mut self, fields: usize) {
        if self.scanned.is_some() || fields < SCAN_MIN_READS || self.key.is_empty() {
            return;
        }
        // SAFETY: the key is open and holds a hash.
        let len = unsafe { api!(ValueLength)(self.key.raw) };
        if fields.saturating_mul(2) >= len {
            self.scanned = self.scan();
        }
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
            if let Some(fields) = &self.scanned {
                return fields.get(field);
            }
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

//! Server strings kept between calls, for values many calls write again:
//! the bucket header's field name, the lease set's header member,
//! RL.SLIDE's score (every admission in the same millisecond writes and
//! replicates the same one), the `PXAT` of every replicated `SET` and the
//! step of a replicated `INCRBY` (a steady cost steps by the same). Reusing one
//! costs a reference count; a fresh string is an allocation and a free.
//! Commands run on the server's main thread; the atomics only give the
//! statics a safe type. Freed at unload.

use std::ptr;
use std::sync::atomic::{AtomicI64, AtomicPtr, Ordering};

use super::ffi;
use super::ffi::api;

/// One kept string and the value it was made for.
pub struct KeptString {
    string: AtomicPtr<ffi::Str>,
    value: AtomicI64,
}

impl KeptString {
    const fn new() -> KeptString {
        KeptString {
            string: AtomicPtr::new(ptr::null_mut()),
            value: AtomicI64::new(0),
        }
    }

    /// A reference to the string for `value` (the caller frees it, as any
    /// string it made), made by `make` when the kept one is for another
    /// value or there is none yet.
    pub fn get(&self, value: i64, make: impl FnOnce() -> *mut ffi::Str) -> *mut ffi::Str {
        let s = self.borrow(value, make);
        // SAFETY: `s` is live (kept); the extra reference is the caller's. A
        // string made without a context is never freed behind our back.
        unsafe { api!(RetainString)(ptr::null_mut(), s) };
        s
    }

    /// The kept string for `value` without a reference of the caller's: for
    /// a server call that only reads it within the current command (the
    /// next `get` or `borrow` for another value may free it).
    pub fn borrow(&self, value: i64, make: impl FnOnce() -> *mut ffi::Str) -> *mut ffi::Str {
        let mut s = self.string.load(Ordering::Relaxed);
        if s.is_null() || self.value.load(Ordering::Relaxed) != value {
            let old = self.string.swap(ptr::null_mut(), Ordering::Relaxed);
            if !old.is_null() {
                // SAFETY: the kept reference, dropped once; calls still
                // holding their own references keep the string alive.
                unsafe { api!(FreeString)(ptr::null_mut(), old) }
            }
            s = make();
            self.value.store(value, Ordering::Relaxed);
            self.string.store(s, Ordering::Relaxed);
        }
        s
    }

    fn release(&self) {
        let s = self.string.swap(ptr::null_mut(), Ordering::Relaxed);
        if !s.is_null() {
            // SAFETY: the kept reference, dropped once.
            unsafe { api!(FreeString)(ptr::null_mut(), s) }
        }
    }
}

/// The bucket header's field name (`h`); the value is unused.
pub static HEADER_FIELD: KeptString = KeptString::new();
/// The score of RL.SLIDE's latest admissions, by its value.
pub static SLIDE_SCORE: KeptString = KeptString::new();
/// The lease set's header member (`rl leases`); the value is unused.
pub static LEASE_HEADER: KeptString = KeptString::new();

/// The `PXAT` token of every replicated `SET`; the value is unused.
pub static PXAT: KeptString = KeptString::new();

/// The step of a replicated `INCRBY` (a counter's cost, a refund's), by
/// its value: a steady workload steps its counters by the same amount.
pub static STEP: KeptString = KeptString::new();

/// Frees every kept string (module unload).
pub fn release_all() {
    PXAT.release();
    STEP.release();
    HEADER_FIELD.release();
    SLIDE_SCORE.release();
    LEASE_HEADER.release();
}

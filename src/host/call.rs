//! Reads through `RedisModule_Call`, for the rare case the low-level key API
//! would need a walk: counting or indexing a sorted set by rank. The
//! server's own ZCOUNT and ZRANGE find a rank in O(log N) on a skiplist,
//! where an iterator walks every entry. Never replicated, never a write.

use std::os::raw::c_char;

use super::context::CommandCtx;
use super::ffi;
use super::ffi::api;

type Reply = ffi::binding::raw::RedisModuleCallReply;

/// A call reply, freed on drop.
struct Owned(*mut Reply);

impl Drop for Owned {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a reply the server gave us, freed once.
            unsafe { api!(FreeCallReply)(self.0) }
        }
    }
}

/// `ZCOUNT key -inf max` on the key at argument `key_index`.
pub fn zcount_through(cmd: &CommandCtx, key_index: usize, max: i64) -> Option<u64> {
    // SAFETY: ctx and key are live; the format letters match the arguments.
    let reply = Owned(unsafe {
        api!(Call)(
            cmd.raw,
            c"ZCOUNT".as_ptr(),
            c"scl".as_ptr(),
            cmd.raw_arg(key_index),
            c"-inf".as_ptr(),
            max,
        )
    });
    if reply.0.is_null() {
        return None;
    }
    // SAFETY: a live reply.
    unsafe {
        if api!(CallReplyType)(reply.0) != ffi::binding::raw::REDISMODULE_REPLY_INTEGER as i32 {
            return None;
        }
        u64::try_from(api!(CallReplyInteger)(reply.0)).ok()
    }
}

/// The score of the entry at 0-based `rank` (`ZRANGE key rank rank
/// WITHSCORES`), as the server prints it.
pub fn zscore_at_rank(cmd: &CommandCtx, key_index: usize, rank: u64) -> Option<f64> {
    zentry_at_rank(cmd, key_index, rank, |_, score| score)
}

/// `read(member, score)` of the entry at 0-based `rank` (`ZRANGE key rank
/// rank WITHSCORES`); `None` when there is none.
pub fn zentry_at_rank<T>(
    cmd: &CommandCtx,
    key_index: usize,
    rank: u64,
    read: impl FnOnce(&[u8], f64) -> T,
) -> Option<T> {
    let rank = i64::try_from(rank).ok()?;
    // SAFETY: as above.
    let reply = Owned(unsafe {
        api!(Call)(
            cmd.raw,
            c"ZRANGE".as_ptr(),
            c"sllc".as_ptr(),
            cmd.raw_arg(key_index),
            rank,
            rank,
            c"WITHSCORES".as_ptr(),
        )
    });
    if reply.0.is_null() {
        return None;
    }
    // SAFETY: a live reply; elements live as long as it does.
    unsafe {
        if api!(CallReplyLength)(reply.0) != 2 {
            return None;
        }
        let string = |i| {
            let mut len = 0;
            let ptr: *const c_char =
                api!(CallReplyStringPtr)(api!(CallReplyArrayElement)(reply.0, i), &mut len);
            (!ptr.is_null()).then(|| std::slice::from_raw_parts(ptr.cast::<u8>(), len))
        };
        let member = string(0)?;
        let score = std::str::from_utf8(string(1)?).ok()?.parse().ok()?;
        Some(read(member, score))
    }
}

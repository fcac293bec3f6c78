//! Replication of effects as plain commands carrying resolved values.
//!
//! Replicas and AOF replays never re-run an rl command with their own clock:
//! they receive ZADD with explicit scores and members, ZREMRANGEBYRANK with
//! explicit ranks and PEXPIREAT with an absolute time. Several calls in one
//! command reach replicas and the AOF wrapped in MULTI/EXEC. The result loads
//! in a server without the module.

use super::context::CommandCtx;
use super::ffi::api;
use super::ffi::Str;
use super::kept_strings;
use crate::core::decimal::Line;

/// `v` in decimal, for a `b` (buffer and length) argument: the server
/// copies it into one string, where an `l` argument costs it a slower
/// conversion and two allocations.
fn decimal(v: i64) -> Line<21> {
    let mut line = Line::new();
    line.signed(v);
    line
}

/// `ZADD key at m1 at m2 ...` with the strings the log wrote: the score
/// and the members added.
pub(super) fn zadd(cmd: &CommandCtx, key_index: usize, score: *mut Str, members: &[*mut Str]) {
    let key = cmd.raw_arg(key_index);
    // SAFETY: ctx, key and the written strings are live; format letters
    // match the arguments; the server takes its own references.
    unsafe {
        if let [member] = *members {
            api!(Replicate)(
                cmd.raw,
                c"ZADD".as_ptr(),
                c"sss".as_ptr(),
                key,
                score,
                member,
            );
            return;
        }
        let mut argv = Vec::with_capacity(members.len() * 2);
        for &m in members {
            argv.extend([score, m]);
        }
        api!(Replicate)(
            cmd.raw,
            c"ZADD".as_ptr(),
            c"sv".as_ptr(),
            key,
            argv.as_mut_ptr(),
            argv.len(),
        );
    }
}

/// `ZREMRANGEBYRANK key 0 n-1`: the `n` oldest entries, as the primary
/// removed them (a bounded part of those that left the window). The
/// replica's set equals the primary's, so the same ranks hold the same
/// entries.
pub fn zrem_oldest(cmd: &CommandCtx, key_index: usize, n: u64) {
    let last = decimal(i64::try_from(n).unwrap_or(i64::MAX) - 1);
    let last = last.as_slice();
    // SAFETY: as above; each buffer is live for the call, which copies it.
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"ZREMRANGEBYRANK".as_ptr(),
            c"sbb".as_ptr(),
            cmd.raw_arg(key_index),
            c"0".as_ptr(),
            1usize,
            last.as_ptr(),
            last.len(),
        );
    }
}

/// `ZADD key s1 m1 s2 m2 ...` with the score and member strings as written
/// (a new lease set: its header and its first lease).
pub(super) fn zadd_pairs(cmd: &CommandCtx, key_index: usize, pairs: &[*mut Str]) {
    replicate_strings(cmd, c"ZADD", key_index, pairs);
}

/// `ZREM key m1 m2 ...` with the members removed (RL.REFUND), explicit:
/// the replica removes exactly the primary's entries.
pub(super) fn zrem(cmd: &CommandCtx, key_index: usize, members: &[*mut Str]) {
    replicate_strings(cmd, c"ZREM", key_index, members);
}

/// `SET key value PXAT at_ms`: a whole string state and its absolute expiry
/// in one command (PXAT exists since Redis 6.2). `value` is the bytes as
/// the key was given them (a state's digits, formatted once for both, or a
/// blocked state's extended value).
pub fn set_pxat(cmd: &CommandCtx, key_index: usize, value: &[u8], at_ms: i64) {
    let at = decimal(at_ms);
    let at = at.as_slice();
    // The same token on every call: a kept string costs the server a
    // reference count instead of a new string and its free.
    // SAFETY: made without a context, kept until unload.
    let pxat = kept_strings::PXAT.borrow(0, || unsafe {
        api!(CreateString)(std::ptr::null_mut(), c"PXAT".as_ptr(), 4)
    });
    // SAFETY: as above; each buffer is live for the call, which copies it,
    // and the kept string is live (the server takes its own reference).
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"SET".as_ptr(),
            c"sbsb".as_ptr(),
            cmd.raw_arg(key_index),
            value.as_ptr(),
            value.len(),
            pxat,
            at.as_ptr(),
            at.len(),
        );
    }
}

/// `INCR key`, or `INCRBY key step`: a counter that keeps its value's
/// form and its expiry, stepped (a fixed window's admission after its
/// first). Half the arguments of `SET key value PXAT at`, and no expiry to
/// set again: the replica's key has it from the `SET` that made it.
pub fn incrby(cmd: &CommandCtx, key_index: usize, step: i64) {
    // SAFETY: as above; the kept string is live for the call (the server
    // takes its own reference).
    unsafe {
        if step == 1 {
            api!(Replicate)(
                cmd.raw,
                c"INCR".as_ptr(),
                c"s".as_ptr(),
                cmd.raw_arg(key_index),
            );
            return;
        }
        let step = kept_strings::STEP.borrow(step, || {
            let digits = decimal(step);
            let digits = digits.as_slice();
            api!(CreateString)(std::ptr::null_mut(), digits.as_ptr().cast(), digits.len())
        });
        api!(Replicate)(
            cmd.raw,
            c"INCRBY".as_ptr(),
            c"ss".as_ptr(),
            cmd.raw_arg(key_index),
            step,
        );
    }
}

/// `DEL key` (RL.UNBLOCK on a state whose own end has come).
pub fn del(cmd: &CommandCtx, key_index: usize) {
    // SAFETY: as above.
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"DEL".as_ptr(),
            c"s".as_ptr(),
            cmd.raw_arg(key_index),
        );
    }
}

/// `PEXPIREAT key at_ms`
pub fn pexpireat(cmd: &CommandCtx, key_index: usize, at_ms: i64) {
    let at = decimal(at_ms);
    let at = at.as_slice();
    // SAFETY: as above; the buffer is live for the call, which copies it.
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"PEXPIREAT".as_ptr(),
            c"sb".as_ptr(),
            cmd.raw_arg(key_index),
            at.as_ptr(),
            at.len(),
        );
    }
}

/// `cmd key a1 a2 ...` with server strings the caller owns (and frees).
/// Up to four arguments go as single strings: a vector (`v`) costs the
/// server a reallocation of its argument array.
fn replicate_strings(cmd: &CommandCtx, name: &std::ffi::CStr, key_index: usize, args: &[*mut Str]) {
    let (name, key) = (name.as_ptr(), cmd.raw_arg(key_index));
    // SAFETY: ctx and key are live; format letters match the arguments; the
    // server takes its own references to the strings, which stay ours.
    unsafe {
        let replicate = api!(Replicate);
        match *args {
            [a] => replicate(cmd.raw, name, c"ss".as_ptr(), key, a),
            [a, b] => replicate(cmd.raw, name, c"sss".as_ptr(), key, a, b),
            [a, b, c, d] => replicate(cmd.raw, name, c"sssss".as_ptr(), key, a, b, c, d),
            _ => replicate(
                cmd.raw,
                name,
                c"sv".as_ptr(),
                key,
                args.as_ptr(),
                args.len(),
            ),
        };
    }
}

/// `HSET key f1 v1 f2 v2 ...` with absolute values, as written.
pub fn hset(cmd: &CommandCtx, key_index: usize, pairs: &[*mut Str]) {
    replicate_strings(cmd, c"HSET", key_index, pairs);
}

/// `HDEL key f1 f2 ...`
pub fn hdel(cmd: &CommandCtx, key_index: usize, fields: &[*mut Str]) {
    replicate_strings(cmd, c"HDEL", key_index, fields);
}

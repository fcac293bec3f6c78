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
    let last = i64::try_from(n).unwrap_or(i64::MAX) - 1;
    // SAFETY: as above.
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"ZREMRANGEBYRANK".as_ptr(),
            c"scl".as_ptr(),
            cmd.raw_arg(key_index),
            c"0".as_ptr(),
            last,
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
/// in one command (PXAT exists since Redis 6.2).
pub fn set_pxat(cmd: &CommandCtx, key_index: usize, value: i64, at_ms: i64) {
    // SAFETY: as above.
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"SET".as_ptr(),
            c"slcl".as_ptr(),
            cmd.raw_arg(key_index),
            value,
            c"PXAT".as_ptr(),
            at_ms,
        );
    }
}

/// `PEXPIREAT key at_ms`
pub fn pexpireat(cmd: &CommandCtx, key_index: usize, at_ms: i64) {
    // SAFETY: as above.
    unsafe {
        api!(Replicate)(
            cmd.raw,
            c"PEXPIREAT".as_ptr(),
            c"sl".as_ptr(),
            cmd.raw_arg(key_index),
            at_ms,
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

//! `RL.PEEK <SLIDE|BUCKETS|THROTTLE|FIXED|ACQUIRE> key <parameters> [OLDEST]`: what the named
//! limiter would answer, without recording anything. Read-only: runs on
//! replicas and in read-only scripts.

use crate::command;
use crate::core::dispatch::peek::{parse_peek, PEEK, PEEK_KEY};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::wait;

fn peek(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = parse_peek(args)?;
    // Opened for reading only: no write, eviction, expiry change,
    // notification or modified-key signal can follow.
    if req.oldest {
        let (decision, wait) = limit::peek_oldest(cmd, &req.limit, PEEK_KEY)?;
        return Ok(Reply::DecisionOldest(decision, wait));
    }
    // What RL.ACQUIRE would answer: a slot handed to a woken waiter is held.
    let limit = wait::honouring_reserved(cmd, &req.limit, PEEK_KEY);
    Ok(Reply::Decision(limit::peek_any(cmd, &limit, PEEK_KEY)?))
}

command!(PEEK_COMMAND = {
    syntax: &PEEK,
    flags: c"readonly",
    summary: c"What RL.SLIDE, RL.BUCKETS, RL.THROTTLE, RL.FIXED or RL.ACQUIRE would answer for this request, without recording it: same parameters after the limiter's name, same reply [allowed, remaining, retry_after_ms, reset_after_ms]; with OLDEST (SLIDE and BUCKETS only) a fifth integer, the ms until the oldest counted unit leaves the window (0 when it counts nothing). Never writes; runs on replicas and in read-only scripts.",
    complexity: c"That of the named limiter's decision (its write excluded).",
    since: c"1.0.0",
    key: KeyAccess::ReadOnlyAt(PEEK_KEY as i32),
    handler: peek,
});

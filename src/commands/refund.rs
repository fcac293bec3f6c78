//! `RL.REFUND <SLIDE|BUCKETS|THROTTLE|FIXED> key <parameters>`: gives back
//! what the named limiter admitted and still counts, up to the request's
//! `COST` (`THROTTLE`: its `quantity`).

use crate::command;
use crate::core::dispatch::refund::{parse_refund, REFUND, REFUND_KEY};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn refund(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = parse_refund(args)?;
    Ok(Reply::Refunded(limit::refund_any(cmd, &req, REFUND_KEY)?))
}

command!(REFUND_COMMAND = {
    syntax: &REFUND,
    // Not deny-oom, as RL.RELEASE: a refund only lowers counts and
    // removes entries or fields, it never grows a key, so giving back at
    // maxmemory is allowed (the write it makes is smaller than the state).
    flags: c"write",
    summary: c"Gives back up to COST units (THROTTLE: quantity) that RL.SLIDE, RL.BUCKETS, RL.THROTTLE or RL.FIXED admitted and still counts: same parameters after the limiter's name. Replies [refunded, remaining, retry_after_ms, reset_after_ms], the last three what RL.PEEK would answer for one unit right after. Writes nothing when there is nothing to give back.",
    complexity: c"SLIDE: O(C log N) for C = COST. BUCKETS: O(B), B the buckets the window holds. THROTTLE, FIXED: O(1).",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdateAt(REFUND_KEY as i32),
    handler: refund,
});

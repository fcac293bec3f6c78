//! `RL.CHARGE <SLIDE|BUCKETS|THROTTLE|FIXED> key <parameters> COST n`:
//! records `n` units on the named limiter whether or not they fit.

use crate::command;
use crate::core::dispatch::charge::{parse_charge, CHARGE, CHARGE_KEY};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn charge(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = parse_charge(args)?;
    Ok(Reply::Charged(limit::charge_any(cmd, &req, CHARGE_KEY)?))
}

command!(CHARGE_COMMAND = {
    syntax: &CHARGE,
    // deny-oom: a charge grows the key as an admission does.
    flags: c"write deny-oom",
    summary: c"Records COST units on RL.SLIDE, RL.BUCKETS, RL.THROTTLE or RL.FIXED state whether or not they fit (a settlement after the fact): same parameters after the limiter's name, without its own units (COST, THROTTLE's quantity), then COST n (SLIDE: at most 100; the others: at most 10^15). The key may go past its limit; later requests are denied until the window (THROTTLE: the schedule) has room again. Replies [charged, remaining, retry_after_ms, reset_after_ms], the last three what RL.PEEK would answer for one unit right after.",
    complexity: c"SLIDE: O(C log N) for C = COST. BUCKETS: O(B), B the buckets the window holds. THROTTLE, FIXED: O(1).",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdateAt(CHARGE_KEY as i32),
    handler: charge,
});

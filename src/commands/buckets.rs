//! `RL.BUCKETS key limit window [PRECISION ms] [COST cost]`: the sliding
//! window in buckets, memory bounded by the bucket count.

use crate::command;
use crate::core::buckets::request::{BucketsRequest, SYNTAX};
use crate::core::dispatch::LimitRequest;
use crate::core::error::RlError;
use crate::core::options::upto::{take_upto, UpTo};
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::wait;

fn buckets(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    if let Some(line) = take_upto(&SYNTAX, args)? {
        let req = BucketsRequest::parse_up_to(&line)?;
        return Ok(Reply::Granted(limit::run::<HashState, _>(
            cmd,
            &UpTo(req),
            1,
        )?));
    }
    wait::with_wait(
        cmd,
        args,
        &SYNTAX,
        BucketsRequest::parse,
        LimitRequest::Buckets,
        |req| Ok(Reply::Decision(limit::run::<HashState, _>(cmd, req, 1)?)),
    )
}

command!(BUCKETS_COMMAND = {
    syntax: &SYNTAX,
    flags: c"write deny-oom",
    summary: c"Sliding-window rate limit in buckets of PRECISION ms (default window/60): admits the request if the buckets still overlapping the last `window` ms plus `cost` hold at most `limit`. Memory depends on the bucket count, not the rate. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(1) amortised; O(B) at most, with B = window / PRECISION buckets (after an idle gap, or to compute retry_after_ms on a denial).",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: buckets,
});

//! `RL.SLIDE key limit window [COST cost] [BLOCK ms]`: the exact sliding-window log.

use crate::command;
use crate::core::dispatch::LimitRequest;
use crate::core::error::RlError;
use crate::core::options::upto::{take_upto, UpTo};
use crate::core::slide::request::{SlideRequest, SYNTAX};
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::wait;
use crate::host::zset_log::ZsetLog;

/// `RL.SLIDE key limit window`, the required arguments alone: no `UPTO`,
/// `WAIT` or option can follow, so the scans for them are skipped (most
/// calls; as `with_wait` answers such a line).
const PLAIN_LINE: usize = SYNTAX.min_args();

fn slide(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    if args.len() == PLAIN_LINE {
        let req = SlideRequest::parse(args)?;
        return Ok(Reply::Decision(limit::run::<ZsetLog, _>(cmd, &req, 1)?));
    }
    if let Some(line) = take_upto(&SYNTAX, args)? {
        let req = SlideRequest::parse_up_to(&line)?;
        return Ok(Reply::Granted(limit::run::<ZsetLog, _>(
            cmd,
            &UpTo(req),
            1,
        )?));
    }
    wait::with_wait(
        cmd,
        args,
        &SYNTAX,
        SlideRequest::parse,
        LimitRequest::Slide,
        |req| Ok(Reply::Decision(limit::run::<ZsetLog, _>(cmd, req, 1)?)),
    )
}

command!(SLIDE_COMMAND = {
    syntax: &SYNTAX,
    flags: c"write deny-oom",
    summary: c"Exact sliding-window rate limit: admits the request if the cost admitted in the last `window` ms plus `cost` is at most `limit`. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(log(N) * (M + C)) with N the entries held, C the cost (at most 100) and M the entries removed because they left the window (at most 128 per call; the rest go in later calls).",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: slide,
});

//! `RL.THROTTLE key max_burst count period [quantity]`: GCRA, period in ms.

use crate::command;
use crate::core::dispatch::LimitRequest;
use crate::core::error::RlError;
use crate::core::options::upto::{take_upto, UpTo};
use crate::core::throttle::request::{ThrottleRequest, RL_THROTTLE};
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::string_state::StringState;
use crate::host::wait;

/// `RL.THROTTLE key max_burst count period`, the required arguments
/// alone: no `UPTO`, `WAIT` or option can follow, so the scans for them
/// are skipped (most calls; as `with_wait` answers such a line).
const PLAIN_LINE: usize = RL_THROTTLE.min_args();

fn throttle(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    if args.len() == PLAIN_LINE {
        let req = ThrottleRequest::parse_ms(args)?;
        return Ok(Reply::Decision(limit::run::<StringState, _>(cmd, &req, 1)?));
    }
    if let Some(line) = take_upto(&RL_THROTTLE, args)? {
        let req = ThrottleRequest::parse_ms_up_to(&line)?;
        return Ok(Reply::Granted(limit::run::<StringState, _>(
            cmd,
            &UpTo(req),
            1,
        )?));
    }
    wait::with_wait(
        cmd,
        args,
        &RL_THROTTLE,
        ThrottleRequest::parse_ms,
        LimitRequest::Throttle,
        |req| Ok(Reply::Decision(limit::run::<StringState, _>(cmd, req, 1)?)),
    )
}

command!(THROTTLE_COMMAND = {
    syntax: &RL_THROTTLE,
    flags: c"write deny-oom",
    summary: c"GCRA rate limit: `count` per `period` ms with bursts up to `max_burst + 1`; `quantity` (default 1, 0 peeks) is the cost. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(1)",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: throttle,
});

//! `RL.FIXED key limit window [COST cost]`: the fixed-window counter.

use crate::command;
use crate::core::dispatch::LimitRequest;
use crate::core::error::RlError;
use crate::core::fixed::request::{FixedRequest, SYNTAX};
use crate::core::options::upto::{take_upto, UpTo};
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::string_state::StringState;
use crate::host::wait;

fn fixed(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    if let Some(line) = take_upto(&SYNTAX, args)? {
        let req = FixedRequest::parse_up_to(&line)?;
        return Ok(Reply::Granted(limit::run::<StringState, _>(
            cmd,
            &UpTo(req),
            1,
        )?));
    }
    wait::with_wait(
        cmd,
        args,
        &SYNTAX,
        FixedRequest::parse,
        LimitRequest::Fixed,
        |req| Ok(Reply::Decision(limit::run::<StringState, _>(cmd, req, 1)?)),
    )
}

command!(FIXED_COMMAND = {
    syntax: &SYNTAX,
    flags: c"write deny-oom",
    summary: c"Fixed-window rate limit: one counter per key, its window starting at the first admitted request and lasting `window` ms. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(1)",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: fixed,
});

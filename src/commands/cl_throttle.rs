//! `CL.THROTTLE key max_burst count period [quantity]`: redis-cell's command,
//! period in seconds, its five-integer reply. Same GCRA and same key state
//! as `RL.THROTTLE`. The load argument `CL.THROTTLE off` leaves it out.

use linkme::distributed_slice;

use crate::command_callback;
use crate::commands::throttle::decide_and_apply;
use crate::core::error::RlError;
use crate::core::throttle_request::{self, ThrottleRequest};
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::reply::Reply;

fn cl_throttle(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = ThrottleRequest::parse_cell(args)?;
    let outcome = decide_and_apply(cmd, &req)?;
    Ok(Reply::Cell(outcome.to_cell(req.rate.limit)))
}

const HANDLER: Handler = cl_throttle;
command_callback!(cl_throttle_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static CL_THROTTLE: CommandSpec = CommandSpec {
    flags: c"write deny-oom",
    summary: c"redis-cell compatible GCRA rate limit: `count` per `period` seconds with bursts up to `max_burst + 1`. Replies [limited, limit, remaining, retry_after_s, reset_after_s].",
    complexity: c"O(1)",
    since: c"0.1.0",
    key: KeyAccess::ReadWriteUpdate,
    syntax: &throttle_request::CL_THROTTLE,
    callback: cl_throttle_callback,
};

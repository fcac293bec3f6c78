//! `CL.THROTTLE key max_burst count period [quantity]`: redis-cell's command,
//! period in seconds, its five-integer reply. Same GCRA and same key state
//! as `RL.THROTTLE`. The load argument `CL.THROTTLE off` leaves it out.

use crate::command;
use crate::core::error::RlError;
use crate::core::throttle::gcra::CellReply;
use crate::core::throttle::request::{ThrottleRequest, CL_THROTTLE};
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::string_state::StringState;

fn cl_throttle(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = ThrottleRequest::parse_cell(args)?;
    let decision = limit::run::<StringState, _>(cmd, &req, 1)?;
    Ok(Reply::Cell(CellReply::new(&decision, req.rate.limit)))
}

command!(CL_THROTTLE_COMMAND = {
    syntax: &CL_THROTTLE,
    flags: c"write deny-oom",
    summary: c"redis-cell compatible GCRA rate limit: `count` per `period` seconds with bursts up to `max_burst + 1`. Replies [limited, limit, remaining, retry_after_s, reset_after_s].",
    complexity: c"O(1)",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: cl_throttle,
});

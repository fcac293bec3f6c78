//! `RL.BLOCK <SLIDE|BUCKETS|THROTTLE|FIXED> key ms`: blocks the key by hand
//! (a ban) until `ms` from now, whatever its counts; replies the block's
//! end in ms on the server's clock.

use crate::command;
use crate::core::dispatch::block::{BlockRequest, BLOCK, BLOCK_KEY};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn block(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = BlockRequest::parse(args)?;
    Ok(Reply::Integer(limit::block_any(cmd, &req, BLOCK_KEY)?))
}

command!(BLOCK_COMMAND = {
    syntax: &BLOCK,
    flags: c"write deny-oom",
    summary: c"Blocks the key of the named limiter (SLIDE, BUCKETS, THROTTLE or FIXED) for `ms` from now: until then every call of that limiter on the key is denied without counting, retry_after_ms the block's remaining time. Replaces any block the key has; keeps its counts. Replies the block's end, in ms on the server's clock.",
    complexity: c"O(1)",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdateAt(BLOCK_KEY as i32),
    handler: block,
});

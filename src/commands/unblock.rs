//! `RL.UNBLOCK <SLIDE|BUCKETS|THROTTLE|FIXED> key`: lifts the key's block
//! early, keeping its counts; replies 1 if a block was lifted, else 0.

use crate::command;
use crate::core::dispatch::block::{UnblockRequest, BLOCK_KEY, UNBLOCK};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn unblock(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = UnblockRequest::parse(args)?;
    let lifted = limit::unblock_any(cmd, &req, BLOCK_KEY)?;
    Ok(Reply::Integer(i64::from(lifted)))
}

command!(UNBLOCK_COMMAND = {
    syntax: &UNBLOCK,
    // Not deny-oom: lifting a block only shortens the key.
    flags: c"write",
    summary: c"Lifts the block of the named limiter's key (SLIDE, BUCKETS, THROTTLE or FIXED), keeping its counts. Replies 1 if a block held, else 0 (and writes nothing).",
    complexity: c"O(1)",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdateAt(BLOCK_KEY as i32),
    handler: unblock,
});

//! `RL.PEEK <SLIDE|BUCKETS|THROTTLE|FIXED> key <parameters>`: what the named
//! limiter would answer, without recording anything. Read-only: runs on
//! replicas and in read-only scripts.

use linkme::distributed_slice;

use crate::command_callback;
use crate::commands::limiter::{self, Access, Now, Shares};
use crate::core::error::RlError;
use crate::core::limit_request::{self, parse_peek, PEEK_KEY};
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::reply::Reply;

fn peek(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = parse_peek(args)?;
    // The key is opened for reading only: no write, eviction, expiry change,
    // notification or modified-key signal can follow.
    let decided = limiter::decide(
        cmd,
        &req,
        PEEK_KEY,
        Access::Read,
        Now::read(cmd),
        Shares::ONE,
    )?;
    Ok(Reply::Decision(decided.decision))
}

const HANDLER: Handler = peek;
command_callback!(peek_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static PEEK: CommandSpec = CommandSpec {
    flags: c"readonly",
    summary: c"What RL.SLIDE, RL.BUCKETS, RL.THROTTLE or RL.FIXED would answer for this request, without recording it: same parameters after the limiter's name, same reply [allowed, remaining, retry_after_ms, reset_after_ms]. Never writes; runs on replicas and in read-only scripts.",
    complexity: c"That of the named limiter's decision (its write excluded).",
    since: c"0.1.0",
    key: KeyAccess::ReadOnlyAt(PEEK_KEY as i32),
    syntax: &limit_request::PEEK,
    callback: peek_callback,
};

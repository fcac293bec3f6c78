//! `RL.SLIDE key limit window [COST cost]`: the exact sliding-window log.

use linkme::distributed_slice;

use crate::command_callback;
use crate::core::error::RlError;
use crate::core::slide_request::{self, SlideRequest};
use crate::core::sliding_log::{decide, Admission};
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::replicate;
use crate::host::reply::Reply;
use crate::host::zset_log::ZsetLog;

const KEY: usize = 1;

fn slide(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = SlideRequest::parse(args)?;
    let now = cmd.now_ms();
    let mut log = ZsetLog::open(cmd, KEY)?;
    let outcome = decide(&mut log, &req, now)?;
    match &outcome.admission {
        Some(admission) => record(cmd, KEY, &mut log, admission)?,
        None => cmd.notify_denied(KEY),
    }
    Ok(Reply::Decision(outcome.decision))
}

/// Writes an admission to the log at `key` and replicates it.
pub(crate) fn record(
    cmd: &CommandCtx,
    key: usize,
    log: &mut ZsetLog,
    admission: &Admission,
) -> Result<(), RlError> {
    let written = log.apply(admission)?;
    replicate::zadd(cmd, key, &written);
    if admission.evict > 0 {
        replicate::zrem_oldest(cmd, key, admission.evict);
    }
    log.keep_alive(&admission.expiry)
}

const HANDLER: Handler = slide;
command_callback!(slide_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static SLIDE: CommandSpec = CommandSpec {
    flags: c"write deny-oom",
    summary: c"Exact sliding-window rate limit: admits the request if the cost admitted in the last `window` ms plus `cost` is at most `limit`. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(log(N) * (M + C)) with N the entries held, C the cost (at most 100) and M the entries removed because they left the window (at most max(256, 2C) per call; the rest go in later calls).",
    since: c"0.1.0",
    key: KeyAccess::ReadWriteUpdate,
    syntax: &slide_request::SYNTAX,
    callback: slide_callback,
};

//! `RL.BUCKETS key limit window [PRECISION ms] [COST cost]`: the sliding
//! window in buckets, memory bounded by the bucket count.

use linkme::distributed_slice;

use crate::command_callback;
use crate::core::bucket_window::{decide, HashWrite};
use crate::core::buckets_request::{self, BucketsRequest};
use crate::core::error::RlError;
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::replicate;
use crate::host::reply::Reply;

const KEY: usize = 1;

fn buckets(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = BucketsRequest::parse(args)?;
    let now = cmd.now_ms();
    let mut state = HashState::open(cmd, KEY, true)?;
    let outcome = decide(&mut state, &req, now)?;
    match &outcome.write {
        Some(write) => record(cmd, KEY, &mut state, write)?,
        None => cmd.notify_denied(KEY),
    }
    Ok(Reply::Decision(outcome.decision))
}

/// Writes an admission (or an RL.COUNT addition) to the hash at `key` and
/// replicates it.
pub(crate) fn record(
    cmd: &CommandCtx,
    key: usize,
    state: &mut HashState,
    write: &HashWrite,
) -> Result<(), RlError> {
    let applied = state.apply(write)?;
    replicate::hset(cmd, key, &applied.set);
    if !applied.delete.is_empty() {
        replicate::hdel(cmd, key, &applied.delete);
    }
    state.keep_alive(&write.expiry)
}

const HANDLER: Handler = buckets;
command_callback!(buckets_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static BUCKETS: CommandSpec = CommandSpec {
    flags: c"write deny-oom",
    summary: c"Sliding-window rate limit in buckets of PRECISION ms (default window/60): admits the request if the buckets still overlapping the last `window` ms plus `cost` hold at most `limit`. Memory depends on the bucket count, not the rate. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(1) amortised; O(B) at most, with B = window / PRECISION buckets (after an idle gap, or to compute retry_after_ms on a denial).",
    since: c"0.1.0",
    key: KeyAccess::ReadWriteUpdate,
    syntax: &buckets_request::SYNTAX,
    callback: buckets_callback,
};

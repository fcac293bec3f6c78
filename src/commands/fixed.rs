//! `RL.FIXED key limit window [COST cost]`: the fixed-window counter.

use linkme::distributed_slice;

use crate::command_callback;
use crate::core::error::RlError;
use crate::core::fixed_request::{self, FixedRequest};
use crate::core::fixed_window::{decide, stored_state, FixedState, FixedWrite};
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::replicate;
use crate::host::reply::Reply;
use crate::host::string_state::StringState;

const KEY: usize = 1;

fn fixed(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = FixedRequest::parse(args)?;
    let mut state = StringState::open(cmd, KEY)?;
    let outcome = decide(&req, read(&state)?, cmd.now_ms());
    match outcome.write {
        Some(w) => record(cmd, KEY, &mut state, w)?,
        None => cmd.notify_denied(KEY),
    }
    Ok(Reply::Decision(outcome.decision))
}

/// The stored counter and its expiry; `None` for a missing key.
pub(crate) fn read(state: &StringState) -> Result<Option<FixedState>, RlError> {
    state
        .bytes()
        .map(|bytes| stored_state(bytes, state.expire_at_ms()))
        .transpose()
}

/// Writes an admission to the counter at `key` and replicates it.
pub(crate) fn record(
    cmd: &CommandCtx,
    key: usize,
    state: &mut StringState,
    w: FixedWrite,
) -> Result<(), RlError> {
    state.write(w.count, w.expire_at_ms)?;
    replicate::set_pxat(cmd, key, w.count as i64, w.expire_at_ms);
    Ok(())
}

const HANDLER: Handler = fixed;
command_callback!(fixed_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static FIXED: CommandSpec = CommandSpec {
    flags: c"write deny-oom",
    summary: c"Fixed-window rate limit: one counter per key, its window starting at the first admitted request and lasting `window` ms. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(1)",
    since: c"0.1.0",
    key: KeyAccess::ReadWriteUpdate,
    syntax: &fixed_request::SYNTAX,
    callback: fixed_callback,
};

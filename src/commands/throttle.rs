//! `RL.THROTTLE key max_burst count period [quantity]`: GCRA, period in ms.

use linkme::distributed_slice;

use crate::command_callback;
use crate::core::error::RlError;
use crate::core::gcra::{decide, stored_state, GcraOutcome, TatWrite};
use crate::core::throttle_request::{self, ThrottleRequest};
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::replicate;
use crate::host::reply::Reply;
use crate::host::string_state::StringState;

const KEY: usize = 1;

/// The GCRA step shared with `CL.THROTTLE`: read the TAT, decide at the
/// server's µs clock, store and replicate an admission as `SET key tat PXAT
/// expiry`. A denial or a peek writes nothing.
pub(crate) fn decide_and_apply(
    cmd: &CommandCtx,
    req: &ThrottleRequest,
) -> Result<GcraOutcome, RlError> {
    let mut state = StringState::open(cmd, KEY)?;
    let outcome = decide(&req.rate, read(&state)?, req.quantity, cmd.now_us());
    if let Some(w) = outcome.write {
        record(cmd, KEY, &mut state, w)?;
    }
    if !outcome.allowed {
        cmd.notify_denied(KEY);
    }
    Ok(outcome)
}

/// The stored TAT; `None` for a missing key.
pub(crate) fn read(state: &StringState) -> Result<Option<i64>, RlError> {
    state
        .bytes()
        .map(|bytes| stored_state(bytes, state.expire_at_ms()))
        .transpose()
}

/// Writes an admission's TAT to `key` and replicates it.
pub(crate) fn record(
    cmd: &CommandCtx,
    key: usize,
    state: &mut StringState,
    w: TatWrite,
) -> Result<(), RlError> {
    let value = u64::try_from(w.tat_us).map_err(|_| RlError::Internal("negative TAT"))?;
    state.write(value, w.expire_at_ms)?;
    replicate::set_pxat(cmd, key, w.tat_us, w.expire_at_ms);
    Ok(())
}

fn throttle(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = ThrottleRequest::parse_ms(args)?;
    let outcome = decide_and_apply(cmd, &req)?;
    Ok(Reply::Decision(outcome.to_decision()))
}

const HANDLER: Handler = throttle;
command_callback!(throttle_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static THROTTLE: CommandSpec = CommandSpec {
    flags: c"write deny-oom",
    summary: c"GCRA rate limit: `count` per `period` ms with bursts up to `max_burst + 1`; `quantity` (default 1, 0 peeks) is the cost. Replies [allowed, remaining, retry_after_ms, reset_after_ms].",
    complexity: c"O(1)",
    since: c"0.1.0",
    key: KeyAccess::ReadWriteUpdate,
    syntax: &throttle_request::RL_THROTTLE,
    callback: throttle_callback,
};

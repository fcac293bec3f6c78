//! `RL.COUNT key window field [BY n] [PRECISION ms]`: adds to a sliding-window
//! event counter and replies with every field's total over the window.

use linkme::distributed_slice;

use crate::command_callback;
use crate::commands::buckets;
use crate::core::count_request::{self, CountRequest};
use crate::core::error::RlError;
use crate::core::event_counter::count;
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::reply::Reply;

const KEY: usize = 1;

fn count_command(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = CountRequest::parse(args)?;
    let now = cmd.now_ms();
    let mut state = HashState::open(cmd, KEY, true)?;
    let outcome = count(&mut state, &req, now)?;
    buckets::record(cmd, KEY, &mut state, &outcome.write)?;
    Ok(Reply::Totals(outcome.totals))
}

const HANDLER: Handler = count_command;
command_callback!(count_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static COUNT: CommandSpec = CommandSpec {
    flags: c"write deny-oom",
    summary: c"Sliding-window event counter: adds n (default 1) to `field` in the current bucket and replies with every field's total over the last `window` ms, as field/total pairs sorted by field (a map in RESP3).",
    complexity: c"O(F) amortised with F the fields of the key; O(B + F) at most, with B = window / PRECISION buckets (after an idle gap).",
    since: c"0.1.0",
    key: KeyAccess::ReadWriteUpdate,
    syntax: &count_request::COUNT,
    callback: count_callback,
};

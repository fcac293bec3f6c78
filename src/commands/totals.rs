//! `RL.TOTALS key window [PRECISION ms]`: the totals of an RL.COUNT key over
//! the window, without writing (runs on replicas).

use linkme::distributed_slice;

use crate::command_callback;
use crate::core::count_request::{self, TotalsRequest};
use crate::core::error::RlError;
use crate::core::event_counter::totals;
use crate::host::command::Handler;
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::registry::{CommandSpec, KeyAccess, COMMANDS};
use crate::host::reply::Reply;

const KEY: usize = 1;

fn totals_command(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = TotalsRequest::parse(args)?;
    let now = cmd.now_ms();
    let mut state = HashState::open(cmd, KEY, false)?;
    Ok(Reply::Totals(totals(&mut state, &req, now)?))
}

const HANDLER: Handler = totals_command;
command_callback!(totals_callback => HANDLER);

#[distributed_slice(COMMANDS)]
static TOTALS: CommandSpec = CommandSpec {
    flags: c"readonly",
    summary: c"Totals of an RL.COUNT key over the last `window` ms, as field/total pairs sorted by field (a map in RESP3). Never writes.",
    complexity: c"O(F) with F the fields of the key; O(B + F) at most, with B = window / PRECISION buckets.",
    since: c"0.1.0",
    key: KeyAccess::ReadOnly,
    syntax: &count_request::TOTALS,
    callback: totals_callback,
};

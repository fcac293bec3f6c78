//! `RL.COUNT key window field [BY n] [PRECISION ms]`: adds to a sliding-window
//! event counter and replies with every field's total over the window.

use crate::command;
use crate::core::count::request::{CountRequest, COUNT};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn count(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = CountRequest::parse(args)?;
    Ok(Reply::Totals(limit::run::<HashState, _>(cmd, &req, 1)?))
}

command!(COUNT_COMMAND = {
    syntax: &COUNT,
    flags: c"write deny-oom",
    summary: c"Sliding-window event counter: adds n (default 1) to `field` in the current bucket and replies with every field's total over the last `window` ms, as field/total pairs sorted by field (a map in RESP3).",
    complexity: c"O(F) amortised with F the fields of the key; O(B + F) at most, with B = window / PRECISION buckets (after an idle gap).",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: count,
});

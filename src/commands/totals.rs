//! `RL.TOTALS key window [PRECISION ms]`: the totals of an RL.COUNT key over
//! the window, without writing (runs on replicas).

use crate::command;
use crate::core::count::request::{TotalsRequest, TOTALS};
use crate::core::error::RlError;
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn totals(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = TotalsRequest::parse(args)?;
    Ok(Reply::Totals(limit::read::<HashState, _>(cmd, &req, 1)?))
}

command!(TOTALS_COMMAND = {
    syntax: &TOTALS,
    flags: c"readonly",
    summary: c"Totals of an RL.COUNT key over the last `window` ms, as field/total pairs sorted by field (a map in RESP3). Never writes.",
    complexity: c"O(F) with F the fields of the key; O(B + F) at most, with B = window / PRECISION buckets.",
    since: c"1.0.0",
    key: KeyAccess::ReadOnly,
    handler: totals,
});

//! `RL.ACQUIRE key limit lease_ms [ID id]`: takes one of `limit` slots
//! until `now + lease_ms`.

use crate::command;
use crate::core::error::RlError;
use crate::core::lease::request::{AcquireRequest, ACQUIRE};
use crate::host::context::CommandCtx;
use crate::host::lease_set::LeaseSet;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn acquire(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = AcquireRequest::parse(args)?;
    Ok(Reply::Leased(limit::run::<LeaseSet, _>(cmd, &req, 1)?))
}

command!(ACQUIRE_COMMAND = {
    syntax: &ACQUIRE,
    flags: c"write deny-oom",
    summary: c"Concurrency limit: takes a lease until now + lease_ms if fewer than `limit` leases of the key are held (expired ones never count). With ID, the caller names the lease and acquiring a held id renews it, counted once. Replies [allowed, remaining, retry_after_ms, reset_after_ms, lease], lease nil when denied.",
    complexity: c"O(log N) with N the leases the key holds, plus O(log N) for each expired lease removed (at most 16 per call).",
    since: c"0.2.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: acquire,
});

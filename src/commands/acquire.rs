//! `RL.ACQUIRE key limit lease_ms [ID id] [WAIT timeout_ms]`: takes one of
//! `limit` slots until `now + lease_ms`; with `WAIT`, a caller finding none
//! free waits for one (src/host/wait/).

use crate::command;
use crate::core::dispatch::LimitRequest;
use crate::core::error::RlError;
use crate::core::lease::request::{AcquireRequest, ACQUIRE};
use crate::core::options::wait;
use crate::host::context::CommandCtx;
use crate::host::lease_set::LeaseSet;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::wait as waits;

fn acquire(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let (mut req, timeout) = match wait::split(args, &ACQUIRE)? {
        None => (AcquireRequest::parse(args)?, None),
        Some(split) => (AcquireRequest::parse(&split.line)?, split.timeout_ms),
    };
    if let Some(timeout) = timeout {
        return waits::serve(cmd, LimitRequest::Acquire(req), timeout, ACQUIRE.name());
    }
    // A slot a release just handed to a waiter is held for it.
    req.limit = req.limit.saturating_sub(waits::reserved(cmd, 1));
    Ok(Reply::Leased(limit::run::<LeaseSet, _>(cmd, &req, 1)?))
}

command!(ACQUIRE_COMMAND = {
    syntax: &ACQUIRE,
    flags: c"write deny-oom",
    summary: c"Concurrency limit: takes a lease until now + lease_ms if fewer than `limit` leases of the key are held (expired ones never count). With ID, the caller names the lease and acquiring a held id renews it, counted once. With WAIT, a caller finding no slot free waits up to timeout_ms for one, in arrival order. Replies [allowed, remaining, retry_after_ms, reset_after_ms, lease], lease nil when denied.",
    complexity: c"O(log N) with N the leases the key holds, plus O(log N) for each expired lease removed (at most 16 per call).",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: acquire,
});

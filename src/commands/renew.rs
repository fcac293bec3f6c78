//! `RL.RENEW key lease lease_ms`: extends a held lease (a heartbeat).

use crate::command;
use crate::core::error::RlError;
use crate::core::lease::request::{RenewRequest, RENEW};
use crate::host::context::CommandCtx;
use crate::host::lease_set::LeaseSet;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn renew(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = RenewRequest::parse(args)?;
    Ok(Reply::LeaseChange(limit::run::<LeaseSet, _>(cmd, &req, 1)?))
}

command!(RENEW_COMMAND = {
    syntax: &RENEW,
    flags: c"write deny-oom",
    summary: c"Extends a held lease to now + lease_ms (never shortens it). Replies [renewed, held, retry_after_ms, reset_after_ms]: renewed 0 (and nothing written) when the lease is no longer held: its holder has lost the slot and must stop.",
    complexity: c"O(log N) with N the leases the key holds.",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: renew,
});

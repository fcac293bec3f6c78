//! `RL.RELEASE key lease`: frees a held lease's slot.

use crate::command;
use crate::core::error::RlError;
use crate::core::lease::request::{ReleaseRequest, RELEASE};
use crate::host::context::CommandCtx;
use crate::host::lease_set::LeaseSet;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;

fn release(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    let req = ReleaseRequest::parse(args)?;
    let change = limit::run::<LeaseSet, _>(cmd, &req, 1)?;
    if change.changed {
        // The freed slot goes to the first client waiting on the key.
        crate::host::wait::wake(cmd, 1);
    }
    Ok(Reply::LeaseChange(change))
}

command!(RELEASE_COMMAND = {
    syntax: &RELEASE,
    flags: c"write",
    summary: c"Frees the slot of a lease RL.ACQUIRE took. Replies [released, held, retry_after_ms, reset_after_ms]: released 0 (and nothing written) when the lease is not held (expired or unknown), then the leases still held and until the earliest and the latest of them expire.",
    complexity: c"O(log N) with N the leases the key holds.",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdate,
    handler: release,
});

//! `RL.ALL numkeys key [key ...] clause [clause ...]`: admits a request only
//! if every clause admits it; a denial in any records nothing in any (but
//! the block a denying clause's `BLOCK` sets on its own key).

use crate::command;
use crate::core::dispatch::all::combine::combine;
use crate::core::dispatch::all::{AllRequest, PerClause, ALL, ALL_FIRST_KEY};
use crate::core::error::RlError;
use crate::core::limiter::Call;
use crate::host::context::CommandCtx;
use crate::host::limit;
use crate::host::registry::KeyAccess;
use crate::host::reply::Reply;
use crate::host::wait;

fn all(cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    if cmd.keys_position_request() {
        // The keys of a call the command accepts, none for one it refuses:
        // then Cluster routing and ACL key checks let the call through to
        // its own error instead of answering CROSSSLOT, MOVED or NOPERM
        // about arguments that are not keys.
        if let Ok(req) = AllRequest::parse(args) {
            for i in 0..req.clauses.len() {
                cmd.report_key(ALL_FIRST_KEY + i);
            }
        }
        return Ok(Reply::KeysReported);
    }
    let req = AllRequest::parse(args)?;
    let call = Call {
        now: cmd.now(),
        shares: req.shares(),
        writes: true,
    };
    // Decide every clause first: all keys read, nothing written.
    let mut decided: PerClause<_> = PerClause::new();
    for (i, clause) in req.clauses.iter().enumerate() {
        // A slot a release just handed to a waiter is held for it.
        let clause = wait::honouring_reserved(cmd, clause, ALL_FIRST_KEY + i);
        let d = limit::decide_any(cmd, &clause, ALL_FIRST_KEY + i, &call)
            .map_err(|e| e.in_clause(i + 1))?;
        decided.push(d);
    }
    // A shadowed clause's decision is already admitted: only the enforced
    // clauses can deny the call.
    let mut combined = combine(decided.iter().map(|d| d.decision()).collect());
    let shadowed = combined.allowed && decided.iter().any(|d| d.shadowed());
    if shadowed {
        // Admitted in shadow mode: the wait the enforced denial would have
        // answered, so a client can tell (an enforced admission waits 0).
        combined.retry_after_ms = decided
            .iter()
            .filter(|d| d.shadowed())
            .map(|d| d.decision().retry_after_ms)
            .max()
            .unwrap_or(1);
    }
    if decided.iter().any(|d| d.lease().is_some()) {
        // A lease clause's id is in the reply only if the call records it.
        let admitted = combined.allowed;
        combined.leases = decided
            .iter()
            .map(|d| d.lease().map(|l| l.filter(|_| admitted)))
            .collect();
    }
    if shadowed {
        for (i, d) in decided.into_iter().enumerate() {
            d.finish_shadowed().map_err(|e| e.in_clause(i + 1))?;
        }
        cmd.mark_shadowed();
    } else if combined.allowed {
        // Every check that can refuse ran above; what is left are server
        // failures. Each clause replicates as it applies, so a replica never
        // misses an effect the primary holds; the server sends this
        // command's effects together, in MULTI/EXEC.
        for (i, d) in decided.into_iter().enumerate() {
            d.finish().map_err(|e| e.in_clause(i + 1))?;
        }
    } else {
        // A denying clause with `BLOCK` records its block; nothing else is
        // recorded.
        for (i, d) in decided.into_iter().enumerate() {
            d.abandon().map_err(|e| e.in_clause(i + 1))?;
        }
    }
    Ok(Reply::All(combined))
}

command!(ALL_COMMAND = {
    syntax: &ALL,
    // `getkeys-api` as well as the key spec: servers route a command by key
    // only if it has a legacy key range or a key callback, and a key count
    // has no legacy range.
    flags: c"write deny-oom getkeys-api",
    summary: c"Several limits at once: clause i (SLIDE|BUCKETS|THROTTLE|FIXED|ACQUIRE and that limiter's parameters) applies to key i. Admits and records the request only if every clause admits it; otherwise records nothing. Replies [allowed, retry_after_ms, [clause 1: allowed, remaining, retry_after_ms, reset_after_ms], ...], an ACQUIRE clause's with its lease (nil unless recorded) as a fifth element.",
    complexity: c"The sum of the clauses' complexities.",
    since: c"1.0.0",
    key: KeyAccess::ReadWriteUpdateKeyNum(1),
    handler: all,
});

//! `RL.ALL numkeys key [key ...] clause [clause ...]`: admits a request only
//! if every clause admits it; a denial in any records nothing in any (but
//! the block a denying clause's `BLOCK` sets on its own key).

use crate::command;
use crate::core::dispatch::all::combine::{combine, Combined};
use crate::core::dispatch::all::{AllRequest, PerClause, ALL, ALL_FIRST_KEY};
use crate::core::error::RlError;
use crate::core::limiter::Call;
use crate::host::context::CommandCtx;
use crate::host::limit::{self, Pending};
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
    let mut req = AllRequest {
        clauses: PerClause::new(),
    };
    req.parse_into(args)?;
    let call = Call {
        now: cmd.now(),
        shares: req.shares(),
        writes: true,
    };
    // The answer is left here rather than returned up through every
    // clause's frame (a copy of the whole answer per frame).
    let mut answer = None;
    decide_from(cmd, &req, &call, 0, None, &mut answer)?;
    answer
        .map(Reply::All)
        .ok_or(RlError::Internal("RL.ALL settled no answer"))
}

/// The clauses decided so far, the latest first: each a reference into the
/// frame of the `limit::decide_any` call that decided it, which lasts
/// until the call is settled (no clause is allocated or moved).
struct Chain<'c> {
    here: &'c dyn Pending,
    up: Option<&'c Chain<'c>>,
}

/// Decides clause `i` (all keys read, nothing written), and inside it the
/// clauses after it; past the last, settles them all.
fn decide_from(
    cmd: &CommandCtx,
    req: &AllRequest,
    call: &Call,
    i: usize,
    up: Option<&Chain<'_>>,
    answer: &mut Option<Combined>,
) -> Result<(), RlError> {
    let Some(clause) = req.clauses.get(i) else {
        let mut decided: PerClause<&dyn Pending> = PerClause::new();
        let mut link = up;
        while let Some(c) = link {
            decided.push(c.here);
            link = c.up;
        }
        decided.reverse();
        *answer = Some(settle(cmd, &decided)?);
        return Ok(());
    };
    let key = ALL_FIRST_KEY + i;
    // A slot a release just handed to a waiter is held for it.
    let clause = wait::honouring_reserved(cmd, clause, key);
    limit::decide_any(cmd, &clause, key, call, |here| {
        decide_from(cmd, req, call, i + 1, Some(&Chain { here, up }), answer)
    })
    .map_err(|e| e.in_clause(i + 1))?
}

/// Every clause decided, in clause order: records every clause's write if
/// all admit; otherwise none but the blocks denying clauses set (and, in
/// shadow mode, a lease clause's lease).
fn settle(cmd: &CommandCtx, decided: &[&dyn Pending]) -> Result<Combined, RlError> {
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
    for (i, d) in decided.iter().enumerate() {
        let ended = if shadowed {
            d.finish_shadowed()
        } else if combined.allowed {
            // Every check that can refuse ran above; what is left are
            // server failures. Each clause replicates as it applies, so a
            // replica never misses an effect the primary holds; the server
            // sends this command's effects together, in MULTI/EXEC.
            d.finish()
        } else {
            // A denying clause with `BLOCK` records its block; nothing
            // else is recorded.
            d.abandon()
        };
        ended.map_err(|e| e.in_clause(i + 1))?;
    }
    if shadowed {
        cmd.mark_shadowed();
    }
    Ok(combined)
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

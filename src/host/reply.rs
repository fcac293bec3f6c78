//! Writes replies (plain data from the core) to the client.

use std::ffi::CString;

use super::ffi;

use super::ffi::{api, optional_api};
use crate::core::decision::Decision;
use crate::core::dispatch::all::combine::Combined;
use crate::core::dispatch::all::PerClause;
use crate::core::error::RlError;
use crate::core::lease::{LeaseChange, Leased};
use crate::core::limiter::Charged;
use crate::core::limiter::Refunded;
use crate::core::options::upto::Granted;
use crate::core::throttle::gcra::CellReply;

/// What a command answers; shaped by the core, written here.
// `All` holds its clauses inline (several hundred bytes): a reply lives on
// the stack of one call, and boxing it would cost every RL.ALL call an
// allocation and its free.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Decision(Decision),
    /// RL.PEEK ... OLDEST: the decision's four integers, then the wait
    /// until the oldest counted unit leaves the window.
    DecisionOldest(Decision, u64),
    /// Name/total pairs: a map in RESP3, a flat array in RESP2.
    Totals(Vec<(Vec<u8>, u64)>),
    /// redis-cell's five integers (CL.THROTTLE).
    Cell(CellReply),
    /// RL.ALL: `[allowed, retry_after_ms, [clause 1's four], [clause 2's four], ...]`.
    All(Combined),
    /// RL.REFUND: `[refunded, remaining, retry_after_ms, reset_after_ms]`.
    Refunded(Refunded),
    /// RL.CHARGE: `[charged, remaining, retry_after_ms, reset_after_ms]`.
    Charged(Charged),
    /// A limiter's own command with `UPTO`: the decision, then the units
    /// granted.
    Granted(Granted),
    /// RL.ACQUIRE: `[allowed, remaining, retry_after_ms, reset_after_ms,
    /// lease]`, the lease a bulk string, or nil when denied.
    Leased(Leased),
    /// RL.RELEASE, RL.RENEW: `[released|renewed, held, retry_after_ms,
    /// reset_after_ms]`.
    LeaseChange(LeaseChange),
    /// One integer (RL.BLOCK: the block's end; RL.UNBLOCK: 1 or 0).
    Integer(i64),
    /// Nothing: the call only reported its keys to the server.
    KeysReported,
    /// Nothing yet: the client waits (`WAIT`); its reply comes when the
    /// wait ends (src/host/wait/).
    Held,
}

/// Writes the reply. Calls nothing that can panic once it has started
/// (each value is computed before the first server call), so a reply is
/// never left half written.
pub(crate) fn write(ctx: *mut ffi::Ctx, reply: &Reply) {
    match reply {
        Reply::Decision(d) => write_integers(ctx, &d.to_reply()),
        Reply::DecisionOldest(d, wait) => {
            let [a, r, retry, reset] = d.to_reply();
            let wait = i64::try_from(*wait).unwrap_or(i64::MAX);
            write_integers(ctx, &[a, r, retry, reset, wait])
        }
        Reply::Cell(c) => write_integers(ctx, &c.to_reply()),
        Reply::Totals(pairs) => write_totals(ctx, pairs),
        Reply::All(c) => write_combined(ctx, c),
        Reply::Refunded(r) => write_integers(ctx, &r.to_reply()),
        Reply::Charged(c) => write_integers(ctx, &c.to_reply()),
        Reply::Granted(g) => write_integers(ctx, &g.to_reply()),
        Reply::Leased(l) => write_leased(ctx, l),
        Reply::LeaseChange(c) => write_integers(ctx, &c.to_reply()),
        // SAFETY: ctx is the live context of the running command.
        Reply::Integer(n) => unsafe {
            api!(ReplyWithLongLong)(ctx, *n);
        },
        Reply::KeysReported | Reply::Held => {}
    }
}

fn write_combined(ctx: *mut ffi::Ctx, c: &Combined) {
    // Every value first: nothing between the first and the last server
    // call may panic, or the client would get half a reply.
    let allowed = i64::from(c.allowed);
    let retry = i64::try_from(c.retry_after_ms).unwrap_or(i64::MAX);
    let clauses: PerClause<[i64; 4]> = c.clauses.iter().map(|d| d.to_reply()).collect();
    // SAFETY: ctx is the live context of the running command.
    unsafe {
        api!(ReplyWithArray)(ctx, (2 + clauses.len()) as _);
        api!(ReplyWithLongLong)(ctx, allowed);
        api!(ReplyWithLongLong)(ctx, retry);
    }
    for (i, ints) in clauses.iter().enumerate() {
        match c.leases.get(i).copied().flatten() {
            // A lease clause: its four integers and the lease.
            Some(lease) => write_leased(
                ctx,
                &Leased {
                    decision: c.clauses[i],
                    lease,
                },
            ),
            None => write_integers(ctx, ints),
        }
    }
}

fn write_leased(ctx: *mut ffi::Ctx, l: &Leased) {
    let ints = l.decision.to_reply();
    // SAFETY: ctx is the live context of the running command.
    unsafe {
        api!(ReplyWithArray)(ctx, 5);
        for v in ints {
            api!(ReplyWithLongLong)(ctx, v);
        }
        match &l.lease {
            Some(id) => {
                let b = id.as_bytes();
                api!(ReplyWithStringBuffer)(ctx, b.as_ptr().cast(), b.len());
            }
            None => {
                api!(ReplyWithNull)(ctx);
            }
        }
    }
}

fn write_totals(ctx: *mut ffi::Ctx, pairs: &[(Vec<u8>, u64)]) {
    // SAFETY: ctx is the live context of the running command.
    unsafe {
        // The server writes a map as a flat array for RESP2 clients; a
        // server without the call gets the flat array directly.
        match optional_api!(ReplyWithMap) {
            Some(map) => map(ctx, pairs.len() as _),
            None => api!(ReplyWithArray)(ctx, (pairs.len() * 2) as _),
        };
        for (name, total) in pairs {
            api!(ReplyWithStringBuffer)(ctx, name.as_ptr().cast(), name.len());
            api!(ReplyWithLongLong)(ctx, i64::try_from(*total).unwrap_or(i64::MAX));
        }
    }
}

/// An array of integers.
fn write_integers(ctx: *mut ffi::Ctx, ints: &[i64]) {
    // SAFETY: ctx is the live context of the running command.
    unsafe {
        api!(ReplyWithArray)(ctx, ints.len() as _);
        for &v in ints {
            api!(ReplyWithLongLong)(ctx, v);
        }
    }
}

pub(crate) fn write_error(ctx: *mut ffi::Ctx, err: &RlError) {
    // Client tokens in error texts are already stripped of control bytes.
    let text = CString::new(err.to_string()).unwrap_or_else(|_| c"ERR rl error".to_owned());
    // SAFETY: ctx is live; the server copies the text.
    unsafe {
        api!(ReplyWithError)(ctx, text.as_ptr());
    }
}

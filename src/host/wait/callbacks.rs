//! The server's callbacks of a waiting client: its admission (`on_reply`),
//! its timeout or `CLIENT UNBLOCK` (`on_timeout`), its disconnect, its
//! handle's release (`on_free`), and the key's timer (`on_timer`). Each
//! catches every panic: none reaches the server.

use std::os::raw::{c_int, c_void};

use super::{arm, decide, decision_of, denial, drop_if_idle, leave, less, pump, with, Bc, Phase};
use crate::core::error::RlError;
use crate::core::error::WaitError;
use crate::host::command::{after_call, catch};
use crate::host::context::CommandCtx;
use crate::host::ffi;
use crate::host::ffi::api;
use crate::host::metrics::{self, Ended};
use crate::host::registry::CommandSpec;
use crate::host::reply::{write, write_error, Reply};

/// Counts how the wait ended, as a plain call's end is counted: the
/// command's counters, then (when set) shadow mode's and the per-prefix
/// counts of `rl.stats-prefixes`, from the call's own arguments.
fn counters_settle(
    spec: &CommandSpec,
    result: &Result<Reply, RlError>,
    argv: *mut *mut ffi::Str,
    argc: c_int,
) {
    let outcome = match result {
        Ok(reply) => Ended::of(reply),
        Err(_) => Ended::Error,
    };
    spec.counters.settle(outcome);
    if metrics::extra() != 0 {
        after_call(argv, argc, spec, outcome);
    }
}

/// Ends the wait of a waiter whose key left (`moved.rs`): its command,
/// or `None` if it is not one.
fn moved_out(bc: usize) -> Option<&'static CommandSpec> {
    with(|w| {
        let x = w.waiters.get_mut(&bc)?;
        if x.phase != Phase::Moved {
            return None;
        }
        x.phase = Phase::Done;
        let (qid, spec) = (x.queue, x.command);
        w.live -= 1;
        if let Some(q) = w.queues.get_mut(&qid) {
            q.live -= 1;
        }
        Some(spec)
    })
}

/// The woken waiter's admission: decided and recorded now, through the
/// same path as a plain call, then answered; then the next waiter's turn.
pub(super) extern "C" fn on_reply(
    ctx: *mut ffi::Ctx,
    argv: *mut *mut ffi::Str,
    argc: c_int,
) -> c_int {
    let _ = catch(|| {
        // SAFETY: ctx is the reply context; the privdata is the handle.
        let bc = unsafe { api!(GetBlockedClientPrivateData)(ctx) } as usize;
        if let Some(spec) = moved_out(bc) {
            let result = Err(RlError::Wait(WaitError::KeyLeft));
            counters_settle(spec, &result, argv, argc);
            if let Err(err) = &result {
                write_error(ctx, err);
            }
            return;
        }
        let Some((request, qid, spec, others)) = with(|w| {
            let x = w.waiters.get_mut(&bc)?;
            if x.phase != Phase::Woken {
                return None;
            }
            x.phase = Phase::Done;
            let (request, qid, spec) = (x.request, x.queue, x.command);
            w.live -= 1;
            let q = w.queues.get_mut(&qid)?;
            q.woken -= 1;
            q.live -= 1;
            Some((request, qid, spec, q.woken))
        }) else {
            write_error(ctx, &RlError::Internal("a wait woken twice"));
            return;
        };
        let cmd = CommandCtx {
            raw: ctx,
            argv,
            argc: usize::try_from(argc).unwrap_or(0),
        };
        let result = decide(&cmd, &less(&request, others), true);
        if let Ok(reply) = &result {
            if decision_of(reply).allowed {
                with(|w| w.served += 1);
            }
        }
        counters_settle(spec, &result, argv, argc);
        match &result {
            Ok(reply) => write(ctx, reply),
            Err(err) => write_error(ctx, err),
        }
        pump(ctx, qid);
    });
    ffi::OK
}

/// The timeout (or `CLIENT UNBLOCK`): the denial its request gets now;
/// nothing recorded.
pub(super) extern "C" fn on_timeout(
    ctx: *mut ffi::Ctx,
    argv: *mut *mut ffi::Str,
    argc: c_int,
) -> c_int {
    let _ = catch(|| {
        // SAFETY: ctx is the timeout context of a blocked client.
        let bc = unsafe { api!(GetBlockedClientHandle)(ctx) };
        let request = with(|w| w.waiters.get(&(bc as usize)).map(|x| x.request));
        let Some((qid, was_head)) = leave(bc as usize) else {
            write_error(ctx, &RlError::Internal("a wait timed out twice"));
            return;
        };
        with(|w| w.timed_out += 1);
        let cmd = CommandCtx {
            raw: ctx,
            argv,
            argc: usize::try_from(argc).unwrap_or(0),
        };
        let result = match &request {
            Some(r) => denial(&cmd, r),
            None => Err(RlError::Internal("a wait without its request")),
        };
        if let Some(spec) = with(|w| w.waiters.get(&(bc as usize)).map(|x| x.command)) {
            counters_settle(spec, &result, argv, argc);
        }
        match &result {
            Ok(reply) => write(ctx, reply),
            Err(err) => write_error(ctx, err),
        }
        // SAFETY: the handle of this blocked client, released once: the
        // server frees it (and calls `on_free`) after this callback.
        unsafe { api!(UnblockClient)(bc, bc.cast()) };
        if was_head {
            arm(ctx, qid, 0);
        }
    });
    ffi::OK
}

/// A disconnect, or the server's forced unblock (a failover): nothing
/// recorded, nothing answered by us.
pub(super) extern "C" fn on_disconnect(ctx: *mut ffi::Ctx, bc: *mut Bc) {
    let _ = catch(|| {
        if let Some((qid, was_head)) = leave(bc as usize) {
            // SAFETY: the handle of this blocked client, released once.
            unsafe { api!(UnblockClient)(bc, bc.cast()) };
            if was_head {
                // Not in this context: the client is being freed.
                arm(ctx, qid, 0);
            }
        }
    });
}

/// The handle's last callback, whatever ended the wait.
pub(super) extern "C" fn on_free(ctx: *mut ffi::Ctx, privdata: *mut c_void) {
    let _ = catch(|| {
        let bc = privdata as usize;
        let Some((qid, woken)) = with(|w| {
            let x = w.waiters.remove(&bc)?;
            let woken = x.phase == Phase::Woken;
            if x.phase == Phase::Moved {
                // Gone before its error was answered.
                w.live -= 1;
                if let Some(q) = w.queues.get_mut(&x.queue) {
                    q.live -= 1;
                }
            }
            if woken {
                // Woken, and gone before its admission ran: its reserved
                // slot goes to the next waiter.
                w.live -= 1;
                if let Some(q) = w.queues.get_mut(&x.queue) {
                    q.woken -= 1;
                    q.live -= 1;
                }
            }
            Some((x.queue, woken))
        }) else {
            return;
        };
        if woken {
            arm(ctx, qid, 0);
        }
        drop_if_idle(ctx, qid);
    });
}

/// The key's retry instant.
pub(super) extern "C" fn on_timer(ctx: *mut ffi::Ctx, data: *mut c_void) {
    let _ = catch(|| {
        let qid = data as usize as u64;
        let Some(db) = with(|w| {
            let q = w.queues.get_mut(&qid)?;
            q.timer = None;
            Some(q.db)
        }) else {
            return;
        };
        // SAFETY: a timer's context; the db existed when the client
        // blocked.
        unsafe { api!(SelectDb)(ctx, db) };
        pump(ctx, qid);
    });
}

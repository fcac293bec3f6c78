//! A key that leaves this server while clients wait on it. rl subscribes
//! to the generic keyspace events: `del` (a `DEL`/`UNLINK`, the source's
//! delete at the end of a `MIGRATE`, and the server's own delete of the
//! keys of a slot it lost), `rename_from` and `move_from`. rl's own events
//! (a release that empties a lease set) are not these: that command wakes
//! the waiters itself.
//!
//! In a cluster the key's state is then elsewhere (or gone): each client
//! waiting on it is unblocked and answered `WaitError::KeyLeft`, nothing
//! recorded, so it retries on the key's owner. On a server without
//! Cluster the key was deleted or renamed away: the first waiter is
//! considered again (a deleted lease set frees every slot).
//!
//! The subscription is taken when a client first waits, not at load: a
//! subscriber costs every generic event of the server (rl's own writes
//! fire `expire`) a module context, about 600 instructions, so a server
//! where no client ever waited pays nothing for it. The server offers no
//! unsubscribe; once taken it stays until the module unloads, at one
//! event-name test and one map test per generic event while no client
//! waits.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{pump, with, Bc, Phase};
use crate::core::error::RlError;
use crate::host::command::catch;
use crate::host::context::own_event;
use crate::host::ffi;
use crate::host::ffi::api;
use crate::host::ffi::string_bytes;

/// Whether rl subscribed to the events that tell a key left. The main
/// thread alone reads and sets it.
static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// Subscribes, once, to the events that tell a key left: called before a
/// client first waits (`ctx` the command's context, which names rl as the
/// subscriber).
pub(crate) fn subscribe(ctx: *mut ffi::Ctx) -> Result<(), RlError> {
    if SUBSCRIBED.load(Ordering::Relaxed) {
        return Ok(());
    }
    // SAFETY: a live command context of rl; the callback is ours and
    // catches panics.
    let done =
        unsafe { api!(SubscribeToKeyspaceEvents)(ctx, ffi::NOTIFY_GENERIC, Some(on_key_event)) };
    if done != ffi::OK {
        return Err(RlError::Internal(
            "the server refused rl's keyspace subscription, which WAIT needs",
        ));
    }
    SUBSCRIBED.store(true, Ordering::Relaxed);
    Ok(())
}

extern "C" fn on_key_event(
    ctx: *mut ffi::Ctx,
    _class: c_int,
    event: *const c_char,
    key: *mut ffi::Str,
) -> c_int {
    let _ = catch(|| {
        if with(|w| w.by_key.is_empty()) || own_event() || event.is_null() {
            return;
        }
        // SAFETY: the server's event name, a C string for this call.
        let event = unsafe { CStr::from_ptr(event) }.to_bytes();
        if !matches!(event, b"del" | b"rename_from" | b"move_from") {
            return;
        }
        // SAFETY: ctx is the event's context, its db the key's.
        let db = unsafe { api!(GetSelectedDb)(ctx) };
        let name = string_bytes(key);
        let mut id = Vec::with_capacity(4 + name.len());
        id.extend_from_slice(&db.to_le_bytes());
        id.extend_from_slice(name);
        let Some(qid) = with(|w| w.by_key.get(&id).copied()) else {
            return;
        };
        // SAFETY: ctx is live.
        let cluster = unsafe { api!(GetContextFlags)(ctx) } & ffi::CTX_FLAGS_CLUSTER != 0;
        if cluster {
            unblock_all(qid);
        } else {
            pump(ctx, qid);
        }
    });
    ffi::OK
}

/// Unblocks every client waiting on the queue (and marks a woken one whose
/// admission has not run): each reply callback answers the error.
fn unblock_all(qid: u64) {
    let waiting: Vec<usize> = with(|w| {
        let Some(q) = w.queues.get_mut(&qid) else {
            return Vec::new();
        };
        let order: Vec<(usize, u64)> = q.order.drain(..).collect();
        q.woken = 0;
        let mut out = Vec::new();
        for (bc, seq) in order {
            if let Some(x) = w.waiters.get_mut(&bc) {
                if x.seq == seq && x.phase == Phase::Waiting {
                    x.phase = Phase::Moved;
                    out.push(bc);
                }
            }
        }
        // A woken waiter left the order when it was woken.
        for x in w.waiters.values_mut() {
            if x.queue == qid && x.phase == Phase::Woken {
                x.phase = Phase::Moved;
            }
        }
        out
    });
    for bc in waiting {
        // SAFETY: a live handle that was Waiting (never unblocked); the
        // privdata is the handle itself, read back as a number.
        unsafe { api!(UnblockClient)(bc as *mut Bc, bc as *mut std::os::raw::c_void) };
    }
}

//! `WAIT timeout_ms`: a denied call holds its client (`RedisModule_BlockClient`)
//! until it can be admitted, then is admitted; at the timeout it gets the
//! denial. The state lives here, on the main thread, never in the keyspace.
//!
//! Per key, a queue of the waiting clients in arrival order. Waiters are
//! woken one at a time, the head first: `pump` decides the head's request
//! over the key without writing, and when it would be admitted unblocks it;
//! the admission itself is decided and recorded in the head's reply
//! callback (`on_reply`), through the same `host::limit` path as a plain
//! call, at the server's clock then, and that callback pumps again. So a
//! release that frees one slot wakes one waiter, a release of the last of
//! two frees two in turn, and a waiter that would not fit wakes nobody
//! after it. A pump runs when a lease is released (`RL.RELEASE`), when the
//! head's retry instant comes (one module timer per key, at the head's
//! `retry_after_ms`: a lease's expiry, a window's opening), after each
//! admission, and when a head leaves without one. Each pump reads the key
//! once for the head and wakes at most one: O(1) reads per waiter woken.
//!
//! Between a wake and its reply callback (the same turn of the event loop)
//! the slot a release freed is reserved for the woken lease waiter: every
//! `RL.ACQUIRE` of the key counts it as held ([`reserved`]). A timer's
//! wakes need no reservation: the reply callbacks run before the server
//! reads another command.
//!
//! A waiter that times out, is unblocked (`CLIENT UNBLOCK`) or disconnects
//! records nothing; the failover's forced unblock (the server's own,
//! "UNBLOCKED ... master -> replica?") goes the same way. Nothing is
//! replicated while a client waits: the admission is, when it happens.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::os::raw::{c_int, c_void};

mod callbacks;
mod moved;
use callbacks::{on_disconnect, on_free, on_reply, on_timeout, on_timer};

use super::context::CommandCtx;
use super::ffi;
use super::ffi::api;
use super::ffi::string_bytes;
use super::limit::{self, with_store, WithStore};
use super::registry::{CommandSpec, COMMANDS};
use super::reply::Reply;
use super::store::Store;
use crate::core::decision::Decision;
use crate::core::dispatch::LimitRequest;
use crate::core::error::RlError;
use crate::core::error::WaitError;
use crate::core::lease::set::LeaseId;
use crate::core::lease::Leased;
use crate::core::limiter::Refundable;
use crate::core::options::wait::{MAX_WAITERS, MAX_WAITERS_PER_KEY};

type Bc = ffi::BlockedClient;

/// Where a waiter is in its wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Blocked, in its key's queue.
    Waiting,
    /// Unblocked for its admission; its reply callback has not run yet.
    Woken,
    /// Unblocked because its key left this server (deleted or migrated,
    /// in a cluster): its reply callback answers the error (`moved.rs`).
    Moved,
    /// Answered (admitted, timed out) or gone; only the handle is left.
    Done,
}

struct Waiter {
    /// Tells this waiter from an earlier one whose handle had the same
    /// address (the queue keeps the handles of waiters that left).
    seq: u64,
    queue: u64,
    request: LimitRequest,
    command: &'static CommandSpec,
    phase: Phase,
}

/// The clients waiting on one key, in arrival order.
struct Queue {
    db: c_int,
    /// The key's name, our own string, freed with the queue.
    name: *mut ffi::Str,
    ident: Vec<u8>,
    /// Handles and their waiter's `seq`; those that left are skipped when
    /// they reach the front.
    order: VecDeque<(usize, u64)>,
    /// Waiting or woken.
    live: usize,
    /// Woken, their reply callback still to run (0 or 1: one at a time).
    woken: u64,
    timer: Option<u64>,
}

#[derive(Default)]
struct Waits {
    waiters: HashMap<usize, Waiter>,
    queues: HashMap<u64, Queue>,
    by_key: HashMap<Vec<u8>, u64>,
    next: u64,
    live: usize,
    served: u64,
    timed_out: u64,
}

thread_local! {
    // Every callback that touches it runs on the server's main thread.
    static WAITS: RefCell<Waits> = RefCell::new(Waits::default());
}

fn with<T>(f: impl FnOnce(&mut Waits) -> T) -> T {
    WAITS.with(|w| f(&mut w.borrow_mut()))
}

/// The context flags under which a call may not hold its client: inside
/// `MULTI`, a script or a function, a command from the primary, a replica,
/// or a caller that denies blocking (`RM_Call` without the flag).
fn blocking_denied(ctx: *mut ffi::Ctx) -> bool {
    // SAFETY: ctx is the live context of the call.
    let flags = unsafe { api!(GetContextFlags)(ctx) };
    flags
        & (ffi::CTX_FLAGS_MULTI
            | ffi::CTX_FLAGS_LUA
            | ffi::CTX_FLAGS_REPLICATED
            | ffi::CTX_FLAGS_SLAVE
            | ffi::CTX_FLAGS_DENY_BLOCKING)
        != 0
}

/// The key's identity across calls: its database and its name.
fn ident(cmd: &CommandCtx, key_index: usize) -> Vec<u8> {
    // SAFETY: ctx is live.
    let db = unsafe { api!(GetSelectedDb)(cmd.raw) };
    let name = string_bytes(cmd.raw_arg(key_index));
    let mut id = Vec::with_capacity(4 + name.len());
    id.extend_from_slice(&db.to_le_bytes());
    id.extend_from_slice(name);
    id
}

/// Lease slots of the key at `key_index` handed to woken waiters whose
/// admission has not run yet: an `RL.ACQUIRE` counts them as held. 0 at
/// the cost of one test while no client waits anywhere.
pub fn reserved(cmd: &CommandCtx, key_index: usize) -> u64 {
    if with(|w| w.by_key.is_empty()) {
        return 0;
    }
    let id = ident(cmd, key_index);
    with(|w| {
        w.by_key
            .get(&id)
            .and_then(|q| w.queues.get(q))
            .map_or(0, |q| q.woken)
    })
}

/// `req` as any call but the woken waiter's admission must see the key at
/// `key_index`: a lease request counts the slots handed to woken waiters
/// as held, so no path (`RL.ALL`'s `ACQUIRE` clause, `RL.PEEK ACQUIRE`, as
/// `RL.ACQUIRE` itself) takes or reports free a slot a release gave one.
pub fn honouring_reserved(cmd: &CommandCtx, req: &LimitRequest, key_index: usize) -> LimitRequest {
    match req {
        LimitRequest::Acquire(_) => less(req, reserved(cmd, key_index)),
        other => *other,
    }
}

/// `req` less `reserved` lease slots (other limiters reserve nothing).
fn less(req: &LimitRequest, reserved: u64) -> LimitRequest {
    match req {
        LimitRequest::Acquire(r) if reserved > 0 => {
            let mut r = *r;
            r.limit = r.limit.saturating_sub(reserved);
            LimitRequest::Acquire(r)
        }
        other => *other,
    }
}

/// The answer to `req` on the key at argument 1 at the clock now,
/// recorded (`writes`, through `limit::run`) or only decided.
fn decide(cmd: &CommandCtx, req: &LimitRequest, writes: bool) -> Result<Reply, RlError> {
    struct Decide<'a> {
        cmd: &'a CommandCtx,
        writes: bool,
    }
    impl<'a> WithStore<'a> for Decide<'a> {
        type Out = Result<(Decision, Option<Option<LeaseId>>), RlError>;
        fn with<S, L>(self, req: &L) -> Self::Out
        where
            S: Store<'a> + 'a,
            L: Refundable<S, Write = S::Write>,
        {
            use crate::core::limiter::Decides;
            let a = if self.writes {
                limit::run::<S, L>(self.cmd, req, 1)?
            } else {
                limit::read::<S, L>(self.cmd, req, 1)?
            };
            Ok((a.decision(), a.lease()))
        }
    }
    let (decision, lease) = with_store(req, Decide { cmd, writes })?;
    Ok(match lease {
        Some(lease) => Reply::Leased(Leased { decision, lease }),
        None => Reply::Decision(decision),
    })
}

fn decision_of(reply: &Reply) -> Decision {
    match reply {
        Reply::Leased(l) => l.decision,
        Reply::Decision(d) => *d,
        // `decide` answers nothing else.
        _ => Decision {
            allowed: false,
            remaining: 0,
            retry_after_ms: 0,
            reset_after_ms: 0,
            blocked: false,
        },
    }
}

/// The denial a waiter leaving without its admission is answered with:
/// what its request gets now, denied (a slot free at that instant is
/// one its wake had not reached yet: `retry_after_ms` 0).
fn denial(cmd: &CommandCtx, req: &LimitRequest) -> Result<Reply, RlError> {
    Ok(match decide(cmd, req, false)? {
        Reply::Leased(mut l) => {
            l.decision.allowed = false;
            l.lease = None;
            Reply::Leased(l)
        }
        Reply::Decision(mut d) => {
            if d.allowed {
                d.allowed = false;
                d.retry_after_ms = 0;
            }
            Reply::Decision(d)
        }
        other => other,
    })
}

/// A call with `WAIT timeout_ms` (`command` the declaration it came in
/// by): answered now when admitted, when it cannot block, or when it
/// cannot fit within its timeout; else its client waits ([`Reply::Held`]).
/// A lease request waits whatever the leases' expiries: a release may come
/// first.
pub fn serve(
    cmd: &CommandCtx,
    req: LimitRequest,
    timeout_ms: u64,
    command: &str,
) -> Result<Reply, RlError> {
    let reserved = reserved(cmd, 1);
    if timeout_ms == 0 || blocking_denied(cmd.raw) {
        return decide(cmd, &less(&req, reserved), true);
    }
    let id = ident(cmd, 1);
    let queued = with(|w| {
        w.by_key
            .get(&id)
            .and_then(|q| w.queues.get(q))
            .is_some_and(|q| q.live > 0)
    });
    // Shadow mode admits what enforcement would make wait, as it admits
    // what it would deny: a call on a shadowed key never queues behind the
    // clients already waiting (those enforced before the switch), whose
    // turn may be seconds away. Unqueued, it is shadow-admitted below.
    if queued && cmd.shadows(1) {
        return decide(cmd, &less(&req, reserved), true);
    }
    let lease = matches!(req, LimitRequest::Acquire(_));
    let retry = if queued {
        // Others wait before it: it takes its turn, never overtakes.
        let now = decide(cmd, &less(&req, reserved), false)?;
        decision_of(&now).retry_after_ms
    } else {
        let now = decide(cmd, &less(&req, reserved), true)?;
        let d = decision_of(&now);
        if d.allowed {
            return Ok(now);
        }
        if !lease && d.retry_after_ms > timeout_ms {
            return Ok(now);
        }
        d.retry_after_ms
    };
    if queued && !lease && retry > timeout_ms {
        return denial(cmd, &req);
    }
    let spec = COMMANDS
        .iter()
        .find(|s| s.syntax.name() == command)
        .ok_or(RlError::Internal("WAIT from an undeclared command"))?;
    block(cmd, id, req, timeout_ms, spec, (!queued).then_some(retry))
}

/// Holds the client in the key's queue; with `first`, arms the key's timer
/// at that many ms (the head's retry instant).
fn block(
    cmd: &CommandCtx,
    id: Vec<u8>,
    request: LimitRequest,
    timeout_ms: u64,
    command: &'static CommandSpec,
    first: Option<u64>,
) -> Result<Reply, RlError> {
    moved::subscribe(cmd.raw)?;
    let qid = with(|w| -> Result<u64, RlError> {
        if w.live >= MAX_WAITERS {
            return Err(RlError::Wait(WaitError::ServerFull { max: MAX_WAITERS }));
        }
        if let Some(q) = w.by_key.get(&id).and_then(|q| w.queues.get(q)) {
            if q.live >= MAX_WAITERS_PER_KEY {
                return Err(RlError::Wait(WaitError::KeyFull {
                    max: MAX_WAITERS_PER_KEY,
                }));
            }
        }
        Ok(match w.by_key.get(&id) {
            Some(&q) => q,
            None => {
                w.next += 1;
                let qid = w.next;
                let name = string_bytes(cmd.raw_arg(1));
                // SAFETY: no context: a string we free with the queue.
                let name = unsafe {
                    api!(CreateString)(std::ptr::null_mut(), name.as_ptr().cast(), name.len())
                };
                // SAFETY: ctx is live.
                let db = unsafe { api!(GetSelectedDb)(cmd.raw) };
                w.queues.insert(
                    qid,
                    Queue {
                        db,
                        name,
                        ident: id.clone(),
                        order: VecDeque::new(),
                        live: 0,
                        woken: 0,
                        timer: None,
                    },
                );
                w.by_key.insert(id, qid);
                qid
            }
        })
    })?;
    // SAFETY: ctx is the live context of a call that may block (checked
    // by the caller); the callbacks are ours and catch every panic.
    let bc = unsafe {
        api!(BlockClient)(
            cmd.raw,
            Some(on_reply),
            Some(on_timeout),
            Some(on_free),
            timeout_ms as ffi::Mstime,
        )
    };
    if bc.is_null() {
        drop_if_idle(cmd.raw, qid);
        return Err(RlError::Internal("the server did not block the client"));
    }
    // SAFETY: bc is the handle just made.
    unsafe { api!(SetDisconnectCallback)(bc, Some(on_disconnect)) };
    with(|w| {
        w.next += 1;
        let seq = w.next;
        w.waiters.insert(
            bc as usize,
            Waiter {
                seq,
                queue: qid,
                request,
                command,
                phase: Phase::Waiting,
            },
        );
        w.live += 1;
        if let Some(q) = w.queues.get_mut(&qid) {
            q.order.push_back((bc as usize, seq));
            q.live += 1;
        }
    });
    if let Some(ms) = first {
        arm(cmd.raw, qid, ms.max(1));
    }
    Ok(Reply::Held)
}

/// (Re)arms the key's timer to fire in `ms`.
fn arm(ctx: *mut ffi::Ctx, qid: u64, ms: u64) {
    let old = with(|w| w.queues.get_mut(&qid).and_then(|q| q.timer.take()));
    if let Some(t) = old {
        // SAFETY: a timer this module made; stopping a fired one fails
        // harmlessly.
        unsafe { api!(StopTimer)(ctx, t, std::ptr::null_mut()) };
    }
    let ms = ms.min(crate::core::options::wait::MAX_WAIT_MS) as ffi::Mstime;
    // SAFETY: ctx is a live context of this module; `qid` is passed back
    // as a number, never dereferenced.
    let t = unsafe { api!(CreateTimer)(ctx, ms, Some(on_timer), qid as usize as *mut c_void) };
    with(|w| {
        if let Some(q) = w.queues.get_mut(&qid) {
            q.timer = Some(t);
        }
    });
}

/// The front waiter still waiting, the ones that left dropped on the way.
fn head(w: &mut Waits, qid: u64) -> Option<(usize, LimitRequest)> {
    let q = w.queues.get_mut(&qid)?;
    while let Some(&(bc, seq)) = q.order.front() {
        match w.waiters.get(&bc) {
            Some(x) if x.seq == seq && x.phase == Phase::Waiting => {
                return Some((bc, x.request));
            }
            _ => {
                q.order.pop_front();
            }
        }
    }
    None
}

/// Wakes the head of the key's queue if its request would be admitted now;
/// else arms the key's timer at its retry instant. One at a time: nothing
/// while a woken waiter's admission is still to run (it pumps after).
fn pump(ctx: *mut ffi::Ctx, qid: u64) {
    let Some((bc, request, name, woken)) = with(|w| {
        let (bc, request) = head(w, qid)?;
        let q = w.queues.get(&qid)?;
        Some((bc, request, q.name, q.woken))
    }) else {
        return;
    };
    if woken > 0 {
        return;
    }
    let mut argv = [name, name];
    let cmd = CommandCtx {
        raw: ctx,
        argv: argv.as_mut_ptr(),
        argc: 2,
    };
    // A look ahead: in shadow mode the read admits a denial and marks the
    // running call as shadowed, but the head's own reply callback decides
    // (and marks) again. The mark is dropped here, so none is left for the
    // call that pumped (RL.RELEASE) or, were the head gone before its
    // callback, for whatever call comes next.
    let marked = super::metrics::extra() & super::metrics::SHADOWED != 0;
    let looked = decide(&cmd, &request, false);
    if !marked {
        super::metrics::take_shadowed();
    }
    // An error is the head's to answer: its reply callback meets it again.
    let wake = match looked {
        Ok(reply) => {
            let d = decision_of(&reply);
            if !d.allowed {
                arm(ctx, qid, d.retry_after_ms.max(1));
            }
            d.allowed
        }
        Err(_) => true,
    };
    if !wake {
        return;
    }
    with(|w| {
        if let Some(x) = w.waiters.get_mut(&bc) {
            x.phase = Phase::Woken;
        }
        if let Some(q) = w.queues.get_mut(&qid) {
            q.order.pop_front();
            q.woken += 1;
        }
    });
    // SAFETY: bc is a live handle in the Waiting phase (not unblocked
    // yet); the privdata is the handle itself, read back as a number.
    unsafe { api!(UnblockClient)(bc as *mut Bc, bc as *mut c_void) };
}

/// Pumps the key of `key_index` if clients wait on it (after a release).
pub fn wake(cmd: &CommandCtx, key_index: usize) {
    if with(|w| w.by_key.is_empty()) {
        return;
    }
    let id = ident(cmd, key_index);
    if let Some(qid) = with(|w| w.by_key.get(&id).copied()) {
        pump(cmd.raw, qid);
    }
}

/// Removes the key's queue once no client waits on it.
fn drop_if_idle(ctx: *mut ffi::Ctx, qid: u64) {
    let gone = with(|w| {
        let idle = w.queues.get(&qid).is_some_and(|q| q.live == 0);
        if !idle {
            return None;
        }
        let q = w.queues.remove(&qid)?;
        w.by_key.remove(&q.ident);
        Some(q)
    });
    if let Some(q) = gone {
        // SAFETY: our own timer and string, each released once.
        unsafe {
            if let Some(t) = q.timer {
                api!(StopTimer)(ctx, t, std::ptr::null_mut());
            }
            api!(FreeString)(std::ptr::null_mut(), q.name);
        }
    }
}

/// Ends a waiting client's wait without an admission; true if it was
/// waiting (and is now done). The caller unblocks it.
fn leave(bc: usize) -> Option<(u64, bool)> {
    with(|w| {
        let x = w.waiters.get_mut(&bc)?;
        if x.phase != Phase::Waiting {
            return None;
        }
        x.phase = Phase::Done;
        let qid = x.queue;
        let seq = x.seq;
        w.live -= 1;
        let q = w.queues.get_mut(&qid)?;
        q.live -= 1;
        let was_head = q.order.front() == Some(&(bc, seq));
        Some((qid, was_head))
    })
}

/// `INFO rl`'s wait fields: clients waiting now, waits served (admitted
/// after waiting) and waits timed out (`CLIENT UNBLOCK` included).
pub fn info_fields() -> [(&'static std::ffi::CStr, u64); 3] {
    with(|w| {
        [
            (c"waiting_clients", w.live as u64),
            (c"waits_served", w.served),
            (c"waits_timed_out", w.timed_out),
        ]
    })
}

/// A limiter's command with its optional `WAIT`: `parse` reads the line
/// without the option; with a wait the call is [`serve`]d, without one it
/// runs as `plain`.
pub fn with_wait<R>(
    cmd: &CommandCtx,
    args: &[&[u8]],
    syntax: &crate::core::syntax::Syntax,
    parse: impl Fn(&[&[u8]]) -> Result<R, RlError>,
    wrap: impl FnOnce(R) -> LimitRequest,
    plain: impl FnOnce(&R) -> Result<Reply, RlError>,
) -> Result<Reply, RlError> {
    let split = crate::core::options::wait::split(args, syntax)?;
    let req = match &split {
        Some(s) => parse(&s.line)?,
        None => parse(args)?,
    };
    match split.and_then(|s| s.timeout_ms) {
        Some(timeout) => serve(cmd, wrap(req), timeout, syntax.name()),
        None => plain(&req),
    }
}

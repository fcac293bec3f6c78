//! Any limiter, decided and recorded the same way: open its key as its
//! storage kind, decide (core, reading only), then record the write (the
//! store applies, replicates, moves the expiry) or tell the denial.
//! Single-key commands take both steps at once ([`run`]); `RL.PEEK` stops
//! after the first; `RL.ALL` takes the first for every clause before the
//! second for any. [`decide_any`] is the one table from a named limiter to
//! its store ([`refund_any`] the same table for `RL.REFUND`).

use super::context::CommandCtx;
use super::hash_state::HashState;
use super::key::Access;
use super::store::Store;
use super::string_state::StringState;
use super::zset_log::ZsetLog;
use crate::core::any::LimitRequest;
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Answer, Call, Limiter, Outcome};
use crate::core::refund::{Refund, Refunded, Units};

/// One limiter decided over its open key, nothing written yet.
pub struct Decided<'a, S: Store<'a>, A> {
    /// The key's argument index.
    pub key: usize,
    store: S,
    write: Option<S::Write>,
    pub answer: A,
    cmd: &'a CommandCtx,
}

/// Opens the key at `key` as `S` (for writing only if `call.writes`) and
/// decides `req` over it. Writes nothing.
pub fn decide<'a, S, L>(
    cmd: &'a CommandCtx,
    req: &L,
    key: usize,
    call: &Call,
) -> Result<Decided<'a, S, L::Answer>, RlError>
where
    S: Store<'a>,
    L: Limiter<S, Write = S::Write>,
{
    let access = if call.writes {
        Access::Write
    } else {
        Access::Read
    };
    let mut store = S::open(cmd, key, access)?;
    let Outcome { decision, write } = req.decide(&mut store, call)?;
    Ok(Decided {
        key,
        store,
        write,
        answer: decision,
        cmd,
    })
}

impl<'a, S: Store<'a>, A: Answer> Decided<'a, S, A> {
    /// Records the write, if the decision planned one; tells a denial to
    /// `rl.denied` subscribers (when the load asked for it). Only for a key
    /// decided with a call that writes.
    pub fn finish(mut self) -> Result<A, RlError> {
        if let Some(write) = &self.write {
            self.store.record(write)?;
        }
        if self.answer.denied() {
            self.cmd.notify_denied(self.key);
        }
        Ok(self.answer)
    }
}

/// One limiter on one key, at the server's clock: decide, then record an
/// admission or tell a denial. The answer for the reply.
pub fn run<'a, S, L>(cmd: &'a CommandCtx, req: &L, key: usize) -> Result<L::Answer, RlError>
where
    S: Store<'a>,
    L: Limiter<S, Write = S::Write>,
    L::Answer: Answer,
{
    decide::<S, L>(cmd, req, key, &Call::one(cmd.now()))?.finish()
}

/// What a read-only command answers: decided with a call that writes
/// nothing, and nothing recorded.
pub fn read<'a, S, L>(cmd: &'a CommandCtx, req: &L, key: usize) -> Result<L::Answer, RlError>
where
    S: Store<'a>,
    L: Limiter<S, Write = S::Write>,
{
    Ok(decide::<S, L>(cmd, req, key, &Call::read(cmd.now()))?.answer)
}

/// A decided limiter of any kind (an `RL.ALL` clause, `RL.PEEK`'s request).
pub trait Pending {
    fn decision(&self) -> Decision;
    /// See [`Decided::finish`].
    fn finish(self: Box<Self>) -> Result<Decision, RlError>;
    /// Records nothing, even an admission (another clause denied); tells
    /// this one's denial, if it denied.
    fn abandon(self: Box<Self>);
}

impl<'a, S: Store<'a>> Pending for Decided<'a, S, Decision> {
    fn decision(&self) -> Decision {
        self.answer
    }

    fn finish(self: Box<Self>) -> Result<Decision, RlError> {
        Decided::finish(*self)
    }

    fn abandon(self: Box<Self>) {
        if self.answer.denied() {
            self.cmd.notify_denied(self.key);
        }
    }
}

/// The one table from a named limiter to the store its state lives in:
/// opens the key at `key` and decides `req` over it, writing nothing.
pub fn decide_any<'a>(
    cmd: &'a CommandCtx,
    req: &LimitRequest,
    key: usize,
    call: &Call,
) -> Result<Box<dyn Pending + 'a>, RlError> {
    Ok(match req {
        LimitRequest::Slide(r) => Box::new(decide::<ZsetLog, _>(cmd, r, key, call)?),
        LimitRequest::Buckets(r) => Box::new(decide::<HashState, _>(cmd, r, key, call)?),
        LimitRequest::Throttle(r) => Box::new(decide::<StringState, _>(cmd, r, key, call)?),
        LimitRequest::Fixed(r) => Box::new(decide::<StringState, _>(cmd, r, key, call)?),
    })
}

/// `RL.REFUND`'s steps on one key, opened once for writing: decide the
/// refund (every check of the limiter's command first), record it, then
/// decide a request of one unit over the same key with a call that writes
/// nothing: what `RL.PEEK` would answer right after. No denial to tell.
fn refund<'a, S, R>(cmd: &'a CommandCtx, req: &R, key: usize) -> Result<Refunded, RlError>
where
    S: Store<'a>,
    R: Units + Limiter<S, Write = S::Write, Answer = Decision>,
    Refund<R>: Limiter<S, Write = S::Write, Answer = u64>,
{
    let now = cmd.now();
    let mut store = S::open(cmd, key, Access::Write)?;
    let Outcome {
        decision: refunded,
        write,
    } = Refund(*req).decide(&mut store, &Call::one(now))?;
    if let Some(write) = &write {
        store.record(write)?;
    }
    let after = req.unit().decide(&mut store, &Call::read(now))?.decision;
    Ok(Refunded { refunded, after })
}

/// The one table from a named limiter to its store, for `RL.REFUND`: gives
/// back `req`'s units on the key at `key`, as [`refund`] does.
pub fn refund_any(cmd: &CommandCtx, req: &LimitRequest, key: usize) -> Result<Refunded, RlError> {
    match req {
        LimitRequest::Slide(r) => refund::<ZsetLog, _>(cmd, r, key),
        LimitRequest::Buckets(r) => refund::<HashState, _>(cmd, r, key),
        LimitRequest::Throttle(r) => refund::<StringState, _>(cmd, r, key),
        LimitRequest::Fixed(r) => refund::<StringState, _>(cmd, r, key),
    }
}

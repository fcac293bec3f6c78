//! Any limiter, decided and recorded the same way: open its key as its
//! storage kind, decide (core, reading only), then record the write (the
//! store applies, replicates, moves the expiry) or tell the denial.
//! Single-key commands take both steps at once ([`run`]); `RL.PEEK` stops
//! after the first ([`peek_any`]); `RL.ALL` takes the first for every clause
//! ([`decide_any`]) before the second for any; `RL.REFUND` decides and
//! records a refund, then peeks ([`refund_any`]); `RL.CHARGE` decides and
//! records a charge, its peek decided with it ([`charge_any`]). [`with_store`] is the one
//! table from a named limiter to the store its state lives in.

use std::cell::RefCell;

use super::context::CommandCtx;
use super::hash_state::HashState;
use super::key::Access;
use super::lease_set::LeaseSet;
use super::store::Store;
use super::string_state::StringState;
use super::zset_log::ZsetLog;
use crate::core::buckets::block as buckets_block;
use crate::core::decision::Decision;
use crate::core::dispatch::block::{self, BlockRequest, UnblockRequest};
use crate::core::dispatch::{Algorithm, LimitRequest};
use crate::core::error::RlError;
use crate::core::lease::set::LeaseId;
use crate::core::limiter::Charged;
use crate::core::limiter::{Answer, Call, Decides, Limiter, Outcome};
use crate::core::limiter::{Refundable, Refunded};
use crate::core::slide::block as slide_block;

/// An open key and what was decided over it, nothing written yet.
type Opened<S, W, A> = (S, Outcome<W, A>);

/// Opens the key at `key` as `S`, for writing only if `call.writes`, and
/// decides `req` over it. Writes nothing.
fn open_and_decide<'a, S, L>(
    cmd: &'a CommandCtx,
    req: &L,
    key: usize,
    call: &Call,
) -> Result<Opened<S, S::Write, L::Answer>, RlError>
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
    let outcome = req.decide(&mut store, call)?;
    Ok((store, outcome))
}

/// Records the write, if the decision planned one (an admission, or the
/// block a denial with `BLOCK` sets), and tells a denial to `rl.denied`
/// subscribers (when the load asked for it). The store must have been
/// opened for writing.
fn settle<'a, S: Store<'a>, A: Answer>(
    cmd: &CommandCtx,
    key: usize,
    store: &mut S,
    outcome: &Outcome<S::Write, A>,
) -> Result<(), RlError> {
    if let Some(write) = &outcome.write {
        store.record(write)?;
    }
    if outcome.decision.denied() {
        cmd.notify_denied(key, outcome.decision.blocked());
    }
    Ok(())
}

/// One limiter on one key, at the server's clock: decide, then record an
/// admission or tell a denial. The answer for the reply.
pub fn run<'a, S, L>(cmd: &'a CommandCtx, req: &L, key: usize) -> Result<L::Answer, RlError>
where
    S: Store<'a>,
    L: Limiter<S, Write = S::Write>,
    L::Answer: Answer,
{
    // Not through `open_and_decide`: returning the store and the write
    // together moves the write (hundreds of bytes for a bucket hash) once more.
    let call = Call::one(cmd.now());
    let mut store = S::open(cmd, key, Access::Write)?;
    let outcome = req.decide(&mut store, &call)?;
    if outcome.decision.denied() {
        return deny(cmd, req, key, &mut store, &call, outcome);
    }
    if let Some(write) = &outcome.write {
        store.record(write)?;
    }
    Ok(outcome.decision)
}

/// A denial of [`run`]: told to `rl.denied` subscribers, or in shadow mode
/// admitted instead (recording what the limiter's `shadow` writes: for a
/// lease, the lease) and counted. Off the admission's path.
#[cold]
fn deny<'a, S, L>(
    cmd: &'a CommandCtx,
    req: &L,
    key: usize,
    store: &mut S,
    call: &Call,
    outcome: Outcome<S::Write, L::Answer>,
) -> Result<L::Answer, RlError>
where
    S: Store<'a>,
    L: Limiter<S, Write = S::Write>,
    L::Answer: Answer,
{
    if !cmd.shadows(key) {
        // A denial plans no write but the block its `BLOCK` sets.
        settle(cmd, key, store, &outcome)?;
        return Ok(outcome.decision);
    }
    let shadowed = req.shadow(store, call, outcome)?;
    if let Some(write) = &shadowed.write {
        store.record(write)?;
    }
    cmd.shadow_denied(key);
    Ok(shadowed.decision)
}

/// What a read answers for a denial in shadow mode: what the command
/// would answer, admitted, counted; no event (a read fires none).
fn shadow_read<S, L>(
    cmd: &CommandCtx,
    req: &L,
    key: usize,
    store: &mut S,
    call: &Call,
    outcome: Outcome<L::Write, L::Answer>,
) -> Result<L::Answer, RlError>
where
    L: Limiter<S>,
    L::Answer: Answer,
{
    if !outcome.decision.denied() || !cmd.shadows(key) {
        return Ok(outcome.decision);
    }
    super::metrics::mark_shadowed();
    Ok(req.shadow(store, call, outcome)?.decision)
}

/// What a read-only command answers: decided over a key opened for
/// reading, with a call that plans no write, and nothing recorded.
pub fn read<'a, S, L>(cmd: &'a CommandCtx, req: &L, key: usize) -> Result<L::Answer, RlError>
where
    S: Store<'a>,
    L: Limiter<S, Write = S::Write>,
    L::Answer: Answer,
{
    let call = Call::read(cmd.now());
    let (mut store, outcome) = open_and_decide::<S, L>(cmd, req, key, &call)?;
    shadow_read(cmd, req, key, &mut store, &call, outcome)
}

/// Something to do with a named limiter once its store is known: the
/// generic half of [`with_store`].
pub trait WithStore<'a> {
    type Out;
    fn with<S, L>(self, req: &L) -> Self::Out
    where
        S: Store<'a> + 'a,
        L: Refundable<S, Write = S::Write>;
}

/// The one table from a named limiter to the store its state lives in.
pub fn with_store<'a, W: WithStore<'a>>(req: &LimitRequest, w: W) -> W::Out {
    match req {
        LimitRequest::Slide(r) => w.with::<ZsetLog<'a>, _>(r),
        LimitRequest::Buckets(r) => w.with::<HashState<'a>, _>(r),
        LimitRequest::Throttle(r) => w.with::<StringState<'a>, _>(r),
        LimitRequest::Fixed(r) => w.with::<StringState<'a>, _>(r),
        LimitRequest::Acquire(r) => w.with::<LeaseSet<'a>, _>(r),
    }
}

/// What the named limiter would answer, over a key opened for reading,
/// with a call that plans no write (`RL.PEEK`).
pub fn peek_any(cmd: &CommandCtx, req: &LimitRequest, key: usize) -> Result<Decision, RlError> {
    struct Peek<'a> {
        cmd: &'a CommandCtx,
        key: usize,
    }
    impl<'a> WithStore<'a> for Peek<'a> {
        type Out = Result<Decision, RlError>;
        fn with<S, L>(self, req: &L) -> Self::Out
        where
            S: Store<'a> + 'a,
            L: Refundable<S, Write = S::Write>,
        {
            read::<S, L>(self.cmd, req, self.key).map(|a| a.decision())
        }
    }
    with_store(req, Peek { cmd, key })
}

/// `RL.PEEK SLIDE|BUCKETS ... OLDEST`: what the limiter would answer, and
/// the wait until the oldest unit its window counts leaves, both over one
/// key opened once for reading. Another limiter is refused (the parser
/// already refuses it by name).
pub fn peek_oldest(
    cmd: &CommandCtx,
    req: &LimitRequest,
    key: usize,
) -> Result<(Decision, u64), RlError> {
    let call = Call::read(cmd.now());
    match req {
        LimitRequest::Slide(r) => {
            let mut log = ZsetLog::open(cmd, key, Access::Read)?;
            let decided = r.decide(&mut log, &call)?;
            let decision = shadow_read(cmd, r, key, &mut log, &call, decided)?;
            Ok((decision, oldest::slide(&mut log, r, call.now.ms)?))
        }
        LimitRequest::Buckets(r) => {
            let mut hash = HashState::open(cmd, key, Access::Read)?;
            let decided = r.decide(&mut hash, &call)?;
            let decision = shadow_read(cmd, r, key, &mut hash, &call, decided)?;
            Ok((decision, oldest::buckets(&mut hash, r, call.now.ms)?))
        }
        _ => Err(RlError::Internal("OLDEST for a limiter without it")),
    }
}

mod oldest {
    pub use crate::core::buckets::oldest::oldest_wait as buckets;
    pub use crate::core::slide::oldest::oldest_wait as slide;
}

/// A limiter decided over its open key, nothing written yet (an `RL.ALL`
/// clause). Each lives in the stack frame of the [`decide_any`] call that
/// decided it (no allocation per clause); one of the three endings is
/// called once.
pub trait Pending {
    fn decision(&self) -> Decision;
    /// For a lease clause, the lease it takes if recorded (see
    /// [`Decides::lease`]).
    fn lease(&self) -> Option<Option<LeaseId>>;
    /// Records the write, if any; tells the denial, if it denied.
    fn finish(&self) -> Result<(), RlError>;
    /// Records no admission (another clause denied); tells this one's
    /// denial, if it denied, and records the block it sets, if any: a
    /// clause's own breach blocks its key whatever the other clauses say,
    /// shadowed or not.
    fn abandon(&self) -> Result<(), RlError>;
    /// Whether the clause denied and shadow mode admitted it instead (its
    /// decision is then the shadow answer).
    fn shadowed(&self) -> bool;
    /// The call is admitted in shadow mode (a shadowed clause denied, no
    /// other did): records only a lease clause's lease, so every lease
    /// the reply names is held, and nothing of the other clauses, as the
    /// enforced denial would; tells this clause's shadowed denial.
    fn finish_shadowed(&self) -> Result<(), RlError>;
}

struct Decided<'a, S: Store<'a>, A> {
    cmd: &'a CommandCtx,
    key: usize,
    store: S,
    outcome: Outcome<S::Write, A>,
    shadowed: bool,
}

/// In a cell: the clauses after it reach a clause through shared
/// references (see `commands/all.rs`), and its ending writes through its
/// store.
impl<'a, S: Store<'a>, A: Decides> Pending for RefCell<Decided<'a, S, A>> {
    fn decision(&self) -> Decision {
        self.borrow().outcome.decision.decision()
    }

    fn lease(&self) -> Option<Option<LeaseId>> {
        self.borrow().outcome.decision.lease()
    }

    fn finish(&self) -> Result<(), RlError> {
        let this = &mut *self.borrow_mut();
        settle(this.cmd, this.key, &mut this.store, &this.outcome)
    }

    fn abandon(&self) -> Result<(), RlError> {
        let this = &mut *self.borrow_mut();
        if this.shadowed {
            // Shadow mode records what enforcement would: a denying clause
            // with BLOCK blocks its own key even though another clause
            // denies the call (its write is that block, or nothing).
            if let Some(write) = &this.outcome.write {
                this.store.record(write)?;
            }
            this.cmd.notify_shadow(this.key);
        } else if this.outcome.decision.denied() {
            // A denied clause plans no write but its block.
            return settle(this.cmd, this.key, &mut this.store, &this.outcome);
        }
        Ok(())
    }

    fn shadowed(&self) -> bool {
        self.borrow().shadowed
    }

    fn finish_shadowed(&self) -> Result<(), RlError> {
        let this = &mut *self.borrow_mut();
        // A shadowed clause's write is the block enforcement would set.
        if this.shadowed || this.outcome.decision.lease().is_some() {
            if let Some(write) = &this.outcome.write {
                this.store.record(write)?;
            }
        }
        if this.shadowed {
            this.cmd.notify_shadow(this.key);
        }
        Ok(())
    }
}

/// Opens the key at `key` as the named limiter's store and decides `req`
/// over it at `call`, writing nothing; then hands the decision to `then`,
/// which ends it (`RL.ALL`, clause by clause: the next clause is decided
/// inside `then`, so every clause's decision stays in its own frame).
/// What `then` returns, or this clause's error.
pub fn decide_any<R>(
    cmd: &CommandCtx,
    req: &LimitRequest,
    key: usize,
    call: &Call,
    then: impl FnOnce(&dyn Pending) -> R,
) -> Result<R, RlError> {
    struct Decide<'a, 'c, F> {
        cmd: &'a CommandCtx,
        key: usize,
        call: &'c Call,
        then: F,
    }
    impl<'a, R, F: FnOnce(&dyn Pending) -> R> WithStore<'a> for Decide<'a, '_, F> {
        type Out = Result<R, RlError>;
        fn with<S, L>(self, req: &L) -> Self::Out
        where
            S: Store<'a> + 'a,
            L: Refundable<S, Write = S::Write>,
        {
            let (mut store, mut outcome) =
                open_and_decide::<S, L>(self.cmd, req, self.key, self.call)?;
            let shadowed = outcome.decision.denied() && self.cmd.shadows(self.key);
            if shadowed {
                outcome = req.shadow(&mut store, self.call, outcome)?;
            }
            let decided = RefCell::new(Decided {
                cmd: self.cmd,
                key: self.key,
                store,
                outcome,
                shadowed,
            });
            Ok((self.then)(&decided))
        }
    }
    with_store(
        req,
        Decide {
            cmd,
            key,
            call,
            then,
        },
    )
}

/// `RL.REFUND` on one key, opened once for writing: decide the refund (every
/// check of the limiter's command first, then of everything the peek after
/// reads, over the state the write leaves: so nothing can fail once the
/// write is made), record it, then decide a request of one unit over the
/// same key with a call that writes nothing: what `RL.PEEK` would answer
/// right after. No denial to tell.
pub fn refund_any(cmd: &CommandCtx, req: &LimitRequest, key: usize) -> Result<Refunded, RlError> {
    struct GiveBack<'a> {
        cmd: &'a CommandCtx,
        key: usize,
    }
    impl<'a> WithStore<'a> for GiveBack<'a> {
        type Out = Result<Refunded, RlError>;
        fn with<S, L>(self, req: &L) -> Self::Out
        where
            S: Store<'a> + 'a,
            L: Refundable<S, Write = S::Write>,
        {
            let now = self.cmd.now();
            let mut store = S::open(self.cmd, self.key, Access::Write)?;
            let Outcome {
                decision: refunded,
                write,
            } = req.refund().decide(&mut store, &Call::one(now))?;
            if let Some(write) = &write {
                store.record(write)?;
            }
            let after = req
                .unit()
                .decide(&mut store, &Call::read(now))?
                .decision
                .decision();
            Ok(Refunded { refunded, after })
        }
    }
    with_store(req, GiveBack { cmd, key })
}

/// `RL.BLOCK`: the key of the named limiter, opened for writing and
/// checked as that limiter's command checks it, blocked until `ms` from
/// now (its state kept). The block's end.
pub fn block_any(cmd: &CommandCtx, req: &BlockRequest, key: usize) -> Result<i64, RlError> {
    let now = cmd.now();
    let mut until = crate::core::options::block::end(now.ms, req.ms);
    match req.limiter {
        Algorithm::Slide => {
            let mut log = ZsetLog::open(cmd, key, Access::Write)?;
            let (write, end) = slide_block::block(&mut log, now.ms, req.ms)?;
            log.record(&write)?;
            until = end;
        }
        Algorithm::Throttle | Algorithm::Fixed => {
            let mut s = StringState::open(cmd, key, Access::Write)?;
            let write = block::string::block(req.limiter, &s, now, until)?;
            s.record(&write)?;
        }
        Algorithm::Buckets => {
            let mut h = HashState::open(cmd, key, Access::Write)?;
            let write = buckets_block::block(&mut h, until)?;
            h.record(&write)?;
        }
        _ => return Err(RlError::Internal("RL.BLOCK of a limiter without blocks")),
    }
    Ok(until)
}

/// `RL.UNBLOCK`: lifts the block of the named limiter's key, if one holds;
/// whether one did.
pub fn unblock_any(cmd: &CommandCtx, req: &UnblockRequest, key: usize) -> Result<bool, RlError> {
    let now = cmd.now();
    match req.limiter {
        Algorithm::Slide => {
            let mut log = ZsetLog::open(cmd, key, Access::Write)?;
            let Some(write) = slide_block::unblock(&mut log, now.ms)? else {
                return Ok(false);
            };
            log.record(&write)?;
        }
        Algorithm::Throttle | Algorithm::Fixed => {
            let mut s = StringState::open(cmd, key, Access::Write)?;
            let Some(change) = block::string::unblock(req.limiter, &s, now)? else {
                return Ok(false);
            };
            s.change(&change)?;
        }
        Algorithm::Buckets => {
            let mut h = HashState::open(cmd, key, Access::Write)?;
            let Some(change) = buckets_block::unblock(&mut h, now.ms)? else {
                return Ok(false);
            };
            h.change(&change)?;
        }
        _ => return Err(RlError::Internal("RL.UNBLOCK of a limiter without blocks")),
    }
    Ok(true)
}

/// `RL.CHARGE` on one key, opened once for writing: decide the charge
/// (every check of the limiter's command, and the peek after over the
/// state the write leaves, so nothing can fail once the write is made),
/// then record it. A charge is no denial: nothing to tell.
pub fn charge_any(cmd: &CommandCtx, req: &LimitRequest, key: usize) -> Result<Charged, RlError> {
    struct Charging<'a> {
        cmd: &'a CommandCtx,
        key: usize,
    }
    impl<'a> WithStore<'a> for Charging<'a> {
        type Out = Result<Charged, RlError>;
        fn with<S, L>(self, req: &L) -> Self::Out
        where
            S: Store<'a> + 'a,
            L: Refundable<S, Write = S::Write>,
        {
            let mut store = S::open(self.cmd, self.key, Access::Write)?;
            let Outcome { decision, write } = req
                .charge()
                .decide(&mut store, &Call::one(self.cmd.now()))?;
            if let Some(write) = &write {
                store.record(write)?;
            }
            Ok(decision)
        }
    }
    with_store(req, Charging { cmd, key })
}

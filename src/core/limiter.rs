//! The one interface every limiter meets: a parsed request decides, from a
//! read-only view of its key's state at the call's instant, what to answer
//! and what to write. The write is data; the host applies it (write,
//! replicate, expiry), so no decision can touch the server.

use super::decision::Decision;
use super::error::RlError;
use super::lease::set::LeaseId;

/// The clock, read once per call so every limiter of the call (each clause
/// of `RL.ALL`) sees the same instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    pub ms: i64,
    pub us: i64,
}

/// How many limiters of a kind one call decides: they share its bounds on
/// work (removals for sliding logs, buckets read for bucket windows). Only
/// these two kinds have a bound that depends on the call; the others do
/// constant work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    pub slides: u64,
    /// The sliding logs' costs together (RL.ALL's SLIDE clauses); 0 for a
    /// call of one limiter, whose cost is its own.
    pub slide_cost: u64,
    pub buckets: u64,
}

impl Shares {
    /// A call that decides one limiter.
    pub const ONE: Shares = Shares {
        slides: 1,
        slide_cost: 0,
        buckets: 1,
    };
}

/// What a decision knows of the call that asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub now: Now,
    pub shares: Shares,
    /// False for a read (`RL.PEEK`, on replicas too): the key is open for
    /// reading and whatever write the decision plans is discarded. A
    /// decision whose reads depend on what it may write (RL.SLIDE reads the
    /// stale entries it would remove) reads less.
    pub writes: bool,
}

impl Call {
    /// A call that decides one limiter and may write.
    pub fn one(now: Now) -> Call {
        Call {
            now,
            shares: Shares::ONE,
            writes: true,
        }
    }

    /// A call that only reads (`RL.PEEK`, `RL.TOTALS`).
    pub fn read(now: Now) -> Call {
        Call {
            now,
            shares: Shares::ONE,
            writes: false,
        }
    }
}

/// One decision: the answer, and what an admission writes (`None`: nothing,
/// as for every denial).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<W, D = Decision> {
    /// A limiter's [`Decision`]; an event counter's totals.
    pub decision: D,
    pub write: Option<W>,
}

/// A request to one limiter, deciding over `V`, the view of its storage
/// kind (a sorted-set log, a bucket hash, a string). Implemented for every
/// request type; `RL.PEEK` and `RL.ALL` are generic over it.
pub trait Limiter<V: ?Sized> {
    /// The write as data, in the storage kind's shape.
    type Write;
    /// The answer: [`Decision`] for the limiters, totals for `RL.COUNT`.
    type Answer;

    /// Decides at `call.now`, reading `view` only. Every check that can
    /// refuse the request happens here, before anything is written.
    fn decide(
        &self,
        view: &mut V,
        call: &Call,
    ) -> Result<Outcome<Self::Write, Self::Answer>, RlError>;

    /// What a denial (`denied`, decided over `view` at `call`) becomes in
    /// shadow mode: admitted, with the denial's figures, writing what
    /// [`Answer::shadowed`] says. By default what the denial writes (only
    /// the block a `BLOCK` option sets, else nothing): the state stays what
    /// enforcement would have left, so switching enforcement on changes
    /// no key.
    fn shadow(
        &self,
        _view: &mut V,
        _call: &Call,
        denied: Outcome<Self::Write, Self::Answer>,
    ) -> Result<Outcome<Self::Write, Self::Answer>, RlError>
    where
        Self::Answer: Answer,
    {
        Ok(Outcome {
            decision: denied.decision.shadowed(),
            write: denied.write,
        })
    }
}

/// What a denial is, for the answer types: a denied call records nothing
/// and fires `rl.denied` when the load asked for it.
pub trait Answer: Sized {
    fn denied(&self) -> bool;

    /// This denial as shadow mode answers it: admitted, the rest as denied
    /// (`retry_after_ms` at least 1, so a client can tell it from an
    /// enforced admission, whose wait is 0). An answer that never denies
    /// is itself.
    fn shadowed(self) -> Self {
        self
    }

    /// A denial by a block (`BLOCK`, `RL.BLOCK`).
    fn blocked(&self) -> bool {
        false
    }
}

impl Answer for Decision {
    fn denied(&self) -> bool {
        !self.allowed
    }

    fn shadowed(self) -> Self {
        Decision {
            allowed: true,
            retry_after_ms: self.retry_after_ms.max(1),
            ..self
        }
    }

    fn blocked(&self) -> bool {
        self.blocked
    }
}

/// What a limiter of the one table of requests (`any::LimitRequest`)
/// answers: a [`Decision`], and for a lease the id it took.
pub trait Decides: Answer + 'static {
    fn decision(&self) -> Decision;
    /// `None`: not a lease (the reply has no lease element); `Some(None)`:
    /// a lease not taken (denied, or a read).
    fn lease(&self) -> Option<Option<LeaseId>> {
        None
    }
}

impl Decides for Decision {
    fn decision(&self) -> Decision {
        *self
    }
}

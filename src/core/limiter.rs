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

/// The charge of a request's units: implements the limiter interface for
/// each limiter's request, answering [`Charged`] with the write in the
/// storage kind's shape. Every check the limiter's own command makes on
/// the key happens first, with the same errors, and so does every read of
/// the peek after: nothing can fail once the write is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge<R>(pub R);

/// The reply's shape: units recorded, then the decision a request of one
/// unit gets right after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charged {
    /// The units recorded: all of `COST`, unless the key's state reached
    /// the most it can hold (10^15 units for BUCKETS and FIXED; for
    /// THROTTLE, a schedule about 31.7 years past its burst tolerance).
    pub charged: u64,
    pub after: Decision,
}

impl Charged {
    /// `[charged, remaining, retry_after_ms, reset_after_ms]`.
    pub fn to_reply(&self) -> [i64; 4] {
        let [_, remaining, retry, reset] = self.after.to_reply();
        [
            i64::try_from(self.charged).unwrap_or(i64::MAX),
            remaining,
            retry,
            reset,
        ]
    }
}

/// A limiter request as `RL.REFUND` reads it.
pub trait Units: Copy {
    /// The units to give back: the request's `COST` (THROTTLE: `quantity`).
    fn units(&self) -> u64;
    /// The same request for `n` units (`UPTO`'s grant of what fits).
    fn with_units(&self, n: u64) -> Self;
    /// The same request without `BLOCK`: what `UPTO` asks first, whose
    /// denial must carry the limiter's own figures (how much fits), not a
    /// breach's.
    fn without_block(&self) -> Self {
        *self
    }
    /// The same request for one unit, without `BLOCK`: what `RL.REFUND`
    /// reports on after giving back (as `RL.PEEK` would answer for it; a
    /// report never breaches).
    fn unit(&self) -> Self {
        self.with_units(1).without_block()
    }
}

/// The refund of a request's units: implements the limiter interface for
/// each limiter's request, answering the units actually given back (0 to
/// [`Units::units`]) with the write in the storage kind's shape; `None`
/// when there is nothing to give back. Every check the limiter's own
/// command makes on the key happens first, with the same errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refund<R>(pub R);

/// A limiter request with every verb rl has for it over the view `V`: its
/// own decision, and its refund (`RL.REFUND`) and charge (`RL.CHARGE`)
/// over the same view and write. Implemented for every request whose
/// refund and charge are; the host's one table of limiters asks for this.
pub trait Refundable<V>: Limiter<V, Answer: Decides> + Units {
    type Refund: Limiter<V, Write = Self::Write, Answer = u64>;
    type Charge: Limiter<V, Write = Self::Write, Answer = Charged>;
    fn refund(&self) -> Self::Refund;
    fn charge(&self) -> Self::Charge;
}

impl<V, R> Refundable<V> for R
where
    R: Limiter<V> + Units,
    R::Answer: Decides,
    Refund<R>: Limiter<V, Write = R::Write, Answer = u64>,
    Charge<R>: Limiter<V, Write = R::Write, Answer = Charged>,
{
    type Refund = Refund<R>;
    type Charge = Charge<R>;
    fn refund(&self) -> Refund<R> {
        Refund(*self)
    }
    fn charge(&self) -> Charge<R> {
        Charge(*self)
    }
}

/// The reply's shape: units given back, then the decision a request of one
/// unit would get right after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refunded {
    pub refunded: u64,
    pub after: Decision,
}

impl Refunded {
    /// `[refunded, remaining, retry_after_ms, reset_after_ms]`.
    pub fn to_reply(&self) -> [i64; 4] {
        let [_, remaining, retry, reset] = self.after.to_reply();
        [
            i64::try_from(self.refunded).unwrap_or(i64::MAX),
            remaining,
            retry,
            reset,
        ]
    }
}

/// What a run of admissions and refunds did, in call order, to check the
/// limiters' one promise under refunds: no window of the key's own length
/// admits more than `limit` beyond what refunds in it really gave back.
#[cfg(test)]
pub(crate) mod ledger {
    #[derive(Debug, Default)]
    pub struct Ledger {
        /// `(time, admitted)` for an admission, `(time, -given_back)` for a
        /// refund.
        events: Vec<(i64, i128)>,
    }

    impl Ledger {
        pub fn admitted(&mut self, at: i64, units: u64) {
            self.events.push((at, i128::from(units)));
        }

        pub fn refunded(&mut self, at: i64, units: u64) {
            self.events.push((at, -i128::from(units)));
        }

        /// Every window `(t - window, t]` ending at an admission, counted
        /// up to that call: what it admitted net of what was given back in
        /// it never exceeds `limit`. (A refund can only take back units
        /// admitted before it, so one before the window frees nothing in
        /// it.) Times must not decrease.
        pub fn never_over_admits(&self, window: i64, limit: u64) -> Result<(), String> {
            for (j, &(t, units)) in self.events.iter().enumerate() {
                if units <= 0 {
                    continue;
                }
                let net: i128 = self.events[..=j]
                    .iter()
                    .filter(|&&(at, _)| at > t - window)
                    .map(|&(_, u)| u)
                    .sum();
                if net > i128::from(limit) {
                    return Err(format!(
                        "{net} net in the window ending at {t} (limit {limit}): {:?}",
                        self.events
                    ));
                }
            }
            Ok(())
        }
    }
}

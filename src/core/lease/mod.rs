//! Leases: a concurrency limit whose slots expire on their own
//! (`RL.ACQUIRE`, `RL.RELEASE`, `RL.RENEW`).
//!
//! The leases of a key are a plain sorted set: member the lease id, score
//! its absolute expiry in ms, and a header that marks the set as rl's
//! ([`set`]). A lease counts while `now <
//! expiry`; expired ones never count, and an admission removes up to
//! [`decide::EVICT_PER_CALL`] of them. Denials write nothing.

pub mod decide;
pub mod request;
pub mod set;
#[cfg(test)]
mod tests;

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Answer, Call, Decides, Limiter, Outcome};
use crate::core::limiter::{Charge, Charged};
use crate::core::limiter::{Refund, Units};
use request::{AcquireRequest, ReleaseRequest, RenewRequest};
use set::{LeaseId, LeaseView, LeaseWrite};

/// `RL.ACQUIRE`'s answer: the decision and, when admitted, the lease id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leased {
    pub decision: Decision,
    /// `None` when denied (and for a read, which takes no lease).
    pub lease: Option<LeaseId>,
}

impl Answer for Leased {
    fn denied(&self) -> bool {
        !self.decision.allowed
    }

    fn shadowed(self) -> Self {
        Leased {
            decision: self.decision.shadowed(),
            ..self
        }
    }
}

impl Decides for Leased {
    fn decision(&self) -> Decision {
        self.decision
    }
    fn lease(&self) -> Option<Option<LeaseId>> {
        Some(self.lease)
    }
}

/// `RL.RELEASE`'s and `RL.RENEW`'s answer: whether the lease was held
/// (and so released or renewed), then the leases held after the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseChange {
    pub changed: bool,
    /// Leases held after the call (the command knows no `limit`).
    pub held: u64,
    /// Until the earliest held lease expires (0: none is held).
    pub retry_after_ms: u64,
    /// Until the latest held lease expires (0: none is held).
    pub reset_after_ms: u64,
}

impl LeaseChange {
    /// `[released|renewed, held, retry_after_ms, reset_after_ms]`.
    pub fn to_reply(&self) -> [i64; 4] {
        let sat = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        [
            i64::from(self.changed),
            sat(self.held),
            sat(self.retry_after_ms),
            sat(self.reset_after_ms),
        ]
    }
}

/// Not a denial: a lease not held is an answer (0), not a refusal.
impl Answer for LeaseChange {
    fn denied(&self) -> bool {
        false
    }
}

impl<V: LeaseView> Limiter<V> for AcquireRequest {
    type Write = LeaseWrite;
    type Answer = Leased;

    fn decide(&self, view: &mut V, call: &Call) -> Result<Outcome<LeaseWrite, Leased>, RlError> {
        decide::acquire(view, self, call.now.ms, call.writes)
    }

    /// A lease beyond the limit is taken in shadow mode: the request it
    /// admits runs, and its holder will renew and release it, which must
    /// work as for any lease. The set then holds what really runs, so
    /// once enforcement is on, acquires are denied until enough leases
    /// end. The answer is the denial's, admitted, with the lease.
    fn shadow(
        &self,
        view: &mut V,
        call: &Call,
        denied: Outcome<LeaseWrite, Leased>,
    ) -> Result<Outcome<LeaseWrite, Leased>, RlError> {
        let unlimited = AcquireRequest {
            limit: u64::MAX,
            ..*self
        };
        let taken = decide::acquire(view, &unlimited, call.now.ms, call.writes)?;
        Ok(Outcome {
            decision: Leased {
                decision: denied.decision.decision.shadowed(),
                lease: taken.decision.lease,
            },
            write: taken.write,
        })
    }
}

impl<V: LeaseView> Limiter<V> for ReleaseRequest {
    type Write = LeaseWrite;
    type Answer = LeaseChange;

    fn decide(
        &self,
        view: &mut V,
        call: &Call,
    ) -> Result<Outcome<LeaseWrite, LeaseChange>, RlError> {
        decide::release(view, self, call.now.ms)
    }
}

impl<V: LeaseView> Limiter<V> for RenewRequest {
    type Write = LeaseWrite;
    type Answer = LeaseChange;

    fn decide(
        &self,
        view: &mut V,
        call: &Call,
    ) -> Result<Outcome<LeaseWrite, LeaseChange>, RlError> {
        decide::renew(view, self, call.now.ms)
    }
}

/// An acquire asks for one slot.
impl Units for AcquireRequest {
    fn units(&self) -> u64 {
        1
    }
    fn with_units(&self, _: u64) -> Self {
        *self
    }
}

/// Leases are given back with `RL.RELEASE`: `RL.REFUND ACQUIRE` is refused
/// when parsed; this keeps the one table of requests whole.
impl<V: LeaseView> Limiter<V> for Refund<AcquireRequest> {
    type Write = LeaseWrite;
    type Answer = u64;

    fn decide(&self, _: &mut V, _: &Call) -> Result<Outcome<LeaseWrite, u64>, RlError> {
        Err(RlError::NotRefundable { limiter: "ACQUIRE" })
    }
}

/// A lease holds a slot, not units: `RL.CHARGE ACQUIRE` is refused when
/// parsed; this keeps the one table of requests whole.
impl<V: LeaseView> Limiter<V> for Charge<AcquireRequest> {
    type Write = LeaseWrite;
    type Answer = Charged;

    fn decide(&self, _: &mut V, _: &Call) -> Result<Outcome<LeaseWrite, Charged>, RlError> {
        Err(RlError::NotChargeable { limiter: "ACQUIRE" })
    }
}

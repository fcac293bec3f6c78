//! `RL.COUNT` and `RL.TOTALS`: sliding-window event counters, one count
//! per field name, in the bucket layout of `RL.BUCKETS`.

pub mod decide;
pub mod request;

use crate::core::buckets::layout::{HashView, HashWrite};
use crate::core::error::RlError;
use crate::core::limiter::{Answer, Call, Limiter, Outcome};
use decide::Totals;
use request::{CountRequest, TotalsRequest};

impl<V: HashView> Limiter<V> for CountRequest<'_> {
    type Write = HashWrite;
    type Answer = Totals;

    /// Always writes: an event is counted whatever the totals are.
    fn decide(&self, hash: &mut V, call: &Call) -> Result<Outcome<HashWrite, Totals>, RlError> {
        decide::count(hash, self, call.now.ms)
    }
}

impl<V: HashView> Limiter<V> for TotalsRequest {
    type Write = HashWrite;
    type Answer = Totals;

    /// Never writes: buckets that left are subtracted on the fly.
    fn decide(&self, hash: &mut V, call: &Call) -> Result<Outcome<HashWrite, Totals>, RlError> {
        Ok(Outcome {
            decision: decide::totals(hash, self, call.now.ms)?,
            write: None,
        })
    }
}

/// Event counters never deny.
impl Answer for Totals {
    fn denied(&self) -> bool {
        false
    }
}

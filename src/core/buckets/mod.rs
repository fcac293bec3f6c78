//! `RL.BUCKETS`: the sliding window in buckets, memory bounded by the
//! bucket count. Its hash layout ([`layout`]) and window arithmetic
//! ([`window`]) are shared with `RL.COUNT`.

pub mod block;
pub mod charge;
pub mod decide;
pub mod held;
pub mod layout;
pub mod oldest;
pub mod refund;
pub mod request;
pub mod window;

#[cfg(test)]
mod block_tests;
#[cfg(test)]
mod naming_tests;
#[cfg(test)]
mod tests;

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use layout::{HashView, HashWrite};
use request::{BucketsRequest, MAX_BUCKETS};

impl<V: HashView> Limiter<V> for BucketsRequest {
    type Write = HashWrite;
    type Answer = Decision;

    fn decide(&self, hash: &mut V, call: &Call) -> Result<Outcome<HashWrite>, RlError> {
        // RL.ALL's BUCKETS clauses share one call's bound on buckets read.
        let max_buckets = MAX_BUCKETS / call.shares.buckets.max(1);
        decide::decide_within(hash, self, call.now.ms, max_buckets)
    }
}

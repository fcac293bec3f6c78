//! The exact sliding-window log.
//!
//! Every admitted unit of cost is one entry whose score is its admission time
//! in ms. At `now`, entries with score `<= now - window` have left the window.
//! The log is read through [`LogView`], so the same decision runs over a real
//! sorted set (host) or over [`MemoryLog`] (tests, benches) with any `now`.
//!
//! Two bounds keep every call short whatever the key holds: an admission
//! adds at most [`MAX_COST`] entries, and removes at most
//! [`evict_budget`] of the entries that have left the window (oldest
//! first). Entries that have left but are not removed yet never count: the
//! log is counted by score, so the decision stays exact while a backlog
//! (after a burst and a pause) drains over the next admissions.

pub mod block;
pub mod block_member;
#[cfg(test)]
mod block_tests;
pub mod charge;
pub mod decide;
pub mod log;
pub mod oldest;
pub mod refund;
pub mod request;
#[cfg(test)]
mod time_anomalies;

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use log::{LogView, LogWrite};
use request::SlideRequest;

impl<V: LogView> Limiter<V> for SlideRequest {
    type Write = LogWrite;
    type Answer = Decision;

    fn decide(&self, log: &mut V, call: &Call) -> Result<Outcome<LogWrite>, RlError> {
        // A read never removes anything: it reads only the oldest entry.
        let budget = if call.writes {
            decide::evict_budget(self.cost, call.shares)
        } else {
            0
        };
        decide::decide_within(log, self, call.now.ms, budget)
    }
}

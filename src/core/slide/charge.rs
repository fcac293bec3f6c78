//! `RL.CHARGE SLIDE`: records `COST` entries at `now` (at most 100, the
//! cap of one call: each unit is a member) whether or not they fit, with
//! the removal of stale entries an admission of that cost makes. The log
//! may then count past its limit; later requests are denied until enough
//! of it leaves the window.
//!
//! The reply's peek is decided from what the charge reads, before the
//! write: the new entries are the newest, so the peek's wait is either an
//! entry already in the window (read and checked now) or the new ones'
//! leaving.

use super::block_member::SkipBlock;
use super::decide::{admission, evict_budget, nth_leaves, read_ends, Ends};
use super::log::{LogView, LogWrite};
use super::request::SlideRequest;
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Charge, Charged};
use crate::core::options::block;

impl<V: LogView> Limiter<V> for Charge<SlideRequest> {
    type Write = LogWrite;
    type Answer = Charged;

    fn decide(&self, log: &mut V, call: &Call) -> Result<Outcome<LogWrite, Charged>, RlError> {
        let req = &self.0;
        let now = call.now.ms;
        let window = req.window_ms as i64;
        let cutoff = now - window;
        let max_evict = evict_budget(req.cost, call.shares);
        // What RL.SLIDE reads and checks, with its errors, the entries
        // without a block's member: one that holds is kept (a charge
        // grants no access), one that has ended goes as with an admission.
        let log = &mut SkipBlock::new(log);
        let Ends {
            newest,
            stale,
            held,
        } = read_ends(log, now, cutoff, max_evict)?;
        let mut write = admission(newest, now, window, stale.min(max_evict), req.cost)?;
        let held_block = block::holds(log.block, now);
        write.unblock = log.block.is_some() && held_block.is_none();
        // The peek of one unit over the log as the write leaves it.
        let counted = held + req.cost;
        let reset_after_ms = (write.at + window - now) as u64;
        let after = if counted < req.limit {
            Decision {
                allowed: true,
                remaining: req.limit - counted - 1,
                retry_after_ms: 0,
                reset_after_ms,
                blocked: false,
            }
        } else {
            // The unit fits once `need` of the counted entries have left:
            // an entry in the window now, or one of the new ones.
            let need = counted + 1 - req.limit;
            let retry = if need <= held {
                nth_leaves(log, cutoff, stale, need, window, now)?.unwrap_or(reset_after_ms)
            } else {
                reset_after_ms
            };
            Decision {
                allowed: false,
                remaining: 0,
                retry_after_ms: retry.max(1),
                reset_after_ms,
                blocked: false,
            }
        };
        Ok(Outcome {
            decision: Charged {
                charged: req.cost,
                // A block that holds answers every call after, as it would.
                after: held_block.unwrap_or(after),
            },
            write: Some(LogWrite::Admit(write)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::limiter::Now;
    use crate::core::limiter::Refund;
    use crate::core::slide::log::MemoryLog;
    use crate::core::slide::request::MAX_COST;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
        SlideRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        }
    }

    fn at(ms: i64) -> Call {
        Call::one(Now { ms, us: ms * 1000 })
    }

    fn charge(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> [i64; 4] {
        let out = Charge(*r).decide(log, &at(now)).unwrap();
        if let Some(w) = &out.write {
            log.apply_write(w);
        }
        out.decision.to_reply()
    }

    fn admit(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> [i64; 4] {
        let out = r.decide(log, &at(now)).unwrap();
        if let Some(w) = &out.write {
            log.apply_write(w);
        }
        out.decision.to_reply()
    }

    fn peek(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> [i64; 4] {
        let one = SlideRequest { cost: 1, ..*r };
        let read = Call::read(Now { ms: now, us: 0 });
        one.decide(log, &read).unwrap().decision.to_reply()
    }

    #[test]
    fn table_of_charges_with_explicit_times() {
        // limit 5 per 1000 ms.
        let r = |cost| req(5, 1000, cost);
        let mut log = MemoryLog::new();
        assert_eq!(admit(&mut log, &r(2), 10_000), [1, 3, 0, 1000]);
        // 2 + 6 = 8 counted: the next unit fits once 4 have left, the two
        // at 10_000 and two of the new ones (at 11_400).
        assert_eq!(charge(&mut log, &r(6), 10_400), [6, 0, 1000, 1000]);
        assert_eq!(log.entries().len(), 8);
        assert_eq!(admit(&mut log, &r(1), 11_000), [0, 0, 400, 400]);
        assert_eq!(admit(&mut log, &r(1), 11_400), [1, 4, 0, 1000]);
        // A charge that leaves room answers an admitted peek.
        let mut fresh = MemoryLog::new();
        assert_eq!(charge(&mut fresh, &r(3), 0), [3, 1, 0, 1000]);
        // Wait for an entry already in the window: 2 leave at 1000.
        assert_eq!(charge(&mut fresh, &r(2), 500), [2, 0, 500, 1000]);
        // A refund takes the charged units back, newest first.
        let back = Refund(r(2)).decide(&mut fresh, &at(600)).unwrap();
        assert_eq!(back.decision, 2);
    }

    proptest! {
        /// Charges (any cost up to the cap, past the limit or not) and
        /// admissions at rising times: a charge records every unit (the
        /// log counts exactly what was admitted and charged in the
        /// window), and its reply is the peek after.
        #[test]
        fn a_charge_never_loses_units(
            limit in 1u64..12,
            window in 1u64..1_000,
            steps in proptest::collection::vec((0i64..300, any::<bool>(), 1u64..=MAX_COST), 1..60),
        ) {
            let mut log = MemoryLog::new();
            let mut recorded: Vec<(i64, u64)> = Vec::new();
            let mut now = 50_000;
            for (dt, is_charge, cost) in steps {
                now += dt;
                if is_charge {
                    let r = req(limit, window, cost);
                    let reply = charge(&mut log, &r, now);
                    prop_assert_eq!(reply[0], cost as i64);
                    prop_assert_eq!(&reply[1..], &peek(&mut log, &r, now)[1..]);
                    recorded.push((now, cost));
                } else {
                    let r = req(limit, window, cost.min(limit));
                    if admit(&mut log, &r, now)[0] == 1 {
                        recorded.push((now, r.cost));
                    }
                }
                let in_window: u64 = recorded.iter()
                    .filter(|&&(t, _)| t > now - window as i64)
                    .map(|&(_, c)| c).sum();
                let counted = log.entries().iter().filter(|&&(s, _)| s > now - window as i64).count();
                prop_assert_eq!(counted as u64, in_window);
            }
        }
    }
}

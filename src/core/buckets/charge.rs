//! `RL.CHARGE BUCKETS`: adds `COST` to the current bucket whether or not
//! it fits, exactly as an admission of that cost writes it (eviction,
//! header, expiry): the admission under the ceiling every total stays
//! below, 10^15 ([`MAX_LIMIT`]), instead of the request's limit. A charge
//! past that ceiling records what reaches it. The window may then count
//! past its limit; later requests are denied until enough of it leaves.
//!
//! The reply's peek is decided over the hash as the write leaves it
//! ([`Written`]) before the write: nothing it reads can fail the call
//! after the write.

use super::decide::{decide_state, keep_block};
use super::layout::{load_blocked, HashView, HashWrite, Kind};
use super::refund::Written;
use super::request::{BucketsRequest, MAX_BUCKETS, MAX_LIMIT};
use crate::core::error::RlError;
use crate::core::limiter::Units;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Charge, Charged};

impl<V: HashView> Limiter<V> for Charge<BucketsRequest> {
    type Write = HashWrite;
    type Answer = Charged;

    /// Reads at most the buckets one window holds (1,000), twice when the
    /// charge reaches the ceiling.
    fn decide(&self, view: &mut V, call: &Call) -> Result<Outcome<HashWrite, Charged>, RlError> {
        let req = &self.0;
        let max_buckets = MAX_BUCKETS / call.shares.buckets.max(1);
        let lifted = BucketsRequest {
            limit: MAX_LIMIT,
            block_ms: None,
            ..*req
        };
        // What RL.BUCKETS reads and checks, with its errors; a block the
        // key carries is kept, and counts nothing here.
        let (state, blocked_until) = load_blocked(view, Kind::Buckets)?;
        let mut out = decide_state(view, &lifted, call.now.ms, max_buckets, state.as_ref())?;
        let mut charged = req.cost;
        if out.write.is_none() && out.decision.remaining > 0 {
            // Past the ceiling: what still fits under it.
            charged = out.decision.remaining;
            let rest = BucketsRequest {
                cost: charged,
                ..lifted
            };
            out = decide_state(view, &rest, call.now.ms, max_buckets, state.as_ref())?;
        }
        let Some(mut write) = out.write else {
            let after = req.unit().decide(view, &Call::read(call.now))?.decision;
            return Ok(Outcome {
                decision: Charged { charged: 0, after },
                write: None,
            });
        };
        keep_block(&mut write, blocked_until, call.now.ms);
        let after = req
            .unit()
            .decide(
                &mut Written {
                    view,
                    write: &write,
                },
                &Call::read(call.now),
            )?
            .decision;
        Ok(Outcome {
            decision: Charged { charged, after },
            write: Some(write),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buckets::layout::{load, Kind, MemoryHash};
    use crate::core::buckets::window::slide;
    use crate::core::limiter::Now;
    use crate::core::limiter::Refund;
    use proptest::prelude::*;

    use crate::core::buckets::request::test_request as req;

    fn at(ms: i64) -> Call {
        Call::one(Now { ms, us: ms * 1000 })
    }

    fn charge(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> [i64; 4] {
        let out = Charge(*r).decide(h, &at(now)).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision.to_reply()
    }

    fn admit(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> [i64; 4] {
        let out = r.decide(h, &at(now)).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision.to_reply()
    }

    fn peek(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> [i64; 4] {
        let read = Call::read(Now { ms: now, us: 0 });
        r.unit().decide(h, &read).unwrap().decision.to_reply()
    }

    #[test]
    fn table_of_charges_with_explicit_times() {
        // limit 5 per 1000 ms in buckets of 100 ms; bucket b leaves at
        // (b+1)*100 - 1 + 1000.
        let r = |cost| req(5, 1000, 100, cost);
        let mut h = MemoryHash::new();
        assert_eq!(admit(&mut h, &r(2), 10_000), [1, 3, 0, 1099]);
        // 2 + 7 = 9 counted, in buckets 100 and 104: one more unit fits
        // once both have left, at 11_499.
        assert_eq!(charge(&mut h, &r(7), 10_450), [7, 0, 1049, 1049]);
        assert_eq!(admit(&mut h, &r(1), 11_200), [0, 0, 299, 299]);
        assert_eq!(admit(&mut h, &r(5), 11_499), [1, 0, 0, 1000]);
        // A refund takes the charged units back.
        let mut g = MemoryHash::new();
        charge(&mut g, &r(9), 0);
        assert_eq!(Refund(r(6)).decide(&mut g, &at(10)).unwrap().decision, 6);
    }

    #[test]
    fn a_window_stops_at_its_ceiling() {
        let big = req(MAX_LIMIT, 1000, 100, MAX_LIMIT);
        let mut h = MemoryHash::new();
        assert_eq!(charge(&mut h, &req(5, 1000, 100, 9), 0)[0], 9);
        assert_eq!(charge(&mut h, &big, 10)[0], (MAX_LIMIT - 9) as i64);
        let before = h.clone();
        assert_eq!(charge(&mut h, &big, 20), [0, 0, 1079, 1079]);
        assert_eq!(h, before, "nothing written");
    }

    proptest! {
        /// Charges (past the limit or not) and admissions at rising times:
        /// a charge records every unit (the window's total is what was
        /// admitted and charged in the buckets that still count), and its
        /// reply is the peek after.
        #[test]
        fn a_charge_never_loses_units(
            limit in 1u64..12,
            buckets in 1u64..10,
            precision in 1u64..50,
            steps in proptest::collection::vec((0i64..200, any::<bool>(), 1u64..40), 1..60),
        ) {
            let window = buckets * precision;
            let mut h = MemoryHash::new();
            let mut recorded: Vec<(i64, u64)> = Vec::new();
            let mut now = 50_000;
            for (dt, is_charge, cost) in steps {
                now += dt;
                if is_charge {
                    let r = req(limit, window, precision, cost);
                    let reply = charge(&mut h, &r, now);
                    prop_assert_eq!(reply[0], cost as i64);
                    prop_assert_eq!(&reply[1..], &peek(&mut h, &r, now)[1..]);
                    recorded.push((now, cost));
                } else {
                    let r = req(limit, window, precision, cost.min(limit));
                    if admit(&mut h, &r, now)[0] == 1 {
                        recorded.push((now, r.cost));
                    }
                }
                // A bucket counts while its last ms is inside the window.
                let p = precision as i64;
                let in_window: u64 = recorded.iter()
                    .filter(|&&(t, _)| (t.div_euclid(p) + 1) * p - 1 > now - window as i64)
                    .map(|&(_, c)| c).sum();
                let state = load(&mut h, Kind::Buckets).unwrap();
                let win = slide(&mut h, state.as_ref(), window, precision, now).unwrap();
                prop_assert_eq!(win.totals.first().copied().unwrap_or(0), in_window);
            }
        }
    }
}

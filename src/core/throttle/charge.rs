//! `RL.CHARGE THROTTLE`: moves the schedule (the TAT) forward by `COST`
//! emission intervals from `max(tat, now)`, whether or not that stays
//! within the burst tolerance. A TAT past `now + τ` denies every request
//! until the clock catches up with it, as a debt paid off at the declared
//! rate; the key still expires when its TAT is reached, so its TTL covers
//! the whole debt. The schedule runs at most [`MAX_TOLERANCE_US`] (about
//! 31.7 years) past `now + τ`: a charge past that records what reaches it.

use super::gcra::{decide, stored_with_block, TatWrite, MAX_TOLERANCE_US};
use super::request::ThrottleRequest;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Charge, Charged};
use crate::core::options::block;
use crate::core::string_key::{StringView, StringWrite};

impl<V: StringView> Limiter<V> for Charge<ThrottleRequest> {
    type Write = StringWrite;
    type Answer = Charged;

    /// At the server's µs clock.
    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite, Charged>, RlError> {
        let req = &self.0;
        // What RL.THROTTLE reads and checks, with its errors.
        let stored = key
            .value()
            .map(|bytes| stored_with_block(bytes, key.expire_at_ms()))
            .transpose()?;
        let tat = stored.map(|s| s.0);
        // A block that holds stays: a charge records units, it grants nothing.
        let blocked_until = block::in_force(stored.and_then(|s| s.1), call.now.ms);
        let now = i128::from(call.now.us);
        let t = i128::from(req.rate.emission_us);
        let base = tat.map_or(now, |tat| i128::from(tat).max(now));
        // i128: COST * T may exceed i64 (COST up to 10^15).
        let ceiling = now + i128::from(req.rate.tolerance_us) + i128::from(MAX_TOLERANCE_US);
        let room = ((ceiling - base).max(0) / t).min(i128::from(req.quantity));
        let charged = u64::try_from(room).unwrap_or(0);
        let new_tat = base + room * t;
        let write = if charged > 0 {
            Some(super::string_write(TatWrite::at(new_tat), blocked_until)?)
        } else {
            None
        };
        // The peek after, over the TAT as the write leaves it.
        let after_tat = write.map_or(tat, |_| Some(TatWrite::at(new_tat).tat_us));
        let after = block::holds(blocked_until, call.now.ms)
            .unwrap_or_else(|| decide(&req.rate, after_tat, 1, call.now.us).to_decision());
        Ok(Outcome {
            decision: Charged { charged, after },
            write,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::limiter::Now;
    use crate::core::limiter::Refund;
    use crate::core::string_key::MemoryString;
    use crate::core::throttle::gcra::{stored_tat, Gcra};
    use proptest::prelude::*;

    const NOW: i64 = 1_800_000_000_000_000;

    fn req(max_burst: u64, count: u64, period_ms: u64, quantity: u64) -> ThrottleRequest {
        ThrottleRequest {
            rate: Gcra::new(max_burst, count, period_ms * 1000).unwrap(),
            quantity,
            block_ms: None,
        }
    }

    fn at(us: i64) -> Call {
        Call::one(Now {
            ms: us.div_euclid(1000),
            us,
        })
    }

    fn charge(s: &mut MemoryString, r: &ThrottleRequest, now: i64) -> [i64; 4] {
        let out = Charge(*r).decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision.to_reply()
    }

    fn tat(s: &MemoryString) -> i64 {
        stored_tat(s.value.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn a_charge_past_the_burst_is_a_debt_paid_at_the_rate() {
        // Bucket of 5, one token back every 100 ms (T = 100 ms, τ = 500 ms).
        let r = |q| req(4, 10, 1000, q);
        let mut s = MemoryString::default();
        // 8 at once: the TAT is 800 ms ahead, 300 ms past τ; the next
        // unit fits once the TAT is back to τ - T ahead: 400 ms on.
        assert_eq!(charge(&mut s, &r(8), NOW), [8, 0, 400, 800]);
        assert_eq!(tat(&s), NOW + 800_000);
        // The key expires when the TAT is reached: its TTL covers the debt.
        assert_eq!(s.expire_at_ms, Some((NOW + 800_000) / 1000));
        let denied = r(1).decide(&mut s, &at(NOW + 399_999)).unwrap();
        assert!(!denied.decision.allowed);
        assert!(
            r(1).decide(&mut s, &at(NOW + 400_000))
                .unwrap()
                .decision
                .allowed
        );
        // Charged on top of a running schedule.
        assert_eq!(charge(&mut s, &r(2), NOW + 100_000), [2, 0, 500, 900]);
        // A refund takes back what is still scheduled.
        let back = Refund(r(3)).decide(&mut s, &at(NOW + 100_000)).unwrap();
        assert_eq!(back.decision, 3);
    }

    #[test]
    fn a_schedule_stops_at_its_ceiling() {
        // T = 1 s, τ = 1 s: the ceiling is 31.7 years + 1 s past now.
        let r = req(0, 1, 1000, 1_000_000_000_000_000);
        let mut s = MemoryString::default();
        let reply = charge(&mut s, &r, NOW);
        assert_eq!(reply[0], 1_000_000_001);
        assert_eq!(tat(&s), NOW + 1_000_000_001_000_000);
        let before = s.clone();
        assert_eq!(charge(&mut s, &r, NOW)[0], 0);
        assert_eq!(s, before, "nothing written");
        // The stored TAT reads back as µs, not as a redis-cell ns value.
        assert!(tat(&s) < 100_000_000_000_000_000);
    }

    proptest! {
        /// Charges and admissions at rising times: every unit charged moves
        /// the TAT by exactly T (none lost below the ceiling), and the
        /// reply is the peek after.
        #[test]
        fn a_charge_never_loses_units(
            burst in 0u64..6,
            count in 1u64..20,
            steps in proptest::collection::vec((0i64..300_000, any::<bool>(), 1u64..40), 1..60),
        ) {
            let mut s = MemoryString::default();
            let mut now = NOW;
            for (dt, is_charge, q) in steps {
                now += dt;
                let r = req(burst, count, 1000, q);
                let t = r.rate.emission_us;
                let before = s.value.as_deref().map(|v| stored_tat(v).unwrap().max(now)).unwrap_or(now);
                if is_charge {
                    let reply = charge(&mut s, &r, now);
                    prop_assert_eq!(reply[0], q as i64);
                    prop_assert_eq!(tat(&s), before + q as i64 * t);
                    let one = ThrottleRequest { quantity: 1, ..r };
                    let peek = one.decide(&mut s, &Call::read(Now { ms: now / 1000, us: now })).unwrap();
                    prop_assert_eq!(&reply[1..], &peek.decision.to_reply()[1..]);
                } else {
                    let one = ThrottleRequest { quantity: 1, ..r };
                    let out = one.decide(&mut s, &at(now)).unwrap();
                    if let Some(w) = &out.write {
                        s.apply(w);
                    }
                }
            }
        }
    }
}

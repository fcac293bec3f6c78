//! `RL.REFUND THROTTLE`: moves the schedule (the TAT) back by `quantity`
//! emission intervals, never earlier than `now`. The units given back are
//! those still scheduled ahead of `now`, whole or begun: at most
//! `ceil((tat - now) / T)`. A refund that reaches `now` writes `TAT = now`,
//! which says "idle" as a missing key does, and expires within the
//! millisecond, as every TAT expires when it is reached.

use super::gcra::{stored_with_block, TatWrite};
use super::request::ThrottleRequest;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Refund, Units};
use crate::core::options::block;
use crate::core::string_key::{StringView, StringWrite};

impl Units for ThrottleRequest {
    fn units(&self) -> u64 {
        self.quantity
    }
    fn with_units(&self, n: u64) -> Self {
        ThrottleRequest {
            quantity: n,
            ..*self
        }
    }
    fn without_block(&self) -> Self {
        ThrottleRequest {
            block_ms: None,
            ..*self
        }
    }
}

impl<V: StringView> Limiter<V> for Refund<ThrottleRequest> {
    type Write = StringWrite;
    type Answer = u64;

    /// At the server's µs clock.
    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite, u64>, RlError> {
        let req = &self.0;
        // What RL.THROTTLE reads and checks, with its errors.
        let stored = key
            .value()
            .map(|bytes| stored_with_block(bytes, key.expire_at_ms()))
            .transpose()?;
        let tat = stored.map(|s| s.0);
        // A block that holds stays: a refund gives back units, not access.
        let blocked_until = block::in_force(stored.and_then(|s| s.1), call.now.ms);
        let now = i128::from(call.now.us);
        let ahead = tat.map_or(0, |tat| (i128::from(tat) - now).max(0));
        let t = i128::from(req.rate.emission_us);
        // i128: quantity * T may exceed i64 (quantity up to 10^15).
        let units = (ahead + t - 1) / t;
        let refunded = u64::try_from(units.min(i128::from(req.quantity))).unwrap_or(0);
        let Some(tat) = tat.filter(|_| refunded > 0) else {
            return Ok(Outcome {
                decision: 0,
                write: None,
            });
        };
        let new_tat = (i128::from(tat) - i128::from(req.quantity) * t).max(now);
        // As an admission writes it: the TAT, expiring when it is reached.
        Ok(Outcome {
            decision: refunded,
            write: Some(super::string_write(TatWrite::at(new_tat), blocked_until)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::limiter::Now;
    use crate::core::string_key::MemoryString;
    use crate::core::throttle::gcra::{Gcra, STATE_NAME};
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

    fn admit(s: &mut MemoryString, r: &ThrottleRequest, now: i64) -> bool {
        let out = r.decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision.allowed
    }

    fn refund(s: &mut MemoryString, r: &ThrottleRequest, now: i64) -> u64 {
        let out = Refund(*r).decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision
    }

    fn tat(s: &MemoryString) -> i64 {
        std::str::from_utf8(s.value.as_deref().unwrap())
            .unwrap()
            .parse()
            .unwrap()
    }

    #[test]
    fn table_of_refunds_with_explicit_times() {
        // 10 per second (T = 100 ms), bursts of 5.
        let r = |q| req(4, 10, 1000, q);
        let mut s = MemoryString::default();
        assert!(admit(&mut s, &r(3), NOW));
        assert_eq!(tat(&s), NOW + 300_000);
        // Two intervals back.
        assert_eq!(refund(&mut s, &r(2), NOW), 2);
        assert_eq!(tat(&s), NOW + 100_000);
        assert_eq!(s.expire_at_ms, Some((NOW + 100_000) / 1000));
        // 50 ms later half an interval is left: one unit, back to `now`.
        assert_eq!(refund(&mut s, &r(3), NOW + 50_000), 1);
        assert_eq!(tat(&s), NOW + 50_000);
        assert_eq!(s.expire_at_ms, Some((NOW + 50_000) / 1000));
        // Idle: nothing to give back.
        let before = s.clone();
        assert_eq!(refund(&mut s, &r(1), NOW + 50_000), 0);
        assert_eq!(s, before);
        // A quantity of 0 gives nothing back.
        assert!(admit(&mut s, &r(2), NOW + 60_000));
        let out = Refund(r(0)).decide(&mut s, &at(NOW + 60_000)).unwrap();
        assert_eq!((out.decision, out.write), (0, None));
        // A TAT that is not a whole ms expires at the next one.
        assert_eq!(refund(&mut s, &r(1), NOW + 60_001), 1);
        assert_eq!(tat(&s), NOW + 160_000);
        let out = Refund(r(5)).decide(&mut s, &at(NOW + 60_500)).unwrap();
        assert_eq!(
            out.write,
            Some(StringWrite::plain(
                (NOW + 60_500) as u64,
                (NOW + 60_500) / 1000 + 1
            ))
        );
    }

    #[test]
    fn no_key_gives_nothing_back() {
        let mut s = MemoryString::default();
        let out = Refund(req(4, 10, 1000, 1))
            .decide(&mut s, &at(NOW))
            .unwrap();
        assert_eq!((out.decision, out.write), (0, None));
    }

    #[test]
    fn the_commands_errors() {
        let foreign = RlError::ForeignString {
            expected: STATE_NAME,
        };
        for (value, ttl) in [
            (&b"5"[..], Some(1)),
            (b"abc", Some(1)),
            (b"1900000000000000", None),
        ] {
            let mut s = MemoryString {
                value: Some(value.to_vec()),
                expire_at_ms: ttl,
            };
            assert_eq!(
                Refund(req(4, 10, 1000, 1)).decide(&mut s, &at(NOW)),
                Err(foreign.clone()),
                "{value:?}"
            );
        }
    }

    proptest! {
        /// Refunds naming any rate and quantity over admissions of one
        /// rate. The state is a schedule, not units: a refund moves it
        /// back by its quantity in the intervals of the rate it names, at
        /// most that (never past now), and answers at most its quantity.
        /// What the key admits between any two of its admissions is then
        /// bounded as GCRA bounds it, `n * T <= tau + elapsed`, with the
        /// time given back added: never more.
        #[test]
        fn refunds_of_any_rate_never_over_admit(
            max_burst in 0u64..6,
            count in 1u64..20,
            steps in proptest::collection::vec(
                (0i64..300_000, any::<bool>(), 0u64..6, 0u64..6, 1u64..20, 1u64..3_000),
                1..60,
            ),
        ) {
            let key = |q: u64| req(max_burst, count, 1000, q.min(max_burst + 1));
            let t = key(1).rate.emission_us as i128;
            let tau = key(1).rate.tolerance_us as i128;
            let mut s = MemoryString::default();
            let mut now = NOW;
            // (time, units admitted, µs the schedule was moved back).
            let mut events: Vec<(i64, i128, i128)> = Vec::new();
            for (dt, is_admit, q, burst, n, period) in steps {
                now += dt;
                if is_admit {
                    let r = key(q);
                    if admit(&mut s, &r, now) && r.quantity > 0 {
                        events.push((now, i128::from(r.quantity), 0));
                    }
                } else {
                    let r = req(burst, n.min(period * 1000), period, q.min(burst + 1));
                    let before = s.value.as_deref().map(|_| tat(&s));
                    let before_value = s.value.clone();
                    let given = refund(&mut s, &r, now);
                    prop_assert!(given <= r.quantity);
                    let after = s.value.as_deref().map(|_| tat(&s));
                    let moved = match (before, after) {
                        (Some(b), Some(a)) => i128::from(b - a),
                        _ => 0,
                    };
                    prop_assert!(moved >= 0);
                    // Never a longer value: a refund can run at maxmemory.
                    if let (Some(b), Some(a)) = (&before_value, &s.value) {
                        prop_assert!(a.len() <= b.len());
                    }
                    prop_assert!(moved <= i128::from(r.quantity) * r.rate.emission_us as i128);
                    if given == 0 {
                        prop_assert_eq!(moved, 0);
                    }
                    events.push((now, 0, moved));
                }
            }
            for (i, &(t1, _, _)) in events.iter().enumerate() {
                let (mut units, mut moved) = (0i128, 0i128);
                for &(t2, u, m) in &events[i..] {
                    units += u;
                    if u > 0 {
                        prop_assert!(
                            units * t <= tau + i128::from(t2 - t1) + moved,
                            "{} units from {} to {} with {} µs given back", units, t1, t2, moved
                        );
                    }
                    moved += m;
                }
            }
        }

        /// The schedule never runs more than the burst tolerance ahead, and
        /// a refund never makes a later request wait longer, nor denies one
        /// that would pass without it.
        #[test]
        fn a_refund_never_makes_a_later_request_wait_longer(
            max_burst in 0u64..6,
            count in 1u64..20,
            admits in proptest::collection::vec((0i64..300_000, 1u64..6), 1..30),
            refund_q in 0u64..6,
            later in 0i64..2_000_000,
            later_q in 1u64..6,
        ) {
            let r = |q: u64| req(max_burst, count, 1000, q.min(max_burst + 1));
            let mut s = MemoryString::default();
            let mut now = NOW;
            for (dt, q) in admits {
                now += dt;
                admit(&mut s, &r(q), now);
            }
            let mut refunded = s.clone();
            let given = refund(&mut refunded, &r(refund_q), now);
            prop_assert!(given <= refund_q);
            if let Some(v) = refunded.value.as_deref() {
                let t: i64 = std::str::from_utf8(v).unwrap().parse().unwrap();
                prop_assert!(t >= now.min(tat(&s)));
                prop_assert!(t - now <= r(1).rate.tolerance_us);
            }
            let read = Call::read(Now { ms: (now + later) / 1000, us: now + later });
            let without = r(later_q).decide(&mut s, &read).unwrap().decision;
            let with = r(later_q).decide(&mut refunded, &read).unwrap().decision;
            prop_assert!(with.retry_after_ms <= without.retry_after_ms);
            prop_assert!(with.allowed || !without.allowed);
        }
    }
}

//! `RL.REFUND FIXED`: lowers the current window's counter by `COST`, never
//! below zero. The window's end (the key's expiry) does not move.

use super::decide::stored_state;
use super::request::FixedRequest;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Refund, Units};
use crate::core::options::block;
use crate::core::string_key::{StringView, StringWrite};

impl Units for FixedRequest {
    fn units(&self) -> u64 {
        self.cost
    }
    fn with_units(&self, n: u64) -> Self {
        FixedRequest { cost: n, ..*self }
    }
    fn without_block(&self) -> Self {
        FixedRequest {
            block_ms: None,
            ..*self
        }
    }
}

impl<V: StringView> Limiter<V> for Refund<FixedRequest> {
    type Write = StringWrite;
    type Answer = u64;

    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite, u64>, RlError> {
        // What RL.FIXED reads and checks, with its errors.
        let state = key
            .value()
            .map(|bytes| stored_state(bytes, key.expire_at_ms()))
            .transpose()?;
        // A window whose end has come is over, as RL.FIXED sees it.
        let current = state.and_then(|s| s.current(call.now.ms));
        let refunded = current.map_or(0, |(count, _)| count.min(self.0.cost));
        // A block that holds stays: a refund gives back units, not access.
        let blocked_until = block::in_force(state.and_then(|s| s.blocked_until), call.now.ms);
        let write = current
            .filter(|_| refunded > 0)
            .map(|(count, end)| StringWrite {
                blocked_until,
                ..StringWrite::counter(count - refunded, end)
            });
        Ok(Outcome {
            decision: refunded,
            write,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::fixed::decide::STATE_NAME;
    use crate::core::limiter::Now;
    use crate::core::string_key::MemoryString;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> FixedRequest {
        FixedRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        }
    }

    fn at(ms: i64) -> Call {
        Call::one(Now { ms, us: ms * 1000 })
    }

    fn admit(s: &mut MemoryString, r: &FixedRequest, now: i64) -> bool {
        let out = r.decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision.allowed
    }

    fn refund(s: &mut MemoryString, r: &FixedRequest, now: i64) -> u64 {
        let out = Refund(*r).decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision
    }

    fn value(s: &MemoryString) -> &str {
        std::str::from_utf8(s.value.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn table_of_refunds_with_explicit_times() {
        // limit 5 per 1000 ms.
        let r = |cost| req(5, 1000, cost);
        let mut s = MemoryString::default();
        assert_eq!(refund(&mut s, &r(1), 10_000), 0, "no key");
        assert_eq!(s, MemoryString::default());
        assert!(admit(&mut s, &r(4), 10_000));
        assert_eq!(refund(&mut s, &r(3), 10_200), 3);
        assert_eq!((value(&s), s.expire_at_ms), ("1", Some(11_000)));
        // Never below zero.
        assert_eq!(refund(&mut s, &r(5), 10_300), 1);
        assert_eq!((value(&s), s.expire_at_ms), ("0", Some(11_000)));
        let before = s.clone();
        assert_eq!(refund(&mut s, &r(1), 10_400), 0);
        assert_eq!(s, before, "nothing written");
        // The window ended at 11_000: nothing counts.
        assert!(admit(&mut s, &r(2), 10_500));
        let before = s.clone();
        assert_eq!(refund(&mut s, &r(1), 11_000), 0);
        assert_eq!(s, before);
    }

    #[test]
    fn the_commands_errors() {
        let foreign = RlError::ForeignString {
            expected: STATE_NAME,
        };
        for (value, ttl) in [
            (&b"5"[..], None),
            (b"x", Some(1)),
            (b"1800000000000000", Some(1)),
        ] {
            let mut s = MemoryString {
                value: Some(value.to_vec()),
                expire_at_ms: ttl,
            };
            assert_eq!(
                Refund(req(5, 1000, 1)).decide(&mut s, &at(0)),
                Err(foreign.clone()),
                "{value:?}"
            );
        }
    }

    proptest! {
        /// Refunds naming any window, limit and cost over admissions of
        /// one window: each lowers the counter by exactly what it reports,
        /// and no window of the key admits more than `limit` net of what
        /// was given back in it.
        #[test]
        fn refunds_of_any_window_never_over_admit(
            limit in 1u64..10,
            window in 1u64..1_000,
            steps in proptest::collection::vec(
                (0i64..300, any::<bool>(), 1u64..10, 1u64..2_000, 1u64..12),
                1..80,
            ),
        ) {
            let mut s = MemoryString::default();
            // The key's window running: (its end, admitted net of refunds).
            let mut running: Option<(i64, i128)> = None;
            let mut now = 50_000;
            let count = |s: &MemoryString, now: i64| match (&s.value, s.expire_at_ms) {
                (Some(v), Some(end)) if end > now => std::str::from_utf8(v).unwrap().parse().unwrap(),
                _ => 0u64,
            };
            for (dt, is_admit, cost, refund_window, refund_limit) in steps {
                now += dt;
                let live = running.filter(|&(end, _)| end > now);
                if is_admit {
                    let r = req(limit, window, cost.min(limit));
                    if admit(&mut s, &r, now) {
                        let (end, net) = live.unwrap_or((now + window as i64, 0));
                        running = Some((end, net + i128::from(r.cost)));
                    }
                } else {
                    let r = req(refund_limit, refund_window, cost.min(refund_limit));
                    let before = count(&s, now);
                    let before_value = s.value.clone();
                    let given = refund(&mut s, &r, now);
                    // Never a longer value: a refund can run at maxmemory.
                    if let (Some(b), Some(a)) = (&before_value, &s.value) {
                        prop_assert!(a.len() <= b.len());
                    }
                    prop_assert!(given <= r.cost);
                    prop_assert_eq!(before - count(&s, now), given);
                    if let Some((end, net)) = live {
                        running = Some((end, net - i128::from(given)));
                    }
                }
                if let Some((_, net)) = running {
                    prop_assert!(net <= i128::from(limit));
                }
            }
        }

        /// Admits and refunds at rising times: the counter is what the
        /// window admitted minus what was refunded, never above `limit`; a
        /// refund never makes a later request wait longer, nor denies one
        /// that would pass without it.
        #[test]
        fn the_window_holds_admitted_minus_refunded(
            limit in 1u64..10,
            window in 1u64..1_000,
            steps in proptest::collection::vec((0i64..300, any::<bool>(), 1u64..10), 1..80),
            later in 0i64..1_500,
            later_cost in 1u64..10,
        ) {
            let mut s = MemoryString::default();
            // (window end, admitted minus refunded in it)
            let mut model: Option<(i64, u64)> = None;
            let mut now = 50_000;
            for (dt, is_admit, cost) in steps {
                now += dt;
                let r = req(limit, window, cost.min(limit));
                let live = model.filter(|&(end, _)| end > now);
                if is_admit {
                    if admit(&mut s, &r, now) {
                        let (end, n) = live.unwrap_or((now + window as i64, 0));
                        model = Some((end, n + r.cost));
                    }
                } else {
                    let held = live.map_or(0, |(_, n)| n);
                    let mut refunded = s.clone();
                    let given = refund(&mut refunded, &r, now);
                    prop_assert_eq!(given, r.cost.min(held));
                    let later_req = req(limit, window, later_cost.min(limit));
                    let read = Call::read(Now { ms: now + later, us: 0 });
                    let without = later_req.decide(&mut s, &read).unwrap().decision;
                    let with = later_req.decide(&mut refunded, &read).unwrap().decision;
                    prop_assert!(with.retry_after_ms <= without.retry_after_ms);
                    prop_assert!(with.allowed || !without.allowed);
                    s = refunded;
                    if let Some((end, n)) = live {
                        model = Some((end, n - given));
                    }
                }
                let counted = model
                    .filter(|&(end, _)| end > now)
                    .map_or(0, |(_, n)| n);
                let stored = match (&s.value, s.expire_at_ms) {
                    (Some(v), Some(end)) if end > now => std::str::from_utf8(v).unwrap().parse().unwrap(),
                    _ => 0u64,
                };
                prop_assert_eq!(stored, counted);
                prop_assert!(stored <= limit);
            }
        }
    }
}

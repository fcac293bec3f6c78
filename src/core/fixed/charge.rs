//! `RL.CHARGE FIXED`: adds `COST` to the current window's counter (a new
//! window's, if none runs) whether or not it fits; the window's end (the
//! key's expiry) does not move. A counter holds at most 10^15 (every
//! limit's ceiling, and below any throttle state): a charge past that
//! records what reaches it.

use super::decide::{decide, stored_state, FixedState};
use super::request::{FixedRequest, MAX_LIMIT};
use crate::core::error::RlError;
use crate::core::limiter::Units;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Charge, Charged};
use crate::core::options::block;
use crate::core::string_key::{StringView, StringWrite};

impl<V: StringView> Limiter<V> for Charge<FixedRequest> {
    type Write = StringWrite;
    type Answer = Charged;

    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite, Charged>, RlError> {
        let req = &self.0;
        let now = call.now.ms;
        // What RL.FIXED reads and checks, with its errors.
        let state = key
            .value()
            .map(|bytes| stored_state(bytes, key.expire_at_ms()))
            .transpose()?;
        let (count, end) = state
            .and_then(|s| s.current(now))
            .unwrap_or((0, now.saturating_add(req.window_ms as i64)));
        let charged = req.cost.min(MAX_LIMIT - count);
        // A block that holds stays: a charge records units, it grants nothing.
        let blocked_until = block::in_force(state.and_then(|s| s.blocked_until), now);
        let write = (charged > 0).then_some(StringWrite {
            blocked_until,
            ..StringWrite::counter(count + charged, end)
        });
        // The peek after, over the counter as the write leaves it.
        let after = match write {
            Some(w) => Some(FixedState {
                count: w.value,
                expire_at_ms: Some(w.expire_at_ms),
                blocked_until: w.blocked_until,
            }),
            None => state,
        };
        let after = decide(&req.unit(), after, now).decision;
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

    fn charge(s: &mut MemoryString, r: &FixedRequest, now: i64) -> [i64; 4] {
        let out = Charge(*r).decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision.to_reply()
    }

    fn admit(s: &mut MemoryString, r: &FixedRequest, now: i64) -> [i64; 4] {
        let out = r.decide(s, &at(now)).unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision.to_reply()
    }

    #[test]
    fn table_of_charges_with_explicit_times() {
        // limit 5 per 1000 ms.
        let r = |cost| req(5, 1000, cost);
        let mut s = MemoryString::default();
        // A charge on no key starts a window, past the limit at once.
        assert_eq!(charge(&mut s, &r(8), 10_000), [8, 0, 1000, 1000]);
        assert_eq!(
            (s.value.as_deref(), s.expire_at_ms),
            (Some(&b"8"[..]), Some(11_000))
        );
        // Denied until the window ends; a refund of 3 leaves it full.
        assert_eq!(admit(&mut s, &r(1), 10_500), [0, 0, 500, 500]);
        assert_eq!(
            Refund(r(3)).decide(&mut s, &at(10_500)).unwrap().decision,
            3
        );
        // A charge that fits is a plain admission, reported as the peek after.
        let mut t = MemoryString::default();
        assert_eq!(charge(&mut t, &r(2), 10_000), [2, 2, 0, 1000]);
        assert_eq!(charge(&mut t, &r(3), 10_100), [3, 0, 900, 900]);
        // The end does not move; the next window starts clean.
        assert_eq!(t.expire_at_ms, Some(11_000));
        assert_eq!(admit(&mut t, &r(5), 11_000), [1, 0, 0, 1000]);
    }

    #[test]
    fn a_counter_stops_at_its_ceiling() {
        let r = req(MAX_LIMIT, 1000, MAX_LIMIT);
        let mut s = MemoryString::default();
        assert_eq!(charge(&mut s, &req(5, 1000, 7), 0)[0], 7);
        assert_eq!(charge(&mut s, &r, 10)[0], (MAX_LIMIT - 7) as i64);
        let before = s.clone();
        assert_eq!(charge(&mut s, &r, 20), [0, 0, 980, 980]);
        assert_eq!(s, before, "nothing written");
    }

    #[test]
    fn the_commands_errors_leave_the_key_untouched() {
        let mut s = MemoryString {
            value: Some(b"5".to_vec()),
            expire_at_ms: None,
        };
        assert!(Charge(req(5, 1000, 1)).decide(&mut s, &at(0)).is_err());
    }

    proptest! {
        /// Charges and admissions at rising times: the counter is what the
        /// window admitted plus everything charged (a charge never loses
        /// units below the ceiling), and the reply is the peek after.
        #[test]
        fn a_charge_never_loses_units(
            limit in 1u64..10,
            window in 1u64..1_000,
            steps in proptest::collection::vec((0i64..300, any::<bool>(), 1u64..30), 1..80),
        ) {
            let mut s = MemoryString::default();
            let mut model: Option<(i64, u64)> = None;
            let mut now = 50_000;
            for (dt, is_charge, cost) in steps {
                now += dt;
                let live = model.filter(|&(end, _)| end > now);
                let (end, n) = live.unwrap_or((now + window as i64, 0));
                if is_charge {
                    let r = req(limit, window, cost);
                    let reply = charge(&mut s, &r, now);
                    prop_assert_eq!(reply[0], cost as i64);
                    model = Some((end, n + cost));
                    let peek = req(limit, window, 1).decide(&mut s, &Call::read(Now { ms: now, us: 0 }))
                        .unwrap().decision.to_reply();
                    prop_assert_eq!(&reply[1..], &peek[1..]);
                } else {
                    let r = req(limit, window, cost.min(limit));
                    if admit(&mut s, &r, now)[0] == 1 {
                        prop_assert!(n + r.cost <= limit);
                        model = Some((end, n + r.cost));
                    }
                }
                let stored = match (&s.value, s.expire_at_ms) {
                    (Some(v), Some(e)) if e > now => std::str::from_utf8(v).unwrap().parse().unwrap(),
                    _ => 0u64,
                };
                prop_assert_eq!(stored, model.filter(|&(e, _)| e > now).map_or(0, |(_, n)| n));
            }
        }
    }
}

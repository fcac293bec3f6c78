//! The fixed window: one counter per subject.
//!
//! The first admitted request of a window starts it: the counter holds the
//! admitted cost and expires `window` ms later, an end that later requests
//! never move. A request is admitted if the counter plus its cost is at most
//! `limit`; a denied request changes nothing. The price of this simplicity is
//! the boundary burst: up to `limit` at the end of one window and `limit`
//! again at the start of the next, so `2 * limit` within a short span.

use super::request::{FixedRequest, MAX_LIMIT};
use crate::core::args::unsigned;
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::Outcome;
use crate::core::options::block;
use crate::core::string_key::{read_state, StringWrite};

/// What a fixed-window key holds, for the error naming a foreign string.
pub const STATE_NAME: &str = "an rl fixed-window counter";

/// The stored counter and its absolute expiry, as read from the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedState {
    pub count: u64,
    /// The window's end: the key's expiry, or the one a blocked key keeps
    /// in its value. `None`: the key has no TTL (rl never writes one
    /// without it).
    pub expire_at_ms: Option<i64>,
    /// The end of the key's block, if it has one (held or past).
    pub blocked_until: Option<i64>,
}

impl FixedState {
    /// The count and end of the window still running at `now`; `None` when
    /// its end has come (see [`decide`]) or the key has no TTL.
    pub fn current(&self, now: i64) -> Option<(u64, i64)> {
        match self.expire_at_ms {
            Some(end) if end > now => Some((self.count, end)),
            _ => None,
        }
    }
}

/// Decides `req` at `now` (ms). Pure: the caller applies `write`, the new
/// count expiring at the end of the window (unchanged within a window).
///
/// A window whose end has come (by our clock, which may be a little ahead of
/// the server's expiry check) is over, and so is a counter without a TTL:
/// its window end is unknown, and keeping it would deny forever.
///
/// A block that holds denies before anything is counted; a denial of a
/// request with `BLOCK ms` writes the block (the count and the window's end
/// as they were) and answers as the block does.
pub fn decide(req: &FixedRequest, state: Option<FixedState>, now: i64) -> Outcome<StringWrite> {
    if let Some(decision) = block::holds(state.and_then(|s| s.blocked_until), now) {
        return Outcome {
            decision,
            write: None,
        };
    }
    let current = state.and_then(|s| s.current(now));
    let (count, end) = current.unwrap_or((0, now.saturating_add(req.window_ms as i64)));
    // `end` is a stored expiry: any value the key may carry, so no plain
    // subtraction (it cannot be below `now` here).
    let reset_after_ms = end.saturating_sub(now).max(0) as u64;
    if count.saturating_add(req.cost) <= req.limit {
        let count = count + req.cost;
        return Outcome {
            decision: Decision {
                allowed: true,
                remaining: req.limit - count,
                retry_after_ms: 0,
                reset_after_ms,
                blocked: false,
            },
            write: Some(StringWrite::counter(count, end)),
        };
    }
    if let Some(ms) = req.block_ms {
        return Outcome {
            decision: block::breached(ms),
            write: Some(StringWrite {
                blocked_until: Some(block::end(now, ms)),
                ..StringWrite::counter(count, end)
            }),
        };
    }
    // Only the window's end frees anything: waiting exactly until then is
    // enough (a new window starts), one ms less is not.
    Outcome {
        decision: Decision {
            allowed: false,
            remaining: req.limit.saturating_sub(count),
            retry_after_ms: reset_after_ms.max(1),
            reset_after_ms,
            blocked: false,
        },
        write: None,
    }
}

/// Reads a stored counter. Anything that is not a plain integer below the
/// largest limit is another key's string and is refused rather than misread
/// (a throttle state is a far larger number).
pub fn stored_count(bytes: &[u8]) -> Result<u64, RlError> {
    match unsigned(bytes) {
        Some(n) if n <= MAX_LIMIT => Ok(n),
        _ => Err(RlError::ForeignString {
            expected: STATE_NAME,
        }),
    }
}

/// Reads a stored counter and its key's expiry. rl writes every counter
/// with its window's end as the TTL, so a string without one (a user's
/// `SET cnt 5`) is not rl's: refused, never reset or overwritten. A
/// blocked counter keeps the window's end in its value.
pub fn stored_state(bytes: &[u8], expire_at_ms: Option<i64>) -> Result<FixedState, RlError> {
    let (count, expire_at_ms, blocked_until) =
        read_state(bytes, expire_at_ms, STATE_NAME, stored_count)?;
    Ok(FixedState {
        count,
        expire_at_ms,
        blocked_until,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> FixedRequest {
        FixedRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        }
    }

    /// Runs `decide` and stores the write, as the host does.
    fn call(state: &mut Option<FixedState>, r: &FixedRequest, now: i64) -> Outcome<StringWrite> {
        let out = decide(r, *state, now);
        if let Some(w) = out.write {
            *state = Some(FixedState {
                count: w.value,
                expire_at_ms: Some(w.expire_at_ms),
                blocked_until: None,
            });
        }
        out
    }

    #[test]
    fn table_of_requests_with_explicit_times() {
        // limit 3 per 1000 ms. Rows: (now, cost, reply, stored expiry after).
        let rows: &[(i64, u64, [i64; 4], Option<i64>)] = &[
            (10_000, 1, [1, 2, 0, 1000], Some(11_000)),
            (10_400, 1, [1, 1, 0, 600], Some(11_000)),
            // cost 2 does not fit: denied, nothing changes
            (10_500, 2, [0, 1, 500, 500], Some(11_000)),
            (10_999, 1, [1, 0, 0, 1], Some(11_000)),
            (10_999, 1, [0, 0, 1, 1], Some(11_000)),
            // the window ends at 11_000: a new one starts there
            (11_000, 3, [1, 0, 0, 1000], Some(12_000)),
            (11_500, 1, [0, 0, 500, 500], Some(12_000)),
            (50_000, 1, [1, 2, 0, 1000], Some(51_000)),
        ];
        let mut state = None;
        for &(now, cost, want, expiry) in rows {
            let out = call(&mut state, &req(3, 1000, cost), now);
            assert_eq!(out.decision.to_reply(), want, "at {now} cost {cost}");
            assert_eq!(state.and_then(|s| s.expire_at_ms), expiry, "at {now}");
        }
    }

    #[test]
    fn denied_request_writes_nothing() {
        let full = Some(FixedState {
            count: 5,
            expire_at_ms: Some(2_000),
            blocked_until: None,
        });
        let out = decide(&req(5, 1000, 1), full, 1_500);
        assert_eq!(out.write, None);
        assert_eq!(out.decision.to_reply(), [0, 0, 500, 500]);
    }

    #[test]
    fn a_counter_without_ttl_or_past_its_end_starts_a_new_window() {
        let r = req(5, 1000, 1);
        for expire_at_ms in [None, Some(1_000), Some(999)] {
            let state = Some(FixedState {
                count: 5,
                expire_at_ms,
                blocked_until: None,
            });
            let out = decide(&r, state, 1_000);
            assert_eq!(
                out.write,
                Some(StringWrite::counter(1, 2_000)),
                "{expire_at_ms:?}"
            );
        }
    }

    #[test]
    fn a_lowered_limit_denies_without_underflow() {
        let state = Some(FixedState {
            count: 8,
            expire_at_ms: Some(5_000),
            blocked_until: None,
        });
        let out = decide(&req(3, 1000, 1), state, 4_000);
        assert_eq!(out.decision.to_reply(), [0, 0, 1000, 1000]);
    }

    #[test]
    fn a_counter_without_ttl_is_refused() {
        let foreign = Err(RlError::ForeignString {
            expected: STATE_NAME,
        });
        assert_eq!(stored_state(b"5", None), foreign);
        assert_eq!(stored_state(b"x", Some(9)), foreign);
        let ok = stored_state(b"5", Some(9)).unwrap();
        assert_eq!((ok.count, ok.expire_at_ms), (5, Some(9)));
    }

    #[test]
    fn stored_counters_are_read_or_refused() {
        assert_eq!(stored_count(b"0"), Ok(0));
        assert_eq!(stored_count(b"1000000000000000"), Ok(MAX_LIMIT));
        for bad in [
            &b"1000000000000001"[..],
            b"1750000000123456",
            b"-1",
            b"x",
            b"",
        ] {
            assert_eq!(
                stored_count(bad),
                Err(RlError::ForeignString {
                    expected: STATE_NAME
                }),
                "{bad:?}"
            );
        }
    }

    proptest! {
        /// Every window (from its first admission, `window` ms long) admits
        /// at most `limit`; a request is admitted whenever it fits; a
        /// denial's wait is exact.
        #[test]
        fn never_more_than_limit_per_window(
            limit in 1u64..8,
            window in 1u64..60,
            steps in proptest::collection::vec((0i64..25, 1u64..8), 1..150),
        ) {
            let mut state = None;
            let mut window_start: Option<i64> = None;
            let mut in_window = 0u64;
            let mut now = 1_000;
            for (dt, cost) in steps {
                now += dt;
                let r = req(limit, window, cost.min(limit));
                if window_start.is_some_and(|s| now >= s + window as i64) {
                    window_start = None;
                    in_window = 0;
                }
                let before = state;
                let out = call(&mut state, &r, now);
                prop_assert_eq!(out.decision.allowed, in_window + r.cost <= limit);
                if out.decision.allowed {
                    window_start.get_or_insert(now);
                    in_window += r.cost;
                    prop_assert!(in_window <= limit);
                } else {
                    prop_assert_eq!(state, before);
                    let wait = out.decision.retry_after_ms as i64;
                    prop_assert!(wait >= 1);
                    prop_assert!(decide(&r, before, now + wait).decision.allowed);
                    prop_assert!(!decide(&r, before, now + wait - 1).decision.allowed);
                }
            }
        }
    }
}

/// Time anomalies with explicit clocks: a clock stepping back, the largest
/// windows, `now` at the integer limits.
#[cfg(test)]
mod time_anomalies {
    use super::*;
    use crate::core::fixed::request::MAX_WINDOW_MS;
    use proptest::prelude::*;

    #[test]
    fn now_at_the_integer_limits_does_not_panic_or_over_admit() {
        for window_ms in [1, 1000, MAX_WINDOW_MS] {
            for now in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX] {
                let r = FixedRequest {
                    limit: MAX_LIMIT,
                    window_ms,
                    cost: MAX_LIMIT,
                    block_ms: None,
                };
                let out = decide(&r, None, now);
                assert!(out.decision.allowed);
                let w = out.write.unwrap();
                assert!(w.expire_at_ms >= now, "{now}");
                let state = Some(FixedState {
                    count: w.value,
                    expire_at_ms: Some(w.expire_at_ms),
                    blocked_until: None,
                });
                let again = decide(&FixedRequest { cost: 1, ..r }, state, now);
                if w.expire_at_ms > now {
                    assert!(!again.decision.allowed, "{now}");
                    assert!(again.decision.retry_after_ms >= 1);
                }
                assert!(again.decision.to_reply().iter().all(|&v| v >= 0));
            }
        }
    }

    #[test]
    fn a_clock_stepping_back_keeps_the_window_and_its_count() {
        let r = FixedRequest {
            limit: 2,
            window_ms: 1000,
            cost: 1,
            block_ms: None,
        };
        let mut state = None;
        for (now, allowed) in [(5_000, true), (2_000, true), (2_001, false), (5_999, false)] {
            let out = decide(&r, state, now);
            assert_eq!(out.decision.allowed, allowed, "at {now}");
            if let Some(w) = out.write {
                // The window's end stays where the first admission put it.
                assert_eq!(w.expire_at_ms, 6_000);
                state = Some(FixedState {
                    count: w.value,
                    expire_at_ms: Some(w.expire_at_ms),
                    blocked_until: None,
                });
            } else {
                assert_eq!(out.decision.retry_after_ms, (6_000 - now) as u64);
            }
        }
    }

    proptest! {
        /// A clock that steps back now and then (by up to 5 s) and
        /// otherwise runs on, checked in real time: a window (the
        /// admissions sharing one stored end) admits at most `limit`, and
        /// lasts at least `window` real ms (its end stays where the first
        /// admission put it, however far back the clock steps), so no
        /// window-length interval holds more than the `2 * limit` of a
        /// boundary burst; a denial's wait is at least 1 ms; every reply
        /// field is non-negative.
        #[test]
        fn a_clock_stepping_back_never_over_admits(
            limit in 1u64..6,
            window in 1u64..2_000,
            steps in proptest::collection::vec(
                (0i64..1_500, 0u8..6, 1i64..5_000, 1u64..6), 1..120),
        ) {
            let mut state: Option<FixedState> = None;
            let (mut real, mut offset) = (100_000i64, 0i64);
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            // The running window: its stored end, its first admission's
            // real time, and the units it admitted.
            let mut current: Option<(i64, i64, u64)> = None;
            for (dt, back_pick, back, cost) in steps {
                real += dt;
                if back_pick == 0 {
                    offset += back;
                }
                let now = real - offset;
                let r = FixedRequest { limit, window_ms: window, cost: cost.min(limit), block_ms: None };
                let out = decide(&r, state, now);
                prop_assert!(out.decision.to_reply().iter().all(|&v| v >= 0));
                match out.write {
                    Some(w) => {
                        prop_assert!(w.expire_at_ms > now);
                        match current {
                            Some((end, start, units)) if end == w.expire_at_ms => {
                                current = Some((end, start, units + r.cost));
                            }
                            previous => {
                                if let Some((_, start, _)) = previous {
                                    prop_assert!(
                                        real >= start + window as i64,
                                        "a window began at {} real, the next at {}", start, real
                                    );
                                }
                                current = Some((w.expire_at_ms, real, r.cost));
                            }
                        }
                        let (_, _, units) = current.unwrap();
                        prop_assert!(units <= limit, "{} in one window", units);
                        admitted.push((real, r.cost));
                        let in_window: u64 = admitted.iter()
                            .filter(|&&(t, _)| t > real - window as i64)
                            .map(|&(_, c)| c).sum();
                        prop_assert!(in_window <= 2 * limit, "{} in the window at {}", in_window, real);
                        state = Some(FixedState { count: w.value, expire_at_ms: Some(w.expire_at_ms), blocked_until: None });
                    }
                    None => prop_assert!(out.decision.retry_after_ms >= 1),
                }
            }
        }
    }

    /// Found by `make fuzz` (libFuzzer): a stored expiry far in the future
    /// read with a clock far in the past overflowed `end - now`.
    #[test]
    fn fuzz_regression_stored_expiry_far_from_now() {
        let r = FixedRequest {
            limit: 8,
            window_ms: 13,
            cost: 1,
            block_ms: None,
        };
        let state = Some(FixedState {
            count: 9,
            expire_at_ms: Some(4_260_291_139_624_633_399),
            blocked_until: None,
        });
        let out = decide(&r, state, -7_478_003_159_226_252_233);
        assert!(!out.decision.allowed);
        assert_eq!(out.write, None);
        assert_eq!(out.decision.retry_after_ms, i64::MAX as u64);
        assert!(out.decision.to_reply().iter().all(|&v| v >= 0));
    }
}

//! Time anomalies with explicit clocks: a clock stepping back and forth,
//! the largest windows, `now` at the integer limits. No over-admission, no
//! panic, every wait at least 1 ms when denied.

use super::decide::*;
use super::log::{member, MAX_NOW_MS};
use super::request::SlideRequest;
use crate::core::args::MAX_WINDOW_MS;
use crate::core::error::RlError;
use crate::core::slide::log::MemoryLog;
use proptest::prelude::*;

fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
    SlideRequest {
        limit,
        window_ms,
        cost,
        block_ms: None,
    }
}

#[test]
fn now_at_the_integer_limits_is_an_error_or_a_sane_decision() {
    for window in [1, 1000, MAX_WINDOW_MS] {
        for now in [
            i64::MIN,
            i64::MIN + 1,
            -1,
            0,
            1,
            MAX_NOW_MS - 1,
            MAX_NOW_MS,
            MAX_NOW_MS + 1,
            i64::MAX - 1,
            i64::MAX,
        ] {
            let mut log = MemoryLog::new();
            // A full log at once (the largest limit would take the
            // in-memory log a long time to fill; the clock is the point).
            let r = req(3, window, 3);
            match decide(&mut log, &r, now) {
                Ok(out) => {
                    assert!(out.decision.allowed, "{now}");
                    let a = out.write.unwrap();
                    assert_eq!(a.expiry.needed_ms, now + window as i64);
                    log.apply(&a);
                    let denied = decide(&mut log, &req(3, window, 1), now).unwrap();
                    assert!(!denied.decision.allowed);
                    assert_eq!(denied.decision.retry_after_ms, window);
                }
                Err(e) => assert_eq!(e, RlError::Internal("server clock out of range")),
            }
        }
    }
}

#[test]
fn entries_far_in_the_future_count_and_waits_stay_positive() {
    // Entries written at the latest accepted score, read with a clock
    // near zero: they count, the wait reaches them, nothing overflows.
    let mut log = MemoryLog::new();
    log.insert(MAX_NOW_MS, member(MAX_NOW_MS, 0));
    let out = decide(&mut log, &req(1, MAX_WINDOW_MS, 1), 0).unwrap();
    assert!(!out.decision.allowed);
    let wait = (MAX_NOW_MS + MAX_WINDOW_MS as i64) as u64;
    assert_eq!(out.decision.retry_after_ms, wait);
    assert_eq!(out.decision.reset_after_ms, wait);
    assert!(out.decision.to_reply().iter().all(|&v| v >= 0));
}

proptest! {
    /// A clock that steps back now and then (by up to 5 s) and
    /// otherwise runs on: in real time, no window-length interval ever
    /// holds more than `limit` admitted units; a denial's wait is at
    /// least 1 ms; every reply field is non-negative; members stay
    /// unique. (A clock jumping *forward* looks like time passing to
    /// any clock-based limiter, and is not tested here.)
    #[test]
    fn a_clock_stepping_back_never_over_admits(
        limit in 1u64..6,
        window in 1u64..2_000,
        steps in proptest::collection::vec(
            (0i64..1_500, 0u8..6, 1i64..5_000, 1u64..6), 1..120),
    ) {
        let mut log = MemoryLog::new();
        let (mut real, mut offset) = (100_000i64, 0i64);
        let mut admitted: Vec<(i64, u64)> = Vec::new();
        for (dt, back_pick, back, cost) in steps {
            real += dt;
            if back_pick == 0 {
                offset += back;
            }
            let now = real - offset;
            let r = req(limit, window, cost.min(limit));
            let out = decide(&mut log, &r, now).unwrap();
            prop_assert!(out.decision.to_reply().iter().all(|&v| v >= 0));
            match &out.write {
                Some(a) => {
                    log.apply(a);
                    admitted.push((real, r.cost));
                    let in_window: u64 = admitted.iter()
                        .filter(|&&(t, _)| t > real - window as i64)
                        .map(|&(_, c)| c).sum();
                    prop_assert!(in_window <= limit, "{} in the window at {}", in_window, real);
                    prop_assert!(a.expiry.needed_ms > now);
                }
                None => prop_assert!(out.decision.retry_after_ms >= 1),
            }
        }
        let mut members: Vec<i64> = log.entries().iter().map(|&(_, m)| m).collect();
        let n = members.len();
        members.sort_unstable();
        members.dedup();
        prop_assert_eq!(members.len(), n, "members stay unique");
    }
}

//! The exact sliding-window log.
//!
//! Every admitted unit of cost is one entry whose score is its admission time
//! in ms. At `now`, entries with score `<= now - window` have left the window.
//! The log is read through [`LogView`], so the same decision runs over a real
//! sorted set (host) or over [`MemoryLog`] (tests, benches) with any `now`.

use super::decision::Decision;
use super::error::RlError;
use super::expiry::Expiry;
use super::slide_request::SlideRequest;

/// Members of one millisecond are numbered `0..MEMBERS_PER_MS`; a member is
/// `score * MEMBERS_PER_MS + n`. It is an integer, so a listpack stores it in
/// at most 9 bytes, and it is unique across scores by construction.
pub const MEMBERS_PER_MS: i64 = 1_000_000;

/// The member for the `n`-th entry admitted at `score`.
pub fn member(score: i64, n: i64) -> i64 {
    score * MEMBERS_PER_MS + n
}

/// Read access to a log, in score order. Implementations answer from the
/// stored data only; they never write.
pub trait LogView {
    /// Number of entries, including those that have left the window.
    fn entry_count(&mut self) -> u64;
    /// Number of entries with score `<= score`.
    fn count_through(&mut self, score: i64) -> u64;
    /// Score of the `n`-th (1-based) entry with score `> after`.
    fn nth_after(&mut self, after: i64, n: u64) -> Option<i64>;
    /// The last entry, if its score is `>= min`: highest score and, among
    /// equal scores, the greatest member; the member only if it is an
    /// integer. New entries are recorded at this score or later, so this
    /// also tells which members are taken. `i64::MIN` asks for the last
    /// entry whatever its score.
    fn newest_from(&mut self, min: i64) -> Option<(i64, Option<i64>)>;
}

/// What an admitted request writes. A denied request writes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Remove every entry with score `<= evict_through` (there is at least one).
    pub evict_through: Option<i64>,
    /// Score of the new entries: `now`, or the newest entry's score if the
    /// clock stepped back.
    pub at: i64,
    /// First candidate member; the new entries take the next free members.
    pub first_member: i64,
    /// How many entries to add (the request's cost).
    pub count: u64,
    /// The key must live until the newest entry leaves the window.
    pub expiry: Expiry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlideOutcome {
    pub decision: Decision,
    pub admission: Option<Admission>,
}

/// Latest score rl accepts in a log (about year 33,658). A key holding
/// later scores (`+inf`, `1e300`) was not written by rl; refusing it keeps
/// every sum below exact and far from overflow.
pub const MAX_SCORE_MS: i64 = 1_000_000_000_000_000;

/// Latest `now` for which members (`now * MEMBERS_PER_MS + n`) fit in i64.
pub const MAX_NOW_MS: i64 = i64::MAX / MEMBERS_PER_MS - 1;

/// Decides `req` at `now` against the log. Pure: the log is only read, and
/// every check that can fail happens here, before anything is written.
pub fn decide(
    log: &mut impl LogView,
    req: &SlideRequest,
    now: i64,
) -> Result<SlideOutcome, RlError> {
    if !(0..=MAX_NOW_MS).contains(&now) {
        return Err(RlError::Internal("server clock out of range"));
    }
    // Only an entry at `now` or later (same ms, a clock that stepped back,
    // or a foreign `+inf`) changes where new entries go and how they are
    // numbered. Usually there is none, and asking for just that skips
    // reading the member.
    let recent = log.newest_from(now);
    if recent.is_some_and(|(score, _)| score > MAX_SCORE_MS) {
        return Err(RlError::ForeignEntries);
    }
    let window = req.window_ms as i64;
    let cutoff = now - window;
    let stale = log.count_through(cutoff);
    // Entries newer than `now` (the clock stepped back) still count: never over-admit.
    let held = log.entry_count() - stale;

    if held + req.cost <= req.limit {
        // Recorded at `now`, or at the newest entry's time if the clock
        // stepped back: an entry is never older than one admitted before
        // it, so a clock stepping back and then forward again cannot make
        // it leave the window early.
        let at = recent.map_or(now, |(s, _)| s.max(now));
        // The newest entry is the last member of `at` (same-ms members sort
        // by their number), so it tells which numbers are taken.
        let taken = match recent {
            Some((score, Some(m))) if score == at && m.div_euclid(MEMBERS_PER_MS) == at => {
                m.rem_euclid(MEMBERS_PER_MS) + 1
            }
            _ => 0,
        };
        if taken + req.cost as i64 > MEMBERS_PER_MS {
            return Err(RlError::ForeignEntries);
        }
        return Ok(SlideOutcome {
            decision: Decision {
                allowed: true,
                remaining: req.limit - held - req.cost,
                retry_after_ms: 0,
                reset_after_ms: (at + window - now) as u64,
            },
            admission: Some(Admission {
                evict_through: (stale > 0).then_some(cutoff),
                at,
                first_member: member(at, taken),
                count: req.cost,
                expiry: Expiry::new(at + window, window),
            }),
        });
    }

    // Denied: the request fits once the `need` oldest in-window entries have
    // left, i.e. when the `need`-th of them reaches `score + window`. Waiting
    // exactly that long is enough and one ms less is not.
    let need = held + req.cost - req.limit;
    let retry_after_ms = log
        .nth_after(cutoff, need)
        .map_or(0, |s| (s + window - now).max(1) as u64);
    let newest = match recent {
        Some(entry) => Some(entry),
        None => log.newest_from(i64::MIN),
    };
    let reset_after_ms = newest.map_or(0, |(s, _)| (s + window - now).max(0) as u64);
    Ok(SlideOutcome {
        decision: Decision {
            allowed: false,
            remaining: req.limit.saturating_sub(held),
            retry_after_ms,
            reset_after_ms,
        },
        admission: None,
    })
}

/// An in-memory log with sorted-set semantics (order by score, then member).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryLog {
    entries: Vec<(i64, i64)>,
}

impl MemoryLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn entries(&self) -> &[(i64, i64)] {
        &self.entries
    }

    /// Applies an admission the way the host does on the sorted set.
    pub fn apply(&mut self, a: &Admission) {
        if let Some(cutoff) = a.evict_through {
            self.entries.retain(|&(s, _)| s > cutoff);
        }
        let mut m = a.first_member;
        for _ in 0..a.count {
            while self.entries.iter().any(|&(_, x)| x == m) {
                m += 1;
            }
            self.entries.push((a.at, m));
            m += 1;
        }
        self.entries.sort_unstable();
    }
}

impl LogView for MemoryLog {
    fn entry_count(&mut self) -> u64 {
        self.entries.len() as u64
    }
    fn count_through(&mut self, score: i64) -> u64 {
        self.entries.partition_point(|&(s, _)| s <= score) as u64
    }
    fn nth_after(&mut self, after: i64, n: u64) -> Option<i64> {
        let start = self.entries.partition_point(|&(s, _)| s <= after);
        let idx = start + usize::try_from(n).ok()?.checked_sub(1)?;
        self.entries.get(idx).map(|&(s, _)| s)
    }
    fn newest_from(&mut self, min: i64) -> Option<(i64, Option<i64>)> {
        self.entries
            .last()
            .filter(|&&(s, _)| s >= min)
            .map(|&(s, m)| (s, Some(m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::slide_request::{MAX_LIMIT, MAX_WINDOW_MS};
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
        SlideRequest {
            limit,
            window_ms,
            cost,
        }
    }

    /// Runs `decide` and applies the admission, as the host does.
    fn call(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> [i64; 4] {
        let out = decide(log, r, now).unwrap();
        if let Some(a) = &out.admission {
            log.apply(a);
        }
        out.decision.to_reply()
    }

    #[test]
    fn table_of_requests_with_explicit_times() {
        // limit 3 per 1000 ms; each row is (now, cost, expected reply).
        let r = |cost| req(3, 1000, cost);
        let rows: &[(i64, u64, [i64; 4])] = &[
            (10_000, 1, [1, 2, 0, 1000]),
            (10_100, 1, [1, 1, 0, 1000]),
            (10_200, 1, [1, 0, 0, 1000]),
            // full: the oldest entry (10_000) leaves at 11_000
            (10_300, 1, [0, 0, 700, 900]),
            (10_999, 1, [0, 0, 1, 201]),
            (11_000, 1, [1, 0, 0, 1000]),
            // cost 2 needs the two oldest (10_100, 10_200) gone: at 11_200
            (11_050, 2, [0, 0, 150, 950]),
            (11_200, 2, [1, 0, 0, 1000]),
            // long idle gap: everything has left
            (50_000, 3, [1, 0, 0, 1000]),
        ];
        let mut log = MemoryLog::new();
        for &(now, cost, want) in rows {
            assert_eq!(call(&mut log, &r(cost), now), want, "at {now} cost {cost}");
        }
    }

    #[test]
    fn same_millisecond_entries_get_distinct_members() {
        let mut log = MemoryLog::new();
        for _ in 0..5 {
            assert_eq!(call(&mut log, &req(10, 1000, 2), 7)[0], 1);
        }
        let members: Vec<i64> = log.entries().iter().map(|&(_, m)| m).collect();
        assert_eq!(members, (0..10).map(|n| member(7, n)).collect::<Vec<_>>());
    }

    #[test]
    fn denied_request_writes_nothing() {
        let mut log = MemoryLog::new();
        call(&mut log, &req(1, 1000, 1), 0);
        let out = decide(&mut log, &req(1, 1000, 1), 500).unwrap();
        assert!(!out.decision.allowed);
        assert_eq!(out.admission, None);
    }

    #[test]
    fn eviction_happens_only_with_stale_entries() {
        let mut log = MemoryLog::new();
        let a = decide(&mut log, &req(5, 100, 1), 0)
            .unwrap()
            .admission
            .unwrap();
        assert_eq!(a.evict_through, None);
        log.apply(&a);
        let a = decide(&mut log, &req(5, 100, 1), 100)
            .unwrap()
            .admission
            .unwrap();
        assert_eq!(a.evict_through, Some(0));
        assert_eq!(a.expiry.needed_ms, 200);
    }

    #[test]
    fn clock_stepping_back_never_over_admits() {
        let mut log = MemoryLog::new();
        let r = req(2, 1000, 1);
        assert_eq!(call(&mut log, &r, 5_000), [1, 1, 0, 1000]);
        assert_eq!(call(&mut log, &r, 5_001), [1, 0, 0, 1000]);
        // The clock jumps back 3 s: the future entries still count, and the
        // wait is measured to when they leave as seen from the new `now`.
        let back = call(&mut log, &r, 2_000);
        assert_eq!(back, [0, 0, 4_000, 4_001]);
        // Admitted at 2_000 later on, the TTL still covers the newest entry.
        let mut log2 = MemoryLog::new();
        call(&mut log2, &req(5, 1000, 1), 5_000);
        let a = decide(&mut log2, &req(5, 1000, 1), 2_000)
            .unwrap()
            .admission
            .unwrap();
        assert_eq!(a.expiry.needed_ms, 6_000);
    }

    #[test]
    fn clock_stepping_back_then_forward_never_over_admits() {
        // Three calls in quick real time; the clock reads 5_000, 3_000, 4_500.
        let r = req(2, 1000, 1);
        let mut log = MemoryLog::new();
        assert_eq!(call(&mut log, &r, 5_000)[0], 1);
        // Recorded at 5_000, not 3_000: it cannot leave before the first.
        assert_eq!(call(&mut log, &r, 3_000), [1, 0, 0, 3_000]);
        assert!(log.entries().iter().all(|&(s, _)| s == 5_000));
        // Had it been recorded at 3_000, it would have left by 4_500 and a
        // third request would pass: two is the limit.
        assert_eq!(call(&mut log, &r, 4_500)[0], 0);
    }

    #[test]
    fn extreme_times_do_not_panic() {
        let r = req(MAX_LIMIT, MAX_WINDOW_MS, 1);
        let mut log = MemoryLog::new();
        for now in [0, 1, 9_000_000_000_000, MAX_NOW_MS] {
            let out = decide(&mut log, &r, now).unwrap();
            assert!(out.decision.allowed);
            log.apply(&out.admission.unwrap());
        }
        let clock_error = Err(RlError::Internal("server clock out of range"));
        for now in [-5, MAX_NOW_MS + 1, i64::MAX, i64::MIN] {
            assert_eq!(decide(&mut log, &r, now), clock_error, "now {now}");
        }
    }

    #[test]
    fn foreign_scores_are_refused_before_any_write() {
        // A score rl could not have written (+inf reads as i64::MAX).
        for score in [i64::MAX, MAX_SCORE_MS + 1] {
            let mut log = MemoryLog::new();
            log.entries.push((score, 1));
            for r in [req(5, 1000, 1), req(1, 1000, 1)] {
                assert_eq!(decide(&mut log, &r, 1_000), Err(RlError::ForeignEntries));
            }
        }
        // Members of `now` that leave no room for this request's members.
        let mut log = MemoryLog::new();
        log.entries.push((1_000, member(1_000, MEMBERS_PER_MS - 1)));
        assert_eq!(
            decide(&mut log, &req(5, 1000, 2), 1_000),
            Err(RlError::ForeignEntries)
        );
    }

    proptest! {
        /// For random request sequences: every window-length interval holds at
        /// most `limit` admitted cost, a request is admitted whenever it fits,
        /// and a denial's `retry_after_ms` is exact.
        #[test]
        fn admits_exactly_what_fits(
            limit in 1u64..8,
            window in 1u64..50,
            steps in proptest::collection::vec((0i64..20, 1u64..8), 1..120),
        ) {
            let mut log = MemoryLog::new();
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            let mut now = 1_000;
            for (dt, cost) in steps {
                now += dt;
                let cost = cost.min(limit);
                let r = req(limit, window, cost);
                let in_window: u64 = admitted
                    .iter()
                    .filter(|&&(t, _)| t > now - window as i64)
                    .map(|&(_, c)| c)
                    .sum();
                let out = decide(&mut log, &r, now).unwrap();
                prop_assert_eq!(out.decision.allowed, in_window + cost <= limit);
                if let Some(a) = &out.admission {
                    log.apply(a);
                    admitted.push((now, cost));
                } else {
                    // Waiting retry_after_ms (and no less) makes it fit.
                    let wait = out.decision.retry_after_ms as i64;
                    prop_assert!(wait >= 1);
                    let fits_at = |t: i64| {
                        admitted.iter().filter(|&&(s, _)| s > t - window as i64)
                            .map(|&(_, c)| c).sum::<u64>() + cost <= limit
                    };
                    prop_assert!(fits_at(now + wait));
                    prop_assert!(!fits_at(now + wait - 1));
                }
                let mut members: Vec<i64> = log.entries().iter().map(|&(_, m)| m).collect();
                members.sort_unstable();
                members.dedup();
                prop_assert_eq!(members.len(), log.entries().len());
            }
            // No interval (t - window, t] ever held more than `limit`.
            for &(t, _) in &admitted {
                let sum: u64 = admitted
                    .iter()
                    .filter(|&&(s, _)| s > t - window as i64 && s <= t)
                    .map(|&(_, c)| c)
                    .sum();
                prop_assert!(sum <= limit);
            }
        }
    }
}

/// Time anomalies with explicit clocks: a clock stepping back and forth,
/// the largest windows, `now` at the integer limits. No over-admission, no
/// panic, every wait at least 1 ms when denied.
#[cfg(test)]
mod time_anomalies {
    use super::*;
    use crate::core::slide_request::MAX_WINDOW_MS;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
        SlideRequest {
            limit,
            window_ms,
            cost,
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
                        let a = out.admission.unwrap();
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
        log.entries.push((MAX_SCORE_MS, 0));
        let out = decide(&mut log, &req(1, MAX_WINDOW_MS, 1), 0).unwrap();
        assert!(!out.decision.allowed);
        let wait = (MAX_SCORE_MS + MAX_WINDOW_MS as i64) as u64;
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
                match &out.admission {
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
}

//! `decide`'s table and property tests: explicit times, no server.

use super::*;
use crate::core::args::MAX_WINDOW_MS;
use crate::core::slide::log::{MemoryLog, Oldest};
use crate::core::slide::request::MAX_COST;
use crate::core::slide::request::MAX_LIMIT;
use proptest::prelude::*;

fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
    SlideRequest {
        limit,
        window_ms,
        cost,
        block_ms: None,
    }
}

/// Runs `decide` and applies the admission, as the host does.
fn call(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> [i64; 4] {
    let out = decide(log, r, now).unwrap();
    if let Some(a) = &out.write {
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
    assert_eq!(out.write, None);
}

#[test]
fn eviction_happens_only_with_stale_entries() {
    let mut log = MemoryLog::new();
    let a = decide(&mut log, &req(5, 100, 1), 0).unwrap().write.unwrap();
    assert_eq!(a.evict, 0);
    log.apply(&a);
    let a = decide(&mut log, &req(5, 100, 1), 100)
        .unwrap()
        .write
        .unwrap();
    assert_eq!(a.evict, 1);
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
        .write
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
        log.apply(&out.write.unwrap());
    }
    let clock_error = Err(RlError::Internal("server clock out of range"));
    for now in [-5, MAX_NOW_MS + 1, i64::MAX, i64::MIN] {
        assert_eq!(decide(&mut log, &r, now), clock_error, "now {now}");
    }
}

#[test]
fn foreign_scores_are_refused_before_any_write() {
    // A score rl could not have written (+inf reads as i64::MAX, a
    // fraction as i64::MIN).
    for score in [i64::MAX, MAX_NOW_MS + 1, i64::MIN, -1] {
        let mut log = MemoryLog::new();
        log.insert(score, 1);
        for r in [req(5, 1000, 1), req(1, 1000, 1)] {
            assert_eq!(decide(&mut log, &r, 1_000), Err(RlError::ForeignZset));
        }
    }
    // Members of `now` that leave no room for this request's members:
    // the millisecond is full, the next one has room.
    let mut log = MemoryLog::new();
    log.insert(1_000, member(1_000, MEMBERS_PER_MS - 2));
    assert_eq!(
        decide(&mut log, &req(5, 1000, 2), 1_000),
        Err(RlError::MillisecondFull {
            at: 1_000,
            left: 1,
            cost: 2,
            retry_ms: 1
        })
    );
    assert_eq!(
        decide(&mut log, &req(5, 1000, 1), 1_000).map(|o| o.decision.allowed),
        Ok(true)
    );
    assert_eq!(
        decide(&mut log, &req(5, 1000, 2), 1_001).map(|o| o.decision.allowed),
        Ok(true)
    );
}

/// Members that do not match their score, wherever the call reads them:
/// the newest, the oldest, or one it would remove. Refused, nothing to
/// write.
#[test]
fn members_rl_did_not_number_are_refused() {
    let r = req(10, 1000, 1);
    let own = |s: i64| member(s, 0);
    let cases: &[&[(i64, i64)]] = &[
        // ZADD myz 1 a 2 b 3 c: strings read as no member at all.
        &[(1, i64::MIN)],
        // An integer member that is not score * 10^6 + n.
        &[(5_000, 7)],
        // The newest is foreign, the rest are rl's.
        &[(4_000, own(4_000)), (5_000, 12)],
        // The oldest is foreign (stale or not).
        &[(100, 100), (4_000, own(4_000))],
        &[(4_500, 1), (4_600, own(4_600))],
        // A stale one that would be removed, behind an rl oldest.
        &[(100, own(100)), (200, 5), (4_000, own(4_000))],
    ];
    for entries in cases {
        let mut log = MemoryLog::new();
        for &(s, m) in *entries {
            log.insert(s, m);
        }
        let log = &mut ForeignMembers(log, i64::MIN);
        assert_eq!(
            decide(log, &r, 5_000),
            Err(RlError::ForeignZset),
            "{entries:?}"
        );
    }
    // A foreign stale entry beyond this call's removal budget is not
    // read: the call is admitted, and it is refused once in reach.
    let mut log = MemoryLog::new();
    for s in [0, 1, 4_900] {
        log.insert(s, own(s));
    }
    log.insert(2, 77);
    let out = decide_within(&mut log, &r, 5_000, 2).unwrap();
    assert!(matches!(out.write, Some(LogWrite::Admit(a)) if a.evict == 2));
    assert_eq!(
        decide_within(&mut log, &r, 5_000, 3),
        Err(RlError::ForeignZset)
    );
}

/// A denial reads the entry whose leaving ends its wait: a score rl
/// could not have written there (a fraction, read as `i64::MIN`) is
/// refused, where it used to wrap into a wait of about 2^63 ms.
#[test]
fn a_foreign_score_where_the_wait_is_read_is_refused() {
    struct FractionalWait(MemoryLog);
    impl LogView for FractionalWait {
        fn entry_count(&mut self) -> u64 {
            self.0.entry_count()
        }
        fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest {
            self.0.oldest_through(cutoff, max_read)
        }
        fn nth_after(&mut self, _: i64, _: u64, _: u64) -> Option<i64> {
            Some(i64::MIN)
        }
        fn newest(&mut self) -> Option<Entry> {
            self.0.newest()
        }
        fn newest_after(&mut self, after: i64, n: u64) -> smallvec::SmallVec<[Entry; 4]> {
            self.0.newest_after(after, n)
        }
    }
    let mut log = MemoryLog::new();
    for s in [4_000, 4_500, 4_900] {
        log.insert(s, member(s, 0));
    }
    let mut log = FractionalWait(log);
    assert_eq!(
        decide(&mut log, &req(3, 1000, 1), 4_950),
        Err(RlError::ForeignZset)
    );
    // Admitted, nothing is read by rank: the same log admits.
    assert!(
        decide(&mut log, &req(4, 1000, 1), 4_950)
            .unwrap()
            .decision
            .allowed
    );
}

/// A log whose member `sentinel` reads as a string (no integer).
struct ForeignMembers(MemoryLog, i64);

impl ForeignMembers {
    fn fix(&self, e: Entry) -> Entry {
        Entry {
            score: e.score,
            member: e.member.filter(|&m| m != self.1),
        }
    }
}

impl LogView for ForeignMembers {
    fn entry_count(&mut self) -> u64 {
        self.0.entry_count()
    }
    fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest {
        let mut o = self.0.oldest_through(cutoff, max_read);
        for e in o.entries.iter_mut() {
            *e = self.fix(*e);
        }
        o
    }
    fn nth_after(&mut self, after: i64, rank: u64, n: u64) -> Option<i64> {
        self.0.nth_after(after, rank, n)
    }
    fn newest(&mut self) -> Option<Entry> {
        self.0.newest().map(|e| self.fix(e))
    }
    fn newest_after(&mut self, after: i64, n: u64) -> smallvec::SmallVec<[Entry; 4]> {
        let mut entries = self.0.newest_after(after, n);
        for e in entries.iter_mut() {
            *e = self.fix(*e);
        }
        entries
    }
}

/// After a burst of `limit` and a pause of a window, the backlog of
/// stale entries is removed a budget at a time; every decision on the
/// way stays exact (stale entries never count).
#[test]
fn a_backlog_drains_in_bounded_steps_and_never_counts() {
    let limit = 2_000;
    let mut log = MemoryLog::new();
    for i in 0..(limit / MAX_COST) {
        let out = decide(&mut log, &req(limit, 60_000, MAX_COST), i as i64).unwrap();
        log.apply(&out.write.unwrap());
    }
    assert_eq!(log.entries().len() as u64, limit);
    let mut now = 60_000 + limit as i64;
    let mut calls = 0;
    while log.entries().len() as u64 > 1 + calls {
        let out = decide(&mut log, &req(limit, 60_000, 1), now).unwrap();
        assert_eq!(
            out.decision.remaining,
            limit - 1 - calls,
            "only this call's own entries count"
        );
        let a = out.write.unwrap();
        assert!(a.evict <= EVICT_PER_CALL);
        log.apply(&a);
        calls += 1;
        now += 1;
    }
    assert_eq!(calls, limit.div_ceil(EVICT_PER_CALL));
    assert_eq!(evict_budget(1, Shares::ONE), EVICT_PER_CALL);
    assert_eq!(evict_budget(MAX_COST, Shares::ONE), EVICT_PER_CALL);
}

/// RL.ALL's SLIDE clauses remove at most EVICT_PER_CALL together, and
/// each more than it inserts; under a bound below their costs (as a
/// measurement builds, `scripts/bench-bound.sh`), their cost + 1 each.
#[test]
fn the_clauses_share_one_budget_and_each_outpaces_its_cost() {
    let shares = |costs: &[u64]| Shares {
        slides: costs.len() as u64,
        slide_cost: costs.iter().sum(),
        buckets: 0,
    };
    for costs in [
        &[MAX_COST][..],
        &[1, 1],
        &[99, 1],
        &[93, 1, 1, 1, 1, 1, 1, 1],
        &[1; 8],
        &[12, 12, 12, 12, 12, 12, 12, 16],
    ] {
        let s = shares(costs);
        let budgets: Vec<u64> = costs.iter().map(|&c| evict_budget(c, s)).collect();
        assert!(
            budgets.iter().sum::<u64>() <= EVICT_PER_CALL,
            "{costs:?}: {budgets:?}"
        );
        for bound in [EVICT_PER_CALL, 64, 32] {
            let budgets: Vec<u64> = costs.iter().map(|&c| budget_under(bound, c, s)).collect();
            let owed = costs.iter().map(|c| c + 1).sum::<u64>();
            assert!(
                budgets.iter().sum::<u64>() <= bound.max(owed),
                "{bound}, {costs:?}: {budgets:?}"
            );
            for (c, b) in costs.iter().zip(&budgets) {
                assert!(b > c, "{bound}, {costs:?}: {budgets:?}");
            }
        }
    }
    // One log: the bound, or the cost + 1 above it.
    assert_eq!(budget_under(32, 1, Shares::ONE), 32);
    assert_eq!(budget_under(32, MAX_COST, Shares::ONE), MAX_COST + 1);
    assert_eq!(budget_under(64, 93, shares(&[93, 1])), 94);
    // 93 + 7 x 1: 108 owed, the 20 left shared as 2 each.
    assert_eq!(evict_budget(93, shares(&[93, 1, 1, 1, 1, 1, 1, 1])), 96);
    assert_eq!(evict_budget(1, shares(&[93, 1, 1, 1, 1, 1, 1, 1])), 4);
    assert_eq!(evict_budget(1, shares(&[1, 1])), 64);
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
            if let Some(a) = &out.write {
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

//! RL.SLIDE: the reply `[allowed, remaining, retry_after_ms,
//! reset_after_ms]`, and how the log is stored: one compact, unique
//! sorted-set member per admitted unit, scored by admission time, stale
//! entries evicted on admit. Time passes by `advance`: exactly on Valkey's
//! stopped clock, by sleeping on Redis.

use std::collections::{BTreeMap, HashSet};

use crate::harness::*;

#[test]
fn admits_count_remaining_down_then_deny() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Admitted at `now`, the newest entry is `now`: reset is the whole window.
        for left in (0..5).rev() {
            assert_eq!(slide(&mut c, "r", 5, 10_000), [1, left, 0, 10_000], "{f:?}");
        }
        let [allowed, remaining, retry, reset] = slide(&mut c, "r", 5, 10_000);
        assert_eq!((allowed, remaining), (0, 0), "{f:?}");
        assert!(retry > 0 && retry <= 10_000, "{f:?}: retry {retry}");
        assert!(reset > 0 && reset <= 10_000, "{f:?}: reset {reset}");
        // Only the oldest entry needs to leave, the newest is the last to go.
        assert!(retry <= reset, "{f:?}: retry {retry} > reset {reset}");
        assert_eq!(zcard(&mut c, "r"), 5, "{f:?}");
    });
}

#[test]
fn cost_consumes_several_units() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(
            slide_cost(&mut c, "c", 10, 60_000, 4),
            [1, 6, 0, 60_000],
            "{f:?}"
        );
        assert_eq!(zcard(&mut c, "c"), 4, "{f:?}: one member per unit");
        // 4 + 7 > 10: denied, nothing taken.
        let denied = slide_cost(&mut c, "c", 10, 60_000, 7);
        assert_eq!(denied[..2], [0, 6], "{f:?}");
        assert!(denied[2] > 0 && denied[2] <= 60_000, "{f:?}: {denied:?}");
        assert_eq!(zcard(&mut c, "c"), 4, "{f:?}");
        // 4 + 6 = 10 fits exactly.
        assert_eq!(
            slide_cost(&mut c, "c", 10, 60_000, 6),
            [1, 0, 0, 60_000],
            "{f:?}"
        );
        assert_eq!(zcard(&mut c, "c"), 10, "{f:?}");
        assert_eq!(slide(&mut c, "c", 10, 60_000)[..2], [0, 0], "{f:?}");
        // Lowercase option token works too.
        let v: Vec<i64> = redis::cmd("RL.SLIDE")
            .arg("c2")
            .arg(3)
            .arg(60_000)
            .arg("cost")
            .arg(3)
            .query(&mut c)
            .unwrap();
        assert_eq!(v, [1, 0, 0, 60_000], "{f:?}");
    });
}

/// On a stopped clock, a denial's `retry_after_ms` is exact: one ms less
/// and the call is still denied (a denial writes nothing, so probing is
/// free), which leaves the clock where the retry is due.
fn assert_retry_is_not_early(
    server: &Server,
    c: &mut redis::Connection,
    call: impl Fn(&mut redis::Connection) -> Reply4,
    retry: i64,
) {
    if server.clock_stopped() && retry > 1 {
        server.advance(retry as u64 - 1);
        let early = call(c);
        assert_eq!(
            (early[0], early[2]),
            (0, 1),
            "{:?}: {retry} ms is the wait, 1 ms before it: {early:?}",
            server.flavor
        );
        server.advance(1);
    } else {
        server.advance(retry as u64);
    }
}

/// Waiting exactly `retry_after_ms` and retrying is admitted. On the real
/// clock the sleep can only run long, and a longer wait can only help, so
/// this asserts no timing; on the stopped clock the wait is also not a ms
/// too long.
#[test]
fn waiting_retry_after_ms_is_enough() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (limit, window) = (2, 300);
        assert_eq!(slide(&mut c, "w", limit, window)[0], 1, "{f:?}");
        server.advance(50);
        assert_eq!(slide(&mut c, "w", limit, window)[0], 1, "{f:?}");
        // Each admitted retry fills the key again, so every round denies
        // unless the machine stalled for most of a window (then it admits,
        // which is right too; at least one denial is required below).
        let mut denials = 0;
        for round in 0..4 {
            let denied = slide(&mut c, "w", limit, window);
            if denied[0] == 1 {
                continue;
            }
            denials += 1;
            let retry = denied[2];
            assert!(
                retry > 0 && retry <= window as i64,
                "{f:?} round {round}: {denied:?}"
            );
            assert_retry_is_not_early(server, &mut c, |c| slide(c, "w", limit, window), retry);
            let again = slide(&mut c, "w", limit, window);
            assert_eq!(
                again[0], 1,
                "{f:?} round {round}: denied {denied:?}, retried after {retry} ms: {again:?}"
            );
        }
        assert!(denials > 0, "{f:?}: a full key never denied");
        if server.clock_stopped() {
            assert_eq!(denials, 4, "{f:?}: no time passed between the rounds");
        }
    });
}

#[test]
fn cost_retry_after_ms_is_enough() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Three entries at three times; a cost of 3 needs all of them gone.
        for _ in 0..3 {
            assert_eq!(slide(&mut c, "wc", 3, 300)[0], 1, "{f:?}");
            server.advance(30);
        }
        let denied = slide_cost(&mut c, "wc", 3, 300, 3);
        assert_eq!(denied[0], 0, "{f:?}: {denied:?}");
        assert!(denied[2] > 0 && denied[2] <= denied[3], "{f:?}: {denied:?}");
        if server.clock_stopped() {
            // The newest entry, 30 ms old, is the last of the three to go.
            assert_eq!(denied[2..], [270, 270], "{f:?}");
        }
        assert_retry_is_not_early(
            server,
            &mut c,
            |c| slide_cost(c, "wc", 3, 300, 3),
            denied[2],
        );
        let again = slide_cost(&mut c, "wc", 3, 300, 3);
        assert_eq!(again[0], 1, "{f:?}: after {denied:?}: {again:?}");
    });
}

#[test]
fn reset_after_ms_is_within_the_window() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let window = 5_000;
        slide_cost(&mut c, "z", 3, window, 3);
        for i in 0..5 {
            let r = slide(&mut c, "z", 3, window);
            assert_eq!(r[0], 0, "{f:?}");
            assert!(r[3] > 0 && r[3] <= window as i64, "{f:?}: {r:?}");
            if server.clock_stopped() {
                assert_eq!(r[3], window as i64 - 10 * i, "{f:?}: {r:?}");
            }
            server.advance(10);
        }
        // An empty window's reply on a fresh key: admitted, reset = window.
        assert_eq!(slide(&mut c, "fresh", 3, window), [1, 2, 0, 5_000], "{f:?}");
    });
}

#[test]
fn reply_is_four_integers_in_resp3_too() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn_resp3();
        let v: redis::Value = redis::cmd("RL.SLIDE")
            .arg("r3")
            .arg(2)
            .arg(1000)
            .query(&mut c)
            .unwrap();
        let want = redis::Value::Array(vec![
            redis::Value::Int(1),
            redis::Value::Int(1),
            redis::Value::Int(0),
            redis::Value::Int(1000),
        ]);
        assert_eq!(v, want, "{f:?}");
    });
}

/// Members of one millisecond are `score * 1_000_000 + n` (see the core's
/// sliding log, `MEMBERS_PER_MS`).
const MEMBERS_PER_MS: i64 = 1_000_000;

/// Checks the storage invariants of a whole key: every member a decimal
/// integer of at most 19 characters in its score's block, no duplicate, and
/// the members of each millisecond numbered 0, 1, 2... with no gap.
fn assert_compact_members(f: Flavor, all: &[(String, i64)]) {
    let mut seen = HashSet::new();
    let mut per_ms: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (m, score) in all {
        assert!(
            m.len() <= 19 && !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()),
            "{f:?}: member {m:?} is not a compact decimal integer"
        );
        let n: i64 = m.parse().unwrap();
        assert_eq!(n.to_string(), *m, "{f:?}: member {m:?} is not canonical");
        assert!(
            score * MEMBERS_PER_MS <= n && n < (score + 1) * MEMBERS_PER_MS,
            "{f:?}: member {n} outside the block of its score {score}"
        );
        assert!(seen.insert(n), "{f:?}: member {n} twice");
        per_ms
            .entry(*score)
            .or_default()
            .push(n - score * MEMBERS_PER_MS);
    }
    for (score, mut ns) in per_ms {
        ns.sort_unstable();
        let want: Vec<i64> = (0..ns.len() as i64).collect();
        assert_eq!(
            ns, want,
            "{f:?}: members at {score} are not numbered from 0"
        );
    }
}

/// Pipelined calls land in few milliseconds on the real clock, and all in
/// one on the stopped clock: the same-millisecond case for sure.
#[test]
fn same_millisecond_requests_are_all_stored() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let calls = 200;
        let mut pipe = redis::pipe();
        for _ in 0..calls {
            pipe.cmd("RL.SLIDE").arg("burst").arg(1_000_000).arg(60_000);
        }
        let replies: Vec<Vec<i64>> = pipe.query(&mut c).unwrap();
        let admitted = replies.iter().filter(|r| r[0] == 1).count();
        assert_eq!(admitted, calls, "{f:?}: a large limit admits every call");
        // remaining counts down by one per call, with no gap or repeat.
        for (i, r) in replies.iter().enumerate() {
            assert_eq!(r[1], 1_000_000 - 1 - i as i64, "{f:?}: reply {i}");
        }
        let all = entries(&mut c, "burst");
        assert_eq!(
            all.len(),
            admitted,
            "{f:?}: ZCARD equals the admitted count"
        );
        assert_eq!(zcard(&mut c, "burst"), admitted, "{f:?}");
        assert_compact_members(f, &all);
        // Integer members keep a small set in the compact encoding.
        slide_cost(&mut c, "small", 100, 60_000, 20);
        let enc: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg("small")
            .query(&mut c)
            .unwrap();
        assert_eq!(enc, "listpack", "{f:?}");
        let distinct_ms: HashSet<i64> = all.iter().map(|e| e.1).collect();
        if server.clock_stopped() {
            assert_eq!(distinct_ms.len(), 1, "{f:?}: one ms, 200 members");
        }
        eprintln!(
            "{f:?}: {calls} pipelined calls landed in {} distinct ms",
            distinct_ms.len()
        );
    });
}

/// One call with COST n stores n entries in one millisecond for sure: the
/// same-millisecond case without relying on the machine being fast.
#[test]
fn one_costly_request_stores_one_member_per_unit() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(slide_cost(&mut c, "bulk", 500, 60_000, 100)[..2], [1, 400]);
        assert_eq!(slide_cost(&mut c, "bulk", 500, 60_000, 100)[..2], [1, 300]);
        let all = entries(&mut c, "bulk");
        assert_eq!(all.len(), 200, "{f:?}");
        assert_compact_members(f, &all);
        // The first call's 100 units share one score.
        let first_score = all[0].1;
        assert!(
            all.iter().filter(|e| e.1 == first_score).count() >= 100,
            "{f:?}: the units of one call must share its millisecond"
        );
    });
}

#[test]
fn entries_older_than_the_window_are_evicted_on_the_next_admit() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Old entries under a long window, then newer ones 150 ms later.
        slide_cost(&mut c, "ev", 100, 60_000, 3);
        let old: Vec<(String, i64)> = entries(&mut c, "ev");
        server.advance(150);
        slide_cost(&mut c, "ev", 100, 60_000, 2);
        let before = entries(&mut c, "ev");
        assert_eq!(before.len(), 5, "{f:?}");

        // A call with a 100 ms window: cutoff = now - 100, and now is at
        // least 150 ms after the old entries, so they must go. The newer
        // ones stay exactly if they are still inside the window.
        let window = 100;
        let r = slide(&mut c, "ev", 100, window);
        assert_eq!(r[0], 1, "{f:?}");
        let after = entries(&mut c, "ev");
        let newest = after.last().unwrap().1;
        let cutoff = newest - window as i64;
        for (m, s) in &old {
            assert!(
                !after.iter().any(|(am, _)| am == m),
                "{f:?}: old entry {m}@{s} survived (cutoff {cutoff})"
            );
        }
        let mut want: Vec<(String, i64)> =
            before.into_iter().filter(|&(_, s)| s > cutoff).collect();
        if server.clock_stopped() {
            assert_eq!(want.len(), 2, "{f:?}: the two newer entries stay");
        }
        want.push(
            after
                .iter()
                .find(|(m, _)| !want.iter().any(|(wm, _)| wm == m))
                .cloned()
                .expect("the new entry"),
        );
        want.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        assert_eq!(
            after, want,
            "{f:?}: survivors are exactly the entries after {cutoff}"
        );
        assert_eq!(
            r[1],
            100 - after.len() as i64,
            "{f:?}: remaining counts survivors"
        );
        assert_compact_members(f, &after);
    });
}

#[test]
fn a_zset_left_empty_by_eviction_is_refilled_not_deleted() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // All old entries leave and one new entry arrives in the same call:
        // the key survives with exactly that entry.
        slide_cost(&mut c, "swap", 10, 60_000, 4);
        let expiry = pexpiretime(&mut c, "swap");
        server.advance(60);
        assert_eq!(slide(&mut c, "swap", 10, 50), [1, 9, 0, 50], "{f:?}");
        let after = entries(&mut c, "swap");
        assert_eq!(after.len(), 1, "{f:?}: {after:?}");
        // The expiry set under the long window already outlives the new
        // entry's stay under the short one: it stays.
        assert!(expiry > after[0].1 + 50, "{f:?}");
        assert_eq!(pexpiretime(&mut c, "swap"), expiry, "{f:?}");
    });
}

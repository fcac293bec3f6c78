//! How RL.SLIDE stores its log: one compact, unique sorted-set member per
//! admitted unit, scored by admission time, stale entries evicted on admit.
mod common;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use common::*;

/// Members of one millisecond are `score * 1_000_000 + n` (see
/// src/core/sliding_log.rs, `MEMBERS_PER_MS`).
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

#[test]
fn same_millisecond_requests_are_all_stored() {
    on_every_server(|server| {
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
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Old entries under a long window, then newer ones 150 ms later.
        slide_cost(&mut c, "ev", 100, 60_000, 3);
        let old: Vec<(String, i64)> = entries(&mut c, "ev");
        std::thread::sleep(Duration::from_millis(150));
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
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // All old entries leave and one new entry arrives in the same call:
        // the key survives with exactly that entry.
        slide_cost(&mut c, "swap", 10, 60_000, 4);
        let expiry = pexpiretime(&mut c, "swap");
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(slide(&mut c, "swap", 10, 50), [1, 9, 0, 50], "{f:?}");
        let after = entries(&mut c, "swap");
        assert_eq!(after.len(), 1, "{f:?}: {after:?}");
        // The expiry set under the long window already outlives the new
        // entry's stay under the short one: it stays.
        assert!(expiry > after[0].1 + 50, "{f:?}");
        assert_eq!(pexpiretime(&mut c, "swap"), expiry, "{f:?}");
    });
}

//! No call does unbounded work, whatever the arguments or the key: RL.SLIDE
//! inserts at most 100 members and removes at most 128 stale ones per
//! call, and its decisions stay exact while a backlog drains; a
//! replica removes the same entries. Asserted by counts, not times.

use std::time::Duration;

use crate::harness::*;

const LIMIT: u64 = 5_000;
const WINDOW: u64 = 1_000;
/// Stale entries one call removes at most (`slide::decide::EVICT_PER_CALL`).
const EVICT: usize = 128;

/// Fills `key` with `LIMIT` entries (cost 100 per call), then lets a
/// window pass until all of them have left it.
fn burst_then_pause(server: &Server, c: &mut redis::Connection, key: &str) {
    for _ in 0..LIMIT / 100 {
        assert_eq!(slide_cost(c, key, LIMIT, WINDOW, 100)[0], 1);
    }
    assert_eq!(zcard(c, key), LIMIT as usize);
    server.advance(WINDOW);
    // Every entry has left once a call with limit 1 is admitted; PEEK
    // writes nothing, so the backlog stays.
    let left = wait_until(Duration::from_secs(5), || {
        let v: Vec<i64> = redis::cmd("RL.PEEK")
            .arg(&["SLIDE", key, "1", &WINDOW.to_string()])
            .query(c)
            .unwrap();
        v[0] == 1
    });
    assert!(left, "the burst never left the window");
}

#[test]
fn a_backlog_drains_a_bounded_step_per_call_and_never_counts() {
    on_every_server_clocked(|server| {
        let flavor = server.flavor;
        let mut c = server.conn();
        burst_then_pause(server, &mut c, "backlog");
        let mut held = LIMIT as usize;
        let mut calls = 0;
        while held > calls + 1 {
            let reply = slide(&mut c, "backlog", LIMIT, WINDOW);
            calls += 1;
            // Exact: only this loop's own admissions are in the window.
            assert_eq!(
                reply,
                [1, (LIMIT - calls as u64) as i64, 0, WINDOW as i64],
                "{flavor:?}"
            );
            let now_held = zcard(&mut c, "backlog");
            let removed = held + 1 - now_held;
            let want = (held - (calls - 1)).min(EVICT);
            assert_eq!(removed, want, "{flavor:?} call {calls}: removed {removed}");
            held = now_held;
        }
        assert_eq!(calls, (LIMIT as usize).div_ceil(EVICT), "{flavor:?}");
    });
}

#[test]
fn the_replica_removes_the_same_entries() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let replica = primary.start_replica(true);
        let mut c = primary.conn();
        burst_then_pause(&primary, &mut c, "shared");
        for _ in 0..3 {
            slide(&mut c, "shared", LIMIT, WINDOW);
        }
        wait_replicas(&mut c, 1);
        let ours = entries(&mut c, "shared");
        assert_eq!(ours.len(), LIMIT as usize + 3 - 3 * EVICT, "{flavor:?}");
        assert_eq!(entries(&mut replica.conn(), "shared"), ours, "{flavor:?}");
    }
}

#[test]
fn weighted_slide_calls_are_capped() {
    on_every_server(|server| {
        let mut c = server.conn();
        let err = |c: &mut redis::Connection, args: &[&str]| {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            err_text(cmd.query::<redis::Value>(c))
        };
        assert_eq!(
            err(
                &mut c,
                &["RL.SLIDE", "k", "1000000", "60000", "COST", "1000000"]
            ),
            "ERR COST must be an integer from 1 to 100"
        );
        let mut all = vec!["RL.ALL", "2", "a", "b"];
        all.extend(["SLIDE", "1000", "60000", "COST", "60"]);
        all.extend(["SLIDE", "1000", "60000", "COST", "41"]);
        assert_eq!(
            err(&mut c, &all),
            "ERR the SLIDE clauses' COST must add up to at most 100"
        );
        // BUCKETS clauses share the 250 buckets one call may read: 125 each for two.
        let shared = [
            "RL.ALL",
            "2",
            "a",
            "b",
            "BUCKETS",
            "10",
            "126",
            "PRECISION",
            "1",
            "BUCKETS",
            "10",
            "1000",
        ];
        assert_eq!(
            err(&mut c, &shared),
            "ERR clause 1: PRECISION too small: the window would need more than 125 buckets (RL.ALL's BUCKETS clauses share 250)"
        );
        let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
        assert_eq!(keys, 0, "nothing written");
        assert_eq!(slide_cost(&mut c, "k", 1_000_000, 60_000, 100)[0], 1);
        assert_eq!(zcard(&mut c, "k"), 100);
    });
}

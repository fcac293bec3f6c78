//! RL.CHARGE on every limiter: the units recorded past the limit (members,
//! hash counts, the TAT and the counter, with their absolute expiries), the
//! reply as RL.PEEK answers right after, later requests denied until the
//! window has room; a replica and an AOF replay hold the same; errors name
//! the problem and leave the key untouched.

use crate::harness::*;

const LONG: &str = "600000";

/// Runs a line expecting four integers.
fn ints(c: &mut redis::Connection, line: &[&str]) -> Reply4 {
    let v: Vec<i64> = redis::cmd(line[0])
        .arg(&line[1..])
        .query(c)
        .unwrap_or_else(|e| panic!("{line:?}: {e}"));
    v.try_into().expect("four integers")
}

/// `RL.CHARGE <line...>`.
fn charge(c: &mut redis::Connection, line: &[&str]) -> Reply4 {
    let mut full = vec!["RL.CHARGE"];
    full.extend_from_slice(line);
    ints(c, &full)
}

/// The reply after the units equals RL.PEEK's for one unit, right after
/// (the waits may differ by the ms between the two calls).
fn assert_reply_is_peek_after(c: &mut redis::Connection, reply: Reply4, peek_line: &[&str]) {
    let p = peek(c, peek_line);
    assert_eq!(reply[1], p[1], "{peek_line:?}: {reply:?} vs {p:?}");
    assert_eq!(reply[2] > 0, p[0] == 0, "{peek_line:?}: {reply:?} vs {p:?}");
    for i in [2, 3] {
        assert!(
            (reply[i] - p[i]).abs() < 1_000,
            "{peek_line:?}: {reply:?} vs {p:?}"
        );
    }
}

fn string(c: &mut redis::Connection, key: &str) -> i64 {
    let v: String = redis::cmd("GET").arg(key).query(c).unwrap();
    v.parse().unwrap()
}

#[test]
fn slide_charge_records_every_unit_past_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(slide_cost(&mut c, "s", 10, 600_000, 4)[0], 1);
        let r = charge(&mut c, &["SLIDE", "s", "10", LONG, "COST", "30"]);
        assert_eq!(r[..2], [30, 0], "{f:?}: {r:?}");
        assert_eq!(zcard(&mut c, "s"), 34, "{f:?}: one member per unit");
        let newest = entries(&mut c, "s").last().unwrap().1;
        assert!(
            pexpiretime(&mut c, "s") >= newest + 600_000,
            "{f:?}: the expiry covers the newest entry"
        );
        assert_reply_is_peek_after(&mut c, r, &["SLIDE", "s", "10", LONG]);
        // Past the limit: denied, nothing written.
        let before = frozen_state(&mut c, "s");
        assert_eq!(slide(&mut c, "s", 10, 600_000)[..2], [0, 0], "{f:?}");
        assert_eq!(frozen_state(&mut c, "s"), before, "{f:?}");
        // The cap of one call stays.
        assert_eq!(
            error_of(
                &mut c,
                &["RL.CHARGE", "SLIDE", "s", "10", LONG, "COST", "101"]
            ),
            "ERR COST must be an integer from 1 to 100",
            "{f:?}"
        );
    });
}

#[test]
fn buckets_charge_counts_past_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // One bucket per window: both calls land in it.
        let params = ["BUCKETS", "b", "10", LONG, "PRECISION", LONG];
        ints(
            &mut c,
            &[
                "RL.BUCKETS",
                "b",
                "10",
                LONG,
                "PRECISION",
                LONG,
                "COST",
                "3",
            ],
        );
        let r = charge(&mut c, &[&params[..], &["COST", "2500"]].concat());
        assert_eq!(r[..2], [2500, 0], "{f:?}: {r:?}");
        assert!(r[2] > 0, "{f:?}: {r:?}");
        let h = header(&mut c, "b");
        // Total, then the current bucket's count (both in the header).
        assert_eq!(h.counts, [2503, 2503], "{f:?}: {h:?}");
        assert_reply_is_peek_after(&mut c, r, &params);
        let before = frozen_state(&mut c, "b");
        let denied = ints(&mut c, &["RL.BUCKETS", "b", "10", LONG, "PRECISION", LONG]);
        assert_eq!(denied[..2], [0, 0], "{f:?}");
        assert_eq!(frozen_state(&mut c, "b"), before, "{f:?}");
    });
}

#[test]
fn throttle_charge_moves_the_tat_past_the_burst_and_the_ttl_covers_it() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // T = 1 s, bursts of 10 (τ = 10 s).
        let params = ["THROTTLE", "t", "9", "10", "10000"];
        ints(&mut c, &["RL.THROTTLE", "t", "9", "10", "10000", "4"]);
        let tat = string(&mut c, "t");
        let r = charge(&mut c, &[&params[..], &["COST", "20"]].concat());
        assert_eq!(r[..2], [20, 0], "{f:?}: {r:?}");
        let tat2 = tat + 20_000_000;
        assert_eq!(
            value_and_expiry(&mut c, "t"),
            (Some(tat2.to_string()), (tat2 + 999) / 1000),
            "{f:?}: the key lives until its TAT, 24 s ahead"
        );
        // One more unit fits once the TAT is τ - T ahead: about 15 s on.
        assert!((14_000..=15_000).contains(&r[2]), "{f:?}: {r:?}");
        assert_reply_is_peek_after(&mut c, r, &params);
        let before = frozen_state(&mut c, "t");
        assert_eq!(
            ints(&mut c, &["RL.THROTTLE", "t", "9", "10", "10000"])[0],
            0
        );
        assert_eq!(frozen_state(&mut c, "t"), before, "{f:?}");
        // A refund takes back what is scheduled (at most the burst per
        // call, as its own parser allows).
        let back = ints(
            &mut c,
            &["RL.REFUND", "THROTTLE", "t", "9", "10", "10000", "10"],
        );
        assert_eq!(back[0], 10, "{f:?}: {back:?}");
        assert_eq!(string(&mut c, "t"), tat2 - 10_000_000, "{f:?}");
    });
}

#[test]
fn fixed_charge_counts_past_the_limit_and_keeps_the_window() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let params = ["FIXED", "f", "10", LONG];
        ints(&mut c, &["RL.FIXED", "f", "10", LONG, "COST", "7"]);
        let (_, expiry) = value_and_expiry(&mut c, "f");
        let r = charge(&mut c, &[&params[..], &["COST", "1000"]].concat());
        assert_eq!(r[..2], [1000, 0], "{f:?}: {r:?}");
        assert_reply_is_peek_after(&mut c, r, &params);
        assert_eq!(
            value_and_expiry(&mut c, "f"),
            (Some("1007".into()), expiry),
            "{f:?}"
        );
        // A charge on no key starts a window, as an admission does.
        let r = charge(&mut c, &["FIXED", "g", "10", LONG, "COST", "4"]);
        assert_eq!(r[..3], [4, 5, 0], "{f:?}: {r:?}");
        let (v, at) = value_and_expiry(&mut c, "g");
        assert_eq!(v.as_deref(), Some("4"), "{f:?}");
        assert!(at > server_ms(&mut c), "{f:?}");
    });
}

/// Admits, then charges past the limit, on every limiter (long windows:
/// nothing expires while the test runs).
fn admit_and_charge(c: &mut redis::Connection) {
    let admits: &[&[&str]] = &[
        &["RL.SLIDE", "s", "20", LONG, "COST", "4"],
        &[
            "RL.BUCKETS",
            "b",
            "20",
            LONG,
            "PRECISION",
            "10000",
            "COST",
            "6",
        ],
        &["RL.THROTTLE", "t", "9", "10", "10000", "7"],
        &["RL.FIXED", "f", "20", LONG, "COST", "9"],
    ];
    for line in admits {
        assert_eq!(ints(c, line)[0], 1, "{line:?}");
    }
    let charges: &[&[&str]] = &[
        &["SLIDE", "s", "20", LONG, "COST", "50"],
        &[
            "BUCKETS",
            "b",
            "20",
            LONG,
            "PRECISION",
            "10000",
            "COST",
            "70",
        ],
        &["THROTTLE", "t", "9", "10", "10000", "COST", "30"],
        &["FIXED", "f", "20", LONG, "COST", "80"],
    ];
    for line in charges {
        let r = charge(c, line);
        assert!(r[0] > 0 && r[2] > 0, "{line:?}: {r:?}");
    }
    // Recorded past the limit: each limiter's own command now denies.
    for line in admits {
        // Without the admission's own units: one unit.
        let units = if line[0] == "RL.THROTTLE" { 1 } else { 2 };
        assert_eq!(ints(c, &line[..line.len() - units])[0], 0, "{line:?}");
    }
}

#[test]
fn replicas_hold_the_primary_state_after_charges() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let with_rl = primary.start_replica(true);
        let without_rl = primary.start_replica(false);
        let mut c = primary.conn();
        admit_and_charge(&mut c);
        wait_replicas(&mut c, 2);
        let want = keyspace(&mut c);
        assert_eq!(want.len(), 4, "{flavor:?}: {want:?}");
        for replica in [&with_rl, &without_rl] {
            assert_eq!(keyspace(&mut replica.conn()), want, "{flavor:?}");
        }
    }
}

#[test]
fn aof_replays_the_same_state_without_the_module() {
    for flavor in ALL {
        let primary =
            Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut c = primary.conn();
        admit_and_charge(&mut c);
        let want = keyspace(&mut c);
        let aof = aof_text(primary.dir()).to_ascii_uppercase();
        assert!(!aof.contains("RL.CHARGE"), "{flavor:?}: {aof}");
        let dir = primary.stop(true);
        let restarted = Server::start_in(flavor, dir, &["--appendonly", "yes"], false);
        assert_eq!(keyspace(&mut restarted.conn()), want, "{flavor:?}");
    }
}

#[test]
fn errors_name_the_problem_and_leave_the_key() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let setup: &[&[&str]] = &[
            &["SET", "str", "x"],
            &["ZADD", "z", "1", "a"],
            &["PEXPIRE", "z", "900000"],
            &["HSET", "hash", "name", "x"],
            &["PEXPIRE", "hash", "900000"],
            &["SET", "cnt", "5"],
            &["RL.COUNT", "count", LONG, "ok"],
            &["RL.BUCKETS", "prec", "10", LONG, "PRECISION", "10000"],
            &["RL.FIXED", "ok", "10", LONG],
        ];
        for line in setup {
            run(&mut c, line).unwrap();
        }
        let cases: &[(&[&str], &str)] = &[
            (
                &["RL.CHARGE", "SLIDE", "k"],
                "ERR wrong number of arguments for 'rl.charge' command",
            ),
            (
                &["RL.CHARGE", "SLIDE", "ok", "10", "1000"],
                "ERR RL.CHARGE needs COST n, the units to charge",
            ),
            (
                &["RL.CHARGE", "FIXED", "ok", "10", "COST", "5"],
                "ERR wrong number of arguments for 'rl.charge' command (expected FIXED key limit window COST cost)",
            ),
            (
                &["RL.CHARGE", "THROTTLE", "ok", "1", "1", "1000", "1", "COST", "5"],
                "ERR wrong number of arguments for 'rl.charge' command (expected THROTTLE key max_burst count period COST cost)",
            ),
            // A charge never denies, so it never blocks: BLOCK is
            // refused by name (RL.REFUND likewise), the key untouched.
            (
                &["RL.CHARGE", "FIXED", "ok", "10", LONG, "BLOCK", "1000", "COST", "3"],
                "ERR BLOCK is an option of the limiters' own commands and their RL.ALL clauses only, not of 'rl.charge'",
            ),
            (
                &["RL.CHARGE", "THROTTLE", "ok", "1", "1", "1000", "COST", "3", "BLOCK", "10"],
                "ERR BLOCK is an option of the limiters' own commands and their RL.ALL clauses only, not of 'rl.charge'",
            ),
            (
                &["RL.REFUND", "FIXED", "ok", "10", LONG, "BLOCK", "1000"],
                "ERR BLOCK is an option of the limiters' own commands and their RL.ALL clauses only, not of 'rl.refund'",
            ),
            (
                &["RL.REFUND", "FIXED", "ok", "10"],
                "ERR wrong number of arguments for 'rl.refund' command (expected FIXED key limit window [COST cost])",
            ),
            (
                &["RL.CHARGE", "LEAKY", "ok", "COST", "1"],
                "ERR unknown limiter 'LEAKY' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)",
            ),
            (
                &["RL.CHARGE", "ACQUIRE", "ok", "3", "1000", "COST", "1"],
                "ERR RL.CHARGE does not apply to ACQUIRE (a lease holds a slot, not units)",
            ),
            (
                &["RL.CHARGE", "FIXED", "ok", "10", LONG, "COST"],
                "ERR COST needs a value",
            ),
            (
                &["RL.CHARGE", "FIXED", "ok", "10", LONG, "COST", "1", "COST", "2"],
                "ERR COST given more than once",
            ),
            (
                &["RL.CHARGE", "FIXED", "ok", "10", LONG, "COST", "0"],
                "ERR COST must be an integer from 1 to 1000000000000000",
            ),
            (
                &["RL.CHARGE", "FIXED", "ok", "10", "x", "COST", "3"],
                "ERR window must be an integer from 1 to 1000000000000",
            ),
            (
                &["RL.CHARGE", "SLIDE", "str", "10", "1000", "COST", "3"],
                "WRONGTYPE Operation against a key holding the wrong kind of value",
            ),
            (
                &["RL.CHARGE", "SLIDE", "z", "10", "1000", "COST", "3"],
                "ERR key holds a sorted set that rl did not write",
            ),
            (
                &["RL.CHARGE", "BUCKETS", "hash", "10", "1000", "COST", "3"],
                "ERR key holds a hash that rl did not write",
            ),
            (
                &["RL.CHARGE", "BUCKETS", "count", "10", LONG, "COST", "3"],
                "ERR key holds RL.COUNT state, not RL.BUCKETS state",
            ),
            (
                &["RL.CHARGE", "BUCKETS", "prec", "10", LONG, "PRECISION", "20000", "COST", "3"],
                "ERR PRECISION differs from the key's bucket width (10000 ms)",
            ),
            (
                &["RL.CHARGE", "FIXED", "cnt", "10", "1000", "COST", "3"],
                "ERR key holds a string that is not an rl fixed-window counter",
            ),
            (
                &["RL.CHARGE", "THROTTLE", "cnt", "5", "1", "1000", "COST", "3"],
                "ERR key holds a string that is not an rl throttle state (a TAT in microseconds)",
            ),
        ];
        for (line, want) in cases {
            let keys = ["str", "z", "hash", "cnt", "count", "prec", "ok"];
            let before: Vec<_> = keys.iter().map(|k| frozen_state(&mut c, k)).collect();
            assert_eq!(err_text(run(&mut c, line)), *want, "{f:?} {line:?}");
            let after: Vec<_> = keys.iter().map(|k| frozen_state(&mut c, k)).collect();
            assert_eq!(after, before, "{f:?} {line:?}");
        }
    });
}

#[test]
fn charge_is_declared_and_counted() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let keys: Vec<String> = redis::cmd("COMMAND")
            .arg(&[
                "GETKEYS",
                "RL.CHARGE",
                "FIXED",
                "k",
                "5",
                "1000",
                "COST",
                "9",
            ])
            .query(&mut c)
            .unwrap();
        assert_eq!(keys, ["k"], "{f:?}");
        charge(&mut c, &["FIXED", "k", "5", "1000", "COST", "9"]);
        charge(&mut c, &["FIXED", "k", "5", "1000", "COST", "1"]);
        run(&mut c, &["RL.CHARGE", "NOPE", "k", "COST", "1"]).unwrap_err();
        // Answered calls: neither admitted nor denied.
        assert_eq!(counters(&mut c, "charge"), [3, 0, 0, 1], "{f:?}");
    });
}

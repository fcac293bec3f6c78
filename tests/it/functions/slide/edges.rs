//! The worked example of docs/commands.md, the largest parameters, backlogs
//! drained in bounded steps, and a clock that stepped back: both editions
//! alike on a stopped clock.

use super::{member, zcard};
use crate::functions::differential::{on_both, same, same_ints};
use crate::functions::{start_both, LIBRARY};
use crate::harness::{plain_key, Flavor, Plain, Server};

/// The worked example of docs/commands.md, exactly: replies, members,
/// expiry.
#[test]
fn the_documented_example() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let t0 = server.clock_ms();
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "u", "3", "10000"]),
        [1, 2, 0, 10000]
    );
    server.advance(1267);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "u", "3", "10000", "COST", "2"]),
        [1, 0, 0, 10000]
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "u", "3", "10000"]),
        [0, 0, 8733, 10000]
    );
    let t1 = t0 + 1267;
    let want = Plain::Zset(
        [(t0, 0), (t1, 0), (t1, 1)]
            .iter()
            .map(|&(s, n)| (member(s, n).into_bytes(), s.to_string().into_bytes()))
            .collect(),
    );
    // The expiry the first call set (t0 + window + window / 4) already
    // reaches the newest entry's t1 + window: not moved.
    assert_eq!(plain_key(&mut c, b"f:u"), (want, t0 + 12_500));
    server.advance(8733);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "u", "3", "10000"]),
        [1, 0, 0, 10000]
    );
    assert_eq!(
        same_ints(&mut c, &["RL.PEEK", "SLIDE", "u", "3", "10000"]),
        [0, 0, 1267, 10000]
    );
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.REFUND", "SLIDE", "u", "3", "10000", "COST", "2"]
        ),
        [2, 1, 0, 10000]
    );
}

/// The largest parameters: limit 10^6, window 10^12, COST 100; members of
/// 19 digits (past 2^53) written exactly; the expiry a quarter window on.
#[test]
fn largest_parameters_and_members_past_2_53() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let line = ["RL.SLIDE", "big", "1000000", "1000000000000", "COST", "100"];
    for i in 0..3 {
        let r = same_ints(&mut c, &line);
        assert_eq!(r, [1, 1_000_000 - 100 * (i + 1), 0, 1_000_000_000_000]);
    }
    let (value, at) = plain_key(&mut c, b"f:big");
    assert_eq!(at, now + 1_000_000_000_000 + 250_000_000_000);
    let Plain::Zset(entries) = value else {
        panic!()
    };
    assert_eq!(entries.len(), 300);
    for (n, (m, s)) in entries.iter().enumerate() {
        assert_eq!(String::from_utf8_lossy(m), member(now, n as i64));
        assert_eq!(String::from_utf8_lossy(s), now.to_string());
    }
    server.advance(999_999);
    assert_eq!(
        same_ints(
            &mut c,
            &[
                "RL.PEEK",
                "SLIDE",
                "big",
                "300",
                "1000000000000",
                "COST",
                "1"
            ]
        ),
        [
            0,
            0,
            1_000_000_000_000 - 999_999,
            1_000_000_000_000 - 999_999
        ]
    );
    assert_eq!(
        same_ints(
            &mut c,
            &[
                "RL.REFUND",
                "SLIDE",
                "big",
                "1000000",
                "1000000000000",
                "COST",
                "100"
            ]
        ),
        [100, 1_000_000 - 201, 0, 1_000_000_000_000]
    );
    // A window of 1 ms and a limit of 1: everything leaves at once.
    for _ in 0..3 {
        assert_eq!(
            same_ints(&mut c, &["RL.SLIDE", "tiny", "1", "1"]),
            [1, 0, 0, 1]
        );
        assert_eq!(
            same_ints(&mut c, &["RL.SLIDE", "tiny", "1", "1"]),
            [0, 0, 1, 1]
        );
        server.advance(1);
    }
}

/// The library's bound lowered below a call's cost + 1 (as
/// `scripts/bench-bound.sh` patches it to measure) still removes more than
/// the call adds, as the module's `evict_budget` does at any bound: at 32,
/// COST 1 removes 32, COST 100 removes 101, and RL.ALL's clauses each
/// their cost + 1.
#[test]
fn a_lowered_bound_still_removes_more_than_a_call_adds() {
    let server = Server::start_clocked(Flavor::Valkey9, &[]);
    let mut c = server.conn();
    let shipped = "  EVICT_PER_CALL = 128,\n";
    assert_eq!(LIBRARY.matches(shipped).count(), 1);
    let lowered = LIBRARY.replace(shipped, "  EVICT_PER_CALL = 32,\n");
    let name: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(lowered)
        .query(&mut c)
        .unwrap();
    assert_eq!(name, "rl");
    // Each call admitted; the entries of both logs after it.
    let mut fcall = |args: &str| {
        let r: redis::Value = redis::cmd("FCALL")
            .arg(args.split(' ').collect::<Vec<_>>())
            .query(&mut c)
            .unwrap();
        let redis::Value::Array(r) = &r else {
            panic!("{args}: {r:?}")
        };
        assert_eq!(r[0], redis::Value::Int(1), "{args}: admitted");
        [zcard(&mut c, "lb:a"), zcard(&mut c, "lb:b")]
    };
    for _ in 0..5 {
        fcall("rl_slide 1 lb:a 10000 1000 COST 100");
        fcall("rl_slide 1 lb:b 10000 1000 COST 100");
    }
    server.advance(1000);
    assert_eq!(fcall("rl_slide 1 lb:a 10000 1000 COST 100"), [499, 500]);
    assert_eq!(fcall("rl_slide 1 lb:a 10000 1000"), [468, 500]);
    assert_eq!(
        fcall("rl_all 2 lb:a lb:b SLIDE 10000 1000 COST 93 SLIDE 10000 1000"),
        [467, 499]
    );
}

/// A backlog after a burst and a pause drains 128 entries per admission
/// (RL.ALL's clauses share them, each its cost + 1 at least), is counted
/// through ZCOUNT past 64, and a denial's wait past 64 entries comes
/// through the rank lookup.
#[test]
fn backlogs_drain_in_bounded_steps() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    for k in ["a", "b", "c"] {
        for _ in 0..30 {
            same_ints(&mut c, &["RL.SLIDE", k, "10000", "1000", "COST", "100"]);
        }
        assert_eq!(zcard(&mut c, &format!("f:{k}")), 3000);
    }
    server.advance(1000);
    // A peek counts the 3000 stale entries (ZCOUNT) and removes nothing.
    assert_eq!(
        same_ints(&mut c, &["RL.PEEK", "SLIDE", "a", "10000", "1000"]),
        [1, 9999, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "f:a"), 3000);
    // Each admission removes 128 and adds its own.
    for i in 0..3 {
        let r = same_ints(&mut c, &["RL.SLIDE", "a", "10000", "1000"]);
        assert_eq!(r[..2], [1, 9999 - i]);
        assert_eq!(zcard(&mut c, "f:a"), 3000 - 127 * (i + 1));
    }
    // RL.ALL with two clauses, COST 99 and 1: each its cost + 1, and half
    // of the 26 the call's 128 leaves: 113 and 15.
    let (b0, c0) = (zcard(&mut c, "f:b"), zcard(&mut c, "f:c"));
    same(
        &mut c,
        &[
            "RL.ALL", "2", "b", "c", "SLIDE", "10000", "1000", "COST", "99", "SLIDE", "10000",
            "1000",
        ],
    )
    .unwrap();
    assert_eq!(zcard(&mut c, "f:b"), b0 + 99 - 113);
    assert_eq!(zcard(&mut c, "f:c"), c0 + 1 - 15);
    // Three clauses of COST 1: 2 + (128 - 6) / 3 = 42 each.
    let (a0, b0, c0) = (
        zcard(&mut c, "f:a"),
        zcard(&mut c, "f:b"),
        zcard(&mut c, "f:c"),
    );
    same(
        &mut c,
        &[
            "RL.ALL", "3", "a", "b", "c", "SLIDE", "10000", "1000", "SLIDE", "10000", "1000",
            "SLIDE", "10000", "1000",
        ],
    )
    .unwrap();
    assert_eq!(
        [
            zcard(&mut c, "f:a"),
            zcard(&mut c, "f:b"),
            zcard(&mut c, "f:c")
        ],
        [a0 - 41, b0 - 41, c0 - 41]
    );
    // A denied RL.ALL removes nothing.
    same(
        &mut c,
        &[
            "RL.ALL", "2", "a", "b", "SLIDE", "10000", "1000", "SLIDE", "1", "1000",
        ],
    )
    .unwrap();
    assert_eq!(zcard(&mut c, "f:b"), b0 - 41);
    // Drain the rest (2574 stale), one call at a time, the same at every
    // step: 20 calls of 128 and one of 14; 25 own entries left.
    for _ in 0..21 {
        same_ints(&mut c, &["RL.SLIDE", "a", "10000", "1000"]);
    }
    assert_eq!(zcard(&mut c, "f:a"), 25);
    same_ints(&mut c, &["RL.SLIDE", "a", "10000", "1000"]);
    assert_eq!(zcard(&mut c, "f:a"), 26);

    // Denials whose wait is the 50th (walked) and the 150th (rank lookup)
    // entry still in the window.
    for _ in 0..200 {
        same_ints(&mut c, &["RL.SLIDE", "d", "200", "10000"]);
        server.advance(1);
    }
    server.advance(100);
    for (cost, nth) in [(50i64, 50i64), (100, 100), (1, 1), (99, 99)] {
        let r = same_ints(
            &mut c,
            &["RL.SLIDE", "d", "200", "10000", "COST", &cost.to_string()],
        );
        // The nth entry was admitted nth - 1 ms after the first, 300 ms ago.
        assert_eq!(r, [0, 0, 10_000 - 300 + nth - 1, 10_000 - 300 + 199]);
    }
    // 101 of them have left: a peek walks 64 and counts the rest (ZCOUNT);
    // the wait is the entry at rank 101 + need - 1.
    server.advance(10_000 - 300 + 100);
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.PEEK", "SLIDE", "d", "150", "10000", "COST", "100"]
        ),
        [0, 51, 49, 99]
    );
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.PEEK", "SLIDE", "d", "100", "10000", "COST", "100"]
        ),
        [0, 1, 99, 99]
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "d", "200", "10000", "COST", "100"]),
        [1, 1, 0, 10_000]
    );
    assert_eq!(zcard(&mut c, "f:d"), 199);
}

/// The clock stepped back (entries ahead of it): new entries are recorded at
/// the newest entry's time, numbered after it; waits measured from now.
#[test]
fn a_clock_that_stepped_back() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let ahead = now + 3000;
    let (s, m) = (ahead.to_string(), member(ahead, 4));
    on_both(&mut c, "k", &["ZADD", "K", &s, &m]);
    on_both(
        &mut c,
        "k",
        &["PEXPIREAT", "K", &(ahead + 1000).to_string()],
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "3", "1000", "COST", "2"]),
        [1, 0, 0, 4000]
    );
    let (Plain::Zset(entries), at) = plain_key(&mut c, b"f:k") else {
        panic!()
    };
    let got: Vec<String> = entries
        .iter()
        .map(|(m, _)| String::from_utf8_lossy(m).into())
        .collect();
    assert_eq!(got, [member(ahead, 4), member(ahead, 5), member(ahead, 6)]);
    // The expiry reached newest + window already: not moved.
    assert_eq!(at, ahead + 1000);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "3", "1000"]),
        [0, 0, 4000, 4000]
    );
    server.advance(3500);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "3", "1000"]),
        [0, 0, 500, 500]
    );
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.REFUND", "SLIDE", "k", "3", "1000", "COST", "2"]
        ),
        [2, 1, 0, 1000]
    );
    server.advance(500);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "3", "1000"]),
        [1, 2, 0, 1000]
    );
    // The expiry fell short of the new newest + window: moved to newest +
    // window + window / 4.
    assert_eq!(plain_key(&mut c, b"f:k").1, now + 4000 + 1000 + 250);
}

//! Every row of RL.SLIDE's error table and every foreign or wrong-typed
//! value, through each command form: the same error text on both editions,
//! nothing written. The lines and shapes also feed the random streams.

use super::{zcard, FOREIGN, WRONGTYPE};
use crate::functions::differential::{on_both, same_err};
use crate::functions::start_both;
use crate::harness::{frozen_state, Flavor};

/// Lines every one of which the module refuses before reading a key, with
/// `K` for the key: every row of RL.SLIDE's error table and the RL.PEEK /
/// RL.REFUND / RL.ALL forms of them.
pub(super) fn bad_lines() -> Vec<Vec<&'static str>> {
    let mut out: Vec<Vec<&str>> = vec![
        vec!["RL.SLIDE", "K"],
        vec!["RL.SLIDE", "K", "10"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "1", "COST", "2"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "0", "COST", "2"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "2", "COST", "0"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "11"],
        vec!["RL.SLIDE", "K", "1000", "1000", "COST", "101"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "05"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "-1"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "1.0"],
        vec!["RL.SLIDE", "K", "10", "1000", "cost", ""],
        vec!["RL.SLIDE", "K", "10", "1000", "WEIGHT", "2"],
        vec!["RL.SLIDE", "K", "10", "1000", "WEIGHT"],
        vec!["RL.SLIDE", "K", "10", "1000", "1"],
        vec!["RL.SLIDE", "K", "10", "1000", "COSTS", "1"],
        vec![
            "RL.SLIDE",
            "K",
            "10",
            "1000",
            "an-option-name-longer-than-thirty-two-bytes",
            "1",
        ],
        vec!["RL.SLIDE", "K", "10", "1000", "tab\there", "1"],
        vec!["RL.SLIDE", "K", "0", "1000"],
        vec!["RL.SLIDE", "K", "-5", "1000"],
        vec!["RL.SLIDE", "K", "ten", "1000"],
        vec!["RL.SLIDE", "K", "1000001", "1000"],
        vec!["RL.SLIDE", "K", "01", "1000"],
        vec!["RL.SLIDE", "K", "+1", "1000"],
        vec!["RL.SLIDE", "K", " 1", "1000"],
        vec!["RL.SLIDE", "K", "", "1000"],
        vec!["RL.SLIDE", "K", "99999999999999999999999", "1000"],
        vec!["RL.SLIDE", "K", "10", "0"],
        vec!["RL.SLIDE", "K", "10", "1.5"],
        vec!["RL.SLIDE", "K", "10", "1e3"],
        vec!["RL.SLIDE", "K", "10", "1000000000001"],
        vec!["RL.SLIDE", "K", "10", "99999999999999999999999"],
        vec!["RL.SLIDE", "K", "0", "0", "COST", "0"],
        vec!["RL.SLIDE", "K", "10", "0", "FOO"],
        vec!["RL.PEEK", "SLIDE", "K", "3"],
        vec!["RL.PEEK", "slide", "K"],
        vec!["RL.PEEK", "SLIDE", "K", "3", "100", "COST", "4"],
        vec!["RL.PEEK", "SLIDE", "K", "0", "100"],
        vec!["RL.PEEK", "SLIDES", "K", "3", "100"],
        vec!["RL.PEEK", "SLIDE", "K", "3", "100", "OLDEST", "oldest"],
        vec!["RL.PEEK", "SLIDES", "K", "3", "100", "OLDEST"],
        vec!["RL.PEEK", "SLIDE", "K", "3", "OLDEST"],
        vec!["RL.PEEK", "THROTTLE", "K", "1", "1", "1000", "OLDEST"],
        vec!["RL.PEEK", "FIXED", "K", "1", "1000", "OLDEST"],
        vec!["RL.PEEK", "ACQUIRE", "K", "1", "1000", "OLDEST"],
        vec!["RL.SLIDE", "K", "10", "1000", "OLDEST"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "1", "oldest"],
        vec!["RL.REFUND", "SLIDE", "K", "3", "100", "OLDEST"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3", "100", "OLDEST"],
        vec!["RL.REFUND", "SLIDE", "K", "3"],
        vec!["RL.REFUND", "SLIDE", "K", "3", "100", "COST", "101"],
        vec!["RL.REFUND", "Slide", "K", "3", "100", "PRECISION", "1"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3", "100", "COST", "4"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3", "0"],
    ];
    out.push(vec!["RL.SLIDE", "K", "10", "1000", "COST", "2", "COST"]);
    out.extend([
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "0"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "1000000000001"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "5", "block", "5"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "-1", "COST", "11"],
        vec!["RL.BLOCK", "SLIDE", "K"],
        vec!["RL.BLOCK", "SLIDE", "K", "0"],
        vec!["RL.BLOCK", "slide", "K", "5", "6"],
        vec!["RL.UNBLOCK", "SLIDE", "K", "5"],
        vec!["RL.REFUND", "SLIDE", "K", "3", "100", "BLOCK", "5"],
        vec![
            "RL.CHARGE",
            "SLIDE",
            "K",
            "3",
            "100",
            "BLOCK",
            "5",
            "COST",
            "1",
        ],
        vec!["RL.ALL", "1", "K", "SLIDE", "10", "1000", "BLOCK", "0"],
    ]);
    out
}

/// A foreign or wrong-typed value written under `K`, as (setup lines,
/// what RL.SLIDE answers on it): time-independent shapes (scores far from
/// any clock).
pub(super) fn foreign_shapes() -> Vec<(Vec<Vec<&'static str>>, &'static str)> {
    // An absolute expiry (2100-01-01): the same on both copies whatever
    // the clock.
    let ttl = vec!["PEXPIREAT", "K", "4102444800000"];
    vec![
        (vec![vec!["SET", "K", "v"]], WRONGTYPE),
        (vec![vec!["SET", "K", "12"], ttl.clone()], WRONGTYPE),
        (vec![vec!["HSET", "K", "f", "v"], ttl.clone()], WRONGTYPE),
        (vec![vec!["RPUSH", "K", "a"]], WRONGTYPE),
        (vec![vec!["SADD", "K", "a"], ttl.clone()], WRONGTYPE),
        // No TTL: rl's keys always have one.
        (vec![vec!["ZADD", "K", "1", "a"]], FOREIGN),
        (vec![vec!["ZADD", "K", "5", "5000000"]], FOREIGN),
        // Members and scores rl could not have written.
        (vec![vec!["ZADD", "K", "1", "a"], ttl.clone()], FOREIGN),
        (vec![vec!["ZADD", "K", "5", "7"], ttl.clone()], FOREIGN),
        (
            vec![vec!["ZADD", "K", "5", "05000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5", "+5000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5", "5000000.0"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5.5", "5000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "-1", "-1000000"], ttl.clone()],
            FOREIGN,
        ),
        (vec![vec!["ZADD", "K", "+inf", "x"], ttl.clone()], FOREIGN),
        // The block's member at a score no block ends at, the integer that
        // stands for it, a block's member under rl's newest entry.
        (
            vec![vec!["ZADD", "K", "-5", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "1.5", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "+inf", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "20000000000000", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5", "-9223372036854775808"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "3", "rl block", "5", "5000000"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (vec![vec!["ZADD", "K", "1e300", "x"], ttl.clone()], FOREIGN),
        (
            vec![
                vec!["ZADD", "K", "9223372036854", "9223372036854000000"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "9223372036854", "9223372036854775807"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "5", "99999999999999999999999"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        // rl's newest, a foreign oldest (far in the past, stale).
        (
            vec![vec!["ZADD", "K", "-inf", "x", "5", "5000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "3", "x", "5", "5000000"], ttl.clone()],
            FOREIGN,
        ),
    ]
}

/// Entries of the shape rl writes (the score's digits, then six more
/// bytes) but for bytes that are not digits, as the newest and as a stale
/// entry a call walks: the fast tests of an entry must refuse them. Kept
/// out of the random streams, whose mix of shapes they would change.
fn shaped_foreign_entries() -> Vec<(Vec<Vec<&'static str>>, &'static str)> {
    let ttl = vec!["PEXPIREAT", "K", "4102444800000"];
    vec![
        (
            vec![vec!["ZADD", "K", "5", "5x00000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "1764000000123", "1764000000123abcdef"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (
            vec![
                vec![
                    "ZADD",
                    "K",
                    "1000000000000",
                    "1000000000000x00000",
                    "1000000000001",
                    "1000000000001000000",
                ],
                ttl.clone(),
            ],
            FOREIGN,
        ),
    ]
}

/// Every foreign or wrong-typed value is refused with the module's error
/// by every command that reads it, and left byte for byte as it was; on
/// every flavor.
#[test]
fn foreign_keys_are_refused_and_left_alone() {
    for flavor in [Flavor::Valkey9, Flavor::Redis7, Flavor::Redis8] {
        let server = start_both(flavor);
        let mut c = server.conn();
        for (setup, want) in foreign_shapes().into_iter().chain(shaped_foreign_entries()) {
            on_both(&mut c, "x", &["DEL", "K"]);
            for l in &setup {
                on_both(&mut c, "x", l);
            }
            let before = frozen_state(&mut c, "f:x");
            let lines: [&[&str]; 6] = [
                &["RL.SLIDE", "x", "10", "1000"],
                &["RL.SLIDE", "x", "1000000", "1000000000000", "COST", "100"],
                &["RL.PEEK", "SLIDE", "x", "10", "1000"],
                &["RL.REFUND", "SLIDE", "x", "10", "1000", "COST", "3"],
                &["RL.ALL", "1", "x", "SLIDE", "10", "1000"],
                &[
                    "RL.ALL", "2", "x", "fresh", "SLIDE", "10", "1000", "SLIDE", "1", "1",
                ],
            ];
            for line in lines {
                let got = same_err(&mut c, line);
                let want = if line[0] == "RL.ALL" && want != WRONGTYPE {
                    format!("ERR clause 1: {}", &want[4..])
                } else {
                    want.to_string()
                };
                assert_eq!(got, want, "{flavor:?} {setup:?} {line:?}");
                assert_eq!(
                    frozen_state(&mut c, "f:x"),
                    before,
                    "{flavor:?} {setup:?} {line:?}"
                );
                assert_eq!(
                    zcard(&mut c, "f:fresh"),
                    0,
                    "nothing recorded in the other clause"
                );
            }
        }
    }
}

/// Every row of the error table, through each command form, on every
/// flavor: the same error text, nothing written.
#[test]
fn every_input_error_matches() {
    for flavor in [Flavor::Valkey9, Flavor::Redis7, Flavor::Redis8] {
        let server = start_both(flavor);
        let mut c = server.conn();
        // An rl key, written alike in both copies whatever the clock.
        on_both(&mut c, "k", &["ZADD", "K", "1000", "1000000000"]);
        on_both(&mut c, "k", &["PEXPIREAT", "K", "4102444800000"]);
        for line in bad_lines() {
            let line: Vec<&str> = line
                .iter()
                .map(|w| if *w == "K" { "k" } else { w })
                .collect();
            let e = same_err(&mut c, &line);
            assert!(e.starts_with("ERR "), "{line:?}: {e}");
        }
        // RL.ALL's own SLIDE rules.
        for line in [
            &[
                "RL.ALL", "2", "p", "q", "SLIDE", "100", "1000", "COST", "60", "SLIDE", "100",
                "1000", "COST", "41",
            ][..],
            &[
                "RL.ALL", "2", "p", "q", "SLIDE", "100", "1000", "SLIDE", "3",
            ],
            &[
                "RL.ALL", "2", "p", "q", "SLIDE", "100", "1000", "SLIDE", "3", "100", "COST", "9",
            ],
        ] {
            same_err(&mut c, line);
        }
        assert_eq!(zcard(&mut c, "f:k"), 1);
        assert_eq!(zcard(&mut c, "f:p") + zcard(&mut c, "f:q"), 0);
    }
}

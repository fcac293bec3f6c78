//! `UPTO` on RL.SLIDE, RL.BUCKETS, RL.THROTTLE and RL.FIXED: a request
//! takes what fits of its cost when one unit does, the reply gains the
//! units granted (RESP2 and RESP3 alike) and a call without `UPTO` keeps
//! its four integers; the state holds exactly what was granted; a replica
//! holds the same; `UPTO` anywhere else is refused by name.

use crate::harness::*;

const LONG: &str = "600000";

fn reply(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    redis::cmd(line[0])
        .arg(&line[1..])
        .query(c)
        .unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

/// Each limiter: a line that takes 7 of 10, then an `UPTO` line asking
/// for 5, then one asking for 1 more.
const LINES: [(&[&str], &[&str]); 4] = [
    (
        &["RL.SLIDE", "s", "10", LONG, "COST", "7"],
        &["RL.SLIDE", "s", "10", LONG, "COST", "5", "UPTO"],
    ),
    (
        &["RL.BUCKETS", "b", "10", LONG, "COST", "7"],
        &["RL.BUCKETS", "b", "10", LONG, "upto", "COST", "5"],
    ),
    (
        // A bucket of 10 tokens refilled at 1 a minute.
        &["RL.THROTTLE", "t", "9", "1", "60000", "7"],
        &["RL.THROTTLE", "t", "9", "1", "60000", "5", "UPTO"],
    ),
    (
        &["RL.FIXED", "f", "10", LONG, "COST", "7"],
        &["RL.FIXED", "f", "10", LONG, "COST", "5", "UPTO"],
    ),
];

#[test]
fn upto_grants_what_fits_and_says_how_many() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let mut c3 = server.conn_resp3();
        for (fill, upto) in LINES {
            let plain = reply(&mut c, fill);
            assert_eq!((plain.len(), plain[0]), (4, 1), "{f:?} {fill:?}");
            let got = reply(&mut c, upto);
            assert_eq!(
                (got.len(), got[0], got[1], got[4]),
                (5, 1, 0, 3),
                "{f:?} {upto:?}: {got:?}"
            );
            // Full now: denied, nothing granted, nothing written.
            let key = upto[1];
            let before = frozen_state(&mut c, key);
            let got = reply(&mut c3, upto);
            assert_eq!(
                (got.len(), got[0], got[4]),
                (5, 0, 0),
                "{f:?} RESP3 {upto:?}: {got:?}"
            );
            assert!(got[2] > 0, "{f:?} {got:?}");
            assert_eq!(frozen_state(&mut c, key), before, "{f:?} {upto:?}");
        }
        // The state holds exactly what was granted: 7 + 3.
        assert_eq!(zcard(&mut c, "s"), 10, "{f:?}");
        assert_eq!(header(&mut c, "b").counts[0], 10, "{f:?}");
        assert_eq!(
            value_and_expiry(&mut c, "f").0.as_deref(),
            Some("10"),
            "{f:?}"
        );
        // A cost past the limit takes what fits of a fresh key.
        let got = reply(&mut c, &["RL.FIXED", "g", "10", LONG, "COST", "25", "UPTO"]);
        assert_eq!(got[..2], [1, 0], "{f:?}");
        assert_eq!(got[4], 10, "{f:?}");
        let got = reply(
            &mut c,
            &["RL.THROTTLE", "u", "4", "1", "60000", "9", "UPTO"],
        );
        assert_eq!((got[0], got[4]), (1, 5), "{f:?}: {got:?}");
    });
}

#[test]
fn a_replica_holds_what_upto_granted() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let replica = primary.start_replica(false);
        let mut c = primary.conn();
        for (fill, upto) in LINES {
            reply(&mut c, fill);
            assert_eq!(reply(&mut c, upto)[4], 3, "{flavor:?} {upto:?}");
        }
        wait_replicas(&mut c, 1);
        let want = keyspace(&mut c);
        assert_eq!(want.len(), 4, "{flavor:?}");
        assert_eq!(keyspace(&mut replica.conn()), want, "{flavor:?}");
    }
}

#[test]
fn upto_is_refused_outside_the_limiters_own_commands() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let not_of = |cmd: &str| {
            format!("ERR UPTO is an option of RL.SLIDE, RL.BUCKETS, RL.THROTTLE and RL.FIXED only, not of '{cmd}'")
        };
        let cases: Vec<(&[&str], String)> = vec![
            (
                &["RL.PEEK", "SLIDE", "k", "10", "1000", "UPTO"],
                not_of("rl.peek"),
            ),
            (
                &["RL.PEEK", "THROTTLE", "k", "1", "1", "1000", "UPTO"],
                not_of("rl.peek"),
            ),
            (
                &["RL.REFUND", "FIXED", "k", "10", "1000", "UPTO"],
                not_of("rl.refund"),
            ),
            (
                &["RL.ALL", "1", "k", "BUCKETS", "10", "1000", "UPTO"],
                format!("ERR clause 1: {}", &not_of("rl.all")[4..]),
            ),
            (
                &["RL.SLIDE", "k", "10", "1000", "UPTO", "upto"],
                "ERR UPTO given more than once".into(),
            ),
            (
                &["CL.THROTTLE", "k", "1", "1", "1", "UPTO"],
                not_of("cl.throttle"),
            ),
            (
                &["RL.SLIDE", "k", "10", "1000", "COST", "101", "UPTO"],
                "ERR COST must be an integer from 1 to 100".into(),
            ),
        ];
        for (line, want) in &cases {
            assert_eq!(&error_of(&mut c, line), want, "{f:?} {line:?}");
            assert_eq!(exists(&mut c, &["k"]), 0, "{f:?} {line:?}");
        }
    });
}

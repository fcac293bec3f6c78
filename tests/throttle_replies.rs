//! RL.THROTTLE on real servers: reply fields, the stored TAT and its expiry,
//! denials and peeks that write nothing, bad input, other types.
mod common;

use common::limiters::*;
use common::*;

const HOUR: u64 = 3_600_000;
/// Slack for time passing between calls in assertions on waits (ms).
const SLACK: i64 = 10_000;

fn tat_and_expiry(c: &mut redis::Connection, key: &str) -> (i64, i64) {
    let (value, at) = value_and_expiry(c, key);
    let tat: i64 = value
        .expect("a stored TAT")
        .parse()
        .expect("an integer TAT");
    (tat, at)
}

#[test]
fn burst_then_deny_with_honest_fields() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // max_burst 2, one per hour: three at once, then wait an hour.
        for (k, remaining) in [(1, 2), (2, 1), (3, 0)] {
            let r = throttle(&mut c, "t", [2, 1, HOUR], None);
            assert_eq!(r[..3], [1, remaining, 0], "{f:?}");
            let reset = k * HOUR as i64;
            assert!(r[3] <= reset && r[3] > reset - SLACK, "{f:?} {r:?}");
        }
        let r = throttle(&mut c, "t", [2, 1, HOUR], None);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        let hour = HOUR as i64;
        assert!(r[2] <= hour && r[2] > hour - SLACK, "{f:?} {r:?}");
        assert!(r[3] <= 3 * hour && r[3] > 3 * hour - SLACK, "{f:?} {r:?}");
        // A quantity takes several units at once.
        assert_eq!(throttle(&mut c, "q", [4, 1, HOUR], Some(5))[..3], [1, 0, 0]);
        assert_eq!(throttle(&mut c, "q", [4, 1, HOUR], Some(1))[0], 0);
    });
}

#[test]
fn state_is_a_tat_in_microseconds_expiring_when_it_is_reached() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // 7 per hour: T = 3_600_000_000 / 7 µs = 514_285_714.3, rounded up.
        let spec = [9, 7, 3_600_000];
        throttle(&mut c, "t", spec, None);
        let (tat, at) = tat_and_expiry(&mut c, "t");
        // µs since the epoch (16 digits), expiry = TAT rounded up to a ms.
        assert!(tat > 1_000_000_000_000_000, "{f:?} {tat}");
        assert_eq!(at, (tat + 999) / 1000, "{f:?}");
        // Ahead of now, 5 units move the TAT by exactly 5 T.
        throttle(&mut c, "t", spec, Some(5));
        let (tat2, at2) = tat_and_expiry(&mut c, "t");
        assert_eq!(tat2 - tat, 5 * 514_285_715, "{f:?}");
        assert_eq!(at2, (tat2 + 999) / 1000, "{f:?}");
    });
}

#[test]
fn denied_request_and_peek_write_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        throttle(&mut c, "t", [0, 1, HOUR], None);
        let before = state(&mut c, "t");
        let value_before = value_and_expiry(&mut c, "t");
        assert_eq!(throttle(&mut c, "t", [0, 1, HOUR], None)[0], 0, "{f:?}");
        assert_eq!(throttle(&mut c, "t", [0, 1, HOUR], Some(0))[..2], [1, 0]);
        assert_eq!(state(&mut c, "t"), before, "{f:?}");
        assert_eq!(value_and_expiry(&mut c, "t"), value_before, "{f:?}");
        // A peek at a missing key creates nothing.
        assert_eq!(
            throttle(&mut c, "none", [4, 1, HOUR], Some(0)),
            [1, 5, 0, 0]
        );
        let exists: i64 = redis::cmd("EXISTS").arg("none").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}");
    });
}

#[test]
fn bad_input_is_refused_naming_the_argument_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        throttle(&mut c, "k", [1, 1, HOUR], None);
        let before = state(&mut c, "k");
        let cases: &[(&[&str], &str)] = &[
            (&["RL.THROTTLE", "k", "1", "1"], "wrong number of arguments"),
            (
                &["RL.THROTTLE", "k", "1", "1", "1", "1", "1"],
                "wrong number of arguments",
            ),
            (
                &["RL.THROTTLE", "k", "-1", "1", "1000"],
                "max_burst must be an integer from 0 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "0", "1000"],
                "count must be an integer from 1 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", "1.5"],
                "period must be an integer from 1 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", "1000", "x"],
                "quantity must be an integer from 0 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", "1000", "3"],
                "quantity must not exceed max_burst + 1",
            ),
            (
                &["RL.THROTTLE", "k", "0", "2000", "1"],
                "must not exceed 1 per microsecond",
            ),
            (
                &["RL.THROTTLE", "k", "1000000000000", "1", "1000"],
                "max_burst too large",
            ),
        ];
        assert_errors(&mut c, f, cases);
        assert_eq!(state(&mut c, "k"), before, "{f:?}");
    });
}

#[test]
fn other_types_and_foreign_strings_are_refused_untouched() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("RPUSH")
            .arg("list")
            .arg("a")
            .query(&mut c)
            .unwrap();
        assert_wrongtype_untouched(
            &mut c,
            f,
            "list",
            &["RL.THROTTLE", "list", "1", "1", "1000"],
        );
        // A plain string, and a fixed-window counter, are not throttle states.
        for (key, value) in [("s", "hello"), ("counter", "5")] {
            let _: () = redis::cmd("SET").arg(key).arg(value).query(&mut c).unwrap();
            let err = error_of(&mut c, &["RL.THROTTLE", key, "1", "1", "1000"]);
            assert!(err.contains("not an rl throttle state"), "{f:?}: {err}");
            let (now, _) = value_and_expiry(&mut c, key);
            assert_eq!(now.as_deref(), Some(value), "{f:?}");
        }
    });
}

#[test]
fn a_redis_cell_state_in_nanoseconds_is_read_and_rewritten_in_microseconds() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (secs, micros): (i64, i64) = redis::cmd("TIME").query(&mut c).unwrap();
        let now_us = secs * 1_000_000 + micros;
        // redis-cell left a TAT 4.5 s ahead, in ns, with its TTL (it
        // always sets one).
        let ns = (now_us + 4_500_000) * 1000 + 1;
        let _: () = redis::cmd("SET")
            .arg("cell")
            .arg(ns)
            .arg("PX")
            .arg(4_500)
            .query(&mut c)
            .unwrap();
        // max_burst 9, one per second: τ = 10 s, 4.5 s used, 1 more now:
        // 4.5 s left, 4 whole units (on a ms or a µs clock).
        let r = throttle(&mut c, "cell", [9, 1, 1000], None);
        assert_eq!(r[..3], [1, 4, 0], "{f:?}");
        let (tat, _) = tat_and_expiry(&mut c, "cell");
        assert_eq!(tat, (ns + 999) / 1000 + 1_000_000, "{f:?}");
    });
}

#[test]
fn command_info_declares_the_key() {
    on_every_server(|server| {
        let mut c = server.conn();
        for name in ["RL.THROTTLE", "CL.THROTTLE"] {
            let keys: Vec<String> = redis::cmd("COMMAND")
                .arg("GETKEYS")
                .arg(name)
                .arg("user:1")
                .arg(1)
                .arg(1)
                .arg(1)
                .query(&mut c)
                .unwrap();
            assert_eq!(keys, ["user:1"], "{:?} {name}", server.flavor);
        }
    });
}

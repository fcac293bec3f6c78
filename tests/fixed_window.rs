//! RL.FIXED on real servers: reply fields, the counter and its fixed expiry,
//! denials that write nothing, bad input, other types, replicas, 40 clients.
mod common;

use common::limiters::*;
use common::*;

const HOUR: u64 = 3_600_000;
const SLACK: i64 = 10_000;

#[test]
fn burst_then_deny_with_the_expiry_set_once() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let hour = HOUR as i64;
        let r = fixed(&mut c, "f", 3, HOUR, None);
        assert_eq!(r[..3], [1, 2, 0], "{f:?}");
        assert!(r[3] <= hour && r[3] > hour - SLACK, "{f:?} {r:?}");
        let first = value_and_expiry(&mut c, "f");
        assert_eq!(first.0.as_deref(), Some("1"), "{f:?}");
        assert_eq!(
            fixed(&mut c, "f", 3, HOUR, Some(2))[..3],
            [1, 0, 0],
            "{f:?}"
        );
        // Later admissions never move the window's end.
        let (value, at) = value_and_expiry(&mut c, "f");
        assert_eq!((value.as_deref(), at), (Some("3"), first.1), "{f:?}");
        let r = fixed(&mut c, "f", 3, HOUR, None);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert!(
            r[2] <= hour && r[2] > hour - SLACK && r[2] == r[3],
            "{f:?} {r:?}"
        );
    });
}

#[test]
fn waiting_retry_after_opens_a_new_window() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(fixed(&mut c, "short", 1, 500, None)[0], 1, "{f:?}");
        let r = fixed(&mut c, "short", 1, 500, None);
        assert_eq!(r[0], 0, "{f:?}");
        std::thread::sleep(std::time::Duration::from_millis(r[2] as u64 + 2));
        assert_eq!(fixed(&mut c, "short", 1, 500, None)[..2], [1, 0], "{f:?}");
    });
}

#[test]
fn denied_request_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fixed(&mut c, "f", 2, HOUR, Some(2));
        let before = state(&mut c, "f");
        for cost in [None, Some(2)] {
            assert_eq!(fixed(&mut c, "f", 2, HOUR, cost)[0], 0, "{f:?}");
        }
        assert_eq!(state(&mut c, "f"), before, "{f:?}");
    });
}

#[test]
fn bad_input_is_refused_naming_the_argument_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fixed(&mut c, "k", 5, HOUR, None);
        let before = state(&mut c, "k");
        let cases: &[(&[&str], &str)] = &[
            (&["RL.FIXED", "k", "5"], "wrong number of arguments"),
            (
                &["RL.FIXED", "k", "0", "1000"],
                "limit must be an integer from 1 to",
            ),
            (
                &["RL.FIXED", "k", "5", "-1"],
                "window must be an integer from 1 to",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "COST", "6"],
                "COST must not exceed limit",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "COST"],
                "COST needs a value",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "COST", "1", "COST", "1"],
                "COST given more than once",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "WEIGHT", "1"],
                "unknown option 'WEIGHT'",
            ),
        ];
        assert_errors(&mut c, f, cases);
        assert_eq!(state(&mut c, "k"), before, "{f:?}");
    });
}

#[test]
fn other_types_and_throttle_states_are_refused_untouched() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("SADD")
            .arg("set")
            .arg("a")
            .query(&mut c)
            .unwrap();
        assert_wrongtype_untouched(&mut c, f, "set", &["RL.FIXED", "set", "5", "1000"]);
        // A throttle's TAT under the same name is not misread as a count.
        throttle(&mut c, "shared", [1, 1, HOUR], None);
        let before = state(&mut c, "shared");
        let err = error_of(&mut c, &["RL.FIXED", "shared", "5", "1000"]);
        assert!(
            err.contains("not an rl fixed-window counter"),
            "{f:?}: {err}"
        );
        assert_eq!(state(&mut c, "shared"), before, "{f:?}");
    });
}

#[test]
fn replica_holds_the_same_counter_and_expiry() {
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        for _ in 0..4 {
            fixed(&mut p, "f", 3, HOUR, None);
        }
        fixed(&mut p, "g", 10, HOUR, Some(7));
        wait_replicas(&mut p, 1);
        let mut r = replica.conn();
        for (key, count) in [("f", "3"), ("g", "7")] {
            let on_primary = value_and_expiry(&mut p, key);
            assert_eq!(on_primary.0.as_deref(), Some(count), "{flavor:?} {key}");
            assert_eq!(
                value_and_expiry(&mut r, key),
                on_primary,
                "{flavor:?} {key}"
            );
        }
    }
}

#[test]
fn forty_connections_admit_exactly_the_limit() {
    on_every_server(|server| {
        let n = admitted_concurrently(server, 40, 10, |c| fixed(c, "hot", 100, HOUR, None)[0] == 1);
        assert_eq!(n, 100, "{:?}", server.flavor);
        let mut c = server.conn();
        assert_eq!(value_and_expiry(&mut c, "hot").0.as_deref(), Some("100"));
    });
}

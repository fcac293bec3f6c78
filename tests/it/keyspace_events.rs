//! Admissions fire the keyspace events of the plain commands they replicate
//! as (so subscribers see rl's writes like any other); denials and peeks
//! fire none, but for `rl.denied` events with `NOTIFY-DENIED on` only.

use std::time::Duration;

use crate::harness::*;

const MARKER: &str = "__keyevent@0__:rl-test-marker";

/// Publishes a marker on a channel the subscription matches and returns
/// every `(event, key)` published before it: the server delivers in order,
/// so nothing fired before the marker can be missed, and a connection that
/// drops fails the test.
fn drain(c: &mut redis::Connection, pubsub: &mut redis::PubSub) -> Vec<(String, String)> {
    let _: i64 = redis::cmd("PUBLISH")
        .arg(MARKER)
        .arg("--marker--")
        .query(c)
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let msg = pubsub.get_message().expect("the marker arrives");
        if msg.get_channel_name() == MARKER {
            return seen;
        }
        let event = msg
            .get_channel_name()
            .rsplit(':')
            .next()
            .unwrap()
            .to_string();
        seen.push((event, msg.get_payload::<String>().unwrap()));
    }
}

#[test]
fn admissions_fire_the_plain_commands_events_and_denials_fire_none() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("CONFIG")
            .arg(&["SET", "notify-keyspace-events", "KEA"])
            .query(&mut c)
            .unwrap();
        let mut sub = server.conn();
        sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut pubsub = sub.as_pubsub();
        pubsub.psubscribe("__keyevent@0__:*").unwrap();

        let cases: &[(&[&str], &[&str])] = &[
            (&["RL.SLIDE", "s", "1", "60000"], &["zadd", "expire"]),
            (&["RL.BUCKETS", "b", "1", "60000"], &["hset", "expire"]),
            (&["RL.COUNT", "c", "60000", "ok"], &["hset", "expire"]),
            (&["RL.THROTTLE", "t", "0", "1", "60000"], &["set", "expire"]),
            (&["RL.FIXED", "x", "1", "60000"], &["set", "expire"]),
        ];
        for (args, events) in cases {
            run(&mut c, args).unwrap();
            let key = args[1].to_string();
            let want: Vec<(String, String)> = events
                .iter()
                .map(|e| (e.to_string(), key.clone()))
                .collect();
            assert_eq!(drain(&mut c, &mut pubsub), want, "{f:?} {}", args[0]);
        }
        // The same calls again are denied (limit 1), and peeks never write.
        for (args, _) in cases.iter().filter(|(a, _)| a[0] != "RL.COUNT") {
            let reply: Vec<i64> = redis::cmd(args[0]).arg(&args[1..]).query(&mut c).unwrap();
            assert_eq!(reply[0], 0, "{f:?} {args:?}: expected a denial");
        }
        run(&mut c, &["RL.PEEK", "SLIDE", "s", "5", "60000"]).unwrap();
        run(&mut c, &["RL.TOTALS", "c", "60000"]).unwrap();
        // The control: an admission among them is seen before the marker.
        run(&mut c, &["RL.FIXED", "y", "1", "60000"]).unwrap();
        assert_eq!(
            drain(&mut c, &mut pubsub),
            [("set".into(), "y".into()), ("expire".into(), "y".into())],
            "{f:?}: denials and reads fire nothing"
        );
        // A window's later admissions and refunds step its counter, as the
        // INCR and INCRBY they replicate as: `incrby`, the expiry kept.
        run(&mut c, &["RL.FIXED", "z", "5", "60000"]).unwrap();
        run(&mut c, &["RL.FIXED", "z", "5", "60000"]).unwrap();
        run(&mut c, &["RL.FIXED", "z", "5", "60000", "COST", "2"]).unwrap();
        run(&mut c, &["RL.REFUND", "FIXED", "z", "5", "60000"]).unwrap();
        let want: Vec<(String, String)> = ["set", "expire", "incrby", "incrby", "incrby"]
            .iter()
            .map(|e| (e.to_string(), "z".to_string()))
            .collect();
        assert_eq!(drain(&mut c, &mut pubsub), want, "{f:?}: a stepped counter");
        // A throttle's schedule is written whole, even when calls within
        // one ms leave its expiry where it was (a TAT 10 µs apart, within
        // a burst of 100).
        for _ in 0..5 {
            run(&mut c, &["RL.THROTTLE", "gcra", "100", "100000", "1000"]).unwrap();
        }
        let want: Vec<(String, String)> = ["set", "expire"]
            .iter()
            .cycle()
            .take(10)
            .map(|e| (e.to_string(), "gcra".to_string()))
            .collect();
        assert_eq!(drain(&mut c, &mut pubsub), want, "{f:?}: a TAT never steps");
    });
}

/// The keys of the `rl.denied` events fired while `f` runs, in order.
pub(crate) fn denied_keys(server: &Server, f: impl FnOnce(&mut redis::Connection)) -> Vec<String> {
    event_keys(server, "rl.denied", f)
}

/// Subscribes to the keyspace event `event`, runs `f`, then publishes a
/// marker on the same channel and returns every key notified before the
/// marker.
pub(crate) fn event_keys(
    server: &Server,
    event: &str,
    f: impl FnOnce(&mut redis::Connection),
) -> Vec<String> {
    let channel = format!("__keyevent@0__:{event}");
    let mut c = server.conn();
    let _: () = redis::cmd("CONFIG")
        .arg(&["SET", "notify-keyspace-events", "Ed"])
        .query(&mut c)
        .unwrap();
    let mut sub = server.conn();
    sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut ps = sub.as_pubsub();
    ps.subscribe(&channel).unwrap();
    f(&mut c);
    let _: i64 = redis::cmd("PUBLISH")
        .arg(&channel)
        .arg("--marker--")
        .query(&mut c)
        .unwrap();
    let mut keys = Vec::new();
    loop {
        let msg = ps.get_message().expect("the marker arrives");
        let key: String = msg.get_payload().unwrap();
        if key == "--marker--" {
            return keys;
        }
        keys.push(key);
    }
}

pub(crate) fn deny_some(c: &mut redis::Connection) {
    for _ in 0..2 {
        slide(c, "s", 1, 600_000);
        run(c, &["RL.BUCKETS", "b", "1", "600000"]).unwrap();
        run(c, &["RL.THROTTLE", "t", "0", "1", "600000"]).unwrap();
        run(c, &["CL.THROTTLE", "ct", "0", "1", "600"]).unwrap();
        run(c, &["RL.FIXED", "f", "1", "600000"]).unwrap();
        peek(c, &["FIXED", "f", "1", "600000"]);
    }
    let line = [
        "2", "{o}u", "{o}o", "FIXED", "5", "600000", "FIXED", "1", "600000",
    ];
    for _ in 0..2 {
        all(c, &line).unwrap();
    }
}

#[test]
fn denials_fire_rl_denied_events_when_asked() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["NOTIFY-DENIED", "on"]);
        let keys = denied_keys(&server, deny_some);
        // One event per denied call, on the denying key; peeks and the
        // admitting RL.ALL clause fire none.
        assert_eq!(keys, ["s", "b", "t", "ct", "f", "{o}o"], "{flavor:?}");
    }
}

#[test]
fn denials_fire_no_events_by_default() {
    on_every_server(|server| {
        let keys = denied_keys(server, deny_some);
        assert!(keys.is_empty(), "{:?}: {keys:?}", server.flavor);
    });
}

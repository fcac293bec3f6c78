//! Leases through the commands every limiter shares (RL.PEEK, RL.ALL,
//! RL.REFUND), in INFO, in keyspace events, and at maxmemory.

use std::time::Duration;

use super::{acquire, change, err, leases};
use crate::harness::*;

#[test]
fn leases_are_counted_in_info() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let a = acquire(&mut c, &["n", "1", "60000"]).4.unwrap();
        acquire(&mut c, &["n", "1", "60000"]);
        err(&mut c, "RL.ACQUIRE", &["n", "0", "60000"]);
        change(&mut c, "RL.RENEW", &["n", &a, "60000"]);
        change(&mut c, "RL.RELEASE", &["n", &a]);
        change(&mut c, "RL.RELEASE", &["n", &a]);
        use counters;
        assert_eq!(counters(&mut c, "acquire"), [3, 1, 1, 1], "{f:?}");
        // A lease's fate is an answer, neither admitted nor denied.
        assert_eq!(counters(&mut c, "renew"), [1, 0, 0, 0], "{f:?}");
        assert_eq!(counters(&mut c, "release"), [2, 0, 0, 0], "{f:?}");
    });
}

#[test]
fn peek_acquire_reads_only() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let peek = |c: &mut redis::Connection, args: &[&str]| change(c, "RL.PEEK", args);
        assert_eq!(
            peek(&mut c, &["ACQUIRE", "pk", "2", "1000"]),
            [1, 1, 0, 1000],
            "{f:?}"
        );
        assert_eq!(pexpiretime(&mut c, "pk"), -2, "{f:?}: nothing written");
        acquire(&mut c, &["pk", "2", "100", "ID", "a"]);
        acquire(&mut c, &["pk", "2", "60000", "ID", "b"]);
        std::thread::sleep(Duration::from_millis(120));
        let frozen = frozen_state(&mut c, "pk");
        // `a` expired: a slot is free, and the peek removes nothing.
        let r = peek(&mut c, &["ACQUIRE", "pk", "2", "1000"]);
        assert_eq!(r[..3], [1, 0, 0], "{f:?}: {r:?}");
        assert_eq!(leases(&mut c, "pk").len(), 2, "{f:?}");
        assert_eq!(frozen_state(&mut c, "pk"), frozen, "{f:?}");
        // `b` holds its slot: with ID b, a peek would renew it.
        acquire(&mut c, &["pk", "2", "60000", "ID", "c"]);
        assert_eq!(peek(&mut c, &["ACQUIRE", "pk", "2", "1000"])[0], 0, "{f:?}");
        assert_eq!(
            peek(&mut c, &["ACQUIRE", "pk", "2", "1000", "ID", "b"])[0],
            1,
            "{f:?}"
        );
        assert_eq!(
            err(&mut c, "RL.PEEK", &["ACQUIRE", "pk", "2"]),
            "ERR wrong number of arguments for 'rl.peek' command (expected ACQUIRE key limit lease_ms [ID id])",
            "{f:?}"
        );
    });
}

type AllReply = (i64, i64, Vec<redis::Value>, Vec<redis::Value>);

fn all(c: &mut redis::Connection, args: &[&str]) -> AllReply {
    redis::cmd("RL.ALL")
        .arg(args)
        .query(c)
        .unwrap_or_else(|e| panic!("RL.ALL {args:?}: {e}"))
}

#[test]
fn all_with_an_acquire_and_a_rate_clause_is_one_atomic_call() {
    use redis::Value;
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let line = [
            "2", "rate", "jobs", "SLIDE", "3", "600000", "ACQUIRE", "2", "60000",
        ];
        let (ok, retry, rate, lease) = all(&mut c, &line);
        assert_eq!((ok, retry, rate.len(), lease.len()), (1, 0, 4, 5), "{f:?}");
        let Value::BulkString(id) = &lease[4] else {
            panic!("{f:?}: {lease:?}")
        };
        let id = String::from_utf8(id.clone()).unwrap();
        assert_eq!(
            leases(&mut c, "jobs")[0].0,
            id,
            "{f:?}: the reply's lease is held"
        );
        all(&mut c, &line);
        // The concurrency clause denies: nothing recorded in either key.
        let frozen = (frozen_state(&mut c, "rate"), frozen_state(&mut c, "jobs"));
        let (ok, retry, rate, lease) = all(&mut c, &line);
        assert_eq!(ok, 0, "{f:?}");
        assert!(retry > 59_000, "{f:?}: {retry}");
        assert_eq!(rate[0], Value::Int(1), "{f:?}: the rate clause would admit");
        assert_eq!(
            (&lease[0], &lease[4]),
            (&Value::Int(0), &Value::Nil),
            "{f:?}"
        );
        assert_eq!(
            (frozen_state(&mut c, "rate"), frozen_state(&mut c, "jobs")),
            frozen,
            "{f:?}"
        );
        // Released, a slot is free; the rate clause then denies the third:
        // no lease is taken, the clause's lease is nil.
        assert_eq!(change(&mut c, "RL.RELEASE", &["jobs", &id])[0], 1, "{f:?}");
        all(&mut c, &line);
        let held = zcard(&mut c, "jobs");
        let (ok, _, rate, lease) = all(&mut c, &line);
        assert_eq!(
            (ok, &rate[0], &lease[0], &lease[4]),
            (0, &Value::Int(0), &Value::Int(0), &Value::Nil),
            "{f:?}"
        );
        assert_eq!(zcard(&mut c, "jobs"), held, "{f:?}");
        // An ID may spell a limiter's name.
        let (ok, _, _, lease) = all(
            &mut c,
            &[
                "2", "r2", "j2", "FIXED", "5", "1000", "ACQUIRE", "1", "1000", "ID", "SLIDE",
            ],
        );
        assert_eq!(
            (ok, &lease[4]),
            (1, &Value::BulkString(b"SLIDE".to_vec())),
            "{f:?}"
        );
    });
}

#[test]
fn refund_acquire_is_an_error_naming_the_limiter() {
    on_every_server(|server| {
        let mut c = server.conn();
        acquire(&mut c, &["rf", "2", "60000"]);
        let frozen = frozen_state(&mut c, "rf");
        assert_eq!(
            err(&mut c, "RL.REFUND", &["ACQUIRE", "rf", "2", "60000"]),
            "ERR RL.REFUND does not apply to ACQUIRE (a lease is given back with RL.RELEASE)",
            "{:?}",
            server.flavor
        );
        assert_eq!(frozen_state(&mut c, "rf"), frozen);
    });
}

#[test]
fn a_denied_acquire_fires_rl_denied_when_asked() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["NOTIFY-DENIED", "on"]);
        let mut c = server.conn();
        let _: () = redis::cmd("CONFIG")
            .arg(&["SET", "notify-keyspace-events", "Ed"])
            .query(&mut c)
            .unwrap();
        let mut sub = server.conn();
        sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut ps = sub.as_pubsub();
        ps.subscribe("__keyevent@0__:rl.denied").unwrap();
        let a = acquire(&mut c, &["d", "1", "60000"]).4.unwrap();
        acquire(&mut c, &["d", "1", "60000"]);
        change(&mut c, "RL.PEEK", &["ACQUIRE", "d", "1", "60000"]);
        // A lease not held is an answer, not a denial.
        change(&mut c, "RL.RELEASE", &["d", "nope"]);
        change(&mut c, "RL.RENEW", &["d", "nope", "10"]);
        all(
            &mut c,
            &[
                "2", "{d}r", "{d}j", "FIXED", "5", "60000", "ACQUIRE", "1", "60000", "ID", &a,
            ],
        );
        let _: i64 = redis::cmd("PUBLISH")
            .arg(&["__keyevent@0__:rl.denied", "--marker--"])
            .query(&mut c)
            .unwrap();
        let mut keys = Vec::new();
        loop {
            let key: String = ps.get_message().unwrap().get_payload().unwrap();
            if key == "--marker--" {
                break;
            }
            keys.push(key);
        }
        assert_eq!(keys, ["d"], "{flavor:?}");
    }
}

/// At `maxmemory` under `noeviction`, acquiring and renewing are refused
/// (`deny-oom`), but a release still runs: finishing a job frees its slot.
#[test]
fn at_maxmemory_a_release_still_frees_its_slot() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let a = acquire(&mut c, &["oom", "2", "600000"]).4.unwrap();
        for (k, v) in [("maxmemory-policy", "noeviction"), ("maxmemory", "1")] {
            let _: () = redis::cmd("CONFIG")
                .arg(&["SET", k, v])
                .query(&mut c)
                .unwrap();
        }
        let oom = err(&mut c, "RL.ACQUIRE", &["oom", "2", "600000"]);
        assert!(oom.starts_with("OOM"), "{f:?}: {oom}");
        let oom = err(&mut c, "RL.RENEW", &["oom", &a, "600000"]);
        assert!(oom.starts_with("OOM"), "{f:?}: {oom}");
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["oom", &a]),
            [1, 0, 0, 0],
            "{f:?}"
        );
        let _: () = redis::cmd("CONFIG")
            .arg(&["SET", "maxmemory", "0"])
            .query(&mut c)
            .unwrap();
    });
}

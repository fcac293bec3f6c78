//! Leases (RL.ACQUIRE, RL.RELEASE, RL.RENEW) against real servers: replies
//! and the exact state (members, scores, absolute expiry); never more than
//! `limit` held under 40 concurrent clients; expiry without release; `ID`
//! idempotency; renew after expiry refused; replicas, an AOF replay and a
//! promoted replica hold the same leases; errors name the argument and the
//! command and leave foreign keys untouched.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::harness::*;

type Leased = (i64, i64, i64, i64, Option<String>);

fn acquire(c: &mut redis::Connection, args: &[&str]) -> Leased {
    redis::cmd("RL.ACQUIRE")
        .arg(args)
        .query(c)
        .unwrap_or_else(|e| panic!("RL.ACQUIRE {args:?}: {e}"))
}

fn change(c: &mut redis::Connection, name: &str, args: &[&str]) -> Reply4 {
    let v: Vec<i64> = redis::cmd(name)
        .arg(args)
        .query(c)
        .unwrap_or_else(|e| panic!("{name} {args:?}: {e}"));
    v.try_into().expect("four integers")
}

fn now_ms(c: &mut redis::Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).unwrap();
    s * 1000 + us / 1000
}

fn err(c: &mut redis::Connection, name: &str, args: &[&str]) -> String {
    let e = redis::cmd(name)
        .arg(args)
        .query::<redis::Value>(c)
        .expect_err(&format!("{name} {args:?} must fail"));
    error_text(&e)
}

#[test]
fn acquire_release_renew_reply_and_leave_the_exact_state() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let before = now_ms(&mut c);
        let (ok, remaining, retry, reset, lease) = acquire(&mut c, &["l", "2", "60000"]);
        let after = now_ms(&mut c);
        let a = lease.expect("a lease id");
        assert_eq!((ok, remaining, retry), (1, 1, 0), "{f:?}");
        assert_eq!(reset, 60_000, "{f:?}");
        let e = entries(&mut c, "l");
        assert_eq!(e.len(), 1, "{f:?}");
        assert_eq!(e[0].0, a, "{f:?}: the member is the reply's id");
        let score = e[0].1;
        assert!((before + 60_000..=after + 60_000).contains(&score), "{f:?}");
        // The key lives until its latest lease ends, plus a quarter lease.
        assert_eq!(pexpiretime(&mut c, "l"), score + 15_000, "{f:?}");

        let (ok, remaining, _, _, b) = acquire(&mut c, &["l", "2", "60000"]);
        let b = b.unwrap();
        assert_eq!((ok, remaining), (1, 0), "{f:?}");
        assert_ne!(a, b, "{f:?}");
        let frozen = frozen_state(&mut c, "l");
        let (ok, remaining, retry, reset, none) = acquire(&mut c, &["l", "2", "60000"]);
        assert_eq!((ok, remaining, none), (0, 0, None), "{f:?}: denied");
        assert!(retry > 59_000 && retry <= 60_000, "{f:?}: {retry}");
        assert!(reset >= retry, "{f:?}");
        assert_eq!(
            frozen_state(&mut c, "l"),
            frozen,
            "{f:?}: a denial writes nothing"
        );

        // Renew: the lease moves to now + lease_ms, never shorter.
        let r = change(&mut c, "RL.RENEW", &["l", &a, "120000"]);
        assert_eq!(r[..2], [1, 2], "{f:?}: {r:?}");
        let moved = entries(&mut c, "l");
        let new_score = moved.iter().find(|(m, _)| *m == a).unwrap().1;
        assert!(new_score >= score + 60_000 - 1_000, "{f:?}");
        assert_eq!(pexpiretime(&mut c, "l"), new_score + 30_000, "{f:?}");
        let r = change(&mut c, "RL.RENEW", &["l", &a, "10"]);
        assert_eq!(r[0], 1, "{f:?}");
        assert_eq!(entries(&mut c, "l"), moved, "{f:?}: never shortened");

        // Release frees the slot at once; a second release is 0.
        let r = change(&mut c, "RL.RELEASE", &["l", &b]);
        assert_eq!(r[..2], [1, 1], "{f:?}: {r:?}");
        let frozen = frozen_state(&mut c, "l");
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["l", &b])[..2],
            [0, 1],
            "{f:?}"
        );
        assert_eq!(frozen_state(&mut c, "l"), frozen, "{f:?}: nothing written");
        assert_eq!(acquire(&mut c, &["l", "2", "60000"]).0, 1, "{f:?}: reused");
        // The last lease released: the set is gone.
        let only = acquire(&mut c, &["one", "1", "60000"]).4.unwrap();
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["one", &only]),
            [1, 0, 0, 0],
            "{f:?}"
        );
        assert_eq!(pexpiretime(&mut c, "one"), -2, "{f:?}");
    });
}

#[test]
fn resp3_replies_hold_the_lease_as_a_bulk_string_or_nil() {
    on_every_server(|server| {
        let mut c = server.conn_resp3();
        let v: redis::Value = redis::cmd("RL.ACQUIRE")
            .arg(&["r", "1", "60000", "ID", "job-1"])
            .query(&mut c)
            .unwrap();
        let redis::Value::Array(items) = v else {
            panic!("{v:?}")
        };
        assert_eq!(items[4], redis::Value::BulkString(b"job-1".to_vec()));
        let v: redis::Value = redis::cmd("RL.ACQUIRE")
            .arg(&["r", "1", "60000"])
            .query(&mut c)
            .unwrap();
        let redis::Value::Array(items) = v else {
            panic!("{v:?}")
        };
        assert_eq!(items[4], redis::Value::Nil, "{:?}", server.flavor);
    });
}

/// Leases of `key` the server holds now: `ZCOUNT key (now +inf`, `now`
/// from the server's own clock, read in the same script (atomic).
fn held_now(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("EVAL")
        .arg(
            "local t = redis.call('TIME') \
             local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) \
             return redis.call('ZCOUNT', KEYS[1], string.format('(%.0f', now), '+inf')",
        )
        .arg(1)
        .arg(key)
        .query(c)
        .expect("count the held leases")
}

/// The server's own count is sampled from another connection while 40
/// clients acquire and release: it never exceeds the limit, and every
/// admission's `remaining` says at most `limit - 1` are left (an
/// over-admission would answer more, or wrap).
#[test]
fn forty_concurrent_clients_never_hold_more_than_limit() {
    const LIMIT: i64 = 5;
    on_every_server(|server| {
        let f = server.flavor;
        let done = Arc::new(AtomicBool::new(false));
        let sampler = {
            let mut c = server.conn();
            let done = done.clone();
            std::thread::spawn(move || {
                let (mut most, mut samples) = (0, 0u64);
                while !done.load(Ordering::SeqCst) {
                    most = most.max(held_now(&mut c, "pool"));
                    samples += 1;
                }
                (most, samples)
            })
        };
        let taken = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..40)
            .map(|_| {
                let mut c = server.conn();
                let taken = taken.clone();
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        let (ok, remaining, _, _, lease) = acquire(&mut c, &["pool", "5", "30000"]);
                        if ok == 0 {
                            assert_eq!(remaining, 0, "{f:?}: a denial with room left");
                            std::thread::sleep(Duration::from_millis(1));
                            continue;
                        }
                        assert!(
                            (0..LIMIT).contains(&remaining),
                            "{f:?}: admitted with remaining {remaining}"
                        );
                        taken.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(2));
                        let r = change(&mut c, "RL.RELEASE", &["pool", &lease.unwrap()]);
                        assert_eq!(r[0], 1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        let (most, samples) = sampler.join().unwrap();
        let mut c = server.conn();
        assert!(most <= LIMIT, "{f:?}: the server held {most} at once");
        // The control: the sampler saw leases held, so it counts them.
        assert!(most > 0, "{f:?}: {samples} samples saw no lease held");
        // Released slots were reused, many times over.
        assert!(taken.load(Ordering::SeqCst) > 5 * LIMIT as u64, "{f:?}");
        assert_eq!(held_now(&mut c, "pool"), 0, "{f:?}: every lease released");
    });
}

#[test]
fn leases_expire_without_any_release() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(acquire(&mut c, &["e", "1", "100"]).0, 1, "{f:?}");
        assert_eq!(acquire(&mut c, &["e", "1", "100"]).0, 0, "{f:?}");
        std::thread::sleep(Duration::from_millis(120));
        let (ok, _, _, _, lease) = acquire(&mut c, &["e", "1", "100"]);
        assert_eq!(ok, 1, "{f:?}: the expired slot is free");
        // The admission removed the expired lease.
        let e = entries(&mut c, "e");
        assert_eq!(e.len(), 1, "{f:?}: {e:?}");
        assert_eq!(Some(e[0].0.clone()), lease, "{f:?}");
        // Nothing held: the key goes away on its own.
        let gone = wait_until(Duration::from_secs(2), || pexpiretime(&mut c, "e") == -2);
        assert!(gone, "{f:?}");
    });
}

#[test]
fn a_named_id_is_idempotent_and_renew_after_expiry_is_refused() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let first = acquire(&mut c, &["i", "1", "150", "ID", "job-9"]);
        assert_eq!((first.0, first.4.as_deref()), (1, Some("job-9")), "{f:?}");
        let again = acquire(&mut c, &["i", "1", "150", "ID", "job-9"]);
        assert_eq!((again.0, again.1), (1, 0), "{f:?}: counted once");
        assert_eq!(zcard(&mut c, "i"), 1, "{f:?}");
        assert_eq!(
            acquire(&mut c, &["i", "1", "150", "ID", "job-8"]).0,
            0,
            "{f:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
        let frozen = frozen_state(&mut c, "i");
        let r = change(&mut c, "RL.RENEW", &["i", "job-9", "1000"]);
        assert_eq!(r[0], 0, "{f:?}: the holder lost its slot");
        assert_eq!(frozen_state(&mut c, "i"), frozen, "{f:?}: nothing written");
    });
}

/// Acquires, renews and releases on a few keys (long leases).
fn lease_traffic(c: &mut redis::Connection) -> Vec<String> {
    let mut ids = Vec::new();
    for k in ["p:a", "p:b"] {
        for _ in 0..3 {
            ids.push(acquire(c, &[k, "3", "600000"]).4.unwrap());
        }
    }
    acquire(c, &["p:c", "2", "600000", "ID", "named"]);
    assert_eq!(change(c, "RL.RENEW", &["p:a", &ids[0], "900000"])[0], 1);
    assert_eq!(change(c, "RL.RELEASE", &["p:b", &ids[4]])[0], 1);
    ids
}

#[test]
fn replicas_and_aof_hold_the_primary_leases() {
    for flavor in ALL {
        let primary =
            Server::start_primary(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let with_rl = primary.start_replica(true);
        let without_rl = primary.start_replica(false);
        let mut c = primary.conn();
        lease_traffic(&mut c);
        wait_replicas(&mut c, 2);
        let want = keyspace(&mut c);
        assert_eq!(want.len(), 3, "{flavor:?}: {want:?}");
        for replica in [&with_rl, &without_rl] {
            assert_eq!(keyspace(&mut replica.conn()), want, "{flavor:?}");
        }
        let aof = aof_text(primary.dir());
        assert!(
            aof.contains("ZADD") && aof.contains("ZREM") && aof.contains("PEXPIREAT"),
            "{flavor:?}"
        );
        assert!(
            !aof.contains("RL.ACQUIRE") && !aof.contains("rl.acquire"),
            "{flavor:?}"
        );
        drop(with_rl);
        drop(without_rl);
        let dir = primary.stop(true);
        let restarted = Server::start_in(flavor, dir, &["--appendonly", "yes"], false);
        assert_eq!(keyspace(&mut restarted.conn()), want, "{flavor:?}");
    }
}

#[test]
fn a_promoted_replica_neither_loses_nor_duplicates_a_lease() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        let ids = lease_traffic(&mut p);
        wait_replicas(&mut p, 1);
        let held = keyspace(&mut p);
        let mut r = replica.conn();
        let _: () = redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query(&mut r)
            .unwrap();
        assert_eq!(keyspace(&mut r), held, "{flavor:?}: nothing lost");
        // Full keys stay full; the old holders still hold their leases.
        assert_eq!(acquire(&mut r, &["p:a", "3", "600000"]).0, 0, "{flavor:?}");
        assert_eq!(
            change(&mut r, "RL.RENEW", &["p:a", &ids[1], "600000"])[0],
            1,
            "{flavor:?}"
        );
        assert_eq!(
            change(&mut r, "RL.RELEASE", &["p:a", &ids[2]])[0],
            1,
            "{flavor:?}"
        );
        // The slot freed goes to a new id, never one handed out before.
        let new = acquire(&mut r, &["p:a", "3", "600000"]).4.unwrap();
        assert!(!ids.contains(&new), "{flavor:?}: {new} handed out twice");
        assert_eq!(zcard(&mut r, "p:a"), 3, "{flavor:?}");
    }
}

#[test]
fn errors_name_the_argument_and_the_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let cases: &[(&str, &[&str], &str)] = &[
            ("RL.ACQUIRE", &["k", "3"], "ERR wrong number of arguments for 'rl.acquire' command"),
            ("RL.ACQUIRE", &["k", "0", "100"], "ERR limit must be an integer from 1 to 1000000"),
            ("RL.ACQUIRE", &["k", "3", "x"], "ERR lease_ms must be an integer from 1 to 1000000000000"),
            ("RL.ACQUIRE", &["k", "3", "100", "ID"], "ERR ID needs a value"),
            ("RL.ACQUIRE", &["k", "3", "100", "ID", "42"], "ERR ID must be 1 to 64 printable ASCII characters without spaces, and not an integer"),
            ("RL.ACQUIRE", &["k", "3", "100", "COST", "1"], "ERR unknown option 'COST'"),
            ("RL.RELEASE", &["k"], "ERR wrong number of arguments for 'rl.release' command"),
            ("RL.RELEASE", &["k", "a b"], "ERR lease must be 1 to 64 printable ASCII characters without spaces, and not an integer"),
            ("RL.RENEW", &["k", "a"], "ERR wrong number of arguments for 'rl.renew' command"),
            ("RL.RENEW", &["k", "a", "0"], "ERR lease_ms must be an integer from 1 to 1000000000000"),
        ];
        for (name, args, want) in cases {
            assert_eq!(err(&mut c, name, args), *want, "{f:?} {name} {args:?}");
        }
        assert_eq!(pexpiretime(&mut c, "k"), -2, "{f:?}: nothing written");
    });
}

#[test]
fn foreign_keys_and_slide_logs_are_refused_and_left_untouched() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // An RL.SLIDE log is not a lease set, and the other way round.
        assert_eq!(slide(&mut c, "log", 10, 600_000)[0], 1);
        acquire(&mut c, &["set", "3", "600000"]);
        let _: () = redis::cmd("ZADD")
            .arg(&["plain", "5", "x"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("ZADD")
            .arg(&["ints", "5000", "12"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("PEXPIRE")
            .arg(&["ints", "600000"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("ZADD")
            .arg(&["frac", "99999999999999.5", "job"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("PEXPIRE")
            .arg(&["frac", "600000"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("SET").arg(&["str", "v"]).query(&mut c).unwrap();
        let foreign = "ERR key holds a sorted set that rl did not write";
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "log",
                "ERR key holds RL.SLIDE state, not lease state",
                &["RL.ACQUIRE", "log", "3", "1000"],
            ),
            (
                "log",
                "ERR key holds RL.SLIDE state, not lease state",
                &["RL.RENEW", "log", "a", "1000"],
            ),
            ("plain", foreign, &["RL.ACQUIRE", "plain", "3", "1000"]),
            ("ints", foreign, &["RL.ACQUIRE", "ints", "3", "1000"]),
            ("frac", foreign, &["RL.ACQUIRE", "frac", "3", "1000"]),
            ("frac", foreign, &["RL.RELEASE", "frac", "job"]),
            (
                "str",
                "WRONGTYPE Operation against a key holding the wrong kind of value",
                &["RL.ACQUIRE", "str", "3", "1000"],
            ),
            ("set", foreign, &["RL.SLIDE", "set", "10", "1000"]),
        ];
        for (key, want, line) in cases {
            let frozen = frozen_state(&mut c, key);
            assert_eq!(err(&mut c, line[0], &line[1..]), *want, "{f:?} {line:?}");
            assert_eq!(
                frozen_state(&mut c, key),
                frozen,
                "{f:?} {line:?}: untouched"
            );
        }
    });
}

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
        assert_eq!(zcard(&mut c, "pk"), 2, "{f:?}");
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
            entries(&mut c, "jobs")[0].0,
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

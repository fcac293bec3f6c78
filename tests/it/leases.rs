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

/// The leases of a lease set as (id, expiry), after checking that it
/// starts with its header (`rl leases` at score 0); none for a missing key.
fn leases(c: &mut redis::Connection, key: &str) -> Vec<(String, i64)> {
    let mut e = entries(c, key);
    if e.is_empty() {
        return e;
    }
    assert_eq!(e[0], ("rl leases".to_string(), 0), "{key}: {e:?}");
    e.remove(0);
    e
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
        let e = leases(&mut c, "l");
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
        let moved = leases(&mut c, "l");
        let new_score = moved.iter().find(|(m, _)| *m == a).unwrap().1;
        assert!(new_score >= score + 60_000 - 1_000, "{f:?}");
        assert_eq!(pexpiretime(&mut c, "l"), new_score + 30_000, "{f:?}");
        let r = change(&mut c, "RL.RENEW", &["l", &a, "10"]);
        assert_eq!(r[0], 1, "{f:?}");
        assert_eq!(leases(&mut c, "l"), moved, "{f:?}: never shortened");

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
        let e = leases(&mut c, "e");
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
        assert_eq!(leases(&mut c, "i").len(), 1, "{f:?}");
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
        assert_eq!(leases(&mut r, "p:a").len(), 3, "{flavor:?}");
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
        let setup: &[&[&str]] = &[
            &["ZADD", "plain", "5", "x"],
            &["ZADD", "ints", "5000", "12"],
            &["PEXPIRE", "ints", "600000"],
            &["ZADD", "frac", "99999999999999.5", "job"],
            &["PEXPIRE", "frac", "600000"],
            &["SET", "str", "v"],
        ];
        for line in setup {
            run(&mut c, line).unwrap();
        }
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
            ("ints", NO_HEADER, &["RL.ACQUIRE", "ints", "3", "1000"]),
            ("frac", NO_HEADER, &["RL.ACQUIRE", "frac", "3", "1000"]),
            ("frac", NO_HEADER, &["RL.RELEASE", "frac", "job"]),
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

const NO_HEADER: &str = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";

/// Sorted sets of names scored by time (a leaderboard, a schedule) have
/// the shape of leases; without the lease header every lease command
/// refuses them before writing: same bytes, same expiry, nothing written
/// (the change counter, and a `WATCH` on them, unmoved).
#[test]
fn sorted_sets_of_the_shape_of_leases_are_refused_by_every_lease_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let now = now_ms(&mut c);
        let (hour, two, far) = (
            (now + 3_600_000).to_string(),
            (now + 7_200_000).to_string(),
            (now + 100_000_000_000).to_string(),
        );
        let setup: &[&[&str]] = &[
            &[
                "ZADD", "board", "100", "alice", "250", "bob", "999", "carol",
            ],
            &["EXPIRE", "board", "3600"],
            &["ZADD", "sched", &hour, "job-alice", &two, "job-bob"],
            &["PEXPIRE", "sched", "86400000"],
            &["ZADD", "fs", &far, "alice"],
            &["PEXPIRE", "fs", "60000"],
        ];
        for line in setup {
            run(&mut c, line).unwrap();
        }
        let lines: &[&[&str]] = &[
            &["RL.ACQUIRE", "board", "10", "1000"],
            &["RL.ACQUIRE", "board", "10", "1000", "ID", "alice"],
            &["RL.RELEASE", "board", "alice"],
            &["RL.RENEW", "board", "bob", "1000"],
            &["RL.PEEK", "ACQUIRE", "board", "10", "1000"],
            &["RL.RELEASE", "sched", "job-alice"],
            &["RL.RENEW", "sched", "job-bob", "99999999"],
            &["RL.ACQUIRE", "sched", "10", "1000"],
            &["RL.ACQUIRE", "fs", "1", "1000", "ID", "alice"],
            &["RL.RENEW", "fs", "alice", "1000"],
        ];
        for line in lines {
            let key = if line[1] == "ACQUIRE" {
                line[2]
            } else {
                line[1]
            };
            let frozen = frozen_state(&mut c, key);
            let changed = changes(&mut c);
            assert_eq!(error_of(&mut c, line), NO_HEADER, "{f:?} {line:?}");
            assert_eq!(frozen_state(&mut c, key), frozen, "{f:?} {line:?}");
            assert_eq!(changes(&mut c), changed, "{f:?} {line:?}");
        }
        // In RL.ALL: refused whole, the other clause's key not created.
        let frozen = frozen_state(&mut c, "board");
        let e = error_of(
            &mut c,
            &[
                "RL.ALL", "2", "{b}r", "board", "SLIDE", "5", "1000", "ACQUIRE", "3", "1000",
            ],
        );
        assert!(
            e.starts_with("ERR clause 2: key holds a sorted set"),
            "{f:?}: {e}"
        );
        assert_eq!(frozen_state(&mut c, "board"), frozen, "{f:?}");
        assert_eq!(exists(&mut c, &["{b}r"]), 0, "{f:?}");
        // A WATCH on the leaderboard survives every refusal.
        let mut w = server.conn();
        run(&mut w, &["WATCH", "board"]).unwrap();
        for line in lines.iter().filter(|l| l.contains(&"board")) {
            error_of(&mut c, line);
        }
        run(&mut w, &["MULTI"]).unwrap();
        run(&mut w, &["PING"]).unwrap();
        let exec = run(&mut w, &["EXEC"]).unwrap();
        assert_ne!(exec, redis::Value::Nil, "{f:?}: the WATCH was broken");
    });
}

/// A lease set is its header and its leases: the header comes with the
/// first lease (one `ZADD`, replicated as is) and goes with the last
/// entry; expired leases not yet removed keep it until its TTL.
#[test]
fn a_lease_set_holds_its_header_from_the_first_lease_to_the_last_entry() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (_, _, _, _, a) = acquire(&mut c, &["h", "3", "1000"]);
        let a = a.unwrap();
        let e = entries(&mut c, "h");
        assert_eq!(e.len(), 2, "{f:?}: {e:?}");
        assert_eq!(e[0], ("rl leases".to_string(), 0), "{f:?}");
        assert_eq!(e[1].0, a, "{f:?}");
        let b = acquire(&mut c, &["h", "3", "60000", "ID", "b"]).4.unwrap();
        // `a` expires; releasing `b` leaves `a` (expired, not removed yet)
        // and the header until the key's TTL.
        server.advance(1_100);
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["h", &b])[..2],
            [1, 0],
            "{f:?}"
        );
        assert_eq!(leases(&mut c, "h").len(), 1, "{f:?}: the expired one stays");
        // The next admission removes it; its release removes the header.
        let n = acquire(&mut c, &["h", "3", "60000"]).4.unwrap();
        assert_eq!(
            leases(&mut c, "h").iter().map(|e| &e.0).collect::<Vec<_>>(),
            [&n]
        );
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["h", &n]),
            [1, 0, 0, 0],
            "{f:?}"
        );
        assert_eq!(exists(&mut c, &["h"]), 0, "{f:?}: the set is gone");
    });
}

/// When more leases are held than the limit asked (the limit was
/// lowered), a slot frees only once `held - limit + 1` of them end: the
/// wait says so in RL.ACQUIRE, RL.PEEK ACQUIRE and RL.ALL, and waiting it
/// is enough.
#[test]
fn a_lowered_limit_waits_until_enough_leases_end() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let exact = server.clock_stopped();
        let mut c = server.conn();
        for (id, ms) in [("a", "1000"), ("b", "2000"), ("c", "3000")] {
            assert_eq!(acquire(&mut c, &["lo", "5", ms, "ID", id]).0, 1, "{f:?}");
        }
        let frozen = frozen_state(&mut c, "lo");
        let (ok, remaining, retry, reset, lease) = acquire(&mut c, &["lo", "2", "500"]);
        assert_eq!((ok, remaining, lease), (0, 0, None), "{f:?}");
        let peeked = change(&mut c, "RL.PEEK", &["ACQUIRE", "lo", "2", "500"]);
        let (all_ok, all_retry, _): (i64, i64, redis::Value) = redis::cmd("RL.ALL")
            .arg(&["1", "lo", "ACQUIRE", "1", "500"])
            .query(&mut c)
            .unwrap();
        assert_eq!((peeked[0], all_ok), (0, 0), "{f:?}");
        if exact {
            assert_eq!((retry, reset), (2000, 3000), "{f:?}");
            assert_eq!(peeked, [0, 0, 2000, 3000], "{f:?}");
            assert_eq!(all_retry, 3000, "{f:?}: limit 1, all three must end");
        } else {
            // The real clock moved a few ms since the acquires.
            assert!((1_900..=2000).contains(&retry), "{f:?}: {retry}");
            assert!((1_900..=2000).contains(&peeked[2]), "{f:?}: {peeked:?}");
            assert!((2_900..=3000).contains(&all_retry), "{f:?}: {all_retry}");
        }
        assert_eq!(
            frozen_state(&mut c, "lo"),
            frozen,
            "{f:?}: denials write nothing"
        );
        if exact {
            server.advance(1_999);
            let r = acquire(&mut c, &["lo", "2", "500"]);
            assert_eq!((r.0, r.1, r.2), (0, 0, 1), "{f:?}");
            server.advance(1);
            assert_eq!(
                acquire(&mut c, &["lo", "2", "500"]).0,
                1,
                "{f:?}: waited enough"
            );
        }
    });
}

/// A renewal, or a retried `ID`, that does not extend its lease changes
/// nothing and writes nothing: no replication, no keyspace change, a
/// `WATCH` on the key survives.
#[test]
fn a_renewal_that_extends_nothing_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["nr", "2", "600000", "ID", "job"]);
        let frozen = frozen_state(&mut c, "nr");
        let changed = changes(&mut c);
        let mut w = server.conn();
        run(&mut w, &["WATCH", "nr"]).unwrap();
        assert_eq!(
            change(&mut c, "RL.RENEW", &["nr", "job", "1000"])[..2],
            [1, 1],
            "{f:?}"
        );
        let again = acquire(&mut c, &["nr", "2", "1000", "ID", "job"]);
        assert_eq!(
            (again.0, again.1, again.4.as_deref()),
            (1, 1, Some("job")),
            "{f:?}"
        );
        assert_eq!(frozen_state(&mut c, "nr"), frozen, "{f:?}");
        assert_eq!(changes(&mut c), changed, "{f:?}");
        run(&mut w, &["MULTI"]).unwrap();
        run(&mut w, &["PING"]).unwrap();
        assert_ne!(run(&mut w, &["EXEC"]).unwrap(), redis::Value::Nil, "{f:?}");
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

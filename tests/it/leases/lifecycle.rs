//! A lease's life: acquired, renewed, released or expired, with the exact
//! state at each step; many clients at once; named ids; a lowered limit; a
//! renewal that extends nothing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{acquire, change, leases};
use crate::harness::*;

#[test]
fn acquire_release_renew_reply_and_leave_the_exact_state() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let before = server_ms(&mut c);
        let (ok, remaining, retry, reset, lease) = acquire(&mut c, &["l", "2", "60000"]);
        let after = server_ms(&mut c);
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

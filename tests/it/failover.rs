//! A replica promoted mid-stream keeps every limit: a client thread sends
//! continuous traffic on every limiter (`RL.ALL` and `RL.ACQUIRE` too), the
//! writes are paused while the replica catches up (as a managed failover
//! does), the replica is promoted with `REPLICAOF NO ONE`, the old primary
//! follows it, and the traffic goes on against the new primary. Every
//! limited subject gets exactly `limit` across the switch (no more, and no
//! fewer: the commands kept answering), at most `limit` leases are held,
//! admissions are neither lost nor doubled, and RL.SLIDE members stay unique.

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::harness::all_commands::{Writer, LIMITERS, LONG_MS};
use crate::harness::raw_resp::{RawConn, Resp};
use crate::harness::*;

const SUBJECTS: usize = 12;
const LIMIT: u64 = 40;
/// Requests sent in all (about 94 per subject, of 8 limiters x 12
/// subjects); the switch happens after about a quarter of them, while every
/// subject still has room (about 26 requests each, of 40).
const REQUESTS: usize = 9_000;
const SWITCH_AFTER: usize = 2_500;

fn key(w: Writer, s: usize) -> String {
    format!("fo:{}:{s}", w.name())
}

struct Traffic {
    /// Admissions seen by the client, per limiter and subject.
    admitted: Vec<Vec<u64>>,
    /// Admissions the new primary gave (after the switch).
    admitted_after: u64,
    /// Error replies and dropped connections, as text.
    errors: Vec<String>,
}

/// Sends one request at a time to whichever server `target` names,
/// reconnecting when a connection drops; counts what the replies admitted.
fn traffic(target: Arc<AtomicU16>, sent: Arc<AtomicUsize>, stop: Arc<AtomicBool>) -> Traffic {
    let mut admitted = vec![vec![0u64; SUBJECTS]; LIMITERS.len()];
    let mut errors = Vec::new();
    let mut admitted_after = 0;
    let mut port = target.load(Ordering::SeqCst);
    let first_port = port;
    let mut conn = RawConn::connect(port);
    for i in 0..REQUESTS {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let wi = i % LIMITERS.len();
        let s = (i / LIMITERS.len()) % SUBJECTS;
        let w = LIMITERS[wi];
        let now_port = target.load(Ordering::SeqCst);
        if now_port != port {
            port = now_port;
            conn = RawConn::connect(port);
        }
        let line = w.admit_line(&key(w, s), LIMIT);
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            conn.pipeline(std::slice::from_ref(&line)).pop().unwrap()
        }));
        sent.fetch_add(1, Ordering::SeqCst);
        match reply {
            Ok(Resp::Error(e)) => errors.push(String::from_utf8_lossy(&e).into_owned()),
            Ok(r) => {
                let ints = match (w, &r) {
                    (Writer::Count, _) => vec![],
                    // The decision's first element (then clauses, a lease id).
                    (Writer::All | Writer::Acquire, Resp::Array(Some(items))) => match items[0] {
                        Resp::Int(allowed) => vec![allowed],
                        _ => panic!("{}: {r:?}", w.name()),
                    },
                    _ => r.ints().unwrap_or_else(|| panic!("{}: {r:?}", w.name())),
                };
                if w.admitted(&ints) {
                    admitted[wi][s] += 1;
                    if port != first_port {
                        admitted_after += 1;
                    }
                }
            }
            // The old primary dropped us while turning into a replica: the
            // request was not admitted; go on with the current target.
            Err(_) => {
                errors.push("connection dropped".into());
                port = target.load(Ordering::SeqCst);
                conn = RawConn::connect(port);
            }
        }
    }
    Traffic {
        admitted,
        admitted_after,
        errors,
    }
}

fn switch_over(primary: &Server, replica: &Server, target: &AtomicU16) {
    let mut p = primary.conn();
    let mut r = replica.conn();
    // Hold the writes, let the replica catch up, promote it, and make the
    // old primary follow it before its held writes run (they are refused).
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(20_000)
        .arg("WRITE")
        .query(&mut p)
        .unwrap();
    let primary_offset = repl_offset(&mut p);
    let caught_up = wait_until(Duration::from_secs(20), || {
        info_field(&mut r, "replication", "slave_repl_offset")
            .and_then(|v| v.parse::<i64>().ok())
            .is_some_and(|o| o >= primary_offset)
    });
    assert!(
        caught_up,
        "{:?}: the replica did not catch up",
        primary.flavor
    );
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    target.store(replica.port, Ordering::SeqCst);
    let _: () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(replica.port)
        .query(&mut p)
        .unwrap();
    let _: () = redis::cmd("CLIENT").arg("UNPAUSE").query(&mut p).unwrap();
}

#[test]
fn promoted_replica_keeps_every_limit_across_the_switch() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let mut replica = primary.start_replica(true);
        let target = Arc::new(AtomicU16::new(primary.port));
        let sent = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (target, sent, stop) = (target.clone(), sent.clone(), stop.clone());
            std::thread::spawn(move || traffic(target, sent, stop))
        };
        let reached = wait_until(Duration::from_secs(60), || {
            sent.load(Ordering::SeqCst) >= SWITCH_AFTER
        });
        if !reached {
            stop.store(true, Ordering::SeqCst);
        }
        assert!(reached, "{flavor:?}: traffic stalled before the switch");
        switch_over(&primary, &replica, &target);
        let seen = thread.join().expect("traffic thread");
        replica.assert_alive();

        let mut c = replica.conn();
        let role: String = info_field(&mut c, "replication", "role").unwrap();
        assert_eq!(role, "master", "{flavor:?}");
        // The switch costs the one request in flight (refused by the old
        // primary turning replica, or its connection dropped) and perhaps
        // one sent as the target moved; a command that errs on the new
        // primary would cost hundreds.
        assert!(
            seen.errors.len() <= 3
                && seen
                    .errors
                    .iter()
                    .all(|e| e.starts_with("READONLY") || e == "connection dropped"),
            "{flavor:?}: errors {:?}",
            seen.errors
        );
        let (secs, us): (i64, i64) = redis::cmd("TIME").query(&mut c).unwrap();
        let now_ms = secs * 1000 + us / 1000;
        let mut total = 0;
        for (wi, w) in LIMITERS.into_iter().enumerate() {
            for s in 0..SUBJECTS {
                let k = key(w, s);
                let got = seen.admitted[wi][s];
                total += got;
                // Each subject was asked about 94 times: every limited one
                // reached its limit, across the switch, and no further.
                if w != Writer::Count {
                    assert_eq!(got, LIMIT, "{flavor:?} {k}: admitted, limit {LIMIT}");
                }
                let members = |c: &mut redis::Connection, k: &str| {
                    let members: Vec<String> =
                        redis::cmd("ZRANGE").arg(k).arg(0).arg(-1).query(c).unwrap();
                    let mut unique = members.clone();
                    unique.sort();
                    unique.dedup();
                    assert_eq!(unique.len(), members.len(), "{flavor:?} {k}: members");
                    members.len() as i64
                };
                // What the new primary holds is exactly what the client was
                // told was admitted: nothing lost, nothing doubled.
                let held: i64 = match w {
                    Writer::Slide => members(&mut c, &k),
                    Writer::Buckets => header(&mut c, &k).counts[0] as i64,
                    Writer::Count => {
                        let v: Vec<(String, i64)> = redis::cmd("RL.TOTALS")
                            .arg(&k)
                            .arg(LONG_MS)
                            .query(&mut c)
                            .unwrap();
                        v[0].1
                    }
                    Writer::Fixed => redis::cmd("GET").arg(&k).query(&mut c).unwrap(),
                    // GCRA: the remaining burst a peek reports.
                    Writer::Throttle | Writer::ClThrottle => {
                        let v: Vec<i64> = redis::cmd("RL.THROTTLE")
                            .arg(&k)
                            .arg(LIMIT - 1)
                            .arg(1)
                            .arg(LONG_MS)
                            .arg(0)
                            .query(&mut c)
                            .unwrap();
                        LIMIT as i64 - v[1]
                    }
                    // Both clauses recorded every admission, and only those.
                    Writer::All => {
                        let fixed: i64 = redis::cmd("GET")
                            .arg(Writer::all_second_key(&k))
                            .query(&mut c)
                            .unwrap();
                        assert_eq!(fixed, got as i64, "{flavor:?} {k}: the FIXED clause");
                        members(&mut c, &k)
                    }
                    // The leases held now (none has expired).
                    Writer::Acquire => {
                        let held: i64 = redis::cmd("ZCOUNT")
                            .arg(&k)
                            .arg(format!("({now_ms}"))
                            .arg("+inf")
                            .query(&mut c)
                            .unwrap();
                        assert!(held <= LIMIT as i64, "{flavor:?} {k}: {held} leases held");
                        held
                    }
                };
                assert_eq!(held, got as i64, "{flavor:?} {k}: held vs admitted");
            }
        }
        assert!(
            seen.admitted_after > 0 && seen.admitted_after < total,
            "{flavor:?}: {} of {total} admitted after the switch",
            seen.admitted_after
        );
    }
}

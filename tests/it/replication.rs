//! Replicas receive rl's writes as plain commands with resolved values
//! (`PEXPIREAT`/`PXAT`, never a relative TTL), so a replica, with or
//! without the module, holds exactly the primary's state: the same keys,
//! sorted-set members and scores, hash fields, string values, and the same
//! absolute expiries, to the millisecond.

use std::time::Duration;

use crate::harness::all_commands::{mixed_traffic, Writer, LONG_MS, WRITERS};
use crate::harness::*;

/// A call of every command that expires soon after it (at most 1.2 s).
fn short_lines(prefix: &str) -> Vec<Vec<String>> {
    let key = |w: &str| format!("{prefix}:{w}");
    [
        vec!["RL.SLIDE", &key("slide"), "3", "150", "COST", "2"],
        vec!["RL.BUCKETS", &key("buckets"), "3", "150", "PRECISION", "50"],
        vec!["RL.COUNT", &key("count"), "150", "hits", "PRECISION", "50"],
        vec!["RL.THROTTLE", &key("throttle"), "0", "1", "150"],
        vec!["CL.THROTTLE", &key("cell"), "0", "1", "1"],
        vec!["RL.FIXED", &key("fixed"), "3", "150"],
    ]
    .into_iter()
    .map(|l| l.into_iter().map(String::from).collect())
    .collect()
}

/// `line` (name, key, arguments) run from a Lua script.
fn eval_line(c: &mut redis::Connection, line: &[Vec<u8>]) -> redis::Value {
    redis::cmd("EVAL")
        .arg("return redis.call(ARGV[1], KEYS[1], unpack(ARGV, 2))")
        .arg(1)
        .arg(line[1].as_slice())
        .arg(line[0].as_slice())
        .arg(&line[2..])
        .query(c)
        .unwrap()
}

fn assert_replica_holds(flavor: Flavor, what: &str, replica: &Server, want: &Keyspace) {
    let mut r = replica.conn();
    let got = keyspace(&mut r);
    assert_eq!(got.len(), want.len(), "{flavor:?} {what}");
    assert_eq!(
        dbsize(&mut r),
        want.len() as i64,
        "{flavor:?} {what}: DBSIZE"
    );
    for (k, v) in want {
        assert_eq!(
            got.get(k),
            Some(v),
            "{flavor:?} {what}: key {}",
            String::from_utf8_lossy(k)
        );
    }
}

/// Mixed traffic on every command (admits, denials, options, peeks, on
/// existing state), odd key names, RL.SLIDE evictions, calls from scripts
/// and transactions, and keys that expire: both replicas end equal to the
/// primary, and refuse the writes themselves.
#[test]
fn replicas_hold_the_primary_state_after_mixed_traffic_on_every_command() {
    for flavor in ALL {
        replicas_hold_the_primary_state_on(flavor);
    }
}

/// The test above on one pairing (`tests/it/older/` runs it on more).
pub fn replicas_hold_the_primary_state_on(flavor: Flavor) {
    let mut primary = Server::start_primary(flavor, &[]);
    let mut with_rl = primary.start_replica(true);
    let mut without_rl = primary.start_replica(false);
    let mut c = primary.conn();
    // Two rounds, so the second works on state the first left (evictions,
    // denials, existing fields) and the replicas apply it on theirs.
    for round in 0..2 {
        mixed_traffic(&mut c, &format!("parity{round}"), 15);
        mixed_traffic(&mut c, "parity0", 15);
    }
    // Every command on an odd key name: admits, then denials.
    let (mut admits, mut denials) = (0, 0);
    for (i, w) in WRITERS.into_iter().enumerate() {
        let key = format!("odd key\r\nname \u{e9}:{i}");
        for _ in 0..4 {
            let reply = run_bytes(&mut c, &w.admit_line(&key, 2)).unwrap();
            if w == Writer::Count {
                continue;
            }
            if w.admits(&reply) {
                admits += 1;
            } else {
                denials += 1;
            }
        }
    }
    assert!(
        admits > 0 && denials > 0,
        "{flavor:?}: {admits} admits, {denials} denials"
    );
    // From scripts and inside a transaction.
    let mut tx = redis::pipe();
    tx.atomic();
    for w in WRITERS {
        eval_line(&mut c, &w.admit_line(&format!("lua:{}", w.name()), 3));
        let line = w.admit_line(&format!("tx:{}", w.name()), 3);
        let mut cmd = redis::cmd(std::str::from_utf8(&line[0]).unwrap());
        cmd.arg(&line[1..]);
        tx.add_command(cmd.clone()).add_command(cmd);
    }
    let _: redis::Value = tx.query(&mut c).unwrap();
    for line in short_lines("short") {
        let words: Vec<&str> = line.iter().map(String::as_str).collect();
        run(&mut c, &words).unwrap();
    }
    // Evictions: every third sorted set gets a call with a 100 ms window
    // after its entries are at least 150 ms old, then a long-window call
    // so the key lives on for the comparison.
    primary.advance(150);
    for k in (0..15).step_by(3) {
        let key = format!("parity1:slide:{k}");
        let before = zcard(&mut c, &key);
        assert_eq!(slide(&mut c, &key, 50, 100)[0], 1, "{flavor:?} {key}");
        assert_eq!(
            zcard(&mut c, &key),
            1,
            "{key}: {before} old entries evicted"
        );
        assert_eq!(slide_cost(&mut c, &key, 50, LONG_MS, 3)[0], 1, "{flavor:?}");
    }
    wait_replicas(&mut c, 2);
    let want: Keyspace = keyspace(&mut c)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(b"short:"))
        .collect();
    assert_covers_every_layout(&want);
    assert!(want.len() >= 15 * 7 * 2, "{flavor:?}: {} keys", want.len());
    for (what, replica) in [("with rl", &with_rl), ("without rl", &without_rl)] {
        let mut r = replica.conn();
        let got: Keyspace = keyspace(&mut r)
            .into_iter()
            .filter(|(k, _)| !k.starts_with(b"short:"))
            .collect();
        assert_eq!(got.len(), want.len(), "{flavor:?} replica {what}");
        for (k, v) in &want {
            assert_eq!(
                got.get(k),
                Some(v),
                "{flavor:?} replica {what}: key {}",
                String::from_utf8_lossy(k)
            );
        }
    }

    // The short-window keys expire on the primary, which tells its
    // replicas: then they hold exactly the rest.
    let expired = wait_until(Duration::from_secs(5), || {
        dbsize(&mut c) == want.len() as i64
    });
    assert!(
        expired,
        "{flavor:?}: the short keys did not expire on the primary"
    );
    assert_eq!(keyspace(&mut c), want, "{flavor:?}");
    wait_replicas(&mut c, 2);
    assert_replica_holds(flavor, "with rl", &with_rl, &want);
    assert_replica_holds(flavor, "without rl", &without_rl, &want);

    // Replicas are read-only: the commands are refused there, not run.
    let mut r = with_rl.conn();
    for w in WRITERS {
        let err = err_text(run_bytes(&mut r, &w.admit_line("parity0:slide:0", 5)));
        assert!(
            err.starts_with("READONLY"),
            "{flavor:?} {}: {err}",
            w.name()
        );
    }
    for s in [&mut primary, &mut with_rl, &mut without_rl] {
        s.assert_alive();
    }
}

/// Members are derived from the stored log, not from a counter in the
/// primary's memory, so a promoted replica keeps them unique.
#[test]
fn promoted_replica_keeps_members_unique() {
    for flavor in ALL {
        let mut primary = Server::start_primary(flavor, &[]);
        let mut replica = primary.start_replica(true);
        let mut p = primary.conn();
        assert_eq!(slide_cost(&mut p, "fo", 1_000, LONG_MS, 100)[0], 1);
        wait_replicas(&mut p, 1);
        primary.assert_alive();
        drop(p);
        drop(primary);

        let mut r = replica.conn();
        let _: () = redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query(&mut r)
            .unwrap();
        let mut pipe = redis::pipe();
        for _ in 0..200 {
            pipe.cmd("RL.SLIDE").arg("fo").arg(1_000).arg(LONG_MS);
        }
        let replies: Vec<Vec<i64>> = pipe.query(&mut r).unwrap();
        assert!(replies.iter().all(|x| x[0] == 1), "{flavor:?}");
        let all = entries(&mut r, "fo");
        assert_eq!(all.len(), 300, "{flavor:?}: no member collapsed");
        let members: std::collections::BTreeSet<&String> = all.iter().map(|e| &e.0).collect();
        assert_eq!(members.len(), 300, "{flavor:?}");
        replica.assert_alive();
    }
}

/// RL.BUCKETS and RL.COUNT over many short buckets, some evicted: the
/// replica ends with the same hash fields and absolute expiry, the fields
/// are exactly those the header names, and RL.TOTALS answers there.
#[test]
fn replica_holds_the_same_bucket_fields_and_expiry_after_evictions() {
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        let mut r = replica.conn();
        // Enough calls over several buckets to evict some, and denials.
        for i in 0..40 {
            buckets(&mut p, "b", &["30", "300", "PRECISION", "20"]).unwrap();
            count(
                &mut p,
                "c",
                300,
                if i % 3 == 0 { "failure" } else { "success" },
                &["PRECISION", "20"],
            )
            .unwrap();
            primary.advance(5);
        }
        // A last call with a 10 s window keeps both keys (and what the short
        // windows evicted) alive however long WAIT takes to get its ack. It
        // must be admitted (a denial moves no expiry): the limit is above
        // anything the key can hold.
        // (5 s: 250 of the key's 20 ms buckets, the most a window may need.)
        let last = buckets(&mut p, "b", &["1000", "5000"]).unwrap();
        assert_eq!(last[0], 1, "{flavor:?}: the keep-alive call is admitted");
        count(&mut p, "c", 2_000, "success", &[]).unwrap();
        wait_replicas(&mut p, 1);
        for key in ["b", "c"] {
            assert_eq!(fields(&mut p, key), fields(&mut r, key), "{flavor:?} {key}");
            assert_eq!(
                pexpiretime(&mut p, key),
                pexpiretime(&mut r, key),
                "{flavor:?} {key}"
            );
        }
        // After the evictions, the bucket fields are exactly those the
        // header names: its held set (and RL.COUNT's newest bucket).
        for key in ["b", "c"] {
            let h = header(&mut p, key);
            let named = h.held_fields();
            let fields: Vec<i64> = bucket_fields(&mut p, key).keys().copied().collect();
            assert_eq!(named, fields, "{flavor:?} {key} {h:?}");
        }
        // RL.TOTALS is readonly: a plain connection to the replica runs it.
        let on_replica = totals(&mut r, "c", 2_000, &[]).unwrap();
        let names: Vec<&str> = on_replica.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["failure", "success"], "{flavor:?}");
        // It wrote nothing: the replica still equals the primary.
        assert_eq!(fields(&mut p, "c"), fields(&mut r, "c"), "{flavor:?}");
        // Write commands are refused there.
        let text = err_text(count(&mut r, "c", 300, "x", &[]));
        assert!(text.starts_with("READONLY"), "{flavor:?}: {text}");
    }
}

/// The string states: RL.THROTTLE's and CL.THROTTLE's TAT (to the µs,
/// sub-millisecond digits included) and RL.FIXED's counter, each with the
/// same absolute expiry.
#[test]
fn replica_holds_the_same_tat_and_counter_with_their_expiry() {
    const HOUR: u64 = 3_600_000;
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        for _ in 0..4 {
            throttle(&mut p, "rl", [2, 10, HOUR], None);
        }
        // T = 514_285_715 µs: a TAT with sub-millisecond digits.
        throttle(&mut p, "odd", [9, 7, HOUR], Some(7));
        for _ in 0..3 {
            cl_throttle(&mut p, "cl", [1, 1, 60], None);
        }
        for _ in 0..4 {
            fixed(&mut p, "f", 3, HOUR, None);
        }
        fixed(&mut p, "g", 10, HOUR, Some(7));
        wait_replicas(&mut p, 1);
        let mut r = replica.conn();
        for key in ["rl", "odd", "cl"] {
            let on_primary = value_and_expiry(&mut p, key);
            assert!(on_primary.0.is_some(), "{flavor:?} {key}");
            assert_eq!(
                value_and_expiry(&mut r, key),
                on_primary,
                "{flavor:?} {key}"
            );
        }
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

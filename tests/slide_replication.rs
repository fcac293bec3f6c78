//! Replicas receive RL.SLIDE's effects as plain commands with resolved
//! values, so they hold exactly the primary's members, scores and expiry,
//! with or without the module loaded.
mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;

const LONG: u64 = 600_000;

fn keys(c: &mut redis::Connection) -> BTreeSet<String> {
    redis::cmd("KEYS").arg("*").query(c).unwrap()
}

fn dbsize(c: &mut redis::Connection) -> usize {
    redis::cmd("DBSIZE").query(c).unwrap()
}

/// Admits, denials, COST, an eviction per key and a few script calls; the
/// short-window keys are left to expire.
fn mixed_traffic(c: &mut redis::Connection) -> (Vec<String>, Vec<String>) {
    let mut long_keys: Vec<String> = (0..23).map(|i| format!("user:{i}")).collect();
    long_keys.push("odd key\r\nname \u{e9}".to_string());
    let short_keys: Vec<String> = (0..6).map(|i| format!("short:{i}")).collect();
    let mut pipe = redis::pipe();
    for (i, k) in long_keys.iter().enumerate() {
        let limit = 1 + (i % 5) as u64;
        for j in 0..8 {
            pipe.cmd("RL.SLIDE").arg(k).arg(limit).arg(LONG);
            if j % 3 == 0 {
                pipe.cmd("RL.SLIDE")
                    .arg(k)
                    .arg(limit + 2)
                    .arg(LONG)
                    .arg("COST")
                    .arg(2);
            }
        }
    }
    for k in &short_keys {
        pipe.cmd("RL.SLIDE")
            .arg(k)
            .arg(3)
            .arg(150)
            .arg("COST")
            .arg(2);
    }
    let replies: Vec<Vec<i64>> = pipe.query(c).unwrap();
    let admits = replies.iter().filter(|r| r[0] == 1).count();
    assert!(
        admits > 0 && admits < replies.len(),
        "traffic must mix admits and denials"
    );

    // Evictions: every third long key gets a call with a 100 ms window
    // after its entries are at least 150 ms old, then a long-window call so
    // the key lives on for the comparison.
    std::thread::sleep(Duration::from_millis(150));
    for k in long_keys.iter().step_by(3) {
        let before = zcard(c, k);
        assert_eq!(slide(c, k, 50, 100)[0], 1);
        assert_eq!(zcard(c, k), 1, "{k}: {before} old entries evicted");
        assert_eq!(slide_cost(c, k, 50, LONG, 3)[0], 1);
    }
    // Effects of a script are replicated the same way.
    for k in long_keys.iter().skip(1).step_by(4) {
        let _: Vec<i64> = redis::cmd("EVAL")
            .arg("return redis.call('RL.SLIDE', KEYS[1], ARGV[1], ARGV[2])")
            .arg(1)
            .arg(k)
            .arg(100)
            .arg(LONG)
            .query(c)
            .unwrap();
    }
    // And of a transaction.
    let mut tx = redis::pipe();
    tx.atomic();
    for k in long_keys.iter().skip(2).step_by(5) {
        tx.cmd("RL.SLIDE")
            .arg(k)
            .arg(100)
            .arg(LONG)
            .arg("COST")
            .arg(2);
        tx.cmd("RL.SLIDE").arg(k).arg(1).arg(LONG);
    }
    let _: Vec<Vec<i64>> = tx.query(c).unwrap();
    (long_keys, short_keys)
}

fn assert_same_state(
    f: Flavor,
    what: &str,
    p: &mut redis::Connection,
    r: &mut redis::Connection,
    keys: &[String],
) {
    for k in keys {
        let (pe, re) = (entries(p, k), entries(r, k));
        assert!(!pe.is_empty(), "{f:?}: {k} is empty on the primary");
        assert_eq!(re, pe, "{f:?} {what}: members and scores of {k}");
        let (pt, rt) = (pexpiretime(p, k), pexpiretime(r, k));
        assert!(pt > 0, "{f:?}: {k} has no expiry");
        assert_eq!(rt, pt, "{f:?} {what}: PEXPIRETIME of {k}");
    }
}

#[test]
fn replica_holds_the_same_members_scores_and_expiry() {
    for flavor in ALL {
        let mut primary = Server::start_primary(flavor, &[]);
        let mut with_module = primary.start_replica(true);
        let mut plain = primary.start_replica(false);
        let mut p = primary.conn();
        let (long_keys, short_keys) = mixed_traffic(&mut p);
        wait_replicas(&mut p, 2);

        let mut rm = with_module.conn();
        let mut rp = plain.conn();
        assert_same_state(flavor, "replica with rl", &mut p, &mut rm, &long_keys);
        assert_same_state(flavor, "replica without rl", &mut p, &mut rp, &long_keys);

        // Short-window keys expire on the primary, which tells its replicas.
        let expired = wait_until(Duration::from_secs(5), || dbsize(&mut p) == long_keys.len());
        assert!(
            expired,
            "{flavor:?}: {short_keys:?} did not expire on the primary"
        );
        wait_replicas(&mut p, 2);
        let want: BTreeSet<String> = long_keys.iter().cloned().collect();
        assert_eq!(keys(&mut p), want, "{flavor:?}");
        for r in [&mut rm, &mut rp] {
            assert_eq!(dbsize(r), long_keys.len(), "{flavor:?}: replica dbsize");
            assert_eq!(keys(r), want, "{flavor:?}: replica keys");
        }

        // Replicas are read-only: the command is refused there, not run.
        let err = slide_raw(&mut rm, &[b"user:0", b"5", b"1000"]).unwrap_err();
        assert_eq!(err.code(), Some("READONLY"), "{flavor:?}: {err:?}");

        for s in [&mut primary, &mut with_module, &mut plain] {
            s.assert_alive();
        }
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
        assert_eq!(slide_cost(&mut p, "fo", 1_000, LONG, 100)[0], 1);
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
            pipe.cmd("RL.SLIDE").arg("fo").arg(1_000).arg(LONG);
        }
        let replies: Vec<Vec<i64>> = pipe.query(&mut r).unwrap();
        assert!(replies.iter().all(|x| x[0] == 1), "{flavor:?}");
        let all = entries(&mut r, "fo");
        assert_eq!(all.len(), 300, "{flavor:?}: no member collapsed");
        let members: BTreeSet<&String> = all.iter().map(|e| &e.0).collect();
        assert_eq!(members.len(), 300, "{flavor:?}");
        replica.assert_alive();
    }
}

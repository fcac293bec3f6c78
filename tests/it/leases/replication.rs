//! Replicas, an AOF replay and a promoted replica hold the primary's
//! leases, none lost and none duplicated.

use super::{acquire, change, leases};
use crate::harness::*;

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

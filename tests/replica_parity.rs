//! After mixed traffic on every command, a replica holds exactly the
//! primary's state: the same keys, sorted-set members and scores, hash
//! fields, string values, and the same absolute expiries (`PEXPIRETIME`,
//! equal to the millisecond: rl replicates `PEXPIREAT`/`PXAT`, never a
//! relative TTL). A replica without the module holds the same.

mod common;

use common::all_commands::{assert_covers_every_layout, keyspace, mixed_traffic};
use common::{wait_replicas, Server, ALL};

#[test]
fn replicas_hold_the_primary_state_after_mixed_traffic_on_every_command() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let with_rl = primary.start_replica(true);
        let without_rl = primary.start_replica(false);
        let mut c = primary.conn();
        // Two rounds, so the second works on state the first left (evictions,
        // denials, existing fields) and the replicas apply it on theirs.
        for round in 0..2 {
            mixed_traffic(&mut c, &format!("parity{round}"), 15);
            mixed_traffic(&mut c, "parity0", 15);
        }
        wait_replicas(&mut c, 2);
        let want = keyspace(&mut c);
        assert_covers_every_layout(&want);
        assert!(want.len() >= 15 * 7 * 2, "{flavor:?}: {} keys", want.len());
        for replica in [&with_rl, &without_rl] {
            let got = keyspace(&mut replica.conn());
            assert_eq!(
                got.len(),
                want.len(),
                "{flavor:?} replica on {}",
                replica.port
            );
            for (k, v) in &want {
                assert_eq!(
                    got.get(k),
                    Some(v),
                    "{flavor:?} replica on {}: key {}",
                    replica.port,
                    String::from_utf8_lossy(k)
                );
            }
        }
    }
}

//! RL.THROTTLE and CL.THROTTLE state on a replica, and under 40 clients.
mod common;

use common::limiters::*;
use common::*;

const HOUR: u64 = 3_600_000;

#[test]
fn replica_holds_the_same_tat_and_expiry() {
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = replica_of(&primary);
        let mut p = primary.conn();
        for _ in 0..4 {
            throttle(&mut p, "rl", [2, 10, 1000], None);
        }
        throttle(&mut p, "big", [99, 100_000, 1000], Some(7));
        for _ in 0..3 {
            cl_throttle(&mut p, "cl", [1, 1, 60], None);
        }
        wait_for_replica(&mut p);
        let mut r = replica.conn();
        for key in ["rl", "big", "cl"] {
            let on_primary = value_and_expiry(&mut p, key);
            assert!(on_primary.0.is_some(), "{flavor:?} {key}");
            assert_eq!(
                value_and_expiry(&mut r, key),
                on_primary,
                "{flavor:?} {key}"
            );
        }
    }
}

#[test]
fn forty_connections_never_over_admit() {
    on_every_server(|server| {
        // max_burst 99, one per hour: exactly 100 of 400 pass.
        let n = admitted_concurrently(server, 40, 10, |c| {
            throttle(c, "hot", [99, 1, HOUR], None)[0] == 1
        });
        assert_eq!(n, 100, "{:?}", server.flavor);
        let n = admitted_concurrently(server, 40, 10, |c| {
            cl_throttle(c, "hot-cl", [99, 1, 3600], None)[0] == 0
        });
        assert_eq!(n, 100, "{:?}", server.flavor);
    });
}

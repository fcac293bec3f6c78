//! RL.THROTTLE and CL.THROTTLE state on a replica, and under 40 clients.
mod common;

use common::limiters::*;
use common::*;

const HOUR: u64 = 3_600_000;

#[test]
fn replica_holds_the_same_tat_and_expiry() {
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

#[test]
fn aof_replays_the_same_state_without_the_module() {
    for flavor in ALL {
        let primary =
            Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut c = primary.conn();
        throttle(&mut c, "t", [4, 1, 3_600_000], Some(2));
        cl_throttle(&mut c, "cl", [4, 1, 3600], None);
        fixed(&mut c, "f", 5, 3_600_000, Some(3));
        let keys = ["t", "cl", "f"];
        let before: Vec<_> = keys.iter().map(|k| value_and_expiry(&mut c, k)).collect();
        let dir = primary.stop(true);
        let restarted = Server::start_in(flavor, dir, &["--appendonly", "yes"], false);
        let mut c = restarted.conn();
        let after: Vec<_> = keys.iter().map(|k| value_and_expiry(&mut c, k)).collect();
        assert_eq!(after, before, "{flavor:?}");
    }
}

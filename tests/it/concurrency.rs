//! Forty connections racing on one key never get more than the limit, and
//! get exactly the limit when they keep asking: for every command that
//! limits.

use crate::harness::*;

const HOUR: u64 = 3_600_000;

/// Runs `calls` calls of `call` on each of `clients` connections, all
/// released at once, and returns how many were admitted.
fn admitted_concurrently(
    server: &Server,
    clients: usize,
    calls: usize,
    call: fn(&mut redis::Connection) -> bool,
) -> usize {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(clients));
    let handles: Vec<_> = (0..clients)
        .map(|_| {
            let mut c = server.conn();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                (0..calls).filter(|_| call(&mut c)).count()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("client thread"))
        .sum()
}

/// RL.SLIDE's reply says admitted (1) or denied (0), nothing else.
fn slide_admits(c: &mut redis::Connection, key: &str, limit: u64, cost: u64) -> bool {
    let r = slide_cost(c, key, limit, 600_000, cost);
    assert!(r[0] == 0 || r[0] == 1, "{r:?}");
    r[0] == 1
}

#[test]
fn forty_connections_on_one_slide_key_admit_exactly_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        let limit = 137;
        let admitted = admitted_concurrently(server, 40, 25, |c| slide_admits(c, "hot", 137, 1));
        assert_eq!(admitted as u64, limit, "{f:?}: admitted units");
        let mut c = server.conn();
        assert_eq!(zcard(&mut c, "hot"), limit as usize, "{f:?}: ZCARD");
        // The key is full: one more is denied with remaining 0.
        assert_eq!(slide(&mut c, "hot", limit, 600_000)[..2], [0, 0], "{f:?}");
    });
}

#[test]
fn forty_connections_with_cost_never_exceed_the_slide_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        // 100 / 3: at most 33 admits, and exactly 33 since requests keep
        // coming until every client has made all its calls.
        let admits = admitted_concurrently(server, 40, 25, |c| slide_admits(c, "hot3", 100, 3));
        assert_eq!(admits * 3, 99, "{f:?}: admitted units");
        let mut c = server.conn();
        assert_eq!(zcard(&mut c, "hot3"), 99, "{f:?}: ZCARD");
    });
}

#[test]
fn forty_connections_on_one_buckets_key_admit_exactly_the_limit() {
    on_every_server(|server| {
        let n = admitted_concurrently(server, 40, 10, |c| {
            buckets(c, "shared", &["100", "600000"]).unwrap()[0] == 1
        });
        assert_eq!(n, 100, "{:?}", server.flavor);
        let mut c = server.conn();
        assert_eq!(
            header(&mut c, "shared").counts[0],
            100,
            "{:?}",
            server.flavor
        );
    });
}

#[test]
fn forty_connections_on_one_throttle_key_never_over_admit() {
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
fn forty_connections_on_one_fixed_key_admit_exactly_the_limit() {
    on_every_server(|server| {
        let n = admitted_concurrently(server, 40, 10, |c| fixed(c, "hot", 100, HOUR, None)[0] == 1);
        assert_eq!(n, 100, "{:?}", server.flavor);
        let mut c = server.conn();
        assert_eq!(value_and_expiry(&mut c, "hot").0.as_deref(), Some("100"));
    });
}

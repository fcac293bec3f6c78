//! Many clients racing on one key never get more than `limit` admits.
mod common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::*;

const CLIENTS: usize = 40;
const CALLS_PER_CLIENT: usize = 25;

/// Runs `CLIENTS` threads, each with its own connection, all released at
/// once; each makes `CALLS_PER_CLIENT` calls with `cost` and returns how
/// many units it got admitted.
fn hammer(server: &Server, key: &'static str, limit: u64, cost: u64) -> u64 {
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let handles: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let mut c = server.conn();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                let mut units = 0;
                for _ in 0..CALLS_PER_CLIENT {
                    let r = slide_cost(&mut c, key, limit, 600_000, cost);
                    assert!(r[0] == 0 || r[0] == 1, "{r:?}");
                    units += r[0] as u64 * cost;
                }
                units
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("client thread"))
        .sum()
}

#[test]
fn forty_connections_on_one_key_admit_exactly_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        let limit = 137;
        let admitted = hammer(server, "hot", limit, 1);
        assert_eq!(admitted, limit, "{f:?}: admitted units");
        let mut c = server.conn();
        assert_eq!(zcard(&mut c, "hot"), limit as usize, "{f:?}: ZCARD");
        // The key is full: one more is denied with remaining 0.
        assert_eq!(slide(&mut c, "hot", limit, 600_000)[..2], [0, 0], "{f:?}");
    });
}

#[test]
fn forty_connections_with_cost_never_exceed_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        // 100 / 3: at most 33 admits, and exactly 33 since requests keep
        // coming until every client has made all its calls.
        let admitted = hammer(server, "hot3", 100, 3);
        assert_eq!(admitted, 99, "{f:?}: admitted units");
        let mut c = server.conn();
        assert_eq!(zcard(&mut c, "hot3"), 99, "{f:?}: ZCARD");
    });
}

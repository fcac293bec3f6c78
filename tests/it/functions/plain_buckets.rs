//! The library's fast path for the plain `RL.BUCKETS key limit window`
//! line (functions/src/buckets/buckets.lua `bk.fast`), which lists the
//! held buckets from the header's bit set itself: the same replies, hashes
//! and expiries as the module, on a stopped clock.

use redis::Value;

use super::differential::same;
use super::start_both;
use crate::harness::Flavor;

fn four(v: Result<Value, String>) -> [i64; 4] {
    let v: Vec<i64> = redis::from_redis_value(&v.unwrap()).unwrap();
    v.try_into().unwrap()
}

/// Three calls in three buckets of 1 s (a 60 s window's default
/// precision), then a denial: its wait is until the oldest bucket leaves
/// (mutation: listing the live buckets newest first makes it the second
/// oldest's, 1 s later). Past the window the oldest is removed by the
/// next admission (the stale list), the count taking off only its unit.
#[test]
fn a_plain_denial_waits_for_the_oldest_bucket_and_stale_ones_go_alike() {
    let server = start_both(Flavor::Valkey9);
    server.advance((1000 - server.clock_ms().rem_euclid(1000)) as u64 % 1000);
    let mut c = server.conn();
    let line = ["RL.BUCKETS", "k", "3", "60000"];
    for i in 0..3 {
        assert_eq!(four(same(&mut c, &line)), [1, 2 - i, 0, 60_999]);
        server.advance(1000);
    }
    assert_eq!(four(same(&mut c, &line)), [0, 0, 57_999, 59_999]);
    // The oldest bucket has left: the admission counts the two others.
    server.advance(58_000);
    assert_eq!(four(same(&mut c, &line)), [1, 0, 0, 60_999]);
    assert_eq!(four(same(&mut c, &line)), [0, 0, 999, 60_999]);
}

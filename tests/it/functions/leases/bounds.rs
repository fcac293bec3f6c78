//! The bounds on a call's work (16 expired leases removed, 64 held ones
//! counted by score), the largest limit and lease, and when the expiry
//! moves: both editions alike.

use crate::functions::start_both;
use crate::harness::{plain_key, Flavor};

use super::{check, ints, on_both, same, words, Ids};

#[test]
fn more_than_sixteen_expired_leases_go_sixteen_per_acquire() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    // One long lease keeps the key; 40 short ones, many with the same
    // expiry (ties sort by id).
    same(c, &["RL.ACQUIRE", "k", "100", "100000", "ID", "keep"]).unwrap();
    for i in 0..40 {
        let id = format!("j{i:02}");
        let ms = if i % 3 == 0 { "50" } else { "100" };
        same(c, &["RL.ACQUIRE", "k", "100", ms, "ID", &id]).unwrap();
        if i % 10 == 9 {
            server.advance(1);
        }
    }
    server.advance(200);
    let r = same(c, &["RL.PEEK", "ACQUIRE", "k", "100", "1000"]).unwrap();
    assert_eq!(ints(&r)[..3], [1, 98, 0]);
    // (Each count below holds the header too.)
    assert_eq!(
        crate::harness::zcard(c, "f:k"),
        42,
        "a peek removes nothing"
    );
    let mut cards = Vec::new();
    for i in 0..4 {
        let id = format!("n{i}");
        same(c, &["RL.ACQUIRE", "k", "100", "1000", "ID", &id]).unwrap();
        cards.push(crate::harness::zcard(c, "f:k"));
    }
    assert_eq!(cards, vec![27, 12, 5, 6]);
    // Releasing or renewing an expired one changes nothing.
    assert_eq!(ints(&same(c, &["RL.RELEASE", "k", "j00"]).unwrap())[0], 0);
    assert_eq!(
        ints(&same(c, &["RL.RENEW", "k", "j00", "10"]).unwrap())[0],
        0
    );
}

#[test]
fn more_than_sixty_four_held_leases_are_counted_by_score() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let t0 = server.clock_ms();
    for i in 0..80 {
        let id = format!("h{i:02}");
        let r = same(
            c,
            &["RL.ACQUIRE", "k", "75", &format!("{}", 1000 + i), "ID", &id],
        );
        assert_eq!(ints(&r.unwrap())[0], i64::from(i < 75), "acquire {i}");
        if i == 64 || i == 65 {
            // 65 and 66 entries: the walk, then the count.
            same(c, &["RL.PEEK", "ACQUIRE", "k", "75", "10"]).unwrap();
        }
    }
    // A foreign entry among the held ones: the count by score does not read
    // it (both editions alike), a walk would.
    let odd = format!("{}.5", t0 + 1003);
    on_both(c, &["ZADD", "k", &odd, "odd"]);
    let r = same(c, &["RL.ACQUIRE", "k", "80", "5000", "ID", "late"]).unwrap();
    assert_eq!(ints(&r), vec![1, 3, 0, 5000]);
    same(c, &["RL.RELEASE", "k", "h10"]).unwrap();
    same(c, &["RL.RENEW", "k", "h11", "9000"]).unwrap();
    server.advance(1040);
    // Expired leases among them, the odd one in the removal's reach.
    let r = same(c, &["RL.ACQUIRE", "k", "80", "5000", "ID", "later"]);
    assert_eq!(
        r,
        Err("ERR key holds a sorted set that rl did not write".into())
    );
    same(c, &["RL.RELEASE", "k", "h50"]).unwrap();
    same(c, &["RL.PEEK", "ACQUIRE", "k", "80", "5000"]).unwrap();
}

#[test]
fn largest_limit_and_lease() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let ids = &mut Ids::default();
    let mut same = |c: &mut redis::Connection, line: &[&str]| check(c, ids, &words(line), true);
    let r = same(
        c,
        &["RL.ACQUIRE", "k", "1000000", "1000000000000", "ID", "long"],
    )
    .unwrap();
    assert_eq!(ints(&r), vec![1, 999_999, 0, 1_000_000_000_000]);
    let at = crate::harness::pexpiretime(c, "f:k");
    assert_eq!(at, server.clock_ms() + 1_250_000_000_000);
    let r = same(c, &["RL.ACQUIRE", "k", "1000000", "1000000000000"]).unwrap();
    assert_eq!(ints(&r), vec![1, 999_998, 0, 1_000_000_000_000]);
    server.advance(5000);
    let r = same(c, &["RL.RENEW", "k", "long", "1000000000000"]).unwrap();
    assert_eq!(ints(&r), vec![1, 2, 999_999_995_000, 1_000_000_000_000]);
    same(c, &["RL.PEEK", "ACQUIRE", "k", "1000000", "1000000000000"]).unwrap();
    for bad in [
        vec!["RL.ACQUIRE", "k", "1000001", "1000000000000"],
        vec!["RL.ACQUIRE", "k", "1000000", "1000000000001"],
        vec!["RL.RENEW", "k", "long", "1000000000001"],
        vec!["RL.ACQUIRE", "k", "99999999999999999999", "1"],
    ] {
        let e = same(c, &bad).unwrap_err();
        assert!(e.contains("must be an integer from 1 to"), "{bad:?}: {e}");
    }
}

#[test]
fn expiry_moves_only_when_it_falls_short() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let t0 = server.clock_ms();
    same(c, &["RL.ACQUIRE", "k", "5", "1000", "ID", "a"]).unwrap();
    assert_eq!(crate::harness::pexpiretime(c, "f:k"), t0 + 1250);
    server.advance(100);
    same(c, &["RL.ACQUIRE", "k", "5", "1000", "ID", "b"]).unwrap();
    assert_eq!(
        crate::harness::pexpiretime(c, "f:k"),
        t0 + 1250,
        "1100 needed, 1250 kept"
    );
    server.advance(200);
    same(c, &["RL.RENEW", "k", "a", "1000"]).unwrap();
    assert_eq!(crate::harness::pexpiretime(c, "f:k"), t0 + 1300 + 250);
    same(c, &["RL.ACQUIRE", "k", "5", "100", "ID", "a"]).unwrap();
    same(c, &["RL.RELEASE", "k", "a"]).unwrap();
    same(c, &["RL.RELEASE", "k", "b"]).unwrap();
    assert_eq!(crate::harness::exists(c, &["f:k"]), 0);
    // A denial writes nothing.
    same(c, &["RL.ACQUIRE", "k", "1", "1000", "ID", "x"]).unwrap();
    let before = plain_key(c, b"f:k");
    let r = same(c, &["RL.ACQUIRE", "k", "1", "5000", "ID", "y"]).unwrap();
    assert_eq!(ints(&r), vec![0, 0, 1000, 1000]);
    assert_eq!(plain_key(c, b"f:k"), before);
}

//! Refunds under another window than the admission's, a refund that checks
//! what its peek reads, and OLDEST: both editions alike.

use super::four;
use crate::functions::differential::same;
use crate::functions::start_both;
use crate::harness::Flavor;

/// RL.REFUND BUCKETS keeps the newest bucket, so the expiry it needs moves
/// only when the refund names a longer window than the admissions did: the
/// module then moves it (Expiry over the refund's window), and so does the
/// library.
#[test]
fn a_refund_under_a_longer_window_moves_the_expiry_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    same(&mut c, &["RL.BUCKETS", "k", "10", "1000", "COST", "3"]).unwrap();
    let before = crate::harness::pexpiretime(&mut c, "m:k");
    server.advance(10);
    same(
        &mut c,
        &["RL.REFUND", "BUCKETS", "k", "10", "1000", "COST", "1"],
    )
    .unwrap();
    assert_eq!(crate::harness::pexpiretime(&mut c, "m:k"), before);
    // The key's 17 ms buckets: 250 of them (the most) span 4,250 ms.
    same(&mut c, &["RL.REFUND", "BUCKETS", "k", "10", "4250"]).unwrap();
    assert!(crate::harness::pexpiretime(&mut c, "m:k") > before + 3_000);
    assert_eq!(
        same(&mut c, &["RL.REFUND", "BUCKETS", "k", "10", "4251"]).unwrap_err(),
        "ERR PRECISION too small: the window would need more than 250 buckets"
    );
}

/// Issue #23's repro through both editions on the stopped clock: a refund
/// under a shorter window keeps the 9-unit bucket, the replies are the
/// issue's, and one more unit is admitted, not ten.
#[test]
fn a_refund_under_a_shorter_window_drops_no_count_alike() {
    for flavor in [Flavor::Valkey9, Flavor::Valkey9Native] {
        let server = start_both(flavor);
        server.advance((1000 - server.clock_ms().rem_euclid(1000)) as u64 % 1000);
        let mut c = server.conn();
        let line = ["RL.BUCKETS", "b", "10", "10000", "PRECISION", "1000"];
        let cost = [&line[..], &["COST", "9"]].concat();
        assert_eq!(four(same(&mut c, &cost)), [1, 1, 0, 10_999], "{flavor:?}");
        server.advance(3000);
        assert_eq!(four(same(&mut c, &line)), [1, 0, 0, 10_999], "{flavor:?}");
        assert_eq!(
            four(same(&mut c, &line)),
            [0, 0, 7_999, 10_999],
            "{flavor:?}"
        );
        let refund = ["RL.REFUND", "BUCKETS", "b", "10", "2000", "COST", "1"];
        assert_eq!(four(same(&mut c, &refund)), [1, 9, 0, 2_999], "{flavor:?}");
        for k in ["m:b", "f:b"] {
            let buckets = crate::harness::bucket_fields(&mut c, k);
            assert_eq!(
                buckets.values().collect::<Vec<_>>(),
                ["9"],
                "{flavor:?} {k}"
            );
        }
        let admitted = (0..10)
            .filter(|_| four(same(&mut c, &line))[0] == 1)
            .count();
        assert_eq!(admitted, 1, "{flavor:?}: one unit was given back");
    }
}

/// Both editions read everything a refund's reply needs before writing: a
/// foreign bucket field met only by the peek after (its denial walk from
/// the oldest) refuses the refund with nothing written.
#[test]
fn a_refund_checks_what_its_peek_reads_before_writing_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let line = ["RL.BUCKETS", "b", "10", "1000", "PRECISION", "100"];
    same(&mut c, &[&line[..], &["COST", "3"]].concat()).unwrap();
    server.advance(500);
    same(&mut c, &[&line[..], &["COST", "4"]].concat()).unwrap();
    let mut before = Vec::new();
    for k in ["m:b", "f:b"] {
        let older = *crate::harness::bucket_fields(&mut c, k)
            .keys()
            .next()
            .unwrap();
        let _: () = redis::cmd("HSET")
            .arg(k)
            .arg(older)
            .arg("x")
            .query(&mut c)
            .unwrap();
        before.push(crate::harness::frozen_state(&mut c, k));
    }
    let refund = ["RL.REFUND", "BUCKETS", "b", "5", "1000", "PRECISION", "100"];
    assert_eq!(
        same(&mut c, &refund).unwrap_err(),
        "ERR key holds a hash that rl did not write"
    );
    for (k, was) in ["m:b", "f:b"].iter().zip(&before) {
        assert_eq!(&crate::harness::frozen_state(&mut c, k), was, "{k}");
    }
}

/// RL.PEEK BUCKETS ... OLDEST on both editions: the oldest counted bucket
/// held apart from the newest, then the newest alone, then none.
#[test]
fn oldest_is_the_same_wait_on_both_editions() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let peek = [
        "RL.PEEK",
        "BUCKETS",
        "o",
        "5",
        "1000",
        "PRECISION",
        "100",
        "OLDEST",
    ];
    let five = |c: &mut redis::Connection| match same(c, &peek) {
        Ok(v) => crate::functions::differential::ints(&v),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(five(&mut c)[4], 0);
    let t0 = server.clock_ms();
    let leaves = |b: i64| (b + 1) * 100 - 1 + 1000;
    let b0 = t0.div_euclid(100);
    same(
        &mut c,
        &["RL.BUCKETS", "o", "5", "1000", "PRECISION", "100"],
    )
    .unwrap();
    server.advance(300);
    same(&mut c, &["RL.BUCKETS", "o", "5", "1000", "COST", "2"]).unwrap();
    server.advance(300);
    same(&mut c, &["RL.BUCKETS", "o", "5", "1000"]).unwrap();
    assert_eq!(five(&mut c)[4], leaves(b0) - (t0 + 600));
    // Bucket b0 has left; b0 + 3, held apart from the newest, is the
    // oldest counted, then the newest (b0 + 6) alone.
    let t1 = leaves(b0);
    server.advance((t1 - t0 - 600) as u64);
    assert_eq!(five(&mut c)[4], 300);
    server.advance(300);
    assert_eq!(five(&mut c)[4], 300);
    server.advance(300);
    assert_eq!(five(&mut c)[4], 0);
}

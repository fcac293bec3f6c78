//! Blocks kept in the bucket header (`BLOCK ms`, `RL.BLOCK`,
//! `RL.UNBLOCK`), with explicit times: a block that holds denies before
//! anything is read or counted and writes nothing; its end never moves.

use super::block::{self as hash, HashChange};
use super::layout::*;
use super::request::*;
use crate::core::error::RlError;
use crate::core::limiter::Charge;
use crate::core::limiter::Refund;
use crate::core::limiter::{Call, Limiter, Now};
use proptest::prelude::*;

fn req(limit: u64, block_ms: Option<u64>) -> BucketsRequest {
    BucketsRequest {
        limit,
        window_ms: 1000,
        precision: Some(100),
        cost: 1,
        block_ms,
    }
}

fn at(ms: i64) -> Call {
    Call::one(Now { ms, us: ms * 1000 })
}

fn run<L: Limiter<MemoryHash, Write = HashWrite>>(
    h: &mut MemoryHash,
    r: &L,
    now: i64,
) -> L::Answer {
    let out = r.decide(h, &at(now)).unwrap();
    if let Some(w) = &out.write {
        h.apply(w);
    }
    out.decision
}

fn block(h: &mut MemoryHash, until: i64) {
    let w = hash::block(h, until).unwrap();
    h.apply(&w);
}

fn header(h: &MemoryHash) -> &[u8] {
    &h.fields[FIELD_HEADER]
}

#[test]
fn the_first_denial_blocks_and_later_calls_count_nothing() {
    let mut h = MemoryHash::new();
    let r = req(2, Some(5_000));
    assert!(run(&mut h, &r, 10_000).allowed);
    assert!(run(&mut h, &r, 10_050).allowed);
    assert_eq!(header(&h), b"B,100,100,0,2,2");
    let first = run(&mut h, &r, 10_060);
    assert_eq!((first.allowed, first.blocked), (false, false));
    assert_eq!(header(&h), b"B,100,100,0,2,2,b15060");
    assert_eq!(h.expire_at_ms, Some(15_060));
    let before = h.clone();
    // The window empties at 11_099; the block holds on: denied, with
    // the block's wait, nothing written, with or without BLOCK.
    for (now, r) in [(10_061, req(2, Some(9))), (12_000, req(100, None))] {
        let d = run(&mut h, &r, now);
        assert!(d.blocked && !d.allowed, "{now}");
        assert_eq!(d.to_reply(), [0, 0, 15_060 - now, 15_060 - now]);
        assert_eq!(h, before);
    }
    // A peek reads the same.
    let peek = r.decide(&mut h, &Call::read(at(15_059).now)).unwrap();
    assert_eq!(peek.decision.to_reply(), [0, 0, 1, 1]);
    // The block's end: admitted over a window that has emptied, and
    // the block's item is gone from the header.
    let d = run(&mut h, &r, 15_060);
    assert_eq!(d.to_reply(), [1, 1, 0, 1039]);
    assert_eq!(header(&h), b"B,100,150,0,1,1");
}

#[test]
fn a_denial_without_block_leaves_an_ended_block_as_it_is() {
    let mut h = MemoryHash::new();
    run(&mut h, &req(1, Some(100)), 1_000);
    run(&mut h, &req(1, Some(100)), 1_001);
    assert_eq!(header(&h), b"B,100,10,0,1,1,b1101");
    let before = h.clone();
    // Ended, still full: an ordinary denial, nothing written.
    let d = run(&mut h, &req(1, None), 1_200);
    assert_eq!((d.allowed, d.blocked), (false, false));
    assert_eq!(h, before);
    // Its BLOCK sets a new block in place of the old item.
    run(&mut h, &req(1, Some(50)), 1_300);
    assert_eq!(header(&h), b"B,100,10,0,1,1,b1350");
}

#[test]
fn rl_block_keeps_the_state_and_unblock_lifts_it() {
    let mut h = MemoryHash::new();
    assert!(run(&mut h, &req(5, None), 10_000).allowed);
    let w = hash::block(&mut h, 20_000).unwrap();
    h.apply(&w);
    assert_eq!(header(&h), b"B,100,100,0,1,1,b20000");
    assert_eq!(h.expire_at_ms, Some(20_000));
    // Blocked again by hand: the end replaced, not added.
    block(&mut h, 30_000);
    assert_eq!(header(&h), b"B,100,100,0,1,1,b30000");
    let Some(HashChange::Set(w)) = hash::unblock(&mut h, 10_100).unwrap() else {
        panic!("a block holds");
    };
    h.apply(&w);
    assert_eq!(header(&h), b"B,100,100,0,1,1");
    // The expiry stays where the block put it.
    assert_eq!(h.expire_at_ms, Some(30_000));
    assert_eq!(run(&mut h, &req(5, None), 10_200).to_reply()[..2], [1, 3]);
    // Nothing to lift.
    assert_eq!(hash::unblock(&mut h, 10_300).unwrap(), None);
    assert_eq!(hash::unblock(&mut MemoryHash::new(), 1).unwrap(), None);
}

#[test]
fn rl_block_on_a_missing_key_holds_the_block_alone() {
    let mut h = MemoryHash::new();
    block(&mut h, 9_000);
    assert_eq!(header(&h), b"b,b9000");
    assert_eq!(h.fields.len(), 1);
    let d = run(&mut h, &req(5, None), 1_000);
    assert_eq!(d.to_reply(), [0, 0, 8_000, 8_000]);
    assert_eq!(
        hash::unblock(&mut h, 1_000).unwrap(),
        Some(HashChange::Delete)
    );
    // Once it ends, the key is a new one to RL.BUCKETS.
    let d = run(&mut h, &req(5, None), 9_000);
    assert_eq!(d.to_reply()[..2], [1, 4]);
    assert_eq!(header(&h), b"B,100,90,0,1,1");
}

#[test]
fn refunds_and_charges_keep_a_block_that_holds() {
    let mut h = MemoryHash::new();
    run(&mut h, &req(3, None), 10_000);
    run(&mut h, &req(3, None), 10_000);
    block(&mut h, 50_000);
    assert_eq!(run(&mut h, &Refund(req(3, None)), 10_100), 1);
    assert_eq!(header(&h), b"B,100,100,0,1,1,b50000");
    let c = run(
        &mut h,
        &Charge(BucketsRequest {
            cost: 4,
            ..req(3, None)
        }),
        10_200,
    );
    assert_eq!(c.charged, 4);
    assert!(c.after.blocked);
    assert_eq!(header(&h), b"B,100,102,2,5,4,b50000");
    // On a key holding only a block: the charge starts the state.
    let mut h = MemoryHash::new();
    block(&mut h, 50_000);
    assert_eq!(run(&mut h, &Refund(req(3, None)), 10_100), 0);
    assert_eq!(header(&h), b"b,b50000");
    run(&mut h, &Charge(req(3, None)), 10_100);
    assert_eq!(header(&h), b"B,100,101,0,1,1,b50000");
    assert_eq!(h.expire_at_ms, Some(50_000));
}

#[test]
fn headers_with_a_block_rl_did_not_write_are_refused() {
    for bad in [
        &b"b,100,100,0,1,1,b"[..],
        b"b,100,100,0,1,1,bx",
        b"b,100,100,0,1,1,b5,b6",
        b"b,100,100,0,1,b5,1",
        b"b,100,100,0,1,1,b5,1",
        b"b,b5,1",
        b"b,b",
        // RL.BLOCK writes the lowercase tag alone.
        b"B,b5",
    ] {
        let mut h = MemoryHash::new();
        h.fields.insert(FIELD_HEADER.to_vec(), bad.to_vec());
        h.expire_at_ms = Some(100_000);
        let before = h.clone();
        let err = req(5, Some(5)).decide(&mut h, &at(1_000)).unwrap_err();
        assert_eq!(
            err,
            RlError::ForeignHash,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
        assert_eq!(hash::block(&mut h, 9).unwrap_err(), RlError::ForeignHash);
        assert_eq!(hash::unblock(&mut h, 9).unwrap_err(), RlError::ForeignHash);
        assert_eq!(h, before);
    }
    // RL.COUNT's key is not RL.BUCKETS': refused by name.
    let mut h = MemoryHash::new();
    h.fields.insert(FIELD_HEADER.to_vec(), b"c,b5".to_vec());
    assert!(matches!(
        hash::block(&mut h, 9),
        Err(RlError::WrongKind { .. })
    ));
}

proptest! {
    /// Whatever the calls, none is admitted while a block holds, each
    /// denial by it waits exactly until its end, and no denial by a
    /// block changes the key.
    #[test]
    fn a_block_never_admits(
        steps in proptest::collection::vec((0i64..400, 1u64..4, proptest::option::of(1u64..3_000)), 1..60),
    ) {
        let mut h = MemoryHash::new();
        let mut now = 10_000;
        let mut until: Option<i64> = None;
        for (dt, limit, block_ms) in steps {
            now += dt;
            let before = h.clone();
            let d = run(&mut h, &req(limit, block_ms), now);
            match until.filter(|&u| u > now) {
                Some(u) => {
                    prop_assert!(!d.allowed && d.blocked);
                    prop_assert_eq!(now + d.retry_after_ms as i64, u);
                    prop_assert_eq!(&h, &before);
                }
                None => {
                    prop_assert!(!d.blocked);
                    if !d.allowed {
                        if let Some(ms) = block_ms {
                            until = Some(now + ms as i64);
                        }
                    }
                }
            }
        }
    }
}

//! Blocks on a sliding log (`BLOCK ms`, `RL.BLOCK`, `RL.UNBLOCK`), with
//! explicit times: a block that holds denies before the log is counted and
//! writes nothing; its end never moves; an ended one counts nothing and
//! goes with the next admission.

use super::block::{block, unblock};
use super::log::{member, LogWrite, MemoryLog, BLOCK_MEMBER};
use super::request::SlideRequest;
use crate::core::error::RlError;
use crate::core::limiter::Charge;
use crate::core::limiter::{Call, Limiter, Now};
use crate::core::limiter::{Refund, Units};
use proptest::prelude::*;

fn req(limit: u64, block_ms: Option<u64>) -> SlideRequest {
    SlideRequest {
        limit,
        window_ms: 1000,
        cost: 1,
        block_ms,
    }
}

fn at(ms: i64) -> Call {
    Call::one(Now { ms, us: ms * 1000 })
}

fn run<L: Limiter<MemoryLog, Write = LogWrite>>(log: &mut MemoryLog, r: &L, now: i64) -> L::Answer {
    let out = r.decide(log, &at(now)).unwrap();
    if let Some(w) = &out.write {
        log.apply_write(w);
    }
    out.decision
}

fn by_hand(log: &mut MemoryLog, now: i64, ms: u64) -> i64 {
    let (w, until) = block(log, now, ms).unwrap();
    log.apply_write(&w);
    until
}

fn entries(log: &MemoryLog) -> Vec<(i64, i64)> {
    log.entries().to_vec()
}

#[test]
fn the_first_denial_blocks_and_later_calls_count_nothing() {
    let mut log = MemoryLog::new();
    let r = req(2, Some(5_000));
    assert!(run(&mut log, &r, 10_000).allowed);
    assert!(run(&mut log, &r, 10_050).allowed);
    let first = run(&mut log, &r, 10_060);
    assert_eq!((first.allowed, first.blocked), (false, false));
    // The breach answers the block's wait, not the window's 940 ms.
    assert_eq!(first.to_reply(), [0, 0, 5_000, 5_000]);
    let blocked = vec![
        (10_000, member(10_000, 0)),
        (10_050, member(10_050, 0)),
        (15_060, BLOCK_MEMBER),
    ];
    assert_eq!(entries(&log), blocked);
    let before = log.clone();
    // The window empties at 11_050; the block holds on: denied, with the
    // block's wait, nothing written, with or without BLOCK.
    for (now, r) in [(10_061, req(2, Some(9))), (12_000, req(100, None))] {
        let d = run(&mut log, &r, now);
        assert!(d.blocked && !d.allowed, "{now}");
        assert_eq!(d.to_reply(), [0, 0, 15_060 - now, 15_060 - now]);
        assert_eq!(log, before);
    }
    // A peek reads the same.
    let peek = r.decide(&mut log, &Call::read(at(15_059).now)).unwrap();
    assert_eq!(peek.decision.to_reply(), [0, 0, 1, 1]);
    assert_eq!(peek.write, None);
    // The block's end: admitted over a window that has emptied, the
    // stale entries removed by rank, the block's member removed by name.
    let d = run(&mut log, &r, 15_060);
    assert_eq!(d.to_reply(), [1, 1, 0, 1000]);
    assert_eq!(entries(&log), vec![(15_060, member(15_060, 0))]);
}

#[test]
fn an_ended_block_counts_nothing_until_an_admission_removes_it() {
    let mut log = MemoryLog::new();
    let r = req(2, None);
    assert!(run(&mut log, &r, 1_000).allowed);
    let until = by_hand(&mut log, 1_100, 400);
    assert_eq!(until, 1_500);
    // Ended (1_500 <= now): the entry at 1_000 alone counts, the block's
    // member in the window or out of it.
    for now in [1_500, 1_999] {
        let peek = r.decide(&mut log, &Call::read(at(now).now)).unwrap();
        assert_eq!(peek.decision.to_reply(), [1, 0, 0, 1000], "{now}");
    }
    // Every entry out of the window, the block's member too: a denial
    // without BLOCK writes nothing and keeps the ended member.
    let full = req(1, None);
    assert!(run(&mut log, &full, 2_600).allowed);
    assert_eq!(entries(&log), vec![(2_600, member(2_600, 0))]);
    // An ended block under a denial stays as it is.
    by_hand(&mut log, 2_700, 100);
    let before = log.clone();
    let d = run(&mut log, &full, 2_900);
    assert_eq!(d.to_reply(), [0, 0, 700, 700]);
    assert_eq!(log, before);
}

#[test]
fn a_block_by_hand_keeps_the_entries_and_unblock_keeps_the_counts() {
    let mut log = MemoryLog::new();
    let r = req(3, None);
    assert!(run(&mut log, &r, 1_000).allowed);
    assert_eq!(by_hand(&mut log, 1_200, 60_000), 61_200);
    assert!(run(&mut log, &r, 1_300).blocked);
    // Blocking again moves the end (RL.BLOCK sets it, it does not add).
    assert_eq!(by_hand(&mut log, 1_300, 100), 1_400);
    assert_eq!(
        entries(&log),
        vec![(1_000, member(1_000, 0)), (1_400, BLOCK_MEMBER)]
    );
    assert_eq!(unblock(&mut log, 1_350).unwrap(), Some(LogWrite::Unblock));
    log.apply_write(&LogWrite::Unblock);
    assert_eq!(entries(&log), vec![(1_000, member(1_000, 0))]);
    assert_eq!(run(&mut log, &r, 1_360).to_reply(), [1, 1, 0, 1000]);
    // Nothing to lift: none, or one that has ended.
    assert_eq!(unblock(&mut log, 1_400).unwrap(), None);
    by_hand(&mut log, 1_400, 10);
    assert_eq!(unblock(&mut log, 1_410).unwrap(), None);
    assert_eq!(unblock(&mut MemoryLog::new(), 5).unwrap(), None);
    // By hand on a missing key: the block's member alone, which lifting
    // removes (the key goes with it).
    let mut empty = MemoryLog::new();
    assert_eq!(by_hand(&mut empty, 7, 3), 10);
    assert_eq!(entries(&empty), vec![(10, BLOCK_MEMBER)]);
    assert!(run(&mut empty, &r, 8).blocked);
    let lift = unblock(&mut empty, 9).unwrap().unwrap();
    empty.apply_write(&lift);
    assert!(empty.entries().is_empty());
}

#[test]
fn a_block_stays_the_newest_after_a_clock_step_back() {
    let mut log = MemoryLog::new();
    assert!(run(&mut log, &req(5, None), 10_000).allowed);
    // The clock stepped back 5 s: the block ends past the newest entry.
    assert_eq!(by_hand(&mut log, 5_000, 100), 10_001);
    let d = run(&mut log, &req(5, None), 5_000);
    assert_eq!(d.to_reply(), [0, 0, 5_001, 5_001]);
}

#[test]
fn refund_and_charge_keep_a_block_that_holds() {
    let mut log = MemoryLog::new();
    let r = req(3, None);
    assert!(run(&mut log, &r, 1_000).allowed);
    assert!(run(&mut log, &r, 1_001).allowed);
    by_hand(&mut log, 1_002, 5_000);
    assert_eq!(run(&mut log, &Refund(r), 1_003), 1);
    let charged = run(&mut log, &Charge(SlideRequest { cost: 2, ..r }), 1_004);
    assert_eq!(charged.charged, 2);
    // The peek after is the block's.
    assert_eq!(charged.after.to_reply(), [0, 0, 4_998, 4_998]);
    assert_eq!(
        entries(&log),
        vec![
            (1_000, member(1_000, 0)),
            (1_004, member(1_004, 0)),
            (1_004, member(1_004, 1)),
            (6_002, BLOCK_MEMBER)
        ]
    );
    // A charge once it has ended removes it, as an admission does.
    let charged = run(&mut log, &Charge(r), 6_002);
    assert_eq!(charged.charged, 1);
    assert!(!log.entries().iter().any(|&(_, m)| m == BLOCK_MEMBER));
    // What a refund and a charge report after never breaches.
    let blocking = req(1, Some(50));
    assert_eq!(blocking.unit().block_ms, None);
}

#[test]
fn a_block_member_rl_could_not_have_written_is_refused() {
    for score in [-5, i64::MAX] {
        let mut log = MemoryLog::new();
        log.insert(score, BLOCK_MEMBER);
        let before = log.clone();
        assert_eq!(
            req(5, Some(10))
                .decide(&mut log, &at(1_000))
                .map(|o| o.write),
            Err(RlError::ForeignZset)
        );
        assert_eq!(block(&mut log, 1_000, 10), Err(RlError::ForeignZset));
        assert_eq!(unblock(&mut log, 1_000), Err(RlError::ForeignZset));
        assert_eq!(log, before);
    }
}

proptest! {
    /// Random calls with and without BLOCK, blocks by hand and lifts: no
    /// call is admitted while a block holds, every blocked reply counts
    /// down to the same end, and the window never holds more than `limit`.
    #[test]
    fn a_block_never_admits_and_its_end_stays(
        limit in 1u64..4,
        steps in proptest::collection::vec((0i64..300, 0u8..8, 1u64..2_000), 1..80),
    ) {
        let mut log = MemoryLog::new();
        let mut now = 10_000;
        let mut until: Option<i64> = None;
        let mut admitted: Vec<i64> = Vec::new();
        for (dt, pick, ms) in steps {
            now += dt;
            match pick {
                0 => until = Some(by_hand(&mut log, now, ms)),
                1 => {
                    if let Some(w) = unblock(&mut log, now).unwrap() {
                        log.apply_write(&w);
                        until = None;
                    }
                }
                _ => {
                    let r = req(limit, (pick % 2 == 0).then_some(ms));
                    let d = run(&mut log, &r, now);
                    match until.filter(|&u| u > now) {
                        Some(u) => {
                            prop_assert!(!d.allowed && d.blocked);
                            prop_assert_eq!(now + d.retry_after_ms as i64, u);
                        }
                        None if d.allowed => admitted.push(now),
                        None if r.block_ms.is_some() => {
                            prop_assert_eq!(d.retry_after_ms, ms);
                            until = Some(now + ms as i64);
                        }
                        None => prop_assert!(!d.blocked),
                    }
                }
            }
            let in_window = admitted.iter().filter(|&&t| t > now - 1000).count() as u64;
            prop_assert!(in_window <= limit);
            let blocks = log.entries().iter().filter(|&&(_, m)| m == BLOCK_MEMBER).count();
            prop_assert!(blocks <= 1);
        }
    }
}

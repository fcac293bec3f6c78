//! `UPTO` ([`crate::core::options::upto`]) over every limiter that takes
//! it: here, beside the dispatch, because the option itself names none.

use crate::core::buckets::layout::MemoryHash;
use crate::core::buckets::request::BucketsRequest;
use crate::core::dispatch::test_lines::split;
use crate::core::error::RlError;
use crate::core::fixed::request::FixedRequest;
use crate::core::limiter::Now;
use crate::core::limiter::{Call, Limiter};
use crate::core::options::upto::*;
use crate::core::slide::log::MemoryLog;
use crate::core::slide::request::{SlideRequest, SYNTAX as SLIDE};
use crate::core::string_key::MemoryString;
use crate::core::throttle::gcra::Gcra;
use crate::core::throttle::request::{ThrottleRequest, RL_THROTTLE};
use proptest::prelude::*;

fn at(ms: i64) -> Call {
    Call::one(Now { ms, us: ms * 1000 })
}

#[test]
fn upto_is_taken_off_anywhere_after_the_positional_arguments() {
    let line = split("RL.SLIDE k 10 1000 upto COST 5");
    let got = take_upto(&SLIDE, &line).unwrap().unwrap();
    assert_eq!(got, split("RL.SLIDE k 10 1000 COST 5"));
    assert_eq!(
        take_upto(&SLIDE, &split("RL.SLIDE k 10 1000 COST 5")),
        Ok(None)
    );
    // In a positional place, it is that argument's (and its error).
    assert_eq!(take_upto(&SLIDE, &split("RL.SLIDE k UPTO 1000")), Ok(None));
    let line = split("RL.THROTTLE k 1 1 1000 UPTO");
    let got = take_upto(&RL_THROTTLE, &line).unwrap().unwrap();
    assert_eq!(got, split("RL.THROTTLE k 1 1 1000"));
    assert_eq!(
        take_upto(&SLIDE, &split("RL.SLIDE k 10 1000 UPTO UPTO")),
        Err(RlError::DuplicateOption { option: "UPTO" })
    );
}

/// `RL.FIXED k 10 1000 COST cost [BLOCK ms] UPTO` at `now`, applied.
fn fixed_upto(s: &mut MemoryString, cost: u64, block_ms: Option<u64>, now: i64) -> [i64; 5] {
    let r = FixedRequest {
        limit: 10,
        window_ms: 1000,
        cost,
        block_ms,
    };
    let out = UpTo(r).decide(s, &at(now)).unwrap();
    if let Some(w) = &out.write {
        s.apply(w);
    }
    out.decision.to_reply()
}

#[test]
fn a_partial_grant_takes_what_fits_or_waits_for_one_unit() {
    // limit 10 per 1000 ms: 7 taken, then 5 asked: 3 granted.
    let mut s = MemoryString::default();
    let take = |s: &mut MemoryString, cost, now| fixed_upto(s, cost, None, now);
    assert_eq!(take(&mut s, 7, 0), [1, 3, 0, 1000, 7]);
    assert_eq!(take(&mut s, 5, 100), [1, 0, 0, 900, 3]);
    assert_eq!(take(&mut s, 5, 200), [0, 0, 800, 800, 0]);
    // A cost past the limit takes a whole window's worth.
    assert_eq!(take(&mut s, 25, 1000), [1, 0, 0, 1000, 10]);
}

#[test]
fn with_block_a_partial_grant_takes_what_fits_and_only_none_fitting_blocks() {
    let mut s = MemoryString::default();
    let take = |s: &mut MemoryString, cost, now| fixed_upto(s, cost, Some(5000), now);
    assert_eq!(take(&mut s, 7, 0), [1, 3, 0, 1000, 7]);
    // All 3 that fit, not 1: the breach's remaining 0 is not what fits.
    assert_eq!(take(&mut s, 5, 100), [1, 0, 0, 900, 3]);
    assert_eq!(s.value.as_deref(), Some(&b"10"[..]));
    // None fits: the breach, which blocks and answers as the block.
    assert_eq!(take(&mut s, 5, 200), [0, 0, 5000, 5000, 0]);
    assert_eq!(s.value.as_deref(), Some(&b"10e1000b5200"[..]));
}

#[test]
fn shadow_mode_admits_a_grant_of_nothing_with_the_denials_figures() {
    let mut s = MemoryString::default();
    fixed_upto(&mut s, 10, None, 0);
    let r = FixedRequest {
        limit: 10,
        window_ms: 1000,
        cost: 5,
        block_ms: Some(5000),
    };
    let denied = UpTo(r).decide(&mut s, &at(200)).unwrap();
    assert_eq!(denied.decision.to_reply(), [0, 0, 5000, 5000, 0]);
    let write = denied.write;
    let shadowed = UpTo(r).shadow(&mut s, &at(200), denied).unwrap();
    // Admitted, granted 0, writing the block the breach sets.
    assert_eq!(shadowed.decision.to_reply(), [1, 0, 5000, 5000, 0]);
    assert!(write.is_some());
    assert_eq!(shadowed.write, write);
}

#[test]
fn a_token_bucket_grants_the_tokens_it_holds() {
    // A bucket of 5, one token back every 100 ms.
    let rate = Gcra::new(4, 10, 1_000_000).unwrap();
    let mut s = MemoryString::default();
    let mut take = |q: u64, ms: i64| {
        let out = UpTo(ThrottleRequest {
            rate,
            quantity: q,
            block_ms: None,
        })
        .decide(&mut s, &at(1_800_000_000_000 + ms))
        .unwrap();
        if let Some(w) = &out.write {
            s.apply(w);
        }
        out.decision.to_reply()
    };
    assert_eq!(take(8, 0), [1, 0, 0, 500, 5]);
    assert_eq!(take(8, 250), [1, 0, 0, 450, 2]);
    assert_eq!(take(1, 250), [0, 0, 50, 450, 0]);
}

proptest! {
    /// Random partial grants and plain admissions on a sliding log and
    /// on a bucket window of 1 ms buckets (exact too): a grant never
    /// admits more than fits (no window counts more than `limit`),
    /// grants the whole cost whenever it fits and what fits whenever
    /// one unit does, and is denied exactly when none does.
    #[test]
    fn a_partial_grant_never_admits_more_than_fits(
        limit in 1u64..12,
        window in 1u64..250,
        steps in proptest::collection::vec((0i64..120, any::<bool>(), 1u64..30), 1..80),
    ) {
        let mut log = MemoryLog::new();
        let mut hash = MemoryHash::new();
        let mut in_log: Vec<(i64, u64)> = Vec::new();
        let mut in_hash: Vec<(i64, u64)> = Vec::new();
        let mut now = 10_000;
        for (dt, upto, cost) in steps {
            now += dt;
            let counted = |v: &Vec<(i64, u64)>| -> u64 {
                v.iter().filter(|&&(t, _)| t > now - window as i64).map(|&(_, c)| c).sum()
            };
            let fits_log = limit - counted(&in_log);
            let fits_hash = limit - counted(&in_hash);
            let r = SlideRequest { limit, window_ms: window, cost, block_ms: None };
            let b = BucketsRequest { limit, window_ms: window, precision: Some(1), cost, block_ms: None };
            if upto {
                let out = UpTo(r).decide(&mut log, &at(now)).unwrap();
                if let Some(w) = &out.write {
                    log.apply_write(w);
                }
                prop_assert_eq!(out.decision.granted, cost.min(fits_log));
                prop_assert_eq!(out.decision.decision.allowed, fits_log > 0);
                in_log.push((now, out.decision.granted));
                let out = UpTo(b).decide(&mut hash, &at(now)).unwrap();
                if let Some(w) = &out.write {
                    hash.apply(w);
                }
                prop_assert_eq!(out.decision.granted, cost.min(fits_hash));
                prop_assert_eq!(out.decision.decision.allowed, fits_hash > 0);
                in_hash.push((now, out.decision.granted));
            } else if cost <= limit {
                if r.decide(&mut log, &at(now)).unwrap().write.map(|w| log.apply_write(&w)).is_some() {
                    in_log.push((now, cost));
                }
                if b.decide(&mut hash, &at(now)).unwrap().write.map(|w| hash.apply(&w)).is_some() {
                    in_hash.push((now, cost));
                }
            }
            let held = log.entries().iter().filter(|&&(t, _)| t > now - window as i64).count() as u64;
            prop_assert_eq!(held, counted(&in_log));
            prop_assert!(held <= limit, "{} counted, limit {}", held, limit);
            prop_assert!(counted(&in_hash) <= limit);
        }
    }
}

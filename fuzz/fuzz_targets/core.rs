//! One target over the whole core: every argument parser gets the same
//! argument vector, and each request that parses is decided against a
//! state built from the input (including forged stored values) at clocks
//! from the input, jumping back and forth. Besides "no panic, no overflow"
//! (fuzz builds check arithmetic), the decisions must keep their promises:
//! no admission beyond the limit, non-negative reply fields, a denial that
//! writes nothing and names a wait of at least 1 ms.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

use rl::core::buckets::decide as bucket_window;
use rl::core::buckets::layout::MemoryHash;
use rl::core::buckets::request::BucketsRequest;
use rl::core::count::decide as event_counter;
use rl::core::count::request::{CountRequest, TotalsRequest};
use rl::core::fixed::decide::{self as fixed_window, FixedState};
use rl::core::fixed::request::FixedRequest;
use rl::core::load_options::LoadOptions;
use rl::core::slide::decide as sliding_log;
use rl::core::slide::log::MemoryLog;
use rl::core::slide::request::SlideRequest;
use rl::core::throttle::gcra;
use rl::core::throttle::request::ThrottleRequest;

#[derive(Arbitrary, Debug)]
struct Input {
    args: Vec<Vec<u8>>,
    /// Stored values rl may find in a key (forged or not).
    fields: Vec<(Vec<u8>, Vec<u8>)>,
    stored: Vec<u8>,
    expire_at_ms: Option<i64>,
    start: i64,
    /// Clock steps (ms), back and forth.
    steps: Vec<i32>,
}

fn check_reply(reply: [i64; 4], allowed_written: bool) {
    assert!(reply.iter().all(|&v| v >= 0), "{reply:?}");
    if reply[0] == 0 {
        assert!(reply[2] >= 1, "denied with no wait: {reply:?}");
        assert!(!allowed_written, "a denial wrote");
    }
}

fn clocks(input: &Input) -> impl Iterator<Item = i64> + '_ {
    let mut now = input.start;
    std::iter::once(now).chain(input.steps.iter().take(64).map(move |&d| {
        now = now.saturating_add(i64::from(d));
        now
    }))
}

fuzz_target!(|input: Input| {
    let args: Vec<&[u8]> = input.args.iter().map(Vec::as_slice).collect();
    // Every parser, and every error's reply text.
    let _ = LoadOptions::parse(&args).map_err(|e| e.to_string());

    if let Ok(req) = SlideRequest::parse(&args).map_err(|e| e.to_string()) {
        let mut log = MemoryLog::new();
        for now in clocks(&input) {
            if let Ok(out) = sliding_log::decide(&mut log, &req, now) {
                check_reply(
                    out.decision.to_reply(),
                    out.decision.allowed != out.write.is_some(),
                );
                if let Some(a) = out.write {
                    log.apply(&a);
                    let held = log
                        .entries()
                        .iter()
                        .filter(|&&(s, _)| s > now - req.window_ms as i64)
                        .count();
                    assert!(held as u64 <= req.limit);
                }
            }
        }
    }

    if let Ok(req) = BucketsRequest::parse(&args).map_err(|e| e.to_string()) {
        let mut h = MemoryHash::new();
        h.fields.extend(input.fields.iter().take(16).cloned());
        for now in clocks(&input) {
            if let Ok(out) = bucket_window::decide(&mut h, &req, now) {
                check_reply(
                    out.decision.to_reply(),
                    out.decision.allowed != out.write.is_some(),
                );
                if let Some(w) = &out.write {
                    assert!(out.decision.remaining < req.limit);
                    h.apply(w);
                }
            }
        }
    }

    if let Ok(req) = CountRequest::parse(&args).map_err(|e| e.to_string()) {
        let mut h = MemoryHash::new();
        h.fields.extend(input.fields.iter().take(16).cloned());
        let totals = TotalsRequest {
            window_ms: req.window_ms,
            precision: req.precision,
        };
        for now in clocks(&input) {
            if let Ok(out) = event_counter::count(&mut h, &req, now) {
                h.apply(out.write.as_ref().expect("a count always writes"));
                assert_eq!(
                    event_counter::totals(&mut h, &totals, now).ok(),
                    Some(out.decision)
                );
            }
        }
    }
    if let Ok(req) = TotalsRequest::parse(&args).map_err(|e| e.to_string()) {
        let mut h = MemoryHash::new();
        h.fields.extend(input.fields.iter().take(16).cloned());
        let _ = event_counter::totals(&mut h, &req, input.start);
    }

    for parse in [ThrottleRequest::parse_ms, ThrottleRequest::parse_cell] {
        if let Ok(req) = parse(&args).map_err(|e| e.to_string()) {
            let mut tat = gcra::stored_tat(&input.stored).ok();
            for now in clocks(&input) {
                let now_us = now.saturating_mul(1000);
                let out = gcra::decide(&req.rate, tat, req.quantity, now_us);
                let d = out.to_decision().to_reply();
                assert!(d.iter().all(|&v| v >= 0), "{d:?}");
                let cell = out.to_cell(req.rate.limit).to_reply();
                assert!(cell[3] >= -1 && cell[4] >= 0, "{cell:?}");
                if !out.allowed {
                    assert!(out.write.is_none());
                }
                if let Some(w) = out.write {
                    assert!(
                        i128::from(w.tat_us) - i128::from(now_us)
                            <= i128::from(req.rate.tolerance_us)
                    );
                    tat = Some(w.tat_us);
                }
            }
        }
    }

    if let Ok(req) = FixedRequest::parse(&args).map_err(|e| e.to_string()) {
        let mut state = fixed_window::stored_count(&input.stored)
            .ok()
            .map(|count| FixedState {
                count,
                expire_at_ms: input.expire_at_ms,
            });
        for now in clocks(&input) {
            let out = fixed_window::decide(&req, state, now);
            check_reply(
                out.decision.to_reply(),
                out.decision.allowed != out.write.is_some(),
            );
            if let Some(w) = out.write {
                assert!(w.value <= req.limit);
                state = Some(FixedState {
                    count: w.value,
                    expire_at_ms: Some(w.expire_at_ms),
                });
            }
        }
    }
});

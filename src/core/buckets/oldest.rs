//! `RL.PEEK BUCKETS ... OLDEST`: the wait until the oldest bucket the
//! window counts leaves it.

use super::layout::{load, HashView, Kind};
use super::request::BucketsRequest;
use super::window::{resolve_precision, slide};
use crate::core::error::RlError;

/// The wait at `now` until the oldest bucket that still counts in `req`'s
/// window and holds a count leaves it (`Window::leaves_at`); 0 when the
/// window counts nothing. A held bucket always holds a count (a refund that
/// empties one removes it), so this is the denial's wait for one unit,
/// whether or not the window is full. It reads what a peek reads (the
/// header, and the stale buckets' fields when fewer than the live ones);
/// `COST` plays no part.
pub fn oldest_wait(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
) -> Result<u64, RlError> {
    let state = load(view, Kind::Buckets)?;
    let precision = resolve_precision(req.window_ms, req.precision, state.as_ref())?;
    let win = slide(view, state.as_ref(), req.window_ms, precision, now)?;
    let Some(newest) = win.newest else {
        return Ok(0);
    };
    // The held set's highest bit is its oldest bucket.
    let oldest = win
        .held
        .bits_down()
        .next()
        .map(|i| newest - 1 - i as i64)
        .or_else(|| {
            let counted = newest >= win.live_from && win.newest_counts.iter().any(|&c| c > 0);
            counted.then_some(newest)
        });
    Ok(oldest.map_or(0, |b| (win.leaves_at(b) - now).max(1) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buckets::decide::decide;
    use crate::core::buckets::layout::MemoryHash;
    use proptest::prelude::*;

    use crate::core::buckets::request::test_request as req;

    fn admit(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> bool {
        let out = decide(h, r, now).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision.allowed
    }

    #[test]
    fn table_of_waits_with_explicit_times() {
        // limit 5 per 1000 ms in buckets of 100 ms; bucket b leaves at
        // (b+1)*100 - 1 + 1000. Units in buckets 100 (two), 101 and 105.
        let mut h = MemoryHash::new();
        for now in [10_000, 10_050, 10_150, 10_520] {
            assert!(admit(&mut h, &req(5, 1000, 100, 1), now));
        }
        let rows: &[(i64, u64)] = &[
            (10_520, 579),
            (11_098, 1),
            // Bucket 100 has left; 101 leaves at 11_199.
            (11_099, 100),
            // 101 has left; 105 leaves at 11_599.
            (11_199, 400),
            (11_598, 1),
            (11_599, 0),
            (90_000, 0),
        ];
        for &(now, want) in rows {
            for cost in [1, 5] {
                assert_eq!(
                    oldest_wait(&mut h, &req(5, 1000, 100, cost), now),
                    Ok(want),
                    "at {now}"
                );
            }
        }
        assert_eq!(
            oldest_wait(&mut MemoryHash::new(), &req(5, 1000, 100, 1), 5),
            Ok(0)
        );
        // The key's own precision rules, as for the decision.
        assert_eq!(
            oldest_wait(&mut h, &req(5, 1000, 50, 1), 10_600),
            Err(RlError::PrecisionMismatch { stored: 100 })
        );
    }

    proptest! {
        /// Against a brute-force count of what was admitted: the oldest
        /// bucket holding a unit still counted, and, when the window is
        /// full, the wait a denial of one unit names.
        #[test]
        fn wait_is_the_oldest_counted_buckets_leaving(
            times in proptest::collection::vec(0i64..5_000, 1..40),
            limit in 1u64..12,
            probe in 0i64..8_000,
        ) {
            let (window, precision) = (1000i64, 100i64);
            let r = req(limit, window as u64, precision as u64, 1);
            let mut h = MemoryHash::new();
            let mut sorted = times.clone();
            sorted.sort_unstable();
            let mut admitted = Vec::new();
            for &now in &sorted {
                if admit(&mut h, &r, now) {
                    admitted.push(now);
                }
            }
            let now = probe.max(*sorted.last().unwrap());
            let live_from = (now - window + 1).div_euclid(precision);
            let want = admitted
                .iter()
                .map(|t| t.div_euclid(precision))
                .filter(|&b| b >= live_from)
                .min()
                .map_or(0, |b| ((b + 1) * precision - 1 + window - now) as u64);
            prop_assert_eq!(oldest_wait(&mut h, &r, now), Ok(want));
            let d = decide(&mut h, &r, now).unwrap().decision;
            if !d.allowed {
                prop_assert_eq!(d.retry_after_ms, want);
            }
        }
    }
}

//! `RL.PEEK SLIDE ... OLDEST`: the wait until the oldest entry the window
//! counts leaves it.

use super::block_member::SkipBlock;
use super::decide::{nth_leaves, read_ends};
use super::log::LogView;
use super::request::SlideRequest;
use crate::core::error::RlError;

/// The wait at `now` until the oldest entry still in `req`'s window leaves
/// it: the denial's wait for one unit (`decide_within`'s `nth_after` with
/// n = 1), whether or not the window is full; 0 when the window counts
/// nothing. It reads what a peek reads (the log's ends, checked) and one
/// entry by rank; `COST` plays no part.
pub fn oldest_wait(log: &mut impl LogView, req: &SlideRequest, now: i64) -> Result<u64, RlError> {
    let window = req.window_ms as i64;
    let cutoff = now - window;
    // The entries alone: a block's member counts nothing.
    let log = &mut SkipBlock::new(log);
    let ends = read_ends(log, now, cutoff, 0)?;
    if ends.held == 0 {
        return Ok(0);
    }
    // The rank lookup failed: the newest entry's leaving is surely late
    // enough (as a denial's wait falls back to it).
    Ok(
        nth_leaves(log, cutoff, ends.stale, 1, window, now)?.unwrap_or_else(|| {
            ends.newest
                .map_or(0, |e| (e.score + window - now).max(1) as u64)
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::limiter::{Call, Limiter, Now};
    use crate::core::slide::decide::decide;
    use crate::core::slide::log::MemoryLog;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
        SlideRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        }
    }

    #[test]
    fn table_of_waits_with_explicit_times() {
        // limit 3 per 1000 ms, admissions at 10_000, 10_100 and 10_200.
        let mut log = MemoryLog::new();
        for now in [10_000, 10_100, 10_200] {
            let a = decide(&mut log, &req(3, 1000, 1), now)
                .unwrap()
                .write
                .unwrap();
            log.apply(&a);
        }
        let rows: &[(i64, u64)] = &[
            (10_200, 800),
            (10_999, 1),
            // 10_000 has left; 10_100 is the oldest counted.
            (11_000, 100),
            (11_150, 50),
            (11_199, 1),
            // Everything has left.
            (11_200, 0),
            (90_000, 0),
        ];
        for &(now, want) in rows {
            for cost in [1, 3] {
                assert_eq!(
                    oldest_wait(&mut log, &req(3, 1000, cost), now),
                    Ok(want),
                    "at {now}"
                );
            }
        }
        assert_eq!(
            oldest_wait(&mut MemoryLog::new(), &req(3, 1000, 1), 5),
            Ok(0)
        );
    }

    #[test]
    fn foreign_entries_are_refused() {
        let mut log = MemoryLog::new();
        log.insert(1_000, 7);
        assert_eq!(
            oldest_wait(&mut log, &req(3, 1000, 1), 1_200),
            Err(RlError::ForeignZset)
        );
    }

    proptest! {
        /// Against the log itself: the lowest score still in the window,
        /// plus the window, minus now; and, when the window is full, the
        /// wait a denial of one unit names.
        #[test]
        fn wait_is_the_oldest_counted_entrys_leaving(
            times in proptest::collection::vec(0i64..5_000, 1..40),
            window in 1u64..2_000,
            limit in 1u64..20,
            probe in 0i64..8_000,
        ) {
            let mut log = MemoryLog::new();
            let mut sorted = times.clone();
            sorted.sort_unstable();
            for now in sorted {
                if let Some(a) = decide(&mut log, &req(limit, window, 1), now).unwrap().write {
                    log.apply(&a);
                }
            }
            let now = probe.max(log.entries().last().map_or(0, |e| e.0));
            let w = window as i64;
            let want = log
                .entries()
                .iter()
                .map(|&(s, _)| s)
                .filter(|&s| s > now - w)
                .min()
                .map_or(0, |s| (s + w - now) as u64);
            let r = req(limit, window, 1);
            prop_assert_eq!(oldest_wait(&mut log, &r, now), Ok(want));
            let d = r.decide(&mut log, &Call::read(Now { ms: now, us: now * 1000 })).unwrap().decision;
            if !d.allowed {
                prop_assert_eq!(d.retry_after_ms, want);
            }
        }
    }
}

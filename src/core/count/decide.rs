//! Sliding-window event counters (`RL.COUNT`, `RL.TOTALS`) in the bucket
//! layout of [`buckets::layout`](crate::core::buckets::layout): each bucket holds one
//! count per field name, `t` the per-name totals, `f` the names in the order
//! of the counts (first seen first, so adding a name never rewrites buckets).

use super::request::{CountRequest, TotalsRequest, MAX_COUNT_BUCKETS, MAX_FIELDS, MAX_TOTAL};
use crate::core::buckets::layout::{load, Counts, HashView, HashWrite, Kind};
use crate::core::buckets::window::{resolve_precision_within, slide, write};
use crate::core::error::RlError;
use crate::core::limiter::Outcome;

/// Field name and its total over the window, sorted by name (bytewise).
pub type Totals = Vec<(Vec<u8>, u64)>;

fn sorted(names: &[Vec<u8>], totals: &[u64]) -> Totals {
    let mut out: Totals = names.iter().cloned().zip(totals.iter().copied()).collect();
    out.sort_unstable();
    out
}

/// Adds `by` to `field` in the current bucket at `now` and gives every
/// field's total over the window afterwards.
pub fn count(
    view: &mut impl HashView,
    req: &CountRequest<'_>,
    now: i64,
) -> Result<Outcome<HashWrite, Totals>, RlError> {
    let state = load(view, Kind::Count)?;
    let precision = resolve_precision_within(
        req.window_ms,
        req.precision,
        state.as_ref(),
        MAX_COUNT_BUCKETS,
    )?;
    let win = slide(view, state.as_ref(), req.window_ms, precision, now)?;
    let new_key = state.is_none();
    let mut names = state.map(|s| s.names).unwrap_or_default();
    let mut new_name = false;
    let idx = match names.iter().position(|n| n == req.field) {
        Some(i) => i,
        None if names.len() >= MAX_FIELDS => {
            return Err(RlError::TooManyFields { max: MAX_FIELDS })
        }
        None => {
            names.push(req.field.to_vec());
            new_name = true;
            names.len() - 1
        }
    };
    let mut totals = Counts::from_slice(&win.totals);
    totals.resize(names.len(), 0);
    // Every stored total and count stays at most MAX_TOTAL: a sum past it
    // (or a forged count near u64::MAX) is refused, never wrapped.
    let mut bucket = win.target_counts(names.len());
    let (Some(total), Some(count)) = (
        totals[idx].checked_add(req.by).filter(|&t| t <= MAX_TOTAL),
        bucket[idx].checked_add(req.by).filter(|&c| c <= MAX_TOTAL),
    ) else {
        return Err(RlError::TotalTooLarge { max: MAX_TOTAL });
    };
    bucket[idx] = count;
    totals[idx] = total;
    let changed = (new_key || new_name).then_some(&names[..]);
    let write = write(&win, Kind::Count, &bucket, &totals, changed);
    Ok(Outcome {
        decision: sorted(&names, &totals),
        write: Some(write),
    })
}

/// Every field's total over the window at `now`. Never writes: buckets that
/// left are subtracted on the fly and stay until the next `RL.COUNT`.
pub fn totals(view: &mut impl HashView, req: &TotalsRequest, now: i64) -> Result<Totals, RlError> {
    let Some(state) = load(view, Kind::Count)? else {
        return Ok(Vec::new());
    };
    let precision = resolve_precision_within(
        req.window_ms,
        req.precision,
        Some(&state),
        MAX_COUNT_BUCKETS,
    )?;
    let win = slide(view, Some(&state), req.window_ms, precision, now)?;
    Ok(sorted(&state.names, &win.totals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buckets::layout::MemoryHash;
    use proptest::prelude::*;

    fn count_at(h: &mut MemoryHash, field: &str, by: u64, now: i64) -> Result<Totals, RlError> {
        let req = CountRequest {
            window_ms: 1000,
            field: field.as_bytes(),
            by,
            precision: Some(100),
        };
        let out = count(h, &req, now)?;
        h.apply(out.write.as_ref().unwrap());
        Ok(out.decision)
    }

    fn totals_at(h: &mut MemoryHash, now: i64) -> Totals {
        let req = TotalsRequest {
            window_ms: 1000,
            precision: None,
        };
        totals(h, &req, now).unwrap()
    }

    fn pairs(list: &[(&str, u64)]) -> Totals {
        list.iter()
            .map(|&(n, t)| (n.as_bytes().to_vec(), t))
            .collect()
    }

    /// A hash with rl's header but a forged bucket count near `u64::MAX`:
    /// refused, never wrapped.
    #[test]
    fn a_forged_count_is_refused_not_wrapped() {
        let mut h = MemoryHash::new();
        for (f, v) in [
            ("h", "c,100,0,0,5"),
            ("f", "x"),
            ("0", "18446744073709551000"),
        ] {
            h.fields
                .insert(f.as_bytes().to_vec(), v.as_bytes().to_vec());
        }
        let before = h.clone();
        assert_eq!(
            count_at(&mut h, "x", 1, 0),
            Err(RlError::TotalTooLarge { max: MAX_TOTAL })
        );
        assert_eq!(h, before);
    }

    #[test]
    fn a_total_past_the_largest_is_refused() {
        let mut h = MemoryHash::new();
        let big = crate::core::count::request::MAX_BY;
        let mut sum = 0;
        while sum + big <= MAX_TOTAL {
            sum += big;
            count_at(&mut h, "bytes", big, 0).unwrap();
            if sum > MAX_TOTAL - 3 * big {
                break;
            }
        }
        let before = h.clone();
        let room = MAX_TOTAL - sum;
        assert_eq!(
            count_at(&mut h, "bytes", room + 1, 0),
            Err(RlError::TotalTooLarge { max: MAX_TOTAL })
        );
        assert_eq!(h, before, "refused: nothing written");
        assert_eq!(count_at(&mut h, "bytes", room, 0).unwrap()[0].1, MAX_TOTAL);
    }

    #[test]
    fn table_of_events_with_explicit_times() {
        // 1000 ms window in 100 ms buckets; bucket b leaves at (b+1)*100 - 1 + 1000.
        let mut h = MemoryHash::new();
        // (field, by, now, expected totals)
        type Row<'a> = (&'a str, u64, i64, &'a [(&'a str, u64)]);
        let rows: &[Row] = &[
            ("success", 1, 0, &[("success", 1)]),
            ("failure", 2, 50, &[("failure", 2), ("success", 1)]),
            ("success", 3, 150, &[("failure", 2), ("success", 4)]),
            // bucket 0 (success 1, failure 2) leaves at 1_099
            ("success", 1, 1_099, &[("failure", 0), ("success", 4)]),
            // bucket 1 leaves at 1_199
            (
                "timeout",
                1,
                1_199,
                &[("failure", 0), ("success", 1), ("timeout", 1)],
            ),
        ];
        for &(field, by, now, want) in rows {
            assert_eq!(
                count_at(&mut h, field, by, now),
                Ok(pairs(want)),
                "at {now}"
            );
        }
        assert_eq!(h.fields[&b"f"[..]], b"success,failure,timeout");
        // Header: kind, precision, newest, held (bucket 10, bit 0), the
        // totals; bucket 10 kept the width it had.
        assert_eq!(h.fields[&b"h"[..]], &b"C,100,11,1,1,0,1"[..]);
        assert_eq!(h.fields[&b"10"[..]], b"1,0");
        assert_eq!(h.fields[&b"11"[..]], b"0,0,1");
        assert_eq!(h.bucket_count(), 2);
        // TOTALS later: everything has left, nothing is written.
        let before = h.clone();
        assert_eq!(
            totals_at(&mut h, 5_000),
            pairs(&[("failure", 0), ("success", 0), ("timeout", 0)])
        );
        assert_eq!(h, before);
        assert_eq!(totals_at(&mut MemoryHash::new(), 5_000), Vec::new());
    }

    #[test]
    fn a_key_holds_a_bounded_number_of_names() {
        let mut h = MemoryHash::new();
        for i in 0..MAX_FIELDS {
            count_at(&mut h, &format!("f{i}"), 1, 0).unwrap();
        }
        let before = h.clone();
        assert_eq!(
            count_at(&mut h, "one-more", 1, 0),
            Err(RlError::TooManyFields { max: MAX_FIELDS })
        );
        assert_eq!(h, before);
        assert!(count_at(&mut h, "f0", 1, 0).is_ok());
    }

    #[test]
    fn buckets_and_count_keys_are_not_interchangeable() {
        let mut h = MemoryHash::new();
        count_at(&mut h, "ok", 1, 0).unwrap();
        let req = crate::core::buckets::request::BucketsRequest {
            limit: 5,
            window_ms: 1000,
            precision: None,
            cost: 1,
            block_ms: None,
        };
        assert_eq!(
            crate::core::buckets::decide::decide(&mut h, &req, 1),
            Err(RlError::WrongKind {
                found: "RL.COUNT",
                wanted: "RL.BUCKETS"
            })
        );
        let mut b = MemoryHash::new();
        let out = crate::core::buckets::decide::decide(&mut b, &req, 1).unwrap();
        b.apply(&out.write.unwrap());
        assert_eq!(
            count_at(&mut b, "ok", 1, 2),
            Err(RlError::WrongKind {
                found: "RL.BUCKETS",
                wanted: "RL.COUNT"
            })
        );
    }

    proptest! {
        /// Random event sequences: RL.COUNT's reply and RL.TOTALS at any later
        /// time equal the sum of the events whose bucket still counts.
        #[test]
        fn totals_are_the_events_still_counted(
            window in 1u64..60,
            precision_pick in 1u64..60,
            steps in proptest::collection::vec((0i64..15, 0usize..3, 1u64..5, 0i64..40), 1..120),
        ) {
            let precision = precision_pick.min(window);
            prop_assume!(crate::core::buckets::request::check_precision_within(window, precision, MAX_COUNT_BUCKETS).is_ok());
            let (w, p) = (window as i64, precision as i64);
            let names = ["a", "b", "c"];
            let mut h = MemoryHash::new();
            let mut events: Vec<(i64, usize, u64)> = Vec::new();
            let expected = |events: &[(i64, usize, u64)], t: i64| -> Totals {
                let mut out: Totals = Vec::new();
                for &(s, i, by) in events {
                    let live = (s.div_euclid(p) + 1) * p - 1 > t - w;
                    let name = names[i].as_bytes().to_vec();
                    match out.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, tot)) => *tot += if live { by } else { 0 },
                        None => out.push((name, if live { by } else { 0 })),
                    }
                }
                out.sort_unstable();
                out
            };
            let mut now = 1_000;
            for (dt, i, by, look_ahead) in steps {
                now += dt;
                let req = CountRequest {
                    window_ms: window,
                    field: names[i].as_bytes(),
                    by,
                    precision: Some(precision),
                };
                let out = count(&mut h, &req, now).unwrap();
                h.apply(out.write.as_ref().unwrap());
                events.push((now, i, by));
                prop_assert_eq!(&out.decision, &expected(&events, now));
                prop_assert!(h.bucket_count() as u64 <= window.div_ceil(precision) + 1);
                prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
                let later = now + look_ahead;
                let treq = TotalsRequest { window_ms: window, precision: None };
                prop_assert_eq!(totals(&mut h, &treq, later).unwrap(), expected(&events, later));
            }
        }
    }
}

/// Time anomalies with explicit clocks: a clock stepping back, `now` at the
/// integer limits. Totals never lose events still in the window, no panic.
#[cfg(test)]
mod time_anomalies {
    use super::*;
    use crate::core::args::MAX_WINDOW_MS;
    use crate::core::buckets::layout::{MemoryHash, MAX_CLOCK_MS};
    use proptest::prelude::*;

    #[test]
    fn now_at_the_integer_limits_is_an_error_or_a_sane_count() {
        for window_ms in [1, 1000, MAX_WINDOW_MS] {
            for now in [i64::MIN, -1, 0, 1, MAX_CLOCK_MS, i64::MAX - 1, i64::MAX] {
                let mut h = MemoryHash::new();
                let req = CountRequest {
                    window_ms,
                    field: b"ok",
                    by: 1_000_000,
                    precision: None,
                };
                match count(&mut h, &req, now) {
                    Ok(out) => {
                        assert_eq!(out.decision, vec![(b"ok".to_vec(), 1_000_000)]);
                        assert!(out.write.as_ref().unwrap().expiry.needed_ms > now);
                        h.apply(out.write.as_ref().unwrap());
                        let t = TotalsRequest {
                            window_ms,
                            precision: None,
                        };
                        assert_eq!(totals(&mut h, &t, now).unwrap(), out.decision);
                    }
                    Err(e) => assert_eq!(e, RlError::Internal("server clock out of range")),
                }
            }
        }
    }

    proptest! {
        /// A clock that steps back now and then (by up to 5 s) and
        /// otherwise runs on, checked in real time: `RL.COUNT`'s reply and
        /// `RL.TOTALS` (now and a little later) never lose an event less
        /// than `window` real ms old, never count more than was counted, and
        /// the key holds no more buckets than the window spans.
        #[test]
        fn a_clock_stepping_back_never_loses_an_event(
            window in 1u64..2_000,
            precision_pick in 1u64..200,
            steps in proptest::collection::vec(
                (0i64..1_500, 0u8..6, 1i64..5_000, 1u64..6, 0i64..1_000), 1..120),
        ) {
            let precision = precision_pick.min(window);
            prop_assume!(crate::core::buckets::request::check_precision_within(window, precision, MAX_COUNT_BUCKETS).is_ok());
            let mut h = MemoryHash::new();
            let mut events: Vec<(i64, u64)> = Vec::new();
            let (mut real, mut offset) = (100_000i64, 0i64);
            let total = |t: &Totals| t.iter().map(|(_, n)| n).sum::<u64>();
            for (dt, back_pick, back, by, look_ahead) in steps {
                real += dt;
                if back_pick == 0 {
                    offset += back;
                }
                let now = real - offset;
                let req = CountRequest {
                    window_ms: window,
                    field: b"ok",
                    by,
                    precision: Some(precision),
                };
                let out = count(&mut h, &req, now).unwrap();
                let w = out.write.as_ref().unwrap();
                prop_assert!(w.expiry.needed_ms > now);
                h.apply(w);
                events.push((real, by));
                let treq = TotalsRequest { window_ms: window, precision: None };
                for (at, got) in [
                    (real, total(&out.decision)),
                    (real, total(&totals(&mut h, &treq, now).unwrap())),
                    (real + look_ahead, total(&totals(&mut h, &treq, now + look_ahead).unwrap())),
                ] {
                    let young: u64 = events.iter()
                        .filter(|&&(t, _)| t > at - window as i64)
                        .map(|&(_, n)| n).sum();
                    let all: u64 = events.iter().map(|&(_, n)| n).sum();
                    prop_assert!(got >= young, "{} counted at {}, {} events younger than the window", got, at, young);
                    prop_assert!(got <= all, "{} counted, {} events in all", got, all);
                }
                prop_assert!(h.bucket_count() as u64 <= window.div_ceil(precision) + 1);
                prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
            }
        }
    }

    #[test]
    fn a_clock_stepping_back_still_counts_every_event() {
        let mut h = MemoryHash::new();
        let req = CountRequest {
            window_ms: 1000,
            field: b"failure",
            by: 1,
            precision: Some(100),
        };
        for now in [5_000, 2_000, 4_999, 100] {
            let out = count(&mut h, &req, now).unwrap();
            h.apply(out.write.as_ref().unwrap());
        }
        // Events from the stepped-back clock went into the newest bucket:
        // all four are still counted at 5_000 and at 2_000.
        let t = TotalsRequest {
            window_ms: 1000,
            precision: None,
        };
        for now in [2_000, 5_000] {
            assert_eq!(
                totals(&mut h, &t, now).unwrap(),
                vec![(b"failure".to_vec(), 4)]
            );
        }
    }
}

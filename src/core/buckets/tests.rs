//! The bucket window's tests: tables with explicit times over [`MemoryHash`],
//! then time anomalies.

use super::decide::*;
use super::held::HeldBuckets;
use super::layout::*;
use super::request::*;
use crate::core::error::RlError;

mod tables {
    use super::*;
    use proptest::prelude::*;

    use crate::core::buckets::request::test_request as req;

    fn call(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> [i64; 4] {
        let out = decide(h, r, now).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision.to_reply()
    }

    #[test]
    fn table_of_requests_with_explicit_times() {
        // limit 3 per 1000 ms in buckets of 100 ms; rows: (now, cost, reply).
        // Bucket b leaves at (b+1)*100 - 1 + 1000.
        let r = |cost| req(3, 1000, 100, cost);
        let rows: &[(i64, u64, [i64; 4])] = &[
            // bucket 100 (10_000..=10_099) leaves at 11_099
            (10_000, 1, [1, 2, 0, 1099]),
            (10_050, 1, [1, 1, 0, 1049]),
            // bucket 101 leaves at 11_199
            (10_150, 1, [1, 0, 0, 1049]),
            // full: the two in bucket 100 leave together at 11_099
            (10_300, 1, [0, 0, 799, 899]),
            (11_098, 1, [0, 0, 1, 101]),
            (11_099, 1, [1, 1, 0, 1000]),
            (11_099, 1, [1, 0, 0, 1000]),
            // cost 2 needs bucket 101 (leaves at 11_199) and 110 gone: 110
            // leaves at 12_099
            (11_150, 2, [0, 0, 949, 949]),
            (11_199, 2, [0, 1, 900, 900]),
            (12_099, 2, [1, 1, 0, 1000]),
            // long idle gap: everything has left
            (50_000, 3, [1, 0, 0, 1099]),
        ];
        let mut h = MemoryHash::new();
        for &(now, cost, want) in rows {
            assert_eq!(call(&mut h, &r(cost), now), want, "at {now} cost {cost}");
        }
        // After the idle gap only the new bucket is held, in the header:
        // kind, precision, newest, no older bucket held, total, newest
        // bucket's count.
        assert_eq!(h.bucket_count(), 0);
        assert_eq!(h.fields.len(), 1);
        assert_eq!(h.fields[&b"h"[..]], b"B,100,500,0,3,3");
        // It must live until 51_099; the expiry moved with a slack of
        // window/4.
        assert_eq!(h.expire_at_ms, Some(51_099 + 250));
    }

    #[test]
    fn denied_request_writes_nothing() {
        let mut h = MemoryHash::new();
        call(&mut h, &req(1, 1000, 100, 1), 0);
        let before = h.clone();
        let out = decide(&mut h, &req(1, 1000, 100, 1), 500).unwrap();
        assert!(!out.decision.allowed);
        assert_eq!(out.write, None);
        assert_eq!(h, before);
    }

    /// A hash view that counts the fields read.
    struct Counting<'a>(&'a mut MemoryHash, usize);

    impl HashView for Counting<'_> {
        fn exists(&mut self) -> bool {
            self.0.exists()
        }
        fn get(&mut self, field: &[u8]) -> Option<Bytes> {
            self.1 += 1;
            self.0.get(field)
        }
    }

    /// A call reads at most half the buckets of its window: the side of
    /// the window that is smaller (those that left, or those that count),
    /// and none at all when everything has left.
    #[test]
    fn a_call_reads_the_smaller_side_of_the_window() {
        let r = req(1_000_000, 1000, 10, 1);
        let filled = || {
            let mut h = MemoryHash::new();
            for t in (0..1000).step_by(10) {
                call(&mut h, &r, t);
            }
            assert_eq!(h.bucket_count(), 99);
            h
        };
        // (now, filled buckets that still count, most fields read)
        for (now, counted, max_reads) in [(1_100, 90, 11), (1_900, 10, 11), (5_000, 0, 1)] {
            let mut h = filled();
            let mut view = Counting(&mut h, 0);
            let out = decide(&mut view, &r, now).unwrap();
            assert!(view.1 <= max_reads, "at {now}: {} reads", view.1);
            assert_eq!(out.decision.remaining, 1_000_000 - counted - 1, "at {now}");
            h.apply(&out.write.unwrap());
            // The old ones that count have fields (the newest just got
            // its own); those that left are gone.
            assert_eq!(h.bucket_count() as u64, counted, "at {now}");
        }
    }

    #[test]
    fn eviction_deletes_only_existing_stale_buckets() {
        let mut h = MemoryHash::new();
        let r = req(100, 1000, 100, 1);
        call(&mut h, &r, 0); // bucket 0
        call(&mut h, &r, 250); // bucket 2
        call(&mut h, &r, 999); // bucket 9
        assert_eq!(
            h.bucket_count(),
            2,
            "buckets 0 and 2 have fields, 9 is the header's"
        );
        // At 1_300 buckets 0..=2 have left (bucket 2 left at 1_299).
        let w = decide(&mut h, &r, 1_300).unwrap().write.unwrap();
        assert_eq!(w.delete, [Naming::Ring.field(0), Naming::Ring.field(2)]);
        h.apply(&w);
        // Bucket 9 got its own field when bucket 13 started: bit 3
        // (13 - 1 - 3) of the held set.
        assert_eq!(h.fields[&b"9"[..]], b"1");
        assert_eq!(h.fields[&b"h"[..]], b"B,100,13,8,2,1");
    }

    #[test]
    fn default_precision_is_a_sixtieth_of_the_window() {
        let cases = [(60_000, 1_000), (1, 1), (59, 1), (61, 2), (1_000, 17)];
        for (window, want) in cases {
            assert_eq!(default_precision(window), want, "window {window}");
            assert!(check_precision(window, want).is_ok());
        }
    }

    #[test]
    fn stored_precision_wins_and_a_different_one_is_refused() {
        let mut h = MemoryHash::new();
        call(&mut h, &req(10, 1000, 100, 1), 0);
        let default = BucketsRequest {
            limit: 10,
            window_ms: 2000,
            precision: None,
            cost: 1,
            block_ms: None,
        };
        // A new window without PRECISION keeps the key's 100 ms buckets.
        assert_eq!(call(&mut h, &default, 10), [1, 8, 0, 2089]);
        assert_eq!(
            decide(&mut h, &req(10, 1000, 50, 1), 20),
            Err(RlError::PrecisionMismatch { stored: 100 })
        );
        // The key's width must still fit the new window.
        let short = BucketsRequest {
            window_ms: 50,
            ..default
        };
        assert_eq!(
            decide(&mut h, &short, 20),
            Err(RlError::PrecisionAboveWindow)
        );
    }

    #[test]
    fn clock_stepping_back_never_over_admits() {
        let mut h = MemoryHash::new();
        let r = req(2, 1000, 100, 1);
        assert_eq!(call(&mut h, &r, 5_000), [1, 1, 0, 1099]);
        // Back 3 s: the event goes into the newest bucket (50), not bucket 20.
        assert_eq!(call(&mut h, &r, 2_000), [1, 0, 0, 4099]);
        assert_eq!(h.fields[&b"h"[..]], b"B,100,50,0,2,2");
        assert_eq!(call(&mut h, &r, 2_001), [0, 0, 4098, 4098]);
    }

    #[test]
    fn other_kinds_and_foreign_hashes_are_refused() {
        let mut h = MemoryHash::new();
        h.fields
            .insert(b"h".to_vec(), b"c,1,0,0,000000001".to_vec());
        assert_eq!(
            decide(&mut h, &req(1, 10, 1, 1), 0),
            Err(RlError::WrongKind {
                found: "RL.COUNT",
                wanted: "RL.BUCKETS"
            })
        );
        let mut h = MemoryHash::new();
        h.fields.insert(b"name".to_vec(), b"x".to_vec());
        assert_eq!(
            decide(&mut h, &req(1, 10, 1, 1), 0),
            Err(RlError::ForeignHash)
        );
        let mut h = MemoryHash::new();
        call(&mut h, &req(5, 1000, 100, 1), 0);
        h.fields
            .insert(b"h".to_vec(), b"b,100,0,0,lots,000000001".to_vec());
        assert_eq!(
            decide(&mut h, &req(5, 1000, 100, 1), 1),
            Err(RlError::ForeignHash)
        );
    }

    #[test]
    fn headers_parse_exactly_as_written() {
        let h = Header::parse(b"b,1000,-17,1f,000000003,000000001").expect("rl's");
        assert_eq!((h.kind, h.precision, h.newest), (Kind::Buckets, 1000, -17));
        assert_eq!((h.held.highest(), &h.counts[..]), (Some(4), &[3, 1][..]));
        assert_eq!(h.naming, Naming::Index);
        let h = Header::parse(b"B,1000,-17,1f,3,1").expect("rl's");
        assert_eq!(
            (h.kind, h.naming, h.newest),
            (Kind::Buckets, Naming::Ring, -17)
        );
        let h = Header::parse(b"c,1,999999999999999999,0,0").expect("18 digits");
        assert_eq!(
            (h.newest, &h.counts[..]),
            (999_999_999_999_999_999, &[0][..])
        );
        for bad in [
            &b""[..],
            b"b",
            b"x,1,0,0,1,1",
            b"R,1,0,0,1,1",
            b"Bb,1,0,0,1,1",
            b"b,1,0,0,1,1,",
            b"b,1,,0,1,1",
            b"b,1,-,0,1,1",
            b"b,1,0,0,-1,1",
            b"b,1,0,0,1 ,1",
            b"b,1,1000000000000000000,0,1,1",
            b"b,1,0,g,1,1",
        ] {
            assert!(
                Header::parse(bad).is_none(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn the_longest_header_fits_a_line() {
        let max = [u64::MAX; crate::core::count::request::MAX_FIELDS];
        let bits = crate::core::buckets::held::MAX_BITS;
        let mut held = HeldBuckets::default();
        (0..bits).for_each(|i| held.insert(i));
        let h = encode_header(
            Kind::Count,
            Naming::Index,
            i64::MIN,
            i64::MIN,
            &held,
            &max,
            &[],
        );
        assert_eq!(h.len(), 1 + 2 * 21 + 1 + bits / 4 + max.len() * 21);
        let one = [u64::MAX];
        let h = encode_header(
            Kind::Buckets,
            Naming::Ring,
            i64::MIN,
            i64::MIN,
            &held,
            &one,
            &one,
        );
        assert_eq!(h.len(), 1 + 2 * 21 + 1 + bits / 4 + 2 * 21);
    }

    #[test]
    fn counters_are_plain_and_padded_ones_still_read() {
        assert_eq!(&encode_counts(&[1])[..], b"1");
        assert_eq!(&encode_counts(&[0])[..], b"0");
        assert_eq!(
            &encode_counts(&[1_000_000_000_000_000])[..],
            b"1000000000000000"
        );
        assert_eq!(&encode_counts(&[3, 12])[..], b"3,12");
        assert_eq!(decode_counts(b"3,12").as_deref(), Some(&[3, 12][..]));
        // As releases before 0.2 wrote them.
        assert_eq!(
            decode_counts(b"000000003,000000012").as_deref(),
            Some(&[3, 12][..])
        );
        assert_eq!(decode_counts(b"18446744073709551616"), None, "overflow");
        assert_eq!(decode_counts(b"1x"), None);
        assert_eq!(decode_counts(b""), None);
        assert_eq!(decode_counts(b"1,,2"), None);
        assert_eq!(decode_counts(b"-1"), None);
    }

    #[test]
    fn extreme_times_do_not_panic() {
        let r = req(
            crate::core::buckets::request::MAX_LIMIT,
            crate::core::args::MAX_WINDOW_MS,
            crate::core::args::MAX_WINDOW_MS / MAX_BUCKETS,
            1,
        );
        let mut h = MemoryHash::new();
        for now in [0, 1, 9_000_000_000_000, -5] {
            assert_eq!(call(&mut h, &r, now)[0], 1);
        }
    }

    /// Admitted cost in `(t - window, t]`.
    fn admitted_in(admitted: &[(i64, u64)], t: i64, window: i64) -> u64 {
        admitted
            .iter()
            .filter(|&&(s, _)| s > t - window && s <= t)
            .map(|&(_, c)| c)
            .sum()
    }

    proptest! {
        /// Random sequences: no window-length interval ever holds more than
        /// `limit`; a request is admitted exactly when the counted buckets
        /// leave room; a denial's retry_after_ms is exact under the rule.
        #[test]
        fn never_over_admits_and_retry_is_honest(
            limit in 1u64..10,
            window in 1u64..60,
            precision_pick in 1u64..60,
            steps in proptest::collection::vec((0i64..15, 1u64..10), 1..150),
        ) {
            let precision = precision_pick.min(window);
            prop_assume!(check_precision(window, precision).is_ok());
            let (w, p) = (window as i64, precision as i64);
            let mut h = MemoryHash::new();
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            let mut now = 1_000;
            // Cost held by buckets that still count at `t`.
            let counted = |admitted: &[(i64, u64)], t: i64| -> u64 {
                admitted.iter()
                    .filter(|&&(s, _)| (s.div_euclid(p) + 1) * p - 1 > t - w)
                    .map(|&(_, c)| c).sum()
            };
            for (dt, cost) in steps {
                now += dt;
                let cost = cost.min(limit);
                let r = req(limit, window, precision, cost);
                let out = decide(&mut h, &r, now).unwrap();
                prop_assert_eq!(out.decision.allowed, counted(&admitted, now) + cost <= limit);
                if let Some(wr) = &out.write {
                    h.apply(wr);
                    admitted.push((now, cost));
                    prop_assert!(h.bucket_count() as u64 <= window.div_ceil(precision) + 1);
                    prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
                } else {
                    let wait = out.decision.retry_after_ms as i64;
                    prop_assert!(wait >= 1);
                    let mut later = h.clone();
                    prop_assert!(decide(&mut later, &r, now + wait).unwrap().decision.allowed);
                    prop_assert!(!decide(&mut later, &r, now + wait - 1).unwrap().decision.allowed);
                    // Denied early by at most one bucket width: the window
                    // stretched by one bucket (less 1 ms) is really full.
                    prop_assert!(admitted_in(&admitted, now, w + p - 1) + cost > limit);
                }
            }
            for &(t, _) in &admitted {
                prop_assert!(admitted_in(&admitted, t, w) <= limit);
            }
        }
    }
}

/// Time anomalies with explicit clocks: a clock stepping back and forth,
/// the largest windows, `now` at the integer limits, forged metadata. No
/// over-admission, no panic, no unbounded loop.
mod time_anomalies {
    use super::*;
    use crate::core::args::MAX_WINDOW_MS;
    use crate::core::buckets::request::MAX_LIMIT;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, precision: Option<u64>, cost: u64) -> BucketsRequest {
        BucketsRequest {
            limit,
            window_ms,
            precision,
            cost,
            block_ms: None,
        }
    }

    const EXTREME_NOWS: [i64; 8] = [
        i64::MIN,
        i64::MIN + 1,
        -1,
        0,
        1,
        MAX_CLOCK_MS,
        i64::MAX - 1,
        i64::MAX,
    ];

    #[test]
    fn now_at_the_integer_limits_is_an_error_or_a_sane_decision() {
        for window in [1, 1000, MAX_WINDOW_MS] {
            for now in EXTREME_NOWS {
                let mut h = MemoryHash::new();
                let r = req(MAX_LIMIT, window, None, MAX_LIMIT);
                match decide(&mut h, &r, now) {
                    Ok(out) => {
                        assert!(out.decision.allowed, "{now}");
                        let w = out.write.unwrap();
                        assert!(w.expiry.needed_ms > now);
                        h.apply(&w);
                        let denied = decide(&mut h, &req(MAX_LIMIT, window, None, 1), now).unwrap();
                        assert!(!denied.decision.allowed);
                        assert!(denied.decision.retry_after_ms >= 1);
                        assert!(denied.decision.retry_after_ms <= window + window / 60 + 1);
                    }
                    Err(e) => assert_eq!(e, RlError::Internal("server clock out of range")),
                }
            }
        }
    }

    #[test]
    fn forged_metadata_far_apart_or_at_the_limits_is_refused_at_once() {
        // A hash shaped like rl's with a newest bucket or a held set no rl
        // write produces: computing with it could overflow or walk far.
        let too_many = vec![b'f'; crate::core::buckets::held::MAX_BITS / 4 + 1];
        let forged: &[(&[u8], &[u8])] = &[
            (b"9223372036854775807", b"0"),
            (b"-9223372036854775807", b"0"),
            (b"1700000000000", b"0"),
            (b"1700000", &too_many),
            (b"1700000", b"F"),
            (b"1700000", b""),
            (b"1700000", b"-1"),
        ];
        for &(newest, held) in forged {
            let mut h = MemoryHash::new();
            let mut header = b"b,1000,".to_vec();
            for part in [newest, b",", held, b",000000001,000000001"] {
                header.extend_from_slice(part);
            }
            h.fields.insert(b"h".to_vec(), header);
            let r = req(5, 60_000, None, 1);
            assert_eq!(
                decide(&mut h, &r, 1_700_000_000_000),
                Err(RlError::ForeignHash),
                "n {newest:?} held {held:?}"
            );
        }
    }

    proptest! {
        /// A clock that steps back now and then (by up to 5 s) and
        /// otherwise runs on: in real time, no window-length interval ever
        /// holds more than `limit` admitted units, and a denial's wait is at
        /// least 1 ms.
        #[test]
        fn a_clock_stepping_back_never_over_admits(
            limit in 1u64..6,
            window in 1u64..2_000,
            precision_pick in 1u64..200,
            steps in proptest::collection::vec(
                (0i64..1_500, 0u8..6, 1i64..5_000, 1u64..6), 1..120),
        ) {
            let precision = precision_pick.min(window);
            prop_assume!(check_precision(window, precision).is_ok());
            let mut h = MemoryHash::new();
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            let (mut real, mut offset) = (100_000i64, 0i64);
            for (dt, back_pick, back, cost) in steps {
                real += dt;
                if back_pick == 0 {
                    offset += back;
                }
                let now = real - offset;
                let r = req(limit, window, Some(precision), cost.min(limit));
                let out = decide(&mut h, &r, now).unwrap();
                prop_assert!(out.decision.to_reply().iter().all(|&v| v >= 0));
                match &out.write {
                    Some(w) => {
                        h.apply(w);
                        admitted.push((real, r.cost));
                        let in_window: u64 = admitted.iter()
                            .filter(|&&(t, _)| t > real - window as i64)
                            .map(|&(_, c)| c).sum();
                        prop_assert!(in_window <= limit, "{} in the window at {}", in_window, real);
                        prop_assert!(w.expiry.needed_ms > now);
                        prop_assert!(h.bucket_count() as u64 <= MAX_BUCKETS + 1);
                        prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
                    }
                    None => prop_assert!(out.decision.retry_after_ms >= 1),
                }
            }
        }
    }
}

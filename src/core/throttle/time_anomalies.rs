//! Time anomalies with explicit clocks: a clock stepping back and forth,
//! the longest tolerances, `now` and stored TATs at the integer limits.

use super::gcra::*;
use proptest::prelude::*;

#[test]
fn extreme_clocks_and_states_do_not_panic_or_over_admit() {
    let rates = [
        Gcra::new(0, 1, 1).unwrap(),
        Gcra::new(999_999_999, 1, 1_000_000).unwrap(),
        Gcra::new(0, 1, MAX_TOLERANCE_US).unwrap(),
    ];
    let nows = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
    let tats = [
        None,
        Some(i64::MIN),
        Some(0),
        Some(i64::MAX),
        Some(u64::MAX.div_ceil(1000) as i64),
    ];
    for rate in rates {
        for now in nows {
            for tat in tats {
                for q in [0, 1, rate.limit, rate.limit + 1, u64::MAX] {
                    let out = decide(&rate, tat, q, now);
                    if out.allowed {
                        assert!(q <= rate.limit);
                        if let Some(w) = out.write {
                            // Never further ahead than the tolerance.
                            assert!(
                                i128::from(w.tat_us) - i128::from(now)
                                    <= i128::from(rate.tolerance_us)
                                    || w.tat_us == i64::MAX
                            );
                        }
                    } else {
                        assert_eq!(out.write, None);
                        assert!(out.retry_after_us != Some(0));
                    }
                    let d = out.to_decision().to_reply();
                    assert!(d.iter().all(|&v| v >= 0), "{d:?}");
                    let c = out.to_cell(rate.limit).to_reply();
                    assert!(c[3] >= -1 && c[4] >= 0, "{c:?}");
                }
            }
        }
    }
}

proptest! {
    /// A clock that steps back now and then (by up to 5 s) and
    /// otherwise runs on never admits more than an idle subject's burst
    /// plus one unit per emission interval of real time.
    #[test]
    fn a_clock_stepping_back_never_over_admits(
        max_burst in 0u64..5,
        count in 1u64..20,
        period_ms in 1u64..2_000,
        steps in proptest::collection::vec(
            (0i64..1_500_000, 0u8..6, 1i64..5_000_000, 0u64..6), 1..120),
    ) {
        let rate = Gcra::new(max_burst, count, period_ms * 1000).unwrap();
        let start = 1_700_000_000_000_000i64;
        let (mut real, mut offset) = (start, 0i64);
        let mut tat = None;
        let mut total = 0u64;
        for (dt, back_pick, back, q) in steps {
            real += dt;
            if back_pick == 0 {
                offset += back;
            }
            let now = real - offset;
            let q = q.min(rate.limit);
            let out = decide(&rate, tat, q, now);
            if let Some(w) = out.write {
                tat = Some(w.tat_us);
                prop_assert!(w.tat_us - now <= rate.tolerance_us);
            }
            if out.allowed {
                total += q;
            } else {
                prop_assert!(out.retry_after_us.is_some_and(|r| r >= 1));
            }
            let bound = rate.limit + ((real - start) / rate.emission_us) as u64;
            prop_assert!(total <= bound, "{} admitted, bound {}", total, bound);
        }
    }
}

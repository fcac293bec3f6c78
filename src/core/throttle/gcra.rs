//! The generic cell rate algorithm (GCRA), as popularised by redis-cell.
//!
//! A subject's whole state is one instant, the theoretical arrival time
//! (TAT): when its schedule of one request per emission interval `T` would be
//! back to idle. A request of quantity `q` at `now` moves the TAT to
//! `max(tat, now) + q * T` and is admitted if that new TAT is at most the
//! burst tolerance `τ = (max_burst + 1) * T` ahead of `now`. Everything is
//! integer microseconds with `now` passed in, so rates up to one request per
//! microsecond are exact and the tests replay any timeline.
//!
//! Rounding always favours the limit: `T` is `period / count` rounded up, so
//! the sustained rate is never above the declared one (it is below it by less
//! than one microsecond per request), and every wait is rounded up.

use crate::core::args::unsigned;
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::string_key::{read_state, with_ttl};

/// Longest burst tolerance (µs, about 31.7 years): keeps every TAT far from
/// integer overflow and below [`MIN_STORED_TAT_US`] plus any clock reading.
pub const MAX_TOLERANCE_US: u64 = 1_000_000_000_000_000;

/// Stored TATs at or below this (2001-09-09 in µs) cannot come from a server
/// clock: such a string is some other counter (an RL.FIXED count is at most
/// this), not a throttle state.
pub const MIN_STORED_TAT_US: u64 = 1_000_000_000_000_000;

/// Stored TATs from here on are nanoseconds, as redis-cell writes them (in
/// µs this would be the year 5138). Read as µs, rounded up.
pub const NANOS_FROM: u64 = 100_000_000_000_000_000;

/// What a throttle key holds, for the error naming a foreign string.
pub const STATE_NAME: &str = "an rl throttle state (a TAT in microseconds)";

/// A validated rate: the schedule every decision runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gcra {
    /// `T`: `period / count` in µs, rounded up.
    pub emission_us: i64,
    /// `τ`: `(max_burst + 1) * T`, the most the TAT may run ahead of `now`.
    pub tolerance_us: i64,
    /// `max_burst + 1`: what an idle subject may take at once.
    pub limit: u64,
}

impl Gcra {
    /// `count` requests per `period_us` with bursts up to `max_burst + 1`.
    /// `count` and `period_us` are positive (the parsers ensure it).
    pub fn new(max_burst: u64, count: u64, period_us: u64) -> Result<Self, RlError> {
        if count == 0 || period_us == 0 {
            return Err(RlError::Internal("zero rate"));
        }
        if count > period_us {
            return Err(RlError::RateTooHigh);
        }
        let emission = period_us.div_ceil(count);
        let limit = max_burst.checked_add(1).ok_or(RlError::BurstTooLong)?;
        let tolerance = u128::from(limit) * u128::from(emission);
        if tolerance > u128::from(MAX_TOLERANCE_US) {
            return Err(RlError::BurstTooLong);
        }
        Ok(Gcra {
            emission_us: emission as i64,
            tolerance_us: tolerance as i64,
            limit,
        })
    }
}

/// What an admitted request stores. A denied request or a peek stores nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TatWrite {
    pub tat_us: i64,
    /// Absolute expiry (ms): the TAT rounded up. From then on the key would
    /// say "idle", which an absent key says too.
    pub expire_at_ms: i64,
}

impl TatWrite {
    /// The TAT `tat_us` as stored: expiring when it is reached, rounded up
    /// to the ms.
    pub fn at(tat_us: i128) -> TatWrite {
        TatWrite {
            tat_us: to_i64(tat_us),
            expire_at_ms: to_i64(ceil_div(tat_us, 1000)),
        }
    }
}

/// One GCRA decision in microseconds, before the reply's rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraOutcome {
    pub allowed: bool,
    /// How many more units fit right now, after this decision.
    pub remaining: u64,
    /// 0 when admitted; when denied, the wait after which the same request
    /// is admitted if nothing else arrives; `None` if it never can be
    /// (quantity above `max_burst + 1`, possible only through CL.THROTTLE).
    pub retry_after_us: Option<u64>,
    /// Wait until the subject is idle again (TAT reached).
    pub reset_after_us: u64,
    pub write: Option<TatWrite>,
}

/// Decides a request of `quantity` at `now_us` against the stored TAT
/// (`None`: no state, an idle subject). Pure: the caller applies `write`.
pub fn decide(rate: &Gcra, stored_tat: Option<i64>, quantity: u64, now_us: i64) -> GcraOutcome {
    decide_narrow(rate, stored_tat, quantity, now_us)
        .unwrap_or_else(|| decide_wide(rate, stored_tat, quantity, now_us))
}

/// [`decide_wide`] in i64, `None` as soon as a step would leave i64 (then
/// the wide one answers): the same answer for every call whose values fit,
/// which is every call but CL.THROTTLE's huge quantities and forged
/// extremes, without the 128-bit divisions (about 80 instructions a call).
fn decide_narrow(
    rate: &Gcra,
    stored_tat: Option<i64>,
    quantity: u64,
    now: i64,
) -> Option<GcraOutcome> {
    let (t, tau) = (rate.emission_us, rate.tolerance_us);
    let base = stored_tat.map_or(now, |tat| tat.max(now));
    let increment = i64::try_from(quantity).ok()?.checked_mul(t)?;
    let new_tat = base.checked_add(increment)?;
    let ahead = new_tat.checked_sub(now)?;
    let room = |tat: i64| -> Option<u64> {
        Some((tau.checked_sub(tat.checked_sub(now)?)?.max(0) / t) as u64)
    };
    if ahead <= tau {
        let write = match quantity {
            0 => None,
            _ => Some(TatWrite {
                tat_us: new_tat,
                expire_at_ms: new_tat.checked_neg()?.div_euclid(1000).checked_neg()?,
            }),
        };
        return Some(GcraOutcome {
            allowed: true,
            remaining: room(new_tat)?,
            retry_after_us: Some(0),
            reset_after_us: ahead.max(0) as u64,
            write,
        });
    }
    let retry = new_tat.checked_sub(tau)?.checked_sub(now)?.max(0) as u64;
    Some(GcraOutcome {
        allowed: false,
        remaining: room(base)?,
        retry_after_us: (increment <= tau).then_some(retry),
        reset_after_us: base.checked_sub(now)?.max(0) as u64,
        write: None,
    })
}

/// [`decide`] in i128: exact for any quantity (`quantity * T` can exceed
/// i64 for CL.THROTTLE's unchecked quantity) and any stored TAT.
fn decide_wide(rate: &Gcra, stored_tat: Option<i64>, quantity: u64, now_us: i64) -> GcraOutcome {
    // i128: quantity * T can exceed i64 for CL.THROTTLE's unchecked quantity.
    let t = i128::from(rate.emission_us);
    let tau = i128::from(rate.tolerance_us);
    let now = i128::from(now_us);
    // A TAT in the past carries no information: the schedule restarts now.
    let base = stored_tat.map_or(now, |tat| i128::from(tat).max(now));
    let increment = i128::from(quantity) * t;
    let new_tat = base + increment;
    // Units that still fit when the schedule stands at `tat`.
    let room = |tat: i128| to_u64(((tau - (tat - now)).max(0)) / t);

    if new_tat - now <= tau {
        return GcraOutcome {
            allowed: true,
            remaining: room(new_tat),
            retry_after_us: Some(0),
            reset_after_us: to_u64(new_tat - now),
            write: (quantity > 0).then(|| TatWrite::at(new_tat)),
        };
    }
    // Admitted once `now` reaches `new_tat - τ`: exactly then and not 1 µs
    // before, as long as nothing else is admitted meanwhile.
    GcraOutcome {
        allowed: false,
        remaining: room(base),
        retry_after_us: (increment <= tau).then(|| to_u64(new_tat - tau - now)),
        reset_after_us: to_u64(base - now),
        write: None,
    }
}

impl GcraOutcome {
    /// Our reply shape, in ms, every wait rounded up.
    pub fn to_decision(&self) -> Decision {
        Decision {
            allowed: self.allowed,
            remaining: self.remaining,
            retry_after_ms: self.retry_after_us.map_or(u64::MAX, |us| us.div_ceil(1000)),
            reset_after_ms: self.reset_after_us.div_ceil(1000),
            blocked: false,
        }
    }

    /// redis-cell's reply shape for a limiter of `limit` (`max_burst + 1`).
    pub fn to_cell(&self, limit: u64) -> CellReply {
        CellReply::new(&self.to_decision(), limit)
    }
}

/// `CL.THROTTLE`'s reply, field order as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellReply {
    /// true when denied (redis-cell's `1`).
    pub limited: bool,
    /// `max_burst + 1`.
    pub limit: u64,
    pub remaining: u64,
    /// `-1` when admitted or when the request can never be admitted;
    /// otherwise the wait in seconds, rounded up (also when admitted in
    /// shadow mode, which is how a client tells that admission apart).
    pub retry_after_s: i64,
    /// Seconds until idle, rounded up.
    pub reset_after_s: i64,
}

impl CellReply {
    /// redis-cell's shape of a throttle decision for a limiter of `limit`
    /// (`max_burst + 1`). Seconds are the ms rounded up, which equals the
    /// µs rounded up to seconds; a wait of `u64::MAX` ms (never) is `-1`.
    pub fn new(d: &Decision, limit: u64) -> CellReply {
        // An enforced admission waits 0; a shadow one keeps the denial's wait.
        let retry_after_s = if (d.allowed && d.retry_after_ms == 0) || d.retry_after_ms == u64::MAX
        {
            -1
        } else {
            ms_to_seconds_up(d.retry_after_ms)
        };
        CellReply {
            limited: !d.allowed,
            limit,
            remaining: d.remaining,
            retry_after_s,
            reset_after_s: ms_to_seconds_up(d.reset_after_ms),
        }
    }

    pub fn to_reply(self) -> [i64; 5] {
        [
            i64::from(self.limited),
            to_i64(i128::from(self.limit)),
            to_i64(i128::from(self.remaining)),
            self.retry_after_s,
            self.reset_after_s,
        ]
    }
}

/// Reads a stored TAT: µs as rl writes it, or ns as redis-cell writes it (so
/// keys survive a switch from redis-cell). Anything else is another key's
/// string and is refused rather than misread.
pub fn stored_tat(bytes: &[u8]) -> Result<i64, RlError> {
    // The error made only when it is the answer: dropping an unused one
    // costs every read of a TAT.
    match unsigned(bytes) {
        Some(ns) if ns >= NANOS_FROM => Ok(ns.div_ceil(1000) as i64),
        Some(us) if us > MIN_STORED_TAT_US => Ok(us as i64),
        _ => Err(RlError::ForeignString {
            expected: STATE_NAME,
        }),
    }
}

/// Reads a stored TAT and its key's expiry. rl (and redis-cell) write
/// every TAT with a TTL, so a string without one is not a throttle state:
/// refused, never overwritten.
pub fn stored_state(bytes: &[u8], expire_at_ms: Option<i64>) -> Result<i64, RlError> {
    with_ttl(stored_tat(bytes), expire_at_ms, STATE_NAME)
}

/// [`stored_state`] of a key that may be blocked: the TAT and the end of
/// its block, if it has one (its own expiry is the TAT's, rounded up).
pub fn stored_with_block(
    bytes: &[u8],
    expire_at_ms: Option<i64>,
) -> Result<(i64, Option<i64>), RlError> {
    let (tat, _, blocked_until) = read_state(bytes, expire_at_ms, STATE_NAME, stored_tat)?;
    Ok((tat, blocked_until))
}

/// Rounds a ms wait up to whole seconds (redis-cell's reply unit).
fn ms_to_seconds_up(ms: u64) -> i64 {
    to_i64(i128::from(ms.div_ceil(1_000)))
}

fn ceil_div(x: i128, d: i128) -> i128 {
    -((-x).div_euclid(d))
}

fn to_u64(v: i128) -> u64 {
    u64::try_from(v.max(0)).unwrap_or(u64::MAX)
}

fn to_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: i64 = 1_000;
    const S: i64 = 1_000_000;

    fn rate(max_burst: u64, count: u64, period_us: u64) -> Gcra {
        Gcra::new(max_burst, count, period_us).unwrap()
    }

    /// Runs `decide` and keeps the written TAT, as the host does.
    fn call(tat: &mut Option<i64>, r: &Gcra, q: u64, now: i64) -> GcraOutcome {
        let out = decide(r, *tat, q, now);
        if let Some(w) = out.write {
            *tat = Some(w.tat_us);
        }
        out
    }

    #[test]
    fn rates_round_the_interval_up_and_bound_the_burst() {
        // (max_burst, count, period µs) -> (T, τ, limit)
        type Row = (u64, u64, u64, Result<(i64, i64, u64), RlError>);
        let cases: &[Row] = &[
            (4, 5, 1_000_000, Ok((200_000, 1_000_000, 5))),
            (0, 3, 1_000_000, Ok((333_334, 333_334, 1))),
            (9, 100_000, 1_000_000, Ok((10, 100, 10))),
            (0, 1_000_000, 1_000_000, Ok((1, 1, 1))),
            (0, 1_000_001, 1_000_000, Err(RlError::RateTooHigh)),
            (
                999_999_999,
                1,
                1_000_000,
                Ok((1_000_000, 1_000_000_000_000_000, 1_000_000_000)),
            ),
            (1_000_000_000, 1, 1_000_000, Err(RlError::BurstTooLong)),
            (u64::MAX, 1, 1, Err(RlError::BurstTooLong)),
        ];
        for &(max_burst, count, period, ref want) in cases {
            let got = Gcra::new(max_burst, count, period)
                .map(|g| (g.emission_us, g.tolerance_us, g.limit));
            assert_eq!(&got, want, "{max_burst} {count} {period}");
        }
    }

    #[test]
    fn table_of_requests_with_explicit_times() {
        // max_burst 2, 1 per 100 ms: 3 at once, then one each 100 ms.
        // Rows: (now µs, quantity, [allowed, remaining, retry ms, reset ms]).
        let r = rate(2, 1, 100 * MS as u64);
        let t0 = 5 * S;
        let rows: &[(i64, u64, [i64; 4])] = &[
            (t0, 1, [1, 2, 0, 100]),
            (t0, 1, [1, 1, 0, 200]),
            (t0, 1, [1, 0, 0, 300]),
            (t0, 1, [0, 0, 100, 300]),
            // 99.999 ms later: still 1 µs short, the wait rounds up to 1 ms
            (t0 + 99_999, 1, [0, 0, 1, 201]),
            (t0 + 100 * MS, 1, [1, 0, 0, 300]),
            // quantity 0 peeks: admitted, nothing written
            (t0 + 150 * MS, 0, [1, 0, 0, 250]),
            // quantity 2 needs two intervals free: at t0 + 300 ms
            (t0 + 250 * MS, 2, [0, 1, 50, 150]),
            (t0 + 300 * MS, 2, [1, 0, 0, 300]),
            // long idle: the stale TAT means nothing
            (t0 + 10 * S, 3, [1, 0, 0, 300]),
        ];
        let mut tat = None;
        for &(now, q, want) in rows {
            let before = tat;
            let out = call(&mut tat, &r, q, now);
            assert_eq!(out.to_decision().to_reply(), want, "at {now} q {q}");
            if !out.allowed || q == 0 {
                assert_eq!(out.write, None);
                assert_eq!(tat, before);
            }
        }
    }

    #[test]
    fn expiry_is_the_tat_rounded_up_to_a_millisecond() {
        let r = rate(0, 3, 1_000_000); // T = 333_334 µs
        let out = decide(&r, None, 1, 2_000_000);
        assert_eq!(
            out.write,
            Some(TatWrite {
                tat_us: 2_333_334,
                expire_at_ms: 2_334,
            })
        );
    }

    #[test]
    fn hundred_thousand_per_second_in_microseconds() {
        // 100_000 per 1000 ms, no burst: one every 10 µs, exactly.
        let r = rate(0, 100_000, 1_000_000);
        let t0 = 7 * S;
        let mut tat = None;
        let mut admitted = 0;
        for now in (t0..t0 + S).step_by(5) {
            if call(&mut tat, &r, 1, now).allowed {
                admitted += 1;
            }
        }
        assert_eq!(admitted, 100_000);
        // Same µs twice: the second waits exactly 10 µs (rounded up: 1 ms).
        let mut tat = None;
        assert!(call(&mut tat, &r, 1, t0).allowed);
        let denied = call(&mut tat, &r, 1, t0);
        assert_eq!(denied.retry_after_us, Some(10));
        assert_eq!(denied.to_decision().retry_after_ms, 1);
        assert!(!call(&mut tat, &r, 1, t0 + 9).allowed);
        assert!(call(&mut tat, &r, 1, t0 + 10).allowed);
    }

    #[test]
    fn a_clock_stepping_back_never_over_admits() {
        let r = rate(1, 1, 1_000_000);
        let mut tat = None;
        assert!(call(&mut tat, &r, 1, 10 * S).allowed);
        assert!(call(&mut tat, &r, 1, 10 * S).allowed);
        // The clock jumps back 5 s: the TAT is 7 s ahead, far beyond τ = 2 s.
        let back = call(&mut tat, &r, 1, 5 * S);
        assert!(!back.allowed);
        assert_eq!(back.remaining, 0);
        assert_eq!(back.retry_after_us, Some(6 * S as u64));
    }

    #[test]
    fn a_tat_without_ttl_is_refused() {
        let foreign = Err(RlError::ForeignString {
            expected: STATE_NAME,
        });
        assert_eq!(stored_state(b"1750000000123456", None), foreign);
        assert_eq!(
            stored_state(b"1750000000123456", Some(1)),
            Ok(1_750_000_000_123_456)
        );
    }

    #[test]
    fn stored_states_are_read_or_refused() {
        let foreign = || {
            Err(RlError::ForeignString {
                expected: STATE_NAME,
            })
        };
        let cases: &[(&[u8], Result<i64, RlError>)] = &[
            (b"1750000000123456", Ok(1_750_000_000_123_456)),
            // redis-cell's nanoseconds, rounded up to µs
            (b"1750000000123456001", Ok(1_750_000_000_123_457)),
            (b"1000000000000001", Ok(1_000_000_000_000_001)),
            // the largest RL.FIXED count
            (b"1000000000000000", foreign()),
            (b"999999999999999", foreign()),
            (b"5", foreign()),
            (b"-1750000000123456", foreign()),
            (b"abc", foreign()),
            (b"", foreign()),
        ];
        for (bytes, want) in cases {
            assert_eq!(&stored_tat(bytes), want, "{bytes:?}");
        }
    }

    /// redis-cell's own documented sequence (its `it_rate_limits` table:
    /// max_burst 4, 1 per second), replayed with explicit times. Expected
    /// replies are redis-cell's: its durations rounded up to seconds.
    #[test]
    fn cell_replies_follow_redis_cell_semantics() {
        let r = rate(4, 1, S as u64);
        let t0 = 1_700_000_000 * S;
        // (offset ms, quantity, [limited, limit, remaining, retry_s, reset_s])
        let rows: &[(i64, u64, [i64; 5])] = &[
            // a request above the limit can never pass: limited, retry -1
            (0, 6, [1, 5, 5, -1, 0]),
            (0, 1, [0, 5, 4, -1, 1]),
            (0, 1, [0, 5, 3, -1, 2]),
            (0, 1, [0, 5, 2, -1, 3]),
            (0, 1, [0, 5, 1, -1, 4]),
            (0, 1, [0, 5, 0, -1, 5]),
            (0, 1, [1, 5, 0, 1, 5]),
            (3_000, 1, [0, 5, 2, -1, 3]),
            (3_100, 1, [0, 5, 1, -1, 4]), // 3.9 s rounds up
            (4_000, 1, [0, 5, 1, -1, 4]),
            (8_000, 1, [0, 5, 4, -1, 1]),
            (9_500, 1, [0, 5, 4, -1, 1]),
            // quantity 0 peeks
            (9_500, 0, [0, 5, 4, -1, 1]),
            (9_500, 2, [0, 5, 2, -1, 3]),
            (9_500, 5, [1, 5, 2, 3, 3]),
        ];
        let mut tat = None;
        for &(offset, q, want) in rows {
            let out = call(&mut tat, &r, q, t0 + offset * MS);
            assert_eq!(out.to_cell(r.limit).to_reply(), want, "+{offset} ms q {q}");
        }
        // The README example: 30 per 60 s, burst 15.
        let r = rate(15, 30, 60 * S as u64);
        let out = decide(&r, None, 1, t0);
        assert_eq!(out.to_cell(r.limit).to_reply(), [0, 16, 15, -1, 2]);
    }

    /// CL.THROTTLE takes any i64 quantity: one above the burst is limited,
    /// retry -1, nothing used, nothing written, at the slowest rate too.
    #[test]
    fn a_quantity_up_to_i64_max_is_limited_without_overflow() {
        for r in [
            rate(5, 1, S as u64),
            Gcra::new(0, 1, MAX_TOLERANCE_US).unwrap(),
        ] {
            for tat in [None, Some(1_800_000_000_000_000)] {
                let out = decide(&r, tat, i64::MAX as u64, 1_800_000_000_000_000);
                assert!(!out.allowed);
                assert_eq!(out.retry_after_us, None);
                assert_eq!(out.write, None);
                assert_eq!(out.to_cell(r.limit).to_reply()[3], -1);
            }
        }
        let out = decide(&rate(5, 1, S as u64), None, i64::MAX as u64, 0);
        assert_eq!(out.to_cell(6).to_reply(), [1, 6, 6, -1, 0]);
    }

    #[test]
    fn cell_waits_round_up_any_fraction() {
        let r = rate(0, 3, S as u64); // T = 333_334 µs
        let mut tat = None;
        call(&mut tat, &r, 1, S);
        let out = call(&mut tat, &r, 1, S + 333_333);
        assert_eq!(out.retry_after_us, Some(1));
        assert_eq!(out.to_cell(1).to_reply(), [1, 1, 0, 1, 1]);
    }

    proptest! {
        /// The i64 decision, whenever it answers, is the i128 one: over
        /// realistic clocks and TATs and over any values at all.
        #[test]
        fn the_narrow_decision_is_the_wide_one(
            max_burst in prop_oneof![0u64..20, 0u64..1_000_000_000_000_000],
            count in prop_oneof![1u64..1_000, 1u64..u64::MAX],
            period_us in prop_oneof![1_000u64..100_000_000, 1u64..u64::MAX],
            tat in prop_oneof![
                Just(None),
                (1_600_000_000_000_000i64..1_900_000_000_000_000).prop_map(Some),
                any::<i64>().prop_map(Some),
            ],
            quantity in prop_oneof![0u64..20, any::<u64>()],
            now in prop_oneof![1_600_000_000_000_000i64..1_900_000_000_000_000, any::<i64>()],
        ) {
            let Ok(r) = Gcra::new(max_burst, count, period_us) else {
                return Ok(());
            };
            if let Some(narrow) = decide_narrow(&r, tat, quantity, now) {
                prop_assert_eq!(narrow, decide_wide(&r, tat, quantity, now));
            }
        }

        /// Over every interval [t1, t2] between admissions, the admitted
        /// quantity is at most `max_burst + 1 + (t2 - t1) / T`, hence never
        /// above the declared rate plus the burst; a denial's wait is exact
        /// to the µs and, rounded to ms, still enough.
        #[test]
        fn never_admits_more_than_burst_plus_rate(
            max_burst in 0u64..6,
            count in 1u64..20,
            period_ms in 1u64..50,
            steps in proptest::collection::vec((0i64..20_000, 0u64..8), 1..150),
        ) {
            let period_us = period_ms * 1000;
            let r = rate(max_burst, count, period_us);
            let mut tat = None;
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            let mut now = 1_000 * S;
            for (dt, q) in steps {
                now += dt;
                let q = q.min(r.limit);
                let before = tat;
                let out = call(&mut tat, &r, q, now);
                if out.allowed {
                    if q > 0 {
                        admitted.push((now, q));
                    }
                } else {
                    prop_assert_eq!(tat, before);
                    let wait = out.retry_after_us.unwrap() as i64;
                    prop_assert!(wait >= 1);
                    prop_assert!(decide(&r, before, q, now + wait).allowed);
                    prop_assert!(!decide(&r, before, q, now + wait - 1).allowed);
                    let wait_ms = out.to_decision().retry_after_ms as i64;
                    prop_assert!(decide(&r, before, q, now + wait_ms * MS).allowed);
                    prop_assert!(!decide(&r, before, q, now + (wait_ms - 1) * MS).allowed);
                }
            }
            for (i, &(t1, _)) in admitted.iter().enumerate() {
                let mut sum = 0u64;
                for &(t2, q) in &admitted[i..] {
                    sum += q;
                    let elapsed = (t2 - t1) as u64;
                    prop_assert!(sum <= r.limit + elapsed / r.emission_us as u64);
                    // and so never above the declared count per period
                    prop_assert!(sum <= r.limit + elapsed * count / period_us);
                }
            }
        }
    }
}

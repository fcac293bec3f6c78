//! `RL.CHARGE <limiter> key <parameters> COST n`: records `n` units on the
//! named limiter whether or not they fit (a settlement after the fact: an
//! LLM call reserved at an estimate and charged its real token count). The
//! key may go past its limit; later requests are then denied until the
//! window (the schedule, for THROTTLE) has room again. The parameters are
//! parsed by the limiter's own parser (as `RL.PEEK`'s and `RL.REFUND`'s),
//! without the limiter's own units (`COST`, THROTTLE's `quantity`): the
//! units are the charge's `COST`. Each limiter's folder implements the
//! charge over its own storage kind (`slide/charge.rs`, ...), as a
//! [`Limiter`](crate::core::limiter::Limiter) whose answer is [`Charged`]: the
//! units recorded and what `RL.PEEK` answers for one unit right after,
//! decided before anything is written.

use crate::core::args::positive;
use crate::core::dispatch::{
    parse_named, refuse_block, Algorithm, LimitRequest, NAMED_LIMITER_KEY,
};
use crate::core::error::{token_text, RlError};
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Where `RL.CHARGE`'s key is: `RL.CHARGE <algorithm> key ...`.
pub const CHARGE_KEY: usize = NAMED_LIMITER_KEY;

/// `RL.CHARGE`'s name and arguments: those of every command that names a
/// limiter, and its own `COST`, which it needs.
#[rustfmt::skip]
pub const CHARGE: Syntax = Syntax {
    command: c"rl.charge",
    args: &[
        ArgSpec { name: c"limiter", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"parameter", kind: ArgKind::Strings, token: None, optional: true },
        ArgSpec { name: c"cost", kind: ArgKind::Integer, token: Some(c"COST"), optional: false },
    ],
};

/// The most one charge records: what one call of the limiter may ask for.
/// SLIDE stores a member per unit, so it keeps its cap of 100 per call;
/// the others record any count in constant work.
pub fn max_charge(algorithm: Algorithm) -> u64 {
    match algorithm {
        Algorithm::Slide => crate::core::slide::request::MAX_COST,
        Algorithm::Buckets => crate::core::buckets::request::MAX_LIMIT,
        Algorithm::Throttle => crate::core::throttle::request::MAX_UNITS,
        Algorithm::Fixed | Algorithm::Acquire => crate::core::fixed::request::MAX_LIMIT,
    }
}

/// How the limiter is spelled after `RL.CHARGE`: its own parameters
/// without its units, then `COST cost`.
fn usage(algorithm: Algorithm) -> String {
    let line = algorithm.syntax().synopsis();
    let line = line.strip_prefix("RL.").unwrap_or(&line);
    let line = line
        .replace(" [COST cost]", "")
        .replace(" [quantity]", "")
        .replace(" [UPTO]", "")
        .replace(" [BLOCK ms]", "")
        .replace(crate::core::options::wait::USAGE, "");
    format!("{line} COST cost")
}

/// `RL.CHARGE <algorithm> key <parameters> COST n`: the request whose
/// units (`COST`, THROTTLE's `quantity`) are `n`. `COST` stands anywhere
/// after the key, once; `n` may pass the limiter's limit (up to
/// [`max_charge`]).
pub fn parse_charge(args: &[&[u8]]) -> Result<LimitRequest, RlError> {
    CHARGE.check_count(args.len())?;
    let algorithm = Algorithm::from_token(args[1])
        .ok_or_else(|| RlError::UnknownLimiter(token_text(args[1])))?;
    // A lease holds a slot, not units: nothing to charge.
    if algorithm == Algorithm::Acquire {
        return Err(RlError::NotChargeable { limiter: "ACQUIRE" });
    }
    let is_cost = |a: &&[u8]| a.eq_ignore_ascii_case(b"COST");
    let mut at = None;
    for (i, a) in args.iter().enumerate().skip(CHARGE_KEY + 1) {
        if is_cost(a) {
            if at.is_some() {
                return Err(RlError::DuplicateOption { option: "COST" });
            }
            at = Some(i);
        }
    }
    let at = at.ok_or(RlError::ChargeNeedsCost)?;
    let value = args
        .get(at + 1)
        .ok_or(RlError::MissingValue { option: "COST" })?;
    let units = positive(value, "COST", max_charge(algorithm))?;
    let line: Vec<&[u8]> = args[..at].iter().chain(&args[at + 2..]).copied().collect();
    // Before THROTTLE's quantity check, which would count `BLOCK ms` as
    // parameters and answer with the usage.
    refuse_block(&line, &CHARGE)?;
    // THROTTLE's own units (`quantity`) are the charge's COST: a word
    // after the period is a quantity too many, unless it is an option the
    // limiter's parser refuses by name (`WAIT`, `UPTO`), as it does on
    // every other limiter's charge line.
    let named = |a: &&[u8]| {
        a.eq_ignore_ascii_case(crate::core::options::wait::TOKEN.as_bytes())
            || a.eq_ignore_ascii_case(b"UPTO")
    };
    let takes_quantity =
        algorithm == Algorithm::Throttle && line.len() > 6 && !line.get(6).is_some_and(named);
    let arity = || RlError::LimiterArity {
        command: CHARGE.name(),
        usage: usage(algorithm),
    };
    if takes_quantity {
        return Err(arity());
    }
    let req = parse_named(&line, &CHARGE).map_err(|e| match e {
        // No parameters at all: the line is short of the charge's own
        // minimum, which the usage explains as well.
        RlError::LimiterArity { .. } | RlError::WrongArity { .. } => arity(),
        e => e,
    })?;
    Ok(match req {
        LimitRequest::Slide(r) => {
            LimitRequest::Slide(crate::core::slide::request::SlideRequest { cost: units, ..r })
        }
        LimitRequest::Buckets(r) => {
            LimitRequest::Buckets(crate::core::buckets::request::BucketsRequest {
                cost: units,
                ..r
            })
        }
        LimitRequest::Throttle(r) => {
            LimitRequest::Throttle(crate::core::throttle::request::ThrottleRequest {
                quantity: units,
                ..r
            })
        }
        LimitRequest::Fixed(r) => {
            LimitRequest::Fixed(crate::core::fixed::request::FixedRequest { cost: units, ..r })
        }
        LimitRequest::Acquire(_) => return Err(RlError::NotChargeable { limiter: "ACQUIRE" }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decision::Decision;
    use crate::core::dispatch::test_lines::{buckets, fixed, slide, split, throttle};
    use crate::core::limiter::Charged;

    #[test]
    fn charge_lines_use_each_limiters_parser_and_take_cost_past_the_limit() {
        let throttle = throttle(70);
        let buckets = buckets(2_000);
        let cases = [
            ("RL.CHARGE SLIDE k 10 1000 COST 3", slide(10, 1000, 3)),
            ("RL.CHARGE slide k 10 1000 cost 100", slide(10, 1000, 100)),
            ("RL.CHARGE SLIDE k COST 30 10 1000", slide(10, 1000, 30)),
            (
                "RL.CHARGE BUCKETS k 10 1000 COST 2000 PRECISION 100",
                buckets,
            ),
            ("RL.CHARGE THROTTLE k 4 5 1000 COST 70", throttle),
            (
                "RL.CHARGE Fixed k 7 500 COST 1000000000000000",
                fixed(7, 500, 1_000_000_000_000_000),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_charge(&split(line)), Ok(want), "{line}");
        }
    }

    #[test]
    fn bad_charge_lines_name_the_problem() {
        let arity = |usage: &str| RlError::LimiterArity {
            command: "rl.charge",
            usage: usage.into(),
        };
        let cases = [
            (
                "RL.CHARGE SLIDE k",
                RlError::WrongArity {
                    command: "rl.charge",
                },
            ),
            ("RL.CHARGE SLIDE k 10 1000", RlError::ChargeNeedsCost),
            (
                "RL.CHARGE SLIDE k 10 1000 COST",
                RlError::MissingValue { option: "COST" },
            ),
            (
                "RL.CHARGE SLIDE k 10 1000 COST 1 COST 1",
                RlError::DuplicateOption { option: "COST" },
            ),
            (
                "RL.CHARGE SLIDE k 10 1000 COST 101",
                RlError::OutOfRange {
                    arg: "COST",
                    max: 100,
                },
            ),
            (
                "RL.CHARGE FIXED k 10 1000 COST 0",
                RlError::OutOfRange {
                    arg: "COST",
                    max: 1_000_000_000_000_000,
                },
            ),
            (
                "RL.CHARGE GCRA k 1 2 COST 3",
                RlError::UnknownLimiter("GCRA".into()),
            ),
            (
                "RL.CHARGE ACQUIRE k 3 1000 COST 1",
                RlError::NotChargeable { limiter: "ACQUIRE" },
            ),
            (
                "RL.CHARGE FIXED k 10 COST 5",
                arity("FIXED key limit window COST cost"),
            ),
            (
                "RL.CHARGE THROTTLE k 4 5 1000 2 COST 5",
                arity("THROTTLE key max_burst count period COST cost"),
            ),
            // WAIT and UPTO after THROTTLE's period are named, as on
            // every other limiter's charge line, not a quantity too many.
            (
                "RL.CHARGE THROTTLE k 4 5 1000 COST 5 WAIT 10",
                RlError::UnknownOption("WAIT".into()),
            ),
            (
                "RL.CHARGE THROTTLE k 4 5 1000 wait 10 COST 5",
                RlError::UnknownOption("wait".into()),
            ),
            (
                "RL.CHARGE SLIDE k 4 1000 COST 5 WAIT 10",
                RlError::UnknownOption("WAIT".into()),
            ),
            (
                "RL.CHARGE THROTTLE k 4 5 1000 COST 5 UPTO",
                RlError::UptoOnlyInLimiters {
                    command: "rl.charge".into(),
                },
            ),
            (
                "RL.CHARGE THROTTLE k 4 5 1000 COST 5 FOO",
                arity("THROTTLE key max_burst count period COST cost"),
            ),
            // A charge never denies: BLOCK is refused by name, before
            // THROTTLE's quantity check and whatever its value.
            (
                "RL.CHARGE THROTTLE k 4 5 1000 BLOCK 100 COST 5",
                RlError::BlockOnlyInLimiters {
                    command: "rl.charge".into(),
                },
            ),
            (
                "RL.CHARGE FIXED k 10 1000 COST 5 block x",
                RlError::BlockOnlyInLimiters {
                    command: "rl.charge".into(),
                },
            ),
            (
                "RL.CHARGE BUCKETS k 10 1000 PRECISION 1001 COST 5",
                RlError::PrecisionAboveWindow,
            ),
            (
                "RL.CHARGE SLIDE k 0 1000 COST 5",
                RlError::OutOfRange {
                    arg: "limit",
                    max: 1_000_000,
                },
            ),
            (
                "RL.CHARGE SLIDE k 10 1000 COST 5 OLDEST",
                RlError::OldestOnlyInPeek {
                    command: "rl.charge".into(),
                },
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_charge(&split(line)), Err(want), "{line}");
        }
    }

    #[test]
    fn the_reply_puts_the_units_first() {
        let c = Charged {
            charged: 30,
            after: Decision {
                allowed: false,
                remaining: 0,
                retry_after_ms: 700,
                reset_after_ms: 900,
                blocked: false,
            },
        };
        assert_eq!(c.to_reply(), [30, 0, 700, 900]);
    }
}

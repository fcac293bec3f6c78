//! `RL.REFUND <limiter> key <parameters>`: gives back units a limiter
//! admitted and still counts. The request is parsed by the named limiter's
//! own parser (as `RL.PEEK`'s); the units are its `COST` (`THROTTLE`: its
//! `quantity`). Each limiter's folder implements the refund over its own
//! storage kind (`slide/refund.rs`, `buckets/refund.rs`, ...), as a
//! [`Limiter`](crate::core::limiter::Limiter) whose answer is the units given back.

use crate::core::dispatch::{
    parse_named, refuse_block, Algorithm, LimitRequest, NAMED_LIMITER_ARGS, NAMED_LIMITER_KEY,
};
use crate::core::error::RlError;
use crate::core::syntax::Syntax;

/// Where `RL.REFUND`'s key is: `RL.REFUND <algorithm> key ...`.
pub const REFUND_KEY: usize = NAMED_LIMITER_KEY;

/// `RL.REFUND`'s name and arguments.
pub const REFUND: Syntax = Syntax {
    command: c"rl.refund",
    args: NAMED_LIMITER_ARGS,
};

/// `RL.REFUND <algorithm> key <parameters>`: the request whose units to
/// give back.
pub fn parse_refund(args: &[&[u8]]) -> Result<LimitRequest, RlError> {
    REFUND.check_count(args.len())?;
    // A lease is given back whole, by its id: RL.RELEASE. Refused before
    // ACQUIRE's own parser runs, so no error advertises a form (its usage,
    // a bad argument) that would be refused anyway.
    if Algorithm::from_token(args[1]) == Some(Algorithm::Acquire) {
        return Err(RlError::NotRefundable { limiter: "ACQUIRE" });
    }
    refuse_block(args, &REFUND)?;
    // The usage offers the limiter's parameters without the BLOCK it refuses.
    parse_named(args, &REFUND).map_err(|e| match e {
        RlError::LimiterArity { command, usage } => RlError::LimiterArity {
            command,
            usage: usage.replace(" [BLOCK ms]", ""),
        },
        e => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decision::Decision;
    use crate::core::dispatch::test_lines::{buckets, fixed, slide, split, throttle};
    use crate::core::limiter::Refunded;

    #[test]
    fn refund_lines_use_each_limiters_parser() {
        let throttle = throttle(0);
        let buckets = buckets(2);
        let cases = [
            ("RL.REFUND SLIDE k 10 1000", slide(10, 1000, 1)),
            ("RL.REFUND slide k 10 1000 COST 3", slide(10, 1000, 3)),
            ("RL.REFUND BUCKETS k 10 1000 PRECISION 100 COST 2", buckets),
            ("RL.REFUND THROTTLE k 4 5 1000 0", throttle),
            ("RL.REFUND Fixed k 7 500", fixed(7, 500, 1)),
        ];
        for (line, want) in cases {
            assert_eq!(parse_refund(&split(line)), Ok(want), "{line}");
        }
    }

    #[test]
    fn bad_refund_lines_name_the_problem() {
        let cases = [
            (
                "RL.REFUND SLIDE",
                RlError::WrongArity {
                    command: "rl.refund",
                },
            ),
            (
                "RL.REFUND GCRA k 1 2 3",
                RlError::UnknownLimiter("GCRA".into()),
            ),
            (
                "RL.REFUND FIXED k 10",
                RlError::LimiterArity {
                    command: "rl.refund",
                    usage: "FIXED key limit window [COST cost]".into(),
                },
            ),
            // A refund never denies: BLOCK is refused by name.
            (
                "RL.REFUND FIXED k 10 1000 BLOCK 100",
                RlError::BlockOnlyInLimiters {
                    command: "rl.refund".into(),
                },
            ),
            ("RL.REFUND SLIDE k 10 1000 COST 11", RlError::CostAboveLimit),
            (
                "RL.REFUND ACQUIRE k 3 1000",
                RlError::NotRefundable { limiter: "ACQUIRE" },
            ),
            // Whatever follows: not ACQUIRE's usage, nor its errors.
            (
                "RL.REFUND acquire k",
                RlError::NotRefundable { limiter: "ACQUIRE" },
            ),
            (
                "RL.REFUND ACQUIRE k 0 1000 ID",
                RlError::NotRefundable { limiter: "ACQUIRE" },
            ),
            (
                "RL.REFUND ACQUIRE",
                RlError::WrongArity {
                    command: "rl.refund",
                },
            ),
            (
                "RL.REFUND THROTTLE k 1 1 1000 3",
                RlError::QuantityAboveBurst,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_refund(&split(line)), Err(want), "{line}");
        }
    }

    #[test]
    fn the_reply_puts_the_units_first() {
        let r = Refunded {
            refunded: 3,
            after: Decision {
                allowed: true,
                remaining: 4,
                retry_after_ms: 0,
                reset_after_ms: 900,
                blocked: false,
            },
        };
        assert_eq!(r.to_reply(), [3, 4, 0, 900]);
    }
}

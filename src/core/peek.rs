//! `RL.PEEK <limiter> key <parameters>`: the request it would check, parsed
//! by that limiter's own parser.

use super::any::{parse_named, LimitRequest, NAMED_LIMITER_ARGS, NAMED_LIMITER_KEY};
use super::error::RlError;
use super::syntax::Syntax;

/// Where `RL.PEEK`'s key is: `RL.PEEK <algorithm> key ...`.
pub const PEEK_KEY: usize = NAMED_LIMITER_KEY;

/// `RL.PEEK`'s name and arguments.
pub const PEEK: Syntax = Syntax {
    command: c"rl.peek",
    args: NAMED_LIMITER_ARGS,
};

/// `RL.PEEK <algorithm> key <parameters>`: the request it would check.
pub fn parse_peek(args: &[&[u8]]) -> Result<LimitRequest, RlError> {
    parse_named(args, &PEEK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::any::test_lines::{fixed, slide, split};
    use crate::core::buckets::request::BucketsRequest;
    use crate::core::throttle::gcra::Gcra;
    use crate::core::throttle::request::ThrottleRequest;

    #[test]
    fn peek_lines_use_each_limiters_parser() {
        let throttle = LimitRequest::Throttle(ThrottleRequest {
            rate: Gcra::new(4, 5, 1_000_000).unwrap(),
            quantity: 2,
        });
        let buckets = LimitRequest::Buckets(BucketsRequest {
            limit: 10,
            window_ms: 1000,
            precision: Some(100),
            cost: 2,
        });
        let cases = [
            ("RL.PEEK SLIDE k 10 1000", slide(10, 1000, 1)),
            ("RL.PEEK slide k 10 1000 COST 3", slide(10, 1000, 3)),
            ("RL.PEEK BUCKETS k 10 1000 PRECISION 100 COST 2", buckets),
            ("RL.PEEK THROTTLE k 4 5 1000 2", throttle),
            ("RL.PEEK Fixed k 7 500", fixed(7, 500, 1)),
            (
                "RL.PEEK ACQUIRE k 3 30000",
                LimitRequest::Acquire(crate::core::lease::request::AcquireRequest {
                    limit: 3,
                    lease_ms: 30_000,
                    id: None,
                }),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_peek(&split(line)), Ok(want), "{line}");
        }
    }

    #[test]
    fn bad_peek_lines_name_the_problem() {
        let cases = [
            ("RL.PEEK SLIDE", RlError::WrongArity { command: "rl.peek" }),
            (
                "RL.PEEK GCRA k 1 2 3",
                RlError::UnknownLimiter("GCRA".into()),
            ),
            (
                "RL.PEEK SLIDE k 10",
                RlError::LimiterArity {
                    command: "rl.peek",
                    usage: "SLIDE key limit window [COST cost]".into(),
                },
            ),
            ("RL.PEEK FIXED k 10 1000 COST 11", RlError::CostAboveLimit),
            ("RL.PEEK THROTTLE k 1 1 1000 3", RlError::QuantityAboveBurst),
        ];
        for (line, want) in cases {
            assert_eq!(parse_peek(&split(line)), Err(want), "{line}");
        }
    }
}

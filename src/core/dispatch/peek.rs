//! `RL.PEEK <limiter> key <parameters> [OLDEST]`: the request it would
//! check, parsed by that limiter's own parser, and whether the reply tells
//! when the oldest counted unit leaves the window.

use crate::core::dispatch::{parse_named, Algorithm, LimitRequest, NAMED_LIMITER_KEY};
use crate::core::error::{token_text, RlError};
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Where `RL.PEEK`'s key is: `RL.PEEK <algorithm> key ...`.
pub const PEEK_KEY: usize = NAMED_LIMITER_KEY;

/// `RL.PEEK`'s name and arguments: those of every command that names a
/// limiter (`any::NAMED_LIMITER_ARGS`), and its own `OLDEST`.
#[rustfmt::skip]
pub const PEEK: Syntax = Syntax {
    command: c"rl.peek",
    args: &[
        ArgSpec { name: c"limiter", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"parameter", kind: ArgKind::Strings, token: None, optional: true },
        ArgSpec { name: c"oldest", kind: ArgKind::Flag, token: Some(c"OLDEST"), optional: true },
    ],
};

/// What one `RL.PEEK` call asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeekRequest {
    pub limit: LimitRequest,
    /// `OLDEST`: the reply gains the wait until the oldest unit the window
    /// counts leaves it (SLIDE and BUCKETS only).
    pub oldest: bool,
}

/// `RL.PEEK <algorithm> key <parameters> [OLDEST]`: the request it would
/// check. `OLDEST` may stand anywhere after the key (no parameter of SLIDE
/// or BUCKETS can be spelled so); it is taken off the line before the
/// limiter's parser runs.
pub fn parse_peek(args: &[&[u8]]) -> Result<PeekRequest, RlError> {
    let is_oldest = |a: &&&[u8]| a.eq_ignore_ascii_case(b"OLDEST");
    let flags = args.iter().skip(PEEK_KEY + 1).filter(is_oldest).count();
    if flags == 0 {
        return Ok(PeekRequest {
            limit: parse_named(args, &PEEK)?,
            oldest: false,
        });
    }
    let algorithm = Algorithm::from_token(args[1])
        .ok_or_else(|| RlError::UnknownLimiter(token_text(args[1])))?;
    if flags > 1 {
        return Err(RlError::DuplicateOption { option: "OLDEST" });
    }
    if !matches!(algorithm, Algorithm::Slide | Algorithm::Buckets) {
        return Err(RlError::OldestOnlyInPeek {
            command: format!("rl.peek {}", algorithm.token()),
        });
    }
    let (head, rest) = args.split_at(PEEK_KEY + 1);
    let line: Vec<&[u8]> = head
        .iter()
        .chain(rest.iter().filter(|a| !is_oldest(a)))
        .copied()
        .collect();
    Ok(PeekRequest {
        limit: parse_named(&line, &PEEK)?,
        oldest: true,
    })
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::dispatch::test_lines::{buckets, fixed, slide, split, throttle};

    #[test]
    fn peek_lines_use_each_limiters_parser() {
        let throttle = throttle(2);
        let buckets = buckets(2);
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
            let got = parse_peek(&split(line)).map(|p| (p.limit, p.oldest));
            assert_eq!(got, Ok((want, false)), "{line}");
        }
    }

    #[test]
    fn oldest_stands_anywhere_after_the_key_of_slide_and_buckets() {
        let buckets = buckets(2);
        let cases = [
            ("RL.PEEK SLIDE k 10 1000 OLDEST", slide(10, 1000, 1)),
            ("RL.PEEK SLIDE k 10 1000 oldest COST 3", slide(10, 1000, 3)),
            (
                "RL.PEEK SLIDE OLDEST 10 1000 COST 3 Oldest",
                slide(10, 1000, 3),
            ),
            (
                "RL.PEEK BUCKETS k 10 1000 PRECISION 100 OLDEST COST 2",
                buckets,
            ),
        ];
        for (line, want) in cases {
            let got = parse_peek(&split(line)).map(|p| (p.limit, p.oldest));
            assert_eq!(got, Ok((want, true)), "{line}");
        }
    }

    #[test]
    fn oldest_elsewhere_is_refused_by_name() {
        let not_of = |command: &str| RlError::OldestOnlyInPeek {
            command: command.into(),
        };
        let cases = [
            (
                "RL.PEEK THROTTLE k 4 5 1000 OLDEST",
                not_of("rl.peek THROTTLE"),
            ),
            ("RL.PEEK fixed k 7 500 OLDEST", not_of("rl.peek FIXED")),
            (
                "RL.PEEK ACQUIRE k 3 30000 OLDEST",
                not_of("rl.peek ACQUIRE"),
            ),
            (
                "RL.PEEK SLIDE k 10 1000 OLDEST OLDEST",
                RlError::DuplicateOption { option: "OLDEST" },
            ),
            (
                "RL.PEEK GCRA k 1 OLDEST",
                RlError::UnknownLimiter("GCRA".into()),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_peek(&split(line)), Err(want), "{line}");
        }
        // The limiters' own commands, and the other commands that name one.
        let slide =
            crate::core::slide::request::SlideRequest::parse(&split("RL.SLIDE k 10 1000 OLDEST"));
        assert_eq!(slide, Err(not_of("rl.slide")));
        let refund =
            crate::core::dispatch::refund::parse_refund(&split("RL.REFUND SLIDE k 10 1000 OLDEST"));
        assert_eq!(refund.map(|_| ()), Err(not_of("rl.refund")));
        assert_eq!(
            not_of("rl.slide").to_string(),
            "ERR OLDEST is an option of RL.PEEK SLIDE and RL.PEEK BUCKETS only, not of 'rl.slide'"
        );
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
                    usage: "SLIDE key limit window [COST cost] [BLOCK ms]".into(),
                },
            ),
            ("RL.PEEK FIXED k 10 1000 COST 11", RlError::CostAboveLimit),
            ("RL.PEEK THROTTLE k 1 1 1000 3", RlError::QuantityAboveBurst),
        ];
        for (line, want) in cases {
            assert_eq!(
                parse_peek(&split(line)).map(|p| p.limit),
                Err(want),
                "{line}"
            );
        }
    }
}

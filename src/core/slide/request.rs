//! `RL.SLIDE key limit window [COST cost] [BLOCK ms]` parsed into a typed request.

#[cfg(test)]
use crate::core::args::MAX_WINDOW_MS;
use crate::core::error::RlError;
use crate::core::options::limit_window_cost;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Largest `COST` of one RL.SLIDE call (and of all SLIDE clauses of one
/// RL.ALL together): each unit is a sorted-set member to insert (about
/// 1.4 µs each in a 10^6-entry skiplist), and this many, with the
/// removals `evict_budget` allows, fit in well under a millisecond. Weighted limits with larger costs
/// belong to RL.BUCKETS, RL.THROTTLE or RL.FIXED, which record any cost in
/// constant work.
pub const MAX_COST: u64 = 100;

/// Largest `limit` the exact log accepts: every admitted unit is a
/// sorted-set member, and members of one millisecond are numbered below
/// this bound (see `slide::log::member`). Larger budgets belong to a
/// bounded-memory limiter.
pub const MAX_LIMIT: u64 = 1_000_000;

/// `RL.SLIDE`'s name and arguments.
#[rustfmt::skip]
pub const SYNTAX: Syntax = Syntax {
    command: c"rl.slide",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"limit", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"window", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"cost", kind: ArgKind::Integer, token: Some(c"COST"), optional: true },
        ArgSpec { name: c"ms", kind: ArgKind::Integer, token: Some(c"BLOCK"), optional: true },
        ArgSpec { name: c"upto", kind: ArgKind::Flag, token: Some(c"UPTO"), optional: true },
        crate::core::options::wait::ARG,
    ],
};

/// What one `RL.SLIDE` call asks for. The key stays with the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlideRequest {
    pub limit: u64,
    pub window_ms: u64,
    pub cost: u64,
    /// `BLOCK ms`: a denial blocks the key for this long.
    pub block_ms: Option<u64>,
}

impl SlideRequest {
    /// `args` is the whole command line, name and key included. Inlined
    /// into RL.SLIDE's plain line (the call it makes most).
    #[inline(always)]
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse_line(args, false)
    }

    /// The line of an `UPTO` request, `UPTO` taken off: its cost may pass
    /// the limit (at most [`MAX_COST`] still).
    pub fn parse_up_to(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse_line(args, true)
    }

    #[inline(always)]
    fn parse_line(args: &[&[u8]], up_to: bool) -> Result<Self, RlError> {
        let (limit, window_ms, cost, block_ms) =
            limit_window_cost(&SYNTAX, args, MAX_LIMIT, MAX_COST, up_to)?;
        Ok(SlideRequest {
            limit,
            window_ms,
            cost,
            block_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::syntax::tests::errors_name_declared_arguments;

    fn parse(line: &str) -> Result<SlideRequest, RlError> {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        SlideRequest::parse(&args)
    }

    #[test]
    fn valid_lines() {
        let cases = [
            ("RL.SLIDE k 10 1000", (10, 1000, 1)),
            ("RL.SLIDE k 10 1000 COST 3", (10, 1000, 3)),
            ("RL.SLIDE k 10 1000 cost 10", (10, 1000, 10)),
            (
                "RL.SLIDE k 1000000 1000000000000",
                (1_000_000, 1_000_000_000_000, 1),
            ),
        ];
        for (line, (limit, window_ms, cost)) in cases {
            assert_eq!(
                parse(line),
                Ok(SlideRequest {
                    limit,
                    window_ms,
                    cost,
                    block_ms: None,
                }),
                "{line}"
            );
        }
    }

    #[test]
    fn invalid_lines_name_the_problem() {
        let range = |arg, max| RlError::OutOfRange { arg, max };
        let cases = [
            (
                "RL.SLIDE k 10",
                RlError::WrongArity {
                    command: "rl.slide",
                },
            ),
            ("RL.SLIDE k 0 1000", range("limit", MAX_LIMIT)),
            ("RL.SLIDE k -5 1000", range("limit", MAX_LIMIT)),
            ("RL.SLIDE k ten 1000", range("limit", MAX_LIMIT)),
            ("RL.SLIDE k 1000001 1000", range("limit", MAX_LIMIT)),
            ("RL.SLIDE k 10 0", range("window", MAX_WINDOW_MS)),
            ("RL.SLIDE k 10 1.5", range("window", MAX_WINDOW_MS)),
            (
                "RL.SLIDE k 10 99999999999999999999999",
                range("window", MAX_WINDOW_MS),
            ),
            ("RL.SLIDE k 10 1000 COST 0", range("COST", MAX_COST)),
            ("RL.SLIDE k 1000 1000 COST 101", range("COST", MAX_COST)),
            ("RL.SLIDE k 10 1000 COST 11", RlError::CostAboveLimit),
            (
                "RL.SLIDE k 10 1000 COST",
                RlError::MissingValue { option: "COST" },
            ),
            (
                "RL.SLIDE k 10 1000 COST 1 COST 2",
                RlError::DuplicateOption { option: "COST" },
            ),
            (
                "RL.SLIDE k 10 1000 WEIGHT 2",
                RlError::UnknownOption("WEIGHT".into()),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), Err(want), "{line}");
        }
    }

    #[test]
    fn block_is_an_option_with_its_own_range() {
        let got = parse("RL.SLIDE k 10 1000 BLOCK 60000 COST 2").unwrap();
        assert_eq!((got.cost, got.block_ms), (2, Some(60_000)));
        let range = RlError::OutOfRange {
            arg: "BLOCK",
            max: crate::core::options::block::MAX_BLOCK_MS,
        };
        assert_eq!(parse("RL.SLIDE k 10 1000 BLOCK 0"), Err(range));
        assert_eq!(
            parse("RL.SLIDE k 10 1000 BLOCK 5 BLOCK 5"),
            Err(RlError::DuplicateOption { option: "BLOCK" })
        );
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        errors_name_declared_arguments(&SYNTAX, "RL.SLIDE k 10 1000", SlideRequest::parse);
    }
}

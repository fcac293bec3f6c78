//! `RL.FIXED key limit window [COST cost] [BLOCK ms]` parsed into a typed request.

use crate::core::error::RlError;
use crate::core::options::limit_window_cost;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Largest `limit` (and so `COST`), 10^15 (a petabyte quota counted in
/// bytes): counters stay at or below the largest value that is not a
/// throttle state (`gcra::MIN_STORED_TAT_US`), so a key written by one
/// limiter is refused, not misread, by the other.
pub const MAX_LIMIT: u64 = 1_000_000_000_000_000;

/// Largest window in ms (about 31.7 years), as the sliding windows'.
pub use crate::core::args::MAX_WINDOW_MS;

/// `RL.FIXED`'s name and arguments.
#[rustfmt::skip]
pub const SYNTAX: Syntax = Syntax {
    command: c"rl.fixed",
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

/// What one `RL.FIXED` call asks for. The key stays with the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedRequest {
    pub limit: u64,
    pub window_ms: u64,
    pub cost: u64,
    /// `BLOCK ms`: a denial blocks the key for this long.
    pub block_ms: Option<u64>,
}

impl FixedRequest {
    /// `args` is the whole command line, name and key included.
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse_line(args, false)
    }

    /// The line of an `UPTO` request, `UPTO` taken off: its cost may pass
    /// the limit.
    pub fn parse_up_to(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse_line(args, true)
    }

    #[inline(always)]
    fn parse_line(args: &[&[u8]], up_to: bool) -> Result<Self, RlError> {
        let (limit, window_ms, cost, block_ms) =
            limit_window_cost(&SYNTAX, args, MAX_LIMIT, MAX_LIMIT, up_to)?;
        Ok(FixedRequest {
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

    fn parse(line: &str) -> Result<FixedRequest, RlError> {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        FixedRequest::parse(&args)
    }

    #[test]
    fn valid_lines() {
        let cases = [
            ("RL.FIXED k 10 1000", (10, 1000, 1)),
            ("RL.FIXED k 10 1000 COST 10", (10, 1000, 10)),
            ("RL.FIXED k 10 1000 cost 2", (10, 1000, 2)),
            (
                "RL.FIXED k 1000000000000000 1000000000000",
                (MAX_LIMIT, MAX_WINDOW_MS, 1),
            ),
        ];
        for (line, (limit, window_ms, cost)) in cases {
            let want = FixedRequest {
                limit,
                window_ms,
                cost,
                block_ms: None,
            };
            assert_eq!(parse(line), Ok(want), "{line}");
        }
    }

    #[test]
    fn invalid_lines_name_the_problem() {
        let range = |arg, max| RlError::OutOfRange { arg, max };
        let cases = [
            (
                "RL.FIXED k 10",
                RlError::WrongArity {
                    command: "rl.fixed",
                },
            ),
            ("RL.FIXED k 0 1000", range("limit", MAX_LIMIT)),
            (
                "RL.FIXED k 1000000000000001 1000",
                range("limit", MAX_LIMIT),
            ),
            ("RL.FIXED k 10 -1", range("window", MAX_WINDOW_MS)),
            (
                "RL.FIXED k 10 1000000000001",
                range("window", MAX_WINDOW_MS),
            ),
            ("RL.FIXED k 10 1000 COST 0", range("COST", MAX_LIMIT)),
            ("RL.FIXED k 10 1000 COST 11", RlError::CostAboveLimit),
            (
                "RL.FIXED k 10 1000 COST",
                RlError::MissingValue { option: "COST" },
            ),
            (
                "RL.FIXED k 10 1000 COST 1 COST 1",
                RlError::DuplicateOption { option: "COST" },
            ),
            (
                "RL.FIXED k 10 1000 LIMIT 2",
                RlError::UnknownOption("LIMIT".into()),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), Err(want), "{line}");
        }
    }

    #[test]
    fn block_is_an_option_with_its_own_range() {
        let got = parse("RL.FIXED k 10 1000 BLOCK 60000 COST 2").unwrap();
        assert_eq!((got.cost, got.block_ms), (2, Some(60_000)));
        assert_eq!(
            parse("RL.FIXED k 10 1000 block 1").unwrap().block_ms,
            Some(1)
        );
        let range = RlError::OutOfRange {
            arg: "BLOCK",
            max: crate::core::options::block::MAX_BLOCK_MS,
        };
        for line in [
            "RL.FIXED k 10 1000 BLOCK 0",
            "RL.FIXED k 10 1000 BLOCK 1000000000001",
            "RL.FIXED k 10 1000 BLOCK x",
        ] {
            assert_eq!(parse(line), Err(range.clone()), "{line}");
        }
        assert_eq!(
            parse("RL.FIXED k 10 1000 BLOCK 5 BLOCK 5"),
            Err(RlError::DuplicateOption { option: "BLOCK" })
        );
        assert_eq!(
            parse("RL.FIXED k 10 1000 BLOCK"),
            Err(RlError::MissingValue { option: "BLOCK" })
        );
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        errors_name_declared_arguments(&SYNTAX, "RL.FIXED k 10 1000", FixedRequest::parse);
    }
}

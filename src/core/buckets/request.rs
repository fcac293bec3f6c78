//! `RL.BUCKETS key limit window [PRECISION ms] [COST cost] [BLOCK ms]`
//! parsed into a typed request.

use crate::core::args::{positive, set_once, MAX_WINDOW_MS};
use crate::core::error::RlError;
use crate::core::options::block::block_option;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Largest `limit` (and `COST`), 10^15: a byte quota of a petabyte per
/// window. Totals never exceed it, so every stored count has at most 16
/// digits and no sum can overflow.
pub const MAX_LIMIT: u64 = 1_000_000_000_000_000;

/// `RL.BUCKETS`'s name and arguments.
#[rustfmt::skip]
pub const SYNTAX: Syntax = Syntax {
    command: c"rl.buckets",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"limit", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"window", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"ms", kind: ArgKind::Integer, token: Some(c"PRECISION"), optional: true },
        ArgSpec { name: c"cost", kind: ArgKind::Integer, token: Some(c"COST"), optional: true },
        ArgSpec { name: c"ms", kind: ArgKind::Integer, token: Some(c"BLOCK"), optional: true },
        ArgSpec { name: c"upto", kind: ArgKind::Flag, token: Some(c"UPTO"), optional: true },
        crate::core::options::wait::ARG,
    ],
};

/// What one `RL.BUCKETS` call asks for. The key stays with the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketsRequest {
    pub limit: u64,
    pub window_ms: u64,
    /// Bucket width; `None` means the key's own, or the default for a new key.
    pub precision: Option<u64>,
    pub cost: u64,
    /// `BLOCK ms`: a denial blocks the key for this long.
    pub block_ms: Option<u64>,
}

/// The value of `PRECISION ms`, checked against the window.
pub fn precision_option(
    value: &[u8],
    window_ms: u64,
    slot: &mut Option<u64>,
) -> Result<(), RlError> {
    precision_option_within(value, window_ms, slot, MAX_BUCKETS)
}

/// [`precision_option`] for a window of at most `max_buckets` buckets
/// (RL.COUNT's and RL.TOTALS' are fewer, each bucket holding a count per
/// field).
pub fn precision_option_within(
    value: &[u8],
    window_ms: u64,
    slot: &mut Option<u64>,
    max_buckets: u64,
) -> Result<(), RlError> {
    let precision = positive(value, "PRECISION", MAX_WINDOW_MS)?;
    check_precision_within(window_ms, precision, max_buckets)?;
    set_once(slot, precision, "PRECISION")
}

impl BucketsRequest {
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
        SYNTAX.check_count(args.len())?;
        let limit = positive(args[2], "limit", MAX_LIMIT)?;
        let window_ms = positive(args[3], "window", MAX_WINDOW_MS)?;
        let mut cost = None;
        let mut precision = None;
        let mut block_ms = None;
        SYNTAX.for_each_option(args, |name, value| match name {
            "COST" => set_once(&mut cost, positive(value, name, MAX_LIMIT)?, name),
            "BLOCK" => set_once(&mut block_ms, block_option(name, value)?, name),
            _ => precision_option(value, window_ms, &mut precision),
        })?;
        let cost = cost.unwrap_or(1);
        if cost > limit && !up_to {
            return Err(RlError::CostAboveLimit);
        }
        Ok(BucketsRequest {
            limit,
            window_ms,
            precision,
            cost,
            block_ms,
        })
    }
}

/// Most buckets one window may need (`ceil(window / precision)`). It bounds
/// the buckets one call reads and removes: 250 keeps the function edition,
/// which pays a few µs per bucket in Lua, under 1 ms a call (it was 1,000;
/// the module's cost is far below at either). Keys written under the old
/// bound stay readable (see `held::MAX_BITS`).
pub const MAX_BUCKETS: u64 = 250;

/// Buckets per window when `PRECISION` is not given.
pub const DEFAULT_BUCKETS: u64 = 60;

/// `precision` fits `window`: at most the window and at most
/// [`MAX_BUCKETS`] buckets.
pub fn check_precision(window_ms: u64, precision: u64) -> Result<(), RlError> {
    check_precision_within(window_ms, precision, MAX_BUCKETS)
}

/// [`check_precision`] for a window of at most `max_buckets` buckets.
pub fn check_precision_within(
    window_ms: u64,
    precision: u64,
    max_buckets: u64,
) -> Result<(), RlError> {
    if precision > window_ms {
        return Err(RlError::PrecisionAboveWindow);
    }
    if window_ms.div_ceil(precision) > max_buckets {
        return Err(RlError::TooManyBuckets { max: max_buckets });
    }
    Ok(())
}

/// The bucket width when `PRECISION` is not given: the window in
/// [`DEFAULT_BUCKETS`] buckets, rounded up, at least 1 ms.
pub fn default_precision(window_ms: u64) -> u64 {
    window_ms.div_ceil(DEFAULT_BUCKETS).max(1)
}

/// A request without `BLOCK`, for the tests' tables of explicit times.
#[cfg(test)]
pub fn test_request(limit: u64, window_ms: u64, precision: u64, cost: u64) -> BucketsRequest {
    BucketsRequest {
        limit,
        window_ms,
        precision: Some(precision),
        cost,
        block_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::syntax::tests::errors_name_declared_arguments;

    fn parse(line: &str) -> Result<BucketsRequest, RlError> {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        BucketsRequest::parse(&args)
    }

    #[test]
    fn valid_lines() {
        let cases = [
            ("RL.BUCKETS k 10 1000", (10, 1000, None, 1)),
            ("RL.BUCKETS k 10 1000 COST 3", (10, 1000, None, 3)),
            (
                "RL.BUCKETS k 10 1000 PRECISION 100",
                (10, 1000, Some(100), 1),
            ),
            (
                "RL.BUCKETS k 10 1000 precision 1000 cost 10",
                (10, 1000, Some(1000), 10),
            ),
            // 250 buckets, the most a window may need.
            ("RL.BUCKETS k 10 250 PRECISION 1", (10, 250, Some(1), 1)),
            (
                "RL.BUCKETS k 1000000000000000 1000000000000",
                (1_000_000_000_000_000, 1_000_000_000_000, None, 1),
            ),
        ];
        for (line, (limit, window_ms, precision, cost)) in cases {
            assert_eq!(
                parse(line),
                Ok(BucketsRequest {
                    limit,
                    window_ms,
                    precision,
                    cost,
                    block_ms: None
                }),
                "{line}"
            );
        }
    }

    #[test]
    fn block_lines() {
        let want = |block_ms| {
            Ok(BucketsRequest {
                limit: 10,
                window_ms: 1000,
                precision: Some(100),
                cost: 2,
                block_ms,
            })
        };
        assert_eq!(
            parse("RL.BUCKETS k 10 1000 BLOCK 5000 COST 2 PRECISION 100"),
            want(Some(5000))
        );
        assert_eq!(
            parse("RL.BUCKETS k 10 1000 PRECISION 100 cost 2 block 1000000000000"),
            want(Some(MAX_WINDOW_MS))
        );
        let range = RlError::OutOfRange {
            arg: "BLOCK",
            max: MAX_WINDOW_MS,
        };
        assert_eq!(parse("RL.BUCKETS k 10 1000 BLOCK 0"), Err(range.clone()));
        assert_eq!(
            parse("RL.BUCKETS k 10 1000 BLOCK 1000000000001"),
            Err(range)
        );
        assert_eq!(
            parse("RL.BUCKETS k 10 1000 BLOCK 5 BLOCK 5"),
            Err(RlError::DuplicateOption { option: "BLOCK" })
        );
        assert_eq!(
            parse("RL.BUCKETS k 10 1000 BLOCK"),
            Err(RlError::MissingValue { option: "BLOCK" })
        );
    }

    #[test]
    fn invalid_lines_name_the_problem() {
        let range = |arg, max| RlError::OutOfRange { arg, max };
        let cases = [
            (
                "RL.BUCKETS k 10",
                RlError::WrongArity {
                    command: "rl.buckets",
                },
            ),
            ("RL.BUCKETS k 0 1000", range("limit", MAX_LIMIT)),
            (
                "RL.BUCKETS k 1000000000000001 1000",
                range("limit", MAX_LIMIT),
            ),
            ("RL.BUCKETS k 10 -1", range("window", MAX_WINDOW_MS)),
            ("RL.BUCKETS k 10 1000 COST 0", range("COST", MAX_LIMIT)),
            ("RL.BUCKETS k 10 1000 COST 11", RlError::CostAboveLimit),
            (
                "RL.BUCKETS k 10 1000 PRECISION 0",
                range("PRECISION", MAX_WINDOW_MS),
            ),
            (
                "RL.BUCKETS k 10 1000 PRECISION x",
                range("PRECISION", MAX_WINDOW_MS),
            ),
            (
                "RL.BUCKETS k 10 1000 PRECISION 1001",
                RlError::PrecisionAboveWindow,
            ),
            (
                "RL.BUCKETS k 10 100000 PRECISION 99",
                RlError::TooManyBuckets { max: MAX_BUCKETS },
            ),
            (
                "RL.BUCKETS k 10 251 PRECISION 1",
                RlError::TooManyBuckets { max: MAX_BUCKETS },
            ),
            (
                "RL.BUCKETS k 10 1000 PRECISION",
                RlError::MissingValue {
                    option: "PRECISION",
                },
            ),
            (
                "RL.BUCKETS k 10 1000 PRECISION 10 PRECISION 10",
                RlError::DuplicateOption {
                    option: "PRECISION",
                },
            ),
            (
                "RL.BUCKETS k 10 1000 WEIGHT 2",
                RlError::UnknownOption("WEIGHT".into()),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), Err(want), "{line}");
        }
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        errors_name_declared_arguments(&SYNTAX, "RL.BUCKETS k 10 1000", BucketsRequest::parse);
    }
}

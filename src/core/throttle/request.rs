//! `RL.THROTTLE key max_burst count period [quantity] [BLOCK ms]` (period in ms) and
//! its redis-cell twin `CL.THROTTLE` (period in seconds), parsed into one
//! typed request.

use super::gcra::Gcra;
use crate::core::args::{non_negative, positive, set_once};
use crate::core::error::{token_text, RlError};
use crate::core::options::block::block_option;
use crate::core::options::wait;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Largest `max_burst`, `count` and `quantity` accepted by the parser; the
/// burst tolerance check ([`Gcra::new`]) bounds the useful range further.
pub const MAX_UNITS: u64 = 1_000_000_000_000_000;

/// Largest `RL.THROTTLE` period in ms (about 31.7 years).
pub const MAX_PERIOD_MS: u64 = 1_000_000_000_000;

/// Largest `CL.THROTTLE` period in seconds (about 31.7 years).
pub const MAX_PERIOD_S: u64 = 1_000_000_000;

/// The arguments of both throttle commands (the period's unit differs).
#[rustfmt::skip]
const ARGS: &[ArgSpec] = &[
    ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
    ArgSpec { name: c"max_burst", kind: ArgKind::Integer, token: None, optional: false },
    ArgSpec { name: c"count", kind: ArgKind::Integer, token: None, optional: false },
    ArgSpec { name: c"period", kind: ArgKind::Integer, token: None, optional: false },
    ArgSpec { name: c"quantity", kind: ArgKind::Integer, token: None, optional: true },
];

/// `RL.THROTTLE`'s arguments: the throttles', `BLOCK ms`, `UPTO` and `WAIT`.
#[rustfmt::skip]
const RL_ARGS: &[ArgSpec] = &[
    ARGS[0], ARGS[1], ARGS[2], ARGS[3], ARGS[4],
    ArgSpec { name: c"ms", kind: ArgKind::Integer, token: Some(c"BLOCK"), optional: true },
    ArgSpec { name: c"upto", kind: ArgKind::Flag, token: Some(c"UPTO"), optional: true },
    crate::core::options::wait::ARG,
];

/// `RL.THROTTLE`'s name and arguments (period in ms).
pub const RL_THROTTLE: Syntax = Syntax {
    command: c"rl.throttle",
    args: RL_ARGS,
};

/// `CL.THROTTLE`'s name and arguments (period in seconds).
pub const CL_THROTTLE: Syntax = Syntax {
    command: c"cl.throttle",
    args: ARGS,
};

/// What one throttle call asks for. The key stays with the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleRequest {
    pub rate: Gcra,
    /// Units this request costs; 0 only peeks and writes nothing.
    pub quantity: u64,
    /// `BLOCK ms` (RL.THROTTLE only): a denial blocks the key for this long.
    pub block_ms: Option<u64>,
}

/// The differences between the two commands.
struct Dialect {
    syntax: &'static Syntax,
    period_unit_us: u64,
    max_period: u64,
    /// RL.THROTTLE refuses a quantity that could never pass; CL.THROTTLE
    /// answers it "limited, retry -1" as redis-cell does.
    refuse_oversized: bool,
    /// RL.THROTTLE ... UPTO: a quantity past the burst takes what fits.
    up_to: bool,
}

impl ThrottleRequest {
    /// `RL.THROTTLE`: period in milliseconds. `args` is the whole command
    /// line, name and key included.
    pub fn parse_ms(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse(
            args,
            &Dialect {
                syntax: &RL_THROTTLE,
                period_unit_us: 1_000,
                max_period: MAX_PERIOD_MS,
                refuse_oversized: true,
                up_to: false,
            },
        )
    }

    /// The line of an `RL.THROTTLE ... UPTO` request, `UPTO` taken off:
    /// its quantity may pass `max_burst + 1` (at most 10^15).
    pub fn parse_ms_up_to(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse(
            args,
            &Dialect {
                syntax: &RL_THROTTLE,
                period_unit_us: 1_000,
                max_period: MAX_PERIOD_MS,
                refuse_oversized: true,
                up_to: true,
            },
        )
    }

    /// `CL.THROTTLE`: period in seconds, as redis-cell.
    pub fn parse_cell(args: &[&[u8]]) -> Result<Self, RlError> {
        Self::parse(
            args,
            &Dialect {
                syntax: &CL_THROTTLE,
                period_unit_us: 1_000_000,
                max_period: MAX_PERIOD_S,
                refuse_oversized: false,
                up_to: false,
            },
        )
    }

    /// Inlined into each dialect's parser, so its constants fold.
    #[inline(always)]
    fn parse(args: &[&[u8]], d: &Dialect) -> Result<Self, RlError> {
        d.syntax.check_count(args.len())?;
        // UPTO here was not taken off the line (RL.THROTTLE's own parse
        // takes it before): refused by name.
        if args.get(5).is_some_and(|q| q.eq_ignore_ascii_case(b"UPTO")) {
            return Err(RlError::UptoOnlyInLimiters {
                command: d.syntax.name().to_string(),
            });
        }
        // RL.THROTTLE: `[quantity] [BLOCK ms]`, the quantity a positional
        // word (never the token) and nothing after the option.
        let is_block = |a: &&[u8]| d.refuse_oversized && a.eq_ignore_ascii_case(b"BLOCK");
        // RL.THROTTLE's host takes `WAIT` off a line that may wait: one
        // that reaches the parser (beside UPTO, after RL.PEEK, in RL.ALL)
        // is unknown there, as every other limiter's parser says.
        let is_wait =
            |a: &&[u8]| d.refuse_oversized && a.eq_ignore_ascii_case(wait::TOKEN.as_bytes());
        let positional = match args.get(5) {
            Some(a) if !is_block(a) && !is_wait(a) => 6,
            _ => 5,
        };
        let mut block_ms = None;
        let mut at = positional;
        while at < args.len() {
            if is_wait(&args[at]) {
                return Err(RlError::UnknownOption(token_text(args[at])));
            }
            if !is_block(&args[at]) {
                return Err(RlError::WrongArity {
                    command: d.syntax.name(),
                });
            }
            let value = args
                .get(at + 1)
                .ok_or(RlError::MissingValue { option: "BLOCK" })?;
            set_once(&mut block_ms, block_option("BLOCK", value)?, "BLOCK")?;
            at += 2;
        }
        let max_burst = non_negative(args[2], "max_burst", MAX_UNITS)?;
        let count = positive(args[3], "count", MAX_UNITS)?;
        let period = positive(args[4], "period", d.max_period)?;
        // redis-cell reads any i64 quantity and answers one above the
        // burst "limited, retry -1"; RL.THROTTLE refuses it below.
        let max_quantity = if d.refuse_oversized {
            MAX_UNITS
        } else {
            i64::MAX as u64
        };
        let quantity = match args.get(5).filter(|_| positional == 6) {
            Some(q) => non_negative(q, "quantity", max_quantity)?,
            None => 1,
        };
        let rate = Gcra::new(max_burst, count, period * d.period_unit_us)?;
        if d.refuse_oversized && !d.up_to && quantity > rate.limit {
            return Err(RlError::QuantityAboveBurst);
        }
        Ok(ThrottleRequest {
            rate,
            quantity,
            block_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::syntax::tests::errors_name_declared_arguments;

    fn split(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn valid_lines() {
        // (line, emission µs, tolerance µs, limit, quantity)
        let cases = [
            ("RL.THROTTLE k 4 5 1000", (200_000, 1_000_000, 5, 1)),
            ("RL.THROTTLE k 0 100000 1000 1", (10, 10, 1, 1)),
            ("RL.THROTTLE k 2 1 100 0", (100_000, 300_000, 3, 0)),
            ("RL.THROTTLE k 2 1 100 3", (100_000, 300_000, 3, 3)),
            ("CL.THROTTLE k 15 30 60", (2_000_000, 32_000_000, 16, 1)),
            // CL.THROTTLE takes oversized quantities (answered limited)
            ("CL.THROTTLE k 4 1 1 6", (1_000_000, 5_000_000, 5, 6)),
        ];
        for (line, (t, tau, limit, quantity)) in cases {
            let args = split(line);
            let got = if line.starts_with("RL") {
                ThrottleRequest::parse_ms(&args)
            } else {
                ThrottleRequest::parse_cell(&args)
            };
            let want = ThrottleRequest {
                rate: Gcra {
                    emission_us: t,
                    tolerance_us: tau,
                    limit,
                },
                quantity,
                block_ms: None,
            };
            assert_eq!(got, Ok(want), "{line}");
        }
    }

    #[test]
    fn invalid_lines_name_the_problem() {
        let zero_to = |arg| RlError::NotInRange {
            arg,
            min: 0,
            max: MAX_UNITS,
        };
        let range = |arg, max| RlError::OutOfRange { arg, max };
        let rl_arity = RlError::WrongArity {
            command: "rl.throttle",
        };
        let cases = [
            ("RL.THROTTLE k 1 1", rl_arity.clone()),
            ("RL.THROTTLE k 1 1 1000 1 1", rl_arity),
            ("RL.THROTTLE k -1 1 1000", zero_to("max_burst")),
            ("RL.THROTTLE k x 1 1000", zero_to("max_burst")),
            ("RL.THROTTLE k 1 0 1000", range("count", MAX_UNITS)),
            ("RL.THROTTLE k 1 1.5 1000", range("count", MAX_UNITS)),
            ("RL.THROTTLE k 1 1 0", range("period", MAX_PERIOD_MS)),
            (
                "RL.THROTTLE k 1 1 1000000000001",
                range("period", MAX_PERIOD_MS),
            ),
            ("RL.THROTTLE k 1 1 1000 -1", zero_to("quantity")),
            ("RL.THROTTLE k 1 1 1000 3", RlError::QuantityAboveBurst),
            ("RL.THROTTLE k 0 1001 1", RlError::RateTooHigh),
            ("RL.THROTTLE k 1000000000000 1 1000", RlError::BurstTooLong),
            (
                "CL.THROTTLE k 1 1",
                RlError::WrongArity {
                    command: "cl.throttle",
                },
            ),
            (
                "CL.THROTTLE k 1 1 1000000001",
                range("period", MAX_PERIOD_S),
            ),
            ("CL.THROTTLE k 0 1000001 1", RlError::RateTooHigh),
            (
                "CL.THROTTLE k 1 1 1 x",
                RlError::NotInRange {
                    arg: "quantity",
                    min: 0,
                    max: i64::MAX as u64,
                },
            ),
            (
                "CL.THROTTLE k 1 1 1 9223372036854775808",
                RlError::NotInRange {
                    arg: "quantity",
                    min: 0,
                    max: i64::MAX as u64,
                },
            ),
        ];
        for (line, want) in cases {
            let args = split(line);
            let got = if line.starts_with("RL") {
                ThrottleRequest::parse_ms(&args)
            } else {
                ThrottleRequest::parse_cell(&args)
            };
            assert_eq!(got, Err(want), "{line}");
        }
    }

    #[test]
    fn rl_throttle_takes_block_after_the_quantity() {
        let parse = |line| ThrottleRequest::parse_ms(&split(line));
        let block = |line| parse(line).map(|r| (r.quantity, r.block_ms));
        assert_eq!(
            block("RL.THROTTLE k 4 5 1000 BLOCK 60000"),
            Ok((1, Some(60_000)))
        );
        assert_eq!(block("RL.THROTTLE k 4 5 1000 2 block 7"), Ok((2, Some(7))));
        let range = RlError::OutOfRange {
            arg: "BLOCK",
            max: crate::core::options::block::MAX_BLOCK_MS,
        };
        let arity = RlError::WrongArity {
            command: "rl.throttle",
        };
        let cases = [
            ("RL.THROTTLE k 4 5 1000 BLOCK 0", range.clone()),
            ("RL.THROTTLE k 4 5 1000 1 BLOCK x", range),
            (
                "RL.THROTTLE k 4 5 1000 BLOCK",
                RlError::MissingValue { option: "BLOCK" },
            ),
            (
                "RL.THROTTLE k 4 5 1000 BLOCK 5 BLOCK 5",
                RlError::DuplicateOption { option: "BLOCK" },
            ),
            ("RL.THROTTLE k 4 5 1000 BLOCK 5 1", arity.clone()),
            ("RL.THROTTLE k 4 5 1000 1 1", arity),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), Err(want), "{line}");
        }
        // CL.THROTTLE has no BLOCK: the word is its quantity.
        assert!(matches!(
            ThrottleRequest::parse_cell(&split("CL.THROTTLE k 4 5 1 BLOCK 5")),
            Err(RlError::WrongArity { .. } | RlError::NotInRange { .. })
        ));
    }

    #[test]
    fn a_wait_the_host_left_on_the_line_is_an_unknown_option() {
        // Beside UPTO (taken off before), and wherever the word stands
        // after the period; CL.THROTTLE has no WAIT: a quantity.
        let unknown = |t: &str| Err(RlError::UnknownOption(t.into()));
        for (line, want) in [
            ("RL.THROTTLE t 1 2 1000 WAIT 1", unknown("WAIT")),
            ("RL.THROTTLE t 1 2 1000 2 wait 1", unknown("wait")),
            ("RL.THROTTLE t 1 2 1000 BLOCK 5 WAIT 1", unknown("WAIT")),
        ] {
            assert_eq!(
                ThrottleRequest::parse_ms_up_to(&split(line)),
                want,
                "{line}"
            );
            assert_eq!(ThrottleRequest::parse_ms(&split(line)), want, "{line}");
        }
        assert!(matches!(
            ThrottleRequest::parse_cell(&split("CL.THROTTLE k 4 5 1 WAIT 5")),
            Err(RlError::WrongArity { .. })
        ));
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        let line = "RL.THROTTLE k 5 10 1000 1";
        errors_name_declared_arguments(&RL_THROTTLE, line, ThrottleRequest::parse_ms);
        errors_name_declared_arguments(&CL_THROTTLE, line, ThrottleRequest::parse_cell);
    }
}

//! A request to any limiter, named by its algorithm, as `RL.PEEK` and the
//! clauses of `RL.ALL` spell it: `SLIDE|BUCKETS|THROTTLE|FIXED|ACQUIRE key <the
//! parameters of that limiter's own command>`. Parsing goes through each
//! limiter's own parser, so the syntax and its errors are those of the
//! consuming command.

pub mod all;
pub mod block;
pub mod charge;
pub mod peek;
pub mod refund;
#[cfg(test)]
mod upto_tests;
#[cfg(test)]
mod wait_tests;

use crate::core::buckets::request::BucketsRequest;
use crate::core::error::token_text;
use crate::core::error::RlError;
use crate::core::fixed::request::FixedRequest;
use crate::core::lease::request::AcquireRequest;
use crate::core::slide::request::SlideRequest;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};
use crate::core::throttle::request::ThrottleRequest;

/// The limiters a request can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// `RL.SLIDE`: the exact sliding log.
    Slide,
    /// `RL.BUCKETS`: the bucketed sliding window.
    Buckets,
    /// `RL.THROTTLE`: GCRA, period in ms.
    Throttle,
    /// `RL.FIXED`: the fixed window.
    Fixed,
    /// `RL.ACQUIRE`: a lease (a concurrency limit).
    Acquire,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Slide,
        Algorithm::Buckets,
        Algorithm::Throttle,
        Algorithm::Fixed,
        Algorithm::Acquire,
    ];

    /// The token that names it (case-insensitive on input).
    pub fn token(self) -> &'static str {
        match self {
            Algorithm::Slide => "SLIDE",
            Algorithm::Buckets => "BUCKETS",
            Algorithm::Throttle => "THROTTLE",
            Algorithm::Fixed => "FIXED",
            Algorithm::Acquire => "ACQUIRE",
        }
    }

    pub fn from_token(token: &[u8]) -> Option<Algorithm> {
        // RL.ALL asks this of every argument of its clauses, most of them
        // numbers: a word of another length, or not starting with a
        // letter, is none of the tokens.
        if !(5..=8).contains(&token.len()) || !token[0].is_ascii_alphabetic() {
            return None;
        }
        Algorithm::ALL
            .into_iter()
            .find(|a| token.eq_ignore_ascii_case(a.token().as_bytes()))
    }

    /// The declaration of the limiter's own command.
    pub fn syntax(self) -> &'static Syntax {
        match self {
            Algorithm::Slide => &crate::core::slide::request::SYNTAX,
            Algorithm::Buckets => &crate::core::buckets::request::SYNTAX,
            Algorithm::Throttle => &crate::core::throttle::request::RL_THROTTLE,
            Algorithm::Fixed => &crate::core::fixed::request::SYNTAX,
            Algorithm::Acquire => &crate::core::lease::request::ACQUIRE,
        }
    }

    /// How the limiter is spelled after `RL.PEEK` (`SLIDE key limit window
    /// [COST cost]`) or in an `RL.ALL` clause, whose key is listed apart.
    fn usage(self, with_key: bool) -> String {
        // UPTO and WAIT are options of the limiter's own command only.
        let line = self
            .syntax()
            .synopsis()
            .replace(" [UPTO]", "")
            .replace(crate::core::options::wait::USAGE, "");
        let line = line.strip_prefix("RL.").unwrap_or(&line);
        if with_key {
            line.to_string()
        } else {
            line.replacen(" key", "", 1)
        }
    }
}

/// One limiter request, parsed by that limiter's own parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitRequest {
    Slide(SlideRequest),
    Buckets(BucketsRequest),
    Throttle(ThrottleRequest),
    Fixed(FixedRequest),
    Acquire(AcquireRequest),
}

impl LimitRequest {
    /// `line` is shaped like the limiter's own command line: the algorithm
    /// token where the command name would be, the key, then its parameters.
    /// A wrong count of parameters is restated for `called`, the command the
    /// user called, with the limiter's usage (with its key or, in an RL.ALL
    /// clause, without).
    pub fn parse(line: &[&[u8]], called: &Syntax, with_key: bool) -> Result<LimitRequest, RlError> {
        let token = line.first().copied().unwrap_or_default();
        let algorithm = Algorithm::from_token(token)
            .ok_or_else(|| RlError::UnknownLimiter(token_text(token)))?;
        Self::parse_as(algorithm, line, called, with_key)
    }

    /// [`LimitRequest::parse`] of a line whose token is known to name
    /// `algorithm` (`RL.ALL` finds every clause's before parsing any).
    pub fn parse_as(
        algorithm: Algorithm,
        line: &[&[u8]],
        called: &Syntax,
        with_key: bool,
    ) -> Result<LimitRequest, RlError> {
        let parsed = match algorithm {
            Algorithm::Slide => SlideRequest::parse(line).map(LimitRequest::Slide),
            Algorithm::Buckets => BucketsRequest::parse(line).map(LimitRequest::Buckets),
            Algorithm::Throttle => ThrottleRequest::parse_ms(line).map(LimitRequest::Throttle),
            Algorithm::Fixed => FixedRequest::parse(line).map(LimitRequest::Fixed),
            Algorithm::Acquire => AcquireRequest::parse(line).map(LimitRequest::Acquire),
        };
        parsed.map_err(|e| match e {
            RlError::WrongArity { .. } => RlError::LimiterArity {
                command: called.name(),
                usage: algorithm.usage(with_key),
            },
            RlError::OldestOnlyInPeek { .. } => RlError::OldestOnlyInPeek {
                command: called.name().to_string(),
            },
            RlError::UptoOnlyInLimiters { .. } => RlError::UptoOnlyInLimiters {
                command: called.name().to_string(),
            },
            e => e,
        })
    }

    pub fn algorithm(&self) -> Algorithm {
        match self {
            LimitRequest::Slide(_) => Algorithm::Slide,
            LimitRequest::Buckets(_) => Algorithm::Buckets,
            LimitRequest::Throttle(_) => Algorithm::Throttle,
            LimitRequest::Fixed(_) => Algorithm::Fixed,
            LimitRequest::Acquire(_) => Algorithm::Acquire,
        }
    }
}

/// The arguments of a command that names a limiter (`RL.PEEK`,
/// `RL.REFUND`): `<limiter> key <that limiter's parameters>`.
#[rustfmt::skip]
pub const NAMED_LIMITER_ARGS: &[ArgSpec] = &[
    ArgSpec { name: c"limiter", kind: ArgKind::String, token: None, optional: false },
    ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
    ArgSpec { name: c"parameter", kind: ArgKind::Strings, token: None, optional: true },
];

/// Where the key of such a command is: after the limiter's name.
pub const NAMED_LIMITER_KEY: usize = 2;

/// `args` (the whole line of `command`, declared with
/// [`NAMED_LIMITER_ARGS`]) as the request of the limiter it names.
pub fn parse_named(args: &[&[u8]], command: &Syntax) -> Result<LimitRequest, RlError> {
    command.check_count(args.len())?;
    LimitRequest::parse(&args[1..], command, true)
}

/// `BLOCK` anywhere after the key of the settling commands (`RL.REFUND`,
/// `RL.CHARGE`): refused by name. Neither denies, so a block could never
/// start there; taking the limiter's line whole and ignoring it would let
/// a caller believe a charge past the limit blocks the key. Checked
/// before the limiter's parser (no word of a limiter's parameters is
/// spelled `BLOCK`). `RL.PEEK` takes it: a peek answers what the call
/// with that very line would.
pub fn refuse_block(args: &[&[u8]], command: &Syntax) -> Result<(), RlError> {
    let block = |a: &&[u8]| a.eq_ignore_ascii_case(b"BLOCK");
    match args.iter().skip(NAMED_LIMITER_KEY + 1).any(block) {
        true => Err(RlError::BlockOnlyInLimiters {
            command: command.name().to_string(),
        }),
        false => Ok(()),
    }
}

/// Request lines for the tests of the commands that name a limiter.
#[cfg(test)]
pub(crate) mod test_lines {
    use super::*;

    pub fn split(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    pub fn slide(limit: u64, window_ms: u64, cost: u64) -> LimitRequest {
        LimitRequest::Slide(SlideRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        })
    }

    /// `THROTTLE k 4 5 1000 <quantity>`: a burst of 4, 5 per second.
    pub fn throttle(quantity: u64) -> LimitRequest {
        LimitRequest::Throttle(ThrottleRequest {
            rate: crate::core::throttle::gcra::Gcra::new(4, 5, 1_000_000).unwrap(),
            quantity,
            block_ms: None,
        })
    }

    /// `BUCKETS k 10 1000 PRECISION 100 COST <cost>`.
    pub fn buckets(cost: u64) -> LimitRequest {
        LimitRequest::Buckets(BucketsRequest {
            limit: 10,
            window_ms: 1000,
            precision: Some(100),
            cost,
            block_ms: None,
        })
    }

    pub fn fixed(limit: u64, window_ms: u64, cost: u64) -> LimitRequest {
        LimitRequest::Fixed(FixedRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        })
    }
}

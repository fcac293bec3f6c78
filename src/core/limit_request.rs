//! A request to any limiter, named by its algorithm, as `RL.PEEK` and the
//! clauses of `RL.ALL` spell it: `SLIDE|BUCKETS|THROTTLE|FIXED key <the
//! parameters of that limiter's own command>`. Parsing goes through each
//! limiter's own parser, so the syntax and its errors are those of the
//! consuming command.

use super::args::{positive, token_text};
use super::buckets_request::BucketsRequest;
use super::error::RlError;
use super::fixed_request::FixedRequest;
use super::slide_request::SlideRequest;
use super::sliding_log::MAX_COST;
use super::syntax::{ArgKind, ArgSpec, Syntax};
use super::throttle_request::ThrottleRequest;

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
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Slide,
        Algorithm::Buckets,
        Algorithm::Throttle,
        Algorithm::Fixed,
    ];

    /// The token that names it (case-insensitive on input).
    pub fn token(self) -> &'static str {
        match self {
            Algorithm::Slide => "SLIDE",
            Algorithm::Buckets => "BUCKETS",
            Algorithm::Throttle => "THROTTLE",
            Algorithm::Fixed => "FIXED",
        }
    }

    pub fn from_token(token: &[u8]) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| token.eq_ignore_ascii_case(a.token().as_bytes()))
    }

    /// The declaration of the limiter's own command.
    pub fn syntax(self) -> &'static Syntax {
        match self {
            Algorithm::Slide => &super::slide_request::SYNTAX,
            Algorithm::Buckets => &super::buckets_request::SYNTAX,
            Algorithm::Throttle => &super::throttle_request::RL_THROTTLE,
            Algorithm::Fixed => &super::fixed_request::SYNTAX,
        }
    }

    /// How the limiter is spelled after `RL.PEEK` (`SLIDE key limit window
    /// [COST cost]`) or in an `RL.ALL` clause, whose key is listed apart.
    fn usage(self, with_key: bool) -> String {
        let line = self.syntax().synopsis();
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
        let parsed = match algorithm {
            Algorithm::Slide => SlideRequest::parse(line).map(LimitRequest::Slide),
            Algorithm::Buckets => BucketsRequest::parse(line).map(LimitRequest::Buckets),
            Algorithm::Throttle => ThrottleRequest::parse_ms(line).map(LimitRequest::Throttle),
            Algorithm::Fixed => FixedRequest::parse(line).map(LimitRequest::Fixed),
        };
        parsed.map_err(|e| match e {
            RlError::WrongArity { .. } => RlError::LimiterArity {
                command: called.name(),
                usage: algorithm.usage(with_key),
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
        }
    }
}

/// Where `RL.PEEK`'s key is: `RL.PEEK <algorithm> key ...`.
pub const PEEK_KEY: usize = 2;

/// `RL.PEEK`'s name and arguments.
#[rustfmt::skip]
pub const PEEK: Syntax = Syntax {
    command: c"rl.peek",
    args: &[
        ArgSpec { name: c"limiter", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"parameter", kind: ArgKind::Strings, token: None, optional: true },
    ],
};

/// `RL.PEEK <algorithm> key <parameters>`: the request it would check.
pub fn parse_peek(args: &[&[u8]]) -> Result<LimitRequest, RlError> {
    PEEK.check_count(args.len())?;
    LimitRequest::parse(&args[1..], &PEEK, true)
}

/// Most clauses (and keys) one `RL.ALL` call may name.
pub const MAX_CLAUSES: u64 = 16;

/// Where `RL.ALL`'s keys start: `RL.ALL numkeys key [key ...] clause ...`.
pub const ALL_FIRST_KEY: usize = 2;

/// `RL.ALL`'s name and arguments.
#[rustfmt::skip]
pub const ALL: Syntax = Syntax {
    command: c"rl.all",
    args: &[
        ArgSpec { name: c"numkeys", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"key", kind: ArgKind::Keys, token: None, optional: false },
        ArgSpec { name: c"clause", kind: ArgKind::Strings, token: None, optional: false },
    ],
};

/// `RL.ALL numkeys key [key ...] clause [clause ...]`, clause `i` applying
/// to key `i`. A clause is an algorithm token and that limiter's parameters;
/// it runs to the next algorithm token (parameters are integers and option
/// names, never an algorithm token, so the split is unambiguous).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllRequest {
    /// In key order: clause `i` is checked against the key at argument
    /// `ALL_FIRST_KEY + i`.
    pub clauses: Vec<LimitRequest>,
}

impl AllRequest {
    /// How many clauses use `algorithm` (clauses of a kind share one
    /// call's bound on work: removals, buckets read).
    pub fn count_of(&self, algorithm: Algorithm) -> u64 {
        self.clauses
            .iter()
            .filter(|c| c.algorithm() == algorithm)
            .count() as u64
    }

    /// `args` is the whole command line, name included.
    pub fn parse(args: &[&[u8]]) -> Result<AllRequest, RlError> {
        ALL.check_count(args.len())?;
        let numkeys = positive(args[1], "numkeys", MAX_CLAUSES)? as usize;
        let first_clause = ALL_FIRST_KEY + numkeys;
        // Each clause needs at least its algorithm token.
        if args.len() < first_clause + numkeys {
            return Err(RlError::WrongArity {
                command: ALL.name(),
            });
        }
        let keys = &args[ALL_FIRST_KEY..first_clause];
        for (i, key) in keys.iter().enumerate() {
            if keys[..i].contains(key) {
                return Err(RlError::DuplicateKey);
            }
        }
        let rest = &args[first_clause..];
        if Algorithm::from_token(rest[0]).is_none() {
            return Err(RlError::UnknownLimiter(token_text(rest[0])));
        }
        let starts: Vec<usize> = (0..rest.len())
            .filter(|&i| Algorithm::from_token(rest[i]).is_some())
            .collect();
        if starts.len() != numkeys {
            return Err(RlError::ClauseCount {
                keys: numkeys,
                clauses: starts.len(),
            });
        }
        let mut clauses = Vec::with_capacity(numkeys);
        let mut line: Vec<&[u8]> = Vec::new();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(rest.len());
            line.clear();
            line.push(rest[start]);
            line.push(keys[i]);
            line.extend_from_slice(&rest[start + 1..end]);
            let clause = LimitRequest::parse(&line, &ALL, false).map_err(|e| e.in_clause(i + 1))?;
            clauses.push(clause);
        }
        // Each unit of a SLIDE cost is a member to insert: one call inserts
        // at most MAX_COST of them, across all its clauses.
        let slide_cost: u64 = clauses
            .iter()
            .map(|c| match c {
                LimitRequest::Slide(r) => r.cost,
                _ => 0,
            })
            .sum();
        if slide_cost > MAX_COST {
            return Err(RlError::SlideCostTotal { max: MAX_COST });
        }
        Ok(AllRequest { clauses })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::gcra::Gcra;
    use crate::core::syntax::tests::errors_name_declared_arguments;

    fn split(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    fn slide(limit: u64, window_ms: u64, cost: u64) -> LimitRequest {
        LimitRequest::Slide(SlideRequest {
            limit,
            window_ms,
            cost,
        })
    }

    fn fixed(limit: u64, window_ms: u64, cost: u64) -> LimitRequest {
        LimitRequest::Fixed(FixedRequest {
            limit,
            window_ms,
            cost,
        })
    }

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

    #[test]
    fn all_lines_give_one_clause_per_key_in_order() {
        let got = AllRequest::parse(&split(
            "RL.ALL 2 u:{1} o:{1} SLIDE 10 1000 COST 2 FIXED 1000 3600000",
        ))
        .unwrap();
        assert_eq!(
            got.clauses,
            vec![slide(10, 1000, 2), fixed(1000, 3_600_000, 1)]
        );
        // Keys may look like algorithm tokens: keys sit at fixed positions.
        let got =
            AllRequest::parse(&split("RL.ALL 2 SLIDE FIXED fixed 5 100 slide 3 100")).unwrap();
        assert_eq!(got.clauses, vec![fixed(5, 100, 1), slide(3, 100, 1)]);
    }

    #[test]
    fn bad_all_lines_name_the_problem() {
        let arity = RlError::WrongArity { command: "rl.all" };
        let clause = |n, e: RlError| e.in_clause(n);
        let cases = [
            ("RL.ALL 1 k", arity.clone()),
            ("RL.ALL 2 a b SLIDE", arity),
            (
                "RL.ALL 0 k SLIDE 1 1",
                RlError::OutOfRange {
                    arg: "numkeys",
                    max: MAX_CLAUSES,
                },
            ),
            (
                "RL.ALL 17 k SLIDE 1 1",
                RlError::OutOfRange {
                    arg: "numkeys",
                    max: MAX_CLAUSES,
                },
            ),
            ("RL.ALL 2 k k SLIDE 1 1 SLIDE 1 1", RlError::DuplicateKey),
            ("RL.ALL 1 k 10 1000", RlError::UnknownLimiter("10".into())),
            (
                "RL.ALL 1 k SLIDE 1 100 FIXED 1 100",
                RlError::ClauseCount {
                    keys: 1,
                    clauses: 2,
                },
            ),
            (
                "RL.ALL 2 a b SLIDE 1 100 COST 1 2",
                RlError::ClauseCount {
                    keys: 2,
                    clauses: 1,
                },
            ),
            (
                "RL.ALL 2 a b SLIDE 1 100 FIXED 0 100",
                clause(
                    2,
                    RlError::OutOfRange {
                        arg: "limit",
                        max: crate::core::fixed_request::MAX_LIMIT,
                    },
                ),
            ),
            (
                "RL.ALL 2 a b SLIDE 1 100 COST 2 FIXED 1 100",
                clause(1, RlError::CostAboveLimit),
            ),
            (
                "RL.ALL 1 a THROTTLE 1 1",
                clause(
                    1,
                    RlError::LimiterArity {
                        command: "rl.all",
                        usage: "THROTTLE max_burst count period [quantity]".into(),
                    },
                ),
            ),
            (
                "RL.ALL 2 a b SLIDE 1000 100 COST 60 SLIDE 1000 100 COST 41",
                RlError::SlideCostTotal { max: 100 },
            ),
        ];
        for (line, want) in cases {
            assert_eq!(AllRequest::parse(&split(line)), Err(want), "{line}");
        }
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        errors_name_declared_arguments(&ALL, "RL.ALL 1 k SLIDE 10 1000", AllRequest::parse);
    }
}

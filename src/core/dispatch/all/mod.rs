//! `RL.ALL numkeys key [key ...] clause [clause ...]`: several limits at
//! once, clause `i` on key `i`, each parsed by its limiter's own parser;
//! [`combine`] joins their decisions.

pub mod combine;

use crate::core::args::positive;
use crate::core::dispatch::{Algorithm, LimitRequest};
use crate::core::error::{token_text, RlError};
use crate::core::limiter::Shares;
use crate::core::slide::request::MAX_COST;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};
use smallvec::SmallVec;

/// Most clauses (and keys) one `RL.ALL` call may name. 8 (it was 16): each
/// clause costs the function edition a decision in Lua, and 16 of them
/// held the server past 1 ms.
pub const MAX_CLAUSES: u64 = 8;

/// One item per clause, the first four inline: an `RL.ALL` call of up to
/// four clauses (most requests; an Envoy request's descriptors) allocates
/// nothing for its clauses, their decisions or their replies (an
/// allocation and its free cost about 200 instructions, against about
/// 11,000 for a whole `FIXED` clause). Up to [`MAX_CLAUSES`] the rest
/// spill to the heap: inline room for eight made every call copy twice
/// as many bytes.
pub type PerClause<T> = SmallVec<[T; 4]>;

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
    pub clauses: PerClause<LimitRequest>,
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

    /// The bounds on work the clauses share, by kind.
    pub fn shares(&self) -> Shares {
        Shares {
            slides: self.count_of(Algorithm::Slide),
            slide_cost: self.slide_cost(),
            buckets: self.count_of(Algorithm::Buckets),
        }
    }

    /// `args` is the whole command line, name included.
    pub fn parse(args: &[&[u8]]) -> Result<AllRequest, RlError> {
        let mut req = AllRequest {
            clauses: PerClause::new(),
        };
        req.parse_into(args)?;
        Ok(req)
    }

    /// [`AllRequest::parse`] into a request the caller keeps (without
    /// clauses yet): the clauses are parsed where they stay, not copied
    /// there (several hundred bytes) on the way out.
    pub fn parse_into(&mut self, args: &[&[u8]]) -> Result<(), RlError> {
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
        // Where each clause starts, and its limiter. An ACQUIRE clause's
        // `ID id` may spell an algorithm token: the word after `ID` never
        // starts a clause. Every start is counted (the error names how
        // many there are), the first `numkeys` kept.
        let mut starts = [(0, Algorithm::Slide); MAX_CLAUSES as usize];
        let mut found = 0;
        for (i, word) in rest.iter().enumerate() {
            let Some(algorithm) = Algorithm::from_token(word) else {
                continue;
            };
            if i > 0 && rest[i - 1].eq_ignore_ascii_case(b"ID") {
                continue;
            }
            if let Some(slot) = starts.get_mut(found) {
                *slot = (i, algorithm);
            }
            found += 1;
        }
        if found != numkeys {
            return Err(RlError::ClauseCount {
                keys: numkeys,
                clauses: found,
            });
        }
        let starts = &starts[..numkeys];
        let clauses = &mut self.clauses;
        let mut slide_cost = 0;
        // A clause's line: its token, its key and its parameters (a dozen
        // with every option; longer ones spill to the heap).
        let mut line: SmallVec<[&[u8]; 16]> = SmallVec::new();
        for (i, &(start, algorithm)) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(rest.len(), |s| s.0);
            line.clear();
            line.push(rest[start]);
            line.push(keys[i]);
            line.extend_from_slice(&rest[start + 1..end]);
            let clause = LimitRequest::parse_as(algorithm, &line, &ALL, false)
                .map_err(|e| e.in_clause(i + 1))?;
            if let LimitRequest::Slide(r) = &clause {
                slide_cost += r.cost;
            }
            clauses.push(clause);
        }
        // Each unit of a SLIDE cost is a member to insert: one call inserts
        // at most MAX_COST of them, across all its clauses.
        if slide_cost > MAX_COST {
            return Err(RlError::SlideCostTotal { max: MAX_COST });
        }
        Ok(())
    }

    /// The SLIDE clauses' costs together.
    fn slide_cost(&self) -> u64 {
        self.clauses
            .iter()
            .map(|c| match c {
                LimitRequest::Slide(r) => r.cost,
                _ => 0,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::dispatch::test_lines::{fixed, slide, split};
    use crate::core::syntax::tests::errors_name_declared_arguments;

    #[test]
    fn all_lines_give_one_clause_per_key_in_order() {
        let got = AllRequest::parse(&split(
            "RL.ALL 2 u:{1} o:{1} SLIDE 10 1000 COST 2 FIXED 1000 3600000",
        ))
        .unwrap();
        assert_eq!(
            got.clauses.to_vec(),
            vec![slide(10, 1000, 2), fixed(1000, 3_600_000, 1)]
        );
        // Keys may look like algorithm tokens: keys sit at fixed positions.
        let got =
            AllRequest::parse(&split("RL.ALL 2 SLIDE FIXED fixed 5 100 slide 3 100")).unwrap();
        assert_eq!(
            got.clauses.to_vec(),
            vec![fixed(5, 100, 1), slide(3, 100, 1)]
        );
    }

    #[test]
    fn an_acquire_clause_may_name_its_id_as_a_limiter_token() {
        use crate::core::lease::request::AcquireRequest;
        use crate::core::lease::set::LeaseId;
        let got = AllRequest::parse(&split(
            "RL.ALL 2 r j SLIDE 10 1000 ACQUIRE 3 60000 ID fixed",
        ))
        .unwrap();
        let acquire = LimitRequest::Acquire(AcquireRequest {
            limit: 3,
            lease_ms: 60_000,
            id: Some(LeaseId::named(b"fixed", "ID").unwrap()),
        });
        assert_eq!(got.clauses.to_vec(), vec![slide(10, 1000, 1), acquire]);
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
                "RL.ALL 9 k SLIDE 1 1",
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
                        max: crate::core::fixed::request::MAX_LIMIT,
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
                        usage: "THROTTLE max_burst count period [quantity] [BLOCK ms]".into(),
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

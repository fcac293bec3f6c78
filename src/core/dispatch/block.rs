//! `RL.BLOCK <limiter> key ms` and `RL.UNBLOCK <limiter> key`: the
//! commands that name the limiter whose key they block or unblock. What a
//! block is, and how a limiter's own `BLOCK ms` option reads, is
//! [`crate::core::options::block`].

use super::{Algorithm, NAMED_LIMITER_KEY};
use crate::core::args::positive;
use crate::core::error::{token_text, RlError};
use crate::core::options::block::MAX_BLOCK_MS;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Where `RL.BLOCK` and `RL.UNBLOCK` take their key: after the limiter.
pub const BLOCK_KEY: usize = NAMED_LIMITER_KEY;

/// `RL.BLOCK`'s name and arguments.
#[rustfmt::skip]
pub const BLOCK: Syntax = Syntax {
    command: c"rl.block",
    args: &[
        ArgSpec { name: c"limiter", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"ms", kind: ArgKind::Integer, token: None, optional: false },
    ],
};

/// `RL.UNBLOCK`'s name and arguments.
#[rustfmt::skip]
pub const UNBLOCK: Syntax = Syntax {
    command: c"rl.unblock",
    args: &[
        ArgSpec { name: c"limiter", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
    ],
};

/// The limiters a block applies to: those with a `BLOCK` option.
fn blockable(token: &[u8], command: &'static str) -> Result<Algorithm, RlError> {
    match Algorithm::from_token(token) {
        Some(
            a @ (Algorithm::Slide | Algorithm::Buckets | Algorithm::Throttle | Algorithm::Fixed),
        ) => Ok(a),
        Some(a) => Err(RlError::NotBlockable {
            command,
            limiter: a.token(),
        }),
        None => Err(RlError::UnknownLimiter(token_text(token))),
    }
}

/// `RL.BLOCK <limiter> key ms`: sets the key's block to end `ms` from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRequest {
    pub limiter: Algorithm,
    pub ms: u64,
}

impl BlockRequest {
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        BLOCK.check_count(args.len())?;
        let limiter = blockable(args[1], "RL.BLOCK")?;
        let ms = positive(args[3], "ms", MAX_BLOCK_MS)?;
        Ok(BlockRequest { limiter, ms })
    }
}

/// `RL.UNBLOCK <limiter> key`: lifts the key's block, keeping its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnblockRequest {
    pub limiter: Algorithm,
}

impl UnblockRequest {
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        UNBLOCK.check_count(args.len())?;
        let limiter = blockable(args[1], "RL.UNBLOCK")?;
        Ok(UnblockRequest { limiter })
    }
}

/// `RL.BLOCK` and `RL.UNBLOCK` over the string limiters' key, by the
/// limiter named: each reads its own state (`throttle/block.rs`,
/// `fixed/block.rs`).
pub mod string {
    use super::Algorithm;
    use crate::core::error::RlError;
    use crate::core::limiter::Now;
    use crate::core::string_key::{StringChange, StringView, StringWrite};
    use crate::core::{fixed, throttle};

    pub fn block(
        limiter: Algorithm,
        view: &impl StringView,
        now: Now,
        until: i64,
    ) -> Result<StringWrite, RlError> {
        match limiter {
            Algorithm::Throttle => throttle::block::block(view, now, until),
            Algorithm::Fixed => fixed::block::block(view, now, until),
            _ => Err(RlError::Internal("a string block for another limiter")),
        }
    }

    pub fn unblock(
        limiter: Algorithm,
        view: &impl StringView,
        now: Now,
    ) -> Result<Option<StringChange>, RlError> {
        match limiter {
            Algorithm::Throttle => throttle::block::unblock(view, now),
            Algorithm::Fixed => fixed::block::unblock(view, now),
            _ => Err(RlError::Internal("a string block for another limiter")),
        }
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
    fn block_lines_name_the_problem() {
        let ok = |limiter, ms| Ok(BlockRequest { limiter, ms });
        let cases = [
            ("RL.BLOCK FIXED k 1000", ok(Algorithm::Fixed, 1000)),
            ("RL.BLOCK throttle k 1", ok(Algorithm::Throttle, 1)),
            (
                "RL.BLOCK FIXED k 1000000000000",
                ok(Algorithm::Fixed, MAX_BLOCK_MS),
            ),
            (
                "RL.BLOCK FIXED k",
                Err(RlError::WrongArity {
                    command: "rl.block",
                }),
            ),
            (
                "RL.BLOCK FIXED k 1 2",
                Err(RlError::WrongArity {
                    command: "rl.block",
                }),
            ),
            (
                "RL.BLOCK FIXED k 0",
                Err(RlError::OutOfRange {
                    arg: "ms",
                    max: MAX_BLOCK_MS,
                }),
            ),
            (
                "RL.BLOCK FIXED k 1000000000001",
                Err(RlError::OutOfRange {
                    arg: "ms",
                    max: MAX_BLOCK_MS,
                }),
            ),
            (
                "RL.BLOCK ACQUIRE k 5",
                Err(RlError::NotBlockable {
                    command: "RL.BLOCK",
                    limiter: "ACQUIRE",
                }),
            ),
            (
                "RL.BLOCK GCRA k 5",
                Err(RlError::UnknownLimiter("GCRA".into())),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(BlockRequest::parse(&split(line)), want, "{line}");
        }
        errors_name_declared_arguments(&BLOCK, "RL.BLOCK FIXED k 5", BlockRequest::parse);
    }

    #[test]
    fn unblock_lines_name_the_problem() {
        let cases = [
            (
                "RL.UNBLOCK FIXED k",
                Ok(UnblockRequest {
                    limiter: Algorithm::Fixed,
                }),
            ),
            (
                "RL.UNBLOCK FIXED k 5",
                Err(RlError::WrongArity {
                    command: "rl.unblock",
                }),
            ),
            (
                "RL.UNBLOCK ACQUIRE k",
                Err(RlError::NotBlockable {
                    command: "RL.UNBLOCK",
                    limiter: "ACQUIRE",
                }),
            ),
            ("RL.UNBLOCK X k", Err(RlError::UnknownLimiter("X".into()))),
        ];
        for (line, want) in cases {
            assert_eq!(UnblockRequest::parse(&split(line)), want, "{line}");
        }
    }

    mod strings {
        use super::super::string::{block, unblock};
        use super::super::*;
        use crate::core::decision::Decision;
        use crate::core::fixed::request::FixedRequest;
        use crate::core::limiter::{Call, Limiter, Now};
        use crate::core::string_key::{MemoryString, StringChange, StringWrite};
        use crate::core::throttle::gcra::Gcra;
        use crate::core::throttle::request::ThrottleRequest;

        fn at(ms: i64) -> Now {
            Now { ms, us: ms * 1000 }
        }

        fn fixed(block_ms: Option<u64>) -> FixedRequest {
            FixedRequest {
                limit: 2,
                window_ms: 1000,
                cost: 1,
                block_ms,
            }
        }

        fn run<L: Limiter<MemoryString, Write = StringWrite, Answer = Decision>>(
            s: &mut MemoryString,
            r: &L,
            ms: i64,
        ) -> Decision {
            let out = r.decide(s, &Call::one(at(ms))).unwrap();
            if let Some(w) = &out.write {
                s.apply(w);
            }
            out.decision
        }

        #[test]
        fn the_first_denial_blocks_and_later_calls_count_nothing() {
            let mut s = MemoryString::default();
            let r = fixed(Some(5_000));
            assert!(run(&mut s, &r, 10_000).allowed);
            assert!(run(&mut s, &r, 10_001).allowed);
            let first = run(&mut s, &r, 10_002);
            assert_eq!((first.allowed, first.blocked), (false, false));
            // The breach answers the block's wait, not the window's 998 ms.
            assert_eq!(first.to_reply(), [0, 0, 5_000, 5_000]);
            assert_eq!(s.value.as_deref(), Some(&b"2e11000b15002"[..]));
            assert_eq!(s.expire_at_ms, Some(15_002));
            let before = s.clone();
            // Past the window's end, still blocked: denied, nothing written.
            for ms in [10_003, 11_000, 15_001] {
                let d = run(&mut s, &fixed(None), ms);
                assert!(d.blocked && !d.allowed, "{ms}");
                assert_eq!(d.retry_after_ms as i64, 15_002 - ms);
                assert_eq!(s, before);
            }
            // The block's end: a new window.
            let d = run(&mut s, &r, 15_002);
            assert!(d.allowed);
            assert_eq!(s.value.as_deref(), Some(&b"1"[..]));
            assert_eq!(s.expire_at_ms, Some(16_002));
        }

        #[test]
        fn a_denial_without_block_writes_nothing_on_a_blocked_key() {
            let mut s = MemoryString::default();
            s.apply(&block(Algorithm::Fixed, &s, at(1_000), 9_000).unwrap());
            assert_eq!(s.value.as_deref(), Some(&b"0e1000b9000"[..]));
            let before = s.clone();
            assert!(run(&mut s, &fixed(Some(50)), 1_500).blocked);
            assert_eq!(s, before);
        }

        #[test]
        fn unblock_keeps_the_counts_or_drops_what_has_ended() {
            let mut s = MemoryString::default();
            let r = fixed(None);
            assert!(run(&mut s, &r, 10_000).allowed);
            s.apply(&block(Algorithm::Fixed, &s, at(10_100), 20_000).unwrap());
            assert_eq!(s.value.as_deref(), Some(&b"1e11000b20000"[..]));
            assert_eq!(
                unblock(Algorithm::Fixed, &s, at(10_200)).unwrap(),
                Some(StringChange::Set(StringWrite::counter(1, 11_000)))
            );
            // Once the window is over, lifting the block deletes the key.
            assert_eq!(
                unblock(Algorithm::Fixed, &s, at(11_000)).unwrap(),
                Some(StringChange::Delete)
            );
            // A block that ended is nothing to lift.
            assert_eq!(unblock(Algorithm::Fixed, &s, at(20_000)).unwrap(), None);
            assert_eq!(
                unblock(Algorithm::Fixed, &MemoryString::default(), at(1)).unwrap(),
                None
            );
        }

        #[test]
        fn a_throttle_block_keeps_the_tat() {
            let now = 1_800_000_000_000;
            let r = ThrottleRequest {
                rate: Gcra::new(0, 1, 1_000_000).unwrap(),
                quantity: 1,
                block_ms: Some(60_000),
            };
            let mut s = MemoryString::default();
            assert!(run(&mut s, &r, now).allowed);
            let tat = (now + 1000) * 1000;
            assert_eq!(run(&mut s, &r, now + 1).to_reply(), [0, 0, 60_000, 60_000]);
            let want = format!("{tat}e{}b{}", now + 1000, now + 60_001);
            assert_eq!(s.value.as_deref(), Some(want.as_bytes()));
            assert_eq!(s.expire_at_ms, Some(now + 60_001));
            let d = run(&mut s, &r, now + 2_000);
            assert!(d.blocked);
            assert_eq!(d.to_reply(), [0, 0, 58_001, 58_001]);
            assert_eq!(
                unblock(Algorithm::Throttle, &s, at(now + 500)).unwrap(),
                Some(StringChange::Set(StringWrite::plain(
                    tat as u64,
                    now + 1000
                )))
            );
            assert_eq!(
                unblock(Algorithm::Throttle, &s, at(now + 1000)).unwrap(),
                Some(StringChange::Delete)
            );
            // By hand on a missing key: an idle TAT at now.
            let w = block(
                Algorithm::Throttle,
                &MemoryString::default(),
                at(now),
                now + 5,
            )
            .unwrap();
            assert_eq!(
                w.blocked_bytes(),
                Some(format!("{}e{now}b{}", now * 1000, now + 5))
            );
        }
    }
}

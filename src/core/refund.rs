//! `RL.REFUND <limiter> key <parameters>`: gives back units a limiter
//! admitted and still counts. The request is parsed by the named limiter's
//! own parser (as `RL.PEEK`'s); the units are its `COST` (`THROTTLE`: its
//! `quantity`). Each limiter's folder implements the refund over its own
//! storage kind (`slide/refund.rs`, `buckets/refund.rs`, ...), as a
//! [`Limiter`](super::limiter::Limiter) whose answer is the units given back.

use super::any::{
    parse_named, refuse_block, Algorithm, LimitRequest, NAMED_LIMITER_ARGS, NAMED_LIMITER_KEY,
};
use super::charge::{Charge, Charged};
use super::decision::Decision;
use super::error::RlError;
use super::limiter::{Decides, Limiter};
use super::syntax::Syntax;

/// Where `RL.REFUND`'s key is: `RL.REFUND <algorithm> key ...`.
pub const REFUND_KEY: usize = NAMED_LIMITER_KEY;

/// `RL.REFUND`'s name and arguments.
pub const REFUND: Syntax = Syntax {
    command: c"rl.refund",
    args: NAMED_LIMITER_ARGS,
};

/// `RL.REFUND <algorithm> key <parameters>`: the request whose units to
/// give back.
pub fn parse_refund(args: &[&[u8]]) -> Result<LimitRequest, RlError> {
    REFUND.check_count(args.len())?;
    // A lease is given back whole, by its id: RL.RELEASE. Refused before
    // ACQUIRE's own parser runs, so no error advertises a form (its usage,
    // a bad argument) that would be refused anyway.
    if Algorithm::from_token(args[1]) == Some(Algorithm::Acquire) {
        return Err(RlError::NotRefundable { limiter: "ACQUIRE" });
    }
    refuse_block(args, &REFUND)?;
    // The usage offers the limiter's parameters without the BLOCK it refuses.
    parse_named(args, &REFUND).map_err(|e| match e {
        RlError::LimiterArity { command, usage } => RlError::LimiterArity {
            command,
            usage: usage.replace(" [BLOCK ms]", ""),
        },
        e => e,
    })
}

/// A limiter request as `RL.REFUND` reads it.
pub trait Units: Copy {
    /// The units to give back: the request's `COST` (THROTTLE: `quantity`).
    fn units(&self) -> u64;
    /// The same request for `n` units (`UPTO`'s grant of what fits).
    fn with_units(&self, n: u64) -> Self;
    /// The same request without `BLOCK`: what `UPTO` asks first, whose
    /// denial must carry the limiter's own figures (how much fits), not a
    /// breach's.
    fn without_block(&self) -> Self {
        *self
    }
    /// The same request for one unit: what `RL.REFUND` reports on after
    /// giving back (as `RL.PEEK` would answer for it).
    fn unit(&self) -> Self {
        self.with_units(1)
    }
}

/// The refund of a request's units: implements the limiter interface for
/// each limiter's request, answering the units actually given back (0 to
/// [`Units::units`]) with the write in the storage kind's shape; `None`
/// when there is nothing to give back. Every check the limiter's own
/// command makes on the key happens first, with the same errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refund<R>(pub R);

/// A limiter request with every verb rl has for it over the view `V`: its
/// own decision, and its refund (`RL.REFUND`) and charge (`RL.CHARGE`)
/// over the same view and write. Implemented for every request whose
/// refund and charge are; the host's one table of limiters asks for this.
pub trait Refundable<V>: Limiter<V, Answer: Decides> + Units {
    type Refund: Limiter<V, Write = Self::Write, Answer = u64>;
    type Charge: Limiter<V, Write = Self::Write, Answer = Charged>;
    fn refund(&self) -> Self::Refund;
    fn charge(&self) -> Self::Charge;
}

impl<V, R> Refundable<V> for R
where
    R: Limiter<V> + Units,
    R::Answer: Decides,
    Refund<R>: Limiter<V, Write = R::Write, Answer = u64>,
    Charge<R>: Limiter<V, Write = R::Write, Answer = Charged>,
{
    type Refund = Refund<R>;
    type Charge = Charge<R>;
    fn refund(&self) -> Refund<R> {
        Refund(*self)
    }
    fn charge(&self) -> Charge<R> {
        Charge(*self)
    }
}

/// The reply's shape: units given back, then the decision a request of one
/// unit would get right after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refunded {
    pub refunded: u64,
    pub after: Decision,
}

impl Refunded {
    /// `[refunded, remaining, retry_after_ms, reset_after_ms]`.
    pub fn to_reply(&self) -> [i64; 4] {
        let [_, remaining, retry, reset] = self.after.to_reply();
        [
            i64::try_from(self.refunded).unwrap_or(i64::MAX),
            remaining,
            retry,
            reset,
        ]
    }
}

/// What a run of admissions and refunds did, in call order, to check the
/// limiters' one promise under refunds: no window of the key's own length
/// admits more than `limit` beyond what refunds in it really gave back.
#[cfg(test)]
pub(crate) mod ledger {
    #[derive(Debug, Default)]
    pub struct Ledger {
        /// `(time, admitted)` for an admission, `(time, -given_back)` for a
        /// refund.
        events: Vec<(i64, i128)>,
    }

    impl Ledger {
        pub fn admitted(&mut self, at: i64, units: u64) {
            self.events.push((at, i128::from(units)));
        }

        pub fn refunded(&mut self, at: i64, units: u64) {
            self.events.push((at, -i128::from(units)));
        }

        /// Every window `(t - window, t]` ending at an admission, counted
        /// up to that call: what it admitted net of what was given back in
        /// it never exceeds `limit`. (A refund can only take back units
        /// admitted before it, so one before the window frees nothing in
        /// it.) Times must not decrease.
        pub fn never_over_admits(&self, window: i64, limit: u64) -> Result<(), String> {
            for (j, &(t, units)) in self.events.iter().enumerate() {
                if units <= 0 {
                    continue;
                }
                let net: i128 = self.events[..=j]
                    .iter()
                    .filter(|&&(at, _)| at > t - window)
                    .map(|&(_, u)| u)
                    .sum();
                if net > i128::from(limit) {
                    return Err(format!(
                        "{net} net in the window ending at {t} (limit {limit}): {:?}",
                        self.events
                    ));
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::any::test_lines::{fixed, slide, split};
    use crate::core::buckets::request::BucketsRequest;
    use crate::core::decision::Decision;
    use crate::core::throttle::gcra::Gcra;
    use crate::core::throttle::request::ThrottleRequest;

    #[test]
    fn refund_lines_use_each_limiters_parser() {
        let throttle = LimitRequest::Throttle(ThrottleRequest {
            rate: Gcra::new(4, 5, 1_000_000).unwrap(),
            quantity: 0,
            block_ms: None,
        });
        let buckets = LimitRequest::Buckets(BucketsRequest {
            limit: 10,
            window_ms: 1000,
            precision: Some(100),
            cost: 2,
            block_ms: None,
        });
        let cases = [
            ("RL.REFUND SLIDE k 10 1000", slide(10, 1000, 1)),
            ("RL.REFUND slide k 10 1000 COST 3", slide(10, 1000, 3)),
            ("RL.REFUND BUCKETS k 10 1000 PRECISION 100 COST 2", buckets),
            ("RL.REFUND THROTTLE k 4 5 1000 0", throttle),
            ("RL.REFUND Fixed k 7 500", fixed(7, 500, 1)),
        ];
        for (line, want) in cases {
            assert_eq!(parse_refund(&split(line)), Ok(want), "{line}");
        }
    }

    #[test]
    fn bad_refund_lines_name_the_problem() {
        let cases = [
            (
                "RL.REFUND SLIDE",
                RlError::WrongArity {
                    command: "rl.refund",
                },
            ),
            (
                "RL.REFUND GCRA k 1 2 3",
                RlError::UnknownLimiter("GCRA".into()),
            ),
            (
                "RL.REFUND FIXED k 10",
                RlError::LimiterArity {
                    command: "rl.refund",
                    usage: "FIXED key limit window [COST cost]".into(),
                },
            ),
            // A refund never denies: BLOCK is refused by name.
            (
                "RL.REFUND FIXED k 10 1000 BLOCK 100",
                RlError::BlockOnlyInLimiters {
                    command: "rl.refund".into(),
                },
            ),
            ("RL.REFUND SLIDE k 10 1000 COST 11", RlError::CostAboveLimit),
            (
                "RL.REFUND ACQUIRE k 3 1000",
                RlError::NotRefundable { limiter: "ACQUIRE" },
            ),
            // Whatever follows: not ACQUIRE's usage, nor its errors.
            (
                "RL.REFUND acquire k",
                RlError::NotRefundable { limiter: "ACQUIRE" },
            ),
            (
                "RL.REFUND ACQUIRE k 0 1000 ID",
                RlError::NotRefundable { limiter: "ACQUIRE" },
            ),
            (
                "RL.REFUND ACQUIRE",
                RlError::WrongArity {
                    command: "rl.refund",
                },
            ),
            (
                "RL.REFUND THROTTLE k 1 1 1000 3",
                RlError::QuantityAboveBurst,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_refund(&split(line)), Err(want), "{line}");
        }
    }

    #[test]
    fn the_reply_puts_the_units_first() {
        let r = Refunded {
            refunded: 3,
            after: Decision {
                allowed: true,
                remaining: 4,
                retry_after_ms: 0,
                reset_after_ms: 900,
                blocked: false,
            },
        };
        assert_eq!(r.to_reply(), [3, 4, 0, 900]);
    }
}

//! `UPTO`, the partial grant of `RL.SLIDE`, `RL.BUCKETS`, `RL.THROTTLE` and
//! `RL.FIXED`: a request of `cost` units admits `min(cost, what fits now)`
//! when at least one unit fits (a batch job asking for 500 and taking what
//! there is), and is denied as usual otherwise. Only the limiters' own
//! commands take it; their reply gains a fifth integer, the units granted,
//! so a caller that does not write `UPTO` gets today's reply.
//!
//! Any limiter's denial already says what fits: its `remaining`. The grant
//! is that limiter's own decision, taken again for what fits, so the
//! write, the expiry and the reply are those of an admission of that cost.

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::Units;
use crate::core::limiter::{Answer, Call, Limiter, Outcome};
use crate::core::syntax::Syntax;

/// The line without its `UPTO` (a flag anywhere after the required
/// positional arguments), or `None` when it has none: the plain line is
/// left as it is, with no copy. `UPTO` twice is an error.
pub fn take_upto<'a>(syntax: &Syntax, args: &[&'a [u8]]) -> Result<Option<Vec<&'a [u8]>>, RlError> {
    let from = 1 + syntax.args.iter().filter(|a| !a.optional).count();
    let is_upto = |a: &[u8]| a.eq_ignore_ascii_case(b"UPTO");
    let found = args.iter().skip(from).filter(|a| is_upto(a)).count();
    match found {
        0 => Ok(None),
        1 => Ok(Some(
            args.iter()
                .enumerate()
                .filter(|(i, a)| *i < from || !is_upto(a))
                .map(|(_, a)| *a)
                .collect(),
        )),
        _ => Err(RlError::DuplicateOption { option: "UPTO" }),
    }
}

/// A request that admits what fits of its units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpTo<R>(pub R);

/// The decision of an `UPTO` request, and the units it granted (0 when
/// denied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granted {
    pub decision: Decision,
    pub granted: u64,
}

impl Granted {
    /// `[allowed, remaining, retry_after_ms, reset_after_ms, granted]`.
    pub fn to_reply(&self) -> [i64; 5] {
        let [a, r, retry, reset] = self.decision.to_reply();
        [
            a,
            r,
            retry,
            reset,
            i64::try_from(self.granted).unwrap_or(i64::MAX),
        ]
    }
}

impl Answer for Granted {
    fn denied(&self) -> bool {
        !self.decision.allowed
    }

    /// Admitted with the denial's figures; `granted` stays what
    /// enforcement granted (0), so the reply says the limit had no room.
    fn shadowed(self) -> Self {
        Granted {
            decision: self.decision.shadowed(),
            ..self
        }
    }

    fn blocked(&self) -> bool {
        self.decision.blocked
    }
}

impl<V, R> Limiter<V> for UpTo<R>
where
    R: Limiter<V, Answer = Decision> + Units,
{
    type Write = R::Write;
    type Answer = Granted;

    /// The whole cost when it fits. Otherwise the limiter's decision for
    /// what fits (its denial's `remaining`, at least 1): an admission of
    /// that many, or, when not even one unit fits, the denial of one unit,
    /// whose wait is until one fits.
    fn decide(&self, view: &mut V, call: &Call) -> Result<Outcome<R::Write, Granted>, RlError> {
        let req = &self.0;
        // Without BLOCK: a breach would hide what fits (its remaining is 0).
        let whole = req.without_block().decide(view, call)?;
        if whole.decision.allowed {
            return Ok(Outcome {
                decision: Granted {
                    decision: whole.decision,
                    granted: req.units(),
                },
                write: whole.write,
            });
        }
        let fits = whole.decision.remaining.min(req.units()).max(1);
        let part = req.with_units(fits).decide(view, call)?;
        let granted = if part.decision.allowed { fits } else { 0 };
        Ok(Outcome {
            decision: Granted {
                decision: part.decision,
                granted,
            },
            write: part.write,
        })
    }
}

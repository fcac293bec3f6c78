//! Combining the decisions of several limiters into one (`RL.ALL`).
//!
//! Every clause is decided first, against its own key, with nothing
//! written; the request is admitted only if every clause admits it, and only
//! then are the clauses' effects applied. So a denial in any clause records
//! nothing in any of them.
//!
//! The combined wait is the largest wait among the denying clauses. That is
//! exact, not just sufficient, as long as nothing else is recorded in these
//! keys meanwhile: every limiter here is monotone in time (with no new
//! admissions, a request that fits at `t` fits at any later `t'`: entries
//! and buckets only leave, a TAT only falls behind `now`, a window only
//! ends), so at the largest wait every clause admits, and one ms earlier the
//! clause that needed it still denies. Clauses do not interact through the
//! wait, because a denied call records nothing in any of them. Other clients
//! sharing a key (an organisation-wide limit) can of course use up the room
//! before the caller retries: the wait is a forecast, like every
//! `retry_after_ms`.

use crate::core::decision::Decision;
use crate::core::lease::set::LeaseId;

use super::PerClause;

/// The answer of a multi-limit check. Field order is the reply order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combined {
    /// Every clause admitted (and so every clause recorded the request).
    pub allowed: bool,
    /// 0 when admitted; otherwise the wait after which every clause admits
    /// the same request, if nothing else is recorded in their keys.
    pub retry_after_ms: u64,
    /// Each clause's own decision, in clause order. In a denied call the
    /// clauses that would admit answer as `RL.PEEK` does (their remaining
    /// counted as if admitted), though nothing was recorded.
    pub clauses: PerClause<Decision>,
    /// Per clause, when any clause is a lease (else empty): `None` for a
    /// clause that is not, `Some(lease)` for one that is, the lease `None`
    /// unless the call was admitted and recorded it.
    pub leases: Vec<Option<Option<LeaseId>>>,
}

/// Combines the clauses' decisions (at least one).
pub fn combine(clauses: PerClause<Decision>) -> Combined {
    let allowed = clauses.iter().all(|d| d.allowed);
    let retry_after_ms = clauses
        .iter()
        .filter(|d| !d.allowed)
        .map(|d| d.retry_after_ms)
        .max()
        .unwrap_or(0);
    Combined {
        allowed,
        retry_after_ms,
        clauses,
        leases: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::fixed::decide::{self as fixed, FixedState};
    use crate::core::fixed::request::FixedRequest;
    use crate::core::slide::decide as slide;
    use crate::core::slide::log::MemoryLog;
    use crate::core::slide::request::SlideRequest;
    use proptest::prelude::*;

    fn d(allowed: bool, remaining: u64, retry: u64, reset: u64) -> Decision {
        Decision {
            allowed,
            remaining,
            retry_after_ms: retry,
            reset_after_ms: reset,
            blocked: false,
        }
    }

    #[test]
    fn admitted_only_when_every_clause_admits() {
        // (clauses, allowed, retry_after_ms)
        let cases: &[(&[Decision], bool, u64)] = &[
            (&[d(true, 3, 0, 100)], true, 0),
            (&[d(true, 3, 0, 100), d(true, 0, 0, 5)], true, 0),
            (&[d(true, 3, 0, 100), d(false, 0, 250, 900)], false, 250),
            (&[d(false, 0, 40, 90), d(true, 1, 0, 10)], false, 40),
            (
                &[
                    d(false, 0, 40, 90),
                    d(false, 0, 700, 800),
                    d(false, 0, 5, 5),
                ],
                false,
                700,
            ),
            // An admitting clause's reset never makes the caller wait.
            (&[d(true, 0, 0, 9_000), d(false, 0, 10, 10)], false, 10),
        ];
        for (clauses, allowed, retry) in cases {
            let c = combine(clauses.iter().copied().collect());
            assert_eq!((c.allowed, c.retry_after_ms), (*allowed, *retry));
            assert_eq!(
                c.clauses.to_vec(),
                clauses.to_vec(),
                "clause replies kept in order"
            );
        }
    }

    /// Two limiters over in-memory state, the way the host runs them:
    /// decide both, apply both only if both admit.
    struct Pair {
        log: MemoryLog,
        fixed: Option<FixedState>,
        slide: SlideRequest,
        window: FixedRequest,
    }

    impl Pair {
        fn new(slide: (u64, u64), fixed: (u64, u64)) -> Pair {
            Pair {
                log: MemoryLog::new(),
                fixed: None,
                slide: SlideRequest {
                    limit: slide.0,
                    window_ms: slide.1,
                    cost: 1,
                    block_ms: None,
                },
                window: FixedRequest {
                    limit: fixed.0,
                    window_ms: fixed.1,
                    cost: 1,
                    block_ms: None,
                },
            }
        }

        /// Decides without applying.
        fn peek(&mut self, now: i64) -> Combined {
            let a = slide::decide(&mut self.log, &self.slide, now).unwrap();
            let b = fixed::decide(&self.window, self.fixed, now);
            combine([a.decision, b.decision].into_iter().collect())
        }

        fn call(&mut self, now: i64) -> Combined {
            let a = slide::decide(&mut self.log, &self.slide, now).unwrap();
            let b = fixed::decide(&self.window, self.fixed, now);
            let c = combine([a.decision, b.decision].into_iter().collect());
            if c.allowed {
                self.log.apply(&a.write.unwrap());
                let w = b.write.unwrap();
                self.fixed = Some(FixedState {
                    count: w.value,
                    expire_at_ms: Some(w.expire_at_ms),
                    blocked_until: None,
                });
            }
            c
        }
    }

    #[test]
    fn a_denial_in_the_second_clause_records_nothing_in_the_first() {
        // 10 per second (sliding) and 3 per minute (fixed).
        let mut p = Pair::new((10, 1000), (3, 60_000));
        for now in [0, 1, 2] {
            assert!(p.call(now).allowed);
        }
        let log_before = p.log.clone();
        let c = p.call(3);
        assert!(!c.allowed);
        assert!(c.clauses[0].allowed && !c.clauses[1].allowed);
        assert_eq!(c.retry_after_ms, 60_000 - 3);
        assert_eq!(p.log, log_before, "the sliding log is untouched");
        // The first clause answered as a peek: 3 held, 6 would remain.
        assert_eq!(c.clauses[0].remaining, 6);
    }

    proptest! {
        /// After any history, waiting the combined retry_after_ms admits the
        /// request in every clause, and one ms less does not.
        #[test]
        fn the_combined_wait_is_exact(
            slide in (1u64..5, 1u64..40),
            fixed in (1u64..5, 1u64..40),
            steps in proptest::collection::vec(0i64..10, 1..60),
        ) {
            let mut p = Pair::new(slide, fixed);
            let mut now = 1_000;
            for dt in steps {
                now += dt;
                let before = (p.log.clone(), p.fixed);
                let c = p.call(now);
                if !c.allowed {
                    prop_assert_eq!(&(p.log.clone(), p.fixed), &before);
                    let wait = c.retry_after_ms as i64;
                    prop_assert!(wait >= 1);
                    prop_assert!(p.peek(now + wait).allowed);
                    prop_assert!(!p.peek(now + wait - 1).allowed);
                }
            }
        }
    }
}

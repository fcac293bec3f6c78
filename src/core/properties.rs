//! Properties of issue 27's features across the string limiters (THROTTLE
//! and FIXED; SLIDE and BUCKETS have theirs beside their code), on
//! synthetic time: a block never admits, and a partial grant never admits
//! more than fits. (A charge never loses units: each limiter's
//! `charge.rs`.)

use proptest::prelude::*;

use super::decision::Decision;
use super::fixed::request::FixedRequest;
use super::limiter::{Call, Limiter, Now};
use super::options::upto::UpTo;
use super::string_key::{MemoryString, StringWrite};
use super::throttle::gcra::Gcra;
use super::throttle::request::ThrottleRequest;
use crate::core::dispatch::block::string::block;
use crate::core::dispatch::Algorithm;
use crate::core::limiter::Units;

const T0: i64 = 1_800_000_000_000;

fn now(ms: i64) -> Now {
    Now { ms, us: ms * 1000 }
}

/// One of the two string limiters, as a request of `units`.
#[derive(Debug, Clone, Copy)]
enum Req {
    Fixed(FixedRequest),
    Throttle(ThrottleRequest),
}

impl Req {
    fn of(fixed: bool, limit: u64, window_ms: u64, units: u64, block_ms: Option<u64>) -> Req {
        if fixed {
            Req::Fixed(FixedRequest {
                limit,
                window_ms,
                cost: units,
                block_ms,
            })
        } else {
            // A bucket of `limit` tokens, refilled at `limit` per window.
            Req::Throttle(ThrottleRequest {
                rate: Gcra::new(limit - 1, limit, window_ms * 1000).unwrap(),
                quantity: units,
                block_ms,
            })
        }
    }

    fn algorithm(&self) -> Algorithm {
        match self {
            Req::Fixed(_) => Algorithm::Fixed,
            Req::Throttle(_) => Algorithm::Throttle,
        }
    }

    fn with_units(&self, n: u64) -> Req {
        match self {
            Req::Fixed(r) => Req::Fixed(r.with_units(n)),
            Req::Throttle(r) => Req::Throttle(r.with_units(n)),
        }
    }

    /// The plain call's decision and write, not applied.
    fn decide(&self, s: &mut MemoryString, at: i64) -> (Decision, Option<StringWrite>) {
        let call = Call::one(now(at));
        match self {
            Req::Fixed(r) => {
                let o = r.decide(s, &call).unwrap();
                (o.decision, o.write)
            }
            Req::Throttle(r) => {
                let o = r.decide(s, &call).unwrap();
                (o.decision, o.write)
            }
        }
    }

    /// The `UPTO` call's units granted, its decision and write, not applied.
    fn grant(&self, s: &mut MemoryString, at: i64) -> (u64, Decision, Option<StringWrite>) {
        let call = Call::one(now(at));
        match self {
            Req::Fixed(r) => {
                let o = UpTo(*r).decide(s, &call).unwrap();
                (o.decision.granted, o.decision.decision, o.write)
            }
            Req::Throttle(r) => {
                let o = UpTo(*r).decide(s, &call).unwrap();
                (o.decision.granted, o.decision.decision, o.write)
            }
        }
    }

    /// Whether a plain call of `n` units would be admitted (nothing written).
    fn fits(&self, s: &MemoryString, n: u64, at: i64) -> bool {
        self.with_units(n).decide(&mut s.clone(), at).0.allowed
    }
}

proptest! {
    /// A key blocked (by hand, over whatever admissions left) denies every
    /// call until the block's end, plain or `UPTO`, of any size, with or
    /// without `BLOCK`: not admitted, remaining 0, the wait the block's
    /// time left, and nothing to write. At its end the limiter decides
    /// again.
    #[test]
    fn a_block_never_admits_and_writes_nothing(
        fixed in any::<bool>(),
        limit in 1u64..20,
        window in 1u64..5_000,
        admits in 0usize..6,
        block_ms in 1i64..100_000,
        calls in proptest::collection::vec((0i64..100_000, 1u64..30, any::<bool>(), any::<bool>()), 1..40),
    ) {
        let mut s = MemoryString::default();
        let mut t = T0;
        for _ in 0..admits {
            let (d, w) = Req::of(fixed, limit, window, 1, None).decide(&mut s, t);
            if let Some(w) = w.filter(|_| d.allowed) {
                s.apply(&w);
            }
            t += 1;
        }
        let until = t + block_ms;
        let algorithm = Req::of(fixed, limit, window, 1, None).algorithm();
        s.apply(&block(algorithm, &s, now(t), until).unwrap());
        let blocked = s.clone();
        for (dt, units, upto, with_block) in calls {
            let at = t + dt % block_ms;
            let r = Req::of(fixed, limit, window, units.min(limit), with_block.then_some(60_000));
            let (d, w) = if upto {
                let (granted, d, w) = r.with_units(units).grant(&mut s, at);
                prop_assert_eq!(granted, 0);
                (d, w)
            } else {
                r.decide(&mut s, at)
            };
            prop_assert!(!d.allowed && d.blocked, "{:?} at {}: {:?}", r, at, d);
            prop_assert_eq!(d.remaining, 0);
            prop_assert_eq!(at + d.retry_after_ms as i64, until);
            prop_assert!(w.is_none(), "{:?} at {}: writes {:?}", r, at, w);
            prop_assert_eq!(&s, &blocked);
        }
        let (d, _) = Req::of(fixed, limit, window, 1, None).decide(&mut s, until);
        prop_assert!(!d.blocked);
    }

    /// Random partial grants and plain calls on a fixed window and a token
    /// bucket: a grant never passes its cost, never more than a plain call
    /// could admit at that instant (a plain call of the granted units fits;
    /// of one more, not, unless the whole cost was granted), and grants at
    /// least one unit exactly when a plain call of one unit fits.
    #[test]
    fn a_partial_grant_never_admits_more_than_fits(
        fixed in any::<bool>(),
        limit in 1u64..20,
        window in 1u64..2_000,
        steps in proptest::collection::vec((0i64..700, any::<bool>(), 1u64..40), 1..60),
    ) {
        let mut s = MemoryString::default();
        let mut t = T0;
        for (dt, upto, cost) in steps {
            t += dt;
            if upto {
                let r = Req::of(fixed, limit, window, cost, None);
                let one_fits = r.fits(&s, 1, t);
                let (granted, d, w) = r.grant(&mut s, t);
                prop_assert!(granted <= cost);
                prop_assert_eq!(granted >= 1, one_fits, "{:?} at {}", r, t);
                prop_assert_eq!(d.allowed, granted >= 1);
                if granted >= 1 {
                    prop_assert!(r.fits(&s, granted, t));
                    if granted < cost {
                        prop_assert!(!r.fits(&s, granted + 1, t), "{:?}: {} granted", r, granted);
                    }
                    // The write is the plain admission of what was granted.
                    let (_, plain) = r.with_units(granted).decide(&mut s.clone(), t);
                    prop_assert_eq!(&w, &plain);
                } else {
                    prop_assert!(w.is_none());
                }
                if let Some(w) = &w {
                    s.apply(w);
                }
            } else {
                let r = Req::of(fixed, limit, window, cost.min(limit), None);
                let (d, w) = r.decide(&mut s, t);
                if let Some(w) = w.filter(|_| d.allowed) {
                    s.apply(&w);
                }
            }
        }
    }
}

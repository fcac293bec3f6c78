//! `RL.REFUND BUCKETS`: takes `COST` back from the buckets that still
//! count under the window it names, the newest first, never below zero.
//! The header's totals follow; an older bucket brought to zero loses its
//! field (and its bit in the held set). Nothing else is removed: the key's
//! own window is not stored, so a bucket that has left the refund's window
//! may still count for the admissions (a refund naming a shorter window
//! must not drop them), and only an admission, which knows its window,
//! evicts. A refund thus removes exactly the units it reports. The newest
//! bucket does not move, so neither does the expiry (unless the refund
//! names a longer window, which extends it as an admission would).
//!
//! Before anything is written, the reply's peek is decided over the hash
//! as the write leaves it ([`Written`]): every field it reads is checked
//! then, so no field met after the write can fail the call.

use smallvec::SmallVec;

use super::decide::keep_block;
use super::layout::{
    encode_counts, encode_header, field_counts, load_blocked, Bytes, HashView, HashWrite, Kind,
    FIELD_HEADER,
};
use super::request::BucketsRequest;
use super::window::{resolve_precision, slide};
use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Refund, Units};

impl Units for BucketsRequest {
    fn units(&self) -> u64 {
        self.cost
    }
    fn with_units(&self, n: u64) -> Self {
        BucketsRequest { cost: n, ..*self }
    }
    fn without_block(&self) -> Self {
        BucketsRequest {
            block_ms: None,
            ..*self
        }
    }
}

impl<V: HashView> Limiter<V> for Refund<BucketsRequest> {
    type Write = HashWrite;
    type Answer = u64;

    /// Reads at most the buckets one window holds (1,000).
    fn decide(&self, view: &mut V, call: &Call) -> Result<Outcome<HashWrite, u64>, RlError> {
        let req = &self.0;
        // What RL.BUCKETS loads and checks, with its errors.
        let (state, blocked_until) = load_blocked(view, Kind::Buckets)?;
        let precision = resolve_precision(req.window_ms, req.precision, state.as_ref())?;
        let win = slide(view, state.as_ref(), req.window_ms, precision, call.now.ms)?;
        let held = win.totals.first().copied().unwrap_or(0);
        let n = req.cost.min(held);
        let Some(newest) = win.newest.filter(|_| n > 0) else {
            return Ok(Outcome {
                decision: 0,
                write: None,
            });
        };
        // Something counts, so the newest bucket does (it is the last to
        // leave), and every bucket the held set names after the slide.
        let mut left = n;
        let mut current = win.newest_counts.first().copied().unwrap_or(0);
        let taken = left.min(current);
        current -= taken;
        left -= taken;
        // The stored set, not the slid one: buckets that left this window
        // keep their fields and bits.
        let stored = state.as_ref().map(|s| &s.held);
        let mut held_set = stored.cloned().unwrap_or_default();
        let mut fields = SmallVec::new();
        let mut delete = Vec::new();
        for i in win.held.bits() {
            if left == 0 {
                break;
            }
            let b = newest - 1 - i as i64;
            let count = field_counts(view, win.naming, b, 1)?[0];
            let taken = left.min(count);
            left -= taken;
            if count == taken {
                delete.push(win.naming.field(b));
                held_set.remove(i);
            } else {
                fields.push((win.naming.field(b), encode_counts(&[count - taken])));
            }
        }
        let refunded = n - left;
        // The totals of every field still held, those outside this window
        // included.
        let all_held = state.as_ref().and_then(|s| s.totals.first().copied());
        // A refund keeps the key's naming: its fields stay where they are.
        let header = encode_header(
            Kind::Buckets,
            win.naming,
            win.precision,
            newest,
            &held_set,
            &[all_held.unwrap_or(0).saturating_sub(refunded)],
            &[current],
        );
        let mut write = HashWrite {
            header,
            fields,
            delete,
            expiry: Expiry::new(win.leaves_at(newest), win.window_ms),
        };
        // A block that holds stays: a refund gives back units, not access.
        keep_block(&mut write, blocked_until, call.now.ms);
        // What the reply's peek will read, checked before the write.
        req.unit().decide(
            &mut Written {
                view,
                write: &write,
            },
            &Call::read(call.now),
        )?;
        Ok(Outcome {
            decision: refunded,
            write: Some(write),
        })
    }
}

/// The hash as `write` leaves it, read before the write is made: the host
/// sets the header and the fields, then deletes (a field in both is gone).
pub struct Written<'a, V> {
    pub view: &'a mut V,
    pub write: &'a HashWrite,
}

impl<V: HashView> HashView for Written<'_, V> {
    fn exists(&mut self) -> bool {
        // Every write sets the header.
        true
    }

    fn get(&mut self, field: &[u8]) -> Option<Bytes> {
        if self.write.delete.iter().any(|f| &f[..] == field) {
            return None;
        }
        if field == FIELD_HEADER {
            return Some(Bytes::from_slice(&self.write.header));
        }
        match self.write.fields.iter().find(|(f, _)| &f[..] == field) {
            Some((_, v)) => Some(Bytes::from_slice(v)),
            None => self.view.get(field),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buckets::layout::{decode_counts, Items, MemoryHash};
    use crate::core::decision::Decision;
    use crate::core::limiter::ledger::Ledger;
    use crate::core::limiter::Now;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    use crate::core::buckets::request::test_request as req;

    fn at(ms: i64) -> Call {
        Call::one(Now { ms, us: ms * 1000 })
    }

    fn admit(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> Decision {
        let out = r.decide(h, &at(now)).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision
    }

    fn refund(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> u64 {
        let out = Refund(*r).decide(h, &at(now)).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision
    }

    fn field(h: &MemoryHash, f: &str) -> Option<String> {
        h.fields
            .get(f.as_bytes())
            .map(|v| String::from_utf8(v.clone()).unwrap())
    }

    #[test]
    fn table_of_refunds_with_explicit_times() {
        // limit 10 per 1000 ms in buckets of 100 ms.
        let r = |cost| req(10, 1000, 100, cost);
        let mut h = MemoryHash::new();
        admit(&mut h, &r(3), 10_000); // bucket 100
        admit(&mut h, &r(2), 10_250); // bucket 102
        admit(&mut h, &r(4), 10_500); // bucket 105, in the header
        let expiry = h.expire_at_ms;
        assert_eq!(field(&h, "h").as_deref(), Some("B,100,105,14,9,4"));
        // Newest first: bucket 105 empties, 102 gives one of its two.
        assert_eq!(refund(&mut h, &r(5), 10_600), 5);
        assert_eq!(field(&h, "h").as_deref(), Some("B,100,105,14,4,0"));
        assert_eq!(field(&h, "102").as_deref(), Some("1"));
        assert_eq!(field(&h, "100").as_deref(), Some("3"));
        // 102 empties: its field and its bit (2) go.
        assert_eq!(refund(&mut h, &r(2), 10_600), 2);
        assert_eq!(field(&h, "h").as_deref(), Some("B,100,105,10,2,0"));
        assert_eq!(field(&h, "102"), None);
        assert_eq!(field(&h, "100").as_deref(), Some("2"));
        assert_eq!(h.expire_at_ms, expiry, "the expiry never moves");
        // One more in bucket 110; at 11_099 bucket 100 leaves: a refund
        // takes only from what counts, and leaves bucket 100 (and its
        // share of the totals) for the next admission to evict.
        admit(&mut h, &r(1), 11_050);
        assert_eq!(field(&h, "h").as_deref(), Some("B,100,110,200,3,1"));
        assert_eq!(refund(&mut h, &r(3), 11_099), 1);
        assert_eq!(field(&h, "100").as_deref(), Some("2"));
        assert_eq!(field(&h, "h").as_deref(), Some("B,100,110,200,2,0"));
        // Nothing counts any more: nothing given back, nothing written.
        let before = h.clone();
        assert_eq!(refund(&mut h, &r(1), 11_099), 0);
        assert_eq!(h, before);
        assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
    }

    /// Issue #23's repro: a refund naming a shorter window than the
    /// admissions used gives back what it reports and keeps the buckets
    /// that left its window but count for the key's own.
    #[test]
    fn a_shorter_window_refund_removes_only_what_it_reports() {
        let key = |cost| req(10, 10_000, 1000, cost);
        let mut h = MemoryHash::new();
        let t = 100_000;
        assert!(admit(&mut h, &key(9), t).allowed);
        assert!(admit(&mut h, &key(1), t + 3_000).allowed);
        assert!(!admit(&mut h, &key(1), t + 3_000).allowed);
        let short = req(10, 2_000, 1000, 1);
        assert_eq!(refund(&mut h, &short, t + 3_000), 1);
        assert_eq!(field(&h, "100").as_deref(), Some("9"));
        assert_eq!(field(&h, "h").as_deref(), Some("B,1000,103,4,9,0"));
        // One unit was given back: one more admitted, not ten.
        assert!(admit(&mut h, &key(1), t + 3_000).allowed);
        assert!(!admit(&mut h, &key(1), t + 3_000).allowed);
        assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
    }

    /// A key an earlier release wrote, every count padded to 9 digits: a
    /// refund rewrites what it touches plainly, so nothing grows.
    #[test]
    fn a_padded_key_is_rewritten_shorter() {
        let mut h = MemoryHash::new();
        h.fields
            .insert(b"h".to_vec(), b"b,100,105,10,000000007,000000004".to_vec());
        h.fields.insert(b"100".to_vec(), b"000000003".to_vec());
        assert_eq!(refund(&mut h, &req(10, 1000, 100, 5), 10_600), 5);
        assert_eq!(field(&h, "h").as_deref(), Some("b,100,105,10,2,0"));
        assert_eq!(field(&h, "100").as_deref(), Some("2"));
    }

    #[test]
    fn nothing_to_give_back_writes_nothing() {
        let mut h = MemoryHash::new();
        let out = Refund(req(5, 1000, 100, 1)).decide(&mut h, &at(5)).unwrap();
        assert_eq!((out.decision, out.write), (0, None));
        admit(&mut h, &req(5, 1000, 100, 1), 5);
        let out = Refund(req(5, 1000, 100, 1))
            .decide(&mut h, &at(1_099))
            .unwrap();
        assert_eq!((out.decision, out.write), (0, None));
    }

    #[test]
    fn the_commands_errors() {
        let mut h = MemoryHash::new();
        admit(&mut h, &req(5, 1000, 100, 1), 5);
        assert_eq!(
            Refund(req(5, 1000, 50, 1)).decide(&mut h, &at(6)),
            Err(RlError::PrecisionMismatch { stored: 100 })
        );
        let mut count = MemoryHash::new();
        count.fields.insert(b"h".to_vec(), b"c,100,1,0,1".to_vec());
        count.fields.insert(b"f".to_vec(), b"ok".to_vec());
        assert_eq!(
            Refund(req(5, 1000, 100, 1)).decide(&mut count, &at(6)),
            Err(RlError::WrongKind {
                found: "RL.COUNT",
                wanted: "RL.BUCKETS"
            })
        );
        // A foreign field only the reply's peek reads (its denial walk,
        // oldest first): refused before anything is written.
        let mut h = MemoryHash::new();
        admit(&mut h, &req(10, 1000, 100, 3), 10_000);
        admit(&mut h, &req(10, 1000, 100, 4), 10_500);
        h.fields.insert(b"100".to_vec(), b"x".to_vec());
        assert_eq!(
            Refund(req(5, 1000, 100, 1)).decide(&mut h, &at(10_600)),
            Err(RlError::ForeignHash)
        );
        let mut foreign = MemoryHash::new();
        foreign.fields.insert(b"name".to_vec(), b"x".to_vec());
        assert_eq!(
            Refund(req(5, 1000, 100, 1)).decide(&mut foreign, &at(6)),
            Err(RlError::ForeignHash)
        );
    }

    /// The newest bucket's count, kept in the header.
    fn current(h: &MemoryHash) -> u64 {
        h.fields.get(&b"h"[..]).map_or(0, |v| {
            let text = std::str::from_utf8(v).unwrap();
            text.rsplit(',').next().unwrap().parse().unwrap()
        })
    }

    /// The units the window counts at `now`, as the next call reads them.
    fn counted(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> u64 {
        let state = crate::core::buckets::layout::load(h, Kind::Buckets).unwrap();
        let p = resolve_precision(r.window_ms, r.precision, state.as_ref()).unwrap();
        let win = slide(h, state.as_ref(), r.window_ms, p, now).unwrap();
        win.totals.first().copied().unwrap_or(0)
    }

    proptest! {
        // Enough runs to meet the shape of issue #23 (a short-window
        // refund between admissions that fill the key's window).
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Refunds naming any window, limit and cost over admissions of
        /// one window: no window of the key's length admits more than
        /// `limit` net of what was given back, and the header names
        /// exactly the fields held.
        #[test]
        fn refunds_of_any_window_never_over_admit(
            limit in 1u64..12,
            buckets in 1u64..12,
            precision in 1u64..50,
            steps in proptest::collection::vec(
                (0u64..24, 0u8..3, 1u64..12, 1u64..16, 1u64..15, any::<bool>()),
                1..80,
            ),
        ) {
            let window = buckets * precision;
            let mut h = MemoryHash::new();
            let mut ledger = Ledger::default();
            let mut now = 50_000;
            for (dt, kind, cost, refund_buckets, refund_limit, named) in steps {
                // Steps of about a quarter bucket each, two admissions to a
                // refund: buckets leave a short refund window while the
                // key's still counts them.
                now += (dt * precision / 8) as i64;
                if kind > 0 {
                    let r = req(limit, window, precision, cost.min(limit));
                    if admit(&mut h, &r, now).allowed {
                        ledger.admitted(now, r.cost);
                    }
                } else {
                    let r = BucketsRequest {
                        limit: refund_limit,
                        window_ms: refund_buckets * precision,
                        precision: named.then_some(precision),
                        cost: cost.min(refund_limit),
                        block_ms: None,
                    };
                    let before = h.clone();
                    let given = refund(&mut h, &r, now);
                    prop_assert!(given <= r.cost);
                    // Exactly what it reports leaves the hash.
                    let held = |m: &MemoryHash| -> u64 {
                        m.fields.iter()
                            .filter(|(k, _)| Items::whole_int(k).is_some())
                            .map(|(_, v)| decode_counts(v).unwrap()[0])
                            .sum::<u64>()
                            + current(m)
                    };
                    prop_assert_eq!(held(&before) - held(&h), given);
                    // Never a new field nor a longer value: a refund can
                    // run at maxmemory.
                    for (f, v) in &h.fields {
                        let was = before.fields.get(f).map(Vec::len);
                        prop_assert!(was.is_some_and(|n| v.len() <= n), "{:?} grew", f);
                    }
                    ledger.refunded(now, given);
                }
                prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
            }
            ledger.never_over_admits(window as i64, limit).map_err(TestCaseError::fail)?;
        }
    }

    proptest! {
        /// Admits and refunds at rising times: every window counts what
        /// was admitted minus what was refunded (newest buckets first),
        /// never more than `limit`, and the header names exactly the
        /// fields held.
        #[test]
        fn the_window_holds_admitted_minus_refunded(
            limit in 1u64..12,
            buckets in 1u64..12,
            precision in 1u64..50,
            steps in proptest::collection::vec((0i64..120, any::<bool>(), 1u64..12), 1..80),
        ) {
            let window = buckets * precision;
            let mut h = MemoryHash::new();
            let mut model: BTreeMap<i64, u64> = BTreeMap::new();
            let mut now = 50_000;
            for (dt, is_admit, cost) in steps {
                now += dt;
                let r = req(limit, window, precision, cost.min(limit));
                let live_from = (now - window as i64 + 1).div_euclid(precision as i64);
                let in_window = |m: &BTreeMap<i64, u64>| m.range(live_from..).map(|(_, c)| c).sum::<u64>();
                if is_admit {
                    if admit(&mut h, &r, now).allowed {
                        *model.entry(now.div_euclid(precision as i64)).or_default() += r.cost;
                    }
                } else {
                    let held = in_window(&model);
                    let given = refund(&mut h, &r, now);
                    prop_assert_eq!(given, r.cost.min(held));
                    let mut left = given;
                    for (_, c) in model.range_mut(live_from..).rev() {
                        let t = left.min(*c);
                        *c -= t;
                        left -= t;
                    }
                }
                let got = counted(&mut h, &r, now);
                prop_assert_eq!(got, in_window(&model));
                prop_assert!(got <= limit);
                prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
            }
        }

        /// A refund never makes a later request wait longer, nor denies
        /// one that would pass without it.
        #[test]
        fn a_refund_never_makes_a_later_request_wait_longer(
            limit in 1u64..12,
            buckets in 1u64..12,
            precision in 1u64..50,
            admits in proptest::collection::vec((0i64..100, 1u64..12), 1..30),
            refund_cost in 1u64..12,
            later in 0i64..1_000,
            later_cost in 1u64..12,
        ) {
            let window = buckets * precision;
            let mut h = MemoryHash::new();
            let mut now = 50_000;
            for (dt, cost) in admits {
                now += dt;
                admit(&mut h, &req(limit, window, precision, cost.min(limit)), now);
            }
            let mut refunded = h.clone();
            refund(&mut refunded, &req(limit, window, precision, refund_cost.min(limit)), now);
            let r = req(limit, window, precision, later_cost.min(limit));
            let read = Call::read(Now { ms: now + later, us: 0 });
            let without = r.decide(&mut h, &read).unwrap().decision;
            let with = r.decide(&mut refunded, &read).unwrap().decision;
            prop_assert!(with.retry_after_ms <= without.retry_after_ms);
            prop_assert!(with.allowed || !without.allowed);
        }
    }
}

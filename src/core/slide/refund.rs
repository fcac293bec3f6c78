//! `RL.REFUND SLIDE`: removes the `COST` newest entries that still count
//! (never one that left the window), each checked to be rl's, and the one
//! after them too, which becomes the newest. Nothing else moves: the expiry
//! already covers the newest entry, and a removal never makes it newer.
//!
//! Before anything is written, the reply's peek is decided over the log as
//! the removal leaves it ([`Trimmed`]): every entry it reads is checked
//! then, so no entry met after the write can fail the call.

use smallvec::SmallVec;

use super::block_member::SkipBlock;
use super::decide::{read_ends, Ends};
use super::log::{Entry, LogView, LogWrite, Oldest};
use super::request::SlideRequest;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::limiter::{Refund, Units};

impl Units for SlideRequest {
    fn units(&self) -> u64 {
        self.cost
    }
    fn with_units(&self, n: u64) -> Self {
        SlideRequest { cost: n, ..*self }
    }
    fn without_block(&self) -> Self {
        SlideRequest {
            block_ms: None,
            ..*self
        }
    }
}

impl<V: LogView> Limiter<V> for Refund<SlideRequest> {
    type Write = LogWrite;
    type Answer = u64;

    fn decide(&self, log: &mut V, call: &Call) -> Result<Outcome<LogWrite, u64>, RlError> {
        let req = &self.0;
        let cutoff = call.now.ms - req.window_ms as i64;
        // The entries without a block's member: a refund moves units, a
        // block that holds stays (it grants no access).
        let log = &mut SkipBlock::new(log);
        // What RL.PEEK SLIDE reads and checks (a refund removes no stale
        // entry): the clock, the newest and the oldest entry.
        let Ends { held, .. } = read_ends(log, call.now.ms, cutoff, 0)?;
        let n = req.cost.min(held);
        if n == 0 {
            return Ok(Outcome {
                decision: 0,
                write: None,
            });
        }
        // n is at most MAX_COST: a bounded walk from the end.
        let newest = log.newest_after(cutoff, n + 1);
        if !newest.iter().all(Entry::is_rl) {
            return Err(RlError::ForeignZset);
        }
        let members: SmallVec<[i64; 4]> = newest
            .iter()
            .take(n as usize)
            .filter_map(|e| e.member)
            .collect();
        // The removed entries are the log's newest (all that count sort
        // after those that left): what the reply's peek will read, checked
        // before the write.
        let mut left = Trimmed {
            log,
            removed: members.len() as u64,
        };
        req.unit().decide(&mut left, &Call::read(call.now))?;
        Ok(Outcome {
            decision: members.len() as u64,
            write: Some(LogWrite::Remove(members)),
        })
    }
}

/// The log without its `removed` newest entries, read before they are
/// removed.
pub struct Trimmed<'a, V> {
    pub log: &'a mut V,
    pub removed: u64,
}

impl<V: LogView> LogView for Trimmed<'_, V> {
    fn entry_count(&mut self) -> u64 {
        self.log.entry_count().saturating_sub(self.removed)
    }

    fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest {
        let left = self.entry_count();
        let mut oldest = self.log.oldest_through(cutoff, max_read);
        oldest.stale = oldest.stale.min(left);
        oldest.entries.truncate(left as usize);
        oldest
    }

    fn nth_after(&mut self, after: i64, rank: u64, n: u64) -> Option<i64> {
        if rank.saturating_add(n) > self.entry_count() {
            return None;
        }
        self.log.nth_after(after, rank, n)
    }

    fn newest(&mut self) -> Option<Entry> {
        if self.entry_count() == 0 {
            return None;
        }
        // An entry the walk does not reach has a score no rl entry has
        // (`-inf`, below i64::MIN): it reads as foreign, as `newest` reads it.
        let walk = self.log.newest_after(i64::MIN, self.removed + 1);
        Some(walk.get(self.removed as usize).copied().unwrap_or(Entry {
            score: i64::MIN,
            member: None,
        }))
    }

    fn newest_after(&mut self, after: i64, n: u64) -> SmallVec<[Entry; 4]> {
        let mut walk = self.log.newest_after(after, n.saturating_add(self.removed));
        let skip = (self.removed as usize).min(walk.len());
        walk.drain(..skip);
        walk
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decision::Decision;
    use crate::core::limiter::ledger::Ledger;
    use crate::core::limiter::Now;
    use crate::core::slide::log::{member, MemoryLog};
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, cost: u64) -> SlideRequest {
        SlideRequest {
            limit,
            window_ms,
            cost,
            block_ms: None,
        }
    }

    fn at(ms: i64) -> Call {
        Call::one(Now { ms, us: ms * 1000 })
    }

    fn admit(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> Decision {
        let out = r.decide(log, &at(now)).unwrap();
        if let Some(w) = &out.write {
            log.apply_write(w);
        }
        out.decision
    }

    fn refund(log: &mut MemoryLog, r: &SlideRequest, now: i64) -> u64 {
        let out = Refund(*r).decide(log, &at(now)).unwrap();
        if let Some(w) = &out.write {
            log.apply_write(w);
        }
        out.decision
    }

    #[test]
    fn table_of_refunds_with_explicit_times() {
        // limit 5 per 1000 ms. Rows: (now, admit or refund, cost, units
        // refunded or `allowed`, the scores left).
        let r = |cost| req(5, 1000, cost);
        let mut log = MemoryLog::new();
        type Row = (i64, bool, u64, u64, &'static [i64]);
        let rows: &[Row] = &[
            (10_000, true, 2, 1, &[10_000, 10_000]),
            (
                10_500,
                true,
                3,
                1,
                &[10_000, 10_000, 10_500, 10_500, 10_500],
            ),
            (
                10_600,
                true,
                1,
                0,
                &[10_000, 10_000, 10_500, 10_500, 10_500],
            ),
            // The newest go first.
            (10_700, false, 2, 2, &[10_000, 10_000, 10_500]),
            // 10_000 has left at 11_000: only the one at 10_500 counts.
            (11_000, false, 3, 1, &[10_000, 10_000]),
            // Nothing in the window: nothing given back, nothing written.
            (11_100, false, 1, 0, &[10_000, 10_000]),
        ];
        for &(now, is_admit, cost, want, left) in rows {
            let got = if is_admit {
                u64::from(admit(&mut log, &r(cost), now).allowed)
            } else {
                refund(&mut log, &r(cost), now)
            };
            assert_eq!(got, want, "at {now}");
            let scores: Vec<i64> = log.entries().iter().map(|&(s, _)| s).collect();
            assert_eq!(scores, left, "at {now}");
        }
    }

    #[test]
    fn the_write_names_the_newest_members() {
        let mut log = MemoryLog::new();
        admit(&mut log, &req(10, 1000, 3), 7);
        admit(&mut log, &req(10, 1000, 2), 8);
        let out = Refund(req(10, 1000, 3)).decide(&mut log, &at(9)).unwrap();
        assert_eq!(out.decision, 3);
        let want = SmallVec::from_slice(&[member(8, 1), member(8, 0), member(7, 2)]);
        assert_eq!(out.write, Some(LogWrite::Remove(want)));
    }

    #[test]
    fn nothing_to_give_back_writes_nothing() {
        let mut log = MemoryLog::new();
        let out = Refund(req(5, 1000, 1)).decide(&mut log, &at(5)).unwrap();
        assert_eq!((out.decision, out.write), (0, None));
        admit(&mut log, &req(5, 1000, 1), 5);
        let out = Refund(req(5, 1000, 1))
            .decide(&mut log, &at(1_005))
            .unwrap();
        assert_eq!((out.decision, out.write), (0, None));
    }

    #[test]
    fn foreign_entries_get_the_commands_errors() {
        let r = req(5, 1000, 1);
        // The newest, the oldest (stale or not), the one that would become
        // the newest: each refused as RL.SLIDE refuses it.
        let cases: &[&[(i64, i64)]] = &[
            &[(5_000, 7)],
            &[(100, 100), (4_500, member(4_500, 0))],
            &[
                (4_100, 3),
                (4_200, member(4_200, 0)),
                (4_500, member(4_500, 0)),
            ],
            &[
                (4_100, member(4_100, 0)),
                (4_200, 1),
                (4_500, member(4_500, 0)),
            ],
        ];
        for entries in cases {
            let mut log = MemoryLog::new();
            for &(s, m) in *entries {
                log.insert(s, m);
            }
            assert_eq!(
                Refund(r).decide(&mut log, &at(5_000)),
                Err(RlError::ForeignZset),
                "{entries:?}"
            );
        }
        // The entry that becomes the newest once every counted one is
        // removed has left the window: the refund reads it too.
        let mut log = MemoryLog::new();
        log.insert(3_000, member(3_000, 0));
        log.insert(3_500, 9);
        log.insert(4_500, member(4_500, 0));
        assert_eq!(
            Refund(r).decide(&mut log, &at(5_000)),
            Err(RlError::ForeignZset)
        );
        let mut log = MemoryLog::new();
        assert_eq!(
            Refund(r).decide(&mut log, &at(-1)),
            Err(RlError::Internal("server clock out of range"))
        );
    }

    proptest! {
        /// Admits and refunds at rising times: the entries in every window
        /// are those admitted minus those refunded (the newest first), never
        /// more than `limit`.
        #[test]
        fn the_window_holds_admitted_minus_refunded(
            limit in 1u64..8,
            window in 1u64..1_000,
            steps in proptest::collection::vec((0i64..400, any::<bool>(), 1u64..8), 1..80),
        ) {
            let mut log = MemoryLog::new();
            // Each unit admitted and not refunded, by its time.
            let mut model: Vec<i64> = Vec::new();
            let mut now = 50_000;
            for (dt, is_admit, cost) in steps {
                now += dt;
                let r = req(limit, window, cost.min(limit));
                let cutoff = now - window as i64;
                let in_window = |m: &[i64]| m.iter().filter(|&&t| t > cutoff).count() as u64;
                if is_admit {
                    if admit(&mut log, &r, now).allowed {
                        model.extend(std::iter::repeat_n(now, r.cost as usize));
                    }
                } else {
                    let held = in_window(&model);
                    let given = refund(&mut log, &r, now);
                    prop_assert_eq!(given, r.cost.min(held));
                    model.truncate(model.len() - given as usize);
                }
                let counted = log.entries().iter().filter(|&&(s, _)| s > cutoff).count() as u64;
                prop_assert_eq!(counted, in_window(&model));
                prop_assert!(counted <= limit);
            }
        }

        /// Refunds naming any window, limit and cost over admissions of
        /// one window: each removes exactly the entries it reports, and
        /// no window of the key's length admits more than `limit` net of
        /// what was given back.
        #[test]
        fn refunds_of_any_window_never_over_admit(
            limit in 1u64..8,
            window in 1u64..1_000,
            steps in proptest::collection::vec(
                (0i64..400, any::<bool>(), 1u64..8, 1u64..2_000, 1u64..10),
                1..80,
            ),
        ) {
            let mut log = MemoryLog::new();
            let mut ledger = Ledger::default();
            let mut now = 50_000;
            for (dt, is_admit, cost, refund_window, refund_limit) in steps {
                now += dt;
                if is_admit {
                    let r = req(limit, window, cost.min(limit));
                    if admit(&mut log, &r, now).allowed {
                        ledger.admitted(now, r.cost);
                    }
                } else {
                    let r = req(refund_limit, refund_window, cost.min(refund_limit));
                    let before = log.entries().len() as u64;
                    let given = refund(&mut log, &r, now);
                    prop_assert!(given <= r.cost);
                    prop_assert_eq!(before - log.entries().len() as u64, given);
                    ledger.refunded(now, given);
                }
            }
            ledger.never_over_admits(window as i64, limit).map_err(TestCaseError::fail)?;
        }

        /// A refund never makes a later request wait longer, nor denies
        /// one that would pass without it.
        #[test]
        fn a_refund_never_makes_a_later_request_wait_longer(
            limit in 1u64..8,
            window in 1u64..1_000,
            admits in proptest::collection::vec((0i64..300, 1u64..8), 1..30),
            refund_cost in 1u64..8,
            later in 0i64..2_000,
            later_cost in 1u64..8,
        ) {
            let mut log = MemoryLog::new();
            let mut now = 50_000;
            for (dt, cost) in admits {
                now += dt;
                admit(&mut log, &req(limit, window, cost.min(limit)), now);
            }
            let mut refunded = log.clone();
            refund(&mut refunded, &req(limit, window, refund_cost.min(limit)), now);
            let r = req(limit, window, later_cost.min(limit));
            let read = Call::read(Now { ms: now + later, us: 0 });
            let without = r.decide(&mut log, &read).unwrap().decision;
            let with = r.decide(&mut refunded, &read).unwrap().decision;
            prop_assert!(with.retry_after_ms <= without.retry_after_ms);
            prop_assert!(with.allowed || !without.allowed);
        }
    }
}

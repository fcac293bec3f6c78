//! Leases decided over an in-memory set, at explicit instants.

use proptest::prelude::*;

use super::decide::{acquire, release, renew, EVICT_PER_CALL};
use super::request::{AcquireRequest, ReleaseRequest, RenewRequest};
use super::set::{LeaseId, LeaseView, MemoryLeases};
use super::{LeaseChange, Leased};
use crate::core::decision::Decision;
use crate::core::error::RlError;

fn id(s: &str) -> LeaseId {
    LeaseId::named(s.as_bytes(), "ID").unwrap()
}

fn req(limit: u64, lease_ms: u64, name: Option<&str>) -> AcquireRequest {
    AcquireRequest {
        limit,
        lease_ms,
        id: name.map(id),
    }
}

/// Acquires and applies the write, as the host does.
fn take(set: &mut MemoryLeases, r: &AcquireRequest, now: i64) -> Leased {
    let out = acquire(set, r, now, true).unwrap();
    if let Some(w) = &out.write {
        set.apply(w);
    }
    // A denial writes nothing; an admission writes unless it changes
    // nothing (a retried `ID` whose lease already lasts that long).
    if !out.decision.decision.allowed {
        assert_eq!(out.write, None);
    }
    out.decision
}

fn free(set: &mut MemoryLeases, lease: LeaseId, now: i64) -> LeaseChange {
    let out = release(set, &ReleaseRequest { lease }, now).unwrap();
    if let Some(w) = &out.write {
        set.apply(w);
    }
    out.decision
}

fn extend(set: &mut MemoryLeases, lease: LeaseId, lease_ms: u64, now: i64) -> LeaseChange {
    let out = renew(set, &RenewRequest { lease, lease_ms }, now).unwrap();
    if let Some(w) = &out.write {
        set.apply(w);
    }
    out.decision
}

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
fn acquire_takes_slots_until_limit_then_denies_until_the_earliest_expiry() {
    let mut set = MemoryLeases::new();
    let r = req(2, 1000, None);
    // (now, decision)
    let steps = [
        (0, d(true, 1, 0, 1000)),
        (100, d(true, 0, 0, 1000)),
        (200, d(false, 0, 800, 900)),
        (999, d(false, 0, 1, 101)),
        // The first lease ends at 1000: a slot is free again.
        (1000, d(true, 0, 0, 1000)),
    ];
    for (now, want) in steps {
        assert_eq!(take(&mut set, &r, now).decision, want, "now {now}");
    }
    // The expired lease was removed by the admission at 1000.
    let scores: Vec<i64> = set.entries().iter().map(|e| e.0).collect();
    assert_eq!(scores, [1100, 2000]);
}

#[test]
fn generated_ids_are_replies_and_members() {
    let mut set = MemoryLeases::new();
    let got = take(&mut set, &req(3, 500, None), 36);
    let lease = got.lease.unwrap();
    assert_eq!(lease.as_bytes(), b"10-1");
    assert_eq!(set.entries(), &[(536, b"10-1".to_vec())]);
}

#[test]
fn a_denial_writes_nothing_and_takes_no_id() {
    let mut set = MemoryLeases::new();
    take(&mut set, &req(1, 1000, None), 0);
    let before = set.entries().to_vec();
    let out = acquire(&mut set, &req(1, 1000, None), 500, true).unwrap();
    assert_eq!(out.write, None);
    assert_eq!(out.decision.lease, None);
    assert_eq!(set.entries(), before.as_slice());
}

#[test]
fn a_named_id_held_is_renewed_and_counts_once() {
    let mut set = MemoryLeases::new();
    let r = req(2, 1000, Some("job"));
    assert_eq!(take(&mut set, &r, 0).decision, d(true, 1, 0, 1000));
    // Retried: still one slot taken, the lease moved to 300 + 1000.
    assert_eq!(take(&mut set, &r, 300).decision, d(true, 1, 0, 1000));
    assert_eq!(set.entries(), &[(1300, b"job".to_vec())]);
    // Even when every slot is taken, the holder's retry is admitted.
    take(&mut set, &req(2, 5000, None), 400);
    assert_eq!(take(&mut set, &r, 500).decision, d(true, 0, 0, 4900));
    // A shorter lease never shortens it.
    take(&mut set, &req(2, 10, Some("job")), 600);
    assert_eq!(set.entries()[0], (1500, b"job".to_vec()));
}

#[test]
fn a_named_id_that_expired_takes_a_new_slot() {
    let mut set = MemoryLeases::new();
    let r = req(1, 100, Some("job"));
    take(&mut set, &r, 0);
    assert_eq!(take(&mut set, &r, 100).decision, d(true, 0, 0, 100));
    assert_eq!(set.entries(), &[(200, b"job".to_vec())]);
}

#[test]
fn release_frees_a_slot_at_once() {
    let mut set = MemoryLeases::new();
    let r = req(1, 1000, None);
    let a = take(&mut set, &r, 0).lease.unwrap();
    assert!(!take(&mut set, &r, 10).decision.allowed);
    let got = free(&mut set, a, 20);
    assert_eq!(
        got,
        LeaseChange {
            changed: true,
            held: 0,
            retry_after_ms: 0,
            reset_after_ms: 0
        }
    );
    assert!(set.entries().is_empty());
    assert!(take(&mut set, &r, 30).decision.allowed);
    // Released twice, or unknown: 0, nothing written.
    let out = release(&mut set, &ReleaseRequest { lease: a }, 40).unwrap();
    assert!(!out.decision.changed);
    assert_eq!(out.write, None);
}

#[test]
fn release_reports_the_other_leases() {
    let mut set = MemoryLeases::new();
    let r = req(3, 1000, None);
    let a = take(&mut set, &r, 0).lease.unwrap();
    take(&mut set, &r, 100);
    take(&mut set, &r, 200);
    assert_eq!(
        free(&mut set, a, 300),
        LeaseChange {
            changed: true,
            held: 2,
            retry_after_ms: 800,
            reset_after_ms: 900
        }
    );
}

#[test]
fn renew_extends_a_held_lease_and_refuses_an_expired_one() {
    let mut set = MemoryLeases::new();
    let a = take(&mut set, &req(2, 1000, None), 0).lease.unwrap();
    assert_eq!(
        extend(&mut set, a, 1000, 900),
        LeaseChange {
            changed: true,
            held: 1,
            retry_after_ms: 1000,
            reset_after_ms: 1000
        }
    );
    assert_eq!(set.entries()[0].0, 1900);
    // Expired at 1900: the holder lost its slot; nothing is written.
    let before = set.entries().to_vec();
    let out = renew(
        &mut set,
        &RenewRequest {
            lease: a,
            lease_ms: 1000,
        },
        1900,
    )
    .unwrap();
    assert_eq!(out.write, None);
    assert!(!out.decision.changed);
    assert_eq!(set.entries(), before.as_slice());
}

#[test]
fn an_admission_removes_a_bounded_number_of_expired_leases() {
    let mut set = MemoryLeases::new();
    for i in 0..40 {
        set.insert(10 + i, format!("old-{i}").as_bytes());
    }
    take(&mut set, &req(5, 100, None), 1000);
    assert_eq!(set.entries().len(), 40 - EVICT_PER_CALL + 1);
    // Expired ones never count, removed or not.
    let out = acquire(&mut set, &req(1, 100, None), 1000, false).unwrap();
    assert_eq!(out.decision.decision, d(false, 0, 100, 100));
}

#[test]
fn a_read_writes_nothing_and_names_no_lease() {
    let mut set = MemoryLeases::new();
    set.insert(10, b"old");
    let out = acquire(&mut set, &req(2, 100, None), 50, false).unwrap();
    assert_eq!(out.write, None);
    assert_eq!(
        out.decision,
        Leased {
            decision: d(true, 1, 0, 100),
            lease: None
        }
    );
}

#[test]
fn foreign_sets_are_refused() {
    let slide = RlError::WrongKind {
        found: "RL.SLIDE",
        wanted: "lease",
    };
    type Stored<'a> = &'a [(i64, &'a [u8])];
    let cases: &[(Stored, RlError)] = &[
        (&[(1000, b"1000000000")], slide),
        (&[(1000, b"x"), (3000, b"has space")], RlError::ForeignZset),
        (&[(2000, b"12")], RlError::ForeignZset),
        // In the middle of the held ones: counting them checks each.
        (
            &[(1000, b"a"), (1500, b"b c"), (3000, b"z")],
            RlError::ForeignZset,
        ),
    ];
    for (entries, want) in cases {
        let mut set = MemoryLeases::new();
        for (s, m) in *entries {
            set.insert(*s, m);
        }
        assert_eq!(
            acquire(&mut set, &req(5, 100, None), 100, true).err(),
            Some(want.clone())
        );
        assert_eq!(
            acquire(&mut set, &req(5, 100, None), 100, false).err(),
            Some(want.clone())
        );
    }
}

/// A failover to a replica whose clock is behind: ids made again at the
/// same instants differ from those handed out before, since the nonce
/// differs; and the new ids never renew the old holders' leases.
/// A promoted replica: the same set, its clock 500 ms behind, and (the
/// worst case) its nonces forced to repeat the old primary's. Every acquire
/// is admitted, and none is handed an id the set still holds: the id is
/// drawn again while the set has it (here three times over at 1000).
#[test]
fn a_stepped_back_clock_never_hands_out_an_id_still_held() {
    let mut set = MemoryLeases::new();
    let mut held = Vec::new();
    for now in [1000, 1000, 1000] {
        held.push(take(&mut set, &req(3, 5000, None), now).lease.unwrap());
    }
    set.set_nonces(0);
    for now in [1000, 700, 1000, 1200] {
        let got = take(&mut set, &req(10, 5000, None), now);
        assert!(got.decision.allowed, "now {now}: {got:?}");
        let l = got.lease.unwrap();
        assert!(!held.contains(&l), "{l:?} handed out twice");
        held.push(l);
    }
    assert_eq!(set.entries().len(), held.len());
}

/// What the set no longer holds, the core cannot check: an id is `ms-nonce`,
/// so once its lease left the set, only a nonce that does not repeat keeps
/// it from coming back at the same ms. With nonces that go on (as one
/// process's do), a stepped-back clock meets every ms again and never
/// repeats an id; with nonces that start over, it does. That is why the
/// odds across processes are those of two 64-bit draws (docs/design.md,
/// "Lease ids").
#[test]
fn an_id_that_left_the_set_repeats_only_if_its_ms_and_nonce_both_do() {
    let times = [1000, 1000, 1150, 1200, 1400];
    let stepped_back = [700, 1000, 1000, 1150, 1200, 1400];
    for restart_nonces in [false, true] {
        let mut set = MemoryLeases::new();
        let r = req(2, 100, None);
        let mut made = Vec::new();
        for now in times {
            made.push(take(&mut set, &r, now).lease.unwrap());
        }
        // Every lease but the last one has expired and left the set.
        assert_eq!(set.entries().len(), 1);
        if restart_nonces {
            set.set_nonces(0);
        }
        let mut repeats = 0;
        for now in stepped_back {
            let got = take(&mut set, &req(10, 100, None), now);
            assert!(got.decision.allowed, "now {now}: {got:?}");
            let l = got.lease.unwrap();
            repeats += usize::from(made.contains(&l));
            made.push(l);
        }
        if restart_nonces {
            assert!(repeats > 0, "restarted nonces made no old id again");
        } else {
            assert_eq!(repeats, 0, "an id made twice: {made:?}");
        }
    }
}

#[test]
fn ids_already_in_the_set_are_drawn_again() {
    let mut set = MemoryLeases::new();
    set.insert(5000, b"1c-1");
    let got = take(&mut set, &req(5, 100, None), 48);
    assert_eq!(got.lease.unwrap().as_bytes(), b"1c-2");
}

#[derive(Debug, Clone)]
enum Step {
    Wait(u8),
    /// `lower`: this acquire's limit is that much below the run's (at
    /// least 1), as when a caller lowers a limit others still hold.
    Acquire {
        lease_ms: u16,
        name: Option<u8>,
        lower: u8,
    },
    Release(u8),
    Renew(u8, u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u8..200).prop_map(Step::Wait),
        (
            1u16..500,
            proptest::option::of(0u8..6),
            prop_oneof![3 => Just(0u8), 1 => 1u8..4]
        )
            .prop_map(|(lease_ms, name, lower)| Step::Acquire {
                lease_ms,
                name,
                lower
            }),
        (0u8..12).prop_map(Step::Release),
        (0u8..12, 1u16..500).prop_map(|(i, ms)| Step::Renew(i, ms)),
    ]
}

proptest! {
    /// Whatever the sequence of acquires, releases, renewals and waits:
    /// never more than `limit` leases held at any instant; an acquire is
    /// denied only when `limit` are held (so released and expired slots
    /// are reused); a lease id rl made is never made again.
    #[test]
    fn never_more_than_limit_held(limit in 1u64..5, steps in proptest::collection::vec(step(), 1..120)) {
        let mut set = MemoryLeases::new();
        let mut now = 0i64;
        let mut ids: Vec<LeaseId> = Vec::new();
        let mut made: Vec<LeaseId> = Vec::new();
        for s in steps {
            match s {
                Step::Wait(ms) => now += i64::from(ms),
                Step::Acquire { lease_ms, name, lower } => {
                    let name = name.map(|n| format!("job-{n}"));
                    let this_limit = limit.saturating_sub(u64::from(lower)).max(1);
                    let r = req(this_limit, u64::from(lease_ms), name.as_deref());
                    let held_before = set.held(now).unwrap();
                    let named_held = r.id.is_some_and(|i| set.expiry_of(&i).unwrap().is_some_and(|at| at > now));
                    let got = take(&mut set, &r, now);
                    prop_assert_eq!(got.decision.allowed, named_held || held_before < this_limit);
                    if !got.decision.allowed {
                        // Waiting what the denial names, and no longer,
                        // is enough (the limit may be lower than what is
                        // held: several leases must end).
                        let retry = got.decision.retry_after_ms as i64;
                        prop_assert!(retry >= 1);
                        let mut later = set.clone();
                        prop_assert!(acquire(&mut later, &r, now + retry, false).unwrap().decision.decision.allowed);
                        prop_assert!(!acquire(&mut later, &r, now + retry - 1, false).unwrap().decision.decision.allowed);
                    }
                    if let Some(l) = got.lease {
                        if r.id.is_none() {
                            prop_assert!(!made.contains(&l));
                            made.push(l);
                        }
                        ids.push(l);
                    }
                }
                Step::Release(i) => {
                    if let Some(&l) = ids.get(usize::from(i)) {
                        free(&mut set, l, now);
                    }
                }
                Step::Renew(i, ms) => {
                    if let Some(&l) = ids.get(usize::from(i)) {
                        let was = set.expiry_of(&l).unwrap().is_some_and(|at| at > now);
                        prop_assert_eq!(extend(&mut set, l, u64::from(ms), now).changed, was);
                    }
                }
            }
            prop_assert!(set.held(now).unwrap() <= limit);
        }
    }
}

#[test]
fn a_lowered_limit_waits_until_enough_leases_end() {
    let mut set = MemoryLeases::new();
    for (name, ms) in [("a", 1000), ("b", 2000), ("c", 3000)] {
        assert!(take(&mut set, &req(5, ms, Some(name)), 0).decision.allowed);
    }
    // Three held, limit 2: a slot frees when two have ended, at 2000.
    let low = req(2, 500, None);
    let denied = |set: &mut MemoryLeases, now| acquire(set, &low, now, false).unwrap().decision;
    assert_eq!(denied(&mut set, 0).decision, d(false, 0, 2000, 3000));
    assert_eq!(denied(&mut set, 1000).decision, d(false, 0, 1000, 2000));
    assert_eq!(denied(&mut set, 1999).decision, d(false, 0, 1, 1001));
    assert!(denied(&mut set, 2000).decision.allowed);
    // Limit 1: all three must end.
    let one = req(1, 500, None);
    let out = acquire(&mut set, &one, 0, true).unwrap();
    assert_eq!(
        (out.decision.decision, out.write),
        (d(false, 0, 3000, 3000), None)
    );
}

#[test]
fn a_renewal_or_retried_id_that_changes_nothing_writes_nothing() {
    let mut set = MemoryLeases::new();
    let job = id("job");
    assert!(
        take(&mut set, &req(2, 5000, Some("job")), 0)
            .decision
            .allowed
    );
    let before = set.entries().to_vec();
    // The lease already lasts past now + lease_ms: renewed, nothing written.
    let out = renew(
        &mut set,
        &RenewRequest {
            lease: job,
            lease_ms: 1000,
        },
        100,
    )
    .unwrap();
    assert!(out.decision.changed);
    assert_eq!(out.write, None);
    let out = acquire(&mut set, &req(2, 1000, Some("job")), 100, true).unwrap();
    assert_eq!(
        (out.decision.decision.allowed, out.decision.lease),
        (true, Some(job))
    );
    assert_eq!(out.write, None);
    assert_eq!(set.entries(), before);
    // One that extends it writes the new expiry.
    let out = renew(
        &mut set,
        &RenewRequest {
            lease: job,
            lease_ms: 6000,
        },
        100,
    )
    .unwrap();
    assert_eq!(out.write.and_then(|w| w.set).map(|e| e.expiry), Some(6100));
}

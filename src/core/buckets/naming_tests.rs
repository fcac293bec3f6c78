//! Bucket field names (`layout::Naming`): ring names (index mod 4096) stay
//! unique among the fields a key holds whatever the gaps between calls
//! (idle for 4,096 buckets or more, a name comes round), eviction deletes
//! exactly the names that left, and a key of an earlier build (full
//! indexes, lowercase kind) answers as the same key in ring names would,
//! taking ring names once none of its fields stays.

use proptest::prelude::*;

use super::decide::decide;
use super::layout::*;
use super::request::check_precision;

use crate::core::buckets::request::test_request as req;

/// `h` (ring names) rewritten as an earlier build wrote it: the kind in
/// lowercase, every bucket field named by its full index.
fn in_index_names(h: &mut MemoryHash) -> MemoryHash {
    let state = load(h, Kind::Buckets).unwrap().expect("a state");
    let mut old = MemoryHash {
        fields: Default::default(),
        expire_at_ms: h.expire_at_ms,
    };
    let header = &h.fields[FIELD_HEADER];
    assert_eq!(header[0], b'B');
    let mut lower = header.clone();
    lower[0] = b'b';
    old.fields.insert(FIELD_HEADER.to_vec(), lower);
    for i in state.held.bits() {
        let b = state.newest - 1 - i as i64;
        let v = h.fields[&Naming::Ring.field(b)[..]].clone();
        old.fields.insert(Naming::Index.field(b).to_vec(), v);
    }
    old
}

fn tag(h: &MemoryHash) -> u8 {
    h.fields[FIELD_HEADER][0]
}

proptest! {
    #[test]
    fn names_stay_unique_and_old_keys_answer_alike(
        limit in 1u64..20,
        buckets in 1u64..=250,
        precision in 1u64..4,
        start in -20_000i64..20_000,
        warmup in proptest::collection::vec((0usize..4, 1u64..4), 1..30),
        steps in proptest::collection::vec((0usize..9, 1u64..4, 0i64..3), 1..60),
    ) {
        let window = buckets * precision;
        prop_assume!(check_precision(window, precision).is_ok());
        let (w, p) = (window as i64, precision as i64);
        let ring = 4096 * p;
        let gap = |pick: usize, jitter: i64| match pick {
            0 => jitter,
            1 => p + jitter,
            2 => w - jitter,
            3 => w + p + jitter,
            4 => ring - p + jitter,
            5 => ring + jitter,
            6 => ring + w - jitter,
            7 => 2 * ring + jitter,
            _ => (jitter + 1) * w / 3,
        };
        let mut h = MemoryHash::new();
        let mut now = start;
        // A key with many held fields, in ring names.
        // (Cost 1: the first call is admitted.)
        for &(pick, step) in &warmup {
            now += gap(pick.min(1), step as i64);
            if let Some(w) = decide(&mut h, &req(limit, window, precision, 1), now).unwrap().write {
                h.apply(&w);
            }
        }
        let mut old = in_index_names(&mut h);
        prop_assert_eq!(old.fields_the_header_names(), old.bucket_indexes());
        let mut converted = false;
        for &(pick, cost, jitter) in &steps {
            now += gap(pick, jitter);
            let r = req(limit, window, precision, cost);
            let (a, b) = (decide(&mut h, &r, now).unwrap(), decide(&mut old, &r, now).unwrap());
            prop_assert_eq!(a.decision, b.decision, "at {}", now);
            if let Some(w) = a.write { h.apply(&w); }
            if let Some(w) = b.write { old.apply(&w); }
            // Every field there is is one the header names, once each.
            prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
            prop_assert_eq!(old.fields_the_header_names(), old.bucket_indexes());
            prop_assert_eq!(tag(&h), b'B');
            if tag(&old) == b'B' {
                converted = true;
                // Converted: the same hash as the key that was never old.
                prop_assert_eq!(&old.fields, &h.fields);
            } else {
                prop_assert!(!converted, "back to full indexes");
                prop_assert_eq!(tag(&old), b'b');
            }
        }
    }
}

/// A key of an earlier build at 20 ms buckets (full indexes near 8.9e10)
/// is counted by its names, and takes ring names at the first write that
/// leaves it no field, deleting the old ones in that write.
#[test]
fn an_old_key_converts_when_its_fields_leave() {
    let r = req(100, 1_000, 20, 1);
    let t = 1_780_000_000_000;
    let mut h = MemoryHash::new();
    for k in 0..5 {
        let w = decide(&mut h, &r, t + 20 * k).unwrap().write.unwrap();
        h.apply(&w);
    }
    let mut old = in_index_names(&mut h);
    let newest = t / 20 + 4;
    assert!(old
        .fields
        .contains_key(&Naming::Index.field(newest - 1)[..]));
    // Still within the window: counted (4 + this one), kept as it is.
    let d = decide(&mut old, &r, t + 100).unwrap();
    assert_eq!(d.decision.remaining, 100 - 6);
    old.apply(&d.write.unwrap());
    assert_eq!(tag(&old), b'b');
    // A window later every field has left: the write deletes them by
    // their full indexes and names the new state's by ring.
    let d = decide(&mut old, &r, t + 2_000).unwrap();
    let w = d.write.unwrap();
    assert_eq!(w.header[0], b'B');
    assert!(w.delete.contains(&Naming::Index.field(newest - 1)));
    old.apply(&w);
    assert_eq!(old.fields.len(), 1, "the header alone: {:?}", old.fields);
    let d = decide(&mut old, &r, t + 2_020).unwrap();
    old.apply(&d.write.unwrap());
    let b = (t + 2_000) / 20;
    assert_eq!(old.fields[&Naming::Ring.field(b)[..]], b"1");
    assert_eq!(Naming::Ring.field(b).len(), (b % 4096).to_string().len());
}

/// RL.COUNT writes the target bucket's own field. After a gap of 4,096
/// buckets (the state of a key rl's TTL would have let go, but one a
/// forged or replayed key can hold) the target's ring name is a stale
/// field's: the write sets that name and leaves it out of its deletions,
/// since the host sets before it deletes.
#[test]
fn a_count_field_that_takes_a_stale_name_is_set_not_deleted() {
    use super::held::HeldBuckets;
    use super::window::{write, Window};
    use smallvec::smallvec;

    let (stale, precision) = (10_000i64, 1_000i64);
    let target = stale + RING;
    let win = Window {
        precision,
        window_ms: 100 * precision,
        now: target * precision,
        live_from: target - 99,
        target,
        newest: Some(stale),
        naming: Naming::Ring,
        held: HeldBuckets::default(),
        newest_counts: smallvec![3],
        totals: smallvec![0],
        stale: vec![stale, stale - 1],
    };
    let w = write(&win, Kind::Count, &[1], &[1], None);
    let name = Naming::Ring.field(target);
    assert_eq!(name, Naming::Ring.field(stale), "the names come round");
    assert!(w.fields.iter().any(|(f, v)| *f == name && &v[..] == b"1"));
    assert!(!w.delete.contains(&name), "deletions: {:?}", w.delete);
    assert_eq!(w.delete, vec![Naming::Ring.field(stale - 1)]);
}

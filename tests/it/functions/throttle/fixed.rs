//! RL.FIXED's counters at their edges, and a window ending past 2^53 ms.

use super::set_both;
use crate::functions::differential::{both, ints, same_stepping};
use crate::functions::start_both;
use crate::harness::{run, Flavor};

/// Fixed-window counters at the edges: the largest count, one above it
/// (a throttle state's range), zero-padded counts up to 20 bytes, 21 bytes,
/// counts above a lowered limit, expiries at now, just after, near 2^53 ms.
#[test]
fn fixed_counters_at_the_edges() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let now = s.clock_ms();
    let rows: &[(&str, Option<i64>)] = &[
        ("0", Some(now + 1000)),
        ("1000000000000000", Some(now + 1000)),
        ("1000000000000001", Some(now + 1000)),
        ("00000000000000000007", Some(now + 1000)),
        ("000000000000000000007", Some(now + 1000)),
        ("8", Some(now + 1)),
        ("8", Some(now)),
        ("8", Some(9_007_199_254_740_991)),
        ("8", None),
        ("-1", Some(now + 1000)),
        ("x", Some(now + 1000)),
        ("", Some(now + 1000)),
    ];
    let forms: &[&[&str]] = &[
        &["RL.FIXED", "K", "10", "1000"],
        &["RL.FIXED", "K", "3", "1000", "COST", "3"],
        &[
            "RL.FIXED",
            "K",
            "1000000000000000",
            "1000000000000",
            "COST",
            "1000000000000000",
        ],
        &["RL.PEEK", "FIXED", "K", "10", "1000"],
        &["RL.REFUND", "FIXED", "K", "10", "1000", "COST", "5"],
        &[
            "RL.REFUND",
            "FIXED",
            "K",
            "1000000000000000",
            "1000",
            "COST",
            "1000000000000000",
        ],
        &["RL.THROTTLE", "K", "1", "1", "1000"],
        &[
            "RL.ALL", "2", "other", "K", "THROTTLE", "0", "1", "1000", "FIXED", "9", "1000",
        ],
    ];
    let mut refused = 0;
    for (i, (v, at)) in rows.iter().enumerate() {
        for (j, form) in forms.iter().enumerate() {
            let k = format!("c{i}-{j}");
            set_both(&mut c, &k, v, *at);
            let line: Vec<&str> = form
                .iter()
                .map(|w| if *w == "K" { k.as_str() } else { w })
                .collect();
            if same_stepping(&s, &mut c, &line).is_err() {
                refused += 1;
            }
            run(&mut c, &["DEL", "m:other", "f:other"]).unwrap();
        }
    }
    assert!(refused >= 5 * forms.len(), "{refused}");
}

/// A counter whose window ends past 2^53 ms (a user's far PXAT): the
/// library keeps that end exactly (SET KEEPTTL), as the module does; the
/// reply's reset is off by the double's rounding (see the report).
#[test]
fn a_fixed_window_ending_past_2_to_the_53_keeps_its_end() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    for at in ["9007199254740993", "9223372036854775807"] {
        for p in ["m:", "f:"] {
            run(&mut c, &["SET", &format!("{p}k"), "3", "PXAT", at]).unwrap();
        }
        let (m, f) = both(&mut c, &["RL.FIXED", "k", "10", "1000", "COST", "2"]);
        assert_eq!(m.state, f.state, "PXAT {at}");
        assert_eq!(ints(m.reply.as_ref().unwrap())[..3], [1, 5, 0]);
        assert_eq!(ints(f.reply.as_ref().unwrap())[..3], [1, 5, 0]);
        let (m, f) = both(
            &mut c,
            &["RL.REFUND", "FIXED", "k", "10", "1000", "COST", "4"],
        );
        assert_eq!(m.state, f.state, "PXAT {at}");
        assert_eq!(ints(m.reply.as_ref().unwrap())[..3], [4, 8, 0]);
        assert_eq!(ints(f.reply.as_ref().unwrap())[..3], [4, 8, 0]);
    }
}

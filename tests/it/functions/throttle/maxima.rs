//! The arguments at their maxima and stored TATs of any size (past 2^53
//! too, and far ahead): read and written exactly by both editions.

use super::set_both;
use crate::functions::differential::{ints, same_stepping};
use crate::functions::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::Flavor;

/// The burst tolerance and rate bounds at their edges, each just inside
/// and just outside, and the arguments at their maxima: admitted at once
/// to a TAT up to 10^15 µs ahead, then peeked, denied and refunded.
#[test]
fn throttle_arguments_at_their_maxima() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let burst_too_long =
        "ERR max_burst too large: (max_burst + 1) * period / count must not exceed 31 years";
    let rate_too_high =
        "ERR count per period must not exceed 1 per microsecond (1000000 per second)";
    // (line, the module's error or None)
    let rows: &[(&[&str], Option<&str>)] = &[
        // tolerance exactly 10^15 µs, then one interval more
        (
            &["RL.THROTTLE", "k1", "999999999", "1", "1000", "1000000000"],
            None,
        ),
        (
            &["RL.THROTTLE", "k2", "1000000000", "1", "1000"],
            Some(burst_too_long),
        ),
        // T = 1 µs at the largest count and period
        (
            &[
                "RL.THROTTLE",
                "k3",
                "999999999999999",
                "1000000000000000",
                "1000000000000",
                "1000000000000000",
            ],
            None,
        ),
        (
            &[
                "RL.THROTTLE",
                "k4",
                "1000000000000000",
                "1000000000000000",
                "1000000000000",
            ],
            Some(burst_too_long),
        ),
        // one per µs exactly, and one more
        (&["RL.THROTTLE", "k5", "0", "1000", "1"], None),
        (
            &["RL.THROTTLE", "k5", "0", "1001", "1"],
            Some(rate_too_high),
        ),
        (&["CL.THROTTLE", "k6", "0", "1000000", "1"], None),
        (
            &["CL.THROTTLE", "k6", "0", "1000001", "1"],
            Some(rate_too_high),
        ),
        // the longest period: T = 10^15 µs, no burst
        (&["RL.THROTTLE", "k7", "0", "1", "1000000000000"], None),
        (
            &["RL.THROTTLE", "k7", "1", "1", "1000000000000"],
            Some(burst_too_long),
        ),
        (&["CL.THROTTLE", "k8", "0", "1", "1000000000"], None),
        (
            &[
                "CL.THROTTLE",
                "k8",
                "0",
                "1",
                "1000000000",
                "9223372036854775807",
            ],
            None,
        ),
        // T rounded up with a remainder: 10^15 / 3 -> 333333333333334;
        // 2 of them fit (666666666666668), 3 do not (1000000000000002)
        (&["RL.THROTTLE", "k9", "1", "3", "1000000000000", "2"], None),
        (
            &["RL.THROTTLE", "k10", "2", "3", "1000000000000"],
            Some(burst_too_long),
        ),
        // count just under period: T = ceil(10^15 / (10^15 - 1)) = 2 µs
        (
            &[
                "RL.THROTTLE",
                "k11",
                "499999999999999",
                "999999999999999",
                "1000000000000",
                "500000000000000",
            ],
            None,
        ),
        (
            &[
                "RL.THROTTLE",
                "k12",
                "500000000000000",
                "999999999999999",
                "1000000000000",
            ],
            Some(burst_too_long),
        ),
        // max_burst at 10^15 with the slowest useful rate is too long
        (
            &["CL.THROTTLE", "k13", "1000000000000000", "1", "1"],
            Some(burst_too_long),
        ),
        // CL.THROTTLE at its maxima: T = 1 µs, tolerance 10^15, the
        // largest quantity (limited), then the whole burst at once
        (
            &[
                "CL.THROTTLE",
                "k14",
                "999999999999999",
                "1000000000000000",
                "1000000000",
                "9223372036854775807",
            ],
            None,
        ),
        (
            &[
                "CL.THROTTLE",
                "k14",
                "999999999999999",
                "1000000000000000",
                "1000000000",
                "1000000000000000",
            ],
            None,
        ),
        (
            &[
                "CL.THROTTLE",
                "k14",
                "999999999999999",
                "1000000000000000",
                "1000000000",
                "1000000000000001",
            ],
            None,
        ),
        (
            &[
                "RL.FIXED",
                "f1",
                "1000000000000000",
                "1000000000000",
                "COST",
                "1000000000000000",
            ],
            None,
        ),
        (
            &["RL.FIXED", "f1", "1000000000000000", "1000000000000"],
            None,
        ),
        (
            &[
                "RL.FIXED",
                "f2",
                "1000000000000000",
                "1000000000000",
                "COST",
                "1000000000000001",
            ],
            Some("ERR COST must be an integer from 1 to 1000000000000000"),
        ),
    ];
    for (line, error) in rows {
        let reply = same_stepping(&s, &mut c, line);
        assert_eq!(reply.as_ref().err().map(String::as_str), *error, "{line:?}");
    }
    // Then every form on those keys, at now and further on.
    let follow: &[&[&str]] = &[
        &["RL.THROTTLE", "k1", "999999999", "1", "1000"],
        &["RL.PEEK", "THROTTLE", "k1", "999999999", "1", "1000", "0"],
        &["CL.THROTTLE", "k1", "999999999", "1", "1", "1000000000"],
        &[
            "RL.REFUND",
            "THROTTLE",
            "k1",
            "999999999",
            "1",
            "1000",
            "999999999",
        ],
        &[
            "RL.THROTTLE",
            "k3",
            "999999999999999",
            "1000000000000000",
            "1000000000000",
            "7",
        ],
        &[
            "RL.REFUND",
            "THROTTLE",
            "k3",
            "999999999999999",
            "1000000000000000",
            "1000000000000",
            "1000000000000000",
        ],
        &["RL.THROTTLE", "k7", "0", "1", "1000000000000"],
        &["RL.PEEK", "THROTTLE", "k7", "0", "1", "1000000000000"],
        &["CL.THROTTLE", "k8", "0", "1", "1000000000"],
        &["RL.REFUND", "THROTTLE", "k8", "0", "1", "1000000000000"],
        &["RL.THROTTLE", "k9", "1", "3", "1000000000000"],
        &[
            "RL.REFUND",
            "THROTTLE",
            "k9",
            "1",
            "3",
            "1000000000000",
            "1",
        ],
        &[
            "RL.THROTTLE",
            "k11",
            "499999999999999",
            "999999999999999",
            "1000000000000",
            "1",
        ],
        &[
            "RL.REFUND",
            "THROTTLE",
            "k11",
            "499999999999999",
            "999999999999999",
            "1000000000000",
            "499999999999999",
        ],
        &["RL.FIXED", "f1", "1000000000000000", "1000000000000"],
        &[
            "RL.REFUND",
            "FIXED",
            "f1",
            "1000000000000000",
            "1000000000000",
            "COST",
            "999999999999999",
        ],
        &[
            "RL.PEEK",
            "FIXED",
            "f1",
            "1000000000000000",
            "1000000000000",
            "COST",
            "1000000000000000",
        ],
        &[
            "RL.ALL",
            "2",
            "k7",
            "f1",
            "THROTTLE",
            "0",
            "1",
            "1000000000000",
            "FIXED",
            "1000000000000000",
            "1000000000000",
        ],
    ];
    for step in [0, 1, 999, 86_400_000] {
        s.advance(step);
        for line in follow {
            same_stepping(&s, &mut c, line).ok();
        }
    }
}

/// Stored TATs at the edges of what rl reads: the smallest µs TAT, values
/// around 2^53 and beyond (far ahead: denied, waits of up to 1.8 * 10^13
/// ms, refunds writing 17-digit TATs), redis-cell's nanoseconds from
/// NANOS_FROM to u64::MAX, and what is refused (above u64::MAX, 21 digits,
/// signs, no TTL). Each key is read by every throttle form, then by
/// RL.FIXED.
#[test]
fn stored_tats_near_and_past_2_to_the_53() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let ttl = s.clock_ms() + 100_000_000;
    let values = [
        "1000000000000000",
        "1000000000000001",
        "0001800000000000000",
        "4503599627370496",
        "9007199254740991",
        "9007199254740992",
        "9007199254740993",
        "9007199254741993",
        "12345678901234567",
        "99999999999999999",
        "99999999999999998",
        "100000000000000000",
        "100000000000000001",
        "1800000000000000999",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "000000000000000000001",
        "00000000000000000001",
        "+1800000000000000",
        "1800000000000000 ",
        "",
    ];
    let forms: &[&[&str]] = &[
        &["RL.THROTTLE", "K", "4", "10", "1000"],
        &["RL.PEEK", "THROTTLE", "K", "4", "10", "1000", "0"],
        &["CL.THROTTLE", "K", "4", "10", "1", "5"],
        &["CL.THROTTLE", "K", "4", "10", "1", "6"],
        &["RL.REFUND", "THROTTLE", "K", "4", "10", "1000", "3"],
        &["RL.REFUND", "THROTTLE", "K", "0", "1", "1000000000000", "1"],
        &[
            "RL.REFUND",
            "THROTTLE",
            "K",
            "999999999",
            "1",
            "1000",
            "999999999",
        ],
        &["RL.THROTTLE", "K", "999999999", "1", "1000", "1000000000"],
        &["RL.FIXED", "K", "10", "1000"],
        &[
            "RL.ALL", "2", "K", "other", "THROTTLE", "0", "1", "1000", "FIXED", "1", "1000",
        ],
    ];
    let mut answered = 0;
    // Around where the library's arithmetic switches to two parts (a TAT
    // 4 * 10^15 µs ahead of now), and the largest TAT rl itself writes.
    let now_us = s.clock_ms() * 1000;
    let around: Vec<String> = [
        3_999_999_999_999_999i64,
        4_000_000_000_000_000,
        4_000_000_000_000_001,
        4_000_000_000_999_999,
        1_000_000_000_000_000,
        999_999_999_999_999,
    ]
    .iter()
    .map(|d| (now_us + d).to_string())
    .collect();
    let values: Vec<&str> = values
        .iter()
        .copied()
        .chain(around.iter().map(String::as_str))
        .collect();
    for (i, v) in values.iter().enumerate() {
        for (j, form) in forms.iter().enumerate() {
            let k = format!("t{i}-{j}");
            set_both(&mut c, &k, v, Some(ttl));
            let line: Vec<&str> = form
                .iter()
                .map(|w| if *w == "K" { k.as_str() } else { w })
                .collect();
            if same_stepping(&s, &mut c, &line).is_ok() {
                answered += 1;
            }
            // and the same TAT without a TTL: refused
            let k = format!("u{i}-{j}");
            set_both(&mut c, &k, v, None);
            let line: Vec<&str> = form
                .iter()
                .map(|w| if *w == "K" { k.as_str() } else { w })
                .collect();
            let reply = same_stepping(&s, &mut c, &line);
            assert!(reply.is_err(), "{line:?} without a TTL: {reply:?}");
        }
    }
    assert!(answered > values.len() * 4, "{answered}");
}

/// The refund of a TAT far past 2^53 writes it back exactly, 17 digits.
#[test]
fn a_refund_far_ahead_writes_an_exact_tat() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let ttl = s.clock_ms() + 100_000_000;
    set_both(&mut c, "k", "12345678901234567", Some(ttl));
    let reply = same_stepping(
        &s,
        &mut c,
        &["RL.REFUND", "THROTTLE", "k", "4", "3", "1000", "5"],
    );
    assert_eq!(ints(&reply.unwrap())[0], 5);
    // 5 intervals of 333334 µs back.
    let v: String = redis::cmd("GET").arg("f:k").query(&mut c).unwrap();
    assert_eq!(v, "12345678899567897");
    let at: i64 = redis::cmd("PEXPIRETIME").arg("f:k").query(&mut c).unwrap();
    assert_eq!(at, 12_345_678_899_568);
    // redis-cell's ns: rounded up to µs, then written back in µs.
    set_both(&mut c, "n", "18446744073709551615", Some(ttl));
    same_stepping(
        &s,
        &mut c,
        &["RL.REFUND", "THROTTLE", "n", "0", "1", "1", "1"],
    )
    .unwrap();
    let v: String = redis::cmd("GET").arg("f:n").query(&mut c).unwrap();
    assert_eq!(v, "18446744073708552");
}

/// Random stored TATs of 16 to 20 digits (µs far ahead, redis-cell ns,
/// up to u64::MAX and past it) under random rates up to the maxima, read
/// by every throttle form: the same replies and the same written TATs.
#[test]
fn random_stored_tats_of_any_size() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let mut rng = XorShift(0xA076_1D64_78BD_642F);
    let ttl = s.clock_ms() + 100_000_000;
    let rates: &[[&str; 3]] = &[
        ["4", "10", "1000"],
        ["0", "3", "1"],
        ["999999999", "1", "1000"],
        ["1", "3", "1000000000000"],
        ["999999999999999", "1000000000000000", "1000000000000"],
        ["0", "1", "1000000000000"],
    ];
    let mut answered = 0;
    for i in 0..300 {
        let len = 16 + rng.below(5) as usize;
        let mut v: String = (0..len)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect();
        if rng.below(4) == 0 {
            // near a power of ten or of two
            v = [
                "9007199254740992",
                "99999999999999999",
                "18446744073709551615",
            ][rng.below(3) as usize]
                .to_string();
            let tail = rng.below(1000).to_string();
            v.replace_range(v.len() - tail.len().., &tail);
        }
        let k = format!("r{i}");
        set_both(&mut c, &k, &v, Some(ttl));
        let rate = rates[rng.below(rates.len() as u64) as usize];
        let limit = rate[0].parse::<u64>().unwrap() + 1;
        let q = match rng.below(3) {
            0 => limit.to_string(),
            1 => "1".to_string(),
            _ => (rng.below(limit) + 1).to_string(),
        };
        let form = rng.below(4);
        let mut line: Vec<&str> = match form {
            0 => vec!["RL.THROTTLE", &k],
            1 => vec!["RL.PEEK", "THROTTLE", &k],
            2 => vec!["RL.REFUND", "THROTTLE", &k],
            _ => vec!["CL.THROTTLE", &k],
        };
        line.extend(rate.iter().copied());
        if form == 3 {
            // CL.THROTTLE: the period in seconds, at most 10^9
            let p = line.len() - 1;
            line[p] = if rate[2].len() > 10 {
                "1000000000"
            } else {
                "1"
            };
        }
        line.push(&q);
        if same_stepping(&s, &mut c, &line).is_ok() {
            answered += 1;
        }
    }
    assert!(answered > 150, "{answered}");
}

//! The bounds on work (the most buckets, the longest calls) refused or
//! evicted alike, keys written under an older bound, the largest
//! parameters.

use redis::Value;

use super::{forge, four, s};
use crate::functions::differential::same;
use crate::functions::start_both;
use crate::harness::Flavor;

/// A BUCKETS key filled over 250 buckets of 1 ms (the most a window may
/// need), then evicted in
/// steps: the largest state, every eviction path (read the stale side, read
/// the live side, a whole window gone) and the denial walk over it.
#[test]
fn the_most_buckets_evict_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    for i in 0..250 {
        let cost = (i % 3 + 1).to_string();
        same(
            &mut c,
            &[
                "RL.BUCKETS",
                "k",
                "100000",
                "250",
                "PRECISION",
                "1",
                "COST",
                &cost,
            ],
        )
        .unwrap();
        server.advance(1);
    }
    let h = crate::harness::fields(&mut c, "m:k");
    assert!(h.len() > 240, "about 250 bucket fields: {}", h.len());
    // A denial walks the buckets from the oldest.
    let d = same(
        &mut c,
        &[
            "RL.BUCKETS",
            "k",
            "500",
            "250",
            "PRECISION",
            "1",
            "COST",
            "100",
        ],
    )
    .unwrap();
    assert_eq!(crate::harness::resp::items(&d)[0], Value::Int(0));
    for step in [1, 5, 80, 0, 50, 1, 150, 500] {
        server.advance(step);
        same(&mut c, &["RL.PEEK", "BUCKETS", "k", "100000", "250"]).unwrap();
        same(
            &mut c,
            &["RL.REFUND", "BUCKETS", "k", "100000", "250", "COST", "50"],
        )
        .unwrap();
        same(&mut c, &["RL.BUCKETS", "k", "100000", "250", "COST", "2"]).unwrap();
    }
    // Two BUCKETS clauses share the 250 buckets: 125 each.
    let ok = [
        "RL.ALL",
        "2",
        "k2",
        "j",
        "BUCKETS",
        "10",
        "125",
        "PRECISION",
        "1",
        "BUCKETS",
        "1",
        "125",
        "PRECISION",
        "1",
    ];
    same(&mut c, &ok).unwrap();
    let shared = [
        "RL.ALL",
        "2",
        "q",
        "j",
        "BUCKETS",
        "10",
        "126",
        "PRECISION",
        "1",
        "BUCKETS",
        "1",
        "125",
        "PRECISION",
        "1",
    ];
    assert_eq!(
        same(&mut c, &shared).unwrap_err(),
        "ERR clause 1: PRECISION too small: the window would need more than 125 buckets (RL.ALL's BUCKETS clauses share 250)"
    );
    let three = [
        "RL.ALL",
        "3",
        "q",
        "r",
        "s",
        "BUCKETS",
        "10",
        "84",
        "PRECISION",
        "1",
        "BUCKETS",
        "1",
        "10",
        "BUCKETS",
        "1",
        "10",
    ];
    assert!(same(&mut c, &three)
        .unwrap_err()
        .contains("more than 83 buckets"));
}

/// The bounds on buckets per window, 250 (RL.BUCKETS, RL.PEEK, RL.REFUND)
/// and 100 (RL.COUNT, RL.TOTALS), and on RL.ALL's clauses, 8: accepted at
/// the bound, refused past it with the same error by both editions.
#[test]
fn the_bounds_on_work_are_refused_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let at_bound: Vec<Vec<&str>> = vec![
        vec!["RL.BUCKETS", "b", "10", "250", "PRECISION", "1"],
        vec!["RL.PEEK", "BUCKETS", "b", "10", "250", "PRECISION", "1"],
        vec!["RL.COUNT", "c", "100", "ok", "PRECISION", "1"],
        vec!["RL.TOTALS", "c", "100", "PRECISION", "1"],
    ];
    for line in &at_bound {
        same(&mut c, line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    }
    let buckets = "ERR PRECISION too small: the window would need more than 250 buckets";
    let count = "ERR PRECISION too small: the window would need more than 100 buckets";
    let past: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["RL.BUCKETS", "n", "10", "251", "PRECISION", "1"],
            buckets,
        ),
        (
            vec!["RL.PEEK", "BUCKETS", "n", "10", "251", "PRECISION", "1"],
            buckets,
        ),
        (
            vec!["RL.REFUND", "BUCKETS", "n", "10", "251", "PRECISION", "1"],
            buckets,
        ),
        // The key's own 1 ms buckets, under a longer window.
        (vec!["RL.BUCKETS", "b", "10", "251"], buckets),
        (vec!["RL.COUNT", "n", "101", "ok", "PRECISION", "1"], count),
        (vec!["RL.TOTALS", "n", "101", "PRECISION", "1"], count),
        (vec!["RL.COUNT", "c", "101", "ok"], count),
        (vec!["RL.TOTALS", "c", "101"], count),
    ];
    for (line, want) in &past {
        assert_eq!(same(&mut c, line).unwrap_err(), *want, "{line:?}");
    }
    // RL.ALL: 8 clauses at most.
    let keys: Vec<String> = (1..=9).map(|i| format!("a{i}")).collect();
    let mut eight = vec![s("RL.ALL"), s(8)];
    eight.extend(keys[..8].iter().cloned());
    for _ in 0..8 {
        eight.extend([s("FIXED"), s(5), s(1000)]);
    }
    let eight: Vec<&str> = eight.iter().map(String::as_str).collect();
    assert_eq!(
        crate::harness::resp::items(&same(&mut c, &eight).unwrap())[0],
        Value::Int(1)
    );
    let mut nine = vec![s("RL.ALL"), s(9)];
    nine.extend(keys.iter().cloned());
    for _ in 0..9 {
        nine.extend([s("FIXED"), s(5), s(1000)]);
    }
    let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
    assert_eq!(
        same(&mut c, &nine).unwrap_err(),
        "ERR numkeys must be an integer from 1 to 8"
    );
}

/// A key an earlier release wrote over 1,000 buckets (its bound then) of
/// 1 ms is still rl's to both editions: a window of 250 of its buckets
/// counts the newest 250 and removes the 750 older ones, alike.
#[test]
fn keys_written_under_the_old_bound_are_read_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    // Bucket `now` and the 999 before it, each counting 1.
    let header = format!("b,1,{now},7{},1000,1", "f".repeat(249));
    let mut fields = vec![(s("h"), header)];
    for b in now - 999..now {
        fields.push((b.to_string(), s(1)));
    }
    let fields: Vec<(&str, &str)> = fields
        .iter()
        .map(|(f, v)| (f.as_str(), v.as_str()))
        .collect();
    forge(&mut c, "old", &fields, Some(now + 3_600_000));
    let peek = same(
        &mut c,
        &["RL.PEEK", "BUCKETS", "old", "1000", "250", "PRECISION", "1"],
    )
    .unwrap();
    assert_eq!(four(Ok(peek))[..2], [1, 749], "250 buckets counted");
    let admit = same(&mut c, &["RL.BUCKETS", "old", "1000", "250"]).unwrap();
    assert_eq!(four(Ok(admit))[..2], [1, 749]);
    let left = crate::harness::fields(&mut c, "m:old").len();
    assert_eq!(left, 250, "the header and the 249 older buckets that count");
    assert_eq!(
        same(&mut c, &["RL.BUCKETS", "old", "1000", "1000"]).unwrap_err(),
        "ERR PRECISION too small: the window would need more than 250 buckets"
    );
}

/// The largest parameters: limit and COST 10^15, window 10^12.
#[test]
fn the_largest_parameters_answer_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let max = "1000000000000000";
    let big_window = "1000000000000";
    let lines: Vec<Vec<&str>> = vec![
        vec![
            "RL.BUCKETS",
            "k",
            max,
            big_window,
            "COST",
            "999999999999999",
        ],
        vec!["RL.BUCKETS", "k", max, big_window, "COST", "2"],
        vec!["RL.BUCKETS", "k", max, big_window, "COST", "1"],
        vec!["RL.PEEK", "BUCKETS", "k", max, big_window, "COST", max],
        vec!["RL.REFUND", "BUCKETS", "k", max, big_window, "COST", max],
        vec!["RL.BUCKETS", "k", max, big_window, "COST", max],
        vec![
            "RL.BUCKETS",
            "p",
            max,
            big_window,
            "PRECISION",
            "1000000000",
        ],
        vec![
            "RL.BUCKETS",
            "p",
            "1",
            big_window,
            "PRECISION",
            "1000000000",
        ],
        vec!["RL.BUCKETS", "p", "1", big_window, "PRECISION", "999999999"],
        vec!["RL.COUNT", "n", big_window, "ok", "BY", max],
        vec!["RL.TOTALS", "n", big_window],
    ];
    for line in &lines {
        same(&mut c, line).ok();
        server.advance(123_456);
    }
    let d = same(&mut c, &["RL.BUCKETS", "k", max, big_window, "COST", max]).unwrap();
    assert_eq!(crate::harness::resp::items(&d)[0], Value::Int(0), "{d:?}");
}

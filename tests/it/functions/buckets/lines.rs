//! The random command lines of the streams: parameters, every error of the
//! commands' error tables, and a generator of lines over a few keys.

use super::s;
use crate::harness::raw_resp::XorShift;

const LIMITS: [u64; 6] = [1, 2, 3, 10, 100, 1_000_000_000_000_000];

const WINDOWS: [u64; 8] = [1, 10, 100, 250, 1000, 1000, 1000, 60_000];

const PRECISIONS: [u64; 7] = [1, 7, 10, 100, 1000, 1_000_000_000, 2000];

/// `BLOCK ms` now and then (streams on a stopped clock only: a block's end
/// is an instant).
fn block_option(r: &mut XorShift) -> Vec<String> {
    if r.below(8) != 0 {
        return Vec::new();
    }
    let ms = *r.pick(&[1u64, 50, 500, 3000, 100_000]);
    vec![s(*r.pick(&["BLOCK", "BLOCK", "block"])), s(ms)]
}

/// `limit window [PRECISION p] [COST c] [BLOCK ms]` at random (sometimes
/// invalid).
fn bucket_params(r: &mut XorShift, key: &str) -> Vec<String> {
    // Key "a" mostly keeps one shape, to reach denials and evictions.
    if key == "a" && r.below(8) != 0 {
        let cost = *r.pick(&[1u64, 1, 2, 3, 4]);
        let mut out = vec![s(10), s(1000), s("PRECISION"), s(100), s("COST"), s(cost)];
        out.extend(block_option(r));
        return out;
    }
    let limit = *r.pick(&LIMITS);
    let window = *r.pick(&WINDOWS);
    let mut out = vec![s(limit), s(window)];
    let mut opts: Vec<Vec<String>> = Vec::new();
    if r.below(3) == 0 {
        opts.push(vec![s("PRECISION"), s(*r.pick(&PRECISIONS))]);
    }
    if r.below(2) == 0 {
        let cost = match r.below(4) {
            0 => limit,
            1 => limit + 1,
            _ => 1 + r.below(limit.min(5)),
        };
        opts.push(vec![s("cost"), s(cost)]);
    }
    let block = block_option(r);
    if !block.is_empty() {
        opts.push(block);
    }
    if r.below(2) == 0 {
        opts.reverse();
    }
    for o in opts {
        out.extend(o);
    }
    out
}

pub(super) const NAMES: [&str; 11] = [
    "ok", "bad", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "BY", "x:y-z",
];

/// Lines every command's error table names (and a few more).
pub(super) fn bad_lines() -> Vec<Vec<String>> {
    let long = "x".repeat(33);
    let lines: Vec<Vec<&str>> = vec![
        vec!["RL.BUCKETS", "a", "10"],
        vec!["RL.BUCKETS", "a", "0", "1000"],
        vec!["RL.BUCKETS", "a", "1000000000000001", "1000"],
        vec!["RL.BUCKETS", "a", "010", "1000"],
        vec!["RL.BUCKETS", "a", "10", "-1"],
        vec!["RL.BUCKETS", "a", "10", "1000000000001"],
        vec!["RL.BUCKETS", "a", "10", "1000", "COST", "0"],
        vec!["RL.BUCKETS", "a", "10", "1000", "COST", "11"],
        vec!["RL.BUCKETS", "a", "10", "1000", "COST", "1", "COST", "1"],
        vec!["RL.BUCKETS", "a", "10", "1000", "PRECISION", "0"],
        vec!["RL.BUCKETS", "a", "10", "1000", "PRECISION", "x"],
        vec!["RL.BUCKETS", "a", "10", "1000", "PRECISION", "1001"],
        vec!["RL.BUCKETS", "a", "10", "100000", "PRECISION", "99"],
        vec!["RL.BUCKETS", "a", "10", "251", "PRECISION", "1"],
        vec!["RL.BUCKETS", "a", "10", "1000", "BLOCK", "0"],
        vec!["RL.BUCKETS", "a", "10", "1000", "BLOCK"],
        vec!["RL.BUCKETS", "a", "10", "1000", "BLOCK", "1000000000001"],
        vec!["RL.BUCKETS", "a", "10", "1000", "BLOCK", "5", "block", "5"],
        vec!["RL.BLOCK", "BUCKETS", "a"],
        vec!["RL.BLOCK", "BUCKETS", "a", "0"],
        vec!["RL.BLOCK", "buckets", "a", "5", "6"],
        vec!["RL.UNBLOCK", "BUCKETS", "a", "5"],
        // Errors on every stream (a real clock's too: a block that took
        // would answer an instant): `w` is a string.
        vec!["RL.BLOCK", "BUCKETS", "w", "5"],
        vec!["RL.UNBLOCK", "BUCKETS", "w"],
        vec!["RL.ALL", "1", "a", "BUCKETS", "10", "1000", "BLOCK", "0"],
        vec!["RL.COUNT", "c1", "101", "ok", "PRECISION", "1"],
        vec!["RL.TOTALS", "c1", "101", "PRECISION", "1"],
        vec!["RL.BUCKETS", "a", "10", "1000", "PRECISION"],
        vec![
            "RL.BUCKETS",
            "a",
            "10",
            "1000",
            "PRECISION",
            "10",
            "PRECISION",
            "10",
        ],
        vec![
            "RL.BUCKETS",
            "a",
            "10",
            "1000",
            "PRECISION",
            "0",
            "PRECISION",
            "10",
        ],
        vec!["RL.BUCKETS", "a", "10", "1000", "WEIGHT", "2"],
        vec![
            "RL.BUCKETS",
            "a",
            "10",
            "1000",
            "\x01very-long-option-name-past-32-bytes",
        ],
        vec!["RL.COUNT", "c1", "1000"],
        vec!["RL.COUNT", "c1", "0", "ok"],
        vec!["RL.COUNT", "c1", "1000", "a,b"],
        vec!["RL.COUNT", "c1", "1000", "a b"],
        vec!["RL.COUNT", "c1", "1000", "a\tb"],
        vec!["RL.COUNT", "c1", "1000", "é"],
        vec!["RL.COUNT", "c1", "1000", ""],
        vec!["RL.COUNT", "c1", "1000", &long],
        vec!["RL.COUNT", "c1", "1000", "ok", "BY", "0"],
        vec!["RL.COUNT", "c1", "1000", "ok", "BY", "1000000000000001"],
        vec!["RL.COUNT", "c1", "1000", "ok", "BY"],
        vec!["RL.COUNT", "c1", "1000", "ok", "BY", "1", "by", "2"],
        vec!["RL.COUNT", "c1", "1000", "ok", "PRECISION", "2000"],
        vec!["RL.COUNT", "c1", "1000000", "ok", "PRECISION", "10"],
        vec!["RL.COUNT", "c1", "1000", "ok", "COST", "1"],
        vec!["RL.TOTALS", "c1"],
        vec!["RL.TOTALS", "c1", "x"],
        vec!["RL.TOTALS", "c1", "1000", "PRECISION", "0"],
        vec!["RL.TOTALS", "c1", "1000", "PRECISION", "2000"],
        vec!["RL.TOTALS", "c1", "1000", "BY", "1"],
        vec!["RL.TOTALS", "c1", "1000", "PRECISION"],
        vec!["RL.PEEK", "BUCKETS", "a", "10"],
        vec!["RL.PEEK", "BUCKETS", "a", "10", "1000", "COST", "11"],
        vec!["RL.PEEK", "BUCKETS", "a", "10", "1000", "OLDEST", "OLDEST"],
        vec![
            "RL.PEEK",
            "BUCKETS",
            "a",
            "10",
            "1000",
            "PRECISION",
            "OLDEST",
        ],
        vec!["RL.BUCKETS", "a", "10", "1000", "OLDEST"],
        vec!["RL.COUNT", "c1", "1000", "ok", "OLDEST"],
        vec!["RL.REFUND", "BUCKETS", "a", "10", "1000", "OLDEST"],
        vec!["RL.ALL", "1", "a", "BUCKETS", "10", "1000", "OLDEST"],
        vec!["RL.REFUND", "BUCKETS", "a", "10"],
        vec!["RL.REFUND", "buckets", "a", "10", "1000", "PRECISION", "3"],
        vec![
            "RL.ALL", "2", "a", "b", "BUCKETS", "10", "BUCKETS", "1", "1000",
        ],
        vec![
            "RL.ALL",
            "2",
            "a",
            "b",
            "BUCKETS",
            "10",
            "1000",
            "PRECISION",
            "1",
            "BUCKETS",
            "1",
            "1000",
        ],
        vec![
            "RL.ALL",
            "3",
            "a",
            "b",
            "d",
            "BUCKETS",
            "10",
            "1000",
            "PRECISION",
            "3",
            "BUCKETS",
            "1",
            "1000",
            "BUCKETS",
            "1",
            "60000",
        ],
    ];
    lines
        .into_iter()
        .map(|l| l.into_iter().map(String::from).collect())
        .collect()
}

/// One random line over the keys: a BUCKETS key pool (a, b), COUNT keys
/// (c1, c2), a string (w), a foreign or forged hash (x).
pub(super) fn random_line(r: &mut XorShift, bad: &[Vec<String>]) -> Vec<String> {
    let bucket_key = s(*r.pick(&["a", "a", "a", "a", "a", "b", "b", "b", "w", "x"]));
    let count_key = s(*r.pick(&["c1", "c1", "c1", "c1", "c2", "c2", "a", "w", "x"]));
    let mut line: Vec<String> = match r.below(20) {
        17 | 18 => {
            // By hand, on a key that may hold any state (or none).
            let key = s(*r.pick(&["a", "a", "b", "d", "x", "c1"]));
            if r.below(3) != 0 {
                let ms = *r.pick(&[1u64, 200, 2000, 60_000]);
                return vec![s("RL.BLOCK"), s("BUCKETS"), key, s(ms)];
            }
            return vec![s("RL.UNBLOCK"), s("BUCKETS"), key];
        }
        19 => {
            // A charge, which keeps a block that holds.
            let mut l = vec![s("RL.CHARGE"), s("BUCKETS"), bucket_key];
            l.extend([s(10), s(1000), s("PRECISION"), s(100)]);
            l.extend([s("COST"), s(1 + r.below(6))]);
            return l;
        }
        0..=6 => vec![s("RL.BUCKETS"), bucket_key],
        7 => vec![s("RL.PEEK"), s("BUCKETS"), bucket_key],
        8 => vec![s("RL.REFUND"), s("BUCKETS"), bucket_key],
        9..=11 => {
            let mut l = vec![s("RL.COUNT"), count_key];
            let window = *r.pick(&[1000u64, 1000, 1000, 1000, 100, 60_000, 7]);
            l.push(s(window));
            l.push(s(*r.pick(&NAMES)));
            if r.below(3) == 0 {
                l.extend([s("BY"), s(*r.pick(&[1u64, 5, 1_000_000_000_000_000]))]);
            }
            if r.below(4) == 0 {
                l.extend([s("PRECISION"), s(*r.pick(&PRECISIONS))]);
            }
            return l;
        }
        12 | 13 => {
            let mut l = vec![s("RL.TOTALS"), count_key];
            l.push(s(*r.pick(&[1000u64, 1000, 1000, 100, 60_000, 10])));
            if r.below(4) == 0 {
                l.extend([s("PRECISION"), s(*r.pick(&PRECISIONS))]);
            }
            return l;
        }
        14 => {
            let n = 2 + r.below(2) as usize;
            let keys = ["a", "b", "d", "c1"];
            let mut l = vec![s("RL.ALL"), s(n)];
            let start = r.below(2) as usize;
            l.extend(keys[start..start + n].iter().map(|k| s(*k)));
            for i in 0..n {
                l.push(s("BUCKETS"));
                let key = l[2 + i].clone();
                l.extend(bucket_params(r, &key));
            }
            return l;
        }
        _ => return r.pick(bad).clone(),
    };
    let key = line[line.len() - 1].clone();
    line.extend(bucket_params(r, &key));
    if line[0] == "RL.PEEK" && r.below(2) == 0 {
        line.push(s("OLDEST"));
    }
    line
}

//! RL.BUCKETS, RL.COUNT, RL.TOTALS (and RL.PEEK / RL.REFUND BUCKETS,
//! BUCKETS clauses of RL.ALL) through the module and through the function
//! library: same replies, same errors, same hashes and expiries.
//!
//! On Valkey the clock is stopped: seeded random streams compare every
//! step with [`same`]. On Redis 7.0 and 8.2 the clock is real: the streams
//! use windows far longer than the test, and compare what does not depend
//! on the instant.

use std::collections::BTreeMap;

use redis::Value;

use super::differential::{
    alike, both, pairs_sorted, run_stream, same, words, Answer, ClockSteps, Step, Tally,
};
use super::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{Flavor, Plain, Server};

fn s(v: impl ToString) -> String {
    v.to_string()
}

/// Writes the same hash under `m:key` and `f:key`, with an absolute expiry
/// (`None`: no TTL).
fn forge(c: &mut redis::Connection, key: &str, fields: &[(&str, &str)], expire_at: Option<i64>) {
    for prefix in ["m:", "f:"] {
        let k = format!("{prefix}{key}");
        let _: () = redis::cmd("DEL").arg(&k).query(c).unwrap();
        let mut hset = redis::cmd("HSET");
        hset.arg(&k);
        for (f, v) in fields {
            hset.arg(*f).arg(*v);
        }
        let _: () = hset.query(c).unwrap();
        if let Some(at) = expire_at {
            let _: () = redis::cmd("PEXPIREAT").arg(&k).arg(at).query(c).unwrap();
        }
    }
}

/// The same string under `m:key` and `f:key`.
fn forge_string(c: &mut redis::Connection, key: &str) {
    for prefix in ["m:", "f:"] {
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}{key}"))
            .arg("not rl")
            .query(c)
            .unwrap();
    }
}

const LIMITS: [u64; 6] = [1, 2, 3, 10, 100, 1_000_000_000_000_000];
const WINDOWS: [u64; 8] = [1, 10, 100, 250, 1000, 1000, 1000, 60_000];
const PRECISIONS: [u64; 7] = [1, 7, 10, 100, 1000, 1_000_000_000, 2000];
const STEPS: [u64; 14] = [0, 0, 0, 1, 3, 17, 50, 99, 100, 250, 999, 1000, 5000, 70_000];

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

const NAMES: [&str; 11] = [
    "ok", "bad", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "BY", "x:y-z",
];

/// Lines every command's error table names (and a few more).
fn bad_lines() -> Vec<Vec<String>> {
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
fn random_line(r: &mut XorShift, bad: &[Vec<String>]) -> Vec<String> {
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

/// Foreign and forged hashes for key `x`, around bucket `n` of 100 ms
/// buckets: (fields, with a TTL).
fn forged_states(now_ms: i64) -> Vec<(Vec<(String, String)>, bool)> {
    let n = now_ms / 100;
    let h = |v: String| (s("h"), v);
    let f = |k: &str, v: &str| (s(k), s(v));
    let wide = "1".repeat(501);
    vec![
        (vec![f("name", "value")], true),
        (vec![h(format!("b,100,{n},0,1,1"))], false),
        (vec![h(format!("z,100,{n},0,1,1"))], true),
        (vec![h(format!("b,0,{n},0,1,1"))], true),
        (vec![h(format!("b,-100,{n},0,1,1"))], true),
        (vec![h(format!("b,100,{n},0,1"))], true),
        (vec![h(format!("b,100,{n},0,1,1,"))], true),
        (vec![h(s("b,100,99999999999999999,0,1,1"))], true),
        (vec![h(format!("b,100,{n},G,1,1"))], true),
        (vec![h(format!("b,100,{n},F,1,1"))], true),
        (vec![h(format!("b,100,{n},{wide},1,1"))], true),
        (vec![h(format!("b,100,{n},0,1000000000000000000,1"))], true),
        (vec![h(format!("b,100,{n},0,-1,1"))], true),
        (vec![h(format!("b,100,{n},0,1x,1"))], true),
        // Blocks: held, ended, alone, and shapes rl does not write.
        (vec![h(format!("b,100,{n},0,1,1,b{}", now_ms + 500))], true),
        (vec![h(format!("b,100,{n},0,1,1,b{}", now_ms - 500))], true),
        (vec![h(format!("b,b{}", now_ms + 500))], true),
        (vec![h(format!("c,b{}", now_ms + 500))], true),
        (vec![h(format!("b,100,{n},0,1,1,b"))], true),
        (vec![h(format!("b,100,{n},0,1,1,b1,b2"))], true),
        (vec![h(format!("b,100,{n},0,1,b{}", now_ms + 500))], true),
        (vec![h(s("b,100,5,0,1,1,b1000000000000000"))], true),
        (vec![h(format!("b,b{},1", now_ms + 500))], true),
        // A bucket field that is not counts: refused when a call reads it.
        (
            vec![h(format!("b,100,{n},1,5,3")), f(&(n - 1).to_string(), "x")],
            true,
        ),
        (
            vec![
                h(format!("b,100,{n},1,5,3")),
                f(&(n - 1).to_string(), "1,1"),
            ],
            true,
        ),
        // A stale bucket counting more than the stored total: the total
        // without it saturates at 0.
        (
            vec![
                h(format!("b,100,{n},100003,2,0")),
                f(&(n - 1).to_string(), "1"),
                f(&(n - 2).to_string(), "1"),
                f(&(n - 21).to_string(), "7"),
            ],
            true,
        ),
        // Counts padded as releases before 0.2 wrote them.
        (
            vec![
                h(format!("b,100,{n},1,000000005,000000003")),
                f(&(n - 1).to_string(), "000000002"),
            ],
            true,
        ),
        (
            vec![
                h(format!("b,0100,{},5,-0,000000004", n - 2)),
                f(&(n - 3).to_string(), "000000000"),
                f(&(n - 5).to_string(), "7"),
            ],
            true,
        ),
        // Huge counts: a denial with the largest totals rl reads.
        (
            vec![
                h(format!("b,100,{n},3,999999999999999999,999999999999999999")),
                f(&(n - 1).to_string(), "18446744073709551615"),
                f(&(n - 2).to_string(), "18446744073709551615"),
            ],
            true,
        ),
        (vec![h(format!("b,100,{n},0,18446744073709551615,1"))], true),
        // A newest bucket ahead of the clock (a clock that stepped back):
        // new events go into it.
        (
            vec![
                h(format!("b,100,{},1,5,3", n + 50)),
                f(&(n + 49).to_string(), "2"),
            ],
            true,
        ),
        (
            vec![
                h(format!("c,100,{},0,3", n + 50)),
                f("f", "ok"),
                f(&(n + 50).to_string(), "3"),
            ],
            true,
        ),
        // More names than rl writes (ten): still read, sorted alike.
        (
            vec![
                h(format!("c,100,{n},0,1,2,3,4,5,6,7,8,9,10")),
                f("f", "j,i,h,g,f,e,d,c,b,a"),
                f(&n.to_string(), "1,2,3,4,5,6,7,8,9,10"),
            ],
            true,
        ),
        // RL.COUNT layouts.
        (vec![h(format!("c,100,{n},0,1"))], true),
        (vec![h(format!("c,100,{n},0,1,2")), f("f", "ok")], true),
        (
            vec![
                h(format!("c,100,{n},1,000000004,000000002")),
                f("f", "ok,bad"),
                f(&n.to_string(), "000000001,000000001"),
                f(&(n - 1).to_string(), "000000003"),
            ],
            true,
        ),
        (
            vec![
                h(format!("c,100,{n},0,4")),
                f("f", "ok"),
                f(&n.to_string(), "1,2"),
            ],
            true,
        ),
        (
            vec![
                h(format!("c,100,{n},0,1,2,3")),
                f("f", "zz,,aa"),
                f(&n.to_string(), "1,2,3"),
            ],
            true,
        ),
    ]
}

fn forge_x(c: &mut redis::Connection, state: &(Vec<(String, String)>, bool), now: i64) {
    let fields: Vec<(&str, &str)> = state
        .0
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    forge(c, "x", &fields, state.1.then_some(now + 3_600_000));
}

const CLOCK: ClockSteps = ClockSteps {
    one_in: 6,
    ms: &STEPS,
};

/// A random stream on a stopped clock: every step the same reply and state.
fn stream(seed: u64, steps: usize) {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    forge_string(&mut c, "w");
    let bad = bad_lines();
    let mut r = XorShift(seed);
    let forged = forged_states(server.clock_ms());
    let mut seen = Tally::default();
    let next = |c: &mut redis::Connection, _: &Tally| -> Step {
        CLOCK.maybe_step(&server, &mut r);
        if r.below(15) == 0 {
            let state = r.pick(&forged).clone();
            forge_x(c, &state, server.clock_ms());
        }
        random_line(&mut r, &bad).into()
    };
    // Calls that met a block holding on an `a` or `b` key (the module's
    // copy read after the call): the stream reaches blocks.
    let mut on_blocked = 0;
    let compare = |c: &mut redis::Connection, line: &[&str]| {
        let reply = same(c, line);
        let denied = matches!(&reply, Ok(Value::Array(v)) if v.first() == Some(&Value::Int(0)));
        let key = format!(
            "m:{}",
            line.get(if line[0] == "RL.BUCKETS" { 1 } else { 2 })
                .unwrap_or(&"")
        );
        let header: Option<String> = redis::cmd("HGET")
            .arg(&key)
            .arg("h")
            .query(c)
            .unwrap_or(None);
        if denied && header.is_some_and(|h| h.contains(",b")) {
            on_blocked += 1;
        }
        reply
    };
    run_stream(&mut c, steps, &mut seen, next, compare);
    let errors = seen.get("error");
    assert!(
        on_blocked > 10 && seen.get("blocked by hand") > 5 && seen.get("unblocked") > 1,
        "the stream reached blocks ({on_blocked} denials on a blocked key): {seen:#?}"
    );
    assert!(
        seen.get("admitted") > 80
            && seen.get("denied") > 20
            && errors > 50
            && errors < steps * 2 / 3
            && seen.get("totals") > 50
            && seen.get("peek oldest counted") > 3
            && seen.get("peek oldest empty") > 0,
        "the stream reached every outcome: {seen:#?}"
    );
}

#[test]
fn random_streams_on_a_stopped_clock_answer_alike() {
    stream(0x9e37_79b9_7f4a_7c15, 850);
}

#[test]
fn another_random_stream_answers_alike() {
    stream(0xdead_beef_1234_5678, 850);
}

/// Every forged or foreign hash, under every command and after clock steps.
#[test]
fn forged_and_foreign_hashes_are_read_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let lines: Vec<Vec<&str>> = vec![
        vec!["RL.BUCKETS", "x", "10", "1000", "PRECISION", "100"],
        vec!["RL.BUCKETS", "x", "10", "1000"],
        vec!["RL.BUCKETS", "x", "10", "1000", "PRECISION", "50"],
        vec!["RL.BUCKETS", "x", "1000", "100000", "COST", "7"],
        vec!["RL.PEEK", "BUCKETS", "x", "2", "1000"],
        vec!["RL.REFUND", "BUCKETS", "x", "10", "1000", "COST", "4"],
        vec!["RL.COUNT", "x", "1000", "ok"],
        vec!["RL.COUNT", "x", "1000", "new", "BY", "3"],
        vec!["RL.TOTALS", "x", "1000"],
        vec!["RL.TOTALS", "x", "100000"],
        vec![
            "RL.ALL", "2", "x", "y", "BUCKETS", "10", "1000", "BUCKETS", "1", "10",
        ],
        vec!["RL.BUCKETS", "x", "1", "1000", "BLOCK", "700"],
        vec!["RL.CHARGE", "BUCKETS", "x", "10", "1000", "COST", "3"],
        vec!["RL.BLOCK", "BUCKETS", "x", "300"],
        vec!["RL.UNBLOCK", "BUCKETS", "x"],
    ];
    let mut outcomes = BTreeMap::new();
    for i in 0..forged_states(0).len() {
        for line in &lines {
            for step in [0, 150, 900] {
                // Forged around the clock's bucket now (the clock moves on
                // through the loop), so the calls read its fields.
                let state = &forged_states(server.clock_ms())[i];
                forge_x(&mut c, state, server.clock_ms());
                server.advance(step);
                let reply = same(&mut c, line);
                let kind = match &reply {
                    Ok(_) => "ok".to_string(),
                    Err(e) => e.clone(),
                };
                *outcomes.entry(kind).or_insert(0) += 1;
            }
        }
    }
    for want in [
        "ok",
        "ERR key holds a hash that rl did not write",
        "ERR key holds RL.COUNT state, not RL.BUCKETS state",
        "ERR key holds RL.BUCKETS state, not RL.COUNT state",
        "ERR PRECISION differs from the key's bucket width (100 ms)",
    ] {
        assert!(outcomes.contains_key(want), "{want}: {outcomes:?}");
    }
}

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

fn total_of(v: &Value, name: &str) -> Value {
    let items = crate::harness::resp::items(v);
    for pair in items.chunks(2) {
        if crate::harness::resp::text(&pair[0]) == name {
            return pair[1].clone();
        }
    }
    panic!("{name} not in {v:?}")
}

/// RL.COUNT totals past 2^53: the stored counts are exact decimals in both
/// editions; the library's reply is the nearest double (a Lua reply cannot
/// carry more), exact for multiples of 10^15.
#[test]
fn count_totals_past_2_pow_53_are_stored_exactly() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let by = "1000000000000000";
    // 20 × 10^15 = 2 × 10^16 > 2^53: exact doubles, so equal replies.
    for _ in 0..20 {
        same(&mut c, &["RL.COUNT", "k", "60000", "bytes", "BY", by]).unwrap();
    }
    let t = same(&mut c, &["RL.TOTALS", "k", "60000"]).unwrap();
    assert_eq!(total_of(&t, "bytes"), Value::Int(20_000_000_000_000_000));
    // One more: 2 × 10^16 + 1 has no double.
    let (m, f) = both(&mut c, &["RL.COUNT", "k", "60000", "bytes", "BY", "1"]);
    assert_eq!(m.state, f.state, "the stored counts are the same");
    assert_eq!(
        total_of(m.reply.as_ref().unwrap(), "bytes"),
        Value::Int(20_000_000_000_000_001)
    );
    assert_eq!(
        total_of(f.reply.as_ref().unwrap(), "bytes"),
        Value::Int(20_000_000_000_000_000)
    );
    // Next to the largest total: forged counts, then BY to exactly the
    // largest, then past it (refused by both, nothing written).
    let now = server.clock_ms();
    let n = (now / 1000).to_string();
    forge(
        &mut c,
        "big",
        &[
            ("h", &format!("c,1000,{n},0,999999999999999000,5")),
            ("f", "big,small"),
            (&n, "999999999999999000,5"),
        ],
        Some(now + 100_000),
    );
    let (m, f) = both(&mut c, &["RL.COUNT", "big", "60000", "big", "BY", "999"]);
    assert_eq!(m.state, f.state);
    assert_eq!(
        total_of(m.reply.as_ref().unwrap(), "big"),
        Value::Int(999_999_999_999_999_999)
    );
    assert_eq!(
        total_of(f.reply.as_ref().unwrap(), "big"),
        Value::Int(1_000_000_000_000_000_000)
    );
    assert_eq!(
        same(&mut c, &["RL.COUNT", "big", "60000", "big", "BY", "1"]).unwrap_err(),
        "ERR BY would take the field's total over the window past 999999999999999999"
    );
    let (m, f) = both(&mut c, &["RL.COUNT", "big", "60000", "small", "BY", "1"]);
    assert_eq!(m.state, f.state);
    assert_eq!(total_of(f.reply.as_ref().unwrap(), "small"), Value::Int(6));
    // Next to 2^53: exact.
    forge(
        &mut c,
        "edge",
        &[
            ("h", &format!("c,1000,{n},0,9007199254740990")),
            ("f", "e"),
            (&n, "9007199254740990"),
        ],
        Some(now + 100_000),
    );
    let r = same(&mut c, &["RL.COUNT", "edge", "60000", "e", "BY", "2"]).unwrap();
    assert_eq!(total_of(&r, "e"), Value::Int(9_007_199_254_740_992));
    // After the window the big bucket leaves: 0 again, equal.
    server.advance(61_000);
    let t = same(&mut c, &["RL.TOTALS", "big", "60000"]).unwrap();
    assert_eq!(total_of(&t, "big"), Value::Int(0));
    same(&mut c, &["RL.COUNT", "big", "60000", "big"]).unwrap();
}

/// RL.TOTALS / RL.COUNT reply name/total pairs: a flat array in RESP2, a
/// map in RESP3, the module's as maps; the ninth name is refused.
#[test]
fn totals_are_name_total_pairs_in_resp2_and_resp3() {
    let server = start_both(Flavor::Valkey9);
    let mut c2 = server.conn();
    let mut c3 = server.conn_resp3();
    let names = ["zeta", "alpha", "mid", "beta", "x1", "x2", "q", "omega"];
    for (i, name) in names.iter().enumerate() {
        let by = (i + 1).to_string();
        same(&mut c2, &["RL.COUNT", "k", "60000", name, "BY", &by]).unwrap();
        same(&mut c3, &["RL.COUNT", "k3", "60000", name]).unwrap();
        same(&mut c3, &["RL.TOTALS", "k", "60000"]).unwrap();
        server.advance(700);
    }
    let t2 = same(&mut c2, &["RL.TOTALS", "k", "60000"]).unwrap();
    // Each name once with its total, in an order left unspecified.
    let mut got: Vec<(String, i64)> = crate::harness::resp::items(&t2)
        .chunks(2)
        .map(|p| {
            (
                crate::harness::resp::text(&p[0]),
                redis::from_redis_value(&p[1]).unwrap(),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, i64)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), i as i64 + 1))
        .collect();
    want.sort();
    assert_eq!(got, want);
    let t3 = same(&mut c3, &["RL.TOTALS", "k", "60000"]).unwrap();
    assert!(matches!(t3, Value::Map(_)), "{t3:?}");
    assert_eq!(
        same(&mut c3, &["RL.COUNT", "k", "60000", "ninth"]).unwrap_err(),
        "ERR key already counts 8 fields, the most it may hold"
    );
    // A missing key: an empty array / map; read-only through FCALL_RO.
    assert_eq!(
        same(&mut c2, &["RL.TOTALS", "none", "1000"]).unwrap(),
        Value::Array(vec![])
    );
    assert_eq!(
        same(&mut c3, &["RL.TOTALS", "none", "1000"]).unwrap(),
        Value::Map(vec![])
    );
    let ro: Value = redis::cmd("FCALL_RO")
        .arg("rl_totals")
        .arg(1)
        .arg("f:k")
        .arg(60000)
        .query(&mut c2)
        .unwrap();
    assert_eq!(pairs_sorted("RL.TOTALS", Ok(ro)), Ok(t2));
}

/// What one answer shows that does not depend on the instant, with long
/// windows: errors, allowed and remaining, totals, and the header's kind,
/// precision and totals (the buckets' indexes depend on the instant).
fn timeless(a: &Answer, line: &[String]) -> (Result<Value, String>, Vec<String>) {
    let reply = match &a.reply {
        Ok(Value::Array(v)) if line[0] != "RL.COUNT" && line[0] != "RL.TOTALS" => {
            if line[0] == "RL.ALL" {
                Ok(Value::Array(v[..1].to_vec()))
            } else {
                Ok(Value::Array(v[..2].to_vec()))
            }
        }
        other => other.clone(),
    };
    let mut shape = Vec::new();
    for (plain, at) in &a.state {
        match plain {
            Plain::Hash(h) => {
                let header = h
                    .get(&b"h"[..])
                    .map(|v| String::from_utf8_lossy(v).to_string());
                let items: Vec<String> = header
                    .unwrap_or_default()
                    .split(',')
                    .map(String::from)
                    .collect();
                let width = h
                    .get(&b"f"[..])
                    .map(|f| f.split(|&b| b == b',').count())
                    .unwrap_or(1);
                let mut kept: Vec<String> = items.iter().take(2).cloned().collect();
                kept.extend(items.iter().skip(4).take(width).cloned());
                shape.push(kept.join(","));
                shape.push(format!("{:?}", h.get(&b"f"[..])));
                shape.push((*at > 0).to_string());
            }
            other => shape.push(format!("{other:?} {at}")),
        }
    }
    (reply, shape)
}

/// The stream on a real clock: windows of 10^9 ms, so no bucket leaves
/// during the test.
fn real_clock_stream(flavor: Flavor, seed: u64, steps: usize) {
    let server: Server = start_both(flavor);
    let mut c = server.conn();
    let mut c3 = server.conn_resp3();
    forge_string(&mut c, "w");
    let bad = bad_lines();
    let mut r = XorShift(seed);
    let long = "1000000000";
    let (mut same_errors, mut compared) = (0, 0);
    for _ in 0..steps {
        let key = s(*r.pick(&["a", "b", "c1", "w"]));
        let limit = s(*r.pick(&[5u64, 10, 1_000_000_000_000_000]));
        let cost = s(1 + r.below(4));
        let line: Vec<String> = match r.below(9) {
            0..=2 => vec![s("RL.BUCKETS"), key, limit, s(long), s("COST"), cost],
            3 => vec![
                s("RL.PEEK"),
                s("BUCKETS"),
                key,
                limit,
                s(long),
                s("COST"),
                cost,
            ],
            4 => vec![
                s("RL.REFUND"),
                s("BUCKETS"),
                key,
                limit,
                s(long),
                s("COST"),
                cost,
            ],
            5 | 6 => {
                let name = s(*r.pick(&NAMES));
                let key = s(*r.pick(&["c1", "c2", "a", "w"]));
                vec![s("RL.COUNT"), key, s(long), name, s("BY"), cost]
            }
            7 => vec![s("RL.TOTALS"), s(*r.pick(&["c1", "c2", "a"])), s(long)],
            _ => r.pick(&bad).clone(),
        };
        let conn = if r.below(3) == 0 { &mut c3 } else { &mut c };
        let (m, _) = alike(conn, &words(&line), |a| timeless(a, &line));
        if m.reply.is_err() {
            same_errors += 1;
        }
        compared += 1;
    }
    assert!(
        same_errors > 20 && compared == steps,
        "{same_errors} errors"
    );
}

#[test]
fn redis7_streams_answer_alike() {
    real_clock_stream(Flavor::Redis7, 0x1234_5678_9abc_def1, 400);
}

#[test]
fn redis8_streams_answer_alike() {
    real_clock_stream(Flavor::Redis8, 0x0fed_cba9_8765_4321, 400);
}

/// On Redis too (whose Lua hashes strings otherwise than Valkey's), the
/// totals are the module's, compared as maps.
#[test]
fn redis_totals_are_the_modules_as_maps() {
    for flavor in [Flavor::Redis7, Flavor::Redis8] {
        let server = start_both(flavor);
        let mut c2 = server.conn();
        let mut c3 = server.conn_resp3();
        let names = ["zeta", "alpha", "mid", "beta", "x1", "x2", "q", "omega"];
        for name in names {
            let (m, f) = both(&mut c2, &["RL.COUNT", "k", "1000000000", name]);
            assert_eq!(m.reply, f.reply, "{flavor:?}");
        }
        for c in [&mut c2, &mut c3] {
            let (m, f) = both(c, &["RL.TOTALS", "k", "1000000000"]);
            assert_eq!(m.reply, f.reply, "{flavor:?}");
        }
    }
}

/// RL.REFUND BUCKETS keeps the newest bucket, so the expiry it needs moves
/// only when the refund names a longer window than the admissions did: the
/// module then moves it (Expiry over the refund's window), and so does the
/// library.
#[test]
fn a_refund_under_a_longer_window_moves_the_expiry_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    same(&mut c, &["RL.BUCKETS", "k", "10", "1000", "COST", "3"]).unwrap();
    let before = crate::harness::pexpiretime(&mut c, "m:k");
    server.advance(10);
    same(
        &mut c,
        &["RL.REFUND", "BUCKETS", "k", "10", "1000", "COST", "1"],
    )
    .unwrap();
    assert_eq!(crate::harness::pexpiretime(&mut c, "m:k"), before);
    // The key's 17 ms buckets: 250 of them (the most) span 4,250 ms.
    same(&mut c, &["RL.REFUND", "BUCKETS", "k", "10", "4250"]).unwrap();
    assert!(crate::harness::pexpiretime(&mut c, "m:k") > before + 3_000);
    assert_eq!(
        same(&mut c, &["RL.REFUND", "BUCKETS", "k", "10", "4251"]).unwrap_err(),
        "ERR PRECISION too small: the window would need more than 250 buckets"
    );
}

fn four(v: Result<Value, String>) -> [i64; 4] {
    let v: Vec<i64> = redis::from_redis_value(&v.unwrap()).unwrap();
    v.try_into().unwrap()
}

/// Issue #23's repro through both editions on the stopped clock: a refund
/// under a shorter window keeps the 9-unit bucket, the replies are the
/// issue's, and one more unit is admitted, not ten.
#[test]
fn a_refund_under_a_shorter_window_drops_no_count_alike() {
    for flavor in [Flavor::Valkey9, Flavor::Valkey9Native] {
        let server = start_both(flavor);
        server.advance((1000 - server.clock_ms().rem_euclid(1000)) as u64 % 1000);
        let mut c = server.conn();
        let line = ["RL.BUCKETS", "b", "10", "10000", "PRECISION", "1000"];
        let cost = [&line[..], &["COST", "9"]].concat();
        assert_eq!(four(same(&mut c, &cost)), [1, 1, 0, 10_999], "{flavor:?}");
        server.advance(3000);
        assert_eq!(four(same(&mut c, &line)), [1, 0, 0, 10_999], "{flavor:?}");
        assert_eq!(
            four(same(&mut c, &line)),
            [0, 0, 7_999, 10_999],
            "{flavor:?}"
        );
        let refund = ["RL.REFUND", "BUCKETS", "b", "10", "2000", "COST", "1"];
        assert_eq!(four(same(&mut c, &refund)), [1, 9, 0, 2_999], "{flavor:?}");
        for k in ["m:b", "f:b"] {
            let buckets = crate::harness::bucket_fields(&mut c, k);
            assert_eq!(
                buckets.values().collect::<Vec<_>>(),
                ["9"],
                "{flavor:?} {k}"
            );
        }
        let admitted = (0..10)
            .filter(|_| four(same(&mut c, &line))[0] == 1)
            .count();
        assert_eq!(admitted, 1, "{flavor:?}: one unit was given back");
    }
}

/// Both editions read everything a refund's reply needs before writing: a
/// foreign bucket field met only by the peek after (its denial walk from
/// the oldest) refuses the refund with nothing written.
#[test]
fn a_refund_checks_what_its_peek_reads_before_writing_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let line = ["RL.BUCKETS", "b", "10", "1000", "PRECISION", "100"];
    same(&mut c, &[&line[..], &["COST", "3"]].concat()).unwrap();
    server.advance(500);
    same(&mut c, &[&line[..], &["COST", "4"]].concat()).unwrap();
    let mut before = Vec::new();
    for k in ["m:b", "f:b"] {
        let older = *crate::harness::bucket_fields(&mut c, k)
            .keys()
            .next()
            .unwrap();
        let _: () = redis::cmd("HSET")
            .arg(k)
            .arg(older)
            .arg("x")
            .query(&mut c)
            .unwrap();
        before.push(crate::harness::frozen_state(&mut c, k));
    }
    let refund = ["RL.REFUND", "BUCKETS", "b", "5", "1000", "PRECISION", "100"];
    assert_eq!(
        same(&mut c, &refund).unwrap_err(),
        "ERR key holds a hash that rl did not write"
    );
    for (k, was) in ["m:b", "f:b"].iter().zip(&before) {
        assert_eq!(&crate::harness::frozen_state(&mut c, k), was, "{k}");
    }
}

/// RL.PEEK BUCKETS ... OLDEST on both editions: the oldest counted bucket
/// held apart from the newest, then the newest alone, then none.
#[test]
fn oldest_is_the_same_wait_on_both_editions() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let peek = [
        "RL.PEEK",
        "BUCKETS",
        "o",
        "5",
        "1000",
        "PRECISION",
        "100",
        "OLDEST",
    ];
    let five = |c: &mut redis::Connection| match same(c, &peek) {
        Ok(v) => super::differential::ints(&v),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(five(&mut c)[4], 0);
    let t0 = server.clock_ms();
    let leaves = |b: i64| (b + 1) * 100 - 1 + 1000;
    let b0 = t0.div_euclid(100);
    same(
        &mut c,
        &["RL.BUCKETS", "o", "5", "1000", "PRECISION", "100"],
    )
    .unwrap();
    server.advance(300);
    same(&mut c, &["RL.BUCKETS", "o", "5", "1000", "COST", "2"]).unwrap();
    server.advance(300);
    same(&mut c, &["RL.BUCKETS", "o", "5", "1000"]).unwrap();
    assert_eq!(five(&mut c)[4], leaves(b0) - (t0 + 600));
    // Bucket b0 has left; b0 + 3, held apart from the newest, is the
    // oldest counted, then the newest (b0 + 6) alone.
    let t1 = leaves(b0);
    server.advance((t1 - t0 - 600) as u64);
    assert_eq!(five(&mut c)[4], 300);
    server.advance(300);
    assert_eq!(five(&mut c)[4], 300);
    server.advance(300);
    assert_eq!(five(&mut c)[4], 0);
}

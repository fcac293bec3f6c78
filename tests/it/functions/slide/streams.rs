//! Random streams of every command the sliding log owns: on Valkey's stopped
//! clock compared whole at every step, on Redis 7.0 and 8.2 (real clock)
//! through what does not depend on the instant.

use redis::Value;

use super::errors::{bad_lines, foreign_shapes};
use super::{member, zcard, FOREIGN, WRONGTYPE};
use crate::functions::differential::{both, ints, on_both, run_stream, same, Answer, Step, Tally};
use crate::functions::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{Flavor, Plain, Server};

/// One random RL.SLIDE-shaped request: (limit, window, cost, cost given).
fn random_params(rng: &mut XorShift, timing_free: bool) -> (u64, u64, u64, bool) {
    let limit = *rng.pick(&[1u64, 2, 3, 5, 10, 100, 1000, 1_000_000]);
    let window = if timing_free {
        *rng.pick(&[1_000_000_000u64, 1_000_000_000_000])
    } else {
        *rng.pick(&[1u64, 3, 10, 100, 1000, 10_000, 1_000_000_000_000])
    };
    let max_cost = limit.min(100);
    let cost = match rng.below(4) {
        0 => max_cost,
        1 => 1 + rng.below(max_cost),
        _ => 1 + rng.below(max_cost.min(4)),
    };
    let given = cost != 1 || rng.below(3) == 0;
    (limit, window, cost, given)
}

fn params_words(
    limit: u64,
    window: u64,
    cost: u64,
    given: bool,
    rng: &mut XorShift,
) -> Vec<String> {
    let mut out = vec![limit.to_string(), window.to_string()];
    if given {
        out.push(rng.pick(&["COST", "cost", "Cost"]).to_string());
        out.push(cost.to_string());
    }
    out
}

/// `BLOCK ms` now and then (streams on a stopped clock only: a block's end
/// is an instant).
fn block_option(rng: &mut XorShift, timing_free: bool) -> Vec<String> {
    if timing_free || rng.below(6) != 0 {
        return Vec::new();
    }
    let ms = *rng.pick(&[1u64, 50, 500, 3000, 100_000]);
    vec![
        rng.pick(&["BLOCK", "BLOCK", "block"]).to_string(),
        ms.to_string(),
    ]
}

/// How the two answers of a timing-dependent line are compared.
type Compare = fn(&mut redis::Connection, &[&str]) -> Result<Value, String>;

/// A random stream of every command this section owns over keys `a`, `b`,
/// `c` (and foreign keys `x`, `y`), `steps` steps, each checked with
/// `compare`. `server` steps the clock (stopped: by exactly the step;
/// real: the stream is timing-free and does not step). Besides the
/// outcomes, the tally counts "removed" (an admission that removed stale
/// entries), "prepared" (a call made to read up to a prepared foreign
/// entry), "foreign" and "wrongtype" (those refusals).
fn stream(server: &Server, seed: u64, steps: usize, compare: Compare, timing_free: bool) -> Tally {
    let mut c = server.conn();
    let mut rng = XorShift(seed);
    let mut tally = Tally::default();
    let keys = ["a", "b", "c"];
    let bad = bad_lines();
    let shapes = foreign_shapes();
    let (mut prepared, mut removed) = (0, 0);
    let next = |c: &mut redis::Connection, _: &Tally| -> Step {
        let roll = rng.below(100);
        // A key spoiled for this step only (deleted after it).
        let mut spoiled = None;
        // The line for a prepared state that needs a particular one.
        let mut forced: Option<Vec<String>> = None;
        let key = *rng.pick(&keys);
        let line: Vec<String> = match roll {
            0..=34 => {
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let mut line = vec!["RL.SLIDE".to_string(), key.to_string()];
                line.extend(params_words(l, w, cost, given, &mut rng));
                line.extend(block_option(&mut rng, timing_free));
                line
            }
            85..=90 if !timing_free => {
                // By hand, a lift, or a charge (which keeps a block that
                // holds), on a key that may hold any state (or none).
                match rng.below(3) {
                    0 => {
                        let ms = *rng.pick(&[1u64, 200, 2000, 60_000]);
                        let token = rng.pick(&["SLIDE", "slide"]).to_string();
                        vec!["RL.BLOCK".into(), token, key.into(), ms.to_string()]
                    }
                    1 => vec!["RL.UNBLOCK".into(), "SLIDE".into(), key.into()],
                    _ => {
                        let (l, w, cost, given) = random_params(&mut rng, timing_free);
                        let mut line = vec!["RL.CHARGE".into(), "SLIDE".into(), key.into()];
                        line.extend(params_words(l, w, cost, given, &mut rng));
                        line
                    }
                }
            }
            35..=44 => {
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let token = rng.pick(&["SLIDE", "slide"]).to_string();
                let mut line = vec!["RL.PEEK".to_string(), token, key.to_string()];
                line.extend(params_words(l, w, cost, given, &mut rng));
                // OLDEST anywhere after the key, in either case.
                if rng.below(2) == 0 {
                    let at = 3 + rng.below(line.len() as u64 - 2) as usize;
                    line.insert(at, rng.pick(&["OLDEST", "oldest"]).to_string());
                }
                line
            }
            45..=54 => {
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let mut line = vec!["RL.REFUND".into(), "SLIDE".into(), key.to_string()];
                line.extend(params_words(l, w, cost, given, &mut rng));
                line
            }
            55..=62 => {
                // Two or three SLIDE clauses on distinct keys.
                let n = 2 + rng.below(2) as usize;
                let start = rng.below(3) as usize;
                let chosen: Vec<&str> = (0..n).map(|i| keys[(start + i) % 3]).collect();
                let mut line = vec!["RL.ALL".to_string(), n.to_string()];
                line.extend(chosen.iter().map(|k| k.to_string()));
                for _ in 0..n {
                    // Small costs, so that some calls admit in every clause.
                    let (l, w, cost, given) = random_params(&mut rng, timing_free);
                    let cost = cost.min(1 + rng.below(3));
                    line.push("SLIDE".into());
                    line.extend(params_words(l, w, cost, given, &mut rng));
                    line.extend(block_option(&mut rng, timing_free));
                }
                line
            }
            63..=69 => {
                let target = if rng.below(2) == 0 { key } else { "x" };
                rng.pick(&bad)
                    .iter()
                    .map(|w| {
                        if *w == "K" {
                            target.to_string()
                        } else {
                            w.to_string()
                        }
                    })
                    .collect()
            }
            70..=76 => {
                // A foreign value under x or y, then a command on it.
                let target = *rng.pick(&["x", "y"]);
                on_both(c, target, &["DEL", "K"]);
                let (setup, _) = rng.pick(&shapes);
                for l in setup {
                    on_both(c, target, l);
                }
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let mut line = match rng.below(4) {
                    0 => vec!["RL.SLIDE".to_string(), target.to_string()],
                    1 => vec!["RL.PEEK".into(), "SLIDE".into(), target.to_string()],
                    2 => vec!["RL.REFUND".into(), "SLIDE".into(), target.to_string()],
                    _ => vec![
                        "RL.ALL".into(),
                        "2".into(),
                        key.into(),
                        target.into(),
                        "SLIDE".into(),
                        "5".into(),
                        "1000".into(),
                        "SLIDE".into(),
                    ],
                };
                line.extend(params_words(l, w, cost, given, &mut rng));
                line
            }
            77..=81 if timing_free => {
                // No clock to step: start the keys afresh now and then.
                for k in keys {
                    on_both(c, k, &["DEL", "K"]);
                }
                vec![
                    "RL.PEEK".into(),
                    "SLIDE".into(),
                    key.into(),
                    "3".into(),
                    "1000000000".into(),
                ]
            }
            77..=81 => {
                // Prepared state: an entry rl could have written at a time
                // ahead of the clock (the clock stepped back), or a foreign
                // entry among a live key's (middle, oldest or newest).
                let now = server.clock_ms();
                match rng.below(8) {
                    4..=7 => {
                        // A foreign entry right after the oldest entries
                        // (a stale one a peek does not read), or just
                        // before the r-th newest (one a refund of r - 1 or
                        // less does not read): "9..." sorts after rl's
                        // members of its score, "0..." before them.
                        let (range, name) = if rng.below(2) == 0 {
                            (0, "9foreign")
                        } else {
                            (-(2 + rng.below(4) as i64), "0foreign")
                        };
                        let at: Vec<(String, String)> = redis::cmd("ZRANGE")
                            .arg(format!("m:{key}"))
                            .arg(range)
                            .arg(range)
                            .arg("WITHSCORES")
                            .query(c)
                            .unwrap_or_default();
                        if let Some((_, score)) = at.first() {
                            on_both(c, key, &["ZADD", "K", score, name]);
                        }
                        spoiled = Some(key);
                        // Mostly, the call that reads up to it: a
                        // peek past a stale one (reads only the oldest), a
                        // refund of as many as are newer (reads one more).
                        let newer: Option<i64> = redis::cmd("ZREVRANK")
                            .arg(format!("m:{key}"))
                            .arg(name)
                            .query(c)
                            .unwrap_or(None);
                        let newer_text = newer.unwrap_or(0).to_string();
                        forced = match (rng.below(4), name, newer) {
                            (0..=2, "9foreign", _) => {
                                Some(vec!["RL.PEEK", "SLIDE", key, "1000", "1"])
                            }
                            (0..=2, _, Some(k)) if (1..=100).contains(&k) => Some(vec![
                                "RL.REFUND",
                                "SLIDE",
                                key,
                                "1000",
                                "1000000000000",
                                "COST",
                                &newer_text,
                            ]),
                            _ => None,
                        }
                        .map(|l| l.iter().map(|w| w.to_string()).collect());
                    }
                    0 | 1 => {
                        let at = now + *rng.pick(&[1i64, 5, 100, 3000]);
                        let m = member(at, 0);
                        let (s, e) = (at.to_string(), (at + 100_000).to_string());
                        on_both(c, key, &["ZADD", "K", "NX", &s, &m]);
                        on_both(c, key, &["PEXPIREAT", "K", &e]);
                    }
                    2 => {
                        let at = (now - *rng.pick(&[0i64, 1, 5, 500, 5000])).to_string();
                        on_both(c, key, &["ZADD", "K", &at, "foreign"]);
                        on_both(c, key, &["PEXPIRE", "K", "100000"]);
                        spoiled = Some(key);
                    }
                    _ => {
                        on_both(c, key, &["PERSIST", "K"]);
                        spoiled = Some(key);
                    }
                }
                // Any command of this section on it, with a window the
                // prepared entries are in or out of.
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let mut line = match rng.below(4) {
                    0 => vec!["RL.SLIDE".to_string(), key.to_string()],
                    1 => vec!["RL.PEEK".into(), "SLIDE".into(), key.to_string()],
                    2 => vec!["RL.REFUND".into(), "SLIDE".into(), key.to_string()],
                    _ => {
                        let other = if key == "a" { "b" } else { "a" };
                        vec![
                            "RL.ALL".into(),
                            "2".into(),
                            other.into(),
                            key.into(),
                            "SLIDE".into(),
                            "1000".into(),
                            "1000".into(),
                            "SLIDE".into(),
                        ]
                    }
                };
                line.extend(params_words(l, w, cost, given, &mut rng));
                line
            }
            82..=84 => {
                on_both(c, key, &["DEL", "K"]);
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let mut line = vec!["RL.SLIDE".to_string(), key.to_string()];
                line.extend(params_words(l, w, cost, given, &mut rng));
                line
            }
            _ => {
                if !timing_free {
                    server
                        .advance(*rng.pick(&[0u64, 0, 1, 1, 2, 3, 7, 50, 333, 1000, 5000, 60_000]));
                }
                let (l, w, cost, given) = random_params(&mut rng, timing_free);
                let mut line = vec!["RL.SLIDE".to_string(), key.to_string()];
                line.extend(params_words(l, w, cost, given, &mut rng));
                line
            }
        };
        if forced.is_some() {
            prepared += 1;
        }
        Step {
            line: forced.unwrap_or(line),
            undo: spoiled.map(|k: &str| (k.to_string(), vec!["DEL".to_string(), "K".to_string()])),
        }
    };
    let compare = |c: &mut redis::Connection, w: &[&str]| {
        let module_key = format!("m:{}", w.get(1).unwrap_or(&""));
        let before = (w[0] == "RL.SLIDE").then(|| zcard(c, &module_key));
        let reply = compare(c, w);
        if let (Some(before), Ok(v)) = (before, &reply) {
            if ints(v)[0] == 1 {
                let cost = w
                    .iter()
                    .position(|t| t.eq_ignore_ascii_case("COST"))
                    .map_or(1, |i| w[i + 1].parse::<i64>().unwrap());
                if zcard(c, &module_key) < before + cost {
                    removed += 1;
                }
            }
        }
        reply
    };
    run_stream(&mut c, steps, &mut tally, next, compare);
    let errors: Vec<(String, usize)> = tally.errors.clone().into_iter().collect();
    for (e, n) in errors {
        let kind = if e.ends_with(&FOREIGN[4..]) {
            "foreign"
        } else if e == WRONGTYPE {
            "wrongtype"
        } else {
            "other error"
        };
        for _ in 0..n {
            tally.add(kind);
        }
    }
    for _ in 0..prepared {
        tally.add("prepared");
    }
    for _ in 0..removed {
        tally.add("removed");
    }
    tally
}

fn require_everything(seen: &Tally, timing_free: bool) {
    eprintln!("{seen:?}");
    seen.require(&[
        ("admitted", 21),
        ("denied", 6),
        ("peeked", 11),
        ("peek oldest counted", 3),
        ("refunded", 6),
        ("all admitted", 4),
        ("all denied", 1),
        ("other error", 11),
        ("foreign", 6),
        ("wrongtype", 3),
    ]);
    if !timing_free {
        seen.require(&[("removed", 4), ("prepared", 6)]);
        seen.require(&[("blocked by hand", 3), ("unblocked", 1), ("charged", 2)]);
    }
}

/// Random streams on Valkey with the clock stopped: every step the same
/// reply and the same state, key by key.
#[test]
fn random_streams_match_the_module() {
    let server = start_both(Flavor::Valkey9);
    for seed in [0x5EED_0001u64, 0x5EED_0002, 0x5EED_0003] {
        let seen = stream(&server, seed, 600, same, false);
        require_everything(&seen, false);
    }
}

/// What does not depend on the instant: the error text, `allowed` and
/// `remaining` (RL.ALL: `allowed` and each clause's), and the state's shape
/// (entries, each rl's, the expiry as far past the oldest entry).
fn timing_free_same(c: &mut redis::Connection, line: &[&str]) -> Result<Value, String> {
    let (m, f) = both(c, line);
    fn head(v: &Result<Value, String>) -> Result<Vec<i64>, String> {
        match v {
            Err(e) => Err(e.clone()),
            Ok(Value::Array(items)) if items.iter().all(|i| matches!(i, Value::Int(_))) => {
                Ok(ints(&Value::Array(items.clone()))[..2].to_vec())
            }
            Ok(Value::Array(items)) => {
                // RL.ALL: allowed, then each clause's allowed and remaining.
                let mut out = vec![ints(&Value::Array(vec![items[0].clone()]))[0]];
                for clause in &items[2..] {
                    out.extend(&ints(clause)[..2]);
                }
                Ok(out)
            }
            Ok(other) => panic!("unexpected reply {other:?}"),
        }
    }
    assert_eq!(head(&m.reply), head(&f.reply), "{line:?}");
    let (sm, sf) = (shape(&m), shape(&f));
    let close = sm.len() == sf.len()
        && sm
            .iter()
            .zip(&sf)
            .all(|((dm, tm), (df, tf))| dm == df && (tm - tf).abs() <= 100);
    assert!(close, "{line:?}: the states' shapes differ: {sm:?} {sf:?}");
    m.reply
}

/// A state's shape, free of the instant: for a sorted set, its size,
/// whether every entry is rl's, and the expiry minus the oldest score
/// (within 100 ms: the editions' calls are some µs apart, and an expiry
/// moved by a later call with a longer window is that call's time);
/// anything else as it is, with its expiry.
fn shape(a: &Answer) -> Vec<(String, i64)> {
    a.state
        .iter()
        .map(|(value, at)| match value {
            Plain::Zset(entries) if !entries.is_empty() => {
                let rl = entries.iter().all(|(m, s)| {
                    let (m, s) = (String::from_utf8_lossy(m), String::from_utf8_lossy(s));
                    let score: i64 = s.parse().unwrap_or(-1);
                    score > 0 && m.len() > 6 && m[..m.len() - 6] == *s
                });
                let oldest: i64 = String::from_utf8_lossy(&entries[0].1).parse().unwrap_or(0);
                let ttl = if rl && *at > 0 { at - oldest } else { *at };
                (format!("zset {} rl {rl}", entries.len()), ttl)
            }
            other => (format!("{other:?}"), *at),
        })
        .collect()
}

/// One stream on `flavor`: compared whole where its clock can stop, else
/// what does not depend on the instant (`tests/it/older/`).
pub fn streams_on(flavor: Flavor) {
    if flavor.clock_can_stop() {
        let server = start_both(flavor);
        assert!(server.clock_stopped(), "{flavor:?}");
        let seen = stream(&server, 0x5EED_0001, 600, same, false);
        require_everything(&seen, false);
    } else {
        real_clock_stream(flavor);
    }
}

fn real_clock_stream(flavor: Flavor) {
    let server = start_both(flavor);
    assert!(!server.clock_stopped());
    for seed in [0xD1CE_0001u64, 0xD1CE_0002] {
        let seen = stream(&server, seed, 400, timing_free_same, true);
        require_everything(&seen, true);
    }
}

#[test]
fn random_streams_on_redis_7_0() {
    real_clock_stream(Flavor::Redis7);
}

#[test]
fn random_streams_on_redis_8_2() {
    real_clock_stream(Flavor::Redis8);
}

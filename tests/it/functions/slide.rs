//! RL.SLIDE, RL.PEEK SLIDE, RL.REFUND SLIDE and SLIDE clauses of RL.ALL:
//! the function edition against the module. On Valkey (stopped clock) every
//! step must give the same reply and leave the same state (`same`); on
//! Redis 7.0 and 8.2 (real clock) the streams compare what does not depend
//! on the instant.

use redis::Value;

use super::differential::{both, ints, on_both, run_stream, same, words, Answer, Step, Tally};
use super::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{plain_key, Flavor, Plain, Server};

const MAX_NOW_MS: i64 = i64::MAX / 1_000_000 - 1;

/// The member rl numbers `n` at `score`.
fn member(score: i64, n: i64) -> String {
    (score as i128 * 1_000_000 + n as i128).to_string()
}

/// `same`, answering the four integers (panics on an error reply).
fn same4(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    match same(c, line) {
        Ok(v) => ints(&v),
        Err(e) => panic!("{line:?}: {e}"),
    }
}

fn same_err(c: &mut redis::Connection, line: &[&str]) -> String {
    match same(c, line) {
        Ok(v) => panic!("{line:?} answered {v:?}"),
        Err(e) => e,
    }
}

/// ZCARD, 0 for a key that is not a sorted set.
fn zcard(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("ZCARD").arg(key).query(c).unwrap_or(0)
}

fn dump(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let d: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (d, at)
}

const FOREIGN: &str = "ERR key holds a sorted set that rl did not write";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Lines every one of which the module refuses before reading a key, with
/// `K` for the key: every row of RL.SLIDE's error table and the RL.PEEK /
/// RL.REFUND / RL.ALL forms of them.
fn bad_lines() -> Vec<Vec<&'static str>> {
    let mut out: Vec<Vec<&str>> = vec![
        vec!["RL.SLIDE", "K"],
        vec!["RL.SLIDE", "K", "10"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "1", "COST", "2"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "0", "COST", "2"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "2", "COST", "0"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "11"],
        vec!["RL.SLIDE", "K", "1000", "1000", "COST", "101"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "05"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "-1"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "1.0"],
        vec!["RL.SLIDE", "K", "10", "1000", "cost", ""],
        vec!["RL.SLIDE", "K", "10", "1000", "WEIGHT", "2"],
        vec!["RL.SLIDE", "K", "10", "1000", "WEIGHT"],
        vec!["RL.SLIDE", "K", "10", "1000", "1"],
        vec!["RL.SLIDE", "K", "10", "1000", "COSTS", "1"],
        vec![
            "RL.SLIDE",
            "K",
            "10",
            "1000",
            "an-option-name-longer-than-thirty-two-bytes",
            "1",
        ],
        vec!["RL.SLIDE", "K", "10", "1000", "tab\there", "1"],
        vec!["RL.SLIDE", "K", "0", "1000"],
        vec!["RL.SLIDE", "K", "-5", "1000"],
        vec!["RL.SLIDE", "K", "ten", "1000"],
        vec!["RL.SLIDE", "K", "1000001", "1000"],
        vec!["RL.SLIDE", "K", "01", "1000"],
        vec!["RL.SLIDE", "K", "+1", "1000"],
        vec!["RL.SLIDE", "K", " 1", "1000"],
        vec!["RL.SLIDE", "K", "", "1000"],
        vec!["RL.SLIDE", "K", "99999999999999999999999", "1000"],
        vec!["RL.SLIDE", "K", "10", "0"],
        vec!["RL.SLIDE", "K", "10", "1.5"],
        vec!["RL.SLIDE", "K", "10", "1e3"],
        vec!["RL.SLIDE", "K", "10", "1000000000001"],
        vec!["RL.SLIDE", "K", "10", "99999999999999999999999"],
        vec!["RL.SLIDE", "K", "0", "0", "COST", "0"],
        vec!["RL.SLIDE", "K", "10", "0", "FOO"],
        vec!["RL.PEEK", "SLIDE", "K", "3"],
        vec!["RL.PEEK", "slide", "K"],
        vec!["RL.PEEK", "SLIDE", "K", "3", "100", "COST", "4"],
        vec!["RL.PEEK", "SLIDE", "K", "0", "100"],
        vec!["RL.PEEK", "SLIDES", "K", "3", "100"],
        vec!["RL.PEEK", "SLIDE", "K", "3", "100", "OLDEST", "oldest"],
        vec!["RL.PEEK", "SLIDES", "K", "3", "100", "OLDEST"],
        vec!["RL.PEEK", "SLIDE", "K", "3", "OLDEST"],
        vec!["RL.PEEK", "THROTTLE", "K", "1", "1", "1000", "OLDEST"],
        vec!["RL.PEEK", "FIXED", "K", "1", "1000", "OLDEST"],
        vec!["RL.PEEK", "ACQUIRE", "K", "1", "1000", "OLDEST"],
        vec!["RL.SLIDE", "K", "10", "1000", "OLDEST"],
        vec!["RL.SLIDE", "K", "10", "1000", "COST", "1", "oldest"],
        vec!["RL.REFUND", "SLIDE", "K", "3", "100", "OLDEST"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3", "100", "OLDEST"],
        vec!["RL.REFUND", "SLIDE", "K", "3"],
        vec!["RL.REFUND", "SLIDE", "K", "3", "100", "COST", "101"],
        vec!["RL.REFUND", "Slide", "K", "3", "100", "PRECISION", "1"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3", "100", "COST", "4"],
        vec!["RL.ALL", "1", "K", "SLIDE", "3", "0"],
    ];
    out.push(vec!["RL.SLIDE", "K", "10", "1000", "COST", "2", "COST"]);
    out.extend([
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "0"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "1000000000001"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "5", "block", "5"],
        vec!["RL.SLIDE", "K", "10", "1000", "BLOCK", "-1", "COST", "11"],
        vec!["RL.BLOCK", "SLIDE", "K"],
        vec!["RL.BLOCK", "SLIDE", "K", "0"],
        vec!["RL.BLOCK", "slide", "K", "5", "6"],
        vec!["RL.UNBLOCK", "SLIDE", "K", "5"],
        vec!["RL.REFUND", "SLIDE", "K", "3", "100", "BLOCK", "5"],
        vec![
            "RL.CHARGE",
            "SLIDE",
            "K",
            "3",
            "100",
            "BLOCK",
            "5",
            "COST",
            "1",
        ],
        vec!["RL.ALL", "1", "K", "SLIDE", "10", "1000", "BLOCK", "0"],
    ]);
    out
}

/// A foreign or wrong-typed value written under `K`, as (setup lines,
/// what RL.SLIDE answers on it): time-independent shapes (scores far from
/// any clock).
fn foreign_shapes() -> Vec<(Vec<Vec<&'static str>>, &'static str)> {
    // An absolute expiry (2100-01-01): the same on both copies whatever
    // the clock.
    let ttl = vec!["PEXPIREAT", "K", "4102444800000"];
    vec![
        (vec![vec!["SET", "K", "v"]], WRONGTYPE),
        (vec![vec!["SET", "K", "12"], ttl.clone()], WRONGTYPE),
        (vec![vec!["HSET", "K", "f", "v"], ttl.clone()], WRONGTYPE),
        (vec![vec!["RPUSH", "K", "a"]], WRONGTYPE),
        (vec![vec!["SADD", "K", "a"], ttl.clone()], WRONGTYPE),
        // No TTL: rl's keys always have one.
        (vec![vec!["ZADD", "K", "1", "a"]], FOREIGN),
        (vec![vec!["ZADD", "K", "5", "5000000"]], FOREIGN),
        // Members and scores rl could not have written.
        (vec![vec!["ZADD", "K", "1", "a"], ttl.clone()], FOREIGN),
        (vec![vec!["ZADD", "K", "5", "7"], ttl.clone()], FOREIGN),
        (
            vec![vec!["ZADD", "K", "5", "05000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5", "+5000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5", "5000000.0"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5.5", "5000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "-1", "-1000000"], ttl.clone()],
            FOREIGN,
        ),
        (vec![vec!["ZADD", "K", "+inf", "x"], ttl.clone()], FOREIGN),
        // The block's member at a score no block ends at, the integer that
        // stands for it, a block's member under rl's newest entry.
        (
            vec![vec!["ZADD", "K", "-5", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "1.5", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "+inf", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "20000000000000", "rl block"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "5", "-9223372036854775808"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "3", "rl block", "5", "5000000"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (vec![vec!["ZADD", "K", "1e300", "x"], ttl.clone()], FOREIGN),
        (
            vec![
                vec!["ZADD", "K", "9223372036854", "9223372036854000000"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "9223372036854", "9223372036854775807"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "5", "99999999999999999999999"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        // rl's newest, a foreign oldest (far in the past, stale).
        (
            vec![vec!["ZADD", "K", "-inf", "x", "5", "5000000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![vec!["ZADD", "K", "3", "x", "5", "5000000"], ttl.clone()],
            FOREIGN,
        ),
    ]
}

/// Entries of the shape rl writes (the score's digits, then six more
/// bytes) but for bytes that are not digits, as the newest and as a stale
/// entry a call walks: the fast tests of an entry must refuse them. Kept
/// out of the random streams, whose mix of shapes they would change.
fn shaped_foreign_entries() -> Vec<(Vec<Vec<&'static str>>, &'static str)> {
    let ttl = vec!["PEXPIREAT", "K", "4102444800000"];
    vec![
        (
            vec![vec!["ZADD", "K", "5", "5x00000"], ttl.clone()],
            FOREIGN,
        ),
        (
            vec![
                vec!["ZADD", "K", "1764000000123", "1764000000123abcdef"],
                ttl.clone(),
            ],
            FOREIGN,
        ),
        (
            vec![
                vec![
                    "ZADD",
                    "K",
                    "1000000000000",
                    "1000000000000x00000",
                    "1000000000001",
                    "1000000000001000000",
                ],
                ttl.clone(),
            ],
            FOREIGN,
        ),
    ]
}

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

/// Every foreign or wrong-typed value is refused with the module's error
/// by every command that reads it, and left byte for byte as it was; on
/// every flavor.
#[test]
fn foreign_keys_are_refused_and_left_alone() {
    for flavor in [Flavor::Valkey9, Flavor::Redis7, Flavor::Redis8] {
        let server = start_both(flavor);
        let mut c = server.conn();
        for (setup, want) in foreign_shapes().into_iter().chain(shaped_foreign_entries()) {
            on_both(&mut c, "x", &["DEL", "K"]);
            for l in &setup {
                on_both(&mut c, "x", l);
            }
            let before = dump(&mut c, "f:x");
            let lines: [&[&str]; 6] = [
                &["RL.SLIDE", "x", "10", "1000"],
                &["RL.SLIDE", "x", "1000000", "1000000000000", "COST", "100"],
                &["RL.PEEK", "SLIDE", "x", "10", "1000"],
                &["RL.REFUND", "SLIDE", "x", "10", "1000", "COST", "3"],
                &["RL.ALL", "1", "x", "SLIDE", "10", "1000"],
                &[
                    "RL.ALL", "2", "x", "fresh", "SLIDE", "10", "1000", "SLIDE", "1", "1",
                ],
            ];
            for line in lines {
                let got = same_err(&mut c, line);
                let want = if line[0] == "RL.ALL" && want != WRONGTYPE {
                    format!("ERR clause 1: {}", &want[4..])
                } else {
                    want.to_string()
                };
                assert_eq!(got, want, "{flavor:?} {setup:?} {line:?}");
                assert_eq!(dump(&mut c, "f:x"), before, "{flavor:?} {setup:?} {line:?}");
                assert_eq!(
                    zcard(&mut c, "f:fresh"),
                    0,
                    "nothing recorded in the other clause"
                );
            }
        }
    }
}

/// Every row of the error table, through each command form, on every
/// flavor: the same error text, nothing written.
#[test]
fn every_input_error_matches() {
    for flavor in [Flavor::Valkey9, Flavor::Redis7, Flavor::Redis8] {
        let server = start_both(flavor);
        let mut c = server.conn();
        // An rl key, written alike in both copies whatever the clock.
        on_both(&mut c, "k", &["ZADD", "K", "1000", "1000000000"]);
        on_both(&mut c, "k", &["PEXPIREAT", "K", "4102444800000"]);
        for line in bad_lines() {
            let line: Vec<&str> = line
                .iter()
                .map(|w| if *w == "K" { "k" } else { w })
                .collect();
            let e = same_err(&mut c, &line);
            assert!(e.starts_with("ERR "), "{line:?}: {e}");
        }
        // RL.ALL's own SLIDE rules.
        for line in [
            &[
                "RL.ALL", "2", "p", "q", "SLIDE", "100", "1000", "COST", "60", "SLIDE", "100",
                "1000", "COST", "41",
            ][..],
            &[
                "RL.ALL", "2", "p", "q", "SLIDE", "100", "1000", "SLIDE", "3",
            ],
            &[
                "RL.ALL", "2", "p", "q", "SLIDE", "100", "1000", "SLIDE", "3", "100", "COST", "9",
            ],
        ] {
            same_err(&mut c, line);
        }
        assert_eq!(zcard(&mut c, "f:k"), 1);
        assert_eq!(zcard(&mut c, "f:p") + zcard(&mut c, "f:q"), 0);
    }
}

/// The worked example of docs/commands.md, exactly: replies, members,
/// expiry.
#[test]
fn the_documented_example() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let t0 = server.clock_ms();
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "u", "3", "10000"]),
        [1, 2, 0, 10000]
    );
    server.advance(1267);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "u", "3", "10000", "COST", "2"]),
        [1, 0, 0, 10000]
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "u", "3", "10000"]),
        [0, 0, 8733, 10000]
    );
    let t1 = t0 + 1267;
    let want = Plain::Zset(
        [(t0, 0), (t1, 0), (t1, 1)]
            .iter()
            .map(|&(s, n)| (member(s, n).into_bytes(), s.to_string().into_bytes()))
            .collect(),
    );
    // The expiry the first call set (t0 + window + window / 4) already
    // reaches the newest entry's t1 + window: not moved.
    assert_eq!(plain_key(&mut c, b"f:u"), (want, t0 + 12_500));
    server.advance(8733);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "u", "3", "10000"]),
        [1, 0, 0, 10000]
    );
    assert_eq!(
        same4(&mut c, &["RL.PEEK", "SLIDE", "u", "3", "10000"]),
        [0, 0, 1267, 10000]
    );
    assert_eq!(
        same4(
            &mut c,
            &["RL.REFUND", "SLIDE", "u", "3", "10000", "COST", "2"]
        ),
        [2, 1, 0, 10000]
    );
}

/// The largest parameters: limit 10^6, window 10^12, COST 100; members of
/// 19 digits (past 2^53) written exactly; the expiry a quarter window on.
#[test]
fn largest_parameters_and_members_past_2_53() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let line = ["RL.SLIDE", "big", "1000000", "1000000000000", "COST", "100"];
    for i in 0..3 {
        let r = same4(&mut c, &line);
        assert_eq!(r, [1, 1_000_000 - 100 * (i + 1), 0, 1_000_000_000_000]);
    }
    let (value, at) = plain_key(&mut c, b"f:big");
    assert_eq!(at, now + 1_000_000_000_000 + 250_000_000_000);
    let Plain::Zset(entries) = value else {
        panic!()
    };
    assert_eq!(entries.len(), 300);
    for (n, (m, s)) in entries.iter().enumerate() {
        assert_eq!(String::from_utf8_lossy(m), member(now, n as i64));
        assert_eq!(String::from_utf8_lossy(s), now.to_string());
    }
    server.advance(999_999);
    assert_eq!(
        same4(
            &mut c,
            &[
                "RL.PEEK",
                "SLIDE",
                "big",
                "300",
                "1000000000000",
                "COST",
                "1"
            ]
        ),
        [
            0,
            0,
            1_000_000_000_000 - 999_999,
            1_000_000_000_000 - 999_999
        ]
    );
    assert_eq!(
        same4(
            &mut c,
            &[
                "RL.REFUND",
                "SLIDE",
                "big",
                "1000000",
                "1000000000000",
                "COST",
                "100"
            ]
        ),
        [100, 1_000_000 - 201, 0, 1_000_000_000_000]
    );
    // A window of 1 ms and a limit of 1: everything leaves at once.
    for _ in 0..3 {
        assert_eq!(same4(&mut c, &["RL.SLIDE", "tiny", "1", "1"]), [1, 0, 0, 1]);
        assert_eq!(same4(&mut c, &["RL.SLIDE", "tiny", "1", "1"]), [0, 0, 1, 1]);
        server.advance(1);
    }
}

/// A backlog after a burst and a pause drains 128 entries per admission
/// (RL.ALL's clauses share them, each its cost + 1 at least), is counted
/// through ZCOUNT past 64, and a denial's wait past 64 entries comes
/// through the rank lookup.
#[test]
fn backlogs_drain_in_bounded_steps() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    for k in ["a", "b", "c"] {
        for _ in 0..30 {
            same4(&mut c, &["RL.SLIDE", k, "10000", "1000", "COST", "100"]);
        }
        assert_eq!(zcard(&mut c, &format!("f:{k}")), 3000);
    }
    server.advance(1000);
    // A peek counts the 3000 stale entries (ZCOUNT) and removes nothing.
    assert_eq!(
        same4(&mut c, &["RL.PEEK", "SLIDE", "a", "10000", "1000"]),
        [1, 9999, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "f:a"), 3000);
    // Each admission removes 128 and adds its own.
    for i in 0..3 {
        let r = same4(&mut c, &["RL.SLIDE", "a", "10000", "1000"]);
        assert_eq!(r[..2], [1, 9999 - i]);
        assert_eq!(zcard(&mut c, "f:a"), 3000 - 127 * (i + 1));
    }
    // RL.ALL with two clauses, COST 99 and 1: each its cost + 1, and half
    // of the 26 the call's 128 leaves: 113 and 15.
    let (b0, c0) = (zcard(&mut c, "f:b"), zcard(&mut c, "f:c"));
    same(
        &mut c,
        &[
            "RL.ALL", "2", "b", "c", "SLIDE", "10000", "1000", "COST", "99", "SLIDE", "10000",
            "1000",
        ],
    )
    .unwrap();
    assert_eq!(zcard(&mut c, "f:b"), b0 + 99 - 113);
    assert_eq!(zcard(&mut c, "f:c"), c0 + 1 - 15);
    // Three clauses of COST 1: 2 + (128 - 6) / 3 = 42 each.
    let (a0, b0, c0) = (
        zcard(&mut c, "f:a"),
        zcard(&mut c, "f:b"),
        zcard(&mut c, "f:c"),
    );
    same(
        &mut c,
        &[
            "RL.ALL", "3", "a", "b", "c", "SLIDE", "10000", "1000", "SLIDE", "10000", "1000",
            "SLIDE", "10000", "1000",
        ],
    )
    .unwrap();
    assert_eq!(
        [
            zcard(&mut c, "f:a"),
            zcard(&mut c, "f:b"),
            zcard(&mut c, "f:c")
        ],
        [a0 - 41, b0 - 41, c0 - 41]
    );
    // A denied RL.ALL removes nothing.
    same(
        &mut c,
        &[
            "RL.ALL", "2", "a", "b", "SLIDE", "10000", "1000", "SLIDE", "1", "1000",
        ],
    )
    .unwrap();
    assert_eq!(zcard(&mut c, "f:b"), b0 - 41);
    // Drain the rest (2574 stale), one call at a time, the same at every
    // step: 20 calls of 128 and one of 14; 25 own entries left.
    for _ in 0..21 {
        same4(&mut c, &["RL.SLIDE", "a", "10000", "1000"]);
    }
    assert_eq!(zcard(&mut c, "f:a"), 25);
    same4(&mut c, &["RL.SLIDE", "a", "10000", "1000"]);
    assert_eq!(zcard(&mut c, "f:a"), 26);

    // Denials whose wait is the 50th (walked) and the 150th (rank lookup)
    // entry still in the window.
    for _ in 0..200 {
        same4(&mut c, &["RL.SLIDE", "d", "200", "10000"]);
        server.advance(1);
    }
    server.advance(100);
    for (cost, nth) in [(50i64, 50i64), (100, 100), (1, 1), (99, 99)] {
        let r = same4(
            &mut c,
            &["RL.SLIDE", "d", "200", "10000", "COST", &cost.to_string()],
        );
        // The nth entry was admitted nth - 1 ms after the first, 300 ms ago.
        assert_eq!(r, [0, 0, 10_000 - 300 + nth - 1, 10_000 - 300 + 199]);
    }
    // 101 of them have left: a peek walks 64 and counts the rest (ZCOUNT);
    // the wait is the entry at rank 101 + need - 1.
    server.advance(10_000 - 300 + 100);
    assert_eq!(
        same4(
            &mut c,
            &["RL.PEEK", "SLIDE", "d", "150", "10000", "COST", "100"]
        ),
        [0, 51, 49, 99]
    );
    assert_eq!(
        same4(
            &mut c,
            &["RL.PEEK", "SLIDE", "d", "100", "10000", "COST", "100"]
        ),
        [0, 1, 99, 99]
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "d", "200", "10000", "COST", "100"]),
        [1, 1, 0, 10_000]
    );
    assert_eq!(zcard(&mut c, "f:d"), 199);
}

/// The clock stepped back (entries ahead of it): new entries are recorded at
/// the newest entry's time, numbered after it; waits measured from now.
#[test]
fn a_clock_that_stepped_back() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let ahead = now + 3000;
    let (s, m) = (ahead.to_string(), member(ahead, 4));
    on_both(&mut c, "k", &["ZADD", "K", &s, &m]);
    on_both(
        &mut c,
        "k",
        &["PEXPIREAT", "K", &(ahead + 1000).to_string()],
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "3", "1000", "COST", "2"]),
        [1, 0, 0, 4000]
    );
    let (Plain::Zset(entries), at) = plain_key(&mut c, b"f:k") else {
        panic!()
    };
    let got: Vec<String> = entries
        .iter()
        .map(|(m, _)| String::from_utf8_lossy(m).into())
        .collect();
    assert_eq!(got, [member(ahead, 4), member(ahead, 5), member(ahead, 6)]);
    // The expiry reached newest + window already: not moved.
    assert_eq!(at, ahead + 1000);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "3", "1000"]),
        [0, 0, 4000, 4000]
    );
    server.advance(3500);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "3", "1000"]),
        [0, 0, 500, 500]
    );
    assert_eq!(
        same4(
            &mut c,
            &["RL.REFUND", "SLIDE", "k", "3", "1000", "COST", "2"]
        ),
        [2, 1, 0, 1000]
    );
    server.advance(500);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "3", "1000"]),
        [1, 2, 0, 1000]
    );
    // The expiry fell short of the new newest + window: moved to newest +
    // window + window / 4.
    assert_eq!(plain_key(&mut c, b"f:k").1, now + 4000 + 1000 + 250);
}

/// Members of one millisecond run out at 10^6: both editions refuse the
/// call rather than number past it (the millisecond full; the key foreign
/// when a foreign entry holds the next number), and skip a number a
/// foreign entry holds.
#[test]
fn member_numbers_of_one_millisecond() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let s = now.to_string();
    let ttl = ["PEXPIRE", "K", "100000"];
    // The newest is number 999,998 of now: one more fits, two do not
    // (the millisecond is full, issue #39; the next one has room).
    let full = |left: u64, cost: u64| {
        format!("ERR the key's millisecond {now} has {left} of its 1000000 entries left, fewer than COST {cost}: nothing written, retry in 1 ms")
    };
    on_both(&mut c, "k", &["ZADD", "K", &s, &member(now, 999_998)]);
    on_both(&mut c, "k", &ttl);
    assert_eq!(
        same_err(&mut c, &["RL.SLIDE", "k", "10", "1000", "COST", "2"]),
        full(1, 2)
    );
    assert_eq!(
        same_err(
            &mut c,
            &["RL.PEEK", "SLIDE", "k", "10", "1000", "COST", "2"]
        ),
        full(1, 2)
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "10", "1000"]),
        [1, 8, 0, 1000]
    );
    assert_eq!(
        same_err(&mut c, &["RL.SLIDE", "k", "10", "1000"]),
        full(0, 1)
    );
    // The next ms numbers from 0 again.
    server.advance(1);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "10", "1000"]),
        [1, 7, 0, 1000]
    );

    // A foreign entry in the middle holds the member this call would take:
    // skipped, the next number is taken.
    let now = server.clock_ms();
    let (old, mid, new) = (now - 500, now - 200, now - 100);
    on_both(
        &mut c,
        "j",
        &[
            "ZADD",
            "K",
            &old.to_string(),
            &member(old, 0),
            &mid.to_string(),
            &member(now, 0),
            &new.to_string(),
            &member(new, 0),
        ],
    );
    on_both(&mut c, "j", &ttl);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "j", "10", "1000", "COST", "2"]),
        [1, 5, 0, 1000]
    );
    let (Plain::Zset(entries), _) = plain_key(&mut c, b"f:j") else {
        panic!()
    };
    let got: Vec<String> = entries
        .iter()
        .map(|(m, _)| String::from_utf8_lossy(m).into())
        .collect();
    assert_eq!(
        got,
        [
            member(old, 0),
            member(now, 0),
            member(new, 0),
            member(now, 1),
            member(now, 2)
        ]
    );

    // The same for one unit (RL.SLIDE's own path, where the library's
    // ZADD NX finds the member held): the next free number is taken, past
    // one or two held by foreign entries.
    for (key, held) in [("g", 1), ("h", 2)] {
        let now = server.clock_ms();
        let (old, new) = (now - 500, now - 100);
        let mut zadd: Vec<String> = vec!["ZADD".into(), "K".into()];
        zadd.extend([old.to_string(), member(old, 0)]);
        for n in 0..held {
            zadd.extend([(now - 300 + n).to_string(), member(now, n)]);
        }
        zadd.extend([new.to_string(), member(new, 0)]);
        on_both(&mut c, key, &words(&zadd));
        on_both(&mut c, key, &ttl);
        assert_eq!(
            same4(&mut c, &["RL.SLIDE", key, "10", "1000"]),
            [1, 7 - held, 0, 1000]
        );
        let (Plain::Zset(entries), _) = plain_key(&mut c, format!("f:{key}").as_bytes()) else {
            panic!()
        };
        let got: Vec<String> = entries
            .iter()
            .map(|(m, _)| String::from_utf8_lossy(m).into())
            .collect();
        assert_eq!(got.last(), Some(&member(now, held)));
        assert_eq!(got.len() as i64, 3 + held);
    }

    // ... unless it holds the last number of the ms: refused, nothing
    // written.
    let now = server.clock_ms() + 1;
    server.advance(1);
    on_both(
        &mut c,
        "i",
        &[
            "ZADD",
            "K",
            &(now - 300).to_string(),
            &member(now - 300, 0),
            &(now - 200).to_string(),
            &member(now, 999_999),
            &now.to_string(),
            &member(now, 999_998),
        ],
    );
    on_both(&mut c, "i", &ttl);
    let before = dump(&mut c, "f:i");
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "i", "10", "1000"]), FOREIGN);
    assert_eq!(dump(&mut c, "f:i"), before);
    // A peek does not number members: it answers.
    assert_eq!(
        same4(&mut c, &["RL.PEEK", "SLIDE", "i", "10", "1000"]),
        [1, 6, 0, 1000]
    );
}

/// Only what a call reads is checked: the newest, the oldest, and the
/// stale entries it may remove (none for RL.PEEK; 128 for RL.SLIDE; the
/// cost + 1 newest for RL.REFUND, and what the peek of its reply reads over
/// the log the removal leaves).
#[test]
fn only_what_is_read_is_checked() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let ttl = ["PEXPIRE", "K", "100000"];
    // Stale entries: rl's oldest, a foreign second, rl's newest in the window.
    let (a, b, n) = (now - 5000, now - 4000, now - 10);
    on_both(
        &mut c,
        "k",
        &[
            "ZADD",
            "K",
            &a.to_string(),
            &member(a, 0),
            &b.to_string(),
            "7",
            &n.to_string(),
            &member(n, 0),
        ],
    );
    on_both(&mut c, "k", &ttl);
    assert_eq!(
        same4(&mut c, &["RL.PEEK", "SLIDE", "k", "5", "1000"]),
        [1, 3, 0, 1000]
    );
    let before = dump(&mut c, "f:k");
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "k", "5", "1000"]), FOREIGN);
    assert_eq!(dump(&mut c, "f:k"), before);
    // RL.REFUND reads everything before it writes: the peek of its reply,
    // decided over the log without the newest, finds the foreign entry
    // newest and refuses before the removal (issue #23).
    assert_eq!(
        same_err(&mut c, &["RL.REFUND", "SLIDE", "k", "5", "1000"]),
        FOREIGN
    );
    assert_eq!(zcard(&mut c, "f:k"), 3);
    assert_eq!(dump(&mut c, "f:k"), before);

    // A foreign stale entry at rank 200: beyond this call's 128, within
    // the next call's.
    let mut zadd: Vec<String> = vec!["ZADD".into(), "K".into()];
    for i in 0..400i64 {
        let s = now - 5000 + i;
        zadd.push(s.to_string());
        zadd.push(if i == 200 { "x".into() } else { member(s, 0) });
    }
    on_both(&mut c, "j", &words(&zadd));
    on_both(&mut c, "j", &ttl);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "j", "5", "1000"]),
        [1, 4, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "f:j"), 400 - 128 + 1);
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "j", "5", "1000"]), FOREIGN);
    // Peeks read only the oldest: fine.
    assert_eq!(
        same4(&mut c, &["RL.PEEK", "SLIDE", "j", "5", "1000"]),
        [1, 3, 0, 1000]
    );

    // RL.REFUND checks the cost + 1 newest in the window.
    let (p, q, r) = (now - 30, now - 20, now - 10);
    on_both(
        &mut c,
        "r",
        &[
            "ZADD",
            "K",
            &p.to_string(),
            "oldest-in-window",
            &(p + 1).to_string(),
            &member(p + 1, 0),
            &q.to_string(),
            &member(q, 0),
            &r.to_string(),
            &member(r, 0),
        ],
    );
    on_both(&mut c, "r", &ttl);
    // Oldest foreign: every command refuses.
    assert_eq!(
        same_err(&mut c, &["RL.REFUND", "SLIDE", "r", "5", "1000"]),
        FOREIGN
    );
    on_both(&mut c, "r", &["ZREM", "K", "oldest-in-window"]);
    on_both(
        &mut c,
        "r",
        &["ZADD", "K", &(p - 5000).to_string(), &member(p - 5000, 0)],
    );
    on_both(&mut c, "r", &["ZADD", "K", &(p + 2).to_string(), "middle"]);
    let before = dump(&mut c, "f:r");
    // COST 1 reads the two newest (r, q): fine; COST 2 reads three (r, q,
    // middle): refused, nothing removed.
    assert_eq!(
        same_err(
            &mut c,
            &["RL.REFUND", "SLIDE", "r", "5", "1000", "COST", "2"]
        ),
        FOREIGN
    );
    assert_eq!(dump(&mut c, "f:r"), before);
    assert_eq!(
        same4(&mut c, &["RL.REFUND", "SLIDE", "r", "5", "1000"]),
        [1, 1, 0, 1000]
    );
}

/// RL.REFUND SLIDE gives back the newest entries still in the window,
/// never one that left it; an emptied set is gone; nothing to give back
/// writes nothing.
#[test]
fn refunds_remove_the_newest_in_the_window() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let line = |cost: &'static str| ["RL.SLIDE", "k", "10", "1000", "COST", cost];
    same4(&mut c, &line("3"));
    server.advance(600);
    same4(&mut c, &line("2"));
    server.advance(100);
    same4(&mut c, &line("1"));
    assert_eq!(
        same4(
            &mut c,
            &["RL.REFUND", "SLIDE", "k", "10", "1000", "COST", "2"]
        ),
        [2, 5, 0, 1000]
    );
    server.advance(350);
    // The first 3 have left: only one entry counts.
    assert_eq!(
        same4(
            &mut c,
            &["RL.REFUND", "SLIDE", "k", "10", "1000", "COST", "5"]
        ),
        [1, 9, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "f:k"), 3);
    let before = dump(&mut c, "f:k");
    assert_eq!(
        same4(&mut c, &["RL.REFUND", "SLIDE", "k", "10", "1000"]),
        [0, 9, 0, 1000]
    );
    assert_eq!(dump(&mut c, "f:k"), before);
    // Emptied: gone.
    same4(&mut c, &["RL.SLIDE", "e", "5", "60000", "COST", "2"]);
    assert_eq!(
        same4(
            &mut c,
            &["RL.REFUND", "SLIDE", "e", "5", "60000", "COST", "3"]
        ),
        [2, 4, 0, 60000]
    );
    assert_eq!(plain_key(&mut c, b"f:e").1, -2);
    assert_eq!(
        same4(&mut c, &["RL.REFUND", "SLIDE", "missing", "5", "60000"]),
        [0, 4, 0, 60000]
    );
}

/// A foreign entry with a fractional score in the window, at the rank a
/// denial's wait is read from: refused by both, as every entry read is
/// (the module used to read its score as i64::MIN and wrap the wait to
/// about 2^63). A call that does not read it by rank goes on.
#[test]
fn a_fractional_score_where_the_wait_is_read() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let (o, n) = (now - 100, now - 10);
    on_both(
        &mut c,
        "k",
        &[
            "ZADD",
            "K",
            &o.to_string(),
            &member(o, 0),
            &format!("{}.5", now - 50),
            "x",
            &n.to_string(),
            &member(n, 0),
        ],
    );
    on_both(&mut c, "k", &["PEXPIRE", "K", "100000"]);
    let (m, f) = both(&mut c, &["RL.SLIDE", "k", "3", "100000", "COST", "2"]);
    assert_eq!(m, f);
    assert_eq!(
        m.reply,
        Err("ERR key holds a sorted set that rl did not write".to_string())
    );
    // The entries either side are rl's: a denial whose wait is the oldest's
    // leaving, and an admission, read only them.
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "3", "100000", "COST", "1"]),
        [0, 0, 100_000 - 100, 100_000 - 10]
    );
    assert_eq!(MAX_NOW_MS, 9_223_372_036_853);
}

/// A key denied at its limit is read another way on its next plain call
/// (the library's Slide.full: one range for the count and the oldest):
/// the same replies, and the same refusals when what it reads changed
/// under it (a foreign oldest entry, a lowered limit, a block, an entry
/// that left the window).
#[test]
fn a_key_denied_at_its_limit_answers_alike_when_called_again() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let line = ["RL.SLIDE", "k", "3", "100000"];
    for left in [2, 1, 0] {
        assert_eq!(same4(&mut c, &line)[..2], [1, left]);
    }
    // The first denial, then the calls the library reads the other way.
    for _ in 0..3 {
        assert_eq!(same4(&mut c, &line)[..2], [0, 0]);
    }
    // A lowered limit (more entries than it) and a raised one.
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "2", "100000"])[..2],
        [0, 0]
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "2", "100000"])[..2],
        [0, 0]
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "4", "100000"])[..2],
        [1, 0]
    );
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "4", "100000"])[..2],
        [0, 0]
    );
    // Every entry left a short window: admitted (stale ones removed).
    server.advance(20);
    assert_eq!(same4(&mut c, &["RL.SLIDE", "k", "4", "10"])[..2], [1, 3]);

    // The oldest entry replaced by one rl could not have written, after
    // a denial: refused, the key as it was.
    for _ in 0..3 {
        same4(&mut c, &["RL.SLIDE", "k", "4", "100000"]);
    }
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "4", "100000"])[..2],
        [0, 0]
    );
    for edition in ["m:k", "f:k"] {
        let oldest: Vec<String> = redis::cmd("ZRANGE")
            .arg(edition)
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .query(&mut c)
            .unwrap();
        let _: i64 = redis::cmd("ZREM")
            .arg(edition)
            .arg(&oldest[0])
            .query(&mut c)
            .unwrap();
        // One ms earlier: the oldest by rank ('x' sorts after digits).
        let score = oldest[1].parse::<i64>().unwrap() - 1;
        let _: i64 = redis::cmd("ZADD")
            .arg(edition)
            .arg(score)
            .arg("x")
            .query(&mut c)
            .unwrap();
    }
    let before = dump(&mut c, "f:k");
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "k", "4", "100000"]), FOREIGN);
    assert_eq!(dump(&mut c, "f:k"), before);

    // A block on a full key: its wait, not the limit's.
    on_both(&mut c, "b", &["DEL", "K"]);
    for _ in 0..3 {
        same4(&mut c, &["RL.SLIDE", "b", "2", "100000"]);
    }
    same(&mut c, &["RL.BLOCK", "SLIDE", "b", "5000"]).unwrap();
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "b", "2", "100000"]),
        [0, 0, 5000, 5000]
    );
}

/// RL.PEEK SLIDE ... OLDEST on both editions, stepping through a window
/// that fills, partly empties (stale entries ahead of the oldest counted
/// one: the rank lookup) and empties.
#[test]
fn oldest_is_the_same_wait_on_both_editions() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let peek = |cost: &'static str| ["RL.PEEK", "SLIDE", "o", "5", "1000", "COST", cost, "OLDEST"];
    assert_eq!(same4(&mut c, &peek("1")), [1, 4, 0, 1000, 0]);
    same4(&mut c, &["RL.SLIDE", "o", "5", "1000"]);
    server.advance(100);
    same4(&mut c, &["RL.SLIDE", "o", "5", "1000", "COST", "2"]);
    server.advance(100);
    same4(&mut c, &["RL.SLIDE", "o", "5", "1000"]);
    assert_eq!(same4(&mut c, &peek("1")), [1, 0, 0, 1000, 800]);
    assert_eq!(same4(&mut c, &peek("2")), [0, 1, 800, 1000, 800]);
    server.advance(850);
    // The first entry has left: three count, the oldest from 100 ms later.
    assert_eq!(same4(&mut c, &peek("1")), [1, 1, 0, 1000, 50]);
    assert_eq!(same4(&mut c, &peek("5")), [0, 2, 150, 150, 50]);
    server.advance(100);
    assert_eq!(same4(&mut c, &peek("1")), [1, 3, 0, 1000, 50]);
    server.advance(50);
    assert_eq!(same4(&mut c, &peek("1")), [1, 4, 0, 1000, 0]);
}

/// `same`, answering one integer (RL.BLOCK, RL.UNBLOCK).
fn one(c: &mut redis::Connection, line: &[&str]) -> i64 {
    match same(c, line) {
        Ok(Value::Int(n)) => n,
        other => panic!("{line:?}: {other:?}"),
    }
}

/// A block's life on a stopped clock, step by step, both editions alike
/// (reply and state at every step): the breach, denials while it holds
/// (with and without BLOCK, a peek, RL.ALL), a refund and a charge that
/// keep it, its end, an ended block left out of the count, the admission
/// that removes it with the stale entries evicted,
/// and a block by hand after the clock stepped back (it ends past the
/// newest entry).
#[test]
fn a_block_lives_and_ends_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let t0 = server.clock_ms();
    for _ in 0..2 {
        assert_eq!(same4(&mut c, &["RL.SLIDE", "k", "2", "1000"])[0], 1);
    }
    let breach = ["RL.SLIDE", "k", "2", "1000", "BLOCK", "3000"];
    assert_eq!(same4(&mut c, &breach), [0, 0, 3000, 3000]);
    server.advance(100);
    for line in [
        &breach[..],
        &["RL.SLIDE", "k", "100", "1000"],
        &["RL.PEEK", "SLIDE", "k", "2", "1000"],
        &["RL.PEEK", "SLIDE", "k", "2", "1000", "OLDEST"],
    ] {
        assert_eq!(same4(&mut c, line)[..4], [0, 0, 2900, 2900], "{line:?}");
    }
    let all = [
        "RL.ALL", "2", "k", "o", "SLIDE", "5", "1000", "SLIDE", "5", "1000",
    ];
    same(&mut c, &all).unwrap();
    assert_eq!(
        same4(&mut c, &["RL.REFUND", "SLIDE", "k", "2", "1000"]),
        [1, 0, 2900, 2900]
    );
    assert_eq!(
        same4(
            &mut c,
            &["RL.CHARGE", "SLIDE", "k", "2", "1000", "COST", "3"]
        ),
        [3, 0, 2900, 2900]
    );
    // Its end: the log decides again; the entries have left the window.
    server.advance(2900);
    assert_eq!(same4(&mut c, &["RL.PEEK", "SLIDE", "k", "2", "1000"])[0], 1);
    // The entries are stale, the block's member is not (it ends now): the
    // count and the eviction leave it out; the admission removes it (the
    // key lives until the block's end, so a stale member never outlives
    // it but after a clock step).
    assert_eq!(zcard(&mut c, "m:k"), 5);
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "2", "1000"]),
        [1, 1, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "m:k"), 1);
    // The clock stepped back: entries ahead of it; a block by hand ends
    // past the newest.
    let ahead = server.clock_ms() + 5000;
    let (s, m) = (ahead.to_string(), member(ahead, 0));
    on_both(&mut c, "k", &["ZADD", "K", &s, &m]);
    assert_eq!(one(&mut c, &["RL.BLOCK", "SLIDE", "k", "10"]), ahead + 1);
    let now = server.clock_ms();
    assert_eq!(
        same4(&mut c, &["RL.SLIDE", "k", "2", "1000"]),
        [0, 0, ahead + 1 - now, ahead + 1 - now]
    );
    assert_eq!(one(&mut c, &["RL.UNBLOCK", "SLIDE", "k"]), 1);
    assert_eq!(one(&mut c, &["RL.UNBLOCK", "SLIDE", "k"]), 0);
    assert!(t0 < now);
}

//! Leases (RL.ACQUIRE, RL.RELEASE, RL.RENEW, RL.PEEK ACQUIRE, RL.ALL
//! ACQUIRE clauses) through the module and through the library, compared
//! step by step.
//!
//! The ids rl makes differ between the editions (each draws its own
//! nonce), so the comparison pairs a module id with the library's in order
//! of appearance (the same position of the same reply) and compares the
//! module's answer with its ids translated; a generated id must have the
//! module's shape (`<now_ms base 36>-<64-bit nonce base 36>`). Lines that
//! name a generated id use each edition's own. Sorted sets are compared as
//! sets of (member, score): two leases with the same expiry sort by id,
//! which differs between the editions.

use std::collections::HashMap;

use redis::Value;

use super::differential::{pair, ClockSteps};
use super::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{error_text, plain_key, run, Flavor, Plain, Server};

// ------------------------------------------------------------ comparing

/// A word of a line: literal, or the i-th generated id (each edition's
/// own spelling).
#[derive(Debug, Clone)]
enum Word {
    Lit(String),
    Gen(usize),
}

fn lit(s: &str) -> Word {
    Word::Lit(s.to_string())
}

fn words(line: &[&str]) -> Vec<Word> {
    line.iter().map(|w| lit(w)).collect()
}

/// `<base 36>-<base 36>`, the nonce at most 13 digits and below 2^64; the
/// time part `now_ms` when given.
fn generated_shape(id: &[u8], now_ms: Option<&[u8]>) -> bool {
    let Ok(s) = std::str::from_utf8(id) else {
        return false;
    };
    let Some((time, nonce)) = s.split_once('-') else {
        return false;
    };
    let digits = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    };
    if !digits(time) || !digits(nonce) || nonce.len() > 13 || s.len() > 26 {
        return false;
    }
    let value = u128::from_str_radix(nonce, 36).unwrap();
    if value > u128::from(u64::MAX) {
        return false;
    }
    now_ms.is_none_or(|t| t == time.as_bytes())
}

fn base36(mut v: u64) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(digits[(v % 36) as usize]);
        v /= 36;
        if v == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// The ids made so far: (module's, library's), in order of appearance.
#[derive(Default)]
struct Ids {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    of_module: HashMap<Vec<u8>, usize>,
}

impl Ids {
    /// Pairs the bulk strings the two replies hold at the same place where
    /// they differ and both are generated ids (checked against the
    /// module's time part when `exact`).
    fn pair(&mut self, m: &Value, f: &Value, exact: bool) {
        match (m, f) {
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (x, y) in a.iter().zip(b) {
                    self.pair(x, y, exact);
                }
            }
            (Value::BulkString(x), Value::BulkString(y))
                if x != y && generated_shape(x, None) && !self.of_module.contains_key(x) =>
            {
                let time = x.split(|b| *b == b'-').next().unwrap();
                assert!(
                    generated_shape(y, exact.then_some(time)),
                    "the library's id {:?} has not the shape of the module's {:?}",
                    String::from_utf8_lossy(y),
                    String::from_utf8_lossy(x)
                );
                assert!(
                    !self.pairs.iter().any(|(_, f)| f == y),
                    "the library handed out {:?} twice",
                    String::from_utf8_lossy(y)
                );
                self.of_module.insert(x.clone(), self.pairs.len());
                self.pairs.push((x.clone(), y.clone()));
            }
            _ => {}
        }
    }

    fn translate_bytes(&self, b: &[u8]) -> Vec<u8> {
        match self.of_module.get(b) {
            Some(&i) => self.pairs[i].1.clone(),
            None => b.to_vec(),
        }
    }

    fn translate(&self, v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.iter().map(|x| self.translate(x)).collect()),
            Value::BulkString(b) => Value::BulkString(self.translate_bytes(b)),
            other => other.clone(),
        }
    }

    fn render(&self, line: &[Word], module: bool) -> Vec<String> {
        line.iter()
            .map(|w| match w {
                Word::Lit(s) => s.clone(),
                Word::Gen(i) => {
                    let (m, f) = &self.pairs[*i];
                    String::from_utf8(if module { m.clone() } else { f.clone() }).unwrap()
                }
            })
            .collect()
    }
}

/// A state as compared: sorted-set entries sorted by member (ties in
/// score sort by id, which differs), and without the instant when not
/// `exact` (scores and expiries dropped, only whether an expiry is set).
fn normal_state(state: &[(Plain, i64)], ids: Option<&Ids>, exact: bool) -> Vec<(Plain, i64)> {
    state
        .iter()
        .map(|(p, at)| {
            let p = match p {
                Plain::Zset(entries) => {
                    let mut e: Vec<(Vec<u8>, Vec<u8>)> = entries
                        .iter()
                        .map(|(m, s)| {
                            let m = ids.map_or(m.clone(), |ids| ids.translate_bytes(m));
                            (m, if exact { s.clone() } else { Vec::new() })
                        })
                        .collect();
                    e.sort();
                    Plain::Zset(e)
                }
                other => other.clone(),
            };
            (p, if exact { *at } else { at.signum() })
        })
        .collect()
}

/// A reply without what depends on the instant (not `exact`): every
/// `retry_after_ms` and `reset_after_ms`.
fn normal_reply(line0: &str, v: Value, exact: bool) -> Value {
    if exact {
        return v;
    }
    let zero4 = |v: Value| match v {
        Value::Array(mut a) if a.len() >= 4 => {
            a[2] = Value::Int(0);
            a[3] = Value::Int(0);
            Value::Array(a)
        }
        other => other,
    };
    match (line0.to_ascii_uppercase().as_str(), v) {
        ("RL.ALL", Value::Array(mut a)) if a.len() >= 2 => {
            a[1] = Value::Int(0);
            let a = a
                .into_iter()
                .enumerate()
                .map(|(i, x)| if i >= 2 { zero4(x) } else { x })
                .collect();
            Value::Array(a)
        }
        (_, v) => zero4(v),
    }
}

fn run_line(c: &mut redis::Connection, line: &[String]) -> Result<Value, String> {
    let words: Vec<&str> = line.iter().map(String::as_str).collect();
    run(c, &words).map_err(|e| error_text(&e))
}

/// Runs the line through the module (`m:` keys, its ids) and the library
/// (`f:` keys, its ids); pairs new ids; requires the same answer, the
/// module's ids translated. Returns the library's reply.
fn check(
    c: &mut redis::Connection,
    ids: &mut Ids,
    line: &[Word],
    exact: bool,
) -> Result<Value, String> {
    check_on(c, None, ids, line, exact)
}

/// [`check`], the lines run on `c`, the state read on `state` when given
/// (a RESP2 connection while `c` speaks RESP3).
fn check_on(
    c: &mut redis::Connection,
    state: Option<&mut redis::Connection>,
    ids: &mut Ids,
    line: &[Word],
    exact: bool,
) -> Result<Value, String> {
    let m_words = ids.render(line, true);
    let f_words = ids.render(line, false);
    let m_refs: Vec<&str> = m_words.iter().map(String::as_str).collect();
    let f_refs: Vec<&str> = f_words.iter().map(String::as_str).collect();
    let (module, functions) = pair(c, state, &m_refs, &f_refs);
    if let (Ok(m), Ok(f)) = (&module.reply, &functions.reply) {
        ids.pair(m, f, exact);
    }
    let name = m_refs[0];
    let m_reply = module
        .reply
        .clone()
        .map(|v| normal_reply(name, ids.translate(&v), exact));
    let f_reply = functions
        .reply
        .clone()
        .map(|v| normal_reply(name, v, exact));
    assert_eq!(
        m_reply, f_reply,
        "{m_words:?} / {f_words:?}: the module (left) and the library (right) reply differently"
    );
    assert_eq!(
        normal_state(&module.state, Some(ids), exact),
        normal_state(&functions.state, None, exact),
        "{m_words:?} / {f_words:?}: the module (left) and the library (right) store differently"
    );
    functions.reply
}

/// Runs a plain command on both `m:<key>` and `f:<key>` (setting up a
/// foreign key the same way for both).
fn on_both(c: &mut redis::Connection, line: &[&str]) {
    for prefix in ["m:", "f:"] {
        let words: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i == 1 {
                    format!("{prefix}{w}")
                } else {
                    w.to_string()
                }
            })
            .collect();
        run_line(c, &words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    }
}

fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Array(a) => a
            .iter()
            .filter_map(|x| match x {
                Value::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => panic!("not an array: {v:?}"),
    }
}

fn server_ms(c: &mut redis::Connection) -> i64 {
    crate::harness::server_ms(c)
}

// ------------------------------------------------------------ the streams

/// What a stream has made: ids named by the caller or generated, per key.
struct Stream {
    rng: XorShift,
    ids: Ids,
    exact: bool,
    steps: usize,
    /// Counts of what happened, so a stream that stops exercising a path
    /// fails.
    admitted: usize,
    denied: usize,
    released: usize,
    renewed: usize,
    errors: usize,
}

const LEASE_KEYS: [&str; 3] = ["a", "b", "c"];
const CLOCK: ClockSteps = ClockSteps {
    one_in: 3,
    ms: &[0, 0, 1, 2, 5, 10, 29, 100, 250, 999, 1000, 7000],
};
const NAMED: [&str; 7] = ["w1", "w2", "w3", "job-7", "-", "0-0", "x.y:z"];

/// The errors of docs/commands.md's tables for these commands, and the
/// usage errors of RL.PEEK / RL.ALL / RL.REFUND with ACQUIRE.
fn bad_lines() -> Vec<Vec<String>> {
    let long = "x".repeat(65);
    let lines: Vec<Vec<&str>> = vec![
        vec!["RL.ACQUIRE", "a"],
        vec!["RL.ACQUIRE", "a", "3"],
        vec!["RL.ACQUIRE", "a", "0", "100"],
        vec!["RL.ACQUIRE", "a", "1000001", "100"],
        vec!["RL.ACQUIRE", "a", "-1", "100"],
        vec!["RL.ACQUIRE", "a", "03", "100"],
        vec!["RL.ACQUIRE", "a", "x", "100"],
        vec!["RL.ACQUIRE", "a", "3", "0"],
        vec!["RL.ACQUIRE", "a", "3", "1000000000001"],
        vec!["RL.ACQUIRE", "a", "3", "1.5"],
        vec!["RL.ACQUIRE", "a", "0", "0", "ID", "42"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "a", "ID", "b"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "a", "ID", "42"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "a", "id"],
        vec!["RL.ACQUIRE", "a", "3", "100", "COST", "2"],
        vec![
            "RL.ACQUIRE",
            "a",
            "3",
            "100",
            "\x01verylongoptionnamethatgoesonandonandon",
            "2",
        ],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "42"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "-42"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", ""],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "a b"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "tab\there"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "del\x7f"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", "caf\u{e9}"],
        vec!["RL.ACQUIRE", "a", "3", "100", "ID", &long],
        vec!["RL.RELEASE", "a"],
        vec!["RL.RELEASE", "a", "w1", "w2"],
        vec!["RL.RELEASE", "a", "17"],
        vec!["RL.RELEASE", "a", "-0"],
        vec!["RL.RELEASE", "a", &long],
        vec!["RL.RELEASE", "a", "a b"],
        vec!["RL.RENEW", "a", "w1"],
        vec!["RL.RENEW", "a", "w1", "100", "x"],
        vec!["RL.RENEW", "a", "w1", "0"],
        vec!["RL.RENEW", "a", "w1", "1000000000001"],
        vec!["RL.RENEW", "a", "7", "10"],
        vec!["RL.RENEW", "a", "7", "0"],
        vec!["RL.RENEW", "a", "", "x"],
        vec!["RL.PEEK", "ACQUIRE", "a", "3"],
        vec!["RL.PEEK", "acquire", "a", "0", "100"],
        vec!["RL.PEEK", "ACQUIRE", "a", "3", "100", "ID", "42"],
        vec!["RL.PEEK", "ACQUIRE", "a", "3", "100", "ID"],
        vec!["RL.REFUND", "ACQUIRE", "a", "3", "100"],
        vec!["RL.REFUND", "ACQUIRE", "a", "3"],
        vec!["RL.REFUND", "ACQUIRE", "a", "3", "100", "ID", "w1"],
        vec!["RL.ALL", "1", "a", "ACQUIRE", "3"],
        vec![
            "RL.ALL", "2", "a", "b", "ACQUIRE", "3", "100", "ACQUIRE", "0", "100",
        ],
        vec![
            "RL.ALL", "2", "a", "b", "ACQUIRE", "3", "100", "ID", "ACQUIRE", "ACQUIRE", "1", "5",
        ],
        vec!["RL.ALL", "1", "a", "ACQUIRE", "3", "100", "ID", "42"],
        vec![
            "RL.ALL", "2", "a", "a", "ACQUIRE", "3", "100", "ACQUIRE", "3", "100",
        ],
    ];
    lines
        .into_iter()
        .map(|l| l.into_iter().map(str::to_string).collect())
        .collect()
}

/// Foreign keys, the same under `m:` and `f:`: a string, a hash, a list,
/// sorted sets rl could not have written, an RL.SLIDE log. `at` is a
/// far-away absolute expiry.
fn make_foreign(c: &mut redis::Connection, at: i64) {
    let at = at.to_string();
    on_both(c, &["SET", "str", "v"]);
    on_both(c, &["HSET", "hash", "h", "x"]);
    on_both(c, &["RPUSH", "list", "x"]);
    // No TTL.
    on_both(c, &["ZADD", "nottl", "5000", "w1"]);
    // An RL.SLIDE log: integer members numbered from their score.
    on_both(
        c,
        &["ZADD", "slog", "1000", "1000000000", "2000", "2000000003"],
    );
    on_both(c, &["PEXPIREAT", "slog", &at]);
    let bad: [(&str, &[&str]); 8] = [
        ("fint", &["ZADD", "fint", "99999999999999", "17"]),
        ("ffrac", &["ZADD", "ffrac", "99999999999999.5", "w1"]),
        (
            "fzero",
            &["ZADD", "fzero", "0", "w1", "99999999999999", "w2"],
        ),
        ("fneg", &["ZADD", "fneg", "-5", "w9"]),
        ("fbig", &["ZADD", "fbig", "9007199254740994", "w1"]),
        ("finf", &["ZADD", "finf", "+inf", "w1"]),
        ("fspace", &["ZADD", "fspace", "99999999999999", "a b"]),
        (
            "fslide2",
            &["ZADD", "fslide2", "99999999999999", "w1", "1", "1000005"],
        ),
    ];
    // Each without the lease header (refused for that), and with it as
    // `h<key>`, where its entries are checked as a call reads them.
    for (key, line) in bad {
        let with = format!("h{key}");
        let mut headed: Vec<&str> = line.to_vec();
        headed[1] = &with;
        headed.extend(["0", "rl leases"]);
        on_both(c, line);
        on_both(c, &headed);
        on_both(c, &["PEXPIREAT", key, &at]);
        on_both(c, &["PEXPIREAT", &with, &at]);
    }
    // The earliest held entry foreign, the latest an RL.SLIDE entry: the
    // order of the reads names the error (the earliest is read first).
    let late: i64 = at.parse::<i64>().unwrap() + 5;
    let slide_member = (late * 1_000_000 + 3).to_string();
    on_both(c, &["ZADD", "forder", "0", "rl leases"]);
    on_both(c, &["ZADD", "forder", &(late - 1).to_string(), "17"]);
    on_both(c, &["ZADD", "forder", &late.to_string(), &slide_member]);
    on_both(c, &["PEXPIREAT", "forder", &at]);
    // The header at another score is no header.
    on_both(
        c,
        &["ZADD", "fhead", "5", "rl leases", "99999999999999", "w1"],
    );
    on_both(c, &["PEXPIREAT", "fhead", &at]);
}

const FOREIGN: &[&str] = &[
    "forder", "str", "hash", "list", "nottl", "slog", "fint", "ffrac", "fzero", "fneg", "fbig",
    "finf", "fspace", "fslide2", "hfint", "hffrac", "hfzero", "hfneg", "hfbig", "hfinf", "hfspace",
    "hfslide2", "fhead",
];

impl Stream {
    fn new(seed: u64, exact: bool) -> Stream {
        Stream {
            rng: XorShift(seed),
            ids: Ids::default(),
            exact,
            steps: 0,
            admitted: 0,
            denied: 0,
            released: 0,
            renewed: 0,
            errors: 0,
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    /// Limits stay at most 12: then every admission removes every expired
    /// lease (a key never holds more than 16 entries), so which of two
    /// leases with the same expiry goes first never matters. (The 16 cut
    /// among ties is tested with named ids.)
    fn limit(&mut self) -> String {
        (1 + self.below(12)).to_string()
    }

    fn lease_ms(&mut self) -> String {
        if !self.exact {
            return (60_000 + self.below(600_000)).to_string();
        }
        let choices: [u64; 11] = [
            1,
            2,
            5,
            10,
            30,
            100,
            250,
            1000,
            5000,
            60_000,
            1_000_000_000_000,
        ];
        choices[self.below(choices.len() as u64) as usize].to_string()
    }

    /// An id: named, or one generated earlier.
    fn some_id(&mut self) -> Word {
        if !self.ids.pairs.is_empty() && self.below(2) == 0 {
            let n = self.ids.pairs.len() as u64;
            // Mostly recent ones.
            let back = self.below(n.min(8));
            return Word::Gen((n - 1 - back) as usize);
        }
        lit(NAMED[self.below(NAMED.len() as u64) as usize])
    }

    fn key(&mut self) -> String {
        if self.below(12) == 0 {
            return FOREIGN[self.below(FOREIGN.len() as u64) as usize].to_string();
        }
        LEASE_KEYS[self.below(LEASE_KEYS.len() as u64) as usize].to_string()
    }

    fn acquire_params(&mut self, line: &mut Vec<Word>) {
        line.push(Word::Lit(self.limit()));
        line.push(Word::Lit(self.lease_ms()));
        if self.below(2) == 0 {
            line.push(lit(if self.below(4) == 0 { "id" } else { "ID" }));
            line.push(self.some_id());
        }
    }

    fn line(&mut self) -> Vec<Word> {
        let key = self.key();
        match self.below(20) {
            0..=6 => {
                let mut line = vec![lit("RL.ACQUIRE"), Word::Lit(key)];
                self.acquire_params(&mut line);
                line
            }
            7..=9 => vec![lit("RL.RELEASE"), Word::Lit(key), self.some_id()],
            10..=12 => vec![
                lit("RL.RENEW"),
                Word::Lit(key),
                self.some_id(),
                Word::Lit(self.lease_ms()),
            ],
            13 | 14 => {
                let mut line = vec![lit("RL.PEEK"), lit("ACQUIRE"), Word::Lit(key)];
                self.acquire_params(&mut line);
                line
            }
            15 => {
                let mut line = vec![lit("RL.REFUND"), lit("ACQUIRE"), Word::Lit(key)];
                self.acquire_params(&mut line);
                line
            }
            16 | 17 => {
                let n = 1 + self.below(3) as usize;
                let mut keys: Vec<String> = Vec::new();
                while keys.len() < n {
                    let k = self.key();
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
                let mut line = vec![lit("RL.ALL"), Word::Lit(n.to_string())];
                line.extend(keys.iter().map(|k| lit(k)));
                for _ in 0..n {
                    line.push(lit("ACQUIRE"));
                    self.acquire_params(&mut line);
                }
                line
            }
            _ => {
                let lines = bad_lines();
                let l = &lines[self.below(lines.len() as u64) as usize];
                l.iter().map(|w| lit(w)).collect()
            }
        }
    }

    fn tally(&mut self, line: &[Word], reply: &Result<Value, String>) {
        let name = match &line[0] {
            Word::Lit(s) => s.to_ascii_uppercase(),
            Word::Gen(_) => unreachable!(),
        };
        match reply {
            Err(_) => self.errors += 1,
            Ok(v) => {
                let first = ints(v).first().copied().unwrap_or(0);
                match name.as_str() {
                    "RL.ACQUIRE" | "RL.ALL" if first == 1 => self.admitted += 1,
                    "RL.ACQUIRE" | "RL.ALL" => self.denied += 1,
                    "RL.RELEASE" if first == 1 => self.released += 1,
                    "RL.RENEW" if first == 1 => self.renewed += 1,
                    _ => {}
                }
            }
        }
    }

    /// `steps` random lines, compared one by one; the clock steps forward
    /// between them (exact streams: by 0 to 7 s, often by nothing).
    fn run(&mut self, server: &Server, c: &mut redis::Connection, steps: usize) {
        for _ in 0..steps {
            CLOCK.maybe_step(server, &mut self.rng);
            let line = self.line();
            let reply = check(c, &mut self.ids, &line, self.exact);
            self.tally(&line, &reply);
            self.steps += 1;
        }
        assert!(
            self.admitted > 10
                && self.denied > 5
                && self.released > 3
                && self.renewed > 3
                && self.errors > 10,
            "the stream missed paths: admitted {}, denied {}, released {}, renewed {}, errors {}",
            self.admitted,
            self.denied,
            self.released,
            self.renewed,
            self.errors
        );
        assert!(
            self.ids.pairs.len() > 10,
            "only {} generated ids",
            self.ids.pairs.len()
        );
    }
}

fn stream_on(flavor: Flavor, seed: u64, steps: usize) {
    let server = start_both(flavor);
    let mut c = server.conn();
    let now = server_ms(&mut c);
    make_foreign(&mut c, now + 10_000_000_000);
    let mut s = Stream::new(seed, server.clock_stopped());
    s.run(&server, &mut c, steps);
}

#[test]
fn random_streams_agree_on_valkey() {
    for seed in [0x9E37_79B9_7F4A_7C15, 0xD1B5_4A32_D192_ED03, 42] {
        stream_on(Flavor::Valkey9, seed, 800);
    }
}

#[test]
fn random_streams_agree_on_redis7() {
    stream_on(Flavor::Redis7, 0x5151_7E57, 400);
}

#[test]
fn random_streams_agree_on_redis8() {
    stream_on(Flavor::Redis8, 0xFEED_F00D, 400);
}

// ------------------------------------------------------------ targeted

/// Exactly the same answer for `line` (named ids only), through the
/// module and the library.
fn same(c: &mut redis::Connection, line: &[&str]) -> Result<Value, String> {
    check(c, &mut Ids::default(), &words(line), true)
}

#[test]
fn more_than_sixteen_expired_leases_go_sixteen_per_acquire() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    // One long lease keeps the key; 40 short ones, many with the same
    // expiry (ties sort by id).
    same(c, &["RL.ACQUIRE", "k", "100", "100000", "ID", "keep"]).unwrap();
    for i in 0..40 {
        let id = format!("j{i:02}");
        let ms = if i % 3 == 0 { "50" } else { "100" };
        same(c, &["RL.ACQUIRE", "k", "100", ms, "ID", &id]).unwrap();
        if i % 10 == 9 {
            server.advance(1);
        }
    }
    server.advance(200);
    let r = same(c, &["RL.PEEK", "ACQUIRE", "k", "100", "1000"]).unwrap();
    assert_eq!(ints(&r)[..3], [1, 98, 0]);
    // (Each count below holds the header too.)
    assert_eq!(
        crate::harness::zcard(c, "f:k"),
        42,
        "a peek removes nothing"
    );
    let mut cards = Vec::new();
    for i in 0..4 {
        let id = format!("n{i}");
        same(c, &["RL.ACQUIRE", "k", "100", "1000", "ID", &id]).unwrap();
        cards.push(crate::harness::zcard(c, "f:k"));
    }
    assert_eq!(cards, vec![27, 12, 5, 6]);
    // Releasing or renewing an expired one changes nothing.
    assert_eq!(ints(&same(c, &["RL.RELEASE", "k", "j00"]).unwrap())[0], 0);
    assert_eq!(
        ints(&same(c, &["RL.RENEW", "k", "j00", "10"]).unwrap())[0],
        0
    );
}

#[test]
fn more_than_sixty_four_held_leases_are_counted_by_score() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let t0 = server.clock_ms();
    for i in 0..80 {
        let id = format!("h{i:02}");
        let r = same(
            c,
            &["RL.ACQUIRE", "k", "75", &format!("{}", 1000 + i), "ID", &id],
        );
        assert_eq!(ints(&r.unwrap())[0], i64::from(i < 75), "acquire {i}");
        if i == 64 || i == 65 {
            // 65 and 66 entries: the walk, then the count.
            same(c, &["RL.PEEK", "ACQUIRE", "k", "75", "10"]).unwrap();
        }
    }
    // A foreign entry among the held ones: the count by score does not read
    // it (both editions alike), a walk would.
    let odd = format!("{}.5", t0 + 1003);
    on_both(c, &["ZADD", "k", &odd, "odd"]);
    let r = same(c, &["RL.ACQUIRE", "k", "80", "5000", "ID", "late"]).unwrap();
    assert_eq!(ints(&r), vec![1, 3, 0, 5000]);
    same(c, &["RL.RELEASE", "k", "h10"]).unwrap();
    same(c, &["RL.RENEW", "k", "h11", "9000"]).unwrap();
    server.advance(1040);
    // Expired leases among them, the odd one in the removal's reach.
    let r = same(c, &["RL.ACQUIRE", "k", "80", "5000", "ID", "later"]);
    assert_eq!(
        r,
        Err("ERR key holds a sorted set that rl did not write".into())
    );
    same(c, &["RL.RELEASE", "k", "h50"]).unwrap();
    same(c, &["RL.PEEK", "ACQUIRE", "k", "80", "5000"]).unwrap();
}

#[test]
fn largest_limit_and_lease() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let ids = &mut Ids::default();
    let mut same = |c: &mut redis::Connection, line: &[&str]| check(c, ids, &words(line), true);
    let r = same(
        c,
        &["RL.ACQUIRE", "k", "1000000", "1000000000000", "ID", "long"],
    )
    .unwrap();
    assert_eq!(ints(&r), vec![1, 999_999, 0, 1_000_000_000_000]);
    let at = crate::harness::pexpiretime(c, "f:k");
    assert_eq!(at, server.clock_ms() + 1_250_000_000_000);
    let r = same(c, &["RL.ACQUIRE", "k", "1000000", "1000000000000"]).unwrap();
    assert_eq!(ints(&r), vec![1, 999_998, 0, 1_000_000_000_000]);
    server.advance(5000);
    let r = same(c, &["RL.RENEW", "k", "long", "1000000000000"]).unwrap();
    assert_eq!(ints(&r), vec![1, 2, 999_999_995_000, 1_000_000_000_000]);
    same(c, &["RL.PEEK", "ACQUIRE", "k", "1000000", "1000000000000"]).unwrap();
    for bad in [
        vec!["RL.ACQUIRE", "k", "1000001", "1000000000000"],
        vec!["RL.ACQUIRE", "k", "1000000", "1000000000001"],
        vec!["RL.RENEW", "k", "long", "1000000000001"],
        vec!["RL.ACQUIRE", "k", "99999999999999999999", "1"],
    ] {
        let e = same(c, &bad).unwrap_err();
        assert!(e.contains("must be an integer from 1 to"), "{bad:?}: {e}");
    }
}

#[test]
fn ids_that_look_like_integers_or_are_64_bytes() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let id64 = "~".repeat(63) + "!";
    let id65 = "a".repeat(65);
    let ok = [
        "-", "0-0", "12a", "+5", "1e5", "0x10", "--1", "-1-", "1.5", &id64, "\x21", "\x7e",
    ];
    for id in ok {
        let r = same(c, &["RL.ACQUIRE", "k", "100", "1000", "ID", id]).unwrap();
        assert_eq!(ints(&r)[0], 1, "{id:?}");
        assert_eq!(
            ints(&same(c, &["RL.RENEW", "k", id, "2000"]).unwrap())[0],
            1
        );
    }
    for id in [
        "42",
        "-42",
        "0",
        "-0",
        "007",
        "99999999999999999999999",
        &id65,
        "",
        " ",
        "a\x00b",
        "\u{80}",
    ] {
        for line in [
            vec!["RL.ACQUIRE", "k", "100", "1000", "ID", id],
            vec!["RL.RELEASE", "k", id],
            vec!["RL.RENEW", "k", id, "10"],
        ] {
            let e = same(c, &line).unwrap_err();
            assert!(
                e.contains("must be 1 to 64 printable ASCII"),
                "{line:?}: {e}"
            );
        }
    }
    for id in ok {
        assert_eq!(
            ints(&same(c, &["RL.RELEASE", "k", id]).unwrap())[0],
            1,
            "{id:?}"
        );
    }
    assert_eq!(
        crate::harness::exists(c, &["f:k", "m:k"]),
        0,
        "the last release deletes the set"
    );
}

#[test]
fn foreign_keys_and_slide_logs_are_refused_and_left_untouched() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    make_foreign(c, server.clock_ms() + 1_000_000);
    // fslide2: a lease first (read first by the earliest-held read), then
    // a slide entry: the order of reads decides the error.
    let foreign = "ERR key holds a sorted set that rl did not write";
    let no_header = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";
    let slide = "ERR key holds RL.SLIDE state, not lease state";
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    // (With the header, `hfzero`'s and `hfneg`'s entries at or below 0
    // are never read: they are not leases, nor counted, nor removed.)
    let want = [
        ("str", wrongtype),
        ("hash", wrongtype),
        ("list", wrongtype),
        ("nottl", foreign),
        ("slog", slide),
        ("fint", no_header),
        ("ffrac", no_header),
        ("fzero", no_header),
        ("fneg", no_header),
        ("fbig", no_header),
        ("finf", no_header),
        ("fspace", no_header),
        ("fslide2", slide),
        ("fhead", no_header),
        ("hfint", foreign),
        ("hffrac", foreign),
        ("hfbig", foreign),
        ("hfinf", foreign),
        ("hfspace", foreign),
        ("hfslide2", slide),
        ("forder", foreign),
    ];
    for (key, text) in want {
        for line in [
            vec!["RL.ACQUIRE", key, "3", "1000"],
            vec!["RL.ACQUIRE", key, "3", "1000", "ID", "w1"],
            vec!["RL.ALL", "1", key, "ACQUIRE", "3", "1000"],
        ] {
            let e = same(c, &line).unwrap_err();
            let want = match line[0] {
                "RL.ALL" if text != wrongtype => text.replacen("ERR ", "ERR clause 1: ", 1),
                _ => text.to_string(),
            };
            assert_eq!(e, want, "{line:?}");
        }
        // A peek, a release, a renewal read less (no expired entry): compared,
        // not required to fail.
        let _ = same(c, &["RL.PEEK", "ACQUIRE", key, "3", "1000"]);
        let _ = same(c, &["RL.RELEASE", key, "w1"]);
        let _ = same(c, &["RL.RENEW", key, "w1", "1000"]);
        let _ = same(c, &["RL.RELEASE", key, "w2"]);
    }
    let e = same(
        c,
        &[
            "RL.ALL", "2", "k", "slog", "ACQUIRE", "3", "1000", "ACQUIRE", "3", "1000",
        ],
    )
    .unwrap_err();
    assert_eq!(e, "ERR clause 2: key holds RL.SLIDE state, not lease state");
    assert_eq!(
        crate::harness::exists(c, &["f:k"]),
        0,
        "a refused RL.ALL writes nothing"
    );
}

#[test]
fn expiry_moves_only_when_it_falls_short() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let t0 = server.clock_ms();
    same(c, &["RL.ACQUIRE", "k", "5", "1000", "ID", "a"]).unwrap();
    assert_eq!(crate::harness::pexpiretime(c, "f:k"), t0 + 1250);
    server.advance(100);
    same(c, &["RL.ACQUIRE", "k", "5", "1000", "ID", "b"]).unwrap();
    assert_eq!(
        crate::harness::pexpiretime(c, "f:k"),
        t0 + 1250,
        "1100 needed, 1250 kept"
    );
    server.advance(200);
    same(c, &["RL.RENEW", "k", "a", "1000"]).unwrap();
    assert_eq!(crate::harness::pexpiretime(c, "f:k"), t0 + 1300 + 250);
    same(c, &["RL.ACQUIRE", "k", "5", "100", "ID", "a"]).unwrap();
    same(c, &["RL.RELEASE", "k", "a"]).unwrap();
    same(c, &["RL.RELEASE", "k", "b"]).unwrap();
    assert_eq!(crate::harness::exists(c, &["f:k"]), 0);
    // A denial writes nothing.
    same(c, &["RL.ACQUIRE", "k", "1", "1000", "ID", "x"]).unwrap();
    let before = plain_key(c, b"f:k");
    let r = same(c, &["RL.ACQUIRE", "k", "1", "5000", "ID", "y"]).unwrap();
    assert_eq!(ints(&r), vec![0, 0, 1000, 1000]);
    assert_eq!(plain_key(c, b"f:k"), before);
}

/// Ids the library makes: the module's shape, the clock's ms first, never
/// the same twice, at one stopped instant and after the library is
/// loaded again at that instant.
#[test]
fn generated_ids_have_the_shape_and_do_not_repeat() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let now = base36(server.clock_ms() as u64);
    let mut seen = std::collections::HashSet::new();
    for round in 0..3 {
        if round > 0 {
            super::load(c);
        }
        for i in 0..200 {
            let r: Value = run(c, &["FCALL", "rl_acquire", "1", "f:k", "1000", "60000"]).unwrap();
            let Value::Array(a) = r else { panic!() };
            let Value::BulkString(id) = &a[4] else {
                panic!("{a:?}")
            };
            assert!(
                generated_shape(id, Some(now.as_bytes())),
                "{:?}",
                String::from_utf8_lossy(id)
            );
            assert!(
                seen.insert(id.clone()),
                "{:?} twice (round {round}, {i})",
                String::from_utf8_lossy(id)
            );
            // Released at once, so the absent-check cannot hide a repeat.
            let r: Value = run(
                c,
                &[
                    "FCALL",
                    "rl_release",
                    "1",
                    "f:k",
                    std::str::from_utf8(id).unwrap(),
                ],
            )
            .unwrap();
            assert_eq!(ints(&r)[0], 1);
        }
    }
    // Most nonces take 13 base-36 digits, as the module's 64 random bits do.
    let long = seen
        .iter()
        .filter(|id| id.len() == now.len() + 1 + 13)
        .count();
    assert!(long > 300, "{long} of 600 ids with a 13-digit nonce");
    // Another process at the same instant makes other ids.
    let other = start_both(Flavor::Valkey9);
    let c2 = &mut other.conn();
    let r: Value = run(c2, &["FCALL", "rl_acquire", "1", "f:k", "1000", "60000"]).unwrap();
    let Value::Array(a) = r else { panic!() };
    let Value::BulkString(id) = &a[4] else {
        panic!()
    };
    assert!(!seen.contains(id));
}

#[test]
fn release_runs_at_maxmemory_acquire_and_renew_do_not() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    same(c, &["RL.ACQUIRE", "k", "3", "60000", "ID", "a"]).unwrap();
    same(c, &["RL.ACQUIRE", "k", "3", "60000", "ID", "b"]).unwrap();
    run(c, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]).unwrap();
    run(c, &["CONFIG", "SET", "maxmemory", "1"]).unwrap();
    let acquire = same(c, &["RL.ACQUIRE", "k", "3", "60000", "ID", "c"]).unwrap_err();
    assert!(acquire.starts_with("OOM"), "{acquire}");
    let renew = same(c, &["RL.RENEW", "k", "a", "60000"]).unwrap_err();
    assert!(renew.starts_with("OOM"), "{renew}");
    assert_eq!(ints(&same(c, &["RL.RELEASE", "k", "a"]).unwrap())[0], 1);
    run(c, &["CONFIG", "SET", "maxmemory", "0"]).unwrap();
    same(c, &["RL.RELEASE", "k", "b"]).unwrap();
}

/// Over RESP3 too, a denied acquire's lease is the same null, and an
/// admitted one's id a bulk string (Lua's false is the null reply).
#[test]
fn replies_agree_over_resp3() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn_resp3();
    let c2 = &mut server.conn();
    let ids = &mut Ids::default();
    let lines: [&[&str]; 7] = [
        &["RL.ACQUIRE", "k", "1", "1000", "ID", "a"],
        &["RL.ACQUIRE", "k", "1", "1000"],
        &[
            "RL.ALL", "2", "k", "j", "ACQUIRE", "1", "1000", "ACQUIRE", "2", "1000",
        ],
        &["RL.ALL", "1", "j", "ACQUIRE", "2", "1000"],
        &["RL.RENEW", "k", "a", "5000"],
        &["RL.RELEASE", "k", "a"],
        &["RL.ACQUIRE", "k", "1", "1000"],
    ];
    let mut replies = Vec::new();
    for line in lines {
        replies.push(check_on(c, Some(&mut *c2), ids, &words(line), true).unwrap());
    }
    let Value::Array(denied) = &replies[1] else {
        panic!("{:?}", replies[1])
    };
    assert_eq!(denied[4], Value::Nil);
    let Value::Array(all) = &replies[2] else {
        panic!()
    };
    assert_eq!(
        all[3],
        Value::Array(vec![
            Value::Int(1),
            Value::Int(1),
            Value::Int(0),
            Value::Int(1000),
            Value::Nil
        ])
    );
    assert_eq!(
        ids.pairs.len(),
        2,
        "the ids of RL.ALL and of the last acquire"
    );
}

/// A clock stepped back (a failover onto a replica behind): leases taken
/// "later" stay held, a renewal never shortens, new ids start with the
/// earlier ms; both editions alike, step by step.
#[test]
fn a_clock_stepped_back_and_forward() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let ids = &mut Ids::default();
    let t0 = server.clock_ms();
    let mut rng = XorShift(7);
    let mut at = t0;
    for step in 0..300 {
        let move_ms = [-5000i64, -1000, -1, 0, 0, 1, 3, 100, 999, 2000];
        at += move_ms[rng.below(move_ms.len() as u64) as usize];
        if rng.below(3) == 0 {
            server.set_clock(at);
            assert_eq!(server_ms(c), at, "step {step}");
        }
        let key = ["a", "b"][rng.below(2) as usize];
        let gen =
            (!ids.pairs.is_empty()).then(|| Word::Gen(rng.below(ids.pairs.len() as u64) as usize));
        let id = match (rng.below(3), gen) {
            (0, Some(g)) => g,
            _ => lit(["w1", "w2", "w3"][rng.below(3) as usize]),
        };
        let ms = ["1", "50", "1000", "3000", "20000"][rng.below(5) as usize];
        let limit = (1 + rng.below(4)).to_string();
        let line = match rng.below(5) {
            0 => vec![lit("RL.ACQUIRE"), lit(key), Word::Lit(limit), lit(ms)],
            1 => vec![
                lit("RL.ACQUIRE"),
                lit(key),
                Word::Lit(limit),
                lit(ms),
                lit("ID"),
                id,
            ],
            2 => vec![lit("RL.RELEASE"), lit(key), id],
            3 => vec![lit("RL.RENEW"), lit(key), id, lit(ms)],
            _ => vec![
                lit("RL.PEEK"),
                lit("ACQUIRE"),
                lit(key),
                Word::Lit(limit),
                lit(ms),
            ],
        };
        let _ = check(c, ids, &line, true);
    }
    assert!(ids.pairs.len() > 10, "{} generated ids", ids.pairs.len());
}

/// What the library writes reaches a replica without rl as plain
/// commands (ZADD, ZREM, PEXPIREAT with explicit values): after a stream,
/// the replica holds the primary's keyspace, key by key.
#[test]
fn a_replica_without_rl_holds_what_the_library_wrote() {
    for flavor in [Flavor::Redis8, Flavor::Redis7] {
        let primary = Server::start_primary(flavor, &[]);
        super::load(&mut primary.conn());
        let replica = primary.start_replica(false);
        let mut c = primary.conn();
        let now = server_ms(&mut c);
        make_foreign(&mut c, now + 10_000_000_000);
        let mut s = Stream::new(0xABCD_0123, false);
        s.run(&primary, &mut c, 300);
        crate::harness::wait_replicas(&mut c, 1);
        let want = crate::harness::keyspace(&mut c);
        let got = crate::harness::keyspace(&mut replica.conn());
        assert!(
            want.keys().any(|k| k.starts_with(b"f:") && k.len() == 3),
            "{flavor:?}: no lease set written by the library"
        );
        assert_eq!(got, want, "{flavor:?}: the replica differs");
    }
}

/// The repros of the lease-safety issue through both editions on a stopped
/// clock: sorted sets of the shape of leases (a leaderboard, a schedule, a
/// far future score) refused by every lease command and left as they were;
/// the wait under a lowered limit; a renewal that extends nothing writes
/// nothing. `same` compares the replies, errors and states of both.
#[test]
fn the_lease_safety_repros_answer_alike_and_as_required() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let now = server.clock_ms();
    let (hour, two, far) = (
        (now + 3_600_000).to_string(),
        (now + 7_200_000).to_string(),
        (now + 100_000_000_000).to_string(),
    );
    on_both(
        c,
        &[
            "ZADD", "board", "100", "alice", "250", "bob", "999", "carol",
        ],
    );
    on_both(c, &["EXPIRE", "board", "3600"]);
    on_both(c, &["ZADD", "sched", &hour, "job-alice", &two, "job-bob"]);
    on_both(c, &["PEXPIRE", "sched", "86400000"]);
    on_both(c, &["ZADD", "fs", &far, "alice"]);
    on_both(c, &["PEXPIRE", "fs", "60000"]);
    let dump = |c: &mut redis::Connection| -> Vec<(Option<Vec<u8>>, i64)> {
        ["f:board", "f:sched", "f:fs"]
            .iter()
            .map(|k| crate::harness::frozen_state(c, k))
            .collect()
    };
    let before = dump(c);
    let no_header = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";
    let lines: &[&[&str]] = &[
        &["RL.ACQUIRE", "board", "10", "1000"],
        &["RL.RELEASE", "sched", "job-alice"],
        &["RL.RENEW", "sched", "job-bob", "99999999"],
        &["RL.ACQUIRE", "fs", "1", "1000", "ID", "alice"],
        &["RL.PEEK", "ACQUIRE", "board", "10", "1000"],
    ];
    for line in lines {
        assert_eq!(same(c, line).unwrap_err(), no_header, "{line:?}");
    }
    let e = same(c, &["RL.ALL", "1", "board", "ACQUIRE", "10", "1000"]).unwrap_err();
    assert_eq!(e, no_header.replacen("ERR ", "ERR clause 1: ", 1));
    assert_eq!(dump(c), before, "left byte for byte");

    for (id, ms) in [("a", "1000"), ("b", "2000"), ("c", "3000")] {
        same(c, &["RL.ACQUIRE", "lo", "5", ms, "ID", id]).unwrap();
    }
    let r = same(c, &["RL.ACQUIRE", "lo", "2", "500"]).unwrap();
    assert_eq!(ints(&r), [0, 0, 2000, 3000]);
    let r = same(c, &["RL.PEEK", "ACQUIRE", "lo", "2", "500"]).unwrap();
    assert_eq!(ints(&r), [0, 0, 2000, 3000]);
    let r = same(c, &["RL.ALL", "1", "lo", "ACQUIRE", "1", "500"]).unwrap();
    assert_eq!(ints(&r)[..2], [0, 3000]);
    server.advance(1_999);
    assert_eq!(
        ints(&same(c, &["RL.ACQUIRE", "lo", "2", "500"]).unwrap())[..3],
        [0, 0, 1]
    );
    server.advance(1);
    assert_eq!(
        ints(&same(c, &["RL.ACQUIRE", "lo", "2", "500"]).unwrap())[0],
        1
    );

    same(c, &["RL.ACQUIRE", "nr", "2", "600000", "ID", "job"]).unwrap();
    let frozen = crate::harness::frozen_state(c, "f:nr");
    let changed = crate::harness::changes(c);
    assert_eq!(
        ints(&same(c, &["RL.RENEW", "nr", "job", "1000"]).unwrap())[..2],
        [1, 1]
    );
    assert_eq!(
        ints(&same(c, &["RL.ACQUIRE", "nr", "2", "1000", "ID", "job"]).unwrap())[..2],
        [1, 1]
    );
    assert_eq!(crate::harness::frozen_state(c, "f:nr"), frozen);
    assert_eq!(crate::harness::changes(c), changed, "neither edition wrote");
}

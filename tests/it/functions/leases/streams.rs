//! Random streams of every lease command over a few keys and the foreign
//! ones, compared at every step: exactly on Valkey's stopped clock, without
//! the instant on Redis 7.0 and 8.2; and a stream whose library writes
//! reach a replica without rl.

use redis::Value;

use crate::functions::differential::{ClockSteps, StepMs};
use crate::functions::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{server_ms, Flavor, Server};

use super::foreign::{make_foreign, FOREIGN};
use super::{check, ints, lit, Ids, Word};

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
    ms: StepMs::OneOf(&[0, 0, 1, 2, 5, 10, 29, 100, 250, 999, 1000, 7000]),
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

/// One stream on `flavor` (`tests/it/older/`): compared whole where its
/// clock can stop, else what does not depend on the instant.
pub fn streams_on(flavor: Flavor) {
    let steps = if flavor.clock_can_stop() { 800 } else { 400 };
    stream_on(flavor, 0x9E37_79B9_7F4A_7C15, steps);
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

/// What the library writes reaches a replica without rl as plain
/// commands (ZADD, ZREM, PEXPIREAT with explicit values): after a stream,
/// the replica holds the primary's keyspace, key by key.
#[test]
fn a_replica_without_rl_holds_what_the_library_wrote() {
    for flavor in [Flavor::Redis8, Flavor::Redis7] {
        let primary = Server::start_primary(flavor, &[]);
        crate::functions::load(&mut primary.conn());
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

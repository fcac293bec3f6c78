//! The bound on stale entries one call removes (`EVICT_PER_CALL`), chosen
//! by measurement: the stale-backlog cases of the worst-case table, with
//! the bound built as 128, 64 and 32 in both editions, beside the server's
//! own `ZREMRANGEBYRANK` of the same counts on the same key.
//!
//! A module carries its bound from its build (`RL_EVICT_PER_CALL`, set only
//! by `scripts/bench-bound.sh`, which builds one module per bound and
//! runs this); the library's is patched into its text before
//! `FUNCTION LOAD`. One server per edition and bound, all six up at once
//! on each server kind, each with the worst case's state (a log of 10^6
//! entries that all left a 1 s window, and RL.ALL's 7 other logs of
//! 20,000). The calls are then interleaved in rounds: in each, every
//! server takes each case, the order of the servers turning round by
//! round, and each rl call is followed by `ZREMRANGEBYRANK key 0 n-1` on
//! the same key, `n` the entries the call removed, so the machine's load
//! (a shared machine) falls on every bound, edition and reference alike.
//!
//! A call of COST c removes at least c + 1 stale entries, so that removal
//! outpaces insertion (`decide.rs` `evict_budget`): below 101, a bound
//! lowers the COST 1 case's removals, not the COST 100 one's (101), nor
//! RL.ALL's (108 for COST 93 + 7 x 1).
//!
//! Env: `RL_BOUNDS` (default `128,64,32`), `RL_BOUND_MODULES` (the folder
//! of `librl-redis-<n>.so` and `librl-valkey-<n>.so`, default
//! `target/bound`), `RL_BOUND_ROUNDS` (default 15), and the worst cases'
//! `RL_WORST_SERVERS` / `RL_WORST_EDITIONS`. Writes
//! `target/bench/bound.md` and `bound.csv`; nothing here is a test.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use redis::Connection;

use super::slide::fill_slide;
use super::{
    all_keys, all_line, as_fcall, chosen, cmd, int, items, server_ms, timed, words, zcard,
    Measured, ALL_SLIDE_BACKLOG, CLAUSES, FUNCTIONS, MEASURING, SLIDE_MAX_COST, SLIDE_MAX_LIMIT,
    SLIDE_STALE_WINDOW,
};
use crate::common::{Flavor, Server};

/// The goals per call, in the median: the module's and the library's.
const MODULE_GOAL_US: u64 = 500;
const LIBRARY_GOAL_US: u64 = 1_000;

/// The cases, in the order each server takes them in a round.
const CASES: [&str; 3] = ["COST 1", "COST 100", "RL.ALL"];

/// `decide.rs` `evict_budget` at `bound`, for one log or one of RL.ALL's
/// `clauses` SLIDE clauses costing `total` together.
fn budget(bound: u64, cost: u64, clauses: u64, total: u64) -> u64 {
    let owed = total.max(cost) + clauses;
    cost + 1 + bound.saturating_sub(owed) / clauses
}

/// RL.ALL's stale case: one clause at COST 93, the 7 others at 1.
fn all_cost(i: usize) -> u64 {
    if i == 0 {
        SLIDE_MAX_COST - (CLAUSES as u64 - 1)
    } else {
        1
    }
}

fn all_removals(bound: u64) -> u64 {
    (0..CLAUSES)
        .map(|i| budget(bound, all_cost(i), CLAUSES as u64, SLIDE_MAX_COST))
        .sum()
}

/// One server: an edition at a bound, its connection, and per case the
/// rl calls' and the reference's times.
struct Instance {
    functions: bool,
    bound: u64,
    _server: Server,
    c: Connection,
    rl: Vec<Vec<u64>>,
    own: Vec<Vec<u64>>,
}

fn bounds() -> Vec<u64> {
    let text = std::env::var("RL_BOUNDS").unwrap_or_else(|_| "128,64,32".into());
    text.split(',')
        .map(|b| {
            b.trim()
                .parse()
                .expect("RL_BOUNDS: numbers, e.g. 128,64,32")
        })
        .collect()
}

fn rounds() -> usize {
    std::env::var("RL_BOUND_ROUNDS").map_or(15, |r| r.parse().expect("RL_BOUND_ROUNDS: a number"))
}

/// The module built with `bound` for `flavor`'s API.
fn module(flavor: Flavor, bound: u64) -> PathBuf {
    let dir = std::env::var_os("RL_BOUND_MODULES").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bound"),
        PathBuf::from,
    );
    let api = if flavor == Flavor::Valkey9Native {
        "valkey"
    } else {
        "redis"
    };
    let path = dir.join(format!("librl-{api}-{bound}.so"));
    assert!(
        path.is_file(),
        "{} missing: scripts/bench-bound.sh builds one module per bound",
        path.display()
    );
    path
}

/// The library with its bound set to `bound`.
fn library(bound: u64) -> String {
    let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/functions/rl.lua"));
    let shipped = "  EVICT_PER_CALL = 128,\n";
    assert_eq!(
        text.matches(shipped).count(),
        1,
        "functions/rl.lua: one `EVICT_PER_CALL = 128,` to patch"
    );
    text.replace(shipped, &format!("  EVICT_PER_CALL = {bound},\n"))
}

fn start(flavor: Flavor, functions: bool, bound: u64) -> Instance {
    let module = (!functions).then(|| module(flavor, bound));
    let mut extra = MEASURING.to_vec();
    let path;
    if let Some(m) = &module {
        path = m.to_string_lossy().to_string();
        extra.extend(["--loadmodule", &path]);
    }
    let server = Server::start_in(flavor, crate::common::new_dir(flavor), &extra, false);
    let mut c = server.conn();
    if functions {
        let name: String = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg(library(bound))
            .query(&mut c)
            .expect("FUNCTION LOAD the patched library");
        assert_eq!(name, "rl");
    }
    Instance {
        functions,
        bound,
        _server: server,
        c,
        rl: vec![Vec::new(); CASES.len()],
        own: vec![Vec::new(); CASES.len()],
    }
}

/// The worst case's state: `{w}:s0` of 10^6 entries, `{w}:s1`..`s7` of
/// 20,000, written under a 10 min window (they leave a 1 s one later).
fn fill(i: &mut Instance) {
    FUNCTIONS.store(i.functions, Ordering::Relaxed);
    let keys = all_keys("s");
    for (n, k) in keys.iter().enumerate() {
        let entries = if n == 0 {
            SLIDE_MAX_LIMIT
        } else {
            ALL_SLIDE_BACKLOG
        };
        fill_slide(&mut i.c, k, entries / SLIDE_MAX_COST, SLIDE_MAX_COST);
    }
    assert_eq!(zcard(&mut i.c, &keys[0]), SLIDE_MAX_LIMIT);
}

/// Times `line` (an rl command line) on `i`, through FCALL for the
/// library; checks it admitted and removed `removes` entries (net of the
/// `adds` it inserted) from `keys`.
fn rl_call(i: &mut Instance, line: &[String], keys: &[String], adds: u64, removes: u64) -> u64 {
    let total = |c: &mut Connection| keys.iter().map(|k| zcard(c, k)).sum::<u64>();
    let before = total(&mut i.c);
    let (us, reply) = if i.functions {
        timed(&mut i.c, &cmd(&as_fcall(line)), "FCALL")
    } else {
        timed(&mut i.c, &cmd(line), &line[0])
    };
    assert_eq!(int(&items(&reply)[0]), 1, "{line:?} admitted: {reply:?}");
    let after = total(&mut i.c);
    assert_eq!(
        before + adds - after,
        removes,
        "{line:?} at bound {}: stale entries removed",
        i.bound
    );
    us
}

/// The server's own removal of the `n` oldest entries of `key`.
fn own_call(i: &mut Instance, key: &str, n: u64) -> u64 {
    let zrem = words(&format!("ZREMRANGEBYRANK {key} 0 {}", n - 1));
    let (us, reply) = timed(&mut i.c, &cmd(&zrem), "ZREMRANGEBYRANK");
    assert_eq!(int(&reply), n as i64, "ZREMRANGEBYRANK removed {n}");
    us
}

/// One round on one server: each case, then the reference of its count.
fn round(i: &mut Instance) {
    let keys = all_keys("s");
    let big = &keys[0];
    for (case, cost) in [1, SLIDE_MAX_COST].into_iter().enumerate() {
        let line = words(&format!(
            "RL.SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {cost}"
        ));
        let n = budget(i.bound, cost, 1, 0);
        let us = rl_call(i, &line, &keys[..1], cost, n);
        i.rl[case].push(us);
        let us = own_call(i, big, n);
        i.own[case].push(us);
    }
    let all = all_line(&keys, |k| {
        format!(
            "SLIDE {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {}",
            all_cost(k)
        )
    });
    let n = all_removals(i.bound);
    let us = rl_call(i, &all, &keys, SLIDE_MAX_COST, n);
    i.rl[2].push(us);
    // The reference: as many removed from the 10^6-entry key alone.
    let us = own_call(i, big, n);
    i.own[2].push(us);
}

fn median(runs: &[u64]) -> u64 {
    Measured {
        command: "",
        case: String::new(),
        runs: runs.to_vec(),
    }
    .median()
}

fn removals(bound: u64, case: usize) -> u64 {
    match case {
        0 => budget(bound, 1, 1, 0),
        1 => budget(bound, SLIDE_MAX_COST, 1, 0),
        _ => all_removals(bound),
    }
}

/// Runs the comparison and returns its Markdown (CSV rows into `csv`).
pub fn run(csv: &mut String) -> String {
    let started = Instant::now();
    let load_before = crate::page::load_average();
    let bounds = bounds();
    let rounds = rounds();
    let editions: Vec<bool> = [false, true]
        .into_iter()
        .filter(|&f| chosen("RL_WORST_EDITIONS", if f { "functions" } else { "module" }))
        .collect();
    let flavors = [
        (Flavor::Redis7, "Redis 7.0", "redis7"),
        (Flavor::Valkey9Native, "Valkey 9.1", "valkey9"),
        (Flavor::Redis8, "Redis 8.2", "redis8"),
    ];
    let mut results: Vec<Row> = Vec::new();
    for (flavor, label, name) in flavors {
        if !chosen("RL_WORST_SERVERS", name) {
            continue;
        }
        let t = Instant::now();
        let mut servers: Vec<Instance> = editions
            .iter()
            .flat_map(|&f| bounds.iter().map(move |&b| (f, b)))
            .map(|(f, b)| start(flavor, f, b))
            .collect();
        servers.iter_mut().for_each(fill);
        // Every entry left the 1 s window (the servers share the clock).
        let last = servers.len() - 1;
        let filled = server_ms(&mut servers[last].c);
        std::thread::sleep(Duration::from_millis(SLIDE_STALE_WINDOW + 50));
        while server_ms(&mut servers[0].c) <= filled + SLIDE_STALE_WINDOW as i64 {
            std::thread::sleep(Duration::from_millis(10));
        }
        for r in 0..rounds {
            let n = servers.len();
            for k in 0..n {
                let i = &mut servers[(k + r) % n];
                FUNCTIONS.store(i.functions, Ordering::Relaxed);
                round(i);
            }
        }
        eprintln!(
            "bound comparison on {label}: {:.1} s",
            t.elapsed().as_secs_f64()
        );
        for i in servers {
            let edition = if i.functions { "functions" } else { "module" };
            for (case, name) in CASES.iter().enumerate() {
                for (what, runs) in [("rl", &i.rl[case]), ("ZREMRANGEBYRANK", &i.own[case])] {
                    let all: Vec<String> = runs.iter().map(u64::to_string).collect();
                    let _ = writeln!(
                        csv,
                        "{label},{edition},{},{name},{what},{},{},{},\"{}\"",
                        i.bound,
                        removals(i.bound, case),
                        median(runs),
                        runs.iter().max().unwrap_or(&0),
                        all.join("; ")
                    );
                }
            }
            results.push(Row {
                server: label,
                functions: i.functions,
                bound: i.bound,
                cases: i.rl.into_iter().zip(i.own).collect(),
            });
        }
    }
    FUNCTIONS.store(false, Ordering::Relaxed);
    table(&results, &bounds, &editions, rounds, &load_before, started)
}

/// One server's results: per case, the rl calls' times and the
/// reference's.
struct Row {
    server: &'static str,
    functions: bool,
    bound: u64,
    cases: Vec<(Vec<u64>, Vec<u64>)>,
}

fn table(
    results: &[Row],
    bounds: &[u64],
    editions: &[bool],
    rounds: usize,
    load_before: &str,
    started: Instant,
) -> String {
    let mut md = String::from("\n## The removal bound: stale-backlog calls at each bound\n\n");
    let _ = writeln!(
        md,
        "{}\n\nServer time of one call (`SLOWLOG` µs), median / max of {rounds} calls; \
         beside each, the server's own `ZREMRANGEBYRANK` of the same count on the same key \
         right after it (median), and the ratio of the medians. Load average {load_before} \
         at the start, {} at the end.\n",
        crate::page::Run::now().line("`scripts/bench-bound.sh`"),
        crate::page::load_average()
    );
    for &functions in editions {
        let goal = if functions {
            LIBRARY_GOAL_US
        } else {
            MODULE_GOAL_US
        };
        let _ = writeln!(
            md,
            "### {} (goal: every median ≤ {goal} µs)\n",
            if functions {
                "Function library"
            } else {
                "Module"
            }
        );
        md.push_str("| server | bound |");
        for case in CASES {
            let _ = write!(
                md,
                " {case}: removes | rl µs | ZREMRANGEBYRANK µs | ratio |"
            );
        }
        md.push_str("\n| --- | ---: |");
        for _ in CASES {
            md.push_str(" ---: | ---: | ---: | ---: |");
        }
        md.push('\n');
        for row in results.iter().filter(|r| r.functions == functions) {
            let _ = write!(md, "| {} | {} |", row.server, row.bound);
            for (case, (rl, own)) in row.cases.iter().enumerate() {
                let (m, o) = (median(rl), median(own));
                let _ = write!(
                    md,
                    " {} | {m} / {} | {o} | {:.2} |",
                    removals(row.bound, case),
                    rl.iter().max().unwrap_or(&0),
                    m as f64 / o.max(1) as f64
                );
            }
            md.push('\n');
        }
        md.push('\n');
        for &bound in bounds {
            let over: Vec<String> = results
                .iter()
                .filter(|r| r.functions == functions && r.bound == bound)
                .flat_map(|row| {
                    row.cases
                        .iter()
                        .enumerate()
                        .filter_map(move |(case, (rl, _))| {
                            let m = median(rl);
                            (m > goal).then(|| format!("{} {} {m} µs", row.server, CASES[case]))
                        })
                })
                .collect();
            let verdict = if over.is_empty() {
                "every median within the goal".to_string()
            } else {
                format!("over: {}", over.join(", "))
            };
            let _ = writeln!(md, "- bound {bound}: {verdict}");
        }
        md.push('\n');
    }
    let _ = writeln!(md, "Took {:.0} s.", started.elapsed().as_secs_f64());
    md
}

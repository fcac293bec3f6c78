//! Throughput: every row driven by `redis-benchmark` in interleaved rounds,
//! the server's main-thread CPU per op and each row's capacity ratio to its
//! references; the targets drawn from the pipelined tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;

use crate::common::Server;

/// Rounds of every row; `RL_BENCH_ROUNDS` takes fewer, for a quicker run
/// on a busy machine (the page's run line says the bench, the tables say
/// the rounds).
const ROUNDS_DEFAULT: usize = 3;

pub fn rounds() -> usize {
    std::env::var("RL_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(ROUNDS_DEFAULT)
}
pub const KEYSPACE: &str = "100000";

pub struct Regime {
    pub name: &'static str,
    /// Short name for the targets table.
    pub short: &'static str,
    pub clients: u32,
    pub pipeline: u32,
    pub requests: u32,
}

pub const REGIMES: [Regime; 2] = [
    Regime {
        name: "pipelined (50 conns, P16)",
        short: "pipelined",
        clients: 50,
        pipeline: 16,
        // Enough for a steady CPU figure (0.1 to 1 s a row on an idle
        // machine) and a make bench within 10 minutes.
        requests: 50_000,
    },
    Regime {
        name: "unpipelined (50 conns)",
        short: "unpipelined",
        clients: 50,
        pipeline: 1,
        requests: 10_000,
    },
];

/// A benchmark row: its name, the command line (with `__rand_int__` for
/// random keys, `{slide}` / `{buckets}` / `{acquire}` / `{release}` for
/// the loaded scripts' SHAs), and
/// which rows it is compared against.
struct Row {
    name: &'static str,
    args: &'static [&'static str],
    refs: &'static [&'static str],
}

const SLIDE_MANY: &str = "RL.SLIDE many keys";
const LUA_SLIDE_MANY: &str = "Lua slide many keys";
const BUCKETS_MANY: &str = "RL.BUCKETS many keys";
const LUA_BUCKETS_MANY: &str = "Lua buckets many keys";

/// Many keys: random among 100,000, limit 100 per minute, mostly admitted.
/// Hot key: one key at its limit, mostly denied.
const ROWS: &[Row] = &[
    Row {
        name: SLIDE_MANY,
        args: &["RL.SLIDE", "s:__rand_int__", "100", "60000"],
        refs: &[LUA_SLIDE_MANY, "ZADD", "INCR"],
    },
    Row {
        name: LUA_SLIDE_MANY,
        args: &[
            "EVALSHA",
            "{slide}",
            "1",
            "ls:__rand_int__",
            "100",
            "60000",
            "1",
        ],
        refs: &[],
    },
    Row {
        name: "RL.SLIDE hot key",
        args: &["RL.SLIDE", "s:hot", "100", "60000"],
        refs: &["Lua slide hot key", "INCR"],
    },
    Row {
        name: "Lua slide hot key",
        args: &["EVALSHA", "{slide}", "1", "ls:hot", "100", "60000", "1"],
        refs: &[],
    },
    Row {
        name: BUCKETS_MANY,
        args: &["RL.BUCKETS", "b:__rand_int__", "100", "60000"],
        refs: &[LUA_BUCKETS_MANY, "HINCRBY", "INCR"],
    },
    Row {
        name: LUA_BUCKETS_MANY,
        args: &[
            "EVALSHA",
            "{buckets}",
            "1",
            "lb:__rand_int__",
            "100",
            "60000",
            "1000",
            "1",
        ],
        refs: &[],
    },
    Row {
        name: "RL.BUCKETS hot key",
        args: &["RL.BUCKETS", "b:hot", "100", "60000"],
        refs: &["Lua buckets hot key", "INCR"],
    },
    Row {
        name: "Lua buckets hot key",
        args: &[
            "EVALSHA",
            "{buckets}",
            "1",
            "lb:hot",
            "100",
            "60000",
            "1000",
            "1",
        ],
        refs: &[],
    },
    Row {
        name: "RL.THROTTLE many keys",
        args: &["RL.THROTTLE", "t:__rand_int__", "99", "100", "60000"],
        refs: &["INCR"],
    },
    Row {
        name: "RL.FIXED many keys",
        args: &["RL.FIXED", "f:__rand_int__", "100", "60000"],
        refs: &["INCR"],
    },
    Row {
        name: "RL.ALL two clauses many keys",
        args: &[
            "RL.ALL",
            "2",
            "as:__rand_int__",
            "af:__rand_int__",
            "SLIDE",
            "100",
            "60000",
            "FIXED",
            "1000000",
            "60000",
        ],
        refs: &[SLIDE_MANY, "INCR"],
    },
    // Leases of 50 ms on many keys: each holds a few, most expired, so an
    // acquire also removes some. The release rows look up an id not held
    // (redis-benchmark cannot pass one call's id to the next).
    Row {
        name: "RL.ACQUIRE many keys",
        args: &["RL.ACQUIRE", "a:__rand_int__", "1000", "50"],
        refs: &["Lua acquire many keys", "ZADD"],
    },
    Row {
        name: "Lua acquire many keys",
        args: &["EVALSHA", "{acquire}", "1", "la:__rand_int__", "1000", "50"],
        refs: &[],
    },
    Row {
        name: "RL.RELEASE many keys",
        args: &["RL.RELEASE", "a:__rand_int__", "gone-1"],
        refs: &["Lua release many keys", "INCR"],
    },
    Row {
        name: "Lua release many keys",
        args: &["EVALSHA", "{release}", "1", "la:__rand_int__", "gone-1"],
        refs: &[],
    },
    // Refunds of one unit on the keys the rows above filled: most find
    // something in the window to give back.
    Row {
        name: "RL.REFUND SLIDE many keys",
        args: &["RL.REFUND", "SLIDE", "s:__rand_int__", "100", "60000"],
        refs: &[SLIDE_MANY, "ZADD"],
    },
    Row {
        name: "RL.REFUND BUCKETS many keys",
        args: &["RL.REFUND", "BUCKETS", "b:__rand_int__", "100", "60000"],
        refs: &[BUCKETS_MANY, "HINCRBY"],
    },
    Row {
        name: "RL.REFUND THROTTLE many keys",
        args: &[
            "RL.REFUND",
            "THROTTLE",
            "t:__rand_int__",
            "99",
            "100",
            "60000",
        ],
        refs: &["RL.THROTTLE many keys", "INCR"],
    },
    Row {
        name: "RL.REFUND FIXED many keys",
        args: &["RL.REFUND", "FIXED", "f:__rand_int__", "100", "60000"],
        refs: &["RL.FIXED many keys", "INCR"],
    },
    // The function edition (functions/rl.lua) on its own keys: what the
    // module buys over it, and what it buys over the plain scripts.
    Row {
        name: "FCALL rl_slide many keys",
        args: &["FCALL", "rl_slide", "1", "fs:__rand_int__", "100", "60000"],
        refs: &[SLIDE_MANY, LUA_SLIDE_MANY],
    },
    Row {
        name: "FCALL rl_buckets many keys",
        args: &[
            "FCALL",
            "rl_buckets",
            "1",
            "fb:__rand_int__",
            "100",
            "60000",
        ],
        refs: &[BUCKETS_MANY, LUA_BUCKETS_MANY],
    },
    Row {
        name: "FCALL rl_throttle many keys",
        args: &[
            "FCALL",
            "rl_throttle",
            "1",
            "ft:__rand_int__",
            "99",
            "100",
            "60000",
        ],
        refs: &["RL.THROTTLE many keys"],
    },
    Row {
        name: "FCALL rl_fixed many keys",
        args: &["FCALL", "rl_fixed", "1", "ff:__rand_int__", "100", "60000"],
        refs: &["RL.FIXED many keys"],
    },
    Row {
        name: "FCALL rl_all two clauses many keys",
        args: &[
            "FCALL",
            "rl_all",
            "2",
            "fas:__rand_int__",
            "faf:__rand_int__",
            "SLIDE",
            "100",
            "60000",
            "FIXED",
            "1000000",
            "60000",
        ],
        refs: &["RL.ALL two clauses many keys"],
    },
    Row {
        name: "FCALL rl_acquire many keys",
        args: &["FCALL", "rl_acquire", "1", "fa:__rand_int__", "1000", "50"],
        refs: &["RL.ACQUIRE many keys", "Lua acquire many keys"],
    },
    Row {
        name: "FCALL rl_release many keys",
        args: &["FCALL", "rl_release", "1", "fa:__rand_int__", "gone-1"],
        refs: &["RL.RELEASE many keys", "Lua release many keys"],
    },
    Row {
        name: "PING",
        args: &["PING"],
        refs: &[],
    },
    Row {
        name: "INCR",
        args: &["INCR", "i:__rand_int__"],
        refs: &[],
    },
    Row {
        name: "ZADD",
        args: &["ZADD", "z:__rand_int__", "__rand_int__", "__rand_int__"],
        refs: &[],
    },
    Row {
        name: "HINCRBY",
        args: &["HINCRBY", "h:__rand_int__", "__rand_int__", "1"],
        refs: &[],
    },
];

/// The capacity targets, tracked in the README: (row, reference, at least).
const CAPACITY_TARGETS: &[(&str, &str, f64)] = &[
    (SLIDE_MANY, LUA_SLIDE_MANY, 3.0),
    (SLIDE_MANY, "ZADD", 0.75),
    (BUCKETS_MANY, LUA_BUCKETS_MANY, 3.0),
    (BUCKETS_MANY, "HINCRBY", 0.6),
];

#[derive(Default, Clone)]
pub struct Sample {
    pub rps: Vec<f64>,
    pub p50: Vec<f64>,
    pub p99: Vec<f64>,
    pub cpu_us_per_op: Vec<f64>,
}

pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

pub fn main_thread_cpu_s(c: &mut redis::Connection) -> f64 {
    let info: String = redis::cmd("INFO").arg("cpu").query(c).unwrap();
    let field = |name: &str| -> Option<f64> {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
    };
    match (
        field("used_cpu_user_main_thread"),
        field("used_cpu_sys_main_thread"),
    ) {
        (Some(u), Some(s)) => u + s,
        _ => field("used_cpu_user").unwrap_or(0.0) + field("used_cpu_sys").unwrap_or(0.0),
    }
}

pub fn run_row(server: &Server, regime: &Regime, args: &[String], sample: &mut Sample) {
    let mut c = server.conn();
    let before = main_thread_cpu_s(&mut c);
    let out = Command::new("redis-benchmark")
        .args([
            "-p",
            &server.port.to_string(),
            "-c",
            &regime.clients.to_string(),
        ])
        .args([
            "-P",
            &regime.pipeline.to_string(),
            "-n",
            &regime.requests.to_string(),
        ])
        .args(["-r", KEYSPACE, "--csv"])
        .args(args)
        .output()
        .expect("run redis-benchmark (make deps installs redis-tools)");
    let after = main_thread_cpu_s(&mut c);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("no CSV from redis-benchmark: {text}"));
    let fields: Vec<f64> = line
        .split(',')
        .skip(1)
        .map(|f| f.trim_matches('"').parse().unwrap_or(f64::NAN))
        .collect();
    sample.rps.push(fields[0]);
    sample.p50.push(fields[3]);
    sample.p99.push(fields[5]);
    sample
        .cpu_us_per_op
        .push((after - before) * 1e6 / f64::from(regime.requests));
}

/// Everything one server's run found, for the tables and the targets.
pub struct Report {
    pub label: &'static str,
    /// regime short name -> row name -> sample
    pub samples: BTreeMap<&'static str, BTreeMap<&'static str, Sample>>,
    /// entries, RL.SLIDE bytes, Lua bytes, Lua entries held
    pub slide_memory: Vec<(u32, i64, i64, usize)>,
}

/// The reference's CPU per op over the row's, one ratio per round: the two
/// ran a few seconds apart in the same round, so drift between rounds (a
/// neighbour's load, the keyspace filling) cancels out of each ratio.
fn round_ratios(samples: &BTreeMap<&str, Sample>, row: &str, reference: &str) -> Vec<f64> {
    let (row, reference) = (
        &samples[row].cpu_us_per_op,
        &samples[reference].cpu_us_per_op,
    );
    reference.iter().zip(row).map(|(r, x)| r / x).collect()
}

/// The capacity ratio: the median of the per-round ratios.
fn capacity(samples: &BTreeMap<&str, Sample>, row: &str, reference: &str) -> f64 {
    median(&round_ratios(samples, row, reference))
}

pub fn throughput(
    server: &Server,
    label: &'static str,
    shas: &[(&str, String)],
    md: &mut String,
    csv: &mut String,
) -> BTreeMap<&'static str, BTreeMap<&'static str, Sample>> {
    let mut all = BTreeMap::new();
    for regime in &REGIMES {
        let mut samples: BTreeMap<&'static str, Sample> = BTreeMap::new();
        for _ in 0..rounds() {
            for row in ROWS {
                let args: Vec<String> = row
                    .args
                    .iter()
                    .map(|a| {
                        shas.iter()
                            .fold(a.to_string(), |a, (name, sha)| a.replace(name, sha))
                    })
                    .collect();
                run_row(server, regime, &args, samples.entry(row.name).or_default());
            }
        }
        let _ = writeln!(md, "\n### {label}, {regime}\n", regime = regime.name);
        let _ = writeln!(
            md,
            "| row | ops/s | p50 ms | p99 ms | CPU µs/op | capacity vs references |"
        );
        let _ = writeln!(md, "| --- | ---: | ---: | ---: | ---: | --- |");
        for row in ROWS {
            let s = &samples[row.name];
            let ratios: Vec<String> = row
                .refs
                .iter()
                .map(|r| format!("{:.2}x {r}", capacity(&samples, row.name, r)))
                .collect();
            let cpu = median(&s.cpu_us_per_op);
            let (rps, p50, p99) = (median(&s.rps), median(&s.p50), median(&s.p99));
            let _ = writeln!(
                md,
                "| {} | {rps:.0} | {p50:.3} | {p99:.3} | {cpu:.2} | {} |",
                row.name,
                ratios.join(", ")
            );
            let rounds: Vec<String> = s.cpu_us_per_op.iter().map(|c| format!("{c:.3}")).collect();
            let _ = writeln!(
                csv,
                "{label},{},{},{rps:.0},{p50:.3},{p99:.3},{cpu:.3},\"{}\",\"{}\"",
                regime.name,
                row.name,
                ratios.join("; "),
                rounds.join("; ")
            );
        }
        all.insert(regime.short, samples);
    }
    all
}

pub fn targets(reports: &[Report], md: &mut String, csv: &mut String) {
    let mut out = String::from("\n### Targets\n\n| target | server | regime | measured | met |\n| --- | --- | --- | ---: | --- |\n");
    let mut line = |target: String, server: &str, regime: &str, measured: String, met: bool| {
        let verdict = if met { "met" } else { "**missed**" };
        let _ = writeln!(
            out,
            "| {target} | {server} | {regime} | {measured} | {verdict} |"
        );
        let _ = writeln!(
            csv,
            "{server},{regime},target: {target},,,,,\"{measured} {}\",",
            if met { "met" } else { "missed" }
        );
    };
    for r in reports {
        // The targets are set for the pipelined regime; unpipelined, the
        // per-call network cost dominates every row alike.
        for regime in ["pipelined"] {
            let samples = &r.samples[regime];
            for &(row, reference, at_least) in CAPACITY_TARGETS {
                let rounds = round_ratios(samples, row, reference);
                let x = median(&rounds);
                let low = rounds.iter().copied().fold(f64::INFINITY, f64::min);
                let high = rounds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                line(
                    format!("{row}: ≥ {at_least}x {reference}"),
                    r.label,
                    regime,
                    format!("{x:.2}x (rounds {low:.2} to {high:.2})"),
                    x >= at_least,
                );
            }
        }
        for &(n, native, lua, held) in &r.slide_memory {
            let (a, b) = (native as f64 / n as f64, lua as f64 / held.max(1) as f64);
            line(
                format!("RL.SLIDE entry cost ≤ Lua script's ({n} entries)"),
                r.label,
                "memory",
                format!("{a:.1} vs {b:.1} B"),
                a <= b,
            );
        }
    }
    md.push_str(&out);
}

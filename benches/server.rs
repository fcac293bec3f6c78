//! Server benchmark: rl's commands against their Lua equivalents and the
//! server's own commands, on the same server in the same run.
//!
//! Starts Redis 7.0 and Valkey 9.1 with the module, drives each row with
//! `redis-benchmark` (a separate process on loopback), interleaving rows in
//! rounds so drift hits every row alike, and reports ops/s, p50/p99 latency,
//! server main-thread CPU µs per op (from INFO) and each row's capacity
//! ratio to its references (reference CPU per op / row CPU per op, taken
//! per round and the median reported; it stays meaningful when the load
//! generator, not the server, is the bottleneck). Then a memory report
//! (MEMORY USAGE) and the targets, each marked met or missed; the framework
//! adapters' commands against the stores they replace (benches/adapters/).
//! Last, the worst cases (benches/worst/): the server time of each
//! command's slowest call at its documented maximums, on Redis 7.0, Valkey
//! 9.1 and Redis 8.2.
//! Then the worst cases against their parameter (benches/worst/sweep.rs).
//! Tables go to target/bench/ as Markdown and CSV (the worst cases also to
//! worst.md / worst.csv, memory.csv, sweep.csv); at the end the charts
//! (SVG) and the blocks of docs/performance.md are drawn from them
//! (benches/page/). Nothing here is a pass/fail test.
//!
//! `cargo bench --bench server -- worst` (or `RL_BENCH=worst`) runs only
//! the worst cases (about 20 s on top of the build); `-- adapters` (or
//! `RL_BENCH=adapters`) only the adapters' table; `-- wait` (or `RL_BENCH=wait`)
//! only WAIT's table (benches/wait/); `-- sweep` (or `RL_BENCH=sweep`) only
//! the worst cases against their parameter; `-- page` only draws the
//! charts and blocks again from the tables in target/bench/.

// The tests' server harness; the bench uses a part of it.
mod adapters;
#[allow(dead_code)]
#[path = "../tests/it/harness/server.rs"]
mod common;
mod page;
mod wait;
mod worst;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Flavor, Server};

/// Rounds of every row; `RL_BENCH_ROUNDS` takes fewer, for a quicker run
/// on a busy machine (the page's run line says the bench, the tables say
/// the rounds).
const ROUNDS_DEFAULT: usize = 3;

fn rounds() -> usize {
    std::env::var("RL_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(ROUNDS_DEFAULT)
}
const KEYSPACE: &str = "100000";

struct Regime {
    name: &'static str,
    /// Short name for the targets table.
    short: &'static str,
    clients: u32,
    pipeline: u32,
    requests: u32,
}

const REGIMES: [Regime; 2] = [
    Regime {
        name: "pipelined (50 conns, P16)",
        short: "pipelined",
        clients: 50,
        pipeline: 16,
        // Enough for a steady CPU figure (0.2 to 2 s a row on an idle
        // machine) and a make bench within 10 minutes.
        requests: 100_000,
    },
    Regime {
        name: "unpipelined (50 conns)",
        short: "unpipelined",
        clients: 50,
        pipeline: 1,
        requests: 20_000,
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
struct Sample {
    rps: Vec<f64>,
    p50: Vec<f64>,
    p99: Vec<f64>,
    cpu_us_per_op: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

fn main_thread_cpu_s(c: &mut redis::Connection) -> f64 {
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

fn run_row(server: &Server, regime: &Regime, args: &[String], sample: &mut Sample) {
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

/// Loads the function edition, as `make load-functions` does.
fn load_functions(c: &mut redis::Connection) {
    let name: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(include_str!("../functions/rl.lua"))
        .query(c)
        .expect("FUNCTION LOAD functions/rl.lua");
    assert_eq!(name, "rl");
}

fn script(name: &str) -> String {
    let path = format!("{}/benches/lua/{name}.lua", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load_script(c: &mut redis::Connection, name: &str) -> String {
    redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(script(name))
        .query(c)
        .unwrap()
}

/// Exact MEMORY USAGE (every element counted, not sampled).
fn usage(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .query(c)
        .unwrap()
}

/// Everything one server's run found, for the tables and the targets.
struct Report {
    label: &'static str,
    /// regime short name -> row name -> sample
    samples: BTreeMap<&'static str, BTreeMap<&'static str, Sample>>,
    /// entries, RL.SLIDE bytes, Lua bytes, Lua entries held
    slide_memory: Vec<(u32, i64, i64, usize)>,
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

fn throughput(
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

/// RL.SLIDE and the Lua script's sorted set holding the same entries.
fn slide_memory(
    c: &mut redis::Connection,
    label: &str,
    sha: &str,
    md: &mut String,
    csv: &mut String,
    mem: &mut String,
) -> Vec<(u32, i64, i64, usize)> {
    let _ = writeln!(
        md,
        "\n### {label}, RL.SLIDE memory per key (MEMORY USAGE)\n"
    );
    let _ = writeln!(
        md,
        "| entries | RL.SLIDE bytes | per entry | Lua script bytes | per entry |\n| ---: | ---: | ---: | ---: | ---: |"
    );
    let mut out = Vec::new();
    // 128 entries: the largest a listpack holds by default; 129: a skiplist.
    for n in [10u32, 50, 100, 128, 129, 500, 1000] {
        let (native, lua) = (format!("mem:s:{n}"), format!("mem:l:{n}"));
        let mut pipe = redis::pipe();
        for _ in 0..n {
            pipe.cmd("RL.SLIDE")
                .arg(&native)
                .arg(1_000_000)
                .arg(600_000)
                .ignore();
            pipe.cmd("EVALSHA")
                .arg(sha)
                .arg(1)
                .arg(&lua)
                .arg(1_000_000)
                .arg(600_000)
                .arg(1)
                .ignore();
        }
        let _: () = pipe.query(c).unwrap();
        // The script's members are its TIME reading: two calls in one µs
        // share a member, so count what it really holds.
        let held: usize = redis::cmd("ZCARD").arg(&lua).query(c).unwrap();
        let (a, b) = (usage(c, &native), usage(c, &lua));
        let per = |bytes: i64, n: usize| bytes as f64 / n.max(1) as f64;
        let lua_n = if held == n as usize {
            String::new()
        } else {
            format!(" ({held} held)")
        };
        let _ = writeln!(
            md,
            "| {n} | {a} | {:.1} | {b}{lua_n} | {:.1} |",
            per(a, n as usize),
            per(b, held)
        );
        let _ = writeln!(
            csv,
            "{label},memory,RL.SLIDE {n} entries,,,,,\"RL.SLIDE {a} B; Lua {b} B ({held} entries)\","
        );
        let _ = writeln!(mem, "{label},slide,{n},{a},{b}");
        out.push((n, a, b, held));
    }
    out
}

/// RL.BUCKETS (and the Lua bucket script) with every bucket of the window
/// filled at two request rates: the time the window takes, per layout.
fn buckets_memory(
    c: &mut redis::Connection,
    label: &str,
    sha: &str,
    md: &mut String,
    csv: &mut String,
    mem: &mut String,
) {
    let _ = writeln!(
        md,
        "\n### {label}, RL.BUCKETS memory per key (MEMORY USAGE, every bucket filled)\n"
    );
    let _ = writeln!(
        md,
        "| buckets | requests per bucket | bucket fields held | RL.BUCKETS bytes | Lua bucket script bytes |\n| ---: | ---: | ---: | ---: | ---: |"
    );
    const PRECISION: u64 = 10;
    // At most 250 buckets per window (MAX_BUCKETS).
    for buckets in [60u64, 120, 180, 250] {
        let window = buckets * PRECISION;
        // The chart's line is at one request per bucket; 100 at its ends.
        let rates: &[u32] = if buckets == 60 || buckets == 250 {
            &[1, 100]
        } else {
            &[1]
        };
        for &rate in rates {
            let native = format!("mem:b:{buckets}:{rate}");
            let lua = format!("mem:lb:{buckets}:{rate}");
            // One burst of `rate` calls per bucket width, for one window.
            let start = Instant::now();
            let mut next = Duration::ZERO;
            while start.elapsed() < Duration::from_millis(window) {
                let mut pipe = redis::pipe();
                for _ in 0..rate {
                    pipe.cmd("RL.BUCKETS")
                        .arg(&native)
                        .arg(100_000_000)
                        .arg(window)
                        .arg("PRECISION")
                        .arg(PRECISION)
                        .ignore();
                    pipe.cmd("EVALSHA")
                        .arg(sha)
                        .arg(1)
                        .arg(&lua)
                        .arg(100_000_000)
                        .arg(window)
                        .arg(PRECISION)
                        .arg(1)
                        .ignore();
                }
                let _: () = pipe.query(c).unwrap();
                next += Duration::from_millis(PRECISION);
                if let Some(wait) = next.checked_sub(start.elapsed()) {
                    std::thread::sleep(wait);
                }
            }
            // Bucket fields: all but the header `h` (the newest bucket's
            // count lives in it, so this counts the older buckets held).
            let held: usize = redis::cmd("HLEN").arg(&native).query(c).unwrap();
            let held = held.saturating_sub(1);
            let (a, b) = (usage(c, &native), usage(c, &lua));
            let _ = writeln!(md, "| {buckets} | {rate} | {held} | {a} | {b} |");
            let kind = if rate == 1 { "buckets" } else { "buckets-100" };
            // Buckets filled: the older ones held, and the newest.
            let _ = writeln!(mem, "{label},{kind},{},{a},{b}", held + 1);
            let _ = writeln!(
                csv,
                "{label},memory,RL.BUCKETS {buckets} buckets {rate} per bucket,,,,,\"RL.BUCKETS {a} B ({held} buckets held); Lua {b} B\","
            );
        }
    }
}

fn targets(reports: &[Report], md: &mut String, csv: &mut String) {
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

/// Which sections to run: everything, or (`worst` as an argument or
/// `RL_BENCH=worst`) only the worst cases.
/// `worst` or `adapters` (argument or RL_BENCH) runs only that part.
fn only() -> Option<&'static str> {
    let mut only = match std::env::var("RL_BENCH").as_deref() {
        Ok("worst") => Some("worst"),
        Ok("adapters") => Some("adapters"),
        Ok("page") => Some("page"),
        Ok("wait") => Some("wait"),
        Ok("sweep") => Some("sweep"),
        _ => None,
    };
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--bench" => {}
            "worst" => only = Some("worst"),
            "adapters" => only = Some("adapters"),
            "page" => only = Some("page"),
            "wait" => only = Some("wait"),
            "sweep" => only = Some("sweep"),
            // A filter meant for the criterion bench (`cargo bench -- x`
            // reaches every bench) runs everything here, as it always did.
            other => eprintln!(
                "server bench: ignoring {other:?} (it takes `worst`, `sweep`, `adapters`, `wait` or `page`)"
            ),
        }
    }
    only
}

/// Only the adapters' table, on Redis 7.0 and Valkey 9.1 with the module.
fn adapters_only() {
    let (mut md, mut csv) = (
        String::new(),
        String::from("server,regime,row,,,,cpu_us_per_op,ratio,\n"),
    );
    for (flavor, label) in [
        (Flavor::Redis7, "Redis 7.0"),
        (Flavor::Valkey9Native, "Valkey 9.1"),
    ] {
        let server = Server::start(flavor);
        adapters::adapters(&server, label, &mut md, &mut csv);
    }
    let dir = write_tables("adapters", &md, &csv);
    println!("{md}\nwritten to {}", dir.display());
}

/// Only WAIT's table, on Redis 7.0 and Valkey 9.1 with the module.
fn wait_only() {
    let (mut md, mut csv) = (
        String::new(),
        String::from("server,regime,row,,,,value,,\n"),
    );
    for (flavor, label) in [
        (Flavor::Redis7, "Redis 7.0"),
        (Flavor::Valkey9Native, "Valkey 9.1"),
    ] {
        let server = Server::start(flavor);
        wait::run(&server, label, &mut md, &mut csv);
    }
    let dir = write_tables("wait", &md, &csv);
    println!("{md}\nwritten to {}", dir.display());
}

fn write_tables(name: &str, md: &str, csv: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.md")), md).unwrap();
    std::fs::write(dir.join(format!("{name}.csv")), csv).unwrap();
    dir
}

fn worst_cases() -> String {
    let mut csv = String::from("server,edition,command,case,median_us,max_us,runs_us\n");
    let md = worst::run(&mut csv);
    write_tables("worst", &md, &csv);
    md
}

fn main() {
    match only() {
        Some("worst") => {
            let md = worst_cases();
            println!("{md}\nwritten to target/bench/worst.md and worst.csv");
            return;
        }
        Some("page") => {
            // Charts and the blocks drawn from target/bench/*.csv again,
            // without servers, with the last run's line (instructions.csv
            // carries its own).
            let dir = page::Page::last().finish(None);
            println!("charts in target/bench/, blocks in {}", dir.display());
            return;
        }
        Some("wait") => return wait_only(),
        Some("sweep") => {
            let sweep = worst::sweep::run();
            std::fs::create_dir_all(page::bench_dir()).unwrap();
            std::fs::write(page::bench_dir().join("sweep.csv"), sweep).unwrap();
            println!("written to target/bench/sweep.csv");
            return;
        }
        Some(_) => return adapters_only(),
        None => {}
    }
    let started = Instant::now();
    let flavors = [
        (Flavor::Redis7, "Redis 7.0"),
        (Flavor::Valkey9Native, "Valkey 9.1"),
    ];
    let mut md = String::new();
    let mut csv = String::from(
        "server,regime,row,ops_per_s,p50_ms,p99_ms,cpu_us_per_op,ratios,cpu_us_per_op_by_round\n",
    );
    let mut reports = Vec::new();
    let mut page = page::Page::new();
    let mut mem = String::from("server,kind,param,rl_bytes,lua_bytes\n");
    for (flavor, label) in flavors {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let version: String = redis::cmd("INFO").arg("server").query(&mut c).unwrap();
        // Valkey also reports a Redis-compatible `redis_version` (7.2.4).
        let field = |name: &str| version.lines().find_map(|l| l.strip_prefix(name));
        let version = field("valkey_version:")
            .or_else(|| field("redis_version:"))
            .unwrap_or("?")
            .trim()
            .to_string();
        let _ = writeln!(md, "\n## {label} (server {version})");
        let shas = [
            ("{slide}", load_script(&mut c, "slide")),
            ("{buckets}", load_script(&mut c, "buckets")),
            ("{acquire}", load_script(&mut c, "acquire")),
            ("{release}", load_script(&mut c, "release")),
        ];
        load_functions(&mut c);
        let server_line = format!(
            "\n{label}: `{}` {version}, with {}.\n",
            flavor.binary().display(),
            flavor.module().display()
        );
        let what = &format!(
            "`cargo bench --bench server`; `redis-benchmark` on the same cores, \
             rows interleaved in {} rounds, medians",
            rounds()
        );
        let at = md.len();
        let samples = throughput(&server, label, &shas, &mut md, &mut csv);
        page.add("throughput", what, &server_line);
        page.add("throughput", what, &md[at..]);
        let at = md.len();
        adapters::adapters(&server, label, &mut md, &mut csv);
        page.add("adapters", what, &md[at..]);
        let at = md.len();
        wait::run(&server, label, &mut md, &mut csv);
        page.add(
            "wait",
            "`cargo bench --bench server` (`-- wait` alone), `INFO memory` and main-thread CPU",
            &md[at..],
        );
        let at = md.len();
        let slide_memory = slide_memory(&mut c, label, &shas[0].1, &mut md, &mut csv, &mut mem);
        buckets_memory(&mut c, label, &shas[1].1, &mut md, &mut csv, &mut mem);
        page.add(
            "memory",
            "`cargo bench --bench server`, `MEMORY USAGE key SAMPLES 0` of one key",
            &md[at..],
        );
        reports.push(Report {
            label,
            samples,
            slide_memory,
        });
    }
    let at = md.len();
    targets(&reports, &mut md, &mut csv);
    page.add(
        "targets",
        "`cargo bench --bench server`, the pipelined tables above",
        &md[at..],
    );
    std::fs::write(page::bench_dir().join("memory.csv"), &mem).unwrap();
    md.push_str(&worst_cases());
    let sweep = worst::sweep::run();
    std::fs::write(page::bench_dir().join("sweep.csv"), sweep).unwrap();
    let _ = writeln!(
        md,
        "\nServer benchmark took {:.0} s.",
        started.elapsed().as_secs_f64()
    );
    let dir = write_tables("server", &md, &csv);
    let blocks = page.finish(Some(started.elapsed().as_secs_f64()));
    println!("{md}\ntables written to {}/server.md, server.csv, worst.md, worst.csv, memory.csv, sweep.csv", dir.display());
    println!(
        "charts written to {}/instructions.svg, worst-module.svg, worst-functions.svg, memory.svg",
        dir.display()
    );
    println!(
        "page blocks written to {}/ (scripts/perf-page.sh puts them into docs/performance.md)",
        blocks.display()
    );
}

//! Server benchmark: rl's commands against their Lua equivalents and the
//! server's own commands, on the same server in the same run.
//!
//! Starts Redis 7.0 and Valkey 9.1 with the module, drives each row with
//! `redis-benchmark` (a separate process on loopback), interleaving rows in
//! rounds so drift hits every row alike, and reports ops/s, p50/p99 latency,
//! server main-thread CPU µs per op (from INFO) and each row's capacity
//! ratio to its references (reference CPU per op / row CPU per op). Tables go
//! to target/bench/ as Markdown and CSV. Nothing here is a pass/fail test.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;

use common::{Flavor, Server};

const ROUNDS: usize = 3;
const KEYSPACE: &str = "100000";

struct Regime {
    name: &'static str,
    clients: u32,
    pipeline: u32,
    requests: u32,
}

const REGIMES: [Regime; 2] = [
    Regime {
        name: "pipelined (50 conns, P16)",
        clients: 50,
        pipeline: 16,
        requests: 200_000,
    },
    Regime {
        name: "unpipelined (50 conns)",
        clients: 50,
        pipeline: 1,
        requests: 60_000,
    },
];

/// A benchmark row: its name, the command line (with `__rand_int__` for
/// random keys, `{slide}` for the loaded script's SHA), and which rows it is
/// compared against.
struct Row {
    name: &'static str,
    args: &'static [&'static str],
    refs: &'static [&'static str],
}

const ROWS: &[Row] = &[
    Row {
        name: "RL.SLIDE many keys",
        args: &["RL.SLIDE", "s:__rand_int__", "100", "60000"],
        refs: &["Lua slide many keys", "ZADD", "INCR"],
    },
    Row {
        name: "Lua slide many keys",
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

#[derive(Default, Clone)]
struct Sample {
    rps: Vec<f64>,
    p50: Vec<f64>,
    p99: Vec<f64>,
    cpu_us_per_op: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
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

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let flavors = [
        (Flavor::Redis7, "Redis 7.0"),
        (Flavor::Valkey9Native, "Valkey 9.1"),
    ];
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/lua/slide.lua"
    ))
    .unwrap();
    let mut md = String::new();
    let mut csv = String::from("server,regime,row,ops_per_s,p50_ms,p99_ms,cpu_us_per_op,ratios\n");
    for (flavor, label) in flavors {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(&script)
            .query(&mut c)
            .unwrap();
        for regime in &REGIMES {
            let mut samples: BTreeMap<&str, Sample> = BTreeMap::new();
            for _ in 0..ROUNDS {
                for row in ROWS {
                    let args: Vec<String> = row
                        .args
                        .iter()
                        .map(|a| a.replace("{slide}", &sha))
                        .collect();
                    run_row(&server, regime, &args, samples.entry(row.name).or_default());
                }
            }
            let cpu = |name: &str| median(&samples[name].cpu_us_per_op);
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
                    .map(|r| format!("{:.2}x {r}", cpu(r) / cpu(row.name)))
                    .collect();
                let _ = writeln!(
                    md,
                    "| {} | {:.0} | {:.3} | {:.3} | {:.2} | {} |",
                    row.name,
                    median(&s.rps),
                    median(&s.p50),
                    median(&s.p99),
                    cpu(row.name),
                    ratios.join(", ")
                );
                let _ = writeln!(
                    csv,
                    "{label},{},{},{:.0},{:.3},{:.3},{:.3},\"{}\"",
                    regime.name,
                    row.name,
                    median(&s.rps),
                    median(&s.p50),
                    median(&s.p99),
                    cpu(row.name),
                    ratios.join("; ")
                );
            }
        }
        let _ = writeln!(md, "\n### {label}, memory per key (MEMORY USAGE)\n");
        let _ = writeln!(
            md,
            "| entries | RL.SLIDE bytes | Lua script bytes |\n| ---: | ---: | ---: |"
        );
        for n in [10u32, 100, 1000] {
            let (native, lua) = (format!("mem:s:{n}"), format!("mem:l:{n}"));
            let mut pipe = redis::pipe();
            for _ in 0..n {
                pipe.cmd("RL.SLIDE")
                    .arg(&native)
                    .arg(1_000_000)
                    .arg(600_000)
                    .ignore();
                pipe.cmd("EVALSHA")
                    .arg(&sha)
                    .arg(1)
                    .arg(&lua)
                    .arg(1_000_000)
                    .arg(600_000)
                    .arg(1)
                    .ignore();
            }
            let _: () = pipe.query(&mut c).unwrap();
            let usage = |k: &str, c: &mut redis::Connection| -> i64 {
                redis::cmd("MEMORY").arg("USAGE").arg(k).query(c).unwrap()
            };
            let (a, b) = (usage(&native, &mut c), usage(&lua, &mut c));
            let _ = writeln!(md, "| {n} | {a} | {b} |");
            let _ = writeln!(
                csv,
                "{label},memory,{n} entries,,,,,\"RL.SLIDE {a} B; Lua {b} B\""
            );
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("server.md"), &md).unwrap();
    std::fs::write(dir.join("server.csv"), &csv).unwrap();
    println!("{md}\nwritten to {}", dir.display());
}

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
//! the worst cases against their parameter; `-- bound` (or `RL_BENCH=bound`,
//! through scripts/bench-bound.sh, which builds its modules) the stale-backlog
//! cases at removal bounds of 128, 64 and 32 (benches/worst/bound.rs);
//! `-- page` only draws the
//! charts and blocks again from the tables in target/bench/.

// The tests' server harness; the bench uses a part of it.
mod adapters;
#[allow(dead_code)]
#[path = "../tests/it/harness/server.rs"]
mod common;
mod memory;
mod page;
mod throughput;
mod wait;
mod worst;

use std::fmt::Write as _;
use std::time::Instant;

use common::{Flavor, Server};
use memory::{buckets_memory, slide_memory};
use throughput::{rounds, targets, throughput, Report};

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
        Ok("bound") => Some("bound"),
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
            "bound" => only = Some("bound"),
            // A filter meant for the criterion bench (`cargo bench -- x`
            // reaches every bench) runs everything here, as it always did.
            other => eprintln!(
                "server bench: ignoring {other:?} (it takes `worst`, `sweep`, `bound`, `adapters`, `wait` or `page`)"
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
        Some("bound") => {
            let mut csv =
                String::from("server,edition,bound,case,call,removes,median_us,max_us,runs_us\n");
            let md = worst::bound::run(&mut csv);
            write_tables("bound", &md, &csv);
            println!("{md}\nwritten to target/bench/bound.md and bound.csv");
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

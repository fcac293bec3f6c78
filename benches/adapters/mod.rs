//! The framework adapters' commands (clients/python, clients/node) against
//! the stores they replace, on the same server in the same run: server
//! main-thread CPU per hit, pipelined. The peers' scripts and the call each
//! library makes with them come from their packages as the registries ship
//! them (benches/peers/fetch.sh writes target/bench-peers/calls/); nothing
//! of theirs is in this repository. `benches/callgrind.sh` gives the same
//! pairs as instruction counts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;

use crate::common::Server;
use crate::throughput::{median, rounds, run_row, Sample, REGIMES};

/// An adapter's command per hit, and the peer row (a fetched script) it
/// replaces.
struct Pair {
    adapter: &'static str,
    args: &'static [&'static str],
    peer: &'static str,
    what: &'static str,
}

const PAIRS: &[Pair] = &[
    // clients/python: limits' moving window is RL.SLIDE.
    Pair {
        adapter: "limits-rl moving-window",
        args: &["RL.SLIDE", "RL:mw:__rand_int__", "100", "60000"],
        peer: "limits_moving",
        what: "limits' moving window (acquire_moving_window.lua)",
    },
    // clients/node: RateLimiterRl's consume with blockDuration (60 s): the
    // limiter's command carrying BLOCK, the block in the window's key.
    Pair {
        adapter: "RateLimiterRl consume",
        args: &[
            "RL.SLIDE",
            "rl-flx:__rand_int__",
            "100",
            "60000",
            "COST",
            "1",
            "BLOCK",
            "60000",
        ],
        peer: "rlf_redis",
        what: "rate-limiter-flexible's RateLimiterRedis",
    },
    // clients/node: RlStore's increment, a sliding count.
    Pair {
        adapter: "RlStore increment",
        args: &[
            "RL.BUCKETS",
            "rl-erl:__rand_int__",
            "1000000000000000",
            "60000",
        ],
        peer: "rlr_express",
        what: "rate-limit-redis (express-rate-limit's Redis store)",
    },
];

/// Fetches the peers (once per build tree) and loads their scripts: the
/// EVALSHA line of each peer row, by name.
fn peer_lines(c: &mut redis::Connection) -> Option<BTreeMap<&'static str, Vec<String>>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let status = Command::new(format!("{root}/benches/peers/fetch.sh")).status();
    if !matches!(status, Ok(s) if s.success()) {
        eprintln!(
            "adapters: benches/peers/fetch.sh failed (it needs pip, npm, go and mvn): no adapter rows"
        );
        return None;
    }
    let mut lines = BTreeMap::new();
    for pair in PAIRS {
        let calls = format!("{root}/target/bench-peers/calls/{}", pair.peer);
        let script = std::fs::read_to_string(format!("{calls}.lua")).ok()?;
        let args = std::fs::read_to_string(format!("{calls}.args")).ok()?;
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(&script)
            .query(c)
            .ok()?;
        let mut line = vec!["EVALSHA".to_string(), sha];
        line.extend(args.lines().map(str::to_string));
        lines.insert(pair.peer, line);
    }
    Some(lines)
}

/// The adapters' table for one server, pipelined; rows also go to the CSV.
pub fn adapters(server: &Server, label: &str, md: &mut String, csv: &mut String) {
    let mut c = server.conn();
    let Some(peers) = peer_lines(&mut c) else {
        let _ = writeln!(
            md,
            "\n### {label}, adapters\n\n(not run: the peers could not be fetched)"
        );
        return;
    };
    let regime = &REGIMES[0];
    let mut samples: BTreeMap<String, Sample> = BTreeMap::new();
    // Interleaved in rounds, as the main table, so drift hits both alike.
    for _ in 0..rounds() {
        for pair in PAIRS {
            let args: Vec<String> = pair.args.iter().map(|a| a.to_string()).collect();
            run_row(
                server,
                regime,
                &args,
                samples.entry(pair.adapter.into()).or_default(),
            );
            let peer = samples.entry(pair.peer.into()).or_default();
            run_row(server, regime, &peers[pair.peer], peer);
        }
    }
    let _ = writeln!(
        md,
        "\n### {label}, the adapters' commands against the stores they replace ({})\n",
        regime.name
    );
    let _ = writeln!(
        md,
        "| adapter | CPU µs/hit | replaces | CPU µs/hit | adapter / store |"
    );
    let _ = writeln!(md, "| --- | ---: | --- | ---: | ---: |");
    for pair in PAIRS {
        let ours = &samples[pair.adapter].cpu_us_per_op;
        let theirs = &samples[pair.peer].cpu_us_per_op;
        // Per round, then the median: the ratio of two runs side by side.
        let ratios: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| a / b).collect();
        let (a, b, r) = (median(ours), median(theirs), median(&ratios));
        let _ = writeln!(
            md,
            "| {} | {a:.2} | {} | {b:.2} | {r:.2}x |",
            pair.adapter, pair.what
        );
        let _ = writeln!(
            csv,
            "{label},{},adapter: {} vs {},,,,{a:.3},\"{r:.3}x {}\",",
            regime.name, pair.adapter, pair.peer, pair.peer
        );
    }
}

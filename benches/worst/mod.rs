//! Worst cases: for each command, the state that makes one call do the most
//! work at the documented maximums, and the server time of that call.
//!
//! The time is the server's own: `SLOWLOG` with `slowlog-log-slower-than 0`
//! records each call's duration in µs (the command's execution, without
//! reading the request or writing the reply; with no replica or AOF
//! attached, so feeding them is not included). Each case is measured
//! `REPEATS` times, rebuilding the state first when the call consumes it,
//! and reported as the median and the maximum. Every measured call is
//! checked to have taken the path the case names (admitted, denied,
//! fields removed); the times are printed, never asserted.
//!
//! States, at the limits the commands accept:
//! - RL.SLIDE: one key of 1,000,000 entries written by 10,000 pipelined
//!   `COST 100` calls (window 10 min, so none leaves while it fills). Live,
//!   it takes the last admissions and the denials. Then, after a pause of
//!   1 s, the same entries have all left a 1 s window: the stale backlog,
//!   of which an admission removes at most 128.
//! - RL.BUCKETS / RL.COUNT / RL.TOTALS / RL.PEEK BUCKETS: hashes written
//!   with HSET in rl's layout (header `h`, bucket fields by index, a TTL),
//!   250 buckets of 1 s for a 250 s window (RL.COUNT, RL.TOTALS: 100 for
//!   100 s), the most a window may need, every count 10^12 (RL.COUNT:
//!   8 fields of 32 characters). Stale: the newest bucket left the window
//!   one bucket ago (a key rl wrote lives up to a quarter window past that).
//! - Leases (RL.ACQUIRE, RL.RELEASE, RL.RENEW, RL.PEEK ACQUIRE): a lease
//!   set written with ZADD in rl's layout (the `rl leases` header at 0, a
//!   TTL), 1,000,000 leases held (the largest limit), plus 16 expired ones
//!   where an admission removes them; RL.ALL: 8 ACQUIRE clauses on 8 sets
//!   of 100,000 held, denied at a limit lowered to 1 (each clause's wait
//!   read by rank).
//! - RL.ALL: 8 clauses on 8 such keys. For SLIDE clauses the removal
//!   budget of 128 is shared, each clause COST + 1 and an equal part of
//!   the rest: with one clause at COST 93 and the 7 others at 1, 96 + 7 x 4
//!   = 124 removals and 100 entries added.
//!
//! Then the same cases once more through the function edition
//! (`functions/rl.lua`, `FCALL`) on servers without the module: the same
//! bounds per call, paid in Lua.
//!
//! Run alone with `cargo bench --bench server -- worst` (or
//! `RL_BENCH=worst`): about 20 s per server on an idle machine. Servers run
//! one at a time with `lazyfree-lazy-user-del no`, so no key deleted to
//! rebuild a state is freed beside a measured call.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::{Connection, Value};

use crate::common::{Flavor, Server};

pub mod bound;
mod buckets;
mod leases;
mod slide;
pub mod sweep;

use buckets::{bucket_cases, field_name, write_buckets, Age};
use leases::{fill_leases, lease_cases, LEASE_MS};
use slide::{fill_slide, slide_cases};

/// Measurements per case.
const REPEATS: usize = 7;
/// A measuring server's settings: every call in `SLOWLOG`, and (Valkey
/// frees a deleted key of many elements in a background thread by default)
/// the keys deleted to rebuild a state freed before the measured call, not
/// beside it.
const MEASURING: [&str; 6] = [
    "--slowlog-log-slower-than",
    "0",
    "--slowlog-max-len",
    "128",
    "--lazyfree-lazy-user-del",
    "no",
];
/// The server time a single call should stay under.
const BOUND_US: u64 = 1_000;

const SLIDE_MAX_LIMIT: u64 = 1_000_000;
const SLIDE_MAX_COST: u64 = 100;
/// Stale entries one call may remove, all its logs together
/// (`slide::decide::EVICT_PER_CALL`).
const SLIDE_EVICT: u64 = 128;
/// Window while the sorted sets fill (nothing leaves), and the one under
/// which, a second later, everything has left.
const SLIDE_LIVE_WINDOW: u64 = 600_000;
const SLIDE_STALE_WINDOW: u64 = 1_000;
/// Entries in each of the 7 other RL.ALL SLIDE keys: far more than the
/// removals a call may make (RL.ALL's budget is shared), so each clause
/// walks its whole share and counts the rest through ZCOUNT.
const ALL_SLIDE_BACKLOG: u64 = 20_000;

const BUCKETS: i64 = 250;
/// RL.COUNT's and RL.TOTALS' most buckets per window.
const COUNT_BUCKETS: i64 = 100;
const COUNT_WINDOW: i64 = COUNT_BUCKETS * PRECISION;
const PRECISION: i64 = 1_000;
const WINDOW: i64 = BUCKETS * PRECISION;
/// Every bucket's count: the 250 of them add up to 2.5 x 10^14, below the largest
/// limit.
const BUCKET_COUNT: u64 = 1_000_000_000_000;
const MAX_LIMIT: u64 = 1_000_000_000_000_000;
const COUNT_FIELDS: usize = 8;
const CLAUSES: usize = 8;

/// One case's result on one server.
struct Measured {
    command: &'static str,
    case: String,
    /// Server µs of each repeat.
    runs: Vec<u64>,
}

impl Measured {
    fn median(&self) -> u64 {
        let mut v = self.runs.clone();
        v.sort_unstable();
        v[v.len() / 2]
    }
    fn max(&self) -> u64 {
        self.runs.iter().copied().max().unwrap_or(0)
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::BulkString(b) => String::from_utf8_lossy(b).parse().unwrap_or(i64::MIN),
        other => panic!("not an integer: {other:?}"),
    }
}

fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) => a,
        other => panic!("not an array: {other:?}"),
    }
}

/// Server time of one call of `cmd`, in µs, and its reply. The call runs
/// alone between `SLOWLOG RESET` and `SLOWLOG GET`; the entry is the one
/// named like the command (calls the module makes through the server, such
/// as ZCOUNT, may log entries of their own; their time is inside it).
fn timed(c: &mut Connection, cmd: &redis::Cmd, name: &str) -> (u64, Value) {
    let () = redis::cmd("SLOWLOG").arg("RESET").query(c).unwrap();
    let reply: Value = cmd.query(c).unwrap_or_else(|e| panic!("{name}: {e}"));
    let log: Value = redis::cmd("SLOWLOG").arg("GET").arg(64).query(c).unwrap();
    let us = items(&log)
        .iter()
        .find_map(|entry| {
            let e = items(entry);
            let argv = items(&e[3]);
            let first = match &argv[0] {
                Value::BulkString(b) => String::from_utf8_lossy(b).to_string(),
                _ => return None,
            };
            first.eq_ignore_ascii_case(name).then(|| int(&e[2]) as u64)
        })
        .unwrap_or_else(|| panic!("no SLOWLOG entry for {name}: {log:?}"));
    (us, reply)
}

fn cmd(args: &[String]) -> redis::Cmd {
    let mut c = redis::cmd(&args[0]);
    for a in &args[1..] {
        c.arg(a);
    }
    c
}

/// Whether the cases run through the function edition (`FCALL`).
static FUNCTIONS: AtomicBool = AtomicBool::new(false);

/// A module command line as the function edition's call: `RL.SLIDE k ...`
/// as `FCALL rl_slide 1 k ...` (RL.PEEK / RL.REFUND: the limiter after the
/// key; RL.ALL: its numkeys is FCALL's).
fn as_fcall(line: &[String]) -> Vec<String> {
    let name = line[0].to_ascii_lowercase().replace('.', "_");
    let upper = line[0].to_ascii_uppercase();
    let mut out = vec!["FCALL".to_string(), name];
    match upper.as_str() {
        "RL.PEEK" | "RL.REFUND" => {
            out.extend(["1".to_string(), line[2].clone(), line[1].clone()]);
            out.extend(line[3..].iter().cloned());
        }
        "RL.ALL" => out.extend(line[1..].iter().cloned()),
        _ => {
            out.push("1".to_string());
            out.extend(line[1..].iter().cloned());
        }
    }
    out
}

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_string).collect()
}

fn server_ms(c: &mut Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).unwrap();
    s * 1000 + us / 1000
}

fn zcard(c: &mut Connection, key: &str) -> u64 {
    redis::cmd("ZCARD").arg(key).query(c).unwrap()
}

fn hlen(c: &mut Connection, key: &str) -> u64 {
    redis::cmd("HLEN").arg(key).query(c).unwrap()
}

fn all_keys(prefix: &str) -> Vec<String> {
    (0..CLAUSES).map(|i| format!("{{w}}:{prefix}{i}")).collect()
}

/// `RL.ALL` over `keys` with one clause each.
fn all_line(keys: &[String], clause: impl Fn(usize) -> String) -> Vec<String> {
    let mut line = format!("RL.ALL {}", keys.len());
    for k in keys {
        let _ = write!(line, " {k}");
    }
    for i in 0..keys.len() {
        let _ = write!(line, " {}", clause(i));
    }
    words(&line)
}

/// Measures `line` `REPEATS` times, `setup` before each call, `check`
/// after it (the call must have taken the path the case names).
fn case(
    out: &mut Vec<Measured>,
    command: &'static str,
    description: String,
    c: &mut Connection,
    setup: &mut dyn FnMut(&mut Connection),
    line: &[String],
    check: &mut dyn FnMut(&mut Connection, &Value),
) {
    let mut runs = Vec::new();
    for _ in 0..REPEATS {
        setup(c);
        let (us, reply) = if FUNCTIONS.load(Ordering::Relaxed) {
            timed(c, &cmd(&as_fcall(line)), "FCALL")
        } else {
            timed(c, &cmd(line), &line[0])
        };
        check(c, &reply);
        runs.push(us);
    }
    out.push(Measured {
        command,
        case: description,
        runs,
    });
}

/// A check that the reply's first integer (allowed) is `want`.
fn allowed(want: i64, what: &'static str) -> impl FnMut(&mut Connection, &Value) {
    move |_, r| {
        let got = int(&items(r)[0]);
        assert_eq!(got, want, "{what}: reply {r:?}");
    }
}

/// The cases on one server: the O(1) limiters, the bucket commands, then
/// the sorted sets (last: their 10^6-entry key is left to the server's
/// shutdown, not freed before other calls).
fn run_cases(c: &mut Connection) -> Vec<Measured> {
    let mut out = Vec::new();
    if chosen("RL_WORST_GROUPS", "o1") {
        o1_cases(c, &mut out);
    }
    if chosen("RL_WORST_GROUPS", "buckets") {
        bucket_cases(c, &mut out);
    }
    if chosen("RL_WORST_GROUPS", "leases") {
        lease_cases(c, &mut out);
    }
    if chosen("RL_WORST_GROUPS", "slide") {
        slide_cases(c, &mut out);
    }
    out
}

/// Whether `name` is in the comma-separated list the variable `var` holds
/// (every name when it is unset): `RL_WORST_GROUPS=buckets,slide`,
/// `RL_WORST_EDITIONS=functions`, `RL_WORST_SERVERS=redis7` narrow a run
/// while one case is being worked on.
fn chosen(var: &str, name: &str) -> bool {
    std::env::var(var).map_or(true, |v| v.split(',').any(|w| w.trim() == name))
}

/// RL.THROTTLE, CL.THROTTLE and RL.FIXED: O(1), at large arguments (for
/// the GCRA, as large as its rate checks take together).
fn o1_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};
    let o1: [(&'static str, String); 3] = [
        (
            "RL.THROTTLE",
            "RL.THROTTLE {w}:t 100000000000000 100000000000000 100000000000 1".into(),
        ),
        (
            "CL.THROTTLE",
            "CL.THROTTLE {w}:cl 100000000000000 100000000000000 100000000 1".into(),
        ),
        (
            "RL.FIXED",
            format!("RL.FIXED {{w}}:f {MAX_LIMIT} 1000000000000 COST {MAX_LIMIT}"),
        ),
    ];
    for (command, line) in o1 {
        case(
            out,
            command,
            "O(1), large arguments".into(),
            c,
            none,
            &words(&line),
            &mut |_, r| assert!(!items(r).is_empty(), "{command}: {r:?}"),
        );
    }
}

/// The load the measurements ran beside (a shared machine preempts the
/// server now and then: the max of a case can be that, the median rarely).
fn machine_load() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let one_minute = load.split(' ').next().unwrap_or("?");
    format!("Machine: {cpus} CPUs, load average {one_minute} when the section ended.")
}

/// Runs the worst cases on each server and returns the Markdown table
/// (and appends CSV rows to `csv`).
pub fn run(csv: &mut String) -> String {
    let mut md = String::new();
    if chosen("RL_WORST_EDITIONS", "module") {
        md.push_str(&run_edition(csv, false));
    }
    if chosen("RL_WORST_EDITIONS", "functions") {
        md.push_str(&run_edition(csv, true));
    }
    md
}

/// The cases through the module's commands, or (`functions`) through the
/// function edition's `FCALL`s on a server without the module.
fn run_edition(csv: &mut String, functions: bool) -> String {
    FUNCTIONS.store(functions, Ordering::Relaxed);
    let edition = if functions { "functions" } else { "module" };
    let started = Instant::now();
    let flavors = [
        (Flavor::Redis7, "Redis 7.0", "redis7"),
        (Flavor::Valkey9Native, "Valkey 9.1", "valkey9"),
        (Flavor::Redis8, "Redis 8.2", "redis8"),
    ];
    let mut results: Vec<(&str, Vec<Measured>)> = Vec::new();
    for (flavor, label, name) in flavors {
        if !chosen("RL_WORST_SERVERS", name) {
            continue;
        }
        let t = Instant::now();
        let server = Server::start_in(
            flavor,
            crate::common::new_dir(flavor),
            &MEASURING,
            !functions,
        );
        let mut c = server.conn();
        if functions {
            crate::load_functions(&mut c);
        }
        let measured = run_cases(&mut c);
        eprintln!(
            "worst cases on {label} ({edition}): {:.1} s",
            t.elapsed().as_secs_f64()
        );
        for m in &measured {
            let runs: Vec<String> = m.runs.iter().map(u64::to_string).collect();
            let _ = writeln!(
                csv,
                "{label},{edition},{},\"{}\",{},{},\"{}\"",
                m.command,
                m.case,
                m.median(),
                m.max(),
                runs.join("; ")
            );
        }
        results.push((label, measured));
    }

    let mut md = if functions {
        String::from(
            "\n## Worst cases, function edition: server time of one FCALL (SLOWLOG µs)\n\n",
        )
    } else {
        String::from("\n## Worst cases: server time of one call (SLOWLOG µs)\n\n")
    };
    let _ = writeln!(
        md,
        "Median / max of {REPEATS} calls, each on the worst state rebuilt where a call consumes it. Bound: {BOUND_US} µs per call; \"no\" when the median is over it. {}\n",
        machine_load()
    );
    md.push_str("| command | worst case |");
    for (label, _) in &results {
        let _ = write!(md, " {label} µs |");
    }
    md.push_str(" under 1 ms |\n| --- | --- |");
    for _ in &results {
        md.push_str(" ---: |");
    }
    md.push_str(" --- |\n");
    for (i, m) in results[0].1.iter().enumerate() {
        let _ = write!(md, "| {} | {} |", m.command, m.case);
        // Over in the median: the call itself. Over only in the max: one
        // call of several, which on a shared machine may be a preemption.
        let (mut median_over, mut max_over) = (Vec::new(), Vec::new());
        for (label, measured) in &results {
            let r = &measured[i];
            let _ = write!(md, " {} / {} |", r.median(), r.max());
            if r.median() >= BOUND_US {
                median_over.push(*label);
            } else if r.max() >= BOUND_US {
                max_over.push(*label);
            }
        }
        let verdict = match (median_over.is_empty(), max_over.is_empty()) {
            (true, true) => "yes".to_string(),
            (true, false) => format!("yes in the median; max over on {}", max_over.join(", ")),
            (false, _) => format!("**no** ({})", median_over.join(", ")),
        };
        let _ = writeln!(md, " {verdict} |");
    }
    let _ = writeln!(
        md,
        "\nWorst-case section took {:.0} s.",
        started.elapsed().as_secs_f64()
    );
    md
}

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

pub mod sweep;

/// Measurements per case.
const REPEATS: usize = 7;
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

/// Runs `n` `RL.SLIDE key limit window COST cost` calls (or their
/// `FCALL`s), pipelined.
fn fill_slide(c: &mut Connection, key: &str, calls: u64, cost: u64) {
    let mut left = calls;
    while left > 0 {
        let chunk = left.min(200);
        let mut pipe = redis::pipe();
        for _ in 0..chunk {
            if FUNCTIONS.load(Ordering::Relaxed) {
                pipe.cmd("FCALL").arg("rl_slide").arg(1);
            } else {
                pipe.cmd("RL.SLIDE");
            }
            pipe.arg(key)
                .arg(SLIDE_MAX_LIMIT)
                .arg(SLIDE_LIVE_WINDOW)
                .arg("COST")
                .arg(cost)
                .ignore();
        }
        let () = pipe.query(c).unwrap();
        left -= chunk;
    }
}

/// `bits` set bits in the held-buckets hex (bit i is bucket newest - 1 - i).
fn held_hex(bits: usize) -> String {
    let lead = match bits % 4 {
        0 => String::new(),
        r => format!("{:x}", (1u32 << r) - 1),
    };
    format!("{lead}{}", "f".repeat(bits / 4))
}

fn field_name(i: usize) -> String {
    // 32 characters, the longest field name RL.COUNT takes.
    format!("{:x<32}", format!("field{i}"))
}

/// Writes `key` as rl writes an RL.BUCKETS (`fields` 0) or RL.COUNT key
/// with `n` filled buckets, the newest one `newest`, and a TTL.
fn bucket_key(pipe: &mut redis::Pipeline, key: &str, newest: i64, fields: usize, n: i64) {
    let oldest = newest - n + 1;
    let older = (n - 1) as usize;
    pipe.cmd("DEL").arg(key).ignore();
    let mut hset = redis::cmd("HSET");
    hset.arg(key);
    if fields == 0 {
        let total = BUCKET_COUNT * n as u64;
        hset.arg("h").arg(format!(
            "b,{PRECISION},{newest},{},{total},{BUCKET_COUNT}",
            held_hex(older)
        ));
        for b in oldest..newest {
            hset.arg(b).arg(BUCKET_COUNT);
        }
    } else {
        let total = BUCKET_COUNT * n as u64;
        let totals = vec![total.to_string(); fields].join(",");
        let counts = vec![BUCKET_COUNT.to_string(); fields].join(",");
        let names: Vec<String> = (0..fields).map(field_name).collect();
        hset.arg("h")
            .arg(format!(
                "c,{PRECISION},{newest},{},{totals}",
                held_hex(older)
            ))
            .arg("f")
            .arg(names.join(","));
        // RL.COUNT's newest bucket has a field of its own too.
        for b in oldest..=newest {
            hset.arg(b).arg(&counts);
        }
    }
    pipe.add_command(hset).ignore();
    pipe.cmd("PEXPIRE").arg(key).arg(3_600_000).ignore();
}

/// How far a key's `n` buckets are behind the window.
#[derive(Clone, Copy)]
enum Age {
    /// All of them count now.
    Live,
    /// The older half has left the window: the most a call reads (it reads
    /// the smaller side, those that left or those that count).
    HalfLeft,
    /// All of them left (the newest one just left): nothing to read.
    AllLeft,
}

fn newest_bucket(c: &mut Connection, age: Age, n: i64) -> i64 {
    let current = server_ms(c) / PRECISION;
    match age {
        Age::Live => current,
        Age::HalfLeft => current - n / 2,
        Age::AllLeft => current - n - 1,
    }
}

fn write_buckets(c: &mut Connection, keys: &[String], age: Age, fields: usize, n: i64) {
    let newest = newest_bucket(c, age, n);
    let mut pipe = redis::pipe();
    for k in keys {
        bucket_key(&mut pipe, k, newest, fields, n);
    }
    let () = pipe.query(c).unwrap();
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

/// RL.BUCKETS, RL.PEEK BUCKETS, RL.COUNT, RL.TOTALS and RL.ALL over 8
/// BUCKETS clauses, on hashes written in rl's layout.
fn bucket_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};

    // ---- RL.BUCKETS ----
    let b = vec!["{w}:b".to_string()];
    let line = words(&format!(
        "RL.BUCKETS {} {MAX_LIMIT} {WINDOW} PRECISION {PRECISION}",
        b[0]
    ));
    case(
        out,
        "RL.BUCKETS",
        "admit on a key whose 250 buckets all left the window (249 fields removed)".into(),
        c,
        &mut |c| write_buckets(c, &b, Age::AllLeft, 0, BUCKETS),
        &line,
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "stale buckets: {r:?}");
            assert_eq!(hlen(c, &b[0]), 1, "stale buckets removed");
        },
    );
    case(
        out,
        "RL.BUCKETS",
        "admit on a key whose older 125 of 250 buckets left the window (125 read, 125 removed)"
            .into(),
        c,
        &mut |c| write_buckets(c, &b, Age::HalfLeft, 0, BUCKETS),
        &line,
        &mut allowed(1, "half-stale buckets"),
    );
    let mut peek = line.clone();
    peek.splice(0..1, words("RL.PEEK BUCKETS"));
    case(
        out,
        "RL.PEEK",
        "BUCKETS on a key whose older 125 of 250 buckets left the window".into(),
        c,
        &mut |c| write_buckets(c, &b, Age::HalfLeft, 0, BUCKETS),
        &peek,
        &mut allowed(1, "peek half-stale buckets"),
    );
    case(
        out,
        "RL.PEEK",
        "BUCKETS on a key whose 250 buckets all left the window".into(),
        c,
        &mut |c| write_buckets(c, &b, Age::AllLeft, 0, BUCKETS),
        &peek,
        &mut allowed(1, "peek stale buckets"),
    );
    write_buckets(c, &b, Age::Live, 0, BUCKETS);
    let denied = words(&format!(
        "RL.BUCKETS {} 1 {WINDOW} PRECISION {PRECISION}",
        b[0]
    ));
    case(
        out,
        "RL.BUCKETS",
        "denied, limit 1 on 250 live buckets (retry walks all of them)".into(),
        c,
        none,
        &denied,
        &mut allowed(0, "bucket denial"),
    );
    let mut peek = denied.clone();
    peek.splice(0..1, words("RL.PEEK BUCKETS"));
    case(
        out,
        "RL.PEEK",
        "BUCKETS, limit 1 on 250 live buckets".into(),
        c,
        none,
        &peek,
        &mut allowed(0, "peek bucket denial"),
    );

    // ---- RL.COUNT / RL.TOTALS: 8 fields of 32 characters. ----
    let k = vec!["{w}:c".to_string()];
    let count = words(&format!(
        "RL.COUNT {} {COUNT_WINDOW} {} BY {MAX_LIMIT} PRECISION {PRECISION}",
        k[0],
        field_name(0)
    ));
    let totals = words(&format!(
        "RL.TOTALS {} {COUNT_WINDOW} PRECISION {PRECISION}",
        k[0]
    ));
    let zero_totals = |_: &mut Connection, r: &Value| {
        let v = items(r);
        assert_eq!(v.len(), 2 * COUNT_FIELDS, "totals: {r:?}");
        assert!(v.chunks(2).all(|p| int(&p[1]) == 0), "stale totals: {r:?}");
    };
    write_buckets(c, &k, Age::AllLeft, COUNT_FIELDS, COUNT_BUCKETS);
    case(
        out,
        "RL.TOTALS",
        "8 fields, 100 buckets that all left the window (none read)".into(),
        c,
        none,
        &totals,
        &mut { zero_totals },
    );
    case(
        out,
        "RL.COUNT",
        "8 fields, 100 buckets that all left the window (100 fields removed)".into(),
        c,
        &mut |c| write_buckets(c, &k, Age::AllLeft, COUNT_FIELDS, COUNT_BUCKETS),
        &count,
        &mut |c, r| {
            assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "count: {r:?}");
            // h, f and the new bucket.
            assert_eq!(hlen(c, &k[0]), 3, "stale count buckets removed");
        },
    );
    write_buckets(c, &k, Age::HalfLeft, COUNT_FIELDS, COUNT_BUCKETS);
    case(
        out,
        "RL.TOTALS",
        "8 fields, the older 50 of 100 buckets left the window (50 read)".into(),
        c,
        none,
        &totals,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "totals: {r:?}"),
    );
    case(
        out,
        "RL.COUNT",
        "8 fields, the older 50 of 100 buckets left the window (50 read, 50 removed)".into(),
        c,
        &mut |c| write_buckets(c, &k, Age::HalfLeft, COUNT_FIELDS, COUNT_BUCKETS),
        &count,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "count: {r:?}"),
    );
    write_buckets(c, &k, Age::Live, COUNT_FIELDS, COUNT_BUCKETS);
    case(
        out,
        "RL.TOTALS",
        "8 fields, 100 live buckets".into(),
        c,
        none,
        &totals,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "totals: {r:?}"),
    );
    let live_count = words(&format!(
        "RL.COUNT {} {COUNT_WINDOW} {} PRECISION {PRECISION}",
        k[0],
        field_name(7)
    ));
    case(
        out,
        "RL.COUNT",
        "8 fields, 100 live buckets".into(),
        c,
        none,
        &live_count,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "count: {r:?}"),
    );

    // ---- RL.ALL: 8 BUCKETS clauses, sharing the 250 buckets one call
    // may read: 62 each. ----
    let keys = all_keys("b");
    let share = BUCKETS / CLAUSES as i64;
    let share_window = share * PRECISION;
    let half_all = all_line(&keys, |_| {
        format!("BUCKETS {MAX_LIMIT} {share_window} PRECISION {PRECISION}")
    });
    case(
        out,
        "RL.ALL",
        format!("8 BUCKETS clauses, each on {share} buckets of which the older half left"),
        c,
        &mut |c| write_buckets(c, &keys, Age::HalfLeft, 0, share),
        &half_all,
        &mut allowed(1, "RL.ALL half-stale buckets"),
    );
    let stale_all = half_all.clone();
    case(
        out,
        "RL.ALL",
        format!("8 BUCKETS clauses, each on {share} buckets that all left the window"),
        c,
        &mut |c| write_buckets(c, &keys, Age::AllLeft, 0, share),
        &stale_all,
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "RL.ALL stale buckets: {r:?}");
            let held: u64 = keys.iter().map(|k| hlen(c, k)).sum();
            assert_eq!(held, keys.len() as u64, "RL.ALL stale buckets removed");
        },
    );
    write_buckets(c, &keys, Age::Live, 0, share);
    let denied_all = all_line(&keys, |_| {
        format!("BUCKETS 1 {share_window} PRECISION {PRECISION}")
    });
    case(
        out,
        "RL.ALL",
        format!("8 BUCKETS clauses, each limit 1 on {share} live buckets, all denied (8 walks)"),
        c,
        none,
        &denied_all,
        &mut allowed(0, "RL.ALL bucket denials"),
    );
}

/// RL.SLIDE, RL.PEEK SLIDE and RL.ALL over 8 SLIDE clauses: live, then
/// (some build on what the previous left) a second later, stale.
fn slide_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};

    // ---- RL.SLIDE: a 1,000,000-entry key, live. ----
    let big = "{w}:s0";
    let calls = SLIDE_MAX_LIMIT / SLIDE_MAX_COST;
    let _: () = redis::cmd("DEL").arg(big).query(c).unwrap();
    fill_slide(c, big, calls - REPEATS as u64, SLIDE_MAX_COST);
    // The other RL.ALL SLIDE keys, filled now so they leave with it.
    let others = all_keys("s");
    for k in &others[1..] {
        let _: () = redis::cmd("DEL").arg(k).query(c).unwrap();
        fill_slide(c, k, ALL_SLIDE_BACKLOG / SLIDE_MAX_COST, SLIDE_MAX_COST);
    }
    assert_eq!(
        zcard(c, big),
        SLIDE_MAX_LIMIT - REPEATS as u64 * SLIDE_MAX_COST
    );
    let line = words(&format!(
        "RL.SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_LIVE_WINDOW} COST {SLIDE_MAX_COST}"
    ));
    case(
        out,
        "RL.SLIDE",
        format!(
            "admit COST {SLIDE_MAX_COST} into a key holding {} to {} live entries (limit 10^6)",
            SLIDE_MAX_LIMIT - REPEATS as u64 * SLIDE_MAX_COST,
            SLIDE_MAX_LIMIT - SLIDE_MAX_COST
        ),
        c,
        none,
        &line,
        &mut allowed(1, "the last admissions"),
    );
    assert_eq!(zcard(c, big), SLIDE_MAX_LIMIT);
    case(
        out,
        "RL.SLIDE",
        format!("denied COST {SLIDE_MAX_COST} on a full key of 10^6 live entries (retry: the {SLIDE_MAX_COST}th entry, by rank)"),
        c,
        none,
        &line,
        &mut allowed(0, "full key"),
    );
    let lowered = words(&format!("RL.SLIDE {big} 1 {SLIDE_LIVE_WINDOW}"));
    case(
        out,
        "RL.SLIDE",
        "denied, limit lowered to 1 on 10^6 live entries (retry: the 10^6th entry, by rank)".into(),
        c,
        none,
        &lowered,
        &mut allowed(0, "lowered limit"),
    );
    let mut peek = lowered.clone();
    peek.splice(0..1, words("RL.PEEK SLIDE"));
    case(
        out,
        "RL.PEEK",
        "SLIDE, limit 1 on 10^6 live entries".into(),
        c,
        none,
        &peek,
        &mut allowed(0, "peek lowered limit"),
    );
    let live_all = all_line(&others, |_| format!("SLIDE 1 {SLIDE_LIVE_WINDOW}"));
    case(
        out,
        "RL.ALL",
        "8 SLIDE clauses, each limit 1 on a full key (10^6 + 7 x 20,000 entries), all denied"
            .into(),
        c,
        none,
        &live_all,
        &mut allowed(0, "RL.ALL slide denied"),
    );

    // ---- RL.SLIDE: the same entries, all left a 1 s window. ----
    let filled = server_ms(c);
    std::thread::sleep(Duration::from_millis(SLIDE_STALE_WINDOW + 50));
    while server_ms(c) <= filled + SLIDE_STALE_WINDOW as i64 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let peek = words(&format!(
        "RL.PEEK SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {SLIDE_MAX_COST}"
    ));
    case(
        out,
        "RL.PEEK",
        format!("SLIDE COST {SLIDE_MAX_COST} on 10^6 entries that all left the window"),
        c,
        none,
        &peek,
        &mut allowed(1, "peek stale"),
    );
    for cost in [1, SLIDE_MAX_COST] {
        let line = words(&format!(
            "RL.SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {cost}"
        ));
        let mut before = zcard(c, big);
        let removes = SLIDE_EVICT;
        case(
            out,
            "RL.SLIDE",
            format!(
                "admit COST {cost} on ~10^6 entries that all left the window (removes {removes})"
            ),
            c,
            none,
            &line,
            &mut |c, r| {
                assert_eq!(int(&items(r)[0]), 1, "stale admission: {r:?}");
                let now = zcard(c, big);
                assert_eq!(before + cost - now, removes, "stale entries removed");
                before = now;
            },
        );
    }
    // A denial behind the backlog: the walk over the oldest, ZCOUNT, and
    // the retry by rank among the entries just admitted.
    let behind = words(&format!("RL.SLIDE {big} 1 {SLIDE_STALE_WINDOW}"));
    case(
        out,
        "RL.SLIDE",
        format!(
            "denied, limit 1, behind ~10^6 stale entries ({} live: walk, ZCOUNT, rank)",
            REPEATS as u64 * (1 + SLIDE_MAX_COST)
        ),
        c,
        none,
        &behind,
        &mut allowed(0, "denial behind the backlog"),
    );
    // One clause takes all the cost the SLIDE clauses may share (100 in
    // all) but for the 7 others' 1 each: each clause may remove its cost + 1
    // and an equal part of what the call's 128 leaves ((128 - 108) / 8 = 2):
    // 96 + 7 x 4 = 124 removals, 100 entries.
    let stale_all = all_line(&others, |i| {
        let cost = if i == 0 {
            SLIDE_MAX_COST - (CLAUSES as u64 - 1)
        } else {
            1
        };
        format!("SLIDE {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {cost}")
    });
    let total = |c: &mut Connection| others.iter().map(|k| zcard(c, k)).sum::<u64>();
    let mut before = total(c);
    case(
        out,
        "RL.ALL",
        "8 SLIDE clauses (COST 93 + 7 x 1) on stale backlogs (10^6, 7 x 20,000): 124 removals"
            .into(),
        c,
        none,
        &stale_all,
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "RL.ALL stale slide: {r:?}");
            let now = total(c);
            let spare = (SLIDE_EVICT - SLIDE_MAX_COST - CLAUSES as u64) / CLAUSES as u64;
            let removals = SLIDE_MAX_COST + CLAUSES as u64 * (1 + spare);
            assert_eq!(
                before + SLIDE_MAX_COST - now,
                removals,
                "RL.ALL stale entries removed"
            );
            before = now;
        },
    );
}

/// Held leases of the big lease set (the largest `limit`), and of each of
/// RL.ALL's 8.
const LEASES_HELD: u64 = 1_000_000;
const ALL_LEASES_HELD: u64 = 100_000;
const LEASE_MS: i64 = 600_000;

/// Writes `key` as rl's lease set holding `n` leases `l<i>` that end
/// `LEASE_MS` from now (ZADD in batches, the header, a TTL past them).
fn fill_leases(c: &mut Connection, key: &str, n: u64) {
    let _: () = redis::cmd("DEL").arg(key).query(c).unwrap();
    let end = server_ms(c) + LEASE_MS;
    let mut i = 0;
    while i < n {
        let mut z = redis::cmd("ZADD");
        z.arg(key);
        for j in i..(i + 1_000).min(n) {
            // Spread over the last 10 s, so ranks and scores differ.
            z.arg(end - (j % 10_000) as i64).arg(format!("l{j}"));
        }
        let _: i64 = z.query(c).unwrap();
        i += 1_000;
    }
    let _: i64 = redis::cmd("ZADD")
        .arg(key)
        .arg(0)
        .arg("rl leases")
        .query(c)
        .unwrap();
    let _: i64 = redis::cmd("PEXPIREAT")
        .arg(key)
        .arg(end + LEASE_MS)
        .query(c)
        .unwrap();
}

/// The lease commands on a set of 10^6 held leases, and RL.ALL over 8
/// ACQUIRE clauses.
fn lease_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};
    let big = "{w}:l0";
    fill_leases(c, big, LEASES_HELD);
    let line = |s: &str| words(&s.replace("KEY", big));
    case(
        out,
        "RL.ACQUIRE",
        "denied at limit 10^6 on 10^6 held (counted with ZCOUNT)".into(),
        c,
        none,
        &line(&format!("RL.ACQUIRE KEY {LEASES_HELD} {LEASE_MS}")),
        &mut allowed(0, "full lease set"),
    );
    case(
        out,
        "RL.ACQUIRE",
        "denied, limit lowered to 1 on 10^6 held (the wait: the 10^6th lease, by rank)".into(),
        c,
        none,
        &line(&format!("RL.ACQUIRE KEY 1 {LEASE_MS}")),
        &mut allowed(0, "lowered limit"),
    );
    case(
        out,
        "RL.PEEK",
        "ACQUIRE, limit lowered to 1 on 10^6 held".into(),
        c,
        none,
        &line(&format!("RL.PEEK ACQUIRE KEY 1 {LEASE_MS}")),
        &mut allowed(0, "peek, lowered limit"),
    );
    // 16 expired leases before each call, and the last call's lease gone.
    let expired = &mut |c: &mut Connection| {
        let mut z = redis::cmd("ZADD");
        z.arg(big);
        for i in 0..16 {
            z.arg(1 + i).arg(format!("x{i}"));
        }
        let _: i64 = z.query(c).unwrap();
        let _: i64 = redis::cmd("ZREM").arg(big).arg("bench").query(c).unwrap();
    };
    // One slot free: the admission takes it, and the setup frees it again.
    let _: i64 = redis::cmd("ZREM").arg(big).arg("l0").query(c).unwrap();
    let before = zcard(c, big);
    case(
        out,
        "RL.ACQUIRE",
        "admitted on 10^6 - 1 held at limit 10^6, removing 16 expired (the most one call removes)"
            .into(),
        c,
        expired,
        &line(&format!("RL.ACQUIRE KEY {LEASES_HELD} {LEASE_MS} ID bench")),
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "acquire removing expired: {r:?}");
            assert_eq!(zcard(c, big), before + 1, "16 expired removed");
        },
    );
    case(
        out,
        "RL.RENEW",
        "a held lease among 10^6 (state after: ZCOUNT and both ends)".into(),
        c,
        none,
        &line(&format!("RL.RENEW KEY l5 {}", 2 * LEASE_MS)),
        &mut allowed(1, "renew"),
    );
    let release_setup = &mut |c: &mut Connection| {
        let at = server_ms(c) + LEASE_MS;
        let _: i64 = redis::cmd("ZADD")
            .arg(big)
            .arg(at)
            .arg("r")
            .query(c)
            .unwrap();
    };
    case(
        out,
        "RL.RELEASE",
        "a held lease among 10^6".into(),
        c,
        release_setup,
        &line("RL.RELEASE KEY r"),
        &mut allowed(1, "release"),
    );
    let _: () = redis::cmd("DEL").arg(big).query(c).unwrap();

    let keys = all_keys("l");
    for k in &keys {
        fill_leases(c, k, ALL_LEASES_HELD);
    }
    case(
        out,
        "RL.ALL",
        "8 ACQUIRE clauses, limit lowered to 1 on 8 x 100,000 held (8 waits by rank)".into(),
        c,
        none,
        &all_line(&keys, |_| format!("ACQUIRE 1 {LEASE_MS}")),
        &mut allowed(0, "RL.ALL leases"),
    );
    for k in &keys {
        let _: () = redis::cmd("DEL").arg(k).query(c).unwrap();
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
            &[
                "--slowlog-log-slower-than",
                "0",
                "--slowlog-max-len",
                "128",
                // Valkey frees a deleted key of many elements in a
                // background thread by default: the hashes deleted to
                // rebuild a state would be freed beside the measured call.
                "--lazyfree-lazy-user-del",
                "no",
            ],
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

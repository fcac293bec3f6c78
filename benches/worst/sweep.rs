//! The worst cases against their parameter: buckets read, stale entries
//! removed, `RL.ALL` clauses. The cases of the table above are each at
//! the largest parameter; here the same states are built at fractions of
//! it, so the charts show how the time of one call grows towards the bound
//! (linear in what the call reads or removes). Measured as the table's
//! cases are (`SLOWLOG`, each call checked to take the named path), on
//! Redis 7.0 with the module and, on a server without it, with the
//! function edition. Rows go to `target/bench/sweep.csv`:
//! `server,edition,axis,series,param,median_us,max_us`.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::Duration;

use redis::Connection;

use super::{
    all_keys, all_line, allowed, as_fcall, case, cmd, fill_leases, fill_slide, int, items,
    server_ms, timed, words, write_buckets, zcard, Age, Measured, BUCKETS, CLAUSES, COUNT_FIELDS,
    FUNCTIONS, MAX_LIMIT, PRECISION, REPEATS, SLIDE_EVICT, SLIDE_MAX_LIMIT,
};
use crate::common::{Flavor, Server};

/// The three axes a chart panel each: (name in the CSV, what x is).
pub const AXES: [(&str, &str); 3] = [
    (
        "buckets",
        "buckets per key (read, or half read and half removed)",
    ),
    ("removed", "stale entries removed"),
    ("clauses", "RL.ALL clauses"),
];

/// One point: the series (a case), its parameter and the measurement.
struct Point {
    axis: &'static str,
    series: &'static str,
    param: u64,
    measured: Measured,
}

/// The largest parameter and its fractions: 1/8, 1/4, 1/2, 1.
fn steps(max: u64) -> Vec<u64> {
    [8, 4, 2, 1]
        .iter()
        .map(|d| (max / d).max(1))
        .collect::<Vec<_>>()
}

fn last(out: &mut Vec<Measured>) -> Measured {
    out.pop().expect("case pushed its measurement")
}

fn bucket_points(c: &mut Connection, points: &mut Vec<Point>) {
    let none = &mut |_: &mut Connection| {};
    let mut out = Vec::new();
    for n in steps(BUCKETS as u64) {
        let n = n as i64;
        let window = n * PRECISION;
        let b = vec!["{s}:b".to_string()];
        // A denial at limit 1 walks every live bucket for its retry.
        write_buckets(c, &b, Age::Live, 0, n);
        let denied = words(&format!(
            "RL.BUCKETS {} 1 {window} PRECISION {PRECISION}",
            b[0]
        ));
        case(
            &mut out,
            "RL.BUCKETS",
            String::new(),
            c,
            none,
            &denied,
            &mut allowed(0, "sweep: bucket denial"),
        );
        points.push(Point {
            axis: "buckets",
            series: "RL.BUCKETS denied, limit 1 (walks all)",
            param: n as u64,
            measured: last(&mut out),
        });
        // An admission with the older half stale: n/2 read, n/2 removed.
        let admit = words(&format!(
            "RL.BUCKETS {} {MAX_LIMIT} {window} PRECISION {PRECISION}",
            b[0]
        ));
        case(
            &mut out,
            "RL.BUCKETS",
            String::new(),
            c,
            &mut |c| write_buckets(c, &b, Age::HalfLeft, 0, n),
            &admit,
            &mut allowed(1, "sweep: half-stale buckets"),
        );
        points.push(Point {
            axis: "buckets",
            series: "RL.BUCKETS admit, older half left",
            param: n as u64,
            measured: last(&mut out),
        });
        // RL.COUNT, 8 fields of 32 characters, the older half stale; its
        // window takes at most COUNT_BUCKETS buckets.
        if n > super::COUNT_BUCKETS {
            continue;
        }
        let k = vec!["{s}:c".to_string()];
        let count = words(&format!(
            "RL.COUNT {} {window} {} BY {MAX_LIMIT} PRECISION {PRECISION}",
            k[0],
            super::field_name(0)
        ));
        case(
            &mut out,
            "RL.COUNT",
            String::new(),
            c,
            &mut |c| write_buckets(c, &k, Age::HalfLeft, COUNT_FIELDS, n),
            &count,
            &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "sweep count: {r:?}"),
        );
        points.push(Point {
            axis: "buckets",
            series: "RL.COUNT 8 fields, older half left",
            param: n as u64,
            measured: last(&mut out),
        });
    }
}

/// Stale entries removed by one admission: a key holding `k` entries
/// that left the window in front of 2,000 that still count (so it is a
/// skiplist, as a key with a backlog is), for `k` up to the most one call
/// removes. One key per measurement, built up front, since a call
/// consumes its backlog. The backlog is written, then after a gap the
/// live entries; each call's window ends in the middle of the gap, so the
/// split does not depend on how long the fills take.
fn slide_points(c: &mut Connection, points: &mut Vec<Point>) {
    const LIVE: u64 = 2_000;
    const GAP_MS: u64 = 400;
    let ks = steps(SLIDE_EVICT);
    let key = |k: u64, i: usize| format!("{{s}}:s{k}:{i}");
    for &k in &ks {
        for i in 0..REPEATS {
            let key = key(k, i);
            let _: () = redis::cmd("DEL").arg(&key).query(c).unwrap();
            let cost = if k % 16 == 0 { 16 } else { 1 };
            fill_slide(c, &key, k / cost, cost);
        }
    }
    let gap_start = server_ms(c);
    std::thread::sleep(Duration::from_millis(GAP_MS));
    let middle = (gap_start + server_ms(c)) / 2;
    for &k in &ks {
        for i in 0..REPEATS {
            fill_slide(c, &key(k, i), LIVE / 100, 100);
        }
    }
    for &k in &ks {
        let mut runs = Vec::new();
        for i in 0..REPEATS {
            let key = key(k, i);
            let before = zcard(c, &key);
            let window = server_ms(c) - middle;
            let line = words(&format!("RL.SLIDE {key} {SLIDE_MAX_LIMIT} {window} COST 1"));
            let (us, reply) = if FUNCTIONS.load(Ordering::Relaxed) {
                timed(c, &cmd(&as_fcall(&line)), "FCALL")
            } else {
                timed(c, &cmd(&line), "RL.SLIDE")
            };
            assert_eq!(
                int(&items(&reply)[0]),
                1,
                "sweep: stale admission {reply:?}"
            );
            assert_eq!(before + 1 - zcard(c, &key), k, "sweep: {k} stale removed");
            runs.push(us);
        }
        points.push(Point {
            axis: "removed",
            series: "RL.SLIDE admit COST 1 behind a stale backlog",
            param: k,
            measured: Measured {
                command: "RL.SLIDE",
                case: String::new(),
                runs,
            },
        });
    }
}

/// RL.ALL over `m` clauses: BUCKETS denials (62 live buckets each, a walk
/// per clause) and ACQUIRE denials at a limit lowered to 1 (a rank lookup
/// per clause, on 10,000 held each).
fn clause_points(c: &mut Connection, points: &mut Vec<Point>) {
    let none = &mut |_: &mut Connection| {};
    let mut out = Vec::new();
    let share = BUCKETS / CLAUSES as i64;
    let keys = all_keys("sb");
    write_buckets(c, &keys, Age::Live, 0, share);
    let leases = all_keys("sl");
    for k in &leases {
        fill_leases(c, k, 10_000);
    }
    for m in steps(CLAUSES as u64) {
        let m = m as usize;
        let denied = all_line(&keys[..m], |_| {
            format!("BUCKETS 1 {} PRECISION {PRECISION}", share * PRECISION)
        });
        case(
            &mut out,
            "RL.ALL",
            String::new(),
            c,
            none,
            &denied,
            &mut allowed(0, "sweep: RL.ALL bucket denials"),
        );
        points.push(Point {
            axis: "clauses",
            series: "RL.ALL BUCKETS clauses, all denied (62 buckets each)",
            param: m as u64,
            measured: last(&mut out),
        });
        let acquire = all_line(&leases[..m], |_| format!("ACQUIRE 1 {}", super::LEASE_MS));
        case(
            &mut out,
            "RL.ALL",
            String::new(),
            c,
            none,
            &acquire,
            &mut allowed(0, "sweep: RL.ALL lease denials"),
        );
        points.push(Point {
            axis: "clauses",
            series: "RL.ALL ACQUIRE clauses, limit 1 (10,000 held each)",
            param: m as u64,
            measured: last(&mut out),
        });
    }
    for k in keys.iter().chain(&leases) {
        let _: () = redis::cmd("DEL").arg(k).query(c).unwrap();
    }
}

/// Runs the sweep on Redis 7.0, the module then the function edition, and
/// returns the CSV rows.
pub fn run() -> String {
    let mut csv = String::from("server,edition,axis,series,param,median_us,max_us\n");
    for functions in [false, true] {
        FUNCTIONS.store(functions, Ordering::Relaxed);
        let edition = if functions { "functions" } else { "module" };
        let flavor = Flavor::Redis7;
        let server = Server::start_in(
            flavor,
            crate::common::new_dir(flavor),
            &super::MEASURING,
            !functions,
        );
        let mut c = server.conn();
        if functions {
            crate::load_functions(&mut c);
        }
        let mut points = Vec::new();
        bucket_points(&mut c, &mut points);
        slide_points(&mut c, &mut points);
        clause_points(&mut c, &mut points);
        for p in &points {
            let _ = writeln!(
                csv,
                "Redis 7.0,{edition},{},\"{}\",{},{},{}",
                p.axis,
                p.series,
                p.param,
                p.measured.median(),
                p.measured.max()
            );
        }
    }
    FUNCTIONS.store(false, Ordering::Relaxed);
    csv
}

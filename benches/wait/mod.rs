//! `WAIT`'s costs on a real server (`make bench`, or `cargo bench --bench
//! server -- wait` alone): the memory a waiting client costs (`INFO
//! memory`'s `used_memory` before and after `N` clients block on one key,
//! beside what the same clients cost connected and idle), and the server
//! time of a wake (main-thread CPU of `N` releases that each wake one
//! waiter, whose admission runs in the same turn, against `N` plain
//! release-then-acquire pairs on a key nobody waits on). The memory, beside
//! that of clients blocked in `BLPOP`, is read once the server has trimmed
//! idle clients' buffers, in one round (load does not move it); the wakes
//! are medians of `ROUNDS`: the machine may be loaded, so they are upper
//! bounds.

use std::fmt::Write as _;

use redis::Connection;

use super::common::Server;
use crate::throughput::{main_thread_cpu_s, median};

/// Waiting clients per measure (the per-key cap).
const N: usize = 1000;
const ROUNDS: usize = 3;
const LEASE_MS: &str = "600000";

fn used_memory(c: &mut Connection) -> f64 {
    let info: String = redis::cmd("INFO").arg("memory").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:")?.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

fn waiting(c: &mut Connection) -> usize {
    let info: String = redis::cmd("INFO").arg("rl").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("rl_waiting_clients:")?.trim().parse().ok())
        .unwrap_or(0)
}

fn until_waiting(c: &mut Connection, n: usize) {
    while waiting(c) != n {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Long enough for the server to trim the buffers of every client idle
/// for over 2 s (whole seconds since its last command; clientsCron visits
/// every client once a second).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(4_000));
}

fn acquire(c: &mut Connection, key: &str, id: &str) -> i64 {
    let r: Vec<redis::Value> = redis::cmd("RL.ACQUIRE")
        .arg(&[key, "1", LEASE_MS, "ID", id])
        .query(c)
        .unwrap();
    match r[0] {
        redis::Value::Int(v) => v,
        _ => panic!("{r:?}"),
    }
}

fn release(c: &mut Connection, key: &str, id: &str) {
    let _: Vec<i64> = redis::cmd("RL.RELEASE").arg(&[key, id]).query(c).unwrap();
}

/// N waiting clients on `key` (whose only slot is held), their requests
/// sent and every one counted as waiting.
fn start_waiters(c: &mut Connection, key: &str, conns: &mut [Connection]) {
    for (i, w) in conns.iter_mut().enumerate() {
        let cmd = redis::cmd("RL.ACQUIRE")
            .arg(&[
                key,
                "1",
                LEASE_MS,
                "ID",
                &format!("w{}", i + 1),
                "WAIT",
                LEASE_MS,
            ])
            .get_packed_command();
        w.send_packed_command(&cmd).unwrap();
    }
    until_waiting(c, conns.len());
}

/// Bytes per idle connection, per waiting client beyond its connection,
/// and per client blocked in `BLPOP` (the server's own blocking command,
/// for reference). Each connection sends a command first, as the waiters
/// will, and every reading is taken once the server has trimmed the
/// buffers of clients idle for 2 s (clientsCron): the differences are what
/// each state holds, not a read buffer some clients still had. Memory does
/// not move with load, so this is measured once.
fn memory(server: &Server) -> [f64; 3] {
    let mut c = server.conn();
    let key = "bw:memory";
    assert_eq!(acquire(&mut c, key, "w0"), 1);
    settle();
    let base = used_memory(&mut c);
    let mut conns: Vec<Connection> = (0..N).map(|_| server.conn()).collect();
    for w in &mut conns {
        let _: String = redis::cmd("PING").query(w).unwrap();
    }
    settle();
    let idle = used_memory(&mut c);
    start_waiters(&mut c, key, &mut conns);
    settle();
    let held = used_memory(&mut c);
    // Dropped: the waiters leave the queue as they disconnect.
    drop(conns);
    while waiting(&mut c) != 0 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut conns: Vec<Connection> = (0..N).map(|_| server.conn()).collect();
    for w in &mut conns {
        let _: String = redis::cmd("PING").query(w).unwrap();
        let cmd = redis::cmd("BLPOP")
            .arg(&["bw:list", "600"])
            .get_packed_command();
        w.send_packed_command(&cmd).unwrap();
    }
    while blocked(&mut c) < N {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    settle();
    let blpop = used_memory(&mut c);
    drop(conns);
    release(&mut c, key, "w0");
    [
        (idle - base) / N as f64,
        (held - idle) / N as f64,
        (blpop - idle) / N as f64,
    ]
}

fn blocked(c: &mut Connection) -> usize {
    let info: String = redis::cmd("INFO").arg("clients").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:")?.trim().parse().ok())
        .unwrap_or(0)
}

/// One round of wakes: µs per release that wakes one waiter (its admission
/// included), µs per plain acquire + release on a key nobody waits on.
fn round(server: &Server, r: usize) -> [f64; 2] {
    let mut c = server.conn();
    let key = format!("bw:{r}");
    assert_eq!(acquire(&mut c, &key, "w0"), 1);
    let mut conns: Vec<Connection> = (0..N).map(|_| server.conn()).collect();
    start_waiters(&mut c, &key, &mut conns);
    // Each release hands the slot to the next waiter, admitted before the
    // release's reply is read back.
    let cpu = main_thread_cpu_s(&mut c);
    for i in 0..N {
        release(&mut c, &key, &format!("w{i}"));
    }
    let woken = main_thread_cpu_s(&mut c) - cpu;
    assert_eq!(waiting(&mut c), 0);
    for w in &mut conns {
        let _: redis::Value = w.recv_response().unwrap();
    }
    drop(conns);
    release(&mut c, &key, &format!("w{N}"));
    let plain_key = format!("bp:{r}");
    let cpu = main_thread_cpu_s(&mut c);
    for i in 0..N {
        let id = format!("p{i}");
        assert_eq!(acquire(&mut c, &plain_key, &id), 1);
        release(&mut c, &plain_key, &id);
    }
    let plain = main_thread_cpu_s(&mut c) - cpu;
    [woken * 1e6 / N as f64, plain * 1e6 / N as f64]
}

/// The table for one server, as Markdown and CSV rows.
pub fn run(server: &Server, label: &str, md: &mut String, csv: &mut String) {
    let [conn, waiter, blpop] = memory(server);
    let rounds: Vec<[f64; 2]> = (0..ROUNDS).map(|r| round(server, r)).collect();
    let m = |i: usize| median(&rounds.iter().map(|x| x[i]).collect::<Vec<_>>());
    let (wake, plain) = (m(0), m(1));
    let _ = writeln!(
        md,
        "\n### WAIT ({label}): {N} clients waiting on one key; wakes: medians of {ROUNDS} rounds\n\n\
         | measure | value |\n| --- | ---: |\n\
         | memory per connected idle client (`used_memory`) | {conn:.0} B |\n\
         | memory per waiting client, beyond its connection | {waiter:.0} B |\n\
         | memory per client blocked in `BLPOP`, beyond its connection (the server's own blocking, for reference) | {blpop:.0} B |\n\
         | server µs per `RL.RELEASE` that wakes one waiter, its admission included | {wake:.1} |\n\
         | server µs per plain `RL.ACQUIRE` + `RL.RELEASE`, nobody waiting | {plain:.1} |\n\
         | the wake's own cost (difference) | {:.1} |",
        wake - plain
    );
    for (row, v) in [
        ("wait_memory_per_connection_bytes", conn),
        ("wait_memory_per_waiter_bytes", waiter),
        ("wait_memory_per_blpop_client_bytes", blpop),
        ("wait_release_wakes_one_us", wake),
        ("wait_plain_acquire_release_us", plain),
    ] {
        let _ = writeln!(csv, "{label},wait,{row},,,,{v:.2},,");
    }
}

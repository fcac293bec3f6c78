//! `WAIT timeout_ms` against real servers, on every pairing: waiters are
//! served in arrival order and never more than the limit holds; a release
//! wakes as many as it frees and an expiry wakes one; a timeout, `CLIENT
//! UNBLOCK` and a disconnect record nothing; `MULTI` and `FCALL` answer at
//! once; a replica holds what the primary admitted; a primary that becomes
//! a replica unblocks its waiters with an error. Counts, order and stored
//! state are asserted, never how long anything took.

use std::time::Duration;

use crate::harness::raw_resp::{RawConn, Resp};
use crate::harness::*;

mod caps;
mod cluster;
mod counts;
mod reserved;
mod shadow;

/// Long enough never to end within a test.
const LONG: &str = "600000";

fn port(server: &Server) -> u16 {
    server
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("a port in the url")
}

fn waits(c: &mut redis::Connection) -> (u64, u64, u64) {
    let info = rl_info(c);
    let f = |name: &str| {
        *info
            .get(name)
            .unwrap_or_else(|| panic!("no {name}: {info:?}"))
    };
    (
        f("waiting_clients"),
        f("waits_served"),
        f("waits_timed_out"),
    )
}

/// Waits until `n` clients wait on the server (a sent call is held once
/// the server has read it).
fn until_waiting(c: &mut redis::Connection, n: u64) {
    let ok = wait_until(Duration::from_secs(20), || waits(c).0 == n);
    assert!(ok, "waiting clients {:?}, wanted {n}", waits(c));
}

fn held(c: &mut redis::Connection, key: &str) -> i64 {
    let now = server_ms(c);
    redis::cmd("ZCOUNT")
        .arg(key)
        .arg(format!("({now}"))
        .arg("+inf")
        .query(c)
        .unwrap()
}

fn has(c: &mut redis::Connection, key: &str, id: &str) -> bool {
    let s: Option<f64> = redis::cmd("ZSCORE").arg(key).arg(id).query(c).unwrap();
    s.is_some()
}

fn acquire(c: &mut redis::Connection, args: &[&str]) -> Resp {
    let mut line = vec!["RL.ACQUIRE"];
    line.extend_from_slice(args);
    match run(c, &line) {
        Ok(v) => resp_of(v),
        Err(e) => Resp::Error(error_text(&e).into_bytes()),
    }
}

fn resp_of(v: redis::Value) -> Resp {
    match v {
        redis::Value::Int(i) => Resp::Int(i),
        redis::Value::BulkString(b) => Resp::Bulk(Some(b)),
        redis::Value::Nil => Resp::Bulk(None),
        redis::Value::Array(items) => Resp::Array(Some(items.into_iter().map(resp_of).collect())),
        redis::Value::SimpleString(s) => Resp::Status(s.into_bytes()),
        redis::Value::Okay => Resp::Status(b"OK".to_vec()),
        other => panic!("unexpected reply {other:?}"),
    }
}

/// The lease a lease reply carries (`None` for a denial).
fn lease_of(r: &Resp) -> Option<String> {
    match r {
        Resp::Array(Some(items)) if items.len() == 5 => match &items[4] {
            Resp::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        },
        _ => panic!("not a lease reply: {r:?}"),
    }
}

fn allowed(r: &Resp) -> i64 {
    match r {
        Resp::Array(Some(items)) => match items[0] {
            Resp::Int(v) => v,
            _ => panic!("{r:?}"),
        },
        _ => panic!("not a decision: {r:?}"),
    }
}

fn release(c: &mut redis::Connection, key: &str, id: &str) -> i64 {
    let v: Vec<i64> = redis::cmd("RL.RELEASE").arg(key).arg(id).query(c).unwrap();
    v[0]
}

/// Sends `RL.ACQUIRE key limit lease ID id WAIT timeout` on a connection of
/// its own and waits until the server holds it (so the waiters' arrival
/// order is the order of these calls).
fn wait_on(
    server: &Server,
    c: &mut redis::Connection,
    args: &[&str],
    waiting_after: u64,
) -> RawConn {
    let mut w = RawConn::connect(port(server));
    let mut line = vec!["RL.ACQUIRE"];
    line.extend_from_slice(args);
    w.send(&line);
    until_waiting(c, waiting_after);
    w
}

#[test]
fn a_hundred_waiters_on_four_slots_are_served_in_arrival_order() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for i in 0..4 {
            let r = acquire(&mut c, &["q", "4", LONG, "ID", &format!("h{i}")]);
            assert_eq!(allowed(&r), 1, "{f:?}");
        }
        let mut waiters = Vec::new();
        for i in 0..100u64 {
            let id = format!("w{i}");
            waiters.push(wait_on(
                server,
                &mut c,
                &["q", "4", LONG, "ID", &id, "WAIT", LONG],
                i + 1,
            ));
        }
        assert_eq!(waits(&mut c), (100, 0, 0), "{f:?}");
        // Held: the four first; no waiter got anything yet.
        assert_eq!(held(&mut c, "q"), 4, "{f:?}");
        assert!(!has(&mut c, "q", "w0"), "{f:?}");
        // Each release hands its slot to the next waiter in arrival order:
        // the reply to RL.RELEASE comes after the wake it caused.
        let mut out = vec!["h0".to_string(), "h1".into(), "h2".into(), "h3".into()];
        for i in 0..100usize {
            let gone = out.remove(0);
            assert_eq!(release(&mut c, "q", &gone), 1, "{f:?} {gone}");
            let (waiting, served, timed_out) = waits(&mut c);
            assert_eq!(
                (waiting, served, timed_out),
                (99 - i as u64, i as u64 + 1, 0),
                "{f:?} after releasing {gone}"
            );
            assert!(has(&mut c, "q", &format!("w{i}")), "{f:?} w{i}");
            if i + 1 < 100 {
                assert!(
                    !has(&mut c, "q", &format!("w{}", i + 1)),
                    "{f:?} w{}",
                    i + 1
                );
            }
            assert_eq!(held(&mut c, "q"), 4, "{f:?} after w{i}");
            out.push(format!("w{i}"));
        }
        for (i, w) in waiters.iter_mut().enumerate() {
            let r = w.recv();
            assert_eq!(allowed(&r), 1, "{f:?} w{i}: {r:?}");
            assert_eq!(lease_of(&r), Some(format!("w{i}")), "{f:?}");
        }
        let [calls, admitted, denied, _] = counters(&mut c, "acquire");
        assert_eq!((calls, admitted, denied), (104, 104, 0), "{f:?}");
    });
}

#[test]
fn a_release_of_two_wakes_two_and_an_unknown_release_wakes_none() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for id in ["a", "b"] {
            acquire(&mut c, &["r2", "2", LONG, "ID", id]);
        }
        let mut ws: Vec<RawConn> = (0..3u64)
            .map(|i| {
                let id = format!("w{i}");
                wait_on(
                    server,
                    &mut c,
                    &["r2", "2", LONG, "ID", &id, "WAIT", LONG],
                    i + 1,
                )
            })
            .collect();
        // Not held: nothing freed, nobody woken.
        assert_eq!(release(&mut c, "r2", "nobody"), 0);
        assert_eq!(waits(&mut c), (3, 0, 0), "{f:?}");
        // Both released in one pipeline: two woken, in order; the third waits.
        let _: () = redis::pipe()
            .cmd("RL.RELEASE")
            .arg("r2")
            .arg("a")
            .ignore()
            .cmd("RL.RELEASE")
            .arg("r2")
            .arg("b")
            .ignore()
            .query(&mut c)
            .unwrap();
        assert_eq!(waits(&mut c), (1, 2, 0), "{f:?}");
        assert_eq!(lease_of(&ws[0].recv()), Some("w0".into()), "{f:?}");
        assert_eq!(lease_of(&ws[1].recv()), Some("w1".into()), "{f:?}");
        assert!(!has(&mut c, "r2", "w2"), "{f:?}");
        assert_eq!(held(&mut c, "r2"), 2, "{f:?}");
        release(&mut c, "r2", "w1");
        assert_eq!(lease_of(&ws[2].recv()), Some("w2".into()), "{f:?}");
        assert_eq!(waits(&mut c), (0, 3, 0), "{f:?}");
        // A slot a release hands to a waiter is the waiter's, even for a
        // plain RL.ACQUIRE read in the same turn of the event loop (the
        // same pipeline, before the waiter's admission runs).
        let mut w3 = wait_on(
            server,
            &mut c,
            &["r2", "2", LONG, "ID", "w3", "WAIT", LONG],
            1,
        );
        let (_, late): (Vec<i64>, Vec<redis::Value>) = redis::pipe()
            .cmd("RL.RELEASE")
            .arg(&["r2", "w0"])
            .cmd("RL.ACQUIRE")
            .arg(&["r2", "2", LONG, "ID", "late"])
            .query(&mut c)
            .unwrap();
        assert_eq!(allowed(&resp_of(redis::Value::Array(late))), 0, "{f:?}");
        assert_eq!(lease_of(&w3.recv()), Some("w3".into()), "{f:?}");
        assert!(!has(&mut c, "r2", "late"), "{f:?}");
    });
}

/// The ms an rl-made lease id was made at (`<ms base 36>-<nonce>`).
fn made_at(id: &str) -> i64 {
    let ms = id.split('-').next().unwrap();
    i64::from_str_radix(ms, 36).unwrap()
}

#[test]
fn each_expiry_wakes_one_waiter_without_any_client_action() {
    // The real clock: a stopped one fires no timer.
    for flavor in ALL {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let first = acquire(&mut c, &["e", "1", "300"]);
        let first = lease_of(&first).expect("admitted");
        let mut ws: Vec<RawConn> = (0..3u64)
            .map(|i| wait_on(&server, &mut c, &["e", "1", "300", "WAIT", LONG], i + 1))
            .collect();
        let ids: Vec<String> = ws
            .iter_mut()
            .map(|w| lease_of(&w.recv()).expect("admitted after waiting"))
            .collect();
        assert_eq!(waits(&mut c), (0, 3, 0), "{flavor:?}");
        // One at a time: each admitted once the lease before it had
        // ended (by the server's clock, in the ids it made).
        let mut at = made_at(&first);
        for id in &ids {
            assert!(made_at(id) >= at + 300, "{flavor:?}: {first} then {ids:?}");
            at = made_at(id);
        }
        let [calls, admitted, denied, _] = counters(&mut c, "acquire");
        assert_eq!((calls, admitted, denied), (4, 4, 0), "{flavor:?}");
    }
}

#[test]
fn a_timeout_answers_the_denial_and_records_nothing() {
    for flavor in ALL {
        let server = Server::start(flavor);
        let mut c = server.conn();
        acquire(&mut c, &["t", "1", LONG, "ID", "holder"]);
        let before = entries(&mut c, "t");
        let offset = changes(&mut c);
        let mut w = wait_on(&server, &mut c, &["t", "1", LONG, "WAIT", "200"], 1);
        let r = w.recv();
        assert_eq!(allowed(&r), 0, "{flavor:?}: {r:?}");
        assert_eq!(lease_of(&r), None, "{flavor:?}");
        assert_eq!(waits(&mut c), (0, 0, 1), "{flavor:?}");
        assert_eq!(entries(&mut c, "t"), before, "{flavor:?}");
        assert_eq!(changes(&mut c), offset, "{flavor:?}: a timeout wrote");
        let [calls, admitted, denied, _] = counters(&mut c, "acquire");
        assert_eq!((calls, admitted, denied), (2, 1, 1), "{flavor:?}");
        // A release now finds nobody waiting.
        release(&mut c, "t", "holder");
        assert_eq!(waits(&mut c), (0, 0, 1), "{flavor:?}");
    }
}

fn client_id(w: &mut RawConn) -> String {
    match w.call(&[b"CLIENT", b"ID"]) {
        Resp::Int(id) => id.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_unblock_and_a_disconnect_record_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["u", "1", LONG, "ID", "holder"]);
        let before = entries(&mut c, "u");
        let offset = changes(&mut c);
        // CLIENT UNBLOCK (TIMEOUT): the denial, as at the timeout.
        let mut a = RawConn::connect(port(server));
        let a_id = client_id(&mut a);
        a.send(&["RL.ACQUIRE", "u", "1", LONG, "ID", "a", "WAIT", LONG]);
        until_waiting(&mut c, 1);
        let n: i64 = redis::cmd("CLIENT")
            .arg(&["UNBLOCK", &a_id])
            .query(&mut c)
            .unwrap();
        assert_eq!(n, 1, "{f:?}");
        let r = a.recv();
        assert_eq!((allowed(&r), lease_of(&r)), (0, None), "{f:?}");
        // CLIENT UNBLOCK ERROR: the server's error.
        let b_id = client_id(&mut a);
        a.send(&["RL.ACQUIRE", "u", "1", LONG, "ID", "b", "WAIT", LONG]);
        until_waiting(&mut c, 1);
        let n: i64 = redis::cmd("CLIENT")
            .arg(&["UNBLOCK", &b_id, "ERROR"])
            .query(&mut c)
            .unwrap();
        assert_eq!(n, 1, "{f:?}");
        let e = a.recv().error_text().expect("an error");
        assert!(e.starts_with("UNBLOCKED"), "{f:?}: {e}");
        // A disconnect.
        let d = wait_on(
            server,
            &mut c,
            &["u", "1", LONG, "ID", "d", "WAIT", LONG],
            1,
        );
        drop(d);
        until_waiting(&mut c, 0);
        // Only the TIMEOUT form counts as a timeout.
        assert_eq!(waits(&mut c), (0, 0, 1), "{f:?}");
        assert_eq!(entries(&mut c, "u"), before, "{f:?}");
        assert_eq!(changes(&mut c), offset, "{f:?}: a wait that ended wrote");
        // The slot freed afterwards goes to nobody.
        assert_eq!(release(&mut c, "u", "holder"), 1);
        assert_eq!(waits(&mut c), (0, 0, 1), "{f:?}");
        assert_eq!(exists(&mut c, &["u"]), 0, "{f:?}");
    });
}

#[test]
fn multi_and_fcall_answer_at_once_as_plain_calls() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["m", "1", LONG, "ID", "holder"]);
        let r: Vec<redis::Value> = redis::pipe()
            .atomic()
            .cmd("RL.ACQUIRE")
            .arg(&["m", "1", LONG, "WAIT", LONG])
            .query(&mut c)
            .unwrap();
        assert_eq!(resp_of(r[0].clone()).ints_prefix(), vec![0, 0], "{f:?}");
        let lib = "#!lua name=waitlib\nredis.register_function('acq', function(keys, args) return redis.call('RL.ACQUIRE', keys[1], '1', '600000', 'WAIT', '600000') end)";
        let _: String = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg(lib)
            .query(&mut c)
            .unwrap();
        let v: redis::Value = redis::cmd("FCALL")
            .arg(&["acq", "1", "m"])
            .query(&mut c)
            .unwrap();
        assert_eq!(resp_of(v).ints_prefix(), vec![0, 0], "{f:?}");
        let v: redis::Value = redis::cmd("EVAL")
            .arg("return redis.call('RL.ACQUIRE', KEYS[1], '1', '600000', 'WAIT', '600000')")
            .arg(&["1", "m"])
            .query(&mut c)
            .unwrap();
        assert_eq!(resp_of(v).ints_prefix(), vec![0, 0], "{f:?}");
        assert_eq!(waits(&mut c), (0, 0, 0), "{f:?}");
        // And a free slot is taken there as by a plain call.
        release(&mut c, "m", "holder");
        let v: redis::Value = redis::cmd("FCALL")
            .arg(&["acq", "1", "m"])
            .query(&mut c)
            .unwrap();
        assert_eq!(resp_of(v).ints_prefix(), vec![1, 0], "{f:?}");
    });
}

trait IntsPrefix {
    fn ints_prefix(&self) -> Vec<i64>;
}

impl IntsPrefix for Resp {
    /// `[allowed, remaining]` of a decision.
    fn ints_prefix(&self) -> Vec<i64> {
        match self {
            Resp::Array(Some(items)) => items
                .iter()
                .take(2)
                .map(|i| match i {
                    Resp::Int(v) => *v,
                    other => panic!("{other:?}"),
                })
                .collect(),
            other => panic!("not a decision: {other:?}"),
        }
    }
}

#[test]
fn a_replica_holds_the_leases_waiters_were_given() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let replica = primary.start_replica(true);
        let mut c = primary.conn();
        acquire(&mut c, &["rp", "1", LONG, "ID", "holder"]);
        let mut ws: Vec<RawConn> = (0..3u64)
            .map(|i| {
                let id = format!("w{i}");
                wait_on(
                    &primary,
                    &mut c,
                    &["rp", "1", LONG, "ID", &id, "WAIT", LONG],
                    i + 1,
                )
            })
            .collect();
        release(&mut c, "rp", "holder");
        release(&mut c, "rp", "w0");
        assert_eq!(lease_of(&ws[0].recv()), Some("w0".into()));
        assert_eq!(lease_of(&ws[1].recv()), Some("w1".into()));
        wait_replicas(&mut c, 1);
        let mut r = replica.conn();
        assert_eq!(entries(&mut r, "rp"), entries(&mut c, "rp"), "{flavor:?}");
        assert_eq!(
            pexpiretime(&mut r, "rp"),
            pexpiretime(&mut c, "rp"),
            "{flavor:?}"
        );
        assert!(
            has(&mut r, "rp", "w1") && !has(&mut r, "rp", "w2"),
            "{flavor:?}"
        );
        // A WAIT call on the replica is refused as any write there is.
        let e = err_text(run(&mut r, &["RL.ACQUIRE", "rp", "1", LONG, "WAIT", LONG]));
        assert!(e.starts_with("READONLY"), "{flavor:?}: {e}");
        drop(ws);
    }
}

#[test]
fn a_primary_that_becomes_a_replica_unblocks_its_waiters_with_an_error() {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &[]);
        let other = Server::start_primary(flavor, &[]);
        let mut c = primary.conn();
        acquire(&mut c, &["fo", "1", LONG, "ID", "holder"]);
        let mut ws: Vec<RawConn> = (0..2u64)
            .map(|i| wait_on(&primary, &mut c, &["fo", "1", LONG, "WAIT", LONG], i + 1))
            .collect();
        let _: () = redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(port(&other))
            .query(&mut c)
            .unwrap();
        for w in &mut ws {
            let e = w.recv().error_text().expect("an error");
            assert!(
                e.starts_with("UNBLOCKED") && e.contains("replica"),
                "{flavor:?}: {e}"
            );
        }
        assert_eq!(waits(&mut c), (0, 0, 0), "{flavor:?}");
    }
}

#[test]
fn wait_bounds_are_refused_by_name() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for (line, want) in [
            (
                &["RL.ACQUIRE", "b", "1", "100", "WAIT", "600001"][..],
                "ERR timeout_ms must be an integer from 0 to 600000",
            ),
            (
                &["RL.ACQUIRE", "b", "1", "100", "WAIT"][..],
                "ERR WAIT needs a value",
            ),
            (
                &["RL.ACQUIRE", "b", "1", "100", "WAIT", "1", "WAIT", "2"][..],
                "ERR WAIT given more than once",
            ),
        ] {
            assert_eq!(err_text(run(&mut c, line)), want, "{f:?} {line:?}");
        }
        // WAIT 0 waits for nothing.
        acquire(&mut c, &["b", "1", LONG]);
        let r = acquire(&mut c, &["b", "1", LONG, "WAIT", "0"]);
        assert_eq!(allowed(&r), 0, "{f:?}");
        assert_eq!(waits(&mut c), (0, 0, 0), "{f:?}");
    });
}

#[test]
fn module_unload_is_refused_while_clients_wait() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["--enable-module-command", "yes"]);
        let mut c = server.conn();
        acquire(&mut c, &["mu", "1", LONG, "ID", "holder"]);
        let mut w = wait_on(&server, &mut c, &["mu", "1", LONG, "WAIT", LONG], 1);
        let e = err_text(run(&mut c, &["MODULE", "UNLOAD", "rl"]));
        assert!(e.contains("blocked clients"), "{flavor:?}: {e}");
        // rl is still there and the waiter is still served.
        release(&mut c, "mu", "holder");
        assert_eq!(allowed(&w.recv()), 1, "{flavor:?}");
        assert_eq!(waits(&mut c), (0, 1, 0), "{flavor:?}");
        let ok: String = redis::cmd("MODULE")
            .arg(&["UNLOAD", "rl"])
            .query(&mut c)
            .unwrap();
        assert_eq!(ok, "OK", "{flavor:?}");
    }
}

/// The ms between two admissions of the smoothing tests: on the stopped
/// clock each is stepped exactly; on a real one it only has to be long
/// enough for the test to see the admissions one by one.
const INTERVAL: u64 = 400;

/// Waits until more than `seen` waits were served, stepping a stopped
/// clock one interval first; the count served then.
fn next_served(server: &Server, c: &mut redis::Connection, seen: u64) -> u64 {
    next_served_after(server, c, seen, INTERVAL)
}

/// [`next_served`], stepping a stopped clock `ms`.
fn next_served_after(server: &Server, c: &mut redis::Connection, seen: u64, ms: u64) -> u64 {
    if server.clock_stopped() {
        server.advance(ms);
    }
    let ok = wait_until(Duration::from_secs(30), || waits(c).1 > seen);
    assert!(ok, "{:?}: no wait served after {seen}", server.flavor);
    waits(c).1
}

#[test]
fn smoothing_admits_requests_sent_at_once_one_interval_apart_in_order() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let period = INTERVAL.to_string();
        // One per INTERVAL ms, no burst: the first is admitted, the other
        // four wait their turn.
        let line = |wait: &str| -> Vec<String> {
            ["RL.THROTTLE", "sm", "0", "1", &period, "WAIT", wait]
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        let first = run(&mut c, &["RL.THROTTLE", "sm", "0", "1", &period]).unwrap();
        assert_eq!(allowed(&resp_of(first)), 1, "{f:?}");
        let tat = |c: &mut redis::Connection| -> i64 {
            let v: String = redis::cmd("GET").arg("sm").query(c).unwrap();
            v.parse().unwrap()
        };
        let tat0 = tat(&mut c);
        let mut ws = Vec::new();
        for i in 0..4u64 {
            let mut w = RawConn::connect(port(server));
            let l = line("60000");
            w.send(&l.iter().map(String::as_str).collect::<Vec<_>>());
            // Held, or on a real clock perhaps served already: in either
            // case it arrived before the next one is sent.
            let ok = wait_until(Duration::from_secs(20), || {
                let (waiting, served, _) = waits(&mut c);
                waiting + served == i + 1
            });
            assert!(ok, "{f:?}: waiter {i} not held");
            ws.push(w);
        }
        // A request that could not fit within its timeout is denied at once.
        let l = line("1");
        let r = resp_of(run(&mut c, &l.iter().map(String::as_str).collect::<Vec<_>>()).unwrap());
        assert_eq!(allowed(&r), 0, "{f:?}");
        let mut seen = 0;
        while seen < 4 {
            let served = next_served(server, &mut c, seen);
            // Served in arrival order: the first `served` have their reply.
            for (i, w) in ws
                .iter_mut()
                .enumerate()
                .take(served as usize)
                .skip(seen as usize)
            {
                let r = w.recv();
                assert_eq!(allowed(&r), 1, "{f:?} waiter {i}: {r:?}");
            }
            if server.clock_stopped() {
                // One admission per interval, each at the instant its turn
                // came (the state's TAT in µs).
                assert_eq!(served, seen + 1, "{f:?}");
                assert_eq!(
                    tat(&mut c),
                    tat0 + (served * INTERVAL * 1000) as i64,
                    "{f:?} after {served}"
                );
            }
            seen = served;
        }
        // One interval apart at least (the TAT moves one interval per
        // admission), and nothing left waiting.
        assert!(tat(&mut c) >= tat0 + (4 * INTERVAL * 1000) as i64, "{f:?}");
        assert_eq!(waits(&mut c), (0, 4, 0), "{f:?}");
        let [calls, admitted, denied, _] = counters(&mut c, "throttle");
        assert_eq!((calls, admitted, denied), (6, 5, 1), "{f:?}");
    });
}

#[test]
fn every_rate_limiter_holds_a_denied_call_until_it_fits() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let w = INTERVAL.to_string();
        let limiters: [(&str, Vec<&str>, &str); 4] = [
            ("RL.SLIDE", vec!["k:slide", "1", &w], "slide"),
            (
                "RL.BUCKETS",
                vec!["k:buckets", "1", &w, "PRECISION", "100"],
                "buckets",
            ),
            ("RL.FIXED", vec!["k:fixed", "1", &w], "fixed"),
            ("RL.THROTTLE", vec!["k:throttle", "0", "1", &w], "throttle"),
        ];
        for (n, (name, args, field)) in limiters.iter().enumerate() {
            let mut plain = vec![*name];
            plain.extend(args.iter().copied());
            assert_eq!(
                allowed(&resp_of(run(&mut c, &plain).unwrap())),
                1,
                "{f:?} {name}"
            );
            // Too short a wait: denied at once, nothing held.
            let mut short = plain.clone();
            short.extend(["WAIT", "1"]);
            let denied = resp_of(run(&mut c, &short).unwrap());
            assert_eq!(allowed(&denied), 0, "{f:?} {name}");
            let retry = match &denied {
                Resp::Array(Some(items)) => match items[2] {
                    Resp::Int(v) => v as u64,
                    _ => panic!("{denied:?}"),
                },
                _ => panic!("{denied:?}"),
            };
            assert!(retry > 1, "{f:?} {name}: {denied:?}");
            assert_eq!(waits(&mut c).0, 0, "{f:?} {name}");
            // Long enough: held, then admitted.
            let mut long = plain.clone();
            long.extend(["WAIT", "60000"]);
            let mut waiter = RawConn::connect(port(server));
            waiter.send(&long);
            let ok = wait_until(Duration::from_secs(20), || {
                let (waiting, served, _) = waits(&mut c);
                waiting + served == n as u64 + 1
            });
            assert!(ok, "{f:?} {name} not held");
            // Stepped to the instant the denial named: the retry is enough.
            next_served_after(server, &mut c, n as u64, retry);
            let r = waiter.recv();
            assert_eq!(allowed(&r), 1, "{f:?} {name}: {r:?}");
            let [calls, admitted, denied, _] = counters(&mut c, field);
            assert_eq!((calls, admitted, denied), (3, 2, 1), "{f:?} {name}");
        }
        assert_eq!(waits(&mut c), (0, 4, 0), "{f:?}");
    });
}

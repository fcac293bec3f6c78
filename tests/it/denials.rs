//! A denied call writes nothing: not the key, not its expiry, not the
//! replication stream or the AOF, and it does not touch WATCHed keys. For
//! every command that can deny (RL.COUNT only counts): the limiters' own,
//! `RL.ALL` (in every key of the call) and `RL.ACQUIRE`.

use std::time::Duration;

use crate::harness::all_commands::{Writer, LIMITERS, LONG_MS};
use crate::harness::*;

const HOUR: u64 = 3_600_000;

/// The commands that deny.
fn deniers() -> impl Iterator<Item = Writer> {
    LIMITERS.into_iter().filter(|&w| w != Writer::Count)
}

/// Fills `key` (limit 3, window 60 s) with entries at two different times.
fn fill_slide(server: &Server, c: &mut redis::Connection, key: &str) {
    assert_eq!(slide_cost(c, key, 3, 60_000, 2)[0], 1);
    server.advance(3);
    assert_eq!(slide(c, key, 3, 60_000)[0], 1);
}

/// Denied calls of several shapes against the full key from `fill_slide`.
fn deny_slide(c: &mut redis::Connection, key: &str, times: usize) {
    for _ in 0..times {
        for r in [
            slide(c, key, 3, 60_000),
            slide_cost(c, key, 3, 60_000, 3),
            slide(c, key, 1, 60_000),
            slide(c, key, 3, 30_000),
            slide_cost(c, key, 4, 60_000, 2),
        ] {
            assert_eq!(r[0], 0, "expected a denial, got {r:?}");
        }
    }
}

fn key_of(w: Writer) -> String {
    format!("d:{}", w.name())
}

/// Every key a call of `w` on [`key_of`] writes (RL.ALL: both clauses').
fn keys_of(w: Writer) -> Vec<String> {
    let key = key_of(w);
    match w {
        Writer::All => vec![Writer::all_second_key(&key), key],
        _ => vec![key],
    }
}

/// Every denier's key at its limit: RL.SLIDE's from `fill_slide`, the
/// others admitted once with a limit of 1.
fn fill_all(server: &Server, c: &mut redis::Connection) {
    for w in deniers() {
        if w == Writer::Slide {
            fill_slide(server, c, &key_of(w));
        } else {
            let reply = run_bytes(c, &w.admit_line(&key_of(w), 1)).unwrap();
            assert!(w.admits(&reply), "{}: {reply:?}", w.name());
        }
    }
}

/// Denied calls on `w`'s key as `fill_all` filled it.
fn deny(c: &mut redis::Connection, w: Writer, times: usize) {
    if w == Writer::Slide {
        return deny_slide(c, &key_of(w), times);
    }
    let key = key_of(w);
    let (second, long) = (Writer::all_second_key(&key), LONG_MS.to_string());
    let mut lines = vec![w.admit_line(&key, 1)];
    match w {
        // Denied by one clause only: the other, which would admit, records
        // nothing either.
        Writer::All => lines.push(words_bytes(&[
            "RL.ALL", "2", &key, &second, "SLIDE", "100", &long, "FIXED", "1", &long,
        ])),
        // A named id is refused like a made one.
        Writer::Acquire => lines.push(words_bytes(&["RL.ACQUIRE", &key, "1", &long, "ID", "late"])),
        _ => {}
    }
    for _ in 0..times {
        for line in &lines {
            let reply = run_bytes(c, line).unwrap();
            assert!(
                !w.admits(&reply),
                "{}: expected a denial, got {reply:?}",
                w.name()
            );
        }
    }
}

fn words_bytes(line: &[&str]) -> Vec<Vec<u8>> {
    line.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// Denied calls on every key `fill_all` filled.
fn deny_all(c: &mut redis::Connection, times: usize) {
    for w in deniers() {
        deny(c, w, times);
    }
}

/// A denial while stale entries are present does not evict them either.
/// Everything after the first admit runs in one MULTI/EXEC, so the fresh
/// entries are certainly inside the 150 ms window of the denied call.
#[test]
fn denied_slide_does_not_evict_stale_entries() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(slide_cost(&mut c, "st", 100, 60_000, 2)[0], 1);
        server.advance(300);
        type Dump = Option<Vec<u8>>;
        let (fresh, dump1, pt1, denied, dump2, pt2, card): (
            Vec<i64>,
            Dump,
            i64,
            Vec<i64>,
            Dump,
            i64,
            usize,
        ) = redis::pipe()
            .atomic()
            .cmd("RL.SLIDE")
            .arg("st")
            .arg(100)
            .arg(60_000)
            .arg("COST")
            .arg(2)
            .cmd("DUMP")
            .arg("st")
            .cmd("PEXPIRETIME")
            .arg("st")
            // 2 fresh entries held, 2 stale ones (300 ms old) out of the window.
            .cmd("RL.SLIDE")
            .arg("st")
            .arg(2)
            .arg(150)
            .cmd("DUMP")
            .arg("st")
            .cmd("PEXPIRETIME")
            .arg("st")
            .cmd("ZCARD")
            .arg("st")
            .query(&mut c)
            .unwrap();
        assert_eq!(fresh[0], 1, "{f:?}");
        assert_eq!(denied[..2], [0, 0], "{f:?}: {denied:?}");
        assert_eq!((dump2, pt2), (dump1, pt1), "{f:?}");
        assert_eq!(card, 4, "{f:?}: the stale entries stay until an admit");
    });
}

#[test]
fn denied_fixed_call_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fixed(&mut c, "f", 2, HOUR, Some(2));
        let before = frozen_state(&mut c, "f");
        for cost in [None, Some(2)] {
            assert_eq!(fixed(&mut c, "f", 2, HOUR, cost)[0], 0, "{f:?}");
        }
        assert_eq!(frozen_state(&mut c, "f"), before, "{f:?}");
    });
}

#[test]
fn denied_throttle_call_and_peek_write_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        throttle(&mut c, "t", [0, 1, HOUR], None);
        let before = frozen_state(&mut c, "t");
        let value_before = value_and_expiry(&mut c, "t");
        assert_eq!(throttle(&mut c, "t", [0, 1, HOUR], None)[0], 0, "{f:?}");
        assert_eq!(throttle(&mut c, "t", [0, 1, HOUR], Some(0))[..2], [1, 0]);
        assert_eq!(frozen_state(&mut c, "t"), before, "{f:?}");
        assert_eq!(value_and_expiry(&mut c, "t"), value_before, "{f:?}");
        // A peek at a missing key creates nothing.
        assert_eq!(
            throttle(&mut c, "none", [4, 1, HOUR], Some(0)),
            [1, 5, 0, 0]
        );
        assert_eq!(exists(&mut c, &["none"]), 0, "{f:?}");
    });
}

#[test]
fn denied_calls_of_every_command_leave_their_keys_byte_identical() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fill_all(server, &mut c);
        let keys: Vec<String> = deniers().flat_map(keys_of).collect();
        let before: Vec<_> = keys.iter().map(|k| frozen_state(&mut c, k)).collect();
        for (k, state) in keys.iter().zip(&before) {
            assert!(state.0.is_some() && state.1 > 0, "{f:?} {k}: {state:?}");
        }
        deny_all(&mut c, 10);
        let after: Vec<_> = keys.iter().map(|k| frozen_state(&mut c, k)).collect();
        assert_eq!(after, before, "{f:?}");
    });
}

#[test]
fn denied_calls_of_every_command_add_nothing_to_the_replication_stream() {
    for flavor in ALL {
        let mut primary = Server::start_primary(flavor, &[]);
        // A replica that comes and goes leaves the primary keeping a
        // replication backlog, so master_repl_offset counts every byte it
        // would send; with no replica left there is no ping traffic either.
        drop(primary.start_replica(false));
        let mut c = primary.conn();
        let detached = wait_until(Duration::from_secs(10), || {
            info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
        });
        assert!(detached, "{flavor:?}: replica still attached");
        let o0 = repl_offset(&mut c);
        fill_all(&primary, &mut c);
        let o1 = repl_offset(&mut c);
        assert!(
            o1 > o0,
            "{flavor:?}: admits must reach the stream ({o0} -> {o1})"
        );
        deny_all(&mut c, 10);
        assert_eq!(
            repl_offset(&mut c),
            o1,
            "{flavor:?}: denials moved the offset"
        );
        primary.assert_alive();
    }
}

#[test]
fn denied_calls_of_every_command_add_nothing_to_the_aof() {
    for flavor in ALL {
        let mut server =
            Server::start_clocked(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut c = server.conn();
        let size = |c: &mut redis::Connection| info_int(c, "persistence", "aof_current_size");
        let s0 = size(&mut c);
        fill_all(&server, &mut c);
        let (s1, d1) = (size(&mut c), changes(&mut c));
        assert!(
            s1 > s0,
            "{flavor:?}: admits must reach the AOF ({s0} -> {s1})"
        );
        deny_all(&mut c, 10);
        assert_eq!(size(&mut c), s1, "{flavor:?}: denials grew the AOF");
        assert_eq!(
            changes(&mut c),
            d1,
            "{flavor:?}: denials counted as changes"
        );
        server.assert_alive();
    }
}

fn exec_transaction(c: &mut redis::Connection) -> redis::Value {
    let _: () = redis::cmd("MULTI").query(c).unwrap();
    let _: String = redis::cmd("SET").arg("side").arg("x").query(c).unwrap();
    redis::cmd("EXEC").query(c).unwrap()
}

#[test]
fn denied_calls_of_every_command_do_not_invalidate_a_watch() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut watcher = server.conn();
        let mut other = server.conn();
        fill_all(server, &mut other);
        for w in deniers() {
            let _: () = redis::cmd("WATCH")
                .arg(keys_of(w))
                .query(&mut watcher)
                .unwrap();
            deny(&mut other, w, 2);
            let exec = exec_transaction(&mut watcher);
            assert_ne!(
                exec,
                redis::Value::Nil,
                "{f:?} {}: a denial aborted the watcher",
                w.name()
            );
        }

        // The control: an admitted call does invalidate it.
        for w in deniers() {
            let key = key_of(w);
            let _: () = redis::cmd("WATCH")
                .arg(keys_of(w))
                .query(&mut watcher)
                .unwrap();
            let reply = run_bytes(&mut other, &w.admit_line(&key, 100)).unwrap();
            assert!(w.admits(&reply), "{f:?} {}: {reply:?}", w.name());
            let exec = exec_transaction(&mut watcher);
            assert_eq!(
                exec,
                redis::Value::Nil,
                "{f:?} {}: an admit must abort the watcher",
                w.name()
            );
        }
    });
}

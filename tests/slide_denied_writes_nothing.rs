//! A denied RL.SLIDE writes nothing: not the key, not its expiry, not the
//! replication stream or the AOF, and it does not touch WATCHed keys.
mod common;

use std::time::Duration;

use common::*;

/// Fills `key` (limit 3, window 60 s) with entries at two different times.
fn fill(c: &mut redis::Connection, key: &str) {
    assert_eq!(slide_cost(c, key, 3, 60_000, 2)[0], 1);
    std::thread::sleep(Duration::from_millis(3));
    assert_eq!(slide(c, key, 3, 60_000)[0], 1);
}

/// Denied calls of several shapes against the full key from `fill`.
fn deny_many(c: &mut redis::Connection, key: &str, times: usize) {
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

#[test]
fn denied_request_leaves_the_key_byte_identical() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fill(&mut c, "k");
        let before = frozen_state(&mut c, "k");
        assert!(before.0.is_some() && before.1 > 0, "{f:?}: {before:?}");
        deny_many(&mut c, "k", 10);
        assert_eq!(frozen_state(&mut c, "k"), before, "{f:?}");
    });
}

/// A denial while stale entries are present does not evict them either.
/// Everything after the first admit runs in one MULTI/EXEC, so the fresh
/// entries are certainly inside the 150 ms window of the denied call.
#[test]
fn denied_request_does_not_evict_stale_entries() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(slide_cost(&mut c, "st", 100, 60_000, 2)[0], 1);
        std::thread::sleep(Duration::from_millis(300));
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
fn denied_request_adds_nothing_to_the_replication_stream() {
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
        let offset = |c: &mut redis::Connection| -> i64 {
            info_field(c, "replication", "master_repl_offset")
                .expect("master_repl_offset")
                .parse()
                .unwrap()
        };
        let o0 = offset(&mut c);
        fill(&mut c, "k");
        let o1 = offset(&mut c);
        assert!(
            o1 > o0,
            "{flavor:?}: admits must reach the stream ({o0} -> {o1})"
        );
        deny_many(&mut c, "k", 10);
        assert_eq!(offset(&mut c), o1, "{flavor:?}: denials moved the offset");
        primary.assert_alive();
    }
}

#[test]
fn denied_request_adds_nothing_to_the_aof() {
    for flavor in ALL {
        let mut server =
            Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut c = server.conn();
        let size = |c: &mut redis::Connection| -> i64 {
            info_field(c, "persistence", "aof_current_size")
                .expect("aof_current_size")
                .parse()
                .unwrap()
        };
        let dirty = |c: &mut redis::Connection| -> i64 {
            info_field(c, "persistence", "rdb_changes_since_last_save")
                .expect("rdb_changes_since_last_save")
                .parse()
                .unwrap()
        };
        let s0 = size(&mut c);
        fill(&mut c, "k");
        let (s1, d1) = (size(&mut c), dirty(&mut c));
        assert!(
            s1 > s0,
            "{flavor:?}: admits must reach the AOF ({s0} -> {s1})"
        );
        deny_many(&mut c, "k", 10);
        assert_eq!(size(&mut c), s1, "{flavor:?}: denials grew the AOF");
        assert_eq!(dirty(&mut c), d1, "{flavor:?}: denials counted as changes");
        server.assert_alive();
    }
}

fn exec_transaction(c: &mut redis::Connection) -> redis::Value {
    let _: () = redis::cmd("MULTI").query(c).unwrap();
    let _: String = redis::cmd("SET").arg("side").arg("x").query(c).unwrap();
    redis::cmd("EXEC").query(c).unwrap()
}

#[test]
fn denied_request_does_not_invalidate_a_watch() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut watcher = server.conn();
        let mut other = server.conn();
        fill(&mut other, "k");

        let _: () = redis::cmd("WATCH").arg("k").query(&mut watcher).unwrap();
        deny_many(&mut other, "k", 2);
        let exec = exec_transaction(&mut watcher);
        assert_ne!(
            exec,
            redis::Value::Nil,
            "{f:?}: a denial aborted the watcher"
        );

        // The control: an admitted call does invalidate it.
        let _: () = redis::cmd("WATCH").arg("k").query(&mut watcher).unwrap();
        assert_eq!(slide(&mut other, "k", 100, 60_000)[0], 1, "{f:?}");
        let exec = exec_transaction(&mut watcher);
        assert_eq!(
            exec,
            redis::Value::Nil,
            "{f:?}: an admit must abort the watcher"
        );
    });
}

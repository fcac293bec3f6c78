//! RL.PEEK: the named limiter's answer without recording anything. Read-only
//! (replicas, EVAL_RO, FCALL_RO), byte-identical state, nothing replicated,
//! no modified-key signal.

use crate::harness::*;

/// One key per limiter, each with state, and the peek line for it.
/// The SLIDE key holds entries older than the peek's window: a consuming
/// call would evict them, a peek must not.
fn seed(server: &Server, c: &mut redis::Connection) -> Vec<(&'static str, Vec<&'static str>)> {
    for _ in 0..3 {
        slide(c, "s", 10, 600_000);
        run(c, &["RL.BUCKETS", "b", "10", "600000"]).unwrap();
        run(c, &["RL.THROTTLE", "t", "5", "1", "600000"]).unwrap();
        run(c, &["RL.FIXED", "f", "10", "600000"]).unwrap();
    }
    // Let the SLIDE entries age past the 5 ms window used by the peek.
    server.advance(20);
    vec![
        ("s", vec!["SLIDE", "s", "10", "5"]),
        ("s", vec!["SLIDE", "s", "3", "600000"]),
        ("b", vec!["BUCKETS", "b", "10", "600000"]),
        ("b", vec!["BUCKETS", "b", "3", "600000", "COST", "1"]),
        ("t", vec!["THROTTLE", "t", "5", "1", "600000"]),
        ("t", vec!["THROTTLE", "t", "5", "1", "600000", "3"]),
        ("f", vec!["FIXED", "f", "10", "600000"]),
        ("f", vec!["FIXED", "f", "3", "600000"]),
        ("missing", vec!["SLIDE", "missing", "1", "1000"]),
        ("missing", vec!["BUCKETS", "missing", "1", "1000"]),
        ("missing", vec!["THROTTLE", "missing", "0", "1", "1000"]),
        ("missing", vec!["FIXED", "missing", "1", "1000"]),
    ]
}

#[test]
fn peek_leaves_every_limiters_state_byte_identical() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for (key, line) in seed(server, &mut c) {
            let before = frozen_state(&mut c, key);
            let marks = changes(&mut c);
            for _ in 0..3 {
                peek(&mut c, &line);
            }
            assert_eq!(frozen_state(&mut c, key), before, "{f:?} {line:?}");
            assert_eq!(changes(&mut c), marks, "{f:?} {line:?}: a peek wrote");
        }
        let exists: i64 = redis::cmd("EXISTS").arg("missing").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}: a peek created a key");
    });
}

/// On a primary whose replica came and went, so the replication offset
/// counts what would be sent: the seeding calls move it (the control), no
/// peek does.
#[test]
fn peek_adds_nothing_to_the_replication_stream() {
    for flavor in ALL {
        let mut server = Server::start_primary_with_backlog(flavor);
        let mut c = server.conn();
        let o0 = repl_offset(&mut c);
        let lines = seed(&server, &mut c);
        let o1 = repl_offset(&mut c);
        assert!(
            o1 > o0,
            "{flavor:?}: the seeding calls must reach the stream"
        );
        for (_, line) in lines {
            for _ in 0..3 {
                peek(&mut c, &line);
            }
            assert_eq!(
                repl_offset(&mut c),
                o1,
                "{flavor:?} {line:?}: a peek was replicated"
            );
        }
        server.assert_alive();
    }
}

#[test]
fn peek_answers_what_the_consuming_command_would() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Long windows: allowed and remaining do not move between the calls.
        let cases: &[(&[&str], &[&str])] = &[
            (
                &["SLIDE", "s", "3", "600000"],
                &["RL.SLIDE", "s", "3", "600000"],
            ),
            (
                &["BUCKETS", "b", "3", "600000", "COST", "2"],
                &["RL.BUCKETS", "b", "3", "600000", "COST", "2"],
            ),
            (
                &["THROTTLE", "t", "2", "1", "600000"],
                &["RL.THROTTLE", "t", "2", "1", "600000"],
            ),
            (
                &["FIXED", "f", "2", "600000"],
                &["RL.FIXED", "f", "2", "600000"],
            ),
        ];
        for (peek_line, call) in cases {
            for round in 0..5 {
                let p = peek(&mut c, peek_line);
                let v: Vec<i64> = redis::cmd(call[0]).arg(&call[1..]).query(&mut c).unwrap();
                assert_eq!(p[..2], v[..2], "{f:?} {call:?} round {round}");
                if p[0] == 0 {
                    // A denial's wait: the same order of magnitude, never 0.
                    assert!(p[2] > 0 && v[2] > 0, "{f:?} {call:?}");
                }
            }
        }
    });
}

#[test]
fn peek_sends_no_modified_key_signal() {
    on_every_server(|server| {
        let mut c = server.conn();
        slide(&mut c, "w", 5, 600_000);
        let _: () = redis::cmd("WATCH").arg("w").query(&mut c).unwrap();
        peek(&mut c, &["SLIDE", "w", "5", "600000"]);
        let _: () = redis::cmd("MULTI").query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("other").arg(1).query(&mut c).unwrap();
        let r: Option<Vec<String>> = redis::cmd("EXEC").query(&mut c).unwrap();
        assert!(r.is_some(), "{:?}: the peek aborted a WATCH", server.flavor);
    });
}

#[test]
fn peek_runs_on_a_replica_and_changes_nothing_there() {
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        let mut r = replica.conn();
        let lines = seed(&primary, &mut p);
        wait_replicas(&mut p, 1);
        for (key, line) in lines {
            let before = frozen_state(&mut r, key);
            let on_replica = peek(&mut r, &line);
            let on_primary = peek(&mut p, &line);
            assert_eq!(on_replica[..2], on_primary[..2], "{flavor:?} {line:?}");
            assert_eq!(frozen_state(&mut r, key), before, "{flavor:?} {line:?}");
            assert_eq!(
                frozen_state(&mut r, key),
                frozen_state(&mut p, key),
                "{flavor:?} {line:?}"
            );
        }
        // The consuming commands are refused there.
        let err = error_of(&mut r, &["RL.SLIDE", "s", "10", "1000"]);
        assert!(err.contains("read only replica"), "{flavor:?}: {err}");
    }
}

#[test]
fn peek_runs_in_read_only_scripts_and_functions() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        run(&mut c, &["RL.FIXED", "f", "5", "600000", "COST", "2"]).unwrap();
        let before = frozen_state(&mut c, "f");
        let v: Vec<i64> = redis::cmd("EVAL_RO")
            .arg("return redis.call('RL.PEEK', 'FIXED', KEYS[1], 5, 600000)")
            .arg(1)
            .arg("f")
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        assert_eq!(v[..2], [1, 2], "{f:?}");
        let lib = "#!lua name=rlpeek\n\
            redis.register_function{function_name='rlpeek', flags={'no-writes'}, \
            callback=function(keys, args) return redis.call('RL.PEEK', 'FIXED', keys[1], 5, 600000) end}";
        let _: String = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg(lib)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        let v: Vec<i64> = redis::cmd("FCALL_RO")
            .arg("rlpeek")
            .arg(1)
            .arg("f")
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{f:?}: {e}"));
        assert_eq!(v[..2], [1, 2], "{f:?}");
        assert_eq!(frozen_state(&mut c, "f"), before, "{f:?}");
    });
}

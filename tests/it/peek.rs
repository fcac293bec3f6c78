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

fn ints(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    let mut cmd = redis::cmd(line[0]);
    for a in &line[1..] {
        cmd.arg(*a);
    }
    cmd.query(c).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

/// `OLDEST`'s fifth integer is the wait until the oldest unit the window
/// counts leaves it, full or not: exact on a stopped clock, bounded by the
/// waits the steps allow on a running one (which only runs later, so the
/// wait only shrinks). RESP3 answers the same flat array.
#[test]
fn oldest_is_the_wait_until_the_oldest_counted_unit_leaves() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let exact = server.clock_stopped();
        let mut c = server.conn();
        let mut c3 = server.conn_resp3();
        let peek = &["RL.PEEK", "SLIDE", "s", "5", "60000", "OLDEST"];
        assert_eq!(ints(&mut c, peek), [1, 4, 0, 60000, 0], "{f:?}: empty");
        ints(&mut c, &["RL.SLIDE", "s", "5", "60000"]);
        server.advance(30);
        ints(&mut c, &["RL.SLIDE", "s", "5", "60000", "COST", "2"]);
        for conn in [&mut c, &mut c3] {
            let r = ints(conn, peek);
            assert_eq!(r.len(), 5, "{f:?}: {r:?}");
            assert_eq!(r[..2], [1, 1], "{f:?}: {r:?}");
            if exact {
                assert_eq!(r[2..], [0, 60000, 59970], "{f:?}");
            } else {
                // Partly full: the oldest (30 ms older than the newest)
                // leaves before the window empties.
                assert!(r[4] <= 59970 && r[4] + 30 <= r[3], "{f:?}: {r:?}");
            }
        }
        // COST plays no part in the figure; a denial's wait for the
        // oldest agrees with it.
        let r = ints(
            &mut c,
            &["RL.PEEK", "SLIDE", "s", "3", "60000", "COST", "1", "OLDEST"],
        );
        assert_eq!((r[0], r[2]), (0, r[4]), "{f:?}: {r:?}");
        // A 50 ms window, 60 ms after the first unit: it has left and
        // only the later two count (the reset is that of the admission
        // the peek would make).
        server.advance(30);
        let r = ints(&mut c, &["RL.PEEK", "slide", "s", "5", "50", "oldest"]);
        if exact {
            assert_eq!(r, [1, 2, 0, 50, 20], "{f:?}");
        } else {
            assert!(r[4] <= 20, "{f:?}: {r:?}");
        }
        server.advance(20);
        assert_eq!(
            ints(&mut c, &["RL.PEEK", "SLIDE", "s", "5", "50", "OLDEST"])[4],
            0,
            "{f:?}: all left"
        );

        // BUCKETS: 1000 ms buckets; bucket b leaves at (b+1)*1000 - 1 + window.
        let t0 = exact.then(|| server.clock_ms());
        ints(
            &mut c,
            &["RL.BUCKETS", "b", "5", "60000", "PRECISION", "1000"],
        );
        let r = ints(&mut c, &["RL.PEEK", "BUCKETS", "b", "5", "60000", "OLDEST"]);
        match t0 {
            Some(t) => {
                let leaves = (t.div_euclid(1000) + 1) * 1000 - 1 + 60000;
                assert_eq!(r, [1, 3, 0, leaves - t, leaves - t], "{f:?}");
            }
            None => assert!(r[4] > 0 && r[4] <= 60999 && r[4] <= r[3], "{f:?}: {r:?}"),
        }
        let r = ints(
            &mut c,
            &["RL.PEEK", "BUCKETS", "none", "5", "60000", "OLDEST"],
        );
        assert_eq!(r[4], 0, "{f:?}: a missing key counts nothing");
        server.assert_alive();
    });
}

#[test]
fn oldest_is_refused_by_name_outside_peek_slide_and_buckets() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let not_of = |command: &str| {
            format!(
                "OLDEST is an option of RL.PEEK SLIDE and RL.PEEK BUCKETS only, not of '{command}'"
            )
        };
        let cases: &[(&[&str], String)] = &[
            (
                &["RL.PEEK", "THROTTLE", "t", "5", "1", "1000", "OLDEST"],
                not_of("rl.peek THROTTLE"),
            ),
            (
                &["RL.PEEK", "FIXED", "f", "5", "1000", "OLDEST"],
                not_of("rl.peek FIXED"),
            ),
            (
                &["RL.SLIDE", "s", "5", "1000", "OLDEST"],
                not_of("rl.slide"),
            ),
            (
                &["RL.BUCKETS", "b", "5", "1000", "OLDEST"],
                not_of("rl.buckets"),
            ),
            (
                &["RL.REFUND", "SLIDE", "s", "5", "1000", "OLDEST"],
                not_of("rl.refund"),
            ),
            (
                &["RL.ALL", "1", "s", "SLIDE", "5", "1000", "OLDEST"],
                format!("clause 1: {}", not_of("rl.all")),
            ),
            (
                &["RL.PEEK", "SLIDE", "s", "5", "1000", "OLDEST", "OLDEST"],
                "OLDEST given more than once".into(),
            ),
        ];
        for (line, want) in cases {
            let err = run(&mut c, line).expect_err("refused");
            assert_eq!(error_text(&err), format!("ERR {want}"), "{f:?}: {line:?}");
        }
        let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
        assert_eq!(keys, 0, "{f:?}: nothing written");
        // COMMAND DOCS lists it, a token without a value.
        let docs: redis::Value = redis::cmd("COMMAND")
            .arg("DOCS")
            .arg("rl.peek")
            .query(&mut c)
            .unwrap();
        let text = format!("{docs:?}");
        assert!(
            text.contains("oldest") && text.contains("pure-token"),
            "{f:?}: {text}"
        );
    });
}

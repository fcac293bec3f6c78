//! Bad input gets an error naming the problem, for every command, and
//! writes nothing: the key stays byte-identical, a WATCH on it holds, and
//! the server lives on. (Keys of another type: `wrong_types.rs`; keys rl
//! did not write: `foreign_keys.rs`.)

use crate::harness::*;

const LIMIT_RANGE: &str = "ERR limit must be an integer from 1 to 1000000";
const WINDOW_RANGE: &str = "ERR window must be an integer from 1 to 1000000000000";
const COST_RANGE: &str = "ERR COST must be an integer from 1 to 100";
const WRONG_ARITY: &str = "ERR wrong number of arguments for 'rl.slide' command";

/// RL.SLIDE: (arguments after the key, exact error text).
fn bad_slide_inputs() -> Vec<(Vec<&'static [u8]>, &'static str)> {
    vec![
        // Arity: the server checks it before the module runs.
        (vec![], WRONG_ARITY),
        (vec![b"10"], WRONG_ARITY),
        // limit
        (vec![b"ten", b"1000"], LIMIT_RANGE),
        (vec![b"0", b"1000"], LIMIT_RANGE),
        (vec![b"-5", b"1000"], LIMIT_RANGE),
        (vec![b"+5", b"1000"], LIMIT_RANGE),
        (vec![b"1.5", b"1000"], LIMIT_RANGE),
        (vec![b"", b"1000"], LIMIT_RANGE),
        (vec![b" 5", b"1000"], LIMIT_RANGE),
        (vec![b"1000001", b"1000"], LIMIT_RANGE),
        (vec![b"18446744073709551616", b"1000"], LIMIT_RANGE),
        (vec![b"99999999999999999999999999", b"1000"], LIMIT_RANGE),
        // window
        (vec![b"10", b"0"], WINDOW_RANGE),
        (vec![b"10", b"-1000"], WINDOW_RANGE),
        (vec![b"10", b"1e3"], WINDOW_RANGE),
        (vec![b"10", b"0x10"], WINDOW_RANGE),
        (vec![b"10", b"1000000000001"], WINDOW_RANGE),
        (vec![b"10", b"9223372036854775808"], WINDOW_RANGE),
        (vec![b"10", b"99999999999999999999999"], WINDOW_RANGE),
        // COST
        (vec![b"10", b"1000", b"COST", b"0"], COST_RANGE),
        (vec![b"10", b"1000", b"COST", b"-1"], COST_RANGE),
        (vec![b"10", b"1000", b"COST", b"two"], COST_RANGE),
        (
            vec![b"10", b"1000", b"COST", b"18446744073709551617"],
            COST_RANGE,
        ),
        (
            vec![b"10", b"1000", b"COST", b"11"],
            "ERR COST must not exceed limit",
        ),
        (
            vec![b"1", b"1000", b"COST", b"100"],
            "ERR COST must not exceed limit",
        ),
        (vec![b"1000", b"1000", b"COST", b"101"], COST_RANGE),
        (vec![b"10", b"1000", b"COST", b"05"], COST_RANGE),
        (vec![b"05", b"1000"], LIMIT_RANGE),
        (vec![b"10", b"1000", b"COST"], "ERR COST needs a value"),
        (vec![b"10", b"1000", b"cost"], "ERR COST needs a value"),
        (
            vec![b"10", b"1000", b"COST", b"1", b"COST", b"2"],
            "ERR COST given more than once",
        ),
        (
            vec![b"10", b"1000", b"COST", b"1", b"cost", b"1"],
            "ERR COST given more than once",
        ),
        // Unknown options, echoed safely.
        (
            vec![b"10", b"1000", b"WEIGHT", b"2"],
            "ERR unknown option 'WEIGHT'",
        ),
        (
            vec![b"10", b"1000", b"COST", b"1", b"EXTRA"],
            "ERR unknown option 'EXTRA'",
        ),
        (vec![b"10", b"1000", b"a\r\nb"], "ERR unknown option 'a??b'"),
        (
            vec![b"10", b"1000", b"\xff\xfe"],
            "ERR unknown option '\u{fffd}\u{fffd}'",
        ),
    ]
}

fn slide_on(
    c: &mut redis::Connection,
    key: &str,
    rest: &[&[u8]],
) -> redis::RedisResult<redis::Value> {
    let mut args: Vec<&[u8]> = vec![key.as_bytes()];
    args.extend_from_slice(rest);
    slide_raw(c, &args)
}

#[test]
fn bad_slide_input_gets_an_error_naming_the_argument_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // A live key, to show it is left alone too.
        slide_cost(&mut c, "held", 10, 600_000, 3);
        let held = frozen_state(&mut c, "held");
        for (rest, want) in bad_slide_inputs() {
            for key in ["absent", "held"] {
                let err = slide_on(&mut c, key, &rest)
                    .expect_err(&format!("{f:?}: {rest:?} on {key} must fail"));
                assert_eq!(error_text(&err), want, "{f:?}: RL.SLIDE {key} {rest:?}");
            }
            assert_eq!(
                exists(&mut c, &["absent"]),
                0,
                "{f:?}: {rest:?} created the key"
            );
            assert_eq!(
                frozen_state(&mut c, "held"),
                held,
                "{f:?}: {rest:?} changed the key"
            );
        }
        let pong: String = redis::cmd("PING").query(&mut c).unwrap();
        assert_eq!(pong, "PONG", "{f:?}");
        server.assert_alive();
    });
}

/// A refused call on the watched key, for every command (RL.SLIDE with
/// each of its bad inputs).
#[test]
fn bad_input_does_not_invalidate_a_watch() {
    const OTHERS: &[&[&str]] = &[
        &["RL.BUCKETS", "w", "0", "1000"],
        &["RL.COUNT", "w", "0", "ok"],
        &["RL.TOTALS", "w", "1000", "BY", "1"],
        &["RL.THROTTLE", "w", "1", "0", "1000"],
        &["CL.THROTTLE", "w", "1", "0", "1"],
        &["RL.FIXED", "w", "0", "1000"],
        &["RL.PEEK", "SLIDE", "w", "0", "1000"],
        &["RL.ALL", "1", "w", "SLIDE", "0", "1000"],
    ];
    on_every_server(|server| {
        let f = server.flavor;
        let mut watcher = server.conn();
        let mut other = server.conn();
        slide(&mut other, "w", 10, 600_000);
        let _: () = redis::cmd("WATCH").arg("w").query(&mut watcher).unwrap();
        for (rest, _) in bad_slide_inputs() {
            assert!(slide_on(&mut other, "w", &rest).is_err(), "{f:?}: {rest:?}");
        }
        for line in OTHERS {
            assert!(run(&mut other, line).is_err(), "{f:?}: {line:?}");
        }
        let _: () = redis::cmd("MULTI").query(&mut watcher).unwrap();
        let _: String = redis::cmd("PING").query(&mut watcher).unwrap();
        let exec: redis::Value = redis::cmd("EXEC").query(&mut watcher).unwrap();
        assert_ne!(
            exec,
            redis::Value::Nil,
            "{f:?}: an error aborted the watcher"
        );
    });
}

#[test]
fn bad_buckets_input_names_the_problem_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        buckets(&mut c, "u", &["5", "1000", "PRECISION", "100"]).unwrap();
        let before = frozen_state(&mut c, "u");
        let cases: &[(&[&str], &str)] = &[
            (&["5"], "wrong number of arguments"),
            (
                &["0", "1000"],
                "limit must be an integer from 1 to 100000000",
            ),
            (&["x", "1000"], "limit must be an integer"),
            (&["5", "-1"], "window must be an integer"),
            (
                &["5", "99999999999999999999999"],
                "window must be an integer",
            ),
            (&["5", "1000", "COST", "6"], "COST must not exceed limit"),
            (
                &["5", "1000", "PRECISION", "0"],
                "PRECISION must be an integer",
            ),
            (
                &["5", "1000", "PRECISION", "2000"],
                "PRECISION must not exceed window",
            ),
            (&["5", "100000", "PRECISION", "10"], "more than 250 buckets"),
            (
                &["5", "1000", "PRECISION", "50"],
                "differs from the key's bucket width (100 ms)",
            ),
            (&["5", "1000", "PRECISION"], "PRECISION needs a value"),
            (
                &["5", "1000", "COST", "1", "COST", "1"],
                "COST given more than once",
            ),
            (&["5", "1000", "FOO", "1"], "unknown option 'FOO'"),
        ];
        for (args, want) in cases {
            let text = err_text(buckets(&mut c, "u", args));
            assert!(text.contains(want), "{f:?} {args:?}: {text}");
        }
        assert_eq!(frozen_state(&mut c, "u"), before, "{f:?}");
        server.assert_alive();
    });
}

#[test]
fn bad_count_and_totals_input_names_the_problem_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        count(&mut c, "k", 1000, "ok", &["PRECISION", "100"]).unwrap();
        let before = frozen_state(&mut c, "k");
        let long = "x".repeat(33);
        let cases: &[(&str, &[&str], &str)] = &[
            ("0", &[], "ERR window must be an integer"),
            (
                "1000",
                &["BY", "0"],
                "ERR BY must be an integer from 1 to 1000000000000000",
            ),
            ("1000", &["BY"], "ERR BY needs a value"),
            (
                "1000",
                &["PRECISION", "5000"],
                "ERR PRECISION must not exceed window",
            ),
            (
                "1000",
                &["PRECISION", "10"],
                "ERR PRECISION differs from the key's bucket width (100 ms)",
            ),
            ("1000", &["COST", "1"], "ERR unknown option 'COST'"),
        ];
        for (window, extra, want) in cases {
            let mut cmd = redis::cmd("RL.COUNT");
            cmd.arg("k").arg(*window).arg("ok").arg(*extra);
            let text = err_text(cmd.query::<redis::Value>(&mut c));
            assert!(text.starts_with(want), "{f:?} {extra:?}: {text}");
        }
        for field in ["a,b", "a b", long.as_str(), ""] {
            let text = err_text(count(&mut c, "k", 1000, field, &[]));
            assert!(
                text.contains("ERR field must be 1 to 32 printable ASCII"),
                "{text}"
            );
        }
        let text = error_of(&mut c, &["RL.COUNT", "k", "1000"]);
        assert!(text.contains("wrong number of arguments"), "{text}");
        let text = err_text(totals(&mut c, "k", 1000, &["BY", "1"]));
        assert_eq!(text, "ERR unknown option 'BY'");
        assert_eq!(frozen_state(&mut c, "k"), before, "{f:?}");

        // The ninth distinct field is refused and changes nothing.
        for i in 1..8 {
            count(&mut c, "k", 1000, &format!("f{i}"), &[]).unwrap();
        }
        let full = frozen_state(&mut c, "k");
        let text = err_text(count(&mut c, "k", 1000, "ninth", &[]));
        assert_eq!(
            text,
            "ERR key already counts 8 fields, the most it may hold"
        );
        assert_eq!(frozen_state(&mut c, "k"), full);

        let _: () = redis::cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
        let before = frozen_state(&mut c, "s");
        assert!(err_text(count(&mut c, "s", 1000, "ok", &[])).starts_with("WRONGTYPE"));
        assert!(err_text(totals(&mut c, "s", 1000, &[])).starts_with("WRONGTYPE"));
        assert_eq!(frozen_state(&mut c, "s"), before);
        server.assert_alive();
    });
}

#[test]
fn bad_throttle_input_is_refused_naming_the_argument_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        throttle(&mut c, "k", [1, 1, 3_600_000], None);
        let before = frozen_state(&mut c, "k");
        let cases: &[(&[&str], &str)] = &[
            (&["RL.THROTTLE", "k", "1", "1"], "wrong number of arguments"),
            (
                &["RL.THROTTLE", "k", "1", "1", "1", "1", "1"],
                "wrong number of arguments",
            ),
            (
                &["RL.THROTTLE", "k", "-1", "1", "1000"],
                "max_burst must be an integer from 0 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "0", "1000"],
                "count must be an integer from 1 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", "1.5"],
                "period must be an integer from 1 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", "1000", "x"],
                "quantity must be an integer from 0 to",
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", "1000", "3"],
                "quantity must not exceed max_burst + 1",
            ),
            (
                &["RL.THROTTLE", "k", "0", "2000", "1"],
                "must not exceed 1 per microsecond",
            ),
            (
                &["RL.THROTTLE", "k", "1000000000000", "1", "1000"],
                "max_burst too large",
            ),
        ];
        assert_errors(&mut c, f, cases);
        assert_eq!(frozen_state(&mut c, "k"), before, "{f:?}");
    });
}

#[test]
fn bad_cl_throttle_input_is_refused_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let cases: &[(&[&str], &str)] = &[
            (&["CL.THROTTLE", "k", "1", "1"], "wrong number of arguments"),
            (
                &["CL.THROTTLE", "k", "x", "1", "1"],
                "max_burst must be an integer from 0 to",
            ),
            (
                &["CL.THROTTLE", "k", "1", "0", "1"],
                "count must be an integer from 1 to",
            ),
            (
                &["CL.THROTTLE", "k", "1", "1", "1000000001"],
                "period must be an integer from 1 to",
            ),
            (
                &["CL.THROTTLE", "k", "1", "1", "1", "-2"],
                "quantity must be an integer from 0 to",
            ),
        ];
        assert_errors(&mut c, f, cases);
        assert_eq!(exists(&mut c, &["k"]), 0, "{f:?}");
        // A hash is another type: WRONGTYPE, the key as it was.
        let _: () = redis::cmd("HSET")
            .arg("h")
            .arg("a")
            .arg(1)
            .query(&mut c)
            .unwrap();
        let before = frozen_state(&mut c, "h");
        let err = error_of(&mut c, &["CL.THROTTLE", "h", "1", "1", "1"]);
        assert!(err.starts_with("WRONGTYPE"), "{f:?}: {err}");
        assert_eq!(frozen_state(&mut c, "h"), before, "{f:?}");
    });
}

#[test]
fn bad_fixed_input_is_refused_naming_the_argument_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fixed(&mut c, "k", 5, 3_600_000, None);
        let before = frozen_state(&mut c, "k");
        let cases: &[(&[&str], &str)] = &[
            (&["RL.FIXED", "k", "5"], "wrong number of arguments"),
            (
                &["RL.FIXED", "k", "0", "1000"],
                "limit must be an integer from 1 to",
            ),
            (
                &["RL.FIXED", "k", "5", "-1"],
                "window must be an integer from 1 to",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "COST", "6"],
                "COST must not exceed limit",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "COST"],
                "COST needs a value",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "COST", "1", "COST", "1"],
                "COST given more than once",
            ),
            (
                &["RL.FIXED", "k", "5", "1000", "WEIGHT", "1"],
                "unknown option 'WEIGHT'",
            ),
        ];
        assert_errors(&mut c, f, cases);
        assert_eq!(frozen_state(&mut c, "k"), before, "{f:?}");
    });
}

#[test]
fn bad_peek_input_and_other_types_are_refused() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("SET").arg("str").arg("x").query(&mut c).unwrap();
        let _: () = redis::cmd("HSET")
            .arg("h")
            .arg("a")
            .arg("b")
            .query(&mut c)
            .unwrap();
        let cases: &[(&[&str], &str)] = &[
            (&["RL.PEEK", "SLIDE"], "wrong number of arguments"),
            (
                &["RL.PEEK", "SLIDE", "k", "3"],
                "wrong number of arguments for 'rl.peek' command (expected SLIDE key limit window [COST cost] [BLOCK ms])",
            ),
            (&["RL.PEEK", "SLIDE", "k", "05", "1000"], "limit must be an integer"),
            (
                &["RL.PEEK", "GCRA", "k", "1", "2", "3"],
                "unknown limiter 'GCRA'",
            ),
            (
                &["RL.PEEK", "SLIDE", "k", "0", "1000"],
                "limit must be an integer",
            ),
            (
                &["RL.PEEK", "FIXED", "k", "1", "1000", "COST", "2"],
                "COST must not exceed limit",
            ),
            (&["RL.PEEK", "SLIDE", "str", "1", "1000"], "WRONGTYPE"),
            (&["RL.PEEK", "BUCKETS", "str", "1", "1000"], "WRONGTYPE"),
            (&["RL.PEEK", "THROTTLE", "h", "1", "1", "1000"], "WRONGTYPE"),
            (&["RL.PEEK", "FIXED", "h", "1", "1000"], "WRONGTYPE"),
            (
                &["RL.PEEK", "FIXED", "str", "1", "1000"],
                "not an rl fixed-window counter",
            ),
        ];
        assert_errors(&mut c, f, cases);
    });
}

#[test]
fn bad_all_input_and_other_types_write_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("SET")
            .arg("{x}str")
            .arg("v")
            .query(&mut c)
            .unwrap();
        let cases: &[(&[&str], &str)] = &[
            (&["RL.ALL", "1", "{x}a"], "wrong number of arguments"),
            (
                &["RL.ALL", "2", "{x}a", "{x}b", "SLIDE", "1", "1"],
                "numkeys is 2 but 1 clause was given (one per key)",
            ),
            (
                &["RL.ALL", "1", "{x}a", "SLIDE", "1"],
                "clause 1: wrong number of arguments for 'rl.all' command (expected SLIDE limit window [COST cost] [BLOCK ms])",
            ),
            (
                &["RL.ALL", "0", "{x}a", "SLIDE", "1", "1"],
                "numkeys must be an integer from 1 to 8",
            ),
            (
                &[
                    "RL.ALL", "2", "{x}a", "{x}a", "SLIDE", "1", "1", "FIXED", "1", "1",
                ],
                "needs its own key",
            ),
            (
                &["RL.ALL", "1", "{x}a", "GCRA", "1", "1"],
                "unknown limiter 'GCRA'",
            ),
            (
                &[
                    "RL.ALL", "1", "{x}a", "SLIDE", "1", "100", "FIXED", "1", "1",
                ],
                "numkeys is 1 but 2 clauses",
            ),
            (
                &[
                    "RL.ALL", "2", "{x}a", "{x}b", "SLIDE", "5", "100", "FIXED", "0", "1",
                ],
                "clause 2: limit must be",
            ),
            (
                &[
                    "RL.ALL", "2", "{x}a", "{x}str", "SLIDE", "5", "100", "SLIDE", "1", "1",
                ],
                "WRONGTYPE",
            ),
            (
                &[
                    "RL.ALL", "2", "{x}a", "{x}str", "SLIDE", "5", "100", "FIXED", "1", "1000",
                ],
                "clause 2: key holds a string",
            ),
        ];
        assert_errors(&mut c, f, cases);
        assert_eq!(
            exists(&mut c, &["{x}a", "{x}b"]),
            0,
            "{f:?}: a refused call wrote a clause"
        );
        let v: String = redis::cmd("GET").arg("{x}str").query(&mut c).unwrap();
        assert_eq!(v, "v", "{f:?}");
    });
}

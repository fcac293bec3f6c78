//! RL.BUCKETS against real servers: reply fields, state layout, errors,
//! wrong types, denied calls writing nothing, command declarations.
mod common;

use common::buckets::*;
use common::*;

#[test]
fn reply_fields_and_hash_layout() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // 3 per minute in 60 buckets of 1 s (the default precision).
        for i in 0..3 {
            let r = buckets(&mut c, "u", &["3", "60000"]).unwrap();
            assert_eq!(r[..3], [1, 2 - i, 0], "{f:?}");
            assert!(r[3] > 59_000 && r[3] <= 60_999, "{f:?} reset {r:?}");
        }
        let r = buckets(&mut c, "u", &["3", "60000"]).unwrap();
        assert_eq!(r[..2], [0, 0], "{f:?}");
        // The admitted ones leave with their bucket: retry is the reset here.
        assert!(r[2] >= 1 && r[2] <= 60_999 && r[2] <= r[3], "{f:?} {r:?}");

        let h = header(&mut c, "u");
        assert_eq!((h.kind.as_str(), h.precision), ("b", 1000), "{f:?} {h:?}");
        assert_eq!(h.counts.len(), 2, "{f:?} {h:?}");
        assert_eq!(h.counts[0], 3, "{f:?}: the total");
        // The newest bucket's count is the header's; older ones have
        // fields, exactly those the header's held set names.
        let older = bucket_fields(&mut c, "u");
        let sum: u64 = older.values().map(|v| v.parse::<u64>().unwrap()).sum();
        assert_eq!(sum + h.counts[1], 3, "{f:?} {h:?}");
        assert_eq!(
            h.held_buckets(),
            older.keys().copied().collect::<Vec<_>>(),
            "{f:?} {h:?}"
        );
        // The key lives until the newest bucket leaves the window, and at
        // most window/4 longer.
        let needed = (h.newest + 1) * 1000 - 1 + 60_000;
        let expire: i64 = redis::cmd("PEXPIRETIME").arg("u").query(&mut c).unwrap();
        assert!(
            (needed..=needed + 15_000).contains(&expire),
            "{f:?}: expiry {expire}, needed {needed}"
        );
        let enc: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg("u")
            .query(&mut c)
            .unwrap();
        assert_eq!(enc, "listpack", "{f:?}");
    });
}

#[test]
fn cost_and_precision_options() {
    on_every_server(|server| {
        let mut c = server.conn();
        let r = buckets(
            &mut c,
            "u",
            &["10", "1000", "PRECISION", "100", "COST", "4"],
        )
        .unwrap();
        assert_eq!(r[..3], [1, 6, 0]);
        // The bucket leaves `window` ms after its last ms: 1000 to 1099 ms away.
        assert!((1000..=1099).contains(&r[3]), "{r:?}");
        let r = buckets(&mut c, "u", &["10", "1000", "cost", "7"]).unwrap();
        assert_eq!(r[..2], [0, 6]);
        assert_eq!(header(&mut c, "u").precision, 100);
    });
}

#[test]
fn denied_request_writes_nothing() {
    on_every_server(|server| {
        let mut c = server.conn();
        buckets(&mut c, "u", &["1", "60000"]).unwrap();
        let before = snapshot(&mut c, "u");
        for _ in 0..5 {
            assert_eq!(buckets(&mut c, "u", &["1", "60000"]).unwrap()[0], 0);
        }
        let after = snapshot(&mut c, "u");
        assert_eq!(before.0, after.0, "{:?}", server.flavor);
        assert!(after.1 <= before.1 && after.1 > 0);
    });
}

#[test]
fn bad_input_names_the_problem_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        buckets(&mut c, "u", &["5", "1000", "PRECISION", "100"]).unwrap();
        let before = snapshot(&mut c, "u");
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
            (
                &["5", "100000", "PRECISION", "10"],
                "more than 1000 buckets",
            ),
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
        assert_eq!(snapshot(&mut c, "u").0, before.0, "{f:?}");
        server.assert_alive();
    });
}

#[test]
fn other_types_get_wrongtype_and_stay_untouched() {
    on_every_server(|server| {
        let mut c = server.conn();
        let _: () = redis::cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
        let _: () = redis::cmd("ZADD")
            .arg("z")
            .arg(1)
            .arg("m")
            .query(&mut c)
            .unwrap();
        for key in ["s", "z"] {
            let before = snapshot(&mut c, key);
            let text = err_text(buckets(&mut c, key, &["5", "1000"]));
            assert!(text.contains("WRONGTYPE"), "{text}");
            assert_eq!(snapshot(&mut c, key), before);
        }
        // A hash rl did not write is refused, not reinterpreted.
        let _: () = redis::cmd("HSET")
            .arg("h")
            .arg("name")
            .arg("x")
            .query(&mut c)
            .unwrap();
        let before = snapshot(&mut c, "h");
        let text = err_text(buckets(&mut c, "h", &["5", "1000"]));
        assert!(text.contains("hash that rl did not write"), "{text}");
        assert_eq!(snapshot(&mut c, "h"), before);
    });
}

#[test]
fn buckets_and_count_keys_are_not_interchangeable() {
    on_every_server(|server| {
        let mut c = server.conn();
        buckets(&mut c, "b", &["5", "1000"]).unwrap();
        count(&mut c, "c", 1000, "ok", &[]).unwrap();
        let (b0, c0) = (snapshot(&mut c, "b"), snapshot(&mut c, "c"));
        let text = err_text(count(&mut c, "b", 1000, "ok", &[]));
        assert_eq!(text, "ERR key holds RL.BUCKETS state, not RL.COUNT state");
        let text = err_text(totals(&mut c, "b", 1000, &[]));
        assert_eq!(text, "ERR key holds RL.BUCKETS state, not RL.COUNT state");
        let text = err_text(buckets(&mut c, "c", &["5", "1000"]));
        assert_eq!(text, "ERR key holds RL.COUNT state, not RL.BUCKETS state");
        assert_eq!(snapshot(&mut c, "b").0, b0.0);
        assert_eq!(snapshot(&mut c, "c").0, c0.0);
    });
}

#[test]
fn commands_are_declared_with_flags_and_key_specs() {
    on_every_server(|server| {
        let mut c = server.conn();
        for (name, flag) in [
            ("rl.buckets", "write"),
            ("rl.count", "write"),
            ("rl.totals", "readonly"),
        ] {
            let info: redis::Value = redis::cmd("COMMAND")
                .arg("INFO")
                .arg(name)
                .query(&mut c)
                .unwrap();
            let text = format!("{info:?}");
            assert!(text.contains(flag), "{name}: {text}");
            let keys: Vec<String> = redis::cmd("COMMAND")
                .arg("GETKEYS")
                .arg(name)
                .arg("k1")
                .arg("10")
                .arg("1000")
                .query(&mut c)
                .unwrap();
            assert_eq!(keys, ["k1"], "{name}");
        }
    });
}

#[test]
fn works_inside_multi_and_lua() {
    on_every_server(|server| {
        let mut c = server.conn();
        let (a, b): (Vec<i64>, Vec<i64>) = redis::pipe()
            .atomic()
            .cmd("RL.BUCKETS")
            .arg("m")
            .arg(1)
            .arg(60_000)
            .cmd("RL.BUCKETS")
            .arg("m")
            .arg(1)
            .arg(60_000)
            .query(&mut c)
            .unwrap();
        assert_eq!((a[0], b[0]), (1, 0));
        let r: Vec<i64> = redis::cmd("EVAL")
            .arg("return redis.call('RL.BUCKETS', KEYS[1], 2, 60000)")
            .arg(1)
            .arg("lua")
            .query(&mut c)
            .unwrap();
        assert_eq!(r[..2], [1, 1]);
    });
}

#[test]
fn idle_keys_expire() {
    on_every_server(|server| {
        let mut c = server.conn();
        buckets(&mut c, "idle", &["5", "200", "PRECISION", "50"]).unwrap();
        count(&mut c, "idle-c", 200, "ok", &[]).unwrap();
        let start = std::time::Instant::now();
        loop {
            let n: i64 = redis::cmd("EXISTS")
                .arg("idle")
                .arg("idle-c")
                .query(&mut c)
                .unwrap();
            if n == 0 {
                break;
            }
            assert!(start.elapsed().as_secs() < 20, "keys did not expire");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
}

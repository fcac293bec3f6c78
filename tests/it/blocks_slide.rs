//! Blocks on RL.SLIDE (`BLOCK ms`, `RL.BLOCK SLIDE`, `RL.UNBLOCK SLIDE`),
//! kept as the log's member `rl block` at the block's end: the first
//! denial blocks the key; while the block holds every call is denied and
//! writes nothing; charges and refunds keep it; RL.UNBLOCK keeps the
//! entries; replicas and the AOF hold the same state; sorted sets rl did
//! not write are refused untouched.

use crate::harness::*;

fn ints(v: &redis::Value) -> Vec<i64> {
    match v {
        redis::Value::Array(items) => items
            .iter()
            .map(|i| match i {
                redis::Value::Int(n) => *n,
                other => panic!("not an integer: {other:?}"),
            })
            .collect(),
        redis::Value::Int(n) => vec![*n],
        other => panic!("not an array: {other:?}"),
    }
}

fn call(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    ints(&run(c, line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
}

/// The log's members and scores, oldest first.
fn entries(c: &mut redis::Connection, key: &str) -> Vec<(String, i64)> {
    redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(c)
        .unwrap()
}

/// The block's end the log holds, if any.
fn block_end(c: &mut redis::Connection, key: &str) -> Option<i64> {
    redis::cmd("ZSCORE")
        .arg(key)
        .arg("rl block")
        .query::<Option<i64>>(c)
        .unwrap()
}

/// A key's whole state (members and expiry), the server's change counter
/// and its replication offset: unmoved means nothing was written.
fn untouched(c: &mut redis::Connection, key: &str) -> ((Plain, i64), i64, i64) {
    (plain_key(c, key.as_bytes()), changes(c), repl_offset(c))
}

const HOUR: &str = "3600000";

#[test]
fn the_first_denial_blocks_and_a_blocked_denial_writes_nothing() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let line = ["RL.SLIDE", "k", "2", HOUR, "BLOCK", "5000"];
        assert_eq!(call(&mut c, &line)[0], 1, "{f:?}");
        assert_eq!(call(&mut c, &line)[0], 1, "{f:?}");
        let before = entries(&mut c, "k");
        let t0 = server_ms(&mut c);
        // The breach answers as the block does.
        assert_eq!(call(&mut c, &line), [0, 0, 5000, 5000], "{f:?}");
        let until = block_end(&mut c, "k").expect("a block");
        assert!(until >= t0 + 5000 && until < t0 + 7000, "{f:?}");
        let mut want = before.clone();
        want.push(("rl block".into(), until));
        assert_eq!(
            entries(&mut c, "k"),
            want,
            "{f:?}: the entries as they were"
        );
        assert!(pexpiretime(&mut c, "k") >= until, "{f:?}");
        let blocked_before = rl_info(&mut c)["slide_blocked"];

        // Every call while it holds: denied with the block's time left,
        // nothing written (members, expiry, change counter, replication).
        let frozen = untouched(&mut c, "k");
        let peek = ["RL.PEEK", "SLIDE", "k", "2", HOUR];
        let roomy = ["RL.SLIDE", "k", "100", HOUR];
        let all = ["RL.ALL", "1", "k", "SLIDE", "100", HOUR];
        for l in [&line[..], &line[..4], &roomy[..], &peek[..]] {
            let r = call(&mut c, l);
            let now = server_ms(&mut c);
            assert_eq!(r[..2], [0, 0], "{f:?} {l:?}");
            assert_eq!(r[2], r[3], "{f:?} {l:?}");
            assert!(
                r[2] <= until - t0 && r[2] >= until - now,
                "{f:?} {l:?}: {r:?}"
            );
            if server.clock_stopped() {
                assert_eq!(r[2], until - now, "{f:?} {l:?}");
            }
            assert_eq!(untouched(&mut c, "k"), frozen, "{f:?} {l:?}");
        }
        let a = parse_all(&run(&mut c, &all).unwrap());
        assert_eq!((a.allowed, a.clauses[0][0]), (0, 0), "{f:?}");
        assert_eq!(untouched(&mut c, "k"), frozen, "{f:?}");
        // The three calls of RL.SLIDE itself (a peek is no call of it).
        assert_eq!(
            rl_info(&mut c)["slide_blocked"],
            blocked_before + 3,
            "{f:?}"
        );
        if server.clock_stopped() {
            // One ms before its end the block holds; at its end the log
            // decides again (still full), and an admission drops the
            // member.
            server.advance((until - server_ms(&mut c) - 1) as u64);
            assert_eq!(call(&mut c, &line[..4]), [0, 0, 1, 1], "{f:?}");
            server.advance(1);
            let frozen = untouched(&mut c, "k");
            let r = call(&mut c, &line[..4]);
            assert_eq!((r[0], r[1]), (0, 0), "{f:?}: the window is still full");
            assert!(r[2] > 3_000_000, "{f:?}: the window's wait: {r:?}");
            assert_eq!(untouched(&mut c, "k"), frozen, "{f:?}");
            assert_eq!(call(&mut c, &roomy)[..2], [1, 97], "{f:?}");
            assert_eq!(block_end(&mut c, "k"), None, "{f:?}");
            assert_eq!(entries(&mut c, "k").len(), 3, "{f:?}");
        }
    });
}

#[test]
fn block_and_unblock_by_hand_keep_the_entries() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // A ban on a key never seen: the log holds the block alone.
        let t0 = server_ms(&mut c);
        let until = call(&mut c, &["RL.BLOCK", "SLIDE", "ban", "60000"])[0];
        assert!(until >= t0 + 60_000 && until < t0 + 62_000, "{f:?}");
        assert_eq!(
            entries(&mut c, "ban"),
            [("rl block".to_string(), until)],
            "{f:?}"
        );
        assert_eq!(pexpiretime(&mut c, "ban"), until, "{f:?}");
        let r = call(&mut c, &["RL.SLIDE", "ban", "5", HOUR]);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "SLIDE", "ban"]), [1], "{f:?}");
        assert_eq!(
            exists(&mut c, &["ban"]),
            0,
            "{f:?}: the block was all it held"
        );

        // Entries survive a block and its lifting.
        for _ in 0..2 {
            assert_eq!(call(&mut c, &["RL.SLIDE", "n", "5", HOUR])[0], 1, "{f:?}");
        }
        let counted = entries(&mut c, "n");
        let until = call(&mut c, &["RL.BLOCK", "SLIDE", "n", "7200000"])[0];
        assert_eq!(block_end(&mut c, "n"), Some(until), "{f:?}");
        assert_eq!(pexpiretime(&mut c, "n"), until, "{f:?}");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "SLIDE", "n"]), [1], "{f:?}");
        assert_eq!(entries(&mut c, "n"), counted, "{f:?}");
        // Nothing to lift: 0, nothing written.
        let frozen = untouched(&mut c, "n");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "SLIDE", "n"]), [0], "{f:?}");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "SLIDE", "none"]), [0], "{f:?}");
        assert_eq!(untouched(&mut c, "n"), frozen, "{f:?}");
        assert_eq!(exists(&mut c, &["none"]), 0, "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.SLIDE", "n", "5", HOUR])[..2],
            [1, 2],
            "{f:?}"
        );

        // RL.REFUND and RL.CHARGE keep a block that holds; the charge's
        // peek after is the block's.
        call(&mut c, &["RL.BLOCK", "SLIDE", "n", "60000"]);
        let r = call(&mut c, &["RL.REFUND", "SLIDE", "n", "5", HOUR]);
        assert_eq!(r[..2], [1, 0], "{f:?}: refunded, still blocked");
        let r = call(&mut c, &["RL.CHARGE", "SLIDE", "n", "5", HOUR, "COST", "9"]);
        assert_eq!(r[..2], [9, 0], "{f:?}: charged, still blocked");
        assert!(r[2] > 50_000 && r[2] == r[3], "{f:?} {r:?}");
        let now = entries(&mut c, "n");
        assert_eq!(now.len(), 2 + 9 + 1, "{f:?}: {now:?}");
        assert_eq!(now.last().unwrap().0, "rl block", "{f:?}: the newest");
    });
}

#[test]
fn replicas_and_the_aof_hold_the_blocked_state() {
    crate::blocks::replicas_and_aof_hold(4, "rl block", |flavor, p| {
        for _ in 0..4 {
            call(p, &["RL.SLIDE", "r", "2", HOUR, "BLOCK", "600000"]);
        }
        call(p, &["RL.BLOCK", "SLIDE", "ban", "600000"]);
        call(p, &["RL.SLIDE", "lift", "3", HOUR]);
        call(p, &["RL.BLOCK", "SLIDE", "lift", "600000"]);
        call(p, &["RL.CHARGE", "SLIDE", "lift", "3", HOUR, "COST", "2"]);
        call(p, &["RL.UNBLOCK", "SLIDE", "lift"]);
        call(p, &["RL.BLOCK", "SLIDE", "gone", "600000"]);
        call(p, &["RL.UNBLOCK", "SLIDE", "gone"]);
        // A block that ended, then an admission that drops its member.
        call(p, &["RL.SLIDE", "end", "3", HOUR]);
        call(p, &["RL.BLOCK", "SLIDE", "end", "1"]);
        std::thread::sleep(std::time::Duration::from_millis(5));
        call(p, &["RL.SLIDE", "end", "3", HOUR]);
        assert_eq!(block_end(p, "end"), None, "{flavor:?}");
    });
}

#[test]
fn bad_lines_and_foreign_sorted_sets_are_refused_and_left() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        call(&mut c, &["RL.SLIDE", "k", "5", HOUR]);
        // rl's shape, no TTL: not rl's.
        let _: () = redis::cmd("ZADD")
            .arg("user")
            .arg(99_999_999_999i64)
            .arg("rl block")
            .query(&mut c)
            .unwrap();
        let max = "1000000000000";
        let cases: &[(&[&str], &str, String)] = &[
            (
                &["RL.SLIDE", "k", "5", HOUR, "BLOCK", "0"],
                "k",
                format!("ERR BLOCK must be an integer from 1 to {max}"),
            ),
            (
                &["RL.SLIDE", "k", "5", HOUR, "BLOCK"],
                "k",
                "ERR BLOCK needs a value".into(),
            ),
            (
                &["RL.SLIDE", "k", "5", HOUR, "BLOCK", "1", "block", "1"],
                "k",
                "ERR BLOCK given more than once".into(),
            ),
            (
                &["RL.BLOCK", "SLIDE", "k", "0"],
                "k",
                format!("ERR ms must be an integer from 1 to {max}"),
            ),
            (
                &["RL.BLOCK", "SLIDE", "user", "5"],
                "user",
                "ERR key holds a sorted set that rl did not write".into(),
            ),
            (
                &["RL.UNBLOCK", "SLIDE", "user"],
                "user",
                "ERR key holds a sorted set that rl did not write".into(),
            ),
            (
                &["RL.SLIDE", "user", "5", HOUR],
                "user",
                "ERR key holds a sorted set that rl did not write".into(),
            ),
        ];
        for (line, key, want) in cases {
            let frozen = untouched(&mut c, key);
            assert_eq!(error_of(&mut c, line), *want, "{f:?} {line:?}");
            assert_eq!(untouched(&mut c, key), frozen, "{f:?} {line:?}");
        }
        // Block members rl does not write, on a key with a TTL: a score
        // that is no block's end, or the integer that stands for the
        // block's member.
        for (score, member) in [
            ("-5", "rl block"),
            ("1.5", "rl block"),
            ("+inf", "rl block"),
            ("5", "-9223372036854775808"),
        ] {
            let _: () = redis::cmd("DEL").arg("x").query(&mut c).unwrap();
            let _: () = redis::cmd("ZADD")
                .arg("x")
                .arg(score)
                .arg(member)
                .query(&mut c)
                .unwrap();
            let _: () = redis::cmd("PEXPIRE")
                .arg("x")
                .arg(HOUR)
                .query(&mut c)
                .unwrap();
            let frozen = untouched(&mut c, "x");
            for line in [
                &["RL.SLIDE", "x", "5", HOUR, "BLOCK", "9"][..],
                &["RL.BLOCK", "SLIDE", "x", "9"],
                &["RL.UNBLOCK", "SLIDE", "x"],
                &["RL.PEEK", "SLIDE", "x", "5", HOUR],
            ] {
                assert_eq!(
                    error_of(&mut c, line),
                    "ERR key holds a sorted set that rl did not write",
                    "{f:?} {score} {member} {line:?}"
                );
                assert_eq!(untouched(&mut c, "x"), frozen, "{f:?} {score}");
            }
        }
    });
}

/// `WAIT` on a key whose block outlasts the timeout answers at once with
/// the block's wait, and writes nothing.
#[test]
fn wait_on_a_longer_block_answers_at_once() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        call(&mut c, &["RL.BLOCK", "SLIDE", "w", "60000"]);
        let frozen = untouched(&mut c, "w");
        let r = call(&mut c, &["RL.SLIDE", "w", "5", HOUR, "WAIT", "500"]);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert!(r[2] > 50_000 && r[2] == r[3], "{f:?} {r:?}");
        assert_eq!(untouched(&mut c, "w"), frozen, "{f:?}");
    });
}

//! Blocks on RL.BUCKETS (`BLOCK ms`, `RL.BLOCK BUCKETS`, `RL.UNBLOCK
//! BUCKETS`), kept as the header's last item `b<end>`: the first denial
//! blocks the key; while the block holds every call is denied and writes
//! nothing; charges and refunds keep it; RL.UNBLOCK keeps the counts;
//! replicas and the AOF hold the same state; keys of earlier releases and
//! keys rl did not write are read as before.

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

fn header(c: &mut redis::Connection, key: &str) -> Option<String> {
    redis::cmd("HGET").arg(key).arg("h").query(c).unwrap()
}

/// A key's whole state (fields and expiry), the server's change counter
/// and its replication offset: unmoved means nothing was written.
fn untouched(c: &mut redis::Connection, key: &str) -> ((Plain, i64), i64, i64) {
    (plain_key(c, key.as_bytes()), changes(c), repl_offset(c))
}

const HOUR: &str = "3600000";

/// The block's end a header carries, if it has one.
fn block_end(h: &str) -> Option<i64> {
    h.rsplit_once(",b").and_then(|(_, u)| u.parse().ok())
}

#[test]
fn the_first_denial_blocks_and_a_blocked_denial_writes_nothing() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let line = ["RL.BUCKETS", "k", "2", HOUR, "BLOCK", "5000"];
        assert_eq!(call(&mut c, &line)[0], 1, "{f:?}");
        assert_eq!(call(&mut c, &line)[0], 1, "{f:?}");
        let before = header(&mut c, "k").unwrap();
        let t0 = server_ms(&mut c);
        // The breach answers as the block it sets (not the hour's wait);
        // the header gains the block and the key lives at least until its
        // end.
        assert_eq!(call(&mut c, &line), [0, 0, 5000, 5000], "{f:?}");
        let h = header(&mut c, "k").unwrap();
        let until = block_end(&h).expect("a block");
        assert_eq!(h, format!("{before},b{until}"), "{f:?}");
        assert!(until >= t0 + 5000 && until < t0 + 7000, "{f:?}");
        assert!(pexpiretime(&mut c, "k") >= until, "{f:?}");
        let blocked_before = rl_info(&mut c)["buckets_blocked"];

        // Every call while it holds: denied with the block's time left,
        // nothing written (fields, expiry, change counter, replication).
        let frozen = untouched(&mut c, "k");
        let peek = ["RL.PEEK", "BUCKETS", "k", "2", HOUR];
        let roomy = ["RL.BUCKETS", "k", "100", HOUR, "PRECISION", "60000"];
        let all = ["RL.ALL", "1", "k", "BUCKETS", "100", HOUR];
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
        // The three calls of RL.BUCKETS itself (a peek is no call of it).
        let info = rl_info(&mut c);
        assert_eq!(info["buckets_blocked"], blocked_before + 3, "{f:?}");
        if server.clock_stopped() {
            // One ms before its end the block holds; at its end the window
            // decides again (still full), and an admission drops the item.
            server.advance((until - server_ms(&mut c) - 1) as u64);
            assert_eq!(call(&mut c, &line[..4])[..3], [0, 0, 1], "{f:?}");
            server.advance(1);
            let frozen = untouched(&mut c, "k");
            let r = call(&mut c, &line[..4]);
            assert_eq!((r[0], r[1]), (0, 0), "{f:?}: the window is still full");
            assert!(r[2] > 3_000_000, "{f:?}: the window's wait: {r:?}");
            assert_eq!(untouched(&mut c, "k"), frozen, "{f:?}");
            assert_eq!(call(&mut c, &roomy)[0], 1, "{f:?}");
            let h = header(&mut c, "k").unwrap();
            assert_eq!(block_end(&h), None, "{f:?}: {h}");
        }
    });
}

#[test]
fn block_and_unblock_by_hand_keep_the_counts() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // A ban on a key never seen: the header holds the block alone.
        let t0 = server_ms(&mut c);
        let until = call(&mut c, &["RL.BLOCK", "BUCKETS", "ban", "60000"])[0];
        assert!(until >= t0 + 60_000 && until < t0 + 62_000, "{f:?}");
        assert_eq!(header(&mut c, "ban"), Some(format!("b,b{until}")), "{f:?}");
        assert_eq!(pexpiretime(&mut c, "ban"), until, "{f:?}");
        let r = call(&mut c, &["RL.BUCKETS", "ban", "5", HOUR]);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.UNBLOCK", "BUCKETS", "ban"]),
            [1],
            "{f:?}"
        );
        assert_eq!(
            exists(&mut c, &["ban"]),
            0,
            "{f:?}: the block was all it held"
        );

        // Counts survive a block and its lifting; the expiry the block
        // gave the key stays (the hash does not store its window).
        for _ in 0..2 {
            assert_eq!(call(&mut c, &["RL.BUCKETS", "n", "5", HOUR])[0], 1, "{f:?}");
        }
        let counted = header(&mut c, "n").unwrap();
        let until = call(&mut c, &["RL.BLOCK", "BUCKETS", "n", "7200000"])[0];
        assert_eq!(
            header(&mut c, "n"),
            Some(format!("{counted},b{until}")),
            "{f:?}"
        );
        assert_eq!(pexpiretime(&mut c, "n"), until, "{f:?}");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "BUCKETS", "n"]), [1], "{f:?}");
        assert_eq!(header(&mut c, "n"), Some(counted), "{f:?}");
        assert_eq!(pexpiretime(&mut c, "n"), until, "{f:?}");
        // Nothing to lift: 0, nothing written.
        let frozen = untouched(&mut c, "n");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "BUCKETS", "n"]), [0], "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.UNBLOCK", "BUCKETS", "none"]),
            [0],
            "{f:?}"
        );
        assert_eq!(untouched(&mut c, "n"), frozen, "{f:?}");
        assert_eq!(exists(&mut c, &["none"]), 0, "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.BUCKETS", "n", "5", HOUR])[..2],
            [1, 2],
            "{f:?}"
        );

        // RL.REFUND and RL.CHARGE keep a block that holds; the charge's
        // peek after is the block's.
        call(&mut c, &["RL.BLOCK", "BUCKETS", "n", "60000"]);
        let r = call(&mut c, &["RL.REFUND", "BUCKETS", "n", "5", HOUR]);
        assert_eq!(r[..2], [1, 0], "{f:?}: refunded, still blocked");
        let r = call(
            &mut c,
            &["RL.CHARGE", "BUCKETS", "n", "5", HOUR, "COST", "9"],
        );
        assert_eq!(r[..2], [9, 0], "{f:?}: charged, still blocked");
        assert!(r[2] > 50_000 && r[2] == r[3], "{f:?} {r:?}");
        let h = header(&mut c, "n").unwrap();
        assert!(block_end(&h).is_some() && h.contains(",11,"), "{f:?} {h}");
    });
}

#[test]
fn replicas_and_the_aof_hold_the_blocked_state() {
    crate::blocks::replicas_and_aof_hold(3, "DEL", |_, p| {
        for _ in 0..4 {
            call(p, &["RL.BUCKETS", "r", "2", HOUR, "BLOCK", "600000"]);
        }
        call(p, &["RL.BLOCK", "BUCKETS", "ban", "600000"]);
        call(p, &["RL.BUCKETS", "lift", "3", HOUR]);
        call(p, &["RL.BLOCK", "BUCKETS", "lift", "600000"]);
        call(p, &["RL.CHARGE", "BUCKETS", "lift", "3", HOUR, "COST", "2"]);
        call(p, &["RL.UNBLOCK", "BUCKETS", "lift"]);
        call(p, &["RL.BLOCK", "BUCKETS", "gone", "600000"]);
        call(p, &["RL.UNBLOCK", "BUCKETS", "gone"]);
    });
}

#[test]
fn bad_lines_and_foreign_hashes_are_refused_and_left() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        call(&mut c, &["RL.BUCKETS", "k", "5", HOUR]);
        run(&mut c, &["RL.COUNT", "cnt", HOUR, "x"]).unwrap();
        let _: () = redis::cmd("HSET")
            .arg("user")
            .arg("h")
            .arg("b,b99999999999")
            .query(&mut c)
            .unwrap();
        let max = "1000000000000";
        let cases: &[(&[&str], &str, String)] = &[
            (
                &["RL.BUCKETS", "k", "5", HOUR, "BLOCK", "0"],
                "k",
                format!("ERR BLOCK must be an integer from 1 to {max}"),
            ),
            (
                &["RL.BUCKETS", "k", "5", HOUR, "BLOCK"],
                "k",
                "ERR BLOCK needs a value".into(),
            ),
            (
                &["RL.BUCKETS", "k", "5", HOUR, "BLOCK", "1", "block", "1"],
                "k",
                "ERR BLOCK given more than once".into(),
            ),
            (
                &["RL.BLOCK", "BUCKETS", "k", "0"],
                "k",
                format!("ERR ms must be an integer from 1 to {max}"),
            ),
            (
                &["RL.BLOCK", "BUCKETS", "cnt", "5"],
                "cnt",
                "ERR key holds RL.COUNT state, not RL.BUCKETS state".into(),
            ),
            (
                &["RL.UNBLOCK", "BUCKETS", "cnt"],
                "cnt",
                "ERR key holds RL.COUNT state, not RL.BUCKETS state".into(),
            ),
            // A hash with rl's shape but no TTL is not rl's.
            (
                &["RL.BLOCK", "BUCKETS", "user", "5"],
                "user",
                "ERR key holds a hash that rl did not write".into(),
            ),
            (
                &["RL.UNBLOCK", "BUCKETS", "user"],
                "user",
                "ERR key holds a hash that rl did not write".into(),
            ),
            (
                &["RL.BUCKETS", "user", "5", HOUR],
                "user",
                "ERR key holds a hash that rl did not write".into(),
            ),
        ];
        for (line, key, want) in cases {
            let frozen = untouched(&mut c, key);
            assert_eq!(error_of(&mut c, line), *want, "{f:?} {line:?}");
            assert_eq!(untouched(&mut c, key), frozen, "{f:?} {line:?}");
        }
        // Block items rl does not write, on a key with a TTL.
        for bad in [
            "b,100,5,0,1,1,b",
            "b,100,5,0,1,1,b1,b2",
            "b,b1,1",
            "b,100,5,0,1,b9,1",
        ] {
            let _: () = redis::cmd("HSET")
                .arg("x")
                .arg("h")
                .arg(bad)
                .query(&mut c)
                .unwrap();
            let _: () = redis::cmd("PEXPIRE")
                .arg("x")
                .arg(HOUR)
                .query(&mut c)
                .unwrap();
            let frozen = untouched(&mut c, "x");
            for line in [
                &["RL.BUCKETS", "x", "5", HOUR, "BLOCK", "9"][..],
                &["RL.BLOCK", "BUCKETS", "x", "9"],
                &["RL.UNBLOCK", "BUCKETS", "x"],
            ] {
                assert_eq!(
                    error_of(&mut c, line),
                    "ERR key holds a hash that rl did not write",
                    "{f:?} {bad} {line:?}"
                );
                assert_eq!(untouched(&mut c, "x"), frozen, "{f:?} {bad}");
            }
        }
    });
}

/// A key written before blocks (padded counts, as releases before 0.2
/// wrote them) blocks and unblocks, its counts read as before.
#[test]
fn a_key_of_an_earlier_release_blocks_and_keeps_its_counts() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let now = server_ms(&mut c);
        let b = now / 60_000;
        let old = format!("b,60000,{b},0,000000002,000000002");
        let _: () = redis::cmd("HSET")
            .arg("old")
            .arg("h")
            .arg(&old)
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("PEXPIRE")
            .arg("old")
            .arg(HOUR)
            .query(&mut c)
            .unwrap();
        let r = call(&mut c, &["RL.BUCKETS", "old", "2", HOUR, "BLOCK", "60000"]);
        assert_eq!(r[..2], [0, 0], "{f:?}: two counted");
        let h = header(&mut c, "old").unwrap();
        assert_eq!(
            h.rsplit_once(",b").unwrap().0,
            old,
            "{f:?}: the state as stored"
        );
        assert_eq!(
            call(&mut c, &["RL.UNBLOCK", "BUCKETS", "old"]),
            [1],
            "{f:?}"
        );
        assert_eq!(header(&mut c, "old"), Some(old), "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.BUCKETS", "old", "3", HOUR])[..2],
            [1, 0],
            "{f:?}"
        );
    });
}

/// `WAIT` on a key whose block outlasts the timeout answers at once with
/// the block's wait, as for THROTTLE and FIXED, and writes nothing.
#[test]
fn wait_on_a_longer_block_answers_at_once() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        call(&mut c, &["RL.BLOCK", "BUCKETS", "w", "60000"]);
        let frozen = untouched(&mut c, "w");
        let r = call(&mut c, &["RL.BUCKETS", "w", "5", HOUR, "WAIT", "500"]);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert!(r[2] > 50_000 && r[2] == r[3], "{f:?} {r:?}");
        assert_eq!(untouched(&mut c, "w"), frozen, "{f:?}");
    });
}

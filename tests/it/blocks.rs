//! Blocks (`BLOCK ms`, `RL.BLOCK`, `RL.UNBLOCK`) on RL.THROTTLE and
//! RL.FIXED: the first denial blocks the key; while the block holds every
//! call is denied, writes nothing and counts nothing, its wait the block's
//! time left; RL.UNBLOCK keeps the counts; replicas and the AOF hold the
//! same state; bad lines are refused by name with the key untouched.

use std::time::Duration;

use redis::Value;

use crate::harness::*;

fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Int(n) => *n,
                other => panic!("not an integer: {other:?}"),
            })
            .collect(),
        Value::Int(n) => vec![*n],
        other => panic!("not an array: {other:?}"),
    }
}

fn call(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    ints(&run(c, line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
}

/// What a blocked key must keep unchanged: its bytes and expiry, the
/// server's change counter and its replication offset.
fn untouched(c: &mut redis::Connection, key: &str) -> ((Option<String>, i64), i64, i64) {
    (value_and_expiry(c, key), changes(c), repl_offset(c))
}

const HOUR: &str = "3600000";

/// The lines that breach on their third call (limit 2 per hour), with a
/// block of 5 s, for each string limiter.
fn breaching(key: &str) -> [Vec<&str>; 2] {
    [
        vec!["RL.FIXED", key, "2", HOUR, "BLOCK", "5000"],
        vec!["RL.THROTTLE", key, "1", "1", HOUR, "BLOCK", "5000"],
    ]
}

#[test]
fn the_first_denial_blocks_and_a_blocked_denial_writes_nothing() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for line in breaching("k") {
            let key = format!("{}:k", line[0]);
            let mut line = line.clone();
            line[1] = &key;
            let name = line[0];
            let field = name.strip_prefix("RL.").unwrap().to_lowercase();
            assert_eq!(call(&mut c, &line)[0], 1, "{f:?} {name}");
            assert_eq!(call(&mut c, &line)[0], 1, "{f:?} {name}");
            let before = value_and_expiry(&mut c, &key);
            let t0 = server_ms(&mut c);
            let first = call(&mut c, &line);
            // The breach itself answers as the block it sets (the limiter's
            // own wait, an hour here, would be wrong either way); the block
            // is the value's suffix and the key lives until its end.
            assert_eq!(first, [0, 0, 5000, 5000], "{f:?} {name}");
            let (value, at) = value_and_expiry(&mut c, &key);
            let value = value.unwrap();
            let (state, rest) = value.split_once('e').expect("a blocked value");
            let (own, until) = rest.split_once('b').unwrap();
            assert_eq!(Some(state), before.0.as_deref(), "{f:?} {name}: {value}");
            assert_eq!(
                own.parse::<i64>().unwrap(),
                before.1,
                "{f:?} {name}: {value}"
            );
            let until: i64 = until.parse().unwrap();
            assert!(
                until >= t0 + 5000 && until < t0 + 5000 + 2000,
                "{f:?} {name}"
            );
            assert_eq!(at, until.max(before.1), "{f:?} {name}");
            let blocked_before = rl_info(&mut c)[&format!("{field}_blocked")];

            // Every call while it holds: denied, the wait the block's time
            // left, nothing written (bytes, change counter, replication).
            let frozen = untouched(&mut c, &key);
            let peek: Vec<&str> = ["RL.PEEK", &name[3..]]
                .into_iter()
                .chain(line[1..].iter().copied())
                .collect();
            let without_block = &line[..line.len() - 2];
            for l in [&line[..], without_block, &peek[..]] {
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
                assert_eq!(untouched(&mut c, &key), frozen, "{f:?} {l:?}");
            }
            let info = rl_info(&mut c);
            assert_eq!(
                info[&format!("{field}_blocked")],
                blocked_before + 2,
                "{f:?}"
            );
            if server.clock_stopped() {
                // One ms before its end the block holds; at its end the
                // limiter decides again and the value is plain.
                server.advance((until - server_ms(&mut c) - 1) as u64);
                assert_eq!(call(&mut c, without_block)[..3], [0, 0, 1], "{f:?} {name}");
                server.advance(1);
                let r = call(&mut c, without_block);
                let (value, _) = value_and_expiry(&mut c, &key);
                let value = value.unwrap();
                if r[0] == 1 {
                    assert!(!value.contains('b'), "{f:?} {name}: {value}");
                } else {
                    assert_eq!(value, format!("{state}e{own}b{until}"), "{f:?} {name}");
                }
            }
        }
    });
}

#[test]
fn block_and_unblock_by_hand_keep_the_counts() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // A ban on a key never seen: the limiter's empty state, blocked.
        let t0 = server_ms(&mut c);
        let until = call(&mut c, &["RL.BLOCK", "FIXED", "ban", "60000"])[0];
        assert!(until >= t0 + 60_000 && until < t0 + 62_000, "{f:?}");
        let (value, at) = value_and_expiry(&mut c, "ban");
        let value = value.unwrap();
        assert!(
            value.starts_with("0e") && value.ends_with(&format!("b{until}")),
            "{f:?} {value}"
        );
        assert_eq!(at, until, "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.FIXED", "ban", "5", HOUR])[..2],
            [0, 0],
            "{f:?}"
        );
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "FIXED", "ban"]), [1], "{f:?}");
        // The window it had was over: the key is gone.
        assert_eq!(exists(&mut c, &["ban"]), 0, "{f:?}");

        // Counts survive a block and its lifting.
        for _ in 0..2 {
            assert_eq!(call(&mut c, &["RL.FIXED", "n", "5", HOUR])[0], 1, "{f:?}");
        }
        let counted = value_and_expiry(&mut c, "n");
        call(&mut c, &["RL.BLOCK", "FIXED", "n", "60000"]);
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "FIXED", "n"]), [1], "{f:?}");
        assert_eq!(value_and_expiry(&mut c, "n"), counted, "{f:?}");
        // Nothing to lift: 0, nothing written.
        let frozen = untouched(&mut c, "n");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "FIXED", "n"]), [0], "{f:?}");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "FIXED", "none"]), [0], "{f:?}");
        assert_eq!(untouched(&mut c, "n"), frozen, "{f:?}");
        assert_eq!(
            call(&mut c, &["RL.FIXED", "n", "5", HOUR])[..2],
            [1, 2],
            "{f:?}"
        );

        // The same for a throttle: the TAT stays, its expiry comes back.
        call(&mut c, &["RL.THROTTLE", "t", "4", "1", HOUR]);
        let tat = value_and_expiry(&mut c, "t");
        call(&mut c, &["RL.BLOCK", "THROTTLE", "t", "60000"]);
        let r = call(&mut c, &["CL.THROTTLE", "t", "4", "1", "3600"]);
        assert_eq!((r[0], r[2]), (1, 0), "{f:?}: CL.THROTTLE honours the block");
        assert!(r[3] >= 59 && r[3] <= 60 && r[3] == r[4], "{f:?} {r:?}");
        assert_eq!(call(&mut c, &["RL.UNBLOCK", "THROTTLE", "t"]), [1], "{f:?}");
        assert_eq!(value_and_expiry(&mut c, "t"), tat, "{f:?}");
        // RL.REFUND keeps a block that holds.
        call(&mut c, &["RL.BLOCK", "THROTTLE", "t", "60000"]);
        let r = call(&mut c, &["RL.REFUND", "THROTTLE", "t", "4", "1", HOUR]);
        assert_eq!(r[..2], [1, 0], "{f:?}: refunded, still blocked");
        let (value, _) = value_and_expiry(&mut c, "t");
        assert!(value.unwrap().contains('b'), "{f:?}");
        // So does RL.CHARGE, and its peek after is the block's.
        let r = call(
            &mut c,
            &["RL.CHARGE", "THROTTLE", "t", "4", "1", HOUR, "COST", "2"],
        );
        assert_eq!(r[..2], [2, 0], "{f:?}: charged, still blocked");
        assert!(r[2] > 50_000 && r[2] == r[3], "{f:?} {r:?}");
        let (value, _) = value_and_expiry(&mut c, "t");
        assert!(value.unwrap().contains('b'), "{f:?}");
        call(&mut c, &["RL.BLOCK", "FIXED", "n", "60000"]);
        let r = call(&mut c, &["RL.CHARGE", "FIXED", "n", "5", HOUR, "COST", "4"]);
        assert_eq!(r[..2], [4, 0], "{f:?}: charged, still blocked");
        let (value, _) = value_and_expiry(&mut c, "n");
        let value = value.unwrap();
        assert!(
            value.starts_with("7e") && value.contains('b'),
            "{f:?} {value}"
        );
    });
}

#[test]
fn an_all_clause_that_breaches_blocks_its_key_alone() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        call(&mut c, &["RL.FIXED", "a", "1", HOUR]);
        let b_before = value_and_expiry(&mut c, "b");
        let line = [
            "RL.ALL", "2", "a", "b", "FIXED", "1", HOUR, "BLOCK", "5000", "FIXED", "10", HOUR,
        ];
        let r = run(&mut c, &line).unwrap();
        let all = parse_all(&r);
        assert_eq!(all.allowed, 0, "{f:?}");
        // Clause 1 breached and set its block; clause 2 recorded nothing.
        let (value, _) = value_and_expiry(&mut c, "a");
        assert!(value.unwrap().starts_with("1e"), "{f:?}");
        assert_eq!(value_and_expiry(&mut c, "b"), b_before, "{f:?}");
        // Then the block answers for clause 1.
        let blocked = rl_info(&mut c)["all_blocked"];
        let frozen = untouched(&mut c, "a");
        let all = parse_all(&run(&mut c, &line).unwrap());
        assert_eq!(all.clauses[0][..2], [0, 0], "{f:?}");
        assert!(
            all.clauses[0][2] > 4000 && all.clauses[0][2] == all.clauses[0][3],
            "{f:?}"
        );
        assert_eq!(untouched(&mut c, "a"), frozen, "{f:?}");
        assert_eq!(rl_info(&mut c)["all_blocked"], blocked + 1, "{f:?}");
    });
}

/// On each flavor, a primary with `--appendonly yes` and two replicas
/// (with and without rl): after `write` on the primary, the keyspace (of
/// `keys` keys) on both replicas and in the AOF replayed without rl is the
/// primary's, and the AOF's text holds `logged` (what the writes must be
/// logged as, such as `RL.UNBLOCK`'s `DEL`).
pub(crate) fn replicas_and_aof_hold(
    keys: usize,
    logged: &str,
    write: impl Fn(Flavor, &mut redis::Connection),
) {
    for flavor in ALL {
        let primary = Server::start_primary(flavor, &["--appendonly", "yes"]);
        let with_rl = primary.start_replica(true);
        let without_rl = primary.start_replica(false);
        let mut p = primary.conn();
        write(flavor, &mut p);
        wait_replicas(&mut p, 2);
        let want = keyspace(&mut p);
        assert_eq!(want.len(), keys, "{flavor:?}: {want:?}");
        for (what, replica) in [("with rl", &with_rl), ("without rl", &without_rl)] {
            let mut r = replica.conn();
            assert_eq!(keyspace(&mut r), want, "{flavor:?} {what}");
        }
        drop(p);
        drop(with_rl);
        drop(without_rl);
        let dir = primary.stop(false);
        let text = aof_text(&dir);
        assert!(text.contains(logged), "{flavor:?}: the AOF logs {logged:?}");
        let restored = Server::start_in(flavor, dir, &["--appendonly", "yes"], false);
        let mut r = restored.conn();
        assert_eq!(
            keyspace(&mut r),
            want,
            "{flavor:?}: AOF replayed without rl"
        );
    }
}

#[test]
fn replicas_and_the_aof_hold_the_blocked_state() {
    replicas_and_aof_hold(5, "DEL", |_, p| {
        for line in breaching("r") {
            let key = format!("{}:r", line[0]);
            let mut line = line.clone();
            line[1] = &key;
            for _ in 0..4 {
                call(p, &line);
            }
        }
        call(p, &["RL.BLOCK", "FIXED", "ban", "600000"]);
        call(p, &["RL.BLOCK", "THROTTLE", "ban:t", "600000"]);
        call(p, &["RL.FIXED", "lift", "3", HOUR]);
        call(p, &["RL.BLOCK", "FIXED", "lift", "600000"]);
        call(p, &["RL.UNBLOCK", "FIXED", "lift"]);
        call(p, &["RL.BLOCK", "FIXED", "gone", "600000"]);
        call(p, &["RL.UNBLOCK", "FIXED", "gone"]);
    });
}

#[test]
fn bad_block_lines_are_refused_by_name_and_leave_the_key() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        call(&mut c, &["RL.FIXED", "k", "5", HOUR]);
        let _: () = redis::cmd("SET")
            .arg("user")
            .arg("5")
            .query(&mut c)
            .unwrap();
        let frozen = untouched(&mut c, "k");
        let max = "1000000000000";
        let cases: &[(&[&str], String)] = &[
            (
                &["RL.BLOCK", "FIXED", "k"],
                "ERR wrong number of arguments for 'rl.block' command".into(),
            ),
            (
                &["RL.BLOCK", "FIXED", "k", "1", "2"],
                "ERR wrong number of arguments for 'rl.block' command".into(),
            ),
            (
                &["RL.BLOCK", "FIXED", "k", "0"],
                format!("ERR ms must be an integer from 1 to {max}"),
            ),
            (
                &["RL.BLOCK", "FIXED", "k", "1000000000001"],
                format!("ERR ms must be an integer from 1 to {max}"),
            ),
            (
                &["RL.BLOCK", "FIXED", "k", "-5"],
                format!("ERR ms must be an integer from 1 to {max}"),
            ),
            (
                &["RL.BLOCK", "GCRA", "k", "5"],
                "ERR unknown limiter 'GCRA' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)"
                    .into(),
            ),
            (
                &["RL.BLOCK", "ACQUIRE", "k", "5"],
                "ERR RL.BLOCK does not apply to ACQUIRE (it blocks SLIDE, BUCKETS, THROTTLE or FIXED)"
                    .into(),
            ),
            (
                &["RL.UNBLOCK", "ACQUIRE", "k"],
                "ERR RL.UNBLOCK does not apply to ACQUIRE (it blocks SLIDE, BUCKETS, THROTTLE or FIXED)"
                    .into(),
            ),
            (
                &["RL.UNBLOCK", "FIXED", "k", "5"],
                "ERR wrong number of arguments for 'rl.unblock' command".into(),
            ),
            (
                &["RL.BLOCK", "THROTTLE", "k", "5"],
                "ERR key holds a string that is not an rl throttle state (a TAT in microseconds)"
                    .into(),
            ),
            (
                &["RL.BLOCK", "FIXED", "user", "5"],
                "ERR key holds a string that is not an rl fixed-window counter".into(),
            ),
            (
                &["RL.FIXED", "k", "5", HOUR, "BLOCK", "0"],
                format!("ERR BLOCK must be an integer from 1 to {max}"),
            ),
            (
                &["RL.FIXED", "k", "5", HOUR, "BLOCK"],
                "ERR BLOCK needs a value".into(),
            ),
            (
                &["RL.FIXED", "k", "5", HOUR, "BLOCK", "1", "BLOCK", "1"],
                "ERR BLOCK given more than once".into(),
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", HOUR, "BLOCK", "x"],
                format!("ERR BLOCK must be an integer from 1 to {max}"),
            ),
            (
                &["RL.THROTTLE", "k", "1", "1", HOUR, "BLOCK", "5", "1"],
                "ERR wrong number of arguments for 'rl.throttle' command".into(),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(error_of(&mut c, line), *want, "{f:?} {line:?}");
            assert_eq!(untouched(&mut c, "k"), frozen, "{f:?} {line:?}");
        }
        assert_eq!(
            value_and_expiry(&mut c, "user"),
            (Some("5".into()), -1),
            "{f:?}"
        );
    });
}

#[test]
fn a_block_denial_fires_rl_denied_then_rl_blocked() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["NOTIFY-DENIED", "on"]);
        let mut c = server.conn();
        let _: () = redis::cmd("CONFIG")
            .arg(&["SET", "notify-keyspace-events", "KEA"])
            .query(&mut c)
            .unwrap();
        call(&mut c, &["RL.BLOCK", "FIXED", "k", "600000"]);
        let mut sub = server.conn();
        sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut pubsub = sub.as_pubsub();
        pubsub.psubscribe("__keyevent@0__:rl.*").unwrap();
        call(&mut c, &["RL.FIXED", "k", "5", HOUR]);
        call(&mut c, &["RL.FIXED", "full", "1", HOUR]);
        call(&mut c, &["RL.FIXED", "full", "1", HOUR]);
        let mut seen = Vec::new();
        for _ in 0..3 {
            let msg = pubsub.get_message().expect("an event");
            let event = msg
                .get_channel_name()
                .rsplit(':')
                .next()
                .unwrap()
                .to_string();
            seen.push((event, msg.get_payload::<String>().unwrap()));
        }
        let pair = |e: &str, k: &str| (e.to_string(), k.to_string());
        assert_eq!(
            seen,
            [
                pair("rl.denied", "k"),
                pair("rl.blocked", "k"),
                pair("rl.denied", "full")
            ],
            "{flavor:?}"
        );
    }
}

//! Shadow mode (`rl.shadow`, `rl.shadow-prefixes`): every limiter decides
//! as usual and admits what it would deny, counts it, marks its event, and
//! records nothing a rate limiter's denial would not (a lease is taken).

use redis::Value;

use crate::harness::*;
use crate::keyspace_events::event_keys;

fn set(c: &mut redis::Connection, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query(c)
        .unwrap_or_else(|e| panic!("CONFIG SET {name} {value:?}: {e}"));
}

/// A key's whole state: its serialized value and its absolute expiry.
fn state(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (dump, at)
}

fn ints(v: &Value) -> Vec<i64> {
    let Value::Array(items) = v else {
        panic!("not an array: {v:?}")
    };
    items
        .iter()
        .map(|i| match i {
            Value::Int(n) => *n,
            other => panic!("not an integer: {other:?}"),
        })
        .collect()
}

/// One admitting call per limiter, then the same again, which each would
/// deny: `(command, key(s), line)`.
const LIMITERS: [(&str, &[&str], &[&str]); 6] = [
    ("slide", &["s"], &["RL.SLIDE", "s", "1", "600000"]),
    ("buckets", &["b"], &["RL.BUCKETS", "b", "1", "600000"]),
    (
        "throttle",
        &["t"],
        &["RL.THROTTLE", "t", "0", "1", "600000"],
    ),
    (
        "cl_throttle",
        &["ct"],
        &["CL.THROTTLE", "ct", "0", "1", "600"],
    ),
    ("fixed", &["f"], &["RL.FIXED", "f", "1", "600000"]),
    (
        "all",
        &["{o}u", "{o}o"],
        &[
            "RL.ALL", "2", "{o}u", "{o}o", "FIXED", "5", "600000", "FIXED", "1", "600000",
        ],
    ),
];

/// `[allowed, retry]` of a reply in rl's shapes: the decision's first and
/// third integers, CL.THROTTLE's `!limited` and `retry_after_s`, RL.ALL's
/// first two.
fn allowed_and_retry(command: &str, v: &Value) -> (bool, i64) {
    if command == "all" {
        let r = parse_all(v);
        return (r.allowed == 1, r.retry_after_ms);
    }
    let n = ints(v);
    if command == "cl_throttle" {
        return (n[0] == 0, n[3]);
    }
    (n[0] == 1, n[2])
}

#[test]
fn shadow_admits_what_would_be_denied_and_records_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.shadow", "yes");
        for (command, keys, line) in LIMITERS {
            let first = run(&mut c, line).unwrap();
            // An enforced admission waits 0 (CL.THROTTLE: -1).
            let zero = if command == "cl_throttle" { -1 } else { 0 };
            assert_eq!(
                allowed_and_retry(command, &first),
                (true, zero),
                "{f:?} {command}"
            );
            let before: Vec<_> = keys.iter().map(|k| state(&mut c, k)).collect();
            let second = run(&mut c, line).unwrap();
            let (allowed, retry) = allowed_and_retry(command, &second);
            assert!(allowed, "{f:?} {command}: {second:?}");
            // The denial's wait, which an enforced admission never has.
            assert!(retry > 0, "{f:?} {command}: {second:?}");
            // Nothing recorded: every key as the denial would leave it.
            let after: Vec<_> = keys.iter().map(|k| state(&mut c, k)).collect();
            assert_eq!(before, after, "{f:?} {command}");
            let info = rl_info(&mut c);
            let field = |name: &str| info[&format!("{command}_{name}")];
            assert_eq!(
                [field("admitted"), field("denied"), field("shadow_denied")],
                [2, 0, 1],
                "{f:?} {command}"
            );
        }
        // A shadowed RL.ALL clause replies admitted with its own wait.
        let r = all(
            &mut c,
            &[
                "2", "{o}u", "{o}o", "FIXED", "5", "600000", "FIXED", "1", "600000",
            ],
        )
        .unwrap();
        assert_eq!(r.clauses[0][..3], [1, 3, 0], "{f:?}");
        assert_eq!(r.clauses[1][..2], [1, 0], "{f:?}");
        assert!(r.clauses[1][2] > 0, "{f:?}: {r:?}");
        assert_eq!(r.retry_after_ms, r.clauses[1][2], "{f:?}");

        // Enforcement on: the same calls are denied at once, over the very
        // state enforcement would have built, and shadow counts stop.
        set(&mut c, "rl.shadow", "no");
        for (command, _, line) in LIMITERS {
            let v = run(&mut c, line).unwrap();
            assert!(!allowed_and_retry(command, &v).0, "{f:?} {command}: {v:?}");
            let info = rl_info(&mut c);
            let field = |name: &str| info[&format!("{command}_{name}")];
            let shadowed = if command == "all" { 2 } else { 1 };
            assert_eq!(
                [field("denied"), field("shadow_denied")],
                [1, shadowed],
                "{f:?} {command}"
            );
        }
    });
}

#[test]
fn shadow_peek_answers_as_the_command_would() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        fixed(&mut c, "f", 1, 600_000, None);
        assert_eq!(peek(&mut c, &["FIXED", "f", "1", "600000"])[0], 0, "{f:?}");
        set(&mut c, "rl.shadow", "yes");
        let p = peek(&mut c, &["FIXED", "f", "1", "600000"]);
        assert_eq!(p[..2], [1, 0], "{f:?}");
        assert!(p[2] > 0, "{f:?}: {p:?}");
        let with_oldest =
            ints(&run(&mut c, &["RL.PEEK", "SLIDE", "s", "1", "600000", "OLDEST"]).unwrap());
        assert_eq!(with_oldest[..3], [1, 0, 0], "{f:?}: an empty window admits");
        slide(&mut c, "s", 1, 600_000);
        let with_oldest =
            ints(&run(&mut c, &["RL.PEEK", "SLIDE", "s", "1", "600000", "OLDEST"]).unwrap());
        assert_eq!(with_oldest[..2], [1, 0], "{f:?}");
        assert!(with_oldest[2] > 0, "{f:?}: {with_oldest:?}");
        let info = rl_info(&mut c);
        assert_eq!(
            [
                info["peek_admitted"],
                info["peek_denied"],
                info["peek_shadow_denied"]
            ],
            [3, 1, 2],
            "{f:?}"
        );
    });
}

#[test]
fn shadow_lease_beyond_the_limit_is_held() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let held = |c: &mut redis::Connection, key: &str| -> i64 {
            let now = server_ms(c);
            redis::cmd("ZCOUNT")
                .arg(key)
                .arg(format!("({now}"))
                .arg("+inf")
                .query(c)
                .unwrap()
        };
        let acquire = |c: &mut redis::Connection, extra: &[&str]| -> (Vec<i64>, Option<String>) {
            let mut line = vec!["RL.ACQUIRE", "k", "1", "600000"];
            line.extend_from_slice(extra);
            let Value::Array(items) = run(c, &line).unwrap() else {
                panic!("RL.ACQUIRE reply")
            };
            let lease = redis::from_redis_value(&items[4]).unwrap();
            (ints(&Value::Array(items[..4].to_vec())), lease)
        };
        let (first, a) = acquire(&mut c, &[]);
        assert_eq!(first[..3], [1, 0, 0], "{f:?}");
        set(&mut c, "rl.shadow", "yes");
        // Beyond the limit: admitted with the denial's figures, and held.
        let (second, b) = acquire(&mut c, &[]);
        assert_eq!(second[..2], [1, 0], "{f:?}");
        assert!(second[2] > 0, "{f:?}: {second:?}");
        let b = b.expect("a shadow lease is a real lease");
        assert_eq!(held(&mut c, "k"), 2, "{f:?}");
        // A named lease too: its holder renews it as any other.
        let (_, named) = acquire(&mut c, &["ID", "job-7"]);
        assert_eq!(named.as_deref(), Some("job-7"), "{f:?}");
        assert_eq!(held(&mut c, "k"), 3, "{f:?}");
        let renewed = ints(&run(&mut c, &["RL.RENEW", "k", "job-7", "600000"]).unwrap());
        assert_eq!(renewed[..2], [1, 3], "{f:?}");
        // An RL.ALL lease clause beyond its limit is taken too; its rate
        // clause records nothing, as the enforced denial would.
        let line = [
            "RL.ALL", "2", "{a}r", "{a}k", "FIXED", "5", "600000", "ACQUIRE", "1", "600000",
        ];
        set(&mut c, "rl.shadow", "no");
        run(&mut c, &line).unwrap();
        set(&mut c, "rl.shadow", "yes");
        let rate = state(&mut c, "{a}r");
        let Value::Array(items) = run(&mut c, &line).unwrap() else {
            panic!("RL.ALL reply")
        };
        assert_eq!(ints(&Value::Array(items[..2].to_vec()))[0], 1, "{f:?}");
        let Value::Array(clause) = &items[3] else {
            panic!("the lease clause's reply")
        };
        let lease: Option<String> = redis::from_redis_value(&clause[4]).unwrap();
        assert!(lease.is_some(), "{f:?}: {items:?}");
        assert_eq!(held(&mut c, "{a}k"), 2, "{f:?}");
        assert_eq!(state(&mut c, "{a}r"), rate, "{f:?}");
        let info = rl_info(&mut c);
        assert_eq!(
            [info["acquire_admitted"], info["acquire_shadow_denied"]],
            [3, 2],
            "{f:?}"
        );
        assert_eq!(info["all_shadow_denied"], 1, "{f:?}");
        // Enforcement on: denied while more than the limit is held, until
        // enough leases end.
        set(&mut c, "rl.shadow", "no");
        assert_eq!(acquire(&mut c, &[]).0[0], 0, "{f:?}");
        for id in [b.as_str(), "job-7"] {
            let released = ints(&run(&mut c, &["RL.RELEASE", "k", id]).unwrap());
            assert_eq!(released[0], 1, "{f:?} {id}");
        }
        assert_eq!(acquire(&mut c, &[]).0[0], 0, "{f:?}: one lease still held");
        run(&mut c, &["RL.RELEASE", "k", a.as_deref().unwrap()]).unwrap();
        assert_eq!(acquire(&mut c, &[]).0[0], 1, "{f:?}");
    });
}

#[test]
fn shadow_prefixes_shadow_only_the_keys_they_match() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.shadow-prefixes", "new: beta:");
        for key in ["new:1", "beta:x", "old:1", "ne"] {
            fixed(&mut c, key, 1, 600_000, None);
        }
        let allowed: Vec<i64> = ["new:1", "beta:x", "old:1", "ne"]
            .iter()
            .map(|k| fixed(&mut c, k, 1, 600_000, None)[0])
            .collect();
        assert_eq!(allowed, [1, 1, 0, 0], "{f:?}");
        // An enforced clause still denies the call; the shadowed one's
        // reply is admitted.
        fixed(&mut c, "new:2", 1, 600_000, None);
        let r = all(
            &mut c,
            &[
                "2", "old:1", "new:2", "FIXED", "1", "600000", "FIXED", "1", "600000",
            ],
        )
        .unwrap();
        assert_eq!(
            (r.allowed, r.clauses[0][0], r.clauses[1][0]),
            (0, 0, 1),
            "{f:?}"
        );
        let info = rl_info(&mut c);
        assert_eq!(
            [
                info["fixed_shadow_denied"],
                info["fixed_denied"],
                info["all_denied"],
                info["all_shadow_denied"]
            ],
            [2, 2, 1, 0],
            "{f:?}"
        );
        // Emptied, nothing is shadowed.
        set(&mut c, "rl.shadow-prefixes", "");
        assert_eq!(fixed(&mut c, "new:1", 1, 600_000, None)[0], 0, "{f:?}");
    });
}

/// Denies one call of each limiter (as `keyspace_events::deny_some`), with
/// an RL.ALL whose enforced clause (`{o}e`) and shadowed clause (`{o}new:`)
/// both deny.
fn deny_mixed(c: &mut redis::Connection) {
    crate::keyspace_events::deny_some(c);
    let line = [
        "2", "{o}e", "{o}new:", "FIXED", "1", "600000", "FIXED", "1", "600000",
    ];
    for _ in 0..2 {
        all(c, &line).unwrap();
    }
}

#[test]
fn shadow_denials_fire_rl_denied_shadow_not_rl_denied() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.notify-denied", "yes");
        set(&mut c, "rl.shadow", "yes");
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        assert!(
            event_keys(server, "rl.denied", crate::keyspace_events::deny_some).is_empty(),
            "{f:?}"
        );
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        let shadowed = event_keys(
            server,
            "rl.denied.shadow",
            crate::keyspace_events::deny_some,
        );
        assert_eq!(shadowed, ["s", "b", "t", "ct", "f", "{o}o"], "{f:?}");
        // Per prefix: the enforced clause's denial is rl.denied, the
        // shadowed one's rl.denied.shadow, in one denied call.
        set(&mut c, "rl.shadow", "no");
        set(&mut c, "rl.shadow-prefixes", "{o}new:");
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        let denied = event_keys(server, "rl.denied", deny_mixed);
        assert_eq!(denied, ["s", "b", "t", "ct", "f", "{o}o", "{o}e"], "{f:?}");
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        assert_eq!(
            event_keys(server, "rl.denied.shadow", deny_mixed),
            ["{o}new:"],
            "{f:?}"
        );
        // Events off: no shadow event either.
        set(&mut c, "rl.notify-denied", "no");
        set(&mut c, "rl.shadow", "yes");
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        assert!(
            event_keys(server, "rl.denied.shadow", deny_mixed).is_empty(),
            "{f:?}"
        );
    });
}

#[test]
fn stats_prefixes_count_each_prefix_exactly() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Nothing configured: no lines.
        slide(&mut c, "api:v2:x", 1, 600_000);
        assert!(prefix_counts(&mut c).is_empty(), "{f:?}");
        set(&mut c, "rl.stats-prefixes", "api: api:v2: user:");
        for _ in 0..2 {
            slide(&mut c, "api:v2:x", 1, 600_000);
        }
        for _ in 0..3 {
            fixed(&mut c, "user:1", 2, 600_000, None);
        }
        throttle(&mut c, "api:t", [5, 1, 600_000], None);
        // Not counted: a read, an error, a command that answers.
        peek(&mut c, &["SLIDE", "api:v2:x", "1", "600000"]);
        run(&mut c, &["RL.FIXED", "user:1", "0", "600000"]).unwrap_err();
        run(&mut c, &["RL.COUNT", "api:c", "60000", "e"]).unwrap();
        // One RL.ALL call counts once under each prefix one of its keys
        // matches (its first key matches none).
        let line = [
            "2", "other:a", "api:b", "FIXED", "1", "600000", "FIXED", "1", "600000",
        ];
        all(&mut c, &line).unwrap();
        all(&mut c, &line).unwrap();
        // Both keys match `api:`: one count.
        let both = [
            "2", "api:e", "api:g", "FIXED", "1", "600000", "FIXED", "1", "600000",
        ];
        all(&mut c, &both).unwrap();
        // Shadow-admitted calls are admitted, and counted as shadowed.
        set(&mut c, "rl.shadow-prefixes", "user:");
        fixed(&mut c, "user:1", 2, 600_000, None);
        let want = |a: [u64; 3], v: [u64; 3], u: [u64; 3]| {
            vec![
                ("api:".to_string(), a),
                ("api:v2:".to_string(), v),
                ("user:".to_string(), u),
            ]
        };
        assert_eq!(
            prefix_counts(&mut c),
            want([3, 3, 0], [0, 2, 0], [3, 1, 1]),
            "{f:?}"
        );
        // A new list keeps the counts of the prefixes it still lists.
        set(&mut c, "rl.stats-prefixes", "user: other:");
        assert_eq!(
            prefix_counts(&mut c),
            [
                ("user:".to_string(), [3, 1, 1]),
                ("other:".to_string(), [0, 0, 0])
            ],
            "{f:?}"
        );
        set(&mut c, "rl.stats-prefixes", "");
        fixed(&mut c, "user:1", 2, 600_000, None);
        assert!(prefix_counts(&mut c).is_empty(), "{f:?}");
        // At most 32 prefixes.
        let full: Vec<String> = (0..32).map(|i| format!("p{i}:")).collect();
        set(&mut c, "rl.stats-prefixes", &full.join(" "));
        fixed(&mut c, "p31:x", 1, 600_000, None);
        let counts = prefix_counts(&mut c);
        assert_eq!(counts.len(), 32, "{f:?}");
        assert_eq!(counts[31], ("p31:".to_string(), [1, 0, 0]), "{f:?}");
        assert_eq!(counts[0], ("p0:".to_string(), [0, 0, 0]), "{f:?}");
    });
}

/// A shadowed breach with `BLOCK ms` records the block enforcement would
/// set (and only that): later calls are shadow-admitted with the block's
/// wait, and switching enforcement on finds the key as it would have been.
#[test]
fn a_shadowed_breach_records_its_block_and_nothing_else() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.shadow", "yes");
        let line = ["RL.FIXED", "fb", "1", "600000", "BLOCK", "60000"];
        let first = ints(&run(&mut c, &line).unwrap());
        assert_eq!(first[..2], [1, 0], "{f:?}: admitted, counted");
        let (count_only, _) = value_and_expiry(&mut c, "fb");
        assert_eq!(count_only.as_deref(), Some("1"), "{f:?}");
        // The breach: shadow-admitted, the block written, the count kept.
        let second = ints(&run(&mut c, &line).unwrap());
        assert_eq!(second[0], 1, "{f:?}: shadow-admitted");
        let (blocked, _) = value_and_expiry(&mut c, "fb");
        let blocked = blocked.unwrap();
        assert!(
            blocked.starts_with("1e") && blocked.contains('b'),
            "{f:?}: {blocked}"
        );
        // While the block holds: shadow-admitted with its wait, nothing
        // written.
        let before = state(&mut c, "fb");
        let third = ints(&run(&mut c, &line).unwrap());
        assert_eq!(third[0], 1, "{f:?}");
        assert!(third[2] > 50_000 && third[2] <= 60_000, "{f:?} {third:?}");
        assert_eq!(state(&mut c, "fb"), before, "{f:?}");
        assert_eq!(info_int(&mut c, "rl", "rl_fixed_shadow_denied"), 2, "{f:?}");
        // Enforced: the same key denies by its block.
        set(&mut c, "rl.shadow", "no");
        let enforced = ints(&run(&mut c, &line).unwrap());
        assert_eq!(enforced[..2], [0, 0], "{f:?}");
        assert_eq!(info_int(&mut c, "rl", "rl_fixed_blocked"), 1, "{f:?}");
    });
}

/// The same on RL.BUCKETS: the shadowed breach writes the header's block
/// item and nothing else, later calls write nothing, enforcement denies by
/// the block.
#[test]
fn a_shadowed_bucket_breach_records_its_block_and_nothing_else() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.shadow", "yes");
        let line = ["RL.BUCKETS", "bb", "1", "600000", "BLOCK", "60000"];
        assert_eq!(ints(&run(&mut c, &line).unwrap())[..2], [1, 0], "{f:?}");
        let header = |c: &mut redis::Connection| -> String {
            redis::cmd("HGET").arg("bb").arg("h").query(c).unwrap()
        };
        let counted = header(&mut c);
        let second = ints(&run(&mut c, &line).unwrap());
        assert_eq!(second[0], 1, "{f:?}: shadow-admitted");
        let blocked = header(&mut c);
        assert!(
            blocked.starts_with(&format!("{counted},b")),
            "{f:?}: {counted} then {blocked}"
        );
        let before = state(&mut c, "bb");
        let third = ints(&run(&mut c, &line).unwrap());
        assert_eq!(third[0], 1, "{f:?}");
        assert!(third[2] > 50_000 && third[2] <= 60_000, "{f:?} {third:?}");
        assert_eq!(state(&mut c, "bb"), before, "{f:?}");
        assert_eq!(
            info_int(&mut c, "rl", "rl_buckets_shadow_denied"),
            2,
            "{f:?}"
        );
        set(&mut c, "rl.shadow", "no");
        assert_eq!(ints(&run(&mut c, &line).unwrap())[..2], [0, 0], "{f:?}");
        assert_eq!(info_int(&mut c, "rl", "rl_buckets_blocked"), 1, "{f:?}");
    });
}

/// In `RL.ALL`, a shadowed clause that breaches with `BLOCK ms` records
/// its block even when an enforced clause denies the call, as enforcement
/// would (a denying clause with BLOCK blocks its own key though the call
/// records nothing else), and nothing else: the enforced clause's key is
/// untouched.
#[test]
fn a_shadowed_clause_denied_with_the_call_records_its_block() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.shadow-prefixes", "new:");
        let line = [
            "2", "old:1", "new:1", "FIXED", "1", "600000", "FIXED", "1", "600000", "BLOCK", "60000",
        ];
        let first = all(&mut c, &line).unwrap();
        assert_eq!(first.allowed, 1, "{f:?}");
        let old_before = state(&mut c, "old:1");
        // Both clauses deny: the enforced one denies the call, the
        // shadowed one is shadow-admitted and writes its block.
        let second = all(&mut c, &line).unwrap();
        assert_eq!(
            (second.allowed, second.clauses[0][0], second.clauses[1][0]),
            (0, 0, 1),
            "{f:?}"
        );
        let (blocked, _) = value_and_expiry(&mut c, "new:1");
        let blocked = blocked.unwrap();
        assert!(
            blocked.starts_with("1e") && blocked.contains('b'),
            "{f:?}: {blocked}"
        );
        assert_eq!(state(&mut c, "old:1"), old_before, "{f:?}");
        // Enforced, the key denies by its block.
        set(&mut c, "rl.shadow-prefixes", "");
        let r = fixed(&mut c, "new:1", 1, 600_000, None);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert!(r[2] > 50_000 && r[2] <= 60_000, "{f:?} {r:?}");
        assert_eq!(info_int(&mut c, "rl", "rl_fixed_blocked"), 1, "{f:?}");
    });
}

//! Every command (every limiter of RL.PEEK, RL.REFUND, RL.CHARGE,
//! RL.BLOCK, RL.UNBLOCK and RL.ALL, and
//! RL.ALL in either clause) refuses a key of another type with WRONGTYPE,
//! and an rl key of another layout (or a look-alike rl did not write) with
//! its documented error, and leaves the key byte-for-byte as it was: same
//! DUMP, same absolute expiry, nothing written at all (the server's dirty
//! counter does not move).

use crate::harness::all_commands::COMMANDS;
use crate::harness::*;

/// How each kind of key is made.
const KINDS: &[(&str, &[&[&str]])] = &[
    ("string", &[&["SET", "K", "hello"]]),
    ("list", &[&["RPUSH", "K", "a", "b"]]),
    ("set", &[&["SADD", "K", "a", "b"]]),
    ("hash", &[&["HSET", "K", "name", "x", "t", "000000001"]]),
    ("zset", &[&["ZADD", "K", "+inf", "m", "1", "n"]]),
    ("stream", &[&["XADD", "K", "1-1", "f", "v"]]),
    ("slide", &[&["RL.SLIDE", "K", "5", "600000"]]),
    ("buckets", &[&["RL.BUCKETS", "K", "5", "600000"]]),
    ("count", &[&["RL.COUNT", "K", "600000", "ok"]]),
    ("throttle", &[&["RL.THROTTLE", "K", "5", "1", "600000"]]),
    ("fixed", &[&["RL.FIXED", "K", "5", "600000"]]),
    ("leases", &[&["RL.ACQUIRE", "K", "5", "600000", "ID", "a"]]),
];

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const FOREIGN_HASH: &str = "ERR key holds a hash that rl did not write";
const NOT_TAT: &str =
    "ERR key holds a string that is not an rl throttle state (a TAT in microseconds)";
const NOT_COUNTER: &str = "ERR key holds a string that is not an rl fixed-window counter";

const FOREIGN_ZSET: &str = "ERR key holds a sorted set that rl did not write";
/// A sorted set with a TTL but without the lease header, to a lease command.
const NO_LEASE_HEADER: &str = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";

/// Which state a command line reads: its limiter's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    Slide,
    Buckets,
    Count,
    Throttle,
    Fixed,
    Leases,
}

/// The reply a command reading `reads` gets on each kind of key (`ttl`:
/// the key has an expiry); `None` where the kind is the command's own.
fn expected(reads: Reads, kind: &str, ttl: bool) -> Option<&'static str> {
    let own = |k: &[&str]| k.contains(&kind);
    Some(match reads {
        Reads::Slide if own(&["slide"]) => return None,
        // A lease set is not an RL.SLIDE log: a sorted set rl did not write.
        Reads::Slide if own(&["zset", "leases"]) => FOREIGN_ZSET,
        Reads::Buckets if own(&["buckets"]) => return None,
        Reads::Buckets if kind == "hash" => FOREIGN_HASH,
        Reads::Buckets if kind == "count" => "ERR key holds RL.COUNT state, not RL.BUCKETS state",
        Reads::Count if own(&["count"]) => return None,
        Reads::Count if kind == "hash" => FOREIGN_HASH,
        Reads::Count if kind == "buckets" => "ERR key holds RL.BUCKETS state, not RL.COUNT state",
        Reads::Throttle if own(&["throttle"]) => return None,
        Reads::Throttle if own(&["string", "fixed"]) => NOT_TAT,
        Reads::Fixed if own(&["fixed"]) => return None,
        Reads::Fixed if own(&["string", "throttle"]) => NOT_COUNTER,
        Reads::Leases if own(&["leases"]) => return None,
        Reads::Leases if kind == "zset" && ttl => NO_LEASE_HEADER,
        Reads::Leases if kind == "zset" => FOREIGN_ZSET,
        Reads::Leases if kind == "slide" => "ERR key holds RL.SLIDE state, not lease state",
        _ => WRONGTYPE,
    })
}

/// A key no command line names but the RL.ALL lines' other clause: it must
/// stay absent when the call is refused.
const FRESH: &str = "wt:fresh";

/// Every command line (key `K`), the state it reads, and for RL.ALL the
/// clause that reads `K` (its errors but WRONGTYPE name the clause).
const LINES: &[(Reads, Option<usize>, &[&str])] = &[
    (Reads::Slide, None, &["RL.SLIDE", "K", "5", "1000"]),
    (
        Reads::Slide,
        None,
        &["RL.SLIDE", "K", "5", "1000", "COST", "2"],
    ),
    (Reads::Slide, None, &["RL.PEEK", "SLIDE", "K", "5", "1000"]),
    (
        Reads::Slide,
        None,
        &["RL.REFUND", "SLIDE", "K", "5", "1000"],
    ),
    (
        Reads::Slide,
        Some(1),
        &["RL.ALL", "1", "K", "SLIDE", "5", "1000"],
    ),
    (
        Reads::Slide,
        Some(2),
        &[
            "RL.ALL", "2", FRESH, "K", "FIXED", "5", "1000", "SLIDE", "5", "1000",
        ],
    ),
    (
        Reads::Slide,
        None,
        &["RL.CHARGE", "SLIDE", "K", "5", "1000", "COST", "2"],
    ),
    (Reads::Buckets, None, &["RL.BUCKETS", "K", "5", "1000"]),
    (
        Reads::Buckets,
        None,
        &["RL.CHARGE", "BUCKETS", "K", "5", "1000", "COST", "2"],
    ),
    (
        Reads::Buckets,
        None,
        &["RL.BUCKETS", "K", "5", "1000", "PRECISION", "100"],
    ),
    (
        Reads::Buckets,
        None,
        &["RL.PEEK", "BUCKETS", "K", "5", "1000"],
    ),
    (
        Reads::Buckets,
        None,
        &["RL.REFUND", "BUCKETS", "K", "5", "1000", "COST", "2"],
    ),
    (
        Reads::Buckets,
        Some(1),
        &["RL.ALL", "1", "K", "BUCKETS", "5", "1000"],
    ),
    (Reads::Count, None, &["RL.COUNT", "K", "1000", "ok"]),
    (Reads::Count, None, &["RL.TOTALS", "K", "1000"]),
    (
        Reads::Throttle,
        None,
        &["RL.THROTTLE", "K", "5", "1", "1000"],
    ),
    (
        Reads::Throttle,
        None,
        &["RL.THROTTLE", "K", "5", "1", "1000", "0"],
    ),
    (Reads::Throttle, None, &["CL.THROTTLE", "K", "5", "1", "1"]),
    (
        Reads::Throttle,
        None,
        &["RL.PEEK", "THROTTLE", "K", "5", "1", "1000"],
    ),
    (
        Reads::Throttle,
        None,
        &["RL.REFUND", "THROTTLE", "K", "5", "1", "1000"],
    ),
    (
        Reads::Throttle,
        Some(1),
        &["RL.ALL", "1", "K", "THROTTLE", "5", "1", "1000"],
    ),
    (
        Reads::Throttle,
        None,
        &["RL.THROTTLE", "K", "5", "1", "1000", "BLOCK", "1000"],
    ),
    (
        Reads::Throttle,
        None,
        &["RL.CHARGE", "THROTTLE", "K", "5", "1", "1000", "COST", "2"],
    ),
    (
        Reads::Throttle,
        None,
        &["RL.BLOCK", "THROTTLE", "K", "1000"],
    ),
    (Reads::Throttle, None, &["RL.UNBLOCK", "THROTTLE", "K"]),
    (Reads::Fixed, None, &["RL.FIXED", "K", "5", "1000"]),
    (
        Reads::Fixed,
        None,
        &["RL.FIXED", "K", "5", "1000", "BLOCK", "1000"],
    ),
    (
        Reads::Fixed,
        None,
        &["RL.CHARGE", "FIXED", "K", "5", "1000", "COST", "2"],
    ),
    (Reads::Fixed, None, &["RL.BLOCK", "FIXED", "K", "1000"]),
    (Reads::Fixed, None, &["RL.UNBLOCK", "FIXED", "K"]),
    (Reads::Fixed, None, &["RL.PEEK", "FIXED", "K", "5", "1000"]),
    (
        Reads::Fixed,
        None,
        &["RL.REFUND", "FIXED", "K", "5", "1000"],
    ),
    (
        Reads::Fixed,
        Some(1),
        &["RL.ALL", "1", "K", "FIXED", "5", "1000"],
    ),
    (
        Reads::Fixed,
        Some(1),
        &[
            "RL.ALL", "2", "K", FRESH, "FIXED", "5", "1000", "SLIDE", "5", "1000",
        ],
    ),
    (Reads::Leases, None, &["RL.ACQUIRE", "K", "5", "1000"]),
    (
        Reads::Leases,
        None,
        &["RL.ACQUIRE", "K", "5", "1000", "ID", "a"],
    ),
    (Reads::Leases, None, &["RL.RELEASE", "K", "a"]),
    (Reads::Leases, None, &["RL.RENEW", "K", "a", "1000"]),
    (
        Reads::Leases,
        None,
        &["RL.PEEK", "ACQUIRE", "K", "5", "1000"],
    ),
    (
        Reads::Leases,
        Some(1),
        &["RL.ALL", "1", "K", "ACQUIRE", "5", "1000"],
    ),
    (
        Reads::Leases,
        Some(2),
        &[
            "RL.ALL", "2", FRESH, "K", "SLIDE", "5", "1000", "ACQUIRE", "5", "1000", "ID", "b",
        ],
    ),
];

const NO_TTL: &str = ":no-ttl";

/// The keys of a kind: `wt:<kind>`, and for the types rl does not write a
/// twin that never gets an expiry (an rl key without one is foreign:
/// `foreign_keys.rs`).
fn keys_of(kind: &str) -> Vec<String> {
    let mut keys = vec![format!("wt:{kind}")];
    if ["string", "set", "hash", "zset", "stream"].contains(&kind) {
        keys.push(format!("wt:{kind}{NO_TTL}"));
    }
    keys
}

#[test]
fn every_command_refuses_every_other_kind_of_key_and_leaves_it_untouched() {
    on_every_server(|server| {
        let flavor = server.flavor;
        let mut c = server.conn();
        for (kind, setup) in KINDS {
            for key in keys_of(kind) {
                for line in *setup {
                    run_on(&mut c, line, &key).unwrap();
                }
                // An expiry on every kind but one, to see it kept (or
                // absent); the other types also without one.
                if *kind != "list" && !key.ends_with(NO_TTL) {
                    let _: i64 = redis::cmd("PEXPIRE")
                        .arg(&key)
                        .arg(900_000)
                        .query(&mut c)
                        .unwrap();
                }
            }
        }
        let mut checked = 0;
        for (reads, clause, line) in LINES {
            for (kind, _) in KINDS {
                for key in keys_of(kind) {
                    let ttl = *kind != "list" && !key.ends_with(NO_TTL);
                    let Some(want) = expected(*reads, kind, ttl) else {
                        continue;
                    };
                    let want = match (clause, want.strip_prefix("ERR ")) {
                        (Some(n), Some(rest)) => format!("ERR clause {n}: {rest}"),
                        _ => want.to_string(),
                    };
                    let before = frozen_state(&mut c, &key);
                    let before_changes = changes(&mut c);
                    let got = err_text(run_on(&mut c, line, &key));
                    assert_eq!(got, want, "{flavor:?} {line:?} on a {kind} key");
                    assert_eq!(
                        frozen_state(&mut c, &key),
                        before,
                        "{flavor:?} {line:?} on {kind}"
                    );
                    assert_eq!(
                        changes(&mut c),
                        before_changes,
                        "{flavor:?} {line:?} on {kind}: wrote"
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(exists(&mut c, &[FRESH]), 0, "{flavor:?}: {FRESH} written");
        // Every command, and every limiter in RL.PEEK, RL.REFUND and RL.ALL.
        for name in COMMANDS {
            assert!(LINES.iter().any(|(_, _, l)| l[0] == name), "{name}");
        }
        for limiter in ["SLIDE", "BUCKETS", "THROTTLE", "FIXED", "ACQUIRE"] {
            for name in ["RL.PEEK", "RL.ALL"] {
                assert!(
                    LINES
                        .iter()
                        .any(|(_, _, l)| l[0] == name && l.contains(&limiter)),
                    "{name} {limiter}"
                );
            }
        }
        assert!(checked >= 300, "{checked} cases");
    });
}

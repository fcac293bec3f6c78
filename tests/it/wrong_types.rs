//! Every command refuses a key of another type with WRONGTYPE, and an rl key
//! of another layout (or a look-alike rl did not write) with its documented
//! error, and leaves the key byte-for-byte as it was: same DUMP, same
//! absolute expiry, nothing written at all (the server's dirty counter does
//! not move).

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
];

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const FOREIGN_HASH: &str = "ERR key holds a hash that rl did not write";
const NOT_TAT: &str =
    "ERR key holds a string that is not an rl throttle state (a TAT in microseconds)";
const NOT_COUNTER: &str = "ERR key holds a string that is not an rl fixed-window counter";

/// The command line (key `K`) and the reply it gets on each kind of key;
/// `None` where the kind is the command's own.
fn expected(command: &str, kind: &str) -> Option<&'static str> {
    let own = |k: &[&str]| k.contains(&kind);
    Some(match command {
        "RL.SLIDE" if own(&["slide"]) => return None,
        "RL.SLIDE" if kind == "zset" => "ERR key holds a sorted set that rl did not write",
        "RL.BUCKETS" if own(&["buckets"]) => return None,
        "RL.BUCKETS" if kind == "hash" => FOREIGN_HASH,
        "RL.BUCKETS" if kind == "count" => "ERR key holds RL.COUNT state, not RL.BUCKETS state",
        "RL.COUNT" | "RL.TOTALS" if own(&["count"]) => return None,
        "RL.COUNT" | "RL.TOTALS" if kind == "hash" => FOREIGN_HASH,
        "RL.COUNT" | "RL.TOTALS" if kind == "buckets" => {
            "ERR key holds RL.BUCKETS state, not RL.COUNT state"
        }
        "RL.THROTTLE" | "CL.THROTTLE" if own(&["throttle"]) => return None,
        "RL.THROTTLE" | "CL.THROTTLE" if own(&["string", "fixed"]) => NOT_TAT,
        "RL.FIXED" if own(&["fixed"]) => return None,
        "RL.FIXED" if own(&["string", "throttle"]) => NOT_COUNTER,
        _ => WRONGTYPE,
    })
}

const LINES: &[&[&str]] = &[
    &["RL.SLIDE", "K", "5", "1000"],
    &["RL.SLIDE", "K", "5", "1000", "COST", "2"],
    &["RL.BUCKETS", "K", "5", "1000"],
    &["RL.BUCKETS", "K", "5", "1000", "PRECISION", "100"],
    &["RL.COUNT", "K", "1000", "ok"],
    &["RL.TOTALS", "K", "1000"],
    &["RL.THROTTLE", "K", "5", "1", "1000"],
    &["RL.THROTTLE", "K", "5", "1", "1000", "0"],
    &["CL.THROTTLE", "K", "5", "1", "1"],
    &["RL.FIXED", "K", "5", "1000"],
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
        for line in LINES {
            for (kind, _) in KINDS {
                let Some(want) = expected(line[0], kind) else {
                    continue;
                };
                for key in keys_of(kind) {
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
        assert!(checked >= 100, "{checked} cases");
    });
}

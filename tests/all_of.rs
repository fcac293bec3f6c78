//! RL.ALL: several limits, admitted only together; a denial in any clause
//! records nothing in any; effects replicated together; keys declared for
//! Cluster (CROSSSLOT) and ACLs.
mod common;

use common::cluster::Cluster;
use common::features::*;
use common::limiters::{error_of, state};
use common::*;

/// 10 per 10 minutes per user (sliding log) and 2 per 10 minutes per
/// organisation (fixed window), on keys sharing a hash tag.
const USER_AND_ORG: &[&str] = &[
    "2",
    "{acme}:user:1",
    "{acme}:org",
    "SLIDE",
    "10",
    "600000",
    "FIXED",
    "2",
    "600000",
];

#[test]
fn a_denial_in_the_second_clause_records_nothing_in_the_first() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for n in 0..2 {
            let r = all(&mut c, USER_AND_ORG).unwrap();
            assert_eq!((r.allowed, r.retry_after_ms), (1, 0), "{f:?} call {n}");
            assert_eq!(r.clauses[0][..3], [1, 10 - n - 1, 0], "{f:?}");
            assert_eq!(r.clauses[1][..3], [1, 2 - n - 1, 0], "{f:?}");
        }
        let user = state(&mut c, "{acme}:user:1");
        let org = state(&mut c, "{acme}:org");
        let offset = info_field(&mut c, "replication", "master_repl_offset");
        for _ in 0..3 {
            let r = all(&mut c, USER_AND_ORG).unwrap();
            assert_eq!(r.allowed, 0, "{f:?}");
            // The user clause would admit (answered as a peek); the org denies.
            assert_eq!(r.clauses[0][..3], [1, 7, 0], "{f:?}");
            assert_eq!(r.clauses[1][..2], [0, 0], "{f:?}");
            assert_eq!(r.retry_after_ms, r.clauses[1][2], "{f:?}");
            assert!(r.retry_after_ms > 590_000, "{f:?} {r:?}");
        }
        assert_eq!(zcard(&mut c, "{acme}:user:1"), 2, "{f:?}");
        assert_eq!(state(&mut c, "{acme}:user:1"), user, "{f:?}");
        assert_eq!(state(&mut c, "{acme}:org"), org, "{f:?}");
        assert_eq!(
            info_field(&mut c, "replication", "master_repl_offset"),
            offset,
            "{f:?}: a denial was replicated"
        );
    });
}

#[test]
fn the_combined_wait_is_the_longest_denying_wait() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        run(&mut c, &["RL.FIXED", "{k}a", "1", "600000"]).unwrap();
        run(&mut c, &["RL.FIXED", "{k}b", "1", "60000"]).unwrap();
        let r = all(
            &mut c,
            &[
                "3", "{k}a", "{k}b", "{k}c", "FIXED", "1", "600000", "FIXED", "1", "60000",
                "FIXED", "1", "1000",
            ],
        )
        .unwrap();
        assert_eq!(r.allowed, 0, "{f:?}");
        assert_eq!(
            r.clauses.iter().map(|c| c[0]).collect::<Vec<_>>(),
            [0, 0, 1]
        );
        assert_eq!(r.retry_after_ms, r.clauses[0][2], "{f:?} {r:?}");
        assert!(r.clauses[0][2] > r.clauses[1][2], "{f:?} {r:?}");
        let exists: i64 = redis::cmd("EXISTS").arg("{k}c").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}: the admitting clause recorded nothing");
    });
}

#[test]
fn every_limiter_can_be_a_clause_and_each_records_like_its_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let line = [
            "4",
            "{u}s",
            "{u}b",
            "{u}t",
            "{u}f",
            "SLIDE",
            "5",
            "600000",
            "COST",
            "2",
            "BUCKETS",
            "5",
            "600000",
            "PRECISION",
            "10000",
            "THROTTLE",
            "4",
            "1",
            "600000",
            "FIXED",
            "5",
            "600000",
        ];
        let r = all(&mut c, &line).unwrap();
        assert_eq!((r.allowed, r.retry_after_ms), (1, 0), "{f:?}");
        let remaining: Vec<i64> = r.clauses.iter().map(|c| c[1]).collect();
        assert_eq!(remaining, [3, 4, 4, 4], "{f:?}");
        // Each key holds what its own command would have written.
        assert_eq!(zcard(&mut c, "{u}s"), 2, "{f:?}");
        let header: String = redis::cmd("HGET")
            .arg("{u}b")
            .arg("h")
            .query(&mut c)
            .unwrap();
        assert!(header.starts_with("b,"), "{f:?} {header}");
        let fixed: String = redis::cmd("GET").arg("{u}f").query(&mut c).unwrap();
        assert_eq!(fixed, "1", "{f:?}");
        for key in ["{u}s", "{u}b", "{u}t", "{u}f"] {
            assert!(pexpiretime(&mut c, key) > 0, "{f:?} {key} has its expiry");
        }
    });
}

#[test]
fn bad_input_and_other_types_write_nothing() {
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
                "clause 1: wrong number of arguments for 'rl.all' command (expected SLIDE limit window [COST cost])",
            ),
            (
                &["RL.ALL", "0", "{x}a", "SLIDE", "1", "1"],
                "numkeys must be an integer from 1 to 16",
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
        for (line, want) in cases {
            let err = error_of(&mut c, line);
            assert!(err.contains(want), "{f:?} {line:?}: {err}");
        }
        let exists: i64 = redis::cmd("EXISTS")
            .arg("{x}a")
            .arg("{x}b")
            .query(&mut c)
            .unwrap();
        assert_eq!(exists, 0, "{f:?}: a refused call wrote a clause");
        let v: String = redis::cmd("GET").arg("{x}str").query(&mut c).unwrap();
        assert_eq!(v, "v", "{f:?}");
    });
}

#[test]
fn a_replica_holds_every_clauses_state_and_the_effects_travel_together() {
    for flavor in ALL {
        let primary =
            Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        for _ in 0..4 {
            all(&mut p, USER_AND_ORG).unwrap();
        }
        wait_replicas(&mut p, 1);
        let mut r = replica.conn();
        for key in ["{acme}:user:1", "{acme}:org"] {
            assert_eq!(state(&mut p, key), state(&mut r, key), "{flavor:?} {key}");
        }
        // The AOF holds each admitted call as one MULTI ... EXEC with both
        // keys' effects inside.
        let mut aof = String::new();
        let dir = primary.dir().join("appendonlydir");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{flavor:?} {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".incr.aof"))
            .collect();
        files.sort();
        for file in files {
            aof.push_str(&String::from_utf8_lossy(&std::fs::read(file).unwrap()));
        }
        let words: Vec<&str> = aof.lines().filter(|l| !l.starts_with(['*', '$'])).collect();
        let blocks: Vec<&[&str]> = words
            .split(|w| w.eq_ignore_ascii_case("EXEC"))
            .filter(|b| b.iter().any(|w| w.eq_ignore_ascii_case("MULTI")))
            .collect();
        let both = blocks
            .iter()
            .filter(|b| b.contains(&"{acme}:user:1") && b.contains(&"{acme}:org"))
            .count();
        assert_eq!(
            both, 2,
            "{flavor:?}: two admitted calls, each one transaction:\n{aof}"
        );
        assert!(
            !aof.contains("RL.ALL") && !aof.contains("rl.all"),
            "{flavor:?}: replicated verbatim"
        );
    }
}

#[test]
fn acl_refuses_a_call_with_any_key_outside_the_pattern() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut admin = server.conn();
        let _: () = redis::cmd("ACL")
            .arg(&[
                "SETUSER", "limited", "on", ">pw", "+rl.all", "+rl.peek", "~rl:*",
            ])
            .query(&mut admin)
            .unwrap();
        let url = format!("redis://limited:pw@127.0.0.1:{}/", server.port);
        let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
        let ok = all(
            &mut c,
            &[
                "2", "rl:a", "rl:b", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        )
        .unwrap();
        assert_eq!(ok.allowed, 1, "{f:?}");
        for line in [
            [
                "2", "rl:c", "other:d", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
            [
                "2", "other:d", "rl:c", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        ] {
            let err = all(&mut c, &line).unwrap_err();
            assert!(err.to_string().contains("NOPERM"), "{f:?}: {err}");
        }
        let exists: i64 = redis::cmd("EXISTS")
            .arg("rl:c")
            .arg("other:d")
            .query(&mut admin)
            .unwrap();
        assert_eq!(exists, 0, "{f:?}: a refused call writes nothing");
        // RL.PEEK only needs read access to its key.
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "reader", "on", ">pw", "+rl.peek", "%R~rl:*"])
            .query(&mut admin)
            .unwrap();
        let url = format!("redis://reader:pw@127.0.0.1:{}/", server.port);
        let mut r = redis::Client::open(url).unwrap().get_connection().unwrap();
        assert_eq!(peek(&mut r, &["SLIDE", "rl:a", "5", "1000"])[0], 1, "{f:?}");
        let err = run(&mut r, &["RL.PEEK", "SLIDE", "other:a", "5", "1000"]).unwrap_err();
        assert!(err.to_string().contains("NOPERM"), "{f:?}: {err}");
    });
}

#[test]
fn command_getkeys_finds_every_key() {
    on_every_server(|server| {
        let mut c = server.conn();
        let keys: Vec<String> = redis::cmd("COMMAND")
            .arg(&[
                "GETKEYS", "RL.ALL", "3", "a", "b", "c", "SLIDE", "1", "1", "FIXED", "1", "1",
                "FIXED", "2", "2",
            ])
            .query(&mut c)
            .unwrap();
        assert_eq!(keys, ["a", "b", "c"], "{:?}", server.flavor);
        let keys: Vec<String> = redis::cmd("COMMAND")
            .arg(&["GETKEYS", "RL.PEEK", "SLIDE", "k", "1", "1"])
            .query(&mut c)
            .unwrap();
        assert_eq!(keys, ["k"], "{:?}", server.flavor);
    });
}

fn cluster_enforces_one_slot(flavor: Flavor) {
    let cluster = Cluster::start(flavor);
    // Keys in different slots: refused on every node, before anything runs.
    for node in &cluster.nodes {
        let err = all(
            &mut node.conn(),
            &[
                "2", "user:1", "org:1", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        )
        .unwrap_err();
        assert_eq!(err.kind(), redis::ErrorKind::CrossSlot, "{flavor:?}: {err}");
    }
    // One hash tag: the owner admits, the other nodes redirect.
    let owner = cluster.owner("{user:1}:org");
    let r = all(
        &mut owner.conn(),
        &[
            "2",
            "{user:1}:user",
            "{user:1}:org",
            "SLIDE",
            "5",
            "1000",
            "FIXED",
            "5",
            "1000",
        ],
    )
    .unwrap();
    assert_eq!(r.allowed, 1, "{flavor:?}");
    for node in cluster.nodes.iter().filter(|n| n.port != owner.port) {
        let err = all(
            &mut node.conn(),
            &[
                "2",
                "{user:1}:user",
                "{user:1}:org",
                "SLIDE",
                "5",
                "1000",
                "FIXED",
                "5",
                "1000",
            ],
        )
        .unwrap_err();
        assert_eq!(err.kind(), redis::ErrorKind::Moved, "{flavor:?}: {err}");
    }
    // RL.PEEK is routed by its key too.
    let r = peek(&mut owner.conn(), &["SLIDE", "{user:1}:user", "5", "1000"]);
    assert_eq!(r[..2], [1, 3], "{flavor:?}");
}

#[test]
fn redis_cluster_refuses_keys_in_different_slots() {
    cluster_enforces_one_slot(Flavor::Redis7);
}

#[test]
fn valkey_cluster_refuses_keys_in_different_slots() {
    cluster_enforces_one_slot(Flavor::Valkey9Native);
}

//! The keys the server learns of a call (`COMMAND GETKEYS`, ACL key
//! patterns, Cluster routing) are those of a call the command accepts:
//! RL.ALL reports none for a call it refuses, so the caller gets the
//! command's own error rather than CROSSSLOT, MOVED or NOPERM about
//! arguments that are not keys. RL.PEEK's one key is at index 2.
mod common;

use common::cluster::Cluster;
use common::features::*;
use common::limiters::error_of;
use common::*;

fn getkeys(c: &mut redis::Connection, line: &[&str]) -> redis::RedisResult<Vec<String>> {
    redis::cmd("COMMAND").arg("GETKEYS").arg(line).query(c)
}

/// Lines RL.ALL refuses, with (part of) the error it answers.
const REFUSED: &[(&[&str], &str)] = &[
    // Fewer arguments than numkeys keys and clauses need.
    (&["5", "a", "SLIDE", "1", "1"], "wrong number of arguments"),
    // More keys than RL.ALL takes.
    (
        &[
            "17", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13",
            "k14", "k15", "k16", "k17", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1",
            "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE",
            "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1",
            "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE",
            "1", "1",
        ],
        "numkeys",
    ),
    (&["0", "a", "SLIDE", "1", "1"], "numkeys"),
    (&["x", "a", "SLIDE", "1", "1"], "numkeys"),
    (&["2", "a", "b", "SLIDE", "1", "1"], "1 clause was given"),
    (
        &["2", "a", "a", "SLIDE", "1", "1", "SLIDE", "1", "1"],
        "its own key",
    ),
    (&["1", "a", "SLIDE", "0", "1"], "limit"),
];

fn with_name<'a>(line: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["RL.ALL"];
    v.extend_from_slice(line);
    v
}

#[test]
fn getkeys_reports_no_keys_for_a_call_the_command_refuses() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for (line, want) in REFUSED {
            let line = with_name(line);
            let err = error_of(&mut c, &line);
            assert!(err.contains(want), "{f:?} {line:?}: {err}");
            let keys = getkeys(&mut c, &line);
            let err = keys.expect_err(&format!("{f:?} {line:?}: keys reported"));
            assert!(
                err.to_string().contains("Invalid arguments"),
                "{f:?} {line:?}: {err}"
            );
        }
        // Sixteen keys, the most RL.ALL takes: all of them.
        let keys: Vec<String> = (1..=16).map(|i| format!("k{i}")).collect();
        let mut line = vec!["RL.ALL".to_string(), "16".into()];
        line.extend(keys.iter().cloned());
        for _ in 0..16 {
            line.extend(["FIXED", "5", "1000"].map(String::from));
        }
        let line: Vec<&str> = line.iter().map(String::as_str).collect();
        assert_eq!(getkeys(&mut c, &line).unwrap(), keys, "{f:?}");
        assert_eq!(all(&mut c, &line[1..]).unwrap().allowed, 1, "{f:?}");
    });
}

#[test]
fn getkeys_and_flags_say_each_rl_all_key_is_written() {
    // COMMAND GETKEYSANDFLAGS: Redis 7.0+, Valkey.
    on_every_server(|server| {
        let f = server.flavor;
        let line = [
            "RL.ALL", "2", "a", "b", "SLIDE", "1", "1", "FIXED", "1", "1",
        ];
        let v: Vec<(String, Vec<String>)> = redis::cmd("COMMAND")
            .arg("GETKEYSANDFLAGS")
            .arg(&line)
            .query(&mut server.conn())
            .unwrap();
        assert_eq!(v.len(), 2, "{f:?}: {v:?}");
        for ((key, flags), want) in v.iter().zip(["a", "b"]) {
            assert_eq!(key, want, "{f:?}");
            assert!(
                flags.contains(&"RW".to_string()) && flags.contains(&"update".to_string()),
                "{f:?}: {flags:?}"
            );
        }
    });
}

#[test]
fn rl_peek_reports_its_key_at_index_two() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for line in [
            ["RL.PEEK", "SLIDE", "k", "5", "1000"],
            ["RL.PEEK", "FIXED", "k", "5", "1000"],
            ["RL.PEEK", "THROTTLE", "k", "5", "1"],
        ] {
            assert_eq!(getkeys(&mut c, &line).unwrap(), ["k"], "{f:?} {line:?}");
        }
        // Too short to name a key: the server refuses before asking.
        let err = getkeys(&mut c, &["RL.PEEK", "SLIDE"]).unwrap_err();
        assert!(
            err.to_string().contains("number of arguments"),
            "{f:?}: {err}"
        );
    });
}

#[test]
fn acl_lets_a_refused_call_reach_its_own_error() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut admin = server.conn();
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "limited", "on", ">pw", "+rl.all", "~rl:*"])
            .query(&mut admin)
            .unwrap();
        let url = format!("redis://limited:pw@127.0.0.1:{}/", server.port);
        let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
        // "SLIDE", "1" are not keys: the call's own error, not NOPERM.
        let err = error_of(&mut c, &["RL.ALL", "5", "rl:a", "SLIDE", "1", "1"]);
        assert!(err.contains("wrong number of arguments"), "{f:?}: {err}");
        // Valid calls are still checked key by key.
        let ok = [
            "RL.ALL", "2", "rl:a", "rl:b", "SLIDE", "5", "1000", "FIXED", "5", "1000",
        ];
        assert_eq!(all(&mut c, &ok[1..]).unwrap().allowed, 1, "{f:?}");
        let err = error_of(
            &mut c,
            &[
                "RL.ALL", "2", "rl:a", "other", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        );
        assert!(err.contains("NOPERM"), "{f:?}: {err}");
    });
}

fn refused_calls_get_their_own_error_on_a_cluster(flavor: Flavor) {
    let cluster = Cluster::start(flavor);
    for node in &cluster.nodes {
        let mut c = node.conn();
        for (line, want) in REFUSED {
            let line = with_name(line);
            let err = error_of(&mut c, &line);
            assert!(err.contains(want), "{flavor:?} {line:?}: {err}");
        }
    }
    // A valid call is still routed by its keys.
    let owner = cluster.owner("{u}a");
    let line = [
        "2", "{u}a", "{u}b", "SLIDE", "5", "1000", "FIXED", "5", "1000",
    ];
    assert_eq!(
        all(&mut owner.conn(), &line).unwrap().allowed,
        1,
        "{flavor:?}"
    );
    for node in cluster.nodes.iter().filter(|n| n.port != owner.port) {
        let err = all(&mut node.conn(), &line).unwrap_err();
        assert_eq!(err.kind(), redis::ErrorKind::Moved, "{flavor:?}: {err}");
    }
    let err = all(
        &mut owner.conn(),
        &[
            "2", "user:1", "org:1", "SLIDE", "5", "1000", "FIXED", "5", "1000",
        ],
    )
    .unwrap_err();
    assert_eq!(err.kind(), redis::ErrorKind::CrossSlot, "{flavor:?}: {err}");
}

#[test]
fn redis7_cluster_answers_a_refused_call_with_its_own_error() {
    refused_calls_get_their_own_error_on_a_cluster(Flavor::Redis7);
}

#[test]
fn redis8_cluster_answers_a_refused_call_with_its_own_error() {
    refused_calls_get_their_own_error_on_a_cluster(Flavor::Redis8);
}

#[test]
fn valkey_cluster_answers_a_refused_call_with_its_own_error() {
    refused_calls_get_their_own_error_on_a_cluster(Flavor::Valkey9Native);
}

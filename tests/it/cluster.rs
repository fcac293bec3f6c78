//! Cluster: every command declares its keys, so the server routes by them.
//! A cluster-aware client reaches the owner and decisions stay exact; other
//! nodes answer MOVED; RL.ALL's keys must share a slot (CROSSSLOT); a call
//! RL.ALL refuses gets its own error, not a routing one; a node refuses a
//! slot it does not serve. One three-node cluster per server checks it all.

use std::time::Duration;

use crate::harness::all_commands::{every_command, words};
use crate::harness::cluster::{moved, Cluster};
use crate::harness::*;
use crate::metadata::{with_name, REFUSED};

const KEYS: usize = 300;

fn decisions_are_exact_and_every_command_is_routed(flavor: Flavor, cluster: &Cluster) {
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let mut c = client.get_connection().unwrap();
    for i in 0..KEYS {
        let key = format!("rl:user:{i}");
        let limit = 1 + (i % 3) as u64;
        for n in 0..limit {
            let r: Vec<i64> = redis::cmd("RL.SLIDE")
                .arg(&key)
                .arg(limit)
                .arg(600_000)
                .query(&mut c)
                .unwrap();
            assert_eq!(r[..2], [1, (limit - n - 1) as i64], "{flavor:?} {key}");
        }
        let r: Vec<i64> = redis::cmd("RL.SLIDE")
            .arg(&key)
            .arg(limit)
            .arg(600_000)
            .query(&mut c)
            .unwrap();
        assert_eq!(
            r[0], 0,
            "{flavor:?} {key}: the limit holds across the cluster"
        );
    }
    // Every key lives on its owner only, with exactly `limit` entries.
    let mut per_node = vec![0usize; cluster.nodes.len()];
    for i in 0..KEYS {
        let key = format!("rl:user:{i}");
        let owner = cluster.owner(&key);
        let card: i64 = redis::cmd("ZCARD")
            .arg(&key)
            .query(&mut owner.conn())
            .unwrap();
        assert_eq!(card, 1 + (i % 3) as i64, "{flavor:?} {key}");
        let idx = cluster
            .nodes
            .iter()
            .position(|n| n.port == owner.port)
            .unwrap();
        per_node[idx] += 1;
    }
    assert!(
        per_node.iter().all(|&n| n > 0),
        "keys spread over all nodes: {per_node:?}"
    );

    // A node that does not own a key answers MOVED to every command on it.
    let lines = every_command("{moved}:");
    let owner_port = cluster.owner("{moved}:0").port;
    for node in &cluster.nodes {
        for line in &lines {
            let r = run(&mut node.conn(), &words(line));
            if node.port == owner_port {
                r.unwrap_or_else(|e| panic!("{flavor:?} {line:?}: {e}"));
            } else {
                let err = r.unwrap_err();
                assert_eq!(
                    err.kind(),
                    redis::ErrorKind::Moved,
                    "{flavor:?} {line:?}: {err}"
                );
                assert!(err.to_string().contains(&owner_port.to_string()), "{err}");
            }
        }
    }
    // And to RL.SLIDE on a key of its own.
    let key = "rl:moved-check";
    let owner_port = cluster.owner(key).port;
    for node in &cluster.nodes {
        let r: redis::RedisResult<Vec<i64>> = redis::cmd("RL.SLIDE")
            .arg(key)
            .arg(5)
            .arg(1000)
            .query(&mut node.conn());
        if node.port == owner_port {
            assert_eq!(r.unwrap()[0], 1);
        } else {
            let err = r.unwrap_err();
            assert_eq!(err.kind(), redis::ErrorKind::Moved, "{err}");
            assert!(err.to_string().contains(&owner_port.to_string()), "{err}");
            assert!(moved(node, key));
        }
    }
}

/// An RL.ALL call whose two keys share a hash tag, so one slot.
const ONE_TAG: &[&str] = &[
    "2",
    "{user:1}:user",
    "{user:1}:org",
    "SLIDE",
    "5",
    "1000",
    "FIXED",
    "5",
    "1000",
];

fn rl_all_and_rl_peek_keys_share_one_slot(flavor: Flavor, cluster: &Cluster) {
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
    let r = all(&mut owner.conn(), ONE_TAG).unwrap();
    assert_eq!(r.allowed, 1, "{flavor:?}");
    for node in cluster.nodes.iter().filter(|n| n.port != owner.port) {
        let err = all(&mut node.conn(), ONE_TAG).unwrap_err();
        assert_eq!(err.kind(), redis::ErrorKind::Moved, "{flavor:?}: {err}");
    }
    // RL.PEEK is routed by its key too.
    let r = peek(&mut owner.conn(), &["SLIDE", "{user:1}:user", "5", "1000"]);
    assert_eq!(r[..2], [1, 3], "{flavor:?}");
}

fn refused_calls_get_their_own_error(flavor: Flavor, cluster: &Cluster) {
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

fn cluster_routes_every_command_by_its_keys(flavor: Flavor) {
    let cluster = Cluster::start(flavor);
    decisions_are_exact_and_every_command_is_routed(flavor, &cluster);
    rl_all_and_rl_peek_keys_share_one_slot(flavor, &cluster);
    refused_calls_get_their_own_error(flavor, &cluster);
}

#[test]
fn redis7_cluster_routes_every_command_by_its_keys() {
    cluster_routes_every_command_by_its_keys(Flavor::Redis7);
}

#[test]
fn redis8_cluster_routes_every_command_by_its_keys() {
    cluster_routes_every_command_by_its_keys(Flavor::Redis8);
}

#[test]
fn valkey_cluster_routes_every_command_by_its_keys() {
    cluster_routes_every_command_by_its_keys(Flavor::Valkey9Native);
}

/// In Cluster mode the server routes by the declared keys: a key whose
/// slot this node does not serve is refused before the module runs, for
/// every command.
#[test]
fn a_node_refuses_keys_of_slots_it_does_not_serve() {
    for flavor in ALL {
        let mut server = Server::start_with(
            flavor,
            &[
                "--cluster-enabled",
                "yes",
                "--cluster-require-full-coverage",
                "no",
            ],
        );
        let mut c = server.conn();
        let _: () = redis::cmd("CLUSTER")
            .arg(&["ADDSLOTSRANGE", "0", "8191"])
            .query(&mut c)
            .unwrap();
        let ok = wait_until(Duration::from_secs(10), || {
            let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
            info.contains("cluster_state:ok")
        });
        assert!(ok, "{flavor:?}: cluster did not become ok");
        let slot = |c: &mut redis::Connection, k: &str| -> i64 {
            redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(k)
                .query(c)
                .unwrap()
        };
        let names: Vec<String> = (0..64).map(|i| format!("user:{i}")).collect();
        let served = names
            .iter()
            .find(|k| slot(&mut c, k) < 8192)
            .expect("served key");
        let unserved = names
            .iter()
            .find(|k| slot(&mut c, k) >= 8192)
            .expect("unserved key");

        assert_eq!(slide(&mut c, served, 5, 60_000)[0], 1, "{flavor:?}");
        let err = slide_raw(&mut c, &[unserved.as_bytes(), b"5", b"60000"]).unwrap_err();
        assert!(
            error_text(&err).starts_with("CLUSTERDOWN"),
            "{flavor:?}: {err:?}"
        );
        // Every command, on keys with the same hash tags.
        for line in every_command(&format!("{{{served}}}:")) {
            run(&mut c, &words(&line)).unwrap_or_else(|e| panic!("{flavor:?} {line:?}: {e}"));
        }
        for line in every_command(&format!("{{{unserved}}}:")) {
            let err = err_text(run(&mut c, &words(&line)));
            assert!(err.starts_with("CLUSTERDOWN"), "{flavor:?} {line:?}: {err}");
        }
        server.assert_alive();
    }
}

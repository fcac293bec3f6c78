//! Cluster routing: every command declares its key, so a cluster-aware
//! client reaches the owner and other nodes answer MOVED.
mod common;

use common::cluster::{moved, Cluster};
use common::*;

const KEYS: usize = 300;

fn decisions_are_exact_on_a_cluster(flavor: Flavor) {
    let cluster = Cluster::start(flavor);
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

    // A node that does not own the key answers MOVED to RL.SLIDE itself.
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

#[test]
fn redis_cluster_routes_every_key_to_its_owner() {
    decisions_are_exact_on_a_cluster(Flavor::Redis7);
}

#[test]
fn valkey_cluster_routes_every_key_to_its_owner() {
    decisions_are_exact_on_a_cluster(Flavor::Valkey9Native);
}

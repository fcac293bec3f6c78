//! A three-primary cluster on loopback, each node with the module (or, for
//! the function edition, without it).

use std::process::Command;
use std::time::{Duration, Instant};

use super::server::{free_port, Flavor, Server};

pub struct Cluster {
    pub nodes: Vec<Server>,
}

impl Cluster {
    /// Starts three cluster-enabled nodes and joins them with
    /// `redis-cli --cluster create`, then waits for `cluster_state:ok`.
    pub fn start(flavor: Flavor) -> Cluster {
        Cluster::start_nodes(flavor, true)
    }

    /// [`start`](Self::start) with nodes that do not load the module.
    pub fn start_without_module(flavor: Flavor) -> Cluster {
        Cluster::start_nodes(flavor, false)
    }

    fn start_nodes(flavor: Flavor, module: bool) -> Cluster {
        let nodes: Vec<Server> = (0..3)
            .map(|_| {
                let bus = free_port().to_string();
                Server::start_in(
                    flavor,
                    super::server::new_dir(flavor),
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-port",
                        &bus,
                        "--cluster-node-timeout",
                        "5000",
                    ],
                    module,
                )
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("run redis-cli (make deps installs redis-tools)");
        assert!(
            out.status.success(),
            "cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Cluster { nodes };
        cluster.wait_ok(Duration::from_secs(30));
        cluster
    }

    fn wait_ok(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let all_ok = self.nodes.iter().all(|n| {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut n.conn())
                    .unwrap_or_default();
                info.contains("cluster_state:ok")
            });
            if all_ok {
                return;
            }
            assert!(
                start.elapsed() < limit,
                "cluster did not reach cluster_state:ok"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }

    /// The node that owns `key`'s slot: the only one that does not answer
    /// `MOVED` for it.
    pub fn owner(&self, key: &str) -> &Server {
        let owners: Vec<&Server> = self.nodes.iter().filter(|n| !moved(n, key)).collect();
        assert_eq!(owners.len(), 1, "exactly one node owns {key}");
        owners[0]
    }
}

/// Whether `node` redirects `key` elsewhere.
pub fn moved(node: &Server, key: &str) -> bool {
    let r: redis::RedisResult<i64> = redis::cmd("EXISTS").arg(key).query(&mut node.conn());
    matches!(&r, Err(e) if e.kind() == redis::ErrorKind::Moved)
}

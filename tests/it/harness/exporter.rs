//! The real redis_exporter (Debian's `prometheus-redis-exporter`, `make
//! deps`) run against a test server with rl's collect script, and its
//! `/metrics` page read over loopback.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::server::{free_port, wait_until, Server};

/// The collect script users install (`contrib/redis_exporter/rl.lua`).
pub fn collect_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contrib/redis_exporter/rl.lua")
}

/// `$RL_REDIS_EXPORTER`, else `prometheus-redis-exporter` on `PATH`, else
/// Debian's `/usr/bin/prometheus-redis-exporter`. Missing, it fails the
/// test saying how to install it: never a skip.
pub fn exporter_binary() -> PathBuf {
    let found = std::env::var_os("RL_REDIS_EXPORTER")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|d| d.join("prometheus-redis-exporter"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("/usr/bin/prometheus-redis-exporter"));
    assert!(
        found.is_file(),
        "redis_exporter not found at {}: run `make deps` (it installs Debian's \
         prometheus-redis-exporter) or set RL_REDIS_EXPORTER to the binary",
        found.display()
    );
    found
}

/// A running exporter; killed and reaped on drop.
pub struct Exporter {
    pub port: u16,
    child: Child,
}

impl Exporter {
    /// Starts the exporter against `server` with rl's collect script and
    /// waits until `/metrics` answers.
    pub fn start(server: &Server) -> Exporter {
        let port = free_port();
        let child = Command::new(exporter_binary())
            .env_clear()
            .arg("-redis.addr")
            .arg(server.url())
            .arg("-script")
            .arg(collect_script())
            .arg("-web.listen-address")
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis_exporter");
        let exporter = Exporter { port, child };
        assert!(
            wait_until(Duration::from_secs(10), || exporter.try_scrape().is_some()),
            "redis_exporter did not answer on 127.0.0.1:{port}"
        );
        exporter
    }

    fn try_scrape(&self) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        // HTTP/1.0: the server closes after the body, so read to the end.
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let (head, body) = text.split_once("\r\n\r\n")?;
        (head.split(' ').nth(1) == Some("200")).then(|| body.to_string())
    }

    /// One scrape of `/metrics`, the text exposition format.
    pub fn scrape(&self) -> String {
        self.try_scrape().expect("scrape redis_exporter /metrics")
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The samples of a scrape: `(metric name, labels as written) -> value`,
/// e.g. `("redis_script_values", "key=\"rl_slide_admitted\"") -> 3`.
pub fn samples(text: &str) -> BTreeMap<(String, String), f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.strip_suffix('}')?),
                None => (series, ""),
            };
            Some(((name.to_string(), labels.to_string()), value.parse().ok()?))
        })
        .collect()
}

/// rl's counters as the exporter exports them: `rl_slide_admitted -> 3`.
pub fn rl_script_values(text: &str) -> BTreeMap<String, u64> {
    samples(text)
        .into_iter()
        .filter(|((name, _), _)| name == "redis_script_values")
        .filter_map(|((_, labels), v)| {
            let key = labels.strip_prefix("key=\"")?.strip_suffix('"')?;
            Some((key.to_string(), v as u64))
        })
        .collect()
}

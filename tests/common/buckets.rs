//! Helpers for the RL.BUCKETS / RL.COUNT / RL.TOTALS tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::Server;

/// `RL.BUCKETS key <extra...>`
pub fn buckets(
    c: &mut redis::Connection,
    key: &str,
    extra: &[&str],
) -> redis::RedisResult<Vec<i64>> {
    let mut cmd = redis::cmd("RL.BUCKETS");
    cmd.arg(key).arg(extra);
    cmd.query(c)
}

/// `RL.COUNT key window field <extra...>` as name/total pairs (RESP2).
pub fn count(
    c: &mut redis::Connection,
    key: &str,
    window: u64,
    field: &str,
    extra: &[&str],
) -> redis::RedisResult<Vec<(String, i64)>> {
    let mut cmd = redis::cmd("RL.COUNT");
    cmd.arg(key).arg(window).arg(field).arg(extra);
    cmd.query(c)
}

/// `RL.TOTALS key window <extra...>` as name/total pairs (RESP2).
pub fn totals(
    c: &mut redis::Connection,
    key: &str,
    window: u64,
    extra: &[&str],
) -> redis::RedisResult<Vec<(String, i64)>> {
    let mut cmd = redis::cmd("RL.TOTALS");
    cmd.arg(key).arg(window).arg(extra);
    cmd.query(c)
}

pub fn fields(c: &mut redis::Connection, key: &str) -> BTreeMap<String, String> {
    redis::cmd("HGETALL").arg(key).query(c).unwrap()
}

/// The bucket fields (numeric names) of a key.
pub fn bucket_fields(c: &mut redis::Connection, key: &str) -> BTreeMap<i64, String> {
    fields(c, key)
        .into_iter()
        .filter_map(|(k, v)| k.parse::<i64>().ok().map(|b| (b, v)))
        .collect()
}

/// The error reply's text as the server sent it (`ERR ...`, `WRONGTYPE ...`).
pub fn err_text<T: std::fmt::Debug>(r: redis::RedisResult<T>) -> String {
    let e = r.expect_err("an error reply");
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => e.to_string(),
    }
}

/// A replica of `primary` (same flavour), once its link is up.
pub fn start_replica(primary: &Server) -> Server {
    let port = primary.port.to_string();
    let replica = Server::start_with(primary.flavor, &["--replicaof", "127.0.0.1", &port]);
    let mut c = replica.conn();
    let start = Instant::now();
    loop {
        let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
        if info.contains("master_link_status:up") {
            return replica;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?} replica never linked: {info}",
            primary.flavor
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the replicas acknowledged everything written so far.
pub fn wait_replicas(c: &mut redis::Connection, n: i64) {
    let acked: i64 = redis::cmd("WAIT").arg(n).arg(10_000).query(c).unwrap();
    assert_eq!(acked, n, "replicas did not acknowledge");
}

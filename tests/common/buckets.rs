//! Helpers for the RL.BUCKETS / RL.COUNT / RL.TOTALS tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

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

/// The header field `h` of an RL.BUCKETS / RL.COUNT key, parsed:
/// `kind,precision,oldest,newest,counts...` (the totals, then for
/// RL.BUCKETS the newest bucket's count).
#[derive(Debug)]
pub struct Header {
    pub kind: String,
    pub precision: i64,
    pub oldest: i64,
    pub newest: i64,
    pub counts: Vec<u64>,
}

pub fn header(c: &mut redis::Connection, key: &str) -> Header {
    let h: String = redis::cmd("HGET").arg(key).arg("h").query(c).unwrap();
    parse_header(&h)
}

pub fn parse_header(h: &str) -> Header {
    let items: Vec<&str> = h.split(',').collect();
    let int = |i: usize| {
        items[i]
            .parse::<i64>()
            .unwrap_or_else(|_| panic!("header {h}"))
    };
    Header {
        kind: items[0].to_string(),
        precision: int(1),
        oldest: int(2),
        newest: int(3),
        counts: items[4..].iter().map(|v| v.parse().unwrap()).collect(),
    }
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

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
/// `kind,precision,newest,held,counts...` (the totals, then for
/// RL.BUCKETS the newest bucket's count).
#[derive(Debug)]
pub struct Header {
    pub kind: String,
    pub precision: i64,
    pub newest: i64,
    /// Which older buckets have a field, in hex: bit i is newest - 1 - i.
    pub held: String,
    pub counts: Vec<u64>,
}

impl Header {
    /// The bucket indexes the held set names, oldest first.
    pub fn held_buckets(&self) -> Vec<i64> {
        let mut out = Vec::new();
        for (i, c) in self.held.chars().rev().enumerate() {
            let nibble = c.to_digit(16).expect("hex");
            for bit in 0..4 {
                if nibble >> bit & 1 == 1 {
                    out.push(self.newest - 1 - (i * 4 + bit) as i64);
                }
            }
        }
        out.sort_unstable();
        out
    }
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
        newest: int(2),
        held: items[3].to_string(),
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

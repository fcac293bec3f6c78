//! Reading what rl stored: a key's bytes and absolute expiry, sorted-set
//! entries, the bucket hash and its header, the whole keyspace as plain
//! values, and the server's change and replication counters.

use std::collections::BTreeMap;

use super::server::info_int;

/// A key's state that does not change with the passing of time: the DUMP
/// bytes (type, encoding-independent value) and the absolute expiry in ms
/// (`PEXPIRETIME`).
pub fn frozen_state(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    (dump, pexpiretime(c, key))
}

/// The key's absolute expiry in ms (`PEXPIRETIME`): -1 none, -2 no key.
pub fn pexpiretime(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap()
}

pub fn exists(c: &mut redis::Connection, keys: &[&str]) -> i64 {
    redis::cmd("EXISTS").arg(keys).query(c).unwrap()
}

pub fn dbsize(c: &mut redis::Connection) -> i64 {
    redis::cmd("DBSIZE").query(c).unwrap()
}

/// The value and absolute expiry of a string key, read in one transaction:
/// a key that expires at the current ms (a throttle state brought back to
/// idle) cannot vanish between the two reads (the server's clock stands
/// still within `EXEC`).
pub fn value_and_expiry(c: &mut redis::Connection, key: &str) -> (Option<String>, i64) {
    redis::pipe()
        .atomic()
        .cmd("GET")
        .arg(key)
        .cmd("PEXPIRETIME")
        .arg(key)
        .query(c)
        .unwrap()
}

pub fn zcard(c: &mut redis::Connection, key: &str) -> usize {
    redis::cmd("ZCARD").arg(key).query(c).unwrap()
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

    /// Bucket `b`'s field name, as a number: the index mod 4096 under the
    /// uppercase kinds (`B`, `C`), the index itself under an earlier
    /// build's (`b`, `c`).
    pub fn field_name(&self, b: i64) -> i64 {
        if self.kind.chars().all(|k| k.is_ascii_uppercase()) {
            b.rem_euclid(4096)
        } else {
            b
        }
    }

    /// The names of the fields the held set names (RL.COUNT's newest
    /// bucket's too), sorted.
    pub fn held_fields(&self) -> Vec<i64> {
        let mut out: Vec<i64> = self
            .held_buckets()
            .into_iter()
            .map(|b| self.field_name(b))
            .collect();
        if self.kind.eq_ignore_ascii_case("c") {
            out.push(self.field_name(self.newest));
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

/// The server's change counter (`rdb_changes_since_last_save`): every
/// write moves it, so an unmoved counter means nothing was written.
pub fn changes(c: &mut redis::Connection) -> i64 {
    info_int(c, "persistence", "rdb_changes_since_last_save")
}

/// The primary's replication offset: every byte it would send a replica.
pub fn repl_offset(c: &mut redis::Connection) -> i64 {
    info_int(c, "replication", "master_repl_offset")
}

/// A key's value as plain data, whatever its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plain {
    String(Vec<u8>),
    /// Members and scores, in order.
    Zset(Vec<(Vec<u8>, Vec<u8>)>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    Other(String),
}

/// One key: its value and absolute expiry (`PEXPIRETIME`).
pub fn plain_key(c: &mut redis::Connection, key: &[u8]) -> (Plain, i64) {
    let kind: String = redis::cmd("TYPE").arg(key).query(c).unwrap();
    let value = match kind.as_str() {
        "string" => Plain::String(redis::cmd("GET").arg(key).query(c).unwrap()),
        "zset" => Plain::Zset(
            redis::cmd("ZRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(c)
                .unwrap(),
        ),
        "hash" => Plain::Hash(redis::cmd("HGETALL").arg(key).query(c).unwrap()),
        other => Plain::Other(other.to_string()),
    };
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (value, at)
}

pub type Keyspace = BTreeMap<Vec<u8>, (Plain, i64)>;

/// The whole keyspace as plain values with absolute expiries.
pub fn keyspace(c: &mut redis::Connection) -> Keyspace {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    keys.into_iter()
        .map(|k| {
            let v = plain_key(c, &k);
            (k, v)
        })
        .collect()
}

/// Asserts the keyspace holds rl state of every layout (so a comparison of
/// it covers every command), and that no key lacks its expiry.
pub fn assert_covers_every_layout(space: &Keyspace) {
    let has = |f: fn(&Plain) -> bool| space.values().any(|(p, _)| f(p));
    assert!(has(|p| matches!(p, Plain::Zset(_))), "no RL.SLIDE state");
    assert!(has(|p| matches!(p, Plain::Hash(_))), "no bucket state");
    assert!(has(|p| matches!(p, Plain::String(_))), "no string state");
    for (k, (_, at)) in space {
        assert!(*at > 0, "{} has no expiry", String::from_utf8_lossy(k));
    }
}

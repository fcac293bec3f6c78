//! RL.BUCKETS, RL.COUNT, RL.TOTALS (and RL.PEEK / RL.REFUND BUCKETS,
//! BUCKETS clauses of RL.ALL) through the module and through the function
//! library: same replies, same errors, same hashes and expiries.
//!
//! On Valkey the clock is stopped: seeded random streams compare every
//! step with `same`. On Redis 7.0 and 8.2 the clock is real: the streams
//! use windows far longer than the test, and compare what does not depend
//! on the instant.
//!
//! The random lines are made in [`lines`] and run in [`streams`]; forged
//! and foreign hashes are in [`foreign`], the bounds on work and the
//! largest parameters in [`bounds`], RL.COUNT's and RL.TOTALS' totals in
//! [`totals`], refunds and OLDEST in [`verbs`].

mod bounds;
mod foreign;
mod lines;
pub(crate) mod streams;
mod totals;
mod verbs;

use redis::Value;

fn s(v: impl ToString) -> String {
    v.to_string()
}

/// Writes the same hash under `m:key` and `f:key`, with an absolute expiry
/// (`None`: no TTL).
fn forge(c: &mut redis::Connection, key: &str, fields: &[(&str, &str)], expire_at: Option<i64>) {
    for prefix in ["m:", "f:"] {
        let k = format!("{prefix}{key}");
        let _: () = redis::cmd("DEL").arg(&k).query(c).unwrap();
        let mut hset = redis::cmd("HSET");
        hset.arg(&k);
        for (f, v) in fields {
            hset.arg(*f).arg(*v);
        }
        let _: () = hset.query(c).unwrap();
        if let Some(at) = expire_at {
            let _: () = redis::cmd("PEXPIREAT").arg(&k).arg(at).query(c).unwrap();
        }
    }
}

/// The same string under `m:key` and `f:key`.
fn forge_string(c: &mut redis::Connection, key: &str) {
    for prefix in ["m:", "f:"] {
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}{key}"))
            .arg("not rl")
            .query(c)
            .unwrap();
    }
}

fn four(v: Result<Value, String>) -> [i64; 4] {
    let v: Vec<i64> = redis::from_redis_value(&v.unwrap()).unwrap();
    v.try_into().unwrap()
}

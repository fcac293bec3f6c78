//! RL.SLIDE, RL.PEEK SLIDE, RL.REFUND SLIDE and SLIDE clauses of RL.ALL:
//! the function edition against the module. On Valkey (stopped clock) every
//! step must give the same reply and leave the same state (`same`); on
//! Redis 7.0 and 8.2 (real clock) the streams compare what does not depend
//! on the instant. The random streams are in [`streams`], the error table
//! and the foreign keys in [`errors`], the log's entries (member numbers,
//! what a call reads) in [`entries`], the worked example and the edges in
//! [`edges`], refunds, OLDEST and blocks in [`verbs`].

mod edges;
mod entries;
mod errors;
pub(crate) mod streams;
mod verbs;

/// The member rl numbers `n` at `score`.
fn member(score: i64, n: i64) -> String {
    (score as i128 * 1_000_000 + n as i128).to_string()
}

/// ZCARD, 0 for a key that is not a sorted set.
fn zcard(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("ZCARD").arg(key).query(c).unwrap_or(0)
}

const FOREIGN: &str = "ERR key holds a sorted set that rl did not write";

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

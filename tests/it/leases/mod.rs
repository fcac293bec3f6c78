//! Leases (RL.ACQUIRE, RL.RELEASE, RL.RENEW) against real servers: replies
//! and the exact state (members, scores, absolute expiry); never more than
//! `limit` held under 40 concurrent clients; expiry without release; `ID`
//! idempotency; renew after expiry refused; replicas, an AOF replay and a
//! promoted replica hold the same leases; errors name the argument and the
//! command and leave foreign keys untouched.
//!
//! A lease's life is in [`lifecycle`], replicas and the AOF in
//! [`replication`], argument errors in [`errors`], keys rl did not write
//! and the lease set's header in [`foreign`], leases in RL.PEEK, RL.ALL,
//! RL.REFUND, INFO, keyspace events and at maxmemory in [`commands`].

mod commands;
mod errors;
mod foreign;
mod lifecycle;
mod replication;

use crate::harness::*;

type Leased = (i64, i64, i64, i64, Option<String>);

fn acquire(c: &mut redis::Connection, args: &[&str]) -> Leased {
    redis::cmd("RL.ACQUIRE")
        .arg(args)
        .query(c)
        .unwrap_or_else(|e| panic!("RL.ACQUIRE {args:?}: {e}"))
}

fn change(c: &mut redis::Connection, name: &str, args: &[&str]) -> Reply4 {
    let v: Vec<i64> = redis::cmd(name)
        .arg(args)
        .query(c)
        .unwrap_or_else(|e| panic!("{name} {args:?}: {e}"));
    v.try_into().expect("four integers")
}

/// The leases of a lease set as (id, expiry), after checking that it
/// starts with its header (`rl leases` at score 0); none for a missing key.
fn leases(c: &mut redis::Connection, key: &str) -> Vec<(String, i64)> {
    let mut e = entries(c, key);
    if e.is_empty() {
        return e;
    }
    assert_eq!(e[0], ("rl leases".to_string(), 0), "{key}: {e:?}");
    e.remove(0);
    e
}

fn err(c: &mut redis::Connection, name: &str, args: &[&str]) -> String {
    let e = redis::cmd(name)
        .arg(args)
        .query::<redis::Value>(c)
        .expect_err(&format!("{name} {args:?} must fail"));
    error_text(&e)
}

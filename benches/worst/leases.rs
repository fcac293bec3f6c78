//! The lease commands' worst cases: RL.ACQUIRE, RL.RELEASE, RL.RENEW,
//! RL.PEEK ACQUIRE and RL.ALL over 8 ACQUIRE clauses on large lease sets.

use super::*;

/// Held leases of the big lease set (the largest `limit`), and of each of
/// RL.ALL's 8.
pub(super) const LEASES_HELD: u64 = 1_000_000;

pub(super) const ALL_LEASES_HELD: u64 = 100_000;

pub(super) const LEASE_MS: i64 = 600_000;

/// Writes `key` as rl's lease set holding `n` leases `l<i>` that end
/// `LEASE_MS` from now (ZADD in batches, the header, a TTL past them).
pub(super) fn fill_leases(c: &mut Connection, key: &str, n: u64) {
    let _: () = redis::cmd("DEL").arg(key).query(c).unwrap();
    let end = server_ms(c) + LEASE_MS;
    let mut i = 0;
    while i < n {
        let mut z = redis::cmd("ZADD");
        z.arg(key);
        for j in i..(i + 1_000).min(n) {
            // Spread over the last 10 s, so ranks and scores differ.
            z.arg(end - (j % 10_000) as i64).arg(format!("l{j}"));
        }
        let _: i64 = z.query(c).unwrap();
        i += 1_000;
    }
    let _: i64 = redis::cmd("ZADD")
        .arg(key)
        .arg(0)
        .arg("rl leases")
        .query(c)
        .unwrap();
    let _: i64 = redis::cmd("PEXPIREAT")
        .arg(key)
        .arg(end + LEASE_MS)
        .query(c)
        .unwrap();
}

/// The lease commands on a set of 10^6 held leases, and RL.ALL over 8
/// ACQUIRE clauses.
pub(super) fn lease_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};
    let big = "{w}:l0";
    fill_leases(c, big, LEASES_HELD);
    let line = |s: &str| words(&s.replace("KEY", big));
    case(
        out,
        "RL.ACQUIRE",
        "denied at limit 10^6 on 10^6 held (counted with ZCOUNT)".into(),
        c,
        none,
        &line(&format!("RL.ACQUIRE KEY {LEASES_HELD} {LEASE_MS}")),
        &mut allowed(0, "full lease set"),
    );
    case(
        out,
        "RL.ACQUIRE",
        "denied, limit lowered to 1 on 10^6 held (the wait: the 10^6th lease, by rank)".into(),
        c,
        none,
        &line(&format!("RL.ACQUIRE KEY 1 {LEASE_MS}")),
        &mut allowed(0, "lowered limit"),
    );
    case(
        out,
        "RL.PEEK",
        "ACQUIRE, limit lowered to 1 on 10^6 held".into(),
        c,
        none,
        &line(&format!("RL.PEEK ACQUIRE KEY 1 {LEASE_MS}")),
        &mut allowed(0, "peek, lowered limit"),
    );
    // 16 expired leases before each call, and the last call's lease gone.
    let expired = &mut |c: &mut Connection| {
        let mut z = redis::cmd("ZADD");
        z.arg(big);
        for i in 0..16 {
            z.arg(1 + i).arg(format!("x{i}"));
        }
        let _: i64 = z.query(c).unwrap();
        let _: i64 = redis::cmd("ZREM").arg(big).arg("bench").query(c).unwrap();
    };
    // One slot free: the admission takes it, and the setup frees it again.
    let _: i64 = redis::cmd("ZREM").arg(big).arg("l0").query(c).unwrap();
    let before = zcard(c, big);
    case(
        out,
        "RL.ACQUIRE",
        "admitted on 10^6 - 1 held at limit 10^6, removing 16 expired (the most one call removes)"
            .into(),
        c,
        expired,
        &line(&format!("RL.ACQUIRE KEY {LEASES_HELD} {LEASE_MS} ID bench")),
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "acquire removing expired: {r:?}");
            assert_eq!(zcard(c, big), before + 1, "16 expired removed");
        },
    );
    case(
        out,
        "RL.RENEW",
        "a held lease among 10^6 (state after: ZCOUNT and both ends)".into(),
        c,
        none,
        &line(&format!("RL.RENEW KEY l5 {}", 2 * LEASE_MS)),
        &mut allowed(1, "renew"),
    );
    let release_setup = &mut |c: &mut Connection| {
        let at = server_ms(c) + LEASE_MS;
        let _: i64 = redis::cmd("ZADD")
            .arg(big)
            .arg(at)
            .arg("r")
            .query(c)
            .unwrap();
    };
    case(
        out,
        "RL.RELEASE",
        "a held lease among 10^6".into(),
        c,
        release_setup,
        &line("RL.RELEASE KEY r"),
        &mut allowed(1, "release"),
    );
    let _: () = redis::cmd("DEL").arg(big).query(c).unwrap();

    let keys = all_keys("l");
    for k in &keys {
        fill_leases(c, k, ALL_LEASES_HELD);
    }
    case(
        out,
        "RL.ALL",
        "8 ACQUIRE clauses, limit lowered to 1 on 8 x 100,000 held (8 waits by rank)".into(),
        c,
        none,
        &all_line(&keys, |_| format!("ACQUIRE 1 {LEASE_MS}")),
        &mut allowed(0, "RL.ALL leases"),
    );
    for k in &keys {
        let _: () = redis::cmd("DEL").arg(k).query(c).unwrap();
    }
}

//! The bucket commands' worst cases: RL.BUCKETS, RL.PEEK BUCKETS, RL.COUNT,
//! RL.TOTALS and RL.ALL over BUCKETS clauses, on hashes written in rl's
//! layout.

use super::*;

/// `bits` set bits in the held-buckets hex (bit i is bucket newest - 1 - i).
pub(super) fn held_hex(bits: usize) -> String {
    let lead = match bits % 4 {
        0 => String::new(),
        r => format!("{:x}", (1u32 << r) - 1),
    };
    format!("{lead}{}", "f".repeat(bits / 4))
}

pub(super) fn field_name(i: usize) -> String {
    // 32 characters, the longest field name RL.COUNT takes.
    format!("{:x<32}", format!("field{i}"))
}

/// Writes `key` as rl writes an RL.BUCKETS (`fields` 0) or RL.COUNT key
/// with `n` filled buckets, the newest one `newest`, and a TTL.
pub(super) fn bucket_key(
    pipe: &mut redis::Pipeline,
    key: &str,
    newest: i64,
    fields: usize,
    n: i64,
) {
    let oldest = newest - n + 1;
    let older = (n - 1) as usize;
    pipe.cmd("DEL").arg(key).ignore();
    let mut hset = redis::cmd("HSET");
    hset.arg(key);
    if fields == 0 {
        let total = BUCKET_COUNT * n as u64;
        hset.arg("h").arg(format!(
            "b,{PRECISION},{newest},{},{total},{BUCKET_COUNT}",
            held_hex(older)
        ));
        for b in oldest..newest {
            hset.arg(b).arg(BUCKET_COUNT);
        }
    } else {
        let total = BUCKET_COUNT * n as u64;
        let totals = vec![total.to_string(); fields].join(",");
        let counts = vec![BUCKET_COUNT.to_string(); fields].join(",");
        let names: Vec<String> = (0..fields).map(field_name).collect();
        hset.arg("h")
            .arg(format!(
                "c,{PRECISION},{newest},{},{totals}",
                held_hex(older)
            ))
            .arg("f")
            .arg(names.join(","));
        // RL.COUNT's newest bucket has a field of its own too.
        for b in oldest..=newest {
            hset.arg(b).arg(&counts);
        }
    }
    pipe.add_command(hset).ignore();
    pipe.cmd("PEXPIRE").arg(key).arg(3_600_000).ignore();
}

/// How far a key's `n` buckets are behind the window.
#[derive(Clone, Copy)]
pub(super) enum Age {
    /// All of them count now.
    Live,
    /// The older half has left the window: the most a call reads (it reads
    /// the smaller side, those that left or those that count).
    HalfLeft,
    /// All of them left (the newest one just left): nothing to read.
    AllLeft,
}

pub(super) fn newest_bucket(c: &mut Connection, age: Age, n: i64) -> i64 {
    let current = server_ms(c) / PRECISION;
    match age {
        Age::Live => current,
        Age::HalfLeft => current - n / 2,
        Age::AllLeft => current - n - 1,
    }
}

pub(super) fn write_buckets(c: &mut Connection, keys: &[String], age: Age, fields: usize, n: i64) {
    let newest = newest_bucket(c, age, n);
    let mut pipe = redis::pipe();
    for k in keys {
        bucket_key(&mut pipe, k, newest, fields, n);
    }
    let () = pipe.query(c).unwrap();
}

/// RL.BUCKETS, RL.PEEK BUCKETS, RL.COUNT, RL.TOTALS and RL.ALL over 8
/// BUCKETS clauses, on hashes written in rl's layout.
pub(super) fn bucket_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};

    // ---- RL.BUCKETS ----
    let b = vec!["{w}:b".to_string()];
    let line = words(&format!(
        "RL.BUCKETS {} {MAX_LIMIT} {WINDOW} PRECISION {PRECISION}",
        b[0]
    ));
    case(
        out,
        "RL.BUCKETS",
        "admit on a key whose 250 buckets all left the window (249 fields removed)".into(),
        c,
        &mut |c| write_buckets(c, &b, Age::AllLeft, 0, BUCKETS),
        &line,
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "stale buckets: {r:?}");
            assert_eq!(hlen(c, &b[0]), 1, "stale buckets removed");
        },
    );
    case(
        out,
        "RL.BUCKETS",
        "admit on a key whose older 125 of 250 buckets left the window (125 read, 125 removed)"
            .into(),
        c,
        &mut |c| write_buckets(c, &b, Age::HalfLeft, 0, BUCKETS),
        &line,
        &mut allowed(1, "half-stale buckets"),
    );
    let mut peek = line.clone();
    peek.splice(0..1, words("RL.PEEK BUCKETS"));
    case(
        out,
        "RL.PEEK",
        "BUCKETS on a key whose older 125 of 250 buckets left the window".into(),
        c,
        &mut |c| write_buckets(c, &b, Age::HalfLeft, 0, BUCKETS),
        &peek,
        &mut allowed(1, "peek half-stale buckets"),
    );
    case(
        out,
        "RL.PEEK",
        "BUCKETS on a key whose 250 buckets all left the window".into(),
        c,
        &mut |c| write_buckets(c, &b, Age::AllLeft, 0, BUCKETS),
        &peek,
        &mut allowed(1, "peek stale buckets"),
    );
    write_buckets(c, &b, Age::Live, 0, BUCKETS);
    let denied = words(&format!(
        "RL.BUCKETS {} 1 {WINDOW} PRECISION {PRECISION}",
        b[0]
    ));
    case(
        out,
        "RL.BUCKETS",
        "denied, limit 1 on 250 live buckets (retry walks all of them)".into(),
        c,
        none,
        &denied,
        &mut allowed(0, "bucket denial"),
    );
    let mut peek = denied.clone();
    peek.splice(0..1, words("RL.PEEK BUCKETS"));
    case(
        out,
        "RL.PEEK",
        "BUCKETS, limit 1 on 250 live buckets".into(),
        c,
        none,
        &peek,
        &mut allowed(0, "peek bucket denial"),
    );

    // ---- RL.COUNT / RL.TOTALS: 8 fields of 32 characters. ----
    let k = vec!["{w}:c".to_string()];
    let count = words(&format!(
        "RL.COUNT {} {COUNT_WINDOW} {} BY {MAX_LIMIT} PRECISION {PRECISION}",
        k[0],
        field_name(0)
    ));
    let totals = words(&format!(
        "RL.TOTALS {} {COUNT_WINDOW} PRECISION {PRECISION}",
        k[0]
    ));
    let zero_totals = |_: &mut Connection, r: &Value| {
        let v = items(r);
        assert_eq!(v.len(), 2 * COUNT_FIELDS, "totals: {r:?}");
        assert!(v.chunks(2).all(|p| int(&p[1]) == 0), "stale totals: {r:?}");
    };
    write_buckets(c, &k, Age::AllLeft, COUNT_FIELDS, COUNT_BUCKETS);
    case(
        out,
        "RL.TOTALS",
        "8 fields, 100 buckets that all left the window (none read)".into(),
        c,
        none,
        &totals,
        &mut { zero_totals },
    );
    case(
        out,
        "RL.COUNT",
        "8 fields, 100 buckets that all left the window (100 fields removed)".into(),
        c,
        &mut |c| write_buckets(c, &k, Age::AllLeft, COUNT_FIELDS, COUNT_BUCKETS),
        &count,
        &mut |c, r| {
            assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "count: {r:?}");
            // h, f and the new bucket.
            assert_eq!(hlen(c, &k[0]), 3, "stale count buckets removed");
        },
    );
    write_buckets(c, &k, Age::HalfLeft, COUNT_FIELDS, COUNT_BUCKETS);
    case(
        out,
        "RL.TOTALS",
        "8 fields, the older 50 of 100 buckets left the window (50 read)".into(),
        c,
        none,
        &totals,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "totals: {r:?}"),
    );
    case(
        out,
        "RL.COUNT",
        "8 fields, the older 50 of 100 buckets left the window (50 read, 50 removed)".into(),
        c,
        &mut |c| write_buckets(c, &k, Age::HalfLeft, COUNT_FIELDS, COUNT_BUCKETS),
        &count,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "count: {r:?}"),
    );
    write_buckets(c, &k, Age::Live, COUNT_FIELDS, COUNT_BUCKETS);
    case(
        out,
        "RL.TOTALS",
        "8 fields, 100 live buckets".into(),
        c,
        none,
        &totals,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "totals: {r:?}"),
    );
    let live_count = words(&format!(
        "RL.COUNT {} {COUNT_WINDOW} {} PRECISION {PRECISION}",
        k[0],
        field_name(7)
    ));
    case(
        out,
        "RL.COUNT",
        "8 fields, 100 live buckets".into(),
        c,
        none,
        &live_count,
        &mut |_, r| assert_eq!(items(r).len(), 2 * COUNT_FIELDS, "count: {r:?}"),
    );

    // ---- RL.ALL: 8 BUCKETS clauses, sharing the 250 buckets one call
    // may read: 62 each. ----
    let keys = all_keys("b");
    let share = BUCKETS / CLAUSES as i64;
    let share_window = share * PRECISION;
    let half_all = all_line(&keys, |_| {
        format!("BUCKETS {MAX_LIMIT} {share_window} PRECISION {PRECISION}")
    });
    case(
        out,
        "RL.ALL",
        format!("8 BUCKETS clauses, each on {share} buckets of which the older half left"),
        c,
        &mut |c| write_buckets(c, &keys, Age::HalfLeft, 0, share),
        &half_all,
        &mut allowed(1, "RL.ALL half-stale buckets"),
    );
    let stale_all = half_all.clone();
    case(
        out,
        "RL.ALL",
        format!("8 BUCKETS clauses, each on {share} buckets that all left the window"),
        c,
        &mut |c| write_buckets(c, &keys, Age::AllLeft, 0, share),
        &stale_all,
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "RL.ALL stale buckets: {r:?}");
            let held: u64 = keys.iter().map(|k| hlen(c, k)).sum();
            assert_eq!(held, keys.len() as u64, "RL.ALL stale buckets removed");
        },
    );
    write_buckets(c, &keys, Age::Live, 0, share);
    let denied_all = all_line(&keys, |_| {
        format!("BUCKETS 1 {share_window} PRECISION {PRECISION}")
    });
    case(
        out,
        "RL.ALL",
        format!("8 BUCKETS clauses, each limit 1 on {share} live buckets, all denied (8 walks)"),
        c,
        none,
        &denied_all,
        &mut allowed(0, "RL.ALL bucket denials"),
    );
}

//! RL.BUCKETS: reply fields, the hash layout and its expiry, options;
//! under load: steady load admits close to the limit and never above, and
//! memory depends on the bucket count, not on the rate.

use crate::harness::*;

#[test]
fn reply_fields_hash_layout_and_expiry() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // 3 per minute in 60 buckets of 1 s (the default precision).
        for i in 0..3 {
            let r = buckets(&mut c, "u", &["3", "60000"]).unwrap();
            assert_eq!(r[..3], [1, 2 - i, 0], "{f:?}");
            assert!(r[3] > 59_000 && r[3] <= 60_999, "{f:?} reset {r:?}");
        }
        let r = buckets(&mut c, "u", &["3", "60000"]).unwrap();
        assert_eq!(r[..2], [0, 0], "{f:?}");
        // The admitted ones leave with their bucket: retry is the reset here.
        assert!(r[2] >= 1 && r[2] <= 60_999 && r[2] <= r[3], "{f:?} {r:?}");

        let h = header(&mut c, "u");
        assert_eq!((h.kind.as_str(), h.precision), ("B", 1000), "{f:?} {h:?}");
        assert_eq!(h.counts.len(), 2, "{f:?} {h:?}");
        assert_eq!(h.counts[0], 3, "{f:?}: the total");
        // The newest bucket's count is the header's; older ones have
        // fields, exactly those the header's held set names.
        let older = bucket_fields(&mut c, "u");
        let sum: u64 = older.values().map(|v| v.parse::<u64>().unwrap()).sum();
        assert_eq!(sum + h.counts[1], 3, "{f:?} {h:?}");
        assert_eq!(
            h.held_fields(),
            older.keys().copied().collect::<Vec<_>>(),
            "{f:?} {h:?}"
        );
        // The key lives until the newest bucket leaves the window, and at
        // most window/4 longer.
        let needed = (h.newest + 1) * 1000 - 1 + 60_000;
        let expire = pexpiretime(&mut c, "u");
        assert!(
            (needed..=needed + 15_000).contains(&expire),
            "{f:?}: expiry {expire}, needed {needed}"
        );
        let enc: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg("u")
            .query(&mut c)
            .unwrap();
        assert_eq!(enc, "listpack", "{f:?}");
    });
}

#[test]
fn cost_and_precision_options() {
    on_every_server(|server| {
        let mut c = server.conn();
        let r = buckets(
            &mut c,
            "u",
            &["10", "1000", "PRECISION", "100", "COST", "4"],
        )
        .unwrap();
        assert_eq!(r[..3], [1, 6, 0]);
        // The bucket leaves `window` ms after its last ms: 1000 to 1099 ms away.
        assert!((1000..=1099).contains(&r[3]), "{r:?}");
        let r = buckets(&mut c, "u", &["10", "1000", "cost", "7"]).unwrap();
        assert_eq!(r[..2], [0, 6]);
        assert_eq!(header(&mut c, "u").precision, 100);
    });
}

/// Admitted requests with server time in `(t - len, t]`.
fn admitted_in(admitted: &[i64], t: i64, len: i64) -> usize {
    admitted.iter().filter(|&&s| s > t - len && s <= t).count()
}

/// 1,500 calls, a step of `advance(1)` after each: on the stopped clock
/// exactly one per ms, on the real clock at least 1 ms apart, so at least
/// 1.5 s (over three windows) pass however fast the server answers.
#[test]
fn steady_load_admits_close_to_the_limit_and_never_above() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (limit, window, precision) = (20usize, 400i64, 40i64);
        let mut admitted = Vec::new();
        let mut denied = Vec::new();
        for _ in 0..1500 {
            // The server's own `now` for each call, exactly: the reply's
            // reset_after_ms is measured to the time the newest bucket
            // (the header's) leaves the window.
            let (r, h): (Vec<i64>, String) = redis::pipe()
                .atomic()
                .cmd("RL.BUCKETS")
                .arg("steady")
                .arg(limit)
                .arg(window)
                .arg("PRECISION")
                .arg(precision)
                .cmd("HGET")
                .arg("steady")
                .arg("h")
                .query(&mut c)
                .unwrap();
            let newest = parse_header(&h).newest;
            let now = (newest + 1) * precision - 1 + window - r[3];
            if r[0] == 1 {
                admitted.push(now);
            } else {
                denied.push(now);
            }
            if server.clock_stopped() {
                assert_eq!(now, server.clock_ms(), "{f:?}: the server's own now");
            }
            server.advance(1);
        }
        assert!(
            admitted.len() > 2 * limit,
            "{f:?}: {} admitted",
            admitted.len()
        );
        assert!(
            !denied.is_empty(),
            "{f:?}: the load never reached the limit"
        );
        for &t in &admitted {
            let n = admitted_in(&admitted, t, window);
            assert!(n <= limit, "{f:?}: {n} admitted in the window ending {t}");
        }
        // Close to the limit: a denial only when the window stretched by
        // one bucket (less 1 ms) already holds `limit`.
        for &t in &denied {
            let n = admitted_in(&admitted, t, window + precision - 1);
            assert!(n >= limit, "{f:?}: denied at {t} with only {n} admitted");
        }
    });
}

/// Fills two keys with the same buckets, one at 10 and one at 2,000
/// requests per bucket; each round runs in one MULTI so both keys see the
/// same bucket. On the real clock a round that straddles a bucket boundary
/// is redone (the stopped clock never straddles one). Counts
/// are plain integers: the faster key's counts take one more byte each in
/// the listpack, and memory differs by that (rounded to the allocator's
/// size classes), not by the rate.
#[test]
fn memory_differs_only_by_the_digits_of_the_counts() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let args = ["1000000", "15000", "PRECISION", "250"];
        for attempt in 0.. {
            assert!(
                attempt < 5,
                "{f:?}: rounds kept straddling bucket boundaries"
            );
            let (slow, fast) = (format!("slow{attempt}"), format!("fast{attempt}"));
            for _ in 0..4 {
                // One call each, weighted: a round is two commands in one
                // transaction, so on a real clock it straddles a bucket
                // boundary only if one falls between them (2,010 calls
                // took long enough under load to straddle five times).
                let mut pipe = redis::pipe();
                pipe.atomic();
                pipe.cmd("RL.BUCKETS")
                    .arg(&slow)
                    .arg(&args)
                    .arg(&["COST", "10"])
                    .ignore();
                pipe.cmd("RL.BUCKETS")
                    .arg(&fast)
                    .arg(&args)
                    .arg(&["COST", "2000"])
                    .ignore();
                let () = pipe.query(&mut c).unwrap();
                server.advance(300);
            }
            let (bs, bf) = (bucket_fields(&mut c, &slow), bucket_fields(&mut c, &fast));
            // Three older buckets in their fields, the newest in the header.
            let (hs, hf) = (header(&mut c, &slow), header(&mut c, &fast));
            if bs.keys().ne(bf.keys()) || bs.len() != 3 || hs.newest != hf.newest {
                assert!(
                    !server.clock_stopped(),
                    "{f:?}: {bs:?} {bf:?} {hs:?} {hf:?}"
                );
                continue;
            }
            assert!(bs.values().all(|v| v == "10"), "{f:?} {bs:?}");
            assert!(bf.values().all(|v| v == "2000"), "{f:?} {bf:?}");
            assert_eq!((hs.counts[1], hf.counts[1]), (10, 2000), "{f:?}");
            let (ms, mf) = (memory_usage(&mut c, &slow), memory_usage(&mut c, &fast));
            println!("{f:?}: 4 buckets at 10 per bucket {ms} B, at 2000 {mf} B");
            // Four counts and two totals one byte longer, in a listpack
            // whose allocation rounds up to a 16- or 32-byte size class.
            assert!((0..=32).contains(&(mf - ms)), "{f:?}: {ms} vs {mf}");
            break;
        }
    });
}

/// Builds a key holding `n` live buckets (1 s each) exactly as RL.BUCKETS
/// writes them, checks RL.BUCKETS reads it as its own, and returns its
/// MEMORY USAGE and encoding.
fn key_with_buckets(c: &mut redis::Connection, key: &str, n: i64) -> (i64, String) {
    key_with_buckets_of(c, key, n, 1000, Naming::Ring)
}

/// How a bucket key names its fields: by index mod 4096 (the header's
/// kind `B`), or by the full index (`b`, keys of earlier builds).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Naming {
    Ring,
    Index,
}

/// A key of `n` filled buckets of `p` ms, built by HSET exactly as
/// RL.BUCKETS writes it in `naming` (whatever the clock does meanwhile),
/// then read by RL.BUCKETS: its memory (measured before that call, so it
/// is exactly `n` buckets) and encoding.
fn key_with_buckets_of(
    c: &mut redis::Connection,
    key: &str,
    n: i64,
    p: i64,
    naming: Naming,
) -> (i64, String) {
    let now_bucket = server_ms(c) / p;
    let oldest = now_bucket - n + 1;
    let mut cmd = redis::cmd("HSET");
    // The header first, as RL.BUCKETS writes it; the newest bucket's count
    // is in it, the n - 1 older buckets have fields (all held: n - 1 bits).
    let older = (n - 1) as usize;
    let lead = match older % 4 {
        0 => String::new(),
        r => format!("{:x}", (1 << r) - 1),
    };
    let held = format!("{lead}{}", "f".repeat(older / 4));
    let tag = if naming == Naming::Ring { "B" } else { "b" };
    cmd.arg(key)
        .arg("h")
        .arg(format!("{tag},{p},{now_bucket},{held},{},10", 10 * n));
    for b in oldest..now_bucket {
        let name = if naming == Naming::Ring {
            b.rem_euclid(4096)
        } else {
            b
        };
        cmd.arg(name).arg("10");
    }
    let _: i64 = cmd.query(c).unwrap();
    // A window of 250 buckets: none of the n leaves while the test runs
    // (at 10 ms buckets, 2.5 s after the build), unless n fills it.
    let window = (250 * p).to_string();
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(key)
        .arg(250 * p * 2)
        .query(c)
        .unwrap();
    let usage = memory_usage(c, key);
    let enc: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg(key)
        .query(c)
        .unwrap();
    let ps = p.to_string();
    let r = buckets(c, key, &["1000000", &window, "PRECISION", &ps]).unwrap();
    assert_eq!(r[0], 1);
    // Every one of the n buckets read and counted, by the names it has.
    let held = 1_000_000 - 1 - r[1];
    // A full window (n = 250) loses its oldest when a bucket boundary passes.
    let full = n == 250 && held == 10 * (n - 1);
    assert!(
        held == 10 * n || full,
        "{key}: {held} of {n} buckets of {p} ms"
    );
    (usage, enc)
}

/// The memory table of the README (run with --nocapture to see it): the
/// default 60 buckets stay in the compact listpack encoding.
#[test]
fn memory_per_key_by_bucket_count() {
    on_every_server(|server| {
        let mut c = server.conn();
        let mut previous = 0;
        for n in [10, 60, 250] {
            let (usage, enc) = key_with_buckets(&mut c, &format!("mem{n}"), n);
            println!("{:?}: {n} buckets: {usage} bytes ({enc})", server.flavor);
            assert!(usage > previous);
            previous = usage;
            let compact = if n <= 60 { "listpack" } else { "hashtable" };
            assert_eq!(enc, compact, "{:?} at {n} buckets", server.flavor);
        }
    });
}

/// Issue #26: 60 filled buckets take at most 800 bytes whatever their
/// width (field names mod 4096 are 13-bit listpack integers; full indexes
/// of 10 ms buckets, about 1.7e11, took 8 bytes each). Keys of earlier
/// builds (full indexes) are still read and counted, and take more at
/// 20 ms.
#[test]
fn sixty_filled_buckets_fit_800_bytes_at_any_width() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for p in [10, 20, 1000, 60_000] {
            let (ring, enc) = key_with_buckets_of(&mut c, &format!("r{p}"), 60, p, Naming::Ring);
            let (index, _) = key_with_buckets_of(&mut c, &format!("i{p}"), 60, p, Naming::Index);
            println!("{f:?}: 60 buckets of {p} ms: {ring} bytes ({index} with full indexes)");
            assert_eq!(enc, "listpack", "{f:?} at {p} ms");
            assert!(ring <= 800, "{f:?}: 60 buckets of {p} ms take {ring} bytes");
            assert!(ring <= index, "{f:?} at {p} ms: {ring} > {index}");
            if p == 20 {
                assert!(ring < index, "{f:?} at {p} ms: {ring} = {index}");
            }
        }
    });
}

/// A denial walks the held buckets oldest first until enough of the count
/// leaves, and waits for that bucket: the wait ends `(newest - b) ×
/// precision` before the reset. Checked for every bucket the walk can stop
/// at, on a key of 20 buckets holding 1, 2, ..., 19 and 20 (the newest):
/// the short walks read bucket by bucket, the long ones (10 buckets or
/// more, half the hash's fields) read the hash whole first, and both must
/// stop at the same bucket.
#[test]
fn a_denial_waits_for_the_bucket_its_walk_stops_at_however_far_it_walks() {
    const P: i64 = 100_000;
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Away from a bucket boundary: the newest bucket stays current.
        while server_ms(&mut c) % P > P - 5_000 {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let newest = server_ms(&mut c) / P;
        let mut hset = redis::cmd("HSET");
        hset.arg("walk")
            .arg("h")
            .arg(format!("b,{P},{newest},7ffff,210,20"));
        for j in 0..19 {
            hset.arg(newest - 19 + j).arg(j + 1);
        }
        let _: i64 = hset.query(&mut c).unwrap();
        let _: i64 = redis::cmd("PEXPIRE")
            .arg("walk")
            .arg(3_600_000)
            .query(&mut c)
            .unwrap();
        let window = (20 * P).to_string();
        let precision = P.to_string();
        for j in 0..20i64 {
            // Enough leaves once buckets 0..=j have: (j + 1)(j + 2) / 2.
            let limit = (211 - (j + 1) * (j + 2) / 2).to_string();
            let r = buckets(&mut c, "walk", &[&limit, &window, "PRECISION", &precision]).unwrap();
            assert_eq!(r[..2], [0, 0], "{f:?}: stop at bucket {j}: {r:?}");
            assert_eq!(
                r[3] - r[2],
                (19 - j) * P,
                "{f:?}: stop at bucket {j}: {r:?}"
            );
        }
    });
}

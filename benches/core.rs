//! Criterion benchmarks of the pure core: the decision alone, over an
//! in-memory log or hash, at several fill levels. Guards the algorithms
//! against regressions without a server.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use rl::core::buckets::decide as bucket_window;
use rl::core::buckets::layout::MemoryHash;
use rl::core::buckets::request::BucketsRequest;
use rl::core::slide::decide::decide;
use rl::core::slide::log::MemoryLog;
use rl::core::slide::request::SlideRequest;

const WINDOW: u64 = 60_000;
const LIMIT: u64 = 1_000;

/// A log holding `n` entries spread over the window ending at `now`.
fn filled(n: u64, now: i64) -> MemoryLog {
    let mut log = MemoryLog::new();
    let req = SlideRequest {
        limit: LIMIT,
        window_ms: WINDOW,
        cost: 1,
    };
    let step = (WINDOW / (n.max(1) + 1)) as i64;
    for i in 0..n {
        let at = now - WINDOW as i64 + 1 + i as i64 * step;
        let out = decide(&mut log, &req, at).expect("valid times");
        log.apply(&out.write.expect("fits while filling"));
    }
    log
}

fn sliding_log(c: &mut Criterion) {
    let now = 1_800_000_000_000;
    let req = SlideRequest {
        limit: LIMIT,
        window_ms: WINDOW,
        cost: 1,
    };
    let mut group = c.benchmark_group("sliding_log_decide");
    let cases = [
        ("empty", filled(0, now), now),
        ("half", filled(LIMIT / 2, now), now),
        ("at_limit", filled(LIMIT, now), now),
        (
            "after_idle_gap",
            filled(LIMIT, now),
            now + 10 * WINDOW as i64,
        ),
    ];
    for (name, log, at) in cases {
        group.bench_with_input(BenchmarkId::from_parameter(name), &at, |b, &at| {
            let mut log = log.clone();
            b.iter(|| decide(black_box(&mut log), black_box(&req), black_box(at)))
        });
    }
    group.finish();
}

const PRECISION: u64 = 1_000;

/// A hash holding every bucket of a window of `buckets` buckets ending at
/// `now`, `per_bucket` admitted in each.
fn filled_buckets(buckets: u64, per_bucket: u64, now: i64) -> MemoryHash {
    let mut hash = MemoryHash::new();
    let req = BucketsRequest {
        limit: 100_000_000,
        window_ms: buckets * PRECISION,
        precision: Some(PRECISION),
        cost: per_bucket,
        block_ms: None,
    };
    for b in 0..buckets as i64 {
        let at = now - (buckets as i64 - 1 - b) * PRECISION as i64;
        let out = bucket_window::decide(&mut hash, &req, at).expect("valid request");
        hash.apply(&out.write.expect("fits while filling"));
    }
    hash
}

/// The bucket window at 60 and 250 buckets: a steady admit (the oldest
/// bucket leaves, the current one is new), an admit into the current
/// bucket, a denial at the limit (walks the buckets for `retry_after_ms`),
/// and an admit after a long idle gap (every bucket evicted).
fn bucket_window(c: &mut Criterion) {
    let now = 1_800_000_000_000;
    let mut group = c.benchmark_group("bucket_window_decide");
    for buckets in [60u64, 250] {
        let window_ms = buckets * PRECISION;
        let req = |limit: u64| BucketsRequest {
            limit,
            window_ms,
            precision: Some(PRECISION),
            cost: 1,
            block_ms: None,
        };
        let full = filled_buckets(buckets, 10, now);
        let cases = [
            (
                "admit_next_bucket",
                req(100_000_000),
                now + PRECISION as i64,
            ),
            ("admit_same_bucket", req(100_000_000), now),
            ("at_limit", req(buckets * 10), now),
            (
                "after_idle_gap",
                req(100_000_000),
                now + 10 * window_ms as i64,
            ),
        ];
        for (name, req, at) in cases {
            let id = BenchmarkId::new(format!("{buckets}_buckets"), name);
            group.bench_with_input(id, &at, |b, &at| {
                let mut hash = full.clone();
                b.iter(|| {
                    bucket_window::decide(black_box(&mut hash), black_box(&req), black_box(at))
                })
            });
        }
    }
    group.finish();
}

/// Short runs: `make bench` must finish within 10 minutes on 2 cores.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = sliding_log, bucket_window
}
criterion_main!(benches);

//! Criterion benchmarks of the pure core: the decision alone, over an
//! in-memory log, at several fill levels. Guards the algorithms against
//! regressions without a server.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use rl::core::slide_request::SlideRequest;
use rl::core::sliding_log::{decide, MemoryLog};

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
        log.apply(&out.admission.expect("fits while filling"));
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

criterion_group!(benches, sliding_log);
criterion_main!(benches);

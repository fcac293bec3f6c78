//! A soak: over a million requests on every command (all 16) across many
//! keys with short windows, pipelined. Once the windows have passed and the keys have
//! expired, `used_memory` is back at its baseline: the module keeps nothing
//! per key outside the keyspace and leaks nothing per call.

use std::time::{Duration, Instant};

use crate::harness::raw_resp::RawConn;
use crate::harness::*;

/// Keys per command; every key gets `ROUNDS` requests, spread over time.
const KEYS: usize = 1_150;
const ROUNDS: usize = 36;
const BATCH: usize = 12_000;
/// Short windows (ms): keys expire soon after their last admission.
const WINDOW: &str = "300";
/// What `used_memory` may differ from the baseline by once all is gone.
const TOLERANCE: i64 = 64 * 1024;

/// One round: 25 lines per subject, every one of the 16 commands (leases
/// acquired with a generated and a named id, the named one renewed and
/// released; a refund and a charge of each limiter's state that has one;
/// keys blocked by a breach, lifted, and banned by hand).
fn lines(round: usize) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(KEYS * 25);
    for k in 0..KEYS {
        let field = ["ok", "fail", "slow"][(k + round) % 3];
        let cost = ((k + round) % 3 + 1).to_string();
        let key = |c: &str| format!("s:{c}:{k}");
        let job = format!("job{}", round % 4);
        let lines: [&[&str]; 25] = [
            &["RL.SLIDE", &key("slide"), "20", WINDOW, "COST", &cost],
            &[
                "RL.BUCKETS",
                &key("buckets"),
                "20",
                WINDOW,
                "PRECISION",
                "10",
            ],
            &["RL.COUNT", &key("count"), WINDOW, field],
            &["RL.TOTALS", &key("count"), WINDOW],
            &["RL.THROTTLE", &key("throttle"), "5", "10", WINDOW, &cost],
            &["CL.THROTTLE", &key("cell"), "5", "1000", "1"],
            &["RL.FIXED", &key("fixed"), "20", WINDOW, "COST", &cost],
            &["RL.PEEK", "SLIDE", &key("slide"), "20", WINDOW],
            &[
                "RL.ALL",
                "2",
                &key("all:a"),
                &key("all:b"),
                "SLIDE",
                "20",
                WINDOW,
                "THROTTLE",
                "5",
                "10",
                WINDOW,
            ],
            &["RL.REFUND", "SLIDE", &key("slide"), "20", WINDOW],
            &[
                "RL.REFUND",
                "BUCKETS",
                &key("buckets"),
                "20",
                WINDOW,
                "PRECISION",
                "10",
            ],
            &["RL.REFUND", "THROTTLE", &key("throttle"), "5", "10", WINDOW],
            &["RL.REFUND", "FIXED", &key("fixed"), "20", WINDOW],
            &["RL.ACQUIRE", &key("lease"), "3", WINDOW],
            &["RL.ACQUIRE", &key("lease"), "3", WINDOW, "ID", &job],
            &["RL.RENEW", &key("lease"), &job, WINDOW],
            &["RL.RELEASE", &key("lease"), &job],
            &[
                "RL.CHARGE",
                "SLIDE",
                &key("slide"),
                "20",
                WINDOW,
                "COST",
                &cost,
            ],
            &[
                "RL.CHARGE",
                "BUCKETS",
                &key("buckets"),
                "20",
                WINDOW,
                "PRECISION",
                "10",
                "COST",
                &cost,
            ],
            &[
                "RL.CHARGE",
                "THROTTLE",
                &key("throttle"),
                "5",
                "10",
                WINDOW,
                "COST",
                &cost,
            ],
            &[
                "RL.CHARGE",
                "FIXED",
                &key("fixed"),
                "20",
                WINDOW,
                "COST",
                &cost,
            ],
            &["RL.FIXED", &key("fblock"), "2", WINDOW, "BLOCK", WINDOW],
            &[
                "RL.THROTTLE",
                &key("tblock"),
                "1",
                "10",
                WINDOW,
                "BLOCK",
                WINDOW,
            ],
            &["RL.UNBLOCK", "THROTTLE", &key("tblock")],
            &["RL.BLOCK", "FIXED", &key("ban"), WINDOW],
        ];
        for l in lines {
            out.push(l.iter().map(|a| a.as_bytes().to_vec()).collect());
        }
    }
    out
}

fn used_memory(c: &mut redis::Connection) -> i64 {
    info_int(c, "memory", "used_memory")
}

/// Waits until every key has expired and `used_memory` has stopped moving.
fn settle(flavor: Flavor, c: &mut redis::Connection) -> i64 {
    let gone = wait_until(Duration::from_secs(40), || dbsize(c) == 0);
    assert!(gone, "{flavor:?}: {} keys never expired", dbsize(c));
    let mut last = used_memory(c);
    let mut stable = 0;
    wait_until(Duration::from_secs(10), || {
        std::thread::sleep(Duration::from_millis(200));
        let now = used_memory(c);
        stable = if now == last { stable + 1 } else { 0 };
        last = now;
        stable >= 3
    });
    last
}

#[test]
fn a_million_requests_leave_memory_at_its_baseline() {
    for flavor in ALL {
        let started = Instant::now();
        // Warm up once (the server's own tables and buffers grow to what the
        // load needs), let everything expire, and take the baseline.
        let server = Server::start_with(flavor, &["--hz", "100"]);
        let mut c = server.conn();
        let mut raw = RawConn::connect(server.port);
        for round in 0..2 {
            for chunk in lines(round).chunks(BATCH) {
                raw.pipeline(chunk);
            }
        }
        drop(raw);
        let baseline = settle(flavor, &mut c);

        let mut raw = RawConn::connect(server.port);
        let mut sent = 0;
        let mut names = std::collections::BTreeSet::new();
        for round in 0..ROUNDS {
            for chunk in lines(round).chunks(BATCH) {
                for (line, reply) in chunk.iter().zip(raw.pipeline(chunk)) {
                    assert!(
                        !reply.is_error(),
                        "{flavor:?}: {:?} -> {reply:?}",
                        String::from_utf8_lossy(&line[0])
                    );
                }
                sent += chunk.len();
                names.extend(chunk.iter().map(|l| l[0].clone()));
            }
        }
        drop(raw);
        assert!(sent >= 1_000_000, "{sent} requests");
        assert_eq!(names.len(), 16, "{flavor:?}: every command ran");
        let peak = used_memory(&mut c);
        let after = settle(flavor, &mut c);
        println!(
            "{flavor:?}: {sent} requests, used_memory baseline {baseline}, after {after} \
             (diff {}), {:?}",
            after - baseline,
            started.elapsed()
        );
        assert!(
            (after - baseline).abs() <= TOLERANCE,
            "{flavor:?}: used_memory {after} vs baseline {baseline} (peak {peak})"
        );
    }
}

//! RL.THROTTLE and CL.THROTTLE: reply fields (CL.THROTTLE's as
//! redis-cell's), the stored TAT in µs and its expiry, a redis-cell state in
//! ns read and rewritten, and the one schedule both commands share.

use crate::harness::*;

const HOUR: u64 = 3_600_000;
/// Slack for time passing between calls in assertions on waits (ms).
const SLACK: i64 = 10_000;

fn tat_and_expiry(c: &mut redis::Connection, key: &str) -> (i64, i64) {
    let (value, at) = value_and_expiry(c, key);
    let tat: i64 = value
        .expect("a stored TAT")
        .parse()
        .expect("an integer TAT");
    (tat, at)
}

#[test]
fn burst_then_deny_with_honest_fields() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // max_burst 2, one per hour: three at once, then wait an hour.
        for (k, remaining) in [(1, 2), (2, 1), (3, 0)] {
            let r = throttle(&mut c, "t", [2, 1, HOUR], None);
            assert_eq!(r[..3], [1, remaining, 0], "{f:?}");
            let reset = k * HOUR as i64;
            assert!(r[3] <= reset && r[3] > reset - SLACK, "{f:?} {r:?}");
        }
        let r = throttle(&mut c, "t", [2, 1, HOUR], None);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        let hour = HOUR as i64;
        assert!(r[2] <= hour && r[2] > hour - SLACK, "{f:?} {r:?}");
        assert!(r[3] <= 3 * hour && r[3] > 3 * hour - SLACK, "{f:?} {r:?}");
        // A quantity takes several units at once.
        assert_eq!(throttle(&mut c, "q", [4, 1, HOUR], Some(5))[..3], [1, 0, 0]);
        assert_eq!(throttle(&mut c, "q", [4, 1, HOUR], Some(1))[0], 0);
    });
}

#[test]
fn state_is_a_tat_in_microseconds_expiring_when_it_is_reached() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // 7 per hour: T = 3_600_000_000 / 7 µs = 514_285_714.3, rounded up.
        let spec = [9, 7, 3_600_000];
        throttle(&mut c, "t", spec, None);
        let (tat, at) = tat_and_expiry(&mut c, "t");
        // µs since the epoch (16 digits), expiry = TAT rounded up to a ms.
        assert!(tat > 1_000_000_000_000_000, "{f:?} {tat}");
        assert_eq!(at, (tat + 999) / 1000, "{f:?}");
        // Ahead of now, 5 units move the TAT by exactly 5 T.
        throttle(&mut c, "t", spec, Some(5));
        let (tat2, at2) = tat_and_expiry(&mut c, "t");
        assert_eq!(tat2 - tat, 5 * 514_285_715, "{f:?}");
        assert_eq!(at2, (tat2 + 999) / 1000, "{f:?}");
    });
}

#[test]
fn a_redis_cell_state_in_nanoseconds_is_read_and_rewritten_in_microseconds() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (secs, micros): (i64, i64) = redis::cmd("TIME").query(&mut c).unwrap();
        let now_us = secs * 1_000_000 + micros;
        // redis-cell left a TAT 4.5 s ahead, in ns, with its TTL (it
        // always sets one).
        let ns = (now_us + 4_500_000) * 1000 + 1;
        let _: () = redis::cmd("SET")
            .arg("cell")
            .arg(ns)
            .arg("PX")
            .arg(4_500)
            .query(&mut c)
            .unwrap();
        // max_burst 9, one per second: τ = 10 s, 4.5 s used, 1 more now:
        // 4.5 s left, 4 whole units (on a ms or a µs clock).
        let r = throttle(&mut c, "cell", [9, 1, 1000], None);
        assert_eq!(r[..3], [1, 4, 0], "{f:?}");
        let (tat, _) = tat_and_expiry(&mut c, "cell");
        assert_eq!(tat, (ns + 999) / 1000 + 1_000_000, "{f:?}");
    });
}

#[test]
fn cl_throttle_replies_like_redis_cell() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // redis-cell's README example: burst 15, 30 per 60 s.
        assert_eq!(
            cl_throttle(&mut c, "user123", [15, 30, 60], Some(1)),
            [0, 16, 15, -1, 2]
        );
        // burst 2, one per hour: three pass, the fourth is limited.
        for (k, remaining) in [(1, 2), (2, 1), (3, 0)] {
            let r = cl_throttle(&mut c, "h", [2, 1, 3600], None);
            assert_eq!(r, [0, 3, remaining, -1, k * 3600], "{f:?}");
        }
        let before = frozen_state(&mut c, "h");
        assert_eq!(
            cl_throttle(&mut c, "h", [2, 1, 3600], None),
            [1, 3, 0, 3600, 10800]
        );
        // Above max_burst + 1 it can never pass: limited with retry -1.
        assert_eq!(
            cl_throttle(&mut c, "h", [2, 1, 3600], Some(4)),
            [1, 3, 0, -1, 10800]
        );
        // Limited answers write nothing.
        assert_eq!(frozen_state(&mut c, "h"), before, "{f:?}");
        // Any quantity redis-cell reads (an i64) gets its answer: limited,
        // nothing used, retry -1.
        for q in [2_000_000_000_000_000, i64::MAX as u64] {
            assert_eq!(
                cl_throttle(&mut c, "idle", [5, 1, 1], Some(q)),
                [1, 6, 6, -1, 0],
                "{f:?} quantity {q}"
            );
        }
        assert_eq!(
            exists(&mut c, &["idle"]),
            0,
            "{f:?}: a limited call writes nothing"
        );
    });
}

#[test]
fn cl_throttle_shares_its_state_with_rl_throttle() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Same rate, period in s here and in ms there: one schedule.
        cl_throttle(&mut c, "k", [4, 1, 3600], Some(2));
        let r = throttle(&mut c, "k", [4, 1, 3_600_000], None);
        assert_eq!(r[..3], [1, 2, 0], "{f:?}");
        assert_eq!(
            cl_throttle(&mut c, "k", [4, 1, 3600], Some(0))[2],
            2,
            "{f:?}"
        );
    });
}

//! The reply `[allowed, remaining, retry_after_ms, reset_after_ms]` and the
//! key's expiry, on every server.
mod common;

use std::time::Duration;

use common::*;

#[test]
fn admits_count_remaining_down_then_deny() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Admitted at `now`, the newest entry is `now`: reset is the whole window.
        for left in (0..5).rev() {
            assert_eq!(slide(&mut c, "r", 5, 10_000), [1, left, 0, 10_000], "{f:?}");
        }
        let [allowed, remaining, retry, reset] = slide(&mut c, "r", 5, 10_000);
        assert_eq!((allowed, remaining), (0, 0), "{f:?}");
        assert!(retry > 0 && retry <= 10_000, "{f:?}: retry {retry}");
        assert!(reset > 0 && reset <= 10_000, "{f:?}: reset {reset}");
        // Only the oldest entry needs to leave, the newest is the last to go.
        assert!(retry <= reset, "{f:?}: retry {retry} > reset {reset}");
        assert_eq!(zcard(&mut c, "r"), 5, "{f:?}");
    });
}

#[test]
fn cost_consumes_several_units() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(
            slide_cost(&mut c, "c", 10, 60_000, 4),
            [1, 6, 0, 60_000],
            "{f:?}"
        );
        assert_eq!(zcard(&mut c, "c"), 4, "{f:?}: one member per unit");
        // 4 + 7 > 10: denied, nothing taken.
        let denied = slide_cost(&mut c, "c", 10, 60_000, 7);
        assert_eq!(denied[..2], [0, 6], "{f:?}");
        assert!(denied[2] > 0 && denied[2] <= 60_000, "{f:?}: {denied:?}");
        assert_eq!(zcard(&mut c, "c"), 4, "{f:?}");
        // 4 + 6 = 10 fits exactly.
        assert_eq!(
            slide_cost(&mut c, "c", 10, 60_000, 6),
            [1, 0, 0, 60_000],
            "{f:?}"
        );
        assert_eq!(zcard(&mut c, "c"), 10, "{f:?}");
        assert_eq!(slide(&mut c, "c", 10, 60_000)[..2], [0, 0], "{f:?}");
        // Lowercase option token works too.
        let v: Vec<i64> = redis::cmd("RL.SLIDE")
            .arg("c2")
            .arg(3)
            .arg(60_000)
            .arg("cost")
            .arg(3)
            .query(&mut c)
            .unwrap();
        assert_eq!(v, [1, 0, 0, 60_000], "{f:?}");
    });
}

/// Sleeping exactly `retry_after_ms` and retrying is admitted. The sleep can
/// only run long, and a longer wait can only help, so this asserts no timing.
#[test]
fn waiting_retry_after_ms_is_enough() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (limit, window) = (2, 300);
        assert_eq!(slide(&mut c, "w", limit, window)[0], 1, "{f:?}");
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(slide(&mut c, "w", limit, window)[0], 1, "{f:?}");
        // Each admitted retry fills the key again, so every round denies
        // unless the machine stalled for most of a window (then it admits,
        // which is right too; at least one denial is required below).
        let mut denials = 0;
        for round in 0..4 {
            let denied = slide(&mut c, "w", limit, window);
            if denied[0] == 1 {
                continue;
            }
            denials += 1;
            let retry = denied[2];
            assert!(
                retry > 0 && retry <= window as i64,
                "{f:?} round {round}: {denied:?}"
            );
            std::thread::sleep(Duration::from_millis(retry as u64));
            let again = slide(&mut c, "w", limit, window);
            assert_eq!(
                again[0], 1,
                "{f:?} round {round}: denied {denied:?}, retried after {retry} ms: {again:?}"
            );
        }
        assert!(denials > 0, "{f:?}: a full key never denied");
    });
}

#[test]
fn cost_retry_after_ms_is_enough() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Three entries at three times; a cost of 3 needs all of them gone.
        for _ in 0..3 {
            assert_eq!(slide(&mut c, "wc", 3, 300)[0], 1, "{f:?}");
            std::thread::sleep(Duration::from_millis(30));
        }
        let denied = slide_cost(&mut c, "wc", 3, 300, 3);
        assert_eq!(denied[0], 0, "{f:?}: {denied:?}");
        assert!(denied[2] > 0 && denied[2] <= denied[3], "{f:?}: {denied:?}");
        std::thread::sleep(Duration::from_millis(denied[2] as u64));
        let again = slide_cost(&mut c, "wc", 3, 300, 3);
        assert_eq!(again[0], 1, "{f:?}: after {denied:?}: {again:?}");
    });
}

#[test]
fn reset_after_ms_is_within_the_window() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let window = 5_000;
        slide_cost(&mut c, "z", 3, window, 3);
        for _ in 0..5 {
            let r = slide(&mut c, "z", 3, window);
            assert_eq!(r[0], 0, "{f:?}");
            assert!(r[3] > 0 && r[3] <= window as i64, "{f:?}: {r:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
        // An empty window's reply on a fresh key: admitted, reset = window.
        assert_eq!(slide(&mut c, "fresh", 3, window), [1, 2, 0, 5_000], "{f:?}");
    });
}

#[test]
fn key_expires_when_newest_entry_leaves_the_window() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Slack: window / 4 = 200 ms.
        let window = 800;
        let mut expiry = -1;
        for i in 0..8 {
            slide(&mut c, "e", 100, window);
            let newest = entries(&mut c, "e").last().expect("entries").1;
            let now_expiry = pexpiretime(&mut c, "e");
            // Never shorter than the newest entry's stay, never more than
            // the slack beyond it; when it moves, it moves to the far end.
            let needed = newest + window as i64;
            assert!(
                (needed..=needed + 200).contains(&now_expiry),
                "{f:?} after admit {i}: expiry {now_expiry}, needed {needed}"
            );
            if now_expiry != expiry {
                assert_eq!(now_expiry, needed + 200, "{f:?} after admit {i}");
            }
            expiry = now_expiry;
            std::thread::sleep(Duration::from_millis(30));
        }
        // A call with a shorter window needs less: the expiry stays.
        slide(&mut c, "e", 100, 400);
        assert_eq!(pexpiretime(&mut c, "e"), expiry, "{f:?}");
    });
}

#[test]
fn idle_key_vanishes_on_its_own() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        slide_cost(&mut c, "idle", 5, 200, 3);
        assert_eq!(zcard(&mut c, "idle"), 3, "{f:?}");
        // DBSIZE does not touch the key, so only the server's own expiry
        // cycle can make it 0.
        let gone = wait_until(Duration::from_secs(5), || {
            redis::cmd("DBSIZE").query::<i64>(&mut c).unwrap() == 0
        });
        assert!(gone, "{f:?}: idle key still there after 5 s");
        let exists: i64 = redis::cmd("EXISTS").arg("idle").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}");
    });
}

#[test]
fn reply_is_four_integers_in_resp3_too() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn_resp3();
        let v: redis::Value = redis::cmd("RL.SLIDE")
            .arg("r3")
            .arg(2)
            .arg(1000)
            .query(&mut c)
            .unwrap();
        let want = redis::Value::Array(vec![
            redis::Value::Int(1),
            redis::Value::Int(1),
            redis::Value::Int(0),
            redis::Value::Int(1000),
        ]);
        assert_eq!(v, want, "{f:?}");
    });
}

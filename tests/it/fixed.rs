//! RL.FIXED: reply fields, the counter and its expiry set once per
//! window, and a new window after the wait the reply names.

use crate::harness::*;

const HOUR: u64 = 3_600_000;
const SLACK: i64 = 10_000;

#[test]
fn burst_then_deny_with_the_expiry_set_once() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let hour = HOUR as i64;
        let r = fixed(&mut c, "f", 3, HOUR, None);
        assert_eq!(r[..3], [1, 2, 0], "{f:?}");
        assert!(r[3] <= hour && r[3] > hour - SLACK, "{f:?} {r:?}");
        let first = value_and_expiry(&mut c, "f");
        assert_eq!(first.0.as_deref(), Some("1"), "{f:?}");
        assert_eq!(
            fixed(&mut c, "f", 3, HOUR, Some(2))[..3],
            [1, 0, 0],
            "{f:?}"
        );
        // Later admissions never move the window's end.
        let (value, at) = value_and_expiry(&mut c, "f");
        assert_eq!((value.as_deref(), at), (Some("3"), first.1), "{f:?}");
        let r = fixed(&mut c, "f", 3, HOUR, None);
        assert_eq!(r[..2], [0, 0], "{f:?}");
        assert!(
            r[2] <= hour && r[2] > hour - SLACK && r[2] == r[3],
            "{f:?} {r:?}"
        );
    });
}

/// On the real clock with 2 ms to spare; on the stopped clock exactly:
/// one ms before `retry_after_ms` the window is still closed.
#[test]
fn waiting_retry_after_opens_a_new_window() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(fixed(&mut c, "short", 1, 500, None)[0], 1, "{f:?}");
        let r = fixed(&mut c, "short", 1, 500, None);
        assert_eq!(r[0], 0, "{f:?}");
        if server.clock_stopped() {
            assert_eq!(r[2], 500, "{f:?}: no time passed since the window opened");
            server.advance(r[2] as u64 - 1);
            assert_eq!(
                fixed(&mut c, "short", 1, 500, None)[..3],
                [0, 0, 1],
                "{f:?}"
            );
            server.advance(1);
        } else {
            server.advance(r[2] as u64 + 2);
        }
        assert_eq!(fixed(&mut c, "short", 1, 500, None)[..2], [1, 0], "{f:?}");
    });
}

/// A window's admissions after its first step the counter in place, and
/// replicate as `INCR`/`INCRBY` (`tests/it/persistence.rs` reads them in
/// the AOF): the expiry stays the window's end, on a counter rl wrote and
/// on one the server holds as a shared integer (written by `SET`, as a
/// replica's `INCR` leaves it after a failover), and a replica without rl
/// holds the same value and expiry.
#[test]
fn stepped_counters_keep_their_expiry_and_replicate() {
    for flavor in ALL {
        stepped_counters_keep_their_expiry_and_replicate_on(flavor);
    }
}

/// The test above on one pairing (`tests/it/older/` runs it on more: the
/// servers that hold a key's expiry in its value object from 8.0 on).
pub fn stepped_counters_keep_their_expiry_and_replicate_on(flavor: Flavor) {
    {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(false);
        let mut c = primary.conn();
        let f = flavor;
        let at = server_ms(&mut c) + HOUR as i64;
        let _: () = redis::cmd("SET")
            .arg(&["g", "5", "PXAT", &at.to_string()])
            .query(&mut c)
            .unwrap();
        let encoding: String = redis::cmd("OBJECT")
            .arg(&["ENCODING", "g"])
            .query(&mut c)
            .unwrap();
        assert_eq!(encoding, "int", "{f:?}");
        assert_eq!(fixed(&mut c, "g", 10, HOUR, None)[..2], [1, 4], "{f:?}");
        assert_eq!(
            value_and_expiry(&mut c, "g"),
            (Some("6".into()), at),
            "{f:?}"
        );
        assert_eq!(fixed(&mut c, "g", 10, HOUR, Some(3))[..2], [1, 1], "{f:?}");
        run(
            &mut c,
            &["RL.REFUND", "FIXED", "g", "10", &HOUR.to_string()],
        )
        .unwrap();
        assert_eq!(
            value_and_expiry(&mut c, "g"),
            (Some("8".into()), at),
            "{f:?}"
        );

        assert_eq!(fixed(&mut c, "f", 10, HOUR, None)[..2], [1, 9], "{f:?}");
        let first = value_and_expiry(&mut c, "f");
        for _ in 0..3 {
            fixed(&mut c, "f", 10, HOUR, Some(2));
        }
        run(
            &mut c,
            &[
                "RL.CHARGE",
                "FIXED",
                "f",
                "10",
                &HOUR.to_string(),
                "COST",
                "4",
            ],
        )
        .unwrap();
        assert_eq!(
            value_and_expiry(&mut c, "f"),
            (Some("11".into()), first.1),
            "{f:?}"
        );

        wait_replicas(&mut c, 1);
        let mut r = replica.conn();
        for key in ["f", "g"] {
            assert_eq!(
                value_and_expiry(&mut r, key),
                value_and_expiry(&mut c, key),
                "{f:?} {key}: the replica without rl"
            );
        }
    }
}

//! `WAIT` on a key in shadow mode (issue #39): shadow mode admits what
//! enforcement would make wait, so a call never queues behind the clients
//! already waiting on the key (those that arrived before shadow mode was
//! switched on): it answers at once, as the same call without `WAIT`.

use super::*;

fn set(c: &mut redis::Connection, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg(&["SET", name, value])
        .query(c)
        .unwrap();
}

fn ints(v: redis::Value) -> Vec<i64> {
    match resp_of(v) {
        Resp::Array(Some(items)) => items
            .into_iter()
            .map(|i| match i {
                Resp::Int(n) => n,
                other => panic!("not an integer: {other:?}"),
            })
            .collect(),
        other => panic!("not a decision: {other:?}"),
    }
}

fn value(c: &mut redis::Connection, key: &str) -> (Option<String>, i64) {
    let v: Option<String> = redis::cmd("GET").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (v, at)
}

#[test]
fn a_shadowed_wait_call_never_queues_behind_waiters() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // An enforced waiter, whose turn is a minute away.
        fixed(&mut c, "sw", 1, 60_000, None);
        let mut first = RawConn::connect(port(server));
        first.send(&["RL.FIXED", "sw", "1", "60000", "WAIT", LONG]);
        until_waiting(&mut c, 1);
        set(&mut c, "rl.shadow", "yes");
        let before = value(&mut c, "sw");
        // Shadow-admitted at once: the waiter still waits, nothing served,
        // nothing recorded, counted as shadowed.
        let r = ints(run(&mut c, &["RL.FIXED", "sw", "1", "60000", "WAIT", LONG]).unwrap());
        assert_eq!(r[..2], [1, 0], "{f:?}: {r:?}");
        assert!(r[2] > 0, "{f:?}: the denial's wait: {r:?}");
        assert_eq!(waits(&mut c), (1, 0, 0), "{f:?}");
        assert_eq!(value(&mut c, "sw"), before, "{f:?}");
        assert_eq!(
            counters(&mut c, "fixed")[1..],
            [2, 0, 0],
            "{f:?}: admitted, denied, errors"
        );
        assert_eq!(info_int(&mut c, "rl", "rl_fixed_shadow_denied"), 1, "{f:?}");

        // A call that fits is admitted and recorded, as without WAIT,
        // though a bigger request waits before it.
        set(&mut c, "rl.shadow", "no");
        fixed(&mut c, "sw2", 2, 60_000, None);
        let mut big = RawConn::connect(port(server));
        big.send(&["RL.FIXED", "sw2", "2", "60000", "COST", "2", "WAIT", LONG]);
        until_waiting(&mut c, 2);
        set(&mut c, "rl.shadow", "yes");
        let r = ints(run(&mut c, &["RL.FIXED", "sw2", "2", "60000", "WAIT", LONG]).unwrap());
        assert_eq!(r[..3], [1, 0, 0], "{f:?}: {r:?}");
        assert_eq!(value(&mut c, "sw2").0.as_deref(), Some("2"), "{f:?}");
        assert_eq!(waits(&mut c), (2, 0, 0), "{f:?}");

        // A lease: taken beyond the limit at once, as shadow mode takes one.
        acquire(&mut c, &["sl", "1", LONG, "ID", "holder"]);
        set(&mut c, "rl.shadow", "no");
        let _lease_waiter = wait_on(
            server,
            &mut c,
            &["sl", "1", LONG, "ID", "w", "WAIT", LONG],
            3,
        );
        set(&mut c, "rl.shadow", "yes");
        let r = acquire(&mut c, &["sl", "1", LONG, "ID", "late", "WAIT", LONG]);
        assert_eq!(lease_of(&r), Some("late".into()), "{f:?}: {r:?}");
        assert!(
            has(&mut c, "sl", "late") && !has(&mut c, "sl", "w"),
            "{f:?}"
        );
        assert_eq!(waits(&mut c), (3, 0, 0), "{f:?}");
        drop((first, big));
    });
}

/// `pump` looks ahead for the head waiter with a read, which in shadow mode
/// admits a denial and marks the running call as shadowed. That mark is
/// the waiter's to count, in its own reply callback: the release that ran
/// the pump is not a shadowed call, and nothing is left for the next call.
#[test]
fn a_release_that_wakes_a_waiter_in_shadow_mode_is_not_counted_as_shadowed() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["sm", "1", LONG, "ID", "a"]);
        let mut waiter = wait_on(
            server,
            &mut c,
            &["sm", "1", LONG, "ID", "w", "WAIT", LONG],
            1,
        );
        set(&mut c, "rl.shadow", "yes");
        // Taken beyond the limit in shadow mode: counted as shadowed.
        let r = acquire(&mut c, &["sm", "1", LONG, "ID", "b"]);
        assert_eq!(lease_of(&r), Some("b".into()), "{f:?}: {r:?}");
        assert_eq!(
            info_int(&mut c, "rl", "rl_acquire_shadow_denied"),
            1,
            "{f:?}"
        );
        // Releasing b wakes the waiter, whose turn is a shadowed denial
        // (a still holds the one slot): it is counted on RL.ACQUIRE, once.
        assert_eq!(release(&mut c, "sm", "b"), 1, "{f:?}");
        let woken = waiter.recv();
        assert_eq!(lease_of(&woken), Some("w".into()), "{f:?}: {woken:?}");
        assert_eq!(
            info_int(&mut c, "rl", "rl_acquire_shadow_denied"),
            2,
            "{f:?}"
        );
        assert_eq!(
            info_int(&mut c, "rl", "rl_release_shadow_denied"),
            0,
            "{f:?}: the release was counted as shadowed"
        );
        // The next call, admitted as it is, is not counted as shadowed.
        fixed(&mut c, "sm-plain", 5, 60_000, None);
        assert_eq!(
            info_int(&mut c, "rl", "rl_fixed_shadow_denied"),
            0,
            "{f:?}: a stray shadow mark"
        );
        set(&mut c, "rl.shadow", "no");
    });
}

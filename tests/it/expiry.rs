//! Keys expire on their own, never early: an admit moves the expiry to
//! the far end of the newest entry's stay, and idle keys of every command
//! are removed by the server's own expiry cycle.

use std::time::Duration;

use crate::harness::*;

#[test]
fn key_expires_when_newest_entry_leaves_the_window() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Slack: window / 4 = 200 ms.
        let window = 800;
        let mut expiry = -1;
        let mut moves = 0;
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
                moves += 1;
            }
            expiry = now_expiry;
            server.advance(30);
        }
        if server.clock_stopped() {
            // Set by the first admit, moved by the eighth (210 ms later).
            assert_eq!(moves, 2, "{f:?}");
        }
        // A call with a shorter window needs less: the expiry stays.
        slide(&mut c, "e", 100, 400);
        assert_eq!(pexpiretime(&mut c, "e"), expiry, "{f:?}");
    });
}

/// On the real clock of every server: nothing but the server's expiry
/// cycle removes the keys (DBSIZE touches none of them).
#[test]
fn idle_keys_of_every_command_vanish_on_their_own() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        slide_cost(&mut c, "idle", 5, 200, 3);
        assert_eq!(zcard(&mut c, "idle"), 3, "{f:?}");
        buckets(&mut c, "idle-b", &["5", "200", "PRECISION", "50"]).unwrap();
        count(&mut c, "idle-c", 200, "ok", &[]).unwrap();
        throttle(&mut c, "idle-t", [0, 1, 200], None);
        cl_throttle(&mut c, "idle-cl", [0, 1, 1], None);
        fixed(&mut c, "idle-f", 5, 200, None);
        let keys = ["idle", "idle-b", "idle-c", "idle-t", "idle-cl", "idle-f"];
        assert_eq!(exists(&mut c, &keys), 6, "{f:?}");
        let gone = wait_until(Duration::from_secs(5), || dbsize(&mut c) == 0);
        assert!(gone, "{f:?}: idle keys still there after 5 s");
        assert_eq!(exists(&mut c, &keys), 0, "{f:?}");
    });
}

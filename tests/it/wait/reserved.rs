//! The slot a release hands to a woken waiter is the waiter's until its
//! admission runs (the same turn of the event loop): no other path takes
//! it or reports it free.

use super::*;

#[test]
fn no_path_takes_or_reports_free_a_slot_handed_to_a_woken_waiter() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["rs", "1", LONG, "ID", "holder"]);
        let mut w = wait_on(
            server,
            &mut c,
            &["rs", "1", LONG, "ID", "w", "WAIT", LONG],
            1,
        );
        // In the pipeline of the release, before the waiter's admission
        // runs: RL.PEEK ACQUIRE sees the slot held, an RL.ALL ACQUIRE
        // clause is denied and records nothing in either key.
        let (_, peeked, all): (Vec<i64>, Vec<i64>, redis::Value) = redis::pipe()
            .cmd("RL.RELEASE")
            .arg(&["rs", "holder"])
            .cmd("RL.PEEK")
            .arg(&["ACQUIRE", "rs", "1", LONG])
            .cmd("RL.ALL")
            .arg(&["2", "rs", "rs:rate", "ACQUIRE", "1", LONG, "ID", "late"])
            .arg(&["SLIDE", "10", "1000"])
            .query(&mut c)
            .unwrap();
        assert_eq!(peeked[..2], [0, 0], "{f:?}: {peeked:?}");
        assert_eq!(allowed(&resp_of(all.clone())), 0, "{f:?}: {all:?}");
        assert_eq!(lease_of(&w.recv()), Some("w".into()), "{f:?}");
        assert!(!has(&mut c, "rs", "late"), "{f:?}");
        assert_eq!(exists(&mut c, &["rs:rate"]), 0, "{f:?}");
        assert_eq!(held(&mut c, "rs"), 1, "{f:?}");
        assert_eq!(waits(&mut c), (0, 1, 0), "{f:?}");
        // Without a waiter, the same calls see the slot the waiter's
        // release frees.
        release(&mut c, "rs", "w");
        let p = resp_of(run(&mut c, &["RL.PEEK", "ACQUIRE", "rs", "1", LONG]).unwrap());
        assert_eq!(allowed(&p), 1, "{f:?}: {p:?}");
        let all = [
            "RL.ALL", "2", "rs", "rs:rate", "ACQUIRE", "1", LONG, "ID", "late",
        ];
        let all: Vec<&str> = all.into_iter().chain(["SLIDE", "10", "1000"]).collect();
        let r = resp_of(run(&mut c, &all).unwrap());
        assert_eq!(allowed(&r), 1, "{f:?}: {r:?}");
        assert!(has(&mut c, "rs", "late"), "{f:?}");
    });
}

//! A `WAIT` call's per-prefix counts (`rl.stats-prefixes`) are those of
//! how its wait ended: nothing while it waits, admitted when its turn
//! comes, denied at its timeout, nothing for an error.

use super::*;

#[test]
fn a_wait_is_counted_under_its_prefix_when_it_ends() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("CONFIG")
            .arg(&["SET", "rl.stats-prefixes", "pw:"])
            .query(&mut c)
            .unwrap();
        let counts = |c: &mut redis::Connection| prefix_counts(c)[0].1;
        acquire(&mut c, &["pw:a", "1", LONG, "ID", "holder"]);
        assert_eq!(counts(&mut c), [1, 0, 0], "{f:?}");
        let mut w = wait_on(
            server,
            &mut c,
            &["pw:a", "1", LONG, "ID", "w", "WAIT", LONG],
            1,
        );
        // Waiting: not counted yet.
        assert_eq!(counts(&mut c), [1, 0, 0], "{f:?}");
        release(&mut c, "pw:a", "holder");
        assert_eq!(lease_of(&w.recv()), Some("w".into()), "{f:?}");
        assert_eq!(counts(&mut c), [2, 0, 0], "{f:?}: the admission");
        // A timeout: the denial.
        let mut t = wait_on(server, &mut c, &["pw:a", "1", LONG, "WAIT", "100"], 1);
        assert_eq!(allowed(&t.recv()), 0, "{f:?}");
        assert_eq!(counts(&mut c), [2, 1, 0], "{f:?}: the timeout");
        // A rate limiter's wait, admitted at its retry instant.
        run(&mut c, &["RL.THROTTLE", "pw:t", "0", "1", "200"]).unwrap();
        let mut s = RawConn::connect(port(server));
        s.send(&["RL.THROTTLE", "pw:t", "0", "1", "200", "WAIT", "60000"]);
        assert_eq!(allowed(&s.recv()), 1, "{f:?}");
        assert_eq!(counts(&mut c), [4, 1, 0], "{f:?}: the smoothed call");
        assert_eq!(waits(&mut c), (0, 2, 1), "{f:?}");
    });
}

//! `INFO rl`: per-command calls, admitted, denied and errors, exactly what
//! the test sent, and only for the commands registered.

use crate::harness::*;

#[test]
fn info_counters_match_what_was_sent() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let info = rl_info(&mut c);
        assert!(
            info.values().all(|&v| v == 0),
            "{f:?}: fresh counters {info:?}"
        );
        // RL.SLIDE: 3 admitted, 2 denied, 1 error (bad limit).
        for _ in 0..5 {
            slide(&mut c, "s", 3, 600_000);
        }
        run(&mut c, &["RL.SLIDE", "s", "0", "1000"]).unwrap_err();
        // The server's own refusals never reach the module: not counted.
        run(&mut c, &["RL.SLIDE", "s"]).unwrap_err();
        assert_eq!(counters(&mut c, "slide"), [6, 3, 2, 1], "{f:?}");
        // RL.PEEK: counted as it would decide.
        peek(&mut c, &["SLIDE", "s", "3", "600000"]);
        peek(&mut c, &["SLIDE", "s", "10", "600000"]);
        run(&mut c, &["RL.PEEK", "NOPE", "s"]).unwrap_err();
        assert_eq!(counters(&mut c, "peek"), [3, 1, 1, 1], "{f:?}");
        // RL.ALL: counted once per call, by the overall answer.
        let line = [
            "2", "{a}1", "{a}2", "SLIDE", "5", "600000", "FIXED", "1", "600000",
        ];
        assert_eq!(all(&mut c, &line).unwrap().allowed, 1);
        assert_eq!(all(&mut c, &line).unwrap().allowed, 0);
        all(&mut c, &["1", "x", "SLIDE"]).unwrap_err();
        assert_eq!(counters(&mut c, "all"), [3, 1, 1, 1], "{f:?}");
        // The clauses inside RL.ALL are not counted as their own commands.
        assert_eq!(counters(&mut c, "fixed"), [0, 0, 0, 0], "{f:?}");
        // CL.THROTTLE: redis-cell's "limited" flag is the denial.
        for _ in 0..3 {
            run(&mut c, &["CL.THROTTLE", "t", "1", "1", "600"]).unwrap();
        }
        assert_eq!(counters(&mut c, "cl_throttle"), [3, 2, 1, 0], "{f:?}");
        // RL.COUNT answers totals: a call, neither admitted nor denied.
        run(&mut c, &["RL.COUNT", "c", "1000", "ok"]).unwrap();
        assert_eq!(counters(&mut c, "count"), [1, 0, 0, 0], "{f:?}");
        // Inside MULTI and scripts the same counters move.
        let _: () = redis::cmd("MULTI").query(&mut c).unwrap();
        let _: () = redis::cmd("RL.FIXED")
            .arg(&["f", "1", "600000"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("RL.FIXED")
            .arg(&["f", "1", "600000"])
            .query(&mut c)
            .unwrap();
        let _: redis::Value = redis::cmd("EXEC").query(&mut c).unwrap();
        let _: redis::Value = redis::cmd("EVAL")
            .arg("return redis.call('RL.FIXED', KEYS[1], 1, 600000)")
            .arg(1)
            .arg("f")
            .query(&mut c)
            .unwrap();
        assert_eq!(counters(&mut c, "fixed"), [3, 1, 2, 0], "{f:?}");
    });
}

#[test]
fn info_lists_only_registered_commands() {
    for flavor in [Flavor::Redis7, Flavor::Valkey9Native] {
        let server = Server::start_with(flavor, &[]);
        assert!(rl_info(&mut server.conn()).contains_key("cl_throttle_calls"));
        drop(server);
        // Load arguments follow the module path on the command line.
        let off = Server::start_with(flavor, &["CL.THROTTLE", "off"]);
        let info = rl_info(&mut off.conn());
        assert!(
            !info.contains_key("cl_throttle_calls"),
            "{flavor:?} {info:?}"
        );
        assert!(info.contains_key("slide_calls"), "{flavor:?}");
    }
}

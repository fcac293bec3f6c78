//! CL.THROTTLE on real servers: redis-cell's reply, its limited answers,
//! the state it shares with RL.THROTTLE, and the load argument that turns
//! it off.
mod common;

use common::limiters::*;
use common::*;

#[test]
fn replies_like_redis_cell() {
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
        let before = state(&mut c, "h");
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
        assert_eq!(state(&mut c, "h"), before, "{f:?}");
        // Any quantity redis-cell reads (an i64) gets its answer: limited,
        // nothing used, retry -1.
        for q in [2_000_000_000_000_000, i64::MAX as u64] {
            assert_eq!(
                cl_throttle(&mut c, "idle", [5, 1, 1], Some(q)),
                [1, 6, 6, -1, 0],
                "{f:?} quantity {q}"
            );
        }
        let keys: i64 = redis::cmd("EXISTS").arg("idle").query(&mut c).unwrap();
        assert_eq!(keys, 0, "{f:?}: a limited call writes nothing");
    });
}

#[test]
fn shares_its_state_with_rl_throttle() {
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

#[test]
fn bad_input_and_other_types_are_refused() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let cases: &[(&[&str], &str)] = &[
            (&["CL.THROTTLE", "k", "1", "1"], "wrong number of arguments"),
            (
                &["CL.THROTTLE", "k", "x", "1", "1"],
                "max_burst must be an integer from 0 to",
            ),
            (
                &["CL.THROTTLE", "k", "1", "0", "1"],
                "count must be an integer from 1 to",
            ),
            (
                &["CL.THROTTLE", "k", "1", "1", "1000000001"],
                "period must be an integer from 1 to",
            ),
            (
                &["CL.THROTTLE", "k", "1", "1", "1", "-2"],
                "quantity must be an integer from 0 to",
            ),
        ];
        assert_errors(&mut c, f, cases);
        let exists: i64 = redis::cmd("EXISTS").arg("k").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}");
        let _: () = redis::cmd("HSET")
            .arg("h")
            .arg("a")
            .arg(1)
            .query(&mut c)
            .unwrap();
        assert_wrongtype_untouched(&mut c, f, "h", &["CL.THROTTLE", "h", "1", "1", "1"]);
    });
}

#[test]
fn load_argument_turns_cl_throttle_off() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["CL.THROTTLE", "off"]);
        let mut c = server.conn();
        let err = error_of(&mut c, &["CL.THROTTLE", "k", "1", "1", "1"]);
        assert!(err.contains("unknown command"), "{flavor:?}: {err}");
        let info: redis::Value = redis::cmd("COMMAND")
            .arg("INFO")
            .arg("cl.throttle")
            .query(&mut c)
            .unwrap();
        assert_eq!(
            info,
            redis::Value::Array(vec![redis::Value::Nil]),
            "{flavor:?}"
        );
        assert_eq!(
            throttle(&mut c, "k", [1, 1, 1000], None)[..3],
            [1, 1, 0],
            "{flavor:?}"
        );
        assert_eq!(fixed(&mut c, "f", 1, 1000, None)[0], 1, "{flavor:?}");
    }
}

#[test]
fn unknown_load_argument_fails_the_load_with_a_log_line() {
    for flavor in ALL {
        let server = server_without_module(flavor, "loadargs");
        let mut c = server.conn();
        let module = flavor.module();
        let module = module.to_str().unwrap();
        let err = error_of(&mut c, &["MODULE", "LOAD", module, "no-cl-throttle"]);
        assert!(
            err.to_lowercase().contains("error loading"),
            "{flavor:?}: {err}"
        );
        let log = server.log();
        assert!(
            log.contains("rl: unknown load argument 'no-cl-throttle'"),
            "{flavor:?}: {log}"
        );
        // The same server then loads it with a valid argument.
        let _: () = redis::cmd("MODULE")
            .arg("LOAD")
            .arg(module)
            .arg("CL.THROTTLE")
            .arg("off")
            .query(&mut c)
            .unwrap();
        assert_eq!(
            throttle(&mut c, "k", [0, 1, 1000], None)[0],
            1,
            "{flavor:?}"
        );
        let err = error_of(&mut c, &["CL.THROTTLE", "k", "1", "1", "1"]);
        assert!(err.contains("unknown command"), "{flavor:?}: {err}");
    }
}

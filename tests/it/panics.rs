//! A panic inside a command becomes an error reply: the server keeps
//! running, the call counts as an error, the log names the command, and the
//! reply is whole (scripts and MULTI read it without trouble). The probe is
//! rl built with one extra command whose body panics (`examples/
//! rl_panic_probe.rs`); the module users load has no such command.

use crate::harness::fixtures::{fixture, start_with_modules};
use crate::harness::raw_resp::{line, RawConn, Resp};
use crate::harness::*;

const PANICKED: &str = "rl internal error: the command panicked";

/// The probe is built with the Redis-API binding: every server but the
/// native Valkey pairing (which shares the same boundary code).
const FLAVORS: [Flavor; 3] = [Flavor::Redis7, Flavor::Redis8, Flavor::Valkey9];

#[test]
fn a_panicking_command_answers_an_error_and_the_server_runs_on() {
    for flavor in FLAVORS {
        let mut server = start_with_modules(flavor, &[(fixture("rl_panic_probe"), &[])]);
        let mut c = server.conn();
        let err = run(&mut c, &["RL.TEST.PANIC", "k"]).unwrap_err();
        assert_eq!(error_text(&err), format!("ERR {PANICKED}"), "{flavor:?}");
        // The same connection goes on: the reply was one whole error.
        assert_eq!(slide(&mut c, "k", 2, 600_000)[..2], [1, 1], "{flavor:?}");

        // In MULTI, read byte by byte: one whole error among the replies,
        // the rest of EXEC runs, and the stream stays in step.
        let mut raw = RawConn::connect(server.port);
        let replies = raw.pipeline(&[
            line(&["MULTI"]),
            line(&["RL.TEST.PANIC", "k"]),
            line(&["RL.SLIDE", "k", "2", "600000"]),
            line(&["EXEC"]),
            line(&["PING"]),
        ]);
        let Resp::Array(Some(exec)) = &replies[3] else {
            panic!("{flavor:?}: EXEC {replies:?}");
        };
        assert_eq!(exec.len(), 2, "{flavor:?}: {exec:?}");
        let text = exec[0].error_text().unwrap_or_default();
        assert!(text.contains(PANICKED), "{flavor:?}: {exec:?}");
        assert_eq!(exec[1].ints().unwrap()[..2], [1, 0], "{flavor:?}");
        assert_eq!(replies[4], Resp::Status(b"PONG".to_vec()), "{flavor:?}");

        // A script reads the error like any other.
        let caught: String = redis::cmd("EVAL")
            .arg("local r = redis.pcall('rl.test.panic', KEYS[1]); return r['err']")
            .arg(1)
            .arg("k")
            .query(&mut c)
            .unwrap();
        assert!(caught.contains(PANICKED), "{flavor:?}: {caught}");
        let err = redis::cmd("EVAL")
            .arg("return redis.call('rl.test.panic', KEYS[1])")
            .arg(1)
            .arg("k")
            .query::<redis::Value>(&mut c)
            .unwrap_err();
        assert!(err.to_string().contains(PANICKED), "{flavor:?}: {err}");

        assert_eq!(counters(&mut c, "test_panic"), [4, 0, 0, 4], "{flavor:?}");
        let log = server.log();
        let line = "RL.TEST.PANIC panicked (RL.TEST.PANIC was called with 1 arguments); the client got an error reply";
        assert!(log.contains(line), "{flavor:?}:\n{log}");
        let ping: String = redis::cmd("PING").query(&mut server.conn()).unwrap();
        assert_eq!(ping, "PONG");
        server.assert_alive();
    }
}

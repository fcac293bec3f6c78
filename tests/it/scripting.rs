//! Inside MULTI/EXEC and from Lua scripts every command decides as it
//! does alone; errors stay per command; read-only scripts may not call the
//! commands that write. (RL.PEEK in read-only scripts: `peek.rs`.)

use crate::harness::all_commands::{Writer, WRITERS};
use crate::harness::*;

const SCRIPT: &str = "return redis.call('RL.SLIDE', KEYS[1], ARGV[1], ARGV[2])";

#[test]
fn slide_in_a_transaction_admits_exactly_up_to_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let mut pipe = redis::pipe();
        pipe.atomic();
        for _ in 0..7 {
            pipe.cmd("RL.SLIDE").arg("tx").arg(4).arg(60_000);
        }
        pipe.cmd("RL.SLIDE")
            .arg("tx")
            .arg(4)
            .arg(60_000)
            .arg("COST")
            .arg(2);
        let replies: Vec<Vec<i64>> = pipe.query(&mut c).unwrap();
        let allowed: Vec<i64> = replies.iter().map(|r| r[0]).collect();
        assert_eq!(allowed, [1, 1, 1, 1, 0, 0, 0, 0], "{f:?}");
        let remaining: Vec<i64> = replies.iter().map(|r| r[1]).collect();
        assert_eq!(remaining, [3, 2, 1, 0, 0, 0, 0, 0], "{f:?}");
        assert_eq!(zcard(&mut c, "tx"), 4, "{f:?}");
    });
}

#[test]
fn errors_inside_a_transaction_are_per_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("MULTI").query(&mut c).unwrap();
        for args in [
            ["tx", "2", "60000"],
            ["tx", "0", "60000"],
            ["tx", "2", "60000"],
        ] {
            let queued: String = redis::cmd("RL.SLIDE").arg(&args).query(&mut c).unwrap();
            assert_eq!(queued, "QUEUED", "{f:?}");
        }
        // The client surfaces the one failed command as the EXEC error; the
        // two good calls around it still ran.
        let err = redis::cmd("EXEC")
            .query::<redis::Value>(&mut c)
            .unwrap_err();
        assert_eq!(
            error_text(&err),
            "ERR limit must be an integer from 1 to 1000000",
            "{f:?}"
        );
        assert_eq!(zcard(&mut c, "tx"), 2, "{f:?}: both good calls admitted");
        assert_eq!(slide(&mut c, "tx", 2, 60_000)[..2], [0, 0], "{f:?}");
    });
}

#[test]
fn slide_from_lua_gets_the_reply_and_respects_the_limit() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let eval = |c: &mut redis::Connection| -> Vec<i64> {
            redis::cmd("EVAL")
                .arg(SCRIPT)
                .arg(1)
                .arg("lua")
                .arg(2)
                .arg(1000)
                .query(c)
                .unwrap()
        };
        assert_eq!(eval(&mut c), [1, 1, 0, 1000], "{f:?}");
        assert_eq!(eval(&mut c), [1, 0, 0, 1000], "{f:?}");
        let denied = eval(&mut c);
        assert_eq!(denied[..2], [0, 0], "{f:?}");
        assert!(denied[2] > 0 && denied[2] <= 1000, "{f:?}: {denied:?}");
        assert_eq!(zcard(&mut c, "lua"), 2, "{f:?}");
    });
}

#[test]
fn lua_loop_admits_exactly_the_limit_with_distinct_members() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let script = "local n = 0
            for i = 1, tonumber(ARGV[1]) do
              local r = redis.call('RL.SLIDE', KEYS[1], ARGV[2], 60000)
              n = n + r[1]
            end
            return n";
        let admitted: i64 = redis::cmd("EVAL")
            .arg(script)
            .arg(1)
            .arg("loop")
            .arg(50)
            .arg(30)
            .query(&mut c)
            .unwrap();
        assert_eq!(admitted, 30, "{f:?}");
        let all = entries(&mut c, "loop");
        assert_eq!(all.len(), 30, "{f:?}: one member per admit, none collapsed");
    });
}

#[test]
fn lua_sees_errors_as_errors() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let script = "local ok, err = pcall(redis.call, 'RL.SLIDE', KEYS[1], 0, 1000)
            if ok then return 'no error' end
            return redis.pcall('RL.SLIDE', KEYS[1], 0, 1000)";
        let err = redis::cmd("EVAL")
            .arg(script)
            .arg(1)
            .arg("luaerr")
            .query::<redis::Value>(&mut c)
            .unwrap_err();
        assert_eq!(
            error_text(&err),
            "ERR limit must be an integer from 1 to 1000000",
            "{f:?}"
        );
        assert_eq!(exists(&mut c, &["luaerr"]), 0, "{f:?}");
        server.assert_alive();
    });
}

#[test]
fn buckets_inside_multi_and_lua() {
    on_every_server(|server| {
        let mut c = server.conn();
        let (a, b): (Vec<i64>, Vec<i64>) = redis::pipe()
            .atomic()
            .cmd("RL.BUCKETS")
            .arg("m")
            .arg(1)
            .arg(60_000)
            .cmd("RL.BUCKETS")
            .arg("m")
            .arg(1)
            .arg(60_000)
            .query(&mut c)
            .unwrap();
        assert_eq!((a[0], b[0]), (1, 0));
        let r: Vec<i64> = redis::cmd("EVAL")
            .arg("return redis.call('RL.BUCKETS', KEYS[1], 2, 60000)")
            .arg(1)
            .arg("lua")
            .query(&mut c)
            .unwrap();
        assert_eq!(r[..2], [1, 1]);
    });
}

/// How many of `replies` admitted, by `w`'s reply shape.
fn admitted(w: Writer, replies: &[redis::Value]) -> usize {
    replies.iter().filter(|r| w.admits(r)).count()
}

/// Five calls with a limit of 3, in one transaction and in one script:
/// three admitted, for every command that limits.
#[test]
fn every_command_admits_up_to_its_limit_in_a_transaction_and_a_script() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for w in WRITERS.into_iter().filter(|&w| w != Writer::Count) {
            let mut tx = redis::pipe();
            tx.atomic();
            for _ in 0..5 {
                let line = w.admit_line(&format!("tx:{}", w.name()), 3);
                tx.cmd(std::str::from_utf8(&line[0]).unwrap())
                    .arg(&line[1..]);
            }
            let replies: Vec<redis::Value> = tx.query(&mut c).unwrap();
            assert_eq!(
                admitted(w, &replies),
                3,
                "{f:?} {} in MULTI: {replies:?}",
                w.name()
            );

            let line = w.admit_line(&format!("lua:{}", w.name()), 3);
            let replies: Vec<redis::Value> = redis::cmd("EVAL")
                .arg(
                    "local out = {}
                    for i = 1, 5 do out[i] = redis.call(ARGV[1], KEYS[1], unpack(ARGV, 2)) end
                    return out",
                )
                .arg(1)
                .arg(line[1].as_slice())
                .arg(line[0].as_slice())
                .arg(&line[2..])
                .query(&mut c)
                .unwrap();
            assert_eq!(
                admitted(w, &replies),
                3,
                "{f:?} {} in Lua: {replies:?}",
                w.name()
            );
        }
    });
}

/// `write`: read-only scripts may not call a command that writes, and the
/// refused call writes nothing.
#[test]
fn read_only_scripts_may_not_call_the_writing_commands() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let mut lines: Vec<Vec<Vec<u8>>> = WRITERS
            .iter()
            .map(|w| w.admit_line(&format!("ro:{}", w.name()), 2))
            .collect();
        lines.push(
            ["RL.ALL", "1", "ro:all", "SLIDE", "2", "1000"]
                .iter()
                .map(|a| a.as_bytes().to_vec())
                .collect(),
        );
        for line in lines {
            // RL.ALL's key follows numkeys.
            let key = if line[0] == b"RL.ALL" {
                &line[2]
            } else {
                &line[1]
            };
            let err = redis::cmd("EVAL_RO")
                .arg("return redis.call(unpack(ARGV))")
                .arg(1)
                .arg(key.as_slice())
                .arg(&line)
                .query::<redis::Value>(&mut c)
                .unwrap_err();
            let name = String::from_utf8_lossy(&line[0]).into_owned();
            assert!(
                error_text(&err).contains("Write commands are not allowed from read-only scripts"),
                "{f:?} {name}: {err:?}"
            );
            let key = String::from_utf8_lossy(key).into_owned();
            assert_eq!(exists(&mut c, &[&key]), 0, "{f:?} {name}");
        }
    });
}

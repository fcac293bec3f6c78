//! RL.SLIDE inside MULTI/EXEC and from Lua scripts.
mod common;

use common::*;

const SCRIPT: &str = "return redis.call('RL.SLIDE', KEYS[1], ARGV[1], ARGV[2])";

#[test]
fn transaction_admits_exactly_up_to_the_limit() {
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
fn lua_script_gets_the_reply_and_respects_the_limit() {
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
        let exists: i64 = redis::cmd("EXISTS").arg("luaerr").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}");
        server.assert_alive();
    });
}

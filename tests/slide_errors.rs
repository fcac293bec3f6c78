//! Bad input gets an error naming the problem and writes nothing; a key of
//! another type gets WRONGTYPE and stays byte-identical; the server lives on.
mod common;

use common::*;

const LIMIT_RANGE: &str = "ERR limit must be an integer from 1 to 1000000";
const WINDOW_RANGE: &str = "ERR window must be an integer from 1 to 1000000000000";
const COST_RANGE: &str = "ERR COST must be an integer from 1 to 100";
const WRONG_ARITY: &str = "ERR wrong number of arguments for 'rl.slide' command";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// (arguments after the key, exact error text).
fn bad_inputs() -> Vec<(Vec<&'static [u8]>, &'static str)> {
    vec![
        // Arity: the server checks it before the module runs.
        (vec![], WRONG_ARITY),
        (vec![b"10"], WRONG_ARITY),
        // limit
        (vec![b"ten", b"1000"], LIMIT_RANGE),
        (vec![b"0", b"1000"], LIMIT_RANGE),
        (vec![b"-5", b"1000"], LIMIT_RANGE),
        (vec![b"+5", b"1000"], LIMIT_RANGE),
        (vec![b"1.5", b"1000"], LIMIT_RANGE),
        (vec![b"", b"1000"], LIMIT_RANGE),
        (vec![b" 5", b"1000"], LIMIT_RANGE),
        (vec![b"1000001", b"1000"], LIMIT_RANGE),
        (vec![b"18446744073709551616", b"1000"], LIMIT_RANGE),
        (vec![b"99999999999999999999999999", b"1000"], LIMIT_RANGE),
        // window
        (vec![b"10", b"0"], WINDOW_RANGE),
        (vec![b"10", b"-1000"], WINDOW_RANGE),
        (vec![b"10", b"1e3"], WINDOW_RANGE),
        (vec![b"10", b"0x10"], WINDOW_RANGE),
        (vec![b"10", b"1000000000001"], WINDOW_RANGE),
        (vec![b"10", b"9223372036854775808"], WINDOW_RANGE),
        (vec![b"10", b"99999999999999999999999"], WINDOW_RANGE),
        // COST
        (vec![b"10", b"1000", b"COST", b"0"], COST_RANGE),
        (vec![b"10", b"1000", b"COST", b"-1"], COST_RANGE),
        (vec![b"10", b"1000", b"COST", b"two"], COST_RANGE),
        (
            vec![b"10", b"1000", b"COST", b"18446744073709551617"],
            COST_RANGE,
        ),
        (
            vec![b"10", b"1000", b"COST", b"11"],
            "ERR COST must not exceed limit",
        ),
        (
            vec![b"1", b"1000", b"COST", b"100"],
            "ERR COST must not exceed limit",
        ),
        (vec![b"1000", b"1000", b"COST", b"101"], COST_RANGE),
        (vec![b"10", b"1000", b"COST", b"05"], COST_RANGE),
        (vec![b"05", b"1000"], LIMIT_RANGE),
        (vec![b"10", b"1000", b"COST"], "ERR COST needs a value"),
        (vec![b"10", b"1000", b"cost"], "ERR COST needs a value"),
        (
            vec![b"10", b"1000", b"COST", b"1", b"COST", b"2"],
            "ERR COST given more than once",
        ),
        (
            vec![b"10", b"1000", b"COST", b"1", b"cost", b"1"],
            "ERR COST given more than once",
        ),
        // Unknown options, echoed safely.
        (
            vec![b"10", b"1000", b"WEIGHT", b"2"],
            "ERR unknown option 'WEIGHT'",
        ),
        (
            vec![b"10", b"1000", b"COST", b"1", b"EXTRA"],
            "ERR unknown option 'EXTRA'",
        ),
        (vec![b"10", b"1000", b"a\r\nb"], "ERR unknown option 'a??b'"),
        (
            vec![b"10", b"1000", b"\xff\xfe"],
            "ERR unknown option '\u{fffd}\u{fffd}'",
        ),
    ]
}

fn call(c: &mut redis::Connection, key: &str, rest: &[&[u8]]) -> redis::RedisResult<redis::Value> {
    let mut args: Vec<&[u8]> = vec![key.as_bytes()];
    args.extend_from_slice(rest);
    slide_raw(c, &args)
}

#[test]
fn bad_input_gets_an_error_naming_the_argument_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // A live key, to show it is left alone too.
        slide_cost(&mut c, "held", 10, 600_000, 3);
        let held = frozen_state(&mut c, "held");
        for (rest, want) in bad_inputs() {
            for key in ["absent", "held"] {
                let err = call(&mut c, key, &rest)
                    .expect_err(&format!("{f:?}: {rest:?} on {key} must fail"));
                assert_eq!(error_text(&err), want, "{f:?}: RL.SLIDE {key} {rest:?}");
            }
            let exists: i64 = redis::cmd("EXISTS").arg("absent").query(&mut c).unwrap();
            assert_eq!(exists, 0, "{f:?}: {rest:?} created the key");
            assert_eq!(
                frozen_state(&mut c, "held"),
                held,
                "{f:?}: {rest:?} changed the key"
            );
        }
        let pong: String = redis::cmd("PING").query(&mut c).unwrap();
        assert_eq!(pong, "PONG", "{f:?}");
        server.assert_alive();
    });
}

#[test]
fn bad_input_does_not_invalidate_a_watch() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut watcher = server.conn();
        let mut other = server.conn();
        slide(&mut other, "w", 10, 600_000);
        let _: () = redis::cmd("WATCH").arg("w").query(&mut watcher).unwrap();
        for (rest, _) in bad_inputs() {
            assert!(call(&mut other, "w", &rest).is_err(), "{f:?}: {rest:?}");
        }
        let _: () = redis::cmd("MULTI").query(&mut watcher).unwrap();
        let _: String = redis::cmd("PING").query(&mut watcher).unwrap();
        let exec: redis::Value = redis::cmd("EXEC").query(&mut watcher).unwrap();
        assert_ne!(
            exec,
            redis::Value::Nil,
            "{f:?}: an error aborted the watcher"
        );
    });
}

#[test]
fn key_of_another_type_gets_wrongtype_and_stays_identical() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let setup: &[&[&str]] = &[
            &["SET", "string", "v", "PX", "600000"],
            &["RPUSH", "list", "a", "b"],
            &["SADD", "set", "1", "2"],
            &["HSET", "hash", "f", "v"],
            &["XADD", "stream", "1-1", "f", "v"],
        ];
        for cmd in setup {
            let mut r = redis::cmd(cmd[0]);
            for a in &cmd[1..] {
                r.arg(*a);
            }
            let _: redis::Value = r.query(&mut c).unwrap();
        }
        for key in ["string", "list", "set", "hash", "stream"] {
            let before = frozen_state(&mut c, key);
            assert!(before.0.is_some(), "{f:?}: {key} missing");
            for rest in [
                vec![b"10".as_slice(), b"1000"],
                vec![b"1", b"1000", b"COST", b"1"],
            ] {
                let err = call(&mut c, key, &rest).expect_err("must fail");
                assert_eq!(error_text(&err), WRONGTYPE, "{f:?}: {key}");
            }
            assert_eq!(frozen_state(&mut c, key), before, "{f:?}: {key} changed");
        }
        server.assert_alive();
    });
}

/// A sorted set written by someone else can hold scores rl never writes
/// (`+inf`, `1e300`). Whatever RL.SLIDE answers there, it must not leave
/// behind writes it did not replicate: an error reply leaves the key
/// byte-identical, and the replica ends equal to the primary either way.
#[test]
fn failed_call_on_a_foreign_sorted_set_writes_nothing() {
    for flavor in ALL {
        let mut primary = Server::start_primary(flavor, &[]);
        let mut replica = primary.start_replica(true);
        let mut p = primary.conn();
        let mut r = replica.conn();
        for (key, score) in [("inf", "+inf"), ("huge", "1e300")] {
            let _: i64 = redis::cmd("ZADD")
                .arg(key)
                .arg(score)
                .arg("foreign")
                .query(&mut p)
                .unwrap();
            let before = frozen_state(&mut p, key);
            let reply = call(&mut p, key, &[b"5", b"1000"]);
            if let Err(err) = &reply {
                assert_eq!(
                    frozen_state(&mut p, key),
                    before,
                    "{flavor:?}: {key}: the call failed with {:?} yet changed the key",
                    error_text(err)
                );
            }
            let acked: i64 = redis::cmd("WAIT").arg(1).arg(10_000).query(&mut p).unwrap();
            assert_eq!(acked, 1, "{flavor:?}");
            assert_eq!(
                entries(&mut r, key),
                entries(&mut p, key),
                "{flavor:?}: {key}: replica differs after {reply:?}"
            );
            assert_eq!(
                pexpiretime(&mut r, key),
                pexpiretime(&mut p, key),
                "{flavor:?}: {key}"
            );
        }
        primary.assert_alive();
        replica.assert_alive();
    }
}

/// Foreign members numbered at the very end of the current millisecond's
/// block leave room for one unit of a COST 2 request only. The script reads
/// the server's clock and plants such members for this millisecond and the
/// next two, so RL.SLIDE's own `now` hits one of them. If the call fails,
/// it must have written nothing.
#[test]
fn foreign_entries_error_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let script = r#"
            local t = redis.call('TIME')
            local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            for d = 0, 2 do
              local s = string.format('%.0f', ms + d)
              redis.call('ZADD', KEYS[1], s, s .. '999998')
            end
            local before = redis.call('DUMP', KEYS[1])
            local res = redis.pcall('RL.SLIDE', KEYS[1], 10, 60000, 'COST', 2)
            local outcome = 'admitted'
            if type(res) == 'table' and res.err then outcome = res.err end
            return {outcome, before, redis.call('DUMP', KEYS[1])}
        "#;
        let (outcome, before, after): (String, Vec<u8>, Vec<u8>) = redis::cmd("EVAL")
            .arg(script)
            .arg(1)
            .arg("foreign")
            .query(&mut c)
            .unwrap();
        if outcome != "admitted" {
            assert_eq!(
                after, before,
                "{f:?}: RL.SLIDE failed with {outcome:?} yet changed the key"
            );
        }
        server.assert_alive();
    });
}

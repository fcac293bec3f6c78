//! Three error texts the two editions now share (issue #39): `RL.CHARGE`
//! without the limiter's parameters names the usage, `RL.THROTTLE` with
//! `WAIT` beside `UPTO` (or wherever a call cannot wait) refuses `WAIT` as
//! unknown, and a sliding log whose millisecond has no member left for a
//! charge says so and when it can be made. Each line runs through the
//! module and through the library on the same server, writing nothing.

use super::start_both;
use crate::harness::*;

/// The module's line and the library's: `FCALL rl_<command> 1 <key> ...`,
/// the key as the module's line has it at `key_at`, the limiter's name
/// first for the commands that name one.
fn both(c: &mut redis::Connection, line: &[&str], key_at: usize) -> (String, String) {
    let module = err_text(run(c, line));
    let command = line[0].to_lowercase().replace('.', "_");
    let mut fcall = vec!["FCALL", command.as_str(), "1", line[key_at]];
    fcall.extend(
        line[1..]
            .iter()
            .enumerate()
            .filter(|(i, _)| i + 1 != key_at)
            .map(|(_, a)| *a),
    );
    let library = err_text(run(c, &fcall));
    (module, library)
}

#[test]
fn a_charge_without_the_limiters_parameters_names_its_usage_in_both_editions() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        super::load(&mut c);
        for (limiter, usage) in [
            ("SLIDE", "SLIDE key limit window COST cost"),
            (
                "BUCKETS",
                "BUCKETS key limit window [PRECISION ms] COST cost",
            ),
            ("THROTTLE", "THROTTLE key max_burst count period COST cost"),
            ("FIXED", "FIXED key limit window COST cost"),
        ] {
            let want =
                format!("ERR wrong number of arguments for 'rl.charge' command (expected {usage})");
            for line in [
                &["RL.CHARGE", limiter, "k", "COST", "5"][..],
                &["RL.CHARGE", limiter, "k", "cost", "5"][..],
            ] {
                let (module, library) = both(&mut c, line, 2);
                assert_eq!(module, want, "{f:?} {line:?}");
                assert_eq!(library, want, "{f:?} {line:?}");
            }
            // The other commands that name a limiter already agreed.
            for line in [
                &["RL.PEEK", limiter, "k"][..],
                &["RL.REFUND", limiter, "k"][..],
            ] {
                let (module, library) = both(&mut c, line, 2);
                assert!(module.contains("(expected"), "{f:?} {line:?}: {module}");
                assert_eq!(module, library, "{f:?} {line:?}");
            }
        }
        assert_eq!(exists(&mut c, &["k"]), 0, "{f:?}");
    });
}

#[test]
fn wait_where_a_throttle_call_cannot_wait_is_an_unknown_option_in_both_editions() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        super::load(&mut c);
        let unknown = "ERR unknown option 'WAIT'";
        for line in [
            &["RL.THROTTLE", "t", "1", "2", "1000", "WAIT", "1", "UPTO"][..],
            &["RL.THROTTLE", "t", "1", "2", "1000", "UPTO", "WAIT", "1"][..],
            &[
                "RL.THROTTLE",
                "t",
                "1",
                "2",
                "1000",
                "3",
                "WAIT",
                "1",
                "UPTO",
            ][..],
            &[
                "RL.THROTTLE",
                "t",
                "1",
                "2",
                "1000",
                "UPTO",
                "BLOCK",
                "9",
                "WAIT",
                "1",
            ][..],
            // As RL.SLIDE says.
            &["RL.SLIDE", "t", "1", "1000", "WAIT", "1", "UPTO"][..],
        ] {
            let (module, library) = both(&mut c, line, 1);
            assert_eq!(module, unknown, "{f:?} {line:?}");
            assert_eq!(library, unknown, "{f:?} {line:?}");
        }
        for line in [
            &["RL.PEEK", "THROTTLE", "t", "1", "2", "1000", "WAIT", "1"][..],
            &["RL.REFUND", "THROTTLE", "t", "1", "2", "1000", "wait", "1"][..],
            // A charge has no quantity: WAIT is named, not a word too many.
            &[
                "RL.CHARGE",
                "THROTTLE",
                "t",
                "1",
                "2",
                "1000",
                "WAIT",
                "1",
                "COST",
                "1",
            ][..],
        ] {
            let (module, library) = both(&mut c, line, 2);
            let want = format!("ERR unknown option '{}'", line[6]);
            assert_eq!(module, want, "{f:?} {line:?}");
            assert_eq!(library, want, "{f:?} {line:?}");
        }
        let clause = [
            "RL.ALL", "1", "t", "THROTTLE", "1", "2", "1000", "WAIT", "1",
        ];
        let module = err_text(run(&mut c, &clause));
        let library = err_text(run(
            &mut c,
            &[
                "FCALL", "rl_all", "1", "t", "THROTTLE", "1", "2", "1000", "WAIT", "1",
            ],
        ));
        assert_eq!(module, "ERR clause 1: unknown option 'WAIT'", "{f:?}");
        assert_eq!(library, module, "{f:?}");
        // The library has no WAIT at all: refused by name there too.
        let plain = [
            "FCALL",
            "rl_throttle",
            "1",
            "t",
            "1",
            "2",
            "1000",
            "WAIT",
            "1",
        ];
        assert_eq!(err_text(run(&mut c, &plain)), unknown, "{f:?}");
        assert_eq!(exists(&mut c, &["t"]), 0, "{f:?}: nothing written");
    });
}

/// A key's whole state: its serialized value and its absolute expiry.
fn state(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (dump, at)
}

/// A sliding log whose newest entry at `at` took member number `n`, as rl
/// numbers them (`at * 1000000 + n`), with the expiry rl gives a log.
fn plant(c: &mut redis::Connection, key: &str, at: i64, n: i64) {
    let member = format!("{at}{n:06}");
    let _: i64 = redis::cmd("ZADD")
        .arg(key)
        .arg(at)
        .arg(&member)
        .query(c)
        .unwrap();
    let _: i64 = redis::cmd("PEXPIREAT")
        .arg(key)
        .arg(at + 600_000)
        .query(c)
        .unwrap();
}

/// `RL.CHARGE SLIDE` (and `RL.SLIDE`) over a log whose millisecond has
/// fewer members left than the cost: both editions refuse with the same
/// text, saying how many are left and when the charge can be made, and
/// write nothing. On the stopped clock (Valkey) the millisecond is the
/// current one and the charge goes through 1 ms later; on a running clock
/// it is one far ahead (a clock that stepped back: rl records at the
/// newest entry's time).
#[test]
fn a_full_millisecond_refuses_a_charge_and_says_when_it_can_be_made() {
    for flavor in ALL {
        let mut server = start_both(flavor);
        let f = server.flavor;
        let exact = f.clock_can_stop();
        let mut c = server.conn();
        let at = if exact {
            server.clock_ms()
        } else {
            server_ms(&mut c) + 600_000
        };
        for (n, cost) in [(999_999, "1"), (999_998, "2")] {
            let left = 999_999 - n;
            let (m, l) = (format!("m:{n}"), format!("f:{n}"));
            plant(&mut c, &m, at, n);
            plant(&mut c, &l, at, n);
            let before = (state(&mut c, &m), state(&mut c, &l));
            let head = format!(
                "ERR the key's millisecond {at} has {left} of its 1000000 entries left, fewer than COST {cost}: nothing written, retry in "
            );
            for line in [
                &["RL.CHARGE", "SLIDE", &m, "1000000", "60000", "COST", cost][..],
                &["RL.SLIDE", &m, "1000000", "60000", "COST", cost][..],
            ] {
                let key_at = if line[0] == "RL.SLIDE" { 1 } else { 2 };
                let (module, library) = both(&mut c, line, key_at);
                let wait: i64 = module
                    .strip_prefix(&head)
                    .and_then(|rest| rest.strip_suffix(" ms"))
                    .and_then(|w| w.parse().ok())
                    .unwrap_or_else(|| panic!("{f:?} {line:?}: {module}"));
                if exact {
                    assert_eq!(wait, 1, "{f:?} {line:?}");
                    assert_eq!(library, module, "{f:?} {line:?}");
                } else {
                    assert!(wait > 0 && wait <= 600_001, "{f:?} {line:?}: {module}");
                    assert!(library.starts_with(&head), "{f:?} {line:?}: {library}");
                }
            }
            // Both editions ran over the module's key; the library's own
            // key (`f:`) refuses alike. Neither key changed.
            let lib_line = [
                "FCALL",
                "rl_charge",
                "1",
                &l,
                "SLIDE",
                "1000000",
                "60000",
                "COST",
                cost,
            ];
            assert!(err_text(run(&mut c, &lib_line)).starts_with(&head), "{f:?}");
            assert_eq!((state(&mut c, &m), state(&mut c, &l)), before, "{f:?}");
            if exact {
                // The next millisecond numbers from 0 again: charged.
                server.advance(1);
                let module: Vec<i64> = run_as(
                    &mut c,
                    &["RL.CHARGE", "SLIDE", &m, "1000000", "60000", "COST", cost],
                );
                let library: Vec<i64> = run_as(&mut c, &lib_line);
                assert_eq!(module[0], cost.parse::<i64>().unwrap(), "{f:?}");
                assert_eq!(module, library, "{f:?}");
                server.set_clock(at);
            }
        }
        server.assert_alive();
    }
}

fn run_as<T: redis::FromRedisValue>(c: &mut redis::Connection, line: &[&str]) -> T {
    let mut cmd = redis::cmd(line[0]);
    for a in &line[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
        .unwrap_or_else(|e| panic!("{line:?}: {}", error_text(&e)))
}

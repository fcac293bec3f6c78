//! Shadow mode over `UPTO` (issue #39): a partial grant that gets nothing
//! is a denial, so shadow mode admits it as any other: with the denial's
//! figures and `granted` 0 (what enforcement granted), the key left as
//! enforcement leaves it (nothing, or the block `BLOCK ms` sets), counted
//! in `shadow_denied` (and the prefix lines) and told as
//! `rl.denied.shadow` alone. Each call runs on a shadowed key (`sh:`) and
//! on its enforced twin (`en:`) at the same instant where the clock stops
//! (Valkey), so the twins' replies and states can be compared.

use redis::Value;

use crate::harness::*;

/// Each limiter's `UPTO` line after its key: 3 units fit, 5 are asked.
const LINES: [(&str, &str, &[&str]); 4] = [
    ("slide", "RL.SLIDE", &["3", "600000", "COST", "5", "UPTO"]),
    (
        "buckets",
        "RL.BUCKETS",
        &["3", "600000", "COST", "5", "UPTO"],
    ),
    (
        "throttle",
        "RL.THROTTLE",
        &["2", "1", "600000", "5", "UPTO"],
    ),
    ("fixed", "RL.FIXED", &["3", "600000", "COST", "5", "UPTO"]),
];

const BLOCK: [&str; 2] = ["BLOCK", "60000"];

fn set(c: &mut redis::Connection, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg(&["SET", name, value])
        .query(c)
        .unwrap_or_else(|e| panic!("CONFIG SET {name} {value:?}: {e}"));
}

fn ints(v: &Value) -> Vec<i64> {
    let Value::Array(items) = v else {
        panic!("not an array: {v:?}")
    };
    items
        .iter()
        .map(|i| match i {
            Value::Int(n) => *n,
            other => panic!("not an integer: {other:?}"),
        })
        .collect()
}

/// A key's whole state: its serialized value and its absolute expiry.
fn state(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (dump, at)
}

/// A key's contents with every run of digits as `#`, and whether it
/// expires: what two keys written a few ms apart on a running clock share.
fn shape(c: &mut redis::Connection, key: &str) -> (String, bool) {
    let kind: String = redis::cmd("TYPE").arg(key).query(c).unwrap();
    let items: Vec<String> = match kind.as_str() {
        "string" => vec![redis::cmd("GET").arg(key).query(c).unwrap()],
        "zset" => redis::cmd("ZRANGE")
            .arg(&[key, "0", "-1", "WITHSCORES"])
            .query(c)
            .unwrap(),
        "hash" => {
            let mut pairs: Vec<(String, String)> = redis::cmd("HGETALL").arg(key).query(c).unwrap();
            pairs.sort();
            pairs.into_iter().flat_map(|(f, v)| [f, v]).collect()
        }
        other => panic!("{key}: unexpected type {other}"),
    };
    let mut text = String::new();
    for ch in items.join(" ").chars() {
        if !ch.is_ascii_digit() {
            text.push(ch);
        } else if !text.ends_with('#') {
            text.push('#');
        }
    }
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (format!("{kind}: {text}"), at > 0)
}

/// Every rl event (`rl.denied`, `rl.blocked`, `rl.denied.shadow`) fired
/// while `f` runs, as `(event, key)` in order.
fn rl_events(server: &Server, f: impl FnOnce(&mut redis::Connection)) -> Vec<(String, String)> {
    let mut c = server.conn();
    set(&mut c, "notify-keyspace-events", "Ed");
    let mut sub = server.conn();
    sub.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut ps = sub.as_pubsub();
    ps.psubscribe("__keyevent@0__:rl.*").unwrap();
    f(&mut c);
    let marker = "__keyevent@0__:rl.marker";
    let _: i64 = redis::cmd("PUBLISH")
        .arg(&[marker, "--"])
        .query(&mut c)
        .unwrap();
    let mut events = Vec::new();
    loop {
        let msg = ps.get_message().expect("the marker arrives");
        let channel = msg.get_channel_name().to_string();
        if channel == marker {
            return events;
        }
        let event = channel.trim_start_matches("__keyevent@0__:").to_string();
        events.push((event, msg.get_payload().unwrap()));
    }
}

/// The same `UPTO` calls on a shadowed key and its enforced twin, with
/// and without `BLOCK`: the shadowed one is admitted where the twin is
/// denied, with the twin's figures and `granted` 0, and both keys hold
/// the same; the counters, the prefix lines and the events tell the
/// shadowed calls apart.
#[test]
fn a_shadowed_upto_call_that_gets_nothing_is_admitted_as_enforcement_would_deny_it() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let exact = f.clock_can_stop();
        let mut c = server.conn();
        set(&mut c, "rl.shadow-prefixes", "sh:");
        set(&mut c, "rl.stats-prefixes", "sh: en:");
        set(&mut c, "rl.notify-denied", "yes");
        let events = rl_events(server, |c| {
            for block in [false, true] {
                for (name, command, args) in LINES {
                    let tag = if block { "b" } else { "" };
                    let line = |key: &str| {
                        let mut l = vec![command, key];
                        l.extend_from_slice(args);
                        if block {
                            l.extend_from_slice(&BLOCK);
                        }
                        l.into_iter().map(String::from).collect::<Vec<_>>()
                    };
                    let (sh, en) = (format!("sh:{name}{tag}"), format!("en:{name}{tag}"));
                    let call = |c: &mut redis::Connection, key: &str| {
                        let l = line(key);
                        let l: Vec<&str> = l.iter().map(String::as_str).collect();
                        ints(&run(c, &l).unwrap())
                    };
                    let ctx = format!("{f:?} {name} block={block}");
                    // What fits is granted, shadowed or not.
                    let (s, e) = (call(c, &sh), call(c, &en));
                    assert_eq!(e[..3], [1, 0, 0], "{ctx}: {e:?}");
                    assert_eq!(e[4], 3, "{ctx}: {e:?}");
                    assert_eq!((s[0], s[1], s[2], s[4]), (1, 0, 0, 3), "{ctx}: {s:?}");
                    // Nothing fits: enforced, denied (by the breach's block
                    // with BLOCK); shadowed, admitted with the same figures.
                    // With BLOCK, once more while the block holds.
                    let calls = if block { 2 } else { 1 };
                    for _ in 0..calls {
                        let (s, e) = (call(c, &sh), call(c, &en));
                        assert_eq!((e[0], e[1], e[4]), (0, 0, 0), "{ctx}: {e:?}");
                        assert!(e[2] > 0, "{ctx}: {e:?}");
                        assert_eq!((s[0], s[1], s[4]), (1, 0, 0), "{ctx}: {s:?}");
                        assert!(s[2] > 0, "{ctx}: the denial's wait: {s:?}");
                        if block {
                            assert!(s[2] > 50_000 && s[2] <= 60_000, "{ctx}: {s:?}");
                        }
                        if exact {
                            assert_eq!(s[1..], e[1..], "{ctx}: the denial's figures");
                        }
                    }
                    // Both keys hold what enforcement left.
                    if exact {
                        assert_eq!(state(c, &sh), state(c, &en), "{ctx}");
                    } else {
                        assert_eq!(shape(c, &sh), shape(c, &en), "{ctx}");
                    }
                }
            }
        });
        // Per limiter: 3 shadowed calls (1 without BLOCK, 2 with), 3
        // enforced denials, the first call of each key admitted.
        let info = rl_info(&mut c);
        for (name, _, _) in LINES {
            let field = |n: &str| info[&format!("{name}_{n}")];
            assert_eq!(
                [
                    field("admitted"),
                    field("denied"),
                    field("shadow_denied"),
                    field("blocked")
                ],
                [4 + 3, 3, 3, 1],
                "{f:?} {name}"
            );
        }
        assert_eq!(
            prefix_counts(&mut c),
            [
                ("sh:".to_string(), [4 * (2 + 3), 0, 4 * 3]),
                ("en:".to_string(), [4 * 2, 4 * 3, 0])
            ],
            "{f:?}"
        );
        // Shadowed keys fire rl.denied.shadow alone, once per shadowed
        // call; enforced ones never do.
        let keys_of = |event: &str, prefix: &str| -> Vec<&str> {
            events
                .iter()
                .filter(|(e, k)| e == event && k.starts_with(prefix))
                .map(|(_, k)| k.as_str())
                .collect()
        };
        assert!(keys_of("rl.denied", "sh:").is_empty(), "{f:?}: {events:?}");
        assert!(keys_of("rl.blocked", "sh:").is_empty(), "{f:?}: {events:?}");
        assert!(
            keys_of("rl.denied.shadow", "en:").is_empty(),
            "{f:?}: {events:?}"
        );
        let mut shadowed = keys_of("rl.denied.shadow", "sh:");
        shadowed.sort_unstable();
        let mut want: Vec<String> = Vec::new();
        for (name, _, _) in LINES {
            want.push(format!("sh:{name}"));
            want.extend([format!("sh:{name}b"), format!("sh:{name}b")]);
        }
        want.sort_unstable();
        assert_eq!(shadowed, want, "{f:?}");
        assert_eq!(
            keys_of("rl.denied", "en:").len(),
            4 * 3,
            "{f:?}: {events:?}"
        );
    });
}

/// Switching enforcement on finds each shadowed `UPTO` key as enforcement
/// would have left it: the block a shadowed breach set denies at once
/// (counted blocked), and a key without one is denied by its window.
#[test]
fn enforcement_after_shadowed_upto_calls_denies_from_the_first_call() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        set(&mut c, "rl.shadow", "yes");
        for (name, command, args) in LINES {
            for block in [false, true] {
                let key = format!("{name}{}", if block { "b" } else { "" });
                let mut line = vec![command, key.as_str()];
                line.extend_from_slice(args);
                if block {
                    line.extend_from_slice(&BLOCK);
                }
                for _ in 0..2 {
                    assert_eq!(ints(&run(&mut c, &line).unwrap())[0], 1, "{f:?} {line:?}");
                }
            }
        }
        set(&mut c, "rl.shadow", "no");
        for (name, command, args) in LINES {
            let blocked_before = rl_info(&mut c)[&format!("{name}_blocked")];
            for block in [false, true] {
                let key = format!("{name}{}", if block { "b" } else { "" });
                let mut line = vec![command, key.as_str()];
                line.extend_from_slice(args);
                let r = ints(&run(&mut c, &line).unwrap());
                assert_eq!((r[0], r[4]), (0, 0), "{f:?} {line:?}: {r:?}");
                if block {
                    assert!(r[2] > 50_000 && r[2] <= 60_000, "{f:?} {line:?}: {r:?}");
                }
            }
            let info = rl_info(&mut c);
            assert_eq!(
                [
                    info[&format!("{name}_blocked")] - blocked_before,
                    info[&format!("{name}_shadow_denied")]
                ],
                [1, 2],
                "{f:?} {name}"
            );
        }
    });
}

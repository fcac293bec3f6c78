//! Keys of the right type that rl could not have written are refused by
//! every command that would read them (every limiter form of RL.PEEK,
//! RL.ALL and RL.REFUND too, and the lease commands), before anything is
//! written: same DUMP, same
//! absolute expiry, the server's change counter and replication offset
//! unmoved. (Keys of another type: `wrong_types.rs`.)

use crate::harness::*;

const FOREIGN_ZSET: &str = "ERR key holds a sorted set that rl did not write";
const FOREIGN_HASH: &str = "ERR key holds a hash that rl did not write";
const NOT_TAT: &str =
    "ERR key holds a string that is not an rl throttle state (a TAT in microseconds)";
const NOT_COUNTER: &str = "ERR key holds a string that is not an rl fixed-window counter";

/// How a foreign key of each shape is made (a line as [`run_on`] reads
/// it), the commands that read that type, and the error each answers.
struct Foreign {
    name: &'static str,
    setup: &'static [&'static [&'static str]],
    lines: &'static [(&'static [&'static str], &'static str)],
}

const SLIDE_LINES: &[(&[&str], &str)] = &[
    (&["RL.SLIDE", "K", "3", "1000"], FOREIGN_ZSET),
    (&["RL.SLIDE", "K", "3", "1000000000000"], FOREIGN_ZSET),
    (&["RL.SLIDE", "K", "100", "1000", "COST", "5"], FOREIGN_ZSET),
    (&["RL.PEEK", "SLIDE", "K", "3", "1000"], FOREIGN_ZSET),
    (
        &["RL.ALL", "1", "K", "SLIDE", "3", "1000"],
        "ERR clause 1: key holds a sorted set that rl did not write",
    ),
    (&["RL.REFUND", "SLIDE", "K", "3", "1000"], FOREIGN_ZSET),
    (
        &[
            "RL.REFUND",
            "SLIDE",
            "K",
            "100",
            "1000000000000",
            "COST",
            "5",
        ],
        FOREIGN_ZSET,
    ),
];

const BUCKET_LINES: &[(&[&str], &str)] = &[
    (&["RL.BUCKETS", "K", "3", "1000"], FOREIGN_HASH),
    (&["RL.COUNT", "K", "1000", "ok"], FOREIGN_HASH),
    (&["RL.TOTALS", "K", "1000"], FOREIGN_HASH),
    (&["RL.PEEK", "BUCKETS", "K", "3", "1000"], FOREIGN_HASH),
    (
        &["RL.ALL", "1", "K", "BUCKETS", "3", "1000"],
        "ERR clause 1: key holds a hash that rl did not write",
    ),
    (&["RL.REFUND", "BUCKETS", "K", "3", "1000"], FOREIGN_HASH),
];

const COUNTER_LINES: &[(&[&str], &str)] = &[
    (&["RL.FIXED", "K", "10", "1000"], NOT_COUNTER),
    (&["RL.PEEK", "FIXED", "K", "10", "1000"], NOT_COUNTER),
    (
        &["RL.ALL", "1", "K", "FIXED", "10", "1000"],
        "ERR clause 1: key holds a string that is not an rl fixed-window counter",
    ),
    (&["RL.REFUND", "FIXED", "K", "10", "1000"], NOT_COUNTER),
];

const TAT_LINES: &[(&[&str], &str)] = &[
    (&["RL.THROTTLE", "K", "5", "1", "1000"], NOT_TAT),
    (&["CL.THROTTLE", "K", "5", "1", "1"], NOT_TAT),
    (&["RL.PEEK", "THROTTLE", "K", "5", "1", "1000"], NOT_TAT),
    (
        &["RL.ALL", "1", "K", "THROTTLE", "5", "1", "1000"],
        "ERR clause 1: key holds a string that is not an rl throttle state (a TAT in microseconds)",
    ),
    (&["RL.REFUND", "THROTTLE", "K", "5", "1", "1000"], NOT_TAT),
];

const NO_HEADER: &str = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";

/// Every lease command, for a sorted set without the lease header.
const LEASE_LINES: &[(&[&str], &str)] = &[
    (&["RL.ACQUIRE", "K", "10", "1000"], NO_HEADER),
    (&["RL.ACQUIRE", "K", "10", "1000", "ID", "alice"], NO_HEADER),
    (&["RL.RELEASE", "K", "alice"], NO_HEADER),
    (&["RL.RENEW", "K", "alice", "99999999"], NO_HEADER),
    (&["RL.PEEK", "ACQUIRE", "K", "10", "1000"], NO_HEADER),
    (
        &["RL.ALL", "1", "K", "ACQUIRE", "10", "1000"],
        "ERR clause 1: key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)",
    ),
];

/// The same, for a lease set rl could not have written although it has
/// the header (each line reads the bad entry, or the missing TTL).
const HEADED_LEASE_LINES: &[(&[&str], &str)] = &[
    (&["RL.ACQUIRE", "K", "10", "1000"], FOREIGN_ZSET),
    (
        &["RL.ACQUIRE", "K", "10", "1000", "ID", "alice"],
        FOREIGN_ZSET,
    ),
    (&["RL.RELEASE", "K", "alice"], FOREIGN_ZSET),
    (&["RL.RENEW", "K", "alice", "99999999"], FOREIGN_ZSET),
    (&["RL.PEEK", "ACQUIRE", "K", "10", "1000"], FOREIGN_ZSET),
    (
        &["RL.ALL", "1", "K", "ACQUIRE", "10", "1000"],
        "ERR clause 1: key holds a sorted set that rl did not write",
    ),
];

const CASES: &[Foreign] = &[
    // Sorted sets of names scored by time have the shape of leases: a
    // leaderboard, a schedule, a lease set of a build before the header.
    Foreign {
        name: "leaderboard",
        setup: &[
            &["ZADD", "K", "100", "alice", "250", "bob", "999", "carol"],
            &["EXPIRE", "K", "3600"],
        ],
        lines: LEASE_LINES,
    },
    Foreign {
        name: "schedule of future times",
        setup: &[
            &["ZADD", "K", "LATER", "alice", "LATER", "bob"],
            &["PEXPIRE", "K", "86400000"],
        ],
        lines: LEASE_LINES,
    },
    Foreign {
        name: "lease set without the header",
        setup: &[
            &["ZADD", "K", "LATER", "mio1ar2o-2k3f9x0d1q7zu"],
            &["PEXPIRE", "K", "4500000"],
        ],
        lines: LEASE_LINES,
    },
    Foreign {
        name: "lease header at another score",
        setup: &[
            &["ZADD", "K", "5", "rl leases", "LATER", "alice"],
            &["PEXPIRE", "K", "4500000"],
        ],
        lines: LEASE_LINES,
    },
    Foreign {
        name: "lease header over an integer member",
        setup: &[
            &["ZADD", "K", "0", "rl leases", "LATER", "17"],
            &["PEXPIRE", "K", "4500000"],
        ],
        lines: HEADED_LEASE_LINES,
    },
    Foreign {
        name: "rl lease set without a TTL",
        setup: &[&["RL.ACQUIRE", "K", "3", "600000"], &["PERSIST", "K"]],
        lines: HEADED_LEASE_LINES,
    },
    // The issue's first case: string members, old scores.
    Foreign {
        name: "zset of strings",
        setup: &[
            &["ZADD", "K", "1", "a", "2", "b", "3", "c"],
            &["PEXPIRE", "K", "900000"],
        ],
        lines: SLIDE_LINES,
    },
    // A job queue scored by time: its member is not rl's numbering.
    Foreign {
        name: "zset scored now",
        setup: &[&["ZADD", "K", "NOW", "job1"], &["PEXPIRE", "K", "900000"]],
        lines: SLIDE_LINES,
    },
    // Integer members that are not score * 10^6 + n.
    Foreign {
        name: "zset of integers",
        setup: &[
            &["ZADD", "K", "NOW", "17", "NOW", "18"],
            &["PEXPIRE", "K", "900000"],
        ],
        lines: SLIDE_LINES,
    },
    // rl's numbering, but a fraction of a ms rl never writes.
    Foreign {
        name: "zset with a fractional score",
        setup: &[
            &["ZADD", "K", "1.5", "1500000"],
            &["PEXPIRE", "K", "900000"],
        ],
        lines: SLIDE_LINES,
    },
    // An rl log whose TTL was removed: rl's logs always expire.
    Foreign {
        name: "rl log without a TTL",
        setup: &[&["RL.SLIDE", "K", "5", "600000"], &["PERSIST", "K"]],
        lines: SLIDE_LINES,
    },
    Foreign {
        name: "hash without rl's header",
        setup: &[
            &["HSET", "K", "name", "ada", "age", "36"],
            &["PEXPIRE", "K", "900000"],
        ],
        lines: BUCKET_LINES,
    },
    Foreign {
        name: "hash with a garbled header",
        setup: &[&["HSET", "K", "h", "b,not,rl"], &["PEXPIRE", "K", "900000"]],
        lines: BUCKET_LINES,
    },
    Foreign {
        name: "rl buckets without a TTL",
        setup: &[&["RL.BUCKETS", "K", "5", "600000"], &["PERSIST", "K"]],
        lines: &[
            (&["RL.BUCKETS", "K", "3", "600000"], FOREIGN_HASH),
            (&["RL.COUNT", "K", "600000", "ok"], FOREIGN_HASH),
            (&["RL.TOTALS", "K", "600000"], FOREIGN_HASH),
            (&["RL.PEEK", "BUCKETS", "K", "3", "600000"], FOREIGN_HASH),
            (
                &["RL.ALL", "1", "K", "BUCKETS", "3", "600000"],
                "ERR clause 1: key holds a hash that rl did not write",
            ),
            (&["RL.REFUND", "BUCKETS", "K", "3", "600000"], FOREIGN_HASH),
        ],
    },
    // The issue's second case: a user's counter without a TTL.
    Foreign {
        name: "counter without a TTL",
        setup: &[&["SET", "K", "5"]],
        lines: COUNTER_LINES,
    },
    Foreign {
        name: "text with a TTL",
        setup: &[&["SET", "K", "hello", "PX", "900000"]],
        lines: COUNTER_LINES,
    },
    Foreign {
        name: "counter out of range",
        setup: &[&["SET", "K", "99999999999999999999", "PX", "900000"]],
        lines: COUNTER_LINES,
    },
    Foreign {
        name: "TAT without a TTL",
        setup: &[&["SET", "K", "NOWUS"]],
        lines: TAT_LINES,
    },
    // A plain counter and plain text, no TTL: neither a TAT in µs.
    Foreign {
        name: "small number without a TTL",
        setup: &[&["SET", "K", "5"]],
        lines: TAT_LINES,
    },
    Foreign {
        name: "text without a TTL",
        setup: &[&["SET", "K", "hello"]],
        lines: TAT_LINES,
    },
    Foreign {
        name: "TAT-sized text with a TTL",
        setup: &[&["SET", "K", "17500000000000000x", "PX", "900000"]],
        lines: TAT_LINES,
    },
];

/// On a primary whose replica came and went, so the replication offset
/// counts what would be sent: each case's setup and a final admission move
/// it (the controls), no refused call does.
#[test]
fn keys_rl_did_not_write_are_refused_and_left_byte_for_byte() {
    for flavor in ALL {
        let mut server = Server::start_primary_with_backlog(flavor);
        let mut c = server.conn();
        let mut checked = 0;
        for (i, case) in CASES.iter().enumerate() {
            let key = format!("foreign:{i}");
            let offset = repl_offset(&mut c);
            for line in case.setup {
                run_on(&mut c, line, &key).unwrap();
            }
            assert!(
                repl_offset(&mut c) > offset,
                "{flavor:?} {}: the setup was not replicated",
                case.name
            );
            for (line, want) in case.lines {
                let before = frozen_state(&mut c, &key);
                let (marks, offset) = (changes(&mut c), repl_offset(&mut c));
                let got = err_text(run_on(&mut c, line, &key));
                let what = format!("{flavor:?} {} with {line:?}", case.name);
                assert_eq!(got, *want, "{what}");
                assert_eq!(frozen_state(&mut c, &key), before, "{what}: key changed");
                assert_eq!(changes(&mut c), marks, "{what}: wrote");
                assert_eq!(repl_offset(&mut c), offset, "{what}: replicated");
                checked += 1;
            }
        }
        assert_eq!(checked, CASES.iter().map(|c| c.lines.len()).sum::<usize>());
        assert!(checked >= 100, "{checked} cases");
        let (marks, offset) = (changes(&mut c), repl_offset(&mut c));
        assert_eq!(slide(&mut c, "own", 5, 600_000)[0], 1, "{flavor:?}");
        assert!(changes(&mut c) > marks, "{flavor:?}: an admission counts");
        assert!(
            repl_offset(&mut c) > offset,
            "{flavor:?}: an admission is replicated"
        );
        server.assert_alive();
    }
}

/// A foreign entry that sorts between rl's own is read when the call
/// reaches it: an admission that would remove it is refused.
#[test]
fn a_foreign_member_among_stale_entries_is_refused_before_removal() {
    on_every_server(|server| {
        let mut c = server.conn();
        let now = server_ms(&mut c);
        // rl's numbering for three old entries, a foreign one among them,
        // and a newest entry of rl's own at `now`.
        let own = |s: i64| (s * 1_000_000).to_string();
        let (a, b) = (now - 50_000, now - 40_000);
        let _: i64 = redis::cmd("ZADD")
            .arg("mixed")
            .arg(a)
            .arg(own(a))
            .arg(a + 1)
            .arg("intruder")
            .arg(b)
            .arg(own(b))
            .arg(now)
            .arg(own(now))
            .query(&mut c)
            .unwrap();
        let _: i64 = redis::cmd("PEXPIRE")
            .arg("mixed")
            .arg(900_000)
            .query(&mut c)
            .unwrap();
        let before = frozen_state(&mut c, "mixed");
        let err = err_text(run_on(&mut c, &["RL.SLIDE", "K", "10", "1000"], "mixed"));
        assert_eq!(err, FOREIGN_ZSET, "{:?}", server.flavor);
        assert_eq!(frozen_state(&mut c, "mixed"), before);
    });
}

/// One walk from the oldest entry reads every entry an admission removes
/// and goes on to the newest (a step or two further, or from the other
/// end): at every log size from 1 to 5 and every number of entries that
/// left the window, the admission counts exactly the entries still in it
/// and removes the others, and a foreign newest entry or a foreign last
/// entry to remove is refused with the key left as it was.
#[test]
fn one_walk_reads_the_stale_entries_and_the_newest_at_every_log_size() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let now = server_ms(&mut c);
        let own = |s: i64| (s * 1_000_000).to_string();
        let mut n = 0;
        for len in 1..=5i64 {
            for stale in 0..=len {
                // Scores: `stale` entries a window ago, then live ones.
                let score = |i: i64| {
                    if i < stale {
                        now - 700_000 + i
                    } else {
                        now - 1_000 + i
                    }
                };
                // None: all rl's; Some(i): entry i is foreign.
                let foreign_at = [None, Some(len - 1), (stale > 0).then_some(stale - 1)];
                for foreign in foreign_at {
                    n += 1;
                    let key = format!("walk-{n}");
                    let mut zadd = redis::cmd("ZADD");
                    zadd.arg(&key);
                    for i in 0..len {
                        let member = if foreign == Some(i) {
                            format!("intruder{i}")
                        } else {
                            own(score(i))
                        };
                        zadd.arg(score(i)).arg(member);
                    }
                    let _: i64 = zadd.query(&mut c).unwrap();
                    let _: i64 = redis::cmd("PEXPIRE")
                        .arg(&key)
                        .arg(900_000)
                        .query(&mut c)
                        .unwrap();
                    let line = ["RL.SLIDE", "K", "100", "600000"];
                    let what = format!("{f:?}: {len} entries, {stale} stale, foreign {foreign:?}");
                    if foreign.is_some() {
                        let before = frozen_state(&mut c, &key);
                        let err = err_text(run_on(&mut c, &line, &key));
                        assert_eq!(err, FOREIGN_ZSET, "{what}");
                        assert_eq!(frozen_state(&mut c, &key), before, "{what}");
                        continue;
                    }
                    let live = len - stale;
                    let r: Vec<i64> = run_on(&mut c, &line, &key)
                        .and_then(|v| redis::from_redis_value(&v))
                        .unwrap();
                    assert_eq!(r[..2], [1, 100 - live - 1], "{what}");
                    let card: i64 = redis::cmd("ZCARD").arg(&key).query(&mut c).unwrap();
                    assert_eq!(card, live + 1, "{what}");
                }
            }
        }
    });
}

/// The oldest entry is read on every call, whatever the log's size (a log
/// of two or three entries has both ends read by one walk, a longer one
/// by two reads): a foreign oldest entry still in the window, under
/// newer entries numbered as rl numbers them, is refused by every form
/// that reads a log, and the key is left as it was.
#[test]
fn a_foreign_oldest_entry_in_the_window_is_refused_at_every_log_size() {
    on_every_server(|server| {
        let mut c = server.conn();
        let now = server_ms(&mut c);
        let own = |s: i64| (s * 1_000_000).to_string();
        for len in 2..=5i64 {
            let key = format!("oldest-foreign-{len}");
            let mut zadd = redis::cmd("ZADD");
            zadd.arg(&key).arg(now).arg("job1");
            for i in 1..len {
                zadd.arg(now + i).arg(own(now + i));
            }
            let _: i64 = zadd.query(&mut c).unwrap();
            let _: i64 = redis::cmd("PEXPIRE")
                .arg(&key)
                .arg(900_000)
                .query(&mut c)
                .unwrap();
            let before = frozen_state(&mut c, &key);
            for line in [
                &["RL.SLIDE", "K", "100", "600000"][..],
                &["RL.PEEK", "SLIDE", "K", "100", "600000"],
                &["RL.ALL", "1", "K", "SLIDE", "100", "600000"],
            ] {
                let err = err_text(run_on(&mut c, line, &key));
                assert!(
                    err.ends_with("key holds a sorted set that rl did not write"),
                    "{:?}: {len} entries, {line:?}: {err}",
                    server.flavor
                );
            }
            assert_eq!(frozen_state(&mut c, &key), before, "{len} entries");
        }
    });
}

/// A sorted set written by someone else can hold scores rl never writes
/// (`+inf`, `1e300`). RL.SLIDE refuses it as foreign, leaves the key
/// byte-identical, and the replica ends equal to the primary.
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
            // A TTL as rl's logs have, so only the score tells it apart.
            let _: i64 = redis::cmd("PEXPIRE")
                .arg(key)
                .arg(900_000)
                .query(&mut p)
                .unwrap();
            let before = frozen_state(&mut p, key);
            let reply = slide_raw(&mut p, &[key.as_bytes(), b"5", b"1000"]);
            assert_eq!(err_text(reply), FOREIGN_ZSET, "{flavor:?}: {key}");
            assert_eq!(frozen_state(&mut p, key), before, "{flavor:?}: {key}");
            wait_replicas(&mut p, 1);
            assert_eq!(
                entries(&mut r, key),
                entries(&mut p, key),
                "{flavor:?}: {key}: replica differs"
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

/// Members numbered at the very end of the current millisecond's block
/// leave room for one unit of a COST 2 request only. The script reads the
/// server's clock and plants such members for this millisecond and the
/// next two, so RL.SLIDE records at the newest one's time (as after a
/// clock that stepped back). rl's own charges can number a millisecond so
/// far, so the call is refused for what it is, the millisecond full
/// (issue #39), and writes nothing.
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
            redis.call('PEXPIRE', KEYS[1], 900000)
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
        assert!(
            outcome.starts_with("ERR the key's millisecond ")
                && outcome.contains(
                    " has 1 of its 1000000 entries left, fewer than COST 2: nothing written, retry in "
                ),
            "{f:?}: {outcome}"
        );
        assert_eq!(after, before, "{f:?}: RL.SLIDE changed the key");
        server.assert_alive();
    });
}

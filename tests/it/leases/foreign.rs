//! Keys rl did not write (other types, RL.SLIDE logs, sorted sets of the
//! shape of leases) refused and left untouched; the header that marks a
//! lease set from its first lease to its last entry.

use super::{acquire, change, err, leases};
use crate::harness::*;

#[test]
fn foreign_keys_and_slide_logs_are_refused_and_left_untouched() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // An RL.SLIDE log is not a lease set, and the other way round.
        assert_eq!(slide(&mut c, "log", 10, 600_000)[0], 1);
        acquire(&mut c, &["set", "3", "600000"]);
        let setup: &[&[&str]] = &[
            &["ZADD", "plain", "5", "x"],
            &["ZADD", "ints", "5000", "12"],
            &["PEXPIRE", "ints", "600000"],
            &["ZADD", "frac", "99999999999999.5", "job"],
            &["PEXPIRE", "frac", "600000"],
            &["SET", "str", "v"],
        ];
        for line in setup {
            run(&mut c, line).unwrap();
        }
        let foreign = "ERR key holds a sorted set that rl did not write";
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "log",
                "ERR key holds RL.SLIDE state, not lease state",
                &["RL.ACQUIRE", "log", "3", "1000"],
            ),
            (
                "log",
                "ERR key holds RL.SLIDE state, not lease state",
                &["RL.RENEW", "log", "a", "1000"],
            ),
            ("plain", foreign, &["RL.ACQUIRE", "plain", "3", "1000"]),
            ("ints", NO_HEADER, &["RL.ACQUIRE", "ints", "3", "1000"]),
            ("frac", NO_HEADER, &["RL.ACQUIRE", "frac", "3", "1000"]),
            ("frac", NO_HEADER, &["RL.RELEASE", "frac", "job"]),
            (
                "str",
                "WRONGTYPE Operation against a key holding the wrong kind of value",
                &["RL.ACQUIRE", "str", "3", "1000"],
            ),
            ("set", foreign, &["RL.SLIDE", "set", "10", "1000"]),
        ];
        for (key, want, line) in cases {
            let frozen = frozen_state(&mut c, key);
            assert_eq!(err(&mut c, line[0], &line[1..]), *want, "{f:?} {line:?}");
            assert_eq!(
                frozen_state(&mut c, key),
                frozen,
                "{f:?} {line:?}: untouched"
            );
        }
    });
}

const NO_HEADER: &str = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";

/// Sorted sets of names scored by time (a leaderboard, a schedule) have
/// the shape of leases; without the lease header every lease command
/// refuses them before writing: same bytes, same expiry, nothing written
/// (the change counter, and a `WATCH` on them, unmoved).
#[test]
fn sorted_sets_of_the_shape_of_leases_are_refused_by_every_lease_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let now = server_ms(&mut c);
        let (hour, two, far) = (
            (now + 3_600_000).to_string(),
            (now + 7_200_000).to_string(),
            (now + 100_000_000_000).to_string(),
        );
        let setup: &[&[&str]] = &[
            &[
                "ZADD", "board", "100", "alice", "250", "bob", "999", "carol",
            ],
            &["EXPIRE", "board", "3600"],
            &["ZADD", "sched", &hour, "job-alice", &two, "job-bob"],
            &["PEXPIRE", "sched", "86400000"],
            &["ZADD", "fs", &far, "alice"],
            &["PEXPIRE", "fs", "60000"],
        ];
        for line in setup {
            run(&mut c, line).unwrap();
        }
        let lines: &[&[&str]] = &[
            &["RL.ACQUIRE", "board", "10", "1000"],
            &["RL.ACQUIRE", "board", "10", "1000", "ID", "alice"],
            &["RL.RELEASE", "board", "alice"],
            &["RL.RENEW", "board", "bob", "1000"],
            &["RL.PEEK", "ACQUIRE", "board", "10", "1000"],
            &["RL.RELEASE", "sched", "job-alice"],
            &["RL.RENEW", "sched", "job-bob", "99999999"],
            &["RL.ACQUIRE", "sched", "10", "1000"],
            &["RL.ACQUIRE", "fs", "1", "1000", "ID", "alice"],
            &["RL.RENEW", "fs", "alice", "1000"],
        ];
        for line in lines {
            let key = if line[1] == "ACQUIRE" {
                line[2]
            } else {
                line[1]
            };
            let frozen = frozen_state(&mut c, key);
            let changed = changes(&mut c);
            assert_eq!(error_of(&mut c, line), NO_HEADER, "{f:?} {line:?}");
            assert_eq!(frozen_state(&mut c, key), frozen, "{f:?} {line:?}");
            assert_eq!(changes(&mut c), changed, "{f:?} {line:?}");
        }
        // In RL.ALL: refused whole, the other clause's key not created.
        let frozen = frozen_state(&mut c, "board");
        let e = error_of(
            &mut c,
            &[
                "RL.ALL", "2", "{b}r", "board", "SLIDE", "5", "1000", "ACQUIRE", "3", "1000",
            ],
        );
        assert!(
            e.starts_with("ERR clause 2: key holds a sorted set"),
            "{f:?}: {e}"
        );
        assert_eq!(frozen_state(&mut c, "board"), frozen, "{f:?}");
        assert_eq!(exists(&mut c, &["{b}r"]), 0, "{f:?}");
        // A WATCH on the leaderboard survives every refusal.
        let mut w = server.conn();
        run(&mut w, &["WATCH", "board"]).unwrap();
        for line in lines.iter().filter(|l| l.contains(&"board")) {
            error_of(&mut c, line);
        }
        run(&mut w, &["MULTI"]).unwrap();
        run(&mut w, &["PING"]).unwrap();
        let exec = run(&mut w, &["EXEC"]).unwrap();
        assert_ne!(exec, redis::Value::Nil, "{f:?}: the WATCH was broken");
    });
}

/// A lease set is its header and its leases: the header comes with the
/// first lease (one `ZADD`, replicated as is) and goes with the last
/// entry; expired leases not yet removed keep it until its TTL.
#[test]
fn a_lease_set_holds_its_header_from_the_first_lease_to_the_last_entry() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let (_, _, _, _, a) = acquire(&mut c, &["h", "3", "1000"]);
        let a = a.unwrap();
        let e = entries(&mut c, "h");
        assert_eq!(e.len(), 2, "{f:?}: {e:?}");
        assert_eq!(e[0], ("rl leases".to_string(), 0), "{f:?}");
        assert_eq!(e[1].0, a, "{f:?}");
        let b = acquire(&mut c, &["h", "3", "60000", "ID", "b"]).4.unwrap();
        // `a` expires; releasing `b` leaves `a` (expired, not removed yet)
        // and the header until the key's TTL.
        server.advance(1_100);
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["h", &b])[..2],
            [1, 0],
            "{f:?}"
        );
        assert_eq!(leases(&mut c, "h").len(), 1, "{f:?}: the expired one stays");
        // The next admission removes it; its release removes the header.
        let n = acquire(&mut c, &["h", "3", "60000"]).4.unwrap();
        assert_eq!(
            leases(&mut c, "h").iter().map(|e| &e.0).collect::<Vec<_>>(),
            [&n]
        );
        assert_eq!(
            change(&mut c, "RL.RELEASE", &["h", &n]),
            [1, 0, 0, 0],
            "{f:?}"
        );
        assert_eq!(exists(&mut c, &["h"]), 0, "{f:?}: the set is gone");
    });
}

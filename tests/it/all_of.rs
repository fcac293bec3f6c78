//! RL.ALL: several limits, admitted only together; a denial in any clause
//! records nothing in any; effects replicated together; keys declared for
//! Cluster (CROSSSLOT) and ACLs.

use crate::harness::*;

/// 10 per 10 minutes per user (sliding log) and 2 per 10 minutes per
/// organisation (fixed window), on keys sharing a hash tag.
const USER_AND_ORG: &[&str] = &[
    "2",
    "{acme}:user:1",
    "{acme}:org",
    "SLIDE",
    "10",
    "600000",
    "FIXED",
    "2",
    "600000",
];

/// On a primary whose replica came and went, so the replication offset
/// counts what would be sent: the admitted calls move it (the control), the
/// denied ones do not.
#[test]
fn a_denial_in_the_second_clause_records_nothing_in_the_first() {
    for f in ALL {
        let mut server = Server::start_primary_with_backlog(f);
        let mut c = server.conn();
        let o0 = repl_offset(&mut c);
        for n in 0..2 {
            let r = all(&mut c, USER_AND_ORG).unwrap();
            assert_eq!((r.allowed, r.retry_after_ms), (1, 0), "{f:?} call {n}");
            assert_eq!(r.clauses[0][..3], [1, 10 - n - 1, 0], "{f:?}");
            assert_eq!(r.clauses[1][..3], [1, 2 - n - 1, 0], "{f:?}");
        }
        let user = frozen_state(&mut c, "{acme}:user:1");
        let org = frozen_state(&mut c, "{acme}:org");
        let offset = repl_offset(&mut c);
        assert!(offset > o0, "{f:?}: the admits must reach the stream");
        let marks = changes(&mut c);
        for _ in 0..3 {
            let r = all(&mut c, USER_AND_ORG).unwrap();
            assert_eq!(r.allowed, 0, "{f:?}");
            // The user clause would admit (answered as a peek); the org denies.
            assert_eq!(r.clauses[0][..3], [1, 7, 0], "{f:?}");
            assert_eq!(r.clauses[1][..2], [0, 0], "{f:?}");
            assert_eq!(r.retry_after_ms, r.clauses[1][2], "{f:?}");
            assert!(r.retry_after_ms > 590_000, "{f:?} {r:?}");
        }
        assert_eq!(zcard(&mut c, "{acme}:user:1"), 2, "{f:?}");
        assert_eq!(frozen_state(&mut c, "{acme}:user:1"), user, "{f:?}");
        assert_eq!(frozen_state(&mut c, "{acme}:org"), org, "{f:?}");
        assert_eq!(
            repl_offset(&mut c),
            offset,
            "{f:?}: a denial was replicated"
        );
        assert_eq!(changes(&mut c), marks, "{f:?}: a denial wrote");
        server.assert_alive();
    }
}

#[test]
fn the_combined_wait_is_the_longest_denying_wait() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        run(&mut c, &["RL.FIXED", "{k}a", "1", "600000"]).unwrap();
        run(&mut c, &["RL.FIXED", "{k}b", "1", "60000"]).unwrap();
        let r = all(
            &mut c,
            &[
                "3", "{k}a", "{k}b", "{k}c", "FIXED", "1", "600000", "FIXED", "1", "60000",
                "FIXED", "1", "1000",
            ],
        )
        .unwrap();
        assert_eq!(r.allowed, 0, "{f:?}");
        assert_eq!(
            r.clauses.iter().map(|c| c[0]).collect::<Vec<_>>(),
            [0, 0, 1]
        );
        assert_eq!(r.retry_after_ms, r.clauses[0][2], "{f:?} {r:?}");
        assert!(r.clauses[0][2] > r.clauses[1][2], "{f:?} {r:?}");
        let exists: i64 = redis::cmd("EXISTS").arg("{k}c").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}: the admitting clause recorded nothing");
    });
}

#[test]
fn every_limiter_can_be_a_clause_and_each_records_like_its_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let line = [
            "4",
            "{u}s",
            "{u}b",
            "{u}t",
            "{u}f",
            "SLIDE",
            "5",
            "600000",
            "COST",
            "2",
            "BUCKETS",
            "5",
            "600000",
            "PRECISION",
            "10000",
            "THROTTLE",
            "4",
            "1",
            "600000",
            "FIXED",
            "5",
            "600000",
        ];
        let r = all(&mut c, &line).unwrap();
        assert_eq!((r.allowed, r.retry_after_ms), (1, 0), "{f:?}");
        let remaining: Vec<i64> = r.clauses.iter().map(|c| c[1]).collect();
        assert_eq!(remaining, [3, 4, 4, 4], "{f:?}");
        // Each key holds what its own command would have written.
        assert_eq!(zcard(&mut c, "{u}s"), 2, "{f:?}");
        let header: String = redis::cmd("HGET")
            .arg("{u}b")
            .arg("h")
            .query(&mut c)
            .unwrap();
        assert!(header.starts_with("B,"), "{f:?} {header}");
        let fixed: String = redis::cmd("GET").arg("{u}f").query(&mut c).unwrap();
        assert_eq!(fixed, "1", "{f:?}");
        for key in ["{u}s", "{u}b", "{u}t", "{u}f"] {
            assert!(pexpiretime(&mut c, key) > 0, "{f:?} {key} has its expiry");
        }
    });
}

#[test]
fn a_replica_holds_every_clauses_state_and_the_effects_travel_together() {
    for flavor in ALL {
        let primary =
            Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        for _ in 0..4 {
            all(&mut p, USER_AND_ORG).unwrap();
        }
        wait_replicas(&mut p, 1);
        let mut r = replica.conn();
        for key in ["{acme}:user:1", "{acme}:org"] {
            assert_eq!(
                frozen_state(&mut p, key),
                frozen_state(&mut r, key),
                "{flavor:?} {key}"
            );
        }
        // The AOF holds each admitted call as one MULTI ... EXEC with both
        // keys' effects inside.
        let mut aof = String::new();
        let dir = primary.dir().join("appendonlydir");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{flavor:?} {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".incr.aof"))
            .collect();
        files.sort();
        for file in files {
            aof.push_str(&String::from_utf8_lossy(&std::fs::read(file).unwrap()));
        }
        let words: Vec<&str> = aof.lines().filter(|l| !l.starts_with(['*', '$'])).collect();
        let blocks: Vec<&[&str]> = words
            .split(|w| w.eq_ignore_ascii_case("EXEC"))
            .filter(|b| b.iter().any(|w| w.eq_ignore_ascii_case("MULTI")))
            .collect();
        let both = blocks
            .iter()
            .filter(|b| b.contains(&"{acme}:user:1") && b.contains(&"{acme}:org"))
            .count();
        assert_eq!(
            both, 2,
            "{flavor:?}: two admitted calls, each one transaction:\n{aof}"
        );
        assert!(
            !aof.contains("RL.ALL") && !aof.contains("rl.all"),
            "{flavor:?}: replicated verbatim"
        );
    }
}

/// The most clauses a call takes (8, past the four a call keeps inline):
/// an error names its clause by number, a denial in clause 6 records
/// nothing in clauses 1 to 5 (nor 7 and 8), an admission records every
/// clause, and a replica without rl holds the same eight keys.
#[test]
fn eight_clauses_name_their_errors_and_record_all_or_nothing() {
    for f in ALL {
        let primary = Server::start(f);
        let replica = primary.start_replica(false);
        let mut c = primary.conn();
        let keys: Vec<String> = (1..=8).map(|i| format!("{{eight}}:k{i}")).collect();
        // Clause 6 (SLIDE) admits once; the others are FIXED windows of 5.
        let line = |bad: Option<usize>| {
            let mut l = vec!["8".to_string()];
            l.extend(keys.iter().cloned());
            for i in 1..=8 {
                let clause = match (i, bad) {
                    (i, Some(b)) if i == b => "FIXED 5 0",
                    (6, _) => "SLIDE 1 600000",
                    _ => "FIXED 5 600000",
                };
                l.extend(clause.split(' ').map(String::from));
            }
            l
        };
        let run_line = |c: &mut redis::Connection, l: &[String]| {
            let l: Vec<&str> = l.iter().map(String::as_str).collect();
            all(c, &l)
        };
        for bad in [7, 8] {
            let err = run_line(&mut c, &line(Some(bad))).unwrap_err().to_string();
            assert!(err.contains(&format!("clause {bad}")), "{f:?}: {err}");
        }
        assert_eq!(dbsize(&mut c), 0, "{f:?}: an error wrote");
        let r = run_line(&mut c, &line(None)).unwrap();
        assert_eq!((r.allowed, r.clauses.len()), (1, 8), "{f:?}");
        for (i, clause) in r.clauses.iter().enumerate() {
            let remaining = if i == 5 { 0 } else { 4 };
            assert_eq!(clause[..3], [1, remaining, 0], "{f:?} clause {}", i + 1);
        }
        let states: Vec<_> = keys.iter().map(|k| frozen_state(&mut c, k)).collect();
        let r = run_line(&mut c, &line(None)).unwrap();
        assert_eq!(r.allowed, 0, "{f:?}");
        assert_eq!(r.clauses[5][0], 0, "{f:?}: clause 6 denies");
        for (i, clause) in r.clauses.iter().enumerate().filter(|(i, _)| *i != 5) {
            assert_eq!(clause[..2], [1, 3], "{f:?} clause {}: as a peek", i + 1);
        }
        for (k, state) in keys.iter().zip(&states) {
            assert_eq!(&frozen_state(&mut c, k), state, "{f:?} {k}: a denial wrote");
        }
        wait_replicas(&mut c, 1);
        let on_primary = keyspace(&mut c);
        assert_eq!(on_primary.len(), 8, "{f:?}");
        assert_eq!(
            keyspace(&mut replica.conn()),
            on_primary,
            "{f:?}: the replica without rl"
        );
    }
}

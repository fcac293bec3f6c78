//! The library alone, on servers that do not load the module (Redis 7.0,
//! Redis 8.2, Valkey 9.1), as a managed service runs it: every function
//! answers as its command does, forty clients never get more than the
//! limit, a denial writes nothing, a replica holds the primary's state, and
//! a cluster routes every function by its keys (`CROSSSLOT` for `rl_all`
//! across slots). The clock is the real one: everything here holds at any
//! instant (windows of ten minutes).

use std::collections::BTreeMap;
use std::time::Duration;

use redis::Value;

use super::differential::fcall_line;
use super::{load, start_functions_only};
use crate::harness::all_commands::{mixed_lines, words, Writer, LONG_MS, WRITERS};
use crate::harness::cluster::Cluster;
use crate::harness::*;

/// The servers without the module.
const FLAVORS: [Flavor; 3] = [Flavor::Redis7, Flavor::Redis8, Flavor::Valkey9];

/// A module command line run as its function.
fn fcall(c: &mut redis::Connection, line: &[&str]) -> redis::RedisResult<Value> {
    let f = fcall_line(line);
    run(c, &words(&f))
}

fn fcall_bytes(c: &mut redis::Connection, line: &[Vec<u8>]) -> redis::RedisResult<Value> {
    let text: Vec<String> = line
        .iter()
        .map(|a| String::from_utf8(a.clone()).unwrap())
        .collect();
    fcall(c, &words(&text))
}

fn ints(v: &Value) -> Vec<i64> {
    redis::from_redis_value(v).unwrap_or_else(|e| panic!("{v:?}: {e}"))
}

/// The elements of an array reply.
fn parts(v: &Value) -> &[Value] {
    match v {
        Value::Array(p) => p,
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn every_function_answers_as_its_command_without_the_module() {
    for flavor in FLAVORS {
        every_function_answers_as_its_command_on(flavor);
    }
}

/// The test above on one server (`tests/it/older/` runs it on more).
pub fn every_function_answers_as_its_command_on(flavor: Flavor) {
    let w = LONG_MS.to_string();
    let server = start_functions_only(flavor, &[]);
    let mut c = server.conn();
    let modules: Value = redis::cmd("MODULE").arg("LIST").query(&mut c).unwrap();
    assert!(
        !format!("{modules:?}").contains("librl"),
        "{flavor:?}: the module is loaded: {modules:?}"
    );
    // Every limiter admits three and denies the fourth (RL.COUNT counts).
    for wr in WRITERS {
        let key = format!("k:{}", wr.name());
        let line = wr.admit_line(&key, 3);
        let admitted: Vec<bool> = (0..4)
            .map(|_| wr.admits(&fcall_bytes(&mut c, &line).unwrap()))
            .collect();
        let want = if wr == Writer::Count {
            vec![true; 4]
        } else {
            vec![true, true, true, false]
        };
        assert_eq!(admitted, want, "{flavor:?} {}", wr.name());
    }
    let totals: BTreeMap<String, i64> =
        redis::from_redis_value(&fcall(&mut c, &["RL.TOTALS", "k:RL.COUNT", &w]).unwrap()).unwrap();
    assert_eq!(
        totals,
        BTreeMap::from([("hits".to_string(), 4)]),
        "{flavor:?}"
    );
    let peek = fcall(&mut c, &["RL.PEEK", "SLIDE", "k:RL.SLIDE", "3", &w]).unwrap();
    assert_eq!(ints(&peek)[..2], [0, 0], "{flavor:?}: the log is full");
    let refund = fcall(&mut c, &["RL.REFUND", "SLIDE", "k:RL.SLIDE", "3", &w]).unwrap();
    // One unit back: a request of one would then take the last.
    assert_eq!(
        ints(&refund)[..2],
        [1, 0],
        "{flavor:?}: one unit given back"
    );
    let all = fcall(
        &mut c,
        &["RL.ALL", "2", "a", "b", "SLIDE", "1", &w, "FIXED", "5", &w],
    )
    .unwrap();
    let all = parts(&all);
    assert_eq!(ints(&Value::Array(all[..2].to_vec())), [1, 0], "{flavor:?}");
    assert_eq!(ints(&all[2])[..2], [1, 0], "{flavor:?}: the SLIDE clause");
    assert_eq!(ints(&all[3])[..2], [1, 4], "{flavor:?}: the FIXED clause");
    let lease = fcall(&mut c, &["RL.ACQUIRE", "jobs", "1", &w]).unwrap();
    let lease = parts(&lease);
    assert_eq!(lease[0], Value::Int(1), "{flavor:?}: {lease:?}");
    let denied = fcall(&mut c, &["RL.ACQUIRE", "jobs", "1", &w]).unwrap();
    assert_eq!(parts(&denied)[0], Value::Int(0), "{flavor:?}: {denied:?}");
    // The module's error texts.
    let errors = [
        (
            &["RL.SLIDE", "k", "0", "1000"][..],
            "ERR limit must be an integer from 1 to 1000000",
        ),
        (
            &["RL.SLIDE", "k", "1"],
            "ERR wrong number of arguments for 'rl.slide' command",
        ),
        (
            &["RL.SLIDE", "str", "1", "1000"],
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
    ];
    let _: () = redis::cmd("SET").arg("str").arg("x").query(&mut c).unwrap();
    for (line, want) in errors {
        assert_eq!(err_text(fcall(&mut c, line)), want, "{flavor:?} {line:?}");
    }
}

/// Whether a reply admitted: its first element is 1 (CL.THROTTLE: 0).
fn admits(w: Option<Writer>, reply: &Value) -> bool {
    match w {
        Some(w) => w.admits(reply),
        None => parts(reply)[0] == Value::Int(1),
    }
}

/// Runs `calls` calls of `line` (a module command line, run as its
/// function) on each of 40 connections released at once; the admitted
/// count. `w` None: a lease line.
fn admitted_by_forty(server: &Server, w: Option<Writer>, line: &[Vec<u8>], calls: usize) -> usize {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(40));
    let handles: Vec<_> = (0..40)
        .map(|_| {
            let mut c = server.conn();
            let barrier = barrier.clone();
            let line = line.to_vec();
            std::thread::spawn(move || {
                barrier.wait();
                (0..calls)
                    .filter(|_| admits(w, &fcall_bytes(&mut c, &line).unwrap()))
                    .count()
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).sum()
}

#[test]
fn forty_clients_get_exactly_the_limit_without_the_module() {
    for flavor in FLAVORS {
        let server = start_functions_only(flavor, &[]);
        for w in WRITERS.into_iter().filter(|w| *w != Writer::Count) {
            let line = w.admit_line(&format!("race:{}", w.name()), 50);
            let admitted = admitted_by_forty(&server, Some(w), &line, 3);
            assert_eq!(admitted, 50, "{flavor:?} {}: 120 calls", w.name());
        }
        // Leases: at most `limit` held at once.
        let lease_line: Vec<Vec<u8>> = ["RL.ACQUIRE", "race:jobs", "7", "600000"]
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect();
        let held = admitted_by_forty(&server, None, &lease_line, 2);
        assert_eq!(held, 7, "{flavor:?} RL.ACQUIRE: 80 calls");
        // The leases and the header.
        assert_eq!(zcard(&mut server.conn(), "race:jobs"), 8, "{flavor:?}");
    }
}

/// Fills every limiter's key to its limit with the functions.
fn fill(c: &mut redis::Connection) {
    for w in WRITERS.into_iter().filter(|w| *w != Writer::Count) {
        let line = w.admit_line(&format!("full:{}", w.name()), 2);
        for _ in 0..2 {
            assert!(w.admits(&fcall_bytes(c, &line).unwrap()), "{}", w.name());
        }
    }
    let lease = fcall(c, &["RL.ACQUIRE", "full:jobs", "1", "600000"]).unwrap();
    assert_eq!(parts(&lease)[0], Value::Int(1));
}

/// Denies every limiter, `times` times each, checking each call denied.
fn deny(c: &mut redis::Connection, times: usize) {
    for _ in 0..times {
        for w in WRITERS.into_iter().filter(|w| *w != Writer::Count) {
            let line = w.admit_line(&format!("full:{}", w.name()), 2);
            assert!(!w.admits(&fcall_bytes(c, &line).unwrap()), "{}", w.name());
        }
        let lease = fcall(c, &["RL.ACQUIRE", "full:jobs", "1", "600000"]).unwrap();
        assert_eq!(parts(&lease)[0], Value::Int(0));
        let all = fcall(
            c,
            &[
                "RL.ALL",
                "2",
                "fresh",
                "full:RL.FIXED",
                "SLIDE",
                "5",
                "600000",
                "FIXED",
                "2",
                "600000",
            ],
        )
        .unwrap();
        assert_eq!(parts(&all)[0], Value::Int(0), "RL.ALL: {all:?}");
    }
}

#[test]
fn denials_write_and_replicate_nothing_without_the_module() {
    for flavor in FLAVORS {
        let server = start_functions_only(flavor, &["--repl-diskless-sync-delay", "0"]);
        // A replica that comes and goes leaves a backlog: the offset counts
        // every byte the primary would send.
        drop(server.start_replica(false));
        let mut c = server.conn();
        let detached = wait_until(Duration::from_secs(10), || {
            info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
        });
        assert!(detached, "{flavor:?}: replica still attached");
        // The control: filling the keys is replicated, so the offset moves.
        let filled_from = repl_offset(&mut c);
        fill(&mut c);
        assert!(
            repl_offset(&mut c) > filled_from,
            "{flavor:?}: the admissions were not replicated"
        );
        let before = keyspace(&mut c);
        let (o, d) = (repl_offset(&mut c), changes(&mut c));
        deny(&mut c, 5);
        assert_eq!(repl_offset(&mut c), o, "{flavor:?}: denials replicated");
        assert_eq!(
            changes(&mut c),
            d,
            "{flavor:?}: denials changed the dataset"
        );
        assert_eq!(keyspace(&mut c), before, "{flavor:?}");
        assert_eq!(exists(&mut c, &["fresh"]), 0, "{flavor:?}: RL.ALL wrote");
    }
}

#[test]
fn a_replica_holds_the_primary_state_without_the_module() {
    for flavor in FLAVORS {
        a_replica_holds_the_library_state_on(flavor);
    }
}

/// The test above on one server (`tests/it/older/` runs it on more).
pub fn a_replica_holds_the_library_state_on(flavor: Flavor) {
    let primary = start_functions_only(flavor, &["--repl-diskless-sync-delay", "0"]);
    // The library reaches the replica with the sync (functions are data).
    let replica = primary.start_replica(false);
    let mut c = primary.conn();
    for line in mixed_lines("mixed", 4) {
        fcall_bytes(&mut c, &line).unwrap();
    }
    for i in 0..3 {
        let id = format!("lease{i}");
        fcall(
            &mut c,
            &["RL.ACQUIRE", "mixed:jobs", "5", "600000", "ID", &id],
        )
        .unwrap();
    }
    fcall(&mut c, &["RL.RELEASE", "mixed:jobs", "lease1"]).unwrap();
    let want = keyspace(&mut c);
    assert_covers_every_layout(&want);
    wait_replicas(&mut c, 1);
    let mut r = replica.conn();
    let same = wait_until(Duration::from_secs(10), || keyspace(&mut r) == want);
    assert!(same, "{flavor:?}: the replica differs");
    // Read-only functions run on the replica.
    let peek = redis::cmd("FCALL_RO")
        .arg(&["rl_peek", "1", "mixed:slide:0", "SLIDE", "8", "600000"])
        .query::<Vec<i64>>(&mut r)
        .unwrap();
    assert_eq!(peek.len(), 4, "{flavor:?}");
    let totals: Value = redis::cmd("FCALL_RO")
        .arg(&["rl_totals", "1", "mixed:count:0", "600000"])
        .query(&mut r)
        .unwrap();
    assert!(!parts(&totals).is_empty(), "{flavor:?}: {totals:?}");
}

#[test]
fn a_cluster_routes_every_function_by_its_keys_without_the_module() {
    for flavor in [Flavor::Redis7, Flavor::Valkey9] {
        let cluster = Cluster::start_without_module(flavor);
        // FUNCTION LOAD is per node: a managed cluster loads it on each.
        for node in &cluster.nodes {
            load(&mut node.conn());
        }
        let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
        let mut c = client.get_connection().unwrap();
        for i in 0..60 {
            let key = format!("rl:user:{i}");
            for n in 0..3 {
                let r: Vec<i64> = redis::cmd("FCALL")
                    .arg(&["rl_slide", "1", &key, "3", "600000"])
                    .query(&mut c)
                    .unwrap();
                assert_eq!(r[..2], [1, 2 - n], "{flavor:?} {key}");
            }
            let r: Vec<i64> = redis::cmd("FCALL")
                .arg(&["rl_slide", "1", &key, "3", "600000"])
                .query(&mut c)
                .unwrap();
            assert_eq!(r[0], 0, "{flavor:?} {key}");
            assert_eq!(
                zcard(&mut cluster.owner(&key).conn(), &key),
                3,
                "{flavor:?}"
            );
        }
        // rl_all's keys must share a slot, as RL.ALL's do.
        let (a, b) = ("rl:user:1", "rl:user:2");
        assert_ne!(cluster.owner(a).port, cluster.owner(b).port, "two slots");
        let line = [
            "rl_all", "2", a, b, "SLIDE", "5", "600000", "FIXED", "5", "600000",
        ];
        let err = redis::cmd("FCALL")
            .arg(&line)
            .query::<Value>(&mut cluster.owner(a).conn())
            .unwrap_err();
        assert_eq!(err.kind(), redis::ErrorKind::CrossSlot, "{flavor:?}: {err}");
        let tagged = [
            "rl_all", "2", "{org}:a", "{org}:b", "SLIDE", "5", "600000", "FIXED", "5", "600000",
        ];
        let r: Value = redis::cmd("FCALL").arg(&tagged).query(&mut c).unwrap();
        assert_eq!(parts(&r)[0], Value::Int(1), "{flavor:?}: {r:?}");
    }
}

/// A module command line as the EVAL form of the library runs it: the
/// keys, then the function's name, then its arguments.
fn eval_line(body: &str, line: &[&str]) -> Vec<String> {
    let f = fcall_line(line);
    let numkeys: usize = f[2].parse().unwrap();
    let mut out = vec!["EVAL".to_string(), body.to_string(), f[2].clone()];
    out.extend(f[3..3 + numkeys].iter().cloned());
    out.push(f[1].clone());
    out.extend(f[3 + numkeys..].iter().cloned());
    out
}

#[test]
fn eval_of_the_library_answers_as_its_functions() {
    // Where a service allows EVAL but not FUNCTION LOAD.
    let body: String = super::LIBRARY.split_once('\n').unwrap().1.to_string();
    let server = super::start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let mut lines: Vec<Vec<String>> = mixed_lines("K", 2)
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|a| String::from_utf8(a).unwrap())
                .collect()
        })
        .collect();
    for l in [
        &["RL.ACQUIRE", "K:jobs", "2", "60000", "ID", "a"][..],
        &["RL.ACQUIRE", "K:jobs", "2", "60000"],
        &["RL.RELEASE", "K:jobs", "a"],
        &["RL.PEEK", "SLIDE", "K:slide:0", "8", "600000"],
        &["RL.REFUND", "FIXED", "K:fixed:0", "7", "600000"],
        &[
            "RL.ALL", "2", "K:a", "K:b", "SLIDE", "2", "1000", "FIXED", "1", "1000",
        ],
        &["RL.SLIDE", "K:x", "0", "1000"],
    ] {
        lines.push(l.iter().map(|a| a.to_string()).collect());
    }
    for (i, line) in lines.iter().enumerate() {
        let on = |prefix: &str| -> Vec<String> {
            line.iter().map(|a| a.replace("K:", prefix)).collect()
        };
        let (f, e) = (on("f:"), on("e:"));
        let by_fcall = run(&mut c, &words(&fcall_line(&words(&f)))).map_err(|e| error_text(&e));
        let by_eval =
            run(&mut c, &words(&eval_line(&body, &words(&e)))).map_err(|e| error_text(&e));
        if line[0] == "RL.ACQUIRE" && line.len() == 4 {
            // A generated lease id: only its place differs.
            assert_eq!(by_fcall.is_ok(), by_eval.is_ok(), "{line:?}");
            continue;
        }
        assert_eq!(by_fcall, by_eval, "line {i}: {line:?}");
    }
    let strip = |space: Keyspace, prefix: &str| -> Vec<(String, Plain, i64)> {
        space
            .into_iter()
            .filter_map(|(k, (v, at))| {
                let k = String::from_utf8(k).unwrap();
                k.strip_prefix(prefix).map(|k| (k.to_string(), v, at))
            })
            .filter(|(k, _, _)| k != "jobs")
            .collect()
    };
    let space = keyspace(&mut c);
    let (f, e) = (strip(space.clone(), "f:"), strip(space, "e:"));
    assert!(f.len() > 10, "{} keys", f.len());
    assert_eq!(f, e, "the same state by FCALL and by EVAL");
    let err = run(&mut c, &["EVAL", &body, "0", "rl_nope"]).map_err(|e| error_text(&e));
    assert_eq!(
        err,
        Err("ERR the first argument after the keys names an rl function (rl_slide, rl_all, ...), not 'rl_nope'".into())
    );
}

/// The EVAL form passes the server's own errors on as the server sent
/// them, as a plain script gets them: `OOM ...` at maxmemory, `READONLY
/// ...` on a replica, `ERR Write commands are not allowed ...` under
/// EVAL_RO (the server's pcall hands the library a message, which must not
/// come back as `ERR OOM ...` or `ERR ERR ...`).
#[test]
fn eval_of_the_library_keeps_the_servers_errors() {
    let body: String = super::LIBRARY.split_once('\n').unwrap().1.to_string();
    let plain = "return redis.call('ZADD', KEYS[1], 1, 'x')";
    let lines: [&[&str]; 3] = [
        &["1", "k", "rl_slide", "5", "1000"],
        &["1", "k", "rl_acquire", "5", "1000"],
        &[
            "2", "k", "k2", "rl_all", "SLIDE", "5", "1000", "FIXED", "2", "1000",
        ],
    ];
    // The error up to the script's name, which differs.
    let head = |c: &mut redis::Connection, cmd: &str, script: &str, args: &[&str]| -> String {
        let r = redis::cmd(cmd).arg(script).arg(args).query::<Value>(c);
        let e = error_text(&r.expect_err("an error reply"));
        e.split(" script:").next().unwrap().to_string()
    };
    // Every line of the library fails under `cmd` as the plain script does,
    // with an error that starts with `code`.
    let as_plain = |c: &mut redis::Connection, cmd: &str, code: &str, what: &str| {
        let want = head(c, cmd, plain, &["1", "k"]);
        assert!(want.starts_with(code), "{what}: {want}");
        for args in lines {
            assert_eq!(head(c, cmd, &body, args), want, "{what} {args:?}");
        }
    };
    for flavor in FLAVORS {
        let primary = Server::start_primary(flavor, &[]);
        let replica = primary.start_replica(false);
        let mut c = primary.conn();
        let what = format!("{flavor:?}");
        as_plain(
            &mut c,
            "EVAL_RO",
            "ERR Write commands are not allowed",
            &what,
        );
        as_plain(&mut replica.conn(), "EVAL", "READONLY", &what);
        run(&mut c, &["CONFIG", "SET", "maxmemory", "1"]).unwrap();
        as_plain(&mut c, "EVAL", "OOM command not allowed", &what);
        run(&mut c, &["CONFIG", "SET", "maxmemory", "0"]).unwrap();
        assert_eq!(dbsize(&mut c), 0, "{flavor:?}: nothing written");
    }
}

/// `rl_refund` is registered `allow-oom` (as `rl_release`): at maxmemory
/// the library's refunds give back what they report and no key grows, as
/// the module's RL.REFUND (tests/it/memory_pressure.rs, the same lines).
#[test]
fn refunds_run_at_maxmemory_without_the_module() {
    for flavor in FLAVORS {
        let server = start_functions_only(flavor, &[]);
        let mut c = server.conn();
        crate::memory_pressure::refunds_run_at_maxmemory(
            &mut c,
            &|c, line| fcall(c, line),
            &|ms| std::thread::sleep(Duration::from_millis(ms)),
            &format!("{flavor:?} (library)"),
        );
    }
}

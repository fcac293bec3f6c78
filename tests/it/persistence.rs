//! The state of every command survives RDB, AOF, an AOF rewrite (with an
//! RDB preamble and in command form) and `DEBUG RELOAD` identical (values
//! and absolute expiries), and the RDB and AOF files load in a server
//! without the module: the state is plain sorted sets, hashes and strings,
//! and the AOF holds plain commands (no lock-in).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::all_commands::{mixed_lines, mixed_traffic, COMMANDS, LIMITERS, LONG_MS};
use crate::harness::*;

fn traffic(c: &mut redis::Connection, prefix: &str) -> Keyspace {
    mixed_traffic(c, prefix, 6);
    let space = keyspace(c);
    assert_covers_every_layout(&space);
    space
}

/// [`traffic`], plus every admitting command on an odd key name, RL.SLIDE
/// evictions (half the sorted sets get an admit under a window their
/// entries have left, so the old entries go, `ZREMRANGEBYRANK`, then one
/// under the long window so the key lives on) and a bucket refund that
/// empties an older bucket (`HDEL`).
fn traffic_with_evictions(server: &Server, c: &mut redis::Connection, prefix: &str) -> Keyspace {
    mixed_traffic(c, prefix, 6);
    // (Named by index: the AOF must not name an rl command, keys included.)
    for (i, w) in LIMITERS.into_iter().enumerate() {
        let key = format!("{prefix}:odd key\r\nname \u{e9}:{i}");
        for _ in 0..3 {
            run_bytes(c, &w.admit_line(&key, 2)).unwrap();
        }
    }
    let refunded = format!("{prefix}:refunded");
    let w = LONG_MS.to_string();
    // 250 buckets of 2,400 ms, the most a window may need.
    let bucket_line = ["RL.BUCKETS", &refunded, "10", &w, "PRECISION", "2400"];
    run(c, &bucket_line).unwrap();
    // One bucket on: the first one's count moves to a field of its own.
    server.advance(2400);
    run(c, &bucket_line).unwrap();
    assert_eq!(bucket_fields(c, &refunded).len(), 1, "{refunded}");
    let refund = run(
        c,
        &[
            "RL.REFUND",
            "BUCKETS",
            &refunded,
            "10",
            &w,
            "PRECISION",
            "2400",
            "COST",
            "2",
        ],
    )
    .unwrap();
    let refund: Vec<i64> = redis::from_redis_value(&refund).unwrap();
    assert_eq!(refund[0], 2, "{refunded}: {refund:?}");
    assert!(
        bucket_fields(c, &refunded).is_empty(),
        "{refunded}: emptied"
    );
    for k in (0..6).step_by(2) {
        let key = format!("{prefix}:slide:{k}");
        assert_eq!(slide(c, &key, 100, 100)[0], 1, "{key}");
        assert_eq!(zcard(c, &key), 1, "{key}: evicted");
        assert_eq!(slide_cost(c, &key, 100, LONG_MS, 2)[0], 1, "{key}");
    }
    let space = keyspace(c);
    assert_covers_every_layout(&space);
    space
}

/// Restarts from what is in `dir`, with and then without the module; both
/// hold `want`. Returns the directory for more restarts.
fn assert_restores(
    flavor: Flavor,
    dir: PathBuf,
    extra: &[&str],
    want: &Keyspace,
    how: &str,
) -> PathBuf {
    let mut dir = dir;
    for module in [true, false] {
        let mut server = Server::start_in(flavor, dir, extra, module);
        let mut c = server.conn();
        if !module {
            let err = error_of(&mut c, &["RL.SLIDE", "k", "1", "1000"]);
            assert!(err.contains("unknown command"), "{flavor:?}: {err}");
        }
        assert_eq!(
            &keyspace(&mut c),
            want,
            "{flavor:?}: after {how}, module loaded: {module}"
        );
        server.assert_alive();
        drop(c);
        dir = server.stop(false);
    }
    dir
}

/// Every plain command rl writes: admissions (`ZADD`, `HSET`, `SET ...
/// PXAT`, `PEXPIREAT`, and `INCR`/`INCRBY` for a counter whose window goes
/// on), evictions (`ZREMRANGEBYRANK`, `HDEL`), refunds and releases
/// (`ZREM`, `HDEL`).
const PLAIN: [&str; 9] = [
    "ZADD",
    "ZREM",
    "ZREMRANGEBYRANK",
    "HSET",
    "HDEL",
    "SET",
    "PEXPIREAT",
    "INCR",
    "INCRBY",
];

/// What [`mixed_traffic`] alone writes (no evictions, no emptied buckets).
const PLAIN_OF_MIXED: [&str; 5] = ["ZADD", "ZREM", "HSET", "SET", "PEXPIREAT"];

/// The AOF under `dir` holds rl's writes as the plain commands they are
/// (each of `want`) and never names an rl command. Before any rewrite
/// (whose base the server writes in its own forms), every command is one
/// of [`PLAIN`] (or the server's `MULTI`/`EXEC`/`SELECT`), and every expiry
/// absolute: `SET key value PXAT at`, `PEXPIREAT`.
fn assert_plain_commands_only(flavor: Flavor, dir: &Path, want: &[&str], rewritten: bool) {
    let logged = aof_text(dir).to_ascii_uppercase();
    for name in COMMANDS {
        assert!(!logged.contains(name), "{flavor:?}: the AOF names {name}");
    }
    let commands = aof_commands(dir);
    let name = |c: &Vec<Vec<u8>>| String::from_utf8_lossy(&c[0]).to_ascii_uppercase();
    for plain in want {
        assert!(
            commands.iter().any(|c| name(c) == *plain),
            "{flavor:?}: no {plain} in the AOF"
        );
    }
    if rewritten {
        return;
    }
    for c in &commands {
        let n = name(c);
        let shown: Vec<_> = c.iter().map(|w| String::from_utf8_lossy(w)).collect();
        assert!(
            PLAIN.contains(&n.as_str()) || ["MULTI", "EXEC", "SELECT"].contains(&n.as_str()),
            "{flavor:?}: {shown:?} in the AOF"
        );
        if n == "SET" {
            assert!(
                c.len() == 5 && c[3].eq_ignore_ascii_case(b"PXAT"),
                "{flavor:?}: {shown:?}"
            );
        }
    }
}

fn wait_rewrite(flavor: Flavor, c: &mut redis::Connection) {
    let done = wait_until(Duration::from_secs(30), || {
        let mut field = |f| info_field(c, "persistence", f);
        field("aof_rewrite_in_progress").as_deref() == Some("0")
            && field("aof_rewrite_scheduled").as_deref() == Some("0")
    });
    assert!(done, "{flavor:?}: AOF rewrite did not finish");
}

#[test]
fn rdb_save_restores_every_command_with_and_without_rl() {
    for flavor in ALL {
        let server = Server::start_clocked(flavor, &[]);
        let mut c = server.conn();
        let want = traffic_with_evictions(&server, &mut c, "rdb");
        let _: () = redis::cmd("SAVE").query(&mut c).unwrap();
        drop(c);
        let dir = server.stop(false);
        assert!(dir.join("dump.rdb").is_file(), "{flavor:?}: no dump.rdb");
        assert_restores(flavor, dir, &[], &want, "RDB");
    }
}

#[test]
fn aof_and_its_rewrites_restore_every_command_with_and_without_rl() {
    let aof = ["--appendonly", "yes"];
    for flavor in ALL {
        let server = Server::start_clocked(flavor, &aof);
        let mut c = server.conn();
        let want = traffic_with_evictions(&server, &mut c, "aof");
        drop(c);
        let dir = server.stop(false);
        assert_plain_commands_only(flavor, &dir, &PLAIN, false);
        let dir = assert_restores(flavor, dir, &aof, &want, "AOF");

        // Rewrite the AOF (an RDB preamble, then commands), log more traffic
        // after it, restart again; then the same with a rewrite in command
        // form: the rewritten base plus the commands logged after it.
        let mut dir = dir;
        for (preamble, prefix) in [("yes", "after-rewrite"), ("no", "after-plain-rewrite")] {
            let extra = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble];
            let server = Server::start_in(flavor, dir, &extra, true);
            let mut c = server.conn();
            let _: redis::Value = redis::cmd("BGREWRITEAOF").query(&mut c).unwrap();
            wait_rewrite(flavor, &mut c);
            let want = traffic(&mut c, prefix);
            drop(c);
            let stopped = server.stop(false);
            assert_plain_commands_only(flavor, &stopped, &PLAIN_OF_MIXED, true);
            let how = format!("BGREWRITEAOF (aof-use-rdb-preamble {preamble})");
            dir = assert_restores(flavor, stopped, &aof, &want, &how);
        }
    }
}

/// Runs [`mixed_lines`] on `c`; every reply, errors included.
fn mixed_replies(c: &mut redis::Connection, prefix: &str) -> Vec<redis::Value> {
    mixed_lines(prefix, 6)
        .iter()
        .map(|l| run_bytes(c, l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// The decisions in a reply: its first integer (allowed, admitted,
/// released; CL.THROTTLE's limited) and, for RL.ALL, each clause's; a
/// count's totals whole. What does not depend on the ms a call ran at.
fn decisions(reply: &redis::Value) -> Vec<redis::Value> {
    use redis::Value;
    match reply {
        Value::Array(items) if matches!(items.first(), Some(Value::Int(_))) => {
            if items.iter().any(|i| matches!(i, Value::Array(_))) {
                // RL.ALL: allowed, retry_after_ms, then one reply per clause.
                let mut out = vec![items[0].clone()];
                out.extend(items[2..].iter().flat_map(decisions));
                out
            } else {
                items[..1].to_vec()
            }
        }
        // RL.BLOCK: the block's end, an instant (RL.UNBLOCK's 0 or 1 is
        // a decision).
        Value::Int(at) if *at > 1_000_000_000_000 => Vec::new(),
        // RL.COUNT / RL.TOTALS: names and totals.
        other => vec![other.clone()],
    }
}

/// The keyspace with the lease ids rl made (`<ms>-<nonce>`, the nonce
/// random per process) replaced by their rank: two servers never make the
/// same ones.
fn made_ids_masked(space: Keyspace) -> Keyspace {
    space
        .into_iter()
        .map(|(k, (v, at))| {
            let v = match v {
                Plain::Zset(z) => Plain::Zset(
                    z.into_iter()
                        .enumerate()
                        .map(|(i, (m, score))| match m.contains(&b'-') {
                            true => (format!("made id {i}").into_bytes(), score),
                            false => (m, score),
                        })
                        .collect(),
                ),
                other => other,
            };
            (k, (v, at))
        })
        .collect()
}

/// A key's layout without its times: the type, and a sorted set's
/// members where they are named (leases) or its size (RL.SLIDE's,
/// numbered by time), a hash's field names but its buckets', a string's
/// value where it is a count (RL.FIXED's, not a TAT).
fn shape(space: &Keyspace) -> Vec<(Vec<u8>, String)> {
    space
        .iter()
        .map(|(k, (v, at))| {
            assert!(*at > 0, "{}: no expiry", String::from_utf8_lossy(k));
            let what = match v {
                Plain::Zset(z) if z.iter().all(|(m, _)| m.iter().all(u8::is_ascii_digit)) => {
                    format!("log of {}", z.len())
                }
                Plain::Zset(z) => {
                    let mut named: Vec<_> = z
                        .iter()
                        .map(|(m, _)| m)
                        .filter(|m| !m.contains(&b'-'))
                        .collect();
                    named.sort();
                    format!("{} leases, named {named:?}", z.len())
                }
                // Bucket fields are named by the ms they began at.
                Plain::Hash(h) => format!(
                    "hash {:?}",
                    h.keys()
                        .filter(|f| !f.iter().all(u8::is_ascii_digit))
                        .collect::<Vec<_>>()
                ),
                Plain::String(s) if s.len() < 16 => format!("count {s:?}"),
                Plain::String(_) => "tat".into(),
                Plain::Other(t) => t.clone(),
            };
            (k.clone(), what)
        })
        .collect()
}

/// `DEBUG RELOAD` (save, empty, load) gives back every key exactly, and the
/// commands go on from it as on a twin server that never reloaded, both
/// sent the same traffic before and after. On a stopped clock (Valkey) the
/// twin runs at the same ms: every reply and the whole keyspace (members,
/// scores, fields, values, `PEXPIRETIME`) match exactly. On a real clock
/// (Redis) the two servers run at different ms: the decisions match, and
/// the keys, their types, lease ids, log sizes, field names and counts.
#[test]
fn debug_reload_keeps_every_command_state() {
    for flavor in ALL {
        let debug = ["--enable-debug-command", "yes"];
        let twin = Server::start_clocked(flavor, &[]);
        let mut server = Server::start_clocked(flavor, &debug);
        if server.clock_stopped() {
            // Started later, so ahead: the twin catches up to the ms.
            twin.advance((server.clock_ms() - twin.clock_ms()) as u64);
            assert_eq!(twin.clock_ms(), server.clock_ms());
        }
        let (mut c, mut t) = (server.conn(), twin.conn());
        let want = traffic_with_evictions(&server, &mut c, "reload");
        let twin_want = traffic_with_evictions(&twin, &mut t, "reload");
        if server.clock_stopped() {
            assert_eq!(
                made_ids_masked(want.clone()),
                made_ids_masked(twin_want),
                "{flavor:?}: the twin differs before the reload"
            );
        }
        let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut c).unwrap();
        assert_eq!(keyspace(&mut c), want, "{flavor:?}: after DEBUG RELOAD");
        // The commands go on from the reloaded state: the same traffic
        // (admits, denials, refunds, releases on the existing keys), a
        // little later on both.
        server.advance(5);
        twin.advance(5);
        let mut replies = Vec::new();
        let mut twin_replies = Vec::new();
        for _ in 0..2 {
            replies.extend(mixed_replies(&mut c, "reload"));
            twin_replies.extend(mixed_replies(&mut t, "reload"));
        }
        let (got, twin_got) = (keyspace(&mut c), keyspace(&mut t));
        assert_covers_every_layout(&got);
        if server.clock_stopped() {
            assert_eq!(
                replies, twin_replies,
                "{flavor:?}: replies after the reload"
            );
            assert_eq!(
                made_ids_masked(got.clone()),
                made_ids_masked(twin_got),
                "{flavor:?}: state after the reload"
            );
        } else {
            let d = |r: &[redis::Value]| r.iter().map(decisions).collect::<Vec<_>>();
            assert_eq!(
                d(&replies),
                d(&twin_replies),
                "{flavor:?}: decisions after the reload"
            );
            assert_eq!(
                shape(&got),
                shape(&twin_got),
                "{flavor:?}: state after the reload"
            );
        }
        assert_ne!(
            got, want,
            "{flavor:?}: the traffic after the reload wrote nothing"
        );
        server.assert_alive();
    }
}

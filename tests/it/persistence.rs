//! The state of every command survives RDB, AOF, an AOF rewrite (with an
//! RDB preamble and in command form) and `DEBUG RELOAD` identical (values
//! and absolute expiries), and the RDB and AOF files load in a server
//! without the module: the state is plain sorted sets, hashes and strings,
//! and the AOF holds plain commands (no lock-in).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::all_commands::{mixed_traffic, COMMANDS, LONG_MS, WRITERS};
use crate::harness::*;

fn traffic(c: &mut redis::Connection, prefix: &str) -> Keyspace {
    mixed_traffic(c, prefix, 6);
    let space = keyspace(c);
    assert_covers_every_layout(&space);
    space
}

/// [`traffic`], plus every command on an odd key name, and RL.SLIDE
/// evictions: half the sorted sets get an admit under a window their
/// entries have left (the old entries go, `ZREMRANGEBYRANK`), then one
/// under the long window so the key lives on.
fn traffic_with_evictions(server: &Server, c: &mut redis::Connection, prefix: &str) -> Keyspace {
    mixed_traffic(c, prefix, 6);
    // (Named by index: the AOF must not name an rl command, keys included.)
    for (i, w) in WRITERS.into_iter().enumerate() {
        let key = format!("{prefix}:odd key\r\nname \u{e9}:{i}");
        for _ in 0..3 {
            run_bytes(c, &w.admit_line(&key, 2)).unwrap();
        }
    }
    server.advance(120);
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

/// The AOF under `dir` holds rl's writes as the plain commands they are,
/// with absolute expiries, and never names an rl command.
fn assert_plain_commands_only(flavor: Flavor, dir: &Path) {
    let logged = aof_text(dir).to_ascii_uppercase();
    for name in COMMANDS {
        assert!(!logged.contains(name), "{flavor:?}: the AOF names {name}");
    }
    for plain in ["ZADD", "PEXPIREAT"] {
        assert!(logged.contains(plain), "{flavor:?}: no {plain} in the AOF");
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
        assert_plain_commands_only(flavor, &dir);
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
            assert_plain_commands_only(flavor, &stopped);
            let how = format!("BGREWRITEAOF (aof-use-rdb-preamble {preamble})");
            dir = assert_restores(flavor, stopped, &aof, &want, &how);
        }
    }
}

#[test]
fn debug_reload_keeps_every_command_state() {
    for flavor in ALL {
        let mut server = Server::start_with(flavor, &["--enable-debug-command", "yes"]);
        let mut c = server.conn();
        let want = traffic(&mut c, "reload");
        let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut c).unwrap();
        assert_eq!(keyspace(&mut c), want, "{flavor:?}: after DEBUG RELOAD");
        // The commands go on from the reloaded state: the same traffic again
        // ends where it does on a server that never reloaded.
        let twin = Server::start(flavor);
        let mut t = twin.conn();
        mixed_traffic(&mut t, "reload", 6);
        mixed_traffic(&mut t, "reload", 6);
        mixed_traffic(&mut c, "reload", 6);
        let (a, b) = (keyspace(&mut c), keyspace(&mut t));
        assert_eq!(a.len(), b.len(), "{flavor:?}");
        for ((ka, (va, _)), (kb, (vb, _))) in a.iter().zip(b.iter()) {
            assert_eq!(ka, kb, "{flavor:?}");
            // Values that hold no timestamps match exactly.
            if !matches!(va, Plain::Zset(_))
                && !String::from_utf8_lossy(ka).contains("throttle")
                && !String::from_utf8_lossy(ka).contains("cell")
            {
                if let (Plain::Hash(ha), Plain::Hash(hb)) = (va, vb) {
                    assert_eq!(ha.get(&b"t"[..]), hb.get(&b"t"[..]), "{flavor:?} {:?}", ka);
                } else {
                    assert_eq!(va, vb, "{flavor:?} {:?}", String::from_utf8_lossy(ka));
                }
            } else if let (Plain::Zset(za), Plain::Zset(zb)) = (va, vb) {
                assert_eq!(
                    za.len(),
                    zb.len(),
                    "{flavor:?} {:?}",
                    String::from_utf8_lossy(ka)
                );
            }
        }
        server.assert_alive();
    }
}

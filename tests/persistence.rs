//! The state of every command survives RDB, AOF, an AOF rewrite and
//! `DEBUG RELOAD` identical (values and absolute expiries), and the RDB and
//! AOF files load in a server without the module: the state is plain sorted
//! sets, hashes and strings, and the AOF holds plain commands (no lock-in).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::all_commands::{assert_covers_every_layout, keyspace, mixed_traffic, Plain, COMMANDS};
use common::{aof_text, info_field, wait_until, Flavor, Server, ALL};

type Space = BTreeMap<Vec<u8>, (Plain, i64)>;

fn traffic(c: &mut redis::Connection, prefix: &str) -> Space {
    mixed_traffic(c, prefix, 6);
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
    want: &Space,
    how: &str,
) -> PathBuf {
    let mut dir = dir;
    for module in [true, false] {
        let mut server = Server::start_in(flavor, dir, extra, module);
        let mut c = server.conn();
        if !module {
            let err = redis::cmd("RL.SLIDE")
                .arg("k")
                .arg(1)
                .arg(1000)
                .query::<redis::Value>(&mut c)
                .unwrap_err();
            assert!(
                err.to_string().contains("unknown command"),
                "{flavor:?}: {err}"
            );
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

fn assert_plain_commands_only(flavor: Flavor, dir: &Path) {
    let logged = aof_text(dir).to_ascii_uppercase();
    for name in COMMANDS {
        assert!(!logged.contains(name), "{flavor:?}: the AOF names {name}");
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
        let server = Server::start(flavor);
        let mut c = server.conn();
        let want = traffic(&mut c, "rdb");
        let _: () = redis::cmd("SAVE").query(&mut c).unwrap();
        drop(c);
        let dir = server.stop(false);
        assert!(dir.join("dump.rdb").is_file(), "{flavor:?}: no dump.rdb");
        assert_restores(flavor, dir, &[], &want, "RDB");
    }
}

#[test]
fn aof_and_its_rewrite_restore_every_command_with_and_without_rl() {
    let aof = ["--appendonly", "yes"];
    for flavor in ALL {
        let server = Server::start_with(flavor, &aof);
        let mut c = server.conn();
        let want = traffic(&mut c, "aof");
        drop(c);
        let dir = server.stop(false);
        assert_plain_commands_only(flavor, &dir);
        let dir = assert_restores(flavor, dir, &aof, &want, "AOF");

        // Rewrite the AOF, log more traffic after it, restart again.
        let server = Server::start_in(flavor, dir, &aof, true);
        let mut c = server.conn();
        let _: redis::Value = redis::cmd("BGREWRITEAOF").query(&mut c).unwrap();
        wait_rewrite(flavor, &mut c);
        let want = traffic(&mut c, "after-rewrite");
        drop(c);
        let dir = server.stop(false);
        assert_plain_commands_only(flavor, &dir);
        assert_restores(flavor, dir, &aof, &want, "BGREWRITEAOF");
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

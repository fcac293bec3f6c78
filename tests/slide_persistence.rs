//! RL.SLIDE state survives a restart from the AOF or an RDB, identical, and
//! both load in a server without the module (no lock-in).
mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::*;

const LONG: u64 = 600_000;

type KeyState = (String, Vec<(String, i64)>, i64);

/// Admits, denials, COST and evictions on a few keys; every key ends with a
/// long expiry so nothing expires across the restarts.
fn traffic(c: &mut redis::Connection) -> Vec<String> {
    let mut keys: Vec<String> = (0..7).map(|i| format!("p:{i}")).collect();
    keys.push("odd key\r\nname \u{e9}".to_string());
    for (i, k) in keys.iter().enumerate() {
        let limit = 2 + i as u64;
        for _ in 0..limit + 2 {
            slide(c, k, limit, LONG);
        }
        slide_cost(c, k, limit + 3, LONG, 3);
    }
    std::thread::sleep(Duration::from_millis(120));
    for k in keys.iter().step_by(2) {
        assert_eq!(slide(c, k, 100, 100)[0], 1, "{k}");
        assert_eq!(zcard(c, k), 1, "{k}: evicted");
        assert_eq!(slide_cost(c, k, 100, LONG, 2)[0], 1, "{k}");
    }
    keys
}

fn state(c: &mut redis::Connection, keys: &[String]) -> Vec<KeyState> {
    keys.iter()
        .map(|k| {
            let e = entries(c, k);
            let t = pexpiretime(c, k);
            assert!(!e.is_empty() && t > 0, "{k}: {e:?} {t}");
            (k.clone(), e, t)
        })
        .collect()
}

/// The module is really absent: its command is unknown.
fn assert_no_module(f: Flavor, c: &mut redis::Connection) {
    let err = slide_raw(c, &[b"p:0", b"5", b"1000"]).unwrap_err();
    assert!(
        error_text(&err).contains("unknown command"),
        "{f:?}: {err:?}"
    );
}

#[test]
fn aof_restart_restores_the_same_state_with_and_without_rl() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["--appendonly", "yes"]);
        let mut c = server.conn();
        let keys = traffic(&mut c);
        let want = state(&mut c, &keys);
        drop(c);
        let dir = server.stop(false);
        assert_aof_restores(flavor, dir, &keys, &want);
    }
}

/// The same after an AOF rewrite in the middle of the traffic: the
/// rewritten base plus the commands logged after it.
#[test]
fn aof_rewrite_keeps_the_same_state() {
    for flavor in ALL {
        let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"];
        let server = Server::start_with(flavor, &aof);
        let mut c = server.conn();
        let mut keys = traffic(&mut c);
        let _: redis::Value = redis::cmd("BGREWRITEAOF").query(&mut c).unwrap();
        let done = wait_until(Duration::from_secs(20), || {
            let field = |c: &mut redis::Connection, f| info_field(c, "persistence", f);
            field(&mut c, "aof_rewrite_in_progress").as_deref() == Some("0")
                && field(&mut c, "aof_rewrite_scheduled").as_deref() == Some("0")
        });
        assert!(done, "{flavor:?}: AOF rewrite did not finish");
        for k in &keys {
            slide_cost(&mut c, k, 1_000, LONG, 2);
        }
        slide_cost(&mut c, "after-rewrite", 10, LONG, 4);
        keys.push("after-rewrite".into());
        let want = state(&mut c, &keys);
        drop(c);
        let dir = server.stop(false);
        assert_aof_restores(flavor, dir, &keys, &want);
    }
}

/// The AOF in `dir` holds plain commands only, and restores `want` both
/// with rl and without it.
fn assert_aof_restores(flavor: Flavor, dir: PathBuf, keys: &[String], want: &[KeyState]) {
    let aof = ["--appendonly", "yes"];
    let logged = aof_text(&dir).to_ascii_uppercase();
    assert!(logged.contains("ZADD"), "{flavor:?}: no ZADD in the AOF");
    assert!(
        logged.contains("PEXPIREAT"),
        "{flavor:?}: no PEXPIREAT in the AOF"
    );
    assert!(
        !logged.contains("RL.SLIDE"),
        "{flavor:?}: the AOF names RL.SLIDE"
    );

    let server = Server::start_in(flavor, dir, &aof, true);
    let mut c = server.conn();
    assert_eq!(
        state(&mut c, keys),
        want,
        "{flavor:?}: after AOF restart with rl"
    );
    drop(c);
    let dir = server.stop(false);

    let mut bare = Server::start_in(flavor, dir, &aof, false);
    let mut c = bare.conn();
    assert_no_module(flavor, &mut c);
    assert_eq!(
        state(&mut c, keys),
        want,
        "{flavor:?}: after AOF restart without rl"
    );
    bare.assert_alive();
}

#[test]
fn rdb_restart_restores_the_same_state_with_and_without_rl() {
    for flavor in ALL {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let keys = traffic(&mut c);
        let want = state(&mut c, &keys);
        let _: () = redis::cmd("SAVE").query(&mut c).unwrap();
        drop(c);
        let dir = server.stop(false);
        assert!(dir.join("dump.rdb").is_file(), "{flavor:?}: no dump.rdb");

        let server = Server::start_in(flavor, dir, &[], true);
        let mut c = server.conn();
        assert_eq!(
            state(&mut c, &keys),
            want,
            "{flavor:?}: after RDB restart with rl"
        );
        drop(c);
        let dir = server.stop(false);

        let mut bare = Server::start_in(flavor, dir, &[], false);
        let mut c = bare.conn();
        assert_no_module(flavor, &mut c);
        assert_eq!(
            state(&mut c, &keys),
            want,
            "{flavor:?}: after RDB restart without rl"
        );
        bare.assert_alive();
    }
}

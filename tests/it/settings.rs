//! Runtime settings: module configs `rl.<name>` (`CONFIG GET/SET`, config
//! file lines, `CONFIG REWRITE`), set by the load arguments too.

use crate::harness::*;
use crate::keyspace_events::{denied_keys, deny_some};

/// The keys `deny_some` denies, one `rl.denied` event each when it is on.
const DENIED: [&str; 6] = ["s", "b", "t", "ct", "f", "{o}o"];

fn config_get(c: &mut redis::Connection, name: &str) -> Vec<String> {
    redis::cmd("CONFIG").arg("GET").arg(name).query(c).unwrap()
}

fn config_set(c: &mut redis::Connection, name: &str, value: &str) -> redis::RedisResult<()> {
    redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query(c)
}

#[test]
fn notify_denied_switches_at_run_time() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(
            config_get(&mut c, "rl.notify-denied"),
            ["rl.notify-denied", "no"],
            "{f:?}"
        );
        assert!(denied_keys(server, deny_some).is_empty(), "{f:?}");
        config_set(&mut c, "rl.notify-denied", "yes").unwrap();
        assert_eq!(config_get(&mut c, "rl.notify-denied")[1], "yes", "{f:?}");
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        assert_eq!(denied_keys(server, deny_some), DENIED, "{f:?}");
        config_set(&mut c, "rl.notify-denied", "no").unwrap();
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
        assert!(denied_keys(server, deny_some).is_empty(), "{f:?}");
        // The server checks the value: a bad one changes nothing.
        config_set(&mut c, "rl.notify-denied", "maybe").unwrap_err();
        assert_eq!(config_get(&mut c, "rl.notify-denied")[1], "no", "{f:?}");
        // rl's configs answer a pattern too.
        let all = config_get(&mut c, "rl.*");
        assert!(
            all.chunks(2).any(|kv| kv == ["rl.notify-denied", "no"]),
            "{f:?}: {all:?}"
        );
    });
}

#[test]
fn load_argument_sets_the_config() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["NOTIFY-DENIED", "on"]);
        let mut c = server.conn();
        assert_eq!(
            config_get(&mut c, "rl.notify-denied")[1],
            "yes",
            "{flavor:?}"
        );
    }
}

#[test]
fn config_file_line_sets_it_and_rewrite_keeps_changes() {
    for flavor in ALL {
        // A config-file line, without a load argument.
        let dir = new_dir(flavor);
        std::fs::write(dir.join(CONFIG_FILE), "rl.notify-denied yes\n").unwrap();
        let server = Server::start_in(flavor, dir, &[], true);
        let mut c = server.conn();
        assert_eq!(
            config_get(&mut c, "rl.notify-denied")[1],
            "yes",
            "{flavor:?}"
        );
        drop(c);
        server.stop(false);

        // The load argument says on, CONFIG SET says off: the rewritten
        // file (its loadmodule line included) restarts with it off.
        let dir = new_dir(flavor);
        std::fs::write(dir.join(CONFIG_FILE), "").unwrap();
        let server = Server::start_in(flavor, dir, &["NOTIFY-DENIED", "on"], true);
        let mut c = server.conn();
        config_set(&mut c, "rl.notify-denied", "no").unwrap();
        let _: () = redis::cmd("CONFIG").arg("REWRITE").query(&mut c).unwrap();
        drop(c);
        let dir = server.stop(false);
        let file = std::fs::read_to_string(dir.join(CONFIG_FILE)).unwrap();
        assert!(
            file.lines().any(|l| l == "rl.notify-denied no"),
            "{flavor:?}:\n{file}"
        );
        // No module from the harness: the file's loadmodule line loads rl.
        let server = Server::start_in(flavor, dir, &[], false);
        let mut c = server.conn();
        assert_eq!(
            config_get(&mut c, "rl.notify-denied")[1],
            "no",
            "{flavor:?}"
        );
        assert!(denied_keys(&server, deny_some).is_empty(), "{flavor:?}");
    }
}

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

#[test]
fn shadow_and_prefix_configs_set_at_run_time_and_refuse_bad_values() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for (name, default) in [
            ("rl.shadow", "no"),
            ("rl.shadow-prefixes", ""),
            ("rl.stats-prefixes", ""),
        ] {
            assert_eq!(config_get(&mut c, name), [name, default], "{f:?}");
        }
        config_set(&mut c, "rl.shadow", "yes").unwrap();
        assert_eq!(config_get(&mut c, "rl.shadow")[1], "yes", "{f:?}");
        // Shown as parsed: one space between prefixes.
        config_set(&mut c, "rl.shadow-prefixes", "  api:v2:   beta: ").unwrap();
        assert_eq!(
            config_get(&mut c, "rl.shadow-prefixes")[1],
            "api:v2: beta:",
            "{f:?}"
        );
        config_set(&mut c, "rl.stats-prefixes", "user: {t}:").unwrap();
        assert_eq!(
            config_get(&mut c, "rl.stats-prefixes")[1],
            "user: {t}:",
            "{f:?}"
        );
        let too_many: Vec<String> = (0..33).map(|i| format!("p{i}:")).collect();
        let bad: [(&str, String, &str); 6] = [
            ("rl.shadow", "maybe".into(), ""),
            (
                "rl.stats-prefixes",
                too_many.join(" "),
                "rl.stats-prefixes: at most 32 prefixes, separated by spaces (got 33)",
            ),
            (
                "rl.shadow-prefixes",
                "a,b".into(),
                "rl.shadow-prefixes: a prefix is printable ASCII without ',' or '=' (got byte 0x2c)",
            ),
            (
                "rl.stats-prefixes",
                "x=1".into(),
                "rl.stats-prefixes: a prefix is printable ASCII without ',' or '=' (got byte 0x3d)",
            ),
            (
                "rl.stats-prefixes",
                "a: a:".into(),
                "rl.stats-prefixes: prefix 'a:' is listed twice",
            ),
            (
                "rl.shadow-prefixes",
                "k".repeat(129),
                "rl.shadow-prefixes: a prefix is at most 128 bytes (got 129)",
            ),
        ];
        for (name, value, reason) in bad {
            let err = error_text(&config_set(&mut c, name, &value).unwrap_err());
            assert!(err.contains(reason), "{f:?} {name}: {err}");
        }
        // Each refusal kept the value set before.
        assert_eq!(config_get(&mut c, "rl.shadow")[1], "yes", "{f:?}");
        assert_eq!(
            config_get(&mut c, "rl.shadow-prefixes")[1],
            "api:v2: beta:",
            "{f:?}"
        );
        assert_eq!(
            config_get(&mut c, "rl.stats-prefixes")[1],
            "user: {t}:",
            "{f:?}"
        );
        // And it is that value that acts: the kept list still counts.
        run(&mut c, &["RL.FIXED", "user:1", "1", "600000"]).unwrap();
        assert_eq!(
            prefix_counts(&mut c),
            [
                ("user:".to_string(), [1, 0, 0]),
                ("{t}:".to_string(), [0, 0, 0])
            ],
            "{f:?}"
        );
    });
}

#[test]
fn shadow_and_prefix_config_lines_load_and_rewrite_keeps_them() {
    for flavor in ALL {
        let dir = new_dir(flavor);
        std::fs::write(
            dir.join(CONFIG_FILE),
            "rl.shadow yes\nrl.stats-prefixes \"api: user:\"\n",
        )
        .unwrap();
        let server = Server::start_in(flavor, dir, &[], true);
        let mut c = server.conn();
        assert_eq!(config_get(&mut c, "rl.shadow")[1], "yes", "{flavor:?}");
        assert_eq!(
            config_get(&mut c, "rl.stats-prefixes")[1],
            "api: user:",
            "{flavor:?}"
        );
        // Changed at run time, then rewritten: the restart keeps it.
        config_set(&mut c, "rl.shadow", "no").unwrap();
        config_set(&mut c, "rl.shadow-prefixes", "beta: {t}new:").unwrap();
        config_set(&mut c, "rl.stats-prefixes", "beta:").unwrap();
        let _: () = redis::cmd("CONFIG").arg("REWRITE").query(&mut c).unwrap();
        drop(c);
        let dir = server.stop(false);
        let server = Server::start_in(flavor, dir, &[], false);
        let mut c = server.conn();
        assert_eq!(config_get(&mut c, "rl.shadow")[1], "no", "{flavor:?}");
        assert_eq!(
            config_get(&mut c, "rl.shadow-prefixes")[1],
            "beta: {t}new:",
            "{flavor:?}"
        );
        assert_eq!(
            config_get(&mut c, "rl.stats-prefixes")[1],
            "beta:",
            "{flavor:?}"
        );
        // The restarted server acts on them: a shadowed, counted denial.
        for _ in 0..2 {
            let v: Vec<i64> = redis::cmd("RL.FIXED")
                .arg("beta:1")
                .arg(1)
                .arg(600000)
                .query(&mut c)
                .unwrap();
            assert_eq!(v[0], 1, "{flavor:?}");
        }
        assert_eq!(
            prefix_counts(&mut c),
            [("beta:".to_string(), [2, 0, 1])],
            "{flavor:?}"
        );
    }
}

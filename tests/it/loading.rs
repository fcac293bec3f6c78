//! Loading rl: it registers as `rl` (the native Valkey build as a native
//! module), load arguments turn commands off or fail the load with a log
//! line, names the server already has are skipped one by one, rl refuses a
//! server where a command it replicates as is renamed away, and `MODULE
//! UNLOAD rl` leaves the keys as plain values that a reloaded rl goes on
//! from.

use crate::harness::all_commands::{mixed_traffic, COMMANDS};
use crate::harness::fixtures::{fixture, start_with_modules};
use crate::harness::resp::{field, items, text};
use crate::harness::*;

#[test]
fn module_list_shows_rl() {
    on_every_server(|server| {
        let f = server.flavor;
        let names = module_names(&mut server.conn());
        assert!(names.contains(&"rl".to_string()), "{f:?}: {names:?}");
    });
}

#[test]
fn native_valkey_build_is_not_a_legacy_redis_module() {
    let server = Server::start(Flavor::Valkey9Native);
    let log = server.log();
    assert!(log.contains("Module 'rl' loaded"), "{log}");
    assert!(!log.to_lowercase().contains("legacy"), "{log}");
    // The Redis-API build is what Valkey calls legacy: the check can fail.
    let legacy = Server::start(Flavor::Valkey9);
    assert!(
        legacy.log().contains("Legacy Redis Module"),
        "{}",
        legacy.log()
    );
}

#[test]
fn load_argument_turns_cl_throttle_off() {
    for flavor in ALL {
        let server = Server::start_with(flavor, &["CL.THROTTLE", "off"]);
        let mut c = server.conn();
        let err = error_of(&mut c, &["CL.THROTTLE", "k", "1", "1", "1"]);
        assert!(err.contains("unknown command"), "{flavor:?}: {err}");
        let info: redis::Value = redis::cmd("COMMAND")
            .arg("INFO")
            .arg("cl.throttle")
            .query(&mut c)
            .unwrap();
        assert_eq!(
            info,
            redis::Value::Array(vec![redis::Value::Nil]),
            "{flavor:?}"
        );
        assert_eq!(
            throttle(&mut c, "k", [1, 1, 1000], None)[..3],
            [1, 1, 0],
            "{flavor:?}"
        );
        assert_eq!(fixed(&mut c, "f", 1, 1000, None)[0], 1, "{flavor:?}");
    }
}

#[test]
fn unknown_load_argument_fails_the_load_with_a_log_line() {
    for flavor in ALL {
        let server = Server::start_without_module(flavor);
        let mut c = server.conn();
        let module = flavor.module();
        let module = module.to_str().unwrap();
        let err = error_of(&mut c, &["MODULE", "LOAD", module, "no-cl-throttle"]);
        assert!(
            err.to_lowercase().contains("error loading"),
            "{flavor:?}: {err}"
        );
        let log = server.log();
        assert!(
            log.contains("rl: unknown load argument 'no-cl-throttle'"),
            "{flavor:?}: {log}"
        );
        // The same server then loads it with a valid argument.
        let _: () = redis::cmd("MODULE")
            .arg("LOAD")
            .arg(module)
            .arg("CL.THROTTLE")
            .arg("off")
            .query(&mut c)
            .unwrap();
        assert_eq!(
            throttle(&mut c, "k", [0, 1, 1000], None)[0],
            1,
            "{flavor:?}"
        );
        let err = error_of(&mut c, &["CL.THROTTLE", "k", "1", "1", "1"]);
        assert!(err.contains("unknown command"), "{flavor:?}: {err}");
    }
}

#[test]
fn rl_does_not_load_where_a_command_it_replicates_is_renamed() {
    for flavor in ALL {
        let server = Server::start_in(
            flavor,
            new_dir(flavor),
            &[
                "--enable-module-command",
                "yes",
                "--rename-command",
                "ZREMRANGEBYRANK",
                "\"\"",
            ],
            false,
        );
        let mut c = server.conn();
        let module = flavor.module();
        let err = error_of(&mut c, &["MODULE", "LOAD", module.to_str().unwrap()]);
        assert!(
            err.to_lowercase().contains("error loading"),
            "{flavor:?}: {err}"
        );
        let log = server.log();
        assert!(
            log.contains(
                "the server has no ZREMRANGEBYRANK command (renamed with rename-command?)"
            ),
            "{flavor:?}: {log}"
        );
        let err = error_of(&mut c, &["RL.SLIDE", "k", "1", "1000"]);
        assert!(err.contains("unknown command"), "{flavor:?}: {err}");
    }
}

/// The names MODULE LIST shows (Redis 8 lists its built-in modules too).
fn module_names(c: &mut redis::Connection) -> Vec<String> {
    let list: redis::Value = redis::cmd("MODULE").arg("LIST").query(c).unwrap();
    items(&list)
        .iter()
        .map(|m| text(&field(m, "name")))
        .collect()
}

#[test]
fn module_unload_removes_the_commands_and_keeps_the_keys() {
    for flavor in ALL {
        let mut server = Server::start_with(flavor, &["--enable-module-command", "yes"]);
        let mut c = server.conn();
        mixed_traffic(&mut c, "unload", 4);
        let want = keyspace(&mut c);
        assert_covers_every_layout(&want);
        // Redis 8 lists its built-in modules too.
        assert!(
            module_names(&mut c).contains(&"rl".to_string()),
            "{flavor:?}"
        );

        let _: () = redis::cmd("MODULE")
            .arg("UNLOAD")
            .arg("rl")
            .query(&mut c)
            .unwrap();
        assert!(
            !module_names(&mut c).contains(&"rl".to_string()),
            "{flavor:?}"
        );
        for name in COMMANDS {
            let err = redis::cmd(name)
                .arg("k")
                .arg(1)
                .arg(1)
                .arg(1)
                .query::<redis::Value>(&mut c);
            let err = err.unwrap_err().to_string();
            assert!(err.contains("unknown command"), "{flavor:?} {name}: {err}");
        }
        assert_eq!(keyspace(&mut c), want, "{flavor:?}: keys after unload");

        let _: () = redis::cmd("MODULE")
            .arg("LOAD")
            .arg(flavor.module().to_str().unwrap())
            .query(&mut c)
            .unwrap();
        assert_eq!(keyspace(&mut c), want, "{flavor:?}: keys after reload");
        // The reloaded module reads the state it left: a full subject is
        // still denied, a counter goes on.
        let v: Vec<i64> = redis::cmd("RL.SLIDE")
            .arg("unload:slide:0")
            .arg(1)
            .arg(600_000)
            .query(&mut c)
            .unwrap();
        assert_eq!(v[0], 0, "{flavor:?}: {v:?}");
        mixed_traffic(&mut c, "unload", 4);
        server.assert_alive();
    }
}

fn skipped(c: &mut redis::Connection) -> Option<String> {
    info_field(c, "rl", "rl_skipped_commands")
}

fn simple(c: &mut redis::Connection, line: &[&str]) -> String {
    match run(c, line) {
        Ok(redis::Value::SimpleString(s)) => s,
        other => panic!("{line:?}: {other:?}"),
    }
}

fn skip_line(name: &str) -> String {
    format!("skipped command {name}: the server already has a command of that name")
}

#[test]
fn names_another_module_owns_are_skipped_and_the_rest_load() {
    for flavor in ALL {
        let server = start_with_modules(
            flavor,
            &[(fixture("nametaker"), &[]), (flavor.module(), &[])],
        );
        let mut c = server.conn();
        // The owner keeps its commands.
        for name in ["CL.THROTTLE", "RL.THROTTLE"] {
            assert_eq!(
                simple(&mut c, &[name, "k", "1", "1", "1"]),
                "nametaker",
                "{flavor:?} {name}"
            );
        }
        // rl has every other command, the throttle clause of RL.ALL too.
        assert_eq!(slide(&mut c, "s", 2, 600_000)[..2], [1, 1], "{flavor:?}");
        assert_eq!(fixed(&mut c, "f", 1, 600_000, None)[0], 1, "{flavor:?}");
        let r = all(&mut c, &["1", "t", "THROTTLE", "0", "1", "600000"]).unwrap();
        assert_eq!(r.allowed, 1, "{flavor:?}");
        assert_eq!(
            peek(&mut c, &["THROTTLE", "t", "0", "1", "600000"])[0],
            0,
            "{flavor:?}"
        );
        assert_eq!(
            skipped(&mut c).as_deref(),
            Some("cl.throttle,rl.throttle"),
            "{flavor:?}"
        );
        let info = rl_info(&mut c);
        assert!(info.contains_key("slide_calls"), "{flavor:?} {info:?}");
        assert!(
            !info.contains_key("throttle_calls") && !info.contains_key("cl_throttle_calls"),
            "{flavor:?} {info:?}"
        );
        let log = server.log();
        for name in ["cl.throttle", "rl.throttle"] {
            assert!(log.contains(&skip_line(name)), "{flavor:?}:\n{log}");
        }
        assert!(
            log.contains("skipped, the server already has them: cl.throttle, rl.throttle"),
            "{flavor:?}:\n{log}"
        );
    }
}

#[test]
fn next_to_redis_cell_rl_keeps_every_rl_command() {
    // redis-cell's name only, as when it loads first.
    for flavor in ALL {
        let server = start_with_modules(
            flavor,
            &[
                (fixture("nametaker"), &["cl.throttle"]),
                (flavor.module(), &[]),
            ],
        );
        let mut c = server.conn();
        assert_eq!(
            simple(&mut c, &["CL.THROTTLE", "k", "1", "1", "1"]),
            "nametaker",
            "{flavor:?}"
        );
        assert_eq!(
            throttle(&mut c, "t", [1, 1, 600_000], None)[..3],
            [1, 1, 0],
            "{flavor:?}"
        );
        assert_eq!(
            skipped(&mut c).as_deref(),
            Some("cl.throttle"),
            "{flavor:?}"
        );
        let info = rl_info(&mut c);
        for command in [
            "slide", "buckets", "count", "totals", "throttle", "fixed", "peek", "all",
        ] {
            assert!(
                info.contains_key(&format!("{command}_calls")),
                "{flavor:?} {command}: {info:?}"
            );
        }
        assert!(!info.contains_key("cl_throttle_calls"), "{flavor:?}");
    }
}

#[test]
fn module_load_next_to_an_owner_skips_only_its_names() {
    for flavor in ALL {
        let server = Server::start_without_module(flavor);
        let mut c = server.conn();
        let taker = fixture("nametaker");
        let _: () = redis::cmd("MODULE")
            .arg(&["LOAD", taker.to_str().unwrap(), "rl.slide"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("MODULE")
            .arg(&["LOAD", flavor.module().to_str().unwrap()])
            .query(&mut c)
            .unwrap();
        assert_eq!(
            simple(&mut c, &["RL.SLIDE", "k", "1", "1"]),
            "nametaker",
            "{flavor:?}"
        );
        assert_eq!(
            cl_throttle(&mut c, "t", [2, 1, 3600], None),
            [0, 3, 2, -1, 3600],
            "{flavor:?}"
        );
        assert_eq!(skipped(&mut c).as_deref(), Some("rl.slide"), "{flavor:?}");
        assert!(server.log().contains(&skip_line("rl.slide")), "{flavor:?}");
    }
}

#[test]
fn cl_throttle_off_leaves_the_name_without_a_skip() {
    for flavor in ALL {
        let server = start_with_modules(
            flavor,
            &[
                (fixture("nametaker"), &[]),
                (flavor.module(), &["CL.THROTTLE", "off"]),
            ],
        );
        let mut c = server.conn();
        assert_eq!(
            simple(&mut c, &["CL.THROTTLE", "k", "1", "1", "1"]),
            "nametaker",
            "{flavor:?}"
        );
        // Left out by the load argument: not a skip.
        assert_eq!(
            skipped(&mut c).as_deref(),
            Some("rl.throttle"),
            "{flavor:?}"
        );
        let log = server.log();
        assert!(
            !log.contains(&skip_line("cl.throttle")),
            "{flavor:?}:\n{log}"
        );
        assert!(
            log.contains(&skip_line("rl.throttle")),
            "{flavor:?}:\n{log}"
        );
    }
}

#[test]
fn a_clean_load_skips_nothing_and_warns_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(skipped(&mut c).as_deref(), Some(""), "{f:?}");
        // Every field before it is a counter: the new field comes last.
        let info: String = redis::cmd("INFO").arg("rl").query(&mut c).unwrap();
        let fields: Vec<&str> = info.lines().filter(|l| l.contains(':')).collect();
        assert_eq!(fields.last(), Some(&"rl_skipped_commands:"), "{f:?}");
        let log = server.log();
        // Warning lines carry `#`; the binding's defrag warning was one.
        let warnings: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(" # ") && l.contains("<rl>"))
            .collect();
        assert!(warnings.is_empty(), "{f:?}: {warnings:?}");
        assert!(!log.to_lowercase().contains("defrag"), "{f:?}:\n{log}");
        assert!(log.contains("<rl> commands registered"), "{f:?}:\n{log}");
    });
}

#[test]
fn loading_rl_twice_logs_why_it_fails() {
    for flavor in ALL {
        let mut server = Server::start_with(flavor, &["--enable-module-command", "yes"]);
        let mut c = server.conn();
        let module = flavor.module();
        // The same file, then a copy (another image, its API not yet taken).
        let copy = server.dir().join("librl-copy.so");
        std::fs::copy(&module, &copy).unwrap();
        for path in [module, copy] {
            let err = error_of(&mut c, &["MODULE", "LOAD", path.to_str().unwrap()]);
            assert!(
                err.to_lowercase().contains("error loading"),
                "{flavor:?}: {err}"
            );
        }
        let log = server.log();
        let why = "rl: a module named rl is already loaded; this one is not (MODULE UNLOAD rl first to replace it)";
        assert_eq!(log.matches(why).count(), 2, "{flavor:?}:\n{log}");
        // The loaded rl is untouched.
        assert_eq!(slide(&mut c, "k", 1, 600_000)[0], 1, "{flavor:?}");
        assert_eq!(slide(&mut c, "k", 1, 600_000)[0], 0, "{flavor:?}");
        server.assert_alive();
    }
}

#[test]
fn a_reloaded_rl_finds_its_acl_category_again() {
    // The server keeps a module's ACL categories after MODULE UNLOAD. The
    // pairings whose releases list the category's commands (Redis 7.0 has
    // no module categories: `harness::versions`).
    for flavor in [Flavor::Redis8, Flavor::Valkey9, Flavor::Valkey9Native] {
        let release = flavor.release();
        assert!(
            release.acl_cat_lists_module_commands(),
            "{flavor:?} is {release:?}, whose ACL CAT lists no module command"
        );
        let server = Server::start_with(flavor, &["--enable-module-command", "yes"]);
        let mut c = server.conn();
        let _: () = redis::cmd("MODULE")
            .arg(&["UNLOAD", "rl"])
            .query(&mut c)
            .unwrap();
        let _: () = redis::cmd("MODULE")
            .arg(&["LOAD", flavor.module().to_str().unwrap()])
            .query(&mut c)
            .unwrap();
        let cat: Vec<String> = redis::cmd("ACL")
            .arg(&["CAT", "ratelimit"])
            .query(&mut c)
            .unwrap();
        assert!(cat.contains(&"rl.slide".to_string()), "{flavor:?}: {cat:?}");
        let log = server.log();
        assert_eq!(
            log.matches("commands registered, ACL category @ratelimit added")
                .count(),
            2,
            "{flavor:?}:\n{log}"
        );
    }
}

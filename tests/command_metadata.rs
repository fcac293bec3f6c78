//! Every RL.* command carries its full declaration: COMMAND INFO (arity,
//! flags, its key spec), COMMAND DOCS (summary,
//! complexity, arguments with tokens, so redis-cli can show hints) and
//! COMMAND GETKEYS. And the native Valkey build loads as a native module.
mod common;

use common::resp::{field, items, pairs, text};
use common::*;
use redis::Value;

struct Expect {
    name: &'static str,
    arity: i64,
    write: bool,
    /// COMMAND INFO's legacy first key, last key, step.
    legacy: [i64; 3],
    /// A valid call's arguments after the command name.
    example: &'static [&'static str],
    /// What COMMAND GETKEYS finds in `example`.
    keys: &'static [&'static str],
    /// The documented argument names, in order.
    args: &'static [&'static str],
}

const COMMANDS: &[Expect] = &[
    Expect {
        name: "rl.slide",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "10", "1000"],
        keys: &["k"],
        args: &["key", "limit", "window", "cost"],
    },
    Expect {
        name: "rl.buckets",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "10", "1000"],
        keys: &["k"],
        args: &["key", "limit", "window", "ms", "cost"],
    },
    Expect {
        name: "rl.count",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "1000", "f"],
        keys: &["k"],
        args: &["key", "window", "field", "n", "ms"],
    },
    Expect {
        name: "rl.totals",
        arity: -3,
        write: false,
        legacy: [1, 1, 1],
        example: &["k", "1000"],
        keys: &["k"],
        args: &["key", "window", "ms"],
    },
    Expect {
        name: "rl.throttle",
        arity: -5,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "1", "10", "1000"],
        keys: &["k"],
        args: &["key", "max_burst", "count", "period", "quantity"],
    },
    Expect {
        name: "cl.throttle",
        arity: -5,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "1", "10", "60"],
        keys: &["k"],
        args: &["key", "max_burst", "count", "period", "quantity"],
    },
    Expect {
        name: "rl.fixed",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "10", "1000"],
        keys: &["k"],
        args: &["key", "limit", "window", "cost"],
    },
    Expect {
        name: "rl.peek",
        arity: -3,
        write: false,
        legacy: [2, 2, 1],
        example: &["SLIDE", "k", "10", "1000"],
        keys: &["k"],
        args: &["limiter", "key", "parameter"],
    },
    Expect {
        name: "rl.refund",
        arity: -3,
        write: true,
        legacy: [2, 2, 1],
        example: &["SLIDE", "k", "10", "1000"],
        keys: &["k"],
        args: &["limiter", "key", "parameter"],
    },
    Expect {
        name: "rl.acquire",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "3", "30000", "ID", "job-1"],
        keys: &["k"],
        args: &["key", "limit", "lease_ms", "id"],
    },
    Expect {
        name: "rl.release",
        arity: 3,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "job-1"],
        keys: &["k"],
        args: &["key", "lease"],
    },
    Expect {
        name: "rl.renew",
        arity: 4,
        write: true,
        legacy: [1, 1, 1],
        example: &["k", "job-1", "30000"],
        keys: &["k"],
        args: &["key", "lease", "lease_ms"],
    },
    Expect {
        name: "rl.all",
        arity: -4,
        write: true,
        legacy: [0, 0, 0],
        example: &["2", "a", "b", "SLIDE", "10", "1000", "FIXED", "5", "1000"],
        keys: &["a", "b"],
        args: &["numkeys", "key", "clause"],
    },
];

fn flags(entry: &[Value]) -> Vec<String> {
    items(&entry[2]).iter().map(text).collect()
}

#[test]
fn every_command_declares_arity_flags_key_spec_and_docs() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for e in COMMANDS {
            let info: Value = redis::cmd("COMMAND")
                .arg("INFO")
                .arg(e.name)
                .query(&mut c)
                .unwrap();
            let entry = items(&items(&info)[0]);
            assert_eq!(text(&entry[0]), e.name, "{f:?}");
            assert_eq!(text(&entry[1]), e.arity.to_string(), "{f:?} {}", e.name);
            let fl = flags(entry);
            if e.write {
                // A release frees memory: it must run when the server is
                // out of it.
                let denyoom = e.name != "rl.release";
                assert!(
                    fl.contains(&"write".into()) && fl.contains(&"denyoom".into()) == denyoom,
                    "{f:?} {}: {fl:?}",
                    e.name
                );
            } else {
                assert!(
                    fl.contains(&"readonly".into()) && !fl.contains(&"write".into()),
                    "{f:?} {}: {fl:?}",
                    e.name
                );
            }
            let legacy = [text(&entry[3]), text(&entry[4]), text(&entry[5])];
            assert_eq!(legacy, e.legacy.map(|n| n.to_string()), "{f:?} {}", e.name);
            let key_specs = items(&entry[8]);
            assert_eq!(key_specs.len(), 1, "{f:?} {}: one key spec", e.name);
            let spec_flags: Vec<String> = items(&field(&key_specs[0], "flags"))
                .iter()
                .map(text)
                .collect();
            let want = if e.write { "RW" } else { "RO" };
            assert!(
                spec_flags.contains(&want.into()),
                "{f:?} {}: {spec_flags:?}",
                e.name
            );

            let mut getkeys = redis::cmd("COMMAND");
            getkeys.arg("GETKEYS").arg(e.name).arg(e.example);
            let keys: Vec<String> = getkeys.query(&mut c).unwrap();
            assert_eq!(keys, e.keys, "{f:?} {}", e.name);

            let docs: Value = redis::cmd("COMMAND")
                .arg("DOCS")
                .arg(e.name)
                .query(&mut c)
                .unwrap();
            let doc = &pairs(&docs)[0].1;
            assert!(text(&field(doc, "summary")).len() > 20, "{f:?} {}", e.name);
            assert!(
                !text(&field(doc, "complexity")).is_empty(),
                "{f:?} {}",
                e.name
            );
            let names: Vec<String> = items(&field(doc, "arguments"))
                .iter()
                .map(|a| text(&field(a, "name")))
                .collect();
            assert_eq!(names, e.args, "{f:?} {}", e.name);
        }
        // Nothing registered that this table does not describe.
        let list: Vec<String> = redis::cmd("COMMAND")
            .arg("LIST")
            .arg("FILTERBY")
            .arg("MODULE")
            .arg("rl")
            .query(&mut c)
            .unwrap();
        let mut list: Vec<String> = list.into_iter().map(|n| n.to_lowercase()).collect();
        list.sort();
        let mut want: Vec<String> = COMMANDS.iter().map(|e| e.name.to_string()).collect();
        want.sort();
        assert_eq!(list, want, "{f:?}");
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

//! Every rl command carries its full declaration: COMMAND INFO (arity,
//! flags, its key spec: where the search begins and how keys are found),
//! COMMAND DOCS (summary, complexity, module, arguments with types, tokens
//! and flags, so redis-cli can show hints) and COMMAND GETKEYS. The keys
//! the server learns of a call are those of a call the command accepts:
//! RL.ALL reports none for a call it refuses.

use redis::Value;

use crate::harness::resp::{field, items, pairs, text};
use crate::harness::*;

/// How the key spec finds the keys after its begin index.
enum FindKeys {
    /// One key: `lastkey 0`, `keystep 1`.
    Range,
    /// A count at the begin index, the keys after it: `keynumidx 0`,
    /// `firstkey 1`, `keystep 1`.
    Keynum,
}

/// A documented argument: name, type, token and flags (none for a
/// required one).
struct Arg(
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static [&'static str],
);

struct Expect {
    name: &'static str,
    arity: i64,
    write: bool,
    /// COMMAND INFO's legacy first key, last key, step.
    legacy: [i64; 3],
    /// The key spec's begin-search index, and how it finds keys.
    begin: i64,
    find: FindKeys,
    /// Valid calls (the arguments after the command name) and the keys
    /// COMMAND GETKEYS finds in each.
    examples: &'static [(&'static [&'static str], &'static [&'static str])],
    args: &'static [Arg],
}

const OPTIONAL: &[&str] = &["optional"];

const COMMANDS: &[Expect] = &[
    Expect {
        name: "rl.slide",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[
            (&["k", "10", "1000"], &["k"]),
            (&["mykey", "10", "1000"], &["mykey"]),
            (&["mykey", "10", "1000", "COST", "2"], &["mykey"]),
            (
                &["mykey", "10", "1000", "WAIT", "100", "COST", "2"],
                &["mykey"],
            ),
        ],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("limit", "integer", None, &[]),
            Arg("window", "integer", None, &[]),
            Arg("cost", "integer", Some("COST"), OPTIONAL),
            Arg("ms", "integer", Some("BLOCK"), OPTIONAL),
            Arg("upto", "pure-token", Some("UPTO"), OPTIONAL),
            Arg("timeout_ms", "integer", Some("WAIT"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.buckets",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[
            (&["k", "10", "1000"], &["k"]),
            (&["k1", "10", "1000"], &["k1"]),
        ],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("limit", "integer", None, &[]),
            Arg("window", "integer", None, &[]),
            Arg("ms", "integer", Some("PRECISION"), OPTIONAL),
            Arg("cost", "integer", Some("COST"), OPTIONAL),
            Arg("ms", "integer", Some("BLOCK"), OPTIONAL),
            Arg("upto", "pure-token", Some("UPTO"), OPTIONAL),
            Arg("timeout_ms", "integer", Some("WAIT"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.count",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[
            (&["k", "1000", "f"], &["k"]),
            (&["k1", "10", "1000"], &["k1"]),
        ],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("window", "integer", None, &[]),
            Arg("field", "string", None, &[]),
            Arg("n", "integer", Some("BY"), OPTIONAL),
            Arg("ms", "integer", Some("PRECISION"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.totals",
        arity: -3,
        write: false,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[(&["k", "1000"], &["k"]), (&["k1", "10", "1000"], &["k1"])],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("window", "integer", None, &[]),
            Arg("ms", "integer", Some("PRECISION"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.throttle",
        arity: -5,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[
            (&["k", "1", "10", "1000"], &["k"]),
            (&["user:1", "1", "1", "1"], &["user:1"]),
        ],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("max_burst", "integer", None, &[]),
            Arg("count", "integer", None, &[]),
            Arg("period", "integer", None, &[]),
            Arg("quantity", "integer", None, OPTIONAL),
            Arg("ms", "integer", Some("BLOCK"), OPTIONAL),
            Arg("upto", "pure-token", Some("UPTO"), OPTIONAL),
            Arg("timeout_ms", "integer", Some("WAIT"), OPTIONAL),
        ],
    },
    Expect {
        name: "cl.throttle",
        arity: -5,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[
            (&["k", "1", "10", "60"], &["k"]),
            (&["user:1", "1", "1", "1"], &["user:1"]),
        ],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("max_burst", "integer", None, &[]),
            Arg("count", "integer", None, &[]),
            Arg("period", "integer", None, &[]),
            Arg("quantity", "integer", None, OPTIONAL),
        ],
    },
    Expect {
        name: "rl.fixed",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[(&["k", "10", "1000"], &["k"])],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("limit", "integer", None, &[]),
            Arg("window", "integer", None, &[]),
            Arg("cost", "integer", Some("COST"), OPTIONAL),
            Arg("ms", "integer", Some("BLOCK"), OPTIONAL),
            Arg("upto", "pure-token", Some("UPTO"), OPTIONAL),
            Arg("timeout_ms", "integer", Some("WAIT"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.block",
        arity: 4,
        write: true,
        legacy: [2, 2, 1],
        // The key after the limiter's name, as RL.PEEK's.
        begin: 2,
        find: FindKeys::Range,
        examples: &[
            (&["FIXED", "k", "1000"], &["k"]),
            (&["THROTTLE", "user:1", "60000"], &["user:1"]),
        ],
        args: &[
            Arg("limiter", "string", None, &[]),
            Arg("key", "key", None, &[]),
            Arg("ms", "integer", None, &[]),
        ],
    },
    Expect {
        name: "rl.unblock",
        arity: 3,
        write: true,
        legacy: [2, 2, 1],
        begin: 2,
        find: FindKeys::Range,
        examples: &[(&["FIXED", "k"], &["k"])],
        args: &[
            Arg("limiter", "string", None, &[]),
            Arg("key", "key", None, &[]),
        ],
    },
    Expect {
        name: "rl.peek",
        arity: -3,
        write: false,
        legacy: [2, 2, 1],
        // RL.PEEK's one key is at index 2, after the limiter's name.
        begin: 2,
        find: FindKeys::Range,
        examples: &[
            (&["SLIDE", "k", "10", "1000"], &["k"]),
            (&["SLIDE", "k", "1", "1"], &["k"]),
            (&["SLIDE", "k", "5", "1000"], &["k"]),
            (&["FIXED", "k", "5", "1000"], &["k"]),
            (&["THROTTLE", "k", "5", "1"], &["k"]),
        ],
        args: &[
            Arg("limiter", "string", None, &[]),
            Arg("key", "key", None, &[]),
            Arg("parameter", "string", None, &["optional", "multiple"]),
            Arg("oldest", "pure-token", Some("OLDEST"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.refund",
        arity: -3,
        write: true,
        legacy: [2, 2, 1],
        // RL.REFUND's one key is at index 2, after the limiter's name.
        begin: 2,
        find: FindKeys::Range,
        examples: &[
            (&["SLIDE", "k", "10", "1000"], &["k"]),
            (&["BUCKETS", "k", "10", "1000", "COST", "2"], &["k"]),
            (&["THROTTLE", "k", "5", "1", "1000"], &["k"]),
        ],
        args: &[
            Arg("limiter", "string", None, &[]),
            Arg("key", "key", None, &[]),
            Arg("parameter", "string", None, &["optional", "multiple"]),
        ],
    },
    Expect {
        name: "rl.charge",
        arity: -4,
        write: true,
        legacy: [2, 2, 1],
        // RL.CHARGE's one key is at index 2, after the limiter's name.
        begin: 2,
        find: FindKeys::Range,
        examples: &[
            (&["SLIDE", "k", "10", "1000", "COST", "30"], &["k"]),
            (&["THROTTLE", "k", "5", "1", "1000", "COST", "9"], &["k"]),
        ],
        args: &[
            Arg("limiter", "string", None, &[]),
            Arg("key", "key", None, &[]),
            Arg("parameter", "string", None, &["optional", "multiple"]),
            Arg("cost", "integer", Some("COST"), &[]),
        ],
    },
    Expect {
        name: "rl.acquire",
        arity: -4,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[
            (&["k", "3", "30000"], &["k"]),
            (&["k", "3", "30000", "ID", "job-1"], &["k"]),
            (&["k", "3", "30000", "ID", "job-1", "WAIT", "500"], &["k"]),
        ],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("limit", "integer", None, &[]),
            Arg("lease_ms", "integer", None, &[]),
            Arg("id", "string", Some("ID"), OPTIONAL),
            Arg("timeout_ms", "integer", Some("WAIT"), OPTIONAL),
        ],
    },
    Expect {
        name: "rl.release",
        arity: 3,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[(&["k", "job-1"], &["k"])],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("lease", "string", None, &[]),
        ],
    },
    Expect {
        name: "rl.renew",
        arity: 4,
        write: true,
        legacy: [1, 1, 1],
        begin: 1,
        find: FindKeys::Range,
        examples: &[(&["k", "job-1", "30000"], &["k"])],
        args: &[
            Arg("key", "key", None, &[]),
            Arg("lease", "string", None, &[]),
            Arg("lease_ms", "integer", None, &[]),
        ],
    },
    Expect {
        name: "rl.all",
        arity: -4,
        write: true,
        legacy: [0, 0, 0],
        begin: 1,
        find: FindKeys::Keynum,
        examples: &[
            (
                &["2", "a", "b", "SLIDE", "10", "1000", "FIXED", "5", "1000"],
                &["a", "b"],
            ),
            (
                &[
                    "3", "a", "b", "c", "SLIDE", "1", "1", "FIXED", "1", "1", "FIXED", "2", "2",
                ],
                &["a", "b", "c"],
            ),
        ],
        args: &[
            Arg("numkeys", "integer", None, &[]),
            Arg("key", "key", None, &["multiple"]),
            Arg("clause", "string", None, &["multiple"]),
        ],
    },
];

fn flags(entry: &[Value]) -> Vec<String> {
    items(&entry[2]).iter().map(text).collect()
}

fn texts(v: &Value) -> Vec<String> {
    items(v).iter().map(text).collect()
}

fn assert_key_spec(f: Flavor, e: &Expect, spec: &Value) {
    let bs = field(spec, "begin_search");
    assert_eq!(text(&field(&bs, "type")), "index", "{f:?} {}", e.name);
    assert_eq!(
        text(&field(&field(&bs, "spec"), "index")),
        e.begin.to_string(),
        "{f:?} {}",
        e.name
    );
    let fk = field(spec, "find_keys");
    let fs = field(&fk, "spec");
    let (kind, want): (&str, &[(&str, &str)]) = match e.find {
        FindKeys::Range => ("range", &[("lastkey", "0"), ("keystep", "1")]),
        FindKeys::Keynum => (
            "keynum",
            &[("keynumidx", "0"), ("firstkey", "1"), ("keystep", "1")],
        ),
    };
    assert_eq!(text(&field(&fk, "type")), kind, "{f:?} {}", e.name);
    for (name, value) in want {
        assert_eq!(text(&field(&fs, name)), *value, "{f:?} {} {name}", e.name);
    }
}

/// The versions CHANGELOG.md has a release heading for (`## 1.0.0 — date`),
/// read once for every command's docs.
fn released_versions() -> &'static [String] {
    static RELEASED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    RELEASED.get_or_init(|| {
        let log = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/CHANGELOG.md"))
            .expect("CHANGELOG.md");
        log.lines()
            .filter_map(|l| l.strip_prefix("## "))
            .filter_map(|h| h.split_whitespace().next())
            .filter(|v| v.split('.').count() == 3 && v.split('.').all(|n| n.parse::<u32>().is_ok()))
            .map(str::to_string)
            .collect()
    })
}

fn assert_docs(f: Flavor, e: &Expect, docs: &Value) {
    let all = pairs(docs);
    assert_eq!(all.len(), 1, "{f:?}: {docs:?}");
    let (name, doc) = &all[0];
    assert_eq!(name, e.name, "{f:?}");
    assert!(text(&field(doc, "summary")).len() > 20, "{f:?} {}", e.name);
    assert!(
        !text(&field(doc, "complexity")).is_empty(),
        "{f:?} {}",
        e.name
    );
    assert_eq!(text(&field(doc, "module")), "rl", "{f:?} {}", e.name);
    // `since` names a release users can install: one CHANGELOG.md has a
    // heading for (before 1.0.0 there was none to name).
    let since = text(&field(doc, "since"));
    assert!(
        released_versions().contains(&since),
        "{f:?} {}: since {since:?} is no release in CHANGELOG.md ({:?})",
        e.name,
        released_versions()
    );
    let args = field(doc, "arguments");
    let args = items(&args);
    let names: Vec<String> = args.iter().map(|a| text(&field(a, "name"))).collect();
    let want: Vec<&str> = e.args.iter().map(|a| a.0).collect();
    assert_eq!(names, want, "{f:?} {}", e.name);
    for (arg, Arg(name, kind, token, arg_flags)) in args.iter().zip(e.args) {
        let what = format!("{f:?} {} {name}", e.name);
        assert_eq!(text(&field(arg, "type")), *kind, "{what}");
        let has = |k: &str| pairs(arg).iter().any(|(n, _)| n == k);
        match token {
            Some(t) => assert_eq!(text(&field(arg, "token")), *t, "{what}"),
            None => assert!(!has("token"), "{what}: {arg:?}"),
        }
        if arg_flags.is_empty() {
            assert!(!has("flags"), "{what} must not be optional: {arg:?}");
        } else {
            assert_eq!(texts(&field(arg, "flags")), *arg_flags, "{what}");
        }
    }
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
                // A release, a refund or an unblock frees memory (none
                // grows a key): they must run when the server is out of it.
                let denyoom = !matches!(e.name, "rl.release" | "rl.refund" | "rl.unblock");
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
            let spec_flags = texts(&field(&key_specs[0], "flags"));
            let want = if e.write { "RW" } else { "RO" };
            assert!(
                spec_flags.contains(&want.into()),
                "{f:?} {}: {spec_flags:?}",
                e.name
            );
            assert_key_spec(f, e, &key_specs[0]);

            for (example, keys) in e.examples {
                let mut getkeys = redis::cmd("COMMAND");
                getkeys.arg("GETKEYS").arg(e.name).arg(*example);
                let got: Vec<String> = getkeys.query(&mut c).unwrap();
                assert_eq!(got, *keys, "{f:?} {} {example:?}", e.name);
            }

            let docs: Value = redis::cmd("COMMAND")
                .arg("DOCS")
                .arg(e.name)
                .query(&mut c)
                .unwrap();
            assert_docs(f, e, &docs);
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

fn getkeys(c: &mut redis::Connection, line: &[&str]) -> redis::RedisResult<Vec<String>> {
    redis::cmd("COMMAND").arg("GETKEYS").arg(line).query(c)
}

/// Lines RL.ALL refuses, with (part of) the error it answers.
pub const REFUSED: &[(&[&str], &str)] = &[
    // Fewer arguments than numkeys keys and clauses need.
    (&["5", "a", "SLIDE", "1", "1"], "wrong number of arguments"),
    // More keys than RL.ALL takes.
    (
        &[
            "17", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13",
            "k14", "k15", "k16", "k17", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1",
            "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE",
            "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1",
            "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE", "1", "1", "SLIDE",
            "1", "1",
        ],
        "numkeys",
    ),
    (&["0", "a", "SLIDE", "1", "1"], "numkeys"),
    (&["x", "a", "SLIDE", "1", "1"], "numkeys"),
    (&["2", "a", "b", "SLIDE", "1", "1"], "1 clause was given"),
    (
        &["2", "a", "a", "SLIDE", "1", "1", "SLIDE", "1", "1"],
        "its own key",
    ),
    (&["1", "a", "SLIDE", "0", "1"], "limit"),
];

/// `RL.ALL` and the words after it.
pub fn with_name<'a>(line: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["RL.ALL"];
    v.extend_from_slice(line);
    v
}

#[test]
fn getkeys_reports_no_keys_for_a_call_the_command_refuses() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for (line, want) in REFUSED {
            let line = with_name(line);
            let err = error_of(&mut c, &line);
            assert!(err.contains(want), "{f:?} {line:?}: {err}");
            let keys = getkeys(&mut c, &line);
            let err = keys.expect_err(&format!("{f:?} {line:?}: keys reported"));
            assert!(
                err.to_string().contains("Invalid arguments"),
                "{f:?} {line:?}: {err}"
            );
        }
        // Eight keys, the most RL.ALL takes: all of them.
        let keys: Vec<String> = (1..=8).map(|i| format!("k{i}")).collect();
        let mut line = vec!["RL.ALL".to_string(), "8".into()];
        line.extend(keys.iter().cloned());
        for _ in 0..8 {
            line.extend(["FIXED", "5", "1000"].map(String::from));
        }
        let line: Vec<&str> = line.iter().map(String::as_str).collect();
        assert_eq!(getkeys(&mut c, &line).unwrap(), keys, "{f:?}");
        assert_eq!(all(&mut c, &line[1..]).unwrap().allowed, 1, "{f:?}");
        // Too short to name a key: the server refuses before asking.
        let err = getkeys(&mut c, &["RL.PEEK", "SLIDE"]).unwrap_err();
        assert!(
            err.to_string().contains("number of arguments"),
            "{f:?}: {err}"
        );
    });
}

#[test]
fn getkeys_and_flags_say_each_rl_all_key_is_written() {
    // COMMAND GETKEYSANDFLAGS: Redis 7.0+, Valkey.
    on_every_server(|server| {
        let f = server.flavor;
        let line = [
            "RL.ALL", "2", "a", "b", "SLIDE", "1", "1", "FIXED", "1", "1",
        ];
        let v: Vec<(String, Vec<String>)> = redis::cmd("COMMAND")
            .arg("GETKEYSANDFLAGS")
            .arg(&line)
            .query(&mut server.conn())
            .unwrap();
        assert_eq!(v.len(), 2, "{f:?}: {v:?}");
        for ((key, flags), want) in v.iter().zip(["a", "b"]) {
            assert_eq!(key, want, "{f:?}");
            assert!(
                flags.contains(&"RW".to_string()) && flags.contains(&"update".to_string()),
                "{f:?}: {flags:?}"
            );
        }
    });
}

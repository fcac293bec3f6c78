//! RL.SLIDE is declared properly: COMMAND INFO / GETKEYS / DOCS, MODULE
//! LIST, and the flags and key spec doing their job (deny-oom, write,
//! ACL key patterns, Cluster slot routing).
mod common;

use std::time::Duration;

use common::resp::{field, items, pairs, text};
use common::*;
use redis::Value;

#[test]
fn command_info_declares_arity_flags_and_key_positions() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let info: Value = redis::cmd("COMMAND")
            .arg("INFO")
            .arg("rl.slide")
            .query(&mut c)
            .unwrap();
        let entry = &items(&info)[0];
        let e = items(entry);
        assert_eq!(text(&e[0]), "rl.slide", "{f:?}");
        assert_eq!(text(&e[1]), "-4", "{f:?}: arity");
        let flags: Vec<String> = items(&e[2]).iter().map(text).collect();
        assert!(flags.contains(&"write".to_string()), "{f:?}: {flags:?}");
        assert!(flags.contains(&"denyoom".to_string()), "{f:?}: {flags:?}");
        assert_eq!(
            (text(&e[3]), text(&e[4]), text(&e[5])),
            ("1".into(), "1".into(), "1".into()),
            "{f:?}: first/last/step key"
        );
        // The key spec: one read-write key found at index 1.
        let specs = items(&e[8]);
        assert_eq!(specs.len(), 1, "{f:?}: {specs:?}");
        let spec = &specs[0];
        let kflags: Vec<String> = items(&field(spec, "flags")).iter().map(text).collect();
        assert!(kflags.contains(&"RW".to_string()), "{f:?}: {kflags:?}");
        let bs = field(spec, "begin_search");
        assert_eq!(text(&field(&bs, "type")), "index", "{f:?}");
        assert_eq!(text(&field(&field(&bs, "spec"), "index")), "1", "{f:?}");
        let fk = field(spec, "find_keys");
        assert_eq!(text(&field(&fk, "type")), "range", "{f:?}");
        let range = field(&fk, "spec");
        assert_eq!(text(&field(&range, "lastkey")), "0", "{f:?}");
        assert_eq!(text(&field(&range, "keystep")), "1", "{f:?}");
    });
}

#[test]
fn command_getkeys_finds_the_key() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for line in [
            &["RL.SLIDE", "mykey", "10", "1000"][..],
            &["RL.SLIDE", "mykey", "10", "1000", "COST", "2"][..],
        ] {
            let keys: Vec<String> = redis::cmd("COMMAND")
                .arg("GETKEYS")
                .arg(line)
                .query(&mut c)
                .unwrap();
            assert_eq!(keys, ["mykey"], "{f:?}: {line:?}");
        }
    });
}

#[test]
fn command_docs_describe_the_arguments() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let docs: Value = redis::cmd("COMMAND")
            .arg("DOCS")
            .arg("rl.slide")
            .query(&mut c)
            .unwrap();
        let all = pairs(&docs);
        assert_eq!(all.len(), 1, "{f:?}: {docs:?}");
        let (name, doc) = &all[0];
        assert_eq!(name, "rl.slide", "{f:?}");
        let summary = text(&field(doc, "summary"));
        assert!(summary.len() > 20, "{f:?}: summary {summary:?}");
        assert_eq!(text(&field(doc, "module")), "rl", "{f:?}");
        let args = field(doc, "arguments");
        let args = items(&args);
        let names: Vec<String> = args.iter().map(|a| text(&field(a, "name"))).collect();
        assert_eq!(names, ["key", "limit", "window", "cost"], "{f:?}");
        let types: Vec<String> = args.iter().map(|a| text(&field(a, "type"))).collect();
        assert_eq!(types, ["key", "integer", "integer", "integer"], "{f:?}");
        let cost = &args[3];
        assert_eq!(text(&field(cost, "token")), "COST", "{f:?}");
        let cflags: Vec<String> = items(&field(cost, "flags")).iter().map(text).collect();
        assert_eq!(cflags, ["optional"], "{f:?}");
        for required in &args[..3] {
            let has_flags = pairs(required).iter().any(|(k, _)| k == "flags");
            assert!(!has_flags, "{f:?}: {required:?} must not be optional");
        }
    });
}

#[test]
fn module_list_shows_rl() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let list: Value = redis::cmd("MODULE").arg("LIST").query(&mut c).unwrap();
        let names: Vec<String> = items(&list)
            .iter()
            .map(|m| text(&field(m, "name")))
            .collect();
        assert!(names.contains(&"rl".to_string()), "{f:?}: {names:?}");
    });
}

/// `deny-oom`: over maxmemory the server refuses the call before it runs.
#[test]
fn over_maxmemory_the_command_is_refused() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        slide(&mut c, "oom", 5, 60_000);
        let before = frozen_state(&mut c, "oom");
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg(1)
            .query(&mut c)
            .unwrap();
        let err = slide_raw(&mut c, &[b"oom", b"5", b"60000"]).unwrap_err();
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg(0)
            .query(&mut c)
            .unwrap();
        assert!(error_text(&err).starts_with("OOM "), "{f:?}: {err:?}");
        assert_eq!(frozen_state(&mut c, "oom"), before, "{f:?}");
        assert_eq!(slide(&mut c, "oom", 5, 60_000)[0], 1, "{f:?}");
    });
}

/// `write`: read-only scripts may not call it.
#[test]
fn read_only_scripts_may_not_call_it() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let err = redis::cmd("EVAL_RO")
            .arg("return redis.call('RL.SLIDE', KEYS[1], 2, 1000)")
            .arg(1)
            .arg("ro")
            .query::<Value>(&mut c)
            .unwrap_err();
        assert!(
            error_text(&err).contains("Write commands are not allowed from read-only scripts"),
            "{f:?}: {err:?}"
        );
        let exists: i64 = redis::cmd("EXISTS").arg("ro").query(&mut c).unwrap();
        assert_eq!(exists, 0, "{f:?}");
    });
}

/// The key spec lets ACL key patterns govern the command.
#[test]
fn acl_key_patterns_apply_to_the_key() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut admin = server.conn();
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "limited", "on", ">pw", "~allowed:*", "+@all"])
            .query(&mut admin)
            .unwrap();
        let mut c = server.conn();
        let _: () = redis::cmd("AUTH")
            .arg("limited")
            .arg("pw")
            .query(&mut c)
            .unwrap();
        assert_eq!(slide(&mut c, "allowed:1", 5, 60_000)[0], 1, "{f:?}");
        let err = slide_raw(&mut c, &[b"other:1", b"5", b"60000"]).unwrap_err();
        assert!(error_text(&err).starts_with("NOPERM"), "{f:?}: {err:?}");
        let exists: i64 = redis::cmd("EXISTS")
            .arg("other:1")
            .query(&mut admin)
            .unwrap();
        assert_eq!(exists, 0, "{f:?}");
    });
}

/// In Cluster mode the server routes by the declared key: a key whose slot
/// this node does not serve is refused before the module runs.
#[test]
fn cluster_routes_by_the_key() {
    for flavor in ALL {
        let mut server = Server::start_with(
            flavor,
            &[
                "--cluster-enabled",
                "yes",
                "--cluster-require-full-coverage",
                "no",
            ],
        );
        let mut c = server.conn();
        let _: () = redis::cmd("CLUSTER")
            .arg(&["ADDSLOTSRANGE", "0", "8191"])
            .query(&mut c)
            .unwrap();
        let ok = wait_until(Duration::from_secs(10), || {
            let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
            info.contains("cluster_state:ok")
        });
        assert!(ok, "{flavor:?}: cluster did not become ok");
        let slot = |c: &mut redis::Connection, k: &str| -> i64 {
            redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(k)
                .query(c)
                .unwrap()
        };
        let names: Vec<String> = (0..64).map(|i| format!("user:{i}")).collect();
        let served = names
            .iter()
            .find(|k| slot(&mut c, k) < 8192)
            .expect("served key");
        let unserved = names
            .iter()
            .find(|k| slot(&mut c, k) >= 8192)
            .expect("unserved key");

        assert_eq!(slide(&mut c, served, 5, 60_000)[0], 1, "{flavor:?}");
        let err = slide_raw(&mut c, &[unserved.as_bytes(), b"5", b"60000"]).unwrap_err();
        assert!(
            error_text(&err).starts_with("CLUSTERDOWN"),
            "{flavor:?}: {err:?}"
        );
        server.assert_alive();
    }
}

//! ACL key patterns govern every command through its declared keys, and
//! the `@ratelimit` category grants every command where the server lets
//! modules add categories (see `harness::versions` for which releases do,
//! and which of them list the category's commands).

use crate::harness::all_commands::{every_command, words, COMMANDS};
use crate::harness::*;

#[test]
fn key_patterns_restrict_every_command_to_matching_keys() {
    on_every_server(|server| key_patterns_restrict_every_command(server));
}

pub fn key_patterns_restrict_every_command(server: &Server) {
    let f = server.flavor;
    let mut admin = server.conn();
    // Allowed RL.SLIDE by name only.
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "limited", "on", ">pw", "+rl.slide", "~rl:*"])
        .query(&mut admin)
        .unwrap();
    let mut c = server.conn_as("limited");
    assert_eq!(slide(&mut c, "rl:user:1", 5, 60_000)[0], 1, "{f:?}");
    let err = error_of(&mut c, &["RL.SLIDE", "other:1", "5", "60000"]);
    assert!(err.contains("NOPERM"), "{f:?}: {err}");
    assert_eq!(
        exists(&mut admin, &["other:1"]),
        0,
        "a refused call writes nothing"
    );
    // Every command allowed, keys by pattern.
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "patterned", "on", ">pw", "~allowed:*", "+@all"])
        .query(&mut admin)
        .unwrap();
    let mut c = server.conn_as("patterned");
    assert_eq!(slide(&mut c, "allowed:slide", 5, 60_000)[0], 1, "{f:?}");
    for line in every_command("allowed:") {
        run(&mut c, &words(&line)).unwrap_or_else(|e| panic!("{f:?} {line:?}: {e}"));
    }
    let refused = every_command("other:");
    for line in &refused {
        let err = err_text(run(&mut c, &words(line)));
        assert!(err.starts_with("NOPERM"), "{f:?} {line:?}: {err}");
    }
    let keys: Vec<String> = (0..refused.len()).map(|i| format!("other:{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    assert_eq!(exists(&mut admin, &keys), 0, "{f:?}: a refused call wrote");
}

#[test]
fn ratelimit_category_holds_every_command_where_the_server_supports_it() {
    on_every_server(|server| ratelimit_category_grants_every_command(server));
}

pub fn ratelimit_category_grants_every_command(server: &Server) {
    let f = server.flavor;
    let release = f.release();
    let mut admin = server.conn();
    let cat: redis::RedisResult<Vec<String>> = redis::cmd("ACL")
        .arg(&["CAT", "ratelimit"])
        .query(&mut admin);
    if release.module_acl_categories() {
        let cat = cat.unwrap();
        if release.acl_cat_lists_module_commands() {
            for name in COMMANDS {
                let name = name.to_lowercase();
                assert!(cat.contains(&name), "{f:?} {name}: {cat:?}");
            }
        } else {
            // Redis 7.4, Valkey 8.0: the listing leaves module commands
            // out; the grant below is what counts.
            assert!(cat.is_empty(), "{f:?} ({release:?}) lists {cat:?}");
        }
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "rater", "on", ">pw", "+@ratelimit", "~*"])
            .query(&mut admin)
            .unwrap();
        let mut c = server.conn_as("rater");
        assert_eq!(slide(&mut c, "k", 1, 1000)[0], 1);
        for line in every_command("rater:") {
            run(&mut c, &words(&line)).unwrap_or_else(|e| panic!("{f:?} {line:?}: {e}"));
        }
        let err = redis::cmd("GET")
            .arg("k")
            .query::<Option<String>>(&mut c)
            .unwrap_err();
        assert!(err.to_string().contains("NOPERM"), "{err}");
    } else {
        // Redis 7.0 to 7.3, Valkey 7.2: the module loaded, the category
        // is unknown.
        assert!(cat.is_err(), "{f:?}");
        assert!(server.log().contains("@ratelimit unavailable"));
    }
}

#[test]
fn acl_refuses_a_call_with_any_key_outside_the_pattern() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut admin = server.conn();
        let _: () = redis::cmd("ACL")
            .arg(&[
                "SETUSER", "limited", "on", ">pw", "+rl.all", "+rl.peek", "~rl:*",
            ])
            .query(&mut admin)
            .unwrap();
        let mut c = server.conn_as("limited");
        let ok = all(
            &mut c,
            &[
                "2", "rl:a", "rl:b", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        )
        .unwrap();
        assert_eq!(ok.allowed, 1, "{f:?}");
        for line in [
            [
                "2", "rl:c", "other:d", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
            [
                "2", "other:d", "rl:c", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        ] {
            let err = all(&mut c, &line).unwrap_err();
            assert!(err.to_string().contains("NOPERM"), "{f:?}: {err}");
        }
        assert_eq!(
            exists(&mut admin, &["rl:c", "other:d"]),
            0,
            "{f:?}: a refused call writes nothing"
        );
        // RL.PEEK only needs read access to its key.
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "reader", "on", ">pw", "+rl.peek", "%R~rl:*"])
            .query(&mut admin)
            .unwrap();
        let mut r = server.conn_as("reader");
        assert_eq!(peek(&mut r, &["SLIDE", "rl:a", "5", "1000"])[0], 1, "{f:?}");
        let err = run(&mut r, &["RL.PEEK", "SLIDE", "other:a", "5", "1000"]).unwrap_err();
        assert!(err.to_string().contains("NOPERM"), "{f:?}: {err}");
    });
}

#[test]
fn acl_lets_a_refused_call_reach_its_own_error() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut admin = server.conn();
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "limited", "on", ">pw", "+rl.all", "~rl:*"])
            .query(&mut admin)
            .unwrap();
        let mut c = server.conn_as("limited");
        // "SLIDE", "1" are not keys: the call's own error, not NOPERM.
        let err = error_of(&mut c, &["RL.ALL", "5", "rl:a", "SLIDE", "1", "1"]);
        assert!(err.contains("wrong number of arguments"), "{f:?}: {err}");
        // Valid calls are still checked key by key.
        let ok = [
            "RL.ALL", "2", "rl:a", "rl:b", "SLIDE", "5", "1000", "FIXED", "5", "1000",
        ];
        assert_eq!(all(&mut c, &ok[1..]).unwrap().allowed, 1, "{f:?}");
        let err = error_of(
            &mut c,
            &[
                "RL.ALL", "2", "rl:a", "other", "SLIDE", "5", "1000", "FIXED", "5", "1000",
            ],
        );
        assert!(err.contains("NOPERM"), "{f:?}: {err}");
    });
}

//! ACL key patterns and the @ratelimit category.
mod common;

use common::*;

fn user_conn(server: &Server, user: &str) -> redis::Connection {
    let url = format!("redis://{user}:pw@127.0.0.1:{}/", server.port);
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

fn has_module_acl_categories(flavor: Flavor) -> bool {
    // Redis 7.4+ and Valkey 8+ let modules add ACL categories; Redis 7.0 does not.
    flavor != Flavor::Redis7
}

#[test]
fn key_pattern_restricts_rl_commands_to_matching_keys() {
    on_every_server(|server| {
        let mut admin = server.conn();
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "limited", "on", ">pw", "+rl.slide", "~rl:*"])
            .query(&mut admin)
            .unwrap();
        let mut c = user_conn(server, "limited");
        assert_eq!(
            slide(&mut c, "rl:user:1", 5, 60_000)[0],
            1,
            "{:?}",
            server.flavor
        );
        let err = redis::cmd("RL.SLIDE")
            .arg(&["other:1", "5", "60000"])
            .query::<Vec<i64>>(&mut c)
            .unwrap_err();
        assert!(
            err.to_string().contains("NOPERM"),
            "{:?}: {err}",
            server.flavor
        );
        let exists: i64 = redis::cmd("EXISTS")
            .arg("other:1")
            .query(&mut admin)
            .unwrap();
        assert_eq!(exists, 0, "a refused call writes nothing");
    });
}

#[test]
fn ratelimit_category_where_the_server_supports_it() {
    on_every_server(|server| {
        let mut admin = server.conn();
        let cat: redis::RedisResult<Vec<String>> = redis::cmd("ACL")
            .arg(&["CAT", "ratelimit"])
            .query(&mut admin);
        if has_module_acl_categories(server.flavor) {
            let cat = cat.unwrap();
            assert!(
                cat.iter().any(|c| c == "rl.slide"),
                "{:?}: {cat:?}",
                server.flavor
            );
            let _: () = redis::cmd("ACL")
                .arg(&["SETUSER", "rater", "on", ">pw", "+@ratelimit", "~*"])
                .query(&mut admin)
                .unwrap();
            let mut c = user_conn(server, "rater");
            assert_eq!(slide(&mut c, "k", 1, 1000)[0], 1);
            let err = redis::cmd("GET")
                .arg("k")
                .query::<Option<String>>(&mut c)
                .unwrap_err();
            assert!(err.to_string().contains("NOPERM"), "{err}");
        } else {
            // Graceful on older servers: the module loaded, the category is unknown.
            assert!(cat.is_err(), "{:?}", server.flavor);
            assert!(server.log().contains("@ratelimit unavailable"));
        }
    });
}

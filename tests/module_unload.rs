//! `MODULE UNLOAD rl` works when nothing else holds the module: the commands
//! go away, the keys stay as plain values, and loading it again goes on from
//! that state.

mod common;

use common::all_commands::{assert_covers_every_layout, keyspace, mixed_traffic, COMMANDS};
use common::{Server, ALL};

fn module_names(c: &mut redis::Connection) -> Vec<String> {
    let list: Vec<Vec<redis::Value>> = redis::cmd("MODULE").arg("LIST").query(c).unwrap();
    list.iter()
        .filter_map(|m| {
            m.chunks(2).find_map(|kv| match (&kv[0], &kv[1]) {
                (redis::Value::BulkString(k), redis::Value::BulkString(v)) if k == b"name" => {
                    Some(String::from_utf8_lossy(v).into_owned())
                }
                (redis::Value::SimpleString(k), redis::Value::BulkString(v)) if k == "name" => {
                    Some(String::from_utf8_lossy(v).into_owned())
                }
                _ => None,
            })
        })
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

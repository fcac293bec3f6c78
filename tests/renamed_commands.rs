//! rl replicates its writes as plain commands (ZADD, ZREMRANGEBYRANK, HSET,
//! HDEL, SET, PEXPIREAT): on a server where one of them was renamed away,
//! replicas and the AOF would silently miss rl's writes, so rl refuses to
//! load there and says why.

mod common;

use common::limiters::error_of;
use common::{new_dir, Server, ALL};

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

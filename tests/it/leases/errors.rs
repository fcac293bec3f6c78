//! Argument errors name the argument and the command.

use super::err;
use crate::harness::*;

#[test]
fn errors_name_the_argument_and_the_command() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let cases: &[(&str, &[&str], &str)] = &[
            ("RL.ACQUIRE", &["k", "3"], "ERR wrong number of arguments for 'rl.acquire' command"),
            ("RL.ACQUIRE", &["k", "0", "100"], "ERR limit must be an integer from 1 to 1000000"),
            ("RL.ACQUIRE", &["k", "3", "x"], "ERR lease_ms must be an integer from 1 to 1000000000000"),
            ("RL.ACQUIRE", &["k", "3", "100", "ID"], "ERR ID needs a value"),
            ("RL.ACQUIRE", &["k", "3", "100", "ID", "42"], "ERR ID must be 1 to 64 printable ASCII characters without spaces, and not an integer"),
            ("RL.ACQUIRE", &["k", "3", "100", "COST", "1"], "ERR unknown option 'COST'"),
            ("RL.RELEASE", &["k"], "ERR wrong number of arguments for 'rl.release' command"),
            ("RL.RELEASE", &["k", "a b"], "ERR lease must be 1 to 64 printable ASCII characters without spaces, and not an integer"),
            ("RL.RENEW", &["k", "a"], "ERR wrong number of arguments for 'rl.renew' command"),
            ("RL.RENEW", &["k", "a", "0"], "ERR lease_ms must be an integer from 1 to 1000000000000"),
        ];
        for (name, args, want) in cases {
            assert_eq!(err(&mut c, name, args), *want, "{f:?} {name} {args:?}");
        }
        assert_eq!(pexpiretime(&mut c, "k"), -2, "{f:?}: nothing written");
    });
}

//! Keys expire on their own, never early: an admit moves the expiry to
//! the far end of the newest entry's (or bucket's) stay, replicated as
//! `PEXPIREAT` with that value, and idle keys of every command are removed
//! by the server's own expiry cycle.

use std::time::Duration;

use crate::harness::*;

#[test]
fn key_expires_when_newest_entry_leaves_the_window() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Slack: window / 4 = 200 ms.
        let window = 800;
        let mut expiry = -1;
        let mut moves = 0;
        for i in 0..8 {
            slide(&mut c, "e", 100, window);
            let newest = entries(&mut c, "e").last().expect("entries").1;
            let now_expiry = pexpiretime(&mut c, "e");
            // Never shorter than the newest entry's stay, never more than
            // the slack beyond it; when it moves, it moves to the far end.
            let needed = newest + window as i64;
            assert!(
                (needed..=needed + 200).contains(&now_expiry),
                "{f:?} after admit {i}: expiry {now_expiry}, needed {needed}"
            );
            if now_expiry != expiry {
                assert_eq!(now_expiry, needed + 200, "{f:?} after admit {i}");
                moves += 1;
            }
            expiry = now_expiry;
            server.advance(30);
        }
        if server.clock_stopped() {
            // Set by the first admit, moved by the eighth (210 ms later).
            assert_eq!(moves, 2, "{f:?}");
        }
        // A call with a shorter window needs less: the expiry stays.
        slide(&mut c, "e", 100, 400);
        assert_eq!(pexpiretime(&mut c, "e"), expiry, "{f:?}");
    });
}

/// `RL.SLIDE`, `RL.BUCKETS` and `RL.COUNT` keys: after every admit the
/// expiry lies between the end of the newest entry's or bucket's stay (its
/// score + window; `(newest + 1) * precision - 1 + window`, from the
/// header) and that plus `window / 4`, and when it
/// moves, it moves to exactly that far end. Each move reaches the AOF (fed
/// what replicas are fed) as `PEXPIREAT key <that ms>` and nothing else
/// sets the key's expiry there; a replica without rl holds the same
/// `PEXPIRETIME`.
#[test]
fn keys_expire_at_the_far_end_of_their_newest_entry_or_bucket_replicated_as_pexpireat() {
    for flavor in ALL {
        let primary =
            Server::start_primary(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let replica = primary.start_replica(false);
        let mut c = primary.conn();
        // Window 800 ms of 100 ms buckets: slack 200.
        let (window, precision, slack) = (800i64, 100i64, 200i64);
        let (w, p) = (window.to_string(), precision.to_string());
        let lines: [(&str, Vec<&str>); 3] = [
            ("ex:slide", vec!["RL.SLIDE", "ex:slide", "100", &w]),
            (
                "ex:buckets",
                vec!["RL.BUCKETS", "ex:buckets", "100", &w, "PRECISION", &p],
            ),
            (
                "ex:count",
                vec!["RL.COUNT", "ex:count", &w, "ok", "PRECISION", &p],
            ),
        ];
        for (key, line) in &lines {
            // The newest entry's time, or the newest bucket's last ms.
            let newest = |c: &mut redis::Connection| match line[0] {
                "RL.SLIDE" => entries(c, key).last().expect("entries").1,
                _ => {
                    let h = header(c, key);
                    (h.newest + 1) * h.precision - 1
                }
            };
            let mut moves = Vec::new();
            let mut expiry = -1;
            // 9 steps of at least 40 ms: the newest bucket moves on by at
            // least 3, past the first expiry's slack.
            for i in 0..10 {
                run(&mut c, line).unwrap();
                let needed = newest(&mut c) + window;
                let now_expiry = pexpiretime(&mut c, key);
                assert!(
                    (needed..=needed + slack).contains(&now_expiry),
                    "{flavor:?} {key} after admit {i}: expiry {now_expiry}, needed {needed}"
                );
                if now_expiry != expiry {
                    assert_eq!(
                        now_expiry,
                        needed + slack,
                        "{flavor:?} {key} after admit {i}"
                    );
                    moves.push(now_expiry);
                }
                expiry = now_expiry;
                primary.advance(40);
            }
            assert!(moves.len() >= 2, "{flavor:?} {key}: moves {moves:?}");
            let logged: Vec<i64> = aof_commands(primary.dir())
                .into_iter()
                .filter(|cmd| cmd.get(1).map(Vec::as_slice) == Some(key.as_bytes()))
                .filter_map(|cmd| {
                    let name = String::from_utf8_lossy(&cmd[0]).to_ascii_uppercase();
                    assert!(
                        !["EXPIRE", "PEXPIRE", "EXPIREAT", "SETEX", "PSETEX", "SET"]
                            .contains(&name.as_str()),
                        "{flavor:?} {key}: {name} in the AOF"
                    );
                    (name == "PEXPIREAT").then(|| String::from_utf8_lossy(&cmd[2]).parse().unwrap())
                })
                .collect();
            assert_eq!(logged, moves, "{flavor:?} {key}: PEXPIREAT in the AOF");
            wait_replicas(&mut c, 1);
            assert_eq!(
                pexpiretime(&mut replica.conn(), key),
                expiry,
                "{flavor:?} {key}: the replica's expiry"
            );
        }
    }
}

/// On the real clock of every server: nothing but the server's expiry
/// cycle removes the keys (DBSIZE touches none of them).
#[test]
fn idle_keys_of_every_command_vanish_on_their_own() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        slide_cost(&mut c, "idle", 5, 200, 3);
        assert_eq!(zcard(&mut c, "idle"), 3, "{f:?}");
        buckets(&mut c, "idle-b", &["5", "200", "PRECISION", "50"]).unwrap();
        count(&mut c, "idle-c", 200, "ok", &[]).unwrap();
        throttle(&mut c, "idle-t", [0, 1, 200], None);
        cl_throttle(&mut c, "idle-cl", [0, 1, 1], None);
        fixed(&mut c, "idle-f", 5, 200, None);
        let keys = ["idle", "idle-b", "idle-c", "idle-t", "idle-cl", "idle-f"];
        assert_eq!(exists(&mut c, &keys), 6, "{f:?}");
        let gone = wait_until(Duration::from_secs(5), || dbsize(&mut c) == 0);
        assert!(gone, "{f:?}: idle keys still there after 5 s");
        assert_eq!(exists(&mut c, &keys), 0, "{f:?}");
    });
}

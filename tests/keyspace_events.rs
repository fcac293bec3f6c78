//! Admissions fire the keyspace events of the plain commands they replicate
//! as (so subscribers see rl's writes like any other); denials and peeks
//! fire none.
mod common;

use std::time::Duration;

use common::*;

/// Every `(event, key)` published until the stream stays quiet for 300 ms.
fn drain(pubsub: &mut redis::PubSub) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    while let Ok(msg) = pubsub.get_message() {
        let event = msg
            .get_channel_name()
            .rsplit(':')
            .next()
            .unwrap()
            .to_string();
        seen.push((event, msg.get_payload::<String>().unwrap()));
    }
    seen
}

fn call(c: &mut redis::Connection, args: &[&str]) {
    let _: redis::Value = redis::cmd(args[0]).arg(&args[1..]).query(c).unwrap();
}

#[test]
fn admissions_fire_the_plain_commands_events_and_denials_fire_none() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let _: () = redis::cmd("CONFIG")
            .arg(&["SET", "notify-keyspace-events", "KEA"])
            .query(&mut c)
            .unwrap();
        let mut sub = server.conn();
        sub.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut pubsub = sub.as_pubsub();
        pubsub.psubscribe("__keyevent@0__:*").unwrap();

        let cases: &[(&[&str], &[&str])] = &[
            (&["RL.SLIDE", "s", "1", "60000"], &["zadd", "expire"]),
            (&["RL.BUCKETS", "b", "1", "60000"], &["hset", "expire"]),
            (&["RL.COUNT", "c", "60000", "ok"], &["hset", "expire"]),
            (&["RL.THROTTLE", "t", "0", "1", "60000"], &["set", "expire"]),
            (&["RL.FIXED", "x", "1", "60000"], &["set", "expire"]),
        ];
        for (args, events) in cases {
            call(&mut c, args);
            let key = args[1].to_string();
            let want: Vec<(String, String)> = events
                .iter()
                .map(|e| (e.to_string(), key.clone()))
                .collect();
            assert_eq!(drain(&mut pubsub), want, "{f:?} {}", args[0]);
        }
        // The same calls again are denied (limit 1), and peeks never write.
        for (args, _) in cases.iter().filter(|(a, _)| a[0] != "RL.COUNT") {
            call(&mut c, args);
        }
        call(&mut c, &["RL.PEEK", "SLIDE", "s", "5", "60000"]);
        call(&mut c, &["RL.TOTALS", "c", "60000"]);
        assert_eq!(
            drain(&mut pubsub),
            [],
            "{f:?}: denials and reads fire nothing"
        );
    });
}

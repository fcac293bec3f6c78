//! Hashes rl could have written (forged at their edges) and hashes it could
//! not have (foreign): read alike by both editions, the foreign ones
//! refused and left as they were.

use std::collections::BTreeMap;

use super::{forge, s};
use crate::functions::differential::same;
use crate::functions::start_both;
use crate::harness::Flavor;

/// Foreign and forged hashes for key `x`, around bucket `n` of 100 ms
/// buckets: (fields, with a TTL).
pub(super) fn forged_states(now_ms: i64) -> Vec<(Vec<(String, String)>, bool)> {
    let n = now_ms / 100;
    let h = |v: String| (s("h"), v);
    let f = |k: &str, v: &str| (s(k), s(v));
    let wide = "1".repeat(501);
    vec![
        (vec![f("name", "value")], true),
        (vec![h(format!("b,100,{n},0,1,1"))], false),
        (vec![h(format!("z,100,{n},0,1,1"))], true),
        (vec![h(format!("b,0,{n},0,1,1"))], true),
        (vec![h(format!("b,-100,{n},0,1,1"))], true),
        (vec![h(format!("b,100,{n},0,1"))], true),
        (vec![h(format!("b,100,{n},0,1,1,"))], true),
        (vec![h(s("b,100,99999999999999999,0,1,1"))], true),
        (vec![h(format!("b,100,{n},G,1,1"))], true),
        (vec![h(format!("b,100,{n},F,1,1"))], true),
        (vec![h(format!("b,100,{n},{wide},1,1"))], true),
        (vec![h(format!("b,100,{n},0,1000000000000000000,1"))], true),
        (vec![h(format!("b,100,{n},0,-1,1"))], true),
        (vec![h(format!("b,100,{n},0,1x,1"))], true),
        // Blocks: held, ended, alone, and shapes rl does not write.
        (vec![h(format!("b,100,{n},0,1,1,b{}", now_ms + 500))], true),
        (vec![h(format!("b,100,{n},0,1,1,b{}", now_ms - 500))], true),
        (vec![h(format!("b,b{}", now_ms + 500))], true),
        (vec![h(format!("c,b{}", now_ms + 500))], true),
        (vec![h(format!("b,100,{n},0,1,1,b"))], true),
        (vec![h(format!("b,100,{n},0,1,1,b1,b2"))], true),
        (vec![h(format!("b,100,{n},0,1,b{}", now_ms + 500))], true),
        (vec![h(s("b,100,5,0,1,1,b1000000000000000"))], true),
        (vec![h(format!("b,b{},1", now_ms + 500))], true),
        // A bucket field that is not counts: refused when a call reads it.
        (
            vec![h(format!("b,100,{n},1,5,3")), f(&(n - 1).to_string(), "x")],
            true,
        ),
        (
            vec![
                h(format!("b,100,{n},1,5,3")),
                f(&(n - 1).to_string(), "1,1"),
            ],
            true,
        ),
        // A stale bucket counting more than the stored total: the total
        // without it saturates at 0.
        (
            vec![
                h(format!("b,100,{n},100003,2,0")),
                f(&(n - 1).to_string(), "1"),
                f(&(n - 2).to_string(), "1"),
                f(&(n - 21).to_string(), "7"),
            ],
            true,
        ),
        // Counts padded as releases before 0.2 wrote them.
        (
            vec![
                h(format!("b,100,{n},1,000000005,000000003")),
                f(&(n - 1).to_string(), "000000002"),
            ],
            true,
        ),
        (
            vec![
                h(format!("b,0100,{},5,-0,000000004", n - 2)),
                f(&(n - 3).to_string(), "000000000"),
                f(&(n - 5).to_string(), "7"),
            ],
            true,
        ),
        // Huge counts: a denial with the largest totals rl reads.
        (
            vec![
                h(format!("b,100,{n},3,999999999999999999,999999999999999999")),
                f(&(n - 1).to_string(), "18446744073709551615"),
                f(&(n - 2).to_string(), "18446744073709551615"),
            ],
            true,
        ),
        (vec![h(format!("b,100,{n},0,18446744073709551615,1"))], true),
        // A newest bucket ahead of the clock (a clock that stepped back):
        // new events go into it.
        (
            vec![
                h(format!("b,100,{},1,5,3", n + 50)),
                f(&(n + 49).to_string(), "2"),
            ],
            true,
        ),
        (
            vec![
                h(format!("c,100,{},0,3", n + 50)),
                f("f", "ok"),
                f(&(n + 50).to_string(), "3"),
            ],
            true,
        ),
        // More names than rl writes (ten): still read, sorted alike.
        (
            vec![
                h(format!("c,100,{n},0,1,2,3,4,5,6,7,8,9,10")),
                f("f", "j,i,h,g,f,e,d,c,b,a"),
                f(&n.to_string(), "1,2,3,4,5,6,7,8,9,10"),
            ],
            true,
        ),
        // RL.COUNT layouts.
        (vec![h(format!("c,100,{n},0,1"))], true),
        (vec![h(format!("c,100,{n},0,1,2")), f("f", "ok")], true),
        (
            vec![
                h(format!("c,100,{n},1,000000004,000000002")),
                f("f", "ok,bad"),
                f(&n.to_string(), "000000001,000000001"),
                f(&(n - 1).to_string(), "000000003"),
            ],
            true,
        ),
        (
            vec![
                h(format!("c,100,{n},0,4")),
                f("f", "ok"),
                f(&n.to_string(), "1,2"),
            ],
            true,
        ),
        (
            vec![
                h(format!("c,100,{n},0,1,2,3")),
                f("f", "zz,,aa"),
                f(&n.to_string(), "1,2,3"),
            ],
            true,
        ),
    ]
}

pub(super) fn forge_x(c: &mut redis::Connection, state: &(Vec<(String, String)>, bool), now: i64) {
    let fields: Vec<(&str, &str)> = state
        .0
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    forge(c, "x", &fields, state.1.then_some(now + 3_600_000));
}

/// Every forged or foreign hash, under every command and after clock steps.
#[test]
fn forged_and_foreign_hashes_are_read_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let lines: Vec<Vec<&str>> = vec![
        vec!["RL.BUCKETS", "x", "10", "1000", "PRECISION", "100"],
        vec!["RL.BUCKETS", "x", "10", "1000"],
        vec!["RL.BUCKETS", "x", "10", "1000", "PRECISION", "50"],
        vec!["RL.BUCKETS", "x", "1000", "100000", "COST", "7"],
        vec!["RL.PEEK", "BUCKETS", "x", "2", "1000"],
        vec!["RL.REFUND", "BUCKETS", "x", "10", "1000", "COST", "4"],
        vec!["RL.COUNT", "x", "1000", "ok"],
        vec!["RL.COUNT", "x", "1000", "new", "BY", "3"],
        vec!["RL.TOTALS", "x", "1000"],
        vec!["RL.TOTALS", "x", "100000"],
        vec![
            "RL.ALL", "2", "x", "y", "BUCKETS", "10", "1000", "BUCKETS", "1", "10",
        ],
        vec!["RL.BUCKETS", "x", "1", "1000", "BLOCK", "700"],
        vec!["RL.CHARGE", "BUCKETS", "x", "10", "1000", "COST", "3"],
        vec!["RL.BLOCK", "BUCKETS", "x", "300"],
        vec!["RL.UNBLOCK", "BUCKETS", "x"],
    ];
    let mut outcomes = BTreeMap::new();
    for i in 0..forged_states(0).len() {
        for line in &lines {
            for step in [0, 150, 900] {
                // Forged around the clock's bucket now (the clock moves on
                // through the loop), so the calls read its fields.
                let state = &forged_states(server.clock_ms())[i];
                forge_x(&mut c, state, server.clock_ms());
                server.advance(step);
                let reply = same(&mut c, line);
                let kind = match &reply {
                    Ok(_) => "ok".to_string(),
                    Err(e) => e.clone(),
                };
                *outcomes.entry(kind).or_insert(0) += 1;
            }
        }
    }
    for want in [
        "ok",
        "ERR key holds a hash that rl did not write",
        "ERR key holds RL.COUNT state, not RL.BUCKETS state",
        "ERR key holds RL.BUCKETS state, not RL.COUNT state",
        "ERR PRECISION differs from the key's bucket width (100 ms)",
    ] {
        assert!(outcomes.contains_key(want), "{want}: {outcomes:?}");
    }
}

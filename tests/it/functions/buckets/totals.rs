//! RL.COUNT's and RL.TOTALS' totals: stored exactly past 2^53, replied as
//! name/total pairs in RESP2 and RESP3 alike.

use redis::Value;

use super::forge;
use crate::functions::differential::{both, pairs_sorted, same};
use crate::functions::start_both;
use crate::harness::Flavor;

fn total_of(v: &Value, name: &str) -> Value {
    let items = crate::harness::resp::items(v);
    for pair in items.chunks(2) {
        if crate::harness::resp::text(&pair[0]) == name {
            return pair[1].clone();
        }
    }
    panic!("{name} not in {v:?}")
}

/// RL.COUNT totals past 2^53: the stored counts are exact decimals in both
/// editions; the library's reply is the nearest double (a Lua reply cannot
/// carry more), exact for multiples of 10^15.
#[test]
fn count_totals_past_2_pow_53_are_stored_exactly() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let by = "1000000000000000";
    // 20 × 10^15 = 2 × 10^16 > 2^53: exact doubles, so equal replies.
    for _ in 0..20 {
        same(&mut c, &["RL.COUNT", "k", "60000", "bytes", "BY", by]).unwrap();
    }
    let t = same(&mut c, &["RL.TOTALS", "k", "60000"]).unwrap();
    assert_eq!(total_of(&t, "bytes"), Value::Int(20_000_000_000_000_000));
    // One more: 2 × 10^16 + 1 has no double.
    let (m, f) = both(&mut c, &["RL.COUNT", "k", "60000", "bytes", "BY", "1"]);
    assert_eq!(m.state, f.state, "the stored counts are the same");
    assert_eq!(
        total_of(m.reply.as_ref().unwrap(), "bytes"),
        Value::Int(20_000_000_000_000_001)
    );
    assert_eq!(
        total_of(f.reply.as_ref().unwrap(), "bytes"),
        Value::Int(20_000_000_000_000_000)
    );
    // Next to the largest total: forged counts, then BY to exactly the
    // largest, then past it (refused by both, nothing written).
    let now = server.clock_ms();
    let n = (now / 1000).to_string();
    forge(
        &mut c,
        "big",
        &[
            ("h", &format!("c,1000,{n},0,999999999999999000,5")),
            ("f", "big,small"),
            (&n, "999999999999999000,5"),
        ],
        Some(now + 100_000),
    );
    let (m, f) = both(&mut c, &["RL.COUNT", "big", "60000", "big", "BY", "999"]);
    assert_eq!(m.state, f.state);
    assert_eq!(
        total_of(m.reply.as_ref().unwrap(), "big"),
        Value::Int(999_999_999_999_999_999)
    );
    assert_eq!(
        total_of(f.reply.as_ref().unwrap(), "big"),
        Value::Int(1_000_000_000_000_000_000)
    );
    assert_eq!(
        same(&mut c, &["RL.COUNT", "big", "60000", "big", "BY", "1"]).unwrap_err(),
        "ERR BY would take the field's total over the window past 999999999999999999"
    );
    let (m, f) = both(&mut c, &["RL.COUNT", "big", "60000", "small", "BY", "1"]);
    assert_eq!(m.state, f.state);
    assert_eq!(total_of(f.reply.as_ref().unwrap(), "small"), Value::Int(6));
    // Next to 2^53: exact.
    forge(
        &mut c,
        "edge",
        &[
            ("h", &format!("c,1000,{n},0,9007199254740990")),
            ("f", "e"),
            (&n, "9007199254740990"),
        ],
        Some(now + 100_000),
    );
    let r = same(&mut c, &["RL.COUNT", "edge", "60000", "e", "BY", "2"]).unwrap();
    assert_eq!(total_of(&r, "e"), Value::Int(9_007_199_254_740_992));
    // After the window the big bucket leaves: 0 again, equal.
    server.advance(61_000);
    let t = same(&mut c, &["RL.TOTALS", "big", "60000"]).unwrap();
    assert_eq!(total_of(&t, "big"), Value::Int(0));
    same(&mut c, &["RL.COUNT", "big", "60000", "big"]).unwrap();
}

/// RL.TOTALS / RL.COUNT reply name/total pairs: a flat array in RESP2, a
/// map in RESP3, the module's as maps; the ninth name is refused.
#[test]
fn totals_are_name_total_pairs_in_resp2_and_resp3() {
    let server = start_both(Flavor::Valkey9);
    let mut c2 = server.conn();
    let mut c3 = server.conn_resp3();
    let names = ["zeta", "alpha", "mid", "beta", "x1", "x2", "q", "omega"];
    for (i, name) in names.iter().enumerate() {
        let by = (i + 1).to_string();
        same(&mut c2, &["RL.COUNT", "k", "60000", name, "BY", &by]).unwrap();
        same(&mut c3, &["RL.COUNT", "k3", "60000", name]).unwrap();
        same(&mut c3, &["RL.TOTALS", "k", "60000"]).unwrap();
        server.advance(700);
    }
    let t2 = same(&mut c2, &["RL.TOTALS", "k", "60000"]).unwrap();
    // Each name once with its total, in an order left unspecified.
    let mut got: Vec<(String, i64)> = crate::harness::resp::items(&t2)
        .chunks(2)
        .map(|p| {
            (
                crate::harness::resp::text(&p[0]),
                redis::from_redis_value(&p[1]).unwrap(),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, i64)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), i as i64 + 1))
        .collect();
    want.sort();
    assert_eq!(got, want);
    let t3 = same(&mut c3, &["RL.TOTALS", "k", "60000"]).unwrap();
    assert!(matches!(t3, Value::Map(_)), "{t3:?}");
    assert_eq!(
        same(&mut c3, &["RL.COUNT", "k", "60000", "ninth"]).unwrap_err(),
        "ERR key already counts 8 fields, the most it may hold"
    );
    // A missing key: an empty array / map; read-only through FCALL_RO.
    assert_eq!(
        same(&mut c2, &["RL.TOTALS", "none", "1000"]).unwrap(),
        Value::Array(vec![])
    );
    assert_eq!(
        same(&mut c3, &["RL.TOTALS", "none", "1000"]).unwrap(),
        Value::Map(vec![])
    );
    let ro: Value = redis::cmd("FCALL_RO")
        .arg("rl_totals")
        .arg(1)
        .arg("f:k")
        .arg(60000)
        .query(&mut c2)
        .unwrap();
    assert_eq!(pairs_sorted("RL.TOTALS", Ok(ro)), Ok(t2));
}

/// On Redis too (whose Lua hashes strings otherwise than Valkey's), the
/// totals are the module's, compared as maps.
#[test]
fn redis_totals_are_the_modules_as_maps() {
    for flavor in [Flavor::Redis7, Flavor::Redis8] {
        let server = start_both(flavor);
        let mut c2 = server.conn();
        let mut c3 = server.conn_resp3();
        let names = ["zeta", "alpha", "mid", "beta", "x1", "x2", "q", "omega"];
        for name in names {
            let (m, f) = both(&mut c2, &["RL.COUNT", "k", "1000000000", name]);
            assert_eq!(m.reply, f.reply, "{flavor:?}");
        }
        for c in [&mut c2, &mut c3] {
            let (m, f) = both(c, &["RL.TOTALS", "k", "1000000000"]);
            assert_eq!(m.reply, f.reply, "{flavor:?}");
        }
    }
}

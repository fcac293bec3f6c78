//! Leases under server conditions: maxmemory, RESP3, a clock stepped back
//! and forward.

use redis::Value;

use crate::functions::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{run, server_ms, Flavor};

use super::{check, check_on, ints, lit, same, words, Ids, Word};

#[test]
fn release_runs_at_maxmemory_acquire_and_renew_do_not() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    same(c, &["RL.ACQUIRE", "k", "3", "60000", "ID", "a"]).unwrap();
    same(c, &["RL.ACQUIRE", "k", "3", "60000", "ID", "b"]).unwrap();
    run(c, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]).unwrap();
    run(c, &["CONFIG", "SET", "maxmemory", "1"]).unwrap();
    let acquire = same(c, &["RL.ACQUIRE", "k", "3", "60000", "ID", "c"]).unwrap_err();
    assert!(acquire.starts_with("OOM"), "{acquire}");
    let renew = same(c, &["RL.RENEW", "k", "a", "60000"]).unwrap_err();
    assert!(renew.starts_with("OOM"), "{renew}");
    assert_eq!(ints(&same(c, &["RL.RELEASE", "k", "a"]).unwrap())[0], 1);
    run(c, &["CONFIG", "SET", "maxmemory", "0"]).unwrap();
    same(c, &["RL.RELEASE", "k", "b"]).unwrap();
}

/// Over RESP3 too, a denied acquire's lease is the same null, and an
/// admitted one's id a bulk string (Lua's false is the null reply).
#[test]
fn replies_agree_over_resp3() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn_resp3();
    let c2 = &mut server.conn();
    let ids = &mut Ids::default();
    let lines: [&[&str]; 7] = [
        &["RL.ACQUIRE", "k", "1", "1000", "ID", "a"],
        &["RL.ACQUIRE", "k", "1", "1000"],
        &[
            "RL.ALL", "2", "k", "j", "ACQUIRE", "1", "1000", "ACQUIRE", "2", "1000",
        ],
        &["RL.ALL", "1", "j", "ACQUIRE", "2", "1000"],
        &["RL.RENEW", "k", "a", "5000"],
        &["RL.RELEASE", "k", "a"],
        &["RL.ACQUIRE", "k", "1", "1000"],
    ];
    let mut replies = Vec::new();
    for line in lines {
        replies.push(check_on(c, Some(&mut *c2), ids, &words(line), true).unwrap());
    }
    let Value::Array(denied) = &replies[1] else {
        panic!("{:?}", replies[1])
    };
    assert_eq!(denied[4], Value::Nil);
    let Value::Array(all) = &replies[2] else {
        panic!()
    };
    assert_eq!(
        all[3],
        Value::Array(vec![
            Value::Int(1),
            Value::Int(1),
            Value::Int(0),
            Value::Int(1000),
            Value::Nil
        ])
    );
    assert_eq!(
        ids.pairs.len(),
        2,
        "the ids of RL.ALL and of the last acquire"
    );
}

/// A clock stepped back (a failover onto a replica behind): leases taken
/// "later" stay held, a renewal never shortens, new ids start with the
/// earlier ms; both editions alike, step by step.
#[test]
fn a_clock_stepped_back_and_forward() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let ids = &mut Ids::default();
    let t0 = server.clock_ms();
    let mut rng = XorShift(7);
    let mut at = t0;
    for step in 0..300 {
        let move_ms = [-5000i64, -1000, -1, 0, 0, 1, 3, 100, 999, 2000];
        at += move_ms[rng.below(move_ms.len() as u64) as usize];
        if rng.below(3) == 0 {
            server.set_clock(at);
            assert_eq!(server_ms(c), at, "step {step}");
        }
        let key = ["a", "b"][rng.below(2) as usize];
        let gen =
            (!ids.pairs.is_empty()).then(|| Word::Gen(rng.below(ids.pairs.len() as u64) as usize));
        let id = match (rng.below(3), gen) {
            (0, Some(g)) => g,
            _ => lit(["w1", "w2", "w3"][rng.below(3) as usize]),
        };
        let ms = ["1", "50", "1000", "3000", "20000"][rng.below(5) as usize];
        let limit = (1 + rng.below(4)).to_string();
        let line = match rng.below(5) {
            0 => vec![lit("RL.ACQUIRE"), lit(key), Word::Lit(limit), lit(ms)],
            1 => vec![
                lit("RL.ACQUIRE"),
                lit(key),
                Word::Lit(limit),
                lit(ms),
                lit("ID"),
                id,
            ],
            2 => vec![lit("RL.RELEASE"), lit(key), id],
            3 => vec![lit("RL.RENEW"), lit(key), id, lit(ms)],
            _ => vec![
                lit("RL.PEEK"),
                lit("ACQUIRE"),
                lit(key),
                Word::Lit(limit),
                lit(ms),
            ],
        };
        let _ = check(c, ids, &line, true);
    }
    assert!(ids.pairs.len() > 10, "{} generated ids", ids.pairs.len());
}

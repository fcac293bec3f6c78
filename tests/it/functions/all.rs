//! `rl_all`, `rl_peek`, `rl_refund` and `rl_charge`, the functions that
//! dispatch to the limiters, against RL.ALL, RL.PEEK, RL.REFUND and
//! RL.CHARGE: random multi-limit
//! streams on Valkey's stopped clock, and every error of their own syntax.

use super::differential::{on_both, same, words as line_words, ClockSteps, StepMs};
use super::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::Flavor;

/// A random clause on the key of its kind (`slide3`, ...): the limiter
/// token and its parameters, small enough that streams admit and deny.
fn clause(rng: &mut XorShift) -> (String, Vec<String>) {
    let cost = (1 + rng.below(3)).to_string();
    let n = rng.below(3);
    let id = format!("j{}", rng.below(4));
    let (key, words): (String, Vec<&str>) = match rng.below(5) {
        0 => (
            format!("slide{n}"),
            vec!["SLIDE", "5", "800", "COST", &cost],
        ),
        1 => (
            format!("buckets{n}"),
            vec!["BUCKETS", "6", "1000", "PRECISION", "100", "COST", &cost],
        ),
        2 => (
            format!("throttle{n}"),
            vec!["THROTTLE", "2", "3", "900", &cost],
        ),
        3 => (
            format!("fixed{n}"),
            vec!["FIXED", "4", "600", "COST", &cost],
        ),
        _ => (format!("jobs{n}"), vec!["ACQUIRE", "2", "700", "ID", &id]),
    };
    (key, words.iter().map(|w| w.to_string()).collect())
}

#[test]
fn random_multi_limit_streams_answer_as_rl_all() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let mut rng = XorShift(0xa11_c1a05e);
    let (mut admitted, mut denied, mut charged) = (0, 0, 0);
    for step in 0..500 {
        ClockSteps {
            one_in: 3,
            ms: StepMs::Below(300),
        }
        .maybe_step(&server, &mut rng);
        let n = 1 + rng.below(4) as usize;
        let mut keys: Vec<String> = Vec::new();
        let mut clauses: Vec<String> = Vec::new();
        while keys.len() < n {
            let (key, words) = clause(&mut rng);
            if keys.contains(&key) {
                continue;
            }
            keys.push(key);
            clauses.extend(words);
        }
        let count = n.to_string();
        let mut line: Vec<&str> = vec!["RL.ALL", &count];
        line.extend(keys.iter().map(String::as_str));
        line.extend(clauses.iter().map(String::as_str));
        let reply = same(&mut c, &line);
        match reply {
            Ok(redis::Value::Array(p)) if p[0] == redis::Value::Int(1) => admitted += 1,
            Ok(_) => denied += 1,
            Err(e) => panic!("step {step}: {line:?}: {e}"),
        }
        // Peek, refund and charge a random clause's key the same way.
        if rng.below(3) == 0 {
            let (key, words) = clause(&mut rng);
            let mut peek = vec!["RL.PEEK", words[0].as_str(), &key];
            peek.extend(words[1..].iter().map(String::as_str));
            same(&mut c, &peek).ok();
            if words[0] != "ACQUIRE" {
                peek[0] = "RL.REFUND";
                same(&mut c, &peek).ok();
            }
        }
        if rng.below(4) == 0 {
            let (key, words) = clause(&mut rng);
            if words[0] != "ACQUIRE" {
                let line = charge_line(&key, &words, 1 + rng.below(12));
                match same(&mut c, &line_words(&line)) {
                    Ok(redis::Value::Array(r)) if r[0] != redis::Value::Int(0) => charged += 1,
                    other => panic!("step {step}: {line:?}: {other:?}"),
                }
            }
        }
    }
    assert!(
        admitted > 100 && denied > 100 && charged > 50,
        "{admitted} admitted, {denied} denied, {charged} charged"
    );
}

/// `RL.CHARGE` of `units` on a clause's key: its parameters without its
/// own units (COST, THROTTLE's quantity), then `COST units`, often past
/// the limit.
fn charge_line(key: &str, words: &[String], units: u64) -> Vec<String> {
    let mut line = vec!["RL.CHARGE".to_string(), words[0].clone(), key.to_string()];
    let own = match words[0].as_str() {
        "THROTTLE" => words.len() - 1,
        _ => words.len() - 2,
    };
    line.extend(words[1..own].iter().cloned());
    line.extend(["COST".to_string(), units.to_string()]);
    line
}

#[test]
fn every_error_of_the_dispatching_commands_is_the_modules() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let _: () = redis::cmd("SET")
        .arg("m:str")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("f:str")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let lines: &[&[&str]] = &[
        &["RL.ALL", "1", "k"],
        &["RL.ALL", "2", "a", "b", "SLIDE"],
        &["RL.ALL", "0", "k", "SLIDE", "1", "1"],
        &[
            "RL.ALL", "2", "k", "k", "SLIDE", "1", "1", "SLIDE", "1", "1",
        ],
        &["RL.ALL", "1", "k", "10", "1000"],
        &["RL.ALL", "1", "k", "NOPE\r\n", "1000"],
        &["RL.ALL", "1", "k", "SLIDE", "1", "100", "FIXED", "1", "100"],
        &[
            "RL.ALL", "2", "a", "b", "SLIDE", "1", "100", "COST", "1", "2",
        ],
        &[
            "RL.ALL", "2", "a", "b", "SLIDE", "1", "100", "FIXED", "0", "100",
        ],
        &[
            "RL.ALL", "2", "a", "b", "SLIDE", "1", "100", "COST", "2", "FIXED", "1", "100",
        ],
        &["RL.ALL", "1", "a", "THROTTLE", "1", "1"],
        &["RL.ALL", "1", "a", "SLIDE", "1"],
        &["RL.ALL", "1", "a", "ACQUIRE", "1"],
        &["RL.ALL", "1", "a", "BUCKETS", "1"],
        &["RL.ALL", "1", "a", "FIXED", "1"],
        &[
            "RL.ALL", "2", "a", "b", "SLIDE", "1000", "100", "COST", "60", "SLIDE", "1000", "100",
            "COST", "41",
        ],
        &[
            "RL.ALL",
            "2",
            "a",
            "b",
            "BUCKETS",
            "10",
            "1000",
            "PRECISION",
            "1",
            "BUCKETS",
            "10",
            "1000",
            "PRECISION",
            "1",
        ],
        &[
            "RL.ALL", "2", "a", "str", "SLIDE", "5", "1000", "FIXED", "5", "1000",
        ],
        &["RL.ALL", "1", "str", "THROTTLE", "1", "1", "1000"],
        &["RL.ALL", "1", "a", "ACQUIRE", "1", "1000", "ID", "fixed"],
        &[
            "RL.ALL", "2", "SLIDE", "FIXED", "fixed", "5", "100", "slide", "3", "100",
        ],
        &["RL.PEEK", "NOPE", "k", "1"],
        &["RL.PEEK", "SLIDE", "k", "1"],
        &["RL.PEEK", "THROTTLE", "k", "1", "1"],
        &["RL.PEEK", "slide", "str", "1", "1000"],
        &["RL.PEEK", "FIXED", "k", "1", "1000", "COST", "2"],
        &["RL.REFUND", "ACQUIRE", "k", "1", "1000"],
        &["RL.REFUND", "ACQUIRE", "k"],
        &["RL.REFUND", "acquire", "k", "0", "x", "ID"],
        &["RL.REFUND", "NOPE", "k"],
        &["RL.REFUND", "FIXED", "k", "1"],
        &["RL.REFUND", "SLIDE", "str", "1", "1000"],
        &["RL.REFUND", "SLIDE", "k", "1", "1000", "COST"],
        &["RL.CHARGE", "SLIDE", "k"],
        &["RL.CHARGE", "SLIDE", "k", "1", "1000"],
        &["RL.CHARGE", "SLIDE", "k", "1", "1000", "COST"],
        &["RL.CHARGE", "SLIDE", "k", "1", "1000", "COST", "101"],
        &[
            "RL.CHARGE",
            "SLIDE",
            "k",
            "1",
            "1000",
            "COST",
            "1",
            "cost",
            "2",
        ],
        &[
            "RL.CHARGE",
            "SLIDE",
            "k",
            "1",
            "1000",
            "COST",
            "5",
            "OLDEST",
        ],
        &["RL.CHARGE", "FIXED", "k", "1", "COST", "5"],
        &["RL.CHARGE", "FIXED", "k", "1", "1000", "COST", "0"],
        &[
            "RL.CHARGE",
            "FIXED",
            "k",
            "1",
            "1000",
            "COST",
            "1000000000000001",
        ],
        &[
            "RL.CHARGE",
            "BUCKETS",
            "k",
            "1",
            "1000",
            "PRECISION",
            "2000",
            "COST",
            "5",
        ],
        &[
            "RL.CHARGE",
            "THROTTLE",
            "k",
            "1",
            "1",
            "1000",
            "2",
            "COST",
            "5",
        ],
        &["RL.CHARGE", "THROTTLE", "k", "1", "1", "COST", "5"],
        &["RL.CHARGE", "ACQUIRE", "k", "1", "1000", "COST", "1"],
        &["RL.CHARGE", "NOPE", "k", "COST", "1"],
        &["RL.CHARGE", "SLIDE", "str", "1", "1000", "COST", "1"],
        // BLOCK in a settling command: refused by name, before THROTTLE's
        // quantity check and the limiter's parser; their usage without it.
        // (RL.PEEK takes it, as the call it peeks at.)
        &[
            "RL.CHARGE",
            "THROTTLE",
            "k",
            "1",
            "1",
            "1000",
            "BLOCK",
            "100",
            "COST",
            "5",
        ],
        &[
            "RL.CHARGE",
            "FIXED",
            "k",
            "1",
            "1000",
            "COST",
            "5",
            "block",
            "x",
        ],
        &[
            "RL.CHARGE",
            "SLIDE",
            "k",
            "1",
            "1000",
            "BLOCK",
            "1",
            "COST",
            "1",
        ],
        &["RL.CHARGE", "THROTTLE", "k", "1", "1", "COST", "5"],
        &["RL.REFUND", "FIXED", "k", "1", "1000", "BLOCK", "100"],
        &["RL.REFUND", "THROTTLE", "k", "1", "1", "1000", "BLOCK"],
        &["RL.REFUND", "ACQUIRE", "k", "1", "1000", "BLOCK", "1"],
        &["RL.REFUND", "THROTTLE", "k", "1", "1"],
        &["RL.PEEK", "FIXED", "k", "1", "1000", "BLOCK", "0"],
        &["RL.PEEK", "NOPE", "k", "1", "1000", "BLOCK", "100"],
        &["RL.PEEK", "SLIDE", "k", "1", "1000", "OLDEST", "BLOCK", "0"],
        &["RL.PEEK", "FIXED", "k", "1"],
    ];
    // Seventeen keys, one more than RL.ALL takes.
    let keys: Vec<String> = (0..17).map(|i| format!("k{i}")).collect();
    let mut seventeen: Vec<&str> = vec!["RL.ALL", "17"];
    seventeen.extend(keys.iter().map(String::as_str));
    for _ in 0..17 {
        seventeen.extend(["FIXED", "1", "100"]);
    }
    // Without a key: the command's arity error; the function, called with
    // another number of keys than one, says so.
    for (line, function) in [
        ("RL.PEEK", "rl_peek"),
        ("RL.REFUND", "rl_refund"),
        ("RL.CHARGE", "rl_charge"),
    ] {
        assert_eq!(
            crate::harness::error_of(&mut c, &[line, "SLIDE"]),
            format!(
                "ERR wrong number of arguments for '{}' command",
                line.to_lowercase()
            )
        );
        assert_eq!(
            crate::harness::error_of(&mut c, &["FCALL", function, "0", "SLIDE"]),
            format!("ERR wrong number of keys for '{function}' (numkeys must be 1)")
        );
    }
    // Far more keys than RL.ALL takes (and than Lua's unpack could copy).
    let many: Vec<String> = (0..10_000).map(|i| format!("k{i}")).collect();
    let mut huge: Vec<&str> = vec!["RL.ALL", "10000"];
    huge.extend(many.iter().map(String::as_str));
    huge.extend(["FIXED", "1", "100"]);
    for line in lines.iter().copied().chain([&seventeen[..], &huge[..]]) {
        let got = same(&mut c, line);
        // Every line above is refused, except the two that spell a limiter
        // token where a key or an ACQUIRE id goes.
        assert_eq!(got.is_ok(), line.contains(&"fixed"), "{line:?}: {got:?}");
    }
}

/// Charges that reach the most a key can hold (10^15 units for BUCKETS and
/// FIXED, a schedule 31.7 years past the burst for THROTTLE), and the cap
/// of SLIDE's call, with the units recorded and the state as the module's.
#[test]
fn charges_up_to_the_ceiling_answer_as_the_module() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let max = "1000000000000000";
    let lines: &[&[&str]] = &[
        &["RL.FIXED", "f", "10", "60000", "COST", "7"],
        &["RL.CHARGE", "FIXED", "f", "10", "60000", "COST", max],
        &["RL.CHARGE", "FIXED", "f", "10", "60000", "COST", "1"],
        &["RL.CHARGE", "BUCKETS", "b", "10", "60000", "COST", "9"],
        &["RL.CHARGE", "BUCKETS", "b", "10", "60000", "COST", max],
        &["RL.CHARGE", "BUCKETS", "b", "10", "60000", "COST", "3"],
        &["RL.BUCKETS", "b", "10", "60000"],
        &["RL.CHARGE", "THROTTLE", "t", "0", "1", "1000", "COST", max],
        &["RL.CHARGE", "THROTTLE", "t", "0", "1", "1000", "COST", "2"],
        &["RL.THROTTLE", "t", "0", "1", "1000"],
        &["RL.CHARGE", "SLIDE", "s", "1", "60000", "COST", "100"],
        &["RL.CHARGE", "SLIDE", "s", "1", "60000", "COST", "100"],
        &["RL.SLIDE", "s", "1", "60000"],
    ];
    let mut charged = Vec::new();
    for line in lines {
        let reply = same(&mut c, line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        if line[0] == "RL.CHARGE" {
            charged.push(super::differential::ints(&reply)[0]);
        }
        server.advance(10);
    }
    assert_eq!(
        charged,
        [
            999_999_999_999_993,
            0,
            9,
            999_999_999_999_991,
            0,
            1_000_000_001,
            0,
            100,
            100
        ]
    );
}

/// `UPTO` on every limiter's own command, on random costs (past the limit
/// too) and clock steps, mixed with plain calls: the same grants, replies
/// of five integers, states and errors as the module's.
#[test]
fn partial_grants_answer_as_the_module() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let mut rng = XorShift(0x0b7_0a11);
    let (mut partial, mut whole, mut none) = (0, 0, 0);
    for step in 0..400 {
        ClockSteps {
            one_in: 3,
            ms: StepMs::Below(300),
        }
        .maybe_step(&server, &mut rng);
        let cost = (1 + rng.below(14)).to_string();
        let n = rng.below(2);
        let mut line: Vec<String> = match rng.below(4) {
            0 => vec![
                "RL.SLIDE".into(),
                format!("s{n}"),
                "8".into(),
                "900".into(),
                "COST".into(),
                cost.clone(),
            ],
            1 => vec![
                "RL.BUCKETS".into(),
                format!("b{n}"),
                "8".into(),
                "1000".into(),
                "PRECISION".into(),
                "100".into(),
                "COST".into(),
                cost.clone(),
            ],
            2 => vec![
                "RL.THROTTLE".into(),
                format!("t{n}"),
                "7".into(),
                "8".into(),
                "900".into(),
                cost.clone(),
            ],
            _ => vec![
                "RL.FIXED".into(),
                format!("f{n}"),
                "8".into(),
                "700".into(),
                "COST".into(),
                cost.clone(),
            ],
        };
        let upto = rng.below(3) != 0;
        if upto {
            // Anywhere after the required positional arguments.
            let from = if line[0] == "RL.THROTTLE" { 5 } else { 4 };
            let at = from + rng.below((line.len() - from + 1) as u64) as usize;
            line.insert(at, "UPTO".into());
        }
        let words: Vec<&str> = line.iter().map(String::as_str).collect();
        let reply = same(&mut c, &words);
        if !upto {
            continue;
        }
        match reply {
            Ok(redis::Value::Array(r)) => {
                let ints = super::differential::ints(&redis::Value::Array(r));
                assert_eq!(ints.len(), 5, "{line:?}");
                match ints[4] {
                    0 => none += 1,
                    g if g.to_string() == cost => whole += 1,
                    _ => partial += 1,
                }
            }
            // A cost past a limit without UPTO is refused alike.
            Err(e) => panic!("step {step}: {line:?}: {e}"),
            other => panic!("step {step}: {line:?}: {other:?}"),
        }
    }
    assert!(
        partial > 20 && whole > 20 && none > 20,
        "{partial} partial, {whole} whole, {none} denied"
    );
    for line in [
        &["RL.PEEK", "SLIDE", "k", "10", "1000", "UPTO"][..],
        &["RL.PEEK", "THROTTLE", "k", "1", "1", "1000", "UPTO"],
        &["RL.ALL", "1", "k", "FIXED", "10", "1000", "UPTO"],
        &["RL.CHARGE", "FIXED", "k", "10", "1000", "COST", "2", "UPTO"],
        &["RL.SLIDE", "k", "10", "1000", "UPTO", "UPTO"],
        &["RL.SLIDE", "k", "UPTO", "1000"],
        &["RL.THROTTLE", "k", "1", "1", "1000", "2", "3", "UPTO"],
        &["RL.THROTTLE", "k", "1", "1", "1000", "x", "UPTO"],
        &["CL.THROTTLE", "k", "1", "1", "1", "UPTO"],
    ] {
        same(&mut c, line).unwrap_err();
    }
}

/// `UPTO` and `BLOCK ms` together on `RL.THROTTLE` and `RL.FIXED` (the
/// limiters with blocks), on random costs, blocks and clock steps, mixed
/// with plain calls and calls without `BLOCK`: the same grants, breaches
/// that block, blocked denials (which grant nothing and write nothing),
/// states and errors as the module's.
#[test]
fn partial_grants_with_blocks_answer_as_the_module() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let mut rng = XorShift(0x0b10_c4ed);
    let (mut partial, mut whole, mut blocked, mut breached) = (0, 0, 0, 0);
    for step in 0..500 {
        ClockSteps {
            one_in: 3,
            ms: StepMs::Below(400),
        }
        .maybe_step(&server, &mut rng);
        let cost = (1 + rng.below(12)).to_string();
        let n = rng.below(2);
        let fixed = rng.below(2) == 0;
        let key = if fixed {
            format!("fb{n}")
        } else {
            format!("tb{n}")
        };
        let mut line: Vec<String> = if fixed {
            vec![
                "RL.FIXED".into(),
                key.clone(),
                "8".into(),
                "700".into(),
                "COST".into(),
                cost.clone(),
            ]
        } else {
            vec![
                "RL.THROTTLE".into(),
                key.clone(),
                "7".into(),
                "8".into(),
                "900".into(),
                cost.clone(),
            ]
        };
        if rng.below(4) != 0 {
            line.extend(["BLOCK".into(), (1 + rng.below(800)).to_string()]);
        }
        let upto = rng.below(4) != 0;
        if upto {
            // Anywhere after the required positional arguments.
            let from = if fixed { 4 } else { 5 };
            let at = from + rng.below((line.len() - from + 1) as u64) as usize;
            line.insert(at, "UPTO".into());
        }
        let held = |c: &mut redis::Connection| -> Option<String> {
            redis::cmd("GET").arg(format!("m:{key}")).query(c).unwrap()
        };
        let was_blocked = held(&mut c).is_some_and(|v| v.contains('b'));
        let words: Vec<&str> = line.iter().map(String::as_str).collect();
        let reply = same(&mut c, &words);
        let now_blocked = held(&mut c).is_some_and(|v| v.contains('b'));
        let Ok(redis::Value::Array(r)) = reply else {
            // A cost past the burst without UPTO is refused alike.
            assert!(!upto, "step {step}: {line:?}: {reply:?}");
            continue;
        };
        let ints = super::differential::ints(&redis::Value::Array(r));
        assert_eq!(ints.len(), if upto { 5 } else { 4 }, "{line:?}");
        if ints[0] == 0 && now_blocked {
            if was_blocked {
                blocked += 1;
            } else {
                breached += 1;
            }
        }
        if upto && ints[0] == 1 {
            if ints[4].to_string() == cost {
                whole += 1;
            } else {
                partial += 1;
            }
        }
    }
    assert!(
        partial > 15 && whole > 15 && blocked > 15 && breached > 15,
        "{partial} partial, {whole} whole, {blocked} blocked, {breached} breaches"
    );
}

/// `rl_all` calls whose clauses are all `FIXED limit window [COST c]` take
/// the library's plain path (`plain_all`, rl-ratelimit's calls); each
/// answers as RL.ALL, with the same values and expiries on both sides:
/// new and running windows, a denial in the last clause writing nothing in
/// the others, a count past the limit after a charge, a blocked key, a
/// foreign key, `COST` above the limit, lower-case words (the full path),
/// six clauses (past the four the module keeps inline), and a new window
/// once the old one ends.
#[test]
fn fixed_only_calls_answer_as_rl_all() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let call = |c: &mut redis::Connection, line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        same(c, &words)
    };
    let allowed = |reply: Result<redis::Value, String>| match reply {
        Ok(redis::Value::Array(r)) => r[0] == redis::Value::Int(1),
        other => panic!("{other:?}"),
    };
    let two = "RL.ALL 2 a b FIXED 5 600 FIXED 2 600";
    for _ in 0..2 {
        assert!(allowed(call(&mut c, two)));
    }
    // b is full: denied, a (which would admit) keeps its count.
    assert!(!allowed(call(&mut c, two)));
    server.advance(100);
    assert!(call(&mut c, "RL.ALL 2 a c FIXED 5 600 COST 2 FIXED 3 600 COST 3").is_ok());
    same(
        &mut c,
        &["RL.CHARGE", "FIXED", "c", "3", "600", "COST", "4"],
    )
    .unwrap();
    assert!(!allowed(call(
        &mut c,
        "RL.ALL 2 c a FIXED 3 600 FIXED 5 600"
    )));
    same(&mut c, &["RL.BLOCK", "FIXED", "d", "300"]).unwrap();
    assert!(!allowed(call(
        &mut c,
        "RL.ALL 2 a d FIXED 9 600 FIXED 9 600"
    )));
    on_both(&mut c, "e", &["SET", "K", "not-a-count"]);
    assert!(call(&mut c, "RL.ALL 2 a e FIXED 9 600 FIXED 9 600").is_err());
    assert!(call(&mut c, "RL.ALL 2 a f FIXED 9 600 FIXED 2 600 COST 3").is_err());
    assert!(call(&mut c, "RL.ALL 2 a g fixed 9 600 cost 1 Fixed 9 600").is_ok());
    let six = "RL.ALL 6 h1 h2 h3 h4 h5 h6 FIXED 3 600 FIXED 3 600 FIXED 3 600 FIXED 3 600 FIXED 3 600 FIXED 1 600";
    assert!(allowed(call(&mut c, six)));
    assert!(!allowed(call(&mut c, six)), "h6's limit is 1");
    server.advance(600);
    assert!(allowed(call(&mut c, two)));
    assert!(allowed(call(&mut c, six)));
}

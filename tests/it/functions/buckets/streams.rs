//! The random streams: on Valkey's stopped clock every line compared whole;
//! on Redis 7.0 and 8.2 (real clock) what does not depend on the instant.

use redis::Value;

use super::foreign::{forge_x, forged_states};
use super::lines::{bad_lines, random_line, NAMES};
use super::{forge_string, s};
use crate::functions::differential::{
    alike, run_stream, same, words, Answer, ClockSteps, Step, StepMs, Tally,
};
use crate::functions::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{Flavor, Plain, Server};

const STEPS: [u64; 14] = [0, 0, 0, 1, 3, 17, 50, 99, 100, 250, 999, 1000, 5000, 70_000];

const CLOCK: ClockSteps = ClockSteps {
    one_in: 6,
    ms: StepMs::OneOf(&STEPS),
};

/// A random stream on a stopped clock: every step the same reply and state.
fn stream(flavor: Flavor, seed: u64, steps: usize) {
    let server = start_both(flavor);
    assert!(server.clock_stopped(), "{flavor:?}");
    let mut c = server.conn();
    forge_string(&mut c, "w");
    let bad = bad_lines();
    let mut r = XorShift(seed);
    let forged = forged_states(server.clock_ms());
    let mut seen = Tally::default();
    let next = |c: &mut redis::Connection, _: &Tally| -> Step {
        CLOCK.maybe_step(&server, &mut r);
        if r.below(15) == 0 {
            let state = r.pick(&forged).clone();
            forge_x(c, &state, server.clock_ms());
        }
        random_line(&mut r, &bad).into()
    };
    // Calls that met a block holding on an `a` or `b` key (the module's
    // copy read after the call): the stream reaches blocks.
    let mut on_blocked = 0;
    let compare = |c: &mut redis::Connection, line: &[&str]| {
        let reply = same(c, line);
        let denied = matches!(&reply, Ok(Value::Array(v)) if v.first() == Some(&Value::Int(0)));
        let key = format!(
            "m:{}",
            line.get(if line[0] == "RL.BUCKETS" { 1 } else { 2 })
                .unwrap_or(&"")
        );
        let header: Option<String> = redis::cmd("HGET")
            .arg(&key)
            .arg("h")
            .query(c)
            .unwrap_or(None);
        if denied && header.is_some_and(|h| h.contains(",b")) {
            on_blocked += 1;
        }
        reply
    };
    run_stream(&mut c, steps, &mut seen, next, compare);
    let errors = seen.get("error");
    assert!(
        on_blocked > 10 && seen.get("blocked by hand") > 5 && seen.get("unblocked") > 1,
        "the stream reached blocks ({on_blocked} denials on a blocked key): {seen:#?}"
    );
    assert!(
        seen.get("admitted") > 80
            && seen.get("denied") > 20
            && errors > 50
            && errors < steps * 2 / 3
            && seen.get("totals") > 50
            && seen.get("peek oldest counted") > 3
            && seen.get("peek oldest empty") > 0,
        "the stream reached every outcome: {seen:#?}"
    );
}

#[test]
fn random_streams_on_a_stopped_clock_answer_alike() {
    stream(Flavor::Valkey9, 0x9e37_79b9_7f4a_7c15, 850);
}

#[test]
fn another_random_stream_answers_alike() {
    stream(Flavor::Valkey9, 0xdead_beef_1234_5678, 850);
}

/// What one answer shows that does not depend on the instant, with long
/// windows: errors, allowed and remaining, totals, and the header's kind,
/// precision and totals (the buckets' indexes depend on the instant).
fn timeless(a: &Answer, line: &[String]) -> (Result<Value, String>, Vec<String>) {
    let reply = match &a.reply {
        Ok(Value::Array(v)) if line[0] != "RL.COUNT" && line[0] != "RL.TOTALS" => {
            if line[0] == "RL.ALL" {
                Ok(Value::Array(v[..1].to_vec()))
            } else {
                Ok(Value::Array(v[..2].to_vec()))
            }
        }
        other => other.clone(),
    };
    let mut shape = Vec::new();
    for (plain, at) in &a.state {
        match plain {
            Plain::Hash(h) => {
                let header = h
                    .get(&b"h"[..])
                    .map(|v| String::from_utf8_lossy(v).to_string());
                let items: Vec<String> = header
                    .unwrap_or_default()
                    .split(',')
                    .map(String::from)
                    .collect();
                let width = h
                    .get(&b"f"[..])
                    .map(|f| f.split(|&b| b == b',').count())
                    .unwrap_or(1);
                let mut kept: Vec<String> = items.iter().take(2).cloned().collect();
                kept.extend(items.iter().skip(4).take(width).cloned());
                shape.push(kept.join(","));
                shape.push(format!("{:?}", h.get(&b"f"[..])));
                shape.push((*at > 0).to_string());
            }
            other => shape.push(format!("{other:?} {at}")),
        }
    }
    (reply, shape)
}

/// The stream on a real clock: windows of 10^9 ms, so no bucket leaves
/// during the test.
fn real_clock_stream(flavor: Flavor, seed: u64, steps: usize) {
    let server: Server = start_both(flavor);
    let mut c = server.conn();
    let mut c3 = server.conn_resp3();
    forge_string(&mut c, "w");
    let bad = bad_lines();
    let mut r = XorShift(seed);
    let long = "1000000000";
    let (mut same_errors, mut compared) = (0, 0);
    for _ in 0..steps {
        let key = s(*r.pick(&["a", "b", "c1", "w"]));
        let limit = s(*r.pick(&[5u64, 10, 1_000_000_000_000_000]));
        let cost = s(1 + r.below(4));
        let line: Vec<String> = match r.below(9) {
            0..=2 => vec![s("RL.BUCKETS"), key, limit, s(long), s("COST"), cost],
            3 => vec![
                s("RL.PEEK"),
                s("BUCKETS"),
                key,
                limit,
                s(long),
                s("COST"),
                cost,
            ],
            4 => vec![
                s("RL.REFUND"),
                s("BUCKETS"),
                key,
                limit,
                s(long),
                s("COST"),
                cost,
            ],
            5 | 6 => {
                let name = s(*r.pick(&NAMES));
                let key = s(*r.pick(&["c1", "c2", "a", "w"]));
                vec![s("RL.COUNT"), key, s(long), name, s("BY"), cost]
            }
            7 => vec![s("RL.TOTALS"), s(*r.pick(&["c1", "c2", "a"])), s(long)],
            _ => r.pick(&bad).clone(),
        };
        let conn = if r.below(3) == 0 { &mut c3 } else { &mut c };
        let (m, _) = alike(conn, &words(&line), |a| timeless(a, &line));
        if m.reply.is_err() {
            same_errors += 1;
        }
        compared += 1;
    }
    assert!(
        same_errors > 20 && compared == steps,
        "{same_errors} errors"
    );
}

/// One stream on `flavor`: compared whole where its clock can stop, else
/// what does not depend on the instant (`tests/it/older/`).
pub fn streams_on(flavor: Flavor) {
    if flavor.clock_can_stop() {
        stream(flavor, 0x9e37_79b9_7f4a_7c15, 850);
    } else {
        real_clock_stream(flavor, 0x1234_5678_9abc_def1, 400);
    }
}

#[test]
fn redis7_streams_answer_alike() {
    real_clock_stream(Flavor::Redis7, 0x1234_5678_9abc_def1, 400);
}

#[test]
fn redis8_streams_answer_alike() {
    real_clock_stream(Flavor::Redis8, 0x0fed_cba9_8765_4321, 400);
}

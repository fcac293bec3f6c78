//! The random streams: on Valkey's stopped clock every line compared whole;
//! on Redis 7.0 and 8.2 (running clock) only what the instant cannot
//! change, through [`check_timeless`].

use redis::Value;

use super::lines::{bad_queue, odd_line, Gen};
use super::server_us;
use crate::functions::differential::{
    alike, ints, run_stream, same_stepping, states_agree, words, Step, Tally,
};
use crate::functions::start_both;
use crate::harness::raw_resp::XorShift;
use crate::harness::{run, Flavor, Plain};

/// A stored string's value as an integer, if it is one.
fn stored_int(p: &Plain) -> Option<i128> {
    match p {
        Plain::String(v) => std::str::from_utf8(v).ok()?.parse().ok(),
        _ => None,
    }
}

/// Whether two states of one key (module, library) agree in what does not
/// depend on the instant, `now_us` read just after both. An absent key and
/// a TAT within 10 s of now both say idle (rates here are at least 10^5 s
/// per unit); two TATs agree within 10 s and each expires at itself
/// rounded up to a ms; other strings agree in value and in having a TTL,
/// their expiries within 10 s; other types agree exactly.
fn same_shape(m: &(Plain, i64), f: &(Plain, i64), now_us: i64) -> bool {
    let tat = |s: &(Plain, i64)| stored_int(&s.0).filter(|&v| v > 1_000_000_000_000_000);
    let idle =
        |s: &(Plain, i64)| s.1 == -2 || tat(s).is_some_and(|v| v < i128::from(now_us) + 10_000_000);
    if idle(m) || idle(f) {
        return idle(m) && idle(f);
    }
    if let (Some(a), Some(b)) = (tat(m), tat(f)) {
        let expires = |v: i128, at: i64| i128::from(at) == (v + 999).div_euclid(1000);
        return (a - b).abs() < 10_000_000 && expires(a, m.1) && expires(b, f.1);
    }
    match (&m.0, &f.0) {
        (Plain::String(a), Plain::String(b)) => {
            a == b && (m.1 == f.1 || (m.1 > 0 && f.1 > 0 && (m.1 - f.1).abs() < 10_000))
        }
        _ => m == f,
    }
}

/// The reply with the fields that depend on the instant masked: the waits
/// (3rd and 4th of a decision, 4th and 5th of CL.THROTTLE's reply, each
/// clause's and the overall retry of RL.ALL).
fn timeless(line: &[&str], reply: &Result<Value, String>) -> Result<Value, String> {
    let Ok(v) = reply else {
        return reply.clone();
    };
    let mask4 = |v: &Value| {
        let mut n = ints(v);
        // [.., retry, reset] of both shapes
        let len = n.len();
        n[len - 2] = 0;
        n[len - 1] = 0;
        Value::Array(n.into_iter().map(Value::Int).collect())
    };
    match line[0] {
        "RL.ALL" => {
            let Value::Array(items) = v else {
                panic!("{v:?}")
            };
            let mut out = vec![items[0].clone(), Value::Int(0)];
            out.extend(items[2..].iter().map(mask4));
            Ok(Value::Array(out))
        }
        _ => Ok(mask4(v)),
    }
}

/// Runs `line` through both editions on a running clock and requires the
/// same timeless reply and state shapes. The module's reply.
fn check_timeless(c: &mut redis::Connection, line: &[&str]) -> Result<Value, String> {
    let (m, f) = alike(c, line, |a| timeless(line, &a.reply));
    let now = server_us(c);
    states_agree(line, &m, &f, |ms, fs| same_shape(ms, fs, now));
    m.reply
}

/// Keys rl did not write, created alike under `m:` and `f:`, and the
/// error each of our commands must give for them (None: read as a state).
fn seed_foreign(c: &mut redis::Connection, now_ms: i64) {
    for p in ["m:", "f:"] {
        let lines: Vec<Vec<String>> = vec![
            // A counter without a TTL (a user's SET cnt 5).
            vec!["SET".into(), format!("{p}x"), "5".into()],
            // Text with a TTL.
            vec![
                "SET".into(),
                format!("{p}y"),
                "hello".into(),
                "PX".into(),
                "100000000".into(),
            ],
            vec!["ZADD".into(), format!("{p}z"), "1".into(), "m".into()],
            vec!["HSET".into(), format!("{p}h"), "f".into(), "v".into()],
            vec!["RPUSH".into(), format!("{p}l"), "v".into()],
            // A redis-cell state: its TAT in ns, 3 s ahead, with a TTL.
            vec![
                "SET".into(),
                format!("{p}n"),
                ((now_ms + 3000) as i128 * 1_000_000 + 123).to_string(),
                "PX".into(),
                "100000000".into(),
            ],
            // A fixed-window counter with a TTL, zero-padded as earlier
            // releases wrote counts.
            vec![
                "SET".into(),
                format!("{p}g"),
                "0002".into(),
                "PX".into(),
                "100000000".into(),
            ],
            // A TAT without a TTL.
            vec!["SET".into(), format!("{p}u"), (now_ms * 1000).to_string()],
        ];
        for line in lines {
            run(c, &words(&line)).unwrap();
        }
    }
}

const FOREIGN: [&str; 8] = ["x", "y", "z", "h", "l", "n", "g", "u"];

/// What a stream must have reached: admissions and denials (of the
/// limiters, their peeks and RL.ALL), refunds, and 30 distinct errors.
fn require_reached(seen: &Tally, admitted: usize, denied: usize, refunded: usize) {
    eprintln!("{seen:#?}");
    let sum = |whats: &[&str]| whats.iter().map(|w| seen.get(w)).sum::<usize>();
    let (a, d) = (
        sum(&["admitted", "peek admitted", "all admitted"]),
        sum(&["denied", "peek denied", "all denied"]),
    );
    assert!(
        a > admitted && d > denied && seen.get("refunded") > refunded && seen.errors.len() >= 30,
        "the stream should admit, deny, refund and refuse: {a} admitted, {d} denied: {seen:?}"
    );
}

/// The stopped-clock stream: `steps` random lines, each compared whole;
/// one step in four a line of `bad_queue` (each must fail) while it lasts,
/// the clock stepped after every other line.
fn exact_stream(flavor: Flavor, seed: u64, steps: usize) {
    let server = start_both(flavor);
    assert!(server.clock_stopped(), "{flavor:?}");
    let mut c = server.conn();
    seed_foreign(&mut c, server.clock_ms());
    let mut g = Gen {
        rng: XorShift(seed),
        timeless: false,
    };
    let mut seen = Tally::default();
    let mut bad = bad_queue(&mut g);
    let (mut step, mut stepped_after) = (0, false);
    // Set by `next` for a line that must fail, read by `compare`.
    let expect_error = std::cell::Cell::new(false);
    let next = |_: &mut redis::Connection, _: &Tally| -> Step {
        if stepped_after {
            server.advance(g.step());
        }
        step += 1;
        expect_error.set(false);
        stepped_after = false;
        if step % 4 == 0 {
            if let Some(line) = bad.pop() {
                expect_error.set(true);
                return line.into();
            }
        }
        stepped_after = true;
        if g.chance(15) {
            odd_line(&mut g, &FOREIGN).into()
        } else {
            // Throttle keys for throttle forms and fixed keys for fixed
            // ones; now and then the other kind's key.
            let mut t = if g.chance(50) { ["a", "b"] } else { ["b", "a"] };
            let mut f = if g.chance(50) { ["c", "d"] } else { ["d", "c"] };
            if g.chance(15) {
                std::mem::swap(&mut t[0], &mut f[g.below(2) as usize]);
            }
            g.line(t, f).into()
        }
    };
    let blocked_denials = std::cell::Cell::new(0usize);
    let compare = |c: &mut redis::Connection, line: &[&str]| {
        // A limiter's line on a key whose block holds before it runs.
        let key = match line[0] {
            "RL.THROTTLE" | "RL.FIXED" | "CL.THROTTLE" => Some(line[1]),
            "RL.PEEK" | "RL.REFUND" => Some(line[2]),
            _ => None,
        };
        let held = key.is_some_and(|k| {
            // Another type (a foreign key) is no block.
            let v: Option<String> = redis::cmd("GET")
                .arg(format!("m:{k}"))
                .query(c)
                .ok()
                .flatten();
            let now = crate::harness::server_ms(c);
            v.and_then(|v| v.rsplit_once('b').and_then(|(_, u)| u.parse::<i64>().ok()))
                .is_some_and(|until| until > now)
        });
        let reply = same_stepping(&server, c, line);
        assert!(!expect_error.get() || reply.is_err(), "{line:?}: {reply:?}");
        if held && reply.is_ok() {
            blocked_denials.set(blocked_denials.get() + 1);
        }
        reply
    };
    run_stream(&mut c, steps, &mut seen, next, compare);
    assert!(bad.is_empty(), "{} bad lines left", bad.len());
    require_reached(&seen, steps / 10, steps / 20, steps / 50);
    eprintln!("calls on a blocked key: {}", blocked_denials.get());
    seen.require(&[
        ("blocked by hand", 5),
        ("unblocked", 1),
        ("nothing to unblock", 1),
    ]);
    assert!(
        blocked_denials.get() >= 10,
        "only {} calls met a block",
        blocked_denials.get()
    );
}

#[test]
fn stream_stopped_clock_1() {
    exact_stream(Flavor::Valkey9, 0x9E37_79B9_7F4A_7C15, 950);
}

#[test]
fn stream_stopped_clock_2() {
    exact_stream(Flavor::Valkey9, 0xD1B5_4A32_D192_ED03, 950);
}

#[test]
fn stream_stopped_clock_3() {
    exact_stream(Flavor::Valkey9, 42, 950);
}

/// The running-clock stream (Redis 7.0, 8.2): only what the instant cannot
/// change is compared. Throttle keys `a`, `b`, fixed keys `c`, `d`; `t`
/// holds a TAT far ahead and `g` a counter, each used by the other limiter.
fn timeless_stream(flavor: Flavor, seed: u64, steps: usize) {
    let server = start_both(flavor);
    let mut c = server.conn();
    let now_ms = server_us(&mut c) / 1000;
    seed_foreign(&mut c, now_ms);
    let seed_t = ["RL.THROTTLE", "t", "0", "1", "1000000000"];
    let first = check_timeless(&mut c, &seed_t).unwrap();
    assert_eq!(ints(&first)[..2], [1, 0]);
    let mut g = Gen {
        rng: XorShift(seed),
        timeless: true,
    };
    let mut seen = Tally::default();
    let mut bad = bad_queue(&mut g);
    let mut step = 0;
    // Set by `next` for a line that must fail, read by `compare`.
    let expect_error = std::cell::Cell::new(false);
    let next = |_: &mut redis::Connection, _: &Tally| -> Step {
        step += 1;
        expect_error.set(false);
        if step % 4 == 0 {
            if let Some(line) = bad.pop() {
                expect_error.set(true);
                return line.into();
            }
        }
        if g.chance(15) {
            // Not `n`: a throttle form makes it a TAT that may be refunded
            // to idle, and an idle TAT lingers for up to a ms.
            odd_line(&mut g, &["x", "y", "z", "h", "l", "g", "u"]).into()
        } else if g.chance(8) {
            // The other limiter on a key that holds a state far from idle:
            // throttle forms on the counter `g`, fixed ones on the TAT `t`.
            if g.chance(50) {
                g.line(["g", "b"], ["t", "d"]).into()
            } else {
                g.line(["b", "g"], ["d", "t"]).into()
            }
        } else {
            let t = if g.chance(50) { ["a", "b"] } else { ["b", "a"] };
            let f = if g.chance(50) { ["c", "d"] } else { ["d", "c"] };
            g.line(t, f).into()
        }
    };
    let compare = |c: &mut redis::Connection, line: &[&str]| {
        let reply = check_timeless(c, line);
        assert!(!expect_error.get() || reply.is_err(), "{line:?}: {reply:?}");
        reply
    };
    run_stream(&mut c, steps, &mut seen, next, compare);
    require_reached(&seen, steps / 20, steps / 10, steps / 50);
}

/// One stream on `flavor`: compared whole where its clock can stop, else
/// only what the instant cannot change (`tests/it/older/`).
pub fn streams_on(flavor: Flavor) {
    if flavor.clock_can_stop() {
        exact_stream(flavor, 0x9E37_79B9_7F4A_7C15, 950);
    } else {
        timeless_stream(flavor, 0x1234_5678_9ABC_DEF1, 700);
    }
}

#[test]
fn stream_running_clock_redis7() {
    timeless_stream(Flavor::Redis7, 0x1234_5678_9ABC_DEF1, 700);
}

#[test]
fn stream_running_clock_redis8() {
    timeless_stream(Flavor::Redis8, 0x0F0F_1234_AAAA_5555, 700);
}

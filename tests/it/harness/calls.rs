//! Typed calls of rl's commands, and the error texts of refused calls.

use redis::Value;

/// The four integers of an rl decision.
pub type Reply4 = [i64; 4];

/// Runs a command line given as words; the raw reply or the error.
pub fn run(c: &mut redis::Connection, line: &[&str]) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd(line[0]);
    for a in &line[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
}

/// Runs a command line given as byte strings (any bytes, the name first).
pub fn run_bytes(c: &mut redis::Connection, line: &[Vec<u8>]) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd(std::str::from_utf8(&line[0]).unwrap());
    for a in &line[1..] {
        cmd.arg(a.as_slice());
    }
    cmd.query(c)
}

/// Runs a command line with `K` standing for `key`, and `NOW` / `NOWUS`
/// for the server's clock in ms / µs (read just before), `LATER` for an
/// hour after `NOW`.
pub fn run_on(c: &mut redis::Connection, line: &[&str], key: &str) -> redis::RedisResult<Value> {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c)?;
    let mut cmd = redis::cmd(line[0]);
    for a in &line[1..] {
        match *a {
            "K" => cmd.arg(key),
            "NOW" => cmd.arg(s * 1000 + us / 1000),
            "NOWUS" => cmd.arg(s * 1_000_000 + us),
            "LATER" => cmd.arg(s * 1000 + us / 1000 + 3_600_000),
            a => cmd.arg(a),
        };
    }
    cmd.query(c)
}

/// The exact text of an error reply as the server sent it, e.g.
/// `ERR COST needs a value`, `WRONGTYPE Operation against ...`.
pub fn error_text(err: &redis::RedisError) -> String {
    match (err.code(), err.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => err.to_string(),
    }
}

/// The error text of a call that must fail (panics if it succeeded).
pub fn err_text<T: std::fmt::Debug>(r: redis::RedisResult<T>) -> String {
    error_text(&r.expect_err("an error reply"))
}

/// The error text a command line gets (panics if it succeeds).
pub fn error_of(c: &mut redis::Connection, line: &[&str]) -> String {
    match run(c, line) {
        Ok(v) => panic!("{line:?} succeeded: {v:?}"),
        Err(e) => error_text(&e),
    }
}

/// Each command line gets an error containing its expected text.
pub fn assert_errors(
    c: &mut redis::Connection,
    what: impl std::fmt::Debug,
    cases: &[(&[&str], &str)],
) {
    for (line, want) in cases {
        let err = error_of(c, line);
        assert!(err.contains(want), "{what:?} {line:?}: {err}");
    }
}

fn four(v: Vec<i64>) -> Reply4 {
    v.try_into().expect("four integers")
}

pub fn slide(c: &mut redis::Connection, key: &str, limit: u64, window: u64) -> Reply4 {
    let v: Vec<i64> = redis::cmd("RL.SLIDE")
        .arg(key)
        .arg(limit)
        .arg(window)
        .query(c)
        .expect("RL.SLIDE");
    four(v)
}

pub fn slide_cost(
    c: &mut redis::Connection,
    key: &str,
    limit: u64,
    window: u64,
    cost: u64,
) -> Reply4 {
    let v: Vec<i64> = redis::cmd("RL.SLIDE")
        .arg(key)
        .arg(limit)
        .arg(window)
        .arg("COST")
        .arg(cost)
        .query(c)
        .expect("RL.SLIDE COST");
    four(v)
}

/// RL.SLIDE with arbitrary arguments after the name, as raw bytes.
pub fn slide_raw(c: &mut redis::Connection, args: &[&[u8]]) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd("RL.SLIDE");
    for a in args {
        cmd.arg(*a);
    }
    cmd.query(c)
}

/// `RL.BUCKETS key <extra...>`
pub fn buckets(
    c: &mut redis::Connection,
    key: &str,
    extra: &[&str],
) -> redis::RedisResult<Vec<i64>> {
    let mut cmd = redis::cmd("RL.BUCKETS");
    cmd.arg(key).arg(extra);
    cmd.query(c)
}

/// `RL.COUNT key window field <extra...>` as name/total pairs (RESP2).
pub fn count(
    c: &mut redis::Connection,
    key: &str,
    window: u64,
    field: &str,
    extra: &[&str],
) -> redis::RedisResult<Vec<(String, i64)>> {
    let mut cmd = redis::cmd("RL.COUNT");
    cmd.arg(key).arg(window).arg(field).arg(extra);
    cmd.query(c)
}

/// `RL.TOTALS key window <extra...>` as name/total pairs (RESP2).
pub fn totals(
    c: &mut redis::Connection,
    key: &str,
    window: u64,
    extra: &[&str],
) -> redis::RedisResult<Vec<(String, i64)>> {
    let mut cmd = redis::cmd("RL.TOTALS");
    cmd.arg(key).arg(window).arg(extra);
    cmd.query(c)
}

/// `RL.THROTTLE key max_burst count period_ms [quantity]`.
pub fn throttle(
    c: &mut redis::Connection,
    key: &str,
    spec: [u64; 3],
    quantity: Option<u64>,
) -> Reply4 {
    let v: Vec<i64> = redis::cmd("RL.THROTTLE")
        .arg(key)
        .arg(&spec[..])
        .arg(quantity.as_slice())
        .query(c)
        .expect("RL.THROTTLE");
    four(v)
}

/// `CL.THROTTLE key max_burst count period_s [quantity]`.
pub fn cl_throttle(
    c: &mut redis::Connection,
    key: &str,
    spec: [u64; 3],
    quantity: Option<u64>,
) -> [i64; 5] {
    let v: Vec<i64> = redis::cmd("CL.THROTTLE")
        .arg(key)
        .arg(&spec[..])
        .arg(quantity.as_slice())
        .query(c)
        .expect("CL.THROTTLE");
    v.try_into().expect("five integers")
}

/// `RL.FIXED key limit window_ms [COST cost]`.
pub fn fixed(
    c: &mut redis::Connection,
    key: &str,
    limit: u64,
    window: u64,
    cost: Option<u64>,
) -> Reply4 {
    let mut cmd = redis::cmd("RL.FIXED");
    cmd.arg(key).arg(limit).arg(window);
    if let Some(cost) = cost {
        cmd.arg("COST").arg(cost);
    }
    let v: Vec<i64> = cmd.query(c).expect("RL.FIXED");
    four(v)
}

/// `RL.PEEK <line...>`: the four integers.
pub fn peek(c: &mut redis::Connection, line: &[&str]) -> Reply4 {
    let mut cmd = redis::cmd("RL.PEEK");
    for a in line {
        cmd.arg(*a);
    }
    let v: Vec<i64> = cmd
        .query(c)
        .unwrap_or_else(|e| panic!("RL.PEEK {line:?}: {e}"));
    four(v)
}

/// RL.ALL's reply: overall allowed, combined retry_after_ms, each clause's
/// four integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllReply {
    pub allowed: i64,
    pub retry_after_ms: i64,
    pub clauses: Vec<Reply4>,
}

/// `RL.ALL <line...>` (the words after the command name).
pub fn all(c: &mut redis::Connection, line: &[&str]) -> redis::RedisResult<AllReply> {
    let mut cmd = redis::cmd("RL.ALL");
    for a in line {
        cmd.arg(*a);
    }
    let v: Value = cmd.query(c)?;
    Ok(parse_all(&v))
}

pub fn parse_all(v: &Value) -> AllReply {
    let Value::Array(items) = v else {
        panic!("RL.ALL reply is not an array: {v:?}")
    };
    let int = |v: &Value| match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    };
    let clauses = items[2..]
        .iter()
        .map(|c| match c {
            Value::Array(four) => {
                let ints: Vec<i64> = four.iter().map(int).collect();
                ints.try_into().expect("four integers per clause")
            }
            other => panic!("clause reply is not an array: {other:?}"),
        })
        .collect();
    AllReply {
        allowed: int(&items[0]),
        retry_after_ms: int(&items[1]),
        clauses,
    }
}

/// `INFO rl` as `field -> value` (fields without the `rl_` prefix).
pub fn rl_info(c: &mut redis::Connection) -> std::collections::BTreeMap<String, u64> {
    let info: String = redis::cmd("INFO").arg("rl").query(c).unwrap();
    info.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            // A commit of decimal digits only is still no counter.
            if k == "rl_commit" {
                return None;
            }
            Some((k.strip_prefix("rl_")?.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// `INFO rl`'s per-prefix lines (`rl.stats-prefixes`), in their order:
/// `(prefix, [admitted, denied, shadow_denied])`. Panics on a line of
/// another shape.
pub fn prefix_counts(c: &mut redis::Connection) -> Vec<(String, [u64; 3])> {
    let info: String = redis::cmd("INFO").arg("rl").query(c).unwrap();
    let mut out = Vec::new();
    for (i, line) in info
        .lines()
        .filter(|l| l.starts_with("rl_prefix_"))
        .enumerate()
    {
        let (name, value) = line.split_once(':').unwrap();
        assert_eq!(name, format!("rl_prefix_{i}"), "{info}");
        let fields: Vec<(&str, &str)> = value
            .split(',')
            .map(|kv| kv.split_once('=').unwrap())
            .collect();
        let names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            ["prefix", "admitted", "denied", "shadow_denied"],
            "{line}"
        );
        let n = |j: usize| fields[j].1.parse::<u64>().unwrap();
        out.push((fields[0].1.to_string(), [n(1), n(2), n(3)]));
    }
    out
}

/// `[calls, admitted, denied, errors]` of one command (`slide`, `all`, ...).
pub fn counters(c: &mut redis::Connection, command: &str) -> [u64; 4] {
    let info = rl_info(c);
    ["calls", "admitted", "denied", "errors"].map(|f| {
        *info
            .get(&format!("{command}_{f}"))
            .unwrap_or_else(|| panic!("no rl_{command}_{f} in INFO rl: {info:?}"))
    })
}

/// The server's clock in ms (`TIME`).
pub fn server_ms(c: &mut redis::Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).unwrap();
    s * 1000 + us / 1000
}

//! Helpers for the RL.PEEK, RL.ALL, INFO rl and rl.denied tests.

use redis::Value;

use super::Reply4;

/// Runs a command line given as words; the raw reply or the error.
pub fn run(c: &mut redis::Connection, line: &[&str]) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd(line[0]);
    for a in &line[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
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
    v.try_into().expect("four integers")
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
            Some((k.strip_prefix("rl_")?.to_string(), v.trim().parse().ok()?))
        })
        .collect()
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

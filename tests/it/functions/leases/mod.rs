//! Leases (RL.ACQUIRE, RL.RELEASE, RL.RENEW, RL.PEEK ACQUIRE, RL.ALL
//! ACQUIRE clauses) through the module and through the library, compared
//! step by step.
//!
//! The ids rl makes differ between the editions (each draws its own
//! nonce), so the comparison pairs a module id with the library's in order
//! of appearance (the same position of the same reply) and compares the
//! module's answer with its ids translated; a generated id must have the
//! module's shape (`<now_ms base 36>-<64-bit nonce base 36>`). Lines that
//! name a generated id use each edition's own. Sorted sets are compared as
//! sets of (member, score): two leases with the same expiry sort by id,
//! which differs between the editions.
//!
//! The comparison is here; the random streams (also onto a replica without
//! rl) are in [`streams`], the targeted cases in [`bounds`] (work per call,
//! the largest arguments, the expiry), [`ids`], [`foreign`] (keys rl did
//! not write, which the streams use too) and [`servers`] (maxmemory, RESP3,
//! a clock stepped back).

mod bounds;
mod foreign;
mod ids;
mod servers;
pub(crate) mod streams;

use std::collections::HashMap;

use redis::Value;

use crate::functions::differential::{pair, run_line};
use crate::harness::Plain;

/// A word of a line: literal, or the i-th generated id (each edition's
/// own spelling).
#[derive(Debug, Clone)]
enum Word {
    Lit(String),
    Gen(usize),
}

fn lit(s: &str) -> Word {
    Word::Lit(s.to_string())
}

fn words(line: &[&str]) -> Vec<Word> {
    line.iter().map(|w| lit(w)).collect()
}

/// `<base 36>-<base 36>`, the nonce at most 13 digits and below 2^64; the
/// time part `now_ms` when given.
fn generated_shape(id: &[u8], now_ms: Option<&[u8]>) -> bool {
    let Ok(s) = std::str::from_utf8(id) else {
        return false;
    };
    let Some((time, nonce)) = s.split_once('-') else {
        return false;
    };
    let digits = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    };
    if !digits(time) || !digits(nonce) || nonce.len() > 13 || s.len() > 26 {
        return false;
    }
    let value = u128::from_str_radix(nonce, 36).unwrap();
    if value > u128::from(u64::MAX) {
        return false;
    }
    now_ms.is_none_or(|t| t == time.as_bytes())
}

fn base36(mut v: u64) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(digits[(v % 36) as usize]);
        v /= 36;
        if v == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// The ids made so far: (module's, library's), in order of appearance.
#[derive(Default)]
struct Ids {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    of_module: HashMap<Vec<u8>, usize>,
}

impl Ids {
    /// Pairs the bulk strings the two replies hold at the same place where
    /// they differ and both are generated ids (checked against the
    /// module's time part when `exact`).
    fn pair(&mut self, m: &Value, f: &Value, exact: bool) {
        match (m, f) {
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (x, y) in a.iter().zip(b) {
                    self.pair(x, y, exact);
                }
            }
            (Value::BulkString(x), Value::BulkString(y))
                if x != y && generated_shape(x, None) && !self.of_module.contains_key(x) =>
            {
                let time = x.split(|b| *b == b'-').next().unwrap();
                assert!(
                    generated_shape(y, exact.then_some(time)),
                    "the library's id {:?} has not the shape of the module's {:?}",
                    String::from_utf8_lossy(y),
                    String::from_utf8_lossy(x)
                );
                assert!(
                    !self.pairs.iter().any(|(_, f)| f == y),
                    "the library handed out {:?} twice",
                    String::from_utf8_lossy(y)
                );
                self.of_module.insert(x.clone(), self.pairs.len());
                self.pairs.push((x.clone(), y.clone()));
            }
            _ => {}
        }
    }

    fn translate_bytes(&self, b: &[u8]) -> Vec<u8> {
        match self.of_module.get(b) {
            Some(&i) => self.pairs[i].1.clone(),
            None => b.to_vec(),
        }
    }

    fn translate(&self, v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.iter().map(|x| self.translate(x)).collect()),
            Value::BulkString(b) => Value::BulkString(self.translate_bytes(b)),
            other => other.clone(),
        }
    }

    fn render(&self, line: &[Word], module: bool) -> Vec<String> {
        line.iter()
            .map(|w| match w {
                Word::Lit(s) => s.clone(),
                Word::Gen(i) => {
                    let (m, f) = &self.pairs[*i];
                    String::from_utf8(if module { m.clone() } else { f.clone() }).unwrap()
                }
            })
            .collect()
    }
}

/// A state as compared: sorted-set entries sorted by member (ties in
/// score sort by id, which differs), and without the instant when not
/// `exact` (scores and expiries dropped, only whether an expiry is set).
fn normal_state(state: &[(Plain, i64)], ids: Option<&Ids>, exact: bool) -> Vec<(Plain, i64)> {
    state
        .iter()
        .map(|(p, at)| {
            let p = match p {
                Plain::Zset(entries) => {
                    let mut e: Vec<(Vec<u8>, Vec<u8>)> = entries
                        .iter()
                        .map(|(m, s)| {
                            let m = ids.map_or(m.clone(), |ids| ids.translate_bytes(m));
                            (m, if exact { s.clone() } else { Vec::new() })
                        })
                        .collect();
                    e.sort();
                    Plain::Zset(e)
                }
                other => other.clone(),
            };
            (p, if exact { *at } else { at.signum() })
        })
        .collect()
}

/// A reply without what depends on the instant (not `exact`): every
/// `retry_after_ms` and `reset_after_ms`.
fn normal_reply(line0: &str, v: Value, exact: bool) -> Value {
    if exact {
        return v;
    }
    let zero4 = |v: Value| match v {
        Value::Array(mut a) if a.len() >= 4 => {
            a[2] = Value::Int(0);
            a[3] = Value::Int(0);
            Value::Array(a)
        }
        other => other,
    };
    match (line0.to_ascii_uppercase().as_str(), v) {
        ("RL.ALL", Value::Array(mut a)) if a.len() >= 2 => {
            a[1] = Value::Int(0);
            let a = a
                .into_iter()
                .enumerate()
                .map(|(i, x)| if i >= 2 { zero4(x) } else { x })
                .collect();
            Value::Array(a)
        }
        (_, v) => zero4(v),
    }
}

/// Runs the line through the module (`m:` keys, its ids) and the library
/// (`f:` keys, its ids); pairs new ids; requires the same answer, the
/// module's ids translated. Returns the library's reply.
fn check(
    c: &mut redis::Connection,
    ids: &mut Ids,
    line: &[Word],
    exact: bool,
) -> Result<Value, String> {
    check_on(c, None, ids, line, exact)
}

/// [`check`], the lines run on `c`, the state read on `state` when given
/// (a RESP2 connection while `c` speaks RESP3).
fn check_on(
    c: &mut redis::Connection,
    state: Option<&mut redis::Connection>,
    ids: &mut Ids,
    line: &[Word],
    exact: bool,
) -> Result<Value, String> {
    let m_words = ids.render(line, true);
    let f_words = ids.render(line, false);
    let m_refs: Vec<&str> = m_words.iter().map(String::as_str).collect();
    let f_refs: Vec<&str> = f_words.iter().map(String::as_str).collect();
    let (module, functions) = pair(c, state, &m_refs, &f_refs);
    if let (Ok(m), Ok(f)) = (&module.reply, &functions.reply) {
        ids.pair(m, f, exact);
    }
    let name = m_refs[0];
    let m_reply = module
        .reply
        .clone()
        .map(|v| normal_reply(name, ids.translate(&v), exact));
    let f_reply = functions
        .reply
        .clone()
        .map(|v| normal_reply(name, v, exact));
    assert_eq!(
        m_reply, f_reply,
        "{m_words:?} / {f_words:?}: the module (left) and the library (right) reply differently"
    );
    assert_eq!(
        normal_state(&module.state, Some(ids), exact),
        normal_state(&functions.state, None, exact),
        "{m_words:?} / {f_words:?}: the module (left) and the library (right) store differently"
    );
    functions.reply
}

/// Runs a plain command on both `m:<key>` and `f:<key>` (setting up a
/// foreign key the same way for both).
fn on_both(c: &mut redis::Connection, line: &[&str]) {
    for prefix in ["m:", "f:"] {
        let words: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i == 1 {
                    format!("{prefix}{w}")
                } else {
                    w.to_string()
                }
            })
            .collect();
        run_line(c, &words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    }
}

fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Array(a) => a
            .iter()
            .filter_map(|x| match x {
                Value::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => panic!("not an array: {v:?}"),
    }
}

/// Exactly the same answer for `line` (named ids only), through the
/// module and the library.
fn same(c: &mut redis::Connection, line: &[&str]) -> Result<Value, String> {
    check(c, &mut Ids::default(), &words(line), true)
}

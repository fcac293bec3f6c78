//! The function edition (`functions/rl.lua`) against the module on real
//! servers. The differential tests run a command line through the module
//! (`RL.SLIDE m:k ...`) and through the library (`FCALL rl_slide 1 f:k
//! ...`) on the same server at the same instant, and require the same
//! reply (or the same error text) and the same stored state: value and
//! absolute expiry, key by key. On Valkey the clock is stopped, so the
//! instants are identical; on Redis the streams run with the real clock
//! and compare what does not depend on the instant.

use redis::Value;

use crate::harness::{plain_key, run, Plain, Server};

mod all;
mod assembly;
mod buckets;
mod continuity;
mod leases;
mod servers;
mod slide;
mod throttle;

/// The library's source, as `FUNCTION LOAD` takes it.
pub const LIBRARY: &str = include_str!("../../../functions/rl.lua");

/// Loads (or replaces) the library on the server of `c`.
pub fn load(c: &mut redis::Connection) {
    let name: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(LIBRARY)
        .query(c)
        .expect("FUNCTION LOAD functions/rl.lua");
    assert_eq!(name, "rl");
}

/// A server with the module and the library, its clock stopped where the
/// pairing allows it (Valkey).
pub fn start_both(flavor: crate::harness::Flavor) -> Server {
    let server = Server::start_clocked(flavor, &[]);
    load(&mut server.conn());
    server
}

/// A server with the library and without the module.
pub fn start_functions_only(flavor: crate::harness::Flavor, extra: &[&str]) -> Server {
    let server = Server::start_in(flavor, crate::harness::new_dir(flavor), extra, false);
    load(&mut server.conn());
    server
}

/// Where a command's keys are in its line (name at 0): (first, count),
/// never past the line's end. RL.ALL's count is its `numkeys`.
fn key_span(line: &[&str]) -> (usize, usize) {
    let (first, count) = match line[0].to_ascii_uppercase().as_str() {
        "RL.PEEK" | "RL.REFUND" => (2, 1),
        "RL.ALL" => (2, line.get(1).and_then(|n| n.parse().ok()).unwrap_or(0)),
        _ => (1, 1),
    };
    (first, count.min(line.len().saturating_sub(first)))
}

/// `RL.SLIDE k 10 1000` as the library's call: `FCALL rl_slide 1 k 10
/// 1000` (RL.PEEK / RL.REFUND: the limiter token after the key; RL.ALL: its
/// numkeys is FCALL's).
pub fn fcall_line(line: &[&str]) -> Vec<String> {
    let name = line[0].to_ascii_lowercase().replace('.', "_");
    let (first, count) = key_span(line);
    let keys = &line[first..first + count];
    let mut out = vec!["FCALL".to_string(), name, count.to_string()];
    out.extend(keys.iter().map(|k| k.to_string()));
    let rest: Vec<&str> = match line[0].to_ascii_uppercase().as_str() {
        // The limiter token, then the parameters.
        "RL.PEEK" | "RL.REFUND" => line[1..2]
            .iter()
            .chain(&line[first + count..])
            .copied()
            .collect(),
        _ => line[first + count..].to_vec(),
    };
    out.extend(rest.iter().map(|a| a.to_string()));
    out
}

/// `line` with each key given `prefix` (`m:` for the module's keys, `f:`
/// for the library's), and the keys so named.
pub fn with_prefix(line: &[&str], prefix: &str) -> (Vec<String>, Vec<String>) {
    let (first, count) = key_span(line);
    let mut out: Vec<String> = line.iter().map(|a| a.to_string()).collect();
    let mut keys = Vec::new();
    for word in out.iter_mut().skip(first).take(count) {
        *word = format!("{prefix}{word}");
        keys.push(word.clone());
    }
    (out, keys)
}

fn run_owned(c: &mut redis::Connection, line: &[String]) -> Result<Value, String> {
    let words: Vec<&str> = line.iter().map(String::as_str).collect();
    run(c, &words).map_err(|e| crate::harness::error_text(&e))
}

/// What one edition answered to a line, and the state of its keys after.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Result<Value, String>,
    pub state: Vec<(Plain, i64)>,
}

/// Runs `line` (a module command line) through the module on `m:` keys,
/// then through the library on `f:` keys, on the same connection; the
/// module's answer first.
pub fn both(c: &mut redis::Connection, line: &[&str]) -> (Answer, Answer) {
    let (module_line, module_keys) = with_prefix(line, "m:");
    let (f_line, f_keys) = with_prefix(line, "f:");
    let f_words: Vec<&str> = f_line.iter().map(String::as_str).collect();
    let module = Answer {
        reply: run_owned(c, &module_line),
        state: module_keys
            .iter()
            .map(|k| plain_key(c, k.as_bytes()))
            .collect(),
    };
    let functions = Answer {
        reply: run_owned(c, &fcall_line(&f_words)),
        state: f_keys.iter().map(|k| plain_key(c, k.as_bytes())).collect(),
    };
    (module, functions)
}

/// [`both`], requiring the same answer: the same reply or error text, and
/// the same state key by key. Returns the module's reply.
///
/// One documented difference is let through: a refund that brings a GCRA
/// key's TAT to the current ms. The module keeps the key expiring at that
/// instant (idle, gone within the ms); the library's `SET ... PXAT now` is
/// deleted by the server at once (idle too). So a string key of the module
/// that expires at the server's current ms may be missing on the library's
/// side.
pub fn same(c: &mut redis::Connection, line: &[&str]) -> Result<Value, String> {
    let (module, functions) = both(c, line);
    let now_ms = crate::harness::server_ms(c);
    let alike = module.reply == functions.reply
        && module.state.len() == functions.state.len()
        && module.state.iter().zip(&functions.state).all(|(m, f)| {
            m == f || (matches!(m, (Plain::String(_), at) if *at == now_ms) && f.1 == -2)
        });
    assert!(
        alike,
        "{line:?}: the module and the library differ:\n  module:  {module:?}\n  library: {functions:?}"
    );
    module.reply
}

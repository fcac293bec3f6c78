//! The differential harness every limiter's test file shares: a command
//! line run through the module (on `m:` keys) and through the library (on
//! `f:` keys) on one server; the two answers compared whole, or through a
//! view of what does not depend on the instant; random streams of such
//! lines, with clock steps on a stopped clock; and a tally of what a stream
//! reached, so a stream that stops reaching a path fails.

use std::collections::BTreeMap;
use std::fmt::Debug;

use redis::Value;

use crate::harness::raw_resp::XorShift;
use crate::harness::{error_text, plain_key, run, Plain, Server};

// ------------------------------------------------------------------ lines

/// Where a command's keys are in its line (name at 0): (first, count),
/// never past the line's end. RL.ALL's count is its `numkeys`.
fn key_span(line: &[&str]) -> (usize, usize) {
    let (first, count) = match line[0].to_ascii_uppercase().as_str() {
        "RL.PEEK" | "RL.REFUND" | "RL.CHARGE" | "RL.BLOCK" | "RL.UNBLOCK" => (2, 1),
        "RL.ALL" => (2, line.get(1).and_then(|n| n.parse().ok()).unwrap_or(0)),
        _ => (1, 1),
    };
    (first, count.min(line.len().saturating_sub(first)))
}

/// `RL.SLIDE k 10 1000` as the library's call: `FCALL rl_slide 1 k 10
/// 1000` (RL.PEEK / RL.REFUND / RL.CHARGE: the limiter token after the key; RL.ALL: its
/// numkeys is FCALL's).
pub fn fcall_line(line: &[&str]) -> Vec<String> {
    let name = line[0].to_ascii_lowercase().replace('.', "_");
    let (first, count) = key_span(line);
    let keys = &line[first..first + count];
    let mut out = vec!["FCALL".to_string(), name, count.to_string()];
    out.extend(keys.iter().map(|k| k.to_string()));
    let rest: Vec<&str> = match line[0].to_ascii_uppercase().as_str() {
        // The limiter token, then the parameters.
        "RL.PEEK" | "RL.REFUND" | "RL.CHARGE" | "RL.BLOCK" | "RL.UNBLOCK" => line[1..2]
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

pub fn words(line: &[String]) -> Vec<&str> {
    line.iter().map(String::as_str).collect()
}

/// A line's reply, an error as its text.
pub fn run_line(c: &mut redis::Connection, line: &[String]) -> Result<Value, String> {
    run(c, &words(line)).map_err(|e| error_text(&e))
}

/// Runs a plain command on both editions' copies of key `k` (`m:k` and
/// `f:k`), `K` in `line` standing for the key: the same foreign or
/// prepared state on both sides.
pub fn on_both(c: &mut redis::Connection, k: &str, line: &[&str]) {
    for prefix in ["m:", "f:"] {
        let key = format!("{prefix}{k}");
        let words: Vec<&str> = line
            .iter()
            .map(|w| if *w == "K" { key.as_str() } else { w })
            .collect();
        run(c, &words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    }
}

/// The integers of an array reply (panics on anything else).
pub fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Int(n) => *n,
                other => panic!("not an integer: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

// ---------------------------------------------------------------- answers

/// What one edition answered to a line, and the state of its keys after.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Result<Value, String>,
    pub state: Vec<(Plain, i64)>,
}

/// RL.COUNT and RL.TOTALS reply name/total pairs in an order both editions
/// leave unspecified (the library's is its server's Lua table order): as
/// compared, the pairs sorted by name, a RESP2 flat array still an array
/// and a RESP3 map a map. Other replies as they are.
pub fn pairs_sorted(command: &str, reply: Result<Value, String>) -> Result<Value, String> {
    let command = command.to_ascii_uppercase();
    if command != "RL.COUNT" && command != "RL.TOTALS" {
        return reply;
    }
    let by_name = |p: &mut Vec<(Value, Value)>| p.sort_by_key(|(name, _)| format!("{name:?}"));
    match reply {
        Ok(Value::Array(flat)) => {
            let mut p: Vec<(Value, Value)> = flat
                .chunks(2)
                .map(|c| (c[0].clone(), c.get(1).cloned().unwrap_or(Value::Nil)))
                .collect();
            by_name(&mut p);
            Ok(Value::Array(
                p.into_iter().flat_map(|(n, t)| [n, t]).collect(),
            ))
        }
        Ok(Value::Map(mut p)) => {
            by_name(&mut p);
            Ok(Value::Map(p))
        }
        other => other,
    }
}

/// Runs `module` (a module command line) through the module on `m:` keys,
/// then `library` (the same command, its words as the library's side is
/// to get them) through the library on `f:` keys, on `c`; each side's
/// state is read on `state` when given (a RESP2 connection while `c`
/// speaks RESP3), else on `c`. The module's answer first; name/total
/// pairs as [`pairs_sorted`] has them.
pub fn pair(
    c: &mut redis::Connection,
    mut state: Option<&mut redis::Connection>,
    module: &[&str],
    library: &[&str],
) -> (Answer, Answer) {
    let (m_line, m_keys) = with_prefix(module, "m:");
    let (f_line, f_keys) = with_prefix(library, "f:");
    let m_reply = pairs_sorted(module[0], run_line(c, &m_line));
    let sc = state.as_deref_mut().unwrap_or(&mut *c);
    let m_state = m_keys.iter().map(|k| plain_key(sc, k.as_bytes())).collect();
    let f_reply = pairs_sorted(library[0], run_line(c, &fcall_line(&words(&f_line))));
    let sc = state.unwrap_or(&mut *c);
    let f_state = f_keys.iter().map(|k| plain_key(sc, k.as_bytes())).collect();
    (
        Answer {
            reply: m_reply,
            state: m_state,
        },
        Answer {
            reply: f_reply,
            state: f_state,
        },
    )
}

/// [`pair`] of one line, on one connection.
pub fn both(c: &mut redis::Connection, line: &[&str]) -> (Answer, Answer) {
    pair(c, None, line, line)
}

// -------------------------------------------------------------- comparing

/// A GCRA key whose TAT a refund brought to the current ms, `now_ms`, on a
/// whole-ms clock (the stopped clock reads whole µs of whole ms): the
/// module keeps the key expiring at that instant (idle, gone within the
/// ms), while the library's `SET ... PXAT now` is deleted by the server at
/// once (idle too). The one documented difference between the states, on
/// every release but Valkey 7.2, which keeps the library's key until the ms
/// passes as well (`Release::set_pxat_now_deletes_at_once`): there the two
/// states are simply equal.
pub fn idle_tat(state: &(Plain, i64), now_ms: i64) -> bool {
    let tat = (now_ms * 1000).to_string().into_bytes();
    matches!(&state.0, Plain::String(v) if *v == tat) && state.1 == now_ms
}

/// Runs `line` through both editions (see [`both`]) and requires the same
/// answer: the same reply or error text, and the same state key by key,
/// but for an [`idle_tat`] the library's side has already dropped. The
/// module's reply, and whether such an idle TAT was let through.
fn same_but_idle(c: &mut redis::Connection, line: &[&str]) -> (Result<Value, String>, bool) {
    let (module, functions) = both(c, line);
    let now_ms = crate::harness::server_ms(c);
    let mut idle = false;
    let alike = module.reply == functions.reply
        && module.state.len() == functions.state.len()
        && module.state.iter().zip(&functions.state).all(|(m, f)| {
            let let_through = f.1 == -2 && idle_tat(m, now_ms);
            idle |= let_through;
            m == f || let_through
        });
    assert!(
        alike,
        "{line:?}: the module and the library differ:\n  module:  {module:?}\n  library: {functions:?}"
    );
    (module.reply, idle)
}

/// The exact comparison: [`both`], requiring the same answer (see
/// [`same_but_idle`]). Returns the module's reply.
pub fn same(c: &mut redis::Connection, line: &[&str]) -> Result<Value, String> {
    same_but_idle(c, line).0
}

/// [`same`], answering the integers of the reply (panics on an error).
pub fn same_ints(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    match same(c, line) {
        Ok(v) => ints(&v),
        Err(e) => panic!("{line:?}: {e}"),
    }
}

/// [`same`], answering the error text (panics on a reply).
pub fn same_err(c: &mut redis::Connection, line: &[&str]) -> String {
    match same(c, line) {
        Ok(v) => panic!("{line:?} answered {v:?}"),
        Err(e) => e,
    }
}

/// [`same`], answering one integer (RL.BLOCK, RL.UNBLOCK).
pub fn same_int(c: &mut redis::Connection, line: &[&str]) -> i64 {
    match same(c, line) {
        Ok(Value::Int(n)) => n,
        other => panic!("{line:?}: {other:?}"),
    }
}

/// [`same`] for streams on a stopped clock: when the module kept an idle
/// TAT the clock steps 1 ms, so the next step finds no key on either side.
pub fn same_stepping(
    server: &Server,
    c: &mut redis::Connection,
    line: &[&str],
) -> Result<Value, String> {
    let (reply, idle) = same_but_idle(c, line);
    if idle {
        server.advance(1);
    }
    reply
}

/// [`both`], requiring that `view` of the two answers agree: what does not
/// depend on the instant when the clock runs. Both answers.
pub fn alike<T: PartialEq + Debug>(
    c: &mut redis::Connection,
    line: &[&str],
    view: impl Fn(&Answer) -> T,
) -> (Answer, Answer) {
    let (m, f) = both(c, line);
    assert_eq!(
        view(&m),
        view(&f),
        "{line:?}: the module (left) and the library (right) differ\n  module:  {m:?}\n  library: {f:?}"
    );
    (m, f)
}

/// Requires each key's states (module's, library's) to agree by `agree`.
pub fn states_agree(
    line: &[&str],
    m: &Answer,
    f: &Answer,
    agree: impl Fn(&(Plain, i64), &(Plain, i64)) -> bool,
) {
    assert_eq!(m.state.len(), f.state.len(), "{line:?}");
    for (ms, fs) in m.state.iter().zip(&f.state) {
        assert!(
            agree(ms, fs),
            "{line:?}: states differ: module {ms:?}, library {fs:?}"
        );
    }
}

// ---------------------------------------------------------------- streams

/// How a stream steps a stopped clock: one line in `one_in` is preceded by
/// a step of `ms`. A running clock is never stepped (and draws nothing).
pub struct ClockSteps {
    pub one_in: u64,
    pub ms: StepMs,
}

/// The length of one step of a stopped clock.
pub enum StepMs {
    /// One of these, each as likely.
    OneOf(&'static [u64]),
    /// Any whole ms below this.
    Below(u64),
}

impl ClockSteps {
    pub fn maybe_step(&self, server: &Server, rng: &mut XorShift) {
        if server.clock_stopped() && rng.below(self.one_in) == 0 {
            server.advance(match self.ms {
                StepMs::OneOf(ms) => *rng.pick(ms),
                StepMs::Below(ms) => rng.below(ms),
            });
        }
    }
}

/// One step of a stream: the line to compare, and plain commands (`K` for
/// the key, as [`on_both`]) to run on both sides of `key` after it, to
/// undo a state prepared for this step only.
pub struct Step {
    pub line: Vec<String>,
    pub undo: Option<(String, Vec<String>)>,
}

impl From<Vec<String>> for Step {
    fn from(line: Vec<String>) -> Step {
        Step { line, undo: None }
    }
}

/// Runs a stream of `steps` steps on `c`: each step's line from `next`,
/// compared by `compare` (which returns the module's reply), then its
/// undo, and the reply counted in `tally`.
pub fn run_stream(
    c: &mut redis::Connection,
    steps: usize,
    tally: &mut Tally,
    mut next: impl FnMut(&mut redis::Connection, &Tally) -> Step,
    mut compare: impl FnMut(&mut redis::Connection, &[&str]) -> Result<Value, String>,
) {
    for _ in 0..steps {
        let step = next(c, tally);
        let line = words(&step.line);
        let reply = compare(c, &line);
        if let Some((key, undo)) = &step.undo {
            on_both(c, key, &words(undo));
        }
        tally.count(&line, &reply);
    }
}

/// What a stream reached, by outcome ("admitted", "denied", "peeked" and
/// "peek admitted" or "peek denied", with OLDEST "peek oldest counted" or
/// "peek oldest empty", "refunded", "nothing refunded", "charged", "nothing charged",
/// "all admitted", "all denied", "totals",
/// "error", and what a test adds of its own), and the error texts met.
#[derive(Debug, Default)]
pub struct Tally {
    pub outcomes: BTreeMap<String, usize>,
    pub errors: BTreeMap<String, usize>,
}

impl Tally {
    pub fn add(&mut self, what: &str) {
        *self.outcomes.entry(what.to_string()).or_insert(0) += 1;
    }

    pub fn get(&self, what: &str) -> usize {
        self.outcomes.get(what).copied().unwrap_or(0)
    }

    /// Counts a reply to `line` by its outcome.
    pub fn count(&mut self, line: &[&str], reply: &Result<Value, String>) {
        let v = match reply {
            Err(e) => {
                self.add("error");
                *self.errors.entry(e.clone()).or_insert(0) += 1;
                return;
            }
            Ok(v) => v,
        };
        let first = match v {
            Value::Array(items) => match items.first() {
                Some(Value::Int(n)) => Some(*n),
                _ => None,
            },
            Value::Int(n) => Some(*n),
            _ => None,
        };
        let name = line[0].to_ascii_uppercase();
        if name == "RL.PEEK" {
            self.add("peeked");
            // OLDEST's fifth integer: the wait until the oldest counted
            // unit leaves, 0 for a window that counts nothing.
            if let Value::Array(items) = v {
                match items.get(4) {
                    Some(Value::Int(0)) => self.add("peek oldest empty"),
                    Some(Value::Int(_)) => self.add("peek oldest counted"),
                    _ => {}
                }
            }
        }
        let what = match (name.as_str(), first) {
            ("RL.COUNT" | "RL.TOTALS", _) => "totals",
            ("RL.PEEK", Some(1)) => "peek admitted",
            ("RL.PEEK", _) => "peek denied",
            ("RL.REFUND", Some(n)) if n > 0 => "refunded",
            ("RL.REFUND", _) => "nothing refunded",
            ("RL.BLOCK", _) => "blocked by hand",
            ("RL.UNBLOCK", Some(1)) => "unblocked",
            ("RL.UNBLOCK", _) => "nothing to unblock",
            ("RL.CHARGE", Some(n)) if n > 0 => "charged",
            ("RL.CHARGE", _) => "nothing charged",
            ("RL.ALL", Some(1)) => "all admitted",
            ("RL.ALL", _) => "all denied",
            // CL.THROTTLE answers 0 for admitted.
            ("CL.THROTTLE", Some(0)) => "admitted",
            ("CL.THROTTLE", _) => "denied",
            (_, Some(1)) => "admitted",
            (_, Some(0)) => "denied",
            _ => "other",
        };
        self.add(what);
    }

    /// Requires at least `n` of each outcome named.
    pub fn require(&self, at_least: &[(&str, usize)]) {
        for (what, n) in at_least {
            assert!(
                self.get(what) >= *n,
                "the stream reached {what} {} times, fewer than {n}: {self:#?}",
                self.get(what)
            );
        }
    }
}

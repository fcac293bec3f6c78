//! Every command, through the module (on `m:` keys) and through the
//! library (on `f:` keys) of one server, each answer as written here: the
//! parts of it that hold at any instant (windows of ten minutes, so nothing
//! leaves them during the test), on a running clock as on a stopped one.

use redis::Value;

use crate::functions::differential::{both, pairs_sorted, Answer};
use crate::functions::start_both;
use crate::harness::{Flavor, Plain};

const W: &str = "600000";

/// Each line, and its answer as [`view`] writes it. Limits are small, so
/// each limiter admits, denies, peeks, refunds, charges and is blocked.
/// A refund's `remaining`, as a decision's, is what a call of one unit
/// would leave; a denied RL.ALL's clauses answer as each would decide.
const LINES: &[(&[&str], &str)] = &[
    (&["RL.SLIDE", "s", "2", W], "1 1"),
    (&["RL.SLIDE", "s", "2", W, "COST", "1"], "1 0"),
    (&["RL.SLIDE", "s", "2", W], "0 0"),
    (&["RL.PEEK", "SLIDE", "s", "2", W], "0 0"),
    (&["RL.REFUND", "SLIDE", "s", "2", W], "1 0"),
    (&["RL.CHARGE", "SLIDE", "s", "2", W, "COST", "3"], "3 0"),
    (&["RL.BLOCK", "SLIDE", "s", "60000"], "block set"),
    (&["RL.SLIDE", "s", "5", W], "0 0"),
    (&["RL.UNBLOCK", "SLIDE", "s"], "1"),
    (&["RL.UNBLOCK", "SLIDE", "s"], "0"),
    (&["RL.BUCKETS", "b", "2", W], "1 1"),
    (&["RL.BUCKETS", "b", "2", W, "PRECISION", "10000"], "1 0"),
    (&["RL.BUCKETS", "b", "2", W], "0 0"),
    (&["RL.PEEK", "BUCKETS", "b", "2", W], "0 0"),
    (&["RL.REFUND", "BUCKETS", "b", "2", W], "1 0"),
    (&["RL.CHARGE", "BUCKETS", "b", "2", W, "COST", "3"], "3 0"),
    (&["RL.COUNT", "c", W, "ok"], "ok=1"),
    (&["RL.COUNT", "c", W, "fail", "BY", "3"], "fail=3 ok=1"),
    (&["RL.TOTALS", "c", W], "fail=3 ok=1"),
    (&["RL.THROTTLE", "t", "1", "1", W], "1 1"),
    (&["RL.THROTTLE", "t", "1", "1", W], "1 0"),
    (&["RL.THROTTLE", "t", "1", "1", W], "0 0"),
    (&["RL.PEEK", "THROTTLE", "t", "1", "1", W], "0 0"),
    (&["RL.REFUND", "THROTTLE", "t", "1", "1", W], "1 0"),
    (
        &["RL.CHARGE", "THROTTLE", "t", "1", "1", W, "COST", "3"],
        "3 0",
    ),
    (&["RL.THROTTLE", "tb", "0", "1", W, "BLOCK", "60000"], "1 0"),
    (&["RL.THROTTLE", "tb", "0", "1", W, "BLOCK", "60000"], "0 0"),
    (&["RL.UNBLOCK", "THROTTLE", "tb"], "1"),
    (&["CL.THROTTLE", "cl", "1", "1", "600"], "0 2 1"),
    (&["CL.THROTTLE", "cl", "1", "1", "600"], "0 2 0"),
    (&["CL.THROTTLE", "cl", "1", "1", "600"], "1 2 0"),
    (&["RL.FIXED", "f", "2", W], "1 1"),
    (&["RL.FIXED", "f", "2", W], "1 0"),
    (&["RL.FIXED", "f", "2", W], "0 0"),
    (&["RL.PEEK", "FIXED", "f", "2", W], "0 0"),
    (&["RL.REFUND", "FIXED", "f", "2", W, "COST", "2"], "2 1"),
    (&["RL.CHARGE", "FIXED", "f", "2", W, "COST", "3"], "3 0"),
    (&["RL.FIXED", "fb", "1", W, "BLOCK", "60000"], "1 0"),
    (&["RL.FIXED", "fb", "1", W, "BLOCK", "60000"], "0 0"),
    (&["RL.BLOCK", "FIXED", "fx", "60000"], "block set"),
    (&["RL.FIXED", "fx", "5", W], "0 0"),
    (
        &["RL.ALL", "2", "a1", "a2", "SLIDE", "1", W, "FIXED", "5", W],
        "1 | 1 0 | 1 4",
    ),
    (
        &["RL.ALL", "2", "a1", "a2", "SLIDE", "1", W, "FIXED", "5", W],
        "0 | 0 0 | 1 3",
    ),
    (&["RL.ACQUIRE", "j", "2", W, "ID", "one"], "1 1"),
    (&["RL.ACQUIRE", "j", "2", W, "ID", "two"], "1 0"),
    (&["RL.ACQUIRE", "j", "2", W], "0 0"),
    (&["RL.PEEK", "ACQUIRE", "j", "2", W], "0 0"),
    (&["RL.RENEW", "j", "one", W], "1 2"),
    (&["RL.RELEASE", "j", "two"], "1 1"),
    (&["RL.RELEASE", "j", "two"], "0 1"),
    (&["RL.ACQUIRE", "j", "2", W], "1 0"),
    (
        &["RL.SLIDE", "s", "0", W],
        "ERR limit must be an integer from 1 to 1000000",
    ),
];

/// The integers of `v` from its start, up to `n`, as text.
fn head(v: &Value, n: usize) -> String {
    let Value::Array(items) = v else {
        panic!("not an array: {v:?}")
    };
    items
        .iter()
        .take(n)
        .map(|i| match i {
            Value::Int(n) => n.to_string(),
            other => panic!("not an integer: {other:?} in {v:?}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What of a reply holds at any instant: the decision's `allowed` (or
/// `refunded`, `charged`, `released`, `renewed`) and `remaining` (`held`);
/// CL.THROTTLE's `limited`, `limit` and `remaining`; RL.ALL's `allowed`
/// and each clause's two; the totals by name; that RL.BLOCK set an end;
/// RL.UNBLOCK's answer; an error's text.
fn view(line: &[&str], reply: &Result<Value, String>) -> String {
    let v = match pairs_sorted(line[0], reply.clone()) {
        Err(e) => return e,
        Ok(v) => v,
    };
    match line[0] {
        "CL.THROTTLE" => head(&v, 3),
        "RL.COUNT" | "RL.TOTALS" => {
            let Value::Array(flat) = &v else {
                panic!("{line:?}: {v:?}")
            };
            flat.chunks(2)
                .map(|p| match (&p[0], &p[1]) {
                    (Value::BulkString(name), Value::Int(n)) => {
                        format!("{}={n}", String::from_utf8_lossy(name))
                    }
                    other => panic!("{line:?}: {other:?}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        "RL.ALL" => {
            let Value::Array(items) = &v else {
                panic!("{line:?}: {v:?}")
            };
            let mut out = vec![head(&Value::Array(items[..1].to_vec()), 1)];
            out.extend(items[2..].iter().map(|clause| head(clause, 2)));
            out.join(" | ")
        }
        "RL.BLOCK" => match v {
            Value::Int(end) if end > 0 => "block set".into(),
            other => panic!("{line:?}: {other:?}"),
        },
        "RL.UNBLOCK" => match v {
            Value::Int(n) => n.to_string(),
            other => panic!("{line:?}: {other:?}"),
        },
        _ => head(&v, 2),
    }
}

/// What of a key's state holds at any instant: its type, and whether it
/// expires.
fn kind(state: &(Plain, i64)) -> String {
    let t = match &state.0 {
        Plain::String(_) => "string",
        Plain::Zset(_) => "zset",
        Plain::Hash(_) => "hash",
        Plain::Other(t) => t.as_str(),
    };
    format!("{t} expires {}", state.1 > 0)
}

fn kinds(a: &Answer) -> Vec<String> {
    a.state.iter().map(kind).collect()
}

/// Runs [`LINES`] on a server with the module and the library.
pub fn in_both_editions(flavor: Flavor) {
    let mut server = start_both(flavor);
    let mut c = server.conn();
    for (line, want) in LINES {
        let (module, library) = both(&mut c, line);
        let (m, f) = (view(line, &module.reply), view(line, &library.reply));
        assert_eq!(
            (m.as_str(), f.as_str()),
            (*want, *want),
            "{flavor:?} {line:?}: (module, library)\n  module:  {module:?}\n  library: {library:?}"
        );
        assert_eq!(kinds(&module), kinds(&library), "{flavor:?} {line:?}");
    }
    server.assert_alive();
}

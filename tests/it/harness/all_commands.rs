//! Every rl command in one place, for the tests that must hold for all of
//! them: command lines that admit up to a limit over a long window, and a
//! mixed workload.

/// The commands that write state (RL.TOTALS only reads RL.COUNT's), and
/// the two that admit through other layouts: `RL.ALL` (a `SLIDE` and a
/// `FIXED` clause) and `RL.ACQUIRE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    Slide,
    Buckets,
    Count,
    Throttle,
    ClThrottle,
    Fixed,
    All,
    Acquire,
}

/// The six limiters' own commands.
pub const WRITERS: [Writer; 6] = [
    Writer::Slide,
    Writer::Buckets,
    Writer::Count,
    Writer::Throttle,
    Writer::ClThrottle,
    Writer::Fixed,
];

/// Every command that admits (or counts) a request: [`WRITERS`], `RL.ALL`
/// and `RL.ACQUIRE`.
pub const LIMITERS: [Writer; 8] = [
    Writer::Slide,
    Writer::Buckets,
    Writer::Count,
    Writer::Throttle,
    Writer::ClThrottle,
    Writer::Fixed,
    Writer::All,
    Writer::Acquire,
];

/// Every command name, for tables that cover them all.
pub const COMMANDS: [&str; 16] = [
    "RL.SLIDE",
    "RL.BUCKETS",
    "RL.COUNT",
    "RL.TOTALS",
    "RL.THROTTLE",
    "CL.THROTTLE",
    "RL.FIXED",
    "RL.PEEK",
    "RL.REFUND",
    "RL.ALL",
    "RL.ACQUIRE",
    "RL.RELEASE",
    "RL.RENEW",
    "RL.BLOCK",
    "RL.UNBLOCK",
    "RL.CHARGE",
];

/// Ten minutes: no test outlives it, so nothing admitted leaves the window.
pub const LONG_MS: u64 = 600_000;

impl Writer {
    pub fn name(self) -> &'static str {
        match self {
            Writer::Slide => "RL.SLIDE",
            Writer::Buckets => "RL.BUCKETS",
            Writer::Count => "RL.COUNT",
            Writer::Throttle => "RL.THROTTLE",
            Writer::ClThrottle => "CL.THROTTLE",
            Writer::Fixed => "RL.FIXED",
            Writer::All => "RL.ALL",
            Writer::Acquire => "RL.ACQUIRE",
        }
    }

    /// The second key of an `RL.ALL` line (its `FIXED` clause's).
    pub fn all_second_key(key: &str) -> String {
        format!("{key}:fixed")
    }

    /// A call admitting at most `limit` units per key over [`LONG_MS`]
    /// (the GCRA commands: a burst of `limit` and then one per window;
    /// `RL.ACQUIRE`: `limit` leases of [`LONG_MS`], ids made by rl; `RL.ALL`:
    /// `key` and [`all_second_key`](Self::all_second_key), `limit` each).
    /// RL.COUNT has no limit: it counts every call.
    pub fn admit_line(self, key: &str, limit: u64) -> Vec<Vec<u8>> {
        let second = Writer::all_second_key(key);
        let (l, w, b) = (
            limit.to_string(),
            LONG_MS.to_string(),
            (limit - 1).to_string(),
        );
        let s = (LONG_MS / 1000).to_string();
        let args: Vec<&str> = match self {
            Writer::Slide => vec!["RL.SLIDE", key, &l, &w],
            Writer::Buckets => vec!["RL.BUCKETS", key, &l, &w],
            Writer::Count => vec!["RL.COUNT", key, &w, "hits"],
            Writer::Throttle => vec!["RL.THROTTLE", key, &b, "1", &w],
            Writer::ClThrottle => vec!["CL.THROTTLE", key, &b, "1", &s],
            Writer::Fixed => vec!["RL.FIXED", key, &l, &w],
            Writer::All => vec![
                "RL.ALL", "2", key, &second, "SLIDE", &l, &w, "FIXED", &l, &w,
            ],
            Writer::Acquire => vec!["RL.ACQUIRE", key, &l, &w],
        };
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    /// Whether a reply to [`admit_line`](Self::admit_line) admitted (or
    /// counted) the call. Integers are the reply's, in order.
    pub fn admitted(self, ints: &[i64]) -> bool {
        match self {
            Writer::ClThrottle => ints[0] == 0,
            Writer::Count => true,
            _ => ints[0] == 1,
        }
    }

    /// [`admitted`](Self::admitted) of a reply as the `redis` crate read it
    /// (for `RL.ALL` and `RL.ACQUIRE`, whose replies hold more than
    /// integers, its first element).
    pub fn admits(self, reply: &redis::Value) -> bool {
        if self == Writer::Count {
            return true;
        }
        let ints: Vec<i64> = match self {
            Writer::All | Writer::Acquire => match reply {
                redis::Value::Array(items) => vec![redis::from_redis_value(&items[0])
                    .unwrap_or_else(|e| panic!("{}: {reply:?}: {e}", self.name()))],
                other => panic!("{}: {other:?}", self.name()),
            },
            _ => redis::from_redis_value(reply)
                .unwrap_or_else(|e| panic!("{}: {reply:?}: {e}", self.name())),
        };
        self.admitted(&ints)
    }
}

/// A mixed workload on every command: admits, denials, costs, options,
/// peeks of every limiter, refunds of every limiter, `RL.ALL` over every
/// limiter, leases acquired, renewed and released, several fields, blocks
/// (set by a breach and by hand, lifted early), charges of every limiter
/// past its limit, over `keys` subjects per command. Windows are long
/// enough that nothing expires during a test.
pub fn mixed_lines(prefix: &str, keys: usize) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let w = LONG_MS.to_string();
    let s = (LONG_MS / 1000).to_string();
    for round in 0..6 {
        for k in 0..keys {
            let key = |c: &str| format!("{prefix}:{c}:{k}");
            let cost = (1 + (k + round) % 3).to_string();
            let mut lines: Vec<Vec<String>> = vec![
                vec![
                    "RL.SLIDE".into(),
                    key("slide"),
                    "8".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                ],
                vec![
                    "RL.BUCKETS".into(),
                    key("buckets"),
                    "9".into(),
                    w.clone(),
                    "PRECISION".into(),
                    "10000".into(),
                    "COST".into(),
                    cost.clone(),
                ],
                vec!["RL.BUCKETS".into(), key("bdefault"), "5".into(), w.clone()],
                vec![
                    "RL.COUNT".into(),
                    key("count"),
                    w.clone(),
                    ["ok", "fail", "slow"][(k + round) % 3].into(),
                    "BY".into(),
                    cost.clone(),
                ],
                vec!["RL.TOTALS".into(), key("count"), w.clone()],
                vec![
                    "RL.THROTTLE".into(),
                    key("throttle"),
                    "3".into(),
                    "2".into(),
                    w.clone(),
                    cost.clone(),
                ],
                vec![
                    "RL.THROTTLE".into(),
                    key("throttle"),
                    "3".into(),
                    "2".into(),
                    w.clone(),
                    "0".into(),
                ],
                vec![
                    "CL.THROTTLE".into(),
                    key("cell"),
                    "4".into(),
                    "1".into(),
                    s.clone(),
                    cost.clone(),
                ],
                vec![
                    "RL.FIXED".into(),
                    key("fixed"),
                    "7".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                ],
                // Every limiter at once; denied once a clause is full
                // (writing nothing in any key).
                vec![
                    "RL.ALL".into(),
                    "5".into(),
                    key("all-slide"),
                    key("all-buckets"),
                    key("all-throttle"),
                    key("all-fixed"),
                    key("all-jobs"),
                    "SLIDE".into(),
                    "6".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                    "BUCKETS".into(),
                    "7".into(),
                    w.clone(),
                    "PRECISION".into(),
                    "10000".into(),
                    "THROTTLE".into(),
                    "3".into(),
                    "1".into(),
                    w.clone(),
                    "FIXED".into(),
                    "8".into(),
                    w.clone(),
                    "ACQUIRE".into(),
                    "4".into(),
                    w.clone(),
                    "ID".into(),
                    format!("all{round}"),
                ],
                // Leases: three slots, named ids (made ids differ from
                // server to server); one released, one renewed.
                vec![
                    "RL.ACQUIRE".into(),
                    key("jobs"),
                    "3".into(),
                    w.clone(),
                    "ID".into(),
                    format!("job{round}"),
                ],
                vec!["RL.RENEW".into(), key("jobs"), "job0".into(), w.clone()],
                vec![
                    "RL.PEEK".into(),
                    "ACQUIRE".into(),
                    key("jobs"),
                    "3".into(),
                    w.clone(),
                ],
                vec![
                    "RL.PEEK".into(),
                    "SLIDE".into(),
                    key("slide"),
                    "8".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                ],
                vec![
                    "RL.PEEK".into(),
                    "BUCKETS".into(),
                    key("buckets"),
                    "9".into(),
                    w.clone(),
                    "PRECISION".into(),
                    "10000".into(),
                ],
                vec![
                    "RL.PEEK".into(),
                    "THROTTLE".into(),
                    key("cell"),
                    "4".into(),
                    "1".into(),
                    w.clone(),
                ],
                vec![
                    "RL.PEEK".into(),
                    "FIXED".into(),
                    key("fixed"),
                    "7".into(),
                    w.clone(),
                ],
            ];
            if round == 1 {
                lines.push(vec!["RL.RELEASE".into(), key("jobs"), "job1".into()]);
            }
            // Blocks: THROTTLE and FIXED keys blocked by their third call
            // (a breach with BLOCK) and denied by the block after; lifted
            // on round 3 (counts kept, so the next call breaches again); a
            // ban by hand on a key of its own. Charges of every limiter on
            // the keys the admissions above write, past their limits.
            let block = (LONG_MS / 2).to_string();
            lines.extend([
                vec![
                    "RL.THROTTLE".into(),
                    key("tblock"),
                    "1".into(),
                    "1".into(),
                    w.clone(),
                    "BLOCK".into(),
                    block.clone(),
                ],
                vec![
                    "RL.FIXED".into(),
                    key("fblock"),
                    "2".into(),
                    w.clone(),
                    "BLOCK".into(),
                    block.clone(),
                ],
                vec![
                    "RL.CHARGE".into(),
                    "SLIDE".into(),
                    key("slide"),
                    "8".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                ],
                vec![
                    "RL.CHARGE".into(),
                    "BUCKETS".into(),
                    key("buckets"),
                    "9".into(),
                    w.clone(),
                    "PRECISION".into(),
                    "10000".into(),
                    "COST".into(),
                    cost.clone(),
                ],
                vec![
                    "RL.CHARGE".into(),
                    "THROTTLE".into(),
                    key("throttle"),
                    "3".into(),
                    "2".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                ],
                vec![
                    "RL.CHARGE".into(),
                    "FIXED".into(),
                    key("fixed"),
                    "7".into(),
                    w.clone(),
                    "COST".into(),
                    cost.clone(),
                ],
            ]);
            if round == 0 {
                lines.push(vec![
                    "RL.BLOCK".into(),
                    "FIXED".into(),
                    key("ban"),
                    block.clone(),
                ]);
            }
            if round == 3 {
                lines.extend([
                    vec!["RL.UNBLOCK".into(), "THROTTLE".into(), key("tblock")],
                    vec!["RL.UNBLOCK".into(), "FIXED".into(), key("fblock")],
                ]);
            }
            // Refunds of every limiter on every other round, on state the
            // admissions left (CL.THROTTLE's with THROTTLE, period in ms).
            if round % 2 == 1 {
                lines.extend([
                    vec![
                        "RL.REFUND".into(),
                        "SLIDE".into(),
                        key("slide"),
                        "8".into(),
                        w.clone(),
                    ],
                    vec![
                        "RL.REFUND".into(),
                        "BUCKETS".into(),
                        key("buckets"),
                        "9".into(),
                        w.clone(),
                        "PRECISION".into(),
                        "10000".into(),
                        "COST".into(),
                        "2".into(),
                    ],
                    vec![
                        "RL.REFUND".into(),
                        "THROTTLE".into(),
                        key("throttle"),
                        "3".into(),
                        "2".into(),
                        w.clone(),
                    ],
                    vec![
                        "RL.REFUND".into(),
                        "THROTTLE".into(),
                        key("cell"),
                        "4".into(),
                        "1".into(),
                        w.clone(),
                        "2".into(),
                    ],
                    vec![
                        "RL.REFUND".into(),
                        "FIXED".into(),
                        key("fixed"),
                        "7".into(),
                        w.clone(),
                        "COST".into(),
                        cost.clone(),
                    ],
                ]);
            }
            out.extend(
                lines
                    .into_iter()
                    .map(|l| l.into_iter().map(String::into_bytes).collect()),
            );
        }
    }
    out
}

/// Runs [`mixed_lines`] on `c`, every reply checked to be a value.
pub fn mixed_traffic(c: &mut redis::Connection, prefix: &str, keys: usize) {
    let mut pipe = redis::pipe();
    for l in mixed_lines(prefix, keys) {
        let mut cmd = redis::cmd(std::str::from_utf8(&l[0]).unwrap());
        for a in &l[1..] {
            cmd.arg(a.as_slice());
        }
        pipe.add_command(cmd);
    }
    let _: Vec<redis::Value> = pipe.query(c).expect("mixed traffic");
}

/// A call of every command (RL.TOTALS, RL.PEEK, RL.ALL, RL.BLOCK,
/// RL.UNBLOCK and RL.CHARGE of every limiter it takes too), each on
/// its own key `{prefix}{i}`: a valid call wherever the key is free.
pub fn every_command(prefix: &str) -> Vec<Vec<String>> {
    let mut lines: Vec<Vec<String>> = WRITERS
        .iter()
        .map(|w| {
            w.admit_line("K", 5)
                .into_iter()
                .map(|a| String::from_utf8(a).unwrap())
                .collect()
        })
        .collect();
    for l in [
        &["RL.TOTALS", "K", "600000"][..],
        &["RL.PEEK", "SLIDE", "K", "5", "600000"],
        &["RL.ALL", "1", "K", "FIXED", "5", "600000"],
        &["RL.BLOCK", "THROTTLE", "K", "60000"],
        &["RL.BLOCK", "FIXED", "K", "60000"],
        &["RL.UNBLOCK", "FIXED", "K"],
        &["RL.CHARGE", "SLIDE", "K", "5", "600000", "COST", "2"],
        &["RL.CHARGE", "BUCKETS", "K", "5", "600000", "COST", "2"],
        &[
            "RL.CHARGE",
            "THROTTLE",
            "K",
            "4",
            "1",
            "600000",
            "COST",
            "2",
        ],
        &["RL.CHARGE", "FIXED", "K", "5", "600000", "COST", "2"],
    ] {
        lines.push(l.iter().map(|a| a.to_string()).collect());
    }
    for (i, line) in lines.iter_mut().enumerate() {
        for a in line.iter_mut().filter(|a| *a == "K") {
            *a = format!("{prefix}{i}");
        }
    }
    lines
}

/// A command line of owned words as `&str`s.
pub fn words(line: &[String]) -> Vec<&str> {
    line.iter().map(String::as_str).collect()
}

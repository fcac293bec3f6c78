//! The random command lines of the streams: every error of the commands'
//! error tables, and a generator of well-formed lines over throttle and
//! fixed keys.

use crate::harness::raw_resp::XorShift;

/// Lines that must be refused, each error of the commands' error tables
/// (docs/commands.md) at least once; `k` is the key.
pub(super) fn bad_lines(k: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["RL.THROTTLE", k, "1", "1"],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "1", "1"],
        vec!["RL.THROTTLE", k, "-1", "1", "1000"],
        vec!["RL.THROTTLE", k, "x", "0", "0"],
        vec!["RL.THROTTLE", k, "01", "1", "1000"],
        vec!["RL.THROTTLE", k, "1000000000000001", "1", "1000"],
        vec!["RL.THROTTLE", k, "1", "0", "1000"],
        vec!["RL.THROTTLE", k, "1", "1.5", "1000"],
        vec!["RL.THROTTLE", k, "1", "1000000000000001", "1000"],
        vec!["RL.THROTTLE", k, "1", "1", "0"],
        vec!["RL.THROTTLE", k, "1", "1", "1000000000001"],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "-1"],
        vec!["RL.THROTTLE", k, "1", "1", "1000", ""],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "1000000000000001"],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "3"],
        vec!["RL.THROTTLE", k, "0", "1001", "1"],
        vec!["RL.THROTTLE", k, "1000000000000", "1", "1000"],
        vec![
            "RL.THROTTLE",
            k,
            "1000000000000000",
            "1000000000000000",
            "1000000000000",
        ],
        vec!["CL.THROTTLE", k, "1", "1"],
        vec!["CL.THROTTLE", k, "1", "1", "1000000001"],
        vec!["CL.THROTTLE", k, "0", "1000001", "1"],
        vec!["CL.THROTTLE", k, "1", "1", "1", "x"],
        vec!["CL.THROTTLE", k, "1", "1", "1", "-1"],
        vec!["CL.THROTTLE", k, "1", "1", "1", "01"],
        vec!["CL.THROTTLE", k, "1", "1", "1", "9223372036854775808"],
        vec!["CL.THROTTLE", k, "1", "1", "1", "18446744073709551616"],
        vec!["CL.THROTTLE", k, "1000000000", "1", "1"],
        vec!["RL.FIXED", k, "10"],
        vec!["RL.FIXED", k, "0", "1000"],
        vec!["RL.FIXED", k, "1000000000000001", "1000"],
        vec!["RL.FIXED", k, "10", "-1"],
        vec!["RL.FIXED", k, "10", "1000000000001"],
        vec!["RL.FIXED", k, "10", "1000", "COST", "0"],
        vec!["RL.FIXED", k, "10", "1000", "COST", "11"],
        vec!["RL.FIXED", k, "10", "1000", "COST"],
        vec!["RL.FIXED", k, "10", "1000", "COST", "1", "COST", "1"],
        vec!["RL.FIXED", k, "10", "1000", "COST", "x", "COST", "1"],
        vec![
            "RL.FIXED", k, "10", "1000", "COST", "1", "cost", "1", "LIMIT",
        ],
        vec!["RL.FIXED", k, "10", "1000", "LIMIT", "2"],
        vec![
            "RL.FIXED",
            k,
            "10",
            "1000",
            "\x01an-option-name-longer-than-32-bytes",
            "2",
        ],
        vec!["RL.FIXED", k, "x", "y", "COST", "0"],
        vec!["RL.PEEK", "THROTTLE", k, "1", "1"],
        vec!["RL.PEEK", "throttle", k, "1", "1", "1000", "1", "1"],
        vec!["RL.PEEK", "THROTTLE", k, "1", "1", "1000", "3"],
        vec!["RL.PEEK", "THROTTLE", k, "0", "1001", "1"],
        vec!["RL.PEEK", "FIXED", k, "1"],
        vec!["RL.PEEK", "Fixed", k, "10", "1000", "COST", "11"],
        vec!["RL.REFUND", "THROTTLE", k],
        vec!["RL.REFUND", "THROTTLE", k, "1", "1", "1000", "9"],
        vec!["RL.REFUND", "FIXED", k, "10", "1000", "COST", "0"],
        vec!["RL.REFUND", "FIXED", k, "10"],
        vec![
            "RL.ALL", "2", k, "other", "THROTTLE", "1", "1", "FIXED", "10", "1000",
        ],
        vec![
            "RL.ALL", "2", k, "other", "FIXED", "10", "1000", "THROTTLE", "1", "1", "1000", "5",
        ],
        vec!["RL.ALL", "1", k, "FIXED", "10", "1000", "COST", "0"],
        vec!["RL.FIXED", k, "10", "1000", "BLOCK", "0"],
        vec!["RL.FIXED", k, "10", "1000", "BLOCK"],
        vec![
            "RL.FIXED", k, "10", "1000", "BLOCK", "5", "COST", "2", "block", "5",
        ],
        vec!["RL.FIXED", k, "10", "1000", "BLOCK", "1000000000001"],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "BLOCK", "x"],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "BLOCK"],
        vec![
            "RL.THROTTLE",
            k,
            "1",
            "1",
            "1000",
            "1",
            "BLOCK",
            "5",
            "BLOCK",
            "5",
        ],
        vec!["RL.THROTTLE", k, "1", "1", "1000", "BLOCK", "5", "1"],
        vec!["RL.THROTTLE", k, "x", "1", "1000", "BLOCK", "0"],
        vec!["CL.THROTTLE", k, "1", "1", "1", "BLOCK", "5"],
        vec!["RL.BLOCK", "FIXED", k],
        vec!["RL.BLOCK", "FIXED", k, "0"],
        vec!["RL.BLOCK", "THROTTLE", k, "1", "2"],
        vec!["RL.BLOCK", "COUNT", k, "5"],
        vec!["RL.BLOCK", "acquire", k, "5"],
        vec!["RL.BLOCK", "NOPE", k, "5"],
        vec!["RL.UNBLOCK", "FIXED", k, "5"],
        vec!["RL.UNBLOCK", "ACQUIRE", k],
        vec!["RL.ALL", "1", k, "FIXED", "10", "1000", "BLOCK", "0"],
    ]
}

/// A stream's random choices.
pub(super) struct Gen {
    pub(super) rng: XorShift,
    /// Rates and windows so long that nothing refills while a stream runs
    /// on a real clock (and every emission interval a multiple of 10^11 µs).
    pub(super) timeless: bool,
}

impl Gen {
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    pub(super) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// `max_burst count period` (ms or, for CL.THROTTLE, s) and the limit.
    pub(super) fn rate(&mut self, cell: bool) -> (Vec<String>, u64) {
        let max_burst = *self.rng.pick(&[0u64, 0, 1, 2, 3, 4, 9]);
        let (count, period) = if self.timeless {
            let count = *self.rng.pick(&[1u64, 2, 5, 10]);
            (count, if cell { 1_000_000 } else { 1_000_000_000 })
        } else if cell {
            (1 + self.below(30), *self.rng.pick(&[1u64, 1, 2, 3, 60]))
        } else {
            let period = *self
                .rng
                .pick(&[1u64, 7, 100, 250, 999, 1000, 1000, 3000, 60_000]);
            let count = match self.below(4) {
                0 => 1,
                1 => 1 + self.below(10),
                2 => 1 + self.below(1000).min(period * 1000 - 1),
                _ => 3,
            };
            (count, period)
        };
        let words = vec![max_burst.to_string(), count.to_string(), period.to_string()];
        (words, max_burst + 1)
    }

    /// A quantity for a limit: mostly 0 to limit, sometimes omitted.
    pub(super) fn quantity(&mut self, limit: u64) -> Option<String> {
        match self.below(10) {
            0 => None,
            1 => Some("0".into()),
            2 => Some(limit.to_string()),
            _ => Some((1 + self.below(limit)).to_string()),
        }
    }

    /// `limit window [COST cost]`.
    pub(super) fn fixed(&mut self) -> Vec<String> {
        let limit = 1 + self.below(8);
        let window: u64 = if self.timeless {
            1_000_000_000
        } else {
            *self.rng.pick(&[1u64, 5, 100, 1000, 2500, 60_000])
        };
        let mut out = vec![limit.to_string(), window.to_string()];
        if !self.chance(20) {
            out.push(if self.chance(20) { "cost" } else { "COST" }.into());
            out.push((1 + self.below(limit)).to_string());
        }
        out.extend(self.block());
        out
    }

    /// `BLOCK ms` now and then (a stopped clock only: a block's end is an
    /// instant, which a running clock would make differ).
    pub(super) fn block(&mut self) -> Vec<String> {
        if self.timeless || !self.chance(15) {
            return Vec::new();
        }
        let ms = *self.rng.pick(&[1u64, 10, 500, 3000, 100_000]);
        vec![
            if self.chance(20) { "block" } else { "BLOCK" }.into(),
            ms.to_string(),
        ]
    }

    pub(super) fn throttle_args(&mut self) -> Vec<String> {
        let (mut args, limit) = self.rate(false);
        if let Some(q) = self.quantity(limit) {
            args.push(q);
        }
        args.extend(self.block());
        args
    }

    /// One command line: a throttle form on `t[0]`, a fixed form on
    /// `f[0]`; RL.ALL's clause i on `t[i]` or `f[i]` by its kind.
    pub(super) fn line(&mut self, t: [&str; 2], f: [&str; 2]) -> Vec<String> {
        let s = |w: &str| w.to_string();
        let pick = self.below(100);
        let mut line: Vec<String>;
        if pick < 24 {
            line = vec![s("RL.THROTTLE"), s(t[0])];
            line.extend(self.throttle_args());
        } else if pick < 36 {
            let (args, limit) = self.rate(true);
            line = vec![s("CL.THROTTLE"), s(t[0])];
            line.extend(args);
            match self.below(12) {
                0 => line.push((limit + 1 + self.below(3)).to_string()),
                1 => line.push(s("9223372036854775807")),
                2 => line.push(s("12345678901234567")),
                _ => line.extend(self.quantity(limit)),
            }
        } else if pick < 56 {
            line = vec![s("RL.FIXED"), s(f[0])];
            line.extend(self.fixed());
        } else if pick < 64 {
            line = vec![s("RL.PEEK"), s("THROTTLE"), s(t[0])];
            line.extend(self.throttle_args());
        } else if pick < 70 {
            line = vec![
                s("RL.PEEK"),
                s(if self.chance(20) { "fixed" } else { "FIXED" }),
                s(f[0]),
            ];
            line.extend(self.fixed());
        } else if pick < 80 {
            line = vec![s("RL.REFUND"), s("THROTTLE"), s(t[0])];
            line.extend(self.throttle_args());
        } else if pick < 88 {
            line = vec![s("RL.REFUND"), s("FIXED"), s(f[0])];
            line.extend(self.fixed());
        } else if !self.timeless && pick < 90 {
            // A charge, on a key that may be blocked (which it keeps); a
            // stopped clock only, as its TAT is an instant.
            let units = (1 + self.below(6)).to_string();
            if self.chance(50) {
                line = vec![s("RL.CHARGE"), s("THROTTLE"), s(t[0])];
                line.extend(self.rate(false).0);
            } else {
                line = vec![s("RL.CHARGE"), s("FIXED"), s(f[0])];
                line.extend(self.fixed().into_iter().take(2));
            }
            line.extend([s("COST"), units]);
        } else if !self.timeless && pick < 95 {
            let (name, key) = if self.chance(50) {
                ("THROTTLE", t[0])
            } else {
                ("FIXED", f[0])
            };
            if self.chance(60) {
                let ms = *self.rng.pick(&[1u64, 2000, 60_000, 600_000]);
                line = vec![s("RL.BLOCK"), s(name), s(key), ms.to_string()];
            } else {
                line = vec![s("RL.UNBLOCK"), s(name), s(key)];
            }
        } else {
            let kinds = [self.chance(40), self.chance(60)];
            line = vec![s("RL.ALL"), s("2")];
            for (i, &fixed) in kinds.iter().enumerate() {
                line.push(s(if fixed { f[i] } else { t[i] }));
            }
            for fixed in kinds {
                if fixed {
                    line.push(s(if self.chance(20) { "fixed" } else { "FIXED" }));
                    line.extend(self.fixed());
                } else {
                    line.push(s("THROTTLE"));
                    line.extend(self.throttle_args());
                }
            }
        }
        line
    }

    /// A step of the stopped clock: often none, sometimes a window's end.
    pub(super) fn step(&mut self) -> u64 {
        match self.below(20) {
            0..=7 => 0,
            8..=11 => 1 + self.below(10),
            12..=15 => self.below(500),
            16..=18 => self.below(3000),
            _ => 10_000 + self.below(200_000),
        }
    }
}

/// A line on a foreign key (in `keys`), or a bad line.
pub(super) fn odd_line(g: &mut Gen, keys: &[&str]) -> Vec<String> {
    if g.chance(50) {
        let k = *g.rng.pick(keys);
        if g.chance(50) {
            g.line([k, "a"], [k, "c"])
        } else {
            g.line(["a", k], ["c", k])
        }
    } else {
        let k = *g.rng.pick(&["a", "c", "x", "z"]);
        let lines = bad_lines(k);
        let i = g.below(lines.len() as u64) as usize;
        lines[i].iter().map(|w| w.to_string()).collect()
    }
}

/// Every bad line on a key of each kind (absent or rl's, and a sorted set),
/// shuffled: a stream takes one every fourth step.
pub(super) fn bad_queue(g: &mut Gen) -> Vec<Vec<String>> {
    let mut all: Vec<Vec<String>> = ["a", "c", "z"]
        .iter()
        .flat_map(|k| bad_lines(k))
        .map(|l| l.iter().map(|w| w.to_string()).collect())
        .collect();
    for i in (1..all.len()).rev() {
        let j = g.below(i as u64 + 1) as usize;
        all.swap(i, j);
    }
    all
}

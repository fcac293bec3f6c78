//! The performance page: SVG charts (plotters) and the Markdown blocks of
//! `docs/performance.md`, from the tables one `make bench` wrote in
//! `target/bench/` (the server bench's, `instructions.csv` from
//! `benches/callgrind.sh`, criterion's estimates of the core bench).
//!
//! Every block opens with its run line (date, commit, machine), and so does
//! every chart, so a page pasted together from several runs shows it
//! (`tests/it/perf_page.rs` checks that the page is one run's). Blocks go
//! to `target/bench/page/<name>.md`, charts to `target/bench/<name>.svg`;
//! `scripts/perf-page.sh` puts both into `docs/`.

mod charts;
mod instructions;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use instructions::{goals, profile};

/// When and where a run happened, stated by every block and chart.
pub struct Run {
    pub date: String,
    pub commit: String,
    pub machine: String,
}

fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The commit measured, marked when the code measured differs from it.
pub fn commit() -> String {
    let head = sh("git", &["rev-parse", "--short=7", "HEAD"]);
    let dirty = sh(
        "git",
        &[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            "src",
            "functions",
            "benches",
            "Cargo.toml",
            "Cargo.lock",
        ],
    );
    if dirty.is_empty() {
        head
    } else {
        format!("{head}+changes")
    }
}

fn proc_field(path: &str, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim().to_string())
    })
}

pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split(' ').next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// CPUs, their model, memory and kernel, as the tables' readers need them.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = proc_field("/proc/cpuinfo", "model name").unwrap_or_else(|| "?".into());
    let ram_gb = proc_field("/proc/meminfo", "MemTotal")
        .and_then(|v| v.split(' ').next()?.parse::<f64>().ok())
        .map_or("?".into(), |kb| format!("{:.0}", kb / 1024.0 / 1024.0));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    format!("{cpus} CPUs ({model}), {ram_gb} GB RAM, Linux {kernel}")
}

impl Run {
    pub fn now() -> Run {
        Run {
            date: sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
            commit: commit(),
            machine: machine(),
        }
    }

    /// The line every block opens with; `what` says what was run.
    pub fn line(&self, what: &str) -> String {
        format!(
            "Measured {} at commit `{}` on {}: {what}.",
            self.date, self.commit, self.machine
        )
    }

    /// The short form a chart carries under its title.
    pub fn caption(&self) -> String {
        format!("measured {} at commit {}", self.date, self.commit)
    }
}

pub fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench")
}

/// A CSV file's rows, quoted fields unquoted (`"a, b"` is one field); lines
/// starting with `#` are comments.
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
        for ch in line.chars() {
            match ch {
                '"' => quoted = !quoted,
                ',' if !quoted => fields.push(std::mem::take(&mut field)),
                _ => field.push(ch),
            }
        }
        fields.push(field);
        rows.push(fields);
    }
    rows
}

/// `# key=value` comment lines of a CSV file.
fn csv_meta(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# ")?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// 12345 as "12,345".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The blocks of one run, written together at the end.
pub struct Page {
    pub run: Run,
    blocks: BTreeMap<String, String>,
}

impl Page {
    /// A new run: its line is saved for `page` (drawing again from the
    /// tables) to state.
    pub fn new() -> Page {
        let run = Run::now();
        let dir = bench_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let saved = format!("{}\n{}\n{}\n", run.date, run.commit, run.machine);
        std::fs::write(dir.join("run.txt"), saved).unwrap();
        Page {
            run,
            blocks: BTreeMap::new(),
        }
    }

    /// The last run's line, to draw its tables again.
    pub fn last() -> Page {
        let saved = std::fs::read_to_string(bench_dir().join("run.txt")).unwrap_or_default();
        let mut lines = saved.lines().map(str::to_string);
        let run = match (lines.next(), lines.next(), lines.next()) {
            (Some(date), Some(commit), Some(machine)) => Run {
                date,
                commit,
                machine,
            },
            _ => Run::now(),
        };
        Page {
            run,
            blocks: BTreeMap::new(),
        }
    }

    /// Appends Markdown to the block `name`; a new block opens with the
    /// run line, `what` saying what was run.
    pub fn add(&mut self, name: &str, what: &str, md: &str) {
        let line = self.run.line(what);
        self.blocks
            .entry(name.to_string())
            .or_insert_with(|| line + "\n")
            .push_str(md);
    }

    /// Writes every block (run line first) and chart, and returns the
    /// directory of the blocks.
    /// `server_seconds`: the server bench's time, None when only drawing
    /// again (the run's own block stays as it was).
    pub fn finish(mut self, server_seconds: Option<f64>) -> PathBuf {
        let dir = bench_dir();
        self.instructions(&dir);
        self.worst(&dir);
        self.memory(&dir);
        self.core(&dir);
        if let Some(seconds) = server_seconds {
            self.summary(&dir, seconds);
        }
        // Blocks of an earlier run may stay beside these: the page takes
        // the blocks it names, and scripts/perf-page.sh refuses a mix.
        let pages = dir.join("page");
        std::fs::create_dir_all(&pages).unwrap();
        for (name, body) in &self.blocks {
            let body = body.trim_matches('\n');
            std::fs::write(pages.join(format!("{name}.md")), format!("{body}\n")).unwrap();
        }
        pages
    }

    /// The run's own block: when, where, what each step took.
    fn summary(&mut self, dir: &Path, server_seconds: f64) {
        let mut md = self.run.line("`make bench`") + "\n\n";
        let steps = std::fs::read_to_string(dir.join("steps.csv")).unwrap_or_default();
        md.push_str("| step | took |\n| --- | ---: |\n");
        for row in csv_rows(&steps).iter().skip(1) {
            if let [step, _, secs, status] = &row[..] {
                let note = if status == "0" {
                    String::new()
                } else {
                    format!(" ({status})")
                };
                let _ = writeln!(md, "| {step}{note} | {secs} s |");
            }
        }
        let _ = writeln!(
            md,
            "| `cargo bench --bench server` | {server_seconds:.0} s |"
        );
        let _ = writeln!(
            md,
            "\nLoad average (1 min) {} when the server bench ended: the machine's other work \
             moves timings, not instruction counts.",
            load_average()
        );
        self.blocks.insert("run".into(), md);
    }

    /// Instructions per call (callgrind): table and chart, when
    /// `benches/callgrind.sh` wrote `instructions.csv` in this run.
    fn instructions(&mut self, dir: &Path) {
        let path = dir.join("instructions.csv");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let meta = csv_meta(&text);
        let cost: BTreeMap<String, u64> = csv_rows(&text)
            .into_iter()
            .skip(1)
            .filter_map(|r| Some((r.first()?.clone(), r.get(1)?.parse().ok()?)))
            .collect();
        if cost.is_empty() {
            let md = format!(
                "{}\n\nNot measured in this run: `benches/callgrind.sh` needs valgrind \
                 (`make deps` installs it).\n",
                self.run.line("instructions per call")
            );
            self.blocks.insert("instructions".into(), md.clone());
            self.blocks.insert("profile".into(), md);
            return;
        }
        let what = format!(
            "`{}` on {} (N={} calls per row over R={} keys, pipelined {}), callgrind, \
             instructions per call on the server's request path (reading, running and \
             replying; its timers left out)",
            meta.get("command")
                .map_or("benches/callgrind.sh", String::as_str),
            meta.get("server").map_or("?", String::as_str),
            meta.get("N").map_or("?", String::as_str),
            meta.get("R").map_or("?", String::as_str),
            meta.get("P").map_or("?", String::as_str),
        );
        let run = Run {
            date: meta.get("date").cloned().unwrap_or_default(),
            commit: meta.get("commit").cloned().unwrap_or_default(),
            machine: self.run.machine.clone(),
        };
        let mut md = run.line(&what) + "\n\n";
        md.push_str("![Instructions per call, by command and edition](perf/instructions.svg)\n\n");
        md.push_str(
            "| call | module | function edition | plain Lua script | the script it replaces | redis-cell |\n\
             | --- | ---: | ---: | ---: | --- | ---: |\n",
        );
        let cell = |row: &str| cost.get(row).map_or("—".to_string(), |&n| thousands(n));
        for c in charts::CALLS {
            let peers: Vec<String> = c
                .peers
                .iter()
                .filter_map(|p| {
                    Some(format!(
                        "{} {}",
                        charts::peer_name(p),
                        thousands(*cost.get(*p)?)
                    ))
                })
                .collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                c.label,
                cell(c.module),
                cell(c.functions),
                cell(c.lua),
                if peers.is_empty() {
                    "—".into()
                } else {
                    peers.join("; ")
                },
                c.cell.map_or("—".into(), cell),
            );
        }
        md.push_str("\n| reference (server command) | instructions/call |\n| --- | ---: |\n");
        for (row, name) in [
            ("ping", "PING"),
            ("incr", "INCR"),
            ("zadd", "ZADD"),
            ("hincrby", "HINCRBY"),
        ] {
            let _ = writeln!(md, "| {name} | {} |", cell(row));
        }
        md.push_str("\n| adapter's command (clients/) | instructions/call | the store it replaces | instructions/call | adapter / store |\n| --- | ---: | --- | ---: | ---: |\n");
        for (mine, label, peer) in [
            ("slide", "`limits` storage: RL.SLIDE", "limits_moving"),
            (
                "express_store",
                "express store: RL.BUCKETS at limit 10^15",
                "rlr_express",
            ),
            (
                "rlf_adapter",
                "rate-limiter-flexible adapter (blockDuration): RL.SLIDE ... BLOCK",
                "rlf_redis",
            ),
            (
                "slide",
                "rate-limiter-flexible adapter, no blockDuration: RL.SLIDE",
                "rlf_redis",
            ),
            (
                "go_rate",
                "Go redis_rate drop-in: RL.THROTTLE",
                "redis_rate",
            ),
            (
                "java_gateway",
                "Spring Cloud Gateway RlRateLimiter: RL.THROTTLE",
                "spring_gateway",
            ),
        ] {
            if let (Some(a), Some(b)) = (cost.get(mine), cost.get(peer)) {
                let _ = writeln!(
                    md,
                    "| {label} | {} | {} | {} | {:.2}x |",
                    thousands(*a),
                    charts::peer_name(peer),
                    thousands(*b),
                    *a as f64 / *b as f64
                );
            }
        }
        md.push_str(&goals(dir, &cost, &meta));
        self.blocks.insert("instructions".into(), md);
        let profile = profile(&meta).unwrap_or_else(|| {
            "No profile: `target/callgrind/slide.out` or `callgrind_annotate` missing.\n".into()
        });
        self.blocks.insert(
            "profile".into(),
            format!("{}\n\n{profile}", run.line(&what)),
        );
        charts::instructions(&dir.join("instructions.svg"), &cost, &run);
    }

    /// The worst-case tables (both editions) from `worst.csv` and the
    /// charts of the sweep from `sweep.csv`.
    fn worst(&mut self, dir: &Path) {
        let rows = csv_rows(&std::fs::read_to_string(dir.join("worst.csv")).unwrap_or_default());
        let sweep = csv_rows(&std::fs::read_to_string(dir.join("sweep.csv")).unwrap_or_default());
        // The goals: issue #26's for the module (median 0.5 ms, max 1 ms),
        // issue #24's for the library (median 1 ms).
        for (edition, name, what, goal, (median_us, max_us)) in [
            (
                "module",
                "worst-module",
                "the module's commands",
                "median ≤ 0.5 ms, max ≤ 1 ms",
                (500, 1000),
            ),
            (
                "functions",
                "worst-functions",
                "the function edition's `FCALL`s, on servers without the module",
                "median ≤ 1 ms",
                (1000, u64::MAX),
            ),
        ] {
            let mine: Vec<&Vec<String>> = rows
                .iter()
                .skip(1)
                .filter(|r| r.len() >= 6 && r[1] == edition)
                .collect();
            let mut servers: Vec<&str> = Vec::new();
            for r in &mine {
                if !servers.contains(&r[0].as_str()) {
                    servers.push(&r[0]);
                }
            }
            let mut md = self.run.line(&format!(
                "`cargo bench --bench server -- worst`, {what}; server time of one call \
                 (`SLOWLOG`), median / max of 7 calls in µs"
            )) + "\n\n";
            let _ = writeln!(
                md,
                "![Worst-case time per call against its parameter, {edition}](perf/worst-{edition}.svg)\n"
            );
            md.push_str("| command | worst case |");
            for s in &servers {
                let _ = write!(md, " {s} µs |");
            }
            let _ = write!(md, " {goal} |\n| --- | --- |");
            for _ in &servers {
                md.push_str(" ---: |");
            }
            md.push_str(" --- |\n");
            let mut cases: Vec<(&str, &str)> = Vec::new();
            for r in &mine {
                if !cases.contains(&(r[2].as_str(), r[3].as_str())) {
                    cases.push((&r[2], &r[3]));
                }
            }
            for (command, case) in cases {
                let _ = write!(md, "| {command} | {case} |");
                let mut over = Vec::new();
                for s in &servers {
                    let r = mine
                        .iter()
                        .find(|r| r[0] == *s && r[2] == command && r[3] == case);
                    match r {
                        Some(r) => {
                            let (m, x): (u64, u64) =
                                (r[4].parse().unwrap_or(0), r[5].parse().unwrap_or(0));
                            let _ = write!(md, " {m} / {x} |");
                            if m > median_us || x > max_us {
                                over.push(*s);
                            }
                        }
                        None => md.push_str(" — |"),
                    }
                }
                if over.is_empty() {
                    md.push_str(" yes |\n");
                } else {
                    let _ = writeln!(md, " **no** ({}) |", over.join(", "));
                }
            }
            if mine.is_empty() {
                md.push_str("| — | not measured in this run | — |\n");
            }
            let points: Vec<&Vec<String>> = sweep
                .iter()
                .skip(1)
                .filter(|r| r.len() >= 7 && r[1] == edition)
                .collect();
            md.push_str(&sweep_table(&points));
            self.blocks.insert(name.into(), md);
            charts::worst(
                &dir.join(format!("worst-{edition}.svg")),
                edition,
                &points,
                &self.run,
            );
        }
    }

    /// The memory chart, from `memory.csv`; its tables came with the
    /// server sections.
    fn memory(&mut self, dir: &Path) {
        let rows = csv_rows(&std::fs::read_to_string(dir.join("memory.csv")).unwrap_or_default());
        let rows: Vec<&Vec<String>> = rows.iter().skip(1).filter(|r| r.len() >= 5).collect();
        let image = "\n![Memory per key against entries and buckets](perf/memory.svg)\n";
        if let Some(body) = self.blocks.get_mut("memory") {
            let first = body.find('\n').unwrap_or(body.len());
            body.insert_str(first, image);
        }
        charts::memory(&dir.join("memory.svg"), &rows, &self.run);
    }

    /// Criterion's medians of the core bench, when it ran in this
    /// `make bench` (estimates written after the run's first step began).
    fn core(&mut self, dir: &Path) {
        let steps = std::fs::read_to_string(dir.join("steps.csv")).unwrap_or_default();
        let began: Option<u64> = csv_rows(&steps)
            .iter()
            .skip(1)
            .find(|r| r.first().map(String::as_str) == Some("cargo bench --bench core"))
            .and_then(|r| r.get(1)?.parse().ok());
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/criterion");
        let mut found = Vec::new();
        find_estimates(&root, &mut found);
        let mut rows: Vec<(String, f64)> = found
            .into_iter()
            .filter(|(_, at, _)| began.is_some_and(|b| *at >= b))
            .map(|(id, _, ns)| (id, ns))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let mut md = self.run.line("`cargo bench --bench core` (criterion), the decision alone over an in-memory log or hash, median time") + "\n\n";
        if rows.is_empty() {
            md.push_str("Not measured in this run (`make bench` runs it first).\n");
        } else {
            md.push_str("| benchmark | time per decision |\n| --- | ---: |\n");
            for (id, ns) in rows {
                let t = if ns >= 1000.0 {
                    format!("{:.2} µs", ns / 1000.0)
                } else {
                    format!("{ns:.1} ns")
                };
                let _ = writeln!(md, "| {id} | {t} |");
            }
        }
        self.blocks.insert("core".into(), md);
    }
}

/// The sweep's points as a table: one row per series and parameter.
fn sweep_table(points: &[&Vec<String>]) -> String {
    if points.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\nThe same kinds of call at fractions of their largest parameter (Redis 7.0), as in the chart:\n\n\
         | case | parameter | median µs | max µs |\n| --- | ---: | ---: | ---: |\n",
    );
    for r in points {
        let axis = super::worst::sweep::AXES
            .iter()
            .find(|(a, _)| *a == r[2])
            .map_or(r[2].as_str(), |(_, what)| what);
        let _ = writeln!(md, "| {} | {} {axis} | {} | {} |", r[3], r[4], r[5], r[6]);
    }
    md
}

/// (benchmark id, estimates' mtime in epoch s, median ns) under `dir`.
fn find_estimates(dir: &Path, out: &mut Vec<(String, u64, f64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "new") {
                let est = path.join("estimates.json");
                let bench = path.join("benchmark.json");
                let (Ok(est_text), Ok(bench_text)) = (
                    std::fs::read_to_string(&est),
                    std::fs::read_to_string(&bench),
                ) else {
                    continue;
                };
                let (Ok(est_json), Ok(bench_json)) = (
                    serde_json::from_str::<serde_json::Value>(&est_text),
                    serde_json::from_str::<serde_json::Value>(&bench_text),
                ) else {
                    continue;
                };
                let at = std::fs::metadata(&est)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                if let (Some(id), Some(ns)) = (
                    bench_json["full_id"].as_str(),
                    est_json["median"]["point_estimate"].as_f64(),
                ) {
                    out.push((id.to_string(), at, ns));
                }
            } else {
                find_estimates(&path, out);
            }
        }
    }
}

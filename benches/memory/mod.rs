//! Memory per key: `MEMORY USAGE` of one RL.SLIDE or RL.BUCKETS key against
//! the Lua scripts' key holding the same entries or buckets.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::common::memory_usage;

/// RL.SLIDE and the Lua script's sorted set holding the same entries.
pub fn slide_memory(
    c: &mut redis::Connection,
    label: &str,
    sha: &str,
    md: &mut String,
    csv: &mut String,
    mem: &mut String,
) -> Vec<(u32, i64, i64, usize)> {
    let _ = writeln!(
        md,
        "\n### {label}, RL.SLIDE memory per key (MEMORY USAGE)\n"
    );
    let _ = writeln!(
        md,
        "| entries | RL.SLIDE bytes | per entry | Lua script bytes | per entry |\n| ---: | ---: | ---: | ---: | ---: |"
    );
    let mut out = Vec::new();
    // 128 entries: the largest a listpack holds by default; 129: a skiplist.
    for n in [10u32, 50, 100, 128, 129, 500, 1000] {
        let (native, lua) = (format!("mem:s:{n}"), format!("mem:l:{n}"));
        let mut pipe = redis::pipe();
        for _ in 0..n {
            pipe.cmd("RL.SLIDE")
                .arg(&native)
                .arg(1_000_000)
                .arg(600_000)
                .ignore();
            pipe.cmd("EVALSHA")
                .arg(sha)
                .arg(1)
                .arg(&lua)
                .arg(1_000_000)
                .arg(600_000)
                .arg(1)
                .ignore();
        }
        let _: () = pipe.query(c).unwrap();
        // The script's members are its TIME reading: two calls in one µs
        // share a member, so count what it really holds.
        let held: usize = redis::cmd("ZCARD").arg(&lua).query(c).unwrap();
        let (a, b) = (memory_usage(c, &native), memory_usage(c, &lua));
        let per = |bytes: i64, n: usize| bytes as f64 / n.max(1) as f64;
        let lua_n = if held == n as usize {
            String::new()
        } else {
            format!(" ({held} held)")
        };
        let _ = writeln!(
            md,
            "| {n} | {a} | {:.1} | {b}{lua_n} | {:.1} |",
            per(a, n as usize),
            per(b, held)
        );
        let _ = writeln!(
            csv,
            "{label},memory,RL.SLIDE {n} entries,,,,,\"RL.SLIDE {a} B; Lua {b} B ({held} entries)\","
        );
        let _ = writeln!(mem, "{label},slide,{n},{a},{b}");
        out.push((n, a, b, held));
    }
    out
}

/// RL.BUCKETS (and the Lua bucket script) with every bucket of the window
/// filled at two request rates: the time the window takes, per layout.
pub fn buckets_memory(
    c: &mut redis::Connection,
    label: &str,
    sha: &str,
    md: &mut String,
    csv: &mut String,
    mem: &mut String,
) {
    let _ = writeln!(
        md,
        "\n### {label}, RL.BUCKETS memory per key (MEMORY USAGE, every bucket filled)\n"
    );
    let _ = writeln!(
        md,
        "| buckets | requests per bucket | bucket fields held | RL.BUCKETS bytes | Lua bucket script bytes |\n| ---: | ---: | ---: | ---: | ---: |"
    );
    const PRECISION: u64 = 10;
    // At most 250 buckets per window (MAX_BUCKETS).
    for buckets in [60u64, 120, 180, 250] {
        let window = buckets * PRECISION;
        // The chart's line is at one request per bucket; 100 at its ends.
        let rates: &[u32] = if buckets == 60 || buckets == 250 {
            &[1, 100]
        } else {
            &[1]
        };
        for &rate in rates {
            let native = format!("mem:b:{buckets}:{rate}");
            let lua = format!("mem:lb:{buckets}:{rate}");
            // One burst of `rate` calls per bucket width, for one window.
            let start = Instant::now();
            let mut next = Duration::ZERO;
            while start.elapsed() < Duration::from_millis(window) {
                let mut pipe = redis::pipe();
                for _ in 0..rate {
                    pipe.cmd("RL.BUCKETS")
                        .arg(&native)
                        .arg(100_000_000)
                        .arg(window)
                        .arg("PRECISION")
                        .arg(PRECISION)
                        .ignore();
                    pipe.cmd("EVALSHA")
                        .arg(sha)
                        .arg(1)
                        .arg(&lua)
                        .arg(100_000_000)
                        .arg(window)
                        .arg(PRECISION)
                        .arg(1)
                        .ignore();
                }
                let _: () = pipe.query(c).unwrap();
                next += Duration::from_millis(PRECISION);
                if let Some(wait) = next.checked_sub(start.elapsed()) {
                    std::thread::sleep(wait);
                }
            }
            // Bucket fields: all but the header `h` (the newest bucket's
            // count lives in it, so this counts the older buckets held).
            let held: usize = redis::cmd("HLEN").arg(&native).query(c).unwrap();
            let held = held.saturating_sub(1);
            let (a, b) = (memory_usage(c, &native), memory_usage(c, &lua));
            let _ = writeln!(md, "| {buckets} | {rate} | {held} | {a} | {b} |");
            let kind = if rate == 1 { "buckets" } else { "buckets-100" };
            // Buckets filled: the older ones held, and the newest.
            let _ = writeln!(mem, "{label},{kind},{},{a},{b}", held + 1);
            let _ = writeln!(
                csv,
                "{label},memory,RL.BUCKETS {buckets} buckets {rate} per bucket,,,,,\"RL.BUCKETS {a} B ({held} buckets held); Lua {b} B\","
            );
        }
    }
}

//! State saved by an earlier release keeps working: an RDB written by rl
//! before the plain bucket counts (`tests/fixtures/rl-0.1.rdb`, see its
//! README) is loaded by every server and build, and every limiter
//! continues from it; bucket keys whose counts were zero-padded to 9 digits
//! (releases before 0.2) are read as they are, continued, and rewritten in
//! the plain form as they change.

use crate::harness::*;

const W: &str = "1000000000000";

fn ints(c: &mut redis::Connection, line: &[&str]) -> Vec<i64> {
    let mut cmd = redis::cmd(line[0]);
    cmd.arg(&line[1..]);
    cmd.query(c).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

#[test]
fn an_rdb_of_the_previous_release_is_continued() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rl-0.1.rdb");
    for flavor in ALL {
        let dir = new_dir(flavor);
        std::fs::copy(fixture, dir.join("dump.rdb")).unwrap();
        let server = Server::start_in(flavor, dir, &[], true);
        let mut c = server.conn();
        let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
        assert_eq!(
            keys, 5,
            "{flavor:?}: the fixture's keys (expiring about 2057)"
        );
        let padded = fields(&mut c, "fx:buckets");
        assert!(
            padded["h"].ends_with(",000000012,000000012"),
            "{flavor:?} {padded:?}"
        );

        let slide = ints(&mut c, &["RL.SLIDE", "fx:slide", "10", W]);
        assert_eq!(slide[..3], [1, 6, 0], "{flavor:?}: three old units count");
        let buckets = ints(&mut c, &["RL.BUCKETS", "fx:buckets", "100", W]);
        assert_eq!(
            buckets[..3],
            [1, 87, 0],
            "{flavor:?}: twelve old units count"
        );
        let h = &fields(&mut c, "fx:buckets")["h"];
        assert!(
            h.ends_with(",13,13") || h.ends_with(",13,1"),
            "{flavor:?}: plain {h}"
        );
        let totals = count(&mut c, "fx:count", 1_000_000_000_000, "ok", &[]).unwrap();
        assert_eq!(totals, [("fail".into(), 1), ("ok".into(), 5)], "{flavor:?}");
        let fixed = ints(&mut c, &["RL.FIXED", "fx:fixed", "10", W]);
        assert_eq!(fixed[..3], [1, 7, 0], "{flavor:?}");
        // The one unit of a 31-year burst is taken: denied until its TAT.
        let throttle = ints(&mut c, &["RL.THROTTLE", "fx:throttle", "0", "1", W, "1"]);
        assert_eq!(throttle[..2], [0, 0], "{flavor:?}");
        assert!(throttle[3] > 900_000_000_000, "{flavor:?}: {throttle:?}");
    }
}

fn server_bucket(c: &mut redis::Connection, precision_ms: i64) -> i64 {
    server_ms(c) / precision_ms
}

fn hset(c: &mut redis::Connection, key: &str, pairs: &[(String, &str)]) {
    let mut cmd = redis::cmd("HSET");
    cmd.arg(key);
    for (f, v) in pairs {
        cmd.arg(f).arg(*v);
    }
    let _: i64 = cmd.query(c).unwrap();
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(key)
        .arg(900_000)
        .query(c)
        .unwrap();
}

/// No count in the key has a leading zero (the plain form).
fn plain(value: &str) -> bool {
    value.split(',').all(|n| n == "0" || !n.starts_with('0'))
}

#[test]
fn padded_rl_buckets_state_is_continued_and_rewritten_plainly() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // 10-minute buckets, so the call below lands in the same bucket.
        let p = 600_000;
        let newest = server_bucket(&mut c, p);
        // An older bucket holding 1, the newest holding 2 (in the header).
        hset(
            &mut c,
            "old",
            &[
                ("h".into(), &format!("b,{p},{newest},1,000000003,000000002")),
                ((newest - 1).to_string(), "000000001"),
            ],
        );
        let args = ["10", "3600000", "PRECISION", "600000"];
        let r = buckets(&mut c, "old", &args).unwrap();
        assert_eq!(r[..2], [1, 6], "{f:?}: the three old units still count");
        let h = header(&mut c, "old");
        assert_eq!((h.newest, &h.counts[..]), (newest, &[4, 3][..]), "{f:?}");
        let raw = fields(&mut c, "old");
        assert!(
            plain(&raw["h"]),
            "{f:?}: header rewritten plainly: {}",
            raw["h"]
        );
        // The older bucket did not change, so it keeps its old form.
        assert_eq!(bucket_fields(&mut c, "old")[&(newest - 1)], "000000001");
        assert_eq!(buckets(&mut c, "old", &args).unwrap()[..2], [1, 5]);
    });
}

#[test]
fn padded_rl_count_state_is_continued_and_rewritten_plainly() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let p = 600_000;
        let newest = server_bucket(&mut c, p);
        hset(
            &mut c,
            "oldc",
            &[
                ("h".into(), &format!("c,{p},{newest},0,000000002,000000001")),
                ("f".into(), "ok,fail"),
                (newest.to_string(), "000000002,000000001"),
            ],
        );
        let totals = count(&mut c, "oldc", 3_600_000, "ok", &["PRECISION", "600000"]).unwrap();
        assert_eq!(
            totals,
            [("fail".to_string(), 1), ("ok".to_string(), 3)],
            "{f:?}"
        );
        let raw = fields(&mut c, "oldc");
        assert_eq!(raw[&newest.to_string()], "3,1", "{f:?}");
        assert!(plain(&raw["h"]), "{f:?}: {}", raw["h"]);
    });
}

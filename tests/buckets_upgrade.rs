//! Bucket keys written by releases before 0.2, whose counts were zero-padded
//! to 9 digits, keep working: read as they are, continued, and rewritten in
//! the plain form as they change.

mod common;

use common::buckets::{bucket_fields, buckets, count, fields, header};
use common::on_every_server;

fn server_bucket(c: &mut redis::Connection, precision_ms: i64) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).unwrap();
    (s * 1000 + us / 1000) / precision_ms
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

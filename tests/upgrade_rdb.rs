//! State saved by an earlier release keeps working: an RDB written by rl
//! before the plain bucket counts (`tests/fixtures/rl-0.1.rdb`, see its
//! README) is loaded by every server and build, and every limiter
//! continues from it; the bucket keys are rewritten in the plain form.

mod common;

use common::buckets::{count, fields};
use common::{new_dir, Server, ALL};

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

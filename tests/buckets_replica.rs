//! Replication of RL.BUCKETS and RL.COUNT: a replica ends with the same
//! hash fields and the same absolute expiry; RL.TOTALS answers on a replica.
mod common;

use common::buckets::*;
use common::*;

fn expire_time(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap()
}

#[test]
fn replica_holds_the_same_fields_and_expiry() {
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        let mut r = replica.conn();
        // Enough calls over several buckets to evict some, and denials.
        for i in 0..40 {
            buckets(&mut p, "b", &["30", "300", "PRECISION", "20"]).unwrap();
            count(
                &mut p,
                "c",
                300,
                if i % 3 == 0 { "failure" } else { "success" },
                &["PRECISION", "20"],
            )
            .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // A last call with a 10 s window keeps both keys (and what the short
        // windows evicted) alive however long WAIT takes to get its ack. It
        // must be admitted (a denial moves no expiry): the limit is above
        // anything the key can hold.
        let last = buckets(&mut p, "b", &["1000", "10000"]).unwrap();
        assert_eq!(last[0], 1, "{flavor:?}: the keep-alive call is admitted");
        count(&mut p, "c", 10_000, "success", &[]).unwrap();
        wait_replicas(&mut p, 1);
        for key in ["b", "c"] {
            assert_eq!(fields(&mut p, key), fields(&mut r, key), "{flavor:?} {key}");
            assert_eq!(
                expire_time(&mut p, key),
                expire_time(&mut r, key),
                "{flavor:?} {key}"
            );
        }
        // After the evictions, the bucket fields are exactly those the
        // header names: its held set (and RL.COUNT's newest bucket).
        for key in ["b", "c"] {
            let h = header(&mut p, key);
            let mut named = h.held_buckets();
            if h.kind == "c" {
                named.push(h.newest);
            }
            let fields: Vec<i64> = bucket_fields(&mut p, key).keys().copied().collect();
            assert_eq!(named, fields, "{flavor:?} {key} {h:?}");
        }
        // RL.TOTALS is readonly: a plain connection to the replica runs it.
        let on_replica = totals(&mut r, "c", 10_000, &[]).unwrap();
        let names: Vec<&str> = on_replica.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["failure", "success"], "{flavor:?}");
        // It wrote nothing: the replica still equals the primary.
        assert_eq!(fields(&mut p, "c"), fields(&mut r, "c"), "{flavor:?}");
        // Write commands are refused there.
        let text = err_text(count(&mut r, "c", 300, "x", &[]));
        assert!(text.starts_with("READONLY"), "{flavor:?}: {text}");
    }
}

#[test]
fn denied_requests_replicate_nothing() {
    for flavor in ALL {
        let primary = Server::start(flavor);
        let replica = primary.start_replica(true);
        let mut p = primary.conn();
        buckets(&mut p, "d", &["1", "600000"]).unwrap();
        wait_replicas(&mut p, 1);
        let offset = |c: &mut redis::Connection| -> String {
            let info: String = redis::cmd("INFO").arg("replication").query(c).unwrap();
            info.lines()
                .find(|l| l.starts_with("master_repl_offset:"))
                .unwrap()
                .to_string()
        };
        let before = offset(&mut p);
        for _ in 0..10 {
            assert_eq!(buckets(&mut p, "d", &["1", "600000"]).unwrap()[0], 0);
        }
        assert_eq!(
            offset(&mut p),
            before,
            "{flavor:?}: a denial was replicated"
        );
        let mut r = replica.conn();
        assert_eq!(fields(&mut p, "d"), fields(&mut r, "d"));
    }
}

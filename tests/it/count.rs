//! RL.COUNT and RL.TOTALS: replies in RESP2 and RESP3, the totals over
//! the window, the hash layout, and RL.TOTALS never writing.

use crate::harness::*;

fn pairs(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|&(n, t)| (n.to_string(), t)).collect()
}

#[test]
fn count_replies_every_field_total_sorted() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        assert_eq!(
            count(&mut c, "cb", 60_000, "success", &[]).unwrap(),
            pairs(&[("success", 1)])
        );
        assert_eq!(
            count(&mut c, "cb", 60_000, "failure", &["BY", "3"]).unwrap(),
            pairs(&[("failure", 3), ("success", 1)]),
            "{f:?}"
        );
        count(&mut c, "cb", 60_000, "success", &["BY", "5"]).unwrap();
        assert_eq!(
            totals(&mut c, "cb", 60_000, &[]).unwrap(),
            pairs(&[("failure", 3), ("success", 6)])
        );
        assert_eq!(totals(&mut c, "missing", 60_000, &[]).unwrap(), pairs(&[]));
        let h = fields(&mut c, "cb");
        assert_eq!(h["f"], "success,failure");
        let hd = parse_header(&h["h"]);
        assert_eq!(
            (hd.kind.as_str(), hd.counts.clone()),
            ("C", vec![6, 3]),
            "{hd:?}"
        );
        let enc: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg("cb")
            .query(&mut c)
            .unwrap();
        assert_eq!(enc, "listpack");
    });
}

#[test]
fn resp3_clients_get_a_map() {
    on_every_server(|server| {
        let mut c = server.conn_resp3();
        count(&mut c, "m", 60_000, "b", &[]).unwrap();
        let v: redis::Value = redis::cmd("RL.COUNT")
            .arg("m")
            .arg(60_000)
            .arg("a")
            .query(&mut c)
            .unwrap();
        match v {
            redis::Value::Map(entries) => assert_eq!(entries.len(), 2, "{entries:?}"),
            other => panic!("{:?}: expected a map, got {other:?}", server.flavor),
        }
        let v: redis::Value = redis::cmd("RL.TOTALS")
            .arg("m")
            .arg(60_000)
            .query(&mut c)
            .unwrap();
        assert!(matches!(v, redis::Value::Map(_)), "{v:?}");
    });
}

#[test]
fn totals_leave_with_their_buckets_and_totals_never_write() {
    on_every_server_clocked(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        count(&mut c, "w", 200, "e", &["PRECISION", "50"]).unwrap();
        let before = frozen_state(&mut c, "w");
        // Let time pass in 20 ms steps until the bucket has left; RL.TOTALS
        // keeps saying so without touching the key. Each step lets at least
        // 20 ms pass, so the bucket (gone by 260 ms) is gone within 13
        // steps; 100 leave room for nothing but a bug.
        let mut waited = 0;
        loop {
            let t = totals(&mut c, "w", 200, &[]).unwrap();
            if t == pairs(&[("e", 0)]) || t.is_empty() {
                break;
            }
            assert_eq!(t, pairs(&[("e", 1)]), "{f:?}");
            assert_eq!(frozen_state(&mut c, "w"), before, "{f:?}");
            assert!(waited < 100 * 20, "{f:?}: still counted after {waited} ms");
            server.advance(20);
            waited += 20;
        }
        if server.clock_stopped() {
            // The bucket of 50 ms leaves once the window has passed its end.
            assert!(
                (200..=260).contains(&waited),
                "{f:?}: gone after {waited} ms"
            );
        }
    });
}

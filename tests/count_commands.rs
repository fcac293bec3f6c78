//! RL.COUNT and RL.TOTALS against real servers: replies in RESP2 and RESP3,
//! totals over the window, limits and errors.
mod common;

use common::buckets::*;
use common::*;

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
            ("c", vec![6, 3]),
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
    on_every_server(|server| {
        let mut c = server.conn();
        count(&mut c, "w", 200, "e", &["PRECISION", "50"]).unwrap();
        let before = snapshot(&mut c, "w");
        // Wait (bounded) until the bucket has left; RL.TOTALS keeps saying so
        // without touching the key.
        let start = std::time::Instant::now();
        loop {
            let t = totals(&mut c, "w", 200, &[]).unwrap();
            if t == pairs(&[("e", 0)]) || t.is_empty() {
                break;
            }
            assert_eq!(t, pairs(&[("e", 1)]));
            assert_eq!(snapshot(&mut c, "w").0, before.0);
            assert!(start.elapsed().as_secs() < 20);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
}

#[test]
fn bad_input_names_the_problem_and_writes_nothing() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        count(&mut c, "k", 1000, "ok", &["PRECISION", "100"]).unwrap();
        let before = snapshot(&mut c, "k");
        let long = "x".repeat(33);
        let cases: &[(&str, &[&str], &str)] = &[
            ("0", &[], "ERR window must be an integer"),
            (
                "1000",
                &["BY", "0"],
                "ERR BY must be an integer from 1 to 1000000000000000",
            ),
            ("1000", &["BY"], "ERR BY needs a value"),
            (
                "1000",
                &["PRECISION", "5000"],
                "ERR PRECISION must not exceed window",
            ),
            (
                "1000",
                &["PRECISION", "10"],
                "ERR PRECISION differs from the key's bucket width (100 ms)",
            ),
            ("1000", &["COST", "1"], "ERR unknown option 'COST'"),
        ];
        for (window, extra, want) in cases {
            let mut cmd = redis::cmd("RL.COUNT");
            cmd.arg("k").arg(*window).arg("ok").arg(*extra);
            let text = err_text(cmd.query::<redis::Value>(&mut c));
            assert!(text.starts_with(want), "{f:?} {extra:?}: {text}");
        }
        for field in ["a,b", "a b", long.as_str(), ""] {
            let text = err_text(count(&mut c, "k", 1000, field, &[]));
            assert!(
                text.contains("ERR field must be 1 to 32 printable ASCII"),
                "{text}"
            );
        }
        let text = err_text(
            redis::cmd("RL.COUNT")
                .arg("k")
                .arg(1000)
                .query::<redis::Value>(&mut c),
        );
        assert!(text.contains("wrong number of arguments"), "{text}");
        let text = err_text(totals(&mut c, "k", 1000, &["BY", "1"]));
        assert_eq!(text, "ERR unknown option 'BY'");
        assert_eq!(snapshot(&mut c, "k").0, before.0, "{f:?}");

        // The ninth distinct field is refused and changes nothing.
        for i in 1..8 {
            count(&mut c, "k", 1000, &format!("f{i}"), &[]).unwrap();
        }
        let full = snapshot(&mut c, "k");
        let text = err_text(count(&mut c, "k", 1000, "ninth", &[]));
        assert_eq!(
            text,
            "ERR key already counts 8 fields, the most it may hold"
        );
        assert_eq!(snapshot(&mut c, "k").0, full.0);

        let _: () = redis::cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
        let before = snapshot(&mut c, "s");
        assert!(err_text(count(&mut c, "s", 1000, "ok", &[])).starts_with("WRONGTYPE"));
        assert!(err_text(totals(&mut c, "s", 1000, &[])).starts_with("WRONGTYPE"));
        assert_eq!(snapshot(&mut c, "s"), before);
        server.assert_alive();
    });
}

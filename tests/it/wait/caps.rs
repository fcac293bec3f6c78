//! The caps of `WAIT` on a real server: the 1,001st waiter on a key is
//! refused with the documented error, not queued, nothing recorded; a
//! timeout past 600,000 ms is refused; where a call cannot wait
//! (`RL.PEEK`, `RL.ALL`, `UPTO`, the function edition) the option is
//! unknown. The server-wide cap (100,000) has no lower setting to test it
//! by.

use super::*;

#[test]
fn the_thousand_and_first_waiter_on_a_key_is_refused_and_nothing_recorded() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["cap", "1", LONG, "ID", "holder"]);
        // All sent at once: the cap counts waiters, not their order.
        let mut ws: Vec<RawConn> = (0..1000)
            .map(|i| {
                let mut w = RawConn::connect(port(server));
                let id = format!("w{i}");
                w.send(&["RL.ACQUIRE", "cap", "1", LONG, "ID", &id, "WAIT", LONG]);
                w
            })
            .collect();
        until_waiting(&mut c, 1000);
        let before = entries(&mut c, "cap");
        let offset = changes(&mut c);
        let [_, _, _, errors] = counters(&mut c, "acquire");
        let full = "ERR 1000 clients already wait on this key, the most that may: retry later, or without WAIT";
        // The 1,001st, on a connection of its own as the others: refused
        // at once, not queued.
        let mut late = RawConn::connect(port(server));
        let e = late
            .call(&[
                b"RL.ACQUIRE",
                b"cap",
                b"1",
                LONG.as_bytes(),
                b"WAIT",
                LONG.as_bytes(),
            ])
            .error_text();
        assert_eq!(e.as_deref(), Some(full), "{f:?}");
        // Whatever its timeout.
        let e = err_text(run(
            &mut c,
            &["RL.ACQUIRE", "cap", "1", LONG, "ID", "x", "WAIT", "1"],
        ));
        assert_eq!(e, full, "{f:?}");
        assert_eq!(waits(&mut c), (1000, 0, 0), "{f:?}");
        assert_eq!(entries(&mut c, "cap"), before, "{f:?}");
        assert_eq!(changes(&mut c), offset, "{f:?}: a refused waiter wrote");
        assert_eq!(counters(&mut c, "acquire")[3], errors + 2, "{f:?}");
        // The cap is per key: another key still takes a waiter.
        acquire(&mut c, &["cap2", "1", LONG, "ID", "holder"]);
        let mut other = RawConn::connect(port(server));
        other.send(&["RL.ACQUIRE", "cap2", "1", LONG, "WAIT", LONG]);
        until_waiting(&mut c, 1001);
        // A timeout past the bound is refused before any wait, on a key
        // whose slot is free too: nothing taken.
        let e = err_text(run(
            &mut c,
            &["RL.ACQUIRE", "cap3", "1", LONG, "WAIT", "600001"],
        ));
        assert_eq!(
            e, "ERR timeout_ms must be an integer from 0 to 600000",
            "{f:?}"
        );
        assert_eq!(exists(&mut c, &["cap3"]), 0, "{f:?}");
        // Once one leaves, a newcomer is queued again (behind the others).
        release(&mut c, "cap", "holder");
        assert_eq!(lease_of(&ws[0].recv()), Some("w0".into()), "{f:?}");
        late.send(&["RL.ACQUIRE", "cap", "1", LONG, "ID", "late", "WAIT", LONG]);
        until_waiting(&mut c, 1001);
        assert!(!has(&mut c, "cap", "late"), "{f:?}");
        drop(ws);
        drop(other);
        until_waiting(&mut c, 1);
    });
}

#[test]
fn wait_is_unknown_where_a_call_cannot_wait() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["dk", "1", LONG, "ID", "holder"]);
        let before = entries(&mut c, "dk");
        let unknown = "ERR unknown option 'WAIT'";
        for (line, want) in [
            (
                &["RL.PEEK", "ACQUIRE", "dk", "1", LONG, "WAIT", "5"][..],
                unknown.to_string(),
            ),
            (
                &["RL.ALL", "1", "dk", "ACQUIRE", "1", LONG, "WAIT", "5"][..],
                format!("ERR clause 1: {}", &unknown[4..]),
            ),
            (
                &["RL.SLIDE", "ds", "1", "1000", "UPTO", "WAIT", "5"][..],
                unknown.to_string(),
            ),
        ] {
            assert_eq!(err_text(run(&mut c, line)), want, "{f:?} {line:?}");
        }
        // Nothing waited, nothing written.
        assert_eq!(waits(&mut c), (0, 0, 0), "{f:?}");
        assert_eq!(entries(&mut c, "dk"), before, "{f:?}");
        assert_eq!(exists(&mut c, &["ds"]), 0, "{f:?}");
    });
}

#[test]
fn the_function_edition_refuses_wait_and_never_blocks() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        crate::functions::load(&mut c);
        acquire(&mut c, &["fe", "1", LONG, "ID", "holder"]);
        let before = entries(&mut c, "fe");
        for line in [
            &["FCALL", "rl_acquire", "1", "fe", "1", LONG, "WAIT", "5"][..],
            &["FCALL", "rl_slide", "1", "fs", "1", "1000", "WAIT", "5"][..],
        ] {
            assert_eq!(
                err_text(run(&mut c, line)),
                "ERR unknown option 'WAIT'",
                "{f:?} {line:?}"
            );
        }
        assert_eq!(waits(&mut c), (0, 0, 0), "{f:?}");
        assert_eq!(entries(&mut c, "fe"), before, "{f:?}");
        assert_eq!(exists(&mut c, &["fs"]), 0, "{f:?}");
    });
}

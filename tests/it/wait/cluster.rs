//! A key whose slot moves away while clients wait on it: `MIGRATE` (the
//! resharding step that moves the key's state) unblocks each waiter with
//! the error that says why, records nothing on either node, and the new
//! owner holds the key as it was; without Cluster, a `DEL` of the key
//! lets the first waiter in instead.

use super::*;
use crate::harness::cluster::Cluster;

fn id_of(node: &Server) -> String {
    redis::cmd("CLUSTER")
        .arg("MYID")
        .query(&mut node.conn())
        .unwrap()
}

fn waiters_on_a_migrated_key_are_unblocked_with_the_reason(flavor: Flavor) {
    let cluster = Cluster::start(flavor);
    let key = "mig";
    let src = cluster.owner(key);
    let dst = cluster.nodes.iter().find(|n| n.port != src.port).unwrap();
    let mut c = src.conn();
    acquire(&mut c, &[key, "1", LONG, "ID", "holder"]);
    let before = entries(&mut c, key);
    let mut ws: Vec<RawConn> = (0..2u64)
        .map(|i| {
            let id = format!("w{i}");
            wait_on(
                src,
                &mut c,
                &[key, "1", LONG, "ID", &id, "WAIT", LONG],
                i + 1,
            )
        })
        .collect();
    let slot: i64 = redis::cmd("CLUSTER")
        .arg(&["KEYSLOT", key])
        .query(&mut c)
        .unwrap();
    let slot = slot.to_string();
    let _: () = redis::cmd("CLUSTER")
        .arg(&["SETSLOT", &slot, "IMPORTING", &id_of(src)])
        .query(&mut dst.conn())
        .unwrap();
    let _: () = redis::cmd("CLUSTER")
        .arg(&["SETSLOT", &slot, "MIGRATING", &id_of(dst)])
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("MIGRATE")
        .arg(&["127.0.0.1", &dst.port.to_string(), key, "0", "5000"])
        .query(&mut c)
        .unwrap();
    for (i, w) in ws.iter_mut().enumerate() {
        let e = w.recv().error_text().expect("an error");
        assert!(
            e.starts_with("UNBLOCKED the key left this server") && e.contains("migrated"),
            "{flavor:?} w{i}: {e}"
        );
    }
    assert_eq!(waits(&mut c), (0, 0, 0), "{flavor:?}");
    let [_, admitted, denied, errors] = counters(&mut c, "acquire");
    assert_eq!((admitted, denied, errors), (1, 0, 2), "{flavor:?}");
    // Nothing recorded: the source holds no key of the slot, and the new
    // owner (the slot handed over) holds the key as it was moved.
    let left: i64 = redis::cmd("CLUSTER")
        .arg(&["COUNTKEYSINSLOT", &slot])
        .query(&mut c)
        .unwrap();
    assert_eq!(left, 0, "{flavor:?}");
    for n in &cluster.nodes {
        let _: () = redis::cmd("CLUSTER")
            .arg(&["SETSLOT", &slot, "NODE", &id_of(dst)])
            .query(&mut n.conn())
            .unwrap();
    }
    assert_eq!(entries(&mut dst.conn(), key), before, "{flavor:?}");
}

#[test]
fn redis7_waiters_on_a_migrated_key_are_unblocked_with_the_reason() {
    waiters_on_a_migrated_key_are_unblocked_with_the_reason(Flavor::Redis7);
}

#[test]
fn redis8_waiters_on_a_migrated_key_are_unblocked_with_the_reason() {
    waiters_on_a_migrated_key_are_unblocked_with_the_reason(Flavor::Redis8);
}

#[test]
fn valkey9_waiters_on_a_migrated_key_are_unblocked_with_the_reason() {
    waiters_on_a_migrated_key_are_unblocked_with_the_reason(Flavor::Valkey9);
    waiters_on_a_migrated_key_are_unblocked_with_the_reason(Flavor::Valkey9Native);
}

#[test]
fn without_cluster_a_deleted_key_lets_its_first_waiter_in() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        acquire(&mut c, &["dl", "1", LONG, "ID", "holder"]);
        let mut ws: Vec<RawConn> = (0..2u64)
            .map(|i| {
                let id = format!("w{i}");
                wait_on(
                    server,
                    &mut c,
                    &["dl", "1", LONG, "ID", &id, "WAIT", LONG],
                    i + 1,
                )
            })
            .collect();
        let n: i64 = redis::cmd("DEL").arg("dl").query(&mut c).unwrap();
        assert_eq!(n, 1, "{f:?}");
        assert_eq!(lease_of(&ws[0].recv()), Some("w0".into()), "{f:?}");
        assert_eq!(waits(&mut c), (1, 1, 0), "{f:?}");
        assert!(has(&mut c, "dl", "w0") && !has(&mut c, "dl", "w1"), "{f:?}");
        release(&mut c, "dl", "w0");
        assert_eq!(lease_of(&ws[1].recv()), Some("w1".into()), "{f:?}");
    });
}

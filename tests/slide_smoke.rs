//! The module loads as `rl` on every server and answers RL.SLIDE.
mod common;

use common::*;

#[test]
fn module_loads_as_rl_and_admits_up_to_the_limit() {
    on_every_server(|server| {
        let mut c = server.conn();
        let modules: redis::Value = redis::cmd("MODULE").arg("LIST").query(&mut c).unwrap();
        assert!(
            format!("{modules:?}").contains("rl"),
            "{:?}: {modules:?}",
            server.flavor
        );
        for i in 0..3 {
            let r = slide(&mut c, "smoke", 3, 60_000);
            assert_eq!(r[..3], [1, 2 - i, 0], "{:?}", server.flavor);
        }
        let r = slide(&mut c, "smoke", 3, 60_000);
        assert_eq!(r[0], 0, "{:?}", server.flavor);
        assert!(r[2] > 0 && r[2] <= 60_000);
    });
}

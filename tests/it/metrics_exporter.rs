//! rl's counters in Prometheus through the real redis_exporter and the
//! collect script in `contrib/redis_exporter/rl.lua`.

use crate::harness::exporter::{rl_script_values, samples, Exporter};
use crate::harness::*;

#[test]
fn exporter_exports_every_rl_counter_with_its_value() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // RL.SLIDE: 2 admitted, 1 denied; RL.FIXED: 1 admitted, 2 denied,
        // 1 error (a limit of 0).
        for _ in 0..3 {
            slide(&mut c, "s", 2, 600_000);
        }
        for _ in 0..3 {
            run(&mut c, &["RL.FIXED", "f", "1", "600000"]).unwrap();
        }
        run(&mut c, &["RL.FIXED", "f", "0", "600000"]).unwrap_err();
        let exporter = Exporter::start(server);
        let text = exporter.scrape();
        let exported = rl_script_values(&text);
        assert_eq!(exported.get("rl_slide_admitted"), Some(&2), "{f:?}");
        assert_eq!(exported.get("rl_slide_denied"), Some(&1), "{f:?}");
        assert_eq!(exported.get("rl_slide_calls"), Some(&3), "{f:?}");
        assert_eq!(exported.get("rl_fixed_admitted"), Some(&1), "{f:?}");
        assert_eq!(exported.get("rl_fixed_denied"), Some(&2), "{f:?}");
        assert_eq!(exported.get("rl_fixed_errors"), Some(&1), "{f:?}");
        // Every counter INFO rl shows, none more, none less.
        let info: std::collections::BTreeMap<String, u64> = rl_info(&mut c)
            .into_iter()
            .map(|(k, v)| (format!("rl_{k}"), v))
            .collect();
        assert_eq!(exported, info, "{f:?}");
        // The exporter reached the server and ran the script cleanly.
        let sample = |name: &str, labels: &str| {
            samples(&text)
                .get(&(name.to_string(), labels.to_string()))
                .copied()
        };
        assert_eq!(sample("redis_up", ""), Some(1.0), "{f:?}");
        assert_eq!(
            sample("redis_exporter_last_scrape_error", "err=\"\""),
            Some(0.0),
            "{f:?}"
        );
        // A later scrape sees later calls: the script runs on every scrape.
        slide(&mut c, "s", 2, 600_000);
        let again = rl_script_values(&exporter.scrape());
        assert_eq!(again.get("rl_slide_denied"), Some(&2), "{f:?}");
    });
}

//! rl's counters in Prometheus through the real redis_exporter and the
//! collect script in `contrib/redis_exporter/rl.lua`.

use crate::harness::exporter::{rl_script_values, samples, Exporter};
use crate::harness::*;

fn config_set(c: &mut redis::Connection, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query(c)
        .unwrap();
}

#[test]
fn exporter_exports_every_rl_counter_with_its_value() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        config_set(&mut c, "rl.stats-prefixes", "s f");
        // RL.SLIDE: 2 admitted, 1 denied; RL.FIXED: 1 admitted, 2 denied,
        // 1 error (a limit of 0), then 1 admitted in shadow mode.
        for _ in 0..3 {
            slide(&mut c, "s", 2, 600_000);
        }
        for _ in 0..3 {
            run(&mut c, &["RL.FIXED", "f", "1", "600000"]).unwrap();
        }
        run(&mut c, &["RL.FIXED", "f", "0", "600000"]).unwrap_err();
        config_set(&mut c, "rl.shadow-prefixes", "f");
        run(&mut c, &["RL.FIXED", "f", "1", "600000"]).unwrap();
        let exporter = Exporter::start(server);
        let text = exporter.scrape();
        let exported = rl_script_values(&text);
        assert_eq!(exported.get("rl_slide_admitted"), Some(&2), "{f:?}");
        assert_eq!(exported.get("rl_slide_denied"), Some(&1), "{f:?}");
        assert_eq!(exported.get("rl_slide_calls"), Some(&3), "{f:?}");
        assert_eq!(exported.get("rl_fixed_admitted"), Some(&2), "{f:?}");
        assert_eq!(exported.get("rl_fixed_denied"), Some(&2), "{f:?}");
        assert_eq!(exported.get("rl_fixed_errors"), Some(&1), "{f:?}");
        assert_eq!(exported.get("rl_fixed_shadow_denied"), Some(&1), "{f:?}");
        assert_eq!(exported.get("rl_slide_shadow_denied"), Some(&0), "{f:?}");
        // Per prefix, named by the prefix.
        for (key, n) in [
            ("rl_prefix_admitted:s", 2),
            ("rl_prefix_denied:s", 1),
            ("rl_prefix_shadow_denied:s", 0),
            ("rl_prefix_admitted:f", 2),
            ("rl_prefix_denied:f", 2),
            ("rl_prefix_shadow_denied:f", 1),
        ] {
            assert_eq!(exported.get(key), Some(&n), "{f:?} {key}");
        }
        // Every counter INFO rl shows, none more, none less.
        let mut info: std::collections::BTreeMap<String, u64> = rl_info(&mut c)
            .into_iter()
            .map(|(k, v)| (format!("rl_{k}"), v))
            .collect();
        for (prefix, [admitted, denied, shadow]) in prefix_counts(&mut c) {
            info.insert(format!("rl_prefix_admitted:{prefix}"), admitted);
            info.insert(format!("rl_prefix_denied:{prefix}"), denied);
            info.insert(format!("rl_prefix_shadow_denied:{prefix}"), shadow);
        }
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

/// Every PromQL expression of `contrib/grafana/rl-dashboard.json` (panel
/// targets, then template variable queries).
fn dashboard_queries() -> Vec<String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/rl-dashboard.json");
    let text = std::fs::read_to_string(&path).expect("read the dashboard");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut queries: Vec<String> = dash["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["expr"].as_str().map(str::to_string))
        .collect();
    for var in dash["templating"]["list"].as_array().expect("templating") {
        if let Some(q) = var["query"]["query"].as_str() {
            queries.push(q.to_string());
        }
    }
    queries
}

#[test]
fn dashboard_queries_only_what_the_exporter_emits() {
    let selector = regex::Regex::new(r"([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\}").unwrap();
    let matcher = regex::Regex::new(r#"(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)""#).unwrap();
    let label_values = regex::Regex::new(r"label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)").unwrap();
    // What may remain of an expression once its selectors, strings, ranges
    // and grouping clauses are gone: PromQL's own words, never a metric.
    let promql = ["sum", "rate", "label_replace", "by", "on", "label_values"];
    let ident = regex::Regex::new(r"[A-Za-z_:][A-Za-z0-9_:]*").unwrap();
    let strings = regex::Regex::new(r#""[^"]*""#).unwrap();
    let grouping = regex::Regex::new(r"\b(by|on|without|ignoring)\s*\([^)]*\)").unwrap();
    let label_values_call = regex::Regex::new(r"label_values\([^)]*\)").unwrap();
    let ranges = regex::Regex::new(r"\[[^\]]*\]").unwrap();
    let queries = dashboard_queries();
    assert!(queries.len() >= 4, "{queries:?}");
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        // Every kind of series the panels read: per command, per prefix,
        // shadowed.
        config_set(&mut c, "rl.stats-prefixes", "api:");
        slide(&mut c, "api:s", 1, 600_000);
        slide(&mut c, "api:s", 1, 600_000);
        config_set(&mut c, "rl.shadow", "yes");
        slide(&mut c, "api:s", 1, 600_000);
        let exporter = Exporter::start(server);
        let scraped = samples(&exporter.scrape());
        // Every counter the exporter emits is on a panel (calls aside: the
        // panels split calls by how they ended).
        let key_matchers: Vec<regex::Regex> = queries
            .iter()
            .flat_map(|q| matcher.captures_iter(q).collect::<Vec<_>>())
            .filter(|m| &m[1] == "key")
            .map(|m| regex::Regex::new(&format!("^(?:{})$", &m[3])).unwrap())
            .collect();
        for (name, labels) in scraped.keys() {
            let Some(key) = labels
                .strip_prefix("key=\"")
                .and_then(|l| l.strip_suffix('"'))
            else {
                continue;
            };
            if name != "redis_script_values" || key.ends_with("_calls") {
                continue;
            }
            assert!(
                key_matchers.iter().any(|re| re.is_match(key)),
                "{f:?}: no panel shows {key}"
            );
        }
        for q in &queries {
            let mut selected = 0;
            for sel in selector.captures_iter(q) {
                let name = &sel[1];
                let series: Vec<&String> = scraped
                    .keys()
                    .filter(|(n, _)| n == name)
                    .map(|(_, labels)| labels)
                    .collect();
                assert!(!series.is_empty(), "{f:?}: {name} is not exported ({q})");
                for m in matcher.captures_iter(&sel[2]) {
                    let (label, op, value) = (&m[1], &m[2], &m[3]);
                    // A Grafana variable ($instance): Prometheus's own label.
                    if value.contains('$') {
                        continue;
                    }
                    assert_eq!(op, "=~", "{f:?}: matcher {label}{op}{value:?} in {q}");
                    let re = regex::Regex::new(&format!("^(?:{value})$")).unwrap();
                    let hits = series
                        .iter()
                        .filter_map(|l| l.strip_prefix(&format!("{label}=\""))?.strip_suffix('"'))
                        .filter(|v| re.is_match(v))
                        .count();
                    assert!(
                        hits > 0,
                        "{f:?}: no exported {name} has {label}=~{value:?} ({q})"
                    );
                }
                selected += 1;
            }
            for lv in label_values.captures_iter(q) {
                assert!(
                    scraped.keys().any(|(n, _)| n == &lv[1]),
                    "{f:?}: {} is not exported ({q})",
                    &lv[1]
                );
                selected += 1;
            }
            assert!(selected > 0, "{f:?}: no metric found in {q}");
            let rest = selector.replace_all(q, "");
            let rest = strings.replace_all(&rest, "");
            let rest = ranges.replace_all(&rest, "");
            let rest = grouping.replace_all(&rest, "");
            let rest = label_values_call.replace_all(&rest, "");
            for word in ident.find_iter(&rest) {
                assert!(
                    promql.contains(&word.as_str()),
                    "{f:?}: {:?} in {q} is neither PromQL nor a checked selector",
                    word.as_str()
                );
            }
        }
    });
}

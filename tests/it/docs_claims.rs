//! What the docs say about things outside the code holds: the servers the
//! README claims are the ones tested, and the dashboard note names the
//! dashboard's own data-source selector.

use crate::harness::*;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn docs() -> Vec<(String, String)> {
    let mut files = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.display().to_string(), text)
        })
        .collect()
}

/// The major version a server binary reports (`v=9.1.2` -> 9).
fn major(binary: &Path) -> u32 {
    let out = Command::new(binary).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.split("v=").nth(1).expect("a v= in --version");
    v.split('.').next().unwrap().parse().unwrap()
}

#[test]
fn every_valkey_the_docs_name_is_the_one_tested() {
    let tested = major(&Flavor::Valkey9.binary());
    for (file, text) in docs() {
        for (at, _) in text.match_indices("Valkey ") {
            let rest = &text[at + "Valkey ".len()..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(n) = digits.parse::<u32>() {
                let line = text[..at].lines().count();
                assert_eq!(
                    n, tested,
                    "{file}:{line} names Valkey {n}, but the tests run Valkey {tested}: \
                     test it, or claim what is tested"
                );
            }
        }
    }
}

#[test]
fn the_dashboard_note_names_the_dashboards_data_source_selector() {
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("contrib/grafana/rl-dashboard.json")).unwrap(),
    )
    .unwrap();
    // No __inputs: Grafana's import asks for no data source; the variable
    // picks it, on the dashboard.
    assert!(dashboard.get("__inputs").is_none());
    let variables = dashboard["templating"]["list"].as_array().unwrap();
    let source = variables
        .iter()
        .find(|v| v["type"] == "datasource")
        .expect("the dashboard has a data-source variable");
    let operations = std::fs::read_to_string(root().join("docs/operations.md")).unwrap();
    let label = source["label"].as_str().unwrap();
    let name = source["name"].as_str().unwrap();
    assert!(
        operations.contains(&format!("**{label}** selector")) && operations.contains(&format!("`${name}`")),
        "docs/operations.md's dashboard note must name the selector **{label}** (variable `${name}`)"
    );
    assert!(!operations.contains("pick the Prometheus data\nsource"));
    // Every panel and query queries the data source the selector picks.
    let json = dashboard.to_string();
    let uses: Vec<&str> = json
        .split("\"uid\":\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .filter(|uid| *uid != "rl-rate-limiting")
        .collect();
    assert!(!uses.is_empty());
    for uid in uses {
        assert_eq!(uid, format!("${{{name}}}"));
    }
}

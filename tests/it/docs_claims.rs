//! What the docs say about things outside the code holds: the servers the
//! README claims are the ones tested, and the dashboard note names the
//! dashboard's own data-source selector.

use crate::harness::versions::Release;
use crate::harness::*;
use std::path::Path;

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

/// Every Valkey release the tests run: Valkey 9.1, and the older ones
/// `tests/it/older/` runs (8.0, 8.1).
fn tested_valkeys() -> Vec<Release> {
    [Flavor::Valkey9, Flavor::Valkey80, Flavor::Valkey81]
        .into_iter()
        .map(Flavor::release)
        .collect()
}

/// Whether the docs' `Valkey 8` or `Valkey 8.0` (`major`, and `minor` when
/// given) is a release in `tested`.
fn is_tested(tested: &[Release], major: u32, minor: Option<u32>) -> bool {
    tested
        .iter()
        .any(|r| r.major == major && minor.is_none_or(|m| r.minor == m))
}

/// The sentence of `text` around byte `at`: from the end of the previous
/// one (". " or a blank line) to the end of its own.
fn sentence_around(text: &str, at: usize) -> &str {
    let ends = [". ", ".\n", "\n\n"];
    let start = ends
        .iter()
        .filter_map(|e| text[..at].rfind(e).map(|p| p + e.len()))
        .max()
        .unwrap_or(0);
    let end = ends
        .iter()
        .filter_map(|e| text[at..].find(e).map(|p| at + p))
        .min()
        .unwrap_or(text.len());
    &text[start..end]
}

#[test]
fn every_valkey_the_docs_name_is_one_tested() {
    let tested = tested_valkeys();
    for (file, text) in docs() {
        for (at, _) in text.match_indices("Valkey ") {
            let rest = &text[at + "Valkey ".len()..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let Ok(major) = digits.parse::<u32>() else {
                continue;
            };
            let after = &rest[digits.len()..];
            let minor: Option<u32> = after
                .strip_prefix('.')
                .map(|m| {
                    m.chars()
                        .take_while(|c| c.is_ascii_digit())
                        .collect::<String>()
                })
                .and_then(|m| m.parse().ok());
            // A release named in a sentence that says it is not tested
            // here (a note for its users) is no claim.
            let untested = sentence_around(&text, at).contains("not tested");
            let line = text[..at].lines().count();
            assert!(
                is_tested(&tested, major, minor) || untested,
                "{file}:{line} names Valkey {major}{}, but the tests run {tested:?}: \
                 test it, claim what is tested, or say in its sentence that it is not tested",
                minor.map(|m| format!(".{m}")).unwrap_or_default()
            );
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

//! docs/performance.md shows one run of `make bench`: its figures sit in
//! the blocks the benchmarks generate (`make perf-page`), every block opens
//! with its run line, all of one commit, and every chart it shows is
//! there, committed, drawn by that run. No server: this reads files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")
}

/// (name, body) of each generated block, in page order.
fn blocks(page: &str) -> Vec<(String, String)> {
    let begin = Regex::new(r"(?m)^<!-- BEGIN generated:([a-z0-9-]+) -->$").unwrap();
    let mut out = Vec::new();
    for m in begin.captures_iter(page) {
        let name = m[1].to_string();
        let start = m.get(0).unwrap().end();
        let end_marker = format!("<!-- END generated:{name} -->");
        let end = page[start..]
            .find(&end_marker)
            .unwrap_or_else(|| panic!("block {name} has no {end_marker}"));
        out.push((name, page[start..start + end].to_string()));
    }
    out
}

/// The commit of a block's run line, which must open the block.
fn run_commit(name: &str, body: &str) -> String {
    let line = Regex::new(
        r"^Measured (\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC) at commit `([0-9a-f]{7,40})` on [^:]+: ",
    )
    .unwrap();
    let first = body.trim_start().lines().next().unwrap_or("");
    let m = line
        .captures(first)
        .unwrap_or_else(|| panic!("block {name} does not open with its run line: {first:?}"));
    m[2].to_string()
}

#[test]
fn performance_page_is_one_runs_with_its_charts() {
    let page = std::fs::read_to_string(docs().join("performance.md")).unwrap();
    let blocks = blocks(&page);
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    for needed in [
        "run",
        "instructions",
        "throughput",
        "memory",
        "worst-module",
        "worst-functions",
    ] {
        assert!(names.contains(&needed), "no generated block {needed}");
    }
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "a block appears twice: {names:?}"
    );

    // One run: every block's run line names the same commit.
    let commits: BTreeSet<String> = blocks.iter().map(|(n, b)| run_commit(n, b)).collect();
    assert_eq!(commits.len(), 1, "blocks from several commits: {commits:?}");
    let commit = commits.into_iter().next().unwrap();

    // Every figure in a table comes from the run: no table outside a block.
    let mut outside = page.clone();
    for (name, body) in &blocks {
        outside = outside.replacen(body.as_str(), &format!("(block {name})\n"), 1);
    }
    let stray: Vec<&str> = outside.lines().filter(|l| l.starts_with('|')).collect();
    assert!(
        stray.is_empty(),
        "table rows outside the generated blocks: {stray:?}"
    );

    // Every chart shown is committed and was drawn by the same run; no
    // chart of another run is left beside them.
    let image = Regex::new(r"!\[[^\]]*\]\((perf/[a-z0-9-]+\.svg)\)").unwrap();
    let shown: BTreeSet<String> = image
        .captures_iter(&page)
        .map(|m| m[1].to_string())
        .collect();
    for chart in [
        "perf/instructions.svg",
        "perf/memory.svg",
        "perf/worst-module.svg",
        "perf/worst-functions.svg",
    ] {
        assert!(shown.contains(chart), "the page does not show {chart}");
    }
    for chart in &shown {
        let path = docs().join(chart);
        let svg = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{chart} is shown but missing: {e}"));
        assert!(
            svg.trim_start().starts_with("<svg"),
            "{chart} is not an SVG"
        );
        assert!(
            svg.contains(&format!("at commit {commit}")),
            "{chart} was not drawn by the run of commit {commit}"
        );
    }
    let committed: BTreeSet<String> = std::fs::read_dir(docs().join("perf"))
        .unwrap()
        .map(|e| format!("perf/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    assert_eq!(
        committed, shown,
        "docs/perf/ holds charts the page does not show"
    );
}

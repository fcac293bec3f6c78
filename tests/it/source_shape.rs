//! The source keeps its shape (issue #41): no file of `src/` imports, through
//! any chain of others, a file that imports it back, and no source file is
//! over 700 lines. No server: this reads files.
//!
//! An edge is any path between files of `src/` that starts at `crate::`,
//! `super::` or `self::`, in a `use` (nested braces expanded) or inline in
//! code (`crate::core::error::RlError::Syntax`). A path names the file of
//! the longest module prefix it walks through, so `super::Request`
//! re-exported by a `mod.rs` is an edge to that `mod.rs`. A `mod.rs`
//! naming its own child (`decide::acquire(..)`) is not an edge: the parent
//! holding what its children share is the layout Rust expects.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 700;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, keyed by its module path (`src/lib.rs`
/// is `[]`, `src/core/mod.rs` and `src/core.rs` are `["core"]`).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    for file in files_under(src) {
        if file.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let rel = file.strip_prefix(src).unwrap();
        let mut segs: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let last = segs.pop().unwrap();
        let stem = last.trim_end_matches(".rs");
        if !(segs.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
            segs.push(stem.to_string());
        }
        out.insert(segs, rel.to_path_buf());
    }
    out
}

/// Files under `dir`, skipping what builds and package managers write.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let generated = ["target", "node_modules", "__pycache__", "dist", "build"];
                if !name.starts_with('.')
                    && !generated.contains(&name.as_str())
                    && !name.ends_with(".egg-info")
                {
                    stack.push(path);
                }
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path,
    Open,
    Close,
    Other(char),
}

/// Rust source as the tokens that matter for paths: comments, strings and
/// char literals dropped (a path in a doc comment or a message is no edge).
fn tokens(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or('\0');
        if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (ch == 'r' || ch == 'b') && raw_string_start(&c, i).is_some() {
            let (hashes, body) = raw_string_start(&c, i).unwrap();
            i = body;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < c.len() && !c[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' {
            // A char literal ('a', '\n', '\u{1F600}'); else a lifetime.
            if next == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if word == "b" && c.get(i) == Some(&'\'') {
                continue;
            }
            out.push(Tok::Ident(word));
        } else if ch == ':' && next == ':' {
            out.push(Tok::Path);
            i += 2;
        } else if ch == '{' {
            out.push(Tok::Open);
            i += 1;
        } else if ch == '}' {
            out.push(Tok::Close);
            i += 1;
        } else {
            if !ch.is_whitespace() {
                out.push(Tok::Other(ch));
            }
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br"`…: the number of `#` and where the body starts.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

/// The full paths of one `use` tree starting at `toks[*i]`, each prefixed
/// with `prefix`; stops after the tree (at `,`, `}` or `;`).
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(w)) if w == "as" => {
                *i += 2;
                out.push(path);
                return;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *i += 1;
            }
            Some(Tok::Path) => *i += 1,
            Some(Tok::Other('*')) => {
                *i += 1;
                out.push(path);
                return;
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Close) => {
                            *i += 1;
                            break;
                        }
                        Some(Tok::Other(',')) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, path.clone(), out),
                    }
                }
                return;
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// The module paths a file names, each relative to where it is named:
/// (the inline module stack at that point, the path as written).
fn named_paths(toks: &[Tok]) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    // One entry per open brace: the inline module it opens, if any.
    let mut braces: Vec<Option<String>> = Vec::new();
    let inline =
        |braces: &[Option<String>]| -> Vec<String> { braces.iter().flatten().cloned().collect() };
    let mut i = 0;
    while i < toks.len() {
        let prev = if i > 0 { toks.get(i - 1) } else { None };
        match &toks[i] {
            Tok::Ident(w) if w == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Open)) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    braces.push(Some(name.clone()));
                    i += 3;
                    continue;
                }
                i += 1;
            }
            Tok::Ident(w) if w == "use" && prev != Some(&Tok::Other('$')) => {
                i += 1;
                let mut paths = Vec::new();
                use_tree(toks, &mut i, Vec::new(), &mut paths);
                let at = inline(&braces);
                out.extend(paths.into_iter().map(|p| (at.clone(), p)));
            }
            Tok::Ident(w)
                if toks.get(i + 1) == Some(&Tok::Path)
                    && prev != Some(&Tok::Path)
                    && prev != Some(&Tok::Other('$'))
                    && prev != Some(&Tok::Ident("in".into())) =>
            {
                let mut path = vec![w.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Tok::Path) {
                    match toks.get(j + 1) {
                        Some(Tok::Ident(seg)) => path.push(seg.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                out.push((inline(&braces), path));
                i = j;
            }
            Tok::Open => {
                braces.push(None);
                i += 1;
            }
            Tok::Close => {
                braces.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The files of `src/` (relative to it) and the files each one names.
fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let src = root().join("src");
    let mods = modules(&src);
    let mut graph = BTreeMap::new();
    for (module, file) in &mods {
        let text = fs::read_to_string(src.join(file)).unwrap();
        let paths = named_paths(&tokens(&text));
        let mut edges = BTreeSet::new();
        for (inline, path) in paths {
            let mut here: Vec<String> = module.iter().cloned().chain(inline).collect();
            let mut segs = path.into_iter().peekable();
            match segs.peek().map(String::as_str) {
                Some("crate") => {
                    segs.next();
                    here.clear();
                }
                Some("self") => {
                    segs.next();
                }
                Some("super") => {
                    while segs.peek().map(String::as_str) == Some("super") {
                        segs.next();
                        here.pop();
                    }
                }
                _ => continue,
            }
            let mut full = here;
            for seg in segs {
                if seg == "self" {
                    continue;
                }
                full.push(seg);
            }
            // The file of the longest module prefix of the path.
            let target = (0..=full.len())
                .rev()
                .find_map(|n| mods.get(&full[..n]))
                .unwrap();
            if target != file {
                edges.insert(target.clone());
            }
        }
        graph.insert(file.clone(), edges);
    }
    graph
}

/// The strongly connected components with more than one file (Tarjan).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a PathBuf) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for u in &w.graph[v] {
            if !w.index.contains_key(u) {
                visit(w, u);
                let low = w.low[v].min(w.low[u]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(u) {
                let low = w.low[v].min(w.index[u]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut scc = Vec::new();
            loop {
                let u = w.stack.pop().unwrap();
                w.on_stack.remove(u);
                scc.push(u.clone());
                if u == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                w.out.push(scc);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.out
}

#[test]
fn no_import_circle_in_src() {
    let graph = import_graph();
    assert!(graph.len() > 100, "read only {} files of src/", graph.len());
    let found = circles(&graph);
    let report: Vec<String> = found
        .iter()
        .map(|scc| {
            let inside: BTreeSet<&PathBuf> = scc.iter().collect();
            let edges: Vec<String> = scc
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|to| inside.contains(to))
                        .map(move |to| format!("  {} -> {}", from.display(), to.display()))
                })
                .collect();
            format!("{} files:\n{}", scc.len(), edges.join("\n"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles in src/:\n{}",
        report.join("\n")
    );
}

/// The limiters' folders under `src/core/`.
const LIMITERS: [&str; 6] = ["slide", "buckets", "count", "throttle", "fixed", "lease"];

#[test]
fn the_core_layers_point_one_way() {
    let graph = import_graph();
    let under = |file: &Path, dir: &str| file.starts_with(Path::new("core").join(dir));
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            // The dispatch by name imports the limiters; none imports it.
            let limiter_to_dispatch =
                LIMITERS.iter().any(|l| under(from, l)) && under(to, "dispatch");
            // The shared options import no limiter and no dispatch.
            let options_up = under(from, "options")
                && (under(to, "dispatch") || LIMITERS.iter().any(|l| under(to, l)));
            if limiter_to_dispatch || options_up {
                wrong.push(format!("{} -> {}", from.display(), to.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "edges against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_core_top_level_holds_at_most_14_files() {
    let top: Vec<String> = fs::read_dir(root().join("src/core"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(top.contains(&"limiter.rs".to_string()), "{top:?}");
    assert!(top.len() <= 14, "{} files at src/core/: {top:?}", top.len());
}

#[test]
fn the_checker_sees_every_kind_of_edge() {
    let text = r#"
        use super::{a::{self, B}, c::D as E};
        use crate::x::*;
        mod child;
        mod tests { use super::f::G; }
        fn h() { let _ = crate::y::z::W; child::K; "crate::no::Edge"; }
        // use crate::no::edge;
    "#;
    let paths = named_paths(&tokens(text));
    let got: Vec<String> = paths
        .iter()
        .map(|(at, p)| format!("{}|{}", at.join("::"), p.join("::")))
        .collect();
    assert_eq!(
        got,
        [
            "|super::a::self",
            "|super::a::B",
            "|super::c::D",
            "|crate::x",
            "tests|super::f::G",
            "|crate::y::z::W",
            "|child::K",
        ]
    );
}

#[test]
fn no_source_file_over_700_lines() {
    let dirs = [
        "src",
        "functions/src",
        "tests",
        "benches",
        "clients",
        "scripts",
    ];
    let mut read = 0;
    let mut over = Vec::new();
    for dir in dirs {
        for file in files_under(&root().join(dir)) {
            // The adapters' rl.lua is functions/rl.lua copied in when a
            // package is built (gitignored), not a source of its own.
            if dir == "clients" && file.file_name().is_some_and(|n| n == "rl.lua") {
                continue;
            }
            // Binary fixtures (an RDB file) are not source.
            let Ok(text) = fs::read_to_string(&file) else {
                continue;
            };
            read += 1;
            let lines = text.lines().count();
            if lines > MAX_LINES {
                over.push(format!(
                    "{} has {lines} lines",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(read > 200, "read only {read} files");
    assert!(
        over.is_empty(),
        "files over {MAX_LINES} lines:\n{}",
        over.join("\n")
    );
}

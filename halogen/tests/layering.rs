//! The crate's modules form layers: the IR knows nothing of the user's language, the
//! runtime nothing of the back ends, the C back end nothing of the auto-scheduler or the
//! interpreter, and no two top-level modules depend on each other. Checked from the
//! source: every `crate::module` path outside comments is a dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules a file's code (not its comments) names with `crate::`, including
/// those inside `use crate::{a::…, b::…}` groups.
fn dependencies(source: &str) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c}`: the first word of each item (single-line groups).
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let word: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !word.is_empty() {
                        deps.insert(word);
                    }
                }
            } else {
                let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !word.is_empty() {
                    deps.insert(word);
                }
            }
        }
    }
    deps
}

/// The module a file belongs to (`ir`, `backend`, …; `lib` for lib.rs) and its
/// sub-folder, if any.
fn module_of(src: &Path, file: &Path) -> (String, String) {
    let rel = file.strip_prefix(src).unwrap();
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    (parts[0].clone(), parts.get(1).cloned().unwrap_or_default())
}

struct Crate {
    /// (module, sub-folder or file) -> dependencies.
    files: Vec<((String, String), PathBuf, BTreeSet<String>)>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths.sort();
    let files = paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (module_of(&src, &p), p, dependencies(&text))
        })
        .collect();
    Crate { files }
}

fn offenders(c: &Crate, from: impl Fn(&(String, String)) -> bool, to: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (m, path, deps) in &c.files {
        if !from(m) {
            continue;
        }
        for d in deps {
            if to.contains(&d.as_str()) {
                out.push(format!("{} uses crate::{d}", path.display()));
            }
        }
    }
    out
}

#[test]
fn dependencies_are_found_in_code_not_comments() {
    let deps =
        dependencies("use crate::ir::Expr;\n// crate::lang\nuse crate::{error::Error, runtime};\nx(crate::target::T)");
    let want: BTreeSet<String> = ["ir", "error", "runtime", "target"].iter().map(|s| s.to_string()).collect();
    assert_eq!(deps, want);
}

#[test]
fn the_ir_and_the_runtime_stand_alone() {
    let c = read_crate();
    let above = ["lang", "lower", "backend", "autoschedule", "pipeline", "build"];
    let bad = offenders(&c, |m| m.0 == "ir", &[&above[..], &["runtime"]].concat());
    assert!(bad.is_empty(), "the IR depends on higher layers:\n{}", bad.join("\n"));
    let bad = offenders(&c, |m| m.0 == "runtime", &above);
    assert!(bad.is_empty(), "the runtime depends on higher layers:\n{}", bad.join("\n"));
}

#[test]
fn the_c_back_end_uses_neither_the_auto_scheduler_nor_the_interpreter() {
    let c = read_crate();
    let bad = offenders(&c, |m| m.0 == "backend" && m.1 == "c", &["autoschedule", "pipeline", "lang"]);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let interp: Vec<String> = c
        .files
        .iter()
        .filter(|(m, _, _)| m.0 == "backend" && m.1 == "c")
        .filter(|(_, p, _)| {
            std::fs::read_to_string(p).unwrap().lines().any(|l| {
                let code = l.split("//").next().unwrap_or("");
                code.contains("backend::interp") || code.contains("Interpreter")
            })
        })
        .map(|(_, p, _)| p.display().to_string())
        .collect();
    assert!(interp.is_empty(), "the C back end uses the interpreter: {interp:?}");
}

#[test]
fn top_level_modules_have_no_cycles() {
    let c = read_crate();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ((m, _), _, deps) in &c.files {
        let entry = graph.entry(m.clone()).or_default();
        entry.extend(deps.iter().filter(|d| *d != m && *d != "lib" && *d != "prelude").cloned());
    }
    graph.remove("lib");
    graph.remove("prelude");
    // Depth-first search for a back edge; report the cycle's path.
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in graph.get(n).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|p| p == d).unwrap();
                    let mut cycle = path[start..].to_vec();
                    cycle.push(d.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(d, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(cycle) = visit(n, &graph, &mut state, &mut Vec::new()) {
                panic!("modules depend on each other in a cycle: {}", cycle.join(" -> "));
            }
        }
    }
}

//! Runs every `halogen/tests/lower/*.hal` file: a loop nest in printed form, the pass to run
//! on it (`; pass: NAME`, a name of `halogen::lower::passes`), and checks on the printed
//! output in the style of LLVM's FileCheck:
//! - `; check: TEXT` — TEXT appears in the output, after the previous check's match;
//! - `; not: TEXT` — TEXT does not appear between the previous check's match and the next's.
//!
//! The pass's output must also pass the verifier, with the buffers the input uses without
//! allocating them as the pipeline's buffers.

use halogen::ir::parse::parse_stmt;
use halogen::ir::{walk_expr, walk_stmt, Expr, ExprKind, Name, Stmt, Visitor};
use halogen::lower::passes::stmt_pass;
use halogen::lower::verify::verify;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, PartialEq)]
enum Check {
    Present(String),
    Absent(String),
}

/// The directives of a file: its pass and its checks, in order.
fn directives(text: &str) -> Result<(String, Vec<Check>), String> {
    let mut pass = None;
    let mut checks = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some(d) = line.strip_prefix(';') else { continue };
        let d = d.trim_start();
        if let Some(p) = d.strip_prefix("pass:") {
            pass = Some(p.trim().to_string());
        } else if let Some(c) = d.strip_prefix("check:") {
            checks.push(Check::Present(c.trim().to_string()));
        } else if let Some(c) = d.strip_prefix("not:") {
            checks.push(Check::Absent(c.trim().to_string()));
        }
    }
    let pass = pass.ok_or("no '; pass: NAME' line")?;
    if !checks.iter().any(|c| matches!(c, Check::Present(_))) {
        return Err("no '; check:' line".into());
    }
    Ok((pass, checks))
}

/// Applies the checks to `output`; the error names the failing check.
fn run_checks(output: &str, checks: &[Check]) -> Result<(), String> {
    let mut pos = 0;
    let mut pending_not: Vec<&str> = Vec::new();
    let absent_in = |region: &str, nots: &[&str]| -> Result<(), String> {
        match nots.iter().find(|n| region.contains(**n)) {
            Some(n) => Err(format!("'; not: {n}' matched")),
            None => Ok(()),
        }
    };
    for c in checks {
        match c {
            Check::Absent(t) => pending_not.push(t),
            Check::Present(t) => {
                let Some(at) = output[pos..].find(t.as_str()) else {
                    return Err(format!("'; check: {t}' not found after byte {pos}"));
                };
                absent_in(&output[pos..pos + at], &pending_not)?;
                pending_not.clear();
                pos += at + t.len();
            }
        }
    }
    absent_in(&output[pos..], &pending_not)
}

/// Buffers the statement loads from or stores to without allocating them.
fn unallocated_buffers(s: &Stmt) -> HashSet<Name> {
    struct Uses {
        used: HashSet<Name>,
        allocated: HashSet<Name>,
    }
    impl Visitor for Uses {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Load { buffer, .. } = e.kind() {
                self.used.insert(buffer.clone());
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            match s {
                Stmt::Store { buffer, .. } => {
                    self.used.insert(buffer.clone());
                }
                Stmt::Allocate { name, .. } | Stmt::Realize { name, .. } => {
                    self.allocated.insert(name.clone());
                }
                _ => {}
            }
            walk_stmt(self, s)
        }
    }
    let mut u = Uses { used: HashSet::new(), allocated: HashSet::new() };
    u.visit_stmt(s);
    u.used.difference(&u.allocated).cloned().collect()
}

/// Runs one file; the error says what failed, with the pass's output.
fn run_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (pass_name, checks) = directives(&text)?;
    let pass = stmt_pass(&pass_name).ok_or_else(|| format!("no pass named '{pass_name}'"))?;
    let input = parse_stmt(&text).map_err(|e| format!("the input does not parse: {e}"))?;
    let external = unallocated_buffers(&input);
    let output = (pass.run)(input).map_err(|e| format!("the pass failed: {e}"))?;
    let printed = output.to_string();
    let with_output = |msg: String| format!("{msg}\n--- output of {pass_name} ---\n{printed}");
    verify(&output, pass.name, &external, pass.phase).map_err(|e| with_output(e.to_string()))?;
    run_checks(&printed, &checks).map_err(with_output)
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lower");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hal"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_filetest_passes() {
    let files = files();
    let failures: Vec<String> =
        files.iter().filter_map(|f| run_file(f).err().map(|e| format!("{}: {e}", f.display()))).collect();
    assert!(
        failures.is_empty(),
        "{} of {} filetests failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_statement_pass_has_a_filetest() {
    let covered: HashSet<String> = files()
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|t| directives(&t).ok().map(|d| d.0))
        .collect();
    for p in halogen::lower::passes::STMT_PASSES {
        assert!(covered.contains(p.name), "no filetest runs '{}'", p.name);
    }
}

#[test]
fn checks_fail_when_the_output_differs() {
    let out = "for (x, 0, 4) {\n  out[x] = (x * 5)\n}\n";
    let checks = |spec: &str| directives(&format!("; pass: simplify\n{spec}")).unwrap().1;
    assert_eq!(run_checks(out, &checks("; check: for (x, 0, 4)\n; check: (x * 5)")), Ok(()));
    // Out of order.
    let err = run_checks(out, &checks("; check: (x * 5)\n; check: for (x")).unwrap_err();
    assert!(err.contains("'; check: for (x' not found"), "{err}");
    // A `not` between two matches, and one after the last.
    let err = run_checks(out, &checks("; check: for\n; not: out[\n; check: (x * 5)")).unwrap_err();
    assert!(err.contains("'; not: out[' matched"), "{err}");
    let err = run_checks(out, &checks("; check: for\n; not: }")).unwrap_err();
    assert!(err.contains("'; not: }' matched"), "{err}");
    assert_eq!(run_checks(out, &checks("; check: out[x]\n; not: for")), Ok(()));
}

#[test]
fn a_broken_filetest_is_reported_with_the_output() {
    let dir = std::env::temp_dir().join(format!("halogen-filetest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.hal");
    std::fs::write(&path, "; pass: simplify\nout[0] = (1 + 2)\n; check: out[0] = 4\n").unwrap();
    let err = run_file(&path).unwrap_err();
    assert!(err.contains("'; check: out[0] = 4' not found"), "{err}");
    assert!(err.contains("--- output of simplify ---\nout[0] = 3\n"), "{err}");
    std::fs::write(&path, "; pass: simplify\nfor (x, 0, 4) {\n  out[x] = (x + y)\n}\n; check: out").unwrap();
    // `y` parses as an int32 parameter.
    assert_eq!(run_file(&path), Ok(()));
    // The verifier sees the output: a store of the wrong type into an allocation.
    std::fs::write(&path, "; pass: unroll\nallocate t[int32 * 4]\nt[0] = (uint8)1\n; check: t[0]").unwrap();
    let err = run_file(&path).unwrap_err();
    assert!(err.contains("internal error in unroll: store to of uint8 elements on 't'"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

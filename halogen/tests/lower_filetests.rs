//! Runs every `halogen/tests/lower/*.hal` file: a loop nest in printed form, the pass to run
//! on it (`; pass: NAME`, a name of `halogen::lower::passes`), and checks on the printed
//! output in the style of LLVM's FileCheck:
//! - `; check: TEXT` — TEXT appears in the output, after the previous check's match;
//! - `; not: TEXT` — TEXT does not appear between the previous check's match and the next's.
//!
//! A pass that reads the Funcs' facts (`halogen::lower::passes::ENV_PASSES`) also needs
//! `; env: NAME`, a pipeline of [`fixture`]: the nest may call its Funcs, and the pass gets
//! its environment.
//!
//! The pass's output must also pass the verifier, with the buffers the input uses without
//! allocating them (and the fixture's images and outputs) as the pipeline's buffers.

mod common;

use halogen::ir::parse::{parse_stmt, parse_stmt_with_funcs};
use halogen::ir::{walk_expr, walk_stmt, Expr, ExprKind, FuncId, Name, Stmt, Type, Visitor};
use halogen::lower::environment::{buffer_names, build_environment, Environment};
use halogen::lower::passes::{env_pass, stmt_pass, ENV_PASSES};
use halogen::lower::verify::{verify, verify_with_funcs};
use halogen::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The pipelines filetests of environment passes run in: their environment, and their
/// Funcs' ids by name for the parser.
fn fixture(name: &str) -> Option<(Environment, HashMap<Name, FuncId>)> {
    let funcs = match name {
        // A 3x3 blur of a uint16 image whose rows of `blur_x` are stored for the whole
        // output and computed per row of `blur_y`: they slide and fold to 3 rows.
        "blur sliding" => {
            let common::Blur { blur_x, blur_y, y, .. } = common::blur();
            blur_x.store_root().compute_at(&blur_y, y);
            vec![blur_y, blur_x]
        }
        // Two Funcs of one input, `gy` computed with `gx` over their rows; the output
        // reads `gy` one row further down, so their rows differ.
        "computed with" => {
            let (x, y) = (Var::new("x"), Var::new("y"));
            let a = ImageParam::new(Type::i32(), 2, "a");
            let (gx, gy, out) = (Func::new("gx"), Func::new("gy"), Func::new("out"));
            gx.def((x, y), a.at((x, y)) + 1);
            gy.def((x, y), a.at((x, y)) * 2);
            out.def((x, y), gx.at((x, y)) + gy.at((x, y + 1)));
            gx.compute_root();
            gy.compute_root().compute_with(&gx, y);
            vec![out, gx, gy]
        }
        _ => return None,
    };
    let env = build_environment(&[funcs[0].func_ref().clone()]).ok()?;
    Some((env, funcs.iter().map(|f| (f.name(), f.func_ref().id())).collect()))
}

#[derive(Debug, PartialEq)]
enum Check {
    Present(String),
    Absent(String),
}

/// The directives of a file.
struct Directives {
    pass: String,
    /// The fixture named by `; env:`.
    env: Option<String>,
    /// The checks, in order.
    checks: Vec<Check>,
}

/// The directives of a file: its pass, its fixture if any, and its checks, in order.
fn directives(text: &str) -> Result<Directives, String> {
    let mut pass = None;
    let mut env = None;
    let mut checks = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some(d) = line.strip_prefix(';') else { continue };
        let d = d.trim_start();
        if let Some(p) = d.strip_prefix("pass:") {
            pass = Some(p.trim().to_string());
        } else if let Some(e) = d.strip_prefix("env:") {
            env = Some(e.trim().to_string());
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
    Ok(Directives { pass, env, checks })
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
    let Directives { pass: pass_name, env, checks } = directives(&text)?;
    let unparsable = |e: halogen::Error| format!("the input does not parse: {e}");
    let failed = |e: halogen::Error| format!("the pass failed: {e}");
    if let Some(pass) = stmt_pass(&pass_name) {
        let input = parse_stmt(&text).map_err(unparsable)?;
        let external = unallocated_buffers(&input);
        let output = (pass.run)(input).map_err(failed)?;
        let printed = output.to_string();
        let with_output = |msg: String| format!("{msg}\n--- output of {pass_name} ---\n{printed}");
        verify(&output, pass.name, &external, pass.phase).map_err(|e| with_output(e.to_string()))?;
        return run_checks(&printed, &checks).map_err(with_output);
    }
    let pass = env_pass(&pass_name).ok_or_else(|| format!("no pass named '{pass_name}'"))?;
    let env_name = env.ok_or_else(|| format!("'{pass_name}' needs '; env: NAME'"))?;
    let (env, ids) = fixture(&env_name).ok_or_else(|| format!("no fixture named '{env_name}'"))?;
    let input = parse_stmt_with_funcs(&text, &ids).map_err(unparsable)?;
    let mut external = unallocated_buffers(&input);
    external.extend(env.images.keys().cloned());
    for out in &env.outputs {
        external.extend(buffer_names(out, env.funcs[out].types.len()));
    }
    let func_types: HashMap<Name, Vec<Type>> = env.funcs.iter().map(|(n, f)| (n.clone(), f.types.clone())).collect();
    let output = (pass.run)(input, &env).map_err(failed)?;
    let printed = output.to_string();
    let with_output = |msg: String| format!("{msg}\n--- output of {pass_name} ---\n{printed}");
    verify_with_funcs(&output, pass.name, &external, &func_types, pass.phase)
        .map_err(|e| with_output(e.to_string()))?;
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
        .filter_map(|t| directives(&t).ok().map(|d| d.pass))
        .collect();
    let names = halogen::lower::passes::STMT_PASSES.iter().map(|p| p.name).chain(ENV_PASSES.iter().map(|p| p.name));
    for name in names {
        assert!(covered.contains(name), "no filetest runs '{name}'");
    }
}

#[test]
fn checks_fail_when_the_output_differs() {
    let out = "for (x, 0, 4) {\n  out[x] = (x * 5)\n}\n";
    let checks = |spec: &str| directives(&format!("; pass: simplify\n{spec}")).unwrap().checks;
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
    // An environment pass needs a fixture that exists.
    std::fs::write(&path, "; pass: storage flattening\nout[0] = 1\n; check: out").unwrap();
    assert_eq!(run_file(&path), Err("'storage flattening' needs '; env: NAME'".to_string()));
    std::fs::write(&path, "; pass: storage flattening\n; env: nothing\nout[0] = 1\n; check: out").unwrap();
    assert_eq!(run_file(&path), Err("no fixture named 'nothing'".to_string()));
    std::fs::remove_dir_all(&dir).ok();
}

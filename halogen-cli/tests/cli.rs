//! The `halogen` command end to end: it runs, writes what it says, and fails cleanly.

use std::path::Path;
use std::process::{Command, Output};

fn halogen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halogen")).args(args).output().expect("the halogen binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn lower_prints_the_loop_nest() {
    let o = halogen(&["lower", "blur", "--schedule", "hand"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("blur_x") && text.contains("blur_y"), "{text}");
    assert!(text.contains("parallel"), "the hand schedule has a parallel loop:\n{text}");
}

#[test]
fn list_names_every_app() {
    let o = halogen(&["list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for app in ["blur", "unsharp", "harris", "bilateral_grid", "hist_eq", "local_laplacian"] {
        assert!(stdout(&o).contains(app), "{app} missing from:\n{}", stdout(&o));
    }
}

#[test]
fn demo_writes_pictures_and_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let o = halogen(&["demo", "--out", out.to_str().unwrap(), "--size", "64x48", "--target", "interp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(out.file_name().unwrap().to_str().unwrap()), "says where: {}", stdout(&o));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for file in ["input.png", "blur.png", "harris.png", "hist_eq.png"] {
        assert!(out.join(file).is_file(), "{file} missing");
        assert!(index.contains(file), "index.html does not show {file}");
    }
    assert!(!index.contains("MISMATCH"), "every result matches its reference");
}

#[test]
fn run_processes_a_picture_and_bench_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.png");
    let output = dir.path().join("out.png");
    // Make an input picture with the demo's generator (through the tool itself).
    let demo_dir = dir.path().join("d");
    let o = halogen(&["demo", "--out", demo_dir.to_str().unwrap(), "--size", "40x30", "--target", "interp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(demo_dir.join("input.png"), &input).unwrap();
    let o =
        halogen(&["run", "sobel", input.to_str().unwrap(), output.to_str().unwrap(), "--target", "interp", "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new(&output).is_file());
    let o = halogen(&[
        "bench",
        "blur",
        "--size",
        "32x16",
        "--runs",
        "2",
        "--schedule",
        "hand",
        "--json",
        "--target",
        "interp",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    assert!(
        json.trim_start().starts_with('[') && json.contains("\"app\": \"blur\"") && json.contains("min_ms"),
        "{json}"
    );
}

#[test]
fn errors_are_one_line_and_fail() {
    for args in [
        vec!["lower", "no_such_app"],
        vec!["lower", "blur", "--schedule", "nope"],
        vec!["run", "blur", "/no/such/file.png", "/tmp/x.png"],
        vec!["lower", "blur", "--param", "radius=3"],
    ] {
        let o = halogen(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line, got:\n{err}");
        assert!(err.starts_with("halogen: error:"), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    }
}

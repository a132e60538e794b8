//! The apps written as `.halogen` files (`pipelines/`) compute what the Rust apps of the
//! same names compute: on the Rust app's inputs, under the file's schedules and none, on
//! the interpreter and the host target, they equal the Rust app's plain-Rust reference.
//! The auto-scheduler schedules them too.

use halogen::prelude::*;
use halogen_apps::text_app::TextApp;
use halogen_apps::{create, App, Config};
use std::path::PathBuf;

fn file(app: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pipelines").join(format!("{app}.halogen"))
}

fn check(app: &str, width: i32, height: i32) {
    let rust = create(app, &Config::default()).unwrap();
    let inputs = rust.make_inputs(width, height, 7);
    let expected = rust.reference(&inputs).unwrap();
    let text = TextApp::load(&file(app), &Config::default()).unwrap();
    assert_eq!(text.input_specs().len(), rust.input_specs().len(), "{app}");
    assert_eq!(text.output_extents(&inputs).unwrap(), expected.extents(), "{app}: the file's output size");
    for schedule in text.schedules() {
        for target in [Target::interp(), Target::host()] {
            let t = TextApp::load(&file(app), &Config::default()).unwrap();
            t.apply_schedule(schedule).unwrap();
            let got = t.run(&target, &inputs).unwrap_or_else(|e| panic!("{app}/{schedule} on {target}: {e}"));
            if let Err(m) = got.compare(&expected, rust.tolerance()) {
                panic!("{app}.halogen/{schedule} on {target} differs from the Rust app's reference: {m}");
            }
        }
    }
    // Auto-scheduled for its estimates, on the host.
    let t = TextApp::load(&file(app), &Config::default()).unwrap();
    t.pipeline().auto_schedule(&MachineParams::host()).unwrap_or_else(|e| panic!("{app}: auto_schedule: {e}"));
    let got = t.run(&Target::host(), &inputs).unwrap();
    if let Err(m) = got.compare(&expected, rust.tolerance()) {
        panic!("{app}.halogen auto-scheduled differs from the Rust app's reference: {m}");
    }
}

#[test]
fn blur() {
    check("blur", 45, 23);
}

#[test]
fn sobel() {
    check("sobel", 40, 21);
}

#[test]
fn transpose() {
    check("transpose", 35, 19);
}

#[test]
fn harris() {
    check("harris", 40, 22);
}

#[test]
fn unsharp() {
    check("unsharp", 37, 20);
}

#[test]
fn hist_eq() {
    check("hist_eq", 41, 23);
}

#[test]
fn the_reference_of_a_text_app_is_the_interpreter_unscheduled() {
    let src = "input a : i32[2] values [-5, 5]\nrdom r = [0, 3]\nf(x, y) = sum(a(x + r, y))\noutput f size [a.width - 2, a.height]\nschedule s { f.vectorize(x, 4) }";
    let app = TextApp::from_source(src, "box.halogen", &Config::default()).unwrap();
    app.apply_schedule("s").unwrap();
    let inputs = app.make_inputs(9, 3, 1);
    assert_eq!(inputs[0].extents(), vec![11, 3]);
    let a = inputs[0].typed::<i32>().unwrap();
    assert!(a.as_slice().iter().all(|v| (-5..=5).contains(v)));
    let got = app.run(&Target::host(), &inputs).unwrap();
    let want = app.reference(&inputs).unwrap();
    assert_eq!(got.to_f64_vec(), want.to_f64_vec());
    let first: i32 = (0..3).map(|i| a.as_slice()[i]).sum();
    assert_eq!(got.to_f64_vec()[0], first as f64);
}

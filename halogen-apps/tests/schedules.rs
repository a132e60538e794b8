//! Every app under every one of its schedules, on small images, on the interpreter and on
//! the host target, equals its plain-Rust reference (exactly for integer apps, to the
//! app's tolerance for float ones).

use halogen::prelude::*;
use halogen_apps::{build, create, Config};

fn check_app(name: &str, width: i32, height: i32) {
    check_app_with(name, &Config::default(), width, height)
}

fn check_app_with(name: &str, config: &Config, width: i32, height: i32) {
    let schedules = create(name, config).unwrap().schedules();
    for schedule in schedules {
        for target in [Target::interp(), Target::host()] {
            let app = build(name, schedule, config).unwrap();
            let inputs = app.make_inputs(width, height, 42);
            let expected = app.reference(&inputs).unwrap();
            let compiled = app.compile(&target).unwrap_or_else(|e| panic!("{name}/{schedule}: compile: {e}"));
            let got = app
                .realize(&compiled, &inputs)
                .unwrap_or_else(|e| panic!("{name}/{schedule}: realize: {e}\n{}", compiled.lowered_stmt()));
            if let Err(m) = got.compare(&expected, app.tolerance()) {
                panic!("{name}/{schedule} on {target:?}: {m}");
            }
        }
    }
}

#[test]
fn blur() {
    check_app("blur", 64, 48);
}

#[test]
fn blur_odd_size() {
    // Not a multiple of the tiles or the vectors.
    check_app("blur", 37, 23);
}

#[test]
fn unsharp() {
    check_app("unsharp", 40, 24);
}

#[test]
fn harris() {
    check_app("harris", 48, 40);
}

#[test]
fn hist_eq() {
    check_app("hist_eq", 64, 48);
}

#[test]
fn bilateral_grid() {
    check_app("bilateral_grid", 48, 40);
}

#[test]
fn bilateral_grid_other_sigmas() {
    let c = Config::parse(&["s_sigma=4", "r_sigma=0.25"]).unwrap();
    check_app_with("bilateral_grid", &c, 30, 20);
}

#[test]
fn local_laplacian_two_levels() {
    let c = Config::parse(&["levels=2"]).unwrap();
    check_app_with("local_laplacian", &c, 48, 40);
}

#[test]
fn local_laplacian_four_levels_root() {
    let c = Config::parse(&["levels=4", "intensity_levels=6", "alpha=2", "beta=0.5"]).unwrap();
    let app = build("local_laplacian", "root", &c).unwrap();
    let inputs = app.make_inputs(40, 24, 7);
    let got = app.run(&Target::interp(), &inputs).unwrap();
    got.compare(&app.reference(&inputs).unwrap(), app.tolerance()).unwrap();
}

#[test]
fn local_laplacian_eight_levels() {
    check_app("local_laplacian", 48, 40);
}

#[test]
fn sobel() {
    check_app("sobel", 48, 40);
}

#[test]
fn max_filter() {
    check_app("max_filter", 40, 24);
}

#[test]
fn transpose() {
    check_app("transpose", 40, 24);
}

#[test]
fn resize_up() {
    check_app("resize", 40, 24);
}

#[test]
fn resize_down() {
    let c = Config::parse(&["scale=0.5"]).unwrap();
    check_app_with("resize", &c, 20, 12);
}

#[test]
fn camera_pipe() {
    check_app("camera_pipe", 40, 30);
}

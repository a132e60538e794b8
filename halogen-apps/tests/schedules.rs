//! Every app under every one of its schedules, on small images, on the interpreter and on
//! the host target (a GPU schedule on OpenCL), equals its plain-Rust reference (exactly for integer apps, to the
//! app's tolerance for float ones).

use halogen::prelude::*;
use halogen_apps::{build, create, is_distributed_schedule, is_gpu_schedule, Config};

/// `host-opencl` where an OpenCL device is (a missing one fails the test when
/// `HALOGEN_REQUIRE_OPENCL=1`, as CI sets it).
fn opencl() -> Vec<Target> {
    match halogen::runtime::gpu::device(halogen::runtime::gpu::Api::OpenCL) {
        Ok(_) => vec!["host-opencl".parse().unwrap()],
        Err(e) if std::env::var("HALOGEN_REQUIRE_OPENCL").is_ok_and(|v| v == "1") => panic!("{e}"),
        Err(_) => Vec::new(),
    }
}

fn check_app(name: &str, width: i32, height: i32) {
    check_app_with(name, &Config::default(), width, height)
}

fn check_app_with(name: &str, config: &Config, width: i32, height: i32) {
    let schedules = create(name, config).unwrap().schedules();
    for schedule in schedules {
        // A GPU schedule runs where a GPU target does: OpenCL (PoCL's CPU device in CI).
        // A distributed schedule runs as one process (rank 0 of 1) on a target with `mpi`
        // (tests/distributed.rs runs it on several ranks).
        let targets = if is_gpu_schedule(schedule) {
            opencl()
        } else if is_distributed_schedule(schedule) {
            vec!["interp-mpi".parse().unwrap(), "host-mpi".parse().unwrap()]
        } else {
            vec![Target::interp(), Target::host()]
        };
        for target in targets {
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

#[test]
fn wavelet() {
    check_app("wavelet", 40, 24);
}

// Three pyramid levels: the default five lower in about a second, but the C compiler
// takes ~10 s per schedule on them (the test below runs five on the interpreter). Odd
// sizes give levels of odd size, where the clamps and the expansion's last column matter.
#[test]
fn pyramid_blend_three_levels() {
    let c = Config::parse(&["levels=3"]).unwrap();
    check_app_with("pyramid_blend", &c, 37, 23);
}

#[test]
fn exposure_fusion_three_levels() {
    let c = Config::parse(&["levels=3"]).unwrap();
    check_app_with("exposure_fusion", &c, 40, 30);
}

#[test]
fn pyramid_apps_default_levels_interp() {
    for (name, params) in [("pyramid_blend", &[][..]), ("exposure_fusion", &["exposures=2"][..])] {
        let c = Config::parse(params).unwrap();
        for schedule in ["root", "hand"] {
            let app = build(name, schedule, &c).unwrap();
            let inputs = app.make_inputs(45, 31, 5);
            let got = app.run(&Target::interp(), &inputs).unwrap();
            if let Err(m) = got.compare(&app.reference(&inputs).unwrap(), app.tolerance()) {
                panic!("{name}/{schedule}: {m}");
            }
        }
    }
}

#[test]
fn canny() {
    check_app("canny", 48, 40);
}

// Four and five levels (level 4 is the one read through a clamp), and the default ten.
#[test]
fn interpolate_four_levels() {
    let c = Config::parse(&["levels=4"]).unwrap();
    check_app_with("interpolate", &c, 45, 33);
}

#[test]
fn interpolate_five_levels_clamped() {
    // Level 4 reads level 3 through a clamp: it needs five levels to exist.
    let c = Config::parse(&["levels=5"]).unwrap();
    check_app_with("interpolate", &c, 37, 26);
}

#[test]
fn interpolate_ten_levels() {
    for schedule in ["root", "hand"] {
        for target in [Target::interp(), Target::host()] {
            let app = build("interpolate", schedule, &Config::default()).unwrap();
            let inputs = app.make_inputs(45, 33, 6);
            let got = app.run(&target, &inputs).unwrap();
            if let Err(m) = got.compare(&app.reference(&inputs).unwrap(), app.tolerance()) {
                panic!("interpolate/{schedule} on {target:?}: {m}");
            }
        }
    }
}

#[test]
fn nl_means() {
    // Small: the naive schedule recomputes every patch distance for every channel.
    check_app("nl_means", 20, 14);
}

#[test]
fn conv_layer() {
    check_app("conv_layer", 10, 6);
}

#[test]
fn conv_layer_partial_blocks() {
    // Channel counts that do not fill the 32-channel blocks, a width not a multiple of 3.
    let c = Config::parse(&["channels_in=5", "channels_out=12", "batch=2"]).unwrap();
    check_app_with("conv_layer", &c, 8, 5);
}

//! The apps against real Halide: inputs and outputs that Halide 21 produced with
//! `shared/anchors/halide_bench.py` (see `fixtures/MANIFEST.json`), compared bit for bit
//! where the manifest says so and to 1e-4 of the largest output otherwise.
//!
//! The fixtures live outside the workspace (`../shared/anchors/fixtures` beside it); where
//! that folder is missing the tests say so and pass.

use halogen::prelude::*;
use halogen_apps::{npy, Config, DynBuffer, Tolerance};
use std::path::PathBuf;

fn fixtures() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/anchors/fixtures"));
    if dir.join("MANIFEST.json").is_file() {
        Some(dir)
    } else {
        eprintln!("note: {} not found; skipping the comparison with Halide", dir.display());
        None
    }
}

/// Runs `app_name` under every schedule on the fixture's input and compares with Halide's
/// output; also checks the plain-Rust reference against it.
fn check(fixture: &str, app_name: &str, tolerance: Tolerance) {
    let Some(dir) = fixtures() else { return };
    let input = npy::read(dir.join(format!("{fixture}_input.npy"))).unwrap();
    let expected = npy::read(dir.join(format!("{fixture}_halide_output.npy"))).unwrap();
    let inputs = vec![input];
    let probe = halogen_apps::create(app_name, &Config::default()).unwrap();
    match probe.reference(&inputs).unwrap().compare(&expected, tolerance) {
        Ok(_) => {}
        Err(m) => panic!("{fixture}: the plain-Rust reference differs from Halide: {m}"),
    }
    for schedule in probe.schedules().iter().filter(|s| !halogen_apps::is_gpu_schedule(s)) {
        let app = halogen_apps::build(app_name, schedule, &Config::default()).unwrap();
        // A distributed schedule runs as one process: rank 0 of 1.
        let target = if halogen_apps::is_distributed_schedule(schedule) { "host-mpi" } else { "host" };
        let got: DynBuffer =
            app.run(&target.parse().unwrap(), &inputs).unwrap_or_else(|e| panic!("{fixture}/{schedule}: {e}"));
        if let Err(m) = got.compare(&expected, tolerance) {
            panic!("{fixture}, schedule {schedule}: differs from Halide: {m}");
        }
    }
}

#[test]
fn blur_u16_wrapping_matches_halide_bit_for_bit() {
    check("blur_u16", "blur", Tolerance::Exact);
}

#[test]
fn blur_u16_12bit_matches_halide_bit_for_bit() {
    check("blur_u16_12bit", "blur", Tolerance::Exact);
}

#[test]
fn harris_f32_matches_halide() {
    check("harris_f32", "harris", Tolerance::Relative(1e-4));
}

#[test]
fn hist_eq_u8_matches_halide_bit_for_bit() {
    check("hist_eq_u8", "hist_eq", Tolerance::Exact);
}

#[test]
fn fixture_layout_is_numpy_order() {
    let Some(dir) = fixtures() else { return };
    // (194, 258) in NumPy is 258 wide and 194 high here.
    let b = npy::read(dir.join("blur_u16_input.npy")).unwrap();
    assert_eq!(b.extents(), vec![258, 194]);
    assert_eq!(npy::numpy_shape(&b), vec![194, 258]);
    assert_eq!(b.ty(), Type::u16());
}

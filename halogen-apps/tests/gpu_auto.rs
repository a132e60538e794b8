//! The auto-scheduler's GPU schedules (`MachineParams::for_target` of a GPU target): every
//! app auto-scheduled for OpenCL matches its plain-Rust reference (PoCL's CPU device in CI;
//! without an OpenCL device the test skips, unless `HALOGEN_REQUIRE_OPENCL=1`).

use halogen::prelude::*;
use halogen_apps::{app_names, create, Config};

#[test]
fn every_app_auto_scheduled_for_opencl_matches_its_reference() {
    let target: Target = "host-opencl".parse().unwrap();
    if let Err(e) = halogen::runtime::gpu::device(halogen::runtime::gpu::Api::OpenCL) {
        if std::env::var("HALOGEN_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
            panic!("{e}");
        }
        eprintln!("skipping: {e}");
        return;
    }
    let machine = MachineParams::for_target(&target);
    for name in app_names() {
        let app = create(name, &Config::default()).unwrap();
        let inputs = app.make_inputs(96, 64, 7);
        app.pipeline().auto_schedule(&machine).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = app.run(&target, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = app.reference(&inputs).unwrap();
        if let Err(m) = got.compare(&expected, app.tolerance()) {
            panic!("{name} auto-scheduled for OpenCL: {m}");
        }
    }
}

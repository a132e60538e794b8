//! The CUDA back end (cargo feature `cuda`): every GPU schedule of the test catalogue
//! compiles to CUDA C that NVRTC accepts, and, where a CUDA device is present, runs and
//! gives the interpreter's pixels.
//!
//! NVRTC comes from PyPI's `nvidia-cuda-nvrtc-cu12` wheel, its `lib` folder on
//! `LD_LIBRARY_PATH`. Without NVRTC the compile test says so on stderr and passes, unless
//! `HALOGEN_REQUIRE_NVRTC=1` (which CI sets after installing it).
#![cfg(feature = "cuda")]

mod common;

use common::blur;
use common::gpu::{blur_schedules, check_blur_schedules, check_device_buffers, check_updates, Updates};
use halogen::prelude::*;
use halogen::runtime::gpu::{compile_cuda, device, Api};
use std::io::Write;

fn cuda_target() -> Target {
    "host-cuda-cuda_capability_90".parse().unwrap()
}

/// The CUDA C of a pipeline, as the C back end prints it.
fn kernels_of(out: &Func) -> String {
    let target = cuda_target();
    let lowered = halogen::lower::lower(&[out.func_ref().clone()], &target).unwrap();
    let c = halogen::backend::c::generate(&lowered, "pipeline", &target).unwrap();
    c.kernel_source.expect("a GPU target prints kernels")
}

#[test]
fn every_gpu_schedule_compiles_with_nvrtc() {
    let mut sources = Vec::new();
    for (name, schedule) in blur_schedules() {
        let b = blur();
        schedule(&b);
        sources.push((name.to_string(), kernels_of(&b.blur_y)));
    }
    sources.push(("updates".to_string(), kernels_of(&Updates::new().output(true))));
    for (name, source) in &sources {
        assert!(source.contains("extern \"C\" __global__ void"), "{name}: {source}");
        match compile_cuda(source, 90) {
            Ok(cubin) => assert!(!cubin.is_empty(), "{name}: an empty cubin"),
            Err(e) if e.to_string().contains("NVRTC (libnvrtc.so.12) could not be loaded") => {
                if std::env::var("HALOGEN_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
                    panic!("HALOGEN_REQUIRE_NVRTC=1 but {e}");
                }
                let _ = writeln!(std::io::stderr(), "skipping the NVRTC compile test: {e}");
                return;
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn on_a_cuda_device_every_schedule_gives_the_interpreters_pixels() {
    if let Err(e) = device(Api::Cuda) {
        let _ = writeln!(std::io::stderr(), "skipping the CUDA run test: {e}");
        return;
    }
    let target: Target = "host-cuda".parse().unwrap();
    check_blur_schedules(&target, 2);
    check_updates(&target, &[0, 1]);
    check_device_buffers(&target);
}

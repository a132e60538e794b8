//! Targets as strings, and what each runs: a GPU or MPI feature without the loops that need
//! it changes nothing; loops that need a back end Halogen does not have yet are clear errors.

use halogen::prelude::*;
use halogen::target::Feature;

fn ramp() -> (Func, Var) {
    let x = Var::new("x");
    let f = Func::new("ramp");
    f.def(x, x * 3 + 1);
    (f, x)
}

fn run(f: &Func, target: &Target) -> Result<Vec<i32>> {
    let compiled = Pipeline::new(&[f]).compile(target)?;
    let mut out = Buffer::<i32>::with_min(&[-5], &[37]);
    compiled.realize(&Args::new(), &mut out)?;
    Ok(out.as_slice().to_vec())
}

#[test]
fn device_features_without_device_loops_run_on_the_host() {
    let (f, x) = ramp();
    f.vectorize(x, 8);
    let expected = run(&f, &Target::interp()).unwrap();
    assert_eq!(expected[0], -14);
    for s in ["host-opencl", "host-cuda-cuda_capability_90", "host-mpi", "interp-mpi"] {
        let t: Target = s.parse().unwrap();
        assert_eq!(run(&f, &t).unwrap(), expected, "{s}");
    }
}

#[test]
fn gpu_loops_need_a_gpu_feature() {
    let (f, x) = ramp();
    let (xo, xi) = (Var::new("xo"), Var::new("xi"));
    f.split(x, xo, xi, 8).gpu_blocks(xo).gpu_threads(xi);
    for t in [Target::host(), Target::interp(), Target::host().with_feature(Feature::Mpi)] {
        let e = run(&f, &t).unwrap_err().to_string();
        assert!(e.starts_with("schedule error: Func 'ramp': gpu_blocks(xo) needs a GPU target"), "{e}");
        assert!(e.contains(&format!("target '{t}' has no GPU feature")), "{e}");
    }
}

#[test]
fn gpu_loops_on_a_gpu_target_become_kernels() {
    let (f, x) = ramp();
    let (xo, xi) = (Var::new("xo"), Var::new("xi"));
    f.split(x, xo, xi, 8).gpu_blocks(xo).gpu_threads(xi);
    for (target, kernel) in
        [("host-opencl", "__kernel void ramp_kernel_0("), ("host-cuda", "__global__ void ramp_kernel_0(")]
    {
        let c = Pipeline::new(&[&f]).compile(&target.parse().unwrap()).unwrap();
        let source = c.kernel_source().unwrap().unwrap();
        assert!(source.contains(kernel), "{target}: {source}");
    }
    // Float multiplies and adds are contracted into fused multiply-adds only with fast_math.
    let source = |t: &str| Pipeline::new(&[&f]).compile(&t.parse().unwrap()).unwrap().kernel_source().unwrap().unwrap();
    assert!(source("host-opencl").contains("#pragma OPENCL FP_CONTRACT OFF"));
    assert!(!source("host-opencl-fast_math").contains("FP_CONTRACT OFF"));
    assert!(source("host-cuda").contains("// nvrtc-option: --fmad=false"));
    assert!(!source("host-cuda-fast_math").contains("--fmad=false"));
}

#[test]
fn distributed_loops_need_mpi() {
    let x = Var::new("x");
    let y = Var::new("y");
    let f = Func::new("plane");
    f.def((x, y), x + y);
    f.distribute(y);
    let e = Pipeline::new(&[&f]).compile(&Target::host()).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("Func 'plane': distribute(y) needs a distributed target") && e.contains("'host-mpi'"), "{e}");
    // With the feature, a run without a communicator is rank 0 of 1: all of it.
    let c = Pipeline::new(&[&f]).compile(&"host-mpi".parse().unwrap()).unwrap();
    let mut out = Buffer::<i32>::new(&[5, 4]);
    c.realize(&Args::new(), &mut out).unwrap();
    assert_eq!(out[[4, 3]], 7);
}

#[test]
fn parallel_kinds_of_an_update_are_checked_for_races() {
    // An update that reads its left neighbour cannot run its x loop on GPU threads.
    let x = Var::new("x");
    let r = RDom::new(&[(Expr::from(1), Expr::from(15))]);
    let f = Func::new("scan");
    f.def(x, x);
    f.update(r.x(), f.at(r.x() - 1) + f.at(r.x()));
    f.update_stage(0).gpu_threads(r.x());
    let e = Pipeline::new(&[&f]).compile(&"host-cuda".parse().unwrap()).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("gpu_threads") && e.contains("reduction variable"), "{e}");
}

#[test]
fn target_strings_round_trip_through_compiled_pipelines() {
    let (f, _) = ramp();
    let t: Target = "host-fast_math".parse().unwrap();
    let c = Pipeline::new(&[&f]).compile(&t).unwrap();
    assert_eq!(c.target().to_string(), "host-fast_math");
    assert!(c.c_source().is_some());
    let c = Pipeline::new(&[&f]).compile(&"interp".parse().unwrap()).unwrap();
    assert!(c.c_source().is_none());
}

#[test]
fn the_c_back_end_never_runs_device_loops_serially() {
    // Lowered for a GPU target, the nest keeps its GPU loops; printing it as C for a target
    // without a GPU is an error, not a serial loop.
    let (f, x) = ramp();
    let (xo, xi) = (Var::new("xo"), Var::new("xi"));
    f.split(x, xo, xi, 8).gpu_blocks(xo).gpu_threads(xi);
    let lowered = halogen::lower::lower(&[f.func_ref().clone()], &"host-cuda".parse().unwrap()).unwrap();
    let e = halogen::backend::c::generate(&lowered, "ramp", &Target::host()).unwrap_err().to_string();
    assert!(e.contains("Func 'ramp': gpu_blocks(xo) needs a GPU target"), "{e}");
}

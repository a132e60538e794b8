//! Device memory that runs release goes to a pool that later runs take from, and
//! `release_cached_memory` empties it. A file of its own: the pool is the process's, and
//! tests running beside this one would change what it holds.

mod common;

use common::gpu::{blur_input, blur_reference, opencl_target, H, W};
use common::{assert_same_pixels, blur};
use halogen::prelude::*;
use halogen::runtime::gpu::{cached_memory_bytes, release_cached_memory};

#[test]
fn a_runs_device_memory_is_kept_for_the_next_run_and_released_on_request() {
    let Some(target) = opencl_target() else { return };
    let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    let b = blur();
    b.blur_x.compute_root().gpu_tile(b.x, b.y, xo, yo, xi, yi, 16, 8);
    b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 4);
    let compiled = Pipeline::new(&[&b.blur_y]).compile(&target).unwrap();
    let input = blur_input();
    let mut args = Args::new();
    args.image(&b.input, &input);
    let expected = blur_reference();

    release_cached_memory();
    assert_eq!(cached_memory_bytes(), 0);
    let mut out = Buffer::<u16>::new(&[W, H]);
    compiled.realize(&args, &mut out).unwrap();
    assert_same_pixels(&out, &expected, "first run");
    // The input's, the intermediate's and the output's device copies, and the error word.
    let kept = cached_memory_bytes();
    let least = (input.len() + out.len() + (W as usize) * (H as usize + 2)) * 2;
    assert!(kept >= least, "{kept} bytes kept, at least {least} expected");
    for _ in 0..3 {
        let mut again = Buffer::<u16>::new(&[W, H]);
        compiled.realize(&args, &mut again).unwrap();
        assert_same_pixels(&again, &expected, "a later run");
        // Each run takes the same blocks back: nothing new is kept.
        assert_eq!(cached_memory_bytes(), kept);
    }
    release_cached_memory();
    assert_eq!(cached_memory_bytes(), 0);
    let mut after = Buffer::<u16>::new(&[W, H]);
    compiled.realize(&args, &mut after).unwrap();
    assert_same_pixels(&after, &expected, "after the release");
}

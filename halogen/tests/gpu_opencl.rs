//! GPU schedules on the OpenCL back end: every schedule gives the interpreter's pixels, and
//! schedules a GPU cannot run are errors naming the Func and the directive.
//!
//! The tests need an OpenCL device (PoCL's CPU device is enough). Without one they say so
//! on stderr and pass, unless `HALOGEN_REQUIRE_OPENCL=1` (which CI sets after installing
//! PoCL): then a missing device fails them.

mod common;

use common::gpu::{blur_input, check_blur_schedules, check_device_buffers, check_updates, opencl_target, H, W};
use common::{assert_same_pixels, blur};
use halogen::prelude::*;

#[test]
fn every_blur_schedule_gives_the_interpreters_pixels() {
    let Some(target) = opencl_target() else { return };
    check_blur_schedules(&target, 2);
}

#[test]
fn buffers_in_device_memory_pass_between_runs_without_the_host() {
    let Some(target) = opencl_target() else { return };
    check_device_buffers(&target);
}

#[test]
fn updates_run_on_the_gpu_over_their_pure_dimensions() {
    let Some(target) = opencl_target() else { return };
    check_updates(&target, &[0, 1]);
}

#[test]
fn schedules_a_gpu_cannot_run_are_errors_naming_the_func() {
    let Some(target) = opencl_target() else { return };
    let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));

    let b = blur();
    b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 8).vectorize(xi, 4);
    let e = common::compile_error(&target, &b.blur_y);
    assert!(e.contains("Func 'blur_y': vectorize(") && e.contains("inside the GPU loop gpu_threads(xi)"), "{e}");

    let b = blur();
    b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 8);
    let e = common::compile_error(&Target::host(), &b.blur_y);
    assert!(e.contains("Func 'blur_y': gpu_blocks(yo) needs a GPU target"), "{e}");

    // A block whose extent the host cannot know.
    let b = blur();
    b.blur_y.gpu_blocks(b.y).gpu_threads(b.x);
    b.blur_x.compute_at(&b.blur_y, b.y).gpu_threads(b.x);
    let e = common::compile_error(&target, &b.blur_y);
    assert!(e.contains("Func 'blur_x' is stored inside a GPU kernel with extents [blur_x.extent.0, 3]"), "{e}");

    // More threads in a block than any device allows.
    let b = blur();
    b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 1024, 1024);
    let input = blur_input();
    let mut args = Args::new();
    args.image(&b.input, &input);
    let e = common::try_realize::<u16>(&target, &b.blur_y, &args, &[0, 0], &[W, H]).unwrap_err().to_string();
    assert!(e.contains("blur_y") && e.contains("1024x1024x1 threads"), "{e}");
}

/// The histograms' bin variable.
fn i_var() -> Var {
    Var::new("i")
}

#[test]
fn atomic_updates_scatter_on_gpu_threads() {
    let Some(target) = opencl_target() else { return };
    let input = ImageParam::new(Type::u8(), 2, "pixels");
    let mut img = Buffer::<u8>::new(&[45, 31]);
    for yy in 0..31 {
        for xx in 0..45 {
            img[[xx, yy]] = ((xx * 7 + yy * 13 + xx * yy) % 23) as u8;
        }
    }
    let mut args = Args::new();
    args.image(&input, &img);
    let histogram = |schedule: &dyn Fn(&Func, &RDom)| {
        let i = Var::new("i");
        let r = RDom::new(&[(Expr::from(0), Expr::from(45)), (Expr::from(0), Expr::from(31))]);
        let h = Func::new("histogram");
        h.def(i, 0);
        let bin = input.at((r.x(), r.y())).cast::<i32>();
        h.update(bin.clone(), h.at(bin) + 3);
        schedule(&h, &r);
        h
    };
    let expected = common::realize::<i32>(&Target::interp(), &histogram(&|_, _| {}), &args, &[0], &[256]);
    let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    let h = histogram(&|h, r| {
        h.update_stage(0).atomic().gpu_tile(r.x(), r.y(), xo, yo, xi, yi, 8, 4);
    });
    let got = common::realize::<i32>(&target, &h, &args, &[0], &[256]);
    assert_same_pixels(&got, &expected, "atomic histogram");

    // Partial histograms of strips of rows (rfactor), each strip a block whose threads add
    // atomically; the clamped strip row is a `let` shared by where the store reads and
    // where it writes, and the store must still be atomic (PoCL runs a block's work-items
    // one after another, so only the kernel's text shows a race).
    let (ryo, ryi, u, rxo, rxi) = (Var::new("ryo"), Var::new("ryi"), Var::new("u"), Var::new("rxo"), Var::new("rxi"));
    let h = histogram(&|h, r| {
        let partial = h.update_stage(0).split(r.y(), ryo, ryi, 4).rfactor(&[(ryo, u)]);
        partial.compute_root().gpu_tile(i_var(), u, xo, yo, xi, yi, 64, 1);
        partial
            .update_stage(0)
            .atomic()
            .split(r.x(), rxo, rxi, 16)
            .reorder(&[rxo, ryi, rxi, u])
            .gpu_blocks(u)
            .gpu_threads(rxi);
        h.update_stage(0).reorder(&[ryo, i_var()]).gpu_tile_1d(i_var(), xo, xi, 64);
    });
    let compiled = Pipeline::new(&[&h]).compile(&target).unwrap();
    let kernels = compiled.kernel_source().unwrap().unwrap();
    assert!(kernels.contains("atomic_add(&histogram_intm"), "{kernels}");
    let got = common::realize::<i32>(&target, &h, &args, &[0], &[256]);
    assert_same_pixels(&got, &expected, "partial histograms of strips");

    // Without atomic(), threads over the reduction would race: refused.
    let h = histogram(&|h, r| {
        h.update_stage(0).gpu_tile(r.x(), r.y(), xo, yo, xi, yi, 8, 4);
    });
    let e = common::compile_error(&target, &h);
    assert!(e.contains("runs over a reduction variable"), "{e}");
    // An atomic update must add to the point it writes.
    let i = Var::new("i");
    let r = RDom::new(&[(Expr::from(0), Expr::from(45))]);
    let twice = Func::new("twice");
    twice.def(i, 1);
    twice.update(input.at((r.x(), 0)).cast::<i32>(), twice.at(input.at((r.x(), 0)).cast::<i32>()) * 2);
    twice.update_stage(0).atomic().gpu_tile_1d(r.x(), xo, xi, 16);
    let e = common::compile_error(&target, &twice);
    assert!(e.contains("atomic(): the update must add to the point it writes"), "{e}");
}

/// A running sum (an update whose iterations depend on each other) on one GPU thread,
/// between stages on GPU blocks: the same values as the interpreter, with the data on the
/// device throughout; `gpu_single_thread` beside other GPU loops of the stage is an error.
#[test]
fn a_scan_runs_in_a_single_gpu_thread_between_gpu_stages() {
    let Some(target) = opencl_target() else { return };
    let (i, io, ii) = (Var::new("i"), Var::new("io"), Var::new("ii"));
    let input = ImageParam::new(Type::i32(), 1, "input");
    let r = RDom::new(&[(Expr::from(1), Expr::from(99))]);
    let (doubled, sums, out) = (Func::new("doubled"), Func::new("sums"), Func::new("out"));
    doubled.def(i, input.at(i) * 2);
    sums.def(i, doubled.at(i));
    sums.update(r.x(), sums.at(r.x() - 1) + sums.at(r.x()));
    out.def(i, sums.at(i) - sums.at(99 - i));
    let schedule = || {
        doubled.compute_root().gpu_tile_1d(i, io, ii, 32);
        sums.compute_root().gpu_single_thread();
        sums.update_stage(0).gpu_single_thread();
        out.gpu_tile_1d(i, io, ii, 16);
    };
    let data = Buffer::<i32>::from_fn(&[100], |c| (c[0] * 37 + 11) % 101 - 50);
    let mut args = Args::new();
    args.image(&input, &data);
    let expected = common::realize::<i32>(&Target::interp(), &out, &args, &[0], &[100]);
    schedule();
    let compiled = Pipeline::new(&[&out]).compile(&target).unwrap();
    let nest = compiled.lowered_stmt().to_string();
    for stage in ["s0", "s1"] {
        let (block, thread) =
            (format!("gpu_block (sums.{stage}.__block_id_x"), format!("gpu_thread (sums.{stage}.__thread_id_x"));
        assert!(nest.contains(&block) && nest.contains(&thread), "sums.{stage} on one GPU thread:\n{nest}");
    }
    let mut got = Buffer::<i32>::new(&[100]);
    compiled.realize(&args, &mut got).unwrap();
    assert_same_pixels(&got, &expected, "scan on one GPU thread");

    let s = Func::new("s");
    s.def(i, i);
    s.gpu_tile_1d(i, io, ii, 8).gpu_single_thread();
    let e = common::compile_error(&target, &s);
    assert!(e.contains("gpu_single_thread() runs the stage in one GPU thread, but it also has gpu_threads(ii)"), "{e}");
}

/// A GPU tile nest gets a second kernel without its splits' clamps and guards, which runs
/// where the region is at least a tile; the general kernel covers narrower regions. Both
/// give the interpreter's pixels, at sizes on either side of the tile in each dimension.
#[test]
fn tile_wide_and_narrow_kernels_give_the_same_pixels() {
    let Some(target) = opencl_target() else { return };
    let (xo, yo, xi, yi, yii) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"), Var::new("yii"));
    let b = blur();
    // Four rows per thread, as the blur app's gpu schedule has them.
    b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 16, 8).split(yi, yi, yii, 4).unroll(yii, 4);
    let compiled = Pipeline::new(&[&b.blur_y]).compile(&target).unwrap();
    let kernels = compiled.kernel_source().unwrap().unwrap();
    assert_eq!(kernels.matches("__kernel void").count(), 2, "a tile-wide and a general kernel:\n{kernels}");
    let reference = blur();
    for (w, h) in [(37, 23), (16, 8), (15, 23), (37, 7), (5, 3), (1, 1)] {
        let mut input = Buffer::<u16>::from_fn(&[w + 2, h + 2], |c| ((c[0] * 7919 + c[1] * 104729) % 4096) as u16);
        input.set_min(&[-1, -1]);
        let mut args = Args::new();
        args.image(&b.input, &input);
        let mut got = Buffer::<u16>::new(&[w, h]);
        compiled.realize(&args, &mut got).unwrap();
        let mut ref_args = Args::new();
        ref_args.image(&reference.input, &input);
        let expected = common::realize::<u16>(&Target::interp(), &reference.blur_y, &ref_args, &[0, 0], &[w, h]);
        assert_same_pixels(&got, &expected, format_args!("{w}x{h}"));
    }
}

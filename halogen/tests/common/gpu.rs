//! GPU schedules the GPU back ends are tested with: the blur under each way of putting it
//! on a GPU, and a pipeline of updates with float math and scalar parameters. Each back end's
//! test runs them (OpenCL on PoCL, CUDA where a device is) or compiles them (CUDA C through
//! NVRTC) and compares with the interpreter.

use super::{assert_same_pixels, blur, Blur};
use halogen::prelude::*;
use std::io::Write;

/// `host-opencl` where an OpenCL device is. Without one a test skips (saying so on
/// stderr), unless `HALOGEN_REQUIRE_OPENCL=1`, which CI sets after installing PoCL: then a
/// missing device fails it.
pub fn opencl_target() -> Option<Target> {
    match halogen::runtime::gpu::device(halogen::runtime::gpu::Api::OpenCL) {
        Ok(_) => Some("host-opencl".parse().unwrap()),
        Err(e) => {
            if std::env::var("HALOGEN_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
                panic!("HALOGEN_REQUIRE_OPENCL=1 but {e}");
            }
            let _ = writeln!(std::io::stderr(), "skipping the OpenCL tests: {e}");
            None
        }
    }
}

/// Blur size: not a multiple of any tile, so tiles are clamped at the edges.
pub const W: i32 = 37;
/// Blur size.
pub const H: i32 = 23;

fn tile_vars() -> (Var, Var, Var, Var) {
    (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"))
}

/// A named schedule of the blur.
pub type BlurSchedule = (&'static str, fn(&Blur));

/// The blur's GPU schedules, by name.
pub fn blur_schedules() -> Vec<BlurSchedule> {
    vec![
        ("both stages tiled, the intermediate in device memory", |b| {
            let (xo, yo, xi, yi) = tile_vars();
            b.blur_x.compute_root().gpu_tile(b.x, b.y, xo, yo, xi, yi, 16, 8);
            b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 4);
        }),
        ("the producer computed per thread", |b| {
            let (xo, yo, xi, yi) = tile_vars();
            b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 8);
            b.blur_x.compute_at(&b.blur_y, xi);
        }),
        ("the producer computed per block, in shared memory", |b| {
            let (xo, yo, xi, yi) = tile_vars();
            b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 8);
            b.blur_x.compute_at(&b.blur_y, xo).gpu_threads(b.x).gpu_threads(b.y);
        }),
        ("the producer on the CPU, the consumer on the GPU", |b| {
            let (xo, yo, xi, yi) = tile_vars();
            b.blur_x.compute_root().parallel(b.y);
            b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 16, 4);
        }),
        ("the producer on the GPU, the consumer on the CPU", |b| {
            let (xo, yo, xi, yi) = tile_vars();
            b.blur_x.compute_root().gpu_tile(b.x, b.y, xo, yo, xi, yi, 4, 4);
            b.blur_y.vectorize(b.x, 8);
        }),
        ("blocks and threads without tiling", |b| {
            b.blur_x.compute_root().gpu_blocks(b.y).gpu_threads(b.x);
            let (xo, xi) = (Var::new("xo"), Var::new("xi"));
            b.blur_y.gpu_tile_1d(b.x, xo, xi, 32).gpu_blocks(b.y);
        }),
    ]
}

/// The blur's input, covering what it reads of [0, W) × [0, H).
pub fn blur_input() -> Buffer<u16> {
    let mut b = Buffer::<u16>::with_min(&[-1, -1], &[W + 2, H + 2]);
    for yy in -1..=H {
        for xx in -1..=W {
            b[[xx, yy]] = ((xx * 7919 + yy * 104729 + xx * yy * 31) as u32 % 4096) as u16;
        }
    }
    b
}

/// The blur computed by the interpreter, unscheduled.
pub fn blur_reference() -> Buffer<u16> {
    let b = blur();
    let input = blur_input();
    let mut args = Args::new();
    args.image(&b.input, &input);
    super::realize::<u16>(&Target::interp(), &b.blur_y, &args, &[0, 0], &[W, H])
}

/// A pipeline of updates over pure dimensions with float math, a float and a byte
/// parameter, scheduled for the GPU (`gpu`) or not.
pub struct Updates {
    /// The input image.
    pub input: ImageParam,
    /// A factor.
    pub scale: Param<f32>,
    /// Nonzero: the last update negates.
    pub flip: Param<u8>,
}

impl Updates {
    /// Fresh parameters.
    pub fn new() -> Updates {
        Updates {
            input: ImageParam::new(Type::f32(), 2, "input"),
            scale: Param::<f32>::new("scale"),
            flip: Param::<u8>::new("flip"),
        }
    }

    /// The output Func, scheduled for the GPU or not.
    pub fn output(&self, gpu: bool) -> Func {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let (xo, yo, xi, yi) = tile_vars();
        let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
        let f = Func::new("f");
        f.def((x, y), Expr::from(0.0f32));
        f.update((x, y), f.at((x, y)) + sqrt(abs(self.input.at((x + r.x(), y)))) * Expr::from(&self.scale));
        let flipped = Expr::from(&self.flip).ne(0);
        f.update((x, y), select(flipped, -f.at((x, y)), exp(f.at((x, y)) * 0.01f32)));
        if gpu {
            f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8);
            f.update_stage(0).gpu_tile(x, y, xo, yo, xi, yi, 4, 16);
            f.update_stage(1).gpu_tile(x, y, xo, yo, xi, yi, 16, 2);
        }
        f
    }

    /// Its input image.
    pub fn image() -> Buffer<f32> {
        let mut img = Buffer::<f32>::new(&[43, 19]);
        for yy in 0..19 {
            for xx in 0..43 {
                img[[xx, yy]] = (xx as f32 - 20.0) * 0.37 + yy as f32;
            }
        }
        img
    }
}

/// Runs every schedule of [`blur_schedules`] on `target`, `runs` times each (a later run
/// reuses the compiled kernels and makes its own device copies), against the interpreter.
pub fn check_blur_schedules(target: &Target, runs: usize) {
    let input = blur_input();
    let reference = blur_reference();
    for (name, schedule) in blur_schedules() {
        let b = blur();
        schedule(&b);
        let mut args = Args::new();
        args.image(&b.input, &input);
        let compiled = Pipeline::new(&[&b.blur_y]).compile(target).unwrap_or_else(|e| panic!("{name}: compile: {e}"));
        for run in 0..runs {
            let mut out = Buffer::<u16>::new(&[W, H]);
            compiled
                .realize(&args, &mut out)
                .unwrap_or_else(|e| panic!("{name}: realize: {e}\n{}", compiled.lowered_stmt()));
            assert_same_pixels(&out, &reference, format_args!("{name}, run {run}"));
        }
    }
}

/// Runs [`Updates`] on `target` with each `flip`, against the interpreter (the device's
/// `sqrt` and `exp` may differ from the host's in the last bits: 1e-5 relative).
pub fn check_updates(target: &Target, flips: &[u8]) {
    let u = Updates::new();
    let img = Updates::image();
    for &flipped in flips {
        let mut args = Args::new();
        args.image(&u.input, &img);
        args.param(&u.scale, 1.5f32);
        args.param(&u.flip, flipped);
        let expected = super::realize::<f32>(&Target::interp(), &u.output(false), &args, &[0, 0], &[40, 19]);
        let got = super::realize::<f32>(target, &u.output(true), &args, &[0, 0], &[40, 19]);
        for (g, e) in got.as_slice().iter().zip(expected.as_slice()) {
            assert!((g - e).abs() <= 1e-5 * e.abs().max(1.0), "flip {flipped}: got {g}, expected {e}");
        }
    }
}

/// Runs every schedule of [`blur_schedules`] on `target` with its input and output in
/// device memory ([`halogen::DeviceBuffer`]), twice each, against the interpreter: kernels
/// use the memory where only they touch it, and the schedules whose host code reads the
/// input or writes the output get host copies for the run. Then a chain of two blurs
/// passing the image in device memory, the interpreter given device buffers, and the
/// mistakes a user can make with them.
pub fn check_device_buffers(target: &Target) {
    let input = blur_input();
    let reference = blur_reference();
    let on_device = halogen::DeviceBuffer::from_host(&input, target).unwrap();
    for (name, schedule) in blur_schedules() {
        let b = blur();
        schedule(&b);
        let mut args = Args::new();
        args.device_image(&b.input, &on_device);
        let compiled = Pipeline::new(&[&b.blur_y]).compile(target).unwrap_or_else(|e| panic!("{name}: compile: {e}"));
        for run in 0..2 {
            let mut out = halogen::DeviceBuffer::<u16>::new(target, &[W, H]).unwrap();
            compiled.realize_to_device(&args, &mut out).unwrap_or_else(|e| panic!("{name}: realize_to_device: {e}"));
            assert_same_pixels(&out.to_host().unwrap(), &reference, format_args!("{name}, device buffers, run {run}"));
        }
    }
    // The input still holds what was copied up.
    assert_same_pixels(&on_device.to_host().unwrap(), &input, "the input after the runs");

    // Two blurs, the first one's output the second one's input, both in device memory.
    let first = blur();
    let second = blur();
    for b in [&first, &second] {
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        b.blur_y.gpu_tile(b.x, b.y, xo, yo, xi, yi, 8, 8);
    }
    let mut middle = halogen::DeviceBuffer::<u16>::new(target, &[W, H]).unwrap();
    let mut args = Args::new();
    args.device_image(&first.input, &on_device);
    Pipeline::new(&[&first.blur_y]).compile(target).unwrap().realize_to_device(&args, &mut middle).unwrap();
    let mut last = halogen::DeviceBuffer::<u16>::with_min(target, &[1, 1], &[W - 2, H - 2]).unwrap();
    let mut args = Args::new();
    args.device_image(&second.input, &middle);
    Pipeline::new(&[&second.blur_y]).compile(target).unwrap().realize_to_device(&args, &mut last).unwrap();
    let twice = {
        let b = blur();
        let mut args = Args::new();
        args.image(&b.input, &reference);
        super::realize::<u16>(&Target::interp(), &b.blur_y, &args, &[1, 1], &[W - 2, H - 2])
    };
    assert_same_pixels(&last.to_host().unwrap(), &twice, "a chain of two blurs in device memory");

    // Device buffers on a target without that GPU (the interpreter): host copies.
    let b = blur();
    let mut args = Args::new();
    args.device_image(&b.input, &on_device);
    let mut out = halogen::DeviceBuffer::<u16>::new(target, &[W, H]).unwrap();
    Pipeline::new(&[&b.blur_y]).compile(&Target::interp()).unwrap().realize_to_device(&args, &mut out).unwrap();
    assert_same_pixels(&out.to_host().unwrap(), &reference, "device buffers on the interpreter");

    // Mistakes: the wrong element type, a host buffer of another shape.
    let b = blur();
    let bytes = halogen::DeviceBuffer::<u8>::new(target, &[W + 2, H + 2]).unwrap();
    let mut args = Args::new();
    args.device_image(&b.input, &bytes);
    let compiled = Pipeline::new(&[&b.blur_y]).compile(target).unwrap();
    let e = compiled.realize_to_device(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("input") && e.contains("uint8"), "{e}");
    let mut small = Buffer::<u16>::new(&[W, H - 1]);
    let e = out.copy_to_host(&mut small).unwrap_err().to_string();
    assert!(e.contains("copy_to_host") && e.contains(&format!("(0, {})", H - 1)), "{e}");
}

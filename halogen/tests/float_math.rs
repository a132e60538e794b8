//! Halogen's own `exp` and `log` (`halogen::ir::float_math`) give the same bits on every
//! target as the interpreter, which computes them in Rust: scalar and vectorized (whole
//! registers, a part of one, several), on OpenCL too where a device is, over the special
//! values (zeros, infinities, NaN, subnormals, the overflow and underflow edges) and a sweep
//! of every exponent.

mod common;

use common::gpu::opencl_target;
use common::targets_under_test;
use halogen::ir::float_math::{exp_f32, log_f32};
use halogen::prelude::*;

/// The inputs: special values, then 2^16 bit patterns spread over the whole range.
fn inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        std::f32::consts::E,
        std::f32::consts::FRAC_1_SQRT_2,
        f32::from_bits(std::f32::consts::FRAC_1_SQRT_2.to_bits() + 1),
        88.72,
        88.73,
        89.0,
        -87.33,
        -103.28,
        -104.0,
        -110.0,
    ];
    v.extend((0..65536u32).map(|i| f32::from_bits(i.wrapping_mul(65537).wrapping_add(i >> 3))));
    v
}

/// The first input where `got` and `expected` differ, as a message; NaNs agree with any
/// NaN (the interpreter carries values as `f64`, which quiets a signalling NaN's payload).
fn first_difference(values: &[f32], got: &[u32], expected: &[u32]) -> Option<String> {
    let same = |g: u32, e: u32| g == e || (f32::from_bits(g).is_nan() && f32::from_bits(e).is_nan());
    let i = got.iter().zip(expected).position(|(g, e)| !same(*g, *e))?;
    Some(format!("at {:e} ({:#x}): bits {:#x}, expected {:#x}", values[i], values[i].to_bits(), got[i], expected[i]))
}

fn run(f: &Func, input: &ImageParam, values: &[f32], target: &Target) -> Vec<u32> {
    let c = Pipeline::new(&[f]).compile(target).unwrap_or_else(|e| panic!("{target}: {e}"));
    let img = Buffer::<f32>::from_fn(&[values.len() as i32], |p| values[p[0] as usize]);
    let mut out = Buffer::<f32>::new(&[values.len() as i32]);
    let mut args = Args::new();
    args.image(input, &img);
    c.realize(&args, &mut out).unwrap_or_else(|e| panic!("{target}: {e}"));
    out.into_vec().into_iter().map(f32::to_bits).collect()
}

#[test]
fn exp_and_log_give_the_interpreters_bits_on_every_target() {
    let values = inputs();
    let opencl = opencl_target();
    for (name, math, reference) in [("exp", exp as fn(Expr) -> Expr, exp_f32 as fn(f32) -> f32), ("log", log, log_f32)]
    {
        let expected: Vec<u32> = values.iter().map(|v| reference(*v).to_bits()).collect();
        let input = ImageParam::new(Type::f32(), 1, "values");
        let x = Var::new("x");
        let f = Func::new(name);
        f.def(x, math(input.at(x)));
        if let Some(d) = first_difference(&values, &run(&f, &input, &values, &Target::interp()), &expected) {
            panic!("{name} on the interpreter: {d}");
        }
        for lanes in [1, 4, 5, 8, 16, 32] {
            let f = Func::new(name);
            f.def(x, math(input.at(x)));
            if lanes > 1 {
                f.vectorize(x, lanes);
            }
            for target in targets_under_test() {
                if let Some(d) = first_difference(&values, &run(&f, &input, &values, &target), &expected) {
                    panic!("{name} vectorized by {lanes} on {target}: {d}");
                }
            }
        }
        if let Some(target) = &opencl {
            let f = Func::new(name);
            f.def(x, math(input.at(x)));
            let (xo, xi) = (Var::new("xo"), Var::new("xi"));
            f.gpu_tile_1d(x, xo, xi, 64);
            if let Some(d) = first_difference(&values, &run(&f, &input, &values, target), &expected) {
                panic!("{name} on {target}: {d}");
            }
        }
    }
}

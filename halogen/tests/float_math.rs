//! Halogen's own single-precision math (`halogen::ir::float_math`: `exp`, `log`, `sin`,
//! `cos`, `atan`, `atan2`, `tanh`, `pow` and the fast versions) gives the same bits on every
//! CPU target as the interpreter, which computes it in Rust: scalar and vectorized (whole
//! registers, a part of one, several), over the special values (zeros, infinities, NaN,
//! subnormals, the overflow and underflow edges) and a sweep of every exponent. On OpenCL,
//! where a device is, the functions the device's library computes are checked to be close.

mod common;

use common::gpu::opencl_target;
use common::targets_under_test;
use halogen::ir::float_math::{
    atan2_f32, atan_f32, cos_f32, exp_f32, fast_exp_f32, fast_log_f32, fast_pow_f32, log_f32, pow_f32, sin_f32,
    tanh_f32,
};
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

fn run(f: &Func, inputs: &[&ImageParam], values: &[&[f32]], target: &Target) -> Vec<u32> {
    let c = Pipeline::new(&[f]).compile(target).unwrap_or_else(|e| panic!("{target}: {e}"));
    let n = values[0].len();
    let imgs: Vec<Buffer<f32>> =
        values.iter().map(|v| Buffer::<f32>::from_fn(&[n as i32], |p| v[p[0] as usize])).collect();
    let mut out = Buffer::<f32>::new(&[n as i32]);
    let mut args = Args::new();
    for (input, img) in inputs.iter().zip(&imgs) {
        args.image(input, img);
    }
    c.realize(&args, &mut out).unwrap_or_else(|e| panic!("{target}: {e}"));
    out.into_vec().into_iter().map(f32::to_bits).collect()
}

/// A function of one or two inputs: its name, how to call it, the interpreter's reference,
/// and whether the GPU dialects compute it with Halogen's helpers (bit for bit) rather
/// than the device's library.
struct Case {
    name: &'static str,
    math: fn(&[Expr]) -> Expr,
    reference: fn(f32, f32) -> f32,
    args: usize,
    own_on_gpu: bool,
}

fn cases() -> Vec<Case> {
    let c = |name, math, reference, args, own_on_gpu| Case { name, math, reference, args, own_on_gpu };
    vec![
        c("exp", |a| exp(a[0].clone()), |x, _| exp_f32(x), 1, true),
        c("log", |a| log(a[0].clone()), |x, _| log_f32(x), 1, true),
        c("sin", |a| sin(a[0].clone()), |x, _| sin_f32(x), 1, false),
        c("cos", |a| cos(a[0].clone()), |x, _| cos_f32(x), 1, false),
        c("atan", |a| atan(a[0].clone()), |x, _| atan_f32(x), 1, false),
        c("tanh", |a| tanh(a[0].clone()), |x, _| tanh_f32(x), 1, false),
        c("atan2", |a| atan2(a[0].clone(), a[1].clone()), atan2_f32, 2, false),
        c("pow", |a| pow(a[0].clone(), a[1].clone()), pow_f32, 2, false),
        c("fast_exp", |a| fast_exp(a[0].clone()), |x, _| fast_exp_f32(x), 1, true),
        c("fast_log", |a| fast_log(a[0].clone()), |x, _| fast_log_f32(x), 1, true),
        c("fast_pow", |a| fast_pow(a[0].clone(), a[1].clone()), fast_pow_f32, 2, true),
    ]
}

/// The second argument of two-argument functions: small integers (odd and even), halves,
/// special values, then the first inputs in another order.
fn second_inputs(first: &[f32]) -> Vec<f32> {
    let special = [0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    (0..first.len())
        .map(|i| match i % 4 {
            0 => special[(i / 4) % special.len()],
            1 => ((i / 4) % 41) as f32 - 20.0,
            2 => ((i / 4) % 97) as f32 * 0.37 - 18.0,
            _ => first[(i * 7919) % first.len()],
        })
        .collect()
}

#[test]
fn halogens_own_math_gives_the_interpreters_bits_on_every_target() {
    let first = inputs();
    let second = second_inputs(&first);
    let opencl = opencl_target();
    for case in cases() {
        let name = case.name;
        let values: Vec<&[f32]> = [&first[..], &second[..]][..case.args].to_vec();
        let expected: Vec<u32> = first.iter().zip(&second).map(|(a, b)| (case.reference)(*a, *b).to_bits()).collect();
        let inputs: Vec<ImageParam> =
            (0..case.args).map(|i| ImageParam::new(Type::f32(), 1, &format!("values{i}"))).collect();
        let input_refs: Vec<&ImageParam> = inputs.iter().collect();
        let x = Var::new("x");
        let define = || {
            let f = Func::new(name);
            let args: Vec<Expr> = inputs.iter().map(|i| i.at(x)).collect();
            f.def(x, (case.math)(&args));
            f
        };
        let f = define();
        if let Some(d) = first_difference(&first, &run(&f, &input_refs, &values, &Target::interp()), &expected) {
            panic!("{name} on the interpreter: {d}");
        }
        for lanes in [1, 4, 5, 8, 16, 32] {
            let f = define();
            if lanes > 1 {
                f.vectorize(x, lanes);
            }
            for target in targets_under_test() {
                if let Some(d) = first_difference(&first, &run(&f, &input_refs, &values, &target), &expected) {
                    panic!("{name} vectorized by {lanes} on {target}: {d}");
                }
            }
        }
        if let Some(target) = &opencl {
            let f = define();
            let (xo, xi) = (Var::new("xo"), Var::new("xi"));
            f.gpu_tile_1d(x, xo, xi, 64);
            let got = run(&f, &input_refs, &values, target);
            if case.own_on_gpu {
                if let Some(d) = first_difference(&first, &got, &expected) {
                    panic!("{name} on {target}: {d}");
                }
            } else {
                // The device's library: within a few ulps where the result is normal.
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    let (g, e) = (f32::from_bits(*g), f32::from_bits(*e));
                    let close =
                        g == e || (g.is_nan() && e.is_nan()) || (e.is_normal() && (g - e).abs() <= e.abs() * 1e-5);
                    assert!(close || !e.is_normal(), "{name} on {target} at {:e}: {g:e}, expected {e:e}", first[i]);
                }
            }
        }
    }
}

//! Every target under test computes exactly what the interpreter computes without a
//! schedule: every operator, cast and math function on edge values (zero divisors,
//! MIN / -1, NaN, infinities, out-of-range float→int casts, shift amounts past the width),
//! as scalar code, as parallel vector code of 5 lanes (a lane count that is not a power of
//! two, so it also checks the padding lanes) and as vector code of 8 lanes
//! (`c_backend_vector.rs` covers 16 lanes).

mod common;

use common::{same_bits, targets_under_test};
use halogen::prelude::*;

const N: i32 = 64;

/// Conversion of the test values into each element type (as Rust's `as` does).
trait TestValue: Element {
    fn from_i64(v: i64) -> Self;
    fn from_f64(v: f64) -> Self;
}

macro_rules! test_value {
    ($($t:ty),*) => {$(
        impl TestValue for $t {
            fn from_i64(v: i64) -> Self { v as $t }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
test_value!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    -2,
    3,
    -3,
    7,
    -7,
    8,
    100,
    -100,
    127,
    -128,
    128,
    255,
    256,
    32767,
    -32768,
    65535,
    65536,
    2147483647,
    -2147483648,
    2147483646,
    4294967295,
    31,
    33,
    63,
    64,
    13,
    -13,
    5,
];

const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.7,
    -3.7,
    1e10,
    -1e10,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e-30,
    255.9,
    256.5,
    -129.7,
    65535.5,
    4294967296.0,
    1e19,
    -1e19,
    2.0,
    3.0,
    0.1,
    7.25,
    -7.25,
    1e-40,
    100.0,
    -0.75,
];

/// Values only 64-bit types hold: a quarter of the values of those types come from here.
const WIDE_INTS: &[i64] = &[
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    1 << 32,
    -(1 << 40),
    0x7FFF_FFFF_FFFF_FFFE,
    0x0123_4567_89AB_CDEF,
    -0x0123_4567_89AB_CDEF,
];

fn values<T: TestValue>(offset: usize) -> Buffer<T> {
    Buffer::from_fn(&[N], |c| {
        let i = (c[0] as usize + offset) % 32;
        if T::TYPE.is_float() {
            T::from_f64(FLOATS[i])
        } else if T::TYPE.bits == 64 && i % 4 == 3 {
            T::from_i64(WIDE_INTS[i / 4])
        } else {
            T::from_i64(INTS[i])
        }
    })
}

/// One row per operation, every row of type `t`.
fn rows(a: &Expr, b: &Expr, t: Type) -> Vec<Expr> {
    let c = |ty: Type, e: &Expr| cast(ty, e);
    let back = |e: Expr| cast(t, e);
    let mut r = vec![
        a + b,
        a - b,
        a * b,
        a / b,
        a % b,
        min(a, b),
        max(a, b),
        select(a.lt(b), a, b),
        back(a.lt(b)),
        back(a.le(b) & b.ne(a)),
        back(a.eq(b) | a.gt(b)),
        back(!a.ge(b)),
        back(abs(a)),
        -a,
        a * 3 + b / 2,
        // Division and remainder by powers of two (shifts and masks for signed vectors).
        a / 16,
        a % 8 - b % 2,
        back(c(Type::u8(), a)),
        back(c(Type::i8(), a)),
        back(c(Type::u16(), a)),
        back(c(Type::i16(), a)),
        back(c(Type::u32(), a)),
        back(c(Type::i32(), a)),
        back(c(Type::f32(), a)),
        back(c(Type::f64(), a)),
        back(c(Type::bool(), a)),
        back(c(Type::i64(), a) * c(Type::i64(), b) / 7),
        back(c(Type::u64(), a) % c(Type::u64(), b)),
        back(c(Type::i64(), a) / c(Type::i64(), b)),
        back((c(Type::u64(), a) * 0x9E37_79B9_7F4A_7C15u64) >> 40),
        back(c(Type::u64(), &c(Type::f64(), a))),
        back(c(Type::i64(), &(c(Type::f32(), a) * 1e10f32))),
    ];
    if t.is_float() {
        r.extend([
            sqrt(a),
            exp(a),
            log(a),
            pow(a, b),
            floor(a),
            ceil(a),
            round(a),
            trunc(a),
            sin(a),
            cos(a),
            tan(a),
            atan2(a, b),
            atan(a),
            tanh(a),
            fast_exp(a),
            fast_log(a),
            fast_pow(a, b),
            lerp(a, b, 0.25f32),
            a / b + a * b - b,
        ]);
        // Conversions whose values interval analysis proves within the integer type (the
        // C back ends convert them without saturating), up to the fractions just inside
        // MIN - 1 and MAX + 1 that truncate into it; NaN still gives 0.
        let k = |v: f32| c(t, &Expr::from(v));
        r.extend([
            back(c(Type::u8(), &clamp(a, k(0.0), k(255.0)))),
            back(c(Type::i8(), &clamp(a, k(-128.9), k(127.9)))),
            back(c(Type::u16(), &clamp(a, k(-0.99), k(65535.5)))),
            back(c(Type::i32(), &(clamp(a, k(0.0), k(1.0)) * k(10.0) + k(0.5)))),
            back(c(Type::u32(), &(clamp(a, k(-3.0), k(3.0)) * k(2.0) + k(6.5)))),
        ]);
        // Conversions clamped to integer constants afterwards (a look-up's index): the C
        // back ends clamp the float and convert without saturating where the bounds are in
        // order and the float type holds them exactly; the others (2^24 + 1 in `f32`) keep
        // the saturating conversion and clamp the integer.
        let int = |ty: Type, v: i64| Expr::const_of(ty, v);
        let (i32t, u8t, i16t) = (Type::i32(), Type::u8(), Type::i16());
        r.extend([
            back(max(min(c(i32t, &(a * k(768.0))), int(i32t, 768)), int(i32t, 0))),
            back(min(max(c(i32t, a), int(i32t, -5)), int(i32t, 7))),
            back(max(min(c(u8t, a), int(u8t, 200)), int(u8t, 3))),
            back(max(min(c(i16t, &(a * k(0.5))), int(i16t, 100)), int(i16t, -100))),
            back(max(min(c(i32t, &(a * k(1e9))), int(i32t, 1 << 24)), int(i32t, -(1 << 24)))),
            back(max(min(c(i32t, &(a * k(1e9))), int(i32t, (1 << 24) + 1)), int(i32t, 0))),
        ]);
    } else {
        r.extend([
            a & b,
            a | b,
            a ^ b,
            a << b,
            a >> b,
            back(c(Type::f32(), a) / c(Type::f32(), b)),
            back(sqrt(a)),
            back(round(c(Type::f32(), a) / 2.0f32)),
            back(floor(a)),
            back(abs(a - b)),
        ]);
    }
    r
}

fn pipeline<T: TestValue>(schedule: u32) -> (ImageParam, ImageParam, Func, usize) {
    let (ia, ib) = (ImageParam::new(T::TYPE, 1, "a"), ImageParam::new(T::TYPE, 1, "b"));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let (a, b) = (ia.at(x), ib.at(x));
    let rows = rows(&a, &b, T::TYPE);
    let n = rows.len();
    let mut e = rows[n - 1].clone();
    for (i, r) in rows.iter().enumerate().rev().skip(1) {
        e = select(Expr::from(y).eq(i as i32), r, e);
    }
    let f = Func::new("ops");
    f.def((x, y), e);
    match schedule {
        1 => {
            f.vectorize(x, 5).parallel(y);
        }
        2 => {
            f.vectorize(x, 8);
        }
        _ => {}
    }
    (ia, ib, f, n)
}

fn run<T: TestValue>(schedule: u32, target: &Target) -> (Vec<T>, usize) {
    let (ia, ib, f, n) = pipeline::<T>(schedule);
    let c = Pipeline::new(&[&f]).compile(target).unwrap_or_else(|e| panic!("compile {}: {e}", T::TYPE));
    let (va, vb) = (values::<T>(0), values::<T>(11));
    let mut out = Buffer::<T>::new(&[N, n as i32]);
    let mut args = Args::new();
    args.image(&ia, &va).image(&ib, &vb);
    c.realize(&args, &mut out).unwrap_or_else(|e| panic!("realize {}: {e}", T::TYPE));
    (out.as_slice().to_vec(), n)
}

/// Each schedule on each target gives the bits of the unscheduled pipeline on the
/// interpreter.
fn check<T: TestValue>() {
    let (expected, n) = run::<T>(0, &Target::interp());
    for schedule in 0..3 {
        for target in targets_under_test() {
            let (got, _) = run::<T>(schedule, &target);
            for row in 0..n {
                for x in 0..N as usize {
                    let (e, g) = (expected[row * N as usize + x], got[row * N as usize + x]);
                    assert!(
                        same_bits(e, g),
                        "{} schedule {schedule} on {target}, row {row}, x {x}: interpreter {e:?}, got {g:?}",
                        T::TYPE
                    );
                }
            }
        }
    }
}

#[test]
fn u8_ops() {
    check::<u8>();
}

#[test]
fn i8_ops() {
    check::<i8>();
}

#[test]
fn u16_ops() {
    check::<u16>();
}

#[test]
fn i16_ops() {
    check::<i16>();
}

#[test]
fn u32_ops() {
    check::<u32>();
}

#[test]
fn i32_ops() {
    check::<i32>();
}

#[test]
fn u64_ops() {
    check::<u64>();
}

#[test]
fn i64_ops() {
    check::<i64>();
}

#[test]
fn f32_ops() {
    check::<f32>();
}

#[test]
fn f64_ops() {
    check::<f64>();
}

/// The conversions above that interval analysis bounds reach the C back end as the
/// in-range conversion (so the rows test it), and an unbounded one does not.
#[test]
fn bounded_float_to_int_conversions_skip_saturation() {
    let a = ImageParam::new(Type::f32(), 1, "a");
    let x = Var::new("x");
    let (bounded, unbounded) = (Func::new("bounded"), Func::new("unbounded"));
    bounded.def(x, cast(Type::i32(), &(clamp(a.at(x), 0.0f32, 1.0f32) * 10.0f32 + 0.5f32)));
    unbounded.def(x, cast(Type::i32(), &(a.at(x) * 10.0f32)));
    let c_of = |f: &Func| {
        let c = Pipeline::new(&[f]).compile(&Target::host()).unwrap();
        c.c_source().expect("a host compile keeps its C").to_string()
    };
    assert!(c_of(&bounded).contains("h_f2ir_i32_f32("));
    let plain = c_of(&unbounded);
    assert!(!plain.contains("h_f2ir_i32_f32(") && plain.contains("h_f2i_i32("));
}

/// The clamped conversions above reach the C back end as the clamp-then-convert helper, as
/// scalars and as vectors (so the rows test both), and a bound `f32` does not hold does not.
#[test]
fn clamped_float_to_int_conversions_skip_saturation() {
    let a = ImageParam::new(Type::f32(), 1, "a");
    let x = Var::new("x");
    let int = |v: i64| Expr::const_of(Type::i32(), v);
    let lookup_index = |f: &Func, lo: i64, hi: i64| {
        f.def(x, max(min(cast(Type::i32(), &(a.at(x) * 768.0f32)), int(hi)), int(lo)));
    };
    let c_of = |f: &Func| {
        let c = Pipeline::new(&[f]).compile(&Target::host()).unwrap();
        c.c_source().expect("a host compile keeps its C").to_string()
    };
    let scalar = Func::new("scalar");
    lookup_index(&scalar, 0, 768);
    assert!(c_of(&scalar).contains("h_f2ic_i32_f32("));
    let vector = Func::new("vector");
    lookup_index(&vector, 0, 768);
    vector.vectorize(x, 8);
    assert!(c_of(&vector).contains("h_f2ic_i32x8_f32x8("));
    // 2^24 + 1 is not a float: the integer clamp stays.
    let inexact = Func::new("inexact");
    lookup_index(&inexact, 0, (1 << 24) + 1);
    inexact.vectorize(x, 8);
    let plain = c_of(&inexact);
    assert!(!plain.contains("h_f2ic_i32x8_f32x8(") && plain.contains("h_f2iv_i32x8_f32x8("));
}

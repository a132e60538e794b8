//! Vector and parallel code gives the interpreter's pixels on every target under test: the
//! blur vectorized by 8 on u16 (the paper's schedule), a float stencil, strided and gathered
//! loads, and one compiled pipeline run from several threads at once. The C back end's own
//! choices (vector types, load helpers, `?:` for uniform selects) are checked in the C it
//! prints for the host.

mod common;

use common::{assert_pixels, targets_under_test};
use halogen::prelude::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn compiled_is_send_and_sync() {
    assert_send_sync::<Compiled>();
    assert_send_sync::<halogen::backend::jit::JitModule>();
}

struct Blur {
    input: ImageParam,
    out: Func,
}

fn blur(schedule: u32) -> Blur {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let bx = Func::new("blur_x");
    let by = Func::new("blur_y");
    bx.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
    by.def((x, y), (bx.at((x, y - 1)) + bx.at((x, y)) + bx.at((x, y + 1))) / 3);
    let (xi, yi) = (Var::new("xi"), Var::new("yi"));
    match schedule {
        0 => {
            // The paper's schedule.
            by.tile(x, y, xi, yi, 64, 32).vectorize(xi, 8).parallel(y);
            bx.compute_at(&by, x).vectorize(x, 8);
        }
        1 => {
            by.vectorize(x, 8).parallel(y);
            bx.compute_root().vectorize(x, 8).parallel(y);
        }
        _ => {
            by.vectorize(x, 16);
            bx.store_root().compute_at(&by, y).vectorize(x, 8);
        }
    }
    Blur { input, out: by }
}

fn image(w: i32, h: i32) -> Buffer<u16> {
    let mut b = Buffer::<u16>::from_fn(&[w + 2, h + 2], |c| {
        ((c[0] * 7919 + c[1] * 104_729 + c[0] * c[1] * 31) % 65_536) as u16
    });
    b.set_min(&[-1, -1]);
    b
}

fn realize(b: &Blur, c: &Compiled, w: i32, h: i32) -> Buffer<u16> {
    let img = image(w, h);
    let mut out = Buffer::<u16>::new(&[w, h]);
    let mut args = Args::new();
    args.image(&b.input, &img);
    c.realize(&args, &mut out).unwrap_or_else(|e| panic!("{e}\n{}", c.lowered_stmt()));
    out
}

#[test]
fn blur_vectorized_by_8_on_u16_gives_identical_pixels() {
    // Sizes that are not multiples of the tile or the vector width exercise the tails.
    let (w, h) = (203, 77);
    for schedule in 0..3 {
        let bi = blur(schedule);
        let ci = Pipeline::new(&[&bi.out]).compile(&Target::interp()).unwrap();
        let expected = realize(&bi, &ci, w, h);
        for target in targets_under_test() {
            let b = blur(schedule);
            let c = Pipeline::new(&[&b.out]).compile(&target).unwrap();
            assert_pixels(&realize(&b, &c, w, h), expected.as_slice(), format_args!("schedule {schedule} on {target}"));
        }
        let bh = blur(schedule);
        let ch = Pipeline::new(&[&bh.out]).compile(&Target::host()).unwrap();
        let src = ch.c_source().unwrap();
        assert!(src.contains("typedef uint16_t u16x8 __attribute__((vector_size(16)));"), "no u16x8 vectors:\n{src}");
    }
}

#[test]
fn one_compiled_pipeline_runs_on_many_threads_at_once() {
    let b = blur(0);
    let reference = Pipeline::new(&[&b.out]).compile(&Target::interp()).unwrap();
    let expected = realize(&b, &reference, 130, 70).into_vec();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&b.out]).compile(&target).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..3 {
                        assert_pixels(&realize(&b, &c, 130, 70), &expected, format_args!("{target}"));
                    }
                });
            }
        });
    }
}

#[test]
fn float_stencil_is_bit_identical() {
    let input = ImageParam::new(Type::f32(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let gx = Func::new("gx");
    let mag = Func::new("mag");
    gx.def((x, y), input.at((x + 1, y)) * 0.3f32 - input.at((x - 1, y)) * 0.7f32 + input.at((x, y)) / 3.0f32);
    mag.def(
        (x, y),
        sqrt(gx.at((x, y)) * gx.at((x, y)) + 1.0f32) + exp(-gx.at((x, y - 1)) * 0.01f32) - round(gx.at((x, y + 1))),
    );
    let run = |target: &Target| {
        let c = Pipeline::new(&[&mag]).compile(target).unwrap();
        let mut img = Buffer::<f32>::from_fn(&[53, 33], |c| ((c[0] * 37 + c[1] * 11) % 101) as f32 * 0.37 - 17.0);
        img.set_min(&[-1, -1]);
        let mut out = Buffer::<f32>::new(&[51, 31]);
        let mut args = Args::new();
        args.image(&input, &img);
        c.realize(&args, &mut out).unwrap();
        out.into_vec().into_iter().map(f32::to_bits).collect::<Vec<_>>()
    };
    let expected = run(&Target::interp());
    for target in targets_under_test() {
        assert_eq!(run(&target), expected, "{target}");
    }
    // Scheduling changes the Funcs for the later runs, so the scheduled runs come last.
    mag.vectorize(x, 8).parallel(y);
    gx.compute_at(&mag, y).vectorize(x, 8);
    for target in targets_under_test() {
        assert_eq!(run(&target), expected, "vectorized, on {target}");
    }
}

/// Loads whose lanes are evenly spaced (down-sampling's `2x`, `3x + 2`, a reversal) and
/// true gathers (a lookup table indexed by pixel values or by computed indices), at several
/// vector widths, give the interpreter's values; the printed C uses the strided-load and
/// narrow-index helpers, not general gathers.
#[test]
fn strided_and_gathered_loads_give_identical_pixels() {
    fn run(lanes: i32, target: &Target) -> (Vec<u32>, String) {
        let a = ImageParam::new(Type::f32(), 1, "a");
        let lut = ImageParam::new(Type::i32(), 1, "lut");
        let idx = ImageParam::new(Type::u8(), 1, "idx");
        let x = Var::new("x");
        let f = Func::new("strided");
        // Indexed by the narrow pixels themselves, and by a computed i32.
        let looked_up = lut.at(idx.at(x).cast::<i32>());
        let hashed = lut.at((idx.at(x).cast::<i32>() * 7 + x) % 256);
        f.def(
            x,
            a.at(2 * x) + a.at(2 * x + 1) * 3.0f32 + a.at(3 * x + 2) - a.at(60 - x)
                + a.at(x / 2)
                + looked_up.clone().cast::<f32>()
                + (looked_up * 2).cast::<f32>()
                + hashed.cast::<f32>(),
        );
        if lanes > 1 {
            f.vectorize(x, lanes);
        }
        let c = Pipeline::new(&[&f]).compile(target).unwrap();
        let av = Buffer::<f32>::from_fn(&[200], |c| (c[0] * 37 % 101) as f32 * 0.37 - 17.0);
        let lv = Buffer::<i32>::from_fn(&[256], |c| c[0] * c[0] - 1000 * (c[0] % 7));
        let iv = Buffer::<u8>::from_fn(&[37], |c| ((c[0] * 97 + 13) % 256) as u8);
        let mut out = Buffer::<f32>::new(&[37]);
        let mut args = Args::new();
        args.image(&a, &av).image(&lut, &lv).image(&idx, &iv);
        c.realize(&args, &mut out).unwrap();
        (out.into_vec().into_iter().map(f32::to_bits).collect(), c.c_source().unwrap_or_default().to_string())
    }
    let (expected, _) = run(1, &Target::interp());
    for lanes in [4, 5, 8, 16] {
        for target in targets_under_test() {
            let (got, _) = run(lanes, &target);
            assert_eq!(got, expected, "vectorized by {lanes} on {target}");
        }
        let (_, src) = run(lanes, &Target::host());
        assert!(src.contains("h_lds_f32"), "no strided load for 3x + 2 at {lanes} lanes:\n{src}");
        assert!(src.contains("h_ldn_i32"), "no gather by narrow indices at {lanes} lanes:\n{src}");
        if lanes != 5 {
            assert!(src.contains("h_ld2_f32"), "no stride-two load at {lanes} lanes:\n{src}");
        }
    }
}

/// A select whose condition is the same in every lane (a band test in a loop vectorized
/// over x) becomes C's `?:`, which computes only the chosen side, not a blend of both.
#[test]
fn a_select_on_a_uniform_condition_computes_one_side() {
    let input = ImageParam::new(Type::f32(), 1, "input");
    let (x, c) = (Var::new("x"), Var::new("c"));
    let f = Func::new("bands");
    let v = input.at(x);
    f.def((x, c), select(c.eq(0), v.clone() * 0.5f32 + 1.0f32, sqrt(v.clone() * v + 2.0f32)));
    let run = |target: &Target| {
        let compiled = Pipeline::new(&[&f]).compile(target).unwrap();
        let img = Buffer::<f32>::from_fn(&[37], |p| p[0] as f32 * 0.37 - 3.0);
        let mut out = Buffer::<f32>::new(&[37, 2]);
        let mut args = Args::new();
        args.image(&input, &img);
        compiled.realize(&args, &mut out).unwrap();
        let src = compiled.c_source().map(str::to_string).unwrap_or_default();
        (out.into_vec().into_iter().map(f32::to_bits).collect::<Vec<_>>(), src)
    };
    let (expected, _) = run(&Target::interp());
    f.vectorize(x, 8);
    for target in targets_under_test() {
        let (got, _) = run(&target);
        assert_eq!(got, expected, "{target}");
    }
    let (_, src) = run(&Target::host());
    assert!(!src.contains("h_sel_f32x8("), "the band test blends:\n{src}");
}

/// Compiles the 1-D `f` for `target` and realizes `width` values of it from `img` bound to
/// `input`; gives the values and the C source (empty for the interpreter).
fn realize_1d<T: Element>(
    f: &Func,
    input: &ImageParam,
    img: Buffer<T>,
    width: i32,
    target: &Target,
) -> (Vec<T>, String) {
    let c = Pipeline::new(&[f]).compile(target).unwrap();
    let mut out = Buffer::<T>::new(&[width]);
    let mut args = Args::new();
    args.image(input, &img);
    c.realize(&args, &mut out).unwrap_or_else(|e| panic!("{e}\n{}", c.lowered_stmt()));
    (out.into_vec(), c.c_source().unwrap_or_default().to_string())
}

/// Vector tails kept by `GuardWithIf` load and store only their live lanes: for every
/// element size and for 2 to 64 lanes, an input exactly as wide as the output (so a full
/// vector at the last tail would read past it) gives the interpreter's values, and the C
/// uses the predicated helpers (masked loads and stores where the target has AVX-512).
#[test]
fn guarded_vector_tails_of_every_element_size_give_identical_pixels() {
    fn run<T: Element>(lanes: i32, width: i32, fill: fn(i32) -> T, target: &Target) -> (Vec<T>, String) {
        let input = ImageParam::new(T::TYPE, 1, "tail_in");
        let (x, xo, xi) = (Var::new("x"), Var::new("xo"), Var::new("xi"));
        let f = Func::new("tail_out");
        f.def(x, input.at(x) * 3 + cast(T::TYPE, x));
        if lanes > 1 {
            f.split_with(x, xo, xi, lanes, TailStrategy::GuardWithIf).vectorize(xi, lanes);
        }
        realize_1d(&f, &input, Buffer::<T>::from_fn(&[width], |c| fill(c[0])), width, target)
    }
    fn check<T: Element>(fill: fn(i32) -> T) {
        for (lanes, width) in [(2, 3), (4, 7), (8, 21), (16, 37), (32, 45), (64, 127)] {
            let (expected, _) = run::<T>(1, width, fill, &Target::interp());
            for target in targets_under_test() {
                let (got, src) = run::<T>(lanes, width, fill, &target);
                assert!(
                    got.iter().zip(&expected).all(|(g, e)| common::same_bits(*g, *e)),
                    "{} x {lanes} on {target}: {got:?} != {expected:?}",
                    T::TYPE
                );
                if target == Target::host() {
                    assert!(src.contains("h_stp_"), "{} x {lanes}: no predicated store:\n{src}", T::TYPE);
                }
            }
        }
    }
    check::<u8>(|i| (i * 37 % 251) as u8);
    check::<i16>(|i| (i * 1237 % 30011 - 15000) as i16);
    check::<u32>(|i| (i as u32).wrapping_mul(2_654_435_761));
    check::<f32>(|i| i as f32 * 0.37 - 11.0);
    check::<f64>(|i| f64::from(i) * -1.25 + 3.0);
}

/// Up-sampling's loads (`in(x / 2)`, `in((x + 1) / 2)`, a clamped `in(x / 4 + 1)`) read a
/// window narrower than the vector: for every element size and 4 to 64 lanes, an input
/// exactly as wide as the window needs (so a full vector from the first lane would read
/// past it) gives the interpreter's values, and the C loads the window and shuffles it
/// (`h_ldw_`) instead of gathering lane by lane.
#[test]
fn up_sampled_windows_of_every_element_size_give_identical_pixels() {
    fn run<T: Element>(lanes: i32, width: i32, fill: fn(i32) -> T, target: &Target) -> (Vec<T>, String) {
        let input = ImageParam::new(T::TYPE, 1, "coarse");
        let x = Var::new("x");
        let f = Func::new("fine");
        let last = input.width() - 1;
        f.def(x, input.at(x / 2) + input.at((x + 1) / 2) * 2 + input.at(clamp(x / 4 + 1, 0, last)));
        if lanes > 1 {
            f.vectorize(x, lanes);
        }
        realize_1d(&f, &input, Buffer::<T>::from_fn(&[width / 2 + 1], |c| fill(c[0])), width, target)
    }
    fn check<T: Element>(fill: fn(i32) -> T) {
        for (lanes, width) in [(4, 9), (8, 21), (16, 40), (32, 77), (64, 130)] {
            let (expected, _) = run::<T>(1, width, fill, &Target::interp());
            for target in targets_under_test() {
                let (got, src) = run::<T>(lanes, width, fill, &target);
                assert!(
                    got.iter().zip(&expected).all(|(g, e)| common::same_bits(*g, *e)),
                    "{} x {lanes} on {target}: {got:?} != {expected:?}",
                    T::TYPE
                );
                // One whole register (byte lanes past 16 need VBMI, which not every AVX-512 has).
                let bytes = T::TYPE.bytes() * lanes as usize;
                let one_register = matches!(bytes, 16 | 32 | 64) && (T::TYPE.bytes() > 1 || lanes == 16);
                if target == Target::host() && one_register {
                    assert!(src.contains("h_ldw_"), "{} x {lanes}: no window load:\n{src}", T::TYPE);
                }
            }
        }
    }
    check::<u8>(|i| (i * 37 % 251) as u8 / 4);
    check::<i16>(|i| (i * 1237 % 30011 - 15000) as i16 / 4);
    check::<u32>(|i| (i as u32).wrapping_mul(2_654_435_761));
    check::<f32>(|i| i as f32 * 0.37 - 11.0);
    check::<f64>(|i| f64::from(i) * -1.25 + 3.0);
}

/// Indices that are an evenly spaced vector divided by a constant (`in(x / 2)`,
/// `in((x + 1) / 2)`, `in(x / 3)`, `in((2x + 1) / 3)`, `in(x >> 2)`) are loaded from their
/// first lane with a shuffle worked out from scalars (`h_ldq_`): over outputs that start
/// at even, odd and negative coordinates (so every remainder of the first lane occurs),
/// each gives the interpreter's values, and the input is exactly as wide as the last
/// lane needs, so that a load past it would be caught by the sanitizer run.
#[test]
fn quotient_windows_give_identical_pixels_at_every_remainder() {
    fn run<T: Element>(lanes: i32, out_min: i32, width: i32, fill: fn(i32) -> T, target: &Target) -> (Vec<T>, String) {
        let input = ImageParam::new(T::TYPE, 1, "coarse_q");
        let x = Var::new("x");
        let f = Func::new("fine_q");
        f.def(
            x,
            input.at(x / 2) + input.at((x + 1) / 2) + input.at(x / 3) + input.at((x * 2 + 1) / 3) + input.at(x >> 2),
        );
        if lanes > 1 {
            f.vectorize(x, lanes);
        }
        let last = out_min + width - 1;
        // Every term grows with x: the lowest index is one of theirs at the first lane,
        // the highest one of theirs at the last.
        let terms =
            |x: i32| [x.div_euclid(2), (x + 1).div_euclid(2), x.div_euclid(3), (2 * x + 1).div_euclid(3), x >> 2];
        let lo = terms(out_min).into_iter().min().unwrap();
        let hi = terms(last).into_iter().max().unwrap();
        let img = Buffer::<T>::from_fn(&[hi - lo + 1], |c| fill(c[0] + lo));
        let mut img = img;
        img.set_min(&[lo]);
        let c = Pipeline::new(&[&f]).compile(target).unwrap();
        let mut out = Buffer::<T>::with_min(&[out_min], &[width]);
        let mut args = Args::new();
        args.image(&input, &img);
        c.realize(&args, &mut out).unwrap_or_else(|e| panic!("{e}\n{}", c.lowered_stmt()));
        (out.into_vec(), c.c_source().unwrap_or_default().to_string())
    }
    fn check<T: Element>(fill: fn(i32) -> T) {
        for (lanes, width) in [(4, 13), (8, 45), (16, 70)] {
            for out_min in [0, 1, 2, -5, -16] {
                let (expected, _) = run::<T>(1, out_min, width, fill, &Target::interp());
                for target in targets_under_test() {
                    let (got, src) = run::<T>(lanes, out_min, width, fill, &target);
                    assert!(
                        got.iter().zip(&expected).all(|(g, e)| common::same_bits(*g, *e)),
                        "{} x {lanes} from {out_min} on {target}: {got:?} != {expected:?}",
                        T::TYPE
                    );
                    if target == Target::host() {
                        assert!(src.contains("h_ldq_"), "{} x {lanes}: no quotient load:\n{src}", T::TYPE);
                    }
                }
            }
        }
    }
    check::<u8>(|i| (i * 37).rem_euclid(251) as u8 / 8);
    check::<i16>(|i| ((i * 1237).rem_euclid(30011) - 15000) as i16 / 8);
    check::<f32>(|i| i as f32 * 0.37 - 11.0);
    check::<f64>(|i| f64::from(i) * -1.25 + 3.0);
}

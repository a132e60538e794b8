//! The auto-scheduler (Sioutas et al. 2019): its choices on the paper's blur, pixels
//! identical to the unscheduled pipeline at sizes other than the estimates, determinism,
//! and the errors for missing estimates. Pixels are compared on every target under test.

mod common;

use common::{assert_pixels, assert_same_pixels, targets_under_test};
use halogen::boundary;
use halogen::prelude::*;

/// A fixed machine, so the chosen schedules do not depend on where the tests run.
fn machine() -> MachineParams {
    MachineParams::new(16, 32, 32 << 10, 1 << 20, 32 << 20)
}

struct Blur {
    input: ImageParam,
    blur_x: Func,
    blur_y: Func,
}

/// The paper's Fig. 1 blur, with its estimates (6400 × 4800, as in the benchmark).
fn blur() -> Blur {
    // Inputs are found by name, and tests run in parallel: each builder has its own name.
    let input = ImageParam::new(Type::u16(), 2, "blur_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let blur_x = Func::new("blur_x");
    let blur_y = Func::new("blur_y");
    blur_x.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
    blur_y.def((x, y), (blur_x.at((x, y - 1)) + blur_x.at((x, y)) + blur_x.at((x, y + 1))) / 3);
    input.set_estimates(&[(0, 6402), (0, 4802)]);
    blur_y.set_estimates(&[(1, 6400), (1, 4800)]);
    Blur { input, blur_x, blur_y }
}

fn u16_image(w: i32, h: i32) -> Buffer<u16> {
    Buffer::<u16>::from_fn(&[w, h], |c| ((c[0] * 37 + c[1] * 101 + c[0] * c[1]) % 1009) as u16)
}

/// The value of `name(var, var, <n>, <m>)` in a schedule line such as
/// `blur_y.tile(x, y, xi, yi, 256, 32)`: the integers of the first call named `call`.
fn ints_of(source: &str, call: &str) -> Vec<i64> {
    let start = source.find(&format!("{call}(")).unwrap_or_else(|| panic!("no {call} in\n{source}"));
    let rest = &source[start + call.len() + 1..];
    let args = &rest[..rest.find(')').unwrap()];
    args.split(',').filter_map(|a| a.trim().parse().ok()).collect()
}

#[test]
fn blur_producer_slides_in_the_row_loop_with_a_folded_three_row_buffer() {
    let b = blur();
    let p = Pipeline::new(&[&b.blur_y]);
    let src = p.auto_schedule_with_source(&machine()).unwrap();
    // Algorithm 1: blur_x overlaps with blur_y along y, so it is computed in the row loop
    // (yi in a tile or a strip of rows, or y itself when tiles are whole-height strips) and
    // stored one loop out: the paper's (yi, xo) choice, or (yi, yo) for strips of rows.
    let (row, store, split) = if src.contains("blur_y.tile(") {
        ("yi", "x", Some(ints_of(&src, "blur_y.tile")[0]))
    } else if src.contains("blur_y.split(y, y, yi") {
        ("yi", "y", None)
    } else {
        ("y", "x", Some(ints_of(&src, "blur_y.split")[0]))
    };
    let expected = format!("blur_x.compute_at(&blur_y, {row}).store_at(&blur_y, {store})");
    assert!(src.contains(&expected), "expected {expected} in\n{src}");
    // The tile width Tx is a multiple of the vector width and of the cache line.
    if let Some(tx) = split {
        assert_eq!(tx % 32, 0, "{src}");
    }
    assert!(src.contains(", 16)") && src.contains(".vectorize(") && src.contains("parallel("), "{src}");

    // Storage folding keeps 3 rows of one tile: a 3·Tx buffer (eq. 9), Tx the whole
    // width for strips of rows.
    let compiled = p.compile(&Target::interp()).unwrap();
    let (w, h) = (split.unwrap_or(64) as i32 * 2 + 17, 41);
    let tx = split.unwrap_or(w as i64);
    let img = u16_image(w + 2, h + 2);
    let mut out = Buffer::<u16>::with_min(&[1, 1], &[w, h]);
    let mut args = Args::new();
    args.image(&b.input, &img);
    let stats = compiled.realize_with_stats(&args, &mut out).unwrap();
    assert_eq!(stats.allocations["blur_x"], 3 * tx as u64, "{stats:?}\n{src}");
    // Sliding computes each row of blur_x once per tile, not three times.
    assert!(stats.stores["blur_x"] < 2 * stats.stores["blur_y"], "{stats:?}");
    let text = compiled.lowered_stmt().to_string();
    assert!(text.contains("% 3)"), "storage is not folded by 3:\n{text}");

    // The same pixels as the unscheduled blur, on every target.
    let plain = blur();
    let reference = Pipeline::new(&[&plain.blur_y]).compile(&Target::interp()).unwrap();
    let mut expected_out = Buffer::<u16>::with_min(&[1, 1], &[w, h]);
    let mut args = Args::new();
    args.image(&plain.input, &img);
    reference.realize(&args, &mut expected_out).unwrap();
    assert_same_pixels(&out, &expected_out, "interp");
    let mut args = Args::new();
    args.image(&b.input, &img);
    for target in targets_under_test() {
        let got = common::realize::<u16>(&target, &b.blur_y, &args, &[1, 1], &[w, h]);
        assert_same_pixels(&got, &expected_out, format_args!("{target}:\n{src}"));
    }
}

/// Runs `out` (built twice by `make`, once auto-scheduled) at `region`, unscheduled on the
/// interpreter and auto-scheduled on every target under test, and compares; returns the
/// schedule.
fn same_pixels<T: Element>(
    make: &dyn Fn() -> (Vec<(ImageParam, Buffer<T>)>, Func),
    mins: &[i32],
    extents: &[i32],
) -> String {
    let run = |schedule: bool, targets: &[Target]| -> (Vec<Buffer<T>>, String) {
        let (inputs, out) = make();
        let p = Pipeline::new(&[&out]);
        let src = if schedule { p.auto_schedule_with_source(&machine()).unwrap() } else { String::new() };
        let mut args = Args::new();
        for (p, b) in &inputs {
            args.image(p, b);
        }
        let bufs = targets
            .iter()
            .map(|target| {
                let c = p.compile(target).unwrap_or_else(|e| panic!("{target}: {e}\n{src}"));
                let mut buf = Buffer::<T>::with_min(mins, extents);
                c.realize(&args, &mut buf).unwrap_or_else(|e| panic!("{target}: {e}\n{src}"));
                buf
            })
            .collect();
        (bufs, src)
    };
    let (expected, _) = run(false, &[Target::interp()]);
    let targets = targets_under_test();
    let (got, src) = run(true, &targets);
    for (target, buf) in targets.iter().zip(&got) {
        assert_pixels(
            buf,
            expected[0].as_slice(),
            format_args!("auto-schedule changed the pixels on {target}:\n{src}"),
        );
    }
    src
}

#[test]
fn blur_gives_the_unscheduled_pixels_at_any_size() {
    for (mins, extents) in [([1, 1], [37, 23]), ([-3, 5], [1, 1]), ([0, 0], [300, 7]), ([2, -4], [5, 90])] {
        let src = same_pixels::<u16>(
            &|| {
                let b = blur();
                let (w, h) = (400, 120);
                let img = Buffer::<u16>::from_fn(&[w, h], |c| ((c[0] * 7 + c[1] * 13) % 251) as u16);
                let img = {
                    let mut shifted = Buffer::<u16>::with_min(&[-10, -10], &[w, h]);
                    shifted.as_mut_slice().copy_from_slice(img.as_slice());
                    shifted
                };
                (vec![(b.input, img)], b.blur_y)
            },
            &mins,
            &extents,
        );
        assert!(src.contains("blur_x.compute_at"), "{src}");
    }
}

/// Three 3×3 stencils in a row over a clamped input.
fn stencil_chain() -> (Vec<(ImageParam, Buffer<i32>)>, Func) {
    let input = ImageParam::new(Type::i32(), 2, "stencil_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let mut prev = clamped;
    let mut stages = Vec::new();
    for i in 0..3i32 {
        let f = Func::new(&format!("stage{i}"));
        let mut e = Expr::from(0);
        for dy in -1..=1i32 {
            for dx in -1..=1i32 {
                e = e + prev.at((x + dx, y + dy)) * (1 + (dx + 2 * dy + i).rem_euclid(3));
            }
        }
        f.def((x, y), e / 4 - i);
        stages.push(f.clone());
        prev = f;
    }
    input.set_estimates(&[(0, 1920), (0, 1080)]);
    prev.set_estimates(&[(0, 1920), (0, 1080)]);
    let img = Buffer::<i32>::from_fn(&[53, 41], |c| (c[0] * 31 + c[1] * 17 + c[0] * c[1]) % 97 - 40);
    (vec![(input, img)], prev)
}

#[test]
fn stencil_chain_slides_every_stage() {
    let (inputs, out) = stencil_chain();
    let p = Pipeline::new(&[&out]);
    let src = p.auto_schedule_with_source(&machine()).unwrap();
    let c = p.compile(&Target::interp()).unwrap();
    let img = Buffer::<i32>::from_fn(&[300, 90], |c| (c[0] * 31 + c[1] * 17) % 97);
    let mut buf = Buffer::<i32>::new(&[300, 90]);
    let mut args = Args::new();
    args.image(&inputs[0].0, &img);
    let stats = c.realize_with_stats(&args, &mut buf).unwrap();
    // Each stage's rows are computed once per strip (plus the halo of the strip).
    for s in ["stage0", "stage1"] {
        if src.contains(&format!("{s}.compute_at")) {
            assert!(stats.stores[s] * 2 < stats.stores["stage2"] * 3, "{s} recomputes: {stats:?}\n{src}");
        }
    }
}

#[test]
fn stencil_chain_gives_the_unscheduled_pixels() {
    for (mins, extents) in [([0, 0], [53, 41]), ([-5, 3], [37, 23]), ([10, 10], [1, 2])] {
        let src = same_pixels::<i32>(&stencil_chain, &mins, &extents);
        assert!(src.contains("stage1.compute_at(&stage2") || src.contains("stage1.compute_root"), "{src}");
        // The boundary condition is trivial: inlined.
        assert!(src.contains("Inlined: stencil_input_repeat_edge"), "{src}");
    }
}

/// Histogram equalization (Halide 2012, Fig. 3): histogram, cumulative sum, remap.
fn histogram_equalize() -> (Vec<(ImageParam, Buffer<u8>)>, Func) {
    let input = ImageParam::new(Type::u8(), 2, "hist_input");
    let (x, y, i) = (Var::new("x"), Var::new("y"), Var::new("i"));
    let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
    let ri = RDom::new(&[(Expr::from(0), Expr::from(256))]);
    let hist = Func::new("hist");
    hist.def(i, 0);
    hist.update(input.at((r.x(), r.y())), hist.at(input.at((r.x(), r.y()))) + 1);
    let cdf = Func::new("cdf");
    cdf.def(i, 0);
    cdf.update(ri.x(), cdf.at(ri.x() - 1) + hist.at(ri.x()));
    let out = Func::new("equalized");
    let total = input.width() * input.height();
    out.def((x, y), cast(Type::u8(), cdf.at(input.at((x, y))) * 255 / total));
    input.set_estimates(&[(0, 4000), (0, 3000)]);
    out.set_estimates(&[(0, 4000), (0, 3000)]);
    let img = Buffer::<u8>::from_fn(&[45, 31], |c| (((c[0] * c[0] + 3 * c[1]) % 97) as u8).wrapping_mul(2));
    (vec![(input, img)], out)
}

#[test]
fn histogram_equalization_gives_the_unscheduled_pixels() {
    let src = same_pixels::<u8>(&histogram_equalize, &[0, 0], &[45, 31]);
    // The histogram and the scan stay at root; the remap is vectorized and parallel.
    assert!(src.contains("hist.compute_root()") && src.contains("cdf.compute_root()"), "{src}");
    assert!(src.contains("equalized.") && src.contains("parallel("), "{src}");
    // The scan's update has no pure variable: nothing of it runs in parallel.
    assert!(!src.contains("cdf.update_stage"), "{src}");
    same_pixels::<u8>(&histogram_equalize, &[3, 2], &[20, 11]);
}

#[test]
fn a_serial_histogram_is_factored_into_parallel_strips() {
    let src = same_pixels::<u8>(&histogram_equalize, &[0, 0], &[45, 31]);
    // 3000 estimated rows on 16 cores: 8 strips per core, of 24 rows, merged afterwards.
    let line = src.lines().find(|l| l.contains(".rfactor(")).unwrap_or_else(|| panic!("{src}"));
    assert!(line.starts_with("let hist_intm") && line.contains("hist.update_stage(0).split(r_"), "{src}");
    assert_eq!(ints_of(line, ".split"), vec![24], "{src}");
    assert!(src.contains(".update_stage(0).parallel(u);"), "{src}");
    // A partial last strip, and strips that start past the image.
    let tall = || {
        let (inputs, out) = histogram_equalize();
        let img = Buffer::<u8>::from_fn(&[7, 1001], |c| ((c[0] * 31 + c[1] * c[1]) % 256) as u8);
        (vec![(inputs[0].0.clone(), img)], out)
    };
    same_pixels::<u8>(&tall, &[0, 0], &[7, 1001]);
    same_pixels::<u8>(&tall, &[2, 500], &[3, 9]);
    // Scheduling again finds the merge parallel already: no second factoring.
    let (inputs, out) = histogram_equalize();
    let p = Pipeline::new(&[&out]);
    let first = p.auto_schedule_with_source(&machine()).unwrap();
    let second = p.auto_schedule_with_source(&machine()).unwrap();
    assert!(first.contains(".rfactor(") && !second.contains(".rfactor("), "{first}\n{second}");
    let mut args = Args::new();
    args.image(&inputs[0].0, &inputs[0].1);
    let expected = {
        let (inputs, out) = histogram_equalize();
        let mut b = Buffer::<u8>::new(&[45, 31]);
        let mut args = Args::new();
        args.image(&inputs[0].0, &inputs[0].1);
        Pipeline::new(&[&out]).compile(&Target::interp()).unwrap().realize(&args, &mut b).unwrap();
        b
    };
    for target in targets_under_test() {
        let c = p.compile(&target).unwrap();
        let mut buf = Buffer::<u8>::new(&[45, 31]);
        c.realize(&args, &mut buf).unwrap();
        assert_same_pixels(&buf, &expected, format_args!("{target}:\n{second}"));
    }
}

/// An unsharp mask over a colour image (as in the benchmark suite): grey, a separable
/// 7-tap blur, sharpen, ratio, times the input.
fn unsharp() -> (Vec<(ImageParam, Buffer<f32>)>, Func) {
    let input = ImageParam::new(Type::f32(), 3, "unsharp_input");
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let k = [0.266f32, 0.213, 0.109, 0.035];
    let cl = boundary::repeat_edge(&input, &input.bounds());
    let gray = Func::new("gray");
    let blur_y = Func::new("blur_y");
    let blur_x = Func::new("blur_x");
    let sharpen = Func::new("sharpen");
    let ratio = Func::new("ratio");
    let out = Func::new("unsharp");
    gray.def((x, y), 0.299f32 * cl.at((x, y, 0)) + 0.587f32 * cl.at((x, y, 1)) + 0.114f32 * cl.at((x, y, 2)));
    let g = |dy: i32| gray.at((x, y + dy));
    blur_y.def((x, y), k[0] * g(0) + k[1] * (g(-1) + g(1)) + k[2] * (g(-2) + g(2)) + k[3] * (g(-3) + g(3)));
    let b = |dx: i32| blur_y.at((x + dx, y));
    blur_x.def((x, y), k[0] * b(0) + k[1] * (b(-1) + b(1)) + k[2] * (b(-2) + b(2)) + k[3] * (b(-3) + b(3)));
    sharpen.def((x, y), 2.0f32 * gray.at((x, y)) - blur_x.at((x, y)));
    ratio.def((x, y), sharpen.at((x, y)) / (gray.at((x, y)) + 0.01f32));
    out.def((x, y, c), ratio.at((x, y)) * input.at((x, y, c)));
    input.set_estimates(&[(0, 4256), (0, 2832), (0, 3)]);
    out.set_estimates(&[(0, 4256), (0, 2832), (0, 3)]);
    let img = Buffer::<f32>::from_fn(&[29, 23, 3], |p| ((p[0] * 13 + p[1] * 7 + p[2] * 5) % 31) as f32 / 31.0);
    (vec![(input, img)], out)
}

#[test]
fn unsharp_gives_the_unscheduled_pixels() {
    let src = same_pixels::<f32>(&unsharp, &[0, 0, 0], &[29, 23, 3]);
    // gray has three consumers (blur_y, and sharpen and ratio, inlined into ratio), all in
    // the output's group: it is computed inside that group, where each of them can read it.
    assert!(src.contains("gray.compute_at(&unsharp, "), "{src}");
    same_pixels::<f32>(&unsharp, &[2, 4, 1], &[9, 5, 2]);
}

/// The source with the numbers that make generated Func names unique (`input_repeat_edge$3`)
/// taken out: each build of a pipeline makes new ones.
fn without_unique_suffixes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '$' {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
    }
    out
}

#[test]
fn the_schedule_is_deterministic() {
    let first = Pipeline::new(&[&unsharp().1]).auto_schedule_with_source(&machine()).unwrap();
    for _ in 0..3 {
        let again = Pipeline::new(&[&unsharp().1]).auto_schedule_with_source(&machine()).unwrap();
        assert_eq!(without_unique_suffixes(&first), without_unique_suffixes(&again));
    }
    // Scheduling the same pipeline again replaces its own schedule by the same one.
    let b = blur();
    let p = Pipeline::new(&[&b.blur_y]);
    let a = p.auto_schedule_with_source(&machine()).unwrap();
    let b = p.auto_schedule_with_source(&machine()).unwrap();
    assert_eq!(a, b);
    // Other machine parameters may give another schedule, and then that one.
    let small = MachineParams::new(2, 16, 16 << 10, 128 << 10, 1 << 20);
    let c = p.auto_schedule_with_source(&small).unwrap();
    assert!(c.contains("for 2 cores, 16-byte vectors"), "{c}");
    assert!(c.contains("vectorize(xi, 8)") || c.contains("vectorize(x, 8)"), "{c}");
}

#[test]
fn missing_estimates_are_named() {
    let input = ImageParam::new(Type::u16(), 2, "missing_input");
    let other = ImageParam::new(Type::u16(), 2, "missing_other");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("f");
    f.def((x, y), input.at((x, y)) + other.at((x, y)));
    let p = Pipeline::new(&[&f]);
    let e = p.auto_schedule(&machine()).unwrap_err();
    assert!(matches!(e, Error::Schedule(_)), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("output Func 'f' (has none"), "{text}");
    assert!(text.contains("ImageParam 'missing_input' (has none"), "{text}");
    assert!(text.contains("ImageParam 'missing_other' (has none"), "{text}");
    f.set_estimates(&[(0, 100), (0, 100)]);
    input.set_estimates(&[(0, 100), (0, 100)]);
    let text = p.auto_schedule(&machine()).unwrap_err().to_string();
    assert!(!text.contains("'f'") && !text.contains("'missing_input'"), "{text}");
    assert!(text.contains("ImageParam 'missing_other'"), "{text}");
    // A wrong number of pairs is as good as none.
    f.set_estimates(&[(0, 100)]);
    other.set_estimates(&[(0, 100), (0, 100)]);
    let text = p.auto_schedule(&machine()).unwrap_err().to_string();
    assert!(text.contains("output Func 'f' (has 1 (min, extent) pairs but 2 dimensions"), "{text}");
    f.set_estimates(&[(0, 100), (0, 100)]);
    p.auto_schedule(&machine()).unwrap();

    // Inputs are found by name among the live ImageParams: a dropped one is named too.
    let g = Func::new("g");
    {
        let gone = ImageParam::new(Type::u8(), 1, "dropped_input");
        gone.set_estimates(&[(0, 10)]);
        g.def(Var::new("x"), gone.at(Var::new("x")));
    }
    g.set_estimates(&[(0, 10)]);
    let text = Pipeline::new(&[&g]).auto_schedule(&machine()).unwrap_err().to_string();
    assert!(text.contains("ImageParam 'dropped_input' (no ImageParam of this name is alive"), "{text}");
}

#[test]
fn parameters_that_decide_regions_need_estimates() {
    let input = ImageParam::new(Type::f32(), 1, "param_input");
    let shift = Param::<i32>::new("param_shift");
    let gain = Param::<f32>::new("param_gain");
    let x = Var::new("x");
    let f = Func::new("f");
    f.def(x, input.at(x + shift.expr()) * gain.expr());
    input.set_estimates(&[(0, 1000)]);
    f.set_estimates(&[(0, 990)]);
    let p = Pipeline::new(&[&f]);
    let text = p.auto_schedule(&machine()).unwrap_err().to_string();
    // `shift` moves the region read; `gain` only scales values and needs no estimate.
    assert!(text.contains("Param 'param_shift'") && !text.contains("param_gain"), "{text}");
    shift.set_estimate(3);
    p.auto_schedule(&machine()).unwrap();
}

#[test]
fn hand_scheduled_funcs_are_left_alone() {
    let b = blur();
    let (x, y) = (Var::new("x"), Var::new("y"));
    b.blur_x.compute_root().vectorize(x, 4);
    let p = Pipeline::new(&[&b.blur_y]);
    let src = p.auto_schedule_with_source(&machine()).unwrap();
    assert!(!src.lines().any(|l| l.starts_with("blur_x.")) && src.contains("left alone: blur_x"), "{src}");
    assert!(src.contains("blur_y."), "{src}");
    // A hand-scheduled output too.
    let b = blur();
    b.blur_y.parallel(y);
    let src = Pipeline::new(&[&b.blur_y]).auto_schedule_with_source(&machine()).unwrap();
    assert!(!src.contains("blur_y.split") && !src.contains("blur_y.tile"), "{src}");
}

#[test]
fn the_source_is_the_schedule() {
    // Applying the printed directives by hand gives the same loop nest.
    let auto = blur();
    let p = Pipeline::new(&[&auto.blur_y]);
    let src = p.auto_schedule_with_source(&machine()).unwrap();
    let lowered_auto = p.compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    let hand = blur();
    let (x, y, xi, yi) = (Var::new("x"), Var::new("y"), Var::new("xi"), Var::new("yi"));
    let (blur_x, blur_y) = (&hand.blur_x, &hand.blur_y);
    if src.contains("blur_y.tile(") {
        let t = ints_of(&src, "blur_y.tile");
        blur_y.tile(x, y, xi, yi, t[0] as i32, t[1] as i32);
        blur_x.compute_at(blur_y, yi).store_at(blur_y, x);
        blur_y.vectorize(xi, 16);
    } else if src.contains("blur_y.split(y, y, yi") {
        let t = ints_of(&src, "blur_y.split");
        blur_y.split(y, y, yi, t[0] as i32).vectorize(x, 16);
        blur_x.compute_at(blur_y, yi).store_at(blur_y, y);
    } else {
        let t = ints_of(&src, "blur_y.split");
        blur_y.split(x, x, xi, t[0] as i32).reorder(&[xi, y, x]);
        blur_x.compute_at(blur_y, y).store_at(blur_y, x);
        blur_y.vectorize(xi, 16);
    }
    blur_y.parallel(if src.contains("parallel(y)") { y } else { x });
    blur_x.vectorize(x, 16);
    let lowered_hand = Pipeline::new(&[blur_y]).compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    assert_eq!(lowered_auto, lowered_hand, "{src}");
}

/// A row-wise running sum (a scan along x) of a blurred image, then a box filter over
/// an inline reduction: update stages with and without independent pure variables.
fn scans() -> (Vec<(ImageParam, Buffer<i32>)>, Func) {
    let input = ImageParam::new(Type::i32(), 2, "scans_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let smooth = Func::new("smooth");
    smooth.def((x, y), clamped.at((x, y - 1)) + 2 * clamped.at((x, y)) + clamped.at((x, y + 1)));
    let r = RDom::new(&[(Expr::from(1), input.width() - 1)]);
    let running = Func::new("running");
    running.def((x, y), smooth.at((x, y)));
    running.update((r.x(), y), running.at((r.x() - 1, y)) + running.at((r.x(), y)));
    let k = RDom::new(&[(Expr::from(-2), Expr::from(5))]);
    let boxed = Func::new("boxed");
    boxed.def((x, y), sum(clamp(running.at((clamp(x + k.x(), 0, input.width() - 1), y)), -1000, 1000)));
    input.set_estimates(&[(0, 2048), (0, 2048)]);
    boxed.set_estimates(&[(0, 2048), (0, 2048)]);
    let img = Buffer::<i32>::from_fn(&[31, 17], |c| (c[0] * 5 + c[1] * 3 + c[0] * c[1]) % 19 - 9);
    (vec![(input, img)], boxed)
}

#[test]
fn scans_and_inline_reductions_give_the_unscheduled_pixels() {
    let src = same_pixels::<i32>(&scans, &[0, 0], &[31, 17]);
    // The scan's rows are independent: its update runs in parallel over y.
    assert!(src.contains("running.update_stage(0).parallel(y)"), "{src}");
    // So are the inline reduction's rows.
    assert!(src.contains("sum_") && src.contains(".update_stage(0).parallel(y)"), "{src}");
    same_pixels::<i32>(&scans, &[4, 2], &[9, 13]);
}

/// A 3×3 window sum (an inline reduction) between two stencils, and a 5-point maximum
/// along y feeding the output: pointwise reductions the auto-scheduler computes inside
/// their consumers' tiles instead of as whole images.
fn window_reductions() -> (Vec<(ImageParam, Buffer<u16>)>, Func) {
    let input = ImageParam::new(Type::u16(), 2, "window_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let smooth = Func::new("smooth");
    smooth.def((x, y), (clamped.at((x - 1, y)) + clamped.at((x, y)) * 2 + clamped.at((x + 1, y))) / 4);
    let r = RDom::new(&[(Expr::from(-1), Expr::from(3)), (Expr::from(-1), Expr::from(3))]);
    let boxed = Func::new("boxed");
    boxed.def((x, y), sum(Expr::cast(Type::u32(), smooth.at((x + r.x(), y + r.y())))) / 9);
    let k = RDom::new(&[(Expr::from(-2), Expr::from(5))]);
    let peak = Func::new("peak");
    peak.def((x, y), Expr::cast(Type::u16(), maximum(boxed.at((x, y + k.x())) + boxed.at((x + 1, y + k.x())))));
    input.set_estimates(&[(0, 1920), (0, 1080)]);
    peak.set_estimates(&[(0, 1920), (0, 1080)]);
    let img = Buffer::<u16>::from_fn(&[45, 38], |c| ((c[0] * 37 + c[1] * 91 + c[0] * c[1]) % 4001) as u16);
    (vec![(input, img)], peak)
}

#[test]
fn window_reductions_are_computed_inside_their_consumers_tiles() {
    for (mins, extents) in [([0, 0], [45, 38]), ([-7, 3], [61, 17]), ([5, -2], [1, 1])] {
        let src = same_pixels::<u16>(&window_reductions, &mins, &extents);
        // Neither window sum goes through memory as a whole image: both are computed per
        // tile of the output, their updates vectorized like their pure definitions.
        let sums: Vec<&str> =
            src.lines().filter(|l| l.contains("/* Func 'sum$") || l.contains("/* Func 'maximum$")).collect();
        assert_eq!(sums.len(), 2, "{src}");
        assert!(sums.iter().all(|l| l.contains(".compute_at(&peak, ")), "{src}");
        assert!(src.matches(".update_stage(0).vectorize(x, ").count() >= 2, "{src}");
    }
}

/// A normalization by a run-time divisor (`v / (x + 1)`, as after a running sum), or by
/// a constant (`Some(k)`), read by a 3-tap window: a division by a run-time value runs
/// lane by lane and one by a constant that is not a power of two takes about eleven vector
/// instructions, so either is computed once per point rather than inlined into each tap;
/// a division by a power of two is one shift, and the definition is inlined.
fn divided_window(constant_divisor: Option<i32>) -> (Vec<(ImageParam, Buffer<i32>)>, Func) {
    let input = ImageParam::new(Type::i32(), 2, "divided_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let normalized = Func::new("normalized");
    // The clamped coordinate indexes and divides, as a running sum's mean does: counted
    // once, the definition is a load, an add and a division.
    let xc = clamp(Expr::from(x), 0, 1000);
    let divisor = match constant_divisor {
        None => xc.clone() + 1,
        Some(k) => Expr::from(k),
    };
    normalized.def((x, y), clamped.at((xc, y)) / divisor);
    let out = Func::new("divided_out");
    out.def((x, y), normalized.at((x - 1, y)) + normalized.at((x, y)) * 2 + normalized.at((x + 1, y)));
    input.set_estimates(&[(0, 1536), (0, 1024)]);
    out.set_estimates(&[(0, 1536), (0, 1024)]);
    let img = Buffer::<i32>::from_fn(&[29, 17], |c| (c[0] * 131 + c[1] * 17) % 997 - 300);
    (vec![(input, img)], out)
}

#[test]
fn a_division_by_a_run_time_value_or_an_odd_constant_is_not_inlined_into_every_tap() {
    for divisor in [None, Some(7)] {
        let src = same_pixels::<i32>(&|| divided_window(divisor), &[-3, 2], &[27, 13]);
        assert!(src.contains("normalized."), "{divisor:?}: {src}");
        assert!(!src.contains("Inlined: normalized") && !src.contains(", normalized"), "{divisor:?}: {src}");
    }
    let shifted = same_pixels::<i32>(&|| divided_window(Some(8)), &[-3, 2], &[27, 13]);
    assert!(!shifted.contains("normalized."), "{shifted}");
}

#[test]
fn long_chains_are_cut_into_groups() {
    // Five stencils in a row: fusing long chains into the output's loops makes bounds
    // inference explode; at most three are computed inside any one group output.
    let make = || {
        let input = ImageParam::new(Type::i32(), 2, "chain_input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let mut prev = boundary::repeat_edge(&input, &input.bounds());
        for i in 0..5 {
            let f = Func::new(&format!("c{i}"));
            f.def((x, y), prev.at((x, y - 1)) + prev.at((x - 1, y)) * 2 - prev.at((x + 1, y + 1)));
            prev = f;
        }
        input.set_estimates(&[(0, 2000), (0, 2000)]);
        prev.set_estimates(&[(0, 2000), (0, 2000)]);
        let img = Buffer::<i32>::from_fn(&[23, 19], |c| (c[0] * 7 + c[1] * 5) % 13);
        (vec![(input, img)], prev)
    };
    let src = same_pixels::<i32>(&make, &[-2, 3], &[21, 11]);
    for line in src.lines().filter(|l| l.contains(".compute_root()")) {
        let group = line.split('.').next().unwrap();
        let inside = src.matches(&format!("compute_at(&{group},")).count();
        assert!(inside <= 3, "{inside} stages inside {group}:\n{src}");
    }
    assert!(src.matches("compute_root()").count() >= 1, "{src}");
}

/// A bilateral grid's splat: each 4×4 block of the input adds its value and a weight to
/// the cells of a grid at data-dependent z, channel c being value or weight.
fn splat() -> (Vec<(ImageParam, Buffer<i32>)>, Func) {
    let input = ImageParam::new(Type::i32(), 2, "splat_input");
    let (x, y, z, c) = (Var::new("x"), Var::new("y"), Var::new("z"), Var::new("c"));
    let r = RDom::new(&[(Expr::from(0), Expr::from(4)), (Expr::from(0), Expr::from(4))]);
    let grid = Func::new("grid");
    grid.def((x, y, z, c), 0);
    let v = input.at((x * 4 + r.x(), y * 4 + r.y()));
    let zi = clamp(v.clone() / 16, 0, 7);
    let add = select(Expr::from(c).eq(0), v, 1);
    grid.update((x, y, zi.clone(), c), grid.at((x, y, zi, c)) + add);
    let out = Func::new("splat");
    out.def((x, y, z, c), grid.at((x, y, z, c)));
    input.set_estimates(&[(0, 2048), (0, 2048)]);
    out.set_estimates(&[(0, 512), (0, 512), (0, 8), (0, 2)]);
    let img = Buffer::<i32>::from_fn(&[64, 48], |p| (p[0] * 7 + p[1] * 13) % 128);
    (vec![(input, img)], out)
}

#[test]
fn a_splat_visits_each_block_once_for_both_channels_in_parallel_rows() {
    let src = same_pixels::<i32>(&splat, &[0, 0, 0, 0], &[16, 12, 8, 2]);
    // The two channels are computed together for each input point (the channel loop
    // inside the block's loops: a scatter keeps no accumulator in a register), rows of
    // blocks in parallel.
    let update = src.lines().find(|l| l.starts_with("grid.update_stage(0)")).unwrap_or_else(|| panic!("{src}"));
    assert!(update.contains(".reorder(&[c, r_") && update.ends_with(", x, y]).parallel(y);"), "{src}");
}

/// A reduction that accumulates in place: every point of `dot` sums a row of products
/// over a reduction of 24 (a 1×1 convolution over channels).
fn channel_dot() -> (Vec<(ImageParam, Buffer<i32>)>, Func) {
    let input = ImageParam::new(Type::i32(), 3, "dot_input");
    let (c, x, y) = (Var::new("c"), Var::new("x"), Var::new("y"));
    let r = RDom::new(&[(Expr::from(0), Expr::from(24))]);
    let dot = Func::new("dot");
    dot.def((c, x, y), c);
    dot.update((c, x, y), dot.at((c, x, y)) + input.at((r.x(), x, y)) * (c + r.x()));
    let out = Func::new("dot_out");
    out.def((c, x, y), dot.at((c, x, y)) / 3);
    input.set_estimates(&[(0, 24), (0, 512), (0, 512)]);
    out.set_estimates(&[(0, 64), (0, 512), (0, 512)]);
    let img = Buffer::<i32>::from_fn(&[24, 13, 9], |p| (p[0] * 5 + p[1] * 3 + p[2]) % 23 - 11);
    (vec![(input, img)], out)
}

#[test]
fn an_update_that_accumulates_in_place_is_vectorized_and_a_scatter_is_not() {
    let src = same_pixels::<i32>(&channel_dot, &[0, 0, 0], &[64, 13, 9]);
    // 32-byte vectors of i32 are 8 lanes; the reduction is vectorized over two of them
    // (two accumulators), with a guarded tail where 19 channels are asked.
    assert!(src.contains("dot.update_stage(0).vectorize(c, 16)"), "{src}");
    same_pixels::<i32>(&channel_dot, &[0, 1, 2], &[19, 5, 3]);
    let src = same_pixels::<i32>(&splat, &[0, 0, 0, 0], &[16, 12, 8, 2]);
    let update = src.lines().find(|l| l.starts_with("grid.update_stage(0)")).unwrap_or_else(|| panic!("{src}"));
    assert!(!update.contains("vectorize"), "{src}");
}

#[test]
fn a_transpose_is_read_in_narrow_strips() {
    let make = || {
        let input = ImageParam::new(Type::u16(), 2, "transpose_input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let out = Func::new("transposed");
        out.def((x, y), input.at((y, x)));
        input.set_estimates(&[(0, 4096), (0, 4096)]);
        out.set_estimates(&[(0, 4096), (0, 4096)]);
        let img = Buffer::<u16>::from_fn(&[37, 70], |c| (c[0] * 100 + c[1]) as u16);
        (vec![(input, img)], out)
    };
    let src = same_pixels::<u16>(&make, &[0, 0], &[70, 37]);
    // Each row of a strip reads one line of as many input rows as the strip is wide: 16
    // of them keep their lines in L1 for the next row, a whole 4096-wide row does not.
    // Vectors as wide as the strip.
    let line = src.lines().find(|l| l.starts_with("transposed.")).unwrap_or_else(|| panic!("{src}"));
    let width = if line.contains(".tile(") { ints_of(line, ".tile")[0] } else { ints_of(line, ".split")[0] };
    assert!(line.contains("(x, x, xi") && width <= 16, "{src}");
    assert!(line.contains(&format!(".vectorize(xi, {width})")), "{src}");
    // With 64-byte vectors (32 u16 lanes), the strip is narrower than a vector.
    let (_inputs, out) = make();
    let wide = MachineParams::new(16, 64, 32 << 10, 1 << 20, 32 << 20);
    let src = Pipeline::new(&[&out]).auto_schedule_with_source(&wide).unwrap();
    assert!(src.contains("split(x, x, xi, 16)") && src.contains(".vectorize(xi, 16)"), "{src}");
}

#[test]
fn vectors_are_as_wide_as_the_widest_arithmetic_not_the_output_type() {
    // A u8 image computed through f32 (a tone curve): vectors of 8 f32 lanes (32-byte
    // vectors), not 32 u8 lanes, which would take four registers per f32 value.
    let make = || {
        let input = ImageParam::new(Type::u8(), 2, "tone_input");
        let (x, y, i) = (Var::new("x"), Var::new("y"), Var::new("i"));
        let curve = Func::new("tone_curve");
        curve.def(i, clamp(i * 2, 0, 255).cast::<u8>());
        let lin = Func::new("tone_lin");
        lin.def((x, y), input.at((x, y)).cast::<f32>() * 0.75f32 + 10.0f32);
        let out = Func::new("tone");
        out.def((x, y), curve.at(clamp((lin.at((x, y)) * 1.5f32).cast::<i32>(), 0, 255)));
        input.set_estimates(&[(0, 4000), (0, 3000)]);
        out.set_estimates(&[(0, 4000), (0, 3000)]);
        let img = Buffer::<u8>::from_fn(&[50, 20], |c| (c[0] * 5 + c[1] * 3) as u8);
        (vec![(input, img)], out)
    };
    let src = same_pixels::<u8>(&make, &[0, 0], &[50, 20]);
    let line = src.lines().find(|l| l.starts_with("tone.")).unwrap_or_else(|| panic!("{src}"));
    assert!(line.contains(".vectorize(x, 8)") || line.contains(".vectorize(xi, 8)"), "{src}");
    // The curve itself computes in i32.
    assert!(src.contains("tone_curve.compute_root().vectorize(i, 8)"), "{src}");

    // A u16 stencil over a mirrored boundary computes its indices lane by lane in i32
    // (`%`): 8 lanes. The same stencil over a clamped boundary has affine indices: 16.
    for (mirror, lanes) in [(true, 8), (false, 16)] {
        let make = move || {
            let input = ImageParam::new(Type::u16(), 2, "mirror_input");
            let (x, y) = (Var::new("x"), Var::new("y"));
            let b = if mirror {
                boundary::mirror_interior(&input, &input.bounds())
            } else {
                boundary::repeat_edge(&input, &input.bounds())
            };
            let out = Func::new("stencil");
            out.def((x, y), max(b.at((x - 2, y)), b.at((x + 2, y))) / 2 + b.at((x, y + 2)) / 2);
            input.set_estimates(&[(0, 4000), (0, 3000)]);
            out.set_estimates(&[(0, 4000), (0, 3000)]);
            let img = Buffer::<u16>::from_fn(&[30, 20], |c| (c[0] * 700 + c[1] * 3) as u16);
            (vec![(input, img)], out)
        };
        let src = same_pixels::<u16>(&make, &[-3, -2], &[36, 25]);
        let line = src.lines().find(|l| l.starts_with("stencil.")).unwrap_or_else(|| panic!("{src}"));
        assert!(
            line.contains(&format!("vectorize(x, {lanes})")) || line.contains(&format!("vectorize(xi, {lanes})")),
            "{src}"
        );
    }
}

/// The structure of Harris: gradients, their products, 3×3 box sums of the products.
/// `blend` instead mixes two stencils `a` and `b` that nothing else reads.
fn products(blend: bool) -> (Vec<(ImageParam, Buffer<f32>)>, Func) {
    let input = ImageParam::new(Type::f32(), 2, "products_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let ix = Func::new("ix");
    let iy = Func::new("iy");
    ix.def((x, y), clamped.at((x + 1, y)) - clamped.at((x - 1, y)));
    iy.def((x, y), clamped.at((x, y + 1)) - clamped.at((x, y - 1)));
    let box3 = |f: &Func| {
        let mut e = Expr::from(0.0f32);
        for dy in -1..=1 {
            for dx in -1..=1 {
                e = e + f.at((x + dx, y + dy));
            }
        }
        e
    };
    let out = Func::new("products_out");
    let ixy = Func::new("ixy");
    ixy.def((x, y), ix.at((x, y)) * iy.at((x, y)));
    if blend {
        out.def((x, y), box3(&ixy));
    } else {
        let ixx = Func::new("ixx");
        let iyy = Func::new("iyy");
        ixx.def((x, y), ix.at((x, y)) * ix.at((x, y)));
        iyy.def((x, y), iy.at((x, y)) * iy.at((x, y)));
        out.def((x, y), box3(&ixx) * box3(&iyy) - box3(&ixy));
    }
    input.set_estimates(&[(0, 1920), (0, 1080)]);
    out.set_estimates(&[(0, 1920), (0, 1080)]);
    let img = Buffer::<f32>::from_fn(&[61, 45], |c| ((c[0] * 37 + c[1] * 11) % 101) as f32 * 0.01);
    (vec![(input, img)], out)
}

#[test]
fn a_product_of_values_read_anyway_is_inlined() {
    // Harris: `ixy` multiplies the gradients the box sums of `ixx` and `iyy` load anyway.
    let src = same_pixels::<f32>(&|| products(false), &[0, 0], &[59, 43]);
    let inlined = src.lines().find(|l| l.starts_with("// Inlined:")).unwrap_or_default();
    assert!(inlined.contains("ixy") && inlined.contains("ixx"), "{src}");
    assert!(src.contains("ix.compute_") && src.contains("iy.compute_"), "{src}");
    // Alone, `ixy` reads gradients nothing else reads: storing it saves loads.
    let src = same_pixels::<f32>(&|| products(true), &[0, 0], &[59, 43]);
    assert!(src.contains("ixy.compute_"), "{src}");
}

/// A first-order recursive filter down the columns of a float image: a scan along y.
fn column_scan() -> (Vec<(ImageParam, Buffer<f32>)>, Func) {
    let input = ImageParam::new(Type::f32(), 2, "scan_input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let r = RDom::new(&[(Expr::from(1), input.height() - 1)]);
    let cl = boundary::repeat_edge(&input, &input.bounds());
    let down = Func::new("column_scan");
    down.def((x, y), cl.at((x, y)));
    down.update(
        (x.expr(), r.x().expr()),
        0.7f32 * down.at((x.expr(), r.x() - 1)) + 0.3f32 * cl.at((x.expr(), r.x().expr())),
    );
    let out = Func::new("column_scan_out");
    out.def((x, y), down.at((x, y)) * 2.0f32);
    input.set_estimates(&[(0, 512), (0, 256)]);
    out.set_estimates(&[(0, 512), (0, 256)]);
    let img = Buffer::<f32>::from_fn(&[37, 23], |p| ((p[0] * 7 + p[1] * 3) % 11) as f32 / 11.0);
    (vec![(input, img)], out)
}

#[test]
fn a_scan_along_y_is_vectorized_across_its_columns() {
    // The update writes f(x, r.y): lanes along x write distinct points, so it vectorizes
    // (it was taken for a scatter, like a histogram, and ran one column at a time).
    let src = same_pixels(&column_scan, &[0, 0], &[37, 23]);
    assert!(src.contains("column_scan.update_stage(0).vectorize(x"), "{src}");
}

/// A GPU auto-schedule tiles a Func's two innermost dimensions onto blocks and threads and
/// makes the rest (fused) the third block dimension: one launch per stage, not one per
/// point of the outer dimensions from a host loop. Same pixels as the interpreter on
/// OpenCL where there is a device.
#[test]
fn a_gpu_auto_schedule_maps_dimensions_beyond_its_tiles_to_blocks() {
    let (c, x, y, n) = (Var::new("c"), Var::new("x"), Var::new("y"), Var::new("n"));
    let input = ImageParam::new(Type::f32(), 4, "gpu_blocks_in");
    let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
    let sum = Func::new("gpu_blocks_sum");
    sum.def((c, x, y, n), 0.0f32);
    sum.update((c, x, y, n), sum.at((c, x, y, n)) + input.at((c, x + r.x(), y, n)));
    let out = Func::new("gpu_blocks_out");
    out.def((c, x, y, n), sum.at((c, x, y, n)) * 0.5f32);
    input.set_estimates(&[(0, 16), (0, 66), (0, 10), (0, 3)]);
    out.set_estimates(&[(0, 16), (0, 64), (0, 10), (0, 3)]);
    let target: Target = "host-opencl".parse().unwrap();
    let p = Pipeline::new(&[&out]);
    let src = p.auto_schedule_with_source(&MachineParams::for_target(&target)).unwrap();
    assert!(src.contains("fuse(y, n, y_n).gpu_blocks(y_n)"), "{src}");
    let lowered = halogen::lower::lower(&[out.func_ref().clone()], &target).unwrap().stmt.to_string();
    for f in ["gpu_blocks_sum.s0", "gpu_blocks_sum.s1", "gpu_blocks_out.s0"] {
        assert!(!lowered.contains(&format!("for ({f}.y")) && !lowered.contains(&format!("for ({f}.n")), "{lowered}");
    }
    let Some(target) = common::gpu::opencl_target() else { return };
    let img = Buffer::<f32>::from_fn(&[16, 66, 10, 3], |p| (p[0] * 7 + p[1] * 3 + p[2] * 11 + p[3] * 5) as f32 / 64.0);
    let mut args = Args::new();
    args.image(&input, &img);
    let got = common::realize::<f32>(&target, &out, &args, &[0, 0, 0, 0], &[16, 64, 10, 3]);
    let want = Buffer::<f32>::from_fn(&[16, 64, 10, 3], |p| {
        (0..3).fold(0.0f32, |a, k| a + img[[p[0], p[1] + k, p[2], p[3]]]) * 0.5
    });
    assert_same_pixels(&got, &want, "a 4-D pipeline auto-scheduled for OpenCL");
}

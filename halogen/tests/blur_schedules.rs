//! The paper's blur under many schedules: every schedule gives the reference's pixels on
//! every target under test.

mod common;

use common::{assert_pixels, blur, realize, targets_under_test, Blur};
use halogen::prelude::*;

const W: i32 = 37;
const H: i32 = 23;

/// Input covering the margin the blur reads: [-1, W] × [-1, H].
fn input_image() -> Buffer<u16> {
    input_with_margin(1)
}

/// Input with `m` extra pixels on every side (schedules that round up read more).
fn input_with_margin(m: i32) -> Buffer<u16> {
    let mut b = Buffer::<u16>::with_min(&[-m, -m], &[W + 2 * m, H + 2 * m]);
    for yy in -m..H + m {
        for xx in -m..W + m {
            let v = (xx * 7919 + yy * 104729 + xx * yy * 31) as u32 % 4096;
            b[[xx, yy]] = v as u16;
        }
    }
    b
}

fn reference(input: &Buffer<u16>) -> Vec<u16> {
    let bx =
        |x: i32, y: i32| -> u16 { input[[x - 1, y]].wrapping_add(input[[x, y]]).wrapping_add(input[[x + 1, y]]) / 3 };
    let mut out = Vec::new();
    for y in 0..H {
        for x in 0..W {
            out.push(bx(x, y - 1).wrapping_add(bx(x, y)).wrapping_add(bx(x, y + 1)) / 3);
        }
    }
    out
}

fn run(b: &Blur, target: &Target, margin: i32) -> Buffer<u16> {
    let input = input_with_margin(margin);
    let mut args = Args::new();
    args.image(&b.input, &input);
    realize(target, &b.blur_y, &args, &[0, 0], &[W, H])
}

fn check(schedule: impl Fn(&Blur)) {
    check_with_margin(1, schedule)
}

fn check_with_margin(margin: i32, schedule: impl Fn(&Blur)) {
    let expected = reference(&input_image());
    for target in targets_under_test() {
        let b = blur();
        schedule(&b);
        assert_pixels(&run(&b, &target, margin), &expected, format_args!("{target}"));
    }
}

#[test]
fn inline() {
    check(|_| {});
}

#[test]
fn root() {
    check(|b| {
        b.blur_x.compute_root();
    });
}

#[test]
fn chunk() {
    check(|b| {
        b.blur_x.compute_at(&b.blur_y, b.y);
    });
}

#[test]
fn sliding_window() {
    check(|b| {
        b.blur_x.store_root().compute_at(&b.blur_y, b.y);
    });
}

#[test]
fn tiled_vectorized_parallel() {
    check(|b| {
        let (xi, yi) = (Var::new("xi"), Var::new("yi"));
        b.blur_y.tile(b.x, b.y, xi, yi, 8, 4).vectorize(xi, 4).parallel(b.y);
        b.blur_x.compute_at(&b.blur_y, b.x).vectorize(b.x, 4);
    });
}

#[test]
fn odd_split_guarded() {
    check(|b| {
        let yi = Var::new("yi");
        b.blur_y.split_with(b.y, b.y, yi, 3, TailStrategy::GuardWithIf);
        b.blur_x.compute_at(&b.blur_y, yi).vectorize(b.x, 5);
    });
}

#[test]
fn fused_unrolled() {
    check(|b| {
        let t = Var::new("t");
        b.blur_y.fuse(b.x, b.y, t).unroll(t, 2);
        b.blur_x.compute_root().reorder(&[b.y, b.x]).parallel(b.x);
    });
}

#[test]
fn sliding_in_strips() {
    check(|b| {
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        b.blur_y.split(b.y, yo, yi, 8).parallel(yo);
        b.blur_x.store_at(&b.blur_y, yo).compute_at(&b.blur_y, yi).reorder_storage(&[b.x, b.y]);
    });
}

#[test]
fn round_up_internal_shift_inwards_output() {
    // Rounding up computes (and reads) past the region, so the input has a wide margin.
    check_with_margin(40, |b| {
        let (xo, xi) = (Var::new("xo"), Var::new("xi"));
        b.blur_y.split_with(b.x, xo, xi, 16, TailStrategy::ShiftInwards);
        b.blur_x.compute_at(&b.blur_y, xo).split_with(b.x, xo, xi, 6, TailStrategy::RoundUp);
    });
}

/// With storage at root and computation per row, blur_x is computed once per value, as
/// with compute_root, and its storage folds to the three rows in flight.
#[test]
fn sliding_window_reuses_and_folds() {
    let input = input_image();
    let stats = |schedule: &dyn Fn(&Blur)| {
        let b = blur();
        schedule(&b);
        let c = Pipeline::new(&[&b.blur_y]).compile(&Target::interp()).unwrap();
        let mut out = Buffer::<u16>::new(&[W, H]);
        let mut args = Args::new();
        args.image(&b.input, &input);
        (c.realize_with_stats(&args, &mut out).unwrap(), c.lowered_stmt().to_string())
    };
    let (root, _) = stats(&|b| {
        b.blur_x.compute_root();
    });
    let (sliding, text) = stats(&|b| {
        b.blur_x.store_root().compute_at(&b.blur_y, b.y);
    });
    let (chunk, _) = stats(&|b| {
        b.blur_x.compute_at(&b.blur_y, b.y);
    });
    assert_eq!(root.stores["blur_x"], (W * (H + 2)) as u64);
    assert_eq!(sliding.stores["blur_x"], root.stores["blur_x"], "sliding window recomputes:\n{text}");
    assert_eq!(chunk.stores["blur_x"], (W * 3 * H) as u64, "chunks recompute two rows per row");
    assert_eq!(sliding.allocations["blur_x"], (W * 3) as u64, "storage is folded to 3 rows:\n{text}");
    let alloc =
        text.lines().find(|l| l.trim_start().starts_with("allocate blur_x[")).unwrap_or_else(|| panic!("{text}"));
    assert!(alloc.trim_end().ends_with("* 3]"), "{alloc}");
}

//! A float stencil computes bit-identical results under every schedule (no
//! reassociation, no contraction), on every target under test.

mod common;

use common::{assert_pixels, targets_under_test};
use halogen::boundary;
use halogen::prelude::*;

fn build(schedule: usize) -> (ImageParam, Func) {
    let input = ImageParam::new(Type::f32(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let smooth_x = Func::new("smooth_x");
    smooth_x
        .def((x, y), clamped.at((x - 1, y)) * 0.25f32 + clamped.at((x, y)) * 0.5f32 + clamped.at((x + 1, y)) * 0.25f32);
    let smooth_y = Func::new("smooth_y");
    smooth_y.def(
        (x, y),
        smooth_x.at((x, y - 1)) * 0.3f32 + smooth_x.at((x, y)) * 0.4f32 + smooth_x.at((x, y + 1)) * 0.3f32,
    );
    let out = Func::new("sharpened");
    out.def((x, y), sqrt(abs(clamped.at((x, y)) * 2.0f32 - smooth_y.at((x, y)))) + exp(smooth_y.at((x, y)) * -0.01f32));
    let (xi, yi, yo) = (Var::new("xi"), Var::new("yi"), Var::new("yo"));
    match schedule {
        0 => {}
        1 => {
            smooth_x.compute_root();
            smooth_y.compute_root();
        }
        2 => {
            out.tile(x, y, xi, yi, 8, 8).vectorize(xi, 4).parallel(y);
            smooth_y.compute_at(&out, x).vectorize(x, 4);
            smooth_x.store_at(&out, x).compute_at(&smooth_y, y);
        }
        3 => {
            out.split(y, yo, yi, 5).parallel(yo).vectorize(x, 8);
            smooth_y.store_at(&out, yo).compute_at(&out, yi);
            smooth_x.store_root().compute_at(&out, yi).vectorize(x, 8);
        }
        _ => {
            out.reorder(&[y, x]).unroll(y, 3);
            smooth_x.compute_at(&out, x).unroll(x, 2);
        }
    }
    (input, out)
}

fn run(schedule: usize, target: &Target) -> Buffer<f32> {
    let (input, out) = build(schedule);
    let img = Buffer::<f32>::from_fn(&[29, 17], |c| ((c[0] * 13 + c[1] * 7) % 31) as f32 * 0.37 - 4.1);
    let c = Pipeline::new(&[&out]).compile(target).unwrap();
    let mut buf = Buffer::<f32>::with_min(&[-2, 3], &[26, 12]);
    let mut args = Args::new();
    args.image(&input, &img);
    c.realize(&args, &mut buf).unwrap();
    buf
}

#[test]
fn float_stencil_is_bit_identical_across_schedules() {
    let reference = run(0, &Target::interp());
    for schedule in 0..5 {
        for target in targets_under_test() {
            assert_pixels(
                &run(schedule, &target),
                reference.as_slice(),
                format_args!("schedule {schedule} on {target}"),
            );
        }
    }
}

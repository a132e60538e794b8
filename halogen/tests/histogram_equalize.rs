//! Histogram equalization (Halide 2012, Fig. 3): a histogram, a scan, a remap, on every
//! target under test.

mod common;

use common::{assert_pixels, compile_error, realize, targets_under_test};
use halogen::prelude::*;

fn image(w: i32, h: i32) -> Buffer<u8> {
    Buffer::<u8>::from_fn(&[w, h], |c| {
        let (x, y) = (c[0], c[1]);
        // Uneven distribution so equalization changes it.
        (((x * x + 3 * y) % 97) as u8).wrapping_mul(2)
    })
}

fn reference(input: &Buffer<u8>) -> Vec<u8> {
    let mut hist = [0i32; 256];
    for &v in input.as_slice() {
        hist[v as usize] += 1;
    }
    let mut cdf = [0i32; 256];
    let mut acc = 0;
    for i in 0..256 {
        acc += hist[i];
        cdf[i] = acc;
    }
    let total = input.len() as i32;
    input.as_slice().iter().map(|&v| (cdf[v as usize] * 255 / total) as u8).collect()
}

fn pipeline(schedule: u32) -> (ImageParam, Func) {
    let input = ImageParam::new(Type::u8(), 2, "input");
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
    match schedule {
        0 => {}
        1 => {
            let (yo, yi) = (Var::new("yo"), Var::new("yi"));
            out.split(y, yo, yi, 4).parallel(yo).vectorize(x, 8);
            hist.compute_root();
            cdf.compute_root();
        }
        _ => {
            hist.compute_at(&cdf, Var::new("__never"));
        }
    }
    (input, out)
}

#[test]
fn histogram_equalization_matches_reference() {
    let img = image(45, 31);
    let expected = reference(&img);
    for schedule in 0..2 {
        for target in targets_under_test() {
            let (input, out) = pipeline(schedule);
            let mut args = Args::new();
            args.image(&input, &img);
            let buf = realize::<u8>(&target, &out, &args, &[0, 0], &[45, 31]);
            assert_pixels(&buf, &expected, format_args!("schedule {schedule} on {target}"));
        }
    }
}

#[test]
fn compute_at_a_missing_loop_is_an_error() {
    for target in targets_under_test() {
        let (_, out) = pipeline(2);
        let e = compile_error(&target, &out);
        assert!(e.contains("hist") && e.contains("__never"), "{target}: {e}");
    }
}

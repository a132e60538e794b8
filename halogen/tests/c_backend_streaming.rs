//! Streaming stores: a pipeline's output that nothing in the pipeline reads back is
//! written with non-temporal stores where its dense vector stores fill cache lines whole.
//! This process compiles every pipeline with `H_STREAM_MIN_BYTES=0`, so that even these
//! small outputs stream, and checks that the pixels are the interpreter's and that the
//! printed C streams exactly the stores it should.

use halogen::prelude::*;
use std::sync::Once;

/// Makes every output stream: sets `HALOGEN_CC` to the default compiler with
/// `-DH_STREAM_MIN_BYTES=0`, once, before any test of this file compiles anything.
fn stream_everything() {
    static SET: Once = Once::new();
    SET.call_once(|| {
        let mut cc = halogen::backend::jit::compiler();
        cc.push("-DH_STREAM_MIN_BYTES=0".to_string());
        std::env::set_var("HALOGEN_CC", cc.join(" "));
    });
}

/// Which streaming stores the printed C makes.
#[derive(Debug, PartialEq)]
enum Expect {
    Streams,
    DoesNotStream,
}

fn image(w: i32, h: i32) -> Buffer<u16> {
    Buffer::<u16>::from_fn(&[w, h], |c| ((c[0] * 7919 + c[1] * 104_729 + c[0] * c[1] * 31) % 65_536) as u16)
}

/// Compiles `out` for the interpreter and the host, checks the C's streaming stores, and
/// compares the pixels of a `w × h` output (and of one at an odd `min`, so that rows start
/// at addresses of every alignment).
fn check(input: &ImageParam, out: &Func, w: i32, h: i32, expect: Expect, what: &str) {
    stream_everything();
    let interp = Pipeline::new(&[out]).compile(&Target::interp()).unwrap();
    let host = Pipeline::new(&[out]).compile(&Target::host()).unwrap();
    let src = host.c_source().unwrap();
    let streams = src.contains("h_sstd_") && src.contains("h_stream_fence();");
    assert_eq!(streams, expect == Expect::Streams, "{what}: streaming stores\n{src}");
    for min in [[0, 0], [3, 1]] {
        let img = image(w + min[0] + 2, h + min[1] + 2);
        let run = |c: &Compiled| {
            let mut o = Buffer::<u16>::new(&[w, h]);
            o.set_min(&min);
            let mut args = Args::new();
            args.image(input, &img);
            c.realize(&args, &mut o).unwrap_or_else(|e| panic!("{what}: {e}"));
            o.into_vec()
        };
        assert_eq!(run(&host), run(&interp), "{what}, output min {min:?}");
    }
}

/// The blur of the Halide paper: `blur_x` then `blur_y`, u16.
fn blur() -> (ImageParam, Func, Func, Var, Var) {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let bx = Func::new("blur_x");
    let by = Func::new("blur_y");
    bx.def((x, y), (input.at((x, y)) + input.at((x + 1, y)) + input.at((x + 2, y))) / 3);
    by.def((x, y), (bx.at((x, y)) + bx.at((x, y + 1)) + bx.at((x, y + 2))) / 3);
    (input, bx, by, x, y)
}

#[test]
fn sliding_window_rows_stream() {
    let (input, bx, by, x, y) = blur();
    let yi = Var::new("yi");
    by.split(y, y, yi, 8).parallel(y).vectorize(x, 16);
    bx.store_at(&by, y).compute_at(&by, yi).vectorize(x, 16);
    check(&input, &by, 203, 77, Expect::Streams, "sliding window");
}

#[test]
fn tiles_of_whole_lines_stream() {
    let (input, bx, by, x, y) = blur();
    let (xi, yi) = (Var::new("xi"), Var::new("yi"));
    by.tile(x, y, xi, yi, 64, 16).vectorize(xi, 16).parallel(y);
    bx.compute_at(&by, x).vectorize(x, 16);
    check(&input, &by, 203, 77, Expect::Streams, "tiles");
}

#[test]
fn tiles_half_a_line_wide_do_not_stream() {
    // Each row of a tile writes 32 bytes, half a cache line; the other half comes with the
    // next tile, long after.
    let (input, bx, by, x, y) = blur();
    let (xi, yi) = (Var::new("xi"), Var::new("yi"));
    by.tile(x, y, xi, yi, 16, 16).vectorize(xi, 8).parallel(y);
    bx.compute_at(&by, x).vectorize(x, 8);
    check(&input, &by, 203, 77, Expect::DoesNotStream, "tiles 16 pixels wide");
}

#[test]
fn a_column_at_a_time_does_not_stream() {
    // The innermost loop walks down a column: each store writes part of a different line.
    let (input, bx, by, x, y) = blur();
    by.reorder(&[y, x]).vectorize(x, 16);
    bx.compute_root().vectorize(x, 16);
    check(&input, &by, 203, 77, Expect::DoesNotStream, "column-major loops");
}

#[test]
fn an_output_read_back_by_its_update_does_not_stream() {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("f");
    f.def((x, y), input.at((x, y)) + input.at((x + 2, y + 2)));
    f.update((x, y), f.at((x, y)) * 3);
    f.vectorize(x, 16);
    f.update_stage(0).vectorize(x, 16);
    check(&input, &f, 203, 77, Expect::DoesNotStream, "an output with an update");
}

#[test]
fn a_loop_heavy_in_arithmetic_does_not_stream() {
    // Many operations per byte stored: memory is not what the loop waits for.
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("f");
    let mut v = input.at((x, y));
    for k in 1..40 {
        v = (v * (k as u16) + input.at((x + k % 3, y + k % 2))) ^ (k as u16);
    }
    f.def((x, y), v);
    f.vectorize(x, 16);
    check(&input, &f, 203, 77, Expect::DoesNotStream, "an arithmetic-heavy loop");
}

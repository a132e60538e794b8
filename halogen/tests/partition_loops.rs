//! Loop partitioning at boundary conditions: the steady state of a clamped, vectorized
//! stencil has no clamp left, and every size and offset of input and output still gives
//! the reference's values on every target under test.

mod common;

use common::{assert_pixels, targets_under_test};
use halogen::boundary;
use halogen::prelude::*;

const WEIGHTS: [i32; 5] = [1, 2, 3, 5, 7];

/// A 5-tap weighted sum over `repeat_edge` of a 1-D input, vectorized by `lanes` (or not
/// at all for 1).
fn stencil(lanes: i32) -> (ImageParam, Func) {
    wrapped_stencil(|i| boundary::repeat_edge(i, &i.bounds()), lanes)
}

fn reference(input: &[i32], in_min: i32, out_min: i32, out_len: usize) -> Vec<i32> {
    let last = in_min + input.len() as i32 - 1;
    (0..out_len as i32)
        .map(|i| {
            let x = out_min + i;
            WEIGHTS
                .iter()
                .enumerate()
                .map(|(k, w)| input[((x + k as i32 - 2).clamp(in_min, last) - in_min) as usize] * w)
                .sum()
        })
        .collect()
}

/// Runs `compiled` on the 1-D `img` for an output of `out_len` pixels from `out_min`, and
/// checks it against `expected`.
fn check_output(
    compiled: &Compiled,
    input: &ImageParam,
    img: &Buffer<i32>,
    (out_min, out_len): (i32, usize),
    expected: &[i32],
    what: std::fmt::Arguments,
) {
    let mut out = Buffer::<i32>::with_min(&[out_min], &[out_len as i32]);
    let mut args = Args::new();
    args.image(input, img);
    compiled.realize(&args, &mut out).unwrap();
    assert_pixels(&out, expected, what);
}

#[test]
fn every_size_and_offset_gives_the_reference() {
    for lanes in [1, 4, 8] {
        let (input, f) = stencil(lanes);
        let p = Pipeline::new(&[&f]);
        for target in targets_under_test() {
            let compiled = p.compile(&target).unwrap();
            for in_len in [1usize, 2, 3, 7, 8, 9, 17, 40] {
                for in_min in [-5, 0, 3] {
                    let data: Vec<i32> = (0..in_len as i32).map(|i| (i * 37 + 11) % 101 - 50).collect();
                    let mut img = Buffer::<i32>::from_vec(data.clone(), &[in_len as i32]).unwrap();
                    img.set_min(&[in_min]);
                    for out_len in [1usize, 3, 8, 13, 33, 64] {
                        for out_min in [in_min - 20, in_min - 3, in_min, in_min + 2, in_min + in_len as i32 + 4] {
                            check_output(
                                &compiled,
                                &input,
                                &img,
                                (out_min, out_len),
                                &reference(&data, in_min, out_min, out_len),
                                format_args!(
                                    "lanes {lanes}, input [{in_min}, +{in_len}), output [{out_min}, +{out_len}), {target}"
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The body of the loop over `steady_min..steady_end` in a printed loop nest.
fn steady_loop(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with("for (") && l.contains(".steady_min, (") && l.contains(".steady_end"))
        .unwrap_or_else(|| panic!("no steady-state loop in:\n{text}"));
    let indent = lines[start].len() - lines[start].trim_start().len();
    let end = (start + 1..lines.len())
        .find(|&i| lines[i].trim() == "}" && lines[i].len() - lines[i].trim_start().len() == indent)
        .expect("the loop closes");
    lines[start + 1..end].join("\n")
}

#[test]
fn the_steady_state_has_no_clamps() {
    let (_, f) = stencil(8);
    let text = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    let body = steady_loop(&text);
    assert!(!body.contains("min(") && !body.contains("max("), "clamps left in the steady state:\n{body}");
    // The prologue and epilogue keep them.
    assert!(text.matches("max(min(").count() >= 2, "{text}");
    insta::assert_snapshot!(without_name_counters(&text));
}

/// `text` with the counters of generated names (`input_repeat_edge$6`) replaced by `$N`:
/// they count the Funcs made in the process, so they depend on the tests run before.
fn without_name_counters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('N');
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        }
    }
    out
}

#[test]
fn clamps_against_constants_near_the_i32_limits() {
    // `min(x, 2147483000)` and `max(x, -2147483000)` never clamp here, but the distance
    // from the loop's bounds to those constants does not fit in an i32: the steady state's
    // bounds must not wrap around.
    let input = ImageParam::new(Type::i32(), 1, "input");
    let x = Var::new("x");
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let f = Func::new("f");
    let i = max(min(x, 2_147_483_000), -2_147_483_000);
    f.def(x, clamped.at(i.clone() - 1) + clamped.at(i + 1) * 3);
    f.vectorize(x, 8);
    let p = Pipeline::new(&[&f]);
    let data: Vec<i32> = (0..50).map(|v| v * 7 % 23).collect();
    let mut img = Buffer::<i32>::from_vec(data.clone(), &[50]).unwrap();
    img.set_min(&[-30]);
    let at = |x: i32| data[((x).clamp(-30, 19) + 30) as usize];
    for target in targets_under_test() {
        let compiled = p.compile(&target).unwrap();
        for (out_min, len) in [(-40, 70), (-25, 9), (0, 33)] {
            let mut out = Buffer::<i32>::with_min(&[out_min], &[len]);
            let mut args = Args::new();
            args.image(&input, &img);
            compiled.realize(&args, &mut out).unwrap();
            let expected: Vec<i32> = (out_min..out_min + len).map(|x| at(x - 1) + at(x + 1) * 3).collect();
            assert_pixels(&out, &expected, format_args!("output [{out_min}, +{len}), {target}"));
        }
    }
}

/// The boundary conditions that wrap the coordinate, and the constant exterior.
type Boundary = fn(&ImageParam) -> Func;

fn wrapping_boundaries() -> Vec<(&'static str, Boundary)> {
    vec![
        ("mirror_interior", |i| boundary::mirror_interior(i, &i.bounds())),
        ("mirror_image", |i| boundary::mirror_image(i, &i.bounds())),
        ("repeat_image", |i| boundary::repeat_image(i, &i.bounds())),
        ("constant_exterior", |i| boundary::constant_exterior(i, 9, &i.bounds())),
    ]
}

/// The 5-tap stencil over `bc` of a 1-D input, vectorized by `lanes` (or not at all for 1).
fn wrapped_stencil(bc: Boundary, lanes: i32) -> (ImageParam, Func) {
    let input = ImageParam::new(Type::i32(), 1, "input");
    let x = Var::new("x");
    let wrapped = bc(&input);
    let f = Func::new("f");
    let mut e = wrapped.at(x - 2) * WEIGHTS[0];
    for (k, w) in WEIGHTS.iter().enumerate().skip(1) {
        e = e + wrapped.at(x + (k as i32 - 2)) * *w;
    }
    f.def(x, e);
    if lanes > 1 {
        f.vectorize(x, lanes);
    }
    (input, f)
}

/// Boundary conditions written `select(inside, clamp(x), wrapped(x))` are partitioned too:
/// the steady state reads densely without the select or the wrapping arithmetic, and every
/// size and offset (inputs of one pixel, outputs many periods away) gives the unvectorized
/// interpreter's values.
#[test]
fn wrapping_boundary_conditions_have_a_steady_state_and_the_same_values() {
    for (name, bc) in wrapping_boundaries() {
        let (_, f) = wrapped_stencil(bc, 8);
        let text = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap().lowered_stmt().to_string();
        let body = steady_loop(&text);
        for what in ["select(", " % ", "min(", "max("] {
            assert!(!body.contains(what), "{name}: '{what}' left in the steady state:\n{body}");
        }
        let (ref_input, ref_f) = wrapped_stencil(bc, 1);
        let reference = Pipeline::new(&[&ref_f]).compile(&Target::interp()).unwrap();
        for lanes in [4, 8] {
            let (input, f) = wrapped_stencil(bc, lanes);
            for target in targets_under_test() {
                let compiled = Pipeline::new(&[&f]).compile(&target).unwrap();
                for in_len in [1usize, 2, 3, 9, 17] {
                    for in_min in [-5, 3] {
                        let data: Vec<i32> = (0..in_len as i32).map(|i| (i * 37 + 11) % 101 - 50).collect();
                        let mut img = Buffer::<i32>::from_vec(data, &[in_len as i32]).unwrap();
                        img.set_min(&[in_min]);
                        for (out_min, out_len) in [(in_min - 40, 100), (in_min + 1, 13), (in_min - 3, 8)] {
                            let run = |c: &Compiled, p: &ImageParam| {
                                let mut out = Buffer::<i32>::with_min(&[out_min], &[out_len]);
                                let mut args = Args::new();
                                args.image(p, &img);
                                c.realize(&args, &mut out).unwrap();
                                out
                            };
                            let expected = run(&reference, &ref_input).into_vec();
                            assert_pixels(
                                &run(&compiled, &input),
                                &expected,
                                format_args!(
                                    "{name}, lanes {lanes}, input [{in_min}, +{in_len}), output [{out_min}, +{out_len}), {target}"
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// A band test that is not a boundary condition (no clamp on its likely side) leaves the
/// loop's partitioning to its clamps: the steady state is not shrunk to the band.
#[test]
fn a_band_select_does_not_shrink_the_steady_state() {
    let input = ImageParam::new(Type::i32(), 1, "input");
    let x = Var::new("x");
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let f = Func::new("f");
    let band = Expr::and(x.ge(10), x.lt(20));
    f.def(x, select(band, clamped.at(x - 1), clamped.at(x + 1) * 2));
    f.vectorize(x, 8);
    let text = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    let body = steady_loop(&text);
    assert!(body.contains("select("), "the band's select was peeled:\n{body}");
    assert!(!body.contains("min(") && !body.contains("max("), "clamps left in the steady state:\n{body}");
}

/// A stencil over `repeat_edge` computed per tile of its consumer and vectorized across
/// the tile, whose width (`tile + 1`) is not a multiple of the vector: the last vector of
/// every tile is shifted inwards. That shift is kept in the steady state instead of ending
/// it, so a tile away from the edges runs its three vectors without clamps, in a version of
/// the loop with constant bounds; at and past the input's edges (tiles a few pixels wide,
/// outputs far outside the input) every target still gives the reference's values.
#[test]
fn shifted_last_vectors_of_a_tile_stay_in_the_steady_state() {
    let (input, p) = stencil(1);
    let x = Var::new("x");
    let (xo, xi) = (Var::new("xo"), Var::new("xi"));
    let out = Func::new("out");
    out.def(x, p.at(x) + p.at(x + 1));
    let tile = 19;
    out.split(x, xo, xi, tile);
    p.compute_at(&out, xo).vectorize(x, 8);
    let pipeline = Pipeline::new(&[&out]);
    let text = pipeline.compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    // The tile-wide loop of `p` (three vectors, the last one shifted) has a version that
    // runs all three in the steady state, without clamps.
    let whole = text
        .lines()
        .position(|l| l.contains(".steady_min <= 0)") && l.contains(".steady_end >= 3)"))
        .unwrap_or_else(|| panic!("no whole-loop steady version:\n{text}"));
    let next = text.lines().nth(whole + 1).unwrap();
    assert!(next.trim_start().starts_with("for (") && next.contains(", 0, 3)"), "{next}\n{text}");
    for target in targets_under_test() {
        let compiled = pipeline.compile(&target).unwrap();
        for in_len in [1usize, 5, 24, 100] {
            for in_min in [-7, 0] {
                let data: Vec<i32> = (0..in_len as i32).map(|i| (i * 53 + 7) % 97 - 40).collect();
                let mut img = Buffer::<i32>::from_vec(data.clone(), &[in_len as i32]).unwrap();
                img.set_min(&[in_min]);
                for out_len in [3usize, 19, 20, 57, 130] {
                    for out_min in [in_min - 30, in_min - 13, in_min, in_min + 11] {
                        let wide = reference(&data, in_min, out_min, out_len + 1);
                        let expected: Vec<i32> = (0..out_len).map(|i| wide[i] + wide[i + 1]).collect();
                        check_output(
                            &compiled,
                            &input,
                            &img,
                            (out_min, out_len),
                            &expected,
                            format_args!("input [{in_min}, +{in_len}), output [{out_min}, +{out_len}), {target}"),
                        );
                    }
                }
            }
        }
    }
}

/// An update stage vectorized with its GuardWithIf tail, reading a clamped input: its
/// loop is cut in three for the clamp, and the steady state also drops the per-vector
/// guard. Every size (partial last vectors included) and offset gives the reference's
/// values on every target.
#[test]
fn a_guarded_update_loses_its_guard_in_the_steady_state() {
    let input = ImageParam::new(Type::i32(), 1, "input");
    let x = Var::new("x");
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let r = RDom::new(&[(Expr::from(-2), Expr::from(5))]);
    let f = Func::new("f");
    f.def(x, 0);
    f.update(x, f.at(x) + clamped.at(x + r.x()) * (r.x() + 3));
    f.update_stage(0).vectorize(x, 8);
    let pipeline = Pipeline::new(&[&f]);
    let text = pipeline.compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    // The steady state of the vector loop (not of the reduction loops inside its edges).
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with("for (f.s1.x.x, f.s1.x.x.steady_min, "))
        .unwrap_or_else(|| panic!("no steady state for the vector loop:\n{text}"));
    let next = lines[start + 1].trim_start();
    assert!(!next.starts_with("if ("), "a guard left in the steady state:\n{text}");
    for target in targets_under_test() {
        let compiled = pipeline.compile(&target).unwrap();
        for in_len in [1usize, 6, 40] {
            let in_min = -3;
            let data: Vec<i32> = (0..in_len as i32).map(|i| (i * 29 + 5) % 83 - 30).collect();
            let mut img = Buffer::<i32>::from_vec(data.clone(), &[in_len as i32]).unwrap();
            img.set_min(&[in_min]);
            let last = in_min + in_len as i32 - 1;
            for out_len in [1usize, 7, 8, 9, 45] {
                for out_min in [in_min - 12, in_min, in_min + 5] {
                    let expected: Vec<i32> = (0..out_len as i32)
                        .map(|i| {
                            (-2..=2)
                                .map(|k| data[((out_min + i + k).clamp(in_min, last) - in_min) as usize] * (k + 3))
                                .sum()
                        })
                        .collect();
                    check_output(
                        &compiled,
                        &input,
                        &img,
                        (out_min, out_len),
                        &expected,
                        format_args!("input [{in_min}, +{in_len}), output [{out_min}, +{out_len}), {target}"),
                    );
                }
            }
        }
    }
}

//! Buffers and index expressions near the limits of 32-bit integers. Every coordinate
//! Halogen computes with lies within ±2^30: buffers beyond it are refused when a pipeline
//! runs, and a region that an index expression stretches beyond it (or beyond an input)
//! is refused before anything is computed, with the region's true ends (computed in 64
//! bits, never wrapped).

use super::bindings::brighten;
use crate::common::targets_under_test;
use halogen::prelude::*;

/// `f(x) = input(index(x))` over `out_extent` outputs from an input of `in_extent`
/// elements at 0, realized on `target`.
fn gather_from(target: &Target, index: impl Fn(Expr) -> Expr, in_extent: i32, out_extent: i32) -> Result<Vec<i32>> {
    let input = ImageParam::new(Type::i32(), 1, "input");
    let x = Var::new("x");
    let f = Func::new("f");
    f.def(x, input.at(index(x.expr())));
    let c = Pipeline::new(&[&f]).compile(target)?;
    let img = Buffer::<i32>::new(&[in_extent]);
    let mut args = Args::new();
    args.image(&input, &img);
    let mut out = Buffer::<i32>::new(&[out_extent]);
    c.realize(&args, &mut out)?;
    Ok(out.as_slice().to_vec())
}

#[test]
fn buffers_reaching_toward_the_integer_limits_are_errors() {
    // A vectorized output ending at i32::MAX once wrote past its heap block on the host.
    let x = Var::new("x");
    let f = Func::new("ramp");
    f.def(x, x + 1);
    f.vectorize(x, 8);
    let (input, gain, brighter) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        // An empty dimension still has a min that the loop bounds are computed from.
        for (min, extent) in [(i32::MAX - 4, 5), (i32::MIN, 3), (1 << 30, 1), (-(1 << 30) - 1, 2), (i32::MAX, 0)] {
            let mut out = Buffer::<i32>::with_min(&[min], &[extent]);
            let e = c.realize(&Args::new(), &mut out).unwrap_err().to_string();
            let last = min as i64 + extent as i64 - 1;
            assert!(
                e.contains(&format!("output buffer for Func 'ramp' dimension 0 covers [{min}, {last}]"))
                    && e.contains("[-1073741824, 1073741823]"),
                "{target}: {e}"
            );
        }
        // The edges of the range are fine.
        for (min, extent) in [((1 << 30) - 9, 9), (-(1 << 30), 9)] {
            let mut out = Buffer::<i32>::with_min(&[min], &[extent]);
            c.realize(&Args::new(), &mut out).unwrap();
            assert_eq!(out.as_slice(), &(min + 1..min + 1 + extent).collect::<Vec<_>>()[..], "{target}");
        }
        // Inputs too.
        let c = Pipeline::new(&[&brighter]).compile(&target).unwrap();
        let img = Buffer::<u8>::with_min(&[i32::MAX - 10, 0], &[11, 2]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[4, 2]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(
            e.contains("input buffer for ImageParam 'photo' dimension 0 covers [2147483637, 2147483647]"),
            "{target}: {e}"
        );
    }
}

#[test]
fn a_scaled_footprint_that_wraps_in_32_bits_is_still_too_big() {
    for target in targets_under_test() {
        // x * 65536 at x = 65536 is 2^32, which is 0 in 32 bits: the check once passed and
        // the host read far outside the one-element input.
        let e = gather_from(&target, |x| x * 65536, 1, 65537).unwrap_err().to_string();
        assert_eq!(
            e,
            "runtime error: Input buffer 'input' is too small: dimension 0 needs [0, 4294967296] but the buffer covers [0, 0]",
            "{target}"
        );
        let e = gather_from(&target, |x| x * 100000, 1, 30000).unwrap_err().to_string();
        assert!(e.contains("needs [0, 2999900000] but the buffer covers [0, 0]"), "{target}: {e}");
        // Small enough, the same expression is fine.
        let got = gather_from(&target, |x| x * 65536, 65536 * 3 + 1, 4).unwrap();
        assert_eq!(got, vec![0; 4], "{target}");
    }
}

#[test]
fn a_func_stretched_beyond_the_coordinate_limit_is_an_error() {
    let x = Var::new("x");
    for compute_root in [true, false] {
        let input = ImageParam::new(Type::i32(), 1, "input");
        let producer = Func::new("producer");
        producer.def(x, input.at(x) + 1);
        let consumer = Func::new("consumer");
        consumer.def(x, producer.at(x * 65536));
        if compute_root {
            producer.compute_root();
        } else {
            producer.compute_at(&consumer, x);
        }
        for target in targets_under_test() {
            let c = Pipeline::new(&[&consumer]).compile(&target).unwrap();
            let img = Buffer::<i32>::new(&[1 << 20]);
            let mut args = Args::new();
            args.image(&input, &img);
            let mut out = Buffer::<i32>::new(&[65537]);
            let e = c.realize(&args, &mut out).unwrap_err().to_string();
            assert_eq!(
                e,
                "runtime error: Func 'producer' is needed in dimension 0 over [0, 4294967296], outside the \
                 coordinates Halogen computes with, [-1073741824, 1073741823]: a coordinate expression of its \
                 consumers reaches too far",
                "{target}, compute_root: {compute_root}"
            );
        }
    }
}

#[test]
fn a_region_that_wraps_two_root_funcs_down_is_an_error() {
    // `middle` needs [0, 299 * 4096], well within the limit; `bottom` then needs
    // [0, 299 * 4096 * 4096], which wraps in 32 bits to 721420288, below the limit too:
    // only its value recomputed in 64 bits shows how far it reaches.
    let x = Var::new("x");
    let input = ImageParam::new(Type::i32(), 1, "input");
    let bottom = Func::new("bottom");
    bottom.def(x, input.at(x % 16) + 1);
    let middle = Func::new("middle");
    middle.def(x, bottom.at(x * 4096));
    let top = Func::new("top");
    top.def(x, middle.at(x * 4096));
    bottom.compute_root();
    middle.compute_root();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&top]).compile(&target).unwrap();
        let img = Buffer::<i32>::new(&[16]);
        let mut args = Args::new();
        args.image(&input, &img);
        let mut out = Buffer::<i32>::new(&[300]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "runtime error: Func 'bottom' is needed in dimension 0 over [0, {}], outside the coordinates \
                 Halogen computes with, [-1073741824, 1073741823]: a coordinate expression of its consumers \
                 reaches too far",
                299i64 * 4096 * 4096
            ),
            "{target}"
        );
        // Two levels that stay within the limit run.
        let mut out = Buffer::<i32>::new(&[2]);
        c.realize(&args, &mut out).unwrap();
        assert_eq!(out.as_slice(), &[1, 1], "{target}");
    }
}

#[test]
fn reading_below_the_lowest_coordinate() {
    for target in targets_under_test() {
        let input = ImageParam::new(Type::i32(), 1, "input");
        let x = Var::new("x");
        let f = Func::new("f");
        f.def(x, input.at(x - 1));
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        // The lowest output the limit allows needs one input element below it.
        let img = Buffer::<i32>::with_min(&[-(1 << 30)], &[4]);
        let mut args = Args::new();
        args.image(&input, &img);
        let mut out = Buffer::<i32>::with_min(&[-(1 << 30)], &[3]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert_eq!(
            e,
            "runtime error: Input buffer 'input' is too small: dimension 0 needs [-1073741825, -1073741823] but the \
             buffer covers [-1073741824, -1073741821]",
            "{target}"
        );
    }
}

#[test]
fn the_generated_checks_hold_without_the_rust_side() {
    // Code called from C (ahead of time) gets no `Bindings::check`: the coordinate limit
    // must hold in the generated code itself. Bindings are built here without the check.
    use halogen::backend::{self, Bindings};
    use std::collections::BTreeMap;
    let x = Var::new("x");
    let f = Func::new("ramp");
    f.def(x, x + 1);
    f.vectorize(x, 8);
    for target in targets_under_test() {
        let lowered = Pipeline::new(&[&f]).lower(&target).unwrap();
        let exe = backend::select(&target, &lowered).unwrap().compile(&lowered, &target).unwrap();
        let mut out = Buffer::<i32>::with_min(&[i32::MAX - 4], &[5]);
        let output_shapes = vec![("ramp".into(), out.raw().dims.clone())];
        let outputs = vec![("ramp".into(), out.raw_mut())];
        let bindings =
            Bindings { inputs: Vec::new(), outputs, output_shapes, params: BTreeMap::new(), communicator: None };
        let e = exe.run(bindings).unwrap_err().to_string();
        assert_eq!(
            e,
            "runtime error: Output buffer 'ramp' dimension 0 covers [2147483643, 2147483647], outside the coordinates \
             Halogen computes with, [-1073741824, 1073741823]",
            "{target}"
        );
    }
}

#[test]
fn regions_that_wrap_around_in_32_bits_are_errors() {
    // in(x * 4) for x in [2^29 - 1, 2^29]: the region [2^31 - 4, 2^31] wrapped to
    // [2147483644, -2147483648], which read as empty, so the check passed and the loads
    // went 8 GiB past the input.
    let input = ImageParam::new(Type::i32(), 1, "inp");
    let x = Var::new("x");
    let scaled = Func::new("scaled");
    scaled.def(x, input.at(x * 4));
    // Through a Func computed at root: its bounds wrap before any check sees them.
    let (g, h) = (Func::new("g"), Func::new("h"));
    g.def(x, input.at(x) + 1);
    h.def(x, g.at(x * 4));
    g.compute_root();
    let img = Buffer::<i32>::from_fn(&[40], |c| c[0] * 10);
    for target in targets_under_test() {
        for (f, want) in [
            (&scaled, "Input buffer 'inp' is too small: dimension 0 needs [2147483644, 2147483648]"),
            (&h, "Func 'g' is needed in dimension 0 over [2147483644, 2147483648], outside the coordinates"),
        ] {
            let c = Pipeline::new(&[f]).compile(&target).unwrap();
            let mut args = Args::new();
            args.image(&input, &img);
            let mut out = Buffer::<i32>::with_min(&[(1 << 29) - 1], &[2]);
            let e = c.realize(&args, &mut out).unwrap_err().to_string();
            assert!(e.contains(want), "{target}: {e}");
            // Within the coordinates, the same pipelines run.
            let mut out = Buffer::<i32>::new(&[10]);
            c.realize(&args, &mut out).unwrap();
            let offset = if &*f.name() == "h" { 1 } else { 0 };
            assert_eq!(out.as_slice(), &(0..10).map(|v| v * 40 + offset).collect::<Vec<_>>()[..], "{target}");
        }
    }
}

#[test]
fn an_index_that_overflows_over_a_constant_range_cannot_be_bounded() {
    // min(r * 2^22, 5) for r in [0, 1000) was bounded by [0, 5], but from r = 512 on the
    // product wraps: the load at 2^31 before the input passed its check.
    let input = ImageParam::new(Type::i32(), 1, "inp");
    let x = Var::new("x");
    let r = RDom::new(&[(Expr::from(0), Expr::from(1000))]);
    let f = Func::new("total");
    f.def(x, sum(input.at(min(r.x() * (1 << 22), 5))));
    for target in targets_under_test() {
        let e = crate::common::compile_error(&target, &f);
        assert!(e.contains("'inp'") && e.contains("cannot bound"), "{target}: {e}");
    }
}

#[test]
fn a_product_clamped_back_into_range_is_held_to_the_limit() {
    // input(clamp(x * 65536, lo, hi)) with the input at x = 54615: every index is clamped
    // into the input, but the product passes 2^31 from x = 32768 on; the simplifier's form
    // of the clamp, max(min(x * 65536, hi) - lo, 0), then wrapped, and the host read far
    // outside the input.
    let run = |target: &Target, out_min: i32| {
        let input = ImageParam::new(Type::i32(), 1, "far_input");
        let x = Var::new("x");
        let f = Func::new("far");
        let (lo, hi) = (input.dim(0).min(), input.dim(0).min() + input.dim(0).extent() - 1);
        f.def(x, input.at(clamp(x * 65536, lo, hi)));
        let c = Pipeline::new(&[&f]).compile(target)?;
        let img = Buffer::<i32>::from_fn(&[8], |p| p[0] * 3);
        let img = {
            let mut i = img;
            i.set_min(&[54615]);
            i
        };
        let mut args = Args::new();
        args.image(&input, &img);
        let mut out = Buffer::<i32>::with_min(&[out_min], &[4]);
        c.realize(&args, &mut out)?;
        Ok::<_, Error>(out.into_vec())
    };
    for target in targets_under_test() {
        let e = run(&target, 32767).unwrap_err().to_string();
        assert!(e.contains("The product") && e.contains("[2147418112, 2147614720]"), "{target}: {e}");
        // Small enough, the same pipeline runs: x = 0 reads the first element, the others
        // are clamped to the last.
        assert_eq!(run(&target, 0).unwrap(), vec![0, 21, 21, 21], "{target}");
    }
}

#[test]
fn an_index_clamped_from_loaded_data_stays_inside_the_input() {
    // input(clamp(data(x), lo, hi)) with 32-bit data anywhere in its range and the input
    // far from 0: the clamp keeps every index inside the input, whatever the data. The
    // simplifier once rewrote max(min(v, hi), lo) - lo as max(min(v, hi) - lo, 0), which
    // wraps for v near i32::MIN, and the host read far outside the input.
    let values = [i32::MIN, i32::MIN + 1, -70_000, -5, 0, 5, 70_000, i32::MAX - 1, i32::MAX];
    for in_min in [1_000_000, -1_000_000, 0] {
        for which in 0..4 {
            let run = |target: &Target| {
                let input = ImageParam::new(Type::i32(), 1, "far_input");
                let data = ImageParam::new(Type::i32(), 1, "data");
                let bound = Param::<i32>::new("bound");
                let x = Var::new("x");
                let f = Func::new("far");
                let (m, e) = (input.dim(0).min(), input.dim(0).extent());
                let v = data.at(x);
                let idx = match which {
                    0 => clamp(v, m.clone(), bound.expr()),
                    1 => clamp(v, bound.expr(), m.clone() + e.clone() - 1),
                    2 => clamp(v + 1, m.clone(), bound.expr()),
                    _ => clamp(v - 3, m.clone() + 1, m.clone() + e.clone() - 2),
                };
                f.def(x, input.at(idx));
                let c = Pipeline::new(&[&f]).compile(target)?;
                let mut img = Buffer::<i32>::from_fn(&[16], |p| p[0] * 3 + 1);
                img.set_min(&[in_min]);
                let d = Buffer::<i32>::from_fn(&[values.len() as i32], |p| values[p[0] as usize]);
                let mut args = Args::new();
                args.image(&input, &img).image(&data, &d);
                args.param(&bound, if which == 1 { in_min + 2 } else { in_min + 13 });
                let mut out = Buffer::<i32>::new(&[values.len() as i32]);
                c.realize(&args, &mut out)?;
                Ok::<_, Error>(out.into_vec())
            };
            // The same in plain Rust: 32-bit arithmetic wraps, then the clamp.
            let bound = if which == 1 { in_min + 2 } else { in_min + 13 };
            let (first, last) = (in_min, in_min + 15);
            let want: Vec<i32> = values
                .iter()
                .map(|&v| {
                    let i = match which {
                        0 => v.clamp(first, bound),
                        1 => v.clamp(bound, last),
                        2 => v.wrapping_add(1).clamp(first, bound),
                        _ => v.wrapping_sub(3).clamp(first + 1, last - 1),
                    };
                    (i - in_min) * 3 + 1
                })
                .collect();
            for target in targets_under_test() {
                assert_eq!(run(&target).unwrap(), want, "{target}: input at {in_min}, form {which}");
            }
        }
    }
}

#[test]
fn a_sum_of_coordinates_clamped_back_into_range_is_held_to_the_limit() {
    // input(clamp(x + y + z, lo, hi)) with each coordinate inside the limit but their sum
    // past 2^31: in 32 bits the sum wraps to near i32::MIN before the clamp, and the
    // clamp's form max(min(x + y + z, hi) - lo, 0) wrapped once more.
    let run = |target: &Target, at: i32| {
        let input = ImageParam::new(Type::i32(), 1, "sum_input");
        let other = ImageParam::new(Type::i32(), 1, "sum_other");
        let (x, y, z) = (Var::new("x"), Var::new("y"), Var::new("z"));
        let f = Func::new("sum3");
        let lo = input.dim(0).min();
        let hi = other.dim(0).min() + other.dim(0).extent() - 1;
        f.def((x, y, z), input.at(clamp(x + y + z, lo, hi)) + other.at(0));
        let c = Pipeline::new(&[&f]).compile(target)?;
        let mut img = Buffer::<i32>::from_fn(&[16], |p| p[0] * 3 + 1);
        img.set_min(&[1000]);
        let mut oth = Buffer::<i32>::new(&[1010]);
        oth.set_min(&[0]);
        let mut args = Args::new();
        args.image(&input, &img).image(&other, &oth);
        let mut out = Buffer::<i32>::with_min(&[at, at, at], &[2, 2, 2]);
        c.realize(&args, &mut out)?;
        Ok::<_, Error>(out.into_vec())
    };
    for target in targets_under_test() {
        // 3 * 715827884 = 2^31 + 4.
        let e = run(&target, 715_827_884).unwrap_err().to_string();
        assert!(e.contains("sum") && e.contains("[2147483652, 2147483655]"), "{target}: {e}");
        assert_eq!(run(&target, 300).unwrap(), vec![1; 8], "{target}");
    }
}

//! Algorithms the language must refuse: float coordinates, bit operations on floats,
//! cycles, malformed reduction domains. Each names the Func and what is wrong.

use crate::common::{compile_error, targets_under_test};
use halogen::prelude::*;

/// `text` without its trailing call-site location, `" (at file:line:col)"`.
fn without_location(text: &str) -> &str {
    text.find(" (at ").map_or(text, |i| &text[..i])
}

#[test]
fn a_func_called_with_a_float_coordinate() {
    let x = Var::new("x");
    let g = Func::new("halves");
    g.def(x, x * 2);
    let f = Func::new("f");
    f.def(x, g.at(x.expr().cast::<f32>() * 0.5f32));
    for target in targets_under_test() {
        assert_eq!(
            without_location(&compile_error(&target, &f)),
            "definition error: Func 'halves': argument 0 ('(float32(x) * 0.5f)') is float32; coordinates are \
             integers, convert it explicitly",
            "{target}"
        );
    }
}

#[test]
fn bit_operations_on_floats() {
    let x = Var::new("x");
    let and = Func::new("float_and");
    and.def(x, x.expr().cast::<f32>() & 3);
    let shifted = Func::new("float_shift");
    shifted.def(x, x.expr().cast::<f32>() << 1);
    let not = Func::new("float_not");
    not.def(x, !x.expr().cast::<f32>());
    for target in targets_under_test() {
        assert_eq!(
            compile_error(&target, &and),
            "definition error: Func 'float_and' pure definition: '&' works on the bits of integers (and on bools), \
             but '(float32(x) & 3.0f)' applies it to float32; reinterpret or convert the value explicitly",
            "{target}"
        );
        let e = compile_error(&target, &shifted);
        assert!(e.contains("Func 'float_shift' pure definition: '<<' works on the bits of integers"), "{target}: {e}");
        let e = compile_error(&target, &not);
        assert!(e.contains("Func 'float_not' pure definition: '!' is a bitwise not for integers"), "{target}: {e}");
    }
}

#[test]
fn a_cycle_through_an_update() {
    let x = Var::new("x");
    for output_is_f in [false, true] {
        let f = Func::new("cyc_f");
        let g = Func::new("cyc_g");
        f.def(x, x);
        g.def(x, f.at(x) + 1);
        f.update(x, g.at(x) + f.at(x));
        let out = if output_is_f { &f } else { &g };
        for target in targets_under_test() {
            let e = compile_error(&target, out);
            assert!(e.starts_with("definition error: the Funcs call each other in a cycle: "), "{target}: {e}");
            assert!(e.contains("cyc_f") && e.contains("cyc_g"), "{target}: {e}");
        }
    }
}

#[test]
fn reduction_domains_with_float_bounds() {
    let x = Var::new("x");
    for (bound, text) in [(f32::NAN, "NaN"), (2.5, "2.5")] {
        let r = RDom::new(&[(Expr::from(0), Expr::from(bound))]);
        let f = Func::new("float_bounds");
        f.def(x, 0);
        f.update(x, f.at(x) + r.x());
        for target in targets_under_test() {
            let e = compile_error(&target, &f);
            assert!(
                e.starts_with("definition error: Func 'float_bounds' update 0: the extent of dimension 0 is float32 ("),
                "{target}: {e}"
            );
            assert!(
                e.contains("the bounds of a reduction domain are integers, convert it explicitly"),
                "{target}: {e} ({text})"
            );
        }
    }
}

#[test]
fn a_dimension_the_domain_does_not_have() {
    let x = Var::new("x");
    let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
    let f = Func::new("missing_dim");
    f.def(x, 0);
    f.update(x, f.at(x) + r.z());
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(
            e.starts_with("definition error: Func 'missing_dim' update 0: dimension 2 of reduction domain 'r$"),
            "{target}: {e}"
        );
        assert!(e.contains("' is asked for, but it has 1 dimension (at "), "{target}: {e}");
    }
}

#[test]
fn an_empty_reduction_domain() {
    let x = Var::new("x");
    let r = RDom::new(&[]);
    let f = Func::new("empty_domain");
    f.def(x, 0);
    f.update(x, f.at(x) + r.x());
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(
            e.starts_with(
                "definition error: Func 'empty_domain' update 0: a reduction domain needs at least one dimension, got none"
            ),
            "{target}: {e}"
        );
    }
}

#[test]
fn five_dimensional_domains_keep_distinct_variables() {
    let x = Var::new("x");
    let one = (Expr::from(0), Expr::from(2));
    let r = RDom::new(&[one.clone(), one.clone(), one.clone(), one.clone(), one]);
    let f = Func::new("five_dims");
    f.def(x, 0);
    f.update(x, f.at(x) + r.var(0) + r.var(1) * 2 + r.var(2) * 4 + r.var(3) * 8 + r.var(4) * 16);
    for target in targets_under_test() {
        let out = crate::common::realize::<i32>(&target, &f, &Args::new(), &[0], &[2]);
        // The sum of 0..32, once per point.
        assert_eq!(out.as_slice(), &[496, 496], "{target}");
    }
}

#[test]
fn an_inline_reduction_is_named_by_where_it_was_written() {
    let lut = ImageParam::new(Type::i32(), 1, "lut");
    let idx = ImageParam::new(Type::i32(), 1, "indices");
    let x = Var::new("x");
    let r = RDom::new(&[(Expr::from(0), Expr::from(4))]);
    let f = Func::new("gathered_sum");
    f.def(x, sum(lut.at(idx.at(x + r.x()))));
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(e.contains("ImageParam 'lut' is accessed in dimension 0"), "{target}: {e}");
        assert!(e.contains("(in Func 'sum$"), "{target}: {e}");
        assert!(e.contains("' (the sum(...) at halogen/tests/errors/definitions.rs:"), "{target}: {e}");
    }
}

//! Funcs, ImageParams and Params share one namespace: a buffer and its shape are found by
//! name when a pipeline runs, so two kinds of thing with one name would read each other.

use crate::common::{compile_error, targets_under_test};
use halogen::prelude::*;

#[test]
fn a_func_named_like_an_image() {
    let input = ImageParam::new(Type::i32(), 1, "img");
    let x = Var::new("x");
    let g = Func::new("img");
    g.def(x, x * 100);
    g.compute_root();
    let f = Func::new("f");
    f.def(x, input.at(x) + g.at(x));
    for target in targets_under_test() {
        assert_eq!(
            compile_error(&target, &f),
            "definition error: Func 'img' and ImageParam 'img' have one name; Funcs, ImageParams and Params of a \
             pipeline share one namespace, so rename one of them",
            "{target}"
        );
    }
}

#[test]
fn an_output_named_like_its_input() {
    let input = ImageParam::new(Type::i32(), 1, "same");
    let x = Var::new("x");
    let f = Func::new("same");
    f.def(x, input.at(x) + 1);
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(e.contains("Func 'same' and ImageParam 'same' have one name"), "{target}: {e}");
    }
}

#[test]
fn a_param_named_like_a_func_or_an_image() {
    let x = Var::new("x");
    let k = Param::<i32>::new("k");
    let g = Func::new("k");
    g.def(x, x * 100);
    let f = Func::new("f");
    f.def(x, g.at(x) + k.expr());
    // Inline or not, the names clash.
    let input = ImageParam::new(Type::i32(), 1, "scale");
    let scale = Param::<i32>::new("scale");
    let h = Func::new("h");
    h.def(x, input.at(x) * scale.expr());
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(e.contains("Func 'k' and Param 'k' have one name"), "{target}: {e}");
        let e = compile_error(&target, &h);
        assert!(e.contains("ImageParam 'scale' and Param 'scale' have one name"), "{target}: {e}");
    }
}

#[test]
fn distinct_names_compute_the_right_pixels() {
    // The same pipelines with the names apart.
    let input = ImageParam::new(Type::i32(), 1, "img");
    let x = Var::new("x");
    let g = Func::new("img_times_100");
    g.def(x, x * 100);
    g.compute_root();
    let f = Func::new("f");
    f.def(x, input.at(x) + g.at(x));
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let mut img = Buffer::<i32>::new(&[4]);
        img.as_mut_slice().copy_from_slice(&[1, 2, 3, 4]);
        let mut args = Args::new();
        args.image(&input, &img);
        let mut out = Buffer::<i32>::new(&[4]);
        c.realize(&args, &mut out).unwrap();
        assert_eq!(out.as_slice(), &[1, 102, 203, 304], "{target}");
    }
}

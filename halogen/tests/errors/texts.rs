//! Snapshots of user-facing error texts, so a change to a message is a reviewed change.
//! Call-site locations (`at file:line`) are cut, since they move with the test's lines.
//! Every target under test gives the same texts.

use crate::common::targets_under_test;
use halogen::prelude::*;

fn without_location(e: &Error) -> String {
    let text = e.to_string();
    match text.find(" (at ") {
        Some(i) => format!("{}{}", &text[..i], &text[text[i..].find(')').map_or(text.len(), |j| i + j + 1)..]),
        None => text,
    }
}

fn compile_error(target: &Target, f: &Func) -> String {
    without_location(&Pipeline::new(&[f]).compile(target).unwrap_err())
}

/// The texts of a few mistakes, on `target`.
fn error_texts_on(target: &Target) -> Vec<String> {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let mut texts = Vec::new();

    let undefined = Func::new("undefined");
    let user = Func::new("user");
    user.def((x, y), undefined.at((x, y)));
    texts.push(compile_error(target, &user));

    let f = Func::new("f");
    f.def((x, y), x + y);
    f.split(Var::new("z"), Var::new("zo"), Var::new("zi"), 8);
    texts.push(compile_error(target, &f));

    let g = Func::new("g");
    let h = Func::new("h");
    g.def((x, y), x * y);
    h.def((x, y), g.at((x, y)) + 1);
    g.compute_at(&h, Var::new("w"));
    texts.push(compile_error(target, &h));

    let lut = ImageParam::new(Type::i32(), 1, "lut");
    let idx = ImageParam::new(Type::i32(), 1, "idx");
    let gather = Func::new("gather");
    gather.def(x, lut.at(idx.at(x)));
    texts.push(compile_error(target, &gather));

    let input = ImageParam::new(Type::u8(), 2, "img");
    let shifted = Func::new("shifted");
    shifted.def((x, y), input.at((x + 2, y)));
    let c = Pipeline::new(&[&shifted]).compile(target).unwrap();
    let small = Buffer::<u8>::new(&[4, 4]);
    let mut args = Args::new();
    args.image(&input, &small);
    let mut out = Buffer::<u8>::new(&[4, 4]);
    texts.push(without_location(&c.realize(&args, &mut out).unwrap_err()));
    let mut wrong = Buffer::<u16>::new(&[4, 4]);
    texts.push(without_location(&c.realize(&args, &mut wrong).unwrap_err()));
    texts.push(without_location(&c.realize(&Args::new(), &mut out).unwrap_err()));

    texts
}

#[test]
fn error_texts() {
    let texts = error_texts_on(&Target::interp());
    for target in targets_under_test() {
        let got = error_texts_on(&target);
        for (g, t) in got.iter().zip(&texts) {
            assert_eq!(g, t, "on {target}");
        }
        assert_eq!(got.len(), texts.len(), "on {target}");
    }
    insta::assert_snapshot!(texts.join("\n"));
}

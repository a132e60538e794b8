//! 64-bit integer buffers (`Buffer<i64>`, `Buffer<u64>`) and parameters against plain
//! Rust on every back end: wrapping arithmetic, Euclidean division, unsigned comparison
//! and values no 32-bit type holds.

mod common;

use common::gpu::opencl_target;
use common::targets_under_test;
use halogen::prelude::*;

const W: i32 = 37;

fn inputs() -> (Buffer<i64>, Buffer<u64>) {
    let wide = [i64::MIN, i64::MAX, -1, 0, 1, 1 << 40, -(1 << 33) - 7, 0x0123_4567_89AB_CDEF, 3, -5, 12_345_678_901];
    let a = Buffer::from_fn(&[W], |c| wide[c[0] as usize % wide.len()].wrapping_mul(c[0] as i64 | 1));
    let b = Buffer::from_fn(&[W], |c| (wide[(c[0] as usize * 7 + 3) % wide.len()] as u64).rotate_left(c[0] as u32));
    (a, b)
}

/// Rows of signed results and rows of unsigned ones, each in plain Rust.
fn reference(a: i64, b: u64, k: i64, m: u64) -> (Vec<i64>, Vec<u64>) {
    let bi = b as i64;
    let signed = vec![
        a.wrapping_mul(k).wrapping_add(bi),
        if bi == 0 { 0 } else { a.wrapping_div_euclid(bi) },
        if bi == 0 { 0 } else { a.wrapping_rem_euclid(bi) },
        a >> (b & 63),
        a.min(bi).max(-(1 << 50)),
        (a as f64 * 0.5) as i64,
    ];
    let unsigned = vec![
        b.wrapping_mul(m) ^ (a as u64),
        b.checked_div(m).unwrap_or(0),
        (b > a as u64) as u64,
        b.max(a as u64),
        b << (a as u64 & 63),
    ];
    (signed, unsigned)
}

struct Wide {
    a: ImageParam,
    b: ImageParam,
    k: Param<i64>,
    m: Param<u64>,
    signed: Func,
    unsigned: Func,
}

fn pipeline() -> Wide {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let (ia, ib) = (ImageParam::new(Type::i64(), 1, "a"), ImageParam::new(Type::u64(), 1, "b"));
    let (k, m) = (Param::<i64>::new("k"), Param::<u64>::new("m"));
    let (a, b) = (ia.at(x), ib.at(x));
    let bi = cast(Type::i64(), b.clone());
    let au = cast(Type::u64(), a.clone());
    let rows = |rows: Vec<Expr>| {
        let mut e = rows[rows.len() - 1].clone();
        for (i, r) in rows.iter().enumerate().rev().skip(1) {
            e = select(Expr::from(y).eq(i as i32), r, e);
        }
        e
    };
    let signed = Func::new("signed");
    signed.def(
        (x, y),
        rows(vec![
            a.clone() * k.expr() + bi.clone(),
            a.clone() / bi.clone(),
            a.clone() % bi.clone(),
            a.clone() >> (b.clone() & 63u64),
            max(min(a.clone(), bi.clone()), -(1i64 << 50)),
            cast(Type::i64(), cast(Type::f64(), a.clone()) * 0.5),
        ]),
    );
    let unsigned = Func::new("unsigned");
    unsigned.def(
        (x, y),
        rows(vec![
            (b.clone() * m.expr()) ^ au.clone(),
            b.clone() / m.expr(),
            cast(Type::u64(), b.clone().gt(au.clone())),
            max(b.clone(), au.clone()),
            b.clone() << (au & 63u64),
        ]),
    );
    Wide { a: ia, b: ib, k, m, signed, unsigned }
}

fn check(target: &Target, schedule: fn(&Wide)) {
    let w = pipeline();
    schedule(&w);
    let (a, b) = inputs();
    for (k, m) in [(3i64, 0u64), (-(1 << 35) - 1, u64::MAX - 2), (i64::MIN, 1 << 63)] {
        let c = Pipeline::new(&[&w.signed, &w.unsigned]).compile(target).unwrap();
        let mut args = Args::new();
        args.image(&w.a, &a).image(&w.b, &b).param(&w.k, k).param(&w.m, m);
        let mut s = Buffer::<i64>::new(&[W, 6]);
        let mut u = Buffer::<u64>::new(&[W, 5]);
        c.realize_outputs(&args, &mut [&mut s, &mut u]).unwrap_or_else(|e| panic!("{target}: {e}"));
        for x in 0..W {
            let (rs, ru) = reference(a[[x]], b[[x]], k, m);
            for (row, v) in rs.iter().enumerate() {
                assert_eq!(s[[x, row as i32]], *v, "{target}: signed row {row}, x {x}, k {k}");
            }
            for (row, v) in ru.iter().enumerate() {
                assert_eq!(u[[x, row as i32]], *v, "{target}: unsigned row {row}, x {x}, m {m}");
            }
        }
    }
}

#[test]
fn wide_integers_match_rust_on_every_target() {
    for t in targets_under_test() {
        check(&t, |_| ());
        check(&t, |w| {
            let x = Var::new("x");
            w.signed.vectorize(x, 8);
            w.unsigned.vectorize(x, 4);
        });
    }
    if let Some(t) = opencl_target() {
        check(&t, |w| {
            let (x, y) = (Var::new("x"), Var::new("y"));
            let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
            w.signed.gpu_tile(x, y, xo, yo, xi, yi, 8, 2);
            w.unsigned.gpu_tile(x, y, xo, yo, xi, yi, 16, 1);
        });
    }
}
